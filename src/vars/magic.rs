//! The magic variables Ansible defines for a task that depend on the task
//! itself or on the run's options: `role_name`, `role_path`,
//! `ansible_role_name`, `ansible_parent_role_names`, `ansible_check_mode`,
//! `ansible_diff_mode`, `ansible_version` (`VariableManager.
//! _get_magic_variables` and the options variables of ansible-core 2.19).
//!
//! Those of a play (`playbook_dir`) and of the inventory (`groups`,
//! `ansible_play_hosts`...) are a layer of their own
//! (`LayerKind::Magic`); the names known only on a host stay run-time names
//! (see `task::is_runtime_name`).

use super::{LookupOwned, TaskVars};
use crate::jinja::UnknownWhy;
use serde_json::{Value, json};

/// The ansible-core release whose semantics preflint follows: what
/// `ansible_version` gives.
pub const ANSIBLE_CORE_VERSION: (u32, u32, u32) = (2, 19, 14);

impl TaskVars<'_> {
    /// The value of magic variable `name` for this task, `None` when it is
    /// not one of the names this file defines.
    pub(super) fn magic(&self, name: &str) -> Option<LookupOwned> {
        let role = || {
            let inst = self.inst?;
            let path = inst.role_path.as_deref()?;
            let written = inst.roles.last()?;
            // A role named by its path is named after its directory.
            let name = if written.contains('/') {
                path.file_name()
                    .map_or_else(|| written.clone(), |n| n.to_string_lossy().into_owned())
            } else {
                written.clone()
            };
            Some((name, path))
        };
        let v = match name {
            "ansible_check_mode" | "ansible_diff_mode" => Value::Bool(false),
            "ansible_version" => {
                let (major, minor, revision) = ANSIBLE_CORE_VERSION;
                let full = format!("{major}.{minor}.{revision}");
                json!({"string": full, "full": full, "major": major, "minor": minor, "revision": revision})
            }
            // Outside a role (or where the task is not known, as for an
            // include target) the ordinary definitions answer.
            "role_name" | "ansible_role_name" => Value::String(role()?.0),
            "role_path" => Value::String(role()?.1.to_string_lossy().into_owned()),
            // Set by `include_role`/`import_role` inside a role only: the
            // role chain does not tell those from meta dependencies.
            "ansible_parent_role_names" | "ansible_parent_role_paths" => {
                return Some(match self.inst?.roles.len() {
                    0 | 1 => LookupOwned::Missing,
                    _ => LookupOwned::Unknown(UnknownWhy::Fact),
                });
            }
            _ => return None,
        };
        Some(LookupOwned::Value(v))
    }
}

/// The magic variables the inventory gives a play (`groups`,
/// `ansible_play_hosts`...; `inventory_hostname` and `group_names` when
/// the play runs on one host only), as a layer above every other
/// definition. Hosts are listed sorted where Ansible keeps the order the
/// inventory defines them in; names only known per host of several, and
/// `inventory_dir`/`inventory_file`/`hostvars`, stay run-time names.
pub(super) fn inventory_layer(
    inv: &crate::ansible::inventory::Inventory,
    hosts_pattern: &str,
    span: crate::source::Span,
) -> crate::ansible::project::VarLayer {
    use crate::yaml::{Node, Tag, Value as Y};
    use std::collections::BTreeSet;
    let node = |value: Y| Node {
        value,
        span,
        tag: Tag::Unsafe,
        quoted: false,
    };
    let text = |s: &str| node(Y::Str(s.to_string()));
    let list = |items: &BTreeSet<String>| node(Y::Seq(items.iter().map(|h| text(h)).collect()));
    let all: BTreeSet<String> = inv.host_vars.keys().cloned().collect();
    let groups: Vec<(Node, Node)> = inv
        .groups
        .keys()
        .map(|g| {
            let hosts = if g == "all" {
                all.clone()
            } else {
                hosts_of(inv, g)
            };
            (text(g), list(&hosts))
        })
        .collect();
    let mut pairs = vec![(text("groups"), node(Y::Map(groups)))];
    if let Some(hosts) = play_hosts(inv, hosts_pattern, &all) {
        for name in [
            "ansible_play_hosts",
            "ansible_play_hosts_all",
            "ansible_play_batch",
        ] {
            pairs.push((text(name), list(&hosts)));
        }
        if let [host] = hosts.iter().collect::<Vec<_>>()[..] {
            pairs.push((text("inventory_hostname"), text(host)));
            let short = host.split('.').next().unwrap_or(host);
            pairs.push((text("inventory_hostname_short"), text(short)));
            let names: BTreeSet<String> = inv
                .groups_of(host)
                .into_iter()
                .filter(|g| g != "all")
                .collect();
            pairs.push((text("group_names"), list(&names)));
        }
    }
    crate::ansible::project::VarLayer {
        kind: crate::ansible::project::LayerKind::Magic,
        node: node(Y::Map(pairs)),
    }
}

/// The hosts of a group and of its children.
fn hosts_of(
    inv: &crate::ansible::inventory::Inventory,
    group: &str,
) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![group.to_string()];
    while let Some(g) = todo.pop() {
        if !seen.insert(g.clone()) {
            continue;
        }
        if let Some(grp) = inv.groups.get(&g) {
            out.extend(grp.hosts.iter().cloned());
            todo.extend(grp.children.iter().cloned());
        }
    }
    out
}

/// The hosts a plain pattern (group and host names joined by `:` or `,`)
/// selects; `None` for patterns with exclusions, intersections, ranges,
/// wildcards, regexes or templates, which are not modelled here.
fn play_hosts(
    inv: &crate::ansible::inventory::Inventory,
    pattern: &str,
    all: &std::collections::BTreeSet<String>,
) -> Option<std::collections::BTreeSet<String>> {
    if pattern.contains(['!', '&', '[', '*', '?', '~', '{']) {
        return None;
    }
    let mut out = std::collections::BTreeSet::new();
    for part in pattern
        .split([':', ','])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        if part == "all" {
            out.extend(all.iter().cloned());
        } else if inv.groups.contains_key(part) {
            out.extend(hosts_of(inv, part));
        } else if all.contains(part) {
            out.insert(part.to_string());
        } else {
            return None;
        }
    }
    Some(out)
}
