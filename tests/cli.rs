//! Command-line behaviour: exit codes, configuration, baselines, suppression.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn preflint(args: &[&str], cwd: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_preflint"));
    c.args(args).env("NO_COLOR", "1");
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    c.output().expect("run preflint")
}

fn copy_tree(src: &Path, dst: &Path) {
    for e in walkdir::WalkDir::new(src)
        .into_iter()
        .filter_map(Result::ok)
    {
        let rel = e.path().strip_prefix(src).expect("prefix");
        let to = dst.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

fn tree(name: &str) -> String {
    repo().join("test-repos").join(name).display().to_string()
}

#[test]
fn exit_codes() {
    let live = tree("hazards/live-only");
    assert_eq!(
        preflint(&["check", &live], None).status.code(),
        Some(1),
        "warning fails at the default level"
    );
    assert_eq!(
        preflint(&["check", "--fail-level", "error", &live], None)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        preflint(&[&live], None).status.code(),
        Some(1),
        "`preflint PATH` runs check"
    );
    let missing = preflint(&["check", "/nonexistent/tree"], None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such file or directory"));
    assert_eq!(
        preflint(&["check", "--format", "nope", &live], None)
            .status
            .code(),
        Some(2),
        "usage error"
    );
    assert_eq!(
        preflint(&["tasks", &tree("mini-kubespray")], None)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        preflint(&["who-fixes", &tree("who-fixes/handmade")], None)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(preflint(&["rules"], None).status.code(), Some(0));
    let explain = preflint(&["explain", "sysctl-overridden-at-boot"], None);
    assert_eq!(explain.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&explain.stdout).contains("## How to fix"));
    assert_eq!(
        preflint(&["explain", "swap"], None).status.code(),
        Some(0),
        "concerns are explained too"
    );
    assert_eq!(
        preflint(&["explain", "no-such-rule"], None).status.code(),
        Some(2)
    );
}

#[test]
fn clean_tree_passes() {
    // Only info findings (concerns left to the operator): exit 0.
    let out = preflint(&["check", &tree("who-fixes/handmade")], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn config_file_is_validated_with_lines() {
    let tmp = tempfile::tempdir().expect("tmp");
    copy_tree(&repo().join("test-repos/hazards/live-only"), tmp.path());
    std::fs::write(
        tmp.path().join(".preflint.yml"),
        "fail_level: error\nrules:\n  no-such-rule: off\n",
    )
    .expect("write");
    let out = preflint(&["check", "."], Some(tmp.path()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".preflint.yml:3:3: unknown rule `no-such-rule`"),
        "{err}"
    );

    std::fs::write(
        tmp.path().join(".preflint.yml"),
        "rules:\n  sysctl-not-persisted: off\n",
    )
    .expect("write");
    assert_eq!(
        preflint(&["check", "."], Some(tmp.path())).status.code(),
        Some(0),
        "rule turned off"
    );
    std::fs::write(
        tmp.path().join(".preflint.yml"),
        "rules:\n  sysctl-not-persisted: error\nfail_level: error\n",
    )
    .expect("write");
    assert_eq!(
        preflint(&["check", "."], Some(tmp.path())).status.code(),
        Some(1),
        "severity raised"
    );
}

#[test]
fn baseline_fails_only_on_new_findings() {
    let tmp = tempfile::tempdir().expect("tmp");
    copy_tree(&repo().join("test-repos/hazards/live-only"), tmp.path());
    let base = tmp.path().join("base.json");
    let base_s = base.display().to_string();
    assert_eq!(
        preflint(
            &["check", "--write-baseline", &base_s, "."],
            Some(tmp.path())
        )
        .status
        .code(),
        Some(0)
    );
    assert_eq!(
        preflint(&["check", "--baseline", &base_s, "."], Some(tmp.path()))
            .status
            .code(),
        Some(0)
    );
    // A new hazard is reported although the old one is in the baseline.
    let tasks = tmp.path().join("roles/net/tasks/main.yml");
    let mut text = std::fs::read_to_string(&tasks).expect("read");
    text.push_str("\n- name: Also bridge\n  ansible.builtin.command: sysctl -w net.bridge.bridge-nf-call-iptables=1\n");
    std::fs::write(&tasks, text).expect("write");
    let out = preflint(
        &["check", "--baseline", &base_s, "--format", "json", "."],
        Some(tmp.path()),
    );
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rules: Vec<&str> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert_eq!(
        rules
            .iter()
            .filter(|r| **r == "sysctl-not-persisted")
            .count(),
        1,
        "{rules:?}"
    );
}

#[test]
fn noqa_suppresses_on_the_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    copy_tree(&repo().join("test-repos/hazards/live-only"), tmp.path());
    let tasks = tmp.path().join("roles/net/tasks/main.yml");
    let text = std::fs::read_to_string(&tasks).expect("read").replace(
        "# expect: sysctl-not-persisted",
        "# noqa: sysctl-not-persisted",
    );
    std::fs::write(&tasks, text).expect("write");
    assert_eq!(
        preflint(&["check", "."], Some(tmp.path())).status.code(),
        Some(0)
    );
}

#[test]
fn output_is_deterministic() {
    let a = preflint(
        &[
            "check",
            "--format",
            "json",
            &tree("hazards/sysctl-conf-link"),
        ],
        None,
    );
    let b = preflint(
        &[
            "check",
            "--format",
            "json",
            &tree("hazards/sysctl-conf-link"),
        ],
        None,
    );
    assert_eq!(a.stdout, b.stdout);
    let one = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--format", "json", &tree("mini-kubespray")])
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("run");
    let two = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--format", "json", &tree("mini-kubespray")])
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("run");
    assert_eq!(one.stdout, two.stdout, "same output for any thread count");
}

#[test]
fn help_teaches_with_examples() {
    for sub in ["check", "who-fixes", "tasks", "sysctl"] {
        let out = preflint(&[sub, "--help"], None);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Example"),
            "{sub} --help has examples:\n{text}"
        );
    }
    let out = preflint(&["tasks", "--help"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--effects") && text.contains("rules/README.md"),
        "tasks --help teaches --effects:\n{text}"
    );
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let out = preflint(&["completions", shell], None);
        assert_eq!(out.status.code(), Some(0));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("who-fixes"),
            "{shell} completion lists subcommands"
        );
    }
    let man = preflint(&["man"], None);
    assert_eq!(man.status.code(), Some(0));
    let text = String::from_utf8_lossy(&man.stdout);
    assert!(
        text.contains(".TH preflint 1") && text.contains("check"),
        "roff man page"
    );
}

#[test]
fn colour_and_quiet() {
    let live = tree("hazards/live-only");
    let always = preflint(&["check", "--color", "always", &live], None);
    assert!(
        String::from_utf8_lossy(&always.stdout).contains('\u{1b}'),
        "ANSI colour with --color always"
    );
    let never = preflint(&["check", "--color", "never", &live], None);
    assert!(!String::from_utf8_lossy(&never.stdout).contains('\u{1b}'));
    // Not a terminal: colour off by default, and no progress indicator on stderr.
    let auto = preflint(&["check", &live], None);
    assert!(!String::from_utf8_lossy(&auto.stdout).contains('\u{1b}'));
    assert!(
        auto.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&auto.stderr)
    );
    let tmp = tempfile::tempdir().expect("tmp");
    let base = tmp.path().join("b.json").display().to_string();
    let quiet = preflint(
        &["check", "--quiet", "--write-baseline", &base, &live],
        None,
    );
    assert!(quiet.stderr.is_empty(), "--quiet keeps stderr clean");
}

/// A file reached through a linked directory is read once, but every path
/// still gets its own tasks and its own syntax errors.
#[cfg(unix)]
#[test]
fn files_reached_through_links_keep_their_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("play.yml", "- hosts: all\n  roles: [r]\n");
    write("site/play.yml", "- hosts: all\n  roles: [r]\n");
    write(
        "roles/r/tasks/main.yml",
        "- name: load br_netfilter\n  community.general.modprobe:\n    name: br_netfilter\n",
    );
    write("roles/r/tasks/broken.yml", "a: [\n");
    std::os::unix::fs::symlink("../roles", root.join("site/roles")).expect("symlink");
    let root_s = root.display().to_string();
    let out = preflint(
        &[
            "tasks",
            "--format",
            "json",
            "--playbook",
            "play.yml",
            "--playbook",
            "site/play.yml",
            &root_s,
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let files: Vec<&str> = v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .flat_map(|e| e["plays"].as_array().expect("plays"))
        .flat_map(|p| p["tasks"].as_array().expect("tasks"))
        .map(|t| t["file"].as_str().expect("file"))
        .collect();
    assert_eq!(
        files,
        ["roles/r/tasks/main.yml", "site/roles/r/tasks/main.yml"]
    );
    let broken: Vec<(&str, u64)> = v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "yaml-syntax-error")
        .map(|d| {
            (
                d["file"].as_str().expect("file"),
                d["line"].as_u64().expect("line"),
            )
        })
        .collect();
    assert_eq!(
        broken,
        [
            ("roles/r/tasks/broken.yml", 2),
            ("site/roles/r/tasks/broken.yml", 2)
        ]
    );
    assert_eq!(v["stats"]["yaml_files"], 6);
    assert_eq!(v["stats"]["yaml_failed"], 2);
}

/// A panic in one unit of the run (a file parsed, a playbook, play or role
/// expanded, a task analysed) is reported as `internal-error` at that
/// unit's file and line, the rest of the tree is still analysed, and the
/// command exits 2. The panics are made by `PREFLINT_DEBUG_PANIC`, which
/// only debug builds read (see `src/internal_error.rs`).
#[cfg(debug_assertions)]
#[test]
fn a_panic_becomes_an_internal_error_and_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write(
        "site.yml",
        "- name: Prepare nodes\n  hosts: all\n  roles: [net]\n",
    );
    write(
        "roles/net/tasks/main.yml",
        "- name: Forward packets now\n  ansible.builtin.command: sysctl -w net.ipv4.ip_forward=1\n\
         - name: Turn swap off\n  ansible.builtin.command: swapoff -a\n",
    );
    let run = |panic: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
            .args(args)
            .arg(root)
            .env("NO_COLOR", "1")
            .env("RUST_BACKTRACE", "0")
            .env("PREFLINT_DEBUG_PANIC", panic)
            .output()
            .expect("run preflint");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), out.stdout, stderr)
    };
    // (unit, where the internal error points, a finding of the rest of the tree)
    let cases = [
        (
            "task:Turn swap off",
            ("roles/net/tasks/main.yml", 3),
            ("sysctl-not-persisted", "roles/net/tasks/main.yml", 1),
        ),
        (
            "file:roles/net/tasks/main.yml",
            ("roles/net/tasks/main.yml", 1),
            ("concern-left-to-operator", "site.yml", 1),
        ),
        (
            "play:Prepare nodes",
            ("site.yml", 1),
            ("concern-left-to-operator", "site.yml", 1),
        ),
        (
            "playbook:site.yml",
            ("site.yml", 1),
            ("concern-left-to-operator", "site.yml", 1),
        ),
    ];
    for (panic, (file, line), (other_rule, other_file, other_line)) in cases {
        let (code, stdout, stderr) = run(panic, &["check", "--format", "json"]);
        assert_eq!(code, Some(2), "{panic}: exit 2\n{stderr}");
        let doc: serde_json::Value = serde_json::from_slice(&stdout).expect("JSON");
        let findings = doc["findings"].as_array().expect("findings");
        let at = |rule: &str, file: &str, line: u64| {
            findings
                .iter()
                .any(|f| f["rule"] == rule && f["file"] == file && f["line"] == line)
        };
        assert!(
            at("internal-error", file, line),
            "{panic}: internal-error at {file}:{line} in {findings:#?}"
        );
        assert!(
            at(other_rule, other_file, other_line),
            "{panic}: the run went on: {other_rule} at {other_file}:{other_line} in {findings:#?}"
        );
        assert!(
            stderr.contains(&format!("preflint: internal error: {file}:{line}:")),
            "{panic}: stderr names the file\n{stderr}"
        );
    }
    // Every command reports it, even in formats without diagnostics.
    for args in [
        &["tasks"][..],
        // With effects it does (every task's).
        &["tasks", "--effects"],
        &["who-fixes"],
        &["who-fixes", "--format", "compact"],
        &["sysctl"],
    ] {
        let (code, _, stderr) = run("task:Turn swap off", args);
        if args == ["tasks"] {
            // `tasks` analyses no task: nothing to catch.
            assert_eq!(code, Some(0), "{args:?}\n{stderr}");
            continue;
        }
        assert_eq!(code, Some(2), "{args:?}\n{stderr}");
        assert!(
            stderr.contains("preflint: internal error: roles/net/tasks/main.yml:3:"),
            "{args:?}\n{stderr}"
        );
    }
    let (code, stdout, stderr) = run("file:roles/net/tasks/main.yml", &["tasks", "--quiet"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(String::from_utf8_lossy(&stdout).contains("internal-error"));
    assert!(stderr.contains("preflint: internal error: roles/net/tasks/main.yml:1:"));
    // A tree without playbooks: each role is expanded as if a play ran it.
    std::fs::remove_file(root.join("site.yml")).expect("rm");
    let (code, stdout, stderr) = run("role:net", &["check", "--format", "json"]);
    assert_eq!(code, Some(2), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&stdout).expect("JSON");
    assert!(
        doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule"] == "internal-error" && f["file"] == "roles/net"),
        "{doc:#}"
    );
    // Without a panic the same tree is analysed as usual.
    let (code, _, stderr) = run("", &["check"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
}

/// The blocks of `tasks` text output: each task line (by the task's name)
/// with the lines under it.
fn task_blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("    ") && !line.starts_with("     ") {
            blocks.push((line.to_string(), Vec::new()));
        } else if line.starts_with("        ")
            && let Some(b) = blocks.last_mut()
        {
            b.1.push(line.trim().to_string());
        } else {
            // A play or entry line ends the block before it.
            blocks.push((line.to_string(), Vec::new()));
        }
    }
    blocks
}

/// The lines under the task named `name`.
fn under<'b>(blocks: &'b [(String, Vec<String>)], name: &str) -> &'b [String] {
    &blocks
        .iter()
        .find(|(head, _)| head.contains(&format!("] {name}  <")))
        .unwrap_or_else(|| panic!("task {name} listed: {blocks:#?}"))
        .1
}

