//! Who fixes each concern: matching reachable tasks against the catalog's
//! patterns, evaluating their condition chains, and combining parts into a
//! verdict with evidence.
//!
//! Reads the model and the catalog; never names a file, role or tool of a
//! particular project (the automation's name comes from the project).

use super::catalog::{ArgMatch, Concern, Part, Pattern};
use crate::ansible::project::{Play, Project, TaskInstance};
use crate::jinja::{self, Tri, UnknownWhy};
use crate::source::SourceMap;
use crate::vars::{DefIndex, ExtraVars, IndexKey, LookupOwned, PlayVars, RunShared, TaskVars};
use crate::yaml::Node;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// How far a part (or a concern) is taken care of, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A reachable task fixes it with the default variables.
    Fixed,
    /// Fixed, but the task's conditions depend on facts or results known only at run time.
    FixedWhenRuntime,
    /// A task exists but is off by default or needs a variable the operator must set.
    Conditional,
    /// The automation only checks it; the operator fixes it.
    CheckedOnly,
    /// Nothing in the automation addresses it.
    Operator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    Fixed,
    FixedWhenRuntime,
    Conditional,
    Partial,
    CheckedOnly,
    Operator,
    Fact,
}

impl Overall {
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Overall::Fixed => "fixed",
            Overall::FixedWhenRuntime => "fixed (run-time conditions)",
            Overall::Conditional => "conditional",
            Overall::Partial => "partial",
            Overall::CheckedOnly => "checked only",
            Overall::Operator => "operator",
            Overall::Fact => "fact",
        }
    }
}

