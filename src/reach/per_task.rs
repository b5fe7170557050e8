//! Running a pass over every reached task in parallel, once per task and
//! the copies of it reached from other entries: the sharing between
//! entries that keeps a whole tree's analysis near the cost of one entry.

use super::Facts;
use rayon::prelude::*;

/// `f` of every reached task, in their order, computed in parallel once per
/// task and its twins: a twin gets what the first of its twins got, passed
/// through `twin`.
pub fn per_task<'s, T: Send + Sync>(
    reached: &[Facts<'s>],
    f: impl Fn(&Facts<'s>) -> Vec<T> + Sync + Send,
    twin: impl Fn(&Facts<'s>, &T) -> T + Sync + Send,
) -> Vec<T> {
    per_task_in(reached, f, twin, false)
}

/// [`per_task`], taking the tasks from the last one first: for a pass that
/// runs beside another over the same tasks. A task's iterations are in one
/// thread's hands at a time (see [`Facts::iterations`]); two passes taking
/// the tasks in the same order follow each other, the faster one waiting,
/// idle, for each task the slower one holds . In opposite orders they meet once.
pub fn per_task_from_end<'s, T: Send + Sync>(
    reached: &[Facts<'s>],
    f: impl Fn(&Facts<'s>) -> Vec<T> + Sync + Send,
    twin: impl Fn(&Facts<'s>, &T) -> T + Sync + Send,
) -> Vec<T> {
    per_task_in(reached, f, twin, true)
}

fn per_task_in<'s, T: Send + Sync>(
    reached: &[Facts<'s>],
    f: impl Fn(&Facts<'s>) -> Vec<T> + Sync + Send,
    twin: impl Fn(&Facts<'s>, &T) -> T + Sync + Send,
    from_end: bool,
) -> Vec<T> {
    // A panic in `f` leaves the task (and its twins) without results in
    // this pass, reported at the task (see `internal_errors`).
    let first = |(i, facts): (usize, &Facts<'s>)| {
        (facts.first_twin == i).then(|| {
            let task = &facts.reach.inst.task;
            let unit = crate::internal_error::Unit::Task;
            let label = || task.name.clone().unwrap_or_default();
            crate::internal_error::catch(unit, label, task.span, || f(facts)).unwrap_or_else(|d| {
                let _ = facts.cache().internal.set(Box::new(d));
                Vec::new()
            })
        })
    };
    let firsts: Vec<Option<Vec<T>>> = if from_end {
        let mut v: Vec<Option<Vec<T>>> = reached.par_iter().enumerate().rev().map(first).collect();
        v.reverse();
        v
    } else {
        reached.par_iter().enumerate().map(first).collect()
    };
    let twins: Vec<Option<Vec<T>>> = reached
        .par_iter()
        .zip(&firsts)
        .map(|(facts, own)| {
            own.is_none().then(|| {
                firsts[facts.first_twin]
                    .iter()
                    .flatten()
                    .map(|x| twin(facts, x))
                    .collect()
            })
        })
        .collect();
    firsts
        .into_iter()
        .zip(twins)
        .flat_map(|(own, twin)| own.or(twin).unwrap_or_default())
        .collect()
}

/// The panics caught in the passes over `reached` so far ([`per_task`]),
/// as `internal-error` diagnostics at their tasks: one per task.
#[must_use]
pub fn internal_errors(reached: &[Facts<'_>]) -> Vec<crate::diagnostic::Diagnostic> {
    reached
        .iter()
        .enumerate()
        .filter(|&(i, f)| f.first_twin == i)
        .filter_map(|(_, f)| f.cache().internal.get().map(|d| (**d).clone()))
        .collect()
}
