//! The evaluation oracle: what `preflint tasks --evaluated` computes of each
//! task (loop items, module arguments, command line, template text) against
//! what ansible-core computes from the same variables
//! (`tests/oracle/eval/`).
//!
//! On every case of `tests/oracle/eval/cases.txt`, preflint is compared with
//! the stored output of ansible-core (`expected/`) by `compare.py`, which
//! needs only a Python 3; with a Python that has ansible-core
//! (`PREFLINT_PYTHON`, set by scripts/test.sh), ansible-core is also run
//! live, and must still give the stored output. Without one the test fails
//! unless `PREFLINT_SKIP_ORACLE=1`, as the other oracles do.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::repo;
use serde_json::{Value, json};

fn evaluated(tree: &Path, playbook: Option<&str>, extra: &[&str]) -> Value {
    let mut c = Command::new(env!("CARGO_BIN_EXE_preflint"));
    c.args(["tasks", "--format", "json", "--evaluated"]);
    if let Some(p) = playbook {
        c.args(["--playbook", p]);
    }
    let out = c.args(extra).arg(tree).output().expect("run preflint");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "preflint output is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every task of the listing (handlers after their play's tasks).
fn all_tasks(listing: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for e in listing["entries"].as_array().into_iter().flatten() {
        for p in e["plays"].as_array().into_iter().flatten() {
            for part in ["tasks", "handlers"] {
                out.extend(p[part].as_array().into_iter().flatten());
            }
        }
    }
    out
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

#[test]
fn evaluated_lists_items_args_command_and_template() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    write(root, "site.yml", "- hosts: all\n  roles: [r]\n");
    write(
        root,
        "roles/r/defaults/main.yml",
        "mods: [overlay, br_netfilter]\nports: [6443, 10250]\nfwd: 1\nempty: []\n",
    );
    write(
        root,
        "roles/r/tasks/main.yml",
        "- name: Load\n  community.general.modprobe:\n    name: \"{{ item }}\"\n  loop: \"{{ mods }}\"\n\
         - name: Ports\n  ansible.builtin.wait_for:\n    port: \"{{ item }}\"\n    timeout: 3\n  loop: \"{{ ports }}\"\n\
         - name: Echo\n  ansible.builtin.command: echo {{ fwd }} {{ ansible_hostname }}\n\
         - name: Conf\n  ansible.builtin.template:\n    src: k8s.conf.j2\n    dest: /etc/sysctl.d/90-k8s.conf\n\
         - name: Facts\n  ansible.builtin.debug:\n    msg: \"{{ item }}\"\n  loop: \"{{ ansible_interfaces }}\"\n\
         - name: Nothing\n  ansible.builtin.debug:\n    msg: \"{{ item }}\"\n  loop: \"{{ empty }}\"\n",
    );
    write(
        root,
        "roles/r/templates/k8s.conf.j2",
        "net.ipv4.ip_forward = {{ fwd }}\n",
    );
    let listing = evaluated(root, None, &[]);
    let tasks = all_tasks(&listing);
    let by_name = |n: &str| {
        tasks
            .iter()
            .find(|t| t["name"] == n)
            .unwrap_or_else(|| panic!("task {n} listed"))["evaluated"]
            .clone()
    };
    let load = by_name("Load");
    assert_eq!(
        load["loop"],
        json!({"kind": "loop", "known": true, "items": ["overlay", "br_netfilter"]})
    );
    assert_eq!(
        load["iterations"][1]["args"]["name"],
        json!({"value": "br_netfilter"})
    );
    // A single expression keeps its type; a literal keeps YAML's.
    let ports = by_name("Ports");
    assert_eq!(
        ports["iterations"][0]["args"]["port"],
        json!({"value": 6443})
    );
    assert_eq!(
        ports["iterations"][0]["args"]["timeout"],
        json!({"value": 3})
    );
    assert_eq!(
        by_name("Echo")["iterations"][0]["free_form"],
        json!({"unknown": "host fact ansible_hostname"})
    );
    assert_eq!(
        by_name("Conf")["iterations"][0]["template"],
        json!({"src": "roles/r/templates/k8s.conf.j2", "known": "full",
               "text": "net.ipv4.ip_forward = 1\n"})
    );
    let facts = by_name("Facts");
    assert_eq!(
        facts["loop"],
        json!({"kind": "loop", "known": false, "reason": "host fact ansible_interfaces"})
    );
    assert_eq!(
        facts["iterations"][0]["args"]["msg"],
        json!({"unknown": "loop items unknown"})
    );
    // A known empty list runs nothing.
    assert_eq!(by_name("Nothing")["iterations"], json!([]));
    // Without the flag no task has the field.
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--format", "json"])
        .arg(root)
        .output()
        .expect("run preflint");
    let plain: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        all_tasks(&plain)
            .iter()
            .all(|t| t.get("evaluated").is_none())
    );
}

#[test]
fn evaluated_ignores_human_format() {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--evaluated"])
        .arg(repo().join("test-repos/who-fixes/effects-forms"))
        .output()
        .expect("run preflint");
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\"evaluated\""));
}

fn eval_dir() -> PathBuf {
    repo().join("tests/oracle/eval")
}

/// `tree`, `playbook` and the inventory (relative to the tree), if any.
fn cases() -> Vec<(String, String, Option<String>)> {
    let text = std::fs::read_to_string(eval_dir().join("cases.txt")).expect("cases.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split('\t').map(str::trim);
            let tree = parts.next().unwrap_or_default().to_string();
            let playbook = parts.next().unwrap_or_default().to_string();
            let inventory = parts.next().filter(|s| !s.is_empty()).map(str::to_string);
            (tree, playbook, inventory)
        })
        .collect()
}

