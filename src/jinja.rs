//! Jinja expressions and templates, evaluated statically with three values.
//!
//! This module owns all Jinja work in preflint: Ansible `when:` conditions
//! ([`eval_condition`]), templated strings ([`render`]), bare expressions
//! ([`eval_expression`]) and the names a template uses
//! ([`referenced_variables`]). It parses with minijinja's machinery and
//! interprets the syntax tree itself, so that a value that is only known at
//! run time (a fact, a registered result) makes the answer
//! [`Tri::Unknown`] instead of wrong, and it follows ansible-core 2.19 and
//! Python semantics where minijinja's differ (`True == 1`, `'a' < 1` is an
//! error, `str(True)` is `"True"`, Ansible's `bool`, `version`, `default`...).
//!
//! It must not: run anything, read files, resolve variable precedence (the
//! caller's [`VarSource`] does that), or loop or allocate without bound:
//! every evaluation is limited by [`FUEL`], [`TOTAL_FUEL`],
//! [`MAX_RENDERED_LEN`], [`MAX_NESTING`], [`MAX_SOURCE_LEN`],
//! [`MAX_AST_DEPTH`] and [`MAX_BRACKET_DEPTH`], and hitting any of them
//! yields [`UnknownWhy::TooComplex`].
//!
//! # Semantics worth knowing
//!
//! * `and`/`or`/`not`/`if` follow Kleene logic over unknowns, assuming an
//!   unknown operand of `and`/`or` is a boolean at run time: `false and U`
//!   is false, `U and false` is false, `true or U` and `U or true` are true,
//!   `U and true` is `U`.
//! * `x is defined` is true when `x` is a fact, a registered result, a
//!   `set_fact` name or a vaulted value (it will exist at run time), false
//!   when the caller says it is missing, and unknown otherwise.
//! * ansible-core 2.19 requires a conditional to produce a boolean: `when:
//!   some_var` where `some_var` is the string `"false"` (or any non-boolean,
//!   truthy or not) fails the task with "Conditionals must have a boolean
//!   result" (unless `ALLOW_BROKEN_CONDITIONALS` is set). [`eval_condition`]
//!   reports such a condition as unknown with [`Unknown::error`] set; it
//!   never falls back to Python truthiness.
//! * Where Ansible itself fails the answer is unknown: [`UnknownWhy::Unset`]
//!   when something undefined is used, [`UnknownWhy::TooComplex`] with
//!   [`Unknown::error`] set for type errors and bad arguments.
//!
//! # Known differences from Ansible
//!
//! Checked against ansible-core 2.19 by `tests/jinja_oracle.rs`. Where we
//! cannot match Ansible we answer unknown rather than differently, except:
//!
//! * `union`, `intersect`, `difference` keep first-seen order; Ansible goes
//!   through Python sets, whose order is arbitrary (membership and length agree).
//! * Templates with statements other than `if` (`for`, `set`, macros) are
//!   rendered by minijinja once all their variables are known: the result is
//!   always a string (Ansible keeps the native type of a single output node)
//!   and operators there follow minijinja, not Python.
//! * A fact is assumed to exist (`ansible_default_ipv6 is defined` is true),
//!   and an unknown operand of `and`/`or` is assumed to be a boolean.
//!
//! Answered unknown although Ansible has an answer: Python regular
//! expression features the `regex` crate lacks (look-around,
//! back-references, `$` before a trailing newline in filters), `%`
//! formatting and `str.format`, object identity (`is sameas` on numbers or
//! strings), integers beyond 128 bits, an undefined value inside a list
//! literal, and every filter or test not implemented in `ansible.rs`
//! (`to_yaml`, `json_query`, `ipaddr`, `b64decode`, `hash`, `sum`...).

mod ansible;
mod eval;
mod names;
mod py;
mod template;
mod version;

use minijinja::{Environment, UndefinedBehavior};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Fuel (minijinja units: one per operation, one per 64 bytes created) that
/// one evaluation may spend.
pub const FUEL: u64 = 200_000;
/// Fuel that one top-level call may spend, nested renders included (the
/// caller's [`VarSource`] may render other variables while answering).
pub const TOTAL_FUEL: u64 = 2_000_000;
/// Longest string, list or map (bytes, roughly) an evaluation may build.
pub const MAX_RENDERED_LEN: usize = 1 << 20;
/// Deepest nesting of evaluations (a variable whose value is a template
/// that uses a variable whose value is a template...).
pub const MAX_NESTING: usize = 32;
/// Longest template or expression source we parse.
pub const MAX_SOURCE_LEN: usize = 64 * 1024;
/// Deepest expression tree we walk.
pub const MAX_AST_DEPTH: usize = 128;
/// Deepest nesting of brackets (`(`, `[`, `{`) we hand to the parser, whose
/// recursion per bracket is deep: this keeps parsing within a 1 MiB stack.
pub const MAX_BRACKET_DEPTH: usize = 32;
/// Most operators (`and`, `or`, `|`, `~`, comparisons, arithmetic) accepted in
/// one source: a long operator chain parses into a tree as deep as the chain,
/// and such trees overflow small thread stacks when walked or dropped.
pub const MAX_OPERATORS: usize = 512;

