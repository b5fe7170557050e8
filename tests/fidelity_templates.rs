//! Fidelity scenarios (`test-repos/fidelity/<tree>/`): templates rendered
//! as Ansible renders them, and unknown made explicit.
//!
//! * In every fidelity tree each line marked `# expect: <rule-id>` gets
//!   that finding from `preflint check`, and nothing unmarked fires.
//! * Case 2 of issue 42: a template that writes sysctl settings from a
//!   dict in role defaults sets `net.ipv4.ip_forward = 0` from the late
//!   file, and `check` reports it overriding the Kubernetes file.
//! * Case 4: a runtime's cgroup driver set in a template loop over
//!   definitions whose values are templates is found by who-fixes.
//! * No output of any test tree prints unrendered Jinja where it names a
//!   sysctl key or value, a path, a module, a package or a unit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str], tree: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(args)
        .arg(tree)
        .output()
        .expect("run preflint");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "preflint {args:?} failed on {}: {}",
        tree.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("preflint {args:?} on {}: not JSON ({e})", tree.display()))
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn markers(tree: &Path) -> BTreeSet<(String, u64, String)> {
    let mut out = BTreeSet::new();
    for e in walkdir::WalkDir::new(tree)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let rel = e
            .path()
            .strip_prefix(tree)
            .expect("prefix")
            .to_string_lossy()
            .replace('\\', "/");
        for (i, line) in text.lines().enumerate() {
            if let Some(pos) = line.find("# expect:") {
                for id in line[pos + "# expect:".len()..].split(',') {
                    let id = id.trim();
                    if !id.is_empty() {
                        out.insert((rel.clone(), i as u64 + 1, id.to_string()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_marker_fires_and_nothing_else() {
    let trees = subdirs(&repo().join("test-repos/fidelity"));
    assert!(trees.len() >= 3, "expected the fidelity scenarios");
    let mut problems = Vec::new();
    // The scenarios that mark their findings (`# expect:`); the other
    // fidelity trees are read by their own tests.
    let marked: Vec<_> = trees.iter().filter(|t| !markers(t).is_empty()).collect();
    assert!(marked.len() >= 3, "expected the marked fidelity scenarios");
    for t in marked {
        let json = run(&["check", "--format", "json"], t);
        let got: BTreeSet<(String, u64, String)> = json["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                (
                    f["file"].as_str().unwrap_or_default().to_string(),
                    f["line"].as_u64().unwrap_or(0),
                    f["rule"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let want = markers(t);
        for m in want.difference(&got) {
            problems.push(format!("{}: marked, not found: {m:?}", t.display()));
        }
        for f in got.difference(&want) {
            problems.push(format!("{}: found, not marked: {f:?}", t.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_sysctl_template_over_a_dict_sets_its_keys_in_the_late_file() {
    let tree = repo().join("test-repos/fidelity/template-sysctl-dict");
    let results = run(&["sysctl", "--format", "json"], &tree);
    let fwd = results
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["key"] == "net.ipv4.ip_forward")
        .expect("net.ipv4.ip_forward simulated");
    for b in fwd["boot"].as_array().expect("boot") {
        assert_eq!(b["value"], "0", "{b}");
        assert_eq!(b["winner"]["file"], "/etc/sysctl.d/zz-main.conf", "{b}");
        assert_eq!(b["winner"]["conditional"], false, "{b}");
    }
    let keys: Vec<&str> = results
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["key"].as_str())
        .collect();
    assert_eq!(keys, vec!["kernel.kptr_restrict", "net.ipv4.ip_forward"]);
}

#[test]
fn a_runtime_driver_set_in_a_template_loop_is_found() {
    let tree = repo().join("test-repos/fidelity/runtime-options-dict");
    let json = run(&["who-fixes", "--format", "json"], &tree);
    let v = json["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .find(|v| v["id"] == "cgroup_driver")
        .expect("cgroup_driver");
    assert_eq!(v["overall"], "fixed", "{v}");
    // The written config lists the rendered lines, the RedHat-only one
    // under its condition; nothing in it is template text.
    let tasks = run(&["tasks", "--effects", "--format", "json"], &tree);
    let text = tasks.to_string();
    assert!(text.contains("      SystemdCgroup = true"), "{text}");
    let mut lines = Vec::new();
    collect(&tasks, "lines", &mut lines);
    let conditional: Vec<&serde_json::Value> = lines
        .iter()
        .flat_map(|l| l.as_array().into_iter().flatten())
        .filter(|l| l.get("when").is_some())
        .collect();
    assert_eq!(conditional.len(), 1, "{conditional:?}");
    assert_eq!(conditional[0]["text"], "  snapshotter = \"overlayfs\"");
}

fn collect<'j>(v: &'j serde_json::Value, key: &str, out: &mut Vec<&'j serde_json::Value>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    out.push(x);
                }
                collect(x, key, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect(x, key, out)),
        _ => {}
    }
}

/// The fields that name a thing on the node (a sysctl key or value, a
/// path, a kernel module, a package, a unit, a port) in the JSON outputs.
const NAMING: &[&str] = &[
    "key", "value", "now", "file", "path", "target", "unit", "module", "package", "port", "version",
];

/// The places that quote the source as evidence and may hold template
/// text: the text as written, an include's target as written, conditions.
const EVIDENCE: &[&str] = &["raw", "include", "when", "conditions", "expr"];

fn leaks(v: &serde_json::Value, trail: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if EVIDENCE.contains(&k.as_str()) {
                    continue;
                }
                let here = format!("{trail}/{k}");
                match x {
                    serde_json::Value::String(s)
                        if NAMING.contains(&k.as_str())
                            && (s.contains("{{") || s.contains("{%")) =>
                    {
                        out.push(format!("{here} = {s:?}"));
                    }
                    _ => leaks(x, &here, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| leaks(x, trail, out)),
        _ => {}
    }
}

#[test]
fn no_output_names_anything_with_unrendered_jinja() {
    let root = repo().join("test-repos");
    let mut trees = Vec::new();
    for t in subdirs(&root) {
        trees.push(t.clone());
        // Trees made of scenario trees: each scenario too.
        for sub in subdirs(&t) {
            if sub.join("site.yml").is_file() || sub.join("roles").is_dir() {
                trees.push(sub);
            }
        }
    }
    let mut found = Vec::new();
    for t in &trees {
        for args in [
            &["tasks", "--effects", "--format", "json"][..],
            &["sysctl", "--format", "json"],
            &["who-fixes", "--format", "json"],
            &["check", "--format", "json"],
        ] {
            let json = run(args, t);
            leaks(&json, &format!("{} {}", t.display(), args[0]), &mut found);
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