fn preflint_json(tree: &Path, playbook: &str, inventory: Option<&str>) -> Vec<u8> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_preflint"));
    c.args([
        "tasks",
        "--format",
        "json",
        "--evaluated",
        "--playbook",
        playbook,
    ]);
    if let Some(i) = inventory {
        c.arg("-i").arg(tree.join(i));
    }
    c.arg(tree).output().expect("run preflint").stdout
}

fn ansible_json(
    py: &Path,
    tree: &Path,
    playbook: &str,
    inventory: Option<&str>,
) -> Result<Vec<u8>, String> {
    let mut c = Command::new(py);
    c.arg(eval_dir().join("evaluate.py"))
        .arg(tree)
        .arg(playbook);
    if let Some(i) = inventory {
        c.args(["-i", i]);
    }
    let out = c.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!(
            "evaluate.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// compare.py's verdict on one case: `Err` with its report when it fails.
fn compare(py: &Path, case: &str, ansible: &Path, preflint: &Path) -> Result<String, String> {
    let out = Command::new(py)
        .arg(eval_dir().join("compare.py"))
        .arg(ansible)
        .arg(preflint)
        .arg("--quiet")
        .arg("--known")
        .arg(eval_dir().join("known-differences.txt"))
        .args(["--case", case])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{text}{}", String::from_utf8_lossy(&out.stderr)))
    }
}

#[test]
fn evaluation_agrees_with_ansible() {
    let live = common::python_with("ansible");
    if live.is_none() {
        assert!(
            std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
            "no Python with ansible-core: run scripts/test.sh (it installs one), set PREFLINT_PYTHON, \
             or PREFLINT_SKIP_ORACLE=1 to compare with the stored outputs only"
        );
    }
    // compare.py needs only the standard library.
    let py = live.clone().unwrap_or_else(|| PathBuf::from("python3"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let cases = cases();
    assert!(cases.len() >= 20, "too few evaluation oracle cases");
    let mut failures = Vec::new();
    let mut gaps = 0;
    for (tree, playbook, inventory) in &cases {
        let case = format!("{tree}/{playbook}");
        let dir = repo().join("test-repos").join(tree);
        let stored = eval_dir()
            .join("expected")
            .join(tree)
            .join(format!("{playbook}.json"));
        let expected = std::fs::read(&stored).unwrap_or_default();
        if let Some(py) = &live {
            match ansible_json(py, &dir, playbook, inventory.as_deref()) {
                Ok(fresh) if fresh == expected => {}
                Ok(_) => failures.push(format!(
                    "== {case}: ansible-core no longer gives {}: run tests/oracle/eval/update_expected.sh",
                    stored.display()
                )),
                Err(e) => failures.push(format!("== {case}: {e}")),
            }
        }
        let a = tmp.path().join("ansible.json");
        let p = tmp.path().join("preflint.json");
        std::fs::write(&a, &expected).expect("write");
        std::fs::write(&p, preflint_json(&dir, playbook, inventory.as_deref())).expect("write");
        match compare(&py, &case, &a, &p) {
            Ok(report) => gaps += report.lines().filter(|l| l.starts_with("gap")).count(),
            Err(report) => failures.push(format!("== {case}\n{report}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    println!(
        "evaluation oracle: {} cases agree with ansible-core ({gaps} iterations preflint leaves unknown)",
        cases.len()
    );
}

#[test]
fn compare_py_tells_agree_differ_gap_and_invented() {
    let py = common::python_with("json").unwrap_or_else(|| PathBuf::from("python3"));
    let tmp = tempfile::tempdir().expect("tmp");
    let task = |args: Value| {
        json!({"file": "t.yml", "line": 1, "handler": false,
               "evaluated": {"loop": null, "iterations": [{"item": null, "args": args,
                             "free_form": null, "template": null}]}})
    };
    let ansible = json!({"tasks": [task(json!({
        "a": {"value": 1}, "b": {"value": "x"}, "c": {"value": "y"},
        "d": {"unknown": "undefined nope"}, "e": {"unknown": "host fact ansible_os_family"},
    }))]});
    let listing = |args: Value| {
        let mut t = task(args);
        t["name"] = json!(null);
        json!({"entries": [{"playbook": "site.yml", "plays": [{"tasks": [t], "handlers": []}]}]})
    };
    let run = |args: Value| {
        let a = tmp.path().join("a.json");
        let p = tmp.path().join("p.json");
        std::fs::write(&a, ansible.to_string()).expect("write");
        std::fs::write(&p, listing(args).to_string()).expect("write");
        let out = Command::new(&py)
            .arg(eval_dir().join("compare.py"))
            .arg(&a)
            .arg(&p)
            .output()
            .expect("compare.py");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // Agreeing, a gap (preflint unknown where Ansible knows) and what only
    // the host would tell: no failure; `true` is not `1`.
    let (code, text) = run(json!({
        "a": {"value": 1}, "b": {"value": "x"}, "c": {"unknown": "host fact x"},
        "d": {"unknown": "undefined nope"}, "e": {"value": "Debian"},
    }));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("args.c: gap"), "{text}");
    let (code, text) = run(json!({
        "a": {"value": true}, "b": {"value": "x"}, "c": {"value": "y"},
        "d": {"unknown": "undefined nope"}, "e": {"unknown": "host fact"},
    }));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("args.a: differ"), "{text}");
    // A value where Ansible fails on an undefined name is invented.
    let (code, text) = run(json!({
        "a": {"value": 1}, "b": {"value": "x"}, "c": {"value": "y"},
        "d": {"value": "made up"}, "e": {"unknown": "host fact"},
    }));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("args.d: invented"), "{text}");
}
