//! `preflint check`: hands a finished run to the format emitters.

use crate::cli::CheckFormat;
use crate::output::findings::{Format, Report, render as render_format};
use crate::run::CheckRun;

fn format(f: CheckFormat) -> Format {
    match f {
        CheckFormat::Human => Format::Human,
        CheckFormat::Json => Format::Json,
        CheckFormat::Sarif => Format::Sarif,
        CheckFormat::Github => Format::Github,
        CheckFormat::Codeclimate => Format::Codeclimate,
        CheckFormat::Junit => Format::Junit,
    }
}

/// Renders a run in the chosen format (colour only on a terminal, never with NO_COLOR).
#[must_use]
pub fn render(f: CheckFormat, run: &CheckRun, root: &str) -> String {
    let rules: Vec<crate::rule::RuleMeta> = crate::rule::registry()
        .iter()
        .map(|r| r.meta().clone())
        .collect();
    let color = crate::run::ui().color;
    let report = Report {
        tool_version: env!("CARGO_PKG_VERSION"),
        root,
        findings: &run.findings,
        rules: &rules,
        files_checked: run.loaded.project.stats.files,
        fail_level: run.fail_level,
        color,
    };
    render_format(format(f), &report, Some(&run.loaded.sources))
}
