//! What one task's resolution keeps so that it is not computed again: every
//! name resolved for the task, play-level results kept for the play's other
//! tasks, and renders offered to the run (see `share`).
//!
//! Speed machinery only: a kept result is used again only where computing
//! it afresh would give the same (no name it rests on is the task's own,
//! and the depth guard would not cut it).

use super::{LookupOwned, MAX_RENDER_DEPTH, Resolved, TaskVars};
use std::sync::Arc;
use std::sync::PoisonError;

/// A resolution kept, and what it rests on.
#[derive(Debug)]
pub struct Memo {
    pub(super) resolved: Arc<Resolved>,
    /// Every name consulted (the name itself first), sorted after it.
    pub(super) deps: Vec<String>,
    /// True when no consulted name came from the task's scopes or `item`:
    /// any task of the play whose scopes define none of `deps` sees the same.
    pub(super) play_level: bool,
    /// The cycle or depth guard cut part of it short.
    pub(super) cut: bool,
    /// How deep its chain of variables went (1: no variable inside).
    pub(super) depth: usize,
}

/// Where a resolution in progress started, to tell what it rested on when
/// it ends (see [`TaskVars::remember`]).
pub(super) struct Recording {
    /// The guard's stack when it started.
    depth: usize,
    /// Its first entry in the log of consulted names.
    start: usize,
    cuts: usize,
    scoped: usize,
    outer_deepest: usize,
}

impl TaskVars<'_> {
    /// A kept resolution of `name` that holds here: this task's own, or a
    /// play-level one of the play or of another play of the run.
    pub(super) fn memoized(&self, name: &str) -> Option<Arc<Resolved>> {
        let local = self.memo.borrow().get(name).cloned();
        if let Some(r) = local {
            return Some(self.reuse(&r));
        }
        let shared = self
            .play
            .memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned();
        let depth = self.stack.borrow().len();
        // Taken only where computing it afresh would give the same: no name
        // it rests on is the task's own, and the depth guard would not cut it.
        let fits = |r: &Memo| depth + r.depth <= MAX_RENDER_DEPTH && self.sees_as_play(&r.deps);
        if let Some(r) = shared.filter(|r| fits(r)) {
            self.memo
                .borrow_mut()
                .insert(name.to_string(), Arc::clone(&r));
            return Some(self.reuse(&r));
        }
        let r = self.play.taken_from_run(name, fits)?;
        self.play
            .memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_string())
            .or_insert_with(|| Arc::clone(&r));
        self.memo
            .borrow_mut()
            .insert(name.to_string(), Arc::clone(&r));
        Some(self.reuse(&r))
    }

    /// Starts the log of what the resolution of `name` consults.
    pub(super) fn record(&self, name: &str) -> Recording {
        let depth = self.stack.borrow().len();
        let recording = Recording {
            depth,
            start: self.touched.borrow().len(),
            cuts: self.cuts.get(),
            scoped: self.scoped.get(),
            outer_deepest: self.deepest.get(),
        };
        self.deepest.set(depth + 1);
        self.touched.borrow_mut().push(name.to_string());
        recording
    }

    /// Keeps the resolution of `name` with what it rested on: for this task,
    /// and for the play and the run when it rests on play-level names only.
    pub(super) fn remember(&self, name: &str, resolved: &Arc<Resolved>, rec: &Recording) {
        let mut deps: Vec<String> = self.touched.borrow()[rec.start + 1..].to_vec();
        deps.sort_unstable();
        deps.dedup();
        deps.retain(|d| d != name);
        deps.insert(0, name.to_string());
        let deepest = self.deepest.get();
        self.deepest.set(rec.outer_deepest.max(deepest));
        let entry = Arc::new(Memo {
            resolved: Arc::clone(resolved),
            deps,
            play_level: self.scoped.get() == rec.scoped,
            cut: self.cuts.get() != rec.cuts,
            depth: deepest - rec.depth,
        });
        // A result cut short by the cycle/depth guard depends on where the
        // resolution started: keep it for this task only.
        if entry.play_level && !entry.cut {
            self.play
                .memo
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(name.to_string(), Arc::clone(&entry));
            self.play.offer_to_run(name, &entry);
        }
        self.memo.borrow_mut().insert(name.to_string(), entry);
        if self.stack.borrow().is_empty() && self.recording.get() == 0 {
            // Nothing being resolved depends on the log any more.
            self.touched.borrow_mut().clear();
        }
    }

    /// A kept resolution used again: what it rested on counts as consulted.
    pub(super) fn reuse(&self, r: &Memo) -> Arc<Resolved> {
        self.touched.borrow_mut().extend(r.deps.iter().cloned());
        if !r.play_level {
            self.scoped.set(self.scoped.get() + 1);
        }
        if r.cut {
            self.cuts.set(self.cuts.get() + 1);
        }
        let reach = self.stack.borrow().len() + r.depth;
        self.deepest.set(self.deepest.get().max(reach));
        Arc::clone(&r.resolved)
    }

    /// Whether a play-level result holds for this task: none of the names it
    /// rests on is defined by the task's scopes (or is `item` when bound).
    fn sees_as_play(&self, deps: &[String]) -> bool {
        if self.scopes.is_empty() && self.bound.is_empty() {
            return true;
        }
        let names = self.scope_names.get_or_init(|| {
            self.scopes
                .iter()
                .filter_map(|l| l.node.as_map())
                .flatten()
                .filter_map(|(k, _)| k.as_str())
                .collect()
        });
        !deps
            .iter()
            .any(|d| names.contains(d.as_str()) || self.is_bound(d))
    }

    /// Renders a templated text as a task sees it (an argument, or a
    /// template file's content). Task arguments and template files are
    /// rendered by several analyses and, on a whole tree, by every play
    /// that reaches the task: kept per template text for the run, where
    /// they rest on play-level names only. Not kept per task: the
    /// analyses keep what they rendered of a task (`Iteration::arg`,
    /// `Iteration::rendered`), so a memo per task would keep a second copy
    /// of what they keep, and find little it had not seen.
    pub fn render_text(&self, s: &str) -> LookupOwned {
        // Not inside a variable's resolution, whose dependencies are
        // recorded by the lookups a render makes.
        let top = self.stack.borrow().is_empty() && self.recording.get() == 0;
        if !top {
            return self.render(s);
        }
        if let Some(v) = self.play.render_from_run(s, |deps| self.sees_as_play(deps)) {
            return v;
        }
        let (start, scoped, cuts) = (
            self.touched.borrow().len(),
            self.scoped.get(),
            self.cuts.get(),
        );
        self.recording.set(1);
        let v = self.render(s);
        self.recording.set(0);
        let mut deps: Vec<String> = self.touched.borrow_mut().split_off(start);
        // Only what rested on play-level names, uncut, holds elsewhere.
        if self.scoped.get() == scoped && self.cuts.get() == cuts {
            deps.sort_unstable();
            deps.dedup();
            self.play.offer_render(s, &v, deps);
        }
        if self.stack.borrow().is_empty() {
            self.touched.borrow_mut().clear();
        }
        v
    }
}
