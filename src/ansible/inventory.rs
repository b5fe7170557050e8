//! Inventories: hosts, groups, children and their variables, from INI or YAML
//! files (or a directory of them) plus `group_vars/` and `host_vars/` beside
//! them, as `ansible-inventory` would read them (checked against it by
//! `tests/inventory_oracle.rs`).
//!
//! Host variables follow Ansible's default `VARIABLE_PRECEDENCE`: the
//! inventory source's vars of `all`, then of the host's other groups (by
//! depth, `ansible_group_priority`, name), then the `group_vars/` files of
//! `all` and of those groups in the same order, then the host's own
//! inventory vars, then its `host_vars/` files. INI values are Python
//! literals (`ast.literal_eval`), not YAML. Host ranges (`node[01:10]`,
//! `db-[a:f]`) expand as Ansible expands them, up to [`MAX_RANGE_HOSTS`].
//! Never runs inventory scripts or plugins.

use crate::diagnostic::{Diagnostic, code};
use crate::load::Loader;
use crate::source::{FileId, Span};
use crate::yaml::{Node, Tag, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Most hosts one host pattern may expand to (`node[0:99999999]`); the rest
/// are dropped with a diagnostic.
pub const MAX_RANGE_HOSTS: usize = 100_000;
/// Most bytes of host names one pattern may expand to (a long name times
/// many hosts).
pub const MAX_RANGE_BYTES: usize = 16 * 1024 * 1024;
/// Most `[...]` ranges in one host name (each one is a level of recursion).
const MAX_RANGES: usize = 16;
/// Deepest nesting of a Python literal in an INI value (`[[[[...]]]]`).
const MAX_LITERAL_DEPTH: usize = 64;

#[derive(Debug, Default, Clone)]
pub struct Group {
    pub hosts: BTreeSet<String>,
    pub children: BTreeSet<String>,
    /// Variables from the inventory source, in definition order (later ones win).
    pub vars: Vec<(String, Node)>,
    /// Variables from `group_vars/` files, in load order (later ones win).
    pub file_vars: Vec<(String, Node)>,
    /// `ansible_group_priority` set in the inventory source (default 1).
    pub priority: i64,
}

#[derive(Debug, Default)]
pub struct Inventory {
    pub groups: BTreeMap<String, Group>,
    /// Every host, with its variables from the inventory source.
    pub host_vars: BTreeMap<String, Vec<(String, Node)>>,
    /// Variables from `host_vars/` files.
    pub host_file_vars: BTreeMap<String, Vec<(String, Node)>>,
    pub diagnostics: Vec<Diagnostic>,
}

fn node(value: Value, span: Span) -> Node {
    Node {
        value,
        span,
        tag: Tag::None,
        quoted: false,
    }
}

// ----- Python literals (INI values) --------------------------------------

/// An INI value as Ansible reads it: `ast.literal_eval`, else the text itself.
fn ini_value(text: &str, span: Span) -> Node {
    match py_literal(text) {
        Some(v) => node(v.into_value(span), span),
        None => {
            let mut n = node(Value::Str(text.to_string()), span);
            n.quoted = true;
            n
        }
    }
}

/// A value `ast.literal_eval` can produce.
enum Lit {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl Lit {
    fn into_value(self, span: Span) -> Value {
        match self {
            Lit::None => Value::Null,
            Lit::Bool(b) => Value::Bool(b),
            Lit::Int(i) => Value::Int(i),
            Lit::Float(f) => Value::Float(f),
            Lit::Str(s) => Value::Str(s),
            Lit::List(items) => Value::Seq(
                items
                    .into_iter()
                    .map(|i| node(i.into_value(span), span))
                    .collect(),
            ),
            Lit::Dict(pairs) => {
                // A Python dict keeps the last value of a repeated key, in
                // the place of the first.
                let mut out: Vec<(Node, Node)> = Vec::new();
                for (k, v) in pairs {
                    let k = node(k.into_value(span), span);
                    let v = node(v.into_value(span), span);
                    match out.iter_mut().find(|(ok, _)| ok.value == k.value) {
                        Some(slot) => slot.1 = v,
                        None => out.push((k, v)),
                    }
                }
                Value::Map(out)
            }
        }
    }
}

/// `ast.literal_eval(text)` for the literals that can be told apart in JSON
/// (no complex numbers, bytes, or sets); `None` when Python would fail.
fn py_literal(text: &str) -> Option<Lit> {
    let src: Vec<char> = text.trim_start_matches([' ', '\t']).chars().collect();
    let mut p = PyParser { s: &src, i: 0 };
    let v = p.expr(0)?;
    p.ws();
    if p.i < src.len() && src[p.i] != '#' {
        return None;
    }
    Some(v)
}

struct PyParser<'a> {
    s: &'a [char],
    i: usize,
}

impl PyParser<'_> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self, depth: usize) -> Option<Lit> {
        if depth > MAX_LITERAL_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            '[' => {
                self.i += 1;
                let items = self.items(']', depth)?;
                Some(Lit::List(items))
            }
            '(' => {
                self.i += 1;
                let start = self.i;
                // `(1)` is 1, `(1,)` and `()` are tuples (lists in Ansible).
                if self.eat(')') {
                    return Some(Lit::List(Vec::new()));
                }
                self.i = start;
                let first = self.expr(depth + 1)?;
                if self.eat(')') {
                    return Some(first);
                }
                if !self.eat(',') {
                    return None;
                }
                let mut items = vec![first];
                items.extend(self.items(')', depth)?);
                Some(Lit::List(items))
            }
            '{' => {
                self.i += 1;
                let mut pairs = Vec::new();
                loop {
                    if self.eat('}') {
                        return Some(Lit::Dict(pairs));
                    }
                    let k = self.expr(depth + 1)?;
                    // Only hashable keys: a set (`{1, 2}`) or a list key fails.
                    if matches!(k, Lit::List(_) | Lit::Dict(_)) || !self.eat(':') {
                        return None;
                    }
                    let v = self.expr(depth + 1)?;
                    pairs.push((k, v));
                    if !self.eat(',') {
                        return self.eat('}').then_some(Lit::Dict(pairs));
                    }
                }
            }
            '\'' | '"' => self.strings(),
            '+' | '-' => {
                // Only a sign on a number literal (`--1` is not a literal).
                let neg = self.peek() == Some('-');
                self.i += 1;
                self.ws();
                if !self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                    return None;
                }
                match self.number()? {
                    Lit::Int(i) => Some(Lit::Int(if neg { i.checked_neg()? } else { i })),
                    Lit::Float(f) => Some(Lit::Float(if neg { -f } else { f })),
                    _ => None,
                }
            }
            c if c.is_ascii_digit() || c == '.' => self.number(),
            c if c.is_alphabetic() || c == '_' => {
                let start = self.i;
                while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.i += 1;
                }
                let word: String = self.s[start..self.i].iter().collect();
                match word.as_str() {
                    "True" => Some(Lit::Bool(true)),
                    "False" => Some(Lit::Bool(false)),
                    "None" => Some(Lit::None),
                    // String prefixes: raw strings and unicode strings only.
                    "r" | "R" | "u" | "U" if matches!(self.peek(), Some('\'' | '"')) => {
                        let raw = word.eq_ignore_ascii_case("r");
                        self.string(raw).and_then(|first| {
                            let mut out = first;
                            self.more_strings(&mut out).then_some(Lit::Str(out))
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Items up to `close` (already past the opening bracket); a trailing comma is fine.
    fn items(&mut self, close: char, depth: usize) -> Option<Vec<Lit>> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.expr(depth + 1)?);
            if !self.eat(',') {
                return self.eat(close).then_some(items);
            }
        }
    }

    /// One or more adjacent string literals (`'a' "b"` is `'ab'`).
    fn strings(&mut self) -> Option<Lit> {
        let mut out = self.string(false)?;
        self.more_strings(&mut out).then_some(Lit::Str(out))
    }

    fn more_strings(&mut self, out: &mut String) -> bool {
        loop {
            let save = self.i;
            self.ws();
            let raw = match (self.peek(), self.s.get(self.i + 1)) {
                (Some('\'' | '"'), _) => false,
                (Some('r' | 'R'), Some('\'' | '"')) => {
                    self.i += 1;
                    true
                }
                (Some('u' | 'U'), Some('\'' | '"')) => {
                    self.i += 1;
                    false
                }
                _ => {
                    self.i = save;
                    return true;
                }
            };
            match self.string(raw) {
                Some(s) => out.push_str(&s),
                None => return false,
            }
        }
    }

    fn string(&mut self, raw: bool) -> Option<String> {
        let q = self.peek()?;
        let triple = self.s.get(self.i + 1) == Some(&q) && self.s.get(self.i + 2) == Some(&q);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = self.peek()?;
            if c == q
                && (!triple
                    || (self.s.get(self.i + 1) == Some(&q) && self.s.get(self.i + 2) == Some(&q)))
            {
                self.i += if triple { 3 } else { 1 };
                return Some(out);
            }
            self.i += 1;
            if c == '\\' {
                let e = self.peek()?;
                self.i += 1;
                if raw {
                    out.push('\\');
                    out.push(e);
                    continue;
                }
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    '\\' | '\'' | '"' => out.push(e),
                    'x' | 'u' | 'U' => {
                        let n = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = self.s.get(self.i..self.i + n)?.iter().collect();
                        self.i += n;
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    // Unknown escapes stay as written (Python warns).
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            } else {
                out.push(c);
            }
        }
    }

    fn number(&mut self) -> Option<Lit> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            || (matches!(self.peek(), Some('+' | '-'))
                && matches!(self.s.get(self.i.wrapping_sub(1)), Some('e' | 'E'))
                && !self.s[start..self.i].iter().any(|c| matches!(c, 'x' | 'X')))
        {
            self.i += 1;
        }
        let text: String = self.s[start..self.i].iter().collect();
        py_number(&text)
    }
}

