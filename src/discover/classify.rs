//! A file's kind by where it lives in the tree (a role's `tasks/`, a
//! `group_vars/` file, a template...), as Ansible would look for it there.
//! Reads nothing.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// A YAML file whose role is decided by its content (playbook or not).
    Yaml,
    Tasks,
    Handlers,
    RoleDefaults,
    RoleVars,
    RoleMeta,
    GroupVars,
    HostVars,
    Inventory,
    Template,
    AnsibleCfg,
    Other,
}

impl FileKind {
    #[must_use]
    pub fn is_yaml(self) -> bool {
        matches!(
            self,
            FileKind::Yaml
                | FileKind::Tasks
                | FileKind::Handlers
                | FileKind::RoleDefaults
                | FileKind::RoleVars
                | FileKind::RoleMeta
                | FileKind::GroupVars
                | FileKind::HostVars
        )
    }
}

/// Classifies a file by its path relative to the root.
#[must_use]
pub fn classify(rel: &str) -> FileKind {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let is_yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    if name == "ansible.cfg" {
        return FileKind::AnsibleCfg;
    }
    if name.ends_with(".j2") || parts.iter().rev().skip(1).any(|p| *p == "templates") {
        return FileKind::Template;
    }
    let dirs = &parts[..parts.len().saturating_sub(1)];
    if dirs.contains(&"group_vars") {
        return FileKind::GroupVars;
    }
    if dirs.contains(&"host_vars") {
        return FileKind::HostVars;
    }
    // The innermost role sub-directory decides (`roles/x/tasks/sub/a.yml` is tasks).
    for d in dirs.iter().rev() {
        let kind = match *d {
            "tasks" => FileKind::Tasks,
            "handlers" => FileKind::Handlers,
            "defaults" => FileKind::RoleDefaults,
            "vars" => FileKind::RoleVars,
            "meta" => FileKind::RoleMeta,
            "files" | "library" | "module_utils" | "filter_plugins" | "lookup_plugins" => {
                FileKind::Other
            }
            _ => continue,
        };
        if kind == FileKind::Other || is_yaml || name == "main" {
            return kind;
        }
        return FileKind::Other;
    }
    let in_inventory = dirs
        .iter()
        .any(|d| d.starts_with("inventory") || *d == "inventories");
    if in_inventory
        && (name.ends_with(".ini")
            || name == "hosts"
            || name.starts_with("hosts.")
            || name == "inventory")
    {
        return FileKind::Inventory;
    }
    if is_yaml {
        if in_inventory && (name.starts_with("hosts") || name.starts_with("inventory")) {
            return FileKind::Inventory;
        }
        return FileKind::Yaml;
    }
    FileKind::Other
}
