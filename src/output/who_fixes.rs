//! `preflint who-fixes`: table, markdown, JSON and compact views of the verdicts.

use crate::concern::analyze::{Overall, PartVerdict, Status, TaskEvidence, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

fn part_status(p: &PartVerdict) -> String {
    let s = match p.status {
        Status::Fixed => "fixed".to_string(),
        Status::FixedWhenRuntime => format!("fixed when {} allow", p.runtime.join(", ")),
        Status::Conditional => format!("off unless {} set", p.turn_on.join(", ")),
        Status::CheckedOnly => "checked only".into(),
        Status::Operator => "not addressed".into(),
    };
    format!("{}: {s}", p.name)
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Fixed => "fixed",
        Status::FixedWhenRuntime => "fixed when run-time facts allow",
        Status::Conditional => "conditional",
        Status::CheckedOnly => "checked only",
        Status::Operator => "not addressed",
    }
}

fn best(p: &PartVerdict) -> Option<&TaskEvidence> {
    p.evidence.first()
}

fn why(e: &TaskEvidence) -> String {
    if e.conditions.is_empty() {
        return "unconditional".into();
    }
    e.conditions
        .iter()
        .map(|c| {
            let vals: Vec<String> = c
                .vars
                .iter()
                .map(|v| match (&v.file, v.line) {
                    (Some(f), Some(l)) => format!("{}={} @{f}:{l}", v.name, v.value),
                    _ => format!("{}={}", v.name, v.value),
                })
                .collect();
            if vals.is_empty() {
                format!("`{}`→{}", c.expr, c.result)
            } else {
                format!("`{}`→{} [{}]", c.expr, c.result, vals.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn verdict_label(v: &Verdict) -> String {
    match v.overall {
        Overall::Fact => v.who.clone(),
        Overall::Partial => format!("partial (missing: {})", v.missing_parts.join(", ")),
        Overall::Fixed | Overall::FixedWhenRuntime => format!("{} ({})", v.who, v.overall.label()),
        _ => v.overall.label().to_string(),
    }
}

/// One block per concern for terminals.
#[must_use]
pub fn table(verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    let width = verdicts.iter().map(|v| v.id.len()).max().unwrap_or(10);
    for v in verdicts {
        let _ = writeln!(out, "{:<width$}  {}", v.id, verdict_label(v));
        if let Some(f) = &v.fact {
            if let Some(var) = &f.variable {
                let _ = writeln!(
                    out,
                    "{:<width$}    from `{var}`: {}",
                    "",
                    f.winner_reason.clone().unwrap_or_default()
                );
            }
            for d in &f.definitions {
                let _ = writeln!(
                    out,
                    "{:<width$}    defined {} = {} ({}) at {}:{}",
                    "",
                    d.name,
                    d.value,
                    d.source.clone().unwrap_or_default(),
                    d.file.clone().unwrap_or_default(),
                    d.line.unwrap_or(0)
                );
            }
            for r in &f.runtime_changes {
                let _ = writeln!(
                    out,
                    "{:<width$}    changed at run time by set_fact at {r}",
                    ""
                );
            }
            continue;
        }
        for p in &v.parts {
            let _ = writeln!(out, "{:<width$}    {}", "", part_status(p));
            if !p.by_hosts.is_empty() {
                let per: Vec<String> = p
                    .by_hosts
                    .iter()
                    .map(|h| format!("{}: {}", h.hosts, status_word(h.status)))
                    .collect();
                let _ = writeln!(
                    out,
                    "{:<width$}      per host group: {}",
                    "",
                    per.join("; ")
                );
            }
            if let Some(e) = best(p) {
                let _ = writeln!(
                    out,
                    "{:<width$}      where: {}:{} \"{}\" <{}> (hosts: {})",
                    "", e.file, e.line, e.task, e.module, e.hosts
                );
                let _ = writeln!(out, "{:<width$}      why: {}", "", why(e));
            }
        }
    }
    out
}

/// A markdown table to paste into a pull request.
#[must_use]
pub fn markdown(verdicts: &[Verdict]) -> String {
    let mut out = String::from("| concern | who fixes it | where | why |\n|---|---|---|---|\n");
    for v in verdicts {
        let (where_, why_) = v
            .parts
            .iter()
            .find_map(best)
            .map_or((String::new(), String::new()), |e| {
                (format!("`{}:{}`", e.file, e.line), why(e))
            });
        let where_ = match &v.fact {
            Some(f) => f
                .used_at
                .first()
                .map(|u| format!("`{u}`"))
                .unwrap_or_default(),
            None => where_,
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            v.id,
            verdict_label(v).replace('|', "\\|"),
            where_,
            why_.replace('|', "\\|")
        );
    }
    out
}

/// The flat map: concern id -> who fixes it (or the fact's value).
#[must_use]
pub fn compact(verdicts: &[Verdict]) -> String {
    let map: BTreeMap<&str, &str> = verdicts
        .iter()
        .map(|v| (v.id.as_str(), v.who.as_str()))
        .collect();
    let mut s = serde_json::to_string_pretty(&map).unwrap_or_default();
    s.push('\n');
    s
}

#[derive(Serialize)]
struct JsonOut<'a> {
    schema: &'static str,
    automation: &'a str,
    verdicts: &'a [Verdict],
    unresolved: &'a [crate::ansible::project::Unresolved],
    diagnostics: &'a [crate::diagnostic::LocatedDiagnostic],
}

/// Everything, with all evidence (schema in docs/who-fixes-json.md).
#[must_use]
pub fn json(
    automation: &str,
    verdicts: &[Verdict],
    unresolved: &[crate::ansible::project::Unresolved],
    diagnostics: &[crate::diagnostic::LocatedDiagnostic],
) -> String {
    let out = JsonOut {
        schema: "preflint/who-fixes/v1",
        automation,
        verdicts,
        unresolved,
        diagnostics,
    };
    let mut s = serde_json::to_string_pretty(&out).unwrap_or_default();
    s.push('\n');
    s
}
