//! Python value semantics over minijinja [`Value`]s.
//!
//! Ansible evaluates Jinja on Python objects, and minijinja's own operators
//! differ in places that change answers (`True == 1`, `'a' < 1` is an error,
//! `str(True)` is `True`, `-7 // 2` is `-4`). Everything here follows `CPython`;
//! nothing here knows about variables, filters or unknowns.

use super::{Fail, MAX_RENDERED_LEN};
use minijinja::value::{DynObject, Value, ValueKind};
use std::cmp::Ordering;
use std::fmt::Write as _;

/// A value classified by its Python type.
pub(crate) enum Py<'a> {
    Undefined,
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'a str),
    /// A list, or a tuple when the flag is set.
    Seq(Vec<Value>, bool),
    /// A dict, in insertion order.
    Map(Vec<(Value, Value)>),
    /// Anything else (bytes, callables, opaque objects).
    Other,
}

/// Classifies a value (sequences and maps are copied out shallowly).
pub(crate) fn classify(v: &Value) -> Py<'_> {
    match v.kind() {
        ValueKind::Undefined => Py::Undefined,
        ValueKind::None => Py::None,
        ValueKind::Bool => Py::Bool(v.is_true()),
        ValueKind::Number => {
            if v.is_integer() {
                i128::try_from(v.clone()).map_or(Py::Other, Py::Int)
            } else {
                f64::try_from(v.clone()).map_or(Py::Other, Py::Float)
            }
        }
        ValueKind::String => Py::Str(v.as_str().unwrap_or_default()),
        ValueKind::Seq | ValueKind::Iterable => Py::Seq(
            v.try_iter().map(Iterator::collect).unwrap_or_default(),
            v.is_tuple(),
        ),
        ValueKind::Map => Py::Map(map_pairs(v)),
        _ => Py::Other,
    }
}

/// The key/value pairs of a map value (empty for non-maps).
pub(crate) fn map_pairs(v: &Value) -> Vec<(Value, Value)> {
    v.as_object()
        .and_then(DynObject::try_iter_pairs)
        .map(Iterator::collect)
        .unwrap_or_default()
}

/// The items of a list or tuple, or `None` for anything else.
pub(crate) fn seq_items(v: &Value) -> Option<Vec<Value>> {
    match v.kind() {
        ValueKind::Seq | ValueKind::Iterable => v.try_iter().ok().map(Iterator::collect),
        _ => None,
    }
}

/// Python's `type(v).__name__`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match classify(v) {
        Py::Undefined => "AnsibleUndefined",
        Py::None => "NoneType",
        Py::Bool(_) => "bool",
        Py::Int(_) => "int",
        Py::Float(_) => "float",
        Py::Str(_) => "str",
        Py::Seq(_, true) => "tuple",
        Py::Seq(_, false) => "list",
        Py::Map(_) => "dict",
        Py::Other => "object",
    }
}

/// A number as Python sees it in arithmetic (`bool` is an `int`).
#[derive(Clone, Copy)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn to_f64(self) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

pub(crate) fn num(v: &Value) -> Option<Num> {
    match classify(v) {
        Py::Bool(b) => Some(Num::Int(i128::from(b))),
        Py::Int(i) => Some(Num::Int(i)),
        Py::Float(f) => Some(Num::Float(f)),
        _ => None,
    }
}

fn num_value(n: Num) -> Value {
    match n {
        Num::Int(i) => i64::try_from(i).map_or_else(|_| Value::from(i), Value::from),
        Num::Float(f) => Value::from(f),
    }
}

/// Python truthiness. Using an undefined value is an error in Ansible.
pub(crate) fn truthy(v: &Value) -> Result<bool, Fail> {
    Ok(match classify(v) {
        Py::Undefined => return Err(Fail::Undefined(String::new())),
        Py::None => false,
        Py::Bool(b) => b,
        Py::Int(i) => i != 0,
        Py::Float(f) => f != 0.0,
        Py::Str(s) => !s.is_empty(),
        Py::Seq(items, _) => !items.is_empty(),
        Py::Map(pairs) => !pairs.is_empty(),
        Py::Other => true,
    })
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form outside
/// `1e-4 <= |f| < 1e16`.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // `{:e}` gives the shortest round-trip digits, e.g. `1.5e-5`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa
        .strip_prefix('-')
        .map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else {
        let point = point.unsigned_abs() as usize;
        if digits.len() <= point {
            format!("{digits}{}.0", "0".repeat(point - digits.len()))
        } else {
            format!("{}.{}", &digits[..point], &digits[point..])
        }
    };
    format!("{sign}{body}")
}

