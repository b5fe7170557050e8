//! YAML inventories: each group's `hosts`, `vars` and `children`, in file
//! order, as Ansible's `yaml` inventory plugin reads them.

use super::Inventory;
use crate::diagnostic::{Diagnostic, code};
use crate::yaml::{Node, Value};
impl Inventory {
    /// A group of a YAML inventory: its keys in file order, as Ansible reads them.
    pub(super) fn yaml_group(&mut self, name: &str, body: &Node, depth: usize) {
        if depth > crate::yaml::MAX_DEPTH {
            return;
        }
        if !matches!(body.value, Value::Map(_) | Value::Null) {
            self.diagnostics.push(
                Diagnostic::warning(
                    code::SHAPE,
                    body.span,
                    format!("group `{name}` is not a mapping; skipped, as Ansible does"),
                )
                .with_help("write the group as a mapping with `hosts:`, `children:` or `vars:`"),
            );
            return;
        }
        self.group(name);
        for (k, section) in body.as_map().unwrap_or_default() {
            // A string stands for a mapping with one empty key.
            let one;
            let entries: &[(Node, Node)] = match &section.value {
                Value::Map(m) => m,
                Value::Str(_) => {
                    one = [(section.clone(), Node::null(section.span))];
                    &one
                }
                _ => continue,
            };
            match k.as_str() {
                Some("vars") => {
                    for (vk, vv) in entries {
                        self.set_group_var(name, vk.scalar_text().unwrap_or_default(), vv.clone());
                    }
                }
                Some("children") => {
                    for (c, cv) in entries {
                        let Some(c) = c.scalar_text() else { continue };
                        self.yaml_group(&c, cv, depth + 1);
                        if self.groups.contains_key(&c) {
                            self.group(name).children.insert(c);
                        }
                    }
                }
                Some("hosts") => {
                    for (hk, hv) in entries {
                        let Some(h) = hk.scalar_text() else { continue };
                        let (hosts, port) = self.hosts_of(&h, hk.span);
                        for host in hosts {
                            self.add_host(name, &host, port, hk.span);
                            if let Some(pairs) = hv.as_map() {
                                let entry = self.host_vars.entry(host).or_default();
                                for (vk, vv) in pairs {
                                    entry.push((vk.scalar_text().unwrap_or_default(), vv.clone()));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}
