//! Differential test: `preflint tasks` against real `ansible-playbook
//! --list-tasks` on every case of `tests/oracle/cases.txt`: the same tasks in
//! the same order for everything Ansible imports statically.
//!
//! Needs a Python with ansible-core (`PREFLINT_PYTHON`, set by
//! scripts/test.sh); fails when there is none unless `PREFLINT_SKIP_ORACLE=1`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::repo;

fn python() -> Option<PathBuf> {
    common::python_with("ansible")
}

fn cases() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo().join("tests/oracle/cases.txt")).expect("cases.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once('\t')
                .map(|(a, b)| (a.to_string(), b.trim().to_string()))
        })
        .collect()
}

fn compare(py: &Path, tree: &Path, playbook: &str, tmp: &Path) -> Result<(), String> {
    let oracle = Command::new(py)
        .arg(repo().join("tests/oracle/list_tasks.py"))
        .arg(tree)
        .arg(playbook)
        .env("PATH", path_with(py))
        .output()
        .map_err(|e| e.to_string())?;
    if !oracle.status.success() {
        return Err(format!(
            "oracle failed: {}",
            String::from_utf8_lossy(&oracle.stderr)
        ));
    }
    let ours = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--format", "json"])
        .arg(playbook)
        .current_dir(tree)
        .output()
        .map_err(|e| e.to_string())?;
    let o = tmp.join("oracle.json");
    let p = tmp.join("preflint.json");
    std::fs::write(&o, &oracle.stdout).map_err(|e| e.to_string())?;
    std::fs::write(&p, &ours.stdout).map_err(|e| e.to_string())?;
    let cmp = Command::new(py)
        .arg(repo().join("tests/oracle/compare.py"))
        .arg(&o)
        .arg(&p)
        .output()
        .map_err(|e| e.to_string())?;
    if cmp.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&cmp.stdout),
            String::from_utf8_lossy(&cmp.stderr)
        ))
    }
}

fn path_with(py: &Path) -> String {
    let dir = py
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

#[test]
fn tasks_match_ansible_list_tasks() {
    let Some(py) = python() else {
        assert!(
            std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
            "no Python with ansible-core: run scripts/test.sh (it installs one), set PREFLINT_PYTHON, \
             or PREFLINT_SKIP_ORACLE=1 to skip"
        );
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let cases = cases();
    assert!(cases.len() >= 10, "too few oracle cases");
    for (tree, playbook) in &cases {
        let dir = repo().join("test-repos").join(tree);
        if let Err(e) = compare(&py, &dir, playbook, tmp.path()) {
            failures.push(format!("== {tree} {playbook}\n{e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    println!(
        "tasks oracle: {} cases agree with ansible-playbook --list-tasks",
        cases.len()
    );
}
