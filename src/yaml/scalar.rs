//! Scalars as PyYAML's YAML 1.1 resolver reads them: a plain scalar's type
//! (null, bool, int in every base, float, sexagesimal), the core tags, and
//! the tags that change how Ansible treats a value.

use super::{Node, Tag, Value};
use crate::source::Span;
use saphyr_parser::ScalarStyle;

pub(super) fn local_tag(tag: Option<&saphyr_parser::Tag>) -> Tag {
    match tag {
        None => Tag::None,
        Some(t) if t.handle == "!" && t.suffix == "unsafe" => Tag::Unsafe,
        Some(t) if t.handle == "!" && t.suffix == "vault" => Tag::Vault,
        Some(_) => Tag::Other,
    }
}

pub(super) fn scalar(
    text: &str,
    style: ScalarStyle,
    tag: Option<&saphyr_parser::Tag>,
    span: Span,
) -> Node {
    let quoted = !matches!(style, ScalarStyle::Plain);
    let tag_kind = local_tag(tag);
    let core = tag.and_then(|t| {
        if t.handle == "tag:yaml.org,2002:" || t.handle == "!!" {
            Some(t.suffix.as_str())
        } else {
            None
        }
    });
    let value = match (&tag_kind, core) {
        (Tag::Unsafe | Tag::Vault, _) | (_, Some("str" | "binary")) => Value::Str(text.to_string()),
        (_, Some(core)) => resolve_core(core, text),
        (Tag::Other, None) => Value::Str(text.to_string()),
        (Tag::None, None) if quoted => Value::Str(text.to_string()),
        (Tag::None, None) => resolve_plain(text),
    };
    let tag = if core.is_some() { Tag::None } else { tag_kind };
    Node {
        value,
        span,
        tag,
        quoted,
    }
}

fn resolve_core(core: &str, text: &str) -> Value {
    match core {
        "null" => Value::Null,
        "bool" => resolve_bool(text).map_or_else(|| Value::Str(text.to_string()), Value::Bool),
        "int" => resolve_int(text).map_or_else(|| Value::Str(text.to_string()), Value::Int),
        "float" => resolve_float(text)
            .or_else(|| resolve_int(text).map(|i| i as f64))
            .map_or_else(|| Value::Str(text.to_string()), Value::Float),
        _ => resolve_plain(text),
    }
}

/// PyYAML's YAML 1.1 implicit resolver for plain scalars.
#[must_use]
pub fn resolve_plain(text: &str) -> Value {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    if let Some(b) = resolve_bool(text) {
        return Value::Bool(b);
    }
    // Every int and float form starts with a digit or `.` after its sign:
    // most scalars (names, paths, templates) are strings at the first byte.
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Value::Str(text.to_string());
    }
    if let Some(i) = resolve_int(text) {
        return Value::Int(i);
    }
    if let Some(f) = resolve_float(text) {
        return Value::Float(f);
    }
    Value::Str(text.to_string())
}

fn resolve_bool(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn split_sign(text: &str) -> (i64, &str) {
    if let Some(r) = text.strip_prefix('-') {
        (-1, r)
    } else if let Some(r) = text.strip_prefix('+') {
        (1, r)
    } else {
        (1, text)
    }
}

/// YAML 1.1 ints: binary, octal (`0644`), decimal, hex, sexagesimal; `_` allowed.
pub(super) fn resolve_int(text: &str) -> Option<i64> {
    let (sign, body) = split_sign(text);
    if body.is_empty() {
        return None;
    }
    let digits = |s: &str, radix: u32| -> Option<i64> {
        let cleaned: String = s.chars().filter(|&c| c != '_').collect();
        if cleaned.is_empty() {
            return None;
        }
        i64::from_str_radix(&cleaned, radix).ok()
    };
    let v = if let Some(b) = body.strip_prefix("0b") {
        if !b.chars().all(|c| matches!(c, '0' | '1' | '_')) {
            return None;
        }
        digits(b, 2)?
    } else if let Some(h) = body.strip_prefix("0x") {
        if !h.chars().all(|c| c.is_ascii_hexdigit() || c == '_') {
            return None;
        }
        digits(h, 16)?
    } else if body == "0" {
        0
    } else if body.starts_with('0') {
        if !body.chars().all(|c| matches!(c, '0'..='7' | '_')) {
            return None;
        }
        digits(body, 8)?
    } else if body.contains(':') {
        let mut parts = body.split(':');
        let first = parts.next()?;
        if first.is_empty()
            || !first.starts_with(|c: char| matches!(c, '1'..='9'))
            || !first.chars().all(|c| c.is_ascii_digit() || c == '_')
        {
            return None;
        }
        let mut acc = digits(first, 10)?;
        for p in parts {
            if p.is_empty() || p.len() > 2 || !p.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let n: i64 = p.parse().ok()?;
            if n > 59 || (p.len() == 2 && p.as_bytes()[0] > b'5') {
                return None;
            }
            acc = acc.checked_mul(60)?.checked_add(n)?;
        }
        acc
    } else {
        if !body.starts_with(|c: char| matches!(c, '1'..='9'))
            || !body.chars().all(|c| c.is_ascii_digit() || c == '_')
        {
            return None;
        }
        digits(body, 10)?
    };
    v.checked_mul(sign)
}

/// YAML 1.1 floats as PyYAML resolves them (a `.` is required unless inf/nan).
pub(super) fn resolve_float(text: &str) -> Option<f64> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    let (sign, body) = split_sign(text);
    let sign = sign as f64;
    if body.contains(':') {
        // sexagesimal float: [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
        let (int_part, frac) = body.split_once('.')?;
        if !frac.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return None;
        }
        let mut parts = int_part.split(':');
        let first = parts.next()?;
        if first.is_empty() || !first.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let mut acc: f64 = first.replace('_', "").parse().ok()?;
        for p in parts {
            if p.is_empty() || p.len() > 2 || !p.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let n: f64 = p.parse().ok()?;
            if n > 59.0 {
                return None;
            }
            acc = acc * 60.0 + n;
        }
        let f: f64 = format!("0.{}", frac.replace('_', ""))
            .parse()
            .unwrap_or(0.0);
        return Some(sign * (acc + f));
    }
    // [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?  |  \.[0-9_]+([eE][-+][0-9]+)?
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (ip, fp) = mantissa.split_once('.')?;
    if ip.is_empty() {
        if fp.is_empty() || !fp.starts_with(|c: char| c.is_ascii_digit() || c == '_') {
            return None;
        }
    } else if !ip.starts_with(|c: char| c.is_ascii_digit())
        || !ip.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    if !fp.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    if let Some(e) = exp {
        let digits = e.strip_prefix(['-', '+'])?;
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
    }
    let cleaned: String = format!("{ip}.{fp}").replace('_', "");
    let cleaned = if cleaned.ends_with('.') {
        format!("{cleaned}0")
    } else {
        cleaned
    };
    let cleaned = if cleaned.starts_with('.') {
        format!("0{cleaned}")
    } else {
        cleaned
    };
    let full = match exp {
        Some(e) => format!("{cleaned}e{e}"),
        None => cleaned,
    };
    full.parse::<f64>().ok().map(|f| sign * f)
}
