//! `sed`: in place (`-i`), each file is edited the way its script says;
//! on `/etc/fstab`, a script that deletes or comments out the lines a
//! swap pattern selects keeps swap off at boot. Without `-i`, `sed` is a
//! filter whose output is not known.

use super::{Call, Cx, Step, Stream, Word};
use crate::effect::{Edit, EffectKind, SwapOff, Timing};
use std::borrow::Cow;

pub(super) fn sed<'a>(call: &Call<'_, 'a>, cx: &mut Cx) -> Step<'a> {
    let mut in_place = false;
    let mut script: Option<String> = None;
    let mut from_file = false;
    let mut files = Vec::new();
    let add = |script: &mut Option<String>, s: &str| {
        let t = script.get_or_insert_with(String::new);
        if !t.is_empty() {
            t.push('\n');
        }
        t.push_str(s);
    };
    let mut i = 0;
    let args = call.args;
    let mut options = true;
    while let Some(w) = args.get(i) {
        let a = w.as_str();
        i += 1;
        if !options || a == "-" || !a.starts_with('-') {
            if script.is_none() && !from_file {
                add(&mut script, a);
            } else {
                files.push(w);
            }
            continue;
        }
        if a == "--" {
            options = false;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "in-place" => in_place = true,
                "expression" => {
                    let v = value.or_else(|| {
                        i += 1;
                        args.get(i - 1).map(Word::as_str)
                    });
                    add(&mut script, v.unwrap_or_default());
                }
                "file" => {
                    from_file = true;
                    if value.is_none() {
                        i += 1;
                    }
                }
                "line-length" if value.is_none() => i += 1,
                _ => {}
            }
            continue;
        }
        // A cluster of short options: `-i` takes the rest as a suffix,
        // `-e`/`-f`/`-l` the rest or the next word as their value.
        for (k, c) in a.char_indices().skip(1) {
            let rest = &a[k + 1..];
            match c {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'f' | 'l' => {
                    let v = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map_or("", |w| w.as_str())
                    } else {
                        rest
                    };
                    match c {
                        'e' => add(&mut script, v),
                        'f' => from_file = true,
                        _ => {}
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    if !in_place {
        return Step {
            recognised: call.consumed,
            stdout: Stream::Unknown,
            consumes: 0,
        };
    }
    if files.is_empty() {
        return Step::done(false);
    }
    let cmds = script.as_deref().map(parse).unwrap_or_default();
    let swap = cmds.iter().any(Cmd::turns_swap_off);
    for f in files {
        let path = f.as_str();
        let mut edited = false;
        for c in &cmds {
            if let Some(edit) = c.edit() {
                edited = true;
                cx.push(
                    EffectKind::FileEdited {
                        path: path.to_string(),
                        edit,
                    },
                    Timing::BOTH,
                );
            }
        }
        if !edited {
            cx.push(
                EffectKind::FileEdited {
                    path: path.to_string(),
                    edit: Edit {
                        text: String::new(),
                        regexp: None,
                        remove: false,
                    },
                },
                Timing::BOTH,
            );
        }
        if swap && crate::sysctl::conf::normalize_path(path).as_deref() == Some("/etc/fstab") {
            cx.push(
                EffectKind::SwapOff {
                    how: SwapOff::FstabEntries,
                },
                Timing::BOOT,
            );
        }
    }
    Step::done(!from_file)
}

/// One command of a sed script, as far as edits go.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Cmd<'s> {
    /// The regex of the (first) address, when it is one.
    addr: Option<Cow<'s, str>>,
    /// `!`: the command applies to the lines the address does not select.
    negated: bool,
    op: Op<'s>,
}

#[derive(Debug, PartialEq, Eq)]
enum Op<'s> {
    /// `d`, `D`.
    Delete,
    /// `s/re/replacement/flags`.
    Subst {
        re: Cow<'s, str>,
        repl: Cow<'s, str>,
    },
    /// `c`, `a`, `i` with their text.
    Change(Cow<'s, str>),
    Append(Cow<'s, str>),
    Other,
}

impl Cmd<'_> {
    /// What the command does to the lines it selects; `None` for the
    /// commands that edit nothing (`p`, `n`, labels...). Commenting a line
    /// out removes it as much as deleting it does.
    fn edit(&self) -> Option<Edit> {
        let sel = |re: Option<&str>| {
            if self.negated {
                None
            } else {
                self.addr.as_deref().or(re).map(str::to_string)
            }
        };
        Some(match &self.op {
            Op::Delete => Edit {
                text: String::new(),
                regexp: sel(None),
                remove: true,
            },
            Op::Subst { re, repl } => {
                let comments = repl.starts_with('#');
                Edit {
                    text: if comments {
                        String::new()
                    } else {
                        repl.to_string()
                    },
                    regexp: sel(Some(re)),
                    remove: comments || (repl.is_empty() && whole_line(re)),
                }
            }
            Op::Change(text) => Edit {
                text: if text.starts_with('#') {
                    String::new()
                } else {
                    text.to_string()
                },
                regexp: sel(None),
                remove: text.is_empty() || text.starts_with('#'),
            },
            Op::Append(text) => Edit {
                text: text.to_string(),
                regexp: None,
                remove: false,
            },
            Op::Other => return None,
        })
    }

    /// Whether the command deletes, blanks or comments out lines selected
    /// by a swap pattern (`/swap/d`, `/ swap /s/^/#/`, `s/.*swap.*/#&/`).
    fn turns_swap_off(&self) -> bool {
        if self.negated {
            return false;
        }
        let addr_swap = self.addr.as_deref().is_some_and(names_swap);
        match &self.op {
            Op::Delete => addr_swap,
            Op::Subst { re, repl } => {
                (addr_swap || names_swap(re))
                    && (repl.starts_with('#') || (repl.is_empty() && whole_line(re)))
            }
            Op::Change(text) => addr_swap && (text.is_empty() || text.starts_with('#')),
            Op::Append(_) | Op::Other => false,
        }
    }
}

fn names_swap(re: &str) -> bool {
    re.contains("swap")
}

/// A regex that matches the whole line (`.*swap.*`, `^.*swap.*$`).
fn whole_line(re: &str) -> bool {
    let re = re.strip_prefix('^').unwrap_or(re);
    let re = re.strip_suffix('$').unwrap_or(re);
    re.starts_with(".*") && re.ends_with(".*")
}

/// The commands of a sed script (GNU syntax), as far as they parse.
pub(super) fn parse(script: &str) -> Vec<Cmd<'_>> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // The addresses of the enclosing `{ }` blocks.
    let mut blocks: Vec<(Option<Cow<'_, str>>, bool)> = Vec::new();
    while i < b.len() {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b';') {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        if b[i] == b'}' {
            blocks.pop();
            i += 1;
            continue;
        }
        if b[i] == b'#' {
            i = line_end(b, i);
            continue;
        }
        let mut addr = None;
        if let Some((re, next)) = address(script, i) {
            addr = re;
            i = next;
            if b.get(i) == Some(&b',') {
                match address(script, i + 1) {
                    Some((_, next)) => i = next,
                    None => break,
                }
            }
        }
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let mut negated = false;
        while b.get(i) == Some(&b'!') {
            negated = !negated;
            i += 1;
            while matches!(b.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
        }
        if let (None, Some((a, n))) = (&addr, blocks.last()) {
            addr.clone_from(a);
            negated = *n;
        }
        let Some(&c) = b.get(i) else { break };
        i += 1;
        let op = match c {
            b'{' => {
                blocks.push((addr, negated));
                continue;
            }
            b'd' | b'D' => Op::Delete,
            b's' => {
                let Some(&delim) = b.get(i) else { break };
                let Some((re, next)) = delimited(script, i + 1, delim) else {
                    break;
                };
                let Some((repl, next)) = delimited(script, next, delim) else {
                    break;
                };
                i = next;
                // Flags; `w FILE` takes the rest of the line.
                while let Some(&f) = b.get(i) {
                    match f {
                        b'w' => {
                            i = line_end(b, i);
                            break;
                        }
                        b';' | b'\n' | b'}' => break,
                        _ => i += 1,
                    }
                }
                Op::Subst {
                    re,
                    repl: unescape_replacement(repl),
                }
            }
            b'y' => {
                let Some(&delim) = b.get(i) else { break };
                let Some((_, next)) = delimited(script, i + 1, delim) else {
                    break;
                };
                let Some((_, next)) = delimited(script, next, delim) else {
                    break;
                };
                i = next;
                Op::Other
            }
            b'a' | b'i' | b'c' => {
                let (text, next) = text_arg(script, i);
                i = next;
                if c == b'c' {
                    Op::Change(text)
                } else {
                    Op::Append(text)
                }
            }
            b'r' | b'R' | b'w' | b'W' | b':' | b'b' | b't' | b'T' | b'e' | b'v' => {
                // A file name or label runs to the end of the line (GNU
                // also ends labels at `;`).
                while let Some(&x) = b.get(i) {
                    if x == b'\n' || (x == b';' && matches!(c, b'b' | b't' | b'T' | b':')) {
                        break;
                    }
                    i += 1;
                }
                Op::Other
            }
            b'=' | b'g' | b'G' | b'h' | b'H' | b'l' | b'n' | b'N' | b'p' | b'P' | b'q' | b'Q'
            | b'x' | b'z' | b'F' => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                Op::Other
            }
            _ => break,
        };
        out.push(Cmd { addr, negated, op });
    }
    out
}

fn line_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k)
}

