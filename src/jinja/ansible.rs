//! Ansible's filters and tests, reimplemented in Rust after ansible-core 2.19
//! (`plugins/filter/core.py`, `mathstuff.py`, `plugins/test/*.py`) and the
//! Jinja2 built-ins Ansible exposes.
//!
//! Each function works on known values only; undefined and unknown operands
//! are the evaluator's business (except where Ansible itself accepts an
//! undefined value, e.g. `default`, `defined`, `mandatory`). A name not
//! handled here returns `None`, which the evaluator reports as unsupported.

use super::py::{self, Py};
use super::{Fail, MAX_RENDERED_LEN, version};
use minijinja::State;
use minijinja::value::{Kwargs, Value};
use regex::Regex;
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt::Write as _;

/// Positional and keyword arguments of a filter or test (after the subject).
#[derive(Default, Clone)]
pub(crate) struct Args {
    pub pos: Vec<Value>,
    pub kw: Vec<(String, Value)>,
}

impl Args {
    /// Splits minijinja's argument list (keyword arguments arrive as a
    /// trailing `Kwargs` value).
    pub(crate) fn from_values(values: &[Value]) -> Args {
        let mut args = Args::default();
        for v in values {
            if v.is_kwargs() {
                for (k, val) in py::map_pairs(v) {
                    args.kw.push((py::py_str(&k), val));
                }
            } else {
                args.pos.push(v.clone());
            }
        }
        args
    }

    /// The values minijinja expects: positionals then a `Kwargs` value.
    pub(crate) fn to_values(&self, subject: &Value) -> Vec<Value> {
        let mut out = vec![subject.clone()];
        out.extend(self.pos.iter().cloned());
        if !self.kw.is_empty() {
            out.push(Value::from(self.kw.iter().cloned().collect::<Kwargs>()));
        }
        out
    }

    /// The argument at position `i` or named `name`.
    fn get(&self, i: usize, name: &str) -> Option<&Value> {
        self.pos
            .get(i)
            .or_else(|| self.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v))
    }

    /// Python raises `TypeError` for surplus or unknown arguments.
    fn expect(&self, names: &[&str]) -> Result<(), Fail> {
        if self.pos.len() > names.len() {
            return Err(Fail::Invalid(format!(
                "takes at most {} arguments",
                names.len() + 1
            )));
        }
        if let Some((k, _)) = self.kw.iter().find(|(k, _)| !names.contains(&k.as_str())) {
            return Err(Fail::Invalid(format!(
                "got an unexpected keyword argument '{k}'"
            )));
        }
        Ok(())
    }

    fn truthy(&self, i: usize, name: &str) -> Result<bool, Fail> {
        self.get(i, name).map_or(Ok(false), py::truthy)
    }

    fn str_or(&self, i: usize, name: &str, default: &str) -> Result<String, Fail> {
        match self.get(i, name) {
            None => Ok(default.to_string()),
            Some(v) => match py::classify(v) {
                Py::Str(s) => Ok(s.to_string()),
                _ => Err(Fail::Invalid(format!(
                    "argument '{name}' must be a string, not {}",
                    py::type_name(v)
                ))),
            },
        }
    }
}

fn expect_str<'a>(v: &'a Value, what: &str) -> Result<&'a str, Fail> {
    v.as_str()
        .ok_or_else(|| Fail::Invalid(format!("{what} expects a string, got {}", py::type_name(v))))
}

fn guard_len(len: usize) -> Result<(), Fail> {
    if len > MAX_RENDERED_LEN {
        Err(Fail::TooComplex("value exceeds the size bound".into()))
    } else {
        Ok(())
    }
}

/// Python's `iter(v)` as a list: characters, items or dict keys.
fn iterate(v: &Value) -> Result<Vec<Value>, Fail> {
    match py::classify(v) {
        Py::Str(s) => Ok(s.chars().map(Value::from).collect()),
        Py::Seq(items, _) => Ok(items),
        Py::Map(pairs) => Ok(pairs.into_iter().map(|(k, _)| k).collect()),
        _ => Err(Fail::Invalid(format!(
            "'{}' object is not iterable",
            py::type_name(v)
        ))),
    }
}

/// Is the value hashable in Python (usable in a `set`)?
fn hashable(v: &Value) -> bool {
    match py::classify(v) {
        Py::Seq(items, true) => items.iter().all(hashable),
        Py::Seq(_, false) | Py::Map(_) => false,
        _ => true,
    }
}

/// `ansible.builtin.bool` (`to_bool`).
pub(crate) fn to_bool(v: &Value) -> bool {
    let check = |s: &str| match s {
        "yes" | "on" | "true" | "1" => Some(true),
        "no" | "off" | "false" | "0" => Some(false),
        _ => None,
    };
    match py::classify(v) {
        Py::Str(s) => check(&s.to_lowercase()).unwrap_or(false),
        Py::Bool(b) => b,
        Py::Int(i) => check(&i.to_string()).unwrap_or(false),
        // Floats and others fall back to `value == 1`.
        Py::Float(f) => f == 1.0,
        _ => false,
    }
}

/// `module_utils.parsing.convert_bool.boolean(strict=True)`, used by
/// `truthy(convert_bool=True)`; `None` when it would raise.
fn convert_bool(v: &Value) -> Option<bool> {
    let norm = match py::classify(v) {
        Py::Bool(b) => return Some(b),
        Py::Str(s) => s.trim().to_lowercase(),
        Py::Int(1) => return Some(true),
        Py::Int(0) => return Some(false),
        Py::Float(1.0) => return Some(true),
        Py::Float(0.0) => return Some(false),
        _ => return None,
    };
    match norm.as_str() {
        "y" | "yes" | "on" | "1" | "true" | "t" => Some(true),
        "n" | "no" | "off" | "0" | "false" | "f" => Some(false),
        _ => None,
    }
}

/// Python `int(str)`: optional sign, digits with single underscores, spaces around.
fn parse_py_int(s: &str, base: u32) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = match base {
        16 => digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
            .unwrap_or(digits),
        8 => digits
            .strip_prefix("0o")
            .or_else(|| digits.strip_prefix("0O"))
            .unwrap_or(digits),
        2 => digits
            .strip_prefix("0b")
            .or_else(|| digits.strip_prefix("0B"))
            .unwrap_or(digits),
        _ => digits,
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let n = i128::from_str_radix(&clean, base).ok()?;
    Some(if neg { -n } else { n })
}