#[test]
fn tasks_lists_effects_under_each_task() {
    let forms = tree("who-fixes/effects-forms");
    let out = preflint(&["tasks", "--effects", &forms], None);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let blocks = task_blocks(&text);
    // `reload` defaults to true: set now and at boot, and the file applied.
    assert_eq!(
        under(&blocks, "Forward IPv4"),
        [
            "sysctl_set net.ipv4.ip_forward=1 file=/etc/sysctl.d/90-k8s.conf [now, boot]  when: true",
            "sysctl_applied file=/etc/sysctl.d/90-k8s.conf [now]  when: true",
        ]
    );
    // `reload: false`: at boot only, nothing applied.
    assert_eq!(
        under(&blocks, "Forward IPv6 at next boot only"),
        [
            "sysctl_set net.ipv6.conf.all.forwarding=1 file=/etc/sysctl.d/90-k8s.conf [boot]  when: true"
        ]
    );
    // The floppy line is an fstab edit, not swap.
    let floppy = under(&blocks, "Remove the floppy from fstab");
    assert_eq!(
        floppy,
        ["file_edited /etc/fstab remove regexp=^/dev/fd0 [now, boot]  when: true"]
    );
    assert!(!floppy.iter().any(|l| l.contains("swap_off")));
    // The unit drop-in loads overlay when containerd starts (a later task
    // starts it; none enables it).
    assert!(
        under(&blocks, "containerd unit drop-in").contains(
            &"module_loaded overlay file=/etc/systemd/system/containerd.service.d/10-modules.conf [now]  when: true"
                .to_string()
        ),
        "{text}"
    );
    // Handlers are listed after their play's tasks with their effects.
    assert!(text.contains("  handlers of play #1\n"), "{text}");
    assert_eq!(
        under(&blocks, "Apply sysctls"),
        ["sysctl_applied file=/etc/sysctl.d/91-bridge.conf [now]  when: true"]
    );
    // Without the flag, the listing has no effect line.
    let plain = preflint(&["tasks", &forms], None);
    let plain = String::from_utf8_lossy(&plain.stdout);
    assert!(
        !plain.contains("sysctl_set") && !plain.contains("handlers of"),
        "{plain}"
    );
}

