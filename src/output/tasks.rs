//! `preflint tasks`: the ordered reachable tasks, as text or JSON, and with
//! `--effects` the effects of each.

use crate::ansible::project::{Play, TaskInstance};
use crate::ansible::task::Condition;
use crate::loaded::Loaded;
use crate::reach::{Evaluated, IterationEffects};
use crate::source::SourceMap;
use serde::Serialize;
use std::fmt::Write;

#[derive(Serialize)]
struct JsonCondition {
    expr: String,
    file: String,
    line: u32,
    origin: crate::ansible::task::Origin,
}

#[derive(Serialize)]
struct JsonInclude {
    kind: &'static str,
    target: String,
    resolved: bool,
}

#[derive(Serialize)]
struct JsonTask<'a> {
    name: Option<String>,
    action: String,
    module: String,
    file: String,
    line: u32,
    column: u32,
    roles: Vec<String>,
    section: crate::ansible::project::Section,
    dynamic: bool,
    duplicate: bool,
    blocks: Vec<crate::ansible::project::BlockPart>,
    tags: Vec<String>,
    include: Option<JsonInclude>,
    when: Vec<JsonCondition>,
    /// Only with `--effects`: the listing stays as it was without.
    #[serde(skip_serializing_if = "Option::is_none")]
    effects: Option<&'a [IterationEffects]>,
    /// Only with `--evaluated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluated: Option<&'a Evaluated>,
}

#[derive(Serialize)]
struct JsonPlay<'a> {
    name: Option<String>,
    hosts: String,
    file: String,
    line: u32,
    tasks: Vec<JsonTask<'a>>,
    handlers: Vec<JsonTask<'a>>,
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    playbook: String,
    plays: Vec<JsonPlay<'a>>,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    project: &'a str,
    stats: &'a crate::ansible::project::Stats,
    entries: Vec<JsonEntry<'a>>,
    unresolved: &'a [crate::ansible::project::Unresolved],
    diagnostics: &'a [crate::diagnostic::LocatedDiagnostic],
}

fn cond(sources: &SourceMap, c: &Condition) -> JsonCondition {
    JsonCondition {
        expr: c.expr.to_string(),
        file: sources.display(c.span.file),
        line: c.span.line,
        origin: c.origin,
    }
}

fn task<'a>(
    sources: &SourceMap,
    t: &TaskInstance,
    effects: Option<&'a [IterationEffects]>,
    evaluated: Option<&'a Evaluated>,
) -> JsonTask<'a> {
    JsonTask {
        name: t.task.name.clone(),
        action: t.task.action.clone(),
        module: t.task.module.clone(),
        file: sources.display(t.task.span.file),
        line: t.task.span.line,
        column: t.task.span.col,
        roles: t.roles.to_vec(),
        section: t.section,
        dynamic: t.dynamic,
        duplicate: t.duplicate,
        blocks: t.blocks.to_vec(),
        tags: t.tags.to_vec(),
        include: t
            .task
            .include
            .as_ref()
            .filter(|i| !i.kind.is_static())
            .map(|i| JsonInclude {
                kind: i.kind.as_str(),
                target: i.target.clone(),
                resolved: t.include_resolved.unwrap_or(false),
            }),
        when: t.conditions.iter().map(|c| cond(sources, c)).collect(),
        effects,
        evaluated,
    }
}

/// The effects of every reached task, by its index in run order (see
/// [`crate::reach::Scope::reached`]: each play's tasks, then its
/// handlers, play after play, entry after entry).
#[derive(Clone, Copy)]
pub struct Effects<'a> {
    pub by_task: &'a [Vec<IterationEffects>],
}

impl<'a> Effects<'a> {
    /// The effects of a play's tasks and of its handlers, given the index
    /// of its first task in run order.
    fn of_play(
        self,
        first: usize,
        p: &Play,
    ) -> (&'a [Vec<IterationEffects>], &'a [Vec<IterationEffects>]) {
        let tasks = self.by_task.get(first..).unwrap_or_default();
        let (tasks, rest) = tasks.split_at(p.tasks.len().min(tasks.len()));
        (tasks, rest.get(..p.handlers.len()).unwrap_or(rest))
    }
}