/// Python `float(str)`.
fn parse_py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        let f = if body == "nan" {
            f64::NAN
        } else {
            f64::INFINITY
        };
        return Some(if lower.starts_with('-') { -f } else { f });
    }
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    let clean: String = t.chars().filter(|c| *c != '_').collect();
    if !clean
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    clean.parse().ok()
}

/// Jinja2 `int(value, default=0, base=10)`.
fn jinja_int(v: &Value, default: &Value, base: u32) -> Result<Value, Fail> {
    let from_float = |f: f64| -> Result<Value, Fail> {
        if f.is_infinite() {
            return Err(Fail::Invalid(
                "cannot convert float infinity to integer".into(),
            ));
        }
        if f.is_nan() {
            return Ok(default.clone());
        }
        #[allow(clippy::cast_possible_truncation)]
        Ok(Value::from(f.trunc() as i128))
    };
    match py::classify(v) {
        Py::Bool(b) => Ok(Value::from(i64::from(b))),
        Py::Int(i) => Ok(Value::from(i)),
        Py::Float(f) => from_float(f),
        Py::Str(s) => match parse_py_int(s, base) {
            Some(i) => Ok(Value::from(i)),
            None => match parse_py_float(s) {
                Some(f) => from_float(f),
                None => Ok(default.clone()),
            },
        },
        _ => Ok(default.clone()),
    }
}

/// Jinja2 `float(value, default=0.0)`.
fn jinja_float(v: &Value, default: &Value) -> Value {
    match py::classify(v) {
        Py::Bool(b) => Value::from(if b { 1.0 } else { 0.0 }),
        #[allow(clippy::cast_precision_loss)]
        Py::Int(i) => Value::from(i as f64),
        Py::Float(f) => Value::from(f),
        Py::Str(s) => parse_py_float(s).map_or_else(|| default.clone(), Value::from),
        _ => default.clone(),
    }
}

/// Python `str.split(sep, maxsplit)`.
fn py_split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>, Fail> {
    let limit = usize::try_from(maxsplit).ok();
    let mut out = Vec::new();
    match sep {
        None => {
            let mut rest = s.trim_start();
            while !rest.is_empty() {
                if limit.is_some_and(|l| out.len() >= l) {
                    out.push(Value::from(rest.trim_end()));
                    break;
                }
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                out.push(Value::from(&rest[..end]));
                rest = rest[end..].trim_start();
            }
        }
        Some("") => return Err(Fail::Invalid("empty separator".into())),
        Some(sep) => match limit {
            Some(l) => out.extend(s.splitn(l + 1, sep).map(Value::from)),
            None => out.extend(s.split(sep).map(Value::from)),
        },
    }
    Ok(out)
}

/// Python `str.strip(chars)`.
fn py_strip<'a>(s: &'a str, chars: Option<&str>) -> &'a str {
    match chars {
        None => s.trim(),
        Some(cs) => s.trim_matches(|c| cs.contains(c)),
    }
}

/// Python's `shlex.quote`.
fn shlex_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if s.chars().all(safe) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

/// `posixpath.dirname`.
fn dirname(p: &str) -> String {
    let i = p.rfind('/').map_or(0, |i| i + 1);
    let head = &p[..i];
    if !head.is_empty() && !head.bytes().all(|b| b == b'/') {
        head.trim_end_matches('/').to_string()
    } else {
        head.to_string()
    }
}

/// Python's `$` (without `re.M`) also matches just before a final newline;
/// the `regex` crate's does not. Returns the pattern with each bare `$`
/// (outside classes, unescaped) widened to `\n?\z`, or `None` when there
/// is none. The widened form consumes that newline, so it is only used
/// where just the yes/no answer matters.
fn python_dollar(pattern: &str) -> Option<String> {
    let (mut out, mut found, mut in_class, mut escaped) = (String::new(), false, false, false);
    for c in pattern.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '$' {
            found = true;
            out.push_str("(?:\\n?\\z)");
            continue;
        }
        out.push(c);
    }
    found.then_some(out)
}

/// The text a regex filter works on; unsupported when Python's `$` would
/// match before a trailing newline (see [`python_dollar`]).
fn regex_subject(v: &Value, pattern: &str, multiline: bool) -> Result<String, Fail> {
    let text = py::py_str(v);
    if !multiline && text.ends_with('\n') && python_dollar(pattern).is_some() {
        return Err(Fail::TooComplex("`$` before a trailing newline".into()));
    }
    Ok(text)
}

/// Translates a Python regular expression to the `regex` crate's dialect.
/// Constructs the crate cannot express (look-around, back-references)
/// fail to compile and are reported as unsupported.
fn compile_regex(pattern: &str, ignorecase: bool, multiline: bool) -> Result<Regex, Fail> {
    let translated = pattern.replace("\\Z", "\\z");
    let mut flags = String::new();
    if ignorecase {
        flags.push('i');
    }
    if multiline {
        flags.push('m');
    }
    let full = if flags.is_empty() {
        translated
    } else {
        format!("(?{flags}){translated}")
    };
    // `select('match', ...)` compiles the same pattern once per item; keep
    // a few compiled patterns per thread.
    thread_local! {
        static CACHE: RefCell<Vec<(String, Regex)>> = const { RefCell::new(Vec::new()) };
    }
    if let Some(re) = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(p, _)| *p == full)
            .map(|(_, re)| re.clone())
    }) {
        return Ok(re);
    }
    let re = regex::RegexBuilder::new(&full)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| Fail::TooComplex(format!("regular expression not supported: {e}")))?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 32 {
            c.remove(0);
        }
        c.push((full, re.clone()));
    });
    Ok(re)
}

