//! Every `check` output format on one fixed run: snapshots (insta), SARIF
//! against the official 2.1.0 schema, the GitLab code quality shape, and
//! `JUnit` parsed as XML.
//!
//! The schema and XML checks run `tests/sarif/validate.py` with the Python
//! named by `PREFLINT_PYTHON` (scripts/test.sh sets it and installs
//! `tests/sarif/requirements.txt`); without one they fail, unless
//! `PREFLINT_SKIP_ORACLE=1`.

mod common;

use preflint::diagnostic::Severity;
use preflint::output::findings::{Format, Report, render};
use preflint::rule::{Finding, Related, RuleMeta, fingerprint};
use preflint::source::SourceMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const K8S_TASKS: &str = "roles/kubernetes/node/tasks/main.yml";
const HARDENING: &str = "roles/hardening/templates/99-%zz, hardening.conf.j2";
const CONTAINERD: &str = "roles/containerd/tasks/main copy.yml";
const BROKEN: &str = "roles/broken/tasks/main.yml";

const K8S_TASKS_TEXT: &str = "\
---
- name: Enable forwarding for pods
  ansible.posix.sysctl:
    name: net.ipv4.ip_forward
    value: \"1\"
    sysctl_set: true
    state: present
  when: kube_network_plugin != \"none\"

- name: Configure kernel parameters
  ansible.posix.sysctl:
    name: \"{{ item.key }}\"
    value: \"{{ item.value }}\"
  loop: \"{{ kubelet_sysctls | dict2items }}\"

- name: Turn swap off
  ansible.builtin.command:
    cmd: swapoff -a
  when:
    - disable_swap | bool
    - ansible_swaptotal_mb > 0
";

const HARDENING_TEXT: &str = "\
# Managed by Ansible
net.ipv4.conf.all.rp_filter = 1
net.ipv4.ip_forward = 0
kernel.kptr_restrict = 2
";

fn rules() -> Vec<RuleMeta> {
    vec![
        RuleMeta {
            id: "sysctl-overridden-at-boot",
            category: "sysctl",
            severity: Severity::Error,
            summary: "A sysctl value set by a task is reset by a file loaded later at boot",
            doc: "## What it does\n\nFinds sysctl values written at runtime that a later \
                  `/etc/sysctl.d` file sets back at boot.\n\n## Why it matters\n\nThe node \
                  works until its first reboot.\n\n## Example\n\n```yaml\n- ansible.posix.sysctl:\n    \
                  name: net.ipv4.ip_forward\n    value: \"1\"\n    sysctl_set: true\n```\n\n\
                  ## How to fix\n\nWrite the value to a file that sorts after the other one.",
            preflight: Some("FileContent--proc-sys-net-ipv4-ip_forward"),
        },
        RuleMeta {
            id: "swap-not-disabled",
            category: "swap",
            severity: Severity::Warning,
            summary: "Swap is turned off only under a condition",
            doc: "## What it does\n\nFinds roles that turn swap off only under a condition.",
            preflight: Some("Swap"),
        },
        RuleMeta {
            id: "kernel-module-not-persisted",
            category: "kernel-module",
            severity: Severity::Warning,
            summary: "A kernel module is loaded now but not at boot",
            doc: "",
            preflight: None,
        },
        RuleMeta {
            id: "runtime-cgroup-driver-mismatch",
            category: "runtime",
            severity: Severity::Error,
            summary: "containerd and kubelet disagree on the cgroup driver",
            doc: "## What it does\n\nCompares `SystemdCgroup` with kubelet's `cgroupDriver`.",
            preflight: None,
        },
    ]
}