/// Python's `str(v)`. `None` is `"None"` here; template output drops `None`
/// nodes before this is called.
pub(crate) fn py_str(v: &Value) -> String {
    match classify(v) {
        Py::Str(s) => s.to_string(),
        _ => py_repr(v),
    }
}

/// Python's `repr(v)`.
pub(crate) fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v, 0);
    out
}

fn write_repr(out: &mut String, v: &Value, depth: usize) {
    // Deeply nested input is cut rather than overflowing the stack.
    if depth > 64 || out.len() > MAX_RENDERED_LEN {
        out.push_str("...");
        return;
    }
    match classify(v) {
        Py::Undefined => {}
        Py::None => out.push_str("None"),
        Py::Bool(true) => out.push_str("True"),
        Py::Bool(false) => out.push_str("False"),
        Py::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Py::Float(f) => out.push_str(&float_repr(f)),
        Py::Str(s) => str_repr(out, s),
        Py::Seq(items, tuple) => {
            out.push(if tuple { '(' } else { '[' });
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item, depth + 1);
            }
            if tuple && items.len() == 1 {
                out.push(',');
            }
            out.push(if tuple { ')' } else { ']' });
        }
        Py::Map(pairs) => {
            out.push('{');
            for (i, (k, val)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, k, depth + 1);
                out.push_str(": ");
                write_repr(out, val, depth + 1);
            }
            out.push('}');
        }
        Py::Other => {
            let _ = write!(out, "{v}");
        }
    }
}

fn str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python `==`.
pub(crate) fn eq(a: &Value, b: &Value) -> bool {
    match (classify(a), classify(b)) {
        (Py::None, Py::None) | (Py::Undefined, Py::Undefined) => true,
        (Py::Str(x), Py::Str(y)) => x == y,
        (Py::Seq(x, tx), Py::Seq(y, ty)) => {
            tx == ty && x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| eq(p, q))
        }
        (Py::Map(x), Py::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| eq(k, k2) && eq(v, v2)))
        }
        _ => match (num(a), num(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => x == y,
            (Some(x), Some(y)) => x.to_f64() == y.to_f64(),
            _ => false,
        },
    }
}

fn type_error(op: &str, a: &Value, b: &Value) -> Fail {
    Fail::Invalid(format!(
        "'{op}' not supported between instances of '{}' and '{}'",
        type_name(a),
        type_name(b)
    ))
}

/// Python ordering for `<`, `<=`, `>`, `>=`. `Ok(None)` means unordered (NaN).
pub(crate) fn cmp(a: &Value, b: &Value, op: &str) -> Result<Option<Ordering>, Fail> {
    match (classify(a), classify(b)) {
        (Py::Str(x), Py::Str(y)) => Ok(Some(x.cmp(y))),
        (Py::Seq(x, tx), Py::Seq(y, ty)) if tx == ty => {
            for (p, q) in x.iter().zip(&y) {
                if !eq(p, q) {
                    return cmp(p, q, op);
                }
            }
            Ok(Some(x.len().cmp(&y.len())))
        }
        _ => match (num(a), num(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => Ok(Some(x.cmp(&y))),
            (Some(x), Some(y)) => Ok(x.to_f64().partial_cmp(&y.to_f64())),
            _ => Err(type_error(op, a, b)),
        },
    }
}

/// Python `item in container`.
pub(crate) fn contains(container: &Value, item: &Value) -> Result<bool, Fail> {
    match classify(container) {
        Py::Str(hay) => match classify(item) {
            Py::Str(needle) => Ok(hay.contains(needle)),
            _ => Err(Fail::Invalid(format!(
                "'in <string>' requires string as left operand, not {}",
                type_name(item)
            ))),
        },
        Py::Seq(items, _) => Ok(items.iter().any(|x| eq(x, item))),
        Py::Map(pairs) => match classify(item) {
            Py::Seq(_, false) | Py::Map(_) => Err(Fail::Invalid(format!(
                "unhashable type: '{}'",
                type_name(item)
            ))),
            _ => Ok(pairs.iter().any(|(k, _)| eq(k, item))),
        },
        _ => Err(Fail::Invalid(format!(
            "argument of type '{}' is not iterable",
            type_name(container)
        ))),
    }
}

/// The arithmetic operators of Jinja expressions.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Rem,
    Pow,
}