/// An address at `i`: `/re/`, `\cREc`, a line number, `$`, with GNU's
/// `I`/`M` flags and `first~step`; the regex when it is one, and the
/// index after it. `None` when there is no address.
#[allow(clippy::type_complexity)]
fn address(script: &str, i: usize) -> Option<(Option<Cow<'_, str>>, usize)> {
    let b = script.as_bytes();
    let (re, mut next) = match *b.get(i)? {
        b'/' => {
            let (re, next) = delimited(script, i + 1, b'/')?;
            (Some(re), next)
        }
        b'\\' => {
            let delim = *b.get(i + 1)?;
            let (re, next) = delimited(script, i + 2, delim)?;
            (Some(re), next)
        }
        b'0'..=b'9' => {
            let mut j = i;
            while b.get(j).is_some_and(|c| c.is_ascii_digit() || *c == b'~') {
                j += 1;
            }
            (None, j)
        }
        b'$' => (None, i + 1),
        b'+' | b'~' if i > 0 && b[i - 1] == b',' => {
            let mut j = i + 1;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            (None, j)
        }
        _ => return None,
    };
    while matches!(b.get(next), Some(b'I' | b'M')) {
        next += 1;
    }
    Some((re, next))
}

/// The text from `i` up to the unescaped `delim`, and the index after the
/// delimiter; `\delim` stands for the delimiter. `None` when it is not
/// closed.
fn delimited(script: &str, i: usize, delim: u8) -> Option<(Cow<'_, str>, usize)> {
    let b = script.as_bytes();
    let mut j = i;
    let mut escaped_delim = false;
    while j < b.len() {
        if b[j] == b'\\' && j + 1 < b.len() {
            escaped_delim |= b[j + 1] == delim && delim != b'\\';
            j += 2;
            continue;
        }
        if b[j] == delim {
            let raw = &script[i..j];
            let text = if escaped_delim {
                let d = char::from(delim);
                Cow::Owned(raw.replace(&format!("\\{d}"), &d.to_string()))
            } else {
                Cow::Borrowed(raw)
            };
            return Some((text, j + 1));
        }
        j += 1;
    }
    None
}