/// One variable in a condition, with where its value came from.
#[derive(Debug, Clone, Serialize)]
pub struct VarEvidence {
    pub name: String,
    /// The rendered value, or why it is unknown.
    pub value: String,
    pub known: bool,
    pub source: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Lower-precedence definitions this one overrides, as `file:line`.
    pub overrides: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CondEvidence {
    pub expr: String,
    pub file: String,
    pub line: u32,
    pub origin: crate::ansible::task::Origin,
    /// `true`, `false` or `unknown`.
    pub result: &'static str,
    pub depends_on: Vec<String>,
    pub vars: Vec<VarEvidence>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskEvidence {
    pub part: String,
    /// `fix` or `check`.
    pub role: &'static str,
    pub status: Status,
    pub file: String,
    pub line: u32,
    pub task: String,
    pub module: String,
    pub roles: Vec<String>,
    pub entry: String,
    pub hosts: String,
    pub item: Option<String>,
    /// Variables that keep this task off (for conditional evidence).
    #[serde(skip)]
    pub turn_on: Vec<String>,
    /// Run-time names this task's conditions depend on.
    #[serde(skip)]
    pub runtime: Vec<String>,
    /// The part whose persisted values this task applies (`sysctl --system`).
    #[serde(skip)]
    pub requires: Option<String>,
    /// Files the task writes (rendered paths).
    pub writes: Vec<String>,
    pub conditions: Vec<CondEvidence>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartVerdict {
    pub name: String,
    pub status: Status,
    /// When the fixing tasks run in plays that target different host groups:
    /// the strongest status per hosts pattern.
    pub by_hosts: Vec<HostsStatus>,
    /// Variables that turn a conditional fix on.
    pub turn_on: Vec<String>,
    /// Run-time names (facts, registered results) the fix depends on.
    pub runtime: Vec<String>,
    pub evidence: Vec<TaskEvidence>,
}

/// A part's status for the plays that target one hosts pattern.
#[derive(Debug, Clone, Serialize)]
pub struct HostsStatus {
    pub hosts: String,
    pub status: Status,
}

/// The strongest fix status per hosts pattern, when there is more than one pattern.
fn by_hosts(evidence: &[TaskEvidence]) -> Vec<HostsStatus> {
    let mut best: std::collections::BTreeMap<&str, Status> = std::collections::BTreeMap::new();
    for e in evidence.iter().filter(|e| e.role == "fix") {
        let s = best.entry(e.hosts.as_str()).or_insert(e.status);
        *s = (*s).min(e.status);
    }
    if best.len() < 2 {
        return Vec::new();
    }
    // A plain union pattern (`a:b`) covers the patterns made of its groups:
    // those hosts get the stronger status of the wider play.
    let groups = |p: &str| -> Option<BTreeSet<String>> {
        if p.contains(['!', '&', '[', '*', '~']) {
            return None;
        }
        Some(
            p.split([':', ','])
                .map(|g| g.trim().to_string())
                .filter(|g| !g.is_empty())
                .collect(),
        )
    };
    let snapshot: Vec<(&str, Status)> = best.iter().map(|(h, s)| (*h, *s)).collect();
    for (hosts, status) in &mut best {
        let Some(mine) = groups(hosts) else { continue };
        for (other, other_status) in &snapshot {
            if other_status < status
                && groups(other).is_some_and(|o| mine.is_subset(&o) || o.contains("all"))
            {
                *status = *other_status;
            }
        }
    }
    let first = snapshot.first().map(|_| best.values().next().copied());
    if best.values().all(|s| Some(*s) == first.flatten()) {
        return Vec::new();
    }
    best.into_iter()
        .map(|(hosts, status)| HostsStatus {
            hosts: hosts.to_string(),
            status,
        })
        .collect()
}

/// The value of a fact concern (e.g. the sysctl file) with its provenance.
#[derive(Debug, Clone, Serialize)]
pub struct FactVerdict {
    pub value: String,
    /// The variable the value came from, when templated.
    pub variable: Option<String>,
    pub definitions: Vec<VarEvidence>,
    /// Why the winner wins.
    pub winner_reason: Option<String>,
    /// Tasks that change it at run time (`set_fact`), as `file:line`.
    pub runtime_changes: Vec<String>,
    /// Where the value is used, as `file:line`.
    pub used_at: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub id: String,
    pub title: String,
    pub overall: Overall,
    /// Who fixes it: the automation's name, `conditional`, `checked`,
    /// `operator`, `partial`, or the fact's value.
    pub who: String,
    pub preflight: Option<String>,
    pub applies_to: Vec<String>,
    pub missing_parts: Vec<String>,
    /// Host patterns of the plays whose tasks fix it.
    pub hosts: Vec<String>,
    pub parts: Vec<PartVerdict>,
    pub fact: Option<FactVerdict>,
}

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
                out.push(Facts {
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
/// idle, for each task the slower one holds (on kubespray's whole tree
/// `check`'s concern analysis and sysctl extraction waited 1-20 ms per run
/// that way). In opposite orders they meet once.
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

/// The result of evaluating a task's condition chain.
pub type CondResult = (Status, Vec<CondEvidence>, Vec<String>, Vec<String>);

/// One loop iteration of a reachable task (or the task itself without a loop).
pub struct Iteration<'s> {
    pub item: Option<serde_json::Value>,
    pub tv: TaskVars<'s>,
    pub(crate) fs: &'s crate::load::FsMemo,
    writes: OnceLock<Vec<Written>>,
    rendered: OnceLock<Vec<Option<String>>>,
    command: OnceLock<Option<String>>,
    conds: OnceLock<CondResult>,
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

    /// Files written (their contents are read on request: see
    /// [`Iteration::content`]).
    pub fn writes(&self, inst: &TaskInstance) -> &[Written] {
        self.writes.get_or_init(|| writes(inst, self))
    }

    /// What write `i` puts in its file as far as known: the text of a
    /// template as written (see [`Iteration::rendered`] for its rendering).
    /// Computed on first request: a pattern asks for it only when the path
    /// matches (on kubespray's whole tree this leaves out ~0.6% of a run's
    /// instructions; the contents patterns do look into, and the rendering
    /// of those that are templates, are most of the rest of that work).
    pub fn content(&self, inst: &TaskInstance, i: usize) -> &str {
        self.writes(inst).get(i).map_or("", |w| {
            w.content.get_or_init(|| content(inst, self, &w.from))
        })
    }

    /// The content of write `i` as rendered by Jinja, for templates whose
    /// variables are known (rendering is costly: done on first request).
    pub fn rendered(&self, inst: &TaskInstance, i: usize) -> Option<&str> {
        let all = self.rendered.get_or_init(|| {
            let is_template = crate::ansible::task::short_module(&inst.task.module) == "template";
            (0..self.writes(inst).len())
                .map(|w| {
                    let raw = self.content(inst, w);
                    if !is_template || !crate::ansible::project::is_templated(raw) {
                        return None;
                    }
                    match self.tv.render_text(raw) {
                        LookupOwned::Value(serde_json::Value::String(s)) => Some(s),
                        _ => None,
                    }
                })
                .collect()
        });
        all.get(i).and_then(Option::as_deref)
    }

    /// The command line of command/shell/raw tasks.
    pub fn command(&self, inst: &TaskInstance) -> Option<&str> {
        self.command
            .get_or_init(|| command_text(inst, self))
            .as_deref()
    }

    /// The task's condition chain, evaluated.
    pub fn conditions(&self, sources: &SourceMap, inst: &TaskInstance) -> &CondResult {
        self.conds
            .get_or_init(|| eval_conditions(sources, inst, &self.tv))
    }
}

/// A reachable task and its iterations, computed on first use.
pub struct Facts<'s> {
    pub reach: Reach<'s>,
    /// The caches of the tasks of its play (one allocation per distinct
    /// play), this task's at `slot`.
    caches: Arc<[FactsCache<'s>]>,
    slot: usize,
    /// The index (in [`Scope::reached`]) of the first of this task's twins:
    /// the same task instance of one play, reached from several entries.
    /// Twins differ only in their entry.
    pub first_twin: usize,
}

/// The iterations of one task instance, shared by the entries that reach
/// it through one shared play: computed on first use, until dropped (see
/// [`Iterations::drop_all`]). The lock is held while they are in use: a
/// task's variables are resolved by one thread at a time (see
/// `vars::TaskVars`), and the twins of a task, or two rules, may be on
/// different workers.
#[derive(Default)]
struct FactsCache<'s> {
    iters: Mutex<Option<Vec<Iteration<'s>>>>,
    /// The first panic in a pass over the task, reported (see
    /// [`internal_errors`]); boxed, as nearly every task has none.
    internal: OnceLock<Box<crate::diagnostic::Diagnostic>>,
}

/// A task's iterations, held for one thread's use (see [`Facts::iterations`]).
pub struct Iterations<'f, 's> {
    held: MutexGuard<'f, Option<Vec<Iteration<'s>>>>,
}

impl Iterations<'_, '_> {
    /// Drops the task's iterations, with everything computed in them, as
    /// the hold ends (they are computed again if asked for): memory the
    /// next tasks reuse.
    fn drop_all(mut self) {
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
    fn cache(&self) -> &FactsCache<'s> {
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
            let iteration = |item: Option<serde_json::Value>, tv: TaskVars<'s>| Iteration {
                item,
                tv,
                fs: scope.fs,
                writes: OnceLock::new(),
                rendered: OnceLock::new(),
                command: OnceLock::new(),
                conds: OnceLock::new(),
                args: OnceLock::new(),
            };
            match loop_items(self.reach.inst, &base) {
                Some(items) if !items.is_empty() => items
                    .into_iter()
                    .map(|it| {
                        iteration(
                            Some(it.clone()),
                            TaskVars::new(pv, Some(self.reach.inst)).with_item(it),
                        )
                    })
                    .collect(),
                _ => vec![iteration(None, base)],
            }
        });
        Iterations { held }
    }