/// Python `re.sub` replacement template to the `regex` crate's syntax.
fn translate_replacement(rep: &str) -> Result<String, Fail> {
    let mut out = String::new();
    let mut chars = rep.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => out.push_str("$$"),
            '\\' => match chars.next() {
                Some(d) if d.is_ascii_digit() => {
                    let mut num = d.to_string();
                    if let Some(e) = chars.next_if(char::is_ascii_digit) {
                        num.push(e);
                    }
                    let _ = write!(out, "${{{num}}}");
                }
                Some('g') => {
                    if chars.next() != Some('<') {
                        return Err(Fail::Invalid("bad group reference in replacement".into()));
                    }
                    let name: String = chars.by_ref().take_while(|c| *c != '>').collect();
                    let _ = write!(out, "${{{name}}}");
                }
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('\\') => out.push('\\'),
                Some(other) if other.is_ascii_alphabetic() => {
                    return Err(Fail::Invalid(format!(
                        "bad escape \\{other} in replacement"
                    )));
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => return Err(Fail::Invalid("bad escape (end of pattern)".into())),
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\u{b}\u{c}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Jinja2's `unique` (case-insensitive by default) with Ansible's fallback to
/// an order-preserving, case-sensitive version when items are unhashable.
fn unique(items: Vec<Value>, case_sensitive: bool) -> Vec<Value> {
    let fold = |v: &Value| -> Value {
        match (case_sensitive, v.as_str()) {
            (false, Some(s)) => Value::from(s.to_lowercase()),
            _ => v.clone(),
        }
    };
    let case_sensitive_fallback = !items.iter().all(hashable);
    let mut seen: Vec<Value> = Vec::new();
    let mut out = Vec::new();
    for item in items {
        let key = if case_sensitive_fallback {
            item.clone()
        } else {
            fold(&item)
        };
        if !seen.iter().any(|s| py::eq(s, &key)) {
            seen.push(key);
            out.push(item);
        }
    }
    out
}

/// Ansible's `merge_hash`.
fn merge_hash(x: &Value, y: &Value, recursive: bool, list_merge: &str) -> Result<Value, Fail> {
    let (Py::Map(xp), Py::Map(yp)) = (py::classify(x), py::classify(y)) else {
        return Err(Fail::Invalid(format!(
            "failed to combine variables, expected dicts but got a '{}' and a '{}'",
            py::type_name(x),
            py::type_name(y)
        )));
    };
    if xp.is_empty() || py::eq(x, y) {
        return Ok(y.clone());
    }
    let mut out: Vec<(Value, Value)> = xp;
    let set = |out: &mut Vec<(Value, Value)>, k: Value, v: Value| {
        if let Some(slot) = out.iter_mut().find(|(ok, _)| py::eq(ok, &k)) {
            slot.1 = v;
        } else {
            out.push((k, v));
        }
    };
    if !recursive && list_merge == "replace" {
        for (k, v) in yp {
            set(&mut out, k, v);
        }
        return Ok(Value::from_pairs(out));
    }
    for (k, yv) in yp {
        let Some(xv) = out
            .iter()
            .find(|(ok, _)| py::eq(ok, &k))
            .map(|(_, v)| v.clone())
        else {
            set(&mut out, k, yv);
            continue;
        };
        let merged = match (py::classify(&xv), py::classify(&yv)) {
            (Py::Map(_), Py::Map(_)) if recursive => merge_hash(&xv, &yv, recursive, list_merge)?,
            (Py::Seq(xs, false), Py::Seq(ys, false)) => {
                let not_in_y = || {
                    xs.iter()
                        .filter(|z| !ys.iter().any(|w| py::eq(z, w)))
                        .cloned()
                };
                match list_merge {
                    "replace" => yv.clone(),
                    "keep" => xv.clone(),
                    "append" => Value::from(xs.iter().chain(&ys).cloned().collect::<Vec<_>>()),
                    "prepend" => Value::from(ys.iter().chain(&xs).cloned().collect::<Vec<_>>()),
                    "append_rp" => {
                        Value::from(not_in_y().chain(ys.iter().cloned()).collect::<Vec<_>>())
                    }
                    "prepend_rp" => {
                        Value::from(ys.iter().cloned().chain(not_in_y()).collect::<Vec<_>>())
                    }
                    other => {
                        return Err(Fail::Invalid(format!(
                            "merge_hash: 'list_merge' argument can only be equal to 'replace', 'keep', 'append', 'prepend', 'append_rp' or 'prepend_rp', got '{other}'"
                        )));
                    }
                }
            }
            _ => yv.clone(),
        };
        set(&mut out, k, merged);
    }
    Ok(Value::from_pairs(out))
}

/// Ansible's `flatten(levels=None, skip_nulls=True)`.
fn flatten(
    items: &[Value],
    levels: Option<i64>,
    skip_nulls: bool,
    out: &mut Vec<Value>,
) -> Result<(), Fail> {
    for item in items {
        guard_len(out.len())?;
        let null = matches!(py::classify(item), Py::None)
            || matches!(item.as_str(), Some("None" | "null"));
        if skip_nulls && null {
            continue;
        }
        match (py::classify(item), levels) {
            (Py::Seq(inner, _), None) => flatten(&inner, None, skip_nulls, out)?,
            (Py::Seq(inner, _), Some(l)) if l >= 1 => {
                flatten(&inner, Some(l - 1), skip_nulls, out)?;
            }
            _ => out.push(item.clone()),
        }
    }
    Ok(())
}

/// Jinja2 `min`/`max`: case-insensitive on strings unless asked otherwise.
fn min_max(v: &Value, args: &Args, want_max: bool) -> Result<Value, Fail> {
    args.expect(&["case_sensitive", "attribute"])?;
    let case_sensitive = args.truthy(0, "case_sensitive")?;
    let attribute = args.get(1, "attribute").map(py::py_str);
    let items = iterate(v)?;
    let key = |item: &Value| -> Value {
        let mut k = item.clone();
        if let Some(attr) = &attribute {
            for part in attr.split('.') {
                k = k.get_attr(part).unwrap_or_default();
            }
        }
        match (case_sensitive, k.as_str()) {
            (false, Some(s)) => Value::from(s.to_lowercase()),
            _ => k,
        }
    };
    let mut best: Option<(Value, Value)> = None;
    for item in items {
        let k = key(&item);
        let better = match &best {
            None => true,
            Some((bk, _)) => {
                let ord = py::cmp(&k, bk, if want_max { ">" } else { "<" })?;
                ord.is_some_and(|o| if want_max { o.is_gt() } else { o.is_lt() })
            }
        };
        if better {
            best = Some((k, item));
        }
    }
    Ok(best.map_or(Value::UNDEFINED, |(_, item)| item))
}

/// Jinja2 `sort(reverse=False, case_sensitive=False, attribute=None)`.
fn sort(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["reverse", "case_sensitive", "attribute"])?;
    let reverse = args.truthy(0, "reverse")?;
    let case_sensitive = args.truthy(1, "case_sensitive")?;
    let attribute = args.get(2, "attribute").map(py::py_str);
    let mut keyed: Vec<(Value, Value)> = iterate(v)?
        .into_iter()
        .map(|item| {
            let mut k = item.clone();
            if let Some(attr) = &attribute {
                for part in attr.split('.') {
                    k = k.get_attr(part).unwrap_or_default();
                }
            }
            if let (false, Some(s)) = (case_sensitive, k.as_str()) {
                k = Value::from(s.to_lowercase());
            }
            (k, item)
        })
        .collect();
    // Surface Python's TypeError for mixed types before sorting.
    for w in keyed.windows(2) {
        py::cmp(&w[0].0, &w[1].0, "<")?;
    }
    keyed.sort_by(|a, b| {
        py::cmp(&a.0, &b.0, "<")
            .ok()
            .flatten()
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    if reverse {
        keyed.reverse();
    }
    Ok(Value::from(
        keyed.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    ))
}

/// Set operations from `mathstuff.py`. Ansible goes through Python `set`s
/// (whose order is arbitrary) when items are hashable; we keep first-seen
/// order, which agrees on membership and length.
fn set_op(name: &str, a: &Value, b: &Value) -> Result<Value, Fail> {
    let (xa, xb) = (iterate(a)?, iterate(b)?);
    let in_b = |x: &Value| xb.iter().any(|y| py::eq(x, y));
    let in_a = |x: &Value| xa.iter().any(|y| py::eq(x, y));
    let items: Vec<Value> = match name {
        "union" => xa.iter().chain(&xb).cloned().collect(),
        "intersect" => xa.iter().filter(|x| in_b(x)).cloned().collect(),
        "difference" => xa.iter().filter(|x| !in_b(x)).cloned().collect(),
        _ => xa
            .iter()
            .filter(|x| !in_b(x))
            .chain(xb.iter().filter(|x| !in_a(x)))
            .cloned()
            .collect(),
    };
    Ok(Value::from(unique(items, true)))
}

fn dict2items(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["key_name", "value_name"])?;
    let key_name = args.str_or(0, "key_name", "key")?;
    let value_name = args.str_or(1, "value_name", "value")?;
    let Py::Map(pairs) = py::classify(v) else {
        return Err(Fail::Invalid(format!(
            "dict2items requires a dictionary, got {} instead.",
            py::type_name(v)
        )));
    };
    Ok(Value::from(
        pairs
            .into_iter()
            .map(|(k, val)| Value::from_pairs([(key_name.as_str(), k), (value_name.as_str(), val)]))
            .collect::<Vec<_>>(),
    ))
}

fn items2dict(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["key_name", "value_name"])?;
    let key_name = Value::from(args.str_or(0, "key_name", "key")?);
    let value_name = Value::from(args.str_or(1, "value_name", "value")?);
    let Py::Seq(items, _) = py::classify(v) else {
        return Err(Fail::Invalid(format!(
            "items2dict requires a list, got {} instead.",
            py::type_name(v)
        )));
    };
    let mut out: Vec<(Value, Value)> = Vec::new();
    for item in items {
        let Py::Map(pairs) = py::classify(&item) else {
            return Err(Fail::Invalid(
                "items2dict requires a list of dictionaries".into(),
            ));
        };
        let find = |name: &Value| {
            pairs
                .iter()
                .find(|(k, _)| py::eq(k, name))
                .map(|(_, v)| v.clone())
        };
        let (Some(k), Some(val)) = (find(&key_name), find(&value_name)) else {
            return Err(Fail::Invalid(
                "items2dict requires each dictionary in the list to contain the keys".into(),
            ));
        };
        if !hashable(&k) {
            return Err(Fail::Invalid("unhashable type".into()));
        }
        if let Some(slot) = out.iter_mut().find(|(ok, _)| py::eq(ok, &k)) {
            slot.1 = val;
        } else {
            out.push((k, val));
        }
    }
    Ok(Value::from_pairs(out))
}

fn regex_search(v: &Value, args: &Args) -> Result<Value, Fail> {
    let pattern = expect_str(
        args.pos
            .first()
            .ok_or_else(|| Fail::Invalid("regex_search requires a pattern".into()))?,
        "regex_search",
    )?;
    let ignorecase = args
        .kw
        .iter()
        .any(|(k, v)| k == "ignorecase" && v.is_true());
    let multiline = args.kw.iter().any(|(k, v)| k == "multiline" && v.is_true());
    let text = regex_subject(v, pattern, multiline)?;
    let re = compile_regex(pattern, ignorecase, multiline)?;
    let Some(caps) = re.captures(&text) else {
        return Ok(Value::from(()));
    };
    let groups = &args.pos[1..];
    if groups.is_empty() {
        return Ok(Value::from(caps.get(0).map_or("", |m| m.as_str())));
    }
    let mut out = Vec::new();
    for g in groups {
        let g = expect_str(g, "regex_search group")?;
        let m = if let Some(name) = g.strip_prefix("\\g<").and_then(|r| r.strip_suffix('>')) {
            match name.parse::<usize>() {
                Ok(i) => caps.get(i),
                Err(_) => caps.name(name),
            }
        } else if let Some(num) = g.strip_prefix('\\') {
            caps.get(
                num.parse::<usize>()
                    .map_err(|_| Fail::Invalid("Unknown argument".into()))?,
            )
        } else {
            return Err(Fail::Invalid("Unknown argument".into()));
        };
        out.push(m.map_or(Value::from(()), |m| Value::from(m.as_str())));
    }
    Ok(Value::from(out))
}

fn regex_findall(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["regex", "multiline", "ignorecase"])?;
    let pattern = py::py_str(
        args.get(0, "regex")
            .ok_or_else(|| Fail::Invalid("regex_findall requires a pattern".into()))?,
    );
    let multiline = args.truthy(1, "multiline")?;
    let text = regex_subject(v, &pattern, multiline)?;
    let re = compile_regex(&pattern, args.truthy(2, "ignorecase")?, multiline)?;
    let groups = re.captures_len() - 1;
    let mut out = Vec::new();
    for caps in re.captures_iter(&text) {
        guard_len(out.len())?;
        let group = |i: usize| Value::from(caps.get(i).map_or("", |m| m.as_str()));
        out.push(match groups {
            0 => group(0),
            1 => group(1),
            n => py::make_seq((1..=n).map(group).collect(), true),
        });
    }
    Ok(Value::from(out))
}

fn regex_replace(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&[
        "pattern",
        "replacement",
        "ignorecase",
        "multiline",
        "count",
        "mandatory_count",
    ])?;
    let pattern = args.str_or(0, "pattern", "")?;
    let replacement = translate_replacement(&args.str_or(1, "replacement", "")?)?;
    let multiline = args.truthy(3, "multiline")?;
    let text = regex_subject(v, &pattern, multiline)?;
    let re = compile_regex(&pattern, args.truthy(2, "ignorecase")?, multiline)?;
    let count = args
        .get(4, "count")
        .and_then(|c| i64::try_from(c.clone()).ok())
        .unwrap_or(0);
    let mandatory = args
        .get(5, "mandatory_count")
        .and_then(|c| i64::try_from(c.clone()).ok())
        .unwrap_or(0);
    let matches = re.find_iter(&text).count();
    let limit = usize::try_from(count).unwrap_or(0);
    let subs = if limit == 0 {
        matches
    } else {
        matches.min(limit)
    };
    if mandatory != 0 && usize::try_from(mandatory).ok() != Some(subs) {
        return Err(Fail::Invalid(format!(
            "'{pattern}' should match {mandatory} times, but matches {subs} times"
        )));
    }
    // Bound the output before building it: each substitution adds the
    // replacement plus, per group reference, at most the whole input.
    let refs = replacement.matches("${").count();
    let per = replacement
        .len()
        .saturating_add(refs.saturating_mul(text.len()));
    guard_len(text.len().saturating_add(subs.saturating_mul(per)))?;
    let out = re.replacen(&text, limit, replacement.as_str());
    guard_len(out.len())?;
    Ok(Value::from(out.into_owned()))
}

