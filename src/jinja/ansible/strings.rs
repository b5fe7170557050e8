//! String filters and tests with Python's semantics: `split`, `trim`,
//! `quote` (`shlex.quote`), `dirname`, `replace`, `join`, `lower`/`upper`.

use super::super::Fail;
use super::super::py::{self};
use super::{Args, guard_len, iterate};
use minijinja::value::Value;

/// Python `str.split(sep, maxsplit)`.
pub(super) fn py_split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>, Fail> {
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
pub(super) fn py_strip<'a>(s: &'a str, chars: Option<&str>) -> &'a str {
    match chars {
        None => s.trim(),
        Some(cs) => s.trim_matches(|c| cs.contains(c)),
    }
}

/// Python's `shlex.quote`.
pub(super) fn shlex_quote(s: &str) -> String {
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
pub(super) fn dirname(p: &str) -> String {
    let i = p.rfind('/').map_or(0, |i| i + 1);
    let head = &p[..i];
    if !head.is_empty() && !head.bytes().all(|b| b == b'/') {
        head.trim_end_matches('/').to_string()
    } else {
        head.to_string()
    }
}

pub(super) fn replace(v: &Value, args: &Args) -> Result<Value, Fail> {
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

pub(super) fn join(v: &Value, args: &Args) -> Result<Value, Fail> {
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

pub(super) fn is_lower(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_uppercase() {
            return false;
        }
        cased |= c.is_lowercase();
    }
    cased
}

pub(super) fn is_upper(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_lowercase() {
            return false;
        }
        cased |= c.is_uppercase();
    }
    cased
}
