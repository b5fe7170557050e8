//! Python literals as `ast.literal_eval` reads an INI inventory's values:
//! strings (adjacent ones joined, raw and escaped), numbers, `True`,
//! `False`, `None`, lists, tuples and dicts, nested to a bound. Anything
//! else is not a literal, and the value stays text.

use super::node;
use crate::source::Span;
use crate::yaml::{Node, Value};

/// Deepest nesting of a Python literal in an INI value (`[[[[...]]]]`).
const MAX_LITERAL_DEPTH: usize = 64;

/// A value `ast.literal_eval` can produce.
pub(super) enum Lit {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl Lit {
    pub(super) fn into_value(self, span: Span) -> Value {
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
pub(super) fn py_literal(text: &str) -> Option<Lit> {
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

    pub(super) fn string(&mut self, raw: bool) -> Option<String> {
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