/// Why a value is not known statically.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnknownWhy {
    /// A fact gathered on the host (`ansible_*`, `ansible_facts`, `hostvars`, `groups`...).
    Fact,
    /// A `register:`ed task result.
    Registered,
    /// A `set_fact` result.
    RuntimeFact,
    /// An undefined variable (or attribute) used where Ansible fails on it.
    Unset,
    /// A vaulted value.
    Vault,
    /// `lookup()`, `query()`, `q()`, `now()`: read at run time on the controller.
    Lookup,
    /// Syntax or a filter, test or method we do not model, a bound hit,
    /// or something Ansible itself fails on (then [`Unknown::error`] says so).
    TooComplex,
    /// The variable's value refers to itself.
    Cycle,
}

/// One reason an answer is unknown: the variable (or the sub-expression,
/// for [`UnknownWhy::TooComplex`] and [`UnknownWhy::Lookup`]) and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unknown {
    pub var: String,
    pub why: UnknownWhy,
    /// `Some(message)` when ansible-core 2.19 itself fails evaluating this
    /// (a type error, a bad filter argument, a conditional whose result is
    /// not a boolean): the task errors at run time rather than being skipped.
    pub error: Option<String>,
}

impl Unknown {
    fn new(var: impl Into<String>, why: UnknownWhy) -> Self {
        Unknown {
            var: var.into(),
            why,
            error: None,
        }
    }

    /// An unknown that is in fact an Ansible failure.
    fn failure(var: impl Into<String>, message: impl Into<String>) -> Self {
        Unknown {
            var: var.into(),
            why: UnknownWhy::TooComplex,
            error: Some(message.into()),
        }
    }
}

/// What the caller knows about a variable name.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Value(serde_json::Value),
    Unknown(UnknownWhy),
    Missing,
}

/// Implemented by the variables module: returns already-rendered values or
/// says why a name is unknown. It may call back into [`render`] or
/// `eval_*` for nested templates (bounded by [`MAX_NESTING`] and
/// [`TOTAL_FUEL`]); it should memoize, as the same name may be asked often.
pub trait VarSource {
    fn lookup(&self, name: &str) -> Lookup;
}

/// A three-valued answer. `Unknown` lists what it depends on, sorted and deduplicated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tri {
    True,
    False,
    Unknown(Vec<Unknown>),
}

/// A rendered value, or what it depends on.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    Value(serde_json::Value),
    Unknown(Vec<Unknown>),
}

/// Evaluates an Ansible `when:` condition (a bare expression; a YAML
/// boolean arrives as `"True"`/`"False"`) the way ansible-core 2.19's
/// `Templar.evaluate_conditional` does: surrounding whitespace is ignored,
/// a condition that is entirely one template (`"{{ x }}"`) is rendered
/// first (and a string result evaluated as an expression), string
/// constants containing templates are rendered, and a non-boolean result
/// is unknown with [`Unknown::error`] set.
#[must_use]
pub fn eval_condition(expr: &str, vars: &dyn VarSource) -> Tri {
    let Some(_guard) = Nesting::enter() else {
        return Tri::Unknown(vec![Unknown::new(expr.trim(), UnknownWhy::TooComplex)]);
    };
    let text = expr.trim();
    if text.is_empty() {
        return Tri::Unknown(vec![Unknown::failure(
            "",
            "Empty conditional expressions are not allowed.",
        )]);
    }
    let ev = if is_all_template(text) {
        match template::render(text, vars) {
            Rendered::Value(serde_json::Value::String(inner)) => {
                let inner = inner.trim().to_string();
                if inner.is_empty() {
                    return Tri::Unknown(vec![Unknown::failure(
                        text,
                        "Empty conditional expressions are not allowed.",
                    )]);
                }
                eval::evaluate(&inner, vars, true)
            }
            Rendered::Value(v) => eval::Ev::Val(py::from_json(&v)),
            Rendered::Unknown(u) => return Tri::Unknown(u),
        }
    } else {
        eval::evaluate(text, vars, true)
    };
    match ev {
        eval::Ev::Val(v) => match py::classify(&v) {
            py::Py::Bool(true) => Tri::True,
            py::Py::Bool(false) => Tri::False,
            py::Py::Undefined => {
                Tri::Unknown(vec![Unknown::new(eval::root_name(text), UnknownWhy::Unset)])
            }
            _ => Tri::Unknown(vec![Unknown::failure(
                snippet(text),
                format!(
                    "Conditional result was derived from value of type '{}'. Conditionals must have a boolean result.",
                    py::type_name(&v)
                ),
            )]),
        },
        eval::Ev::Undef(name) => Tri::Unknown(vec![Unknown::new(name, UnknownWhy::Unset)]),
        eval::Ev::Unk(set) => Tri::Unknown(set.into_iter().collect()),
    }
}