impl Arith {
    fn symbol(self) -> &'static str {
        match self {
            Arith::Add => "+",
            Arith::Sub => "-",
            Arith::Mul => "*",
            Arith::Div => "/",
            Arith::FloorDiv => "//",
            Arith::Rem => "%",
            Arith::Pow => "**",
        }
    }
}

fn too_large() -> Fail {
    Fail::TooComplex("value exceeds the size bound".into())
}

fn int_overflow() -> Fail {
    Fail::TooComplex("integer exceeds 128 bits".into())
}

/// Python arithmetic. Strings and lists are only built when they fit
/// [`MAX_RENDERED_LEN`], so `'x' * 10**9` fails before allocating.
pub(crate) fn arith(op: Arith, a: &Value, b: &Value) -> Result<Value, Fail> {
    let unsupported = || {
        Fail::Invalid(format!(
            "unsupported operand type(s) for {}: '{}' and '{}'",
            op.symbol(),
            type_name(a),
            type_name(b)
        ))
    };
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return num_arith(op, x, y).map(num_value);
    }
    match (op, classify(a), classify(b)) {
        (Arith::Add, Py::Str(x), Py::Str(y)) => {
            if x.len() + y.len() > MAX_RENDERED_LEN {
                return Err(too_large());
            }
            Ok(Value::from(format!("{x}{y}")))
        }
        (Arith::Add, Py::Seq(mut x, tx), Py::Seq(y, ty)) if tx == ty => {
            if x.len() + y.len() > MAX_RENDERED_LEN {
                return Err(too_large());
            }
            x.extend(y);
            Ok(make_seq(x, tx))
        }
        (Arith::Mul, Py::Str(s), _) => repeat_str(s, num(b).ok_or_else(unsupported)?),
        (Arith::Mul, _, Py::Str(s)) => repeat_str(s, num(a).ok_or_else(unsupported)?),
        (Arith::Mul, Py::Seq(items, t), _) => {
            repeat_seq(&items, t, num(b).ok_or_else(unsupported)?)
        }
        (Arith::Mul, _, Py::Seq(items, t)) => {
            repeat_seq(&items, t, num(a).ok_or_else(unsupported)?)
        }
        (Arith::Rem, Py::Str(_), _) => {
            Err(Fail::TooComplex("printf-style string formatting".into()))
        }
        _ => Err(unsupported()),
    }
}

pub(crate) fn make_seq(items: Vec<Value>, tuple: bool) -> Value {
    if tuple {
        Value::from(minijinja::value::Tuple::from(items))
    } else {
        Value::from(items)
    }
}

fn repeat_count(n: Num) -> Result<usize, Fail> {
    match n {
        Num::Int(i) => Ok(usize::try_from(i.max(0)).unwrap_or(usize::MAX)),
        Num::Float(_) => Err(Fail::Invalid(
            "can't multiply sequence by non-int of type 'float'".into(),
        )),
    }
}

fn repeat_str(s: &str, n: Num) -> Result<Value, Fail> {
    let n = repeat_count(n)?;
    if s.len().saturating_mul(n) > MAX_RENDERED_LEN {
        return Err(too_large());
    }
    Ok(Value::from(s.repeat(n)))
}

fn repeat_seq(items: &[Value], tuple: bool, n: Num) -> Result<Value, Fail> {
    let n = repeat_count(n)?;
    if items.len().saturating_mul(n) > MAX_RENDERED_LEN {
        return Err(too_large());
    }
    let mut out = Vec::with_capacity(items.len() * n);
    for _ in 0..n {
        out.extend(items.iter().cloned());
    }
    Ok(make_seq(out, tuple))
}

fn zero_division() -> Fail {
    Fail::Invalid("division by zero".into())
}

