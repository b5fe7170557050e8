//! `--format github`: GitHub Actions workflow commands, one annotation per
//! finding (`::error file=F,line=L,col=C,title=RULE::message`).
//!
//! Escaping follows the runner's parser (actions/toolkit `escapeData` and
//! `escapeProperty`): `%`, CR and LF in both places, and `:` and `,` in
//! property values. Paths are joined with the root so they are relative to
//! the checkout, where the runner looks for them.

use super::{Report, at_least_one};
use crate::diagnostic::Severity;
use std::fmt::Write;

pub(super) fn render(report: &Report<'_>) -> String {
    let mut out = String::new();
    for f in report.findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut text = f.message.clone();
        if let Some(help) = &f.help {
            let _ = write!(text, "\nhelp: {help}");
        }
        for r in &f.related {
            let _ = write!(
                text,
                "\nsee {}:{}:{}: {}",
                report.ci_path(&r.file),
                at_least_one(r.line),
                at_least_one(r.column),
                r.message
            );
        }
        if let Some(p) = &f.preflight {
            let _ = write!(text, "\nkubeadm preflight check: {p}");
        }
        let _ = writeln!(
            out,
            "::{command} file={},line={},col={},title={}::{}",
            escape_property(&report.ci_path(&f.file)),
            at_least_one(f.line),
            at_least_one(f.column),
            escape_property(&f.rule),
            escape_data(&text),
        );
    }
    out
}

/// The message after `::`.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A `key=value` value: also `:` (ends the properties) and `,` (separates them).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_the_actions_toolkit() {
        assert_eq!(escape_data("100% a:b,c\r\nd"), "100%25 a:b,c%0D%0Ad");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        // `%` first, so an escape sequence in the input survives as text.
        assert_eq!(escape_data("%0A"), "%250A");
    }
}