/// Renders a templated string value as Ansible does: a string without
/// template syntax is returned as is; a template whose output is a single
/// expression node (`"{{ x }}"`, also inside `{% if %}` branches) keeps that
/// value's native type (list, bool, int...); anything else is a string,
/// with `None` nodes dropped and `str()` formatting (`True`, `['a']`).
#[must_use]
pub fn render(template: &str, vars: &dyn VarSource) -> Rendered {
    let Some(_guard) = Nesting::enter() else {
        return Rendered::Unknown(vec![Unknown::new(
            snippet(template),
            UnknownWhy::TooComplex,
        )]);
    };
    template::render(template, vars)
}

/// Evaluates a bare expression (no `{{ }}`) to its value.
#[must_use]
pub fn eval_expression(expr: &str, vars: &dyn VarSource) -> Rendered {
    let Some(_guard) = Nesting::enter() else {
        return Rendered::Unknown(vec![Unknown::new(snippet(expr), UnknownWhy::TooComplex)]);
    };
    eval::to_rendered(eval::evaluate(expr.trim(), vars, false))
}

/// The top-level variable names a template (when it contains `{{`, `{%`
/// or `{#`) or a bare expression uses, sorted and deduplicated. Loop
/// variables and `set` targets of the template itself and Jinja/Ansible
/// global functions (`lookup`, `range`...) are not included.
#[must_use]
pub fn referenced_variables(template_or_expr: &str) -> Vec<String> {
    names::referenced(template_or_expr)
}

/// Does the string contain Jinja syntax at all?
#[must_use]
pub fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%") || s.contains("{#")
}

/// Ansible's `is_possibly_all_template`: starts and ends with delimiters.
fn is_all_template(s: &str) -> bool {
    (s.starts_with("{{") || s.starts_with("{%")) && (s.ends_with("}}") || s.ends_with("%}"))
}

/// The bytes the scan of [`parseable`] stops at outside the delimiters.
static OUTSIDE_STOPS: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b"{}%'\"([)]";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = true;
        i += 1;
    }
    t
};

/// Is the source small and shallow enough to hand to the parser?
fn parseable(src: &str) -> bool {
    if src.len() > MAX_SOURCE_LEN {
        return false;
    }
    // Most sources are short: each byte adds at most one operator (a
    // keyword is two bytes or more), and the brackets counted below bound
    // the depth, so a short source with few brackets passes the scan.
    let bytes = src.as_bytes();
    if bytes.len() <= MAX_OPERATORS
        && bytes
            .iter()
            .filter(|&&c| matches!(c, b'(' | b'[' | b'{'))
            .count()
            <= MAX_BRACKET_DEPTH
    {
        return true;
    }
    // Brackets inside string literals are skipped; template text outside
    // `{{ }}` is counted too, which only errs on the safe side. Every
    // character looked at is ASCII, so bytes are scanned (the bytes of a
    // multi-byte character never equal an ASCII one).
    let (mut depth, mut quote, mut escaped) = (0usize, None, false);
    let (mut operators, mut word_start) = (0usize, None::<usize>);
    // In a template only the code between delimiters is parsed as expressions.
    let templated = src.contains("{{") || src.contains("{%");
    let mut inside = !templated;
    let mut prev = 0u8;
    let mut i = 0;
    while i < bytes.len() {
        // Runs of bytes that change nothing but `prev` are skipped: outside
        // the delimiters all but quotes, brackets and delimiter bytes; in a
        // string literal all but its quote and backslashes. Most of a
        // template file is such text.
        let skip = if quote.is_none() && !inside {
            bytes[i..]
                .iter()
                .position(|&b| OUTSIDE_STOPS[usize::from(b)])
        } else if let Some(q) = quote
            && !escaped
        {
            bytes[i..].iter().position(|&b| b == b'\\' || b == q)
        } else {
            Some(0)
        };
        let next = skip.map_or(bytes.len(), |n| i + n);
        if next > i {
            prev = bytes[next - 1];
            word_start = None;
            i = next;
            if i == bytes.len() {
                break;
            }
        }
        let (at, c) = (i, bytes[i]);
        i += 1;
        if templated && quote.is_none() {
            if prev == b'{' && (c == b'{' || c == b'%') {
                inside = true;
            } else if (prev == b'}' || prev == b'%') && c == b'}' {
                inside = false;
            }
        }
        prev = c;
        if quote.is_none() && inside {
            if c.is_ascii_alphanumeric() || c == b'_' {
                word_start.get_or_insert(at);
            } else {
                if let Some(start) = word_start.take()
                    && matches!(
                        &bytes[start..at],
                        b"and" | b"or" | b"not" | b"in" | b"is" | b"if"
                    )
                {
                    operators += 1;
                }
                if matches!(
                    c,
                    b'|' | b'~' | b'+' | b'-' | b'*' | b'/' | b'<' | b'>' | b'=' | b'!'
                ) {
                    operators += 1;
                }
            }
            if operators > MAX_OPERATORS {
                return false;
            }
        } else {
            // The word ends where the code does (a quote or a delimiter).
            word_start = None;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == b'\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_BRACKET_DEPTH {
                        return false;
                    }
                }
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    true
}

