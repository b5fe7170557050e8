//! Numbers and booleans as Ansible and Jinja2 convert them: `bool`,
//! `truthy(convert_bool=True)`, Python's `int()` and `float()` on strings,
//! and Jinja2's `int` and `float` filters.

use super::super::Fail;
use super::super::py::{self, Py};
use minijinja::value::Value;

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
        // Floats and others fall back to `value == 1`: Python's exact
        // comparison, which a margin would not be.
        #[allow(clippy::float_cmp)]
        Py::Float(f) => f == 1.0,
        _ => false,
    }
}

/// `module_utils.parsing.convert_bool.boolean(strict=True)`, used by
/// `truthy(convert_bool=True)`; `None` when it would raise.
pub(super) fn convert_bool(v: &Value) -> Option<bool> {
    match py::classify(v) {
        Py::Bool(b) => Some(b),
        Py::Str(s) => boolean_text(s),
        Py::Int(1) => Some(true),
        Py::Int(0) => Some(false),
        Py::Float(1.0) => Some(true),
        Py::Float(0.0) => Some(false),
        _ => None,
    }
}

/// `convert_bool.boolean` on text: how modules read a boolean argument,
/// and the `template` action its options.
#[must_use]
pub fn boolean_text(text: &str) -> Option<bool> {
    let t = text.trim();
    const TRUE: &[&str] = &["y", "yes", "on", "1", "true", "t"];
    const FALSE: &[&str] = &["n", "no", "off", "0", "false", "f"];
    if TRUE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(true)
    } else if FALSE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(false)
    } else {
        None
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
pub(super) fn jinja_int(v: &Value, default: &Value, base: u32) -> Result<Value, Fail> {
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
pub(super) fn jinja_float(v: &Value, default: &Value) -> Value {
    match py::classify(v) {
        Py::Bool(b) => Value::from(if b { 1.0 } else { 0.0 }),
        #[allow(clippy::cast_precision_loss)]
        Py::Int(i) => Value::from(i as f64),
        Py::Float(f) => Value::from(f),
        Py::Str(s) => parse_py_float(s).map_or_else(|| default.clone(), Value::from),
        _ => default.clone(),
    }
}