/// A Python int or float literal (`10`, `0x1F`, `0o17`, `1_000`, `1.5`, `1e3`).
fn py_number(text: &str) -> Option<Lit> {
    let lower = text.to_ascii_lowercase();
    let underscores_ok = |digits: &str| {
        !digits.is_empty()
            && !digits.starts_with('_')
            && !digits.ends_with('_')
            && !digits.contains("__")
    };
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            let rest = rest.strip_prefix('_').unwrap_or(rest);
            if !underscores_ok(rest) {
                return None;
            }
            return i64::from_str_radix(&rest.replace('_', ""), radix)
                .ok()
                .map(Lit::Int);
        }
    }
    if lower.chars().all(|c| c.is_ascii_digit() || c == '_') {
        if !underscores_ok(&lower) {
            return None;
        }
        let digits = lower.replace('_', "");
        // `0644` is a syntax error in Python 3; `000` is fine.
        if digits.len() > 1 && digits.starts_with('0') && digits.chars().any(|c| c != '0') {
            return None;
        }
        return digits.parse().ok().map(Lit::Int);
    }
    // A float: digits with one `.` and/or an exponent.
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let (ip, fp) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !mantissa.contains('.') && exp.is_none() {
        return None;
    }
    let part_ok = |p: &str| {
        p.is_empty() || underscores_ok(p) && p.chars().all(|c| c.is_ascii_digit() || c == '_')
    };
    if ip.is_empty() && fp.is_empty() || !part_ok(ip) || !part_ok(fp) {
        return None;
    }
    if let Some(e) = exp {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        if !underscores_ok(digits) || !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return None;
        }
    }
    lower.replace('_', "").parse::<f64>().ok().map(Lit::Float)
}

