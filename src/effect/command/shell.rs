//! A command line split the way `sh` reads it: words with their quotes
//! removed, simple commands separated by `;`, `&&`, `||`, `&`, `|`,
//! newlines and parentheses, redirections, here-documents and
//! here-strings. Parameter expansions and command substitutions are kept
//! as written and only flagged: nothing is expanded or run.
//!
//! The `command` module runs its line without a shell (Python's
//! `shlex.split`): [`Mode::Exec`] reads the same quoting but no operator,
//! comment or here-document.
//!
//! It never fails: unbalanced quotes run to the end of the line, as far
//! as the words go.

use std::borrow::Cow;

/// How the line is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// By `/bin/sh -c` (`shell`, `raw`, `sh -c`).
    Shell,
    /// Split into argv and executed (`command`).
    Exec,
}

/// One word after quote removal.
#[derive(Debug, Clone)]
pub(crate) struct Word<'a> {
    /// The text, quotes removed; expansions kept as written.
    pub text: Cow<'a, str>,
    /// Holds an expansion (`$x`, `${x}`, `$(..)`, backticks) outside
    /// single quotes: the value on the node is not the text.
    pub expands: bool,
    /// Holds an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// Some part is quoted or escaped: never a reserved word.
    pub quoted: bool,
}

impl Word<'_> {
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `>`, `>|`.
    Write,
    /// `>>`.
    Append,
    /// `&>`, `>& file`: standard output and error.
    WriteBoth,
    /// `&>>`.
    AppendBoth,
    /// `<`, `<>`.
    Read,
    /// `>&2`, `2>&1`, `<&-`.
    Dup,
}

#[derive(Debug, Clone)]
pub(crate) struct Redirect<'a> {
    /// The descriptor written before the operator (`2>`).
    pub fd: Option<u32>,
    pub op: Op,
    pub target: Word<'a>,
}

impl Redirect<'_> {
    /// Whether the command's standard output goes to `target`.
    pub fn takes_stdout(&self) -> bool {
        match self.op {
            Op::Write | Op::Append => self.fd.is_none_or(|fd| fd == 1),
            Op::WriteBoth | Op::AppendBoth => true,
            Op::Read | Op::Dup => false,
        }
    }

    pub fn writes(&self) -> bool {
        matches!(
            self.op,
            Op::Write | Op::Append | Op::WriteBoth | Op::AppendBoth
        )
    }

    pub fn appends(&self) -> bool {
        matches!(self.op, Op::Append | Op::AppendBoth)
    }
}

/// A here-document or here-string given as standard input.
#[derive(Debug, Clone)]
pub(crate) struct Here<'a> {
    pub text: Cow<'a, str>,
    /// The shell expands nothing in it (a quoted delimiter, or no `$`,
    /// backtick or backslash in the text).
    pub literal: bool,
}

/// One simple command: its words (assignments and prefixes included),
/// its redirections and where it sits in the line.
#[derive(Debug, Clone)]
pub(crate) struct Simple<'a> {
    pub words: Vec<Word<'a>>,
    pub redirects: Vec<Redirect<'a>>,
    pub stdin: Option<Here<'a>>,
    /// Its text is `line[start..end]`.
    pub start: usize,
    pub end: usize,
    /// Its standard output is piped into the next command.
    pub pipe: bool,
}

impl Simple<'_> {
    fn new() -> Self {
        Simple {
            words: Vec::new(),
            redirects: Vec::new(),
            stdin: None,
            start: usize::MAX,
            end: 0,
            pipe: false,
        }
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.redirects.is_empty() && self.stdin.is_none()
    }
}

/// The simple commands of `line`, in order.
pub(crate) fn split(line: &str, mode: Mode) -> Vec<Simple<'_>> {
    let mut p = Parser {
        src: line,
        b: line.as_bytes(),
        i: 0,
        mode,
        cmds: Vec::new(),
        cur: Simple::new(),
        pending: Vec::new(),
    };
    p.run();
    p.cmds
}

