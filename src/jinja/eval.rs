//! The three-valued interpreter of Jinja expression trees.
//!
//! Walks minijinja's AST node by node. A node's value is known, known to be
//! undefined, or unknown with the reasons it depends on; the boolean
//! structure (`and`, `or`, `not`, `if`) combines them with Kleene logic and
//! every other node needs all its operands known. Operators follow Python
//! ([`super::py`]), filters and tests follow Ansible ([`super::ansible`]).

use super::ansible::{self, Args};
use super::builtins::{method, py_slice, range};
use super::py::{self, Py};
use super::{
    ENV, Fail, Lookup, MAX_AST_DEPTH, MAX_RENDERED_LEN, Rendered, Unknown, UnknownWhy, VarSource,
    parseable, snippet, spend, template, unknown_set,
};
use crate::HashMap;
use minijinja::State;
use minijinja::machinery::ast::{self, BinOpKind, CallArg, CompareOpKind, Expr, UnaryOpKind};
use minijinja::machinery::parse_expr;
use minijinja::value::{Value, ValueKind};
use std::collections::BTreeSet;

/// The value of one node.
#[derive(Debug, Clone)]
pub(crate) enum Ev {
    /// Known (never `Value::UNDEFINED`: that is `Undef`).
    Val(Value),
    /// Known to be undefined; the root variable it came from.
    Undef(String),
    /// Unknown, with what it depends on.
    Unk(BTreeSet<Unknown>),
}

impl Ev {
    pub(crate) fn unk(var: impl Into<String>, why: UnknownWhy) -> Ev {
        Ev::Unk(unknown_set([Unknown::new(var, why)]))
    }

    fn val(v: Value) -> Ev {
        Ev::Val(v)
    }
}

/// Parses and evaluates one expression. `conditional` enables Ansible's
/// rendering of templates inside string constants (conditionals only).
pub(crate) fn evaluate(src: &str, vars: &dyn VarSource, conditional: bool) -> Ev {
    if !parseable(src) {
        return Ev::unk(snippet(src), UnknownWhy::TooComplex);
    }
    let Ok(ast) = parse_expr(src) else {
        return Ev::unk(snippet(src), UnknownWhy::TooComplex);
    };
    let mut ev = Evaluator::new(src, vars, conditional);
    let r = ev.eval(&ast);
    ev.finish();
    r
}

/// Converts an evaluation result into the public form.
pub(crate) fn to_rendered(ev: Ev) -> Rendered {
    match ev {
        Ev::Val(v) => Rendered::Value(py::to_json(&v)),
        Ev::Undef(name) => Rendered::Unknown(vec![Unknown::new(name, UnknownWhy::Unset)]),
        Ev::Unk(set) => Rendered::Unknown(set.into_iter().collect()),
    }
}

/// The leftmost variable of an expression's source, for naming.
pub(crate) fn root_name(src: &str) -> String {
    parse_expr(src)
        .ok()
        .and_then(|e| root_var(&e).map(str::to_string))
        .unwrap_or_else(|| snippet(src))
}

/// The variable an access chain starts from (`a` in `a.b[0] | f`).
pub(crate) fn root_var<'a>(e: &'a Expr<'a>) -> Option<&'a str> {
    match e {
        Expr::Var(v) => Some(v.id),
        Expr::GetAttr(g) => root_var(&g.expr),
        Expr::GetItem(g) => root_var(&g.expr),
        Expr::Slice(s) => root_var(&s.expr),
        Expr::Filter(f) => f.expr.as_ref().and_then(root_var),
        Expr::Test(t) => root_var(&t.expr),
        Expr::Call(c) => match &c.expr {
            Expr::GetAttr(g) => root_var(&g.expr),
            _ => None,
        },
        _ => None,
    }
}

/// The first child of nodes whose source starts with that child (a
/// node's own span may start at its operator, e.g. a filter's name).
fn first_child<'a>(e: &'a Expr<'a>) -> Option<&'a Expr<'a>> {
    match e {
        Expr::BinOp(b) => Some(&b.left),
        Expr::Compare(c) => Some(&c.expr),
        Expr::Filter(f) => f.expr.as_ref(),
        Expr::Test(t) => Some(&t.expr),
        Expr::GetAttr(g) => Some(&g.expr),
        Expr::GetItem(g) => Some(&g.expr),
        Expr::Slice(s) => Some(&s.expr),
        Expr::Call(c) => Some(&c.expr),
        Expr::IfExpr(i) => Some(&i.true_expr),
        _ => None,
    }
}

fn start_offset(e: &Expr<'_>) -> usize {
    let own = e.span().start_offset as usize;
    match (e, first_child(e)) {
        // `not x`/`is not` wrap their operand; the operand may start first.
        (Expr::UnaryOp(u), _) => own.min(start_offset(&u.expr)),
        (_, Some(child)) => own.min(start_offset(child)),
        (_, None) => own,
    }
}

