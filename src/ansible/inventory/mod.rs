//! Inventories: hosts, groups, children and their variables, from INI or YAML
//! files (or a directory of them) plus `group_vars/` and `host_vars/` beside
//! them, as `ansible-inventory` would read them (checked against it by
//! `tests/inventory_oracle.rs`).
//!
//! Host variables follow Ansible's default `VARIABLE_PRECEDENCE`: the
//! inventory source's vars of `all`, then of the host's other groups (by
//! depth, `ansible_group_priority`, name), then the `group_vars/` files of
//! `all` and of those groups in the same order, then the host's own
//! inventory vars, then its `host_vars/` files. INI values are Python
//! literals (`ast.literal_eval`), not YAML. Host ranges (`node[01:10]`,
//! `db-[a:f]`) expand as Ansible expands them, up to [`MAX_RANGE_HOSTS`].
//! Never runs inventory scripts or plugins.
//!
//! This file holds the inventory and its loading; the sources read in
//! `ini` (with `py_literal` for its values) and `yaml`, host patterns and
//! ranges in `hosts`, `group_vars/`/`host_vars/` in `vars_dirs`, and the
//! order in which a host's variables apply in `precedence`.

mod hosts;
mod ini;
mod precedence;
mod py_literal;
mod vars_dirs;
mod yaml;

pub use hosts::{MAX_RANGE_BYTES, MAX_RANGE_HOSTS};

use crate::diagnostic::Diagnostic;
use crate::load::Loader;
use crate::source::Span;
use crate::yaml::{Node, Tag, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone)]
pub struct Group {
    pub hosts: BTreeSet<String>,
    pub children: BTreeSet<String>,
    /// Variables from the inventory source, in definition order (later ones win).
    pub vars: Vec<(String, Node)>,
    /// Variables from `group_vars/` files, in load order (later ones win).
    pub file_vars: Vec<(String, Node)>,
    /// `ansible_group_priority` set in the inventory source (default 1).
    pub priority: i64,
}

#[derive(Debug, Default)]
pub struct Inventory {
    pub groups: BTreeMap<String, Group>,
    /// Every host, with its variables from the inventory source.
    pub host_vars: BTreeMap<String, Vec<(String, Node)>>,
    /// Variables from `host_vars/` files.
    pub host_file_vars: BTreeMap<String, Vec<(String, Node)>>,
    pub diagnostics: Vec<Diagnostic>,
}

fn node(value: Value, span: Span) -> Node {
    Node {
        value,
        span,
        tag: Tag::None,
        quoted: false,
    }
}

impl Inventory {
    fn group(&mut self, name: &str) -> &mut Group {
        self.groups
            .entry(name.to_string())
            .or_insert_with(|| Group {
                priority: 1,
                ..Group::default()
            })
    }

    /// Sets a group variable from the inventory source; Ansible keeps
    /// `ansible_group_priority` as the group's priority, not as a variable.
    fn set_group_var(&mut self, group: &str, key: String, value: Node) {
        let g = self.group(group);
        if key == "ansible_group_priority" {
            if let Some(p) = match &value.value {
                Value::Int(i) => Some(*i),
                Value::Str(s) => s.trim().parse().ok(),
                _ => None,
            } {
                g.priority = p;
            }
            return;
        }
        g.vars.push((key, value));
    }

    /// Loads an inventory file or directory (each file in it, sorted).
    pub fn load(path: &Path, loader: &Loader) -> Self {
        let mut inv = Inventory::default();
        inv.group("all");
        inv.group("ungrouped");
        let mut files: Vec<PathBuf> = Vec::new();
        if path.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(path)
                .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default();
            v.retain(|p| p.is_file() && !ignored_inventory_name(p));
            v.sort();
            files = v;
        } else {
            files.push(path.to_path_buf());
        }
        for f in &files {
            inv.load_file(f, loader);
        }
        let base = if path.is_dir() {
            path.to_path_buf()
        } else {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        };
        inv.finish();
        inv.load_vars_dirs(&base, loader);
        inv
    }

    fn load_file(&mut self, path: &Path, loader: &Loader) {
        let is_yaml = path
            .extension()
            .is_some_and(|e| e == "yml" || e == "yaml" || e == "json");
        if is_yaml {
            let l = loader.yaml(path);
            self.diagnostics.extend(l.diagnostics.iter().cloned());
            self.diagnostics.extend(l.yaml.diagnostics.iter().cloned());
            if let Some(doc) = l.doc()
                && let Some(pairs) = doc.as_map()
            {
                for (k, v) in pairs {
                    if let Some(name) = k.scalar_text() {
                        self.yaml_group(&name, v, 0);
                    }
                }
            }
        } else {
            let l = loader.text(path);
            self.diagnostics.extend(l.diagnostics.iter().cloned());
            if let Some(text) = &l.text {
                self.ini(text, l.id);
            }
        }
    }

    /// Groups with no parent become children of `all`; hosts in no group
    /// but `all` go to `ungrouped`, and leave it when they are in another.
    fn finish(&mut self) {
        let grouped: BTreeSet<String> = self
            .groups
            .iter()
            .filter(|(n, _)| n.as_str() != "all" && n.as_str() != "ungrouped")
            .flat_map(|(_, g)| g.hosts.iter().cloned())
            .collect();
        let hosts: Vec<String> = self.host_vars.keys().cloned().collect();
        for h in hosts {
            if grouped.contains(&h) {
                self.group("ungrouped").hosts.remove(&h);
            } else {
                self.group("ungrouped").hosts.insert(h);
            }
        }
        let mut top: BTreeSet<String> = self
            .groups
            .keys()
            .filter(|n| n.as_str() != "all")
            .cloned()
            .collect();
        for g in self.groups.values() {
            for c in &g.children {
                top.remove(c);
            }
        }
        self.group("all").children.extend(top);
    }
}

