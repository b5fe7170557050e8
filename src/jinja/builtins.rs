//! Python and Jinja2 built-ins a template calls on values: slicing,
//! `range()`, and the `str`, `dict` and `list` methods templates commonly
//! use, with Python's answers and errors. Knows nothing of unknowns: the
//! evaluator calls these with known values only.

use super::ENV;
use super::Fail;
use super::ansible::{self, Args};
use super::py::{self, Py};
use minijinja::value::Value;

/// Python slicing.
pub(super) fn py_slice(
    items: &[Value],
    start: Option<i128>,
    stop: Option<i128>,
    step: i128,
) -> Vec<Value> {
    let len = i128::try_from(items.len()).unwrap_or(i128::MAX);
    let norm = |i: i128, lo: i128, hi: i128| -> i128 {
        let i = if i < 0 { i + len } else { i };
        i.clamp(lo, hi)
    };
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, end) = (
            start.map_or(0, |s| norm(s, 0, len)),
            stop.map_or(len, |s| norm(s, 0, len)),
        );
        while i < end {
            out.push(items[usize::try_from(i).unwrap_or(0)].clone());
            i += step;
        }
    } else {
        let (mut i, end) = (
            start.map_or(len - 1, |s| norm(s, -1, len - 1)),
            stop.map_or(-1, |s| norm(s, -1, len - 1)),
        );
        while i > end {
            out.push(items[usize::try_from(i).unwrap_or(0)].clone());
            i += step;
        }
    }
    out
}

/// Jinja2's `range(start, stop, step)` (bounded, materialized).
pub(super) fn range(args: &Args) -> Result<Value, Fail> {
    let ints: Vec<i128> = args
        .pos
        .iter()
        .map(|v| match py::classify(v) {
            Py::Int(i) => Ok(i),
            Py::Bool(b) => Ok(i128::from(b)),
            _ => Err(Fail::Invalid("range() integer argument expected".into())),
        })
        .collect::<Result<_, _>>()?;
    let (start, stop, step) = match ints.as_slice() {
        [stop] => (0, *stop, 1),
        [start, stop] => (*start, *stop, 1),
        [start, stop, step] => (*start, *stop, *step),
        _ => return Err(Fail::Invalid("range expected 1 to 3 arguments".into())),
    };
    if step == 0 {
        return Err(Fail::Invalid("range() arg 3 must not be zero".into()));
    }
    let count = if (step > 0 && start < stop) || (step < 0 && start > stop) {
        ((stop - start).abs() + step.abs() - 1) / step.abs()
    } else {
        0
    };
    if count > 100_000 {
        return Err(Fail::TooComplex("range too large".into()));
    }
    let mut out = Vec::new();
    let mut i = start;
    for _ in 0..count {
        out.push(Value::from(i));
        i += step;
    }
    Ok(Value::from(out))
}

pub(super) fn str_arg(args: &Args, i: usize) -> Result<Option<&str>, Fail> {
    match args.pos.get(i) {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| Fail::Invalid(format!("must be str, not {}", py::type_name(v)))),
    }
}

