//! The tests by name: [`test()`] applies one to known values, [`TESTS`]
//! lists every name it handles.

use super::super::py::{self, Py};
use super::super::{Fail, version};
use super::convert::convert_bool;
use super::re::regex_test;
use super::strings::{is_lower, is_upper};
use super::{Args, expect_str, hashable, iterate};
use minijinja::value::Value;

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

/// Every test name [`test()`] handles.
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
