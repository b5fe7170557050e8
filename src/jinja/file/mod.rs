//! Template files as Ansible's `template` action renders them: the whole
//! of the Jinja it uses (`for`, `if`, `set`, macros and `call` blocks,
//! `include`/`import`/`extends` of other templates from the task's search
//! path), its whitespace (`trim_blocks` on, `lstrip_blocks` off, the
//! trailing newlines of the source kept) and the `#jinja2:` first-line
//! overrides.
//!
//! What cannot be known statically does not make the whole file unknown:
//! a condition that is unknown renders both branches, each line under its
//! condition; an expression or a loop over something unknown gives
//! unknown lines with the reason. The result ([`FileText`]) is made of
//! known lines, lines known only under conditions, and unknown lines —
//! never a line with unrendered template syntax.
//!
//! It must not read files itself (the caller's [`TemplateLoader`] finds
//! the templates a template includes) nor run without bound: every render
//! spends the evaluator's fuel, loops, includes and macro calls have their
//! own bounds ([`MAX_LOOP_ITEMS`], [`MAX_INCLUDE_DEPTH`],
//! [`MAX_CALL_DEPTH`]) and the output is cut at [`super::MAX_RENDERED_LEN`].
//!
//! Where things are: `options` reads the overrides, `parsed` keeps each
//! template's syntax tree, `interp` runs the statements into fragments,
//! `lines` cuts the fragments into lines.

mod interp;
mod lines;
mod options;
mod parsed;
#[cfg(test)]
mod tests;

pub use options::FileOptions;

use super::{Unknown, UnknownWhy, VarSource, snippet};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// Most iterations one `for` loop may run; more makes its output unknown.
pub const MAX_LOOP_ITEMS: usize = 10_000;
/// Deepest chain of `include`/`import`/`extends`.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Deepest chain of macro calls (a macro that calls itself stops here).
pub const MAX_CALL_DEPTH: usize = 32;
/// Most alternative texts one line may have (a line with several unknown
/// conditions on it); past this the line is unknown.
pub const MAX_LINE_ALTERNATIVES: usize = 16;

/// Finds the templates a template includes, imports or extends, by the
/// name it gives (the role's `templates/` and the rest of the template
/// action's search path).
pub trait TemplateLoader {
    fn load(&self, name: &str) -> Option<Arc<str>>;
}

/// A loader that finds nothing.
pub struct NoTemplates;

impl TemplateLoader for NoTemplates {
    fn load(&self, _: &str) -> Option<Arc<str>> {
        None
    }
}

/// A template file rendered as far as it can be known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileText {
    /// The lines, in order.
    pub lines: Vec<Line>,
    /// The newline the file is written with (`newline_sequence`).
    #[serde(skip)]
    pub newline: &'static str,
}

/// One line of a rendered file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    /// The line's text without its newline. For an unknown line, the known
    /// parts with [`UNKNOWN_MARK`] where something unknown goes.
    pub text: String,
    /// Why the line is not known; empty when it is.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "in_words")]
    pub unknown: Vec<Unknown>,
    /// The conditions under which the line is written, all of them; empty
    /// when it always is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<Condition>,
    /// The line ends with a newline (the last line of a file may not).
    #[serde(skip)]
    pub newline: bool,
}

/// Marks, in an unknown line's text, where an unknown value goes.
pub const UNKNOWN_MARK: &str = "<unknown>";

/// A template condition that is not known statically, as one branch takes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Condition {
    /// The test as written (`{% if EXPR %}`), or the loop filter.
    pub expr: String,
    /// The branch taken when the test is true (`true`) or false.
    pub holds: bool,
    /// What the test depends on.
    #[serde(serialize_with = "in_words")]
    pub why: Vec<Unknown>,
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is {}",
            self.expr,
            if self.holds { "true" } else { "false" }
        )?;
        if let Some(u) = self.why.first() {
            write!(f, " ({})", describe(u))?;
        }
        Ok(())
    }
}

/// Which lines a file's rendering knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Every line, unconditionally.
    Full,
    /// Some lines are conditional or unknown.
    Partly,
    /// No line is known.
    None,
}

impl Line {
    /// Known text (whether always written or only under conditions).
    #[must_use]
    pub fn is_known(&self) -> bool {
        self.unknown.is_empty()
    }

    /// Known and always written.
    #[must_use]
    pub fn is_certain(&self) -> bool {
        self.unknown.is_empty() && self.when.is_empty()
    }