    /// Whether the task's iterations are computed and kept.
    #[cfg(test)]
    fn has_iterations(&self) -> bool {
        self.cache()
            .iters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

fn bool_canon(s: &str) -> String {
    match s {
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => "true".into(),
        "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => "false".into(),
        other => other.to_string(),
    }
}

pub(crate) fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// An argument's text after rendering (the template as written when unknown).
pub(crate) fn arg_text(tv: &TaskVars<'_>, node: &Node) -> String {
    match tv.value(node) {
        LookupOwned::Value(v) => json_text(&v),
        _ => node
            .scalar_text()
            .unwrap_or_else(|| node.to_json().to_string()),
    }
}

pub(crate) fn command_text(inst: &TaskInstance, it: &Iteration<'_>) -> Option<String> {
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

pub(crate) fn read_role_file(
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

/// A file a task writes.
pub struct Written {
    pub path: String,
    from: ContentFrom,
    content: OnceLock<Arc<str>>,
}

impl Written {
    fn new(path: String, from: ContentFrom) -> Self {
        Written {
            path,
            from,
            content: OnceLock::new(),
        }
    }
}

/// Where the content of a write comes from.
enum ContentFrom {
    /// An argument's text (`content`, `line`, `block`, `replace`).
    Arg(&'static str),
    /// `content`, else the role file `src` (copy).
    CopyContentOrSrc,
    /// The role template `src`, as written.
    TemplateSrc,
    /// Known when the write was found.
    Text(Arc<str>),
}

/// The files a task writes. What it puts there is asked for separately
/// ([`content`]), as only writes whose path a pattern matches need it.
pub(crate) fn writes(inst: &TaskInstance, it: &Iteration<'_>) -> Vec<Written> {
    let t = &inst.task;
    let text = |k: &str| it.arg(inst, k).map(str::to_string);
    let path = || {
        text("path")
            .or_else(|| text("dest"))
            .or_else(|| text("name"))
    };
    let Some(kind) = write_kind(&t.module) else {
        return Vec::new();
    };
    let at = |p: Option<String>, from: ContentFrom| {
        p.map(|p| Written::new(p, from)).into_iter().collect()
    };
    match kind {
        WriteKind::Copy => at(text("dest"), ContentFrom::CopyContentOrSrc),
        WriteKind::Template => at(text("dest"), ContentFrom::TemplateSrc),
        WriteKind::LineInFile => at(path(), ContentFrom::Arg("line")),
        WriteKind::BlockInFile => at(path(), ContentFrom::Arg("block")),
        WriteKind::Replace => at(path(), ContentFrom::Arg("replace")),
        WriteKind::IniFile => path()
            .map(|p| {
                let line = format!(
                    "{} = {}",
                    text("option").unwrap_or_default(),
                    text("value").unwrap_or_default()
                );
                Written::new(p, ContentFrom::Text(line.into()))
            })
            .into_iter()
            .collect(),
        WriteKind::Modprobe => {
            if text("persistent").as_deref() == Some("present") {
                let name = text("name").unwrap_or_default();
                vec![Written::new(
                    format!("/etc/modules-load.d/{name}.conf"),
                    ContentFrom::Text(name.into()),
                )]
            } else {
                Vec::new()
            }
        }
        WriteKind::Sysctl => {
            if text("state").as_deref() == Some("absent") {
                return Vec::new();
            }
            let file = text("sysctl_file").unwrap_or_else(|| "/etc/sysctl.conf".into());
            vec![Written::new(
                file,
                ContentFrom::Text(
                    format!(
                        "{} = {}",
                        text("name").unwrap_or_default(),
                        text("value").unwrap_or_default()
                    )
                    .into(),
                ),
            )]
        }
    }
}

/// What a write puts in its file (a file's text is shared with the file
/// system memo, not copied).
fn content(inst: &TaskInstance, it: &Iteration<'_>, from: &ContentFrom) -> Arc<str> {
    let fs = it.fs;
    let text = |k: &str| it.arg(inst, k);
    let shared = |k: &str| text(k).map(Arc::<str>::from);
    match from {
        ContentFrom::Arg(k) => shared(k).unwrap_or_default(),
        ContentFrom::CopyContentOrSrc => shared("content")
            .or_else(|| text("src").and_then(|s| read_role_file(inst, "files", s, fs)))
            .unwrap_or_default(),
        ContentFrom::TemplateSrc => text("src")
            .and_then(|s| read_role_file(inst, "templates", s, fs))
            .unwrap_or_default(),
        ContentFrom::Text(t) => Arc::clone(t),
    }
}

/// The modules [`writes`] knows the written files of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteKind {
    Copy,
    Template,
    LineInFile,
    BlockInFile,
    Replace,
    IniFile,
    Modprobe,
    Sysctl,
}

/// What kind of writer a module is for [`writes`]; `None`: its tasks write
/// no file it knows of.
fn write_kind(module: &str) -> Option<WriteKind> {
    let short = crate::ansible::task::short_module(module);
    Some(match (module, short) {
        (_, "copy") => WriteKind::Copy,
        (_, "template") => WriteKind::Template,
        ("ansible.builtin.lineinfile", _) => WriteKind::LineInFile,
        ("ansible.builtin.blockinfile", _) => WriteKind::BlockInFile,
        ("ansible.builtin.replace", _) => WriteKind::Replace,
        ("community.general.ini_file" | "ansible.builtin.ini_file", _) => WriteKind::IniFile,
        ("community.general.modprobe", _) => WriteKind::Modprobe,
        ("ansible.posix.sysctl", _) => WriteKind::Sysctl,
        _ => return None,
    })
}

/// Whether [`command_text`] gives the task a command line.
fn has_command(t: &crate::ansible::task::Task) -> bool {
    t.arg("_raw_params").or_else(|| t.arg("cmd")).is_some()
        || t.arg("argv").and_then(Node::as_seq).is_some()
}

/// Whether `p` may match a task of `module` (with a command line or not):
/// its module list admits it, and what it asks the task to write or run is
/// something such a task can write or run.
fn admits(p: &Pattern, module: &str, command: bool) -> bool {
    (p.modules.is_empty() || p.modules.iter().any(|m| m == module))
        && (p.writes.is_none() || write_kind(module).is_some())
        && (p.command.is_none() || command)
}

fn pattern_matches(p: &Pattern, inst: &TaskInstance, it: &Iteration<'_>) -> bool {
    let t = &inst.task;
    if !p.modules.is_empty() && !p.modules.iter().any(|m| *m == t.module) {
        return false;
    }
    for (key, m) in &p.args {
        let value = it.arg(inst, key).map(bool_canon);
        let ok = match m {
            ArgMatch::OneOf(allowed) => allowed.iter().any(|a| match (a, &value) {
                (None, None) => true,
                (Some(a), Some(v)) => bool_canon(a) == *v,
                _ => false,
            }),
            ArgMatch::Regex(r) => value.as_deref().is_some_and(|v| r.is_match(v)),
            ArgMatch::Not(vals) => value
                .as_deref()
                .is_none_or(|v| !vals.iter().any(|x| bool_canon(x) == v)),
        };
        if !ok {
            return false;
        }
    }
    if let Some(r) = &p.command {
        match it.command(inst) {
            Some(c) if r.is_match(c) => {}
            _ => return false,
        }
    }
    if let Some((path_re, content_re)) = &p.writes {
        // The source's literal lines first; the rendered template only when needed.
        let ok = it.writes(inst).iter().enumerate().any(|(i, w)| {
            path_re.is_match(&w.path)
                && content_re.as_ref().is_none_or(|c| {
                    c.is_match(it.content(inst, i))
                        || it.rendered(inst, i).is_some_and(|r| c.is_match(r))
                })
        });
        if !ok {
            return false;
        }
    }
    true
}

fn var_evidence(sources: &SourceMap, tv: &TaskVars<'_>, name: &str) -> VarEvidence {
    let r = tv.resolve(name);
    let (value, known) = match &r.lookup {
        LookupOwned::Value(v) => (json_text(v), true),
        LookupOwned::Unknown(why) => (format!("unknown ({})", why_label(why)), false),
        LookupOwned::Missing => ("undefined".into(), false),
    };
    let all = tv.all_definitions(name);
    let winner = r.winner.as_ref();
    let overrides = all
        .iter()
        .filter(|d| winner.is_none_or(|w| w.span != d.span))
        .map(|d| format!("{}:{}", sources.display(d.span.file), d.span.line))
        .collect();
    VarEvidence {
        name: name.to_string(),
        value,
        known,
        source: winner.map(|w| w.source.clone()),
        file: winner.map(|w| sources.display(w.span.file)),
        line: winner.map(|w| w.span.line),
        overrides,
    }
}

pub(crate) fn why_label(w: &UnknownWhy) -> &'static str {
    match w {
        UnknownWhy::Fact => "host fact",
        UnknownWhy::Registered => "registered result",
        UnknownWhy::RuntimeFact => "set_fact at run time",
        UnknownWhy::Unset => "not set",
        UnknownWhy::Vault => "vault-encrypted",
        UnknownWhy::Lookup => "lookup at run time",
        UnknownWhy::TooComplex => "not evaluated statically",
        UnknownWhy::Cycle => "refers to itself",
    }
}

/// Evaluates a task's condition chain: its status and the evidence.
fn eval_conditions(
    sources: &SourceMap,
    inst: &TaskInstance,
    tv: &TaskVars<'_>,
) -> (Status, Vec<CondEvidence>, Vec<String>, Vec<String>) {
    let mut evidence = Vec::new();
    let mut any_false = false;
    let mut turn_on = BTreeSet::new();
    let mut runtime = BTreeSet::new();
    let mut needs_operator = false;
    for c in inst.conditions.iter() {
        let result = jinja::eval_condition(&c.expr, tv);
        let names = jinja::referenced_variables(&c.expr);
        let (label, depends) = match &result {
            Tri::True => ("true", Vec::new()),
            Tri::False => {
                any_false = true;
                for n in &names {
                    turn_on.insert(n.clone());
                }
                ("false", Vec::new())
            }
            Tri::Unknown(us) => {
                for u in us {
                    match u.why {
                        UnknownWhy::Fact
                        | UnknownWhy::Registered
                        | UnknownWhy::RuntimeFact
                        | UnknownWhy::Lookup => {
                            runtime.insert(u.var.clone());
                        }
                        _ => {
                            needs_operator = true;
                            turn_on.insert(u.var.clone());
                        }
                    }
                }
                (
                    "unknown",
                    us.iter()
                        .map(|u| format!("{} ({})", u.var, why_label(&u.why)))
                        .collect(),
                )
            }
        };
        evidence.push(CondEvidence {
            expr: c.expr.to_string(),
            file: sources.display(c.span.file),
            line: c.span.line,
            origin: c.origin,
            result: label,
            depends_on: depends,
            vars: names.iter().map(|n| var_evidence(sources, tv, n)).collect(),
        });
    }
    let status = if any_false || needs_operator {
        Status::Conditional
    } else if !runtime.is_empty() {
        Status::FixedWhenRuntime
    } else {
        Status::Fixed
    };
    (
        status,
        evidence,
        turn_on.into_iter().collect(),
        runtime.into_iter().collect(),
    )
}

/// The loop items of a task when they are known statically.
pub(crate) fn loop_items(inst: &TaskInstance, tv: &TaskVars<'_>) -> Option<Vec<serde_json::Value>> {
    let node = inst.task.loop_items.as_ref()?;
    match tv.value(node) {
        LookupOwned::Value(serde_json::Value::Array(items)) => Some(items),
        LookupOwned::Value(v @ serde_json::Value::String(_)) => Some(vec![v]),
        _ => None,
    }
}

/// What becomes of a task's iterations (its variables, rendered arguments
/// and contents) once the analysis has taken its evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IterationsAfter {
    /// Kept for the passes that read them next (`check`'s sysctl
    /// extraction and rules).
    Kept,
    /// Dropped, when nothing reads them again (`who-fixes`): the next
    /// tasks' iterations reuse their memory instead of fresh pages
    /// (kubespray's whole tree: resident 46 -> 42 MB, the analysis 12.1 ->
    /// 11.3 ms).
    Dropped,
}

/// Computes every concern's verdict.
#[must_use]
pub fn analyze<'s>(
    project: &Project,
    sources: &SourceMap,
    catalog: &[Concern],
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    after: IterationsAfter,
) -> Vec<Verdict> {
    let play_vars = &scope.play_vars;
    let mut found = match_tasks(sources, catalog, scope, reached, after).into_iter();
    let mut verdicts: Vec<Verdict> = catalog
        .iter()
        .filter(|c| c.fact.is_none())
        .map(|c| {
            let evidence: Vec<[Vec<TaskEvidence>; 2]> = c
                .parts
                .iter()
                .map(|_| found.next().unwrap_or_default())
                .collect();
            concern_verdict(project, c, evidence)
        })
        .collect();
    let reach: Vec<&Reach<'_>> = reached.iter().map(|f| &f.reach).collect();
    for c in catalog.iter().filter(|c| c.fact.is_some()) {
        verdicts.push(fact_verdict(
            project, sources, c, &verdicts, &reach, play_vars,
        ));
    }
    verdicts.sort_by(|a, b| a.id.cmp(&b.id));
    verdicts
}

/// The fix and check evidence of every part of every concern that is not
/// a fact (in catalog order), each list in the order of the reached tasks.
///
/// One parallel pass over the tasks, each by one worker (see
/// `Facts::iterations`): a task is matched only against the patterns whose
/// modules admit it.
fn match_tasks<'s>(
    sources: &SourceMap,
    catalog: &[Concern],
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    after: IterationsAfter,
) -> Vec<[Vec<TaskEvidence>; 2]> {
    // One slot per part and role with patterns:
    // (part index, role index, part, role name, patterns).
    let mut slots: Vec<(usize, usize, &Part, &'static str, &[Pattern])> = Vec::new();
    let parts: Vec<&Part> = catalog
        .iter()
        .filter(|c| c.fact.is_none())
        .flat_map(|c| &c.parts)
        .collect();
    for (pi, part) in parts.iter().enumerate() {
        for (ri, (role, patterns)) in [("fix", &part.fix), ("check", &part.check)]
            .into_iter()
            .enumerate()
        {
            if !patterns.is_empty() {
                slots.push((pi, ri, part, role, patterns));
            }
        }
    }
    // The slots a task may match, in slot order, by its module and whether
    // it has a command line: a task no slot admits is not even rendered.
    // Computed here per module (thousands of tasks share a few hundred
    // tasks' modules); whether a task has a command line, in the parallel
    // pass.
    let mut tasks: crate::HashSet<usize> = crate::HashSet::default();
    let mut admitted: crate::HashMap<(&str, bool), Vec<usize>> = crate::HashMap::default();
    for facts in reached {
        let t = &facts.reach.inst.task;
        if !tasks.insert(Arc::as_ptr(t) as usize) {
            continue;
        }
        for command in [false, true] {
            let key = (t.module.as_str(), command);
            admitted.entry(key).or_insert_with(|| {
                (0..slots.len())
                    .filter(|&si| slots[si].4.iter().any(|p| admits(p, key.0, key.1)))
                    .collect()
            });
        }
    }
    // A twin gives what the first of its twins gives, from its own entry.
    let twin = |facts: &Facts<'_>, (si, e): &(usize, TaskEvidence)| {
        let mut e = e.clone();
        facts.reach.entry.clone_into(&mut e.entry);
        (*si, e)
    };
    let per_task = per_task(
        reached,
        |facts| {
            let t = &facts.reach.inst.task;
            let candidates = admitted
                .get(&(t.module.as_str(), has_command(t)))
                .map_or(&[][..], Vec::as_slice);
            if candidates.is_empty() {
                return Vec::new();
            }
            let iters = facts.iterations(scope);
            let evidence = candidates
                .iter()
                .filter_map(|&si| {
                    let (_, _, part, role, patterns) = slots[si];
                    task_evidence(sources, part, role, patterns, facts, &iters).map(|e| (si, e))
                })
                .collect();
            if after == IterationsAfter::Dropped {
                iters.drop_all();
            }
            evidence
        },
        twin,
    );
    let mut out: Vec<[Vec<TaskEvidence>; 2]> = parts.iter().map(|_| Default::default()).collect();
    for (si, e) in per_task {
        let (pi, ri, ..) = slots[si];
        out[pi][ri].push(e);
    }
    out
}

