//! The filters by name: [`filter`] applies one to known values, [`FILTERS`]
//! lists every name it handles.

use super::super::Fail;
use super::super::py::{self, Py};
use super::collections::{
    dict2items, flatten, items2dict, merge_hash, min_max, set_op, sort, unique,
};
use super::convert::{jinja_float, jinja_int, to_bool};
use super::re::{regex_escape, regex_findall, regex_replace, regex_search};
use super::strings::{dirname, join, py_split, py_strip, replace, shlex_quote};
use super::{Args, expect_str, iterate};
use minijinja::State;
use minijinja::value::Value;

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
        // The filters that build item lists, in their own file.
        _ => return super::lists::filter(name, v, args),
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
    // `lists.rs` (`super::lists::LIST_FILTERS`).
    "product",
    "zip",
    "zip_longest",
    "subelements",
    "dictsort",
    "from_yaml",
];