/// A here-document whose body starts on the next line.
struct Pending<'a> {
    cmd: usize,
    delim: Cow<'a, str>,
    strip_tabs: bool,
    literal: bool,
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    mode: Mode,
    cmds: Vec<Simple<'a>>,
    cur: Simple<'a>,
    pending: Vec<Pending<'a>>,
}

/// Words that open or close a compound command: skipped where a command
/// starts, so that the command after them is seen.
fn is_reserved_prefix(w: &str) -> bool {
    matches!(
        w,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "while"
            | "until"
            | "!"
            | "{"
            | "}"
            | "esac"
            | "time"
    )
}

impl<'a> Parser<'a> {
    fn shell(&self) -> bool {
        self.mode == Mode::Shell
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn run(&mut self) {
        let len = self.b.len();
        loop {
            self.skip_blanks();
            if self.i >= len {
                self.finish(false);
                break;
            }
            let c = self.b[self.i];
            if !self.shell() {
                self.word_token();
                continue;
            }
            match c {
                b'\n' => {
                    self.finish(false);
                    self.i += 1;
                    self.here_bodies();
                }
                b'#' => {
                    while self.i < len && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b';' | b'(' | b')' => {
                    self.finish(false);
                    self.i += 1;
                }
                b'&' => {
                    if self.at(self.i + 1) == b'>' {
                        self.redirect(None);
                    } else {
                        self.i += if self.at(self.i + 1) == b'&' { 2 } else { 1 };
                        self.finish(false);
                    }
                }
                b'|' => match self.at(self.i + 1) {
                    b'|' => {
                        self.i += 2;
                        self.finish(false);
                    }
                    b'&' => {
                        self.i += 2;
                        self.finish(true);
                    }
                    _ => {
                        self.i += 1;
                        self.finish(true);
                    }
                },
                b'<' | b'>' => self.redirect(None),
                b'0'..=b'9' => {
                    let mut j = self.i;
                    while self.at(j).is_ascii_digit() {
                        j += 1;
                    }
                    if matches!(self.at(j), b'<' | b'>') {
                        let fd = self.src[self.i..j].parse().ok();
                        self.i = j;
                        self.redirect(fd);
                    } else {
                        self.word_token();
                    }
                }
                _ => self.word_token(),
            }
        }
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.at(self.i) {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' if !self.shell() => self.i += 1,
                b'\\' if self.at(self.i + 1) == b'\n' => self.i += 2,
                _ => break,
            }
        }
    }

    /// Ends the current simple command; `pipe`: its output feeds the next.
    fn finish(&mut self, pipe: bool) {
        if self.cur.is_empty() {
            return;
        }
        let mut c = std::mem::replace(&mut self.cur, Simple::new());
        c.pipe = pipe;
        self.cmds.push(c);
    }

    fn mark(&mut self, start: usize) {
        if self.cur.start == usize::MAX {
            self.cur.start = start;
        }
        self.cur.end = self.i;
    }

    fn word_token(&mut self) {
        let start = self.i;
        let w = self.word();
        if self.i == start {
            // A byte no rule consumes; never loop on it.
            self.i += 1;
            return;
        }
        if self.shell()
            && self.cur.words.is_empty()
            && self.cur.redirects.is_empty()
            && !w.quoted
            && is_reserved_prefix(&w.text)
        {
            return;
        }
        self.cur.words.push(w);
        self.mark(start);
    }

    fn redirect(&mut self, fd: Option<u32>) {
        let start = self.i;
        let first = self.at(self.i);
        let (op, len, here) = match (first, self.at(self.i + 1), self.at(self.i + 2)) {
            (b'&', b'>', b'>') => (Op::AppendBoth, 3, None),
            (b'&', b'>', _) => (Op::WriteBoth, 2, None),
            (b'>', b'>', _) => (Op::Append, 2, None),
            (b'>', b'|', _) => (Op::Write, 2, None),
            (b'>' | b'<', b'&', _) => (Op::Dup, 2, None),
            (b'>', _, _) => (Op::Write, 1, None),
            (b'<', b'<', b'<') => (Op::Read, 3, Some(HereKind::String)),
            (b'<', b'<', b'-') => (Op::Read, 3, Some(HereKind::Doc { strip_tabs: true })),
            (b'<', b'<', _) => (Op::Read, 2, Some(HereKind::Doc { strip_tabs: false })),
            (b'<', b'>', _) => (Op::Read, 2, None),
            _ => (Op::Read, 1, None),
        };
        self.i += len;
        while matches!(self.at(self.i), b' ' | b'\t') {
            self.i += 1;
        }
        let target = self.word();
        match here {
            Some(HereKind::String) => {
                let mut text = target.text.into_owned();
                text.push('\n');
                self.cur.stdin = Some(Here {
                    text: Cow::Owned(text),
                    literal: !target.expands,
                });
            }
            Some(HereKind::Doc { strip_tabs }) => self.pending.push(Pending {
                cmd: self.cmds.len(),
                delim: target.text,
                strip_tabs,
                literal: target.quoted,
            }),
            None => {
                // `>& file` writes both streams; `>&2`, `>&-` duplicate.
                let op = if op == Op::Dup
                    && first != b'<'
                    && !target.text.is_empty()
                    && !target.text.bytes().all(|c| c.is_ascii_digit() || c == b'-')
                {
                    Op::WriteBoth
                } else {
                    op
                };
                self.cur.redirects.push(Redirect { fd, op, target });
            }
        }
        if here.is_some() && self.cur.words.is_empty() && self.cur.redirects.is_empty() {
            // Keeps a command made only of a here-document (`<<EOF`).
            self.cur.stdin.get_or_insert(Here {
                text: Cow::Borrowed(""),
                literal: true,
            });
        }
        self.mark(start);
    }

    /// Reads the bodies of the here-documents opened on the line just
    /// ended.
    fn here_bodies(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let body_start = self.i;
            let mut body_end = self.b.len();
            let mut next = self.b.len();
            let mut j = self.i;
            while j < self.b.len() {
                let eol = memchr::memchr(b'\n', &self.b[j..]).map_or(self.b.len(), |k| j + k);
                let mut line = &self.src[j..eol];
                if p.strip_tabs {
                    line = line.trim_start_matches('\t');
                }
                if line.trim_end() == p.delim {
                    body_end = j;
                    next = (eol + 1).min(self.b.len());
                    break;
                }
                j = eol + 1;
            }
            self.i = next;
            let raw = &self.src[body_start..body_end.max(body_start)];
            let text = if p.strip_tabs && raw.contains('\t') {
                let mut s = String::with_capacity(raw.len());
                for l in raw.split_inclusive('\n') {
                    s.push_str(l.trim_start_matches('\t'));
                }
                Cow::Owned(s)
            } else {
                Cow::Borrowed(raw)
            };
            let literal = p.literal || !text.contains(['$', '`', '\\']);
            if let Some(c) = self.cmds.get_mut(p.cmd) {
                c.stdin = Some(Here { text, literal });
            }
        }
    }

