//! Rendering templated strings the way ansible-core 2.19's `Templar.template`
//! does.
//!
//! Templates made of text, `{{ }}` and `{% if %}` (the vast majority of
//! variable values) are interpreted here with the three-valued evaluator,
//! so unknowns stay precise and a single expression node keeps its native
//! type. Templates with other statements (`for`, `set`, macros...) are
//! rendered by minijinja once every variable they use is known; that path
//! always yields a string and uses minijinja's operators (see the module
//! docs of [`super`]).

use super::eval::{Ev, Evaluator};
use super::names;
use super::py;
use super::{
    ENV, Fail, Lookup, Rendered, Unknown, UnknownWhy, VarSource, is_template, parseable, snippet,
};
use minijinja::machinery::ast::Stmt;
use minijinja::machinery::parse;
use minijinja::syntax::SyntaxConfig;
use minijinja::value::Value;
use std::collections::BTreeSet;

/// Ansible's Jinja environment: `trim_blocks` on; trailing newlines are
/// restored after rendering (see [`restore_newlines`]).
pub(crate) fn syntax() -> SyntaxConfig {
    static SYNTAX: std::sync::OnceLock<SyntaxConfig> = std::sync::OnceLock::new();
    SYNTAX
        .get_or_init(|| {
            SyntaxConfig::builder()
                .trim_blocks(true)
                .keep_trailing_newline(false)
                .build()
                .unwrap_or_default()
        })
        .clone()
}

pub(crate) fn render(template: &str, vars: &dyn VarSource) -> Rendered {
    if !is_template(template) {
        return Rendered::Value(serde_json::Value::String(template.to_string()));
    }
    match Shape::of(template) {
        Some(shape) => render_parsed(template, shape.root.as_ref(), shape.simple, vars, || {
            shape.names()
        }),
        None => render_unremembered(template, vars),
    }
}

/// [`render`] with the template parsed for this render only (when the memo
/// is full).
pub(crate) fn render_unremembered(template: &str, vars: &dyn VarSource) -> Rendered {
    let root = parse_bounded(template);
    let simple = root.as_ref().is_some_and(is_simple);
    let walked = std::cell::OnceCell::new();
    render_parsed(template, root.as_ref(), simple, vars, || {
        walked.get_or_init(|| names::walk(template))
    })
}

/// Renders a parsed template (`None`: not parseable within the bounds).
fn render_parsed<'n>(
    template: &str,
    root: Option<&Stmt<'_>>,
    simple: bool,
    vars: &dyn VarSource,
    names: impl FnOnce() -> &'n [String],
) -> Rendered {
    let Some(Stmt::Template(root)) = root else {
        return too_complex(template);
    };
    if !simple {
        return render_with_minijinja(template, names(), vars);
    }
    let mut ev = Evaluator::new(template, vars, false);
    let mut nodes = Vec::new();
    let mut unknown = BTreeSet::new();
    interpret(&root.children, &mut ev, &mut nodes, &mut unknown);
    ev.finish();
    if !unknown.is_empty() {
        return Rendered::Unknown(unknown.into_iter().collect());
    }
    // Jinja native concatenation as Ansible patches it: `None` nodes are
    // dropped, one node keeps its type, several are joined as strings.
    let value = match nodes.len() {
        0 => return Rendered::Value(serde_json::Value::Null),
        1 => match nodes.remove(0) {
            Piece::Raw(raw) => Value::from(raw),
            Piece::Value(v) => v,
        },
        _ => {
            // Joined into one buffer, which becomes the result: a template
            // file's text is copied once, not once per step (whole template
            // files are rendered for the catalog's content patterns).
            let mut joined = String::new();
            for n in &nodes {
                match n {
                    Piece::Raw(raw) => joined.push_str(raw),
                    Piece::Value(v) => match py::classify(v) {
                        py::Py::Str(s) => joined.push_str(s),
                        _ => joined.push_str(&py::py_repr(v)),
                    },
                }
            }
            add_dropped_newlines(template, &mut joined);
            return Rendered::Value(serde_json::Value::String(joined));
        }
    };
    let value = match value.as_str() {
        Some(s) => Value::from(restore_newlines(template, s)),
        None => value,
    };
    Rendered::Value(py::to_json(&value))
}

/// What a template's top level emits: its own text, or a value.
enum Piece<'t> {
    Raw(&'t str),
    Value(Value),
}

/// What a template's text alone decides: its syntax tree (when it parses
/// within the bounds), whether the evaluator interprets it ([`simple`]) or
/// minijinja renders it, and the variables it uses. The same texts are
/// rendered for every task, loop item and play that uses them, template
/// files among them, so each text is parsed once for the process.
pub(crate) struct Shape {
    root: Option<Stmt<'static>>,
    pub(crate) simple: bool,
    names: std::sync::OnceLock<Vec<String>>,
}

/// The memo keeps at most this many bytes of template text. Its texts live
/// as long as the process (their syntax trees borrow them), so past this
/// bound templates are parsed again on each render instead.
const SHAPE_MEMO_MAX_BYTES: usize = 16 * 1024 * 1024;