/// A short excerpt of source text used to name an unknown sub-expression.
fn snippet(s: &str) -> String {
    const MAX: usize = 120;
    let s = s.trim();
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

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
static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
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

thread_local! {
    /// How deep the current thread is in nested evaluations.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// Fuel spent by the current top-level call and everything nested in it.
    static SPENT: Cell<u64> = const { Cell::new(0) };
}

/// Marks one level of evaluation nesting on this thread.
struct Nesting;

impl Nesting {
    fn enter() -> Option<Nesting> {
        let depth = DEPTH.with(Cell::get);
        if depth >= MAX_NESTING {
            return None;
        }
        if depth == 0 {
            SPENT.with(|s| s.set(0));
        }
        DEPTH.with(|d| d.set(depth + 1));
        Some(Nesting)
    }
}

impl Drop for Nesting {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Adds fuel spent by one evaluation to the thread's total; `false` once
/// [`TOTAL_FUEL`] is exceeded.
fn spend(fuel: u64) -> bool {
    SPENT.with(|s| {
        let total = s.get().saturating_add(fuel);
        s.set(total);
        total <= TOTAL_FUEL
    })
}

fn unknown_set(items: impl IntoIterator<Item = Unknown>) -> BTreeSet<Unknown> {
    items.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashMap;
    use serde_json::json;

    #[test]
    fn the_parse_bounds_hold_for_short_and_long_sources() {
        let nested = |n: usize| format!("{{{{ {}x{} }}}}", "(".repeat(n), ")".repeat(n));
        // Short: the brackets are counted, nesting or not.
        assert!(parseable(&nested(MAX_BRACKET_DEPTH - 2)));
        assert!(!parseable(&nested(MAX_BRACKET_DEPTH)));
        assert!(
            parseable(&"{{ (x) }}".repeat(MAX_BRACKET_DEPTH)),
            "siblings"
        );
        // Long: the full scan.
        let long_siblings = format!("{}{}", " ".repeat(MAX_OPERATORS), "(x)".repeat(40));
        assert!(parseable(&long_siblings));
        let chain = format!("{{{{ {} }}}}", vec!["a"; MAX_OPERATORS + 2].join(" ~ "));
        assert!(!parseable(&chain));
        assert!(parseable(&vec!["a"; MAX_OPERATORS / 4].join(" ~ ")));
    }

    /// The long scan skips plain text outside the delimiters and inside
    /// string literals; what it skips must not change what it finds.
    #[test]
    fn the_long_scan_sees_delimiters_quotes_and_brackets_after_plain_text() {
        let text = "plain text, long enough for the full scan. ".repeat(20);
        let deep = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
        // `{%` right after text opens code; deep brackets there are counted.
        let code = format!("{text}{{% if {} %}}", deep(MAX_BRACKET_DEPTH + 1));
        assert!(!parseable(&code));
        // A quote outside the delimiters hides the brackets up to its end...
        let quoted = format!(
            "{text}{{{{ x }}}} it's {} here'{{{{ y }}}}",
            "(".repeat(MAX_BRACKET_DEPTH + 1)
        );
        assert!(parseable(&quoted));
        // ...and an escaped quote does not end it.
        let escaped = format!(
            "{text}{{{{ 'a\\'{}' }}}}",
            "(".repeat(MAX_BRACKET_DEPTH + 1)
        );
        assert!(parseable(&escaped));
        // Operators are counted only between the delimiters.
        let ops = vec!["a"; MAX_OPERATORS + 2].join(" ~ ");
        assert!(parseable(&format!("{text}{ops}{{{{ x }}}}")));
        assert!(!parseable(&format!("{text}{{{{ {ops} }}}}")));
    }

    /// Variables for tests: known values plus names declared unknown.
    #[derive(Default)]
    struct Vars {
        known: HashMap<String, serde_json::Value>,
        unknown: HashMap<String, UnknownWhy>,
    }

    impl Vars {
        fn new(known: &serde_json::Value) -> Self {
            let known = known
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            Vars {
                known,
                unknown: HashMap::default(),
            }
        }

        fn with(mut self, name: &str, why: UnknownWhy) -> Self {
            self.unknown.insert(name.into(), why);
            self
        }
    }

    impl VarSource for Vars {
        fn lookup(&self, name: &str) -> Lookup {
            if let Some(w) = self.unknown.get(name) {
                return Lookup::Unknown(w.clone());
            }
            self.known
                .get(name)
                .map_or(Lookup::Missing, |v| Lookup::Value(v.clone()))
        }
    }

    #[test]
    fn a_template_is_parsed_once_and_renders_as_when_parsed_afresh() {
        let vars =
            Vars::new(&json!({"a": "x", "n": 2, "l": [1, 2]})).with("r", UnknownWhy::Registered);
        let texts = [
            "{{ a }}-{{ n + 1 }}",
            "{% if n > 1 %}big{% else %}small{% endif %}\n",
            "{% for i in l %}{{ i }},{% endfor %}",
            "{{ r }} and {{ missing }}",
            "{{ a ",
            "plain {# note #} text",
        ];
        for t in texts {
            let first = template::Shape::of(t).expect("memo has room");
            let again = template::Shape::of(t).expect("memo has room");
            assert!(std::sync::Arc::ptr_eq(&first, &again), "{t}: parsed twice");
            assert_eq!(
                render(t, &vars),
                template::render_unremembered(t, &vars),
                "{t}"
            );
        }
    }

    fn cond(expr: &str, vars: &Vars) -> Tri {
        eval_condition(expr, vars)
    }

    fn unknown_of(t: &Tri) -> Vec<(String, UnknownWhy)> {
        match t {
            Tri::Unknown(u) => u.iter().map(|u| (u.var.clone(), u.why.clone())).collect(),
            _ => Vec::new(),
        }
    }

    fn reg() -> Vars {
        Vars::new(&json!({"t": true, "f": false}))
            .with("reg", UnknownWhy::Registered)
            .with("ansible_os_family", UnknownWhy::Fact)
    }

    #[test]
    fn kleene_and_or_not() {
        let v = reg();
        assert_eq!(cond("f and reg.rc == 0", &v), Tri::False);
        assert_eq!(cond("reg.rc == 0 and f", &v), Tri::False);
        assert_eq!(cond("t or reg.rc == 0", &v), Tri::True);
        assert_eq!(cond("reg.rc == 0 or t", &v), Tri::True);
        assert_eq!(
            unknown_of(&cond("reg.rc == 0 and t", &v)),
            vec![("reg".into(), UnknownWhy::Registered)]
        );
        assert_eq!(
            unknown_of(&cond("reg.rc == 0 or f", &v)),
            vec![("reg".into(), UnknownWhy::Registered)]
        );
        assert_eq!(
            unknown_of(&cond("not (reg is succeeded)", &v)),
            vec![("reg".into(), UnknownWhy::Registered)]
        );
    }

    #[test]
    fn unknowns_are_listed_sorted_and_deduplicated() {
        let v = reg();
        let t = cond(
            "ansible_os_family == 'RedHat' and reg.rc == 0 and reg.stdout != ''",
            &v,
        );
        assert_eq!(
            unknown_of(&t),
            vec![
                ("ansible_os_family".into(), UnknownWhy::Fact),
                ("reg".into(), UnknownWhy::Registered)
            ]
        );
    }

    #[test]
    fn if_expression_with_unknown_test() {
        let v = reg();
        assert_eq!(cond("(1 if reg.rc == 0 else 1) == 1", &v), Tri::True);
        assert!(matches!(
            cond("(1 if reg.rc == 0 else 2) == 1", &v),
            Tri::Unknown(_)
        ));
    }

    #[test]
    fn defined_on_facts_registered_and_missing() {
        let v = reg().with("sf", UnknownWhy::RuntimeFact);
        assert_eq!(cond("reg is defined", &v), Tri::True);
        assert_eq!(cond("sf is defined", &v), Tri::True);
        assert_eq!(cond("ansible_os_family is defined", &v), Tri::True);
        assert_eq!(cond("nope is defined", &v), Tri::False);
        assert_eq!(cond("nope is undefined", &v), Tri::True);
        assert_eq!(cond("nope.x is defined", &v), Tri::False);
        assert!(matches!(cond("reg.stdout is defined", &v), Tri::Unknown(_)));
    }

    #[test]
    fn default_filter_on_missing_and_unknown() {
        let v = reg();
        assert_eq!(cond("nope | default(false)", &v), Tri::False);
        assert_eq!(cond("not (nope | default(false) | bool)", &v), Tri::True);
        assert_eq!(cond("nope | d(true)", &v), Tri::True);
        assert_eq!(cond("'' | default('x', true) == 'x'", &v), Tri::True);
        assert_eq!(
            unknown_of(&cond("reg | default(false)", &v)),
            vec![("reg".into(), UnknownWhy::Registered)]
        );
        assert_eq!(cond("t | default(reg)", &v), Tri::True);
    }

    #[test]
    fn undefined_use_is_unset() {
        let v = reg();
        assert_eq!(
            unknown_of(&cond("nope == 1", &v)),
            vec![("nope".into(), UnknownWhy::Unset)]
        );
        assert_eq!(
            unknown_of(&cond("nope", &v)),
            vec![("nope".into(), UnknownWhy::Unset)]
        );
    }

    #[test]
    fn non_boolean_condition_fails_like_ansible_2_19() {
        let v = Vars::new(&json!({"s": "false", "n": 1, "l": []}));
        for e in ["s", "n", "l", "'yes'"] {
            match cond(e, &v) {
                Tri::Unknown(u) => assert!(u[0].error.is_some(), "{e}: {u:?}"),
                other => panic!("{e}: {other:?}"),
            }
        }
        assert_eq!(cond("s | bool", &v), Tri::False);
        assert_eq!(cond("True", &v), Tri::True);
        assert_eq!(cond("  False  ", &v), Tri::False);
    }

    #[test]
    fn registered_tests_on_known_results() {
        let v = Vars::new(
            &json!({"ok": {"rc": 0, "changed": true}, "bad": {"failed": true}, "s": "x"}),
        );
        assert_eq!(cond("ok is succeeded", &v), Tri::True);
        assert_eq!(cond("ok is changed", &v), Tri::True);
        assert_eq!(cond("bad is failed", &v), Tri::True);
        assert_eq!(cond("bad is skipped", &v), Tri::False);
        assert!(matches!(&cond("s is succeeded", &v), Tri::Unknown(u) if u[0].error.is_some()));
    }

    #[test]
    fn python_semantics() {
        let v = Vars::new(&json!({"i": 1, "fl": 1.0, "s": "abc", "l": [1, 2], "d": {"k": 1}}));
        assert_eq!(cond("i == fl", &v), Tri::True);
        assert_eq!(cond("True == 1", &v), Tri::True);
        assert_eq!(
            cond("7 // 2 == 3 and -7 // 2 == -4 and 7 / 2 == 3.5", &v),
            Tri::True
        );
        assert_eq!(
            cond("'b' in s and 2 in l and 'k' in d and 'v' not in d", &v),
            Tri::True
        );
        assert_eq!(cond("s ~ i ~ True == 'abc1True'", &v), Tri::True);
        assert_eq!(cond("d.k == d['k']", &v), Tri::True);
        assert_eq!(cond("'abc' < 'abd' and [1, 2] < [1, 3]", &v), Tri::True);
        assert!(matches!(&cond("s < i", &v), Tri::Unknown(u) if u[0].error.is_some()));
        assert_eq!(cond("s[1:] == 'bc' and l[-1] == 2", &v), Tri::True);
        assert_eq!(
            cond("s.startswith('a') and d.keys() | list == ['k']", &v),
            Tri::True
        );
    }

    #[test]
    fn ansible_filters() {
        let v = Vars::new(&json!({"xs": ["a", "b", "a"], "m": {"a": 1}, "ver": "v1.30.2"}));
        for e in [
            "'yes' | bool",
            "'On' | bool",
            "not ('junk' | bool)",
            "xs | unique | length == 2",
            "xs | first == 'a' and xs | last == 'a'",
            "xs | join(',') == 'a,b,a'",
            "(xs | union(['c'])) | length == 3",
            "xs | difference(['a']) == ['b']",
            "xs | intersect(['b', 'z']) == ['b']",
            "'1.5' | int == 1 and '2' | float == 2.0",
            "m | dict2items | items2dict == m",
            "m | combine({'b': 2}) == {'a': 1, 'b': 2}",
            "[[1, [2]], 3] | flatten == [1, 2, 3]",
            "[3, 1, 2] | min == 1 and [3, 1, 2] | max == 3",
            "'/etc/x.conf' | basename == 'x.conf' and '/etc/x.conf' | dirname == '/etc'",
            "'a b' | quote == \"'a b'\"",
            "m | type_debug == 'dict'",
            "'abc' | regex_replace('b', 'X') == 'aXc'",
            "'abc' | regex_search('b.') == 'bc'",
            "'a1b22' | regex_findall('[0-9]+') == ['1', '22']",
            "'a,b' | split(',') == ['a', 'b']",
            "m | to_json == '{\"a\": 1}'",
            "'{\"a\": 1}' | from_json == m",
            "true | ternary('y', 'n') == 'y'",
            "xs | select('match', 'a') | list | length == 2",
            "xs | map('upper') | list == ['A', 'B', 'A']",
            "[{'n': 1}, {}] | selectattr('n', 'defined') | list | length == 1",
            "ver is version('v1.30', '>=')",
            "ver is version_compare('v1.31', 'lt')",
            "'abc' is match('a') and not ('abc' is match('b')) and 'abc' is search('b')",
            "'abc' is regex('^a')",
            "[1] is subset([1, 2]) and [1, 2] is superset([1])",
            "'/x' is abs and 4 is divisibleby 2 and 3 is odd and 'ab' is lower",
            "xs is contains('a') and 'a' is in(xs)",
            "'' is falsy and 'x' is truthy and 'no' is falsy(convert_bool=True)",
        ] {
            assert_eq!(cond(e, &v), Tri::True, "{e}");
        }
    }

    #[test]
    fn unsupported_and_lookups() {
        let v = Vars::default();
        assert_eq!(
            unknown_of(&cond("'x' | to_nice_yaml == ''", &v)),
            vec![("'x' | to_nice_yaml".into(), UnknownWhy::TooComplex)]
        );
        assert_eq!(
            unknown_of(&cond("lookup('env', 'HOME') == '/root'", &v)),
            vec![("lookup('env', 'HOME')".into(), UnknownWhy::Lookup)]
        );
        assert_eq!(
            unknown_of(&cond("x | community.general.foo", &v))[0].1,
            UnknownWhy::TooComplex
        );
        assert_eq!(
            unknown_of(&cond("this is ( not valid", &v))[0].1,
            UnknownWhy::TooComplex
        );
    }

    #[test]
    fn render_keeps_native_type_for_single_expression() {
        let v = Vars::new(&json!({"l": [1, 2], "b": true, "n": null, "s": "x"}));
        assert_eq!(render("{{ l }}", &v), Rendered::Value(json!([1, 2])));
        assert_eq!(render("{{ b }}", &v), Rendered::Value(json!(true)));
        assert_eq!(render("a{{ b }}", &v), Rendered::Value(json!("aTrue")));
        assert_eq!(render("a{{ n }}", &v), Rendered::Value(json!("a")));
        assert_eq!(render("a{{ l }}", &v), Rendered::Value(json!("a[1, 2]")));
        assert_eq!(
            render("{% if b %}\n{{ l }}{% endif %}", &v),
            Rendered::Value(json!([1, 2]))
        );
        assert_eq!(render("{{ s }}\n", &v), Rendered::Value(json!("x\n")));
        // Several pieces joined as strings, the dropped newlines restored.
        assert_eq!(
            render("a: {{ s }}\nb: {{ l }} {{ b }}{{ n }}\n\n", &v),
            Rendered::Value(json!("a: x\nb: [1, 2] True\n\n"))
        );
        assert_eq!(render("plain", &v), Rendered::Value(json!("plain")));
        assert_eq!(
            render("{% for i in l %}{{ i }}{% endfor %}", &v),
            Rendered::Value(json!("12"))
        );
        assert_eq!(render("{{ 1.0 }}", &v), Rendered::Value(json!(1.0)));
    }

    #[test]
    fn render_unknown_lists_dependencies() {
        let v = reg();
        assert_eq!(
            render("{{ reg.stdout }}-{{ ansible_os_family }}", &v),
            Rendered::Unknown(vec![
                Unknown::new("ansible_os_family", UnknownWhy::Fact),
                Unknown::new("reg", UnknownWhy::Registered),
            ])
        );
        assert_eq!(
            render("{% for i in [1] %}{{ reg }}{% endfor %}", &v),
            Rendered::Unknown(vec![Unknown::new("reg", UnknownWhy::Registered)])
        );
    }

    #[test]
    fn eval_expression_returns_values() {
        let v = Vars::new(&json!({"a": [1, 2, 3]}));
        assert_eq!(
            eval_expression("a | length * 2", &v),
            Rendered::Value(json!(6))
        );
        assert_eq!(eval_expression("a[1:]", &v), Rendered::Value(json!([2, 3])));
    }

    #[test]
    fn embedded_templates_in_conditions() {
        let v = Vars::new(&json!({"x": "a", "b": true}));
        assert_eq!(cond("'{{ x }}' == 'a'", &v), Tri::True);
        assert_eq!(cond("{{ b }}", &v), Tri::True);
    }

    #[test]
    fn referenced_variables_are_top_level_names() {
        assert_eq!(
            referenced_variables(
                "a.b and c['d'] | default(e) and lookup('env', f) and g is version(h, '>=')"
            ),
            vec!["a", "c", "e", "f", "g", "h"]
        );
        assert_eq!(
            referenced_variables(
                "{% for i in items %}{{ i ~ sep }}{% set z = 1 %}{{ z }}{% endfor %}{{ loop_free }}"
            ),
            vec!["items", "loop_free", "sep"]
        );
    }

    #[test]
    fn bounds_stop_runaway_templates_fast() {
        let v = Vars::default();
        let start = std::time::Instant::now();
        for e in [
            "'x' * 10**9",
            "('x' * 1000000) ~ ('x' * 1000000)",
            "range(10**9) | length > 0",
            "[1] * 10**9",
            "2 ** 100000",
        ] {
            let r = eval_expression(e, &v);
            assert!(
                matches!(&r, Rendered::Unknown(u) if u[0].why == UnknownWhy::TooComplex),
                "{e}: {r:?}"
            );
        }
        let exp = "{% set ns = namespace(a='xx') %}{% for i in range(64) %}{% set ns.a = ns.a ~ ns.a %}{% endfor %}{{ ns.a }}";
        let r = render(exp, &v);
        assert!(
            matches!(&r, Rendered::Unknown(u) if u[0].why == UnknownWhy::TooComplex),
            "{r:?}"
        );
        let exp = "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}";
        assert!(matches!(render(exp, &v), Rendered::Unknown(_)));
        let deep = format!("{}1{}", "(".repeat(400), ")".repeat(400));
        assert!(matches!(eval_expression(&deep, &v), Rendered::Unknown(_)));
        // Deep trees end at MAX_AST_DEPTH well within a small thread stack
        // (rayon workers and test threads have 2 MiB).
        let deep = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                let vars = Vars::new(&json!({"t": true, "x": "a"}));
                let chain = vec!["t"; 5000].join(" and ");
                let filters = format!("x{}", " | upper".repeat(3000));
                let brackets = format!("{}x{}", "[".repeat(100), "]".repeat(100));
                let parens = format!("{}x{}", "(".repeat(3000), ")".repeat(3000));
                let ok = format!("{}x{}", "(".repeat(20), ")".repeat(20));
                [chain, filters, brackets, parens, ok]
                    .map(|e| matches!(eval_expression(&e, &vars), Rendered::Unknown(_)))
            })
            .expect("spawn")
            .join()
            .expect("no stack overflow");
        assert_eq!(deep, [true, true, true, true, false]);
        let long = vec!["t"; 5000].join(" and ");
        assert!(matches!(
            eval_expression(&long, &Vars::new(&json!({"t": true}))),
            Rendered::Unknown(_) | Rendered::Value(_)
        ));
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }

    /// A variable source whose values are themselves templates over each
    /// other, like the variables module.
    struct Chain;

    impl VarSource for Chain {
        fn lookup(&self, name: &str) -> Lookup {
            let n: usize = name.trim_start_matches('v').parse().unwrap_or(0);
            if n == 0 {
                return Lookup::Value(json!("x"));
            }
            match render(&format!("{{{{ v{} ~ v{} }}}}", n - 1, n - 1), self) {
                Rendered::Value(v) => Lookup::Value(v),
                Rendered::Unknown(u) => Lookup::Unknown(u[0].why.clone()),
            }
        }
    }

    #[test]
    fn nesting_is_bounded() {
        // Without memoization this would take 2^60 steps.
        let start = std::time::Instant::now();
        assert!(matches!(render("{{ v60 }}", &Chain), Rendered::Unknown(_)));
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }
}