/// Sorted (file, line, column, rule), with every character that needs escaping
/// somewhere: `%`, `:`, `,`, newlines, CR, `<`, `&`, quotes, a control
/// character, non-ASCII text and paths with spaces.
fn findings() -> Vec<Finding> {
    let mut v = vec![
        Finding {
            rule: "yaml-syntax-error".into(),
            severity: Severity::Error,
            message: "mapping values are not allowed here\u{7}".into(),
            help: None,
            file: BROKEN.into(),
            line: 0,
            column: 0,
            preflight: None,
            related: vec![],
            fingerprint: fingerprint("yaml-syntax-error", BROKEN, "1"),
        },
        Finding {
            rule: "kernel-module-not-persisted".into(),
            severity: Severity::Info,
            message: "模块 overlay ✓ is loaded now — not at boot".into(),
            help: None,
            file: CONTAINERD.into(),
            line: 5,
            column: 3,
            preflight: None,
            related: vec![],
            fingerprint: fingerprint("kernel-module-not-persisted", CONTAINERD, "overlay"),
        },
        Finding {
            rule: "sysctl-overridden-at-boot".into(),
            severity: Severity::Error,
            message:
                "net.ipv4.ip_forward is set to 1 here, but \"99-%zz, hardening.conf\" sets it \
                      to 0 at boot: 100% of reboots lose it"
                    .into(),
            help: Some(
                "Write net.ipv4.ip_forward=1 to /etc/sysctl.d/zz-kubernetes.conf (it sorts \
                 after 99-%zz, hardening.conf) & drop the runtime-only write"
                    .into(),
            ),
            file: K8S_TASKS.into(),
            line: 3,
            column: 3,
            preflight: Some("FileContent--proc-sys-net-ipv4-ip_forward".into()),
            related: vec![
                Related {
                    file: K8S_TASKS.into(),
                    line: 8,
                    column: 3,
                    message: "only when this holds".into(),
                },
                Related {
                    file: HARDENING.into(),
                    line: 3,
                    column: 1,
                    message: "this file is loaded later at boot and wins".into(),
                },
            ],
            fingerprint: fingerprint(
                "sysctl-overridden-at-boot",
                K8S_TASKS,
                "net.ipv4.ip_forward",
            ),
        },
        Finding {
            rule: "sysctl-overridden-at-boot".into(),
            severity: Severity::Error,
            message: "the same key, written again".into(),
            help: None,
            file: K8S_TASKS.into(),
            line: 11,
            column: 3,
            preflight: None,
            related: vec![Related {
                file: "roles/missing/defaults/main.yml".into(),
                line: 2,
                column: 1,
                message: "kubelet_sysctls: {net.ipv4.ip_forward: 0}".into(),
            }],
            // Same identity as above: formats that need unique fingerprints
            // must cope.
            fingerprint: fingerprint(
                "sysctl-overridden-at-boot",
                K8S_TASKS,
                "net.ipv4.ip_forward",
            ),
        },
        Finding {
            rule: "swap-not-disabled".into(),
            severity: Severity::Warning,
            message: "swap is turned off only when\n`disable_swap | bool` is true <and> \
                      ansible_swaptotal_mb > 0\r"
                .into(),
            help: Some("Run \"swapoff -a\" & remove swap from /etc/fstab, unconditionally".into()),
            file: K8S_TASKS.into(),
            line: 19,
            column: 3,
            preflight: Some("Swap".into()),
            related: vec![],
            fingerprint: fingerprint("swap-not-disabled", K8S_TASKS, "swapoff"),
        },
    ];
    v.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    v
}

fn sources() -> SourceMap {
    let root = Path::new("/fixture");
    let map = SourceMap::new(root);
    map.add(&root.join(BROKEN), Arc::from("a: b: c\n"));
    map.add(&root.join(K8S_TASKS), Arc::from(K8S_TASKS_TEXT));
    map.add(&root.join(HARDENING), Arc::from(HARDENING_TEXT));
    map
}

fn report<'a>(root: &'a str, findings: &'a [Finding], rules: &'a [RuleMeta]) -> Report<'a> {
    Report {
        tool_version: "0.1.0-test",
        root,
        findings,
        rules,
        files_checked: 7,
        fail_level: Severity::Warning,
        color: false,
    }
}

