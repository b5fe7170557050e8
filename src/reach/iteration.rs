//! One reached task and its loop iterations: the variables each iteration
//! sees, its arguments rendered once, its command line, its conditions
//! evaluated and its effects, all computed on first use and kept while a
//! consumer holds them.

use super::{IterView, Reach, Scope, When};
use crate::ansible::project::TaskInstance;
use crate::effect::Effect;
pub use crate::effect::UNKNOWN_ITEM;
use crate::source::SourceMap;
use crate::vars::{LookupOwned, TaskVars};
use crate::yaml::Node;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// One loop iteration of a reachable task (or the task itself without a loop).
pub struct Iteration<'s> {
    /// The loop item (`None` without a loop, or when the loop's items are
    /// not known: then `loop_unknown` says why).
    pub item: Option<serde_json::Value>,
    /// Why the task's loop items are not known (its one iteration binds
    /// the loop variables as unknown).
    pub loop_unknown: Option<Arc<super::LoopUnknown>>,
    /// A loop it is in has no items: Ansible runs nothing, so it has no
    /// effects.
    pub empty_loop: bool,
    pub tv: TaskVars<'s>,
    pub(crate) fs: &'s crate::load::FsMemo,
    command: OnceLock<Option<String>>,
    conds: OnceLock<When>,
    effects: OnceLock<Vec<Effect>>,
    /// The task's argument texts rendered so far, by position in its
    /// arguments: the catalog's patterns, the file writes, the sysctl
    /// extraction and the rules ask for the same few arguments of a task.
    args: OnceLock<Box<[OnceLock<String>]>>,
}

impl Iteration<'_> {
    /// The text of the task's argument `key` after rendering (see
    /// [`arg_text`]), rendered once per iteration.
    pub fn arg(&self, inst: &TaskInstance, key: &str) -> Option<&str> {
        let args = &inst.task.args;
        // The last of repeated keys counts (see `Task::arg`).
        let i = args.iter().rposition(|a| a.key == key)?;
        let slots = self
            .args
            .get_or_init(|| args.iter().map(|_| OnceLock::new()).collect());
        Some(slots[i].get_or_init(|| arg_text(&self.tv, &args[i].value)))
    }

    /// The command line of command/shell/raw tasks.
    pub fn command(&self, inst: &TaskInstance) -> Option<&str> {
        self.command
            .get_or_init(|| command_text(inst, self))
            .as_deref()
    }

    /// The task's condition chain, evaluated.
    pub fn conditions(&self, sources: &SourceMap, inst: &TaskInstance) -> &When {
        self.conds
            .get_or_init(|| When::evaluate(sources, inst, &self.tv))
    }

    /// What this iteration does to the node, derived once.
    pub fn effects(&self, inst: &TaskInstance) -> &[Effect] {
        self.effects.get_or_init(|| {
            if self.empty_loop {
                Vec::new()
            } else {
                crate::effect::derive(&IterView::new(inst, self))
            }
        })
    }

    /// What its variables are bound to beyond the task's, to see them
    /// again later without holding the task's iterations (see
    /// [`Scope::iteration_vars`]).
    #[must_use]
    pub fn rebind(&self) -> Rebind {
        let (bound, why) = self.tv.loop_binding();
        Rebind { bound, why }
    }
}

/// The loop binding of one iteration (see [`Iteration::rebind`]).
#[derive(Debug, Clone, Default)]
pub struct Rebind {
    bound: Vec<(String, LookupOwned)>,
    why: Option<Arc<str>>,
}

impl<'a> Scope<'a> {
    /// The variables one iteration of a reached task sees, built afresh:
    /// for reading a task while another thread may hold its iterations.
    #[must_use]
    pub fn iteration_vars(&self, r: &Reach<'a>, bound: &Rebind) -> TaskVars<'_> {
        let tv = self.vars(r).with_loop(bound.bound.clone());
        match &bound.why {
            Some(why) => tv.with_loop_why(Arc::clone(why)),
            None => tv,
        }
    }
}

/// A reachable task and its iterations, computed on first use.
pub struct Facts<'s> {
    pub reach: Reach<'s>,
    /// The caches of the tasks of its play (one allocation per distinct
    /// play), this task's at `slot`.
    pub(super) caches: Arc<[FactsCache<'s>]>,
    pub(super) slot: usize,
    /// The index (in [`Scope::reached`]) of the first of this task's twins:
    /// the same task instance of one play, reached from several entries.
    /// Twins differ only in their entry.
    pub first_twin: usize,
    /// Its own index in [`Scope::reached`]: its place in run order.
    pub index: usize,
}

/// The iterations of one task instance, shared by the entries that reach
/// it through one shared play: computed on first use, until dropped (see
/// [`Iterations::drop_all`]). The lock is held while they are in use: a
/// task's variables are resolved by one thread at a time (see
/// `vars::TaskVars`), and the twins of a task, or two rules, may be on
/// different workers.
#[derive(Default)]
pub(super) struct FactsCache<'s> {
    iters: Mutex<Option<Vec<Iteration<'s>>>>,
    /// The first panic in a pass over the task, reported (see
    /// `internal_errors`); boxed, as nearly every task has none.
    pub(super) internal: OnceLock<Box<crate::diagnostic::Diagnostic>>,
}

