//! Hazard scenarios: in every `test-repos/hazards/<tree>/`, each line marked
//! `# expect: <rule-id>[, <rule-id>]` must get that finding from `preflint
//! check`, and no unmarked finding may appear (both ways).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn markers(tree: &Path) -> BTreeSet<(String, u32, String)> {
    let mut out = BTreeSet::new();
    for e in walkdir::WalkDir::new(tree)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        if !e.file_type().is_file() {
            continue;
        }
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
                        out.insert((
                            rel.clone(),
                            u32::try_from(i + 1).expect("line"),
                            id.to_string(),
                        ));
                    }
                }
            }
        }
    }
    out
}

fn findings(tree: &Path) -> BTreeSet<(String, u32, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["check", "--format", "json"])
        .arg(tree)
        .output()
        .expect("run preflint");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "preflint failed on {}: {}",
        tree.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap_or_default().to_string(),
                u32::try_from(f["line"].as_u64().unwrap_or(0)).expect("line"),
                f["rule"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_marker_fires_and_nothing_else() {
    let mut trees: Vec<PathBuf> = std::fs::read_dir(repo().join("test-repos/hazards"))
        .expect("hazards")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    trees.sort();
    assert!(trees.len() >= 7, "expected the hazard scenarios");
    let mut problems = Vec::new();
    for t in &trees {
        let want = markers(t);
        let got = findings(t);
        for m in want.difference(&got) {
            problems.push(format!(
                "{}: marked but not found: {}:{} {}",
                t.display(),
                m.0,
                m.1,
                m.2
            ));
        }
        for f in got.difference(&want) {
            problems.push(format!(
                "{}: found but not marked: {}:{} {}",
                t.display(),
                f.0,
                f.1,
                f.2
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