fn replace(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["old", "new", "count"])?;
    let s = py::py_str(v);
    let old = py::py_str(
        args.get(0, "old")
            .ok_or_else(|| Fail::Invalid("replace requires 'old'".into()))?,
    );
    let new = py::py_str(
        args.get(1, "new")
            .ok_or_else(|| Fail::Invalid("replace requires 'new'".into()))?,
    );
    let count = match args.get(2, "count") {
        None => -1,
        Some(c) if c.is_none() => -1,
        Some(c) => i64::try_from(c.clone())
            .map_err(|_| Fail::Invalid("count must be an integer".into()))?,
    };
    let occurrences = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(old.as_str()).count()
    };
    let n = usize::try_from(count).map_or(occurrences, |c| c.min(occurrences));
    guard_len(s.len().saturating_add(n.saturating_mul(new.len())))?;
    let out = if old.is_empty() {
        // Python inserts `new` between characters and at both ends.
        let mut out = String::new();
        let mut done = 0;
        for c in s.chars() {
            if done < n {
                out.push_str(&new);
                done += 1;
            }
            out.push(c);
        }
        if done < n {
            out.push_str(&new);
        }
        out
    } else {
        s.replacen(old.as_str(), &new, n)
    };
    Ok(Value::from(out))
}

fn join(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["d", "attribute"])?;
    let sep = args.get(0, "d").map_or_else(String::new, py::py_str);
    let attribute = args.get(1, "attribute").map(py::py_str);
    let mut out = String::new();
    for (i, item) in iterate(v)?.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        let item = match &attribute {
            Some(a) => item.get_attr(a).unwrap_or_default(),
            None => item.clone(),
        };
        if item.is_undefined() {
            return Err(Fail::Undefined(String::new()));
        }
        out.push_str(&py::py_str(&item));
        guard_len(out.len())?;
    }
    Ok(Value::from(out))
}

