//! `--format human`: miette diagnostics with source snippets, then a summary.
//!
//! Each finding becomes a [`miette::Diagnostic`]: the rule id as code, a
//! label at the finding's line, related places in the same file as more
//! labels and those in other files as notes (with their own snippet when the
//! text is at hand), and help that ends with the kubeadm preflight check.
//! Colour comes from miette's theme only, chosen by [`Report::color`].

use super::{Report, at_least_one};
use crate::HashMap;
use crate::diagnostic::Severity;
use crate::rule::{Finding, Related};
use crate::source::SourceMap;
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode,
};
use std::fmt;
use std::sync::Arc;

/// Reports wrap here, so output does not depend on the terminal.
const WIDTH: usize = 100;

/// One finding, or one note under it, as miette sees it.
#[derive(Debug)]
struct Human {
    code: Option<String>,
    severity: miette::Severity,
    message: String,
    help: Option<String>,
    source: Option<NamedSource<Arc<str>>>,
    labels: Vec<LabeledSpan>,
    notes: Vec<Human>,
}

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Human {}

impl Diagnostic for Human {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.code
            .as_ref()
            .map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.labels.iter().cloned()))
        }
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        if self.notes.is_empty() {
            None
        } else {
            Some(Box::new(self.notes.iter().map(|n| n as &dyn Diagnostic)))
        }
    }
}

/// File texts by display path (the paths findings carry), made terminal-safe
/// on first use: a report shows a few files of the hundreds read.
struct Texts {
    files: HashMap<String, Arc<crate::source::SourceFile>>,
    safe: std::cell::RefCell<HashMap<String, Arc<str>>>,
}

impl Texts {
    fn new(sources: Option<&SourceMap>) -> Self {
        let mut files = HashMap::default();
        if let Some(sources) = sources {
            for i in 0..sources.len() {
                let Ok(id) = u32::try_from(i) else { break };
                let file = sources.get(crate::source::FileId(id));
                files.entry(file.display.clone()).or_insert(file);
            }
        }
        Texts {
            files,
            safe: std::cell::RefCell::default(),
        }
    }

    fn get(&self, file: &str) -> Option<Arc<str>> {
        if let Some(t) = self.safe.borrow().get(file) {
            return Some(Arc::clone(t));
        }
        let t = terminal_safe(&self.files.get(file)?.text);
        self.safe
            .borrow_mut()
            .insert(file.to_string(), Arc::clone(&t));
        Some(t)
    }
}

