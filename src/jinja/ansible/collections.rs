//! Filters on lists, sets and dicts: `unique`, `combine` (`merge_hash`),
//! `flatten`, `min`/`max`, `sort`, the set operations of `mathstuff.py`,
//! `dict2items` and `items2dict`.

use super::super::Fail;
use super::super::py::{self, Py};
use super::{Args, guard_len, hashable, iterate};
use minijinja::value::Value;

/// Jinja2's `unique` (case-insensitive by default) with Ansible's fallback to
/// an order-preserving, case-sensitive version when items are unhashable.
pub(super) fn unique(items: Vec<Value>, case_sensitive: bool) -> Vec<Value> {
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
pub(super) fn merge_hash(
    x: &Value,
    y: &Value,
    recursive: bool,
    list_merge: &str,
) -> Result<Value, Fail> {
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
pub(super) fn flatten(
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
pub(super) fn min_max(v: &Value, args: &Args, want_max: bool) -> Result<Value, Fail> {
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
/// Sorts `(key, item)` pairs by key as Python's `sorted(key=...)` does
/// (stable; `reverse` flips the result), failing as Python does on keys of
/// types it cannot compare.
pub(super) fn sort_keyed<T>(keyed: &mut [(Value, T)], reverse: bool) -> Result<(), Fail> {
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
    Ok(())
}

pub(super) fn sort(v: &Value, args: &Args) -> Result<Value, Fail> {
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
    sort_keyed(&mut keyed, reverse)?;
    Ok(Value::from(
        keyed.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    ))
}

/// Set operations from `mathstuff.py`. Ansible goes through Python `set`s
/// (whose order is arbitrary) when items are hashable; we keep first-seen
/// order, which agrees on membership and length.
pub(super) fn set_op(name: &str, a: &Value, b: &Value) -> Result<Value, Fail> {
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

pub(super) fn dict2items(v: &Value, args: &Args) -> Result<Value, Fail> {
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

pub(super) fn items2dict(v: &Value, args: &Args) -> Result<Value, Fail> {
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
