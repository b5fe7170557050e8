//! Plays expanded in parallel before the plays ahead of them are known.
//!
//! Speed machinery only: the result must be the same as expanding the plays
//! one after the other, for any thread count. A play's budget depends on
//! what the plays before it used, so each play is first expanded with the
//! first play's budget and kept only where its own budget builds the same
//! (see [`Builder::plays`]).

use super::budget::{Budget, RunSpent, Spent, run_spent_diag};
use super::builder::{Builder, PlayState};
use super::model::{Play, Role, Unresolved};
use super::playbook::PlaySpec;
use super::share::{ShareKey, StackProbe};
use crate::diagnostic::Diagnostic;
use crate::yaml::Node;
use crate::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// A rough size of a play before it is expanded, to start large plays
/// first: its roles (each worth many tasks) and its tasks.
fn play_size_estimate(play: &Node) -> usize {
    let len = |k: &str| play.get(k).and_then(Node::as_seq).map_or(0, <[Node]>::len);
    20 * len("roles") + len("pre_tasks") + len("tasks") + len("post_tasks") + len("handlers")
}

/// A play expanded in parallel before the plays ahead of it are known: it
/// counts what it builds into a counter shared by the run, and gives up (its
/// result is thrown away and the play expanded again, in order) once the run
/// as a whole is past what remains of [`MAX_RUN_TASKS`](super::MAX_RUN_TASKS).
pub(super) struct Speculation<'a> {
    pub(super) spent: &'a AtomicUsize,
    pub(super) cap: usize,
    /// What this play has added to `spent` so far.
    pub(super) counted: usize,
    pub(super) aborted: bool,
}

/// A play expanded by its own builder, with what that builder collected.
#[derive(Clone)]
struct Built {
    pub(super) play: Arc<Play>,
    pub(super) spent: Spent,
    pub(super) diags: Vec<Diagnostic>,
    pub(super) unresolved: Vec<Unresolved>,
    pub(super) roles: HashMap<PathBuf, Arc<Role>>,
    pub(super) probe: StackProbe,
}

