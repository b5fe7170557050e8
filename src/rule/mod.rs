//! Lint rules: one file per rule, a small trait with no-op hooks, and the
//! registry. Rules read the model, the who-fixes verdicts and the sysctl
//! simulation (all computed once in `check`); they never read files.

pub mod context;
pub mod finding;
mod noqa;
mod runner;

pub use context::Context;
pub use finding::{Finding, Related, fingerprint};
pub use runner::{RuleSetting, run_rules};

use crate::diagnostic::Severity;
use serde::Serialize;

/// What a rule is, for `preflint rules`, `explain`, SARIF and docs.
#[derive(Debug, Clone, Serialize)]
pub struct RuleMeta {
    /// Stable kebab-case id of the pattern found.
    pub id: &'static str,
    /// `sysctl`, `kernel-module`, `swap`, `preflight`, `runtime`, `coverage`.
    pub category: &'static str,
    pub severity: Severity,
    /// One line: what it finds.
    pub summary: &'static str,
    /// Markdown with the headings What it does / Why it matters / Example / How to fix.
    pub doc: &'static str,
    /// The kubeadm preflight check that would catch the problem live.
    pub preflight: Option<&'static str>,
}

pub mod bridge_sysctl_without_module_at_boot;
pub mod cgroup_driver_mismatch;
pub mod concern_left_to_operator;
pub mod module_not_persisted;
pub mod preflight_errors_ignored;
pub mod swap_off_not_persisted;
pub mod sysctl_engines_disagree;
pub mod sysctl_late_file_unknown_lines;
pub mod sysctl_not_persisted;
pub mod sysctl_overridden_at_boot;
pub mod sysctl_same_file_contention;

/// A lint rule. Rules see the whole analysed tree through [`Context`].
pub trait Rule: Sync {
    fn meta(&self) -> &'static RuleMeta;
    /// Adds the rule's findings (severity is set by the runner).
    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>);
}

/// Every rule, in id order.
#[must_use]
pub fn registry() -> Vec<&'static dyn Rule> {
    vec![
        &bridge_sysctl_without_module_at_boot::RULE,
        &cgroup_driver_mismatch::RULE,
        &concern_left_to_operator::RULE,
        &module_not_persisted::RULE,
        &preflight_errors_ignored::RULE,
        &swap_off_not_persisted::RULE,
        &sysctl_engines_disagree::RULE,
        &sysctl_late_file_unknown_lines::RULE,
        &sysctl_not_persisted::RULE,
        &sysctl_overridden_at_boot::RULE,
        &sysctl_same_file_contention::RULE,
    ]
}

/// Builds a finding at a place, with the rule's metadata.
#[must_use]
pub fn finding(
    meta: &RuleMeta,
    file: &str,
    line: u32,
    column: u32,
    message: String,
    identity: &str,
) -> Finding {
    Finding {
        rule: meta.id.to_string(),
        severity: meta.severity,
        message,
        help: None,
        file: file.to_string(),
        line,
        column,
        preflight: meta.preflight.map(str::to_string),
        related: Vec::new(),
        fingerprint: fingerprint(meta.id, file, identity),
    }
}

/// The rule reference (docs/rules.md), generated from the rules' own text.
#[must_use]
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# preflint rules\n\n<!-- Generated from src/rule/*.rs by `PREFLINT_UPDATE_DOCS=1 cargo test --test docs`; do not edit. -->\n\n| id | category | default severity | kubeadm preflight | summary |\n|---|---|---|---|---|\n",
    );
    for r in registry() {
        let m = r.meta();
        out.push_str(&format!(
            "| [`{}`](#{}) | {} | {} | {} | {} |\n",
            m.id,
            m.id,
            m.category,
            m.severity.as_str(),
            m.preflight.unwrap_or("-"),
            m.summary
        ));
    }
    for r in registry() {
        let m = r.meta();
        out.push_str(&format!("\n## {}\n\n{}\n\n", m.id, m.summary));
        // Demote the doc's headings one level under the rule's.
        for line in m.doc.lines() {
            if let Some(h) = line.strip_prefix("## ") {
                out.push_str(&format!("### {h}\n"));
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod meta_tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_and_documented() {
        let mut ids = std::collections::BTreeSet::new();
        for r in registry() {
            let m = r.meta();
            assert!(ids.insert(m.id), "duplicate rule id {}", m.id);
            assert!(
                m.id.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{} is not kebab-case",
                m.id
            );
            for heading in [
                "## What it does",
                "## Why it matters",
                "## Example",
                "## How to fix",
            ] {
                assert!(m.doc.contains(heading), "{} lacks `{heading}`", m.id);
            }
        }
        let sorted: Vec<&str> = registry().iter().map(|r| r.meta().id).collect();
        let mut s2 = sorted.clone();
        s2.sort_unstable();
        assert_eq!(sorted, s2, "registry is kept in id order");
    }
}
