//! The file modules: what `copy`, `template`, `get_url`, `lineinfile`,
//! `blockinfile`, `replace`, `ini_file` and `file` write, edit, remove or
//! link; and what a file written means to the node (sysctl keys in a
//! sysctl file, kernel modules in a `modules-load.d` file).

use super::{Content, Edit, Effect, EffectKind, Known, TaskView, Timing};
use std::sync::Arc;

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let short = crate::ansible::task::short_module(view.module());
    let arg = |k: &str| view.arg(k).map(str::to_string);
    let path = || arg("path").or_else(|| arg("dest")).or_else(|| arg("name"));
    match short {
        "copy" | "template" | "get_url" => {
            let Some(dest) = arg("dest") else { return };
            let content = match short {
                "copy" => match (view.arg("content"), view.arg("src")) {
                    (Some(c), _) => Content::new(Arc::from(c), Known::Known, false),
                    (None, Some(src)) => role_file(view, "files", src, false),
                    (None, None) => Content::new(Arc::from(""), Known::Unknown, false),
                },
                "template" => view.arg("src").map_or_else(
                    || Content::new(Arc::from(""), Known::Unknown, true),
                    |src| role_file(view, "templates", src, true),
                ),
                _ => Content::new(Arc::from(""), Known::Unknown, false),
            };
            out.push(Effect::new(
                EffectKind::FileWritten {
                    path: dest,
                    mode: arg("mode"),
                    content,
                    replaces_link: !view.flag("follow", false),
                },
                Timing::BOTH,
            ));
        }
        "lineinfile" | "blockinfile" | "replace" | "ini_file" => {
            let Some(path) = path() else { return };
            let remove = view.arg("state") == Some("absent");
            let text = match short {
                "lineinfile" => arg("line"),
                "blockinfile" => arg("block"),
                "replace" => arg("replace"),
                _ => Some(format!(
                    "{} = {}",
                    view.arg("option").unwrap_or_default(),
                    view.arg("value").unwrap_or_default()
                )),
            };
            out.push(Effect::new(
                EffectKind::FileEdited {
                    path,
                    edit: Edit {
                        text: text.unwrap_or_default(),
                        regexp: arg("regexp").or_else(|| arg("option")),
                        remove,
                    },
                },
                Timing::BOTH,
            ));
        }
        "file" => {
            let Some(path) = path() else { return };
            match view.arg("state") {
                Some("absent") => {
                    out.push(Effect::new(EffectKind::FileRemoved { path }, Timing::BOTH))
                }
                Some("link") => {
                    if let Some(target) = arg("src") {
                        out.push(Effect::new(
                            EffectKind::Linked { path, target },
                            Timing::BOTH,
                        ));
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// A role file as written content: known when found, a template only
/// partly (its expressions are rendered on request).
fn role_file(view: &dyn TaskView, sub: &str, src: &str, template: bool) -> Content {
    match view.role_file(sub, src) {
        Some(text) => {
            let known = if template && crate::ansible::project::is_templated(&text) {
                Known::Partly
            } else {
                Known::Known
            };
            Content::new(text, known, template)
        }
        None => Content::new(Arc::from(""), Known::Unknown, template),
    }
}

/// What a file effect means to the node, added after it: the sysctl keys a
/// sysctl file sets, the kernel modules a `modules-load.d` file loads.
pub(super) fn meaning(view: &dyn TaskView, e: &Effect, out: &mut Vec<Effect>) {
    match &e.kind {
        EffectKind::FileWritten { path, content, .. } => {
            if crate::sysctl::sysctl_file_kind(path).is_some() {
                for (key, value, _) in crate::sysctl::parse_conf(content.text(view)) {
                    out.push(Effect::new(
                        EffectKind::SysctlSet {
                            key,
                            value,
                            file: Some(path.clone()),
                        },
                        Timing::BOOT,
                    ));
                }
            } else if let Some(names) = modules_load(path, content.text(view)) {
                for name in names {
                    out.push(Effect::new(
                        EffectKind::ModuleLoaded {
                            name,
                            file: Some(path.clone()),
                        },
                        Timing::BOOT,
                    ));
                }
            }
        }
        EffectKind::FileEdited { path, edit } => {
            if crate::sysctl::sysctl_file_kind(path).is_some() {
                for (key, value, _) in crate::sysctl::parse_conf(&edit.text) {
                    out.push(Effect::new(
                        if edit.remove {
                            EffectKind::SysctlRemoved {
                                key,
                                file: path.clone(),
                            }
                        } else {
                            EffectKind::SysctlSet {
                                key,
                                value,
                                file: Some(path.clone()),
                            }
                        },
                        Timing::BOOT,
                    ));
                }
            } else if !edit.remove {
                if let Some(names) = modules_load(path, &edit.text) {
                    for name in names {
                        out.push(Effect::new(
                            EffectKind::ModuleLoaded {
                                name,
                                file: Some(path.clone()),
                            },
                            Timing::BOOT,
                        ));
                    }
                }
            }
        }
        _ => {}
    }
}

/// The directories `systemd-modules-load` reads, and `/etc/modules`
/// (Debian's `kmod` service reads it at boot).
const MODULES_LOAD_DIRS: [&str; 4] = [
    "/etc/modules-load.d/",
    "/run/modules-load.d/",
    "/usr/lib/modules-load.d/",
    "/lib/modules-load.d/",
];

/// The module names a file loads at boot, when `path` is such a file: one
/// name a line, `#` and `;` start comments.
fn modules_load(path: &str, text: &str) -> Option<Vec<String>> {
    let in_dir = MODULES_LOAD_DIRS.iter().any(|d| {
        path.strip_prefix(d)
            .is_some_and(|n| n.ends_with(".conf") && !n.contains('/'))
    });
    if !in_dir && path != "/etc/modules" {
        return None;
    }
    Some(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| {
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
            .map(str::to_string)
            .collect(),
    )
}
