//! Multi-line quoted scalars as libyaml reads them.
//!
//! YAML 1.2 wants the continuation lines of a `"..."` or `'...'` scalar
//! indented deeper than the block they sit in, and without tabs; the
//! parser enforces it. libyaml, whose reading Ansible uses, checks neither,
//! and public roles rely on that:
//!
//! ```yaml
//! k3s_runtime_config: "{{
//!   (k3s_control_node | default(false))
//! }}"
//! ```
//!
//! When the parser rejects a file for one of these two reasons only, the
//! scalar's continuation lines are re-indented in a copy of the text and the
//! file is read again. That changes no value: a flow scalar's continuation
//! lines lose their leading white space when folded. Spans still point into
//! the original text: each byte of the copy remembers where it came from,
//! and each re-indented line how many columns it gained.

use crate::HashMap;

/// How many scalars one file may have re-indented before its error is
/// reported as the parser gave it: each one costs a new reading.
pub(super) const MAX_RELAXED_SCALARS: usize = 32;

/// The two errors libyaml does not raise.
const INDENTATION: &str = "invalid indentation in quoted scalar";
const TAB: &str = "tab cannot be used as indentation";

/// What a rejected reading asks of the text, if it is one of ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ask {
    /// Re-indent the continuation lines of the scalar opening at this byte.
    Scalar(usize),
    /// Turn the tabs of this byte's line's indentation into spaces.
    TabLine(usize),
}

impl Ask {
    pub(super) fn of(info: &str, byte: usize) -> Option<Ask> {
        match info {
            INDENTATION => Some(Ask::Scalar(byte)),
            TAB => Some(Ask::TabLine(byte)),
            _ => None,
        }
    }
}

/// A copy of a file's text with quoted scalars re-indented.
#[derive(Debug)]
pub(super) struct Relaxed {
    pub(super) text: String,
    /// For each byte of `text` (and its end), the byte of the original
    /// text it stands for.
    origin: Vec<u32>,
    /// Columns each re-indented line (1-based) gained.
    gained: HashMap<u32, i64>,
}

impl Relaxed {
    pub(super) fn new(original: &str) -> Self {
        Relaxed {
            text: original.to_string(),
            origin: (0..=u32::try_from(original.len()).unwrap_or(u32::MAX)).collect(),
            gained: HashMap::default(),
        }
    }

    /// The original byte of a byte of the copy.
    pub(super) fn origin(&self, byte: u32) -> u32 {
        let i = usize::try_from(byte).unwrap_or(usize::MAX);
        self.origin
            .get(i)
            .or_else(|| self.origin.last())
            .copied()
            .unwrap_or(0)
    }

    /// The original column (1-based) of a column of the copy.
    pub(super) fn column(&self, line: u32, col: u32) -> u32 {
        match self.gained.get(&line) {
            Some(&g) => u32::try_from((i64::from(col) - g).max(1)).unwrap_or(1),
            None => col,
        }
    }

    /// Does what `ask` asks; `false` when it changes nothing (the error is
    /// then the file's own).
    pub(super) fn apply(&mut self, ask: Ask) -> bool {
        let edits = match ask {
            Ask::Scalar(at) => self.scalar_edits(at),
            Ask::TabLine(at) => {
                let start = line_start(&self.text, at);
                let ws = indentation(self.text.as_bytes(), start);
                vec![Edit {
                    start,
                    len: ws,
                    width: ws,
                }]
            }
        };
        self.rewrite(&edits)
    }

    /// The continuation lines of the scalar opening at `quote`, each to be
    /// indented by at least as many columns as the quote stands at, in
    /// spaces. A blank line keeps its width (it folds to a line break
    /// whatever its white space). A scalar with a document marker at the
    /// start of a line is left as it is: libyaml rejects it too.
    fn scalar_edits(&self, quote: usize) -> Vec<Edit> {
        let bytes = self.text.as_bytes();
        if !matches!(bytes.get(quote), Some(b'"' | b'\'')) {
            return Vec::new();
        }
        let Some(end) = closing_quote(bytes, quote) else {
            return Vec::new();
        };
        let target = self.text[line_start(&self.text, quote)..quote]
            .chars()
            .count()
            + 1;
        let mut edits = Vec::new();
        for (i, _) in bytes[quote..end]
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
        {
            let start = quote + i + 1;
            let ws = indentation(bytes, start);
            let rest = &bytes[start + ws..];
            if ws == 0 && (rest.starts_with(b"---") || rest.starts_with(b"...")) {
                return Vec::new();
            }
            let blank = rest.first().is_none_or(|b| matches!(b, b'\n' | b'\r'));
            let width = if blank { ws } else { ws.max(target) };
            edits.push(Edit {
                start,
                len: ws,
                width,
            });
        }
        edits
    }