    /// One word from `self.i`: its extent first, then its text without
    /// quotes when it has any.
    fn word(&mut self) -> Word<'a> {
        let start = self.i;
        let len = self.b.len();
        let shell = self.shell();
        let (mut expands, mut glob, mut quoted) = (false, false, false);
        while self.i < len {
            let c = self.b[self.i];
            if let Some(end) = skip_jinja(self.b, self.i) {
                expands = true;
                self.i = end;
                continue;
            }
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => break,
                b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' if shell => break,
                b'\\' => {
                    quoted = true;
                    self.i += 2;
                }
                b'\'' => {
                    quoted = true;
                    let (end, jinja) = close_single(self.b, self.i);
                    expands |= jinja;
                    self.i = end + 1;
                }
                b'"' => {
                    quoted = true;
                    self.i += 1;
                    while self.i < len && self.b[self.i] != b'"' {
                        if let Some(end) = skip_jinja(self.b, self.i) {
                            expands = true;
                            self.i = end;
                            continue;
                        }
                        match self.b[self.i] {
                            b'\\' => self.i += 2,
                            b'$' => {
                                let (end, e) = skip_dollar(self.b, self.i, shell);
                                expands |= e;
                                self.i = end;
                            }
                            b'`' if shell => {
                                expands = true;
                                self.i = skip_backtick(self.b, self.i);
                            }
                            _ => self.i += 1,
                        }
                    }
                    self.i += 1;
                }
                b'$' if self.at(self.i + 1) == b'\'' && shell => {
                    quoted = true;
                    self.i += 2;
                    while self.i < len && self.b[self.i] != b'\'' {
                        self.i += if self.b[self.i] == b'\\' { 2 } else { 1 };
                    }
                    self.i += 1;
                }
                b'$' => {
                    let (end, e) = skip_dollar(self.b, self.i, shell);
                    expands |= e;
                    self.i = end;
                }
                b'`' if shell => {
                    expands = true;
                    self.i = skip_backtick(self.b, self.i);
                }
                b'*' | b'?' | b'[' if shell => {
                    glob = true;
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        self.i = self.i.min(len);
        let raw = &self.src[start..self.i];
        let text = if quoted {
            Cow::Owned(unquote(raw, shell))
        } else {
            Cow::Borrowed(raw)
        };
        Word {
            text,
            expands,
            glob,
            quoted,
        }
    }
}

/// The end of the Jinja expression or statement at `i` (`{{ .. }}`,
/// `{% .. %}`) that rendering left in the line: it stands for text not
/// known, and the shell's quotes inside it are Jinja's.
fn skip_jinja(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let close: &[u8] = match b.get(i + 1) {
        Some(b'{') => b"}}",
        Some(b'%') => b"%}",
        _ => return None,
    };
    Some(memchr::memmem::find(&b[i + 2..], close).map_or(b.len(), |k| i + 2 + k + 2))
}

/// The index of the `'` closing the single-quoted text opened at `i`
/// (`b.len()` when unclosed), and whether Jinja is inside.
fn close_single(b: &[u8], i: usize) -> (usize, bool) {
    let mut j = i + 1;
    let mut jinja = false;
    while j < b.len() && b[j] != b'\'' {
        match skip_jinja(b, j) {
            Some(end) => {
                jinja = true;
                j = end;
            }
            None => j += 1,
        }
    }
    (j.min(b.len()), jinja)
}

#[derive(Clone, Copy)]
enum HereKind {
    Doc { strip_tabs: bool },
    String,
}

/// The end of the expansion at `i` (a `$`) and whether it is one: `$(..)`,
/// `$((..))`, `${..}`, `$name`, `$1`, `$@`...; a lone `$` is literal.
fn skip_dollar(b: &[u8], i: usize, shell: bool) -> (usize, bool) {
    let len = b.len();
    match b.get(i + 1).copied() {
        Some(b'(') if shell => (skip_group(b, i + 1, b'(', b')'), true),
        Some(b'{') => (skip_group(b, i + 1, b'{', b'}'), true),
        Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
            let mut j = i + 2;
            while j < len && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            (j, true)
        }
        Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(&c) => (i + 2, true),
        _ => (i + 1, false),
    }
}

