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
