//! Inventories: hosts, groups, children and their variables, from INI or YAML
//! files (or a directory of them) plus `group_vars/` and `host_vars/` beside
//! them, as `ansible-inventory` would read them.
//!
//! Host variables are computed with Ansible's inventory precedence: group
//! `all`, then parent groups before children (by depth, then name), then the
//! host itself. Never runs inventory scripts or plugins.

use crate::diagnostic::{Diagnostic, code};
use crate::load::Loader;
use crate::source::Span;
use crate::yaml::{Node, Tag, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone)]
pub struct Group {
    pub hosts: BTreeSet<String>,
    pub children: BTreeSet<String>,
    /// Variables in definition order (later ones win).
    pub vars: Vec<(String, Node)>,
}

#[derive(Debug, Default)]
pub struct Inventory {
    pub groups: BTreeMap<String, Group>,
    pub host_vars: BTreeMap<String, Vec<(String, Node)>>,
    pub diagnostics: Vec<Diagnostic>,
}

fn scalar(text: &str, span: Span) -> Node {
    // INI values are parsed as Python literals by Ansible; YAML 1.1 scalars
    // are the closest equivalent for the values found in inventories.
    let mut n = Node {
        value: crate::yaml::resolve_plain(text),
        span,
        tag: Tag::None,
        quoted: false,
    };
    if let Value::Str(_) = n.value {
        let t = text.trim();
        let unq = if t.len() >= 2
            && (t.starts_with('"') && t.ends_with('"') || t.starts_with('\'') && t.ends_with('\''))
        {
            &t[1..t.len() - 1]
        } else {
            t
        };
        n.value = Value::Str(unq.to_string());
        n.quoted = true;
    }
    n
}

/// Expands `node[01:03]` and `node[a:c]` host ranges.
fn expand_range(host: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (host.find('['), host.find(']')) else {
        return vec![host.to_string()];
    };
    if close < open {
        return vec![host.to_string()];
    }
    let (pre, inner, post) = (&host[..open], &host[open + 1..close], &host[close + 1..]);
    let mut parts = inner.split(':');
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
        return vec![host.to_string()];
    };
    let step: usize = parts
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    let mut out = Vec::new();
    if let (Ok(x), Ok(y)) = (a.parse::<u64>(), b.parse::<u64>()) {
        let width = if a.starts_with('0') { a.len() } else { 0 };
        let mut i = x;
        while i <= y && out.len() < 10_000 {
            for rest in expand_range(post) {
                out.push(format!("{pre}{i:0width$}{rest}"));
            }
            i += step as u64;
        }
    } else if a.len() == 1 && b.len() == 1 {
        let (x, y) = (a.as_bytes()[0], b.as_bytes()[0]);
        let mut c = x;
        while c <= y {
            for rest in expand_range(post) {
                out.push(format!("{pre}{}{rest}", c as char));
            }
            c = c.saturating_add(u8::try_from(step).unwrap_or(1));
            if c == u8::MAX {
                break;
            }
        }
    }
    if out.is_empty() {
        vec![host.to_string()]
    } else {
        out
    }
}