fn num_arith(op: Arith, x: Num, y: Num) -> Result<Num, Fail> {
    use Num::{Float, Int};
    Ok(match (op, x, y) {
        (Arith::Add, Int(a), Int(b)) => Int(a.checked_add(b).ok_or_else(int_overflow)?),
        (Arith::Sub, Int(a), Int(b)) => Int(a.checked_sub(b).ok_or_else(int_overflow)?),
        (Arith::Mul, Int(a), Int(b)) => Int(a.checked_mul(b).ok_or_else(int_overflow)?),
        (Arith::Add, a, b) => Float(a.to_f64() + b.to_f64()),
        (Arith::Sub, a, b) => Float(a.to_f64() - b.to_f64()),
        (Arith::Mul, a, b) => Float(a.to_f64() * b.to_f64()),
        (Arith::Div, a, b) => {
            if b.to_f64() == 0.0 {
                return Err(zero_division());
            }
            Float(a.to_f64() / b.to_f64())
        }
        (Arith::FloorDiv, Int(a), Int(b)) => {
            if b == 0 {
                return Err(zero_division());
            }
            let q = a.checked_div(b).ok_or_else(int_overflow)?;
            Int(if a % b != 0 && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            })
        }
        (Arith::FloorDiv, a, b) => {
            if b.to_f64() == 0.0 {
                return Err(zero_division());
            }
            Float((a.to_f64() / b.to_f64()).floor())
        }
        (Arith::Rem, Int(a), Int(b)) => {
            if b == 0 {
                return Err(zero_division());
            }
            let r = a.checked_rem(b).ok_or_else(int_overflow)?;
            Int(if r != 0 && ((r < 0) != (b < 0)) {
                r + b
            } else {
                r
            })
        }
        (Arith::Rem, a, b) => {
            let (a, b) = (a.to_f64(), b.to_f64());
            if b == 0.0 {
                return Err(zero_division());
            }
            let r = a % b;
            Float(if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
                r + b
            } else {
                r
            })
        }
        (Arith::Pow, Int(a), Int(b)) => {
            if b >= 0 {
                let e = u32::try_from(b).map_err(|_| int_overflow())?;
                Int(a.checked_pow(e).ok_or_else(int_overflow)?)
            } else if a == 0 {
                return Err(Fail::Invalid(
                    "0.0 cannot be raised to a negative power".into(),
                ));
            } else {
                Float(Int(a).to_f64().powf(Int(b).to_f64()))
            }
        }
        (Arith::Pow, a, b) => {
            let r = a.to_f64().powf(b.to_f64());
            if r.is_nan() {
                return Err(Fail::TooComplex("complex result".into()));
            }
            Float(r)
        }
    })
}

/// Unary minus.
pub(crate) fn neg(v: &Value) -> Result<Value, Fail> {
    match num(v) {
        Some(Num::Int(i)) => Ok(num_value(Num::Int(
            i.checked_neg().ok_or_else(int_overflow)?,
        ))),
        Some(Num::Float(f)) => Ok(Value::from(-f)),
        None => Err(Fail::Invalid(format!(
            "bad operand type for unary -: '{}'",
            type_name(v)
        ))),
    }
}

/// An estimate of the memory a value holds, in bytes, stopping at `limit`.
pub(crate) fn size_of(v: &Value, limit: usize) -> usize {
    fn walk(v: &Value, acc: &mut usize, limit: usize, depth: usize) {
        if *acc > limit || depth > 64 {
            *acc = acc.saturating_add(limit);
            return;
        }
        match v.kind() {
            ValueKind::String => *acc += v.as_str().map_or(0, str::len),
            ValueKind::Seq | ValueKind::Iterable => {
                if let Ok(iter) = v.try_iter() {
                    for item in iter {
                        *acc += 8;
                        walk(&item, acc, limit, depth + 1);
                        if *acc > limit {
                            return;
                        }
                    }
                }
            }
            ValueKind::Map => {
                for (k, item) in map_pairs(v) {
                    *acc += 16;
                    walk(&k, acc, limit, depth + 1);
                    walk(&item, acc, limit, depth + 1);
                    if *acc > limit {
                        return;
                    }
                }
            }
            _ => *acc += 8,
        }
    }
    let mut acc = 0;
    walk(v, &mut acc, limit, 0);
    acc
}

/// Converts JSON (what [`super::VarSource`] gives) into a Jinja value.
pub(crate) fn from_json(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Value::from)
            .or_else(|| n.as_u64().map(Value::from))
            .or_else(|| n.as_f64().map(Value::from))
            .unwrap_or_else(|| Value::from(())),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            Value::from(items.iter().map(from_json).collect::<Vec<_>>())
        }
        serde_json::Value::Object(map) => Value::from_pairs(
            map.iter()
                .map(|(k, v)| (Value::from(k.as_str()), from_json(v))),
        ),
    }
}