    /// The conditions in words (`` `x` is true and `y` is false ``).
    #[must_use]
    pub fn when_text(&self) -> String {
        self.when
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" and ")
    }

    /// Why the line is unknown, in words.
    #[must_use]
    pub fn unknown_text(&self) -> String {
        self.unknown
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl FileText {
    /// A file of which nothing is known, for this reason.
    #[must_use]
    pub fn unknown(why: Unknown) -> FileText {
        FileText {
            lines: vec![Line {
                text: UNKNOWN_MARK.to_string(),
                unknown: vec![why],
                when: Vec::new(),
                newline: false,
            }],
            newline: "\n",
        }
    }

    /// A file known whole.
    #[must_use]
    pub fn known(text: &str) -> FileText {
        let mut lines: Vec<Line> = text
            .split('\n')
            .map(|l| Line {
                text: l.to_string(),
                unknown: Vec::new(),
                when: Vec::new(),
                newline: true,
            })
            .collect();
        if let Some(last) = lines.pop()
            && !last.text.is_empty()
        {
            lines.push(Line {
                newline: false,
                ..last
            });
        }
        FileText {
            lines,
            newline: "\n",
        }
    }

    /// How much of the file is known.
    #[must_use]
    pub fn coverage(&self) -> Coverage {
        if self.lines.iter().all(Line::is_certain) {
            Coverage::Full
        } else if self.lines.iter().any(Line::is_known) {
            Coverage::Partly
        } else {
            Coverage::None
        }
    }

    /// The whole text as written to the node, when every line is known
    /// and unconditional.
    #[must_use]
    pub fn full_text(&self) -> Option<String> {
        (self.coverage() == Coverage::Full).then(|| self.join(|_| true))
    }

    /// The known lines (unconditional and conditional), joined: what a
    /// pattern may find in the file when some branch is taken.
    #[must_use]
    pub fn known_text(&self) -> String {
        self.join(Line::is_known)
    }

    fn join(&self, keep: impl Fn(&Line) -> bool) -> String {
        let mut out = String::new();
        for l in self.lines.iter().filter(|l| keep(l)) {
            out.push_str(&l.text);
            if l.newline {
                out.push_str(self.newline);
            }
        }
        out
    }

    /// The unknown lines.
    pub fn unknown_lines(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| !l.is_known())
    }
}

fn in_words<S: serde::Serializer>(u: &[Unknown], ser: S) -> Result<S::Ok, S::Error> {
    ser.collect_seq(u.iter().map(describe))
}

/// Why something is unknown, in words: which variable, and why.
#[must_use]
pub fn describe(u: &Unknown) -> String {
    let why = match (&u.why, &u.error) {
        (_, Some(e)) => return format!("`{}` fails: {e}", u.var),
        (UnknownWhy::Fact, _) => "a host fact",
        (UnknownWhy::Registered, _) => "a registered result",
        (UnknownWhy::RuntimeFact, _) => "set at run time by set_fact",
        (UnknownWhy::Unset, _) => "never defined",
        (UnknownWhy::Vault, _) => "a vaulted value",
        (UnknownWhy::Lookup, _) => "a lookup run on the controller",
        (UnknownWhy::TooComplex, _) => "not evaluated statically",
        (UnknownWhy::Cycle, _) => "defined in terms of itself",
    };
    format!("`{}` is {why}", u.var)
}

/// Renders a template file's text with `vars`, the templates it includes
/// found by `loader`, under the task's `options` (the `#jinja2:` header
/// of the text overrides them).
#[must_use]
pub fn render_file(
    text: &str,
    vars: &dyn VarSource,
    loader: &dyn TemplateLoader,
    options: &FileOptions,
) -> FileText {
    let Some(_guard) = super::Nesting::enter() else {
        return FileText::unknown(Unknown::new(snippet(text), UnknownWhy::TooComplex));
    };
    let (body, opts) = match options.with_header(text) {
        Ok(x) => x,
        Err(m) => return FileText::unknown(Unknown::failure(snippet(text), m)),
    };
    let parsed = match parsed::parse(body, &opts) {
        Ok(p) => p,
        Err(u) => return FileText::unknown(u),
    };
    let frags = match interp::run(parsed, vars, loader, &opts) {
        Ok(f) => f,
        Err(u) => return FileText::unknown(u),
    };
    let mut file = lines::cut(&frags, opts.newline_str());
    // Ansible adds back the newlines Jinja took from the end of the source
    // (the template as given, header included).
    let trailing = |s: &str| s.len() - s.trim_end_matches('\n').len();
    let wanted = trailing(text);
    lines::restore_trailing_newlines(&mut file, wanted);
    file
}
