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
    let first = |(i, facts): (usize, &Facts<'s>)| (facts.first_twin == i).then(|| f(facts));
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