/// The end of the group opened at `i` (`(`, `{`), nesting and quotes
/// inside included.
fn skip_group(b: &[u8], i: usize, open: u8, close: u8) -> usize {
    let len = b.len();
    let mut depth = 0usize;
    let mut j = i;
    while j < len {
        match b[j] {
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            b'\\' => j += 1,
            b'\'' => {
                j = memchr::memchr(b'\'', &b[(j + 1).min(len)..]).map_or(len, |k| j + 1 + k);
            }
            b'"' => {
                j += 1;
                while j < len && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
            }
            b'`' => j = skip_backtick(b, j) - 1,
            _ => {}
        }
        j += 1;
    }
    len
}

fn skip_backtick(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != b'`' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(b.len())
}

/// The text of a word with its quotes removed; expansions are copied as
/// written. Special bytes are ASCII, so runs between them are copied as
/// string slices.
fn unquote(raw: &str, shell: bool) -> String {
    let b = raw.as_bytes();
    let len = b.len();
    let mut s = String::with_capacity(len);
    let mut i = 0;
    let mut run = 0;
    while i < len {
        if let Some(end) = skip_jinja(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            b'\\' => {
                s.push_str(&raw[run..i]);
                if b.get(i + 1) == Some(&b'\n') {
                    i += 2;
                    run = i;
                } else {
                    // The escaped character (possibly multi-byte) starts
                    // the next run.
                    run = i + 1;
                    i += 2;
                }
            }
            b'\'' => {
                s.push_str(&raw[run..i]);
                let (end, _) = close_single(b, i);
                s.push_str(&raw[i + 1..end]);
                i = (end + 1).min(len);
                run = i;
            }
            b'$' if shell && b.get(i + 1) == Some(&b'\'') => {
                s.push_str(&raw[run..i]);
                i += 2;
                while i < len && b[i] != b'\'' {
                    if b[i] == b'\\' && i + 1 < len {
                        match b[i + 1] {
                            b'n' => s.push('\n'),
                            b't' => s.push('\t'),
                            b'\\' => s.push('\\'),
                            b'\'' => s.push('\''),
                            b'"' => s.push('"'),
                            _ => {
                                s.push('\\');
                                i += 1;
                                continue;
                            }
                        }
                        i += 2;
                    } else {
                        let start = i;
                        i += 1;
                        while i < len && b[i] != b'\'' && b[i] != b'\\' {
                            i += 1;
                        }
                        s.push_str(&raw[start..i]);
                    }
                }
                i = (i + 1).min(len);
                run = i;
            }
            b'$' => {
                let (end, _) = skip_dollar(b, i, shell);
                i = end.max(i + 1);
            }
            b'`' if shell => i = skip_backtick(b, i),
            b'"' => {
                s.push_str(&raw[run..i]);
                i += 1;
                run = i;
                while i < len && b[i] != b'"' {
                    if let Some(end) = skip_jinja(b, i) {
                        i = end;
                        continue;
                    }
                    match b[i] {
                        b'\\' => {
                            let next = b.get(i + 1).copied();
                            let escapes = if shell {
                                matches!(next, Some(b'$' | b'`' | b'"' | b'\\' | b'\n'))
                            } else {
                                matches!(next, Some(b'"' | b'\\'))
                            };
                            if escapes {
                                s.push_str(&raw[run..i]);
                                if next == Some(b'\n') {
                                    i += 2;
                                    run = i;
                                } else {
                                    run = i + 1;
                                    i += 2;
                                }
                            } else {
                                i += 2;
                            }
                        }
                        b'$' => {
                            let (end, _) = skip_dollar(b, i, shell);
                            i = end.max(i + 1);
                        }
                        b'`' if shell => i = skip_backtick(b, i),
                        _ => i += 1,
                    }
                }
                let end = i.min(len);
                s.push_str(&raw[run..end]);
                i = (end + 1).min(len);
                run = i;
            }
            _ => i += 1,
        }
    }
    if run < len {
        s.push_str(&raw[run..]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{Mode, Op, Word, split};

    fn words(line: &str) -> Vec<Vec<String>> {
        split(line, Mode::Shell)
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.to_string()).collect())
            .collect()
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(
            words(r#"echo 'a b' "c \"d\" \$e" f\ g h"i"'j'"#),
            [["echo", "a b", r#"c "d" $e"#, "f g", "hij"]]
        );
        assert_eq!(words(r"echo $'a\nb'"), [["echo", "a\nb"]]);
        assert_eq!(
            words("echo \"a;b\" 'c&&d' e\\;f"),
            [["echo", "a;b", "c&&d", "e;f"]]
        );
    }

    #[test]
    fn separators_and_pipes() {
        let cmds = split("a 1; b 2 && c || d | e |& f & g\nh", Mode::Shell);
        let names: Vec<_> = cmds.iter().map(|c| c.words[0].as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g", "h"]);
        let pipes: Vec<_> = cmds.iter().map(|c| c.pipe).collect();
        assert_eq!(
            pipes,
            [false, false, false, true, true, false, false, false]
        );
        let line = "a 1; b 2";
        let cmds = split(line, Mode::Shell);
        assert_eq!(&line[cmds[1].start..cmds[1].end], "b 2");
    }

    #[test]
    fn expansions_stay_opaque() {
        let cmds = split(r#"echo "$(cat 'x;y')" `a;b` ${x:-;} $HOME"#, Mode::Shell);
        assert_eq!(cmds.len(), 1);
        let w = &cmds[0].words;
        assert_eq!(w[1].as_str(), "$(cat 'x;y')");
        assert!(w[1].expands && w[2].expands && w[3].expands && w[4].expands);
        assert_eq!(w[2].as_str(), "`a;b`");
        assert!(!w[0].expands);
    }

    #[test]
    fn comments_reserved_words_and_continuations() {
        assert_eq!(
            words("if true; then modprobe x; fi # modprobe y\nfoo\\\n bar"),
            [vec!["true"], vec!["modprobe", "x"], vec!["foo", "bar"]]
        );
        assert_eq!(words("echo a#b '#c'"), [["echo", "a#b", "#c"]]);
    }

    #[test]
    fn jinja_left_in_the_line_is_one_opaque_part() {
        let cmds = split(
            r#"{{ bin_dir }}/kubeadm init --x "{{ a | default("b c") }}" '{{ d|default('e') }}'"#,
            Mode::Shell,
        );
        let w: Vec<_> = cmds[0].words.iter().map(Word::as_str).collect();
        assert_eq!(
            w,
            [
                "{{ bin_dir }}/kubeadm",
                "init",
                "--x",
                r#"{{ a | default("b c") }}"#,
                "{{ d|default('e') }}"
            ]
        );
        assert!(cmds[0].words[0].expands && !cmds[0].words[1].expands);
    }

    #[test]
    fn redirects() {
        let cmds = split(
            "echo 1 > /proc/sys/x 2>&1 >>/a &>/dev/null 2> /e <in",
            Mode::Shell,
        );
        let r: Vec<_> = cmds[0]
            .redirects
            .iter()
            .map(|r| (r.fd, r.op, r.target.as_str()))
            .collect();
        assert_eq!(
            r,
            [
                (None, Op::Write, "/proc/sys/x"),
                (Some(2), Op::Dup, "1"),
                (None, Op::Append, "/a"),
                (None, Op::WriteBoth, "/dev/null"),
                (Some(2), Op::Write, "/e"),
                (None, Op::Read, "in"),
            ]
        );
        assert_eq!(words("echo 1 > /x")[0], ["echo", "1"]);
    }

    #[test]
    fn here_documents() {
        let cmds = split(
            "cat <<EOF | tee /etc/x\na $b\nEOF\ncat > /y <<-'E'\n\tc\n\tE\nmodprobe z",
            Mode::Shell,
        );
        assert_eq!(cmds.len(), 4);
        let h = cmds[0].stdin.as_ref().unwrap();
        assert_eq!((h.text.as_ref(), h.literal), ("a $b\n", false));
        let h = cmds[2].stdin.as_ref().unwrap();
        assert_eq!((h.text.as_ref(), h.literal), ("c\n", true));
        assert_eq!(cmds[3].words[0].as_str(), "modprobe");
        let cmds = split("tee /x <<< 'a b'", Mode::Shell);
        assert_eq!(cmds[0].stdin.as_ref().unwrap().text, "a b\n");
    }

    #[test]
    fn exec_mode_has_no_operators() {
        let cmds = split("echo 1 > /x; y 'a b'", Mode::Exec);
        assert_eq!(cmds.len(), 1);
        let w: Vec<_> = cmds[0].words.iter().map(Word::as_str).collect();
        assert_eq!(w, ["echo", "1", ">", "/x;", "y", "a b"]);
    }

    #[test]
    fn never_panics_on_broken_input() {
        for line in [
            "'", "\"", "$(", "`", "\\", "a\\", "<<", "<<EOF", "2>", "$'", "${", "é'ü", "\"\\é\"",
            "a\\é", "$((1+", ">&", "|", "&&", "((",
        ] {
            let _ = split(line, Mode::Shell);
            let _ = split(line, Mode::Exec);
        }
    }
}