/// The text with each control character other than CR, LF and tab replaced
/// by as many `?` as it has bytes, so offsets still hold.
fn terminal_safe(text: &Arc<str>) -> Arc<str> {
    let unsafe_char = |c: char| c.is_control() && !matches!(c, '\n' | '\r' | '\t');
    if !text.chars().any(unsafe_char) {
        return Arc::clone(text);
    }
    text.chars()
        .map(|c| {
            if unsafe_char(c) {
                "?".repeat(c.len_utf8())
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// The byte range from (line, column) to the end of that line, trailing
/// comment and blanks excluded; `None` when the line is not in the text.
fn span_at(text: &str, line: u32, column: u32) -> Option<(usize, usize)> {
    let want = usize::try_from(at_least_one(line)).ok()? - 1;
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == want {
            let content = l.trim_end_matches(['\n', '\r']);
            let skip = usize::try_from(at_least_one(column)).ok()? - 1;
            let from = content
                .char_indices()
                .nth(skip)
                .map_or(content.len(), |(b, _)| b);
            let rest = &content[from..];
            // Stop before a trailing YAML comment (` #`); a quoted ` #` only
            // shortens the underline.
            let rest = rest.find(" #").map_or(rest, |i| &rest[..i]);
            let len = rest.trim_end().len();
            return Some((start + from, len));
        }
        start += l.len();
    }
    // A position just past a final newline (an empty last line).
    (want == text.split_inclusive('\n').count() && text.ends_with('\n')).then_some((text.len(), 0))
}

/// Terminal-safe text: control characters other than newline and tab (an
/// ESC from a YAML value could restyle the terminal) are shown escaped.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn severity(s: Severity) -> miette::Severity {
    match s {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    }
}

fn located(file: &str, line: u32, column: u32) -> String {
    format!(
        "{}:{}:{}",
        printable(file),
        at_least_one(line),
        at_least_one(column)
    )
}

/// A related place in another file: a note with its own snippet if we can.
fn note(texts: &Texts, root: &str, r: &Related) -> Human {
    let snippet = texts
        .get(&r.file)
        .and_then(|t| span_at(&t, r.line, r.column).map(|s| (t, s)));
    match snippet {
        Some((text, span)) => Human {
            code: None,
            severity: miette::Severity::Advice,
            message: format!("note: {}", printable(&r.message)),
            help: None,
            source: Some(NamedSource::new(
                printable(&super::join_root(root, &r.file)),
                text,
            )),
            labels: vec![LabeledSpan::new_primary_with_span(None, span)],
            notes: Vec::new(),
        },
        None => Human {
            code: None,
            severity: miette::Severity::Advice,
            message: format!(
                "note: {}: {}",
                located(&r.file, r.line, r.column),
                printable(&r.message)
            ),
            help: None,
            source: None,
            labels: Vec::new(),
            notes: Vec::new(),
        },
    }
}

fn diagnostic(texts: &Texts, root: &str, f: &Finding) -> Human {
    let mut help: Vec<String> = f.help.iter().map(|h| printable(h)).collect();
    if let Some(p) = &f.preflight {
        help.push(format!(
            "kubeadm preflight check `{p}` would catch this on the node"
        ));
    }
    let mut out = Human {
        code: Some(printable(&f.rule)),
        severity: severity(f.severity),
        message: printable(&f.message),
        help: (!help.is_empty()).then(|| help.join("\n")),
        source: None,
        labels: Vec::new(),
        notes: Vec::new(),
    };
    let primary = texts
        .get(&f.file)
        .and_then(|t| span_at(&t, f.line, f.column).map(|s| (t, s)));
    let Some((text, span)) = primary else {
        // No text to show: say where, then each related place as a note.
        out.message = format!(
            "{}: {}",
            located(&super::join_root(root, &f.file), f.line, f.column),
            out.message
        );
        out.notes = f.related.iter().map(|r| note(texts, root, r)).collect();
        return out;
    };
    out.labels
        .push(LabeledSpan::new_primary_with_span(None, span));
    for r in &f.related {
        let same_file = (r.file == f.file).then(|| span_at(&text, r.line, r.column));
        match same_file.flatten() {
            Some(span) => out.labels.push(LabeledSpan::new_with_span(
                Some(printable(&r.message)),
                span,
            )),
            None => out.notes.push(note(texts, root, r)),
        }
    }
    out.source = Some(NamedSource::new(
        printable(&super::join_root(root, &f.file)),
        text,
    ));
    out
}

pub(super) fn render(report: &Report<'_>, sources: Option<&SourceMap>) -> String {
    let theme = if report.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(WIDTH)
        .with_links(false)
        .with_show_related_as_nested(true);
    let texts = Texts::new(sources);
    let mut out = String::new();
    for f in report.findings {
        let d = diagnostic(&texts, report.root, f);
        if handler.render_report(&mut out, &d).is_err() {
            // Writing to a String cannot fail; keep the finding visible anyway.
            out.push_str(&d.message);
        }
        out.push('\n');
    }
    out.push_str(&report.summary_line());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_covers_the_rest_of_the_line() {
        let text = "a: 1\n  b: ü x  \r\nc";
        assert_eq!(span_at(text, 1, 1), Some((0, 4)));
        assert_eq!(span_at(text, 2, 3), Some((7, 7)));
        assert_eq!(&text[7..14], "b: ü x");
        assert_eq!(span_at(text, 3, 1), Some((18, 1)));
        assert_eq!(span_at(text, 2, 99), Some((16, 0)));
        assert_eq!(span_at(text, 9, 1), None);
        assert_eq!(span_at("x\n", 2, 1), Some((2, 0)));
        assert_eq!(span_at("- name: x  # expect: r\n", 1, 3), Some((2, 7)));
        assert_eq!(span_at("# only a comment\n", 1, 1), Some((0, 16)));
    }

    #[test]
    fn snippets_keep_offsets_without_control_characters() {
        let t: Arc<str> = Arc::from("a\u{1b}[1m\u{85}b\r\n");
        assert_eq!(&*terminal_safe(&t), "a?[1m??b\r\n");
        let clean: Arc<str> = Arc::from("ok\n");
        assert!(Arc::ptr_eq(&terminal_safe(&clean), &clean));
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("a\u{1b}[31mb\r\n\tü"), "a\\u{1b}[31mb\\r\n\tü");
    }
}