/// Applies an Ansible/Jinja2 filter to known values. `None`: not ours.
#[allow(clippy::too_many_lines)]
pub(crate) fn filter(
    state: &mut State,
    name: &str,
    v: &Value,
    args: &Args,
) -> Option<Result<Value, Fail>> {
    let s = || py::py_str(v);
    let r = match name {
        "bool" => args.expect(&[]).map(|()| Value::from(to_bool(v))),
        "default" | "d" => (|| {
            args.expect(&["default_value", "boolean"])?;
            let boolean = match args.get(1, "boolean") {
                None => false,
                Some(b) => match py::classify(b) {
                    Py::Bool(b) => b,
                    _ => return Err(Fail::Invalid("boolean must be bool".into())),
                },
            };
            let fallback = args
                .get(0, "default_value")
                .cloned()
                .unwrap_or_else(|| Value::from(""));
            if v.is_undefined() || (boolean && !py::truthy(v)?) {
                Ok(fallback)
            } else {
                Ok(v.clone())
            }
        })(),
        "ternary" => (|| {
            args.expect(&["true_val", "false_val", "none_val"])?;
            let pick = |i, n| {
                args.get(i, n)
                    .cloned()
                    .ok_or_else(|| Fail::Invalid(format!("ternary requires {n}")))
            };
            let none_val = args.get(2, "none_val").filter(|n| !n.is_none());
            match none_val {
                Some(nv) if v.is_none() => Ok(nv.clone()),
                _ if py::truthy(v)? => pick(0, "true_val"),
                _ => pick(1, "false_val"),
            }
        })(),
        "mandatory" => {
            if v.is_undefined() {
                Err(Fail::Undefined(String::new()))
            } else {
                Ok(v.clone())
            }
        }
        "length" | "count" => match py::classify(v) {
            Py::Str(x) => Ok(Value::from(x.chars().count())),
            Py::Seq(items, _) => Ok(Value::from(items.len())),
            Py::Map(pairs) => Ok(Value::from(pairs.len())),
            _ => Err(Fail::Invalid(format!(
                "object of type '{}' has no len()",
                py::type_name(v)
            ))),
        },
        "int" => (|| {
            args.expect(&["default", "base"])?;
            let default = args
                .get(0, "default")
                .cloned()
                .unwrap_or_else(|| Value::from(0));
            let base = match args.get(1, "base") {
                None => 10,
                Some(b) => u32::try_from(b.clone())
                    .map_err(|_| Fail::Invalid("base must be an int".into()))?,
            };
            if !matches!(base, 2 | 8 | 10 | 16) {
                return Err(Fail::TooComplex(format!("int base {base}")));
            }
            jinja_int(v, &default, base)
        })(),
        "float" => args.expect(&["default"]).map(|()| {
            let default = args
                .get(0, "default")
                .cloned()
                .unwrap_or_else(|| Value::from(0.0));
            jinja_float(v, &default)
        }),
        "string" => Ok(Value::from(s())),
        "lower" => Ok(Value::from(s().to_lowercase())),
        "upper" => Ok(Value::from(s().to_uppercase())),
        "capitalize" => Ok(Value::from({
            let t = s();
            let mut c = t.chars();
            c.next().map_or_else(String::new, |f| {
                f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase()
            })
        })),
        "trim" => args.expect(&["chars"]).map(|()| {
            let chars = args
                .get(0, "chars")
                .filter(|c| !c.is_none())
                .map(py::py_str);
            Value::from(py_strip(&s(), chars.as_deref()))
        }),
        "list" => iterate(v).map(Value::from),
        "join" => join(v, args),
        "first" => iterate(v).map(|items| items.into_iter().next().unwrap_or(Value::UNDEFINED)),
        "last" => iterate(v).map(|items| items.into_iter().last().unwrap_or(Value::UNDEFINED)),
        "reverse" => match py::classify(v) {
            Py::Str(x) => Ok(Value::from(x.chars().rev().collect::<String>())),
            _ => iterate(v).map(|mut items| {
                items.reverse();
                Value::from(items)
            }),
        },
        "sort" => sort(v, args),
        "unique" => (|| {
            args.expect(&["case_sensitive", "attribute"])?;
            if args.get(1, "attribute").is_some() {
                return Err(Fail::TooComplex("unique(attribute=...)".into()));
            }
            Ok(Value::from(unique(
                iterate(v)?,
                args.truthy(0, "case_sensitive")?,
            )))
        })(),
        "union" | "intersect" | "difference" | "symmetric_difference" => {
            match args.pos.as_slice() {
                [b] if args.kw.is_empty() => set_op(name, v, b),
                _ => Err(Fail::Invalid(format!("{name} takes exactly one argument"))),
            }
        }
        "min" => min_max(v, args, false),
        "max" => min_max(v, args, true),
        "flatten" => (|| {
            args.expect(&["levels", "skip_nulls"])?;
            let levels = match args.get(0, "levels") {
                None => None,
                Some(l) if l.is_none() => None,
                Some(l) => Some(
                    i64::try_from(l.clone())
                        .map_err(|_| Fail::Invalid("levels must be an int".into()))?,
                ),
            };
            let skip_nulls = args.get(1, "skip_nulls").map_or(Ok(true), py::truthy)?;
            let mut out = Vec::new();
            flatten(&iterate(v)?, levels, skip_nulls, &mut out)?;
            Ok(Value::from(out))
        })(),
        "combine" => (|| {
            let mut recursive = false;
            let mut list_merge = "replace".to_string();
            for (k, val) in &args.kw {
                match k.as_str() {
                    "recursive" => recursive = py::truthy(val)?,
                    "list_merge" => list_merge = py::py_str(val),
                    _ => {
                        return Err(Fail::Invalid(
                            "'recursive' and 'list_merge' are the only valid keyword arguments"
                                .into(),
                        ));
                    }
                }
            }
            let mut dicts = Vec::new();
            flatten(std::slice::from_ref(v), Some(1), true, &mut dicts)?;
            for a in &args.pos {
                flatten(std::slice::from_ref(a), Some(1), true, &mut dicts)?;
            }
            let mut iter = dicts.into_iter().rev();
            let Some(mut result) = iter.next() else {
                return Ok(Value::from_pairs(Vec::<(Value, Value)>::new()));
            };
            for d in iter {
                result = merge_hash(&d, &result, recursive, &list_merge)?;
            }
            Ok(result)
        })(),
        "dict2items" => dict2items(v, args),
        "items2dict" => items2dict(v, args),
        "items" => match py::classify(v) {
            Py::Map(pairs) => Ok(Value::from(
                pairs
                    .into_iter()
                    .map(|(k, val)| py::make_seq(vec![k, val], true))
                    .collect::<Vec<_>>(),
            )),
            _ => Err(Fail::Invalid("items requires a mapping".into())),
        },
        "regex_search" => regex_search(v, args),
        "regex_findall" => regex_findall(v, args),
        "regex_replace" => regex_replace(v, args),
        "regex_escape" => args.expect(&["re_type"]).and_then(|()| {
            if args.str_or(0, "re_type", "python")? == "python" {
                Ok(Value::from(regex_escape(&s())))
            } else {
                Err(Fail::TooComplex("regex_escape(re_type=posix...)".into()))
            }
        }),
        "replace" => replace(v, args),
        "split" => (|| {
            args.expect(&["sep", "maxsplit"])?;
            let text = expect_str(v, "split")?;
            let sep = match args.get(0, "sep") {
                None => None,
                Some(x) if x.is_none() => None,
                Some(x) => Some(expect_str(x, "split separator")?.to_string()),
            };
            let maxsplit = args
                .get(1, "maxsplit")
                .and_then(|m| i64::try_from(m.clone()).ok())
                .unwrap_or(-1);
            py_split(text, sep.as_deref(), maxsplit).map(Value::from)
        })(),
        "to_json" => {
            if args.pos.is_empty() && args.kw.is_empty() {
                py::json_dumps(v).map(Value::from)
            } else {
                Err(Fail::TooComplex("to_json with options".into()))
            }
        }
        "from_json" => expect_str(v, "from_json").and_then(|text| {
            serde_json::from_str::<serde_json::Value>(text)
                .map(|j| py::from_json(&j))
                .map_err(|e| Fail::Invalid(format!("from_json: {e}")))
        }),
        "basename" => {
            expect_str(v, "basename").map(|p| Value::from(p.rsplit('/').next().unwrap_or("")))
        }
        "dirname" => expect_str(v, "dirname").map(|p| Value::from(dirname(p))),
        "quote" => Ok(Value::from(if v.is_none() {
            "''".into()
        } else {
            shlex_quote(&s())
        })),
        "type_debug" => Ok(Value::from(py::type_name(v))),
        "abs" => match py::num(v) {
            Some(py::Num::Int(i)) => Ok(Value::from(i.abs())),
            Some(py::Num::Float(f)) => Ok(Value::from(f.abs())),
            None => Err(Fail::Invalid(format!(
                "bad operand type for abs(): '{}'",
                py::type_name(v)
            ))),
        },
        // Jinja2 built-ins that call back into tests and filters by name:
        // minijinja's versions dispatch through the environment, where ours
        // are registered, and match Jinja2's behaviour.
        "select" | "reject" | "selectattr" | "rejectattr" | "map" => {
            return Some(
                state
                    .apply_filter(name, &args.to_values(v))
                    .map_err(|e| Fail::from_minijinja(&e)),
            );
        }
        _ => return None,
    };
    Some(r)
}