/// What a template file's own statements define (loop variables, `set`
/// targets, macros), looked up before the caller's variables.
pub(crate) trait Locals {
    /// A local variable's value, when the template defines `name`.
    fn local(&self, name: &str) -> Option<Ev>;
    /// Whether `name` is a macro the template defines (or `caller`).
    fn is_macro(&self, name: &str) -> bool;
    /// Calls the macro `name` with known arguments.
    fn call(&self, name: &str, args: Args) -> Ev;
}

pub(crate) struct Evaluator<'a> {
    vars: &'a dyn VarSource,
    locals: Option<&'a dyn Locals>,
    src: &'a str,
    state: State<'static, 'static>,
    /// Every variable looked up so far in this evaluation: a name is asked
    /// of the [`VarSource`] once.
    memo: HashMap<String, Ev>,
    depth: usize,
    conditional: bool,
    /// Fuel already reported to the thread's total.
    reported: u64,
}

impl<'a> Evaluator<'a> {
    pub(crate) fn new(src: &'a str, vars: &'a dyn VarSource, conditional: bool) -> Self {
        Evaluator {
            vars,
            locals: None,
            src,
            state: ENV.empty_state(),
            memo: HashMap::default(),
            depth: 0,
            conditional,
            reported: 0,
        }
    }

    /// The evaluator of a template file's expression, seeing its locals.
    pub(crate) fn with_locals(mut self, locals: &'a dyn Locals) -> Self {
        self.locals = Some(locals);
        self
    }

    /// Reports the fuel spent to the thread's total.
    pub(crate) fn finish(&mut self) {
        let _ = self.sync_fuel();
    }

    /// Forwards newly consumed fuel to the thread total; `false` when the
    /// total is exhausted.
    fn sync_fuel(&mut self) -> bool {
        let consumed = self.state.fuel_levels().map_or(0, |(c, _)| c);
        let delta = consumed.saturating_sub(self.reported);
        self.reported = consumed;
        spend(delta)
    }

    fn charge(&mut self, fuel: u64) -> Result<(), Fail> {
        let out = || Fail::TooComplex("fuel exhausted".into());
        self.state.consume_fuel(fuel).map_err(|_| out())?;
        if self.sync_fuel() { Ok(()) } else { Err(out()) }
    }

    /// Charges for a value we built and enforces [`MAX_RENDERED_LEN`].
    fn charge_value(&mut self, v: &Value) -> Result<(), Fail> {
        let size = py::size_of(v, MAX_RENDERED_LEN);
        if size > MAX_RENDERED_LEN {
            return Err(Fail::TooComplex("value exceeds the size bound".into()));
        }
        self.charge(1 + size as u64 / 64)
    }

    pub(crate) fn text(&self, e: &Expr<'_>) -> String {
        let start = start_offset(e);
        let end = e.span().end_offset as usize;
        self.src
            .get(start..end)
            .map_or_else(|| snippet(self.src), snippet)
    }

    fn root(&self, e: &Expr<'_>) -> String {
        root_var(e).map_or_else(|| self.text(e), str::to_string)
    }

    /// Turns a failure at node `e` into an unknown.
    fn fail(&self, f: Fail, e: &Expr<'_>) -> Ev {
        match f {
            Fail::Invalid(m) => Ev::Unk(unknown_set([Unknown::failure(self.text(e), m)])),
            Fail::TooComplex(_) => Ev::unk(self.text(e), UnknownWhy::TooComplex),
            Fail::Undefined(name) if name.is_empty() => Ev::unk(self.root(e), UnknownWhy::Unset),
            Fail::Undefined(name) => Ev::unk(name, UnknownWhy::Unset),
            Fail::Lookup(_) => Ev::unk(self.text(e), UnknownWhy::Lookup),
        }
    }

    /// Wraps a computed value: charges for it, and maps an undefined
    /// result (e.g. `first` of an empty list) to `Undef`.
    fn produced(&mut self, r: Result<Value, Fail>, e: &Expr<'_>, undef_root: &Expr<'_>) -> Ev {
        match r {
            Ok(v) if v.is_undefined() => Ev::Undef(self.root(undef_root)),
            Ok(v) => match self.charge_value(&v) {
                Ok(()) => Ev::val(v),
                Err(f) => self.fail(f, e),
            },
            Err(f) => self.fail(f, e),
        }
    }

    pub(crate) fn eval(&mut self, e: &Expr<'_>) -> Ev {
        if let Err(f) = self.charge(1) {
            return self.fail(f, e);
        }
        if self.depth >= MAX_AST_DEPTH {
            return Ev::unk(self.text(e), UnknownWhy::TooComplex);
        }
        self.depth += 1;
        let r = self.eval_node(e);
        self.depth -= 1;
        r
    }