// ----- shell-like splitting of INI host lines -----------------------------

/// `shlex.split(line, comments=True)` (POSIX mode), as Ansible splits a host
/// line; `None` for an unclosed quote or a trailing escape.
fn shlex_split(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                cur.push(chars.next()?);
                in_word = true;
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            e @ ('"' | '\\') => cur.push(e),
                            e => {
                                cur.push('\\');
                                cur.push(e);
                            }
                        },
                        c => cur.push(c),
                    }
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

// ----- host patterns and ranges ---------------------------------------------

/// Splits `host:port` (`[host]:port` too) as `parse_address` does; the port
/// is kept only when what remains looks like a host name or address.
fn split_port(pattern: &str) -> (String, Option<i64>) {
    let mut address = pattern.to_string();
    let mut port = None;
    if let Some(inner) = address.strip_prefix('[')
        && let Some((host, p)) = inner.rsplit_once("]:")
        && !host.is_empty()
        && !p.is_empty()
        && p.bytes().all(|b| b.is_ascii_digit())
    {
        port = p.parse().ok();
        address = host.to_string();
    }
    if let Some((host, p)) = address.rsplit_once(':')
        && !p.is_empty()
        && p.bytes().all(|b| b.is_ascii_digit())
        && colon_free_outside_brackets(host)
    {
        port = p.parse().ok();
        address = host.to_string();
    }
    if port.is_some() && !looks_like_host(&address) {
        return (pattern.to_string(), None);
    }
    (address, port)
}

/// `(?:[^:\[\]]|\[[^\]]*\])*`: no `:` except inside complete `[...]`.
fn colon_free_outside_brackets(s: &str) -> bool {
    let mut in_bracket = false;
    for c in s.chars() {
        match (c, in_bracket) {
            ('[', false) => in_bracket = true,
            (']', true) => in_bracket = false,
            (':', false) | (']', false) => return false,
            _ => {}
        }
    }
    !in_bracket
}

/// A host name (labels of word characters and `-`, with ranges), an IPv4 or
/// an IPv6 address: loosely what `parse_address` accepts.
fn looks_like_host(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    if !colon_free_outside_brackets(s) {
        return s
            .chars()
            .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '[' | ']'));
    }
    let mut in_bracket = false;
    let mut prev = '.';
    for c in s.chars() {
        match c {
            '[' if !in_bracket => in_bracket = true,
            ']' if in_bracket => in_bracket = false,
            _ if in_bracket => {
                if !(c.is_ascii_alphanumeric() || c == ':') {
                    return false;
                }
            }
            '.' if matches!(prev, '.' | '-' | '_') => return false,
            '.' => {}
            '-' if prev == '.' => return false,
            c if c.is_alphanumeric() || c == '_' || c == '-' => {}
            _ => return false,
        }
        prev = c;
    }
    !in_bracket && !matches!(prev, '.' | '-' | '_')
}

/// `detect_range`: a `[`, then a `:`, then a `]`.
fn has_range(s: &str) -> bool {
    match (s.find('['), s.find(':'), s.find(']')) {
        (Some(a), Some(b), Some(c)) => a < b && b < c,
        _ => false,
    }
}