fn is_lower(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_uppercase() {
            return false;
        }
        cased |= c.is_lowercase();
    }
    cased
}

fn is_upper(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_lowercase() {
            return false;
        }
        cased |= c.is_uppercase();
    }
    cased
}

fn result_dict(v: &Value, test: &str) -> Result<Vec<(Value, Value)>, Fail> {
    match py::classify(v) {
        Py::Map(pairs) => Ok(pairs),
        _ => Err(Fail::Invalid(format!(
            "The '{test}' test expects a dictionary"
        ))),
    }
}

fn get<'a>(pairs: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    pairs
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn regex_test(v: &Value, args: &Args, anchored: Option<bool>) -> Result<bool, Fail> {
    let names: &[&str] = if anchored.is_some() {
        &["pattern", "ignorecase", "multiline"]
    } else {
        &["pattern", "ignorecase", "multiline", "match_type"]
    };
    args.expect(names)?;
    let text = py::py_str(v);
    let pattern = args.str_or(0, "pattern", "")?;
    let multiline = args.truthy(2, "multiline")?;
    let pattern = if multiline {
        None
    } else {
        python_dollar(&pattern)
    }
    .unwrap_or(pattern);
    let re = compile_regex(&pattern, args.truthy(1, "ignorecase")?, multiline)?;
    let match_type: Cow<'_, str> = match anchored {
        Some(true) => "match".into(),
        Some(false) => "search".into(),
        None => args.str_or(3, "match_type", "search")?.into(),
    };
    match match_type.as_ref() {
        "match" => Ok(re.find(&text).is_some_and(|m| m.start() == 0)),
        "search" => Ok(re.is_match(&text)),
        "fullmatch" => Ok(compile_regex(
            &format!("\\A(?:{pattern})\\z"),
            args.truthy(1, "ignorecase")?,
            args.truthy(2, "multiline")?,
        )?
        .is_match(&text)),
        other => Err(Fail::TooComplex(format!("regex match_type {other}"))),
    }
}