/// Each format of the fixed run (root `.`), with sources for the human one.
fn output(format: Format) -> String {
    let (findings, rules, sources) = (findings(), rules(), sources());
    render(format, &report(".", &findings, &rules), Some(&sources))
}

// ---- snapshots -------------------------------------------------------------

#[test]
fn human_snapshot() {
    insta::assert_snapshot!("human", output(Format::Human));
}

#[test]
fn human_without_sources_snapshot() {
    let (findings, rules) = (findings(), rules());
    insta::assert_snapshot!(
        "human_without_sources",
        render(Format::Human, &report(".", &findings, &rules), None)
    );
}

#[test]
fn json_snapshot() {
    insta::assert_snapshot!("json", output(Format::Json));
}

#[test]
fn sarif_snapshot() {
    insta::assert_snapshot!("sarif", output(Format::Sarif));
}

#[test]
fn github_snapshot() {
    insta::assert_snapshot!("github", output(Format::Github));
}

#[test]
fn codeclimate_snapshot() {
    insta::assert_snapshot!("codeclimate", output(Format::Codeclimate));
}

#[test]
fn junit_snapshot() {
    insta::assert_snapshot!("junit", output(Format::Junit));
}

#[test]
fn empty_run_snapshots() {
    let rules = rules();
    let r = report(".", &[], &rules);
    let mut all = String::new();
    for f in Format::ALL {
        all.push_str("==== ");
        all.push_str(f.name());
        all.push('\n');
        all.push_str(&render(f, &r, None));
    }
    insta::assert_snapshot!("empty_run", all);
}

// ---- properties --------------------------------------------------------------

#[test]
fn output_is_deterministic() {
    for f in Format::ALL {
        assert_eq!(output(f), output(f), "{}", f.name());
    }
}

#[test]
fn human_colour_only_when_asked() {
    let (findings, rules, sources) = (findings(), rules(), sources());
    let mut r = report(".", &findings, &rules);
    let plain = render(Format::Human, &r, Some(&sources));
    assert!(!plain.contains('\u{1b}'), "ANSI escape without colour");
    r.color = true;
    let coloured = render(Format::Human, &r, Some(&sources));
    assert!(coloured.contains("\u{1b}["), "no ANSI escape with colour");
}

#[test]
fn human_summary_line() {
    let out = output(Format::Human);
    assert!(
        out.ends_with("\n5 findings (3 errors, 1 warning, 1 info) in 7 files\n"),
        "{out}"
    );
    let rules = rules();
    let one = &findings()[1..2];
    let mut r = report(".", one, &rules);
    r.files_checked = 1;
    assert_eq!(
        r.summary_line(),
        "1 finding (0 errors, 0 warnings, 1 info) in 1 file"
    );
}

#[test]
fn json_round_trips_findings() {
    let json: serde_json::Value = serde_json::from_str(&output(Format::Json)).expect("json");
    assert_eq!(json["version"], "0.1.0-test");
    let list = json["findings"].as_array().expect("findings");
    assert_eq!(list.len(), findings().len());
    assert_eq!(list[2]["related"][1]["file"], HARDENING);
    assert_eq!(json["summary"]["errors"], 3);
    assert_eq!(json["summary"]["failed"], true);
}

#[test]
fn github_one_command_per_finding() {
    let out = output(Format::Github);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), findings().len());
    for (line, f) in lines.iter().zip(findings()) {
        let (props, message) = line
            .strip_prefix("::")
            .and_then(|l| l.split_once("::"))
            .expect("::command props::message");
        let (command, props) = props.split_once(' ').expect("command and properties");
        let want = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        assert_eq!(command, want);
        // Unescaped `:` / `,` would split properties wrongly.
        let keys: Vec<&str> = props
            .split(',')
            .map(|kv| kv.split_once('=').expect("key=value").0)
            .collect();
        assert_eq!(keys, ["file", "line", "col", "title"], "{line}");
        assert!(!message.contains('\r') && !message.contains('\n'));
    }
    assert!(
        out.contains("see roles/hardening/templates/99-%25zz, hardening.conf.j2:3:1"),
        "{out}"
    );
    assert!(out.contains("100%25 of reboots"), "{out}");
    assert!(out.contains("<and> ansible_swaptotal_mb > 0%0D"), "{out}");
}