impl<'a> Builder<'a> {
    /// A builder for one play, with this one's settings and the run's
    /// shared roles and tasks.
    fn fork(&self) -> Builder<'a> {
        Builder {
            root: self.root.clone(),
            loader: self.loader,
            cfg: self.cfg.clone(),
            resolver: self.resolver,
            roles: HashMap::default(),
            shared_roles: self.shared_roles,
            shared_tasks: self.shared_tasks,
            unresolved: Vec::new(),
            diags: Vec::new(),
            reported: HashSet::default(),
            speculation: None,
            run_cap: self.run_cap,
            playbook_keys: Arc::clone(&self.playbook_keys),
            probe: StackProbe::default(),
        }
    }

    /// Expands one play with this (fresh) builder; `true` with it when the
    /// builder gave up speculating and the result must be thrown away.
    /// A panic while expanding leaves the play without tasks, reported.
    fn expand(mut self, spec: &PlaySpec, budget: Budget) -> (Built, bool) {
        let unit = crate::internal_error::Unit::Play;
        let name = || spec.node.get("name").and_then(Node::scalar_text);
        let label = || name().unwrap_or_default();
        let (play, spent) =
            crate::internal_error::catch(unit, label, spec.node.span, || self.play(spec, budget))
                .unwrap_or_else(|d| {
                    self.push_diag(d);
                    let play = Play {
                        name: name(),
                        hosts: String::new(),
                        span: spec.node.span,
                        layers: spec.layers.clone(),
                        tasks: Vec::new(),
                        handlers: Vec::new(),
                    };
                    (play, Spent::default())
                });
        let aborted = self.speculation.as_ref().is_some_and(|s| s.aborted);
        let built = Built {
            play: Arc::new(play),
            spent,
            diags: self.diags,
            unresolved: self.unresolved,
            roles: self.roles,
            probe: self.probe,
        };
        (built, aborted)
    }

    /// Expands the plays, in parallel, each with its own builder, and merges
    /// them in order, each within what the plays before it left of
    /// [`MAX_RUN_TASKS`](super::MAX_RUN_TASKS). Returns the plays expanded: all of them, or the
    /// first ones when the run's budget ran out (reported at the first play
    /// left out).
    ///
    /// A play's budget depends on what the plays before it used, unknown
    /// while they expand in parallel. So each play is first expanded with the
    /// budget of the first, and kept if its own budget builds the same (the
    /// same budget, or one it never reached); else it is expanded again here,
    /// in order, with its own. The parallel pass gives up once the run as a
    /// whole is past the bound, so plays that all fan out cost about twice
    /// the bound, not the per-play bound once per play. The result is the
    /// same as expanding the plays one after the other, for any thread count.
    ///
    /// A play imported the same way as an earlier one (the same
    /// [`PlaySpec::share_key`]) is not expanded again when the earlier
    /// expansion holds for it too (see [`StackProbe`]): both entries share it.
    pub(super) fn plays(&mut self, specs: &[PlaySpec], run: &mut RunSpent) -> Vec<Arc<Play>> {
        let first = run.next();
        // For every spec, the first spec with its share key.
        let mut firsts: HashMap<ShareKey, usize> = HashMap::default();
        let primary: Vec<usize> = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| *firsts.entry(spec.share_key()).or_insert(i))
            .collect();
        let spent = AtomicUsize::new(0);
        let cap = run.cap.saturating_sub(run.tasks.min(run.role_runs));
        let this = &*self;
        let build = |spec: &PlaySpec| {
            let mut w = this.fork();
            w.speculation = Some(Speculation {
                spent: &spent,
                cap,
                counted: 0,
                aborted: false,
            });
            let (built, aborted) = w.expand(spec, first);
            (!aborted).then_some(built)
        };
        // Plays differ a lot in size (kubespray's cluster.yml: 1 to 367
        // tasks), so the largest are started first, each worker taking the
        // next play when it is done; the results do not depend on the order
        // (the budget is settled in play order below).
        let mut order: Vec<usize> = (0..specs.len()).filter(|&i| primary[i] == i).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(play_size_estimate(&specs[i].node)));
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Option<Built>>>> =
            specs.iter().map(|_| Mutex::new(None)).collect();
        rayon::scope(|s| {
            for _ in 0..rayon::current_num_threads().min(specs.len()) {
                s.spawn(|_| {
                    while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let built = build(&specs[i]);
                        *slots[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(built);
                    }
                });
            }
        });
        let speculative: Vec<Option<Built>> = slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(PoisonError::into_inner)
                    .flatten()
            })
            .collect();
        let mut plays = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let budget = run.next();
            if budget.is_empty() {
                self.push_diag(run_spent_diag(
                    spec.node.span,
                    "play",
                    specs.len() - i - 1,
                    self.run_cap,
                ));
                break;
            }
            let p = primary[i];
            let shared = speculative[p]
                .as_ref()
                .filter(|b| budget.same_as(first, &b.spent))
                .filter(|b| p == i || b.probe.holds_for(&specs[p].stack, &spec.stack));
            let built = match shared {
                Some(b) => b.clone(),
                None => self.fork().expand(spec, budget).0,
            };
            run.add(built.spent);
            for d in built.diags {
                self.push_diag(d);
            }
            for u in built.unresolved {
                if !self
                    .unresolved
                    .iter()
                    .any(|x| x.file == u.file && x.line == u.line && x.expr == u.expr)
                {
                    self.unresolved.push(u);
                }
            }
            for (path, role) in built.roles {
                self.roles.entry(path).or_insert(role);
            }
            plays.push(built.play);
        }
        plays
    }

    /// While speculating: adds what the play built since the last call to
    /// the run's counter; `true` once the run is past its cap.
    pub(super) fn speculation_over(&mut self, state: &PlayState) -> bool {
        let Some(s) = self.speculation.as_mut() else {
            return false;
        };
        if !s.aborted {
            let now = state.count() + state.role_runs;
            let new = now.saturating_sub(s.counted);
            s.counted = now;
            let total = s.spent.fetch_add(new, Ordering::Relaxed) + new;
            s.aborted = total > s.cap;
        }
        s.aborted
    }
}