/// Applies an Ansible/Jinja2 test to known values. `None`: not ours.
#[allow(clippy::too_many_lines)]
pub(crate) fn test(name: &str, v: &Value, args: &Args) -> Option<Result<bool, Fail>> {
    let other = || {
        args.pos
            .first()
            .ok_or_else(|| Fail::Invalid(format!("test '{name}' requires an argument")))
    };
    let cmp_with = |op: &str| -> Result<bool, Fail> {
        let o = other()?;
        match op {
            "==" => Ok(py::eq(v, o)),
            "!=" => Ok(!py::eq(v, o)),
            _ => Ok(py::cmp(v, o, op)?.is_some_and(|ord| match op {
                "<" => ord.is_lt(),
                "<=" => ord.is_le(),
                ">" => ord.is_gt(),
                _ => ord.is_ge(),
            })),
        }
    };
    let r = match name {
        "defined" => Ok(!v.is_undefined()),
        "undefined" => Ok(v.is_undefined()),
        "none" => Ok(v.is_none()),
        "boolean" => Ok(matches!(py::classify(v), Py::Bool(_))),
        "true" => Ok(matches!(py::classify(v), Py::Bool(true))),
        "false" => Ok(matches!(py::classify(v), Py::Bool(false))),
        "integer" => Ok(matches!(py::classify(v), Py::Int(_))),
        "float" => Ok(matches!(py::classify(v), Py::Float(_))),
        "number" => Ok(matches!(
            py::classify(v),
            Py::Int(_) | Py::Float(_) | Py::Bool(_)
        )),
        "string" => Ok(matches!(py::classify(v), Py::Str(_))),
        "mapping" => Ok(matches!(py::classify(v), Py::Map(_))),
        "sequence" | "iterable" => Ok(matches!(
            py::classify(v),
            Py::Str(_) | Py::Seq(..) | Py::Map(_)
        )),
        "truthy" | "falsy" => (|| {
            args.expect(&["convert_bool"])?;
            let b = if args.truthy(0, "convert_bool")? {
                match convert_bool(v) {
                    Some(b) => b,
                    None => py::truthy(v)?,
                }
            } else {
                py::truthy(v)?
            };
            Ok(if name == "truthy" { b } else { !b })
        })(),
        "match" => regex_test(v, args, Some(true)),
        "search" => regex_test(v, args, Some(false)),
        "regex" => regex_test(v, args, None),
        "in" => other().and_then(|seq| py::contains(seq, v)),
        "contains" => other().and_then(|item| py::contains(v, item)),
        "version" | "version_compare" => (|| {
            args.expect(&["version", "operator", "strict", "version_type"])?;
            let version = args
                .get(0, "version")
                .ok_or_else(|| Fail::Invalid("version test requires a version".into()))?;
            if !py::truthy(v)? {
                return Err(Fail::Invalid("Input version value cannot be empty".into()));
            }
            let operator = args
                .get(1, "operator")
                .map_or_else(|| "eq".to_string(), py::py_str);
            let strict = args.truthy(2, "strict")?;
            let version_type = args
                .get(3, "version_type")
                .filter(|t| !t.is_none())
                .map(py::py_str);
            if strict && version_type.is_some() {
                return Err(Fail::Invalid(
                    "Cannot specify both 'strict' and 'version_type'".into(),
                ));
            }
            version::compare(
                &py::py_str(v),
                &py::py_str(version),
                &operator,
                strict,
                version_type.as_deref(),
            )
        })(),
        "failed" | "failure" => result_dict(v, "failed")
            .map(|d| get(&d, "failed").is_some_and(|f| py::truthy(f).unwrap_or(false))),
        "succeeded" | "success" | "successful" => result_dict(v, "failed")
            .map(|d| !get(&d, "failed").is_some_and(|f| py::truthy(f).unwrap_or(false))),
        "skipped" | "skip" => result_dict(v, "skipped")
            .map(|d| get(&d, "skipped").is_some_and(|f| py::truthy(f).unwrap_or(false))),
        "unreachable" => result_dict(v, "unreachable")
            .map(|d| get(&d, "unreachable").is_some_and(|f| py::truthy(f).unwrap_or(false))),
        "reachable" => result_dict(v, "unreachable")
            .map(|d| !get(&d, "unreachable").is_some_and(|f| py::truthy(f).unwrap_or(false))),
        "changed" | "change" => result_dict(v, "changed").and_then(|d| match get(&d, "changed") {
            Some(c) => py::truthy(c),
            None => {
                let Some(Py::Seq(results, false)) = get(&d, "results").map(py::classify) else {
                    return Ok(false);
                };
                if !matches!(results.first().map(py::classify), Some(Py::Map(_))) {
                    return Ok(false);
                }
                Ok(results.iter().any(|r| {
                    r.get_attr("changed")
                        .is_ok_and(|c| !c.is_undefined() && c.is_true())
                }))
            }
        }),
        "sameas" => other().and_then(|o| match (py::classify(v), py::classify(o)) {
            (Py::None, Py::None) => Ok(true),
            (Py::Bool(a), Py::Bool(b)) => Ok(a == b),
            (Py::None | Py::Bool(_), _) | (_, Py::None | Py::Bool(_)) => Ok(false),
            _ => Err(Fail::TooComplex("object identity".into())),
        }),
        "subset" | "issubset" | "superset" | "issuperset" => other().and_then(|o| {
            let (a, b) = if name.ends_with("subset") {
                (v, o)
            } else {
                (o, v)
            };
            let (xa, xb) = (iterate(a)?, iterate(b)?);
            if !xa.iter().chain(&xb).all(hashable) {
                return Err(Fail::Invalid("unhashable type".into()));
            }
            Ok(xa.iter().all(|x| xb.iter().any(|y| py::eq(x, y))))
        }),
        "abs" | "is_abs" => expect_str(v, "abs").map(|p| p.starts_with('/')),
        "divisibleby" => other().and_then(|n| {
            let r = py::arith(py::Arith::Rem, v, n)?;
            Ok(py::eq(&r, &Value::from(0)))
        }),
        "even" | "odd" => match py::num(v) {
            Some(_) => py::arith(py::Arith::Rem, v, &Value::from(2))
                .map(|r| py::eq(&r, &Value::from(0)) == (name == "even")),
            None => Err(Fail::Invalid(format!(
                "not supported for {}",
                py::type_name(v)
            ))),
        },
        "lower" => Ok(is_lower(&py::py_str(v))),
        "upper" => Ok(is_upper(&py::py_str(v))),
        "eq" | "equalto" | "==" => cmp_with("=="),
        "ne" | "!=" => cmp_with("!="),
        "lt" | "lessthan" | "<" => cmp_with("<"),
        "le" | "<=" => cmp_with("<="),
        "gt" | "greaterthan" | ">" => cmp_with(">"),
        "ge" | ">=" => cmp_with(">="),
        "any" | "all" => iterate(v).and_then(|items| {
            let mut truths = items.iter().map(py::truthy);
            if name == "any" {
                truths.try_fold(false, |acc, t| t.map(|t| acc || t))
            } else {
                truths.try_fold(true, |acc, t| t.map(|t| acc && t))
            }
        }),
        _ => return None,
    };
    Some(r)
}

