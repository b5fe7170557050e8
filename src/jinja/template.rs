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
    if template.len() >= SHAPE_MEMO_MIN_LEN {
        let shape = Shape::of(template);
        if !shape.parsed {
            return too_complex(template);
        }
        if !shape.simple {
            return render_with_minijinja(template, shape.names(template), vars);
        }
    } else if !parseable(template) {
        return too_complex(template);
    }
    let Ok(Stmt::Template(root)) = parse(template, "<template>", syntax()) else {
        return too_complex(template);
    };
    if !simple(&root.children) {
        return render_with_minijinja(template, &names::walk(template), vars);
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
        1 => nodes.remove(0),
        _ => Value::from(nodes.iter().map(py::py_str).collect::<String>()),
    };
    let value = match value.as_str() {
        Some(s) => Value::from(restore_newlines(template, s)),
        None => value,
    };
    Rendered::Value(py::to_json(&value))
}

/// What a template's text alone decides: whether it parses (within the
/// bounds), whether the evaluator interprets it ([`simple`]) or minijinja
/// renders it, and the variables it uses. Template files and long values are
/// rendered for every task and play that writes them (kubespray: ~600
/// renders of ~40 distinct files on the whole tree), so long texts keep
/// their shape for the process: it depends on the text only.
pub(crate) struct Shape {
    pub(crate) parsed: bool,
    pub(crate) simple: bool,
    names: std::sync::OnceLock<Vec<String>>,
}

/// Texts at least this long are remembered (shorter ones are cheap to scan).
pub(crate) const SHAPE_MEMO_MIN_LEN: usize = 256;
/// The memo is emptied when it holds more than this many bytes of text.
const SHAPE_MEMO_MAX_BYTES: usize = 64 * 1024 * 1024;

type ShapeMemo = std::sync::Mutex<(crate::HashMap<Box<str>, std::sync::Arc<Shape>>, usize)>;

impl Shape {
    /// The shape of `template`, remembered when it is long.
    pub(crate) fn of(template: &str) -> std::sync::Arc<Shape> {
        static MEMO: std::sync::OnceLock<ShapeMemo> = std::sync::OnceLock::new();
        if template.len() < SHAPE_MEMO_MIN_LEN {
            return std::sync::Arc::new(Shape::compute(template));
        }
        let memo = MEMO.get_or_init(ShapeMemo::default);
        let lock = || {
            memo.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(s) = lock().0.get(template) {
            return std::sync::Arc::clone(s);
        }
        let shape = std::sync::Arc::new(Shape::compute(template));
        let mut m = lock();
        if m.1 + template.len() > SHAPE_MEMO_MAX_BYTES {
            *m = Default::default();
        }
        m.1 += template.len();
        m.0.insert(template.into(), std::sync::Arc::clone(&shape));
        shape
    }

    fn compute(template: &str) -> Shape {
        let parsed = parseable(template)
            .then(|| parse(template, "<template>", syntax()).ok())
            .flatten();
        match parsed {
            Some(Stmt::Template(root)) => Shape {
                parsed: true,
                simple: simple(&root.children),
                names: std::sync::OnceLock::new(),
            },
            _ => Shape {
                parsed: false,
                simple: false,
                names: std::sync::OnceLock::from(Vec::new()),
            },
        }
    }

    /// The variables `template` (the text this shape is of) uses.
    pub(crate) fn names(&self, template: &str) -> &[String] {
        self.names.get_or_init(|| names::walk(template))
    }
}

fn too_complex(template: &str) -> Rendered {
    Rendered::Unknown(vec![Unknown::new(
        snippet(template),
        UnknownWhy::TooComplex,
    )])
}

/// Ansible re-adds trailing newlines Jinja dropped, to match the source.
fn restore_newlines(template: &str, out: &str) -> String {
    let count = |s: &str| s.len() - s.trim_end_matches('\n').len();
    let missing = count(template).saturating_sub(count(out));
    format!("{out}{}", "\n".repeat(missing))
}

/// Only text, expressions and `if` (recursively)?
fn simple(stmts: &[Stmt<'_>]) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::EmitRaw(_) | Stmt::EmitExpr(_) => true,
        Stmt::IfCond(c) => simple(&c.true_body) && simple(&c.false_body),
        _ => false,
    })
}

fn interpret(
    stmts: &[Stmt<'_>],
    ev: &mut Evaluator<'_>,
    nodes: &mut Vec<Value>,
    unknown: &mut BTreeSet<Unknown>,
) {
    for s in stmts {
        match s {
            Stmt::EmitRaw(r) if !r.raw.is_empty() => nodes.push(Value::from(r.raw)),
            Stmt::EmitExpr(x) => match ev.eval(&x.expr) {
                Ev::Val(v) if v.is_none() => {}
                Ev::Val(v) => nodes.push(v),
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
