//! A task's condition chain evaluated: true, false, or unknown with the
//! reason (a host fact, a registered result, a variable nobody sets), and
//! the evidence: each condition, its result, and where each variable it
//! names got its value.

use super::json_text;
use crate::ansible::project::TaskInstance;
use crate::jinja::{self, Tri, UnknownWhy};
use crate::source::SourceMap;
use crate::vars::{LookupOwned, TaskVars};
use serde::Serialize;
use std::collections::BTreeSet;

/// A condition chain, evaluated.
#[derive(Debug, Clone)]
pub struct When {
    /// One condition is false with the variables as they are.
    pub any_false: bool,
    /// One condition depends on a variable nobody sets (or one not
    /// evaluated statically): the operator decides.
    pub needs_operator: bool,
    pub evidence: Vec<CondEvidence>,
    /// Variables that keep the task off.
    pub turn_on: Vec<String>,
    /// Names known only at run time (facts, registered results) the
    /// conditions depend on.
    pub runtime: Vec<String>,
    /// Every name an unknown condition depends on, with why it is unknown
    /// (see [`why_label`]), sorted.
    pub unknown: Vec<UnknownVar>,
}

/// A name a condition depends on whose value is not known statically.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct UnknownVar {
    pub name: String,
    /// Why it is unknown: `host fact`, `registered result`, `not set`...
    pub why: &'static str,
}

/// A condition chain's status as listings show it: whether it holds, and
/// when that is unknown, what it depends on.
#[derive(Debug, Clone, Serialize)]
pub struct WhenStatus {
    /// `true`, `false`, or `null` when unknown.
    pub holds: Option<bool>,
    /// What an unknown status depends on; empty otherwise.
    pub unknown: Vec<UnknownVar>,
}

impl std::fmt::Display for WhenStatus {
    /// `true`, `false`, or `unknown (ansible_os_family: host fact)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.holds {
            Some(true) => f.write_str("true"),
            Some(false) => f.write_str("false"),
            None => {
                f.write_str("unknown")?;
                for (i, u) in self.unknown.iter().enumerate() {
                    let sep = if i == 0 { " (" } else { ", " };
                    write!(f, "{sep}{}: {}", u.name, u.why)?;
                }
                if self.unknown.is_empty() {
                    Ok(())
                } else {
                    f.write_str(")")
                }
            }
        }
    }
}

impl When {
    /// Evaluates a task's condition chain with the variables it sees.
    #[must_use]
    pub fn evaluate(sources: &SourceMap, inst: &TaskInstance, tv: &TaskVars<'_>) -> When {
        eval_conditions(sources, inst, tv)
    }

    /// `Some(true)`: every condition holds; `Some(false)`: one is false;
    /// `None`: unknown.
    #[must_use]
    pub fn holds(&self) -> Option<bool> {
        if self.any_false {
            Some(false)
        } else if self.needs_operator || !self.runtime.is_empty() {
            None
        } else {
            Some(true)
        }
    }

    /// Its status for listings (see [`WhenStatus`]).
    #[must_use]
    pub fn status(&self) -> WhenStatus {
        let holds = self.holds();
        WhenStatus {
            holds,
            unknown: if holds.is_none() {
                self.unknown.clone()
            } else {
                Vec::new()
            },
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

pub fn var_evidence(sources: &SourceMap, tv: &TaskVars<'_>, name: &str) -> VarEvidence {
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

#[must_use]
pub fn why_label(w: &UnknownWhy) -> &'static str {
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
pub(super) fn eval_conditions(sources: &SourceMap, inst: &TaskInstance, tv: &TaskVars<'_>) -> When {
    let mut evidence = Vec::new();
    let mut any_false = false;
    let mut turn_on = BTreeSet::new();
    let mut runtime = BTreeSet::new();
    let mut needs_operator = false;
    let mut unknown = BTreeSet::new();
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
                    unknown.insert(UnknownVar {
                        name: u.var.clone(),
                        why: why_label(&u.why),
                    });
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
    When {
        any_false,
        needs_operator,
        evidence,
        turn_on: turn_on.into_iter().collect(),
        runtime: runtime.into_iter().collect(),
        unknown: unknown.into_iter().collect(),
    }
}

/// Whether a task's conditions hold: `Some(true)` all true, `Some(false)`
/// one false, `None` unknown.
#[must_use]
pub fn conditions_hold(r: &super::Reach<'_>, tv: &TaskVars<'_>) -> Option<bool> {
    let mut unknown = false;
    for c in r.inst.conditions.iter() {
        match jinja::eval_condition(&c.expr, tv) {
            Tri::False => return Some(false),
            Tri::Unknown(_) => unknown = true,
            Tri::True => {}
        }
    }
    if unknown { None } else { Some(true) }
}

#[cfg(test)]
mod tests {
    use super::{UnknownVar, WhenStatus};

    #[test]
    fn status_says_what_an_unknown_depends_on() {
        let status = |holds, unknown: &[(&str, &'static str)]| WhenStatus {
            holds,
            unknown: unknown
                .iter()
                .map(|&(name, why)| UnknownVar {
                    name: name.to_string(),
                    why,
                })
                .collect(),
        };
        assert_eq!(status(Some(true), &[]).to_string(), "true");
        assert_eq!(status(Some(false), &[]).to_string(), "false");
        assert_eq!(
            status(
                None,
                &[("ansible_os_family", "host fact"), ("kube_swap", "not set")]
            )
            .to_string(),
            "unknown (ansible_os_family: host fact, kube_swap: not set)"
        );
        assert_eq!(status(None, &[]).to_string(), "unknown");
    }
}
