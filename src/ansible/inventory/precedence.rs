//! The order in which a host's variables apply: groups by depth,
//! `ansible_group_priority` and name, inventory-source variables before
//! `group_vars/` files, the host's own last.

use super::Inventory;
use crate::yaml::Node;
use std::collections::{BTreeMap, BTreeSet};
impl Inventory {
    /// Depth of every group: the longest chain of parents up to `all`.
    fn depths(&self) -> BTreeMap<&str, usize> {
        let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
        depth.insert("all", 0);
        // Longest path in a DAG by relaxation, bounded by the group count
        // (a cycle of children cannot loop forever).
        for _ in 0..=self.groups.len() {
            let mut changed = false;
            for (name, g) in &self.groups {
                let Some(&d) = depth.get(name.as_str()) else {
                    continue;
                };
                for c in &g.children {
                    let e = depth.entry(c.as_str()).or_insert(0);
                    if *e < d + 1 {
                        *e = d + 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        depth
    }

    /// `groups` in Ansible's order: `all` first, then by depth, priority, name.
    fn sorted_groups(&self, groups: BTreeSet<String>) -> Vec<String> {
        let depth = self.depths();
        let mut v: Vec<(usize, i64, String)> = groups
            .into_iter()
            .map(|g| {
                let p = self.groups.get(&g).map_or(1, |x| x.priority);
                (depth.get(g.as_str()).copied().unwrap_or(0), p, g)
            })
            .collect();
        v.sort();
        v.into_iter().map(|(_, _, g)| g).collect()
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

    /// The groups that hold `group` (itself included), with `all`.
    fn ancestors(&self, group: &str) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = BTreeSet::from(["all".to_string(), group.to_string()]);
        let mut todo = vec![group.to_string()];
        while let Some(g) = todo.pop() {
            for (n, p) in &self.groups {
                if p.children.contains(&g) && out.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        out
    }

    /// Variables of `groups` in precedence order: inventory-source vars of
    /// every group, then `group_vars/` files of every group.
    fn layered(&self, groups: BTreeSet<String>) -> Vec<(String, Node)> {
        let order = self.sorted_groups(groups);
        let mut out = Vec::new();
        for g in &order {
            if let Some(grp) = self.groups.get(g) {
                out.extend(grp.vars.iter().cloned());
            }
        }
        for g in &order {
            if let Some(grp) = self.groups.get(g) {
                out.extend(grp.file_vars.iter().cloned());
            }
        }
        out
    }

    /// A host's variables after inventory precedence, as `name -> node`.
    #[must_use]
    pub fn host_variables(&self, host: &str) -> BTreeMap<String, Node> {
        let mut out = BTreeMap::new();
        let own = self.host_vars.get(host).into_iter().flatten();
        let files = self.host_file_vars.get(host).into_iter().flatten();
        for (k, v) in self
            .layered(self.groups_of(host))
            .into_iter()
            .chain(own.cloned())
            .chain(files.cloned())
        {
            out.insert(k, v);
        }
        out
    }

    /// Variables for a group as seen by a typical member: those of `all`
    /// and the group's ancestors, then the group itself, in precedence order.
    #[must_use]
    pub fn group_variables(&self, group: &str) -> Vec<(String, Node)> {
        self.layered(self.ancestors(group))
    }
}
