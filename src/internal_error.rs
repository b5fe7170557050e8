//! A panic in one unit of work (a file parsed, a playbook, play or role
//! expanded, a task analysed) becomes the `internal-error` diagnostic at
//! that unit's place, and the run goes on without what that unit would have
//! given. A panic is a bug in preflint, never an answer about the tree: the
//! diagnostic asks for a report, and every command exits 2 when one is
//! present (see `run`).
//!
//! The default panic hook still prints the panic and where in preflint's
//! source it happened on stderr: what a bug report needs.
//!
//! Tests prove each guard holds by making a unit panic: in debug builds,
//! `PREFLINT_DEBUG_PANIC=UNIT:SUFFIX` (UNIT one of `file`, `playbook`,
//! `play`, `role`, `task`) panics in the unit of that kind whose label (a
//! file's or playbook's path, a play's, role's or task's name) ends with
//! SUFFIX. Release builds neither read the variable nor build the labels.

use crate::diagnostic::{Diagnostic, code};
use crate::source::Span;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A kind of unit of work guarded on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Parsing a YAML file.
    File,
    /// Following an entry playbook's imports to its plays.
    Playbook,
    /// Expanding a play into its tasks.
    Play,
    /// Expanding a role run as if by a play (a tree without playbooks).
    Role,
    /// One analysis pass over a task.
    Task,
}

impl Unit {
    /// The name `PREFLINT_DEBUG_PANIC` gives it.
    #[cfg(debug_assertions)]
    fn key(self) -> &'static str {
        match self {
            Unit::File => "file",
            Unit::Playbook => "playbook",
            Unit::Play => "play",
            Unit::Role => "role",
            Unit::Task => "task",
        }
    }

    fn doing(self) -> &'static str {
        match self {
            Unit::File => "parsing this file",
            Unit::Playbook => "following this playbook's imports",
            Unit::Play => "expanding this play",
            Unit::Role => "expanding this role",
            Unit::Task => "analysing this task",
        }
    }
}

/// Runs `f`, one `unit` of work at `at`. A panic in it is caught and
/// returned as the `internal-error` diagnostic at `at`; the caller goes on
/// without `f`'s result. `label` names the unit for `PREFLINT_DEBUG_PANIC`
/// (called in debug builds only).
///
/// # Errors
/// The diagnostic, when `f` panicked.
pub fn catch<T>(
    unit: Unit,
    label: impl FnOnce() -> String,
    at: Span,
    f: impl FnOnce() -> T,
) -> Result<T, Diagnostic> {
    // Unwind safety is asserted: the unit's own result is dropped, and the
    // shared state it may leave half-updated (caches, memos behind mutexes)
    // is read with poisoning ignored, at worst missing an entry.
    catch_unwind(AssertUnwindSafe(|| {
        debug_panic(unit, label);
        f()
    }))
    .map_err(|payload| diagnostic(unit, at, payload.as_ref()))
}

/// The diagnostic for a panic with `payload` in `unit` at `at`.
fn diagnostic(unit: Unit, at: Span, payload: &(dyn Any + Send)) -> Diagnostic {
    Diagnostic::error(
        code::INTERNAL,
        at,
        format!(
            "preflint failed while {} ({}); what it would have found here is left out",
            unit.doing(),
            panic_message(payload)
        ),
    )
    .with_help("this is a bug in preflint: please report it, with this file if you can share it")
}

/// The message a panic was raised with.
#[must_use]
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

#[cfg(debug_assertions)]
fn debug_panic(unit: Unit, label: impl FnOnce() -> String) {
    static WANTED: std::sync::OnceLock<Option<(String, String)>> = std::sync::OnceLock::new();
    let wanted = WANTED.get_or_init(|| {
        let v = std::env::var("PREFLINT_DEBUG_PANIC").ok()?;
        let (unit, suffix) = v.split_once(':')?;
        Some((unit.to_string(), suffix.to_string()))
    });
    if let Some((key, suffix)) = wanted
        && key == unit.key()
        && label().ends_with(suffix.as_str())
    {
        panic!("PREFLINT_DEBUG_PANIC={key}:{suffix}");
    }
}

#[cfg(not(debug_assertions))]
fn debug_panic(_: Unit, _: impl FnOnce() -> String) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    #[test]
    fn a_panic_becomes_an_internal_error_at_the_unit() {
        let at = Span::file_start(FileId(3));
        let got = catch(Unit::Task, String::new, at, || -> u8 {
            panic!("index out of bounds")
        });
        let d = got.expect_err("caught");
        assert_eq!(d.code, code::INTERNAL);
        assert_eq!(d.span.file, FileId(3));
        assert_eq!(d.severity, crate::diagnostic::Severity::Error);
        assert!(
            d.message
                .contains("while analysing this task (index out of bounds)"),
            "{}",
            d.message
        );
        let formatted = catch(Unit::File, String::new, at, || -> u8 {
            panic!("{} of {}", 1, 2)
        });
        assert!(formatted.expect_err("caught").message.contains("(1 of 2)"));
    }

    #[test]
    fn without_a_panic_the_result_is_returned() {
        let at = Span::file_start(FileId(0));
        assert_eq!(catch(Unit::Play, String::new, at, || 7).ok(), Some(7));
    }
}