/// The evidence one reachable task gives for a part (`role` is `fix` or
/// `check`): its first loop iteration that matches one of the patterns.
fn task_evidence(
    sources: &SourceMap,
    part: &Part,
    role: &'static str,
    patterns: &[Pattern],
    facts: &Facts<'_>,
    iters: &[Iteration<'_>],
) -> Option<TaskEvidence> {
    let r = &facts.reach;
    for it in iters {
        let Some(pat) = patterns.iter().find(|p| pattern_matches(p, r.inst, it)) else {
            continue;
        };
        let (status, conds, on, rt) = it.conditions(sources, r.inst).clone();
        let status = if role == "check" {
            Status::CheckedOnly
        } else {
            status
        };
        return Some(TaskEvidence {
            part: part.name.clone(),
            role,
            status,
            file: sources.display(r.inst.task.span.file),
            line: r.inst.task.span.line,
            task: r.inst.task.display_name().to_string(),
            module: r.inst.task.module.clone(),
            roles: r.inst.roles.to_vec(),
            entry: r.entry.to_string(),
            hosts: r.play.hosts.clone(),
            item: it.item.as_ref().map(json_text),
            turn_on: on,
            runtime: rt,
            requires: pat.requires.clone(),
            writes: it.writes(r.inst).iter().map(|w| w.path.clone()).collect(),
            conditions: conds,
        });
    }
    None
}

/// A concern's verdict from the fix and check evidence of each of its parts.
fn concern_verdict(project: &Project, c: &Concern, found: Vec<[Vec<TaskEvidence>; 2]>) -> Verdict {
    let mut parts = Vec::new();
    for (part, [fix, check]) in c.parts.iter().zip(found) {
        let mut evidence = fix;
        evidence.extend(check);
        evidence.sort_by(|a, b| {
            (a.status, &a.file, a.line, &a.entry).cmp(&(b.status, &b.file, b.line, &b.entry))
        });
        evidence.dedup_by(|a, b| {
            a.file == b.file && a.line == b.line && a.status == b.status && a.item == b.item
        });
        let groups = by_hosts(&evidence);
        // When host groups differ, the part is only as done as its weakest group.
        let status = groups
            .iter()
            .map(|g| g.status)
            .max()
            .or_else(|| evidence.first().map(|e| e.status))
            .unwrap_or(Status::Operator);
        let (turn_on, runtime) = summarize(&evidence, status);
        parts.push(PartVerdict {
            name: part.name.clone(),
            status,
            by_hosts: groups,
            turn_on,
            runtime,
            evidence,
        });
    }
    apply_requirements(&mut parts);
    let fixed = |s: Status| {
        matches!(
            s,
            Status::Fixed | Status::FixedWhenRuntime | Status::Conditional
        )
    };
    let n_fixed = parts.iter().filter(|p| fixed(p.status)).count();
    let missing_parts: Vec<String> = parts
        .iter()
        .filter(|p| !fixed(p.status))
        .map(|p| p.name.clone())
        .collect();
    let weakest = parts
        .iter()
        .map(|p| p.status)
        .max()
        .unwrap_or(Status::Operator);
    let overall = if n_fixed == parts.len() && !parts.is_empty() {
        match weakest {
            Status::Fixed => Overall::Fixed,
            Status::FixedWhenRuntime => Overall::FixedWhenRuntime,
            _ => Overall::Conditional,
        }
    } else if n_fixed > 0 {
        Overall::Partial
    } else if parts.iter().any(|p| p.status == Status::CheckedOnly) {
        Overall::CheckedOnly
    } else {
        Overall::Operator
    };
    let who = match overall {
        Overall::Fixed | Overall::FixedWhenRuntime => project.name.clone(),
        Overall::Conditional => "conditional".into(),
        Overall::Partial => "partial".into(),
        Overall::CheckedOnly => "checked".into(),
        Overall::Operator | Overall::Fact => "operator".into(),
    };
    let hosts: BTreeSet<String> = parts
        .iter()
        .flat_map(|p| {
            p.evidence
                .iter()
                .filter(|e| e.status == p.status && e.role == "fix")
        })
        .map(|e| e.hosts.clone())
        .collect();
    Verdict {
        id: c.id.clone(),
        title: c.title.clone(),
        overall,
        who,
        preflight: c.preflight.clone(),
        applies_to: c.applies_to.clone(),
        missing_parts: if overall == Overall::Partial {
            missing_parts
        } else {
            Vec::new()
        },
        hosts: hosts.into_iter().collect(),
        parts,
        fact: None,
    }
}

/// The variables behind the strongest evidence of a part.
fn summarize(evidence: &[TaskEvidence], status: Status) -> (Vec<String>, Vec<String>) {
    let mut turn_on = BTreeSet::new();
    let mut runtime = BTreeSet::new();
    for e in evidence.iter().filter(|e| e.status == status) {
        if status == Status::Conditional {
            turn_on.extend(e.turn_on.iter().cloned());
        }
        if matches!(status, Status::Conditional | Status::FixedWhenRuntime) {
            runtime.extend(e.runtime.iter().cloned());
        }
    }
    (turn_on.into_iter().collect(), runtime.into_iter().collect())
}

/// Evidence that only applies what another part persisted (`sysctl
/// --system`) is no stronger than that part, and nothing without it.
fn apply_requirements(parts: &mut [PartVerdict]) {
    let statuses: Vec<(String, Status)> =
        parts.iter().map(|p| (p.name.clone(), p.status)).collect();
    for p in parts.iter_mut() {
        let mut changed = false;
        p.evidence.retain_mut(|e| {
            let Some(req) = &e.requires else { return true };
            let Some((_, st)) = statuses.iter().find(|(n, _)| n == req) else {
                return true;
            };
            changed = true;
            if *st == Status::Operator || *st == Status::CheckedOnly {
                return false;
            }
            e.status = e.status.max(*st);
            true
        });
        if changed {
            p.evidence.sort_by(|a, b| {
                (a.status, &a.file, a.line, &a.entry).cmp(&(b.status, &b.file, b.line, &b.entry))
            });
            p.status = p.evidence.first().map_or(Status::Operator, |e| e.status);
            let (t, r) = summarize(&p.evidence, p.status);
            p.turn_on = t;
            p.runtime = r;
        }
    }
}

/// A fact concern: the value of an argument used by other concerns' fixes.
fn fact_verdict(
    project: &Project,
    sources: &SourceMap,
    c: &Concern,
    verdicts: &[Verdict],
    reach: &[&Reach<'_>],
    play_vars: &[PlayVars],
) -> Verdict {
    let Some(fact) = &c.fact else {
        unreachable!("fact_verdict is called for fact concerns only")
    };
    // The files the named concerns' fixing tasks write, in catalog order,
    // strongest fix first.
    let mut sites: Vec<(usize, Status, String, u32, String)> = Vec::new();
    for (rank, id) in fact.from_concerns.iter().enumerate() {
        for v in verdicts.iter().filter(|v| &v.id == id) {
            for e in v
                .parts
                .iter()
                .flat_map(|p| &p.evidence)
                .filter(|e| e.role == "fix")
            {
                for w in &e.writes {
                    sites.push((rank, e.status, e.file.clone(), e.line, w.clone()));
                }
            }
        }
    }
    sites.sort();
    sites.dedup();
    let mut value = fact.default.clone();
    let mut variable = None;
    let mut definitions = Vec::new();
    let mut winner_reason = None;
    let mut runtime_changes = Vec::new();
    let mut used_at: Vec<String> = sites
        .iter()
        .map(|(_, _, f, l, _)| format!("{f}:{l}"))
        .collect();
    used_at.dedup();
    if let Some((_, _, file, line, path)) = sites.first() {
        value.clone_from(path);
        let site = reach.iter().find(|r| {
            sources.display(r.inst.task.span.file) == *file && r.inst.task.span.line == *line
        });
        if let Some(r) = site.filter(|r| fact.modules.contains(&r.inst.task.module)) {
            let tv = TaskVars::new(&play_vars[r.play_vars], Some(r.inst));
            if let Some(arg) = r.inst.task.arg(&fact.arg) {
                let raw = arg.scalar_text().unwrap_or_default();
                let names = jinja::referenced_variables(&raw);
                if let Some(name) = names.first() {
                    variable = Some(name.clone());
                    let ev = var_evidence(sources, &tv, name);
                    for d in tv.all_definitions(name) {
                        definitions.push(VarEvidence {
                            name: name.clone(),
                            value: d.value.scalar_text().unwrap_or_default(),
                            known: true,
                            source: Some(d.source.clone()),
                            file: Some(sources.display(d.span.file)),
                            line: Some(d.span.line),
                            overrides: Vec::new(),
                        });
                    }
                    // Definitions elsewhere in the tree (roles of other plays).
                    let mut roles: Vec<_> = project.roles.values().collect();
                    roles.sort_by(|a, b| a.path.cmp(&b.path));
                    for role in roles {
                        for layer in role.defaults.iter().chain(&role.vars) {
                            if let Some((k, v)) = layer.node.get_entry(name) {
                                let file = sources.display(k.span.file);
                                if definitions.iter().any(|d| {
                                    d.file.as_deref() == Some(file.as_str())
                                        && d.line == Some(k.span.line)
                                }) {
                                    continue;
                                }
                                definitions.push(VarEvidence {
                                    name: name.clone(),
                                    value: v.scalar_text().unwrap_or_default(),
                                    known: true,
                                    source: Some(format!(
                                        "{} (not visible to this task)",
                                        crate::vars::label(&layer.kind)
                                    )),
                                    file: Some(file),
                                    line: Some(k.span.line),
                                    overrides: Vec::new(),
                                });
                            }
                        }
                    }
                    winner_reason = ev.source.as_ref().map(|s| {
                        format!(
                            "{s} at {}:{} wins over the other {} definition(s): highest precedence, and the last loaded among equals",
                            ev.file.clone().unwrap_or_default(),
                            ev.line.unwrap_or(0),
                            definitions.len().saturating_sub(1)
                        )
                    });
                    if let Some(spans) = play_vars[r.play_vars].set_facts.get(name) {
                        runtime_changes = spans
                            .iter()
                            .map(|(s, _)| format!("{}:{}", sources.display(s.file), s.line))
                            .collect();
                        runtime_changes.sort();
                        runtime_changes.dedup();
                    }
                }
            }
        }
    }
    Verdict {
        id: c.id.clone(),
        title: c.title.clone(),
        overall: Overall::Fact,
        who: value.clone(),
        preflight: None,
        applies_to: c.applies_to.clone(),
        missing_parts: Vec::new(),
        hosts: Vec::new(),
        parts: Vec::new(),
        fact: Some(FactVerdict {
            value,
            variable,
            definitions,
            winner_reason,
            runtime_changes,
            used_at,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// What the built-in catalog's patterns admit: a pattern for writes
    /// admits only modules `writes` knows, one for a command only tasks
    /// with a command line, one with modules only those modules.
    #[test]
    fn patterns_admit_only_tasks_they_can_match() {
        let catalog = super::super::catalog::load(None).expect("built-in catalog");
        let patterns: Vec<&Pattern> = catalog
            .iter()
            .flat_map(|c| &c.parts)
            .flat_map(|p| p.fix.iter().chain(&p.check))
            .collect();
        let writes_only = patterns
            .iter()
            .filter(|p| p.modules.is_empty() && p.writes.is_some())
            .collect::<Vec<_>>();
        assert!(!writes_only.is_empty());
        for p in writes_only {
            for m in [
                "ansible.builtin.debug",
                "ansible.builtin.set_fact",
                "ansible.builtin.command",
            ] {
                assert!(!admits(p, m, true), "{m}");
            }
            for m in [
                "ansible.builtin.template",
                "ansible.builtin.copy",
                "ansible.posix.sysctl",
            ] {
                assert!(admits(p, m, false), "{m}");
            }
        }
        let commands = patterns
            .iter()
            .filter(|p| p.command.is_some() && p.writes.is_none())
            .collect::<Vec<_>>();
        assert!(!commands.is_empty());
        for p in commands {
            let m = p
                .modules
                .first()
                .map_or("ansible.builtin.shell", String::as_str);
            assert!(admits(p, m, true), "{m}");
            assert!(!admits(p, m, false), "{m} without a command line");
        }
        for p in patterns.iter().filter(|p| !p.modules.is_empty()) {
            assert!(!admits(p, "ansible.builtin.debug", true));
        }
    }

    /// A tree where `a.yml` and `b.yml` import one playbook the same way,
    /// plus `c.yml` running the role in a play of its own.
    const TREE: &[(&str, &str)] = &[
        ("a.yml", "- import_playbook: pb/inner.yml\n"),
        ("b.yml", "- import_playbook: pb/inner.yml\n"),
        ("c.yml", "- import_playbook: pb/other.yml\n"),
        ("pb/inner.yml", "- hosts: all\n  roles: [r]\n"),
        (
            "pb/other.yml",
            "- hosts: all\n  vars: {x: 1}\n  roles: [r]\n",
        ),
        (
            "pb/roles/r/tasks/main.yml",
            "- name: swap off\n  ansible.builtin.command: swapoff -a\n- name: two\n  ansible.builtin.debug: {msg: hi}\n",
        ),
    ];

    fn loaded(dir: &Path) -> crate::run::Loaded {
        crate::check::testing::load(dir)
    }

    #[test]
    fn twins_are_computed_once_and_get_what_the_first_got_from_their_entry() {
        let dir = crate::check::testing::tree(TREE);
        let l = loaded(dir.path());
        let scope = Scope::new(&l.project, &l.extra, None);
        let reached = scope.reached();
        let line = |f: &Facts<'_>| f.reach.inst.task.span.line;
        let calls = AtomicUsize::new(0);
        let got = per_task(
            &reached,
            |f| {
                calls.fetch_add(1, Ordering::Relaxed);
                vec![(line(f), f.reach.entry.to_string())]
            },
            |f, (l, _)| (*l, f.reach.entry.to_string()),
        );
        let every: Vec<(u32, String)> = reached
            .iter()
            .map(|f| (line(f), f.reach.entry.to_string()))
            .collect();
        assert_eq!(got, every);
        // a.yml and b.yml share their play: its two tasks are done once.
        assert_eq!(reached.len(), 6);
        assert_eq!(calls.load(Ordering::Relaxed), 4);
        let twins: Vec<(usize, usize)> = reached
            .iter()
            .enumerate()
            .filter(|(i, f)| f.first_twin != *i)
            .map(|(i, f)| (i, f.first_twin))
            .collect();
        assert_eq!(twins, [(2, 0), (3, 1)]);
    }

    #[test]
    fn from_the_end_the_tasks_are_taken_last_first_and_listed_in_order() {
        let dir = crate::check::testing::tree(TREE);
        let l = loaded(dir.path());
        let scope = Scope::new(&l.project, &l.extra, None);
        let reached = scope.reached();
        fn index_of<'s>(reached: &[Facts<'s>], f: &Facts<'s>) -> usize {
            reached
                .iter()
                .position(|r| std::ptr::eq(r, f))
                .expect("reached")
        }
        let taken = Mutex::new(Vec::new());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool");
        let forward = pool.install(|| {
            per_task(
                &reached,
                |f| vec![(index_of(&reached, f), f.reach.entry.to_string())],
                |f, (i, _)| (*i, f.reach.entry.to_string()),
            )
        });
        let backward = pool.install(|| {
            per_task_from_end(
                &reached,
                |f| {
                    taken.lock().expect("lock").push(index_of(&reached, f));
                    vec![(index_of(&reached, f), f.reach.entry.to_string())]
                },
                |f, (i, _)| (*i, f.reach.entry.to_string()),
            )
        });
        assert_eq!(forward, backward);
        let mut expected: Vec<usize> = (0..reached.len())
            .filter(|&i| reached[i].first_twin == i)
            .collect();
        expected.reverse();
        assert_eq!(taken.into_inner().expect("lock"), expected);
    }

    #[test]
    fn dropped_iterations_give_the_same_verdicts_and_are_computed_again() {
        let dir = crate::check::testing::tree(TREE);
        let l = loaded(dir.path());
        let catalog = crate::concern::catalog::load(None).expect("catalog");
        let verdicts = |after| {
            let scope = Scope::new(&l.project, &l.extra, None);
            let reached = scope.reached();
            let v = analyze(&l.project, &l.sources, &catalog, &scope, &reached, after);
            let kept: Vec<bool> = reached.iter().map(Facts::has_iterations).collect();
            // Asked again, a task's iterations are there either way.
            let again: Vec<usize> = reached.iter().map(|f| f.iterations(&scope).len()).collect();
            let swap_evidence = v
                .iter()
                .filter(|v| v.id == "swap")
                .flat_map(|v| &v.parts)
                .map(|p| p.evidence.len())
                .sum::<usize>();
            assert!(swap_evidence > 0, "the swap task is evidence");
            (serde_json::to_string(&v).expect("json"), kept, again)
        };
        let (kept_v, kept, kept_again) = verdicts(IterationsAfter::Kept);
        let (dropped_v, dropped, dropped_again) = verdicts(IterationsAfter::Dropped);
        assert_eq!(kept_v, dropped_v);
        assert_eq!(kept_again, dropped_again);
        // The swap task's iterations were computed for its evidence: kept,
        // or dropped right after.
        assert!(kept.iter().any(|&k| k));
        assert!(dropped.iter().all(|&k| !k));
    }

    #[test]
    fn a_twins_evidence_names_its_own_entry() {
        let dir = crate::check::testing::tree(TREE);
        let l = loaded(dir.path());
        let catalog = crate::concern::catalog::load(None).expect("catalog");
        let scope = Scope::new(&l.project, &l.extra, None);
        let reached = scope.reached();
        let verdicts = analyze(
            &l.project,
            &l.sources,
            &catalog,
            &scope,
            &reached,
            IterationsAfter::Kept,
        );
        let swap = verdicts
            .iter()
            .find(|v| v.id == "swap")
            .expect("swap concern");
        let entries: Vec<&str> = swap
            .parts
            .iter()
            .flat_map(|p| &p.evidence)
            .map(|e| e.entry.as_str())
            .collect();
        // One task, one status: the evidence of the first entry is kept
        // (see `concern_verdict`), whichever entry computed it.
        assert_eq!(entries, ["a.yml"]);
        let found = match_tasks(
            &l.sources,
            &catalog,
            &scope,
            &reached,
            IterationsAfter::Kept,
        );
        let mut all: Vec<&str> = found
            .iter()
            .flat_map(|[fix, check]| fix.iter().chain(check))
            .filter(|e| e.module == "ansible.builtin.command")
            .map(|e| e.entry.as_str())
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, ["a.yml", "b.yml", "c.yml"]);
    }

    #[test]
    fn an_iterations_argument_is_rendered_once_as_arg_text_renders_it() {
        let dir = crate::check::testing::tree(&[
            (
                "site.yml",
                "- hosts: all\n  vars: {k: net.ipv4.ip_forward}\n  roles: [r]\n",
            ),
            (
                "roles/r/tasks/main.yml",
                "- ansible.posix.sysctl:\n    name: \"{{ k }}\"\n    value: \"{{ item }}\"\n  loop: [0, 1]\n",
            ),
        ]);
        let l = loaded(dir.path());
        let scope = Scope::new(&l.project, &l.extra, None);
        let reached = scope.reached();
        let facts = &reached[0];
        let inst = facts.reach.inst;
        let iters = facts.iterations(&scope);
        assert_eq!(iters.len(), 2);
        for (it, item) in iters.iter().zip(["0", "1"]) {
            for key in ["name", "value"] {
                let node = inst.task.arg(key).expect("has the argument");
                let first = it.arg(inst, key).expect("rendered");
                assert_eq!(first, arg_text(&it.tv, node));
                // The second request is the first's text, not a new render.
                assert!(std::ptr::eq(first, it.arg(inst, key).expect("kept")));
            }
            assert_eq!(it.arg(inst, "name"), Some("net.ipv4.ip_forward"));
            assert_eq!(it.arg(inst, "value"), Some(item));
            assert_eq!(it.arg(inst, "sysctl_file"), None);
        }
    }
}
