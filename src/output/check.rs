//! `preflint check`: hands a finished run to the format emitters.

use crate::loaded::CheckRun;
use crate::output::findings::{Format, Report, render as render_format};
use crate::settings::Ui;

/// Renders a run in the chosen format, coloured when `ui` says so.
#[must_use]
pub fn render(format: Format, run: &CheckRun, root: &str, ui: Ui) -> String {
    let rules: Vec<crate::rule::RuleMeta> = crate::rule::registry()
        .iter()
        .map(|r| r.meta().clone())
        .collect();
    let report = Report {
        tool_version: env!("CARGO_PKG_VERSION"),
        root,
        findings: &run.findings,
        rules: &rules,
        files_checked: run.loaded.project.stats.files,
        fail_level: run.fail_level,
        color: ui.color,
    };
    render_format(format, &report, Some(&run.loaded.sources))
}