/// A task's iterations, held for one thread's use (see [`Facts::iterations`]).
pub struct Iterations<'f, 's> {
    held: MutexGuard<'f, Option<Vec<Iteration<'s>>>>,
}

impl Iterations<'_, '_> {
    /// Drops the task's iterations, with everything computed in them, as
    /// the hold ends (they are computed again if asked for): memory the
    /// next tasks reuse.
    pub fn drop_all(mut self) {
        *self.held = None;
    }
}

impl<'s> std::ops::Deref for Iterations<'_, 's> {
    type Target = [Iteration<'s>];
    fn deref(&self) -> &Self::Target {
        self.held.as_deref().unwrap_or_default()
    }
}

impl<'s> Facts<'s> {
    pub(super) fn cache(&self) -> &FactsCache<'s> {
        &self.caches[self.slot]
    }

    /// The task's loop iterations (one, without `item`, when it has no loop
    /// or its items are not known statically), for this thread until the
    /// result is dropped: call it once per task and keep the result, never
    /// twice at a time for the same task (the second call would wait for
    /// the first).
    pub fn iterations(&self, scope: &'s Scope<'_>) -> Iterations<'_, 's> {
        let mut held = self
            .cache()
            .iters
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.get_or_insert_with(|| {
            let pv = &scope.play_vars[self.reach.play_vars];
            let base = TaskVars::new(pv, Some(self.reach.inst));
            let iteration = |item: Option<serde_json::Value>,
                             loop_unknown: Option<Arc<super::LoopUnknown>>,
                             empty_loop: bool,
                             tv: TaskVars<'s>| Iteration {
                item,
                loop_unknown,
                empty_loop,
                tv,
                fs: scope.fs,
                command: OnceLock::new(),
                effects: OnceLock::new(),
                conds: OnceLock::new(),
                args: OnceLock::new(),
            };
            let inst = self.reach.inst;
            let tv_with = |bound| TaskVars::new(pv, Some(inst)).with_loop(bound);
            let planned = super::loops::plan(inst, scope.fs, &tv_with);
            if planned.is_empty() {
                return vec![iteration(None, None, false, base)];
            }
            planned
                .into_iter()
                .map(|p| {
                    let mut tv = tv_with(p.bound);
                    if let Some(why) = &p.unknown {
                        tv = tv.with_loop_why(shown_var(&why.var).into());
                    }
                    iteration(p.item, p.unknown.map(Arc::new), p.empty, tv)
                })
                .collect()
        });
        Iterations { held }
    }

    /// Whether the task's iterations are computed and kept.
    #[cfg(test)]
    pub(crate) fn has_iterations(&self) -> bool {
        self.cache()
            .iters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

#[must_use]
pub fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// An argument's text after rendering (the template as written when
/// unknown, but `(unknown: item from a loop over found)` (starting with
/// [`UNKNOWN_ITEM`]) when it rests on the item of a loop whose items are
/// not known: `{{ item.key }}` is never taken for a name).
pub fn arg_text(tv: &TaskVars<'_>, node: &Node) -> String {
    match tv.value(node) {
        LookupOwned::Value(v) => json_text(&v),
        _ => {
            let text = node
                .scalar_text()
                .unwrap_or_else(|| node.to_json().to_string());
            let mut unknown = tv.unknown_loop_vars().peekable();
            if unknown.peek().is_some() {
                let used = crate::jinja::referenced_variables(&text);
                if let Some(n) = unknown.find(|n| used.iter().any(|u| u == n)) {
                    return format!(
                        "{UNKNOWN_ITEM}{n} from a loop over {})",
                        tv.loop_why().unwrap_or("unknown items")
                    );
                }
            }
            text
        }
    }
}

pub fn command_text(inst: &TaskInstance, it: &Iteration<'_>) -> Option<String> {
    let t = &inst.task;
    if let Some(c) = it.arg(inst, "_raw_params").or_else(|| it.arg(inst, "cmd")) {
        return Some(c.to_string());
    }
    if let Some(argv) = t.arg("argv").and_then(Node::as_seq) {
        return Some(
            argv.iter()
                .map(|n| arg_text(&it.tv, n))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    None
}

pub fn read_role_file(
    inst: &TaskInstance,
    sub: &str,
    src: &str,
    fs: &crate::load::FsMemo,
) -> Option<Arc<str>> {
    let mut candidates = Vec::new();
    if let Some(r) = &inst.role_path {
        candidates.push(r.join(sub).join(src));
        candidates.push(r.join(src));
    }
    let task_file_dir = Path::new(src);
    if task_file_dir.is_absolute() {
        candidates.push(task_file_dir.to_path_buf());
    }
    candidates
        .into_iter()
        .find(|p| fs.is_file(p))
        .and_then(|p| fs.text_bounded(&p))
}

/// What a loop's items rest on, as an argument's text shows it: the
/// characters of a name only (no `,`, `=`, `<`, `>` or space that a
/// module would read as a separator), at most 40 of them. The reason is
/// the iteration's `loop_unknown`.
fn shown_var(var: &str) -> String {
    let name: String = var
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .take(40)
        .collect();
    if name.is_empty() {
        "its expression".to_string()
    } else {
        name
    }
}
