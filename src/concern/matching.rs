//! Whether an effect matches a catalog pattern. The patterns name effects
//! (see `rules/README.md`); what a module does is read once, in
//! `crate::effect`, never here.

use super::catalog::{FieldMatch, Pattern};
use crate::effect::{Effect, EffectKind, TaskView};

/// Values compared as YAML 1.1 booleans: `yes` = `on` = `true`.
fn bool_canon(s: &str) -> std::borrow::Cow<'_, str> {
    match s {
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => "true".into(),
        "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => "false".into(),
        other => other.into(),
    }
}

/// Whether `p` may match a task of `module` (that notifies handlers or
/// not): its module list admits it and the task can have an effect of one
/// of its kinds.
#[must_use]
pub fn admits(p: &Pattern, module: &str, notifies: bool) -> bool {
    (p.modules.is_empty() || p.modules.iter().any(|m| m == module))
        && crate::effect::may_have(module, notifies, &p.kinds)
}

/// Whether effect `e` of a task of `module` matches `p`; `view` renders a
/// written template when the pattern looks into its content.
pub fn matches(p: &Pattern, module: &str, e: &Effect, view: &dyn TaskView) -> bool {
    if !p.kinds.contains(&e.kind.kind()) {
        return false;
    }
    if !p.modules.is_empty() && !p.modules.iter().any(|m| m == module) {
        return false;
    }
    match p.now {
        Some(true) if !e.timing.now => return false,
        Some(false) if !e.timing.boot => return false,
        _ => {}
    }
    for (name, m) in &p.fields {
        let value = e.field(name);
        let ok = match m {
            FieldMatch::OneOf(allowed) => allowed.iter().any(|a| match (a, &value) {
                (None, None) => true,
                (Some(a), Some(v)) => bool_canon(a) == bool_canon(v),
                _ => false,
            }),
            FieldMatch::Regex(r) => value.as_deref().is_some_and(|v| r.is_match(v)),
            FieldMatch::Glob(g) => value.as_deref().is_some_and(|v| g.is_match(v)),
            FieldMatch::Not(vals) => value
                .as_deref()
                .is_none_or(|v| !vals.iter().any(|x| bool_canon(x) == bool_canon(v))),
        };
        if !ok {
            return false;
        }
    }
    if let Some(c) = &p.content {
        // The text as written first; a template's rendering only when needed.
        let ok = match &e.kind {
            EffectKind::FileWritten { content, .. } => {
                c.is_match(&content.raw) || c.is_match(content.text(view))
            }
            EffectKind::FileEdited { edit, .. } => !edit.remove && c.is_match(&edit.text),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}
