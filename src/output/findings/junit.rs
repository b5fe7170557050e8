//! `--format junit`: `JUnit` XML for CI test reports (GitLab, Jenkins).
//!
//! One `<testsuite name="preflint">`. A rule with no finding at or above the
//! fail level is one passing test case (findings below the level go to its
//! `<system-out>`); otherwise each such finding is a test case of its own with
//! a `<failure>`, named by rule and location, since readers show only one
//! failure per test case. Reserved load codes are reported like rules.
//! Characters XML 1.0 cannot carry (most C0 controls) become U+FFFD.

use super::{Report, at_least_one};
use crate::rule::Finding;
use std::fmt::Write;

struct Case {
    classname: String,
    name: String,
    file: Option<String>,
    line: Option<u32>,
    failure: Option<Failure>,
    system_out: Option<String>,
}

struct Failure {
    message: String,
    kind: &'static str,
    body: String,
}

fn location(report: &Report<'_>, f: &Finding) -> String {
    format!(
        "{}:{}:{}",
        report.ci_path(&f.file),
        at_least_one(f.line),
        at_least_one(f.column)
    )
}

fn body(report: &Report<'_>, f: &Finding) -> String {
    let mut s = format!(
        "{}: {}: {}",
        location(report, f),
        f.severity.as_str(),
        f.message
    );
    if let Some(h) = &f.help {
        let _ = write!(s, "\nhelp: {h}");
    }
    for r in &f.related {
        let _ = write!(
            s,
            "\nsee {}:{}:{}: {}",
            report.ci_path(&r.file),
            at_least_one(r.line),
            at_least_one(r.column),
            r.message
        );
    }
    if let Some(p) = &f.preflight {
        let _ = write!(s, "\nkubeadm preflight check: {p}");
    }
    s
}

fn cases(report: &Report<'_>) -> Vec<Case> {
    // Rules in the given order, then reserved codes that occur, sorted.
    let mut ids: Vec<(&str, &str)> = report.rules.iter().map(|r| (r.id, r.category)).collect();
    let mut extra: Vec<&str> = report
        .findings
        .iter()
        .map(|f| f.rule.as_str())
        .filter(|id| report.rule(id).is_none())
        .collect();
    extra.sort_unstable();
    extra.dedup();
    ids.extend(extra.into_iter().map(|id| (id, "load")));

    let mut out = Vec::new();
    for (id, category) in ids {
        let classname = format!("preflint.{category}");
        let (failing, below): (Vec<&Finding>, Vec<&Finding>) = report
            .findings
            .iter()
            .filter(|f| f.rule == id)
            .partition(|f| f.severity >= report.fail_level);
        if failing.is_empty() {
            let system_out = (!below.is_empty()).then(|| {
                below
                    .iter()
                    .map(|f| body(report, f))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            out.push(Case {
                classname,
                name: id.to_string(),
                file: None,
                line: None,
                failure: None,
                system_out,
            });
            continue;
        }
        for f in failing {
            out.push(Case {
                classname: classname.clone(),
                name: format!("{id} at {}", location(report, f)),
                file: Some(report.ci_path(&f.file)),
                line: Some(at_least_one(f.line)),
                failure: Some(Failure {
                    message: f.message.clone(),
                    kind: f.severity.as_str(),
                    body: body(report, f),
                }),
                system_out: None,
            });
        }
    }
    out
}

pub(super) fn render(report: &Report<'_>) -> String {
    let cases = cases(report);
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"preflint\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"preflint\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "    <properties>\n      <property name=\"version\" value=\"{}\"/>\n      <property name=\"root\" value=\"{}\"/>\n      <property name=\"fail-level\" value=\"{}\"/>\n      <property name=\"files-checked\" value=\"{}\"/>\n    </properties>",
        attr(report.tool_version),
        attr(report.root),
        report.fail_level.as_str(),
        report.files_checked
    );
    for c in &cases {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\"",
            attr(&c.classname),
            attr(&c.name)
        );
        if let Some(file) = &c.file {
            let _ = write!(out, " file=\"{}\"", attr(file));
        }
        if let Some(line) = c.line {
            let _ = write!(out, " line=\"{line}\"");
        }
        if c.failure.is_none() && c.system_out.is_none() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        if let Some(f) = &c.failure {
            let _ = writeln!(
                out,
                "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                attr(&f.message),
                f.kind,
                text(&f.body)
            );
        }
        if let Some(s) = &c.system_out {
            let _ = writeln!(out, "      <system-out>{}</system-out>", text(s));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Whether XML 1.0 allows the character at all (escaped or not).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Element text: `&`, `<`, `>` escaped, CR kept as a reference.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c if xml_char(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// Attribute value in double quotes: also quotes, and whitespace as
/// references so attribute-value normalisation keeps newlines and tabs.
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            c => out.push_str(&text(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_text_and_attributes() {
        assert_eq!(text("a<b & c>\r"), "a&lt;b &amp; c&gt;&#13;");
        assert_eq!(attr("\"x\"\n'y'\t"), "&quot;x&quot;&#10;&apos;y&apos;&#9;");
        assert_eq!(text("bell\u{7}"), "bell\u{FFFD}");
        assert_eq!(text("ü 🚀"), "ü 🚀");
    }
}
