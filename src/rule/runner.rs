//! Runs the enabled rules, applies configured severities and `# noqa`
//! suppression, and sorts the findings.

use super::noqa::{noqa_lines, suppressed};
use super::{Context, Finding, RuleMeta};
use crate::diagnostic::Severity;

/// Effective settings for one rule after configuration.
#[derive(Debug, Clone)]
pub struct RuleSetting {
    pub enabled: bool,
    pub severity: Severity,
}

/// Runs every enabled rule, applies configured severities, `# noqa`
/// suppression and sorting.
#[must_use]
pub fn run_rules(
    cx: &Context<'_, '_>,
    settings: &dyn Fn(&RuleMeta) -> RuleSetting,
) -> Vec<Finding> {
    use rayon::prelude::*;
    let registry = crate::rule::registry();
    let enabled: Vec<_> = registry
        .iter()
        .map(|rule| (rule, settings(rule.meta())))
        .filter(|(_, s)| s.enabled)
        .collect();
    // Rules run in parallel; their findings are joined in registry order.
    let mut out: Vec<Finding> = enabled
        .par_iter()
        .flat_map_iter(|(rule, s)| {
            let mut found = Vec::new();
            rule.check(cx, &mut found);
            for f in &mut found {
                f.severity = s.severity;
            }
            found
        })
        .collect();
    let noqa = noqa_lines(cx.sources, &out);
    out.retain(|f| !suppressed(&noqa, f));
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out.dedup_by(|a, b| a.sort_key() == b.sort_key());
    out
}
