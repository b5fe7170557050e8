//! What the plays of one run share instead of computing it again: a play
//! imported the same way by several entries (a shared play, expanded once),
//! and roles and tasks read once from their files for every play.
//!
//! Speed machinery only: sharing must never change a result, so what is
//! shared is keyed by everything its expansion depends on ([`ShareKey`],
//! [`StackProbe`]) and carries the diagnostics reading it raised, replayed
//! by every play that uses it.

use super::super::task::{Origin, Task};
use super::budget::MAX_INCLUDE_DEPTH;
use super::builder::{Builder, Ctx};
use super::model::{LayerKind, Role};
use super::playbook::PlaySpec;
use crate::HashMap;
use crate::diagnostic::Diagnostic;
use crate::source::Span;
use crate::yaml::Node;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// What a play's expansion depends on besides its include stack: the play
/// node, its directory, and the variables and conditions its imports gave.
/// Plays with the same key, found through different entries, are one shared
/// play when their include stacks allow it (see [`StackProbe`]).
#[derive(PartialEq, Eq, Hash)]
pub(super) struct ShareKey {
    pub(super) node: Span,
    pub(super) basedir: PathBuf,
    pub(super) layers: Vec<(LayerKind, Span)>,
    pub(super) when: Vec<(String, Span, Origin)>,
}

impl PlaySpec {
    pub(super) fn share_key(&self) -> ShareKey {
        ShareKey {
            node: self.node.span,
            basedir: self.basedir.clone(),
            layers: self
                .layers
                .iter()
                .map(|l| (l.kind.clone(), l.node.span))
                .collect(),
            when: self
                .when
                .iter()
                .map(|c| (c.expr.to_string(), c.span, c.origin))
                .collect(),
        }
    }
}

/// How a play's expansion used the include stack it started with (the
/// import chain of playbooks above it), for sharing the expansion with a
/// play imported the same way through another chain.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StackProbe {
    /// Longest stack a depth check saw.
    pub(super) deepest: usize,
    /// A tasks file or role looked up was one of the run's playbooks, which
    /// another chain's stack may hold where this one's does not.
    pub(super) touched_playbook: bool,
}

impl StackProbe {
    /// Whether an expansion that started with stack `had` builds the same
    /// with stack `other`: no path looked up could be in one stack and not
    /// the other (only playbooks are), and no depth check comes out
    /// otherwise.
    pub(super) fn holds_for(self, had: &[PathBuf], other: &[PathBuf]) -> bool {
        let deepest_other = self.deepest + other.len().saturating_sub(had.len());
        !self.touched_playbook
            && self.deepest < MAX_INCLUDE_DEPTH
            && deepest_other < MAX_INCLUDE_DEPTH
    }
}

/// Roles read so far in a run, each with the diagnostics its reading raised
/// (replayed by every builder that uses the role, so that they do not depend
/// on which play read it first).
pub(super) type SharedRoles = Mutex<HashMap<PathBuf, (Arc<Role>, Vec<Diagnostic>)>>;

/// Tasks already read from their YAML node, by the node's address and span
/// (every node comes from a file the loader keeps for the whole run, or a
/// play spec alive for the whole build), with the diagnostics reading gave:
/// a role used by many plays is read once.
pub(super) type SharedTasks = Mutex<HashMap<(usize, Span), (Arc<Task>, Vec<Diagnostic>)>>;

impl Builder<'_> {
    /// Records how a stack check for `key` depends on the play's initial stack.
    pub(super) fn probe_stack(&mut self, key: &Path, ctx: &Ctx) {
        self.probe.deepest = self.probe.deepest.max(ctx.stack.len());
        self.probe.touched_playbook |= self.playbook_keys.contains(key);
    }

    /// A task some play of the run already read from `item`, with the
    /// diagnostics reading it gave, reported here too.
    pub(super) fn known_task(&mut self, item: &Node) -> Option<Arc<Task>> {
        let known = self
            .shared_tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&task_key(item))
            .cloned();
        let (t, diags) = known?;
        for d in diags {
            self.push_diag(d);
        }
        Some(t)
    }

    /// Keeps a task read from `item`, with the diagnostics reading it gave,
    /// for the other plays of the run (the first reading wins).
    pub(super) fn share_task(&self, item: &Node, t: &Arc<Task>, diags: Vec<Diagnostic>) {
        self.shared_tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(task_key(item))
            .or_insert_with(|| (Arc::clone(t), diags));
    }

    /// A role some play of the run already read from `path`, with the
    /// diagnostics reading it gave, reported here too.
    pub(super) fn known_role(&mut self, path: &Path) -> Option<Arc<Role>> {
        let known = self
            .shared_roles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .cloned();
        let (r, diags) = known?;
        for d in diags {
            self.push_diag(d);
        }
        Some(r)
    }

    /// Keeps a role read from `path`, with the diagnostics reading it gave,
    /// for the other plays of the run (the first reading wins).
    pub(super) fn share_role(&self, path: &Path, role: &Arc<Role>, diags: Vec<Diagnostic>) {
        self.shared_roles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(path.to_path_buf())
            .or_insert_with(|| (Arc::clone(role), diags));
    }
}

/// A task's key in [`SharedTasks`]: its node's address and span.
fn task_key(item: &Node) -> (usize, Span) {
    (std::ptr::from_ref(item) as usize, item.span)
}