/// Converts a Jinja value back to JSON. Non-string keys become strings, as
/// Ansible's JSON output does; undefined becomes null.
pub(crate) fn to_json(v: &Value) -> serde_json::Value {
    match classify(v) {
        Py::Undefined | Py::None | Py::Other => serde_json::Value::Null,
        Py::Bool(b) => serde_json::Value::Bool(b),
        Py::Int(i) => i64::try_from(i)
            .map(serde_json::Value::from)
            .or_else(|_| u64::try_from(i).map(serde_json::Value::from))
            .unwrap_or_else(|_| serde_json::Value::String(i.to_string())),
        Py::Float(f) => serde_json::Number::from_f64(f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Py::Str(s) => serde_json::Value::String(s.to_string()),
        Py::Seq(items, _) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Py::Map(pairs) => serde_json::Value::Object(
            pairs
                .iter()
                .map(|(k, val)| (py_str(k), to_json(val)))
                .collect(),
        ),
    }
}

/// Python's `json.dumps(v)` with default settings (`ensure_ascii`, `", "`
/// and `": "` separators), as Ansible's `to_json` produces.
pub(crate) fn json_dumps(v: &Value) -> Result<String, Fail> {
    fn walk(out: &mut String, v: &Value, depth: usize) -> Result<(), Fail> {
        if depth > 64 || out.len() > MAX_RENDERED_LEN {
            return Err(too_large());
        }
        match classify(v) {
            Py::Undefined => return Err(Fail::Undefined(String::new())),
            Py::None => out.push_str("null"),
            Py::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Py::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Py::Float(f) if f.is_nan() => out.push_str("NaN"),
            Py::Float(f) if f.is_infinite() => {
                out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
            }
            Py::Float(f) => out.push_str(&float_repr(f)),
            Py::Str(s) => json_str(out, s),
            Py::Seq(items, _) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    walk(out, item, depth + 1)?;
                }
                out.push(']');
            }
            Py::Map(pairs) => {
                out.push('{');
                for (i, (k, item)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let key = match classify(k) {
                        Py::Str(s) => s.to_string(),
                        Py::None => "null".into(),
                        Py::Bool(b) => (if b { "true" } else { "false" }).into(),
                        Py::Int(_) | Py::Float(_) => py_str(k),
                        _ => {
                            return Err(Fail::Invalid(
                                "keys must be str, int, float, bool or None".into(),
                            ));
                        }
                    };
                    json_str(out, &key);
                    out.push_str(": ");
                    walk(out, item, depth + 1)?;
                }
                out.push('}');
            }
            Py::Other => return Err(Fail::TooComplex("object is not JSON serializable".into())),
        }
        Ok(())
    }
    let mut out = String::new();
    walk(&mut out, v, 0)?;
    Ok(out)
}

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
            (123_456.789, "123456.789"),
            (1.234e100, "1.234e+100"),
        ] {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn repr_and_str_follow_python() {
        let v = from_json(&serde_json::json!({"a": [1, true, null, "it's"]}));
        assert_eq!(py_str(&v), r#"{'a': [1, True, None, "it's"]}"#);
        assert_eq!(py_str(&Value::from("x")), "x");
    }

    #[test]
    fn python_equality_and_order() {
        assert!(eq(&Value::from(true), &Value::from(1)));
        assert!(eq(&Value::from(1), &Value::from(1.0)));
        assert!(!eq(&Value::from("1"), &Value::from(1)));
        assert!(cmp(&Value::from("a"), &Value::from(1), "<").is_err());
        assert_eq!(
            cmp(&Value::from(vec![1, 2]), &Value::from(vec![1, 3]), "<").ok(),
            Some(Some(Ordering::Less))
        );
    }

    #[test]
    fn python_floor_division_and_modulo() {
        let r = arith(Arith::FloorDiv, &Value::from(-7), &Value::from(2)).ok();
        assert_eq!(r, Some(Value::from(-4)));
        let r = arith(Arith::Rem, &Value::from(-7), &Value::from(3)).ok();
        assert_eq!(r, Some(Value::from(2)));
        let r = arith(Arith::Div, &Value::from(4), &Value::from(2)).ok();
        assert_eq!(r, Some(Value::from(2.0)));
    }

    #[test]
    fn huge_repetition_fails_before_allocating() {
        let r = arith(Arith::Mul, &Value::from("x"), &Value::from(1_000_000_000));
        assert!(matches!(r, Err(Fail::TooComplex(_))));
    }

    #[test]
    fn json_dumps_like_python() {
        let v = from_json(&serde_json::json!({"a": [1, true, null, "é"]}));
        assert_eq!(
            json_dumps(&v).ok().as_deref(),
            Some(r#"{"a": [1, true, null, "\u00e9"]}"#)
        );
    }
}