/// Every filter name [`filter`] handles (registered in the environment so
/// that `map('bool')` and friends find them).
pub(crate) const FILTERS: &[&str] = &[
    "bool",
    "default",
    "d",
    "ternary",
    "mandatory",
    "length",
    "count",
    "int",
    "float",
    "string",
    "lower",
    "upper",
    "capitalize",
    "trim",
    "list",
    "join",
    "first",
    "last",
    "reverse",
    "sort",
    "unique",
    "union",
    "intersect",
    "difference",
    "symmetric_difference",
    "min",
    "max",
    "flatten",
    "combine",
    "dict2items",
    "items2dict",
    "items",
    "regex_search",
    "regex_findall",
    "regex_replace",
    "regex_escape",
    "replace",
    "split",
    "to_json",
    "from_json",
    "basename",
    "dirname",
    "quote",
    "type_debug",
    "abs",
];

/// Every test name [`test`] handles.
pub(crate) const TESTS: &[&str] = &[
    "defined",
    "undefined",
    "none",
    "boolean",
    "true",
    "false",
    "integer",
    "float",
    "number",
    "string",
    "mapping",
    "sequence",
    "iterable",
    "truthy",
    "falsy",
    "match",
    "search",
    "regex",
    "in",
    "contains",
    "version",
    "version_compare",
    "failed",
    "failure",
    "succeeded",
    "success",
    "successful",
    "skipped",
    "skip",
    "unreachable",
    "reachable",
    "changed",
    "change",
    "sameas",
    "subset",
    "issubset",
    "superset",
    "issuperset",
    "abs",
    "is_abs",
    "divisibleby",
    "even",
    "odd",
    "lower",
    "upper",
    "eq",
    "equalto",
    "==",
    "ne",
    "!=",
    "lt",
    "lessthan",
    "<",
    "le",
    "<=",
    "gt",
    "greaterthan",
    ">",
    "ge",
    ">=",
    "any",
    "all",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansible_bool_filter() {
        for (v, want) in [
            (Value::from("Yes"), true),
            (Value::from("on"), true),
            (Value::from(" yes"), false),
            (Value::from("junk"), false),
            (Value::from(1), true),
            (Value::from(2), false),
            (Value::from(1.0), true),
            (Value::from(true), true),
            (Value::from(()), false),
        ] {
            assert_eq!(to_bool(&v), want, "{v:?}");
        }
    }

    #[test]
    fn python_split_and_int() {
        let parts = py_split("  a  b c ", None, -1).unwrap_or_default();
        assert_eq!(
            parts,
            vec![Value::from("a"), Value::from("b"), Value::from("c")]
        );
        let parts = py_split("a,,b", Some(","), 1).unwrap_or_default();
        assert_eq!(parts, vec![Value::from("a"), Value::from(",b")]);
        assert_eq!(
            jinja_int(&Value::from("1.5"), &Value::from(0), 10).ok(),
            Some(Value::from(1))
        );
        assert_eq!(
            jinja_int(&Value::from("abc"), &Value::from(0), 10).ok(),
            Some(Value::from(0))
        );
        assert_eq!(
            jinja_int(&Value::from(" 1_000 "), &Value::from(0), 10).ok(),
            Some(Value::from(1000))
        );
    }

    #[test]
    fn shell_quote_and_dirname() {
        assert_eq!(shlex_quote("abc"), "abc");
        assert_eq!(shlex_quote("a b"), "'a b'");
        assert_eq!(shlex_quote("it's"), "'it'\"'\"'s'");
        assert_eq!(dirname("/etc/sysctl.d/99.conf"), "/etc/sysctl.d");
        assert_eq!(dirname("/x"), "/");
        assert_eq!(dirname("x"), "");
    }

    #[test]
    fn replacement_templates() {
        assert_eq!(
            translate_replacement(r"\1-\g<name>$").ok().as_deref(),
            Some("${1}-${name}$$")
        );
    }

    #[test]
    fn unique_is_case_insensitive_like_jinja() {
        let items = vec![Value::from("a"), Value::from("A"), Value::from("b")];
        assert_eq!(
            unique(items, false),
            vec![Value::from("a"), Value::from("b")]
        );
    }
}