type ShapeMemo = std::sync::Mutex<(crate::HashMap<&'static str, std::sync::Arc<Shape>>, usize)>;

impl Shape {
    /// The shape of `template`, parsed on first sight; `None` when the memo
    /// is full and the text is not in it.
    pub(crate) fn of(template: &str) -> Option<std::sync::Arc<Shape>> {
        static MEMO: std::sync::OnceLock<ShapeMemo> = std::sync::OnceLock::new();
        let memo = MEMO.get_or_init(ShapeMemo::default);
        let lock = || {
            memo.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(s) = lock().0.get(template) {
            return Some(std::sync::Arc::clone(s));
        }
        if lock().1 + template.len() > SHAPE_MEMO_MAX_BYTES {
            return None;
        }
        // Parsed outside the lock; a text two threads parse at once is kept
        // once (the other copy is the only one leaked in vain).
        let text: &'static str = Box::leak(template.into());
        let shape = std::sync::Arc::new(Shape::compute(text));
        let mut m = lock();
        if let Some(s) = m.0.get(template) {
            return Some(std::sync::Arc::clone(s));
        }
        m.1 += text.len();
        m.0.insert(text, std::sync::Arc::clone(&shape));
        Some(shape)
    }

    fn compute(template: &'static str) -> Shape {
        let root = parse_bounded(template);
        Shape {
            simple: root.as_ref().is_some_and(is_simple),
            names: if root.is_some() {
                std::sync::OnceLock::new()
            } else {
                std::sync::OnceLock::from(Vec::new())
            },
            root,
        }
    }

    /// The variables the template uses.
    pub(crate) fn names(&self) -> &[String] {
        self.names.get_or_init(|| {
            self.root
                .as_ref()
                .map_or_else(Vec::new, names::walk_template)
        })
    }
}

/// The syntax tree of a template that is parseable within the bounds and
/// parses.
fn parse_bounded(template: &str) -> Option<Stmt<'_>> {
    parseable(template)
        .then(|| parse(template, "<template>", syntax()).ok())
        .flatten()
}

/// A parsed template made of text, expressions and `if` only?
fn is_simple(root: &Stmt<'_>) -> bool {
    matches!(root, Stmt::Template(t) if simple(&t.children))
}

fn too_complex(template: &str) -> Rendered {
    Rendered::Unknown(vec![Unknown::new(
        snippet(template),
        UnknownWhy::TooComplex,
    )])
}

/// Ansible re-adds trailing newlines Jinja dropped, to match the source.
fn restore_newlines(template: &str, out: &str) -> String {
    let mut s = out.to_string();
    add_dropped_newlines(template, &mut s);
    s
}

/// [`restore_newlines`] on a rendering of `template` in place.
fn add_dropped_newlines(template: &str, out: &mut String) {
    let count = |s: &str| s.len() - s.trim_end_matches('\n').len();
    let missing = count(template).saturating_sub(count(out));
    out.extend(std::iter::repeat_n('\n', missing));
}

/// Only text, expressions and `if` (recursively)?
fn simple(stmts: &[Stmt<'_>]) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::EmitRaw(_) | Stmt::EmitExpr(_) => true,
        Stmt::IfCond(c) => simple(&c.true_body) && simple(&c.false_body),
        _ => false,
    })
}

fn interpret<'t>(
    stmts: &[Stmt<'t>],
    ev: &mut Evaluator<'_>,
    nodes: &mut Vec<Piece<'t>>,
    unknown: &mut BTreeSet<Unknown>,
) {
    for s in stmts {
        match s {
            Stmt::EmitRaw(r) if !r.raw.is_empty() => nodes.push(Piece::Raw(r.raw)),
            Stmt::EmitExpr(x) => match ev.eval(&x.expr) {
                Ev::Val(v) if v.is_none() => {}
                Ev::Val(v) => nodes.push(Piece::Value(v)),
                Ev::Undef(name) => {
                    unknown.insert(Unknown::new(name, UnknownWhy::Unset));
                }
                Ev::Unk(more) => unknown.extend(more),
            },
            Stmt::IfCond(c) => match ev.condition(&c.expr) {
                Ok(true) => interpret(&c.true_body, ev, nodes, unknown),
                Ok(false) => interpret(&c.false_body, ev, nodes, unknown),
                Err(Ev::Unk(more)) => unknown.extend(more),
                Err(Ev::Undef(name)) => {
                    unknown.insert(Unknown::new(name, UnknownWhy::Unset));
                }
                Err(Ev::Val(_)) => {}
            },
            _ => {}
        }
    }
}

/// Renders with minijinja once every variable the template uses is known.
fn render_with_minijinja(template: &str, names: &[String], vars: &dyn VarSource) -> Rendered {
    let mut unknown = Vec::new();
    let mut ctx: Vec<(String, Value)> = Vec::new();
    for name in names {
        match vars.lookup(name) {
            Lookup::Value(j) => ctx.push((name.clone(), py::from_json(&j))),
            Lookup::Missing => {}
            Lookup::Unknown(why) => unknown.push(Unknown::new(name, why)),
        }
    }
    if !unknown.is_empty() {
        unknown.sort();
        unknown.dedup();
        return Rendered::Unknown(unknown);
    }
    let ctx = Value::from_pairs(ctx);
    match ENV.render_str(template, ctx) {
        Ok(s) => Rendered::Value(serde_json::Value::String(restore_newlines(template, &s))),
        Err(e) => {
            let u = match Fail::from_minijinja(&e) {
                Fail::Undefined(n) if !n.is_empty() => Unknown::new(n, UnknownWhy::Unset),
                Fail::Undefined(_) => Unknown::new(snippet(template), UnknownWhy::Unset),
                Fail::Invalid(m) => Unknown::failure(snippet(template), m),
                Fail::Lookup(_) => Unknown::new(snippet(template), UnknownWhy::Lookup),
                Fail::TooComplex(_) => Unknown::new(snippet(template), UnknownWhy::TooComplex),
            };
            Rendered::Unknown(vec![u])
        }
    }
}
