//! Differential test: every YAML file under test-repos/ read by preflint and
//! by ansible-core's own loader must give the same values (or both fail).
//! Needs `PREFLINT_PYTHON` with ansible-core (scripts/test.sh sets it).

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::repo;

fn python() -> Option<PathBuf> {
    common::python_with("ansible")
}

#[test]
fn yaml_values_match_ansible_loader() {
    let Some(py) = python() else {
        assert!(
            std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
            "no Python with ansible-core: run scripts/test.sh, set PREFLINT_PYTHON, or PREFLINT_SKIP_ORACLE=1"
        );
        return;
    };
    let mut lines = String::new();
    let mut count = 0;
    for entry in walkdir::WalkDir::new(repo().join("test-repos")).sort_by_file_name() {
        let Ok(e) = entry else { continue };
        let p = e.path();
        let is_yaml = p.extension().is_some_and(|x| x == "yml" || x == "yaml");
        if !e.file_type().is_file() || !is_yaml {
            continue;
        }
        let Ok(meta) = std::fs::metadata(p) else {
            continue;
        };
        if meta.len() > 1024 * 1024 {
            continue;
        }
        let bytes = std::fs::read(p).expect("read");
        let rec = match String::from_utf8(bytes) {
            Ok(text) => {
                let parsed = preflint::yaml::parse(preflint::source::FileId(0), &text);
                // A documented bound (nesting depth, alias expansion) is not a disagreement.
                let bounded = parsed
                    .diagnostics
                    .iter()
                    .any(|d| d.code == preflint::diagnostic::code::YAML_LIMIT);
                serde_json::json!({
                    "file": p.display().to_string(),
                    "ok": !parsed.failed,
                    "bounded": bounded,
                    "limits": {
                        "depth": preflint::yaml::MAX_DEPTH,
                        "flow_depth": preflint::yaml::MAX_FLOW_DEPTH,
                        "alias_nodes": preflint::yaml::MAX_ALIAS_NODES,
                    },
                    "docs": parsed.docs.iter().map(preflint::yaml::Node::to_json).collect::<Vec<_>>(),
                })
            }
            Err(_) => serde_json::json!({"file": p.display().to_string(), "ok": false, "docs": []}),
        };
        lines.push_str(&rec.to_string());
        lines.push('\n');
        count += 1;
    }
    assert!(count > 50, "expected the fixture YAML files, found {count}");
    let mut child = Command::new(&py)
        .arg(repo().join("tests/oracle/yaml_values.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(lines.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(out.status.success(), "{text}");
}
