//! Who fixes each concern: matching reachable tasks against the catalog's
//! patterns, evaluating their condition chains, and combining parts into a
//! verdict with evidence.
//!
//! Reads the model and the catalog; never names a file, role or tool of a
//! particular project (the automation's name comes from the project).

use super::catalog::{Concern, Part, Pattern};
use super::matching::{admits, matches};
use super::units::UnitsOnDemand;
use crate::ansible::project::Project;
use crate::jinja;
pub use crate::reach::{CondEvidence, VarEvidence};
use crate::reach::{Facts, IterView, Iteration, Reach, Scope, When, json_text, per_task};
use crate::source::SourceMap;
use crate::vars::{PlayVars, TaskVars};
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;

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
    /// The files a `requires` fix applies (`sysctl -p FILE`); empty: all.
    #[serde(skip)]
    pub applies: Vec<String>,
    /// The task's place in run order (handlers after their play's tasks).
    #[serde(skip)]
    pub order: usize,
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

/// A fix's status from its task's conditions.
fn status_of(w: &When) -> Status {
    if w.any_false || w.needs_operator {
        Status::Conditional
    } else if !w.runtime.is_empty() {
        Status::FixedWhenRuntime
    } else {
        Status::Fixed
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
    /// tasks' iterations reuse their memory instead of fresh pages.
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
    let units = UnitsOnDemand::new(scope, reached);
    let mut found = match_tasks(sources, catalog, scope, reached, &units, after).into_iter();
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
    units: &UnitsOnDemand<'_, 's, '_>,
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
    // it can have effects: a task no slot admits is not even rendered.
    // Computed per module: many tasks share few modules.
    let mut tasks: crate::HashSet<usize> = crate::HashSet::default();
    let mut admitted: crate::HashMap<(&str, bool), Vec<usize>> = crate::HashMap::default();
    for facts in reached {
        let t = &facts.reach.inst.task;
        if !tasks.insert(Arc::as_ptr(t) as usize) {
            continue;
        }
        let key = (t.module.as_str(), !t.notify.is_empty());
        admitted.entry(key).or_insert_with(|| {
            (0..slots.len())
                .filter(|&si| slots[si].4.iter().any(|p| admits(p, key.0, key.1)))
                .collect()
        });
    }
    // A twin gives what the first of its twins gives, from its own entry.
    let twin = |facts: &Facts<'_>, (si, e): &(usize, TaskEvidence)| {
        let mut e = e.clone();
        facts.reach.entry.clone_into(&mut e.entry);
        e.order = facts.index;
        (*si, e)
    };
    let per_task = per_task(
        reached,
        |facts| {
            let t = &facts.reach.inst.task;
            let candidates = admitted
                .get(&(t.module.as_str(), !t.notify.is_empty()))
                .map_or(&[][..], Vec::as_slice);
            if candidates.is_empty() {
                return Vec::new();
            }
            let iters = facts.iterations(scope);
            let evidence = candidates
                .iter()
                .filter_map(|&si| {
                    let (_, _, part, role, patterns) = slots[si];
                    task_evidence(sources, part, role, patterns, facts, &iters, units)
                        .map(|e| (si, e))
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
    units: &UnitsOnDemand<'_, '_, '_>,
) -> Option<TaskEvidence> {
    let r = &facts.reach;
    let module = r.inst.task.module.as_str();
    // The first pattern any iteration matches, in the catalog's order: a
    // direct fix before one that only applies what another part persisted
    // (a loop's first item may only reload a file another item sets).
    let found = patterns.iter().find_map(|p| {
        iters.iter().find_map(|it| {
            let view = IterView::new(r.inst, it);
            it.effects(r.inst)
                .iter()
                .find(|e| matches(p, module, &units.resolve(e), &view))
                .map(|e| (p, it, e))
        })
    });
    if let Some((pat, it, effect)) = found {
        let effects = it.effects(r.inst);
        // What an "apply the persisted values" fix applies: one file, or
        // every file.
        let applies = match &effect.kind {
            crate::effect::EffectKind::SysctlApplied {
                apply: crate::effect::SysctlApply::File(f),
            } => vec![f.clone()],
            _ => Vec::new(),
        };
        let when = it.conditions(sources, r.inst).clone();
        let status = if role == "check" {
            Status::CheckedOnly
        } else {
            status_of(&when)
        };
        let mut writes: Vec<String> = effects
            .iter()
            .filter_map(|e| match &e.kind {
                crate::effect::EffectKind::SysctlSet { file, .. } => file.clone(),
                k => k.path().map(str::to_string),
            })
            .collect();
        writes.dedup();
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
            turn_on: when.turn_on,
            runtime: when.runtime,
            requires: pat.requires.clone(),
            applies,
            order: facts.index,
            writes,
            conditions: when.evidence,
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
            (a.status, a.requires.is_some(), &a.file, a.line, &a.entry).cmp(&(
                b.status,
                b.requires.is_some(),
                &b.file,
                b.line,
                &b.entry,
            ))
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
    // A direct fix explains the part better than a task that only applies
    // what another part persisted: the latter count only when alone.
    let direct = evidence
        .iter()
        .any(|e| e.status == status && e.requires.is_none());
    for e in evidence
        .iter()
        .filter(|e| e.status == status && (!direct || e.requires.is_none()))
    {
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
    // Each part's fixes: (status, files written, entry, run order).
    #[allow(clippy::type_complexity)]
    let fixes: Vec<(String, Vec<(Status, Vec<String>, String, usize)>)> = parts
        .iter()
        .map(|p| {
            let ev = p
                .evidence
                .iter()
                .filter(|e| e.role == "fix")
                .map(|e| (e.status, e.writes.clone(), e.entry.clone(), e.order))
                .collect();
            (p.name.clone(), ev)
        })
        .collect();
    for p in parts.iter_mut() {
        let mut changed = false;
        p.evidence.retain_mut(|e| {
            let Some(req) = &e.requires else { return true };
            let Some((_, req_fixes)) = fixes.iter().find(|(n, _)| n == req) else {
                return true;
            };
            changed = true;
            // The strongest fix of the required part this task applies: one
            // that ran before it (or is this task), in its entry, written to a file it applies
            // (any file when it applies them all).
            let st = req_fixes
                .iter()
                .filter(|(_, w, entry, order)| {
                    *entry == e.entry
                        && *order <= e.order
                        && (e.applies.is_empty() || w.iter().any(|f| e.applies.contains(f)))
                })
                .map(|(s, ..)| *s)
                .min()
                .unwrap_or(Status::Operator);
            if st == Status::Operator || st == Status::CheckedOnly {
                return false;
            }
            e.status = e.status.max(st);
            true
        });
        if changed {
            p.evidence.sort_by(|a, b| {
                (a.status, a.requires.is_some(), &a.file, a.line, &a.entry).cmp(&(
                    b.status,
                    b.requires.is_some(),
                    &b.file,
                    b.line,
                    &b.entry,
                ))
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
                // Direct fixes: a task that only reloads a file says
                // nothing of where the values are written.
                .filter(|e| e.role == "fix" && e.requires.is_none())
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
                    let ev = crate::reach::var_evidence(sources, &tv, name);
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
    use crate::reach::{arg_text, per_task_from_end};
    use std::path::Path;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A task whose module has no effects is admitted by no pattern: it
    /// is never rendered; tasks that can have effects are.
    #[test]
    fn patterns_admit_only_tasks_that_can_have_effects() {
        let catalog = super::super::catalog::load(None).expect("built-in catalog");
        let patterns: Vec<&Pattern> = catalog
            .iter()
            .flat_map(|c| &c.parts)
            .flat_map(|p| p.fix.iter().chain(&p.check))
            .collect();
        assert!(!patterns.is_empty());

        for p in &patterns {
            for m in ["ansible.builtin.debug", "ansible.builtin.set_fact"] {
                assert!(!admits(p, m, false), "{m}");
            }
        }
        for m in [
            "ansible.builtin.template",
            "ansible.builtin.copy",
            "ansible.posix.sysctl",
            "ansible.builtin.command",
        ] {
            assert!(patterns.iter().any(|p| admits(p, m, false)), "{m}");
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
            &UnitsOnDemand::new(&scope, &reached),
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