#[test]
fn ci_paths_are_joined_with_the_root() {
    let (findings, rules) = (findings(), rules());
    let gh = render(Format::Github, &report("./site/", &findings, &rules), None);
    assert!(gh.contains(&format!("file=site/{K8S_TASKS},")), "{gh}");
    let cc: serde_json::Value = serde_json::from_str(&render(
        Format::Codeclimate,
        &report("site", &findings, &rules),
        None,
    ))
    .expect("json");
    assert_eq!(cc[2]["location"]["path"], format!("site/{K8S_TASKS}"));

    let rel: serde_json::Value = serde_json::from_str(&render(
        Format::Sarif,
        &report("site", &findings, &rules),
        None,
    ))
    .expect("json");
    let run = &rel["runs"][0];
    assert!(run.get("originalUriBaseIds").is_none());
    assert_eq!(
        run["results"][2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "site/roles/kubernetes/node/tasks/main.yml"
    );

    let abs: serde_json::Value = serde_json::from_str(&render(
        Format::Sarif,
        &report("/srv/my repo/", &findings, &rules),
        None,
    ))
    .expect("json");
    let run = &abs["runs"][0];
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///srv/my%20repo/"
    );
    assert_eq!(
        run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "roles/containerd/tasks/main%20copy.yml"
    );
}

#[test]
fn sarif_describes_every_rule_and_indexes_results() {
    let sarif: serde_json::Value = serde_json::from_str(&output(Format::Sarif)).expect("json");
    let run = &sarif["runs"][0];
    let ids: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    let mut want: Vec<&str> = rules().iter().map(|r| r.id).collect();
    want.push("yaml-syntax-error");
    assert_eq!(ids, want);
    // GitHub code scanning rejects rules without these (sarif-multitool GH2012).
    for r in run["tool"]["driver"]["rules"].as_array().expect("rules") {
        for key in ["shortDescription", "fullDescription"] {
            assert!(
                r[key]["text"].as_str().is_some_and(|t| !t.is_empty()),
                "{key}: {r}"
            );
        }
        assert!(
            r["help"]["text"].as_str().is_some_and(|t| !t.is_empty()),
            "help: {r}"
        );
    }
    for r in run["results"].as_array().expect("results") {
        let i = usize::try_from(r["ruleIndex"].as_u64().expect("ruleIndex")).expect("index");
        assert_eq!(ids[i], r["ruleId"]);
        assert!(r["partialFingerprints"]["preflint/v1"].is_string());
    }
}

#[test]
fn codeclimate_has_gitlab_shape() {
    let issues: serde_json::Value =
        serde_json::from_str(&output(Format::Codeclimate)).expect("json");
    let issues = issues.as_array().expect("a JSON array");
    assert_eq!(issues.len(), findings().len());
    let mut fingerprints = std::collections::BTreeSet::new();
    for i in issues {
        for key in ["description", "check_name", "fingerprint", "severity"] {
            assert!(
                i[key].as_str().is_some_and(|s| !s.is_empty()),
                "{key} in {i}"
            );
        }
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&i["severity"].as_str().unwrap_or_default()),
            "{i}"
        );
        assert!(
            i["location"]["path"]
                .as_str()
                .is_some_and(|p| !p.starts_with('/'))
        );
        assert!(
            i["location"]["lines"]["begin"]
                .as_u64()
                .is_some_and(|l| l >= 1)
        );
        assert!(
            fingerprints.insert(i["fingerprint"].as_str().unwrap_or_default().to_string()),
            "GitLab needs unique fingerprints: {i}"
        );
    }
}

// ---- external validators ----------------------------------------------------

use common::repo;

/// A Python with the validators of tests/sarif/requirements.txt.
fn python() -> Option<PathBuf> {
    common::python_with("jsonschema, rfc3986_validator")
}

