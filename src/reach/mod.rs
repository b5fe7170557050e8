//! The reachable tasks: every task instance of every play, in run order,
//! with the variables it sees, its loop iterations, its rendered
//! arguments, its condition chain evaluated and its effects.
//!
//! This is the one place that turns the model (plays, task instances,
//! variables) into what each consumer reads. It does not decide who fixes a
//! concern or what is a hazard: the who-fixes analysis (`concern`), the
//! sysctl simulator and the rules read it.

mod evaluated;
mod iteration;
mod listing;
mod per_task;
mod view;
mod when;

pub use evaluated::{Eval, Evaluated, IterationEval, LoopEval, TemplateEval, evaluated_by_task};
pub use iteration::{
    Facts, Iteration, Iterations, arg_text, command_text, json_text, loop_items, read_role_file,
};
pub use listing::{IterationEffects, effects_by_task};
pub use per_task::{internal_errors, per_task, per_task_from_end};
pub use view::IterView;
pub use when::{
    CondEvidence, UnknownVar, VarEvidence, When, WhenStatus, conditions_hold, var_evidence,
    why_label,
};

use crate::ansible::project::{Play, Project, TaskInstance};
use crate::vars::{DefIndex, ExtraVars, IndexKey, PlayVars, RunShared, TaskVars};
use iteration::FactsCache;
use rayon::prelude::*;
use std::sync::Arc;

/// A reachable task with what it needs for evaluation.
pub struct Reach<'a> {
    pub entry: &'a str,
    pub play: &'a Play,
    pub play_vars: usize,
    pub inst: &'a TaskInstance,
}

/// Every play of every entry, with its variables indexed once.
pub struct Scope<'a> {
    pub plays: Vec<(&'a str, &'a Play)>,
    /// The variables of each distinct play (a play shared by several
    /// entries is indexed once): `plays[i]` sees `play_vars[vars_of[i]]`.
    pub play_vars: Vec<PlayVars>,
    vars_of: Vec<usize>,
    /// Where templates and copied files are read.
    pub fs: &'a crate::load::FsMemo,
}

impl<'a> Scope<'a> {
    #[must_use]
    pub fn new(
        project: &'a Project,
        extra: &ExtraVars,
        inventory: Option<&crate::ansible::inventory::Inventory>,
    ) -> Self {
        let plays: Vec<(&str, &Play)> = project
            .entries
            .iter()
            .flat_map(|e| e.plays.iter().map(move |p| (e.name.as_str(), &**p)))
            .collect();
        // A shared play is the same `Play` (see `Entry::plays`).
        let mut distinct: Vec<&Play> = Vec::new();
        let mut index: crate::HashMap<usize, usize> = crate::HashMap::default();
        let vars_of = plays
            .iter()
            .map(|(_, p)| {
                *index
                    .entry(std::ptr::from_ref(*p) as usize)
                    .or_insert_with(|| {
                        distinct.push(p);
                        distinct.len() - 1
                    })
            })
            .collect();
        // One definition index per distinct list of layers, shared by
        // the plays that have it.
        let mut key_of: crate::HashMap<IndexKey, usize> = crate::HashMap::default();
        let mut firsts: Vec<&Play> = Vec::new();
        let index_of: Vec<usize> = distinct
            .iter()
            .map(|p| {
                *key_of
                    .entry(DefIndex::key(p, inventory))
                    .or_insert_with(|| {
                        firsts.push(p);
                        firsts.len() - 1
                    })
            })
            .collect();
        let indexes: Vec<Arc<DefIndex>> = firsts
            .par_iter()
            .map(|p| Arc::new(DefIndex::of_play(p, extra, inventory)))
            .collect();
        let run = Arc::new(RunShared::default());
        let play_vars = distinct
            .par_iter()
            .zip(index_of)
            .map(|(p, i)| {
                PlayVars::from_index(Arc::clone(&indexes[i]), p.tasks.iter().chain(&p.handlers))
                    .with_run(Arc::clone(&run))
            })
            .collect();
        Scope {
            plays,
            play_vars,
            vars_of,
            fs: &project.fs,
        }
    }

    /// The variables a reachable task sees.
    #[must_use]
    pub fn vars(&self, r: &Reach<'a>) -> TaskVars<'_> {
        TaskVars::new(&self.play_vars[r.play_vars], Some(r.inst))
    }

    /// Every reachable task (handlers after their play's tasks), in order,
    /// with a cache of what it does, shared by the
    /// concern analysis and the rules so each task is rendered once; the
    /// tasks of a play shared by several entries share one cache.
    #[must_use]
    pub fn reached(&self) -> Vec<Facts<'_>> {
        // A play's tasks are reached in the same order from every entry
        // that shares it: the twins of its `k`th task are the `k`th of
        // each of its reaches, the first twin that of its first reach.
        let mut firsts: Vec<Option<(usize, Arc<[FactsCache<'_>]>)>> =
            (0..self.play_vars.len()).map(|_| None).collect();
        let total = self
            .plays
            .iter()
            .map(|(_, p)| p.tasks.len() + p.handlers.len())
            .sum();
        let mut out = Vec::with_capacity(total);
        for (i, (entry, play)) in self.plays.iter().enumerate() {
            let play_vars = self.vars_of[i];
            let tasks = play.tasks.iter().chain(&play.handlers);
            let at = out.len();
            let (first, caches) = firsts[play_vars].get_or_insert_with(|| {
                (at, tasks.clone().map(|_| FactsCache::default()).collect())
            });
            for (k, inst) in tasks.enumerate() {
                let index = out.len();
                out.push(Facts {
                    index,
                    reach: Reach {
                        entry,
                        play,
                        play_vars,
                        inst,
                    },
                    caches: Arc::clone(caches),
                    slot: k,
                    first_twin: *first + k,
                });
            }
        }
        out
    }
}