impl Inventory {
    fn group(&mut self, name: &str) -> &mut Group {
        self.groups.entry(name.to_string()).or_default()
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
        inv.load_vars_dirs(&base, loader);
        inv.finish();
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
                    if let Some(name) = k.as_str() {
                        self.yaml_group(name, v);
                    }
                }
            }
        } else {
            let Ok(text) = std::fs::read_to_string(path) else {
                return;
            };
            let id = loader.sources.add(path, text.as_str().into());
            self.ini(&text, id);
        }
    }

    fn yaml_group(&mut self, name: &str, node: &Node) {
        self.group(name);
        if name != "all" {
            self.group("all").children.insert(name.to_string());
        }
        let Some(_) = node.as_map() else { return };
        if let Some(hosts) = node.get("hosts").and_then(Node::as_map) {
            for (h, hv) in hosts {
                let Some(h) = h.scalar_text() else { continue };
                for host in expand_range(&h) {
                    self.group(name).hosts.insert(host.clone());
                    let entry = self.host_vars.entry(host).or_default();
                    if let Some(pairs) = hv.as_map() {
                        for (k, v) in pairs {
                            entry.push((k.scalar_text().unwrap_or_default(), v.clone()));
                        }
                    }
                }
            }
        }
        if let Some(vars) = node.get("vars").and_then(Node::as_map) {
            for (k, v) in vars {
                self.group(name)
                    .vars
                    .push((k.scalar_text().unwrap_or_default(), v.clone()));
            }
        }
        if let Some(children) = node.get("children").and_then(Node::as_map) {
            for (c, cv) in children {
                let Some(c) = c.scalar_text() else { continue };
                self.group(name).children.insert(c.clone());
                self.yaml_group(&c, cv);
                if name != "all" {
                    // yaml_group adds every group under all; keep the real parent.
                }
            }
        }
    }

    fn ini(&mut self, text: &str, file: crate::source::FileId) {
        let mut section = ("ungrouped".to_string(), "hosts");
        let mut offset = 0usize;
        for (i, raw_line) in text.split('\n').enumerate() {
            let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let span = Span {
                file,
                start: u32::try_from(offset).unwrap_or(u32::MAX),
                end: u32::try_from(offset + raw_line.len()).unwrap_or(u32::MAX),
                line: line_no,
                col: 1,
            };
            offset += raw_line.len() + 1;
            let line = raw_line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if line.starts_with('[') {
                let Some(end) = line.find(']') else {
                    self.diagnostics.push(Diagnostic::error(
                        code::SHAPE,
                        span,
                        "unclosed section header in inventory",
                    ));
                    continue;
                };
                let inner = &line[1..end];
                let (name, kind) = match inner.split_once(':') {
                    Some((n, "vars")) => (n, "vars"),
                    Some((n, "children")) => (n, "children"),
                    Some((n, other)) => {
                        self.diagnostics.push(Diagnostic::warning(
                            code::SHAPE,
                            span,
                            format!(
                                "unknown section type `{other}` in inventory; treated as hosts"
                            ),
                        ));
                        (n, "hosts")
                    }
                    None => (inner, "hosts"),
                };
                self.group(name);
                if name != "all" {
                    self.group("all").children.insert(name.to_string());
                }
                section = (name.to_string(), kind);
                continue;
            }
            let words = crate::ansible::modules::parse_kv_words(line);
            match section.1 {
                "hosts" => {
                    let Some(host) = words.first() else { continue };
                    for h in expand_range(host) {
                        self.group(&section.0).hosts.insert(h.clone());
                        let entry = self.host_vars.entry(h).or_default();
                        for w in &words[1..] {
                            if let Some((k, v)) = w.split_once('=') {
                                entry.push((k.to_string(), scalar(v, span)));
                            }
                        }
                    }
                }
                "children" => {
                    let child = words.first().cloned().unwrap_or_default();
                    self.group(&child);
                    self.group(&section.0).children.insert(child);
                }
                _ => {
                    if let Some((k, v)) = line.split_once('=') {
                        let v = v.trim();
                        self.group(&section.0)
                            .vars
                            .push((k.trim().to_string(), scalar(v, span)));
                    }
                }
            }
        }
    }

    fn load_vars_dirs(&mut self, base: &Path, loader: &Loader) {
        for (dir, is_group) in [("group_vars", true), ("host_vars", false)] {
            let d = base.join(dir);
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
            entries.sort();
            for e in entries {
                let name = e
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let files: Vec<PathBuf> = if e.is_dir() {
                    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(&e)
                        .sort_by_file_name()
                        .into_iter()
                        .filter_map(Result::ok)
                        .filter(|x| x.file_type().is_file())
                        .map(|x| x.path().to_path_buf())
                        .filter(|p| {
                            p.extension()
                                .is_some_and(|x| x == "yml" || x == "yaml" || x == "json")
                        })
                        .collect();
                    v.sort();
                    v
                } else if e
                    .extension()
                    .is_none_or(|x| x == "yml" || x == "yaml" || x == "json")
                {
                    vec![e.clone()]
                } else {
                    continue;
                };
                for f in files {
                    let l = loader.yaml(&f);
                    let Some(pairs) = l.doc().and_then(Node::as_map) else {
                        continue;
                    };
                    let pairs: Vec<(String, Node)> = pairs
                        .iter()
                        .map(|(k, v)| (k.scalar_text().unwrap_or_default(), v.clone()))
                        .collect();
                    if is_group {
                        if self.groups.contains_key(&name) {
                            self.group(&name).vars.extend(pairs);
                        }
                    } else if self.host_vars.contains_key(&name) {
                        self.host_vars
                            .entry(name.clone())
                            .or_default()
                            .extend(pairs);
                    }
                }
            }
        }
    }

    /// Hosts in no group but `all` go to `ungrouped`.
    fn finish(&mut self) {
        let grouped: BTreeSet<String> = self
            .groups
            .iter()
            .filter(|(n, _)| n.as_str() != "all" && n.as_str() != "ungrouped")
            .flat_map(|(_, g)| g.hosts.iter().cloned())
            .collect();
        let all_hosts: Vec<String> = self.host_vars.keys().cloned().collect();
        for h in all_hosts {
            if !grouped.contains(&h) {
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
        // Only top-level groups are direct children of all.
        self.group("all").children = top;
    }

    /// Depth of a group below `all` (for precedence ordering).
    fn depth(&self, group: &str, seen: &mut BTreeSet<String>) -> usize {
        if group == "all" || !seen.insert(group.to_string()) {
            return 0;
        }
        let parents: Vec<&String> = self
            .groups
            .iter()
            .filter(|(_, g)| g.children.contains(group))
            .map(|(n, _)| n)
            .collect();
        1 + parents
            .iter()
            .map(|p| self.depth(p, seen))
            .max()
            .unwrap_or(0)
    }

    /// Every group a host belongs to, directly or through children.
    #[must_use]
    pub fn groups_of(&self, host: &str) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = BTreeSet::new();
        out.insert("all".into());
        let mut frontier: Vec<String> = self
            .groups
            .iter()
            .filter(|(_, g)| g.hosts.contains(host))
            .map(|(n, _)| n.clone())
            .collect();
        while let Some(g) = frontier.pop() {
            if out.insert(g.clone()) || g == "all" {
                for (n, p) in &self.groups {
                    if p.children.contains(&g) && !out.contains(n) {
                        frontier.push(n.clone());
                    }
                }
            }
        }
        out
    }

    /// A host's variables after inventory precedence, as `name -> node`.
    #[must_use]
    pub fn host_variables(&self, host: &str) -> BTreeMap<String, Node> {
        let mut groups: Vec<(usize, String)> = self
            .groups_of(host)
            .into_iter()
            .map(|g| (self.depth(&g, &mut BTreeSet::new()), g))
            .collect();
        groups.sort();
        let mut out = BTreeMap::new();
        for (_, g) in groups {
            if let Some(grp) = self.groups.get(&g) {
                for (k, v) in &grp.vars {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        if let Some(hv) = self.host_vars.get(host) {
            for (k, v) in hv {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }

    /// Variables for a group as seen by a typical member: `all` and the
    /// group's ancestors, then the group itself.
    #[must_use]
    pub fn group_variables(&self, group: &str) -> Vec<(String, Node)> {
        let mut chain = vec![group.to_string()];
        let mut i = 0;
        while i < chain.len() && chain.len() < 256 {
            let g = chain[i].clone();
            for (n, p) in &self.groups {
                if p.children.contains(&g) && !chain.contains(n) {
                    chain.push(n.clone());
                }
            }
            i += 1;
        }
        if !chain.iter().any(|g| g == "all") {
            chain.push("all".into());
        }
        let mut ordered: Vec<(usize, String)> = chain
            .into_iter()
            .map(|g| (self.depth(&g, &mut BTreeSet::new()), g))
            .collect();
        ordered.sort();
        let mut out = Vec::new();
        for (_, g) in ordered {
            if let Some(grp) = self.groups.get(&g) {
                out.extend(grp.vars.iter().cloned());
            }
        }
        out
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
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(expand_range("node[1:3]"), vec!["node1", "node2", "node3"]);
        assert_eq!(expand_range("n[01:02].x"), vec!["n01.x", "n02.x"]);
        assert_eq!(expand_range("db-[a:c]"), vec!["db-a", "db-b", "db-c"]);
    }
}
