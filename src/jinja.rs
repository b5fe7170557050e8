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
//! * Templated values with statements other than `if` (`for`, `set`,
//!   macros) are rendered by minijinja once all their variables are known:
//!   the result is always a string (Ansible keeps the native type of a
//!   single output node) and operators there follow minijinja, not Python.
//!   Template files ([`render_file`]) are interpreted here, statements and
//!   all.
//! * A fact is assumed to exist (`ansible_default_ipv6 is defined` is true),
//!   and an unknown operand of `and`/`or` is assumed to be a boolean.
//!
//! Answered unknown although Ansible has an answer: Python regular
//! expression features the `regex` crate lacks (look-around,
//! back-references, `$` before a trailing newline in filters), `%`
//! formatting and `str.format`, object identity (`is sameas` on numbers or
//! strings), integers beyond 128 bits, an undefined value inside a list
//! literal, and every filter or test not implemented in `ansible`
//! (`to_yaml`, `json_query`, `ipaddr`, `b64decode`, `hash`, `sum`...).
//!
//! # Where things are
//!
//! This file holds the public API and its types. `eval` interprets an
//! expression tree, `template` renders templated values, `file` renders
//! template files as the `template` action does (known, conditional and
//! unknown lines: [`render_file`]), `names` lists the
//! variables a source uses, `py` is Python's value semantics, `ansible`
//! Ansible's filters and tests, `version` the `version` test, `env` the
//! minijinja environment for what is delegated to it, `lookup` the pure
//! lookup plugins (`lookup()`/`query()` and `with_<lookup>`; those that
//! read files are the caller's [`VarSource::run_lookup`]), and `bounds` what
//! keeps every evaluation finite; `builtins` holds Python's slicing, `range()`
//! and the methods templates call on values.

mod ansible;
mod bounds;
mod builtins;
mod env;
mod escape;
mod eval;
mod file;
mod lookup;
mod names;
mod py;
mod template;
#[cfg(test)]
mod tests;
mod version;

pub use ansible::boolean_text;
pub use escape::escape_backslashes;
pub use lookup::{
    LookupOutcome, MAX_LOOKUP_ITEMS, RUNTIME_LOOKUPS, pure_lookup, short_name as lookup_name,
    unwrap_lookup,
};

use bounds::{Nesting, parseable, spend};
use env::{ENV, Fail};
pub use file::{
    Condition, Coverage, FileOptions, FileText, Line, NoTemplates, TemplateLoader, UNKNOWN_MARK,
    describe, render_file,
};
use std::collections::BTreeSet;

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

    /// Runs a lookup plugin that is not pure (reads files on the
    /// controller: `fileglob`, `first_found`, `file`, `template`) over
    /// templated terms. `None`: not answered here (the lookup is unknown).
    fn run_lookup(
        &self,
        _name: &str,
        _terms: &[serde_json::Value],
        _kwargs: &[(String, serde_json::Value)],
    ) -> Option<LookupOutcome> {
        None
    }
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

fn unknown_set(items: impl IntoIterator<Item = Unknown>) -> BTreeSet<Unknown> {
    items.into_iter().collect()
}
