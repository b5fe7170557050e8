//! The one minijinja environment, and how our failures travel through it:
//! Ansible's filters and tests (ours) registered by name, the Jinja2
//! built-ins that dispatch to them, and controller-side lookups refused.

use super::{FUEL, ansible, py, template};
use minijinja::{Environment, UndefinedBehavior};
use std::sync::LazyLock;

/// Why an operation could not produce a value (internal).
#[derive(Debug, Clone)]
pub(crate) enum Fail {
    /// Ansible would raise: the task fails.
    Invalid(String),
    /// We do not model this, or a bound was hit.
    TooComplex(String),
    /// An undefined value was used; the name when known (else empty).
    Undefined(String),
    /// A controller-side lookup (`lookup('env', ...)`, `now()`).
    Lookup(String),
}

/// Prefix marking our own failures when they travel through minijinja
/// (a filter of ours called by minijinja's `map`/`select`).
const INVALID_TAG: &str = "\u{1}invalid:";
const UNDEFINED_TAG: &str = "\u{1}undefined:";

impl Fail {
    fn into_minijinja(self) -> minijinja::Error {
        use minijinja::ErrorKind;
        match self {
            Fail::Invalid(m) => {
                minijinja::Error::new(ErrorKind::InvalidOperation, format!("{INVALID_TAG}{m}"))
            }
            Fail::TooComplex(m) => minijinja::Error::new(ErrorKind::InvalidOperation, m),
            Fail::Undefined(n) => {
                minijinja::Error::new(ErrorKind::UndefinedError, format!("{UNDEFINED_TAG}{n}"))
            }
            Fail::Lookup(n) => {
                minijinja::Error::new(ErrorKind::InvalidOperation, format!("{LOOKUP_TAG}{n}"))
            }
        }
    }

    pub(crate) fn from_minijinja(e: &minijinja::Error) -> Fail {
        use minijinja::ErrorKind;
        let detail = e.detail().unwrap_or_default();
        if let Some(m) = detail.strip_prefix(INVALID_TAG) {
            return Fail::Invalid(m.to_string());
        }
        if let Some(n) = detail.strip_prefix(UNDEFINED_TAG) {
            return Fail::Undefined(n.to_string());
        }
        if let Some(n) = detail.strip_prefix(LOOKUP_TAG) {
            return Fail::Lookup(n.to_string());
        }
        match e.kind() {
            ErrorKind::UndefinedError => Fail::Undefined(String::new()),
            ErrorKind::OutOfFuel => Fail::TooComplex("fuel exhausted".into()),
            _ => Fail::TooComplex(e.to_string()),
        }
    }
}

/// The one minijinja environment: strict about undefined values, fuelled,
/// with Ansible's filters and tests (ours) plus the Jinja2 built-ins that
/// dispatch to them by name (`map`, `select`...). Used for the operations
/// we delegate and for templates with statements we do not interpret.
pub(super) static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::empty();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(FUEL));
    env.set_syntax(template::syntax());
    env.set_formatter(|out, _state, value| {
        // Ansible renders `None` nodes as nothing and values with `str()`.
        if value.is_undefined() {
            return Err(minijinja::Error::from(minijinja::ErrorKind::UndefinedError));
        }
        if !value.is_none() {
            out.write_str(&py::py_str(value))?;
        }
        Ok(())
    });
    for &name in ansible::FILTERS {
        env.add_filter(
            name,
            move |state: &minijinja::State, args: minijinja::value::Rest<minijinja::Value>| {
                let (subject, rest) = args
                    .split_first()
                    .map_or((minijinja::Value::UNDEFINED, &[][..]), |(s, r)| {
                        (s.clone(), r)
                    });
                let args = ansible::Args::from_values(rest);
                // Our filters only need a mutable state for the built-ins below,
                // which are never reached through this path.
                let mut scratch = state.env().empty_state();
                match ansible::filter(&mut scratch, name, &subject, &args) {
                    Some(Ok(v)) => Ok(v),
                    Some(Err(f)) => Err(f.into_minijinja()),
                    None => Err(minijinja::Error::from(minijinja::ErrorKind::UnknownFilter)),
                }
            },
        );
    }
    for &name in ansible::TESTS {
        env.add_test(
            name,
            move |args: minijinja::value::Rest<minijinja::Value>| {
                let (subject, rest) = args
                    .split_first()
                    .map_or((minijinja::Value::UNDEFINED, &[][..]), |(s, r)| {
                        (s.clone(), r)
                    });
                let args = ansible::Args::from_values(rest);
                if subject.is_undefined() && !matches!(name, "defined" | "undefined") {
                    return Err(Fail::Undefined(String::new()).into_minijinja());
                }
                match ansible::test(name, &subject, &args) {
                    Some(Ok(b)) => Ok(b),
                    Some(Err(f)) => Err(f.into_minijinja()),
                    None => Err(minijinja::Error::from(minijinja::ErrorKind::UnknownTest)),
                }
            },
        );
    }
    env.add_filter("select", minijinja::filters::select);
    env.add_filter("reject", minijinja::filters::reject);
    env.add_filter("selectattr", minijinja::filters::selectattr);
    env.add_filter("rejectattr", minijinja::filters::rejectattr);
    env.add_filter("map", minijinja::filters::map);
    env.add_function("range", minijinja::functions::range);
    env.add_function("dict", minijinja::functions::dict);
    env.add_function("namespace", minijinja::functions::namespace);
    for name in ["lookup", "query", "q", "now"] {
        env.add_function(name, move |_args: minijinja::value::Rest<minijinja::Value>| -> Result<minijinja::Value, minijinja::Error> {
            Err(Fail::Lookup(name.to_string()).into_minijinja())
        });
    }
    env
});

const LOOKUP_TAG: &str = "\u{1}lookup:";