fn ignored_inventory_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.starts_with('.')
        || [
            ".orig", ".bak", ".cfg", ".retry", ".pyc", ".pyo", ".md", ".txt", "~",
        ]
        .iter()
        .any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::hosts::{expand_range, split_port};
    use super::ini::{ini_value, shlex_split};
    use super::*;
    use crate::source::FileId;

    fn expand(host: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        expand_range(host, &mut out, &mut budget).expect("valid range");
        out
    }

    #[test]
    fn ranges() {
        assert_eq!(expand("node[1:3]"), vec!["node1", "node2", "node3"]);
        assert_eq!(expand("n[01:02].x"), vec!["n01.x", "n02.x"]);
        assert_eq!(expand("db-[a:c]"), vec!["db-a", "db-b", "db-c"]);
        assert_eq!(expand("n[0:10:5]"), vec!["n0", "n5", "n10"]);
        assert_eq!(
            expand("w[1:2].z-[a:b]"),
            vec!["w1.z-a", "w1.z-b", "w2.z-a", "w2.z-b"]
        );
        assert_eq!(expand("n[:1]"), vec!["n0", "n1"]);
        assert_eq!(expand("x[y:B]"), vec!["xy", "xz", "xA", "xB"]);
        assert_eq!(expand("n[5:1:-1]"), vec!["n5", "n4", "n3"]);
    }

    #[test]
    fn hostile_ranges_are_bounded() {
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        // Ten thousand squared, and a range at the edge of i64.
        assert!(expand_range("h[0:9999][0:9999]", &mut out, &mut budget).is_err());
        assert_eq!(out.len(), MAX_RANGE_HOSTS);
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        let edge = format!("h[{}:{}]", i64::MAX - 1, i64::MAX);
        expand_range(&edge, &mut out, &mut budget).expect("valid");
        assert_eq!(out.len(), 2);
        // A long zero-padded bound: bytes are bounded too.
        let wide = format!("h[{}:{}]", "0".repeat(4096), "9".repeat(4096));
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        assert!(expand_range(&wide, &mut out, &mut budget).is_err());
        assert!(out.len() <= MAX_RANGE_BYTES / 4096);
    }

    #[test]
    fn python_literals() {
        let v = |s: &str| ini_value(s, Span::file_start(FileId(0))).to_json();
        assert_eq!(v("yes"), serde_json::json!("yes"));
        assert_eq!(v("True"), serde_json::json!(true));
        assert_eq!(v("0644"), serde_json::json!("0644"));
        assert_eq!(v("0x1F"), serde_json::json!(31));
        assert_eq!(v("1_000"), serde_json::json!(1000));
        assert_eq!(v("-2"), serde_json::json!(-2));
        assert_eq!(v("1.5"), serde_json::json!(1.5));
        assert_eq!(v("None"), serde_json::Value::Null);
        assert_eq!(
            v(r#"{"a": [1, 'b'], 2: (3,)}"#),
            serde_json::json!({"a": [1, "b"], "2": [3]})
        );
        assert_eq!(v("'a' \"b\""), serde_json::json!("ab"));
        assert_eq!(v("1 # comment"), serde_json::json!(1));
        assert_eq!(v("a=b"), serde_json::json!("a=b"));
        assert_eq!(v(""), serde_json::json!(""));
        assert_eq!(
            v(&"[".repeat(10_000)),
            serde_json::json!("[".repeat(10_000))
        );
    }

    #[test]
    fn shell_split_host_lines() {
        assert_eq!(
            shlex_split(r#"h1 a="x y" b='1' c=d#e # comment"#).unwrap(),
            vec!["h1", "a=x y", "b=1", "c=d"]
        );
        assert!(shlex_split("h1 a=\"x").is_none());
    }

    #[test]
    fn ports() {
        assert_eq!(split_port("cp:2200"), ("cp".into(), Some(2200)));
        assert_eq!(split_port("[10.0.0.1]:22"), ("10.0.0.1".into(), Some(22)));
        assert_eq!(split_port("w[1:3].x:22"), ("w[1:3].x".into(), Some(22)));
        assert_eq!(split_port("fe80::1"), ("fe80::1".into(), None));
        assert_eq!(split_port("node[1:3]"), ("node[1:3]".into(), None));
    }
}