/// The effects of the `i`th task of `list`, when effects are listed.
fn at(list: Option<&[Vec<IterationEffects>]>, i: usize) -> Option<&[IterationEffects]> {
    list.map(|l| l.get(i).map_or(&[][..], Vec::as_slice))
}

/// The whole listing as pretty JSON.
#[must_use]
pub fn json(l: &Loaded) -> String {
    json_with(l, None)
}

/// The whole listing as pretty JSON, each task with its effects when given.
#[must_use]
pub fn json_with(l: &Loaded, effects: Option<Effects<'_>>) -> String {
    json_full(l, effects, None)
}

/// The whole listing as pretty JSON, each task with its effects and its
/// evaluation when given (`evaluated` by index in run order, as effects).
#[must_use]
pub fn json_full(
    l: &Loaded,
    effects: Option<Effects<'_>>,
    evaluated: Option<&[Evaluated]>,
) -> String {
    let s = &l.sources;
    let mut first = 0;
    let entries = l
        .project
        .entries
        .iter()
        .map(|e| JsonEntry {
            playbook: e.name.clone(),
            plays: e
                .plays
                .iter()
                .map(|p| {
                    let of_play = effects.map(|fx| fx.of_play(first, p));
                    let evals = evaluated.map(|ev| {
                        let tasks = ev.get(first..).unwrap_or_default();
                        let (tasks, rest) = tasks.split_at(p.tasks.len().min(tasks.len()));
                        (tasks, rest)
                    });
                    first += p.tasks.len() + p.handlers.len();
                    JsonPlay {
                        name: p.name.clone(),
                        hosts: p.hosts.clone(),
                        file: s.display(p.span.file),
                        line: p.span.line,
                        tasks: p
                            .tasks
                            .iter()
                            .enumerate()
                            .map(|(i, t)| {
                                task(
                                    s,
                                    t,
                                    at(of_play.map(|o| o.0), i),
                                    evals.and_then(|e| e.0.get(i)),
                                )
                            })
                            .collect(),
                        handlers: p
                            .handlers
                            .iter()
                            .enumerate()
                            .map(|(i, t)| {
                                task(
                                    s,
                                    t,
                                    at(of_play.map(|o| o.1), i),
                                    evals.and_then(|e| e.1.get(i)),
                                )
                            })
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect();
    let out = JsonOut {
        project: &l.project.name,
        stats: &l.project.stats,
        entries,
        unresolved: &l.project.unresolved,
        diagnostics: &l.diagnostics,
    };
    let mut text =
        serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// The listing for terminals.
#[must_use]
pub fn human(l: &Loaded) -> String {
    human_pieces(l, None).concat()
}

/// The listing for terminals in pieces, to be written in order; with
/// `effects`, each task's effects under it and each play's handlers after
/// its tasks. A large tree lists tens of thousands of tasks: their lines
/// are formatted in parallel, a chunk of tasks per piece, and never copied
/// into one text.
#[must_use]
pub fn human_pieces(l: &Loaded, effects: Option<Effects<'_>>) -> Vec<String> {
    use rayon::prelude::*;
    /// Tasks per piece: enough to amortize a piece, small enough to spread.
    const CHUNK: usize = 512;
    let s = &l.sources;
    let mut pieces: Vec<String> = Vec::new();
    let mut first = 0;
    for e in &l.project.entries {
        let mut head = String::new();
        let _ = writeln!(head, "{}", e.name);
        for (i, p) in e.plays.iter().enumerate() {
            let _ = writeln!(
                head,
                "  play #{} {} (hosts: {})  {}:{}",
                i + 1,
                p.name
                    .as_deref()
                    .map_or_else(String::new, |n| format!("\"{n}\"")),
                p.hosts,
                s.get(p.span.file).display,
                p.span.line
            );
            pieces.push(std::mem::take(&mut head));
            let Some(fx) = effects else {
                pieces.par_extend(p.tasks.par_chunks(CHUNK).map(|c| task_lines(s, c, &[])));
                continue;
            };
            let (tasks, handlers) = fx.of_play(first, p);
            first += p.tasks.len() + p.handlers.len();
            pieces.par_extend(
                p.tasks
                    .par_chunks(CHUNK)
                    .enumerate()
                    .map(|(i, c)| task_lines(s, c, tasks.get(i * CHUNK..).unwrap_or_default())),
            );
            if !p.handlers.is_empty() {
                let _ = writeln!(head, "  handlers of play #{}", i + 1);
                pieces.push(std::mem::take(&mut head));
                pieces.push(task_lines(s, &p.handlers, handlers));
            }
        }
        pieces.push(head);
    }
    let mut out = String::new();
    if !l.project.unresolved.is_empty() {
        let _ = writeln!(out, "\nunresolved includes:");
        for u in &l.project.unresolved {
            let _ = writeln!(
                out,
                "  {}:{}:{}  {} `{}`: {}",
                u.file, u.line, u.column, u.kind, u.expr, u.reason
            );
        }
    }
    if !l.diagnostics.is_empty() {
        let _ = writeln!(out, "\ndiagnostics:");
        for d in &l.diagnostics {
            let _ = writeln!(
                out,
                "  {}:{}:{}: {}[{}]: {}",
                d.file,
                d.line,
                d.column,
                d.severity.as_str(),
                d.code,
                d.message
            );
            if let Some(h) = &d.help {
                let _ = writeln!(out, "      help: {h}");
            }
        }
    }
    let st = &l.project.stats;
    let _ = writeln!(
        out,
        "\n{} tasks in {} entries; {} YAML files ({} parsed, {} failed), {} roles",
        st.tasks,
        l.project.entries.len(),
        st.yaml_files,
        st.yaml_parsed,
        st.yaml_failed,
        st.roles_loaded
    );
    pieces.push(out);
    pieces
}

/// The lines of consecutive tasks of a play: each task, then its
/// conditions, then its effects (`effects[i]` of `tasks[i]`; none past the
/// end).
fn task_lines(s: &SourceMap, tasks: &[TaskInstance], effects: &[Vec<IterationEffects>]) -> String {
    let mut out = String::with_capacity(tasks.len() * 160);
    for (k, t) in tasks.iter().enumerate() {
        let _ = write!(
            out,
            "    {}:{}  ",
            s.get(t.task.span.file).display,
            t.task.span.line
        );
        if let Some((first, rest)) = t.roles.split_first() {
            out.push('[');
            out.push_str(first);
            for r in rest {
                out.push_str(" > ");
                out.push_str(r);
            }
            out.push_str("] ");
        }
        let dynamic = if t.dynamic { " (dynamic)" } else { "" };
        let _ = writeln!(
            out,
            "{}  <{}>{dynamic}",
            t.task.display_name(),
            t.task.module,
        );
        for c in t.conditions.iter() {
            let _ = writeln!(
                out,
                "        when {}  ({:?} at {}:{})",
                c.expr,
                c.origin,
                s.get(c.span.file).display,
                c.span.line
            );
        }
        if let Some(listed) = effects.get(k) {
            effect_lines(&mut out, t, listed);
        }
    }
    out
}

/// A task's effects, one line each: the item of a looping task, the
/// effect, the status of the iteration's conditions.
fn effect_lines(out: &mut String, t: &TaskInstance, listed: &[IterationEffects]) {
    if listed.is_empty() {
        return;
    }
    let module = &t.task.module;
    if !crate::ansible::module_args::has_spec(module)
        && !crate::ansible::modules::takes_raw_params(module)
    {
        let _ = writeln!(
            out,
            "        (no argument spec known for {module}: arguments read as written)"
        );
    }
    for it in listed {
        // A string item as one word; a mapping or list as compact JSON.
        let item = it.item.as_ref().map(|v| match v {
            serde_json::Value::String(s) => format!("item={}  ", crate::effect::shown(s)),
            other => format!("item={}  ", crate::effect::shown_raw(&other.to_string())),
        });
        for e in &it.effects {
            let _ = writeln!(
                out,
                "        {}{e}  when: {}",
                item.as_deref().unwrap_or_default(),
                it.when
            );
        }
    }
}
