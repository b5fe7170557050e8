//! The filters that build loop item lists: `product`, `zip`,
//! `zip_longest` (`itertools` as `mathstuff.py` exposes them),
//! `subelements` (`core.py`), Jinja2's `dictsort`, and `from_yaml` for the
//! JSON texts YAML reads alike. Every list they build is bounded by the
//! size bound of an evaluation.

use super::super::py::{self, Py};
use super::super::{Fail, MAX_LOOKUP_ITEMS};
use super::{Args, iterate};
use minijinja::value::Value;

/// The filters of this file by name (see [`filter`]).
#[cfg(test)]
pub(crate) const LIST_FILTERS: &[&str] = &[
    "product",
    "zip",
    "zip_longest",
    "subelements",
    "dictsort",
    "from_yaml",
];

/// Applies one of [`LIST_FILTERS`]; `None` for another name.
pub(super) fn filter(name: &str, v: &Value, args: &Args) -> Option<Result<Value, Fail>> {
    Some(match name {
        "product" => product(v, args),
        "zip" => zip(v, args, None),
        "zip_longest" => zip(v, args, Some(())),
        "subelements" => subelements(v, args),
        "dictsort" => dictsort(v, args),
        "from_yaml" => from_yaml(v),
        _ => return None,
    })
}

fn too_many() -> Fail {
    Fail::TooComplex(format!("more than {MAX_LOOKUP_ITEMS} items"))
}

/// `itertools.product(a, *args, repeat=1)`: tuples, as lists.
fn product(v: &Value, args: &Args) -> Result<Value, Fail> {
    let mut lists = vec![iterate(v)?];
    for a in &args.pos {
        lists.push(iterate(a)?);
    }
    let repeat = match args.kw.iter().find(|(k, _)| k == "repeat") {
        None => 1,
        Some((_, r)) => match py::classify(r) {
            Py::Int(i) if i >= 0 => usize::try_from(i).map_err(|_| too_many())?,
            _ => {
                return Err(Fail::Invalid(
                    "repeat argument must be a non-negative integer".into(),
                ));
            }
        },
    };
    if let Some((k, _)) = args.kw.iter().find(|(k, _)| k != "repeat") {
        return Err(Fail::Invalid(format!(
            "'{k}' is an invalid keyword argument for product()"
        )));
    }
    let pools: Vec<&Vec<Value>> = (0..repeat).flat_map(|_| lists.iter()).collect();
    let size = pools.iter().try_fold(1usize, |n, p| n.checked_mul(p.len()));
    if size.is_none_or(|s| s > MAX_LOOKUP_ITEMS) {
        return Err(too_many());
    }
    let mut rows: Vec<Vec<Value>> = vec![Vec::new()];
    for pool in pools {
        let mut next = Vec::with_capacity(rows.len() * pool.len());
        for r in &rows {
            for x in pool {
                let mut r = r.clone();
                r.push(x.clone());
                next.push(r);
            }
        }
        rows = next;
    }
    Ok(Value::from(
        rows.into_iter()
            .map(|r| py::make_seq(r, true))
            .collect::<Vec<_>>(),
    ))
}

/// `zip(a, *args)`, or `zip_longest(a, *args, fillvalue=None)`.
fn zip(v: &Value, args: &Args, longest: Option<()>) -> Result<Value, Fail> {
    let mut fill = Value::from(());
    for (k, val) in &args.kw {
        if longest.is_some() && k == "fillvalue" {
            fill = val.clone();
        } else {
            return Err(Fail::Invalid(format!(
                "'{k}' is an invalid keyword argument"
            )));
        }
    }
    let mut lists = vec![iterate(v)?];
    for a in &args.pos {
        lists.push(iterate(a)?);
    }
    let len = if longest.is_some() {
        lists.iter().map(Vec::len).max().unwrap_or(0)
    } else {
        lists.iter().map(Vec::len).min().unwrap_or(0)
    };
    if len > MAX_LOOKUP_ITEMS {
        return Err(too_many());
    }
    Ok(Value::from(
        (0..len)
            .map(|i| {
                py::make_seq(
                    lists
                        .iter()
                        .map(|l| l.get(i).cloned().unwrap_or_else(|| fill.clone()))
                        .collect(),
                    true,
                )
            })
            .collect::<Vec<_>>(),
    ))
}

