//! Differential test: every inventory listed in `tests/oracle/inventory/cases.txt`
//! read by preflint (`Inventory::load`) and by the real `ansible-inventory
//! --list` must give the same hosts, the same groups for each host and the
//! same variables for each host (after inventory precedence).
//!
//! Needs `PREFLINT_PYTHON` (its bin directory holds `ansible-inventory`;
//! scripts/test.sh sets it); `PREFLINT_SKIP_ORACLE=1` skips the test.
//! Ansible runs with a private home and temp directory, so nothing is
//! written in the repository.

use preflint::ansible::inventory::Inventory;
use preflint::load::Loader;
use preflint::source::SourceMap;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cases_dir() -> PathBuf {
    repo().join("tests/oracle/inventory")
}

/// `ansible-inventory` beside `PREFLINT_PYTHON` (or the default oracle venv).
fn ansible_inventory() -> Option<PathBuf> {
    let skip = std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1");
    let python = std::env::var_os("PREFLINT_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            let venv = repo().join("target/oracle-venv/bin/python");
            venv.is_file().then_some(venv)
        });
    let found = python
        .as_ref()
        .and_then(|p| p.parent())
        .map(|bin| bin.join("ansible-inventory"))
        .filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            skip,
            "no ansible-inventory beside PREFLINT_PYTHON ({python:?}): run scripts/test.sh, \
             set PREFLINT_PYTHON to a Python with ansible-core, or PREFLINT_SKIP_ORACLE=1"
        );
    }
    found
}

/// Host -> (groups, variables), the shape both sides are reduced to.
type View = BTreeMap<String, (BTreeSet<String>, Value)>;

fn oracle(exe: &Path, inventory: &Path) -> View {
    let home = tempfile::tempdir().expect("tempdir");
    let cfg = home.path().join("ansible.cfg");
    std::fs::write(&cfg, "").expect("empty ansible.cfg");
    let mut cmd = Command::new(exe);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("ANSIBLE_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd
        .args(["--list", "-i"])
        .arg(inventory)
        .env("HOME", home.path())
        .env("ANSIBLE_HOME", home.path())
        .env("ANSIBLE_LOCAL_TEMP", home.path().join("tmp"))
        .env("ANSIBLE_CONFIG", &cfg)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_DEPRECATION_WARNINGS", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(home.path())
        .output()
        .expect("run ansible-inventory");
    assert!(
        out.status.success(),
        "ansible-inventory -i {} failed: {}",
        inventory.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("ansible-inventory JSON");
    let empty = serde_json::Map::new();
    let groups = json.as_object().unwrap_or(&empty);
    // Direct members and children of every group, then membership by closure.
    let mut parents: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut direct: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (g, body) in groups.iter().filter(|(g, _)| g.as_str() != "_meta") {
        for h in body["hosts"].as_array().into_iter().flatten() {
            let h = h.as_str().unwrap_or_default().to_string();
            direct.entry(h).or_default().insert(g.clone());
        }
        for c in body["children"].as_array().into_iter().flatten() {
            let c = c.as_str().unwrap_or_default().to_string();
            parents.entry(c).or_default().insert(g.clone());
        }
    }
    let hostvars = json["_meta"]["hostvars"].as_object().unwrap_or(&empty);
    let mut view = View::new();
    for (host, groups) in direct {
        let mut all: BTreeSet<String> = BTreeSet::from(["all".to_string()]);
        let mut todo: Vec<String> = groups.into_iter().collect();
        while let Some(g) = todo.pop() {
            if all.insert(g.clone()) || g == "all" {
                todo.extend(parents.get(&g).into_iter().flatten().cloned());
            }
        }
        let vars = hostvars
            .get(&host)
            .cloned()
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        view.insert(host, (all, vars));
    }
    view
}

fn preflint_view(inventory: &Path) -> (View, Vec<String>) {
    let root = inventory.parent().unwrap_or(Path::new("."));
    let loader = Loader::new(Arc::new(SourceMap::new(root)));
    let inv = Inventory::load(inventory, &loader);
    let mut hosts: BTreeSet<String> = inv.host_vars.keys().cloned().collect();
    for g in inv.groups.values() {
        hosts.extend(g.hosts.iter().cloned());
    }
    let mut view = View::new();
    for h in hosts {
        let vars: serde_json::Map<String, Value> = inv
            .host_variables(&h)
            .into_iter()
            .map(|(k, v)| (k, v.to_json()))
            .collect();
        view.insert(h.clone(), (inv.groups_of(&h), Value::Object(vars)));
    }
    let diags = inv
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    (view, diags)
}

fn differences(want: &View, got: &View) -> Vec<String> {
    let mut out = Vec::new();
    for (h, (wg, wv)) in want {
        let Some((gg, gv)) = got.get(h) else {
            out.push(format!("host {h}: missing in preflint"));
            continue;
        };
        if wg != gg {
            out.push(format!(
                "host {h}: groups differ\n  ansible:  {wg:?}\n  preflint: {gg:?}"
            ));
        }
        let (Some(wv), Some(gv)) = (wv.as_object(), gv.as_object()) else {
            continue;
        };
        for k in wv.keys().chain(gv.keys()).collect::<BTreeSet<_>>() {
            if wv.get(k) != gv.get(k) {
                out.push(format!(
                    "host {h}: `{k}` differs\n  ansible:  {}\n  preflint: {}",
                    wv.get(k).map_or("(unset)".into(), Value::to_string),
                    gv.get(k).map_or("(unset)".into(), Value::to_string)
                ));
            }
        }
    }
    for h in got.keys().filter(|h| !want.contains_key(*h)) {
        out.push(format!("host {h}: only in preflint"));
    }
    out
}

#[test]
fn inventories_match_ansible_inventory() {
    let Some(exe) = ansible_inventory() else {
        return;
    };
    let list = std::fs::read_to_string(cases_dir().join("cases.txt")).expect("cases.txt");
    let mut problems = Vec::new();
    let mut count = 0;
    for case in list.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let path = cases_dir().join(case);
        let want = oracle(&exe, &path);
        let (got, diags) = preflint_view(&path);
        assert!(!want.is_empty(), "{case}: ansible found no host");
        for d in diags {
            problems.push(format!("{case}: preflint diagnostic {d}"));
        }
        for d in differences(&want, &got) {
            problems.push(format!("{case}: {d}"));
        }
        count += 1;
    }
    assert!(count >= 4, "expected the inventory cases, found {count}");
    assert!(
        problems.is_empty(),
        "{} differences with ansible-inventory:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