const TOO_MANY: &str = "host range expands to more than";

const ASCII_LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Python's `int()` on a range bound (`' 7'`, `'+3'`, `'1_000'`).
fn py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().ok()?;
    if neg { v.checked_neg() } else { Some(v) }
}

/// Expands host ranges as `expand_hostname_range` does: the first `[...]`
/// first, then the rest of each name; `Err` with Ansible's complaint.
fn expand_range(
    host: &str,
    out: &mut Vec<String>,
    budget: &mut (usize, usize),
) -> Result<(), String> {
    if !has_range(host) {
        if budget.0 == 0 || budget.1 < host.len() {
            return Err(format!(
                "{TOO_MANY} {MAX_RANGE_HOSTS} hosts or {MAX_RANGE_BYTES} bytes; the rest are dropped"
            ));
        }
        budget.0 -= 1;
        budget.1 -= host.len();
        out.push(host.to_string());
        return Ok(());
    }
    if host.matches('[').count() > MAX_RANGES {
        return Err(format!("more than {MAX_RANGES} ranges in one host name"));
    }
    let open = host.find('[').unwrap_or(0);
    let close = host[open..].find(']').map_or(host.len(), |c| open + c);
    let (head, inner, tail) = (&host[..open], &host[open + 1..close], &host[close + 1..]);
    if tail.contains('|') || inner.contains('|') || head.contains('|') {
        return Err("a host name may not contain `|` with a range".into());
    }
    let bounds: Vec<&str> = inner.split(':').collect();
    if bounds.len() != 2 && bounds.len() != 3 {
        return Err("host range must be begin:end or begin:end:step".into());
    }
    let beg = if bounds[0].is_empty() { "0" } else { bounds[0] };
    let end = bounds[1];
    if end.is_empty() {
        return Err("host range must specify end value".into());
    }
    let width = if beg.starts_with('0') && beg.len() > 1 {
        if beg.len() != end.len() {
            return Err("host range must specify equal-length begin and end formats".into());
        }
        beg.chars().count()
    } else {
        0
    };
    let step = match bounds.get(2) {
        Some(s) => py_int(s).ok_or_else(|| format!("invalid range step `{s}`"))?,
        None => 1,
    };
    let letters = match (ASCII_LETTERS.find(beg), ASCII_LETTERS.find(end)) {
        (Some(b), Some(e)) if step != 0 => {
            if b > e {
                return Err("host range must have begin <= end".into());
            }
            let chars: Vec<char> = ASCII_LETTERS[b..=e].chars().collect();
            Some(if step > 0 {
                chars
                    .into_iter()
                    .step_by(usize::try_from(step).unwrap_or(usize::MAX))
                    .map(String::from)
                    .collect::<Vec<_>>()
            } else {
                Vec::new()
            })
        }
        _ => None,
    };
    let fill = |s: String| format!("{s:0>width$}");
    match letters {
        Some(seq) => {
            for l in seq {
                expand_range(&format!("{head}{}{tail}", fill(l)), out, budget)?;
            }
        }
        None => {
            let (Some(b), Some(e)) = (py_int(beg), py_int(end)) else {
                return Err(format!("invalid host range `[{inner}]`"));
            };
            if step == 0 {
                return Err("host range step must not be zero".into());
            }
            // Python's range(b, e + 1, step), without overflow at the edges.
            let (stop, step) = (i128::from(e) + 1, i128::from(step));
            let mut i = i128::from(b);
            while (step > 0 && i < stop) || (step < 0 && i > stop) {
                expand_range(&format!("{head}{}{tail}", fill(i.to_string())), out, budget)?;
                i += step;
            }
        }
    }
    Ok(())
}

impl Inventory {
    fn group(&mut self, name: &str) -> &mut Group {
        self.groups
            .entry(name.to_string())
            .or_insert_with(|| Group {
                priority: 1,
                ..Group::default()
            })
    }

    /// Sets a group variable from the inventory source; Ansible keeps
    /// `ansible_group_priority` as the group's priority, not as a variable.
    fn set_group_var(&mut self, group: &str, key: String, value: Node) {
        let g = self.group(group);
        if key == "ansible_group_priority" {
            if let Some(p) = match &value.value {
                Value::Int(i) => Some(*i),
                Value::Str(s) => s.trim().parse().ok(),
                _ => None,
            } {
                g.priority = p;
            }
            return;
        }
        g.vars.push((key, value));
    }

    /// Hosts of a pattern (ranges expanded) and its port, with a diagnostic
    /// for a bad or oversized range.
    fn hosts_of(&mut self, pattern: &str, span: Span) -> (Vec<String>, Option<i64>) {
        let (pattern, port) = split_port(pattern);
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        if let Err(e) = expand_range(&pattern, &mut out, &mut budget) {
            let help = if e.starts_with(TOO_MANY) {
                "split the range into smaller ones; only the first hosts are analysed"
            } else {
                "write the range as [begin:end] or [begin:end:step], e.g. node[01:10]"
            };
            self.diagnostics.push(
                Diagnostic::warning(code::SHAPE, span, format!("host `{pattern}`: {e}"))
                    .with_help(help),
            );
        }
        (out, port)
    }

