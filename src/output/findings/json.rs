//! `--format json`: preflint's own stable JSON model.
//!
//! `{"version", "root", "findings": [...], "summary": {...}}`; findings keep
//! every field of [`Finding`] (paths relative to `root`).

use super::{Counts, Report, to_json};
use crate::diagnostic::Severity;
use crate::rule::Finding;
use serde::Serialize;

#[derive(Serialize)]
struct Output<'a> {
    version: &'a str,
    root: &'a str,
    findings: &'a [Finding],
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    files_checked: usize,
    findings: usize,
    errors: usize,
    warnings: usize,
    info: usize,
    fail_level: Severity,
    /// Whether a finding is at or above `fail_level` (exit code 1).
    failed: bool,
}

pub(super) fn render(report: &Report<'_>) -> String {
    let c = Counts::of(report.findings);
    to_json(&Output {
        version: report.tool_version,
        root: report.root,
        findings: report.findings,
        summary: Summary {
            files_checked: report.files_checked,
            findings: c.total(),
            errors: c.errors,
            warnings: c.warnings,
            info: c.info,
            fail_level: report.fail_level,
            failed: report.failed(),
        },
    })
}