/// Python methods on `str`, `dict` and `list` that templates commonly call.
pub(super) fn method(v: &Value, name: &str, args: &Args) -> Result<Value, Fail> {
    if !args.kw.is_empty() {
        return Err(Fail::TooComplex(format!(
            "method {name} with keyword arguments"
        )));
    }
    let no_such = || {
        Fail::Invalid(format!(
            "'{}' object has no attribute '{name}'",
            py::type_name(v)
        ))
    };
    match py::classify(v) {
        Py::Str(s) => {
            let affix = |i: usize| -> Result<Vec<String>, Fail> {
                let a = args
                    .pos
                    .get(i)
                    .ok_or_else(|| Fail::Invalid(format!("{name}() takes at least 1 argument")))?;
                match py::classify(a) {
                    Py::Str(x) => Ok(vec![x.to_string()]),
                    Py::Seq(items, true) => items
                        .iter()
                        .map(|i| {
                            i.as_str().map(str::to_string).ok_or_else(|| {
                                Fail::Invalid("tuple for startswith must only contain str".into())
                            })
                        })
                        .collect(),
                    _ => Err(Fail::Invalid(format!(
                        "{name} first arg must be str or a tuple of str"
                    ))),
                }
            };
            match name {
                "startswith" => Ok(Value::from(
                    affix(0)?.iter().any(|p| s.starts_with(p.as_str())),
                )),
                "endswith" => Ok(Value::from(
                    affix(0)?.iter().any(|p| s.ends_with(p.as_str())),
                )),
                "lower" => Ok(Value::from(s.to_lowercase())),
                "upper" => Ok(Value::from(s.to_uppercase())),
                "strip" | "lstrip" | "rstrip" => {
                    let chars = str_arg(args, 0)?;
                    let pred = |c: char| chars.map_or(c.is_whitespace(), |cs| cs.contains(c));
                    Ok(Value::from(match name {
                        "strip" => s.trim_matches(pred),
                        "lstrip" => s.trim_start_matches(pred),
                        _ => s.trim_end_matches(pred),
                    }))
                }
                "split" => {
                    let sep = str_arg(args, 0)?;
                    let mut a = Args::default();
                    if let Some(sep) = sep {
                        a.pos.push(Value::from(sep));
                    } else {
                        a.pos.push(Value::from(()));
                    }
                    if let Some(m) = args.pos.get(1) {
                        a.pos.push(m.clone());
                    }
                    let mut scratch = ENV.empty_state();
                    ansible::filter(&mut scratch, "split", v, &a).unwrap_or_else(|| Err(no_such()))
                }
                "replace" => {
                    let mut scratch = ENV.empty_state();
                    ansible::filter(&mut scratch, "replace", v, args)
                        .unwrap_or_else(|| Err(no_such()))
                }
                "find" => {
                    let sub = str_arg(args, 0)?.unwrap_or_default();
                    Ok(Value::from(s.find(sub).map_or(-1, |b| {
                        i64::try_from(s[..b].chars().count()).unwrap_or(-1)
                    })))
                }
                "count" => {
                    let sub = str_arg(args, 0)?.unwrap_or_default();
                    Ok(Value::from(if sub.is_empty() {
                        s.chars().count() + 1
                    } else {
                        s.matches(sub).count()
                    }))
                }
                "removeprefix" => {
                    let p = str_arg(args, 0)?.unwrap_or_default();
                    Ok(Value::from(s.strip_prefix(p).unwrap_or(s)))
                }
                "removesuffix" => {
                    let p = str_arg(args, 0)?.unwrap_or_default();
                    Ok(Value::from(s.strip_suffix(p).unwrap_or(s)))
                }
                "isdigit" => Ok(Value::from(
                    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()),
                )),
                "isalpha" => Ok(Value::from(
                    !s.is_empty() && s.chars().all(char::is_alphabetic),
                )),
                "isalnum" => Ok(Value::from(
                    !s.is_empty() && s.chars().all(char::is_alphanumeric),
                )),
                "islower" | "isupper" => Ok(Value::from(
                    ansible::test(&name[2..], v, &Args::default())
                        .is_some_and(|r| r.unwrap_or(false)),
                )),
                "join" => {
                    let items = args
                        .pos
                        .first()
                        .and_then(py::seq_items)
                        .ok_or_else(|| Fail::Invalid("can only join an iterable".into()))?;
                    let parts: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                    let parts = parts.ok_or_else(|| {
                        Fail::Invalid("sequence item: expected str instance".into())
                    })?;
                    Ok(Value::from(parts.join(s)))
                }
                _ => Err(Fail::TooComplex(format!("str.{name}"))),
            }
        }
        Py::Map(pairs) => match name {
            "keys" => Ok(Value::from(
                pairs.into_iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )),
            "values" => Ok(Value::from(
                pairs.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
            )),
            "items" => Ok(Value::from(
                pairs
                    .into_iter()
                    .map(|(k, v)| py::make_seq(vec![k, v], true))
                    .collect::<Vec<_>>(),
            )),
            "get" => {
                let key = args
                    .pos
                    .first()
                    .ok_or_else(|| Fail::Invalid("get expected at least 1 argument".into()))?;
                Ok(pairs.into_iter().find(|(k, _)| py::eq(k, key)).map_or_else(
                    || args.pos.get(1).cloned().unwrap_or_else(|| Value::from(())),
                    |(_, v)| v,
                ))
            }
            "copy" => Ok(v.clone()),
            _ => Err(Fail::TooComplex(format!("dict.{name}"))),
        },
        Py::Seq(items, _) => match name {
            "index" => {
                let x = args.pos.first().ok_or_else(no_such)?;
                items
                    .iter()
                    .position(|i| py::eq(i, x))
                    .map(Value::from)
                    .ok_or_else(|| Fail::Invalid("value is not in list".into()))
            }
            "count" => {
                let x = args.pos.first().ok_or_else(no_such)?;
                Ok(Value::from(items.iter().filter(|i| py::eq(i, x)).count()))
            }
            "copy" => Ok(v.clone()),
            _ => Err(Fail::TooComplex(format!("list.{name}"))),
        },
        _ => Err(no_such()),
    }
}