/// Runs `validate.py MODE [SCHEMA] files...` on `(name, text)` pairs; `None`
/// when skipped. Returns (success, output).
fn validate(mode: &str, docs: &[(&str, String)]) -> Option<(bool, String)> {
    let Some(py) = python() else {
        assert!(
            std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
            "no Python with jsonschema and rfc3986-validator: run scripts/test.sh, or \
             `$PREFLINT_PYTHON -m pip install -r tests/sarif/requirements.txt`, \
             or set PREFLINT_SKIP_ORACLE=1 to skip"
        );
        eprintln!("{mode} validation skipped (PREFLINT_SKIP_ORACLE=1)");
        return None;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(py);
    cmd.arg(repo().join("tests/sarif/validate.py")).arg(mode);
    if mode == "sarif" {
        cmd.arg(repo().join("tests/sarif/sarif-schema-2.1.0.json"));
    }
    for (name, text) in docs {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        cmd.arg(path);
    }
    let out = cmd.output().expect("run validate.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(out.status.code(), Some(2), "validator unusable: {text}");
    Some((out.status.success(), text))
}

#[test]
fn sarif_matches_official_schema() {
    let (findings, rules) = (findings(), rules());
    let docs = [
        ("fixture.sarif", output(Format::Sarif)),
        (
            "empty.sarif",
            render(Format::Sarif, &report(".", &[], &rules), None),
        ),
        (
            "absolute-root.sarif",
            render(
                Format::Sarif,
                &report("/srv/my repo", &findings, &rules),
                None,
            ),
        ),
        (
            "no-rules.sarif",
            render(Format::Sarif, &report("site", &findings, &[]), None),
        ),
    ];
    if let Some((ok, text)) = validate("sarif", &docs) {
        assert!(ok, "SARIF does not match the 2.1.0 schema:\n{text}");
    }
}

/// The validator must reject what the schema forbids, or passing means nothing.
#[test]
fn sarif_validator_rejects_invalid_logs() {
    let good: serde_json::Value = serde_json::from_str(&output(Format::Sarif)).expect("json");
    let mut bad_level = good.clone();
    bad_level["runs"][0]["results"][0]["level"] = "fatal".into();
    let mut bad_uri = good.clone();
    bad_uri["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        "a b.yml".into();
    let mut no_message = good.clone();
    no_message["runs"][0]["results"][0]
        .as_object_mut()
        .expect("result")
        .remove("message");
    for (name, doc, valid) in [
        ("control.sarif", good, true),
        ("bad-level.sarif", bad_level, false),
        ("bad-uri.sarif", bad_uri, false),
        ("no-message.sarif", no_message, false),
    ] {
        let text = serde_json::to_string(&doc).expect("json");
        if let Some((ok, out)) = validate("sarif", &[(name, text)]) {
            assert_eq!(ok, valid, "{name}: {out}");
        }
    }
}

#[test]
fn junit_parses_as_xml() {
    let (findings, rules) = (findings(), rules());
    let mut info_fails = report(".", &findings, &rules);
    info_fails.fail_level = Severity::Info;
    let docs = [
        ("fixture.xml", output(Format::Junit)),
        ("info.xml", render(Format::Junit, &info_fails, None)),
        (
            "empty.xml",
            render(Format::Junit, &report(".", &[], &rules), None),
        ),
    ];
    if let Some((ok, text)) = validate("junit", &docs) {
        assert!(ok, "JUnit report rejected:\n{text}");
    }
}

#[test]
fn junit_fails_at_the_fail_level() {
    let out = output(Format::Junit);
    // 3 errors and 1 warning fail at level warning; the info one does not.
    assert_eq!(out.matches("<failure ").count(), 4);
    assert!(out.contains(
        "<testcase classname=\"preflint.runtime\" name=\"runtime-cgroup-driver-mismatch\"/>"
    ));
    assert!(out.contains("<system-out>roles/containerd/tasks/main copy.yml:5:3: info: "));
}
