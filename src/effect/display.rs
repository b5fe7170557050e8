//! An effect as one line of text, for listings (`preflint tasks
//! --effects`): its kind as the catalog names it, what it acts on, the
//! fields that are set as `field=value`, and when it holds.
//!
//! Only the reading of an effect for people lives here; JSON outputs
//! serialize the effect types themselves.

use super::{Content, Effect, EffectKind, Known, SwapOff, SysctlApply, Timing};
use std::fmt::{self, Display, Formatter};

/// The longest text shown of a value (a block of lines, a long command
/// line): a listing line stays one line.
const MAX_VALUE_CHARS: usize = 80;

/// `sysctl_set net.ipv4.ip_forward=1 file=/etc/sysctl.d/k8s.conf [now, boot]`.
impl Display for Effect {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.kind().name())?;
        match &self.kind {
            EffectKind::SysctlSet { key, value, file } => {
                write!(f, " {}={}", shown(key), shown(value))?;
                field(f, "file", file.as_deref())?;
            }
            EffectKind::SysctlRemoved { key, file } => {
                write!(f, " {}", shown(key))?;
                field(f, "file", Some(file))?;
            }
            EffectKind::SysctlApplied { apply } => match apply {
                SysctlApply::File(file) => field(f, "file", Some(file))?,
                SysctlApply::All(engine) => field(f, "engine", Some(engine.label()))?,
            },
            EffectKind::ModuleLoaded { name, file } => {
                write!(f, " {}", shown(name))?;
                field(f, "file", file.as_deref())?;
            }
            EffectKind::ModuleBlocked { name, file } => {
                write!(f, " {}", shown(name))?;
                field(f, "file", Some(file))?;
            }
            EffectKind::SwapOff { how } => match how {
                SwapOff::All => f.write_str(" all")?,
                SwapOff::FstabEntries => f.write_str(" fstab")?,
                SwapOff::UnitMasked(unit) => {
                    f.write_str(" unit_masked")?;
                    field(f, "unit", Some(unit))?;
                }
                SwapOff::Generator(unit) => {
                    f.write_str(" generator")?;
                    field(f, "unit", Some(unit))?;
                }
            },
            EffectKind::FileWritten {
                path,
                mode,
                content,
                replaces_link,
            } => {
                write!(f, " {}", shown(path))?;
                field(f, "mode", mode.as_deref())?;
                write!(f, " content={}", content_label(content))?;
                if *replaces_link {
                    f.write_str(" replaces_link")?;
                }
            }
            EffectKind::FileEdited { path, edit } => {
                write!(f, " {}", shown(path))?;
                if edit.remove {
                    f.write_str(" remove")?;
                }
                field(f, "regexp", edit.regexp.as_deref())?;
                if !edit.text.is_empty() {
                    field(f, "text", Some(&edit.text))?;
                }
            }
            EffectKind::FileRemoved { path } => write!(f, " {}", shown(path))?,
            EffectKind::Linked { path, target } => {
                write!(f, " {}", shown(path))?;
                field(f, "target", Some(target))?;
            }
            EffectKind::Service { unit, action } => {
                if !unit.is_empty() {
                    write!(f, " {}", shown(unit))?;
                }
                write!(f, " {}", action.as_str())?;
            }
            EffectKind::Package {
                name,
                action,
                version,
            } => {
                write!(f, " {} {}", shown(name), action.as_str())?;
                field(f, "version", version.as_deref())?;
            }
            EffectKind::Firewall {
                tool,
                action,
                port,
                proto,
            } => {
                write!(f, " {} {}", shown(tool), action.as_str())?;
                field(f, "port", port.as_deref())?;
                field(f, "proto", proto.as_deref())?;
            }
            EffectKind::Hostname { name } | EffectKind::HandlerNotified { name } => {
                write!(f, " {}", shown(name))?;
            }
            EffectKind::HandlersFlushed => {}
            EffectKind::Check { what, port, msg } => {
                write!(f, " {}", shown(what))?;
                field(f, "port", port.as_deref())?;
                field(f, "msg", msg.as_deref())?;
            }
            EffectKind::Kubeadm { args } => write!(f, " {}", shown(args))?,
            EffectKind::Command { line } => write!(f, " {}", shown(line))?,
        }
        write!(f, " {}", self.timing)?;
        match &self.when {
            Some(w) => write!(f, " if {w}"),
            None => Ok(()),
        }
    }
}

/// `[now, boot]`, `[now]`, `[boot]`, or `[not now, not at boot]` (a file
/// no boot engine reads, written by a task that applies nothing; a unit's
/// load when no task starts or enables the unit).
impl Display for Timing {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match (self.now, self.boot) {
            (true, true) => "[now, boot]",
            (true, false) => "[now]",
            (false, true) => "[boot]",
            (false, false) => "[not now, not at boot]",
        })
    }
}

