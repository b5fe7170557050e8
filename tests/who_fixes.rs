//! Who-fixes scenarios: every `test-repos/who-fixes/<tree>/expected-verdicts.txt`
//! is checked against `preflint who-fixes --format json`, and a renamed copy
//! of each tree must give the same verdicts (no verdict depends on names).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_preflint")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `id -> verdict string` in the expected-file format.
fn verdicts(tree: &Path, extra: &[&str]) -> BTreeMap<String, String> {
    let out = Command::new(bin())
        .arg("who-fixes")
        .arg("--format")
        .arg("json")
        .args(extra)
        .arg(tree)
        .output()
        .expect("run preflint");
    assert!(
        out.status.code() == Some(0),
        "preflint failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json output");
    let mut map = BTreeMap::new();
    for v in json["verdicts"].as_array().expect("verdicts") {
        let id = v["id"].as_str().unwrap_or_default().to_string();
        let overall = v["overall"].as_str().unwrap_or_default();
        let s = match overall {
            "fact" => format!("fact:{}", v["who"].as_str().unwrap_or_default()),
            "conditional" => {
                let mut vars: Vec<String> = v["parts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|p| p["turn_on"].as_array().cloned().unwrap_or_default())
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect();
                vars.sort();
                vars.dedup();
                format!("conditional:{}", vars.join(","))
            }
            "partial" => {
                let parts: Vec<String> = v["missing_parts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect();
                format!("partial:{}", parts.join(","))
            }
            other => other.to_string(),
        };
        // Per host group, when plays on different groups disagree.
        let mut groups: Vec<String> = v["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|p| p["by_hosts"].as_array().cloned().unwrap_or_default())
            .map(|h| {
                format!(
                    "{}={}",
                    h["hosts"].as_str().unwrap_or_default(),
                    h["status"].as_str().unwrap_or_default()
                )
            })
            .collect();
        groups.sort();
        groups.dedup();
        let s = if groups.is_empty() {
            s
        } else {
            format!("{s} [{}]", groups.join(" "))
        };
        map.insert(id, s);
    }
    map
}

fn expected(tree: &Path) -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(tree.join("expected-verdicts.txt")).expect("expected-verdicts.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.trim().to_string()))
        })
        .collect()
}

fn trees() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("test-repos/who-fixes"))
        .expect("who-fixes trees")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("expected-verdicts.txt").is_file())
        .collect();
    v.sort();
    v
}

#[test]
fn verdicts_match_expected_files() {
    let trees = trees();
    assert!(!trees.is_empty());
    for t in trees {
        assert_eq!(verdicts(&t, &[]), expected(&t), "tree {}", t.display());
    }
}

/// Copies `src` to `dst`, renaming every role directory and tasks file and
/// rewriting references to them, so that no name survives.
fn renamed_copy(src: &Path, dst: &Path) {
    let mut renames: Vec<(String, String)> = Vec::new();
    let mut files = Vec::new();
    for e in walk(src) {
        let rel = e
            .strip_prefix(src)
            .expect("prefix")
            .to_string_lossy()
            .replace('\\', "/");
        files.push(rel);
    }
    // Role names: the directories below roles/ that hold a tasks/ or defaults/ dir.
    for f in &files {
        if let Some(rest) = f.strip_prefix("roles/") {
            for marker in ["/tasks/", "/defaults/", "/handlers/", "/templates/"] {
                if let Some(i) = rest.find(marker) {
                    let role = &rest[..i];
                    for (n, part) in role.split('/').enumerate() {
                        let new = format!(
                            "zz{n}{}",
                            part.chars().rev().collect::<String>().replace('_', "x")
                        );
                        if !renames.iter().any(|(a, _)| a == part) {
                            renames.push((part.to_string(), new));
                        }
                    }
                }
            }
        }
    }
    // Other file names too (playbooks, task files, templates), but not the
    // names Ansible itself looks for.
    for f in &files {
        let name = f.rsplit('/').next().unwrap_or_default();
        if matches!(
            name,
            "main.yml" | "main.yaml" | "expected-verdicts.txt" | "ansible.cfg"
        ) {
            continue;
        }
        if !renames.iter().any(|(a, _)| a == name) {
            renames.push((name.to_string(), format!("f{}{name}", renames.len())));
        }
    }
    renames.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
    let rename_path = |p: &str| -> String {
        p.split('/')
            .map(|seg| {
                renames
                    .iter()
                    .find(|(a, _)| a == seg)
                    .map_or_else(|| seg.to_string(), |(_, b)| b.clone())
            })
            .collect::<Vec<_>>()
            .join("/")
    };
    for f in &files {
        let new_rel = rename_path(f);
        let target = dst.join(&new_rel);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        let mut text = std::fs::read_to_string(src.join(f)).expect("read");
        for (a, b) in &renames {
            text = replace_word(&text, a, b);
        }
        std::fs::write(target, text).expect("write");
    }
}

/// Replaces `word` where it stands as a whole path or name segment.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let re = regex::Regex::new(&format!(
        r"(^|[\s/\x22'{{:-]){}($|[\s/\x22'}}:,])",
        regex::escape(word)
    ))
    .expect("regex");
    let mut out = text.to_string();
    // Twice, since adjacent matches share a delimiter.
    for _ in 0..2 {
        out = re
            .replace_all(&out, |c: &regex::Captures<'_>| {
                format!("{}{by}{}", &c[1], &c[2])
            })
            .into_owned();
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .expect("read_dir")
            .filter_map(Result::ok)
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn verdicts_do_not_depend_on_names() {
    for t in trees() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let copy = tmp.path().join("renamed");
        renamed_copy(&t, &copy);
        let want = expected(&t);
        let got = verdicts(&copy, &[]);
        assert_eq!(got, want, "renamed copy of {}", t.display());
    }
}

#[test]
fn inventory_group_vars_change_the_verdict() {
    let tree = repo().join("test-repos/who-fixes/inventory-vars");
    let inv = tree.join("inventory/hosts.ini").display().to_string();
    let without = verdicts(&tree, &[]);
    assert_eq!(without["firewall"], "conditional:manage_firewall");
    let with = verdicts(&tree, &["-i", &inv]);
    assert_eq!(
        with["firewall"], "fixed",
        "group_vars/k8s_cluster.yml turns the task on"
    );
}