/// `core.py`'s `subelements(obj, subelements, skip_missing=False)`: pairs
/// of each element and each value of its list (the element kept whole).
fn subelements(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["subelements", "skip_missing"])?;
    let elements = match py::classify(v) {
        Py::Map(pairs) => pairs.into_iter().map(|(_, x)| x).collect(),
        Py::Seq(items, false) => items,
        _ => {
            return Err(Fail::Invalid(
                "obj must be a list of dicts or a nested dict".into(),
            ));
        }
    };
    let keys: Vec<Value> = match args.get(0, "subelements").map(py::classify) {
        Some(Py::Str(s)) => s.split('.').map(Value::from).collect(),
        Some(Py::Seq(items, false)) => items,
        _ => {
            return Err(Fail::Invalid(
                "subelements must be a list or a string".into(),
            ));
        }
    };
    let skip_missing = args.truthy(1, "skip_missing")?;
    let mut out = Vec::new();
    for element in elements {
        let mut values = element.clone();
        for key in &keys {
            match py::classify(&values) {
                Py::Map(pairs) => match pairs.into_iter().find(|(k, _)| py::eq(k, key)) {
                    Some((_, x)) => values = x,
                    None if skip_missing => {
                        values = Value::from(Vec::<Value>::new());
                        break;
                    }
                    None => {
                        return Err(Fail::Invalid(format!(
                            "could not find {} key in iterated item {}",
                            py::py_repr(key),
                            py::py_repr(&values)
                        )));
                    }
                },
                _ => {
                    return Err(Fail::Invalid(format!(
                        "the key {} should point to a dictionary, got '{}'",
                        py::py_str(key),
                        py::py_str(&values)
                    )));
                }
            }
        }
        let Py::Seq(items, false) = py::classify(&values) else {
            return Err(Fail::Invalid(format!(
                "the key {} should point to a list, got {}",
                keys.last().map(py::py_repr).unwrap_or_default(),
                py::py_repr(&values)
            )));
        };
        if out.len() + items.len() > MAX_LOOKUP_ITEMS {
            return Err(too_many());
        }
        for x in items {
            out.push(py::make_seq(vec![element.clone(), x], true));
        }
    }
    Ok(Value::from(out))
}

/// Jinja2's `dictsort(value, case_sensitive=False, by='key',
/// reverse=False)`: the (key, value) pairs sorted.
fn dictsort(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["case_sensitive", "by", "reverse"])?;
    let Py::Map(pairs) = py::classify(v) else {
        return Err(Fail::Invalid(
            "You can only sort by either \"key\" or \"value\"".into(),
        ));
    };
    let case_sensitive = args.truthy(0, "case_sensitive")?;
    let by_value = match args.str_or(1, "by", "key")?.as_str() {
        "key" => false,
        "value" => true,
        _ => {
            return Err(Fail::Invalid(
                "You can only sort by either \"key\" or \"value\"".into(),
            ));
        }
    };
    let reverse = args.truthy(2, "reverse")?;
    let key = |p: &(Value, Value)| {
        let k = if by_value { &p.1 } else { &p.0 };
        match (case_sensitive, k.as_str()) {
            (false, Some(s)) => Value::from(s.to_lowercase()),
            _ => k.clone(),
        }
    };
    let mut keyed: Vec<(Value, (Value, Value))> = pairs.into_iter().map(|p| (key(&p), p)).collect();
    super::collections::sort_keyed(&mut keyed, reverse)?;
    // Jinja2 returns tuples; ansible-core 2.19 hands templates lists (its
    // rendering of `{{ d | dictsort }}` shows `[['a', 1]]`).
    Ok(Value::from(
        keyed
            .into_iter()
            .map(|(_, (k, x))| py::make_seq(vec![k, x], false))
            .collect::<Vec<_>>(),
    ))
}