/// A replacement as the text it puts in: `\n` a newline, `\X` the
/// character `X`; `&` and `\1` stay as written.
fn unescape_replacement(repl: Cow<'_, str>) -> Cow<'_, str> {
    if !repl.contains('\\') {
        return repl;
    }
    let mut s = String::with_capacity(repl.len());
    let mut chars = repl.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            s.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => s.push('\n'),
            Some('t') => s.push('\t'),
            Some(d @ ('0'..='9' | '&')) => {
                s.push('\\');
                s.push(d);
            }
            Some(other) => s.push(other),
            None => s.push('\\'),
        }
    }
    Cow::Owned(s)
}

/// The text of `a`, `i`, `c`: GNU's one-line form (`a text`, `a\text`) or
/// the POSIX form (`a\` and the text on the next lines, each line but the
/// last ending in `\`).
fn text_arg(script: &str, mut i: usize) -> (Cow<'_, str>, usize) {
    let b = script.as_bytes();
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    if b.get(i) == Some(&b'\\') {
        i += 1;
        if b.get(i) == Some(&b'\n') {
            i += 1;
        }
    }
    let start = i;
    let mut lines = String::new();
    loop {
        let end = line_end(b, i);
        let line = &script[i..end];
        if let Some(cont) = line.strip_suffix('\\') {
            lines.push_str(cont);
            lines.push('\n');
            i = (end + 1).min(b.len());
            if i >= b.len() {
                return (Cow::Owned(lines), i);
            }
        } else if lines.is_empty() {
            return (Cow::Borrowed(&script[start..end]), end);
        } else {
            lines.push_str(line);
            return (Cow::Owned(lines), end);
        }
    }
}