    /// The value of `e` if known and defined; otherwise what it depends on.
    fn known(&mut self, e: &Expr<'_>) -> Result<Value, BTreeSet<Unknown>> {
        match self.eval(e) {
            Ev::Val(v) => Ok(v),
            Ev::Undef(name) => Err(unknown_set([Unknown::new(name, UnknownWhy::Unset)])),
            Ev::Unk(s) => Err(s),
        }
    }

    /// Evaluates several operands; all known, or the union of what they depend on.
    fn all_known(&mut self, es: &[&Expr<'_>]) -> Result<Vec<Value>, BTreeSet<Unknown>> {
        let mut vals = Vec::with_capacity(es.len());
        let mut unknown = BTreeSet::new();
        for e in es {
            match self.known(e) {
                Ok(v) => vals.push(v),
                Err(s) => unknown.extend(s),
            }
        }
        if unknown.is_empty() {
            Ok(vals)
        } else {
            Err(unknown)
        }
    }

    fn var(&mut self, name: &str) -> Ev {
        if let Some(ev) = self.locals.and_then(|l| l.local(name)) {
            return ev;
        }
        if let Some(ev) = self.memo.get(name) {
            return ev.clone();
        }
        let ev = match self.vars.lookup(name) {
            Lookup::Value(j) => Ev::val(py::from_json(&j)),
            Lookup::Missing => Ev::Undef(name.to_string()),
            Lookup::Unknown(why) => Ev::unk(name, why),
        };
        self.memo.insert(name.to_string(), ev.clone());
        ev
    }

    #[allow(clippy::too_many_lines)]
    fn eval_node(&mut self, e: &Expr<'_>) -> Ev {
        match e {
            Expr::Var(v) => self.var(v.id),
            Expr::Const(c) => self.constant(&c.value, e),
            Expr::List(l) => {
                let items: Vec<&Expr<'_>> = l.items.iter().collect();
                match self.all_known(&items) {
                    Ok(vals) => self.produced(Ok(Value::from(vals)), e, e),
                    Err(s) => Ev::Unk(s),
                }
            }
            Expr::Tuple(t) => {
                let items: Vec<&Expr<'_>> = t.items.iter().collect();
                match self.all_known(&items) {
                    Ok(vals) => self.produced(Ok(py::make_seq(vals, true)), e, e),
                    Err(s) => Ev::Unk(s),
                }
            }
            Expr::Map(m) => {
                let items: Vec<&Expr<'_>> = m.keys.iter().chain(&m.values).collect();
                match self.all_known(&items) {
                    Ok(vals) => {
                        let (keys, values) = vals.split_at(m.keys.len());
                        let mut pairs: Vec<(Value, Value)> = Vec::new();
                        for (k, v) in keys.iter().zip(values) {
                            if let Some(slot) = pairs.iter_mut().find(|(pk, _)| py::eq(pk, k)) {
                                slot.1 = v.clone();
                            } else {
                                pairs.push((k.clone(), v.clone()));
                            }
                        }
                        self.produced(Ok(Value::from_pairs(pairs)), e, e)
                    }
                    Err(s) => Ev::Unk(s),
                }
            }
            Expr::UnaryOp(u) => match u.op {
                UnaryOpKind::Not => match self.truth(&u.expr) {
                    Ok(b) => Ev::val(Value::from(!b)),
                    Err(ev) => ev,
                },
                UnaryOpKind::Neg => match self.known(&u.expr) {
                    Ok(v) => self.produced(py::neg(&v), e, e),
                    Err(s) => Ev::Unk(s),
                },
            },
            Expr::BinOp(b) => self.binop(b, e),
            Expr::Compare(c) => self.compare_chain(c, e),
            Expr::IfExpr(i) => self.if_expr(i, e),
            Expr::Filter(f) => self.filter(f, e),
            Expr::Test(t) => self.test(t, e),
            Expr::GetAttr(g) => {
                let base = self.eval(&g.expr);
                self.get_attr(base, g.name, e)
            }
            Expr::GetItem(g) => {
                let base = self.eval(&g.expr);
                let sub = match self.known(&g.subscript_expr) {
                    Ok(v) => v,
                    Err(mut s) => {
                        if let Ev::Unk(more) = base {
                            s.extend(more);
                        }
                        return Ev::Unk(s);
                    }
                };
                self.get_item(base, &sub, e)
            }
            Expr::Slice(s) => self.slice(s, e),
            Expr::Call(c) => self.call(c, e),
        }
    }

    fn constant(&mut self, v: &Value, e: &Expr<'_>) -> Ev {
        // ansible-core 2.19 still renders templates found in string
        // constants of a conditional (deprecated, removed in 2.23).
        if let Some(s) = v
            .as_str()
            .filter(|s| self.conditional && (s.contains("{{") || s.contains("{%")))
        {
            return match template::render(s, self.vars) {
                Rendered::Value(j) => Ev::val(py::from_json(&j)),
                Rendered::Unknown(u) => Ev::Unk(u.into_iter().collect()),
            };
        }
        let _ = e;
        Ev::val(v.clone())
    }

    /// Truthiness of a `{% if %}` test.
    pub(crate) fn condition(&mut self, e: &Expr<'_>) -> Result<bool, Ev> {
        self.truth(e)
    }

    /// Python truthiness of a node, or the unknown it yields.
    fn truth(&mut self, e: &Expr<'_>) -> Result<bool, Ev> {
        match self.eval(e) {
            Ev::Val(v) => py::truthy(&v).map_err(|f| self.fail(f, e)),
            Ev::Undef(name) => Err(Ev::unk(name, UnknownWhy::Unset)),
            Ev::Unk(s) => Err(Ev::Unk(s)),
        }
    }

    /// `and`/`or`: Python returns an operand, not a bool. With an unknown
    /// left side, a right side that is the boolean which decides the
    /// outcome (`false` for `and`, `true` for `or`) decides it, assuming
    /// the unknown is a boolean at run time.
    fn logic(&mut self, is_and: bool, left: &Expr<'_>, right: &Expr<'_>) -> Ev {
        let l = self.eval(left);
        let unknown_left = match l {
            Ev::Val(v) => {
                return match py::truthy(&v) {
                    Ok(t) if t == is_and => self.eval(right),
                    Ok(_) => Ev::val(v),
                    Err(f) => self.fail(f, left),
                };
            }
            Ev::Undef(name) => unknown_set([Unknown::new(name, UnknownWhy::Unset)]),
            Ev::Unk(s) => s,
        };
        match self.eval(right) {
            Ev::Val(v)
                if may_assume(&unknown_left)
                    && matches!(py::classify(&v), Py::Bool(b) if b != is_and) =>
            {
                Ev::val(v)
            }
            Ev::Val(_) => Ev::Unk(unknown_left),
            Ev::Undef(name) => {
                let mut s = unknown_left;
                s.insert(Unknown::new(name, UnknownWhy::Unset));
                Ev::Unk(s)
            }
            Ev::Unk(more) => {
                let mut s = unknown_left;
                s.extend(more);
                Ev::Unk(s)
            }
        }
    }

    fn binop(&mut self, b: &ast::BinOp<'_>, e: &Expr<'_>) -> Ev {
        let arith = match b.op {
            BinOpKind::ScAnd => return self.logic(true, &b.left, &b.right),
            BinOpKind::ScOr => return self.logic(false, &b.left, &b.right),
            BinOpKind::Add => Some(py::Arith::Add),
            BinOpKind::Sub => Some(py::Arith::Sub),
            BinOpKind::Mul => Some(py::Arith::Mul),
            BinOpKind::Div => Some(py::Arith::Div),
            BinOpKind::FloorDiv => Some(py::Arith::FloorDiv),
            BinOpKind::Rem => Some(py::Arith::Rem),
            BinOpKind::Pow => Some(py::Arith::Pow),
            _ => None,
        };
        let (l, r) = match self.all_known(&[&b.left, &b.right]) {
            Ok(v) => (v[0].clone(), v[1].clone()),
            Err(s) => return Ev::Unk(s),
        };
        let result = if let Some(op) = arith {
            py::arith(op, &l, &r)
        } else {
            match b.op {
                BinOpKind::Concat => {
                    let (ls, rs) = (py::py_str(&l), py::py_str(&r));
                    if ls.len() + rs.len() > MAX_RENDERED_LEN {
                        Err(Fail::TooComplex("value exceeds the size bound".into()))
                    } else {
                        Ok(Value::from(ls + &rs))
                    }
                }
                BinOpKind::In => py::contains(&r, &l).map(Value::from),
                BinOpKind::Eq => Ok(Value::from(py::eq(&l, &r))),
                BinOpKind::Ne => Ok(Value::from(!py::eq(&l, &r))),
                BinOpKind::Lt => compare(&l, &r, "<").map(Value::from),
                BinOpKind::Lte => compare(&l, &r, "<=").map(Value::from),
                BinOpKind::Gt => compare(&l, &r, ">").map(Value::from),
                _ => compare(&l, &r, ">=").map(Value::from),
            }
        };
        self.produced(result, e, e)
    }

    /// `a < b < c`: evaluated pairwise, stopping at the first known false.
    fn compare_chain(&mut self, c: &ast::Compare<'_>, e: &Expr<'_>) -> Ev {
        let mut unknown = BTreeSet::new();
        let mut left = self.known(&c.expr);
        for op in &c.ops {
            let right = self.known(&op.expr);
            match (&left, &right) {
                (Ok(l), Ok(r)) => {
                    let res = match op.op {
                        CompareOpKind::Eq => Ok(py::eq(l, r)),
                        CompareOpKind::Ne => Ok(!py::eq(l, r)),
                        CompareOpKind::Lt => compare(l, r, "<"),
                        CompareOpKind::Lte => compare(l, r, "<="),
                        CompareOpKind::Gt => compare(l, r, ">"),
                        CompareOpKind::Gte => compare(l, r, ">="),
                        CompareOpKind::In => py::contains(r, l),
                        CompareOpKind::NotIn => py::contains(r, l).map(|b| !b),
                    };
                    match res {
                        Ok(false) if may_assume(&unknown) => return Ev::val(Value::from(false)),
                        Ok(false) => return Ev::Unk(unknown),
                        Ok(true) => {}
                        Err(f) if unknown.is_empty() => return self.fail(f, e),
                        Err(f) => {
                            if let Ev::Unk(more) = self.fail(f, e) {
                                unknown.extend(more);
                            }
                        }
                    }
                }
                (l, r) => {
                    for side in [l, r] {
                        if let Err(s) = side {
                            unknown.extend(s.iter().cloned());
                        }
                    }
                }
            }
            left = right;
        }
        if unknown.is_empty() {
            Ev::val(Value::from(true))
        } else {
            Ev::Unk(unknown)
        }
    }

    fn if_expr(&mut self, i: &ast::IfExpr<'_>, e: &Expr<'_>) -> Ev {
        match self.truth(&i.test_expr) {
            Ok(true) => self.eval(&i.true_expr),
            Ok(false) => match &i.false_expr {
                Some(f) => self.eval(f),
                None => Ev::Undef(self.text(e)),
            },
            Err(Ev::Unk(mut s)) => {
                let t = self.eval(&i.true_expr);
                let f = match &i.false_expr {
                    Some(f) => self.eval(f),
                    None => Ev::Undef(self.text(e)),
                };
                match (&t, &f) {
                    (Ev::Val(a), Ev::Val(b))
                        if py::type_name(a) == py::type_name(b) && py::eq(a, b) =>
                    {
                        t
                    }
                    _ => {
                        for branch in [t, f] {
                            match branch {
                                Ev::Unk(more) => s.extend(more),
                                Ev::Undef(name) => {
                                    s.insert(Unknown::new(name, UnknownWhy::Unset));
                                }
                                Ev::Val(_) => {}
                            }
                        }
                        Ev::Unk(s)
                    }
                }
            }
            Err(other) => other,
        }
    }

    /// Evaluates call arguments; splats are not modelled.
    fn args(&mut self, call_args: &[CallArg<'_>], e: &Expr<'_>) -> Result<Args, Ev> {
        let mut args = Args::default();
        let mut unknown = BTreeSet::new();
        for a in call_args {
            let (name, expr) = match a {
                CallArg::Pos(x) => (None, x),
                CallArg::Kwarg(n, x) => (Some(*n), x),
                CallArg::PosSplat(_) | CallArg::KwargSplat(_) => {
                    return Err(Ev::unk(self.text(e), UnknownWhy::TooComplex));
                }
            };
            match self.known(expr) {
                Ok(v) => match name {
                    Some(n) => args.kw.push((n.to_string(), v)),
                    None => args.pos.push(v),
                },
                Err(s) => unknown.extend(s),
            }
        }
        if unknown.is_empty() {
            Ok(args)
        } else {
            Err(Ev::Unk(unknown))
        }
    }

    fn filter(&mut self, f: &ast::Filter<'_>, e: &Expr<'_>) -> Ev {
        let Some(name) = plugin_name(f.name) else {
            return Ev::unk(self.text(e), UnknownWhy::TooComplex);
        };
        let Some(subject_expr) = &f.expr else {
            return Ev::unk(self.text(e), UnknownWhy::TooComplex);
        };
        let subject = self.eval(subject_expr);
        match name {
            // Ansible's `default` accepts an undefined subject; its
            // arguments only matter when the default is taken.
            "default" | "d" => {
                let v = match subject {
                    // A variable whose own template is undefined is
                    // undefined to `default` as well.
                    Ev::Unk(s) if bare_var_reason(subject_expr, &s) == Some(&UnknownWhy::Unset) => {
                        Value::UNDEFINED
                    }
                    Ev::Unk(s) => return Ev::Unk(s),
                    Ev::Undef(_) => Value::UNDEFINED,
                    Ev::Val(v) => v,
                };
                match self.args(&f.args, e) {
                    Ok(args) => {
                        let r = ansible::filter(&mut self.state, name, &v, &args)
                            .unwrap_or_else(|| unreachable_filter(name));
                        self.produced(r, e, e)
                    }
                    Err(ev) if v.is_undefined() => ev,
                    // A defined subject is returned unless `boolean` is
                    // asked for and it is falsy; unknown arguments then
                    // only matter in that case.
                    Err(ev) => match (f.args.len() >= 2, py::truthy(&v)) {
                        (false, _) | (true, Ok(true)) => Ev::val(v),
                        _ => ev,
                    },
                }
            }
            // `ternary` picks one argument; the other may be anything.
            "ternary" => {
                let v = match subject {
                    Ev::Val(v) => v,
                    Ev::Undef(name) => return Ev::unk(name, UnknownWhy::Unset),
                    Ev::Unk(s) => return Ev::Unk(s),
                };
                let pick = if v.is_none() && f.args.len() >= 3 {
                    2
                } else {
                    match py::truthy(&v) {
                        Ok(true) => 0,
                        Ok(false) => 1,
                        Err(err) => return self.fail(err, e),
                    }
                };
                let chosen = f.args.iter().enumerate().find_map(|(i, a)| match a {
                    CallArg::Pos(x) if i == pick => Some(x),
                    CallArg::Kwarg(n, x) if *n == ["true_val", "false_val", "none_val"][pick] => {
                        Some(x)
                    }
                    _ => None,
                });
                match chosen {
                    Some(x) => self.eval(x),
                    None => Ev::Unk(unknown_set([Unknown::failure(
                        self.text(e),
                        "ternary: missing argument",
                    )])),
                }
            }
            _ => {
                let (v, args) = match (subject, self.args(&f.args, e)) {
                    (Ev::Val(v), Ok(args)) => (v, args),
                    (Ev::Undef(n), Ok(_)) => return Ev::unk(n, UnknownWhy::Unset),
                    (s, a) => return merge_unknown(s, a.err()),
                };
                match ansible::filter(&mut self.state, name, &v, &args) {
                    Some(r) => {
                        // `map(attribute=...)` on a missing attribute yields
                        // undefined items, which Ansible reports at once.
                        let r = r.and_then(|out| match py::seq_items(&out) {
                            Some(items) if items.iter().any(Value::is_undefined) => {
                                Err(Fail::Undefined(String::new()))
                            }
                            _ => Ok(out),
                        });
                        self.produced(r, e, subject_expr)
                    }
                    None => Ev::unk(self.text(e), UnknownWhy::TooComplex),
                }
            }
        }
    }

    fn test(&mut self, t: &ast::Test<'_>, e: &Expr<'_>) -> Ev {
        let Some(name) = plugin_name(t.name) else {
            return Ev::unk(self.text(e), UnknownWhy::TooComplex);
        };
        let subject = self.eval(&t.expr);
        if matches!(name, "defined" | "undefined") {
            let defined = match subject {
                Ev::Val(v) => !v.is_undefined(),
                Ev::Undef(_) => false,
                Ev::Unk(s) => match bare_var_reason(&t.expr, &s) {
                    // The variable itself (not an attribute of it) will
                    // exist at run time, or is known to fail to render
                    // (Ansible then treats it as undefined).
                    Some(
                        UnknownWhy::Fact
                        | UnknownWhy::Registered
                        | UnknownWhy::RuntimeFact
                        | UnknownWhy::Vault,
                    ) => true,
                    Some(UnknownWhy::Unset) => false,
                    _ => return Ev::Unk(s),
                },
            };
            return Ev::val(Value::from(defined == (name == "defined")));
        }
        let (v, args) = match (subject, self.args(&t.args, e)) {
            (Ev::Val(v), Ok(args)) => (v, args),
            (Ev::Undef(n), Ok(_)) => return Ev::unk(n, UnknownWhy::Unset),
            (s, a) => return merge_unknown(s, a.err()),
        };
        match ansible::test(name, &v, &args) {
            Some(Ok(b)) => Ev::val(Value::from(b)),
            Some(Err(f)) => self.fail(f, e),
            None => Ev::unk(self.text(e), UnknownWhy::TooComplex),
        }
    }

    /// Jinja2 `getattr`: a dict key; anything else is undefined (methods
    /// are handled by [`Self::call`]). Undefined chains stay undefined, as
    /// in ansible-core 2.19 (`x.y is defined` is false for undefined `x`).
    fn get_attr(&mut self, base: Ev, name: &str, e: &Expr<'_>) -> Ev {
        let v = match base {
            Ev::Val(v) => v,
            other => return other,
        };
        if v.kind() == ValueKind::Map
            && let Ok(val) = v.get_item(&Value::from(name))
            && !val.is_undefined()
        {
            return Ev::val(val);
        }
        Ev::Undef(self.root(e))
    }

    /// Jinja2 `getitem`: dict key, list/str index; otherwise undefined.
    fn get_item(&mut self, base: Ev, sub: &Value, e: &Expr<'_>) -> Ev {
        let v = match base {
            Ev::Val(v) => v,
            other => return other,
        };
        let index = |len: usize| -> Option<usize> {
            let i = match py::classify(sub) {
                Py::Int(i) => i,
                Py::Bool(b) => i128::from(b),
                _ => return None,
            };
            let len_i = i128::try_from(len).ok()?;
            let i = if i < 0 { i + len_i } else { i };
            usize::try_from(i).ok().filter(|i| *i < len)
        };
        // String keys: a direct lookup (the common case, and O(1)).
        if v.kind() == ValueKind::Map && sub.as_str().is_some() {
            return match v.get_item(sub) {
                Ok(val) if !val.is_undefined() => Ev::val(val),
                _ => Ev::Undef(self.root(e)),
            };
        }
        let found = match py::classify(&v) {
            Py::Map(pairs) => pairs
                .into_iter()
                .find(|(k, _)| py::eq(k, sub))
                .map(|(_, val)| val),
            Py::Seq(items, _) => index(items.len()).map(|i| items[i].clone()),
            Py::Str(s) => {
                let chars: Vec<char> = s.chars().collect();
                index(chars.len()).map(|i| Value::from(chars[i].to_string()))
            }
            _ => None,
        };
        found.map_or_else(|| Ev::Undef(self.root(e)), Ev::val)
    }

    fn slice(&mut self, s: &ast::Slice<'_>, e: &Expr<'_>) -> Ev {
        let mut exprs: Vec<&Expr<'_>> = vec![&s.expr];
        exprs.extend(s.start.iter().chain(&s.stop).chain(&s.step));
        let vals = match self.all_known(&exprs) {
            Ok(v) => v,
            Err(u) => return Ev::Unk(u),
        };
        let mut it = vals.into_iter();
        let base = it.next().unwrap_or_default();
        let mut bound = |present: bool| -> Result<Option<i128>, Fail> {
            if !present {
                return Ok(None);
            }
            let v = it.next().unwrap_or_default();
            match py::classify(&v) {
                Py::None => Ok(None),
                Py::Int(i) => Ok(Some(i)),
                Py::Bool(b) => Ok(Some(i128::from(b))),
                _ => Err(Fail::Invalid(
                    "slice indices must be integers or None".into(),
                )),
            }
        };
        let r = (|| {
            let start = bound(s.start.is_some())?;
            let stop = bound(s.stop.is_some())?;
            let step = bound(s.step.is_some())?.unwrap_or(1);
            if step == 0 {
                return Err(Fail::Invalid("slice step cannot be zero".into()));
            }
            match py::classify(&base) {
                Py::Str(text) => {
                    let chars: Vec<Value> =
                        text.chars().map(|c| Value::from(c.to_string())).collect();
                    let picked = py_slice(&chars, start, stop, step);
                    Ok(Value::from(
                        picked.iter().map(py::py_str).collect::<String>(),
                    ))
                }
                Py::Seq(items, tuple) => {
                    Ok(py::make_seq(py_slice(&items, start, stop, step), tuple))
                }
                _ => Err(Fail::Invalid(format!(
                    "'{}' object is not subscriptable",
                    py::type_name(&base)
                ))),
            }
        })();
        self.produced(r, e, e)
    }

    /// `lookup(name, *terms, **kwargs)` / `query(...)`: pure lookups run
    /// here, file lookups by the caller's [`VarSource::run_lookup`], the
    /// others unknown (never run).
    fn lookup_call(&mut self, wantlist: bool, c: &ast::Call<'_>, e: &Expr<'_>) -> Ev {
        let args = match self.args(&c.args, e) {
            Ok(a) => a,
            Err(ev) => return ev,
        };
        let Some((name, terms)) = args.pos.split_first() else {
            return Ev::unk(self.text(e), UnknownWhy::Lookup);
        };
        let Some(name) = name.as_str() else {
            return Ev::unk(self.text(e), UnknownWhy::Lookup);
        };
        let terms: Vec<serde_json::Value> = terms.iter().map(py::to_json).collect();
        let mut wantlist = wantlist;
        let mut kwargs = Vec::new();
        for (k, v) in &args.kw {
            match k.as_str() {
                "wantlist" => wantlist = py::truthy(v).unwrap_or(false),
                // `errors=ignore/warn` changes what a failure gives: not modelled.
                "errors" => return Ev::unk(self.text(e), UnknownWhy::Lookup),
                _ => kwargs.push((k.clone(), py::to_json(v))),
            }
        }
        let outcome = super::pure_lookup(name, &terms, &kwargs)
            .or_else(|| self.vars.run_lookup(name, &terms, &kwargs));
        match outcome {
            Some(super::LookupOutcome::Items(items)) => {
                let v = if wantlist {
                    serde_json::Value::Array(items)
                } else {
                    super::unwrap_lookup(items)
                };
                self.produced(Ok(py::from_json(&v)), e, e)
            }
            Some(super::LookupOutcome::Failed(m)) => self.fail(Fail::Invalid(m), e),
            Some(super::LookupOutcome::Unknown(_)) | None => {
                Ev::unk(self.text(e), UnknownWhy::Lookup)
            }
        }
    }

    fn call(&mut self, c: &ast::Call<'_>, e: &Expr<'_>) -> Ev {
        match &c.expr {
            Expr::Var(f) if self.locals.is_some_and(|l| l.is_macro(f.id)) => {
                self.call_macro(f.id, &c.args, e)
            }
            // A macro of a template imported as a name (`m.name(...)`).
            Expr::GetAttr(g) if matches!(&g.expr, Expr::Var(m) if self.locals.is_some_and(|l| l.is_macro(&format!("{}.{}", m.id, g.name)))) =>
            {
                let name = match &g.expr {
                    Expr::Var(m) => format!("{}.{}", m.id, g.name),
                    _ => String::new(),
                };
                self.call_macro(&name, &c.args, e)
            }
            Expr::Var(f) => match f.id {
                "lookup" | "query" | "q" => self.lookup_call(f.id != "lookup", c, e),
                "now" => Ev::unk(self.text(e), UnknownWhy::Lookup),
                "range" => match self.args(&c.args, e) {
                    Ok(args) => self.produced(range(&args), e, e),
                    Err(ev) => ev,
                },
                "dict" => match self.args(&c.args, e) {
                    Ok(args) if args.pos.is_empty() => {
                        self.produced(Ok(Value::from_pairs(args.kw)), e, e)
                    }
                    Ok(_) => Ev::unk(self.text(e), UnknownWhy::TooComplex),
                    Err(ev) => ev,
                },
                _ => Ev::unk(self.text(e), UnknownWhy::TooComplex),
            },
            Expr::GetAttr(g) => {
                let receiver = self.eval(&g.expr);
                let (v, args) = match (receiver, self.args(&c.args, e)) {
                    (Ev::Val(v), Ok(args)) => (v, args),
                    (Ev::Undef(n), Ok(_)) => return Ev::unk(n, UnknownWhy::Unset),
                    (s, a) => return merge_unknown(s, a.err()),
                };
                self.produced(method(&v, g.name, &args), e, e)
            }
            _ => Ev::unk(self.text(e), UnknownWhy::TooComplex),
        }
    }
}

impl Evaluator<'_> {
    fn call_macro(&mut self, name: &str, call_args: &[CallArg<'_>], e: &Expr<'_>) -> Ev {
        match (self.args(call_args, e), self.locals) {
            (Ok(args), Some(l)) => l.call(name, args),
            (Err(ev), _) => ev,
            (Ok(_), None) => Ev::unk(self.text(e), UnknownWhy::TooComplex),
        }
    }
}

/// May an outcome that holds whatever these unknowns turn out to be be
/// taken as known? Not when one of them makes Ansible fail (an undefined
/// value, a type error, a cycle): then the task errors instead.
fn may_assume(unknowns: &BTreeSet<Unknown>) -> bool {
    unknowns
        .iter()
        .all(|u| u.error.is_none() && !matches!(u.why, UnknownWhy::Unset | UnknownWhy::Cycle))
}

/// An unknown bare variable's single reason (`x`, not `x.y`).
fn bare_var_reason<'s>(e: &Expr<'_>, unknowns: &'s BTreeSet<Unknown>) -> Option<&'s UnknownWhy> {
    match (e, unknowns.iter().next()) {
        (Expr::Var(var), Some(u)) if unknowns.len() == 1 && u.var == var.id => Some(&u.why),
        _ => None,
    }
}

/// Combines an operand's non-value result with unknown arguments.
fn merge_unknown(subject: Ev, args: Option<Ev>) -> Ev {
    let mut s = BTreeSet::new();
    for ev in std::iter::once(subject).chain(args) {
        match ev {
            Ev::Unk(more) => s.extend(more),
            Ev::Undef(name) => {
                s.insert(Unknown::new(name, UnknownWhy::Unset));
            }
            Ev::Val(_) => {}
        }
    }
    Ev::Unk(s)
}

fn unreachable_filter(name: &str) -> Result<Value, Fail> {
    Err(Fail::TooComplex(format!("filter {name}")))
}

/// Filter/test names: plain, or qualified with `ansible.builtin.` /
/// `ansible.legacy.`; other collections are not modelled.
fn plugin_name(name: &str) -> Option<&str> {
    let short = name
        .strip_prefix("ansible.builtin.")
        .or_else(|| name.strip_prefix("ansible.legacy."))
        .unwrap_or(name);
    (!short.contains('.')).then_some(short)
}

fn compare(l: &Value, r: &Value, op: &str) -> Result<bool, Fail> {
    Ok(py::cmp(l, r, op)?.is_some_and(|o| match op {
        "<" => o.is_lt(),
        "<=" => o.is_le(),
        ">" => o.is_gt(),
        _ => o.is_ge(),
    }))
}
