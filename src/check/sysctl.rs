//! Every sysctl write of the reached tasks, in run order, read from their
//! effects, as input for the boot-order simulator.
//!
//! Tasks whose conditions are known to be false are left out; tasks with
//! unknown conditions are kept and marked.

use crate::effect::Kind;
use crate::reach::{Facts, Scope, conditions_hold};
use crate::source::SourceMap;
use crate::sysctl::{Evidence, Write};

/// A write plus where it was found, for findings.
#[derive(Debug, Clone)]
pub struct Found {
    pub write: Write,
    /// The role that owns the task (last of the chain), if any.
    pub role: Option<String>,
    pub column: u32,
}

/// Every sysctl write of the reachable tasks, in execution order.
#[must_use]
pub fn sysctl_writes<'s>(
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    sources: &SourceMap,
) -> Vec<Found> {
    // From the last task: `check` runs this beside the concern analysis,
    // which takes the tasks from the first (see `per_task_from_end`).
    crate::reach::per_task_from_end(
        reached,
        |facts| task_found(scope, facts, sources),
        |_, found| found.clone(),
    )
}

/// The sysctl writes of one reachable task, every iteration.
fn task_found<'s>(scope: &'s Scope<'_>, facts: &Facts<'s>, sources: &SourceMap) -> Vec<Found> {
    let mut out = Vec::new();
    let r = &facts.reach;
    let t = &r.inst.task;
    // The effects `effect::sysctl_writes` reads.
    const SYSCTL: &[Kind] = &[
        Kind::SysctlSet,
        Kind::SysctlRemoved,
        Kind::SysctlApplied,
        Kind::FileWritten,
        Kind::FileRemoved,
        Kind::Linked,
        Kind::Service,
    ];
    if r.inst.duplicate || !crate::effect::may_have(&t.module, !t.notify.is_empty(), SYSCTL) {
        return out;
    }
    for it in facts.iterations(scope).iter() {
        let kinds = crate::effect::sysctl_writes_marked(it.effects(r.inst));
        if kinds.is_empty() {
            continue;
        }
        // Conditions cost a render: evaluated only for tasks that write.
        let hold = conditions_hold(r, &it.tv);
        if hold == Some(false) {
            continue;
        }
        let evidence = Evidence {
            file: sources.display(t.span.file),
            line: t.span.line,
            task: t.display_name().to_string(),
        };
        for (kind, under_template_conditions) in kinds {
            out.push(Found {
                write: Write {
                    kind,
                    evidence: evidence.clone(),
                    conditional: hold.is_none() || under_template_conditions,
                },
                role: r.inst.roles.last().cloned(),
                column: t.span.col,
            });
        }
    }
    out
}

/// A sysctl file written whole with lines not known statically: it may
/// set any key (see [`unknown_lines`]).
#[derive(Debug, Clone)]
pub struct UnknownLines {
    pub path: String,
    /// How many lines are unknown.
    pub lines: usize,
    /// Why the first of them is, in words.
    pub why: String,
    pub evidence: Evidence,
    pub column: u32,
    /// The task's conditions are not all known to hold.
    pub conditional: bool,
}

/// Every sysctl file the reachable tasks write whole with lines not known
/// statically (a template's unknown lines, a source not found), in run
/// order; tasks whose conditions are known to be false are left out.
#[must_use]
pub fn unknown_lines<'s>(
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    sources: &SourceMap,
) -> Vec<UnknownLines> {
    crate::reach::per_task(
        reached,
        |facts| task_unknown_lines(scope, facts, sources),
        |_, u| u.clone(),
    )
}

fn task_unknown_lines<'s>(
    scope: &'s Scope<'_>,
    facts: &Facts<'s>,
    sources: &SourceMap,
) -> Vec<UnknownLines> {
    use crate::effect::{EffectKind, Known};
    let r = &facts.reach;
    let t = &r.inst.task;
    let mut out = Vec::new();
    if r.inst.duplicate
        || !crate::effect::may_have(&t.module, !t.notify.is_empty(), &[Kind::FileWritten])
    {
        return out;
    }
    for it in facts.iterations(scope).iter() {
        for e in it.effects(r.inst) {
            let EffectKind::FileWritten { path, content, .. } = &e.kind else {
                continue;
            };
            if crate::sysctl::sysctl_file_kind(path).is_none() {
                continue;
            }
            let view = crate::reach::IterView::new(r.inst, it);
            let (lines, why) = match content.rendering(&view) {
                Some(rendering) => {
                    let unknown: Vec<_> = rendering.file.unknown_lines().collect();
                    let Some(first) = unknown.first() else {
                        continue;
                    };
                    (unknown.len(), first.unknown_text())
                }
                None if content.known == Known::Unknown => {
                    (1, "its source is not found".to_string())
                }
                None => continue,
            };
            let hold = conditions_hold(r, &it.tv);
            if hold == Some(false) {
                continue;
            }
            out.push(UnknownLines {
                path: path.clone(),
                lines,
                why,
                evidence: Evidence {
                    file: sources.display(t.span.file),
                    line: t.span.line,
                    task: t.display_name().to_string(),
                },
                column: t.span.col,
                conditional: hold.is_none(),
            });
        }
    }
    out
}
