//! Each template file's syntax tree, parsed once for the process: the
//! same template is rendered for every task, loop item and play that
//! writes it, and macros keep pointing into the tree they were defined in.

use super::super::{MAX_SOURCE_LEN, Unknown, UnknownWhy, parseable, snippet};
use super::FileOptions;
use minijinja::machinery::ast::Stmt;
use std::sync::{Mutex, OnceLock, PoisonError};

/// One parsed template: its text and its statements.
pub(crate) struct Parsed {
    pub(crate) text: &'static str,
    root: Stmt<'static>,
}

impl Parsed {
    pub(crate) fn body(&self) -> &[Stmt<'static>] {
        match &self.root {
            Stmt::Template(t) => &t.children,
            _ => &[],
        }
    }
}

/// Longest template file parsed.
const MAX_FILE_LEN: usize = 4 * MAX_SOURCE_LEN;

/// The memo keeps at most this many bytes of template text: its texts
/// live as long as the process (their syntax trees borrow them); past the
/// bound a template is not rendered (unknown, with the reason).
const MEMO_MAX_BYTES: usize = 16 * 1024 * 1024;

type Memo = Mutex<(
    crate::HashMap<(FileOptions, &'static str), Result<&'static Parsed, Unknown>>,
    usize,
)>;

/// The parsed template, from the memo or parsed now; an unknown with the
/// reason when it is too big, does not parse, or the memo is full.
pub(crate) fn parse(text: &str, opts: &FileOptions) -> Result<&'static Parsed, Unknown> {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let memo = MEMO.get_or_init(Memo::default);
    let lock = || memo.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(p) = lock().0.get(&(opts.clone(), text)) {
        return p.clone();
    }
    if text.len() > MAX_FILE_LEN || lock().1 + text.len() > MEMO_MAX_BYTES {
        return Err(Unknown::new(snippet(text), UnknownWhy::TooComplex));
    }
    if !screened(text, opts) {
        return Err(Unknown::new(snippet(text), UnknownWhy::TooComplex));
    }
    let Some(syntax) = opts.syntax() else {
        return Err(Unknown::failure(snippet(text), "invalid delimiters"));
    };
    let leaked: &'static str = Box::leak(text.into());
    let mut result = minijinja::machinery::parse(leaked, "<template>", syntax.clone());
    let mut source = leaked;
    // Jinja reads `for x in a, b` as a loop over the tuple `(a, b)`;
    // minijinja's parser wants the parentheses.
    if result.is_err()
        && let Some(fixed) = parenthesize_for_tuples(text, opts)
    {
        let fixed: &'static str = Box::leak(fixed.into_boxed_str());
        if let Ok(root) = minijinja::machinery::parse(fixed, "<template>", syntax) {
            result = Ok(root);
            source = fixed;
        }
    }
    let parsed = match result {
        Ok(root) => Ok(&*Box::leak(Box::new(Parsed { text: source, root }))),
        Err(e) => Err(Unknown::failure(
            snippet(text),
            format!(
                "template syntax error: {}",
                e.detail().unwrap_or("invalid syntax")
            ),
        )),
    };
    let mut m = lock();
    if let Some(p) = m.0.get(&(opts.clone(), text)) {
        return p.clone();
    }
    m.1 += text.len();
    m.0.insert((opts.clone(), leaked), parsed.clone());
    parsed
}

/// Each tag and expression of the file passes the expression screen
/// ([`parseable`]): the parser's recursion is bounded per expression.
fn screened(text: &str, opts: &FileOptions) -> bool {
    let starts = [opts.variable.0.as_str(), opts.block.0.as_str()];
    let mut rest = text;
    while let Some(at) = starts.iter().filter_map(|s| rest.find(s)).min() {
        let skip = rest[at..].chars().next().map_or(1, char::len_utf8);
        rest = &rest[at + skip..];
        let end = [opts.variable.1.as_str(), opts.block.1.as_str()]
            .iter()
            .filter_map(|e| rest.find(e))
            .min()
            .unwrap_or(rest.len());
        if !parseable(&rest[..end]) {
            return false;
        }
        rest = &rest[end..];
    }
    true
}

/// The text with each `for` tag whose iterable is a bare tuple (`for x in
/// "a", "b"`) given parentheses; `None` when there is none.
fn parenthesize_for_tuples(text: &str, opts: &FileOptions) -> Option<String> {
    let (open, close) = (opts.block.0.as_str(), opts.block.1.as_str());
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find(open) {
        let Some(len) = rest[at..].find(close) else {
            break;
        };
        let tag = &rest[at..at + len + close.len()];
        out.push_str(&rest[..at]);
        match tuple_iterable(&tag[open.len()..len]) {
            Some((head, iter, tail)) => {
                out.push_str(open);
                out.push_str(head);
                out.push('(');
                out.push_str(iter);
                out.push(')');
                out.push_str(tail);
                out.push_str(close);
                changed = true;
            }
            None => out.push_str(tag),
        }
        rest = &rest[at + tag.len()..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// A `for` tag's inside split around a bare tuple iterable: what comes
/// before it, the iterable, what comes after (whitespace control).
fn tuple_iterable(inside: &str) -> Option<(&str, &str, &str)> {
    let body = inside.trim_start_matches(['-', '+']).trim_start();
    let rest = body.strip_prefix("for ")?;
    let in_at = rest.find(" in ")?;
    let start = inside.len() - rest.len() + in_at + " in ".len();
    let end = inside.trim_end_matches(['-', '+']).trim_end().len();
    let iter = inside.get(start..end)?;
    // A comma outside brackets and quotes, and nothing that ends the
    // iterable early (a loop filter, `recursive`).
    let (mut depth, mut quote) = (0i32, None);
    let mut top_comma = false;
    for c in iter.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => top_comma = true,
            _ => {}
        }
    }
    let words = iter
        .split_whitespace()
        .any(|w| w == "if" || w == "recursive");
    (top_comma && !words).then(|| (&inside[..start], iter, &inside[end..]))
}
