//! Variables: which definition of a name wins for a task, by Ansible's
//! precedence, and its value rendered through `jinja`.
//!
//! Knows the precedence ladder (DOMAIN.md section 5) and the names that are
//! only known at run time (facts, registered results, `set_fact`). Never
//! evaluates conditions itself: it is the [`VarSource`](crate::jinja::VarSource) that `jinja` asks.
//!
//! The semantics read in `precedence` (which definition wins), `index` (a
//! play's static definitions by name), `play` (a play's variables,
//! `register` and `set_fact` included), `task` (resolving a name for one
//! task), `extra` (`-e`) and `resolver` (templated include targets). What
//! only saves work, and must never change a value, is in `memo` (a task's
//! and a play's resolutions kept) and `share` (resolutions and renders
//! shared between the plays of a run).

mod extra;
mod index;
mod magic;
mod memo;
mod play;
mod precedence;
mod resolver;
mod share;
mod task;
#[cfg(test)]
mod tests;

pub use extra::{ExtraVars, parse_extra_vars};
pub use index::{DefIndex, IndexKey, pattern_groups};
pub use magic::ANSIBLE_CORE_VERSION;
pub use play::PlayVars;
pub use precedence::{Definition, label, rank};
pub use resolver::VarsResolver;
pub use share::{Ident, RunShared};
pub use task::{LookupOwned, Resolved, TaskVars};

use index::DefRef;
use memo::Memo;
use play::set_fact_literal;

/// Deepest chain of variables whose values refer to other variables.
pub const MAX_RENDER_DEPTH: usize = 32;
