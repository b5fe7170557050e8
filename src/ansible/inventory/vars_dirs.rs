//! `group_vars/` and `host_vars/` beside an inventory, looked up as
//! Ansible's `host_group_vars` plugin does (a file or a directory of files
//! per name).

use super::Inventory;
use crate::diagnostic::{Diagnostic, code};
use crate::load::Loader;
use std::path::{Path, PathBuf};
impl Inventory {
    /// `group_vars/NAME` and `host_vars/NAME` beside the inventory: the first
    /// of `NAME` (file or directory), `NAME.yml`, `NAME.yaml`, `NAME.json`,
    /// as Ansible's `host_group_vars` plugin looks them up.
    pub(super) fn load_vars_dirs(&mut self, base: &Path, loader: &Loader) {
        let groups: Vec<String> = self.groups.keys().cloned().collect();
        let hosts: Vec<String> = self.host_vars.keys().cloned().collect();
        for (dir, names, is_group) in [("group_vars", groups, true), ("host_vars", hosts, false)] {
            let d = base.join(dir);
            if !d.is_dir() {
                continue;
            }
            for name in names {
                let mut files = Vec::new();
                for ext in ["", ".yml", ".yaml", ".json"] {
                    let p = d.join(format!("{name}{ext}"));
                    if p.is_dir() {
                        vars_dir_files(&p, 0, &mut files);
                        break;
                    }
                    if p.is_file() {
                        files.push(p);
                        break;
                    }
                }
                for f in files {
                    let l = loader.yaml(&f);
                    self.diagnostics.extend(l.diagnostics.iter().cloned());
                    self.diagnostics.extend(l.yaml.diagnostics.iter().cloned());
                    let Some(doc) = l.doc() else { continue };
                    let Some(pairs) = doc.as_map() else {
                        if !doc.is_null() {
                            self.diagnostics.push(Diagnostic::error(
                                code::SHAPE,
                                doc.span,
                                "a vars file must be a mapping",
                            )
                            .with_help("write the variables as `name: value` pairs at the top level of the file"));
                        }
                        continue;
                    };
                    let pairs = pairs
                        .iter()
                        .map(|(k, v)| (k.scalar_text().unwrap_or_default(), v.clone()));
                    if is_group {
                        self.group(&name).file_vars.extend(pairs);
                    } else {
                        self.host_file_vars
                            .entry(name.clone())
                            .or_default()
                            .extend(pairs);
                    }
                }
            }
        }
    }
}

/// Files of a `group_vars/NAME/` directory, recursively, sorted by name at
/// each level, skipping hidden names, backups (`~`) and other extensions.
fn vars_dir_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 32 {
        return;
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    for p in names {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let ext = p.extension().map(|e| e.to_string_lossy().into_owned());
        if p.is_dir() {
            if ext.is_none() {
                vars_dir_files(&p, depth + 1, out);
            }
        } else if p.is_file()
            && ext
                .as_deref()
                .is_none_or(|e| matches!(e, "yml" | "yaml" | "json"))
        {
            out.push(p);
        }
    }
}
