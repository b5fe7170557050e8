//! Unknown is explicit: a field of an effect that names something (a
//! sysctl key or value, a path, a kernel module, a package, a unit, a
//! port) and does not render statically is shown as unknown with the
//! reason, never as template text.
//!
//! Fields that quote the source as evidence (a command line, an
//! assertion's expression, an edit's text) keep their text.

use super::{Effect, EffectKind, SwapOff, SysctlApply, TaskView};

/// How an unknown field reads: `<unknown: REASON>`.
pub const UNKNOWN_PREFIX: &str = "<unknown: ";

/// How the rendered text of an argument that rests on the item of a loop
/// whose items are not known starts: `(unknown: item from a loop over
/// found (registered result))`. No `<`, `>`, `=`, `,` or space inside the
/// name, so that a package or module list read from it is not split at
/// them; its field reads `<unknown: ...>` once derived (see [`mark`]).
pub const UNKNOWN_ITEM: &str = "(unknown: ";

/// Whether a field's text is template syntax left unrendered.
fn unrendered(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

/// Template text without its delimiters, its whitespace collapsed: the
/// expressions it is made of, to tell two unknown fields apart.
fn without_delimiters(s: &str) -> String {
    let bare = s
        .replace("{{", " ")
        .replace("}}", " ")
        .replace("{%", " ")
        .replace("%}", " ");
    bare.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The unknown form of a field's text: the expressions it is made of and
/// why they do not render (the reason the view gives).
fn unknown(view: &dyn TaskView, s: &str) -> String {
    let why = view
        .unknown_reason(s)
        .unwrap_or_else(|| "not rendered statically".to_string());
    format!(
        "{UNKNOWN_PREFIX}{} ({})>",
        super::display::shown_raw(&without_delimiters(s)),
        without_delimiters(&why)
    )
}

/// Replaces every unrendered naming field of `effects` by its unknown form.
pub(super) fn mark(view: &dyn TaskView, effects: &mut [Effect]) {
    for e in effects {
        let mut fix = |s: &mut String| {
            if let Some(inner) = s
                .strip_prefix(UNKNOWN_ITEM)
                .and_then(|r| r.strip_suffix(')'))
            {
                *s = format!("{UNKNOWN_PREFIX}{inner}>");
            } else if unrendered(s) {
                *s = unknown(view, s);
            }
        };
        match &mut e.kind {
            EffectKind::SysctlSet { key, value, file } => {
                fix(key);
                fix(value);
                file.iter_mut().for_each(&mut fix);
            }
            EffectKind::SysctlRemoved { key, file } => {
                fix(key);
                fix(file);
            }
            EffectKind::SysctlApplied {
                apply: SysctlApply::File(f),
            } => fix(f),
            EffectKind::ModuleLoaded { name, file } => {
                fix(name);
                file.iter_mut().for_each(&mut fix);
            }
            EffectKind::ModuleBlocked { name, file } => {
                fix(name);
                fix(file);
            }
            EffectKind::SwapOff {
                how: SwapOff::UnitMasked(u) | SwapOff::Generator(u),
            } => fix(u),
            EffectKind::FileWritten { path, mode, .. } => {
                fix(path);
                mode.iter_mut().for_each(&mut fix);
            }
            EffectKind::FileEdited { path, .. } | EffectKind::FileRemoved { path } => fix(path),
            EffectKind::Linked { path, target } => {
                fix(path);
                fix(target);
            }
            EffectKind::Service { unit, .. } => fix(unit),
            EffectKind::Package { name, version, .. } => {
                fix(name);
                version.iter_mut().for_each(&mut fix);
            }
            EffectKind::Firewall { port, proto, .. } => {
                port.iter_mut().for_each(&mut fix);
                proto.iter_mut().for_each(&mut fix);
            }
            EffectKind::Hostname { name } | EffectKind::HandlerNotified { name } => fix(name),
            _ => {}
        }
    }
}

/// Whether a field's text is the unknown form (see [`mark`]).
#[must_use]
pub fn is_unknown(s: &str) -> bool {
    s.starts_with(UNKNOWN_PREFIX)
}