/// `from_yaml` of a text that is JSON (YAML reads it alike); other YAML is
/// not modelled here (`jinja` does not parse YAML).
fn from_yaml(v: &Value) -> Result<Value, Fail> {
    let Some(text) = v.as_str() else {
        return Ok(v.clone());
    };
    match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(j) if j.is_array() || j.is_object() => Ok(py::from_json(&j)),
        _ => Err(Fail::TooComplex("from_yaml of non-JSON text".into())),
    }
}

#[cfg(test)]
mod tests {
    //! Expected values checked with ansible-core 2.19.14 (`debug: msg=...`
    //! of each expression in a playbook run on localhost from the oracle
    //! virtualenv).
    use super::*;
    use serde_json::json;

    fn run(
        name: &str,
        subject: &serde_json::Value,
        pos: &[serde_json::Value],
        kw: &[(&str, serde_json::Value)],
    ) -> serde_json::Value {
        let args = Args {
            pos: pos.iter().map(py::from_json).collect(),
            kw: kw
                .iter()
                .map(|(k, v)| ((*k).to_string(), py::from_json(v)))
                .collect(),
        };
        match filter(name, &py::from_json(subject), &args) {
            Some(Ok(v)) => py::to_json(&v),
            other => panic!("{name}: {:?}", other.map(|r| r.err())),
        }
    }

    #[test]
    fn product_zip_and_zip_longest() {
        assert_eq!(
            run("product", &json!([1, 2]), &[json!(["x", "y", "z"])], &[]),
            json!([[1, "x"], [1, "y"], [1, "z"], [2, "x"], [2, "y"], [2, "z"]])
        );
        assert_eq!(
            run("product", &json!([1, 2]), &[], &[("repeat", json!(2))]),
            json!([[1, 1], [1, 2], [2, 1], [2, 2]])
        );
        assert_eq!(
            run("zip", &json!([1, 2]), &[json!(["x", "y", "z"])], &[]),
            json!([[1, "x"], [2, "y"]])
        );
        assert_eq!(
            run(
                "zip_longest",
                &json!([1, 2]),
                &[json!(["x", "y", "z"])],
                &[("fillvalue", json!("-"))]
            ),
            json!([[1, "x"], [2, "y"], ["-", "z"]])
        );
    }

    #[test]
    fn huge_products_are_cut() {
        let big: Vec<i64> = (0..1000).collect();
        let args = Args {
            pos: vec![py::from_json(&json!(big)), py::from_json(&json!(big))],
            kw: Vec::new(),
        };
        assert!(matches!(
            filter("product", &py::from_json(&json!(big)), &args),
            Some(Err(Fail::TooComplex(_)))
        ));
    }

    #[test]
    fn subelements_keeps_the_element_whole() {
        let users = json!([{"n": "u1", "g": ["a", "b"]}, {"n": "u2"}]);
        assert_eq!(
            run(
                "subelements",
                &users,
                &[json!("g")],
                &[("skip_missing", json!(true))]
            ),
            json!([[{"n": "u1", "g": ["a", "b"]}, "a"], [{"n": "u1", "g": ["a", "b"]}, "b"]])
        );
        let args = Args {
            pos: vec![Value::from("g")],
            kw: Vec::new(),
        };
        assert!(matches!(
            filter("subelements", &py::from_json(&users), &args),
            Some(Err(Fail::Invalid(_)))
        ));
    }

    #[test]
    fn dictsort_by_key_and_value() {
        let d = json!({"b": 1, "A": 2, "c": 3});
        assert_eq!(
            run("dictsort", &d, &[], &[]),
            json!([["A", 2], ["b", 1], ["c", 3]])
        );
        assert_eq!(
            run(
                "dictsort",
                &d,
                &[json!(true), json!("value"), json!(true)],
                &[]
            ),
            json!([["c", 3], ["A", 2], ["b", 1]])
        );
    }

    #[test]
    fn from_yaml_of_json_text() {
        assert_eq!(
            run("from_yaml", &json!("[1, {\"a\": 2}]"), &[], &[]),
            json!([1, {"a": 2}])
        );
    }
}