#[test]
fn tasks_effects_per_item_with_when_and_extra_vars() {
    let tmp = tempfile::tempdir().expect("tmp");
    let write = |rel: &str, text: &str| {
        let p = tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("site.yml", "- hosts: all\n  roles: [r]\n");
    write(
        "roles/r/tasks/main.yml",
        "- name: Load modules\n  community.general.modprobe:\n    name: \"{{ item }}\"\n\
         \x20 loop: [overlay, br_netfilter]\n  when: ansible_os_family == \"Debian\"\n\
         - name: Say hello\n  ansible.builtin.debug:\n    msg: hello\n\
         - name: Swap off\n  ansible.builtin.command: swapoff -a\n  when: prep_swap | bool\n\
         - name: Custom\n  example.custom.thing:\n    x: 1\n  notify: Restart it\n",
    );
    let root = tmp.path().display().to_string();
    let out = preflint(
        &["tasks", "--effects", "-e", "prep_swap=false", &root],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let blocks = task_blocks(&text);
    assert_eq!(
        under(&blocks, "Load modules"),
        [
            "when ansible_os_family == \"Debian\"  (Task at roles/r/tasks/main.yml:5)",
            "item=overlay  module_loaded overlay [now]  when: unknown (ansible_os_family: host fact)",
            "item=br_netfilter  module_loaded br_netfilter [now]  when: unknown (ansible_os_family: host fact)",
        ]
    );
    // A task with no effect keeps its one line.
    assert!(under(&blocks, "Say hello").is_empty(), "{text}");
    assert_eq!(
        under(&blocks, "Swap off")[1],
        "swap_off all [now]  when: false"
    );
    assert_eq!(
        under(&blocks, "Custom"),
        [
            "(no argument spec known for example.custom.thing: arguments read as written)",
            "handler_notified \"Restart it\" [now]  when: true",
        ]
    );
    let on = preflint(&["tasks", "--effects", "-e", "prep_swap=true", &root], None);
    let on = String::from_utf8_lossy(&on.stdout);
    assert_eq!(
        under(&task_blocks(&on), "Swap off")[1],
        "swap_off all [now]  when: true"
    );
}

#[test]
fn tasks_effects_as_json() {
    let forms = tree("who-fixes/effects-forms");
    let out = preflint(&["tasks", "--effects", "--format", "json", &forms], None);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let play = &doc["entries"][0]["plays"][0];
    let task = |name: &str| {
        play["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .chain(play["handlers"].as_array().expect("handlers"))
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {play:#}"))
            .clone()
    };
    let floppy = task("Remove the floppy from fstab");
    let its = floppy["effects"].as_array().expect("effects");
    assert_eq!(its.len(), 1, "{floppy:#}");
    assert_eq!(its[0]["item"], serde_json::Value::Null);
    assert_eq!(its[0]["when"]["holds"], true);
    let effects = its[0]["effects"].as_array().expect("effects");
    assert_eq!(effects.len(), 1, "no swap_off: {floppy:#}");
    assert_eq!(effects[0]["effect"], "file_edited");
    assert_eq!(effects[0]["path"], "/etc/fstab");
    assert_eq!(effects[0]["edit"]["remove"], true);
    assert_eq!(effects[0]["timing"]["boot"], true);
    let ipv4 = task("Forward IPv4");
    let set = &ipv4["effects"][0]["effects"][0];
    assert_eq!(set["effect"], "sysctl_set");
    assert_eq!(set["key"], "net.ipv4.ip_forward");
    assert_eq!(
        set["timing"],
        serde_json::json!({"now": true, "boot": true})
    );
    assert_eq!(
        task("Apply sysctls")["effects"][0]["effects"][0]["effect"],
        "sysctl_applied"
    );
    // Each task gets its own effects, play after play (handlers too).
    let mini = preflint(
        &[
            "tasks",
            "--effects",
            "--format",
            "json",
            &tree("mini-kubespray"),
        ],
        None,
    );
    let mini: serde_json::Value = serde_json::from_slice(&mini.stdout).expect("JSON");
    let mut sysctl_tasks = 0;
    for play in mini["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .flat_map(|e| e["plays"].as_array().expect("plays"))
    {
        for t in ["tasks", "handlers"]
            .iter()
            .flat_map(|k| play[k].as_array().expect("tasks"))
        {
            let kinds: Vec<&str> = t["effects"]
                .as_array()
                .expect("effects")
                .iter()
                .flat_map(|it| it["effects"].as_array().expect("effects"))
                .map(|e| e["effect"].as_str().expect("kind"))
                .collect();
            match t["module"].as_str().expect("module") {
                "ansible.posix.sysctl" => {
                    sysctl_tasks += 1;
                    assert!(kinds.contains(&"sysctl_set"), "{t:#}");
                }
                "ansible.builtin.debug"
                | "ansible.builtin.set_fact"
                | "ansible.builtin.include_tasks"
                | "ansible.builtin.group_by"
                | "ansible.builtin.stat" => assert!(kinds.is_empty(), "{t:#}"),
                _ => {}
            }
        }
    }
    assert!(sysctl_tasks >= 3, "{mini:#}");
    // Without the flag no task has the field.
    let plain = preflint(&["tasks", "--format", "json", &forms], None);
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("JSON");
    let plays = plain["entries"][0]["plays"].as_array().expect("plays");
    assert!(
        plays
            .iter()
            .flat_map(|p| p["tasks"].as_array().into_iter().flatten())
            .all(|t| t.get("effects").is_none())
    );
}
