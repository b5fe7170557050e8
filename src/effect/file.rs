//! The file modules: what `copy`, `template`, `get_url`, `lineinfile`,
//! `blockinfile`, `replace`, `ini_file` and `file` write, edit, remove or
//! link; and what a file written means to the node (sysctl keys in a
//! sysctl file, kernel modules loaded by a `modules-load.d` file or a
//! unit's start commands, blocked by a `modprobe.d` file, swap kept off by
//! an fstab edit or a swap generator's configuration).

use super::{Content, Edit, Effect, EffectKind, Known, SwapOff, TaskView, Timing, fstab};
use std::sync::Arc;

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let short = crate::ansible::task::short_module(view.module());
    let arg = |k: &str| view.arg(k).map(str::to_string);
    // `dest` and `name` are read as `path` (the task model resolves aliases).
    let path = || arg("path");
    match short {
        "copy" | "template" | "get_url" => {
            let Some(dest) = arg("dest") else { return };
            let content = match short {
                // `content` as written, rendered only when someone reads it
                // (most written files are never looked into).
                "copy" => match (view.arg_raw("content"), view.arg("src")) {
                    (Some(c), _) => {
                        let template = crate::ansible::project::is_templated(&c);
                        let known = if template {
                            Known::Partly
                        } else {
                            Known::Known
                        };
                        Content::new(Arc::from(c), known, template)
                    }
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
            // Most `file` tasks make directories: the state first, so their
            // paths are not rendered for nothing.
            let state = view.arg("state");
            if !matches!(state, Some("absent" | "link")) {
                return;
            }
            let Some(path) = path() else { return };
            match state {
                Some("absent") => {
                    out.push(Effect::new(EffectKind::FileRemoved { path }, Timing::BOTH));
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
/// sysctl file sets, the kernel modules a `modules-load.d` file loads or a
/// `modprobe.d` file blocks, the modules a unit loads before it starts,
/// swap kept off at boot (see [`fstab`] for which fstab edits, written
/// files, removals and links count).
pub(super) fn meaning(view: &dyn TaskView, e: &Effect, out: &mut Vec<Effect>) {
    match &e.kind {
        EffectKind::FileWritten { path, content, .. } => {
            if crate::sysctl::sysctl_file_kind(path).is_some() {
                sysctl_file(view, path, content, out);
            } else if let Some(names) = is_modules_load(path)
                .then(|| modules_load(path, content.text(view)))
                .flatten()
            {
                for name in names {
                    out.push(Effect::new(
                        EffectKind::ModuleLoaded {
                            name,
                            file: Some(path.clone()),
                        },
                        Timing::BOOT,
                    ));
                }
            } else if in_modprobe_d(path)
                || fstab::may_mean_swap(path)
                // A unit's start commands are read only when it names
                // modprobe: rendering every unit template costs more than
                // the rare unit that computes the command.
                || (unit_of_file(path).is_some() && content.raw.contains("modprobe"))
            {
                let text = content.text(view);
                modules_blocked_or_started(path, text, out);
                if let Some(how) = fstab::written(path, content, text) {
                    out.push(Effect::new(EffectKind::SwapOff { how }, Timing::BOOT));
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
            } else if path == fstab::FSTAB {
                if fstab::edit_turns_swap_off(edit) {
                    out.push(Effect::new(
                        EffectKind::SwapOff {
                            how: SwapOff::FstabEntries,
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
                } else {
                    modules_blocked_or_started(path, &edit.text, out);
                }
            }
        }
        EffectKind::FileRemoved { path } => {
            if let Some(how) = fstab::removed(path) {
                out.push(Effect::new(EffectKind::SwapOff { how }, Timing::BOOT));
            }
        }
        EffectKind::Linked { path, target } => {
            if let Some(how) = fstab::linked(path, target) {
                out.push(Effect::new(EffectKind::SwapOff { how }, Timing::BOOT));
            }
        }
        _ => {}
    }
}

/// The keys a written sysctl file sets at boot: every known line of it
/// (a line written only under template conditions sets its key under
/// them); its unknown lines set nothing known (the `check` rules read
/// them from the content).
fn sysctl_file(view: &dyn TaskView, path: &str, content: &Content, out: &mut Vec<Effect>) {
    let set = |key, value| EffectKind::SysctlSet {
        key,
        value,
        file: Some(path.to_string()),
    };
    let Some(r) = content.rendering(view) else {
        for (key, value, _) in crate::sysctl::parse_conf(&content.raw) {
            out.push(Effect::new(set(key, value), Timing::BOOT));
        }
        return;
    };
    for line in r.file.lines.iter().filter(|l| l.is_known()) {
        let when = (!line.when.is_empty()).then(|| line.when_text());
        for (key, value, _) in crate::sysctl::parse_conf(&line.text) {
            out.push(Effect::new(set(key, value), Timing::BOOT).under(when.clone()));
        }
    }
}

/// The kernel modules a `modprobe.d` file blocks, or a unit file loads
/// when its unit starts, when `path` is such a file.
///
/// A unit's loads are [`Timing::NEITHER`]: whether they happen now or at
/// boot depends on the unit being started or enabled, which other tasks
/// say; the caller joins them with the unit's [`EffectKind::Service`]
/// effects (the unit is [`unit_of_file`] of the `file`).
fn modules_blocked_or_started(path: &str, text: &str, out: &mut Vec<Effect>) {
    if let Some(names) = modprobe_blocks(path, text) {
        for name in names {
            out.push(Effect::new(
                EffectKind::ModuleBlocked {
                    name,
                    file: path.to_string(),
                },
                Timing::BOOT,
            ));
        }
    } else if unit_of_file(path).is_some() {
        for name in unit_modprobes(text) {
            out.push(Effect::new(
                EffectKind::ModuleLoaded {
                    name,
                    file: Some(path.to_string()),
                },
                Timing::NEITHER,
            ));
        }
    }
}

/// The directories `modprobe` reads its configuration from (modprobe.d(5)).
const MODPROBE_DIRS: [&str; 4] = [
    "/etc/modprobe.d/",
    "/run/modprobe.d/",
    "/usr/lib/modprobe.d/",
    "/lib/modprobe.d/",
];

/// The commands that make `install NAME CMD` a block: the module is never
/// inserted, `modprobe NAME` runs a command that does nothing.
const NO_OP_COMMANDS: [&str; 4] = ["/bin/true", "/bin/false", "/usr/bin/true", "/usr/bin/false"];

/// Whether `path` is a `*.conf` file directly in one of `dirs` (each
/// ending in `/`).
fn conf_in(dirs: &[&str], path: &str) -> bool {
    dirs.iter().any(|d| {
        path.strip_prefix(d)
            .is_some_and(|n| n.ends_with(".conf") && !n.contains('/'))
    })
}

/// Whether `path` is a `modprobe.d` configuration file.
fn in_modprobe_d(path: &str) -> bool {
    conf_in(&MODPROBE_DIRS, path)
}

/// The module names a `modprobe.d` file keeps from loading, when `path` is
/// such a file: `blacklist NAME` (no loading by alias: udev, a device) and
/// `install NAME /bin/true` or `/bin/false` (no loading at all).
fn modprobe_blocks(path: &str, text: &str) -> Option<Vec<String>> {
    if !in_modprobe_d(path) {
        return None;
    }
    Some(
        text.lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                match (words.next()?, words.next()?) {
                    ("blacklist", name) if words.next().is_none() => Some(name),
                    ("install", name) => {
                        let cmd = words.next()?;
                        let no_op =
                            NO_OP_COMMANDS.contains(&cmd) || matches!(cmd, "true" | "false");
                        (no_op && words.next().is_none()).then_some(name)
                    }
                    _ => None,
                }
            })
            .filter(|n| is_module_name(n))
            .map(str::to_string)
            .collect(),
    )
}

/// The directories systemd reads system units from (systemd.unit(5)).
const UNIT_DIRS: [&str; 5] = [
    "/etc/systemd/system/",
    "/run/systemd/system/",
    "/usr/local/lib/systemd/system/",
    "/usr/lib/systemd/system/",
    "/lib/systemd/system/",
];

/// The service a unit file or drop-in defines or changes
/// (`/etc/systemd/system/kubelet.service`,
/// `/etc/systemd/system/kubelet.service.d/10-kubeadm.conf`: `kubelet.service`).
#[must_use]
pub fn unit_of_file(path: &str) -> Option<&str> {
    let rest = UNIT_DIRS.iter().find_map(|d| path.strip_prefix(d))?;
    let unit = match rest.split_once('/') {
        None => rest,
        Some((dir, file)) => {
            if file.contains('/') || !file.ends_with(".conf") {
                return None;
            }
            dir.strip_suffix(".d")?
        }
    };
    (unit.len() > ".service".len() && unit.ends_with(".service")).then_some(unit)
}

/// The kernel modules a unit's start commands load (`ExecStartPre=`,
/// `ExecStart=`, `ExecStartPost=`): `modprobe NAME`, `modprobe -a A B`,
/// also inside `sh -c '...'`; never `modprobe -r`.
fn unit_modprobes(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        if !matches!(key.trim(), "ExecStartPre" | "ExecStart" | "ExecStartPost") {
            continue;
        }
        let words: Vec<&str> = value
            .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ';'))
            .filter(|w| !w.is_empty())
            .collect();
        let mut i = 0;
        while i < words.len() {
            let w = words[i].trim_start_matches(['-', '@', ':', '+', '!']);
            i += 1;
            if w.rsplit('/').next() != Some("modprobe") {
                continue;
            }
            let (mut all, mut remove, mut found) = (false, false, Vec::new());
            while i < words.len() && !matches!(words[i], "&&" | "||" | "|" | "&") {
                match words[i] {
                    "-a" | "--all" => all = true,
                    "-r" | "--remove" => remove = true,
                    o if o.starts_with('-') => {}
                    n if found.is_empty() || all => found.push(n),
                    // A parameter of the module (`name param=value`).
                    _ => {}
                }
                i += 1;
            }
            if !remove {
                names.extend(
                    found
                        .into_iter()
                        .filter(|n| is_module_name(n))
                        .map(str::to_string),
                );
            }
        }
    }
    names
}

fn is_module_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The directories `systemd-modules-load` reads, and `/etc/modules`
/// (Debian's `kmod` service reads it at boot).
const MODULES_LOAD_DIRS: [&str; 4] = [
    "/etc/modules-load.d/",
    "/run/modules-load.d/",
    "/usr/lib/modules-load.d/",
    "/lib/modules-load.d/",
];

/// Whether `path` is read by `systemd-modules-load` (or is `/etc/modules`).
fn is_modules_load(path: &str) -> bool {
    path == "/etc/modules" || conf_in(&MODULES_LOAD_DIRS, path)
}

/// The module names a file loads at boot, when `path` is such a file: one
/// name a line, `#` and `;` start comments.
fn modules_load(path: &str, text: &str) -> Option<Vec<String>> {
    if !is_modules_load(path) {
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

#[cfg(test)]
mod tests {
    use super::unit_of_file;
    use crate::effect::testing::{FakeTask, line, lines};

    fn only(l: &[String], prefix: &str) -> Vec<String> {
        l.iter()
            .filter(|x| x.starts_with(prefix))
            .cloned()
            .collect()
    }

    #[test]
    fn modprobe_d_blocks() {
        let l = lines(
            "ansible.builtin.copy:\n  dest: /etc/modprobe.d/blacklist-k8s.conf\n  content: |\n    # keep these out\n    blacklist nouveau\n    install cramfs /bin/true\n    install usb-storage /bin/false\n    options nouveau modeset=0\n    install sctp /sbin/modprobe --ignore-install sctp\n",
        );
        assert_eq!(
            only(&l, "module_blocked"),
            vec![
                "module_blocked name=nouveau file=/etc/modprobe.d/blacklist-k8s.conf @boot",
                "module_blocked name=cramfs file=/etc/modprobe.d/blacklist-k8s.conf @boot",
                "module_blocked name=usb-storage file=/etc/modprobe.d/blacklist-k8s.conf @boot",
            ]
        );
        assert_eq!(
            only(
                &lines(
                    "ansible.builtin.lineinfile: {path: /etc/modprobe.d/cis.conf, line: install dccp /usr/bin/false, create: true}"
                ),
                "module_blocked"
            ),
            vec!["module_blocked name=dccp file=/etc/modprobe.d/cis.conf @boot"]
        );
        for task in [
            // A blacklist line taken out unblocks: no effect type for it.
            "ansible.builtin.lineinfile: {path: /etc/modprobe.d/blacklist.conf, line: blacklist floppy, state: absent}",
            // modprobe reads only `.conf` files.
            "ansible.builtin.copy: {dest: /etc/modprobe.d/blacklist.txt, content: \"blacklist floppy\\n\"}",
            "ansible.builtin.copy: {dest: /etc/modprobe.d/old/blacklist.conf, content: \"blacklist floppy\\n\"}",
            // Options are not a block.
            "ansible.builtin.copy: {dest: /etc/modprobe.d/nf.conf, content: \"options nf_conntrack hashsize=131072\\n\"}",
        ] {
            assert!(only(&lines(task), "module_blocked").is_empty(), "{task}");
        }
    }

    #[test]
    fn unit_start_commands_load_modules_when_the_unit_starts() {
        let l = lines(
            "ansible.builtin.copy:\n  dest: /etc/systemd/system/kubelet.service.d/10-modules.conf\n  content: |\n    [Service]\n    ExecStartPre=/sbin/modprobe br_netfilter\n    ExecStartPre=-/usr/sbin/modprobe -a overlay ip_vs\n    ExecStartPre=/bin/sh -c 'modprobe nf_conntrack && modprobe ip_vs_rr'\n    ExecStartPre=/sbin/modprobe dummy numdummies=2\n    ExecStop=/sbin/modprobe -r br_netfilter\n    ExecStartPost=/sbin/modprobe -r ip_vs_sh\n",
        );
        let file = "file=/etc/systemd/system/kubelet.service.d/10-modules.conf";
        assert_eq!(
            only(&l, "module_loaded"),
            [
                "br_netfilter",
                "overlay",
                "ip_vs",
                "nf_conntrack",
                "ip_vs_rr",
                "dummy"
            ]
            .iter()
            .map(|n| format!("module_loaded name={n} {file} @-"))
            .collect::<Vec<_>>()
        );
        let t = FakeTask::yaml(
            "ansible.builtin.template: {src: containerd.service.j2, dest: /etc/systemd/system/containerd.service}",
        )
        .with_file(
            "templates",
            "containerd.service.j2",
            "[Service]\nExecStartPre=-/sbin/modprobe overlay\nExecStart=/usr/bin/containerd\n",
        );
        assert_eq!(
            only(
                &t.effects().iter().map(line).collect::<Vec<_>>(),
                "module_loaded"
            ),
            vec!["module_loaded name=overlay file=/etc/systemd/system/containerd.service @-"]
        );
        assert_eq!(
            only(
                &lines(
                    "ansible.builtin.lineinfile: {path: /etc/systemd/system/kubelet.service.d/override.conf, line: 'ExecStartPre=/sbin/modprobe br_netfilter'}"
                ),
                "module_loaded"
            ),
            vec![
                "module_loaded name=br_netfilter file=/etc/systemd/system/kubelet.service.d/override.conf @-"
            ]
        );
        for task in [
            // Not a unit systemd reads.
            "ansible.builtin.copy: {dest: /tmp/kubelet.service, content: \"ExecStartPre=/sbin/modprobe br_netfilter\\n\"}",
            "ansible.builtin.copy: {dest: /etc/systemd/system/kubelet.service.d/notes.txt, content: \"ExecStartPre=/sbin/modprobe br_netfilter\\n\"}",
            // Not a start command.
            "ansible.builtin.copy: {dest: /etc/systemd/system/k.service, content: \"ExecStop=/sbin/modprobe br_netfilter\\n# ExecStartPre=/sbin/modprobe overlay\\n\"}",
        ] {
            assert!(only(&lines(task), "module_loaded").is_empty(), "{task}");
        }
    }

    #[test]
    fn modules_load_files_still_load_at_boot() {
        assert_eq!(
            only(
                &lines(
                    "ansible.builtin.copy: {dest: /etc/modules-load.d/k8s.conf, content: \"overlay\\nbr_netfilter\\n\"}"
                ),
                "module_loaded"
            ),
            vec![
                "module_loaded name=overlay file=/etc/modules-load.d/k8s.conf @boot",
                "module_loaded name=br_netfilter file=/etc/modules-load.d/k8s.conf @boot",
            ]
        );
    }

    #[test]
    fn units_of_files() {
        assert_eq!(
            unit_of_file("/etc/systemd/system/kubelet.service"),
            Some("kubelet.service")
        );
        assert_eq!(
            unit_of_file("/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"),
            Some("kubelet.service")
        );
        assert_eq!(unit_of_file("/etc/systemd/system/.service"), None);
        assert_eq!(unit_of_file("/etc/systemd/system/kubelet.socket"), None);
        assert_eq!(
            unit_of_file("/etc/systemd/system/multi-user.target.wants/kubelet.service"),
            None
        );
        assert_eq!(unit_of_file("/etc/systemd/kubelet.service"), None);
    }
}