/// ` name=value` when the value is set.
fn field(f: &mut Formatter<'_>, name: &str, value: Option<&str>) -> fmt::Result {
    match value {
        Some(v) => write!(f, " {name}={}", shown(v)),
        None => Ok(()),
    }
}

/// How much of a written file is known, and whether it is a template.
fn content_label(c: &Content) -> &'static str {
    match (c.coverage(), c.template) {
        (Known::Known, false) => "known",
        (Known::Known, true) => "known_template",
        (Known::Partly, false) => "partly_known",
        (Known::Partly, true) => "partly_known_template",
        (Known::Unknown, _) => "unknown",
    }
}

/// A value as one word: as written when it is one, else quoted with its
/// line breaks and quotes escaped; cut at [`MAX_VALUE_CHARS`].
#[must_use]
pub fn shown(v: &str) -> String {
    let cut = shown_raw(v);
    let plain = !cut.is_empty()
        && !cut
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\''));
    if plain { cut } else { format!("{cut:?}") }
}

/// A value cut at [`MAX_VALUE_CHARS`], not quoted: for text that delimits
/// itself (compact JSON).
#[must_use]
pub fn shown_raw(v: &str) -> String {
    match v.char_indices().nth(MAX_VALUE_CHARS) {
        Some((at, _)) => format!("{}...", &v[..at]),
        None => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::{Edit, ServiceAction};
    use std::sync::Arc;

    fn line(kind: EffectKind, timing: Timing) -> String {
        Effect::new(kind, timing).to_string()
    }

    #[test]
    fn sysctl_set_names_key_value_file_and_timing() {
        let e = EffectKind::SysctlSet {
            key: "net.ipv4.ip_forward".into(),
            value: "1".into(),
            file: Some("/etc/sysctl.d/k8s.conf".into()),
        };
        assert_eq!(
            line(e, Timing::BOTH),
            "sysctl_set net.ipv4.ip_forward=1 file=/etc/sysctl.d/k8s.conf [now, boot]"
        );
        let live = EffectKind::SysctlSet {
            key: "vm.swappiness".into(),
            value: "0".into(),
            file: None,
        };
        assert_eq!(line(live, Timing::NOW), "sysctl_set vm.swappiness=0 [now]");
    }

    #[test]
    fn texts_with_spaces_or_lines_are_quoted_and_cut() {
        let e = EffectKind::FileEdited {
            path: "/etc/fstab".into(),
            edit: Edit {
                text: String::new(),
                regexp: Some("^/dev/fd0".into()),
                remove: true,
            },
        };
        assert_eq!(
            line(e, Timing::BOOT),
            "file_edited /etc/fstab remove regexp=^/dev/fd0 [boot]"
        );
        let notify = EffectKind::HandlerNotified {
            name: "Apply sysctls".into(),
        };
        assert_eq!(
            line(notify, Timing::NOW),
            "handler_notified \"Apply sysctls\" [now]"
        );
        let block = EffectKind::FileEdited {
            path: "/etc/modules".into(),
            edit: Edit {
                text: "overlay\nbr_netfilter".into(),
                regexp: None,
                remove: false,
            },
        };
        assert_eq!(
            line(block, Timing::BOOT),
            "file_edited /etc/modules text=\"overlay\\nbr_netfilter\" [boot]"
        );
        let long = "x".repeat(MAX_VALUE_CHARS + 5);
        assert_eq!(shown(&long), format!("{}...", &long[..MAX_VALUE_CHARS]));
        assert_eq!(shown(""), "\"\"");
    }

    #[test]
    fn written_files_services_and_daemon_reload() {
        let w = EffectKind::FileWritten {
            path: "/etc/modules-load.d/k8s.conf".into(),
            mode: Some("0644".into()),
            content: Content::new(Arc::from("br_netfilter\n"), Known::Known, false),
            replaces_link: true,
        };
        assert_eq!(
            line(w, Timing::BOOT),
            "file_written /etc/modules-load.d/k8s.conf mode=0644 content=known replaces_link [boot]"
        );
        let reload = EffectKind::Service {
            unit: String::new(),
            action: ServiceAction::DaemonReload,
        };
        assert_eq!(line(reload, Timing::NOW), "service daemon_reload [now]");
        let start = EffectKind::Service {
            unit: "containerd".into(),
            action: ServiceAction::Started,
        };
        assert_eq!(line(start, Timing::NOW), "service containerd started [now]");
        assert_eq!(
            line(EffectKind::HandlersFlushed, Timing::NEITHER),
            "handlers_flushed [not now, not at boot]"
        );
    }
}
