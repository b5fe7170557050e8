//! Lint findings in every output format: one file per format, all behind
//! [`render`].
//!
//! Input is a finished run ([`Report`]): findings already suppressed and
//! sorted, plus every rule's metadata. Each format is a pure function of that
//! input (no clock, no environment, no file reads), so output is identical for
//! any thread count and snapshot-testable. Deciding the exit code, choosing
//! colour and writing to stdout belong to the caller.

mod codeclimate;
mod github;
mod human;
mod json;
mod junit;
mod sarif;

use crate::diagnostic::Severity;
use crate::rule::{Finding, RuleMeta};
use crate::source::SourceMap;

/// A finished `check` run, as every format reads it.
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    /// `env!("CARGO_PKG_VERSION")`.
    pub tool_version: &'static str,
    /// The analysed path as given on the command line. Finding paths are
    /// relative to it; formats read by CI systems (GitHub, GitLab, SARIF)
    /// join the two so paths are relative to the working directory.
    pub root: &'a str,
    /// Already suppressed and sorted by (file, line, column, rule).
    pub findings: &'a [Finding],
    /// Every rule, enabled or not (SARIF describes them all; `JUnit` reports a
    /// passing test case for each rule without failures).
    pub rules: &'a [RuleMeta],
    pub files_checked: usize,
    /// Findings at or above this severity fail the run.
    pub fail_level: Severity,
    /// Human format only: ANSI colours through miette's theme.
    pub color: bool,
}

pub use crate::settings::CheckFormat as Format;

/// The whole output of a run in `format`, ending with a newline.
///
/// `sources` is read only by the human format, for snippets; without it (or
/// for a file it does not hold) findings are shown by location alone.
#[must_use]
pub fn render(format: Format, report: &Report<'_>, sources: Option<&SourceMap>) -> String {
    match format {
        Format::Human => human::render(report, sources),
        Format::Json => json::render(report),
        Format::Sarif => sarif::render(report),
        Format::Github => github::render(report),
        Format::Codeclimate => codeclimate::render(report),
        Format::Junit => junit::render(report),
    }
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub info: usize,
}

impl Counts {
    pub(crate) fn of(findings: &[Finding]) -> Self {
        let mut c = Counts::default();
        for f in findings {
            match f.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Info => c.info += 1,
            }
        }
        c
    }

    pub(crate) fn total(self) -> usize {
        self.errors + self.warnings + self.info
    }
}

impl Report<'_> {
    /// Whether any finding is at or above the fail level.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.severity >= self.fail_level)
    }

    /// `N findings (E errors, W warnings, I info) in F files`.
    #[must_use]
    pub fn summary_line(&self) -> String {
        let c = Counts::of(self.findings);
        format!(
            "{} ({}, {}, {} info) in {}",
            plural(c.total(), "finding", "findings"),
            plural(c.errors, "error", "errors"),
            plural(c.warnings, "warning", "warnings"),
            c.info,
            plural(self.files_checked, "file", "files"),
        )
    }

    /// A finding's path as CI systems want it: relative to the working
    /// directory (the repository checkout), i.e. the root joined with the
    /// root-relative path. `preflint .` leaves paths unchanged.
    pub(crate) fn ci_path(&self, file: &str) -> String {
        join_root(self.root, file)
    }

    /// The rule's metadata, when `id` is a rule (not a reserved load code).
    pub(crate) fn rule(&self, id: &str) -> Option<&RuleMeta> {
        self.rules.iter().find(|r| r.id == id)
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `root` joined with a root-relative `/`-separated `file`, without `./`
/// noise: `(".", "a.yml")` -> `a.yml`, `("./roles/", "x.yml")` -> `roles/x.yml`.
pub(crate) fn join_root(root: &str, file: &str) -> String {
    let root = root.replace('\\', "/");
    let mut root = root.as_str();
    while let Some(rest) = root.strip_prefix("./") {
        root = rest.trim_start_matches('/');
    }
    let root = if root == "/" {
        root
    } else {
        root.trim_end_matches('/')
    };
    let file = file.strip_prefix("./").unwrap_or(file);
    match (root, file) {
        ("" | ".", _) => file.to_string(),
        (_, "" | ".") => root.to_string(),
        ("/", _) => format!("/{file}"),
        _ => format!("{root}/{file}"),
    }
}

/// Lines and columns are 1-based; a 0 from a whole-file problem means 1.
pub(crate) fn at_least_one(n: u32) -> u32 {
    n.max(1)
}

/// Pretty JSON with a trailing newline.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Only plain structs with string keys are serialized: this cannot fail.
    let mut s = serde_json::to_string_pretty(value).expect("serializable output model");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_root_drops_dot_segments() {
        assert_eq!(join_root(".", "a/b.yml"), "a/b.yml");
        assert_eq!(join_root("./", "a.yml"), "a.yml");
        assert_eq!(join_root("", "a.yml"), "a.yml");
        assert_eq!(
            join_root("roles/k8s/", "tasks/main.yml"),
            "roles/k8s/tasks/main.yml"
        );
        assert_eq!(join_root("./roles", "x.yml"), "roles/x.yml");
        assert_eq!(join_root("/srv/repo", "x.yml"), "/srv/repo/x.yml");
        assert_eq!(join_root("/", "x.yml"), "/x.yml");
        assert_eq!(join_root("site.yml", "."), "site.yml");
        assert_eq!(join_root("..\\up", "x.yml"), "../up/x.yml");
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
        assert_eq!(Format::from_name("xml"), None);
    }
}
