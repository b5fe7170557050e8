//! Ansible's filters and tests, reimplemented in Rust after ansible-core 2.19
//! (`plugins/filter/core.py`, `mathstuff.py`, `plugins/test/*.py`) and the
//! Jinja2 built-ins Ansible exposes.
//!
//! Each function works on known values only; undefined and unknown operands
//! are the evaluator's business (except where Ansible itself accepts an
//! undefined value, e.g. `default`, `defined`, `mandatory`). A name not
//! handled here returns `None`, which the evaluator reports as unsupported.
//!
//! This file holds the arguments every filter and test takes and the Python
//! helpers they share; [`filter()`] and [`test()`] dispatch by name, to
//! `convert` (numbers and booleans), `strings`, `collections` (lists, sets
//! and dicts) and `re` (Python's `re` over the `regex` crate, whose
//! compiled patterns `regex_cache` keeps per thread).

mod collections;
mod convert;
pub use convert::boolean_text;
mod filter;
mod lists;
mod re;
mod regex_cache;
mod strings;
mod test;

pub(crate) use filter::{FILTERS, filter};
pub(crate) use test::{TESTS, test};

#[cfg(test)]
#[test]
fn every_list_filter_is_registered() {
    for name in lists::LIST_FILTERS {
        assert!(FILTERS.contains(name), "{name}");
    }
}

use super::py::{self, Py};
use super::{Fail, MAX_RENDERED_LEN};
use minijinja::value::{Kwargs, Value};

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
    pub(super) fn get(&self, i: usize, name: &str) -> Option<&Value> {
        self.pos
            .get(i)
            .or_else(|| self.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v))
    }

    /// Python raises `TypeError` for surplus or unknown arguments.
    pub(super) fn expect(&self, names: &[&str]) -> Result<(), Fail> {
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

    pub(super) fn truthy(&self, i: usize, name: &str) -> Result<bool, Fail> {
        self.get(i, name).map_or(Ok(false), py::truthy)
    }

    pub(super) fn str_or(&self, i: usize, name: &str, default: &str) -> Result<String, Fail> {
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

pub(super) fn expect_str<'a>(v: &'a Value, what: &str) -> Result<&'a str, Fail> {
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

#[cfg(test)]
mod tests {
    use super::collections::unique;
    use super::convert::{jinja_int, to_bool};
    use super::re::translate_replacement;
    use super::strings::{dirname, py_split, shlex_quote};
    use minijinja::value::Value;

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