    /// Applies `edits` (in text order) in one pass: each becomes `width`
    /// spaces. `false` when the text stays the same.
    fn rewrite(&mut self, edits: &[Edit]) -> bool {
        let bytes = self.text.as_bytes();
        let same = |e: &Edit| {
            e.width == e.len && bytes[e.start..e.start + e.len].iter().all(|&b| b == b' ')
        };
        if edits.iter().all(same) {
            return false;
        }
        let mut text = String::with_capacity(self.text.len());
        let mut origin = Vec::with_capacity(self.origin.len());
        let (mut line, mut counted) = (1u32, 0usize);
        let mut from = 0;
        for e in edits {
            let breaks = memchr::memchr_iter(b'\n', &bytes[counted..e.start]).count();
            line = line.saturating_add(u32::try_from(breaks).unwrap_or(u32::MAX));
            counted = e.start;
            text.push_str(&self.text[from..e.start]);
            origin.extend_from_slice(&self.origin[from..e.start]);
            text.extend(std::iter::repeat_n(' ', e.width));
            let last = e.start + e.len.saturating_sub(1);
            origin.extend((0..e.width).map(|j| self.origin[(e.start + j).min(last)]));
            let grown =
                i64::try_from(e.width).unwrap_or(i64::MAX) - i64::try_from(e.len).unwrap_or(0);
            if grown != 0 {
                *self.gained.entry(line).or_insert(0) += grown;
            }
            from = e.start + e.len;
        }
        text.push_str(&self.text[from..]);
        origin.extend_from_slice(&self.origin[from..]);
        self.text = text;
        self.origin = origin;
        true
    }
}

/// White space to replace: `len` bytes at `start` become `width` spaces.
struct Edit {
    start: usize,
    len: usize,
    width: usize,
}

/// The spaces and tabs at `start`.
fn indentation(bytes: &[u8], start: usize) -> usize {
    bytes[start.min(bytes.len())..]
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

fn line_start(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

/// The byte of the quote that closes the scalar opening at `open`:
/// backslash escapes in `"..."`, a doubled quote in `'...'`.
fn closing_quote(bytes: &[u8], open: usize) -> Option<usize> {
    let q = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if q == b'"' && b == b'\\' {
            i += 2;
            continue;
        }
        if b == q {
            if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scalar_is_reindented_past_its_quote_and_spans_map_back() {
        let text = "k: \"{{\n  x\n}}\"\nnext: 1\n";
        let mut r = Relaxed::new(text);
        assert!(r.apply(Ask::Scalar(3)));
        assert_eq!(r.text, "k: \"{{\n    x\n    }}\"\nnext: 1\n");
        // `x` and `}}` map to where they were written.
        let x = r.text.find('x').unwrap();
        assert_eq!(r.origin(u32::try_from(x).unwrap()), 9);
        let next = r.text.find("next").unwrap();
        assert_eq!(r.origin(u32::try_from(next).unwrap()), 15);
        assert_eq!(r.column(3, 5), 1);
        assert_eq!(r.column(4, 1), 1);
        // Nothing left to change: the error would be the file's own.
        assert!(!r.apply(Ask::Scalar(3)));
    }

    #[test]
    fn tabs_become_spaces_in_place() {
        let text = "a: 'x\n\t\ty'\n";
        let mut r = Relaxed::new(text);
        assert!(r.apply(Ask::TabLine(7)));
        assert_eq!(r.text, "a: 'x\n  y'\n");
        assert_eq!(r.origin(8), 8);
    }

    #[test]
    fn a_blank_line_keeps_its_width_and_a_line_deep_enough_stays() {
        let text = "- k: \"a\n\t\n          b\"\n";
        let mut r = Relaxed::new(text);
        assert!(r.apply(Ask::Scalar(5)));
        assert_eq!(r.text, "- k: \"a\n \n          b\"\n");
    }

    #[test]
    fn document_markers_and_unclosed_scalars_are_left_alone() {
        let mut r = Relaxed::new("a: \"x\n---\ny\"\n");
        assert!(!r.apply(Ask::Scalar(3)));
        let mut r = Relaxed::new("a: \"x\ny\n");
        assert!(!r.apply(Ask::Scalar(3)));
        let mut r = Relaxed::new("a: x\n");
        assert!(!r.apply(Ask::Scalar(3)));
    }

    #[test]
    fn escapes_do_not_close_the_scalar() {
        let bytes = br#"a: "x\"y" z"#;
        assert_eq!(closing_quote(bytes, 3), Some(8));
        let bytes = b"a: 'it''s' z";
        assert_eq!(closing_quote(bytes, 3), Some(9));
    }
}
