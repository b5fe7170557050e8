//! `preflint tasks`: the ordered reachable tasks, as text or JSON.

use crate::ansible::project::TaskInstance;
use crate::ansible::task::Condition;
use crate::run::Loaded;
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
struct JsonTask {
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
}

#[derive(Serialize)]
struct JsonPlay {
    name: Option<String>,
    hosts: String,
    file: String,
    line: u32,
    tasks: Vec<JsonTask>,
    handlers: Vec<JsonTask>,
}

#[derive(Serialize)]
struct JsonEntry {
    playbook: String,
    plays: Vec<JsonPlay>,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    project: &'a str,
    stats: &'a crate::ansible::project::Stats,
    entries: Vec<JsonEntry>,
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

fn task(sources: &SourceMap, t: &TaskInstance) -> JsonTask {
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
    }
}

/// The whole listing as pretty JSON.
#[must_use]
pub fn json(l: &Loaded) -> String {
    let s = &l.sources;
    let entries = l
        .project
        .entries
        .iter()
        .map(|e| JsonEntry {
            playbook: e.name.clone(),
            plays: e
                .plays
                .iter()
                .map(|p| JsonPlay {
                    name: p.name.clone(),
                    hosts: p.hosts.clone(),
                    file: s.display(p.span.file),
                    line: p.span.line,
                    tasks: p.tasks.iter().map(|t| task(s, t)).collect(),
                    handlers: p.handlers.iter().map(|t| task(s, t)).collect(),
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
    human_pieces(l).concat()
}

/// The listing for terminals in pieces, to be written in order. A large
/// tree lists tens of thousands of tasks: their lines are formatted in
/// parallel, a chunk of tasks per piece, and never copied into one text.
#[must_use]
pub fn human_pieces(l: &Loaded) -> Vec<String> {
    use rayon::prelude::*;
    /// Tasks per piece: enough to amortize a piece, small enough to spread.
    const CHUNK: usize = 512;
    let s = &l.sources;
    let mut pieces: Vec<String> = Vec::new();
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
            pieces.par_extend(p.tasks.par_chunks(CHUNK).map(|c| task_lines(s, c)));
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

/// The lines of consecutive tasks of a play: each task, then its conditions.
fn task_lines(s: &SourceMap, tasks: &[TaskInstance]) -> String {
    let mut out = String::with_capacity(tasks.len() * 160);
    for t in tasks {
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
    }
    out
}