    fn add_host(&mut self, group: &str, host: &str, port: Option<i64>, span: Span) {
        self.group(group).hosts.insert(host.to_string());
        let vars = self.host_vars.entry(host.to_string()).or_default();
        if let Some(p) = port {
            vars.push(("ansible_port".into(), node(Value::Int(p), span)));
        }
    }

    /// Loads an inventory file or directory (each file in it, sorted).
    pub fn load(path: &Path, loader: &Loader) -> Self {
        let mut inv = Inventory::default();
        inv.group("all");
        inv.group("ungrouped");
        let mut files: Vec<PathBuf> = Vec::new();
        if path.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(path)
                .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default();
            v.retain(|p| p.is_file() && !ignored_inventory_name(p));
            v.sort();
            files = v;
        } else {
            files.push(path.to_path_buf());
        }
        for f in &files {
            inv.load_file(f, loader);
        }
        let base = if path.is_dir() {
            path.to_path_buf()
        } else {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        };
        inv.finish();
        inv.load_vars_dirs(&base, loader);
        inv
    }

    fn load_file(&mut self, path: &Path, loader: &Loader) {
        let is_yaml = path
            .extension()
            .is_some_and(|e| e == "yml" || e == "yaml" || e == "json");
        if is_yaml {
            let l = loader.yaml(path);
            self.diagnostics.extend(l.diagnostics.iter().cloned());
            self.diagnostics.extend(l.yaml.diagnostics.iter().cloned());
            if let Some(doc) = l.doc()
                && let Some(pairs) = doc.as_map()
            {
                for (k, v) in pairs {
                    if let Some(name) = k.scalar_text() {
                        self.yaml_group(&name, v, 0);
                    }
                }
            }
        } else {
            let l = loader.text(path);
            self.diagnostics.extend(l.diagnostics.iter().cloned());
            if let Some(text) = &l.text {
                self.ini(text, l.id);
            }
        }
    }

    /// A group of a YAML inventory: its keys in file order, as Ansible reads them.
    fn yaml_group(&mut self, name: &str, body: &Node, depth: usize) {
        if depth > crate::yaml::MAX_DEPTH {
            return;
        }
        if !matches!(body.value, Value::Map(_) | Value::Null) {
            self.diagnostics.push(
                Diagnostic::warning(
                    code::SHAPE,
                    body.span,
                    format!("group `{name}` is not a mapping; skipped, as Ansible does"),
                )
                .with_help("write the group as a mapping with `hosts:`, `children:` or `vars:`"),
            );
            return;
        }
        self.group(name);
        for (k, section) in body.as_map().unwrap_or_default() {
            // A string stands for a mapping with one empty key.
            let one;
            let entries: &[(Node, Node)] = match &section.value {
                Value::Map(m) => m,
                Value::Str(_) => {
                    one = [(section.clone(), Node::null(section.span))];
                    &one
                }
                _ => continue,
            };
            match k.as_str() {
                Some("vars") => {
                    for (vk, vv) in entries {
                        self.set_group_var(name, vk.scalar_text().unwrap_or_default(), vv.clone());
                    }
                }
                Some("children") => {
                    for (c, cv) in entries {
                        let Some(c) = c.scalar_text() else { continue };
                        self.yaml_group(&c, cv, depth + 1);
                        if self.groups.contains_key(&c) {
                            self.group(name).children.insert(c);
                        }
                    }
                }
                Some("hosts") => {
                    for (hk, hv) in entries {
                        let Some(h) = hk.scalar_text() else { continue };
                        let (hosts, port) = self.hosts_of(&h, hk.span);
                        for host in hosts {
                            self.add_host(name, &host, port, hk.span);
                            if let Some(pairs) = hv.as_map() {
                                let entry = self.host_vars.entry(host).or_default();
                                for (vk, vv) in pairs {
                                    entry.push((vk.scalar_text().unwrap_or_default(), vv.clone()));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn ini(&mut self, text: &str, file: FileId) {
        let mut group = "ungrouped".to_string();
        let mut state = "hosts";
        let mut offset = 0usize;
        for (i, raw_line) in text.split('\n').enumerate() {
            let span = Span {
                file,
                start: u32::try_from(offset).unwrap_or(u32::MAX),
                end: u32::try_from(offset + raw_line.len()).unwrap_or(u32::MAX),
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                col: 1,
            };
            offset += raw_line.len() + 1;
            let line = raw_line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some((name, kind)) = section_header(line) {
                let kind = kind.unwrap_or("hosts");
                if !matches!(kind, "hosts" | "children" | "vars") {
                    self.diagnostics.push(
                        Diagnostic::error(
                            code::SHAPE,
                            span,
                            format!("section [{name}:{kind}] has unknown type `{kind}`"),
                        )
                        .with_help("use [group], [group:children] or [group:vars]"),
                    );
                }
                self.group(name);
                group = name.to_string();
                state = match kind {
                    "children" => "children",
                    "vars" => "vars",
                    _ => "hosts",
                };
                continue;
            }
            if line.starts_with('[') && line.ends_with(']') {
                self.diagnostics.push(
                    Diagnostic::error(code::SHAPE, span, format!("invalid section entry `{line}`"))
                        .with_help(
                            "write [group], [group:children] or [group:vars], without spaces",
                        ),
                );
                continue;
            }
            match state {
                "hosts" => self.ini_host(line, &group, span),
                "children" => {
                    let child = line
                        .split(|c: char| c.is_whitespace() || c == '#')
                        .next()
                        .unwrap_or_default();
                    if child.is_empty() || child.contains([':', ']']) {
                        self.diagnostics.push(
                            Diagnostic::error(
                                code::SHAPE,
                                span,
                                format!("expected a group name, got `{line}`"),
                            )
                            .with_help("a [group:children] section lists one group name per line"),
                        );
                        continue;
                    }
                    self.group(child);
                    self.group(&group).children.insert(child.to_string());
                }
                _ => match line.split_once('=') {
                    Some((k, v)) => {
                        let value = ini_value(v.trim(), span);
                        self.set_group_var(&group.clone(), k.trim().to_string(), value);
                    }
                    None => self.diagnostics.push(
                        Diagnostic::error(
                            code::SHAPE,
                            span,
                            format!("expected key=value, got `{line}`"),
                        )
                        .with_help("a [group:vars] section holds one `name=value` per line"),
                    ),
                },
            }
        }
    }

    fn ini_host(&mut self, line: &str, group: &str, span: Span) {
        let Some(words) = shlex_split(line).filter(|w| !w.is_empty()) else {
            self.diagnostics.push(
                Diagnostic::error(
                    code::SHAPE,
                    span,
                    format!("cannot split host line `{line}` (unclosed quote?)"),
                )
                .with_help("close the quote; Ansible splits host lines like a shell"),
            );
            return;
        };
        let mut vars = Vec::new();
        for w in &words[1..] {
            match w.split_once('=') {
                Some((k, v)) => vars.push((k.to_string(), ini_value(v, span))),
                None => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            code::SHAPE,
                            span,
                            format!("expected key=value host variable, got `{w}`"),
                        )
                        .with_help("write host variables as name=value after the host name"),
                    );
                    return;
                }
            }
        }
        let (hosts, port) = self.hosts_of(&words[0], span);
        for h in hosts {
            self.add_host(group, &h, port, span);
            self.host_vars
                .entry(h)
                .or_default()
                .extend(vars.iter().cloned());
        }
    }

    /// `group_vars/NAME` and `host_vars/NAME` beside the inventory: the first
    /// of `NAME` (file or directory), `NAME.yml`, `NAME.yaml`, `NAME.json`,
    /// as Ansible's `host_group_vars` plugin looks them up.
    fn load_vars_dirs(&mut self, base: &Path, loader: &Loader) {
        let groups: Vec<String> = self.groups.keys().cloned().collect();
        let hosts: Vec<String> = self.host_vars.keys().cloned().collect();
        for (dir, names, is_group) in [("group_vars", groups, true), ("host_vars", hosts, false)] {
            let d = base.join(dir);
            if !d.is_dir() {
                continue;
            }
            for name in names {
                let mut files = Vec::new();
                for ext in ["", ".yml", ".yaml", ".json"] {
                    let p = d.join(format!("{name}{ext}"));
                    if p.is_dir() {
                        vars_dir_files(&p, 0, &mut files);
                        break;
                    }
                    if p.is_file() {
                        files.push(p);
                        break;
                    }
                }
                for f in files {
                    let l = loader.yaml(&f);
                    self.diagnostics.extend(l.diagnostics.iter().cloned());
                    self.diagnostics.extend(l.yaml.diagnostics.iter().cloned());
                    let Some(doc) = l.doc() else { continue };
                    let Some(pairs) = doc.as_map() else {
                        if !doc.is_null() {
                            self.diagnostics.push(Diagnostic::error(
                                code::SHAPE,
                                doc.span,
                                "a vars file must be a mapping",
                            )
                            .with_help("write the variables as `name: value` pairs at the top level of the file"));
                        }
                        continue;
                    };
                    let pairs = pairs
                        .iter()
                        .map(|(k, v)| (k.scalar_text().unwrap_or_default(), v.clone()));
                    if is_group {
                        self.group(&name).file_vars.extend(pairs);
                    } else {
                        self.host_file_vars
                            .entry(name.clone())
                            .or_default()
                            .extend(pairs);
                    }
                }
            }
        }
    }

    /// Groups with no parent become children of `all`; hosts in no group
    /// but `all` go to `ungrouped`, and leave it when they are in another.
    fn finish(&mut self) {
        let grouped: BTreeSet<String> = self
            .groups
            .iter()
            .filter(|(n, _)| n.as_str() != "all" && n.as_str() != "ungrouped")
            .flat_map(|(_, g)| g.hosts.iter().cloned())
            .collect();
        let hosts: Vec<String> = self.host_vars.keys().cloned().collect();
        for h in hosts {
            if grouped.contains(&h) {
                self.group("ungrouped").hosts.remove(&h);
            } else {
                self.group("ungrouped").hosts.insert(h);
            }
        }
        let mut top: BTreeSet<String> = self
            .groups
            .keys()
            .filter(|n| n.as_str() != "all")
            .cloned()
            .collect();
        for g in self.groups.values() {
            for c in &g.children {
                top.remove(c);
            }
        }
        self.group("all").children.extend(top);
    }

    /// Depth of every group: the longest chain of parents up to `all`.
    fn depths(&self) -> BTreeMap<&str, usize> {
        let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
        depth.insert("all", 0);
        // Longest path in a DAG by relaxation, bounded by the group count
        // (a cycle of children cannot loop forever).
        for _ in 0..=self.groups.len() {
            let mut changed = false;
            for (name, g) in &self.groups {
                let Some(&d) = depth.get(name.as_str()) else {
                    continue;
                };
                for c in &g.children {
                    let e = depth.entry(c.as_str()).or_insert(0);
                    if *e < d + 1 {
                        *e = d + 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        depth
    }

    /// `groups` in Ansible's order: `all` first, then by depth, priority, name.
    fn sorted_groups(&self, groups: BTreeSet<String>) -> Vec<String> {
        let depth = self.depths();
        let mut v: Vec<(usize, i64, String)> = groups
            .into_iter()
            .map(|g| {
                let p = self.groups.get(&g).map_or(1, |x| x.priority);
                (depth.get(g.as_str()).copied().unwrap_or(0), p, g)
            })
            .collect();
        v.sort();
        v.into_iter().map(|(_, _, g)| g).collect()
    }

    /// Every group a host belongs to, directly or through children.
    #[must_use]
    pub fn groups_of(&self, host: &str) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = BTreeSet::new();
        out.insert("all".into());
        let mut frontier: Vec<String> = self
            .groups
            .iter()
            .filter(|(_, g)| g.hosts.contains(host))
            .map(|(n, _)| n.clone())
            .collect();
        while let Some(g) = frontier.pop() {
            if out.insert(g.clone()) || g == "all" {
                for (n, p) in &self.groups {
                    if p.children.contains(&g) && !out.contains(n) {
                        frontier.push(n.clone());
                    }
                }
            }
        }
        out
    }

    /// The groups that hold `group` (itself included), with `all`.
    fn ancestors(&self, group: &str) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = BTreeSet::from(["all".to_string(), group.to_string()]);
        let mut todo = vec![group.to_string()];
        while let Some(g) = todo.pop() {
            for (n, p) in &self.groups {
                if p.children.contains(&g) && out.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        out
    }

    /// Variables of `groups` in precedence order: inventory-source vars of
    /// every group, then `group_vars/` files of every group.
    fn layered(&self, groups: BTreeSet<String>) -> Vec<(String, Node)> {
        let order = self.sorted_groups(groups);
        let mut out = Vec::new();
        for g in &order {
            if let Some(grp) = self.groups.get(g) {
                out.extend(grp.vars.iter().cloned());
            }
        }
        for g in &order {
            if let Some(grp) = self.groups.get(g) {
                out.extend(grp.file_vars.iter().cloned());
            }
        }
        out
    }

    /// A host's variables after inventory precedence, as `name -> node`.
    #[must_use]
    pub fn host_variables(&self, host: &str) -> BTreeMap<String, Node> {
        let mut out = BTreeMap::new();
        let own = self.host_vars.get(host).into_iter().flatten();
        let files = self.host_file_vars.get(host).into_iter().flatten();
        for (k, v) in self
            .layered(self.groups_of(host))
            .into_iter()
            .chain(own.cloned())
            .chain(files.cloned())
        {
            out.insert(k, v);
        }
        out
    }

    /// Variables for a group as seen by a typical member: those of `all`
    /// and the group's ancestors, then the group itself, in precedence order.
    #[must_use]
    pub fn group_variables(&self, group: &str) -> Vec<(String, Node)> {
        self.layered(self.ancestors(group))
    }
}

/// `[name]` or `[name:kind]`, optionally followed by a comment.
fn section_header(line: &str) -> Option<(&str, Option<&str>)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find(']')?;
    let after = rest[close + 1..].trim_start();
    if !(after.is_empty() || after.starts_with('#')) {
        return None;
    }
    let inner = &rest[..close];
    let (name, kind) = match inner.split_once(':') {
        Some((n, k)) => (n, Some(k)),
        None => (inner, None),
    };
    let name_ok = !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == ':');
    let kind_ok =
        kind.is_none_or(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'));
    (name_ok && kind_ok).then_some((name, kind))
}

/// Files of a `group_vars/NAME/` directory, recursively, sorted by name at
/// each level, skipping hidden names, backups (`~`) and other extensions.
fn vars_dir_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 32 {
        return;
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    for p in names {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let ext = p.extension().map(|e| e.to_string_lossy().into_owned());
        if p.is_dir() {
            if ext.is_none() {
                vars_dir_files(&p, depth + 1, out);
            }
        } else if p.is_file()
            && ext
                .as_deref()
                .is_none_or(|e| matches!(e, "yml" | "yaml" | "json"))
        {
            out.push(p);
        }
    }
}

fn ignored_inventory_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.starts_with('.')
        || [
            ".orig", ".bak", ".cfg", ".retry", ".pyc", ".pyo", ".md", ".txt", "~",
        ]
        .iter()
        .any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(host: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        expand_range(host, &mut out, &mut budget).expect("valid range");
        out
    }

    #[test]
    fn ranges() {
        assert_eq!(expand("node[1:3]"), vec!["node1", "node2", "node3"]);
        assert_eq!(expand("n[01:02].x"), vec!["n01.x", "n02.x"]);
        assert_eq!(expand("db-[a:c]"), vec!["db-a", "db-b", "db-c"]);
        assert_eq!(expand("n[0:10:5]"), vec!["n0", "n5", "n10"]);
        assert_eq!(
            expand("w[1:2].z-[a:b]"),
            vec!["w1.z-a", "w1.z-b", "w2.z-a", "w2.z-b"]
        );
        assert_eq!(expand("n[:1]"), vec!["n0", "n1"]);
        assert_eq!(expand("x[y:B]"), vec!["xy", "xz", "xA", "xB"]);
        assert_eq!(expand("n[5:1:-1]"), vec!["n5", "n4", "n3"]);
    }

    #[test]
    fn hostile_ranges_are_bounded() {
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        // Ten thousand squared, and a range at the edge of i64.
        assert!(expand_range("h[0:9999][0:9999]", &mut out, &mut budget).is_err());
        assert_eq!(out.len(), MAX_RANGE_HOSTS);
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        let edge = format!("h[{}:{}]", i64::MAX - 1, i64::MAX);
        expand_range(&edge, &mut out, &mut budget).expect("valid");
        assert_eq!(out.len(), 2);
        // A long zero-padded bound: bytes are bounded too.
        let wide = format!("h[{}:{}]", "0".repeat(4096), "9".repeat(4096));
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        assert!(expand_range(&wide, &mut out, &mut budget).is_err());
        assert!(out.len() <= MAX_RANGE_BYTES / 4096);
    }

    #[test]
    fn python_literals() {
        let v = |s: &str| ini_value(s, Span::file_start(FileId(0))).to_json();
        assert_eq!(v("yes"), serde_json::json!("yes"));
        assert_eq!(v("True"), serde_json::json!(true));
        assert_eq!(v("0644"), serde_json::json!("0644"));
        assert_eq!(v("0x1F"), serde_json::json!(31));
        assert_eq!(v("1_000"), serde_json::json!(1000));
        assert_eq!(v("-2"), serde_json::json!(-2));
        assert_eq!(v("1.5"), serde_json::json!(1.5));
        assert_eq!(v("None"), serde_json::Value::Null);
        assert_eq!(
            v(r#"{"a": [1, 'b'], 2: (3,)}"#),
            serde_json::json!({"a": [1, "b"], "2": [3]})
        );
        assert_eq!(v("'a' \"b\""), serde_json::json!("ab"));
        assert_eq!(v("1 # comment"), serde_json::json!(1));
        assert_eq!(v("a=b"), serde_json::json!("a=b"));
        assert_eq!(v(""), serde_json::json!(""));
        assert_eq!(
            v(&"[".repeat(10_000)),
            serde_json::json!("[".repeat(10_000))
        );
    }

    #[test]
    fn shell_split_host_lines() {
        assert_eq!(
            shlex_split(r#"h1 a="x y" b='1' c=d#e # comment"#).unwrap(),
            vec!["h1", "a=x y", "b=1", "c=d"]
        );
        assert!(shlex_split("h1 a=\"x").is_none());
    }

    #[test]
    fn ports() {
        assert_eq!(split_port("cp:2200"), ("cp".into(), Some(2200)));
        assert_eq!(split_port("[10.0.0.1]:22"), ("10.0.0.1".into(), Some(22)));
        assert_eq!(split_port("w[1:3].x:22"), ("w[1:3].x".into(), Some(22)));
        assert_eq!(split_port("fe80::1"), ("fe80::1".into(), None));
        assert_eq!(split_port("node[1:3]"), ("node[1:3]".into(), None));
    }
}
