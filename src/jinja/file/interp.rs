//! Runs a template file's statements into fragments: known text, unknown
//! output (with its reasons), and the two branches of a condition that is
//! not known statically.
//!
//! Scoping follows Jinja: a `for` body, a macro body and a `with` block
//! get a frame of their own (a `set` there does not leak out); `if`
//! branches do not. After the branches of an unknown condition a variable
//! the branches set differently is unknown.

use super::super::ansible::Args;
use super::super::eval::{Ev, Evaluator, Locals};
use super::super::py::{self, Py};
use super::super::{MAX_RENDERED_LEN, Unknown, UnknownWhy, VarSource, snippet, spend};
use super::parsed::{self, Parsed};
use super::{
    Condition, FileOptions, MAX_CALL_DEPTH, MAX_INCLUDE_DEPTH, MAX_LOOP_ITEMS, TemplateLoader,
};
use minijinja::machinery::ast::{CallArg, Expr, Macro, Stmt};
use minijinja::value::Value;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

/// What the statements output.
#[derive(Debug, Clone)]
pub(crate) enum Frag {
    Text(String),
    /// Output that is not known, and why.
    Unknown(BTreeSet<Unknown>),
    /// The output of each branch of a condition not known statically.
    Branch {
        cond: Condition,
        then: Vec<Frag>,
        els: Vec<Frag>,
    },
}

/// A macro: where it is defined, and the `caller` it gets when a `call`
/// block calls it.
#[derive(Clone, Copy)]
struct MacroDef {
    file: &'static Parsed,
    decl: &'static Macro<'static>,
}

#[derive(Clone)]
enum Local {
    Val(Value),
    Unk(BTreeSet<Unknown>),
    Macro(MacroDef),
}

type Frame = crate::HashMap<String, Local>;

struct Interp<'r> {
    vars: &'r dyn VarSource,
    loader: &'r dyn TemplateLoader,
    opts: &'r FileOptions,
    frames: RefCell<Vec<Frame>>,
    /// The template whose statements run now (expressions are named by
    /// their text in it).
    cur: Cell<&'static Parsed>,
    calls: Cell<usize>,
    includes: Cell<usize>,
    out_len: Cell<usize>,
    /// The blocks of the templates that extend the one running, the
    /// deepest child's first.
    blocks: RefCell<Vec<(&'static str, &'static Parsed, &'static [Stmt<'static>])>>,
}

/// A failure that makes the whole file unknown: a bound hit, or a
/// statement Ansible does not accept.
type Failed = Unknown;

pub(crate) fn run(
    file: &'static Parsed,
    vars: &dyn VarSource,
    loader: &dyn TemplateLoader,
    opts: &FileOptions,
) -> Result<Vec<Frag>, Unknown> {
    let it = Interp {
        vars,
        loader,
        opts,
        frames: RefCell::new(vec![Frame::default()]),
        cur: Cell::new(file),
        calls: Cell::new(0),
        includes: Cell::new(0),
        out_len: Cell::new(0),
        blocks: RefCell::new(Vec::new()),
    };
    let mut out = Vec::new();
    it.template(file, &mut out)?;
    Ok(out)
}

fn unk(var: impl Into<String>, why: UnknownWhy) -> BTreeSet<Unknown> {
    BTreeSet::from([Unknown::new(var, why)])
}

fn ev_unknowns(ev: Ev) -> BTreeSet<Unknown> {
    match ev {
        Ev::Unk(s) => s,
        Ev::Undef(name) => unk(name, UnknownWhy::Unset),
        Ev::Val(_) => BTreeSet::new(),
    }
}

/// Every unknown a fragment list depends on (its conditions' included).
fn frag_unknowns(frags: &[Frag], out: &mut BTreeSet<Unknown>) {
    for f in frags {
        match f {
            Frag::Text(_) => {}
            Frag::Unknown(s) => out.extend(s.iter().cloned()),
            Frag::Branch { cond, then, els } => {
                out.extend(cond.why.iter().cloned());
                frag_unknowns(then, out);
                frag_unknowns(els, out);
            }
        }
    }
}

/// The text of fragments that are all known.
fn known_text(frags: &[Frag]) -> Option<String> {
    let mut s = String::new();
    for f in frags {
        match f {
            Frag::Text(t) => s.push_str(t),
            _ => return None,
        }
    }
    Some(s)
}

/// A value as template output shows it (`None` shows nothing).
fn shown(v: &Value) -> String {
    match py::classify(v) {
        Py::None => String::new(),
        Py::Str(s) => s.to_string(),
        _ => py::py_repr(v),
    }
}

impl Locals for Interp<'_> {
    fn local(&self, name: &str) -> Option<Ev> {
        let frames = self.frames.borrow();
        frames
            .iter()
            .rev()
            .find_map(|f| f.get(name))
            .map(|l| match l {
                Local::Val(v) => Ev::Val(v.clone()),
                Local::Unk(s) => Ev::Unk(s.clone()),
                Local::Macro(_) => Ev::unk(name, UnknownWhy::TooComplex),
            })
    }

    fn is_macro(&self, name: &str) -> bool {
        matches!(self.lookup_local(name), Some(Local::Macro(_)))
    }

    fn call(&self, name: &str, args: Args) -> Ev {
        let Some(Local::Macro(m)) = self.lookup_local(name) else {
            return Ev::unk(name, UnknownWhy::TooComplex);
        };
        let mut out = Vec::new();
        if let Err(u) = self.call_macro(m, args, None, &mut out) {
            return Ev::Unk(BTreeSet::from([u]));
        }
        match known_text(&out) {
            Some(s) => Ev::Val(Value::from_safe_string(s)),
            None => {
                let mut s = BTreeSet::new();
                frag_unknowns(&out, &mut s);
                if s.is_empty() {
                    s = unk(name, UnknownWhy::TooComplex);
                }
                Ev::Unk(s)
            }
        }
    }
}

impl Interp<'_> {
    fn lookup_local(&self, name: &str) -> Option<Local> {
        self.frames
            .borrow()
            .iter()
            .rev()
            .find_map(|f| f.get(name))
            .cloned()
    }

    fn bind(&self, name: &str, l: Local) {
        if let Some(f) = self.frames.borrow_mut().last_mut() {
            f.insert(name.to_string(), l);
        }
    }

    fn eval(&self, e: &Expr<'_>) -> Ev {
        let mut ev = Evaluator::new(self.cur.get().text, self.vars, false).with_locals(self);
        let r = ev.eval(e);
        ev.finish();
        r
    }

    fn condition(&self, e: &Expr<'_>) -> (Result<bool, Ev>, String) {
        let mut ev = Evaluator::new(self.cur.get().text, self.vars, false).with_locals(self);
        let r = ev.condition(e);
        // A test's span starts at its keyword.
        let text = ev.text(e);
        let text = ["if ", "elif "]
            .iter()
            .find_map(|k| text.strip_prefix(k))
            .map_or_else(|| text.clone(), |t| t.trim_start().to_string());
        ev.finish();
        (r, text)
    }

    fn text(&self, e: &Expr<'_>) -> String {
        Evaluator::new(self.cur.get().text, self.vars, false).text(e)
    }

    fn emit(&self, s: String, out: &mut Vec<Frag>) -> Result<(), Failed> {
        let len = self.out_len.get() + s.len();
        if len > MAX_RENDERED_LEN {
            return Err(Unknown::new(
                "the rendered file exceeds the size bound",
                UnknownWhy::TooComplex,
            ));
        }
        self.out_len.set(len);
        if !s.is_empty() {
            out.push(Frag::Text(s));
        }
        Ok(())
    }

    fn step() -> Result<(), Failed> {
        if spend(1) {
            Ok(())
        } else {
            Err(Unknown::new(
                "the template needs more work than the bound allows",
                UnknownWhy::TooComplex,
            ))
        }
    }

    /// A whole template: its body, or (with `extends`) its parent's with
    /// its blocks.
    fn template(&self, file: &'static Parsed, out: &mut Vec<Frag>) -> Result<(), Failed> {
        let body = file.body();
        let Some(parent) = body.iter().find_map(|s| match s {
            Stmt::Extends(x) => Some(&x.name),
            _ => None,
        }) else {
            return self.with_file(file, || self.exec(body, out));
        };
        let prev = self.cur.replace(file);
        let name = self.eval(parent);
        self.cur.set(prev);
        let name = match name {
            Ev::Val(v) => shown(&v),
            other => {
                out.push(Frag::Unknown(ev_unknowns(other)));
                return Ok(());
            }
        };
        for s in body {
            if let Stmt::Block(b) = s {
                self.blocks.borrow_mut().push((b.name, file, &b.body));
            }
        }
        // What a child sets at its top level is seen by its parent (the
        // child's other output is dropped, as Jinja does).
        self.with_file(file, || {
            for s in body {
                if matches!(
                    s,
                    Stmt::Set(_) | Stmt::Macro(_) | Stmt::Import(_) | Stmt::FromImport(_)
                ) {
                    self.exec(std::slice::from_ref(s), &mut Vec::new())?;
                }
            }
            Ok(())
        })?;
        match self.load(&name) {
            Ok(p) => self.nested(|| self.template(p, out)),
            Err(u) => {
                out.push(Frag::Unknown(BTreeSet::from([u])));
                Ok(())
            }
        }
    }

    fn with_file<T>(&self, file: &'static Parsed, f: impl FnOnce() -> T) -> T {
        let prev = self.cur.replace(file);
        let r = f();
        self.cur.set(prev);
        r
    }

    /// Inside one more include level.
    fn nested<T>(&self, f: impl FnOnce() -> Result<T, Failed>) -> Result<T, Failed> {
        let depth = self.includes.get();
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(Unknown::new(
                "templates include each other deeper than the bound",
                UnknownWhy::TooComplex,
            ));
        }
        self.includes.set(depth + 1);
        let r = f();
        self.includes.set(depth);
        r
    }

    /// A template by name from the loader, parsed; why not when it is not
    /// found or does not parse (its output is unknown).
    fn load(&self, name: &str) -> Result<&'static Parsed, Unknown> {
        let Some(text) = self.loader.load(name) else {
            return Err(Unknown::failure(
                name,
                format!("the template {name:?} is not found in the search path"),
            ));
        };
        let (body, opts) = self
            .opts
            .with_header(&text)
            .map_err(|m| Unknown::failure(name, m))?;
        parsed::parse(body, &opts)
    }

    fn exec(&self, stmts: &'static [Stmt<'static>], out: &mut Vec<Frag>) -> Result<(), Failed> {
        for s in stmts {
            Self::step()?;
            self.stmt(s, out)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_lines)]
    fn stmt(&self, s: &'static Stmt<'static>, out: &mut Vec<Frag>) -> Result<(), Failed> {
        match s {
            Stmt::Template(t) => self.exec(&t.children, out)?,
            Stmt::EmitRaw(r) => self.emit(r.raw.to_string(), out)?,
            Stmt::EmitExpr(x) => {
                // A macro called for its output: its branches stay branches.
                if let Expr::Call(c) = &x.expr
                    && let Expr::Var(f) = &c.expr
                    && let Some(Local::Macro(m)) = self.lookup_local(f.id)
                {
                    match self.call_args(&c.args) {
                        Ok(args) => self.call_macro(m, args, None, out)?,
                        Err(u) => out.push(Frag::Unknown(u)),
                    }
                    return Ok(());
                }
                // `x if test` without `else` shows nothing when the test fails.
                if let Expr::IfExpr(i) = &x.expr
                    && i.false_expr.is_none()
                    && let (Ok(false), _) = self.condition(&i.test_expr)
                {
                    return Ok(());
                }
                match self.eval(&x.expr) {
                    Ev::Val(v) => self.emit(shown(&v), out)?,
                    other => out.push(Frag::Unknown(ev_unknowns(other))),
                }
            }
            Stmt::IfCond(c) => match self.condition(&c.expr) {
                (Ok(true), _) => self.exec(&c.true_body, out)?,
                (Ok(false), _) => self.exec(&c.false_body, out)?,
                (Err(ev), text) => {
                    let why: Vec<Unknown> = ev_unknowns(ev).into_iter().collect();
                    self.branches(&text, why, &c.true_body, &c.false_body, out)?;
                }
            },
            Stmt::ForLoop(f) => self.for_loop(f, out)?,
            Stmt::Set(set) => {
                let v = match self.eval(&set.expr) {
                    Ev::Val(v) => Local::Val(v),
                    other => Local::Unk(ev_unknowns(other)),
                };
                self.assign(&set.target, v);
            }
            Stmt::SetBlock(b) => {
                let mut body = Vec::new();
                self.exec(&b.body, &mut body)?;
                let v = match (known_text(&body), &b.filter) {
                    (Some(s), None) => Local::Val(Value::from_safe_string(s)),
                    _ => {
                        let mut why = BTreeSet::new();
                        frag_unknowns(&body, &mut why);
                        if why.is_empty() {
                            why = unk(self.text(&b.target), UnknownWhy::TooComplex);
                        }
                        Local::Unk(why)
                    }
                };
                self.assign(&b.target, v);
            }
            Stmt::WithBlock(w) => {
                let mut frame = Frame::default();
                for (target, value) in &w.assignments {
                    let v = match self.eval(value) {
                        Ev::Val(v) => Local::Val(v),
                        other => Local::Unk(ev_unknowns(other)),
                    };
                    if let Expr::Var(n) = target {
                        frame.insert(n.id.to_string(), v);
                    }
                }
                self.frames.borrow_mut().push(frame);
                let r = self.exec(&w.body, out);
                self.frames.borrow_mut().pop();
                r?;
            }
            Stmt::AutoEscape(a) => self.exec(&a.body, out)?,
            Stmt::FilterBlock(fb) => {
                let mut body = Vec::new();
                self.exec(&fb.body, &mut body)?;
                let mut why = BTreeSet::new();
                frag_unknowns(&body, &mut why);
                why.insert(Unknown::new(
                    snippet(&self.text(&fb.filter)),
                    UnknownWhy::TooComplex,
                ));
                out.push(Frag::Unknown(why));
            }
            Stmt::Block(b) => {
                let over = self
                    .blocks
                    .borrow()
                    .iter()
                    .find(|(n, _, _)| *n == b.name)
                    .map(|(_, f, body)| (*f, *body));
                match over {
                    Some((file, body)) => self.with_file(file, || self.exec(body, out))?,
                    None => self.exec(&b.body, out)?,
                }
            }
            Stmt::Extends(_) => {}
            Stmt::Include(inc) => self.include(&inc.name, inc.ignore_missing, out)?,
            Stmt::Import(imp) => {
                let name = self.template_name(&imp.expr);
                if let Expr::Var(alias) = &imp.name {
                    match name.and_then(|n| self.macros_of(&n)) {
                        Ok(macros) => {
                            for (n, m) in macros {
                                self.bind(&format!("{}.{n}", alias.id), Local::Macro(m));
                            }
                        }
                        Err(u) => self.bind(alias.id, Local::Unk(u)),
                    }
                }
            }
            Stmt::FromImport(fi) => {
                let macros = self
                    .template_name(&fi.expr)
                    .and_then(|n| self.macros_of(&n));
                for (name, alias) in &fi.names {
                    let (Expr::Var(n), target) = (name, alias.as_ref().unwrap_or(name)) else {
                        continue;
                    };
                    let Expr::Var(t) = target else { continue };
                    let l = match &macros {
                        Ok(ms) => ms.iter().find(|(m, _)| *m == n.id).map_or_else(
                            || {
                                Local::Unk(BTreeSet::from([Unknown::failure(
                                    n.id,
                                    format!("the template does not define {}", n.id),
                                )]))
                            },
                            |(_, m)| Local::Macro(*m),
                        ),
                        Err(u) => Local::Unk(u.clone()),
                    };
                    self.bind(t.id, l);
                }
            }
            Stmt::Macro(m) => self.bind(
                m.name,
                Local::Macro(MacroDef {
                    file: self.cur.get(),
                    decl: m,
                }),
            ),
            Stmt::CallBlock(cb) => {
                let caller = MacroDef {
                    file: self.cur.get(),
                    decl: &cb.macro_decl,
                };
                let callee = match &cb.call.expr {
                    Expr::Var(f) => self.lookup_local(f.id),
                    _ => None,
                };
                match (callee, self.call_args(&cb.call.args)) {
                    (Some(Local::Macro(m)), Ok(args)) => {
                        self.call_macro(m, args, Some(caller), out)?;
                    }
                    (_, Err(u)) => out.push(Frag::Unknown(u)),
                    _ => out.push(Frag::Unknown(unk(
                        snippet(&self.text(&cb.call.expr)),
                        UnknownWhy::TooComplex,
                    ))),
                }
            }
            // Ansible's Jinja has neither the loop controls nor `do`: such
            // a template fails to parse there.
            Stmt::Continue(_) | Stmt::Break(_) | Stmt::Do(_) => {
                return Err(Unknown::failure(
                    snippet(self.cur.get().text),
                    "template syntax error: Ansible's Jinja has no break, continue or do tag",
                ));
            }
        }
        Ok(())
    }

    /// The branches of a condition not known statically, each run on the
    /// variables as they were before it; a variable they leave different
    /// is unknown afterwards.
    fn branches(
        &self,
        expr: &str,
        why: Vec<Unknown>,
        then: &'static [Stmt<'static>],
        els: &'static [Stmt<'static>],
        out: &mut Vec<Frag>,
    ) -> Result<(), Failed> {
        let before = self.frames.borrow().clone();
        let mut t = Vec::new();
        self.exec(then, &mut t)?;
        let after_then = std::mem::replace(&mut *self.frames.borrow_mut(), before);
        let mut e = Vec::new();
        self.exec(els, &mut e)?;
        let reasons: BTreeSet<Unknown> = why.iter().cloned().collect();
        {
            let mut frames = self.frames.borrow_mut();
            for (fe, ft) in frames.iter_mut().zip(after_then) {
                let names: BTreeSet<String> = fe.keys().chain(ft.keys()).cloned().collect();
                for n in names {
                    let same = match (fe.get(&n), ft.get(&n)) {
                        (Some(Local::Val(a)), Some(Local::Val(b))) => py::eq(a, b),
                        (Some(Local::Macro(_)), Some(Local::Macro(_))) => true,
                        _ => false,
                    };
                    if !same {
                        let mut r = reasons.clone();
                        for l in [fe.get(&n), ft.get(&n)].into_iter().flatten() {
                            if let Local::Unk(s) = l {
                                r.extend(s.iter().cloned());
                            }
                        }
                        fe.insert(n, Local::Unk(r));
                    }
                }
            }
        }
        if t.is_empty() && e.is_empty() {
            return Ok(());
        }
        out.push(Frag::Branch {
            cond: Condition {
                expr: snippet(expr),
                holds: true,
                why,
            },
            then: t,
            els: e,
        });
        Ok(())
    }

    fn assign(&self, target: &Expr<'_>, v: Local) {
        match target {
            Expr::Var(n) => self.bind(n.id, v),
            // `a, b` parses as a list of names.
            Expr::List(t) => {
                let items = match &v {
                    Local::Val(val) => py::seq_items(val).filter(|i| i.len() == t.items.len()),
                    _ => None,
                };
                for (i, target) in t.items.iter().enumerate() {
                    let l = match (&items, &v) {
                        (Some(items), _) => Local::Val(items[i].clone()),
                        (None, Local::Unk(s)) => Local::Unk(s.clone()),
                        _ => Local::Unk(BTreeSet::from([Unknown::failure(
                            self.text(target),
                            "cannot unpack the value into the names",
                        )])),
                    };
                    self.assign(target, l);
                }
            }
            // `ns.attr` on a namespace: not modelled.
            _ => {}
        }
    }

    fn for_loop(
        &self,
        f: &'static minijinja::machinery::ast::ForLoop<'static>,
        out: &mut Vec<Frag>,
    ) -> Result<(), Failed> {
        let items = match self.eval(&f.iter) {
            Ev::Val(v) => match py::classify(&v) {
                Py::Seq(items, _) => items,
                Py::Map(pairs) => pairs.into_iter().map(|(k, _)| k).collect(),
                Py::Str(s) => s.chars().map(|c| Value::from(c.to_string())).collect(),
                _ => {
                    out.push(Frag::Unknown(BTreeSet::from([Unknown::failure(
                        snippet(&self.text(&f.iter)),
                        format!("'{}' object is not iterable", py::type_name(&v)),
                    )])));
                    return Ok(());
                }
            },
            other => {
                Self::unknown_repeat(ev_unknowns(other), &f.body, out);
                return Ok(());
            }
        };
        if f.recursive || items.len() > MAX_LOOP_ITEMS {
            Self::unknown_repeat(
                unk(
                    if f.recursive {
                        format!("recursive loop over {}", snippet(&self.text(&f.iter)))
                    } else {
                        format!(
                            "a loop over {} items (more than {MAX_LOOP_ITEMS})",
                            items.len()
                        )
                    },
                    UnknownWhy::TooComplex,
                ),
                &f.body,
                out,
            );
            return Ok(());
        }
        let items = match &f.filter_expr {
            None => items,
            Some(filter) => {
                let mut kept = Vec::new();
                for item in items {
                    self.frames.borrow_mut().push(Frame::default());
                    self.assign(&f.target, Local::Val(item.clone()));
                    let (r, _) = self.condition(filter);
                    self.frames.borrow_mut().pop();
                    match r {
                        Ok(true) => kept.push(item),
                        Ok(false) => {}
                        Err(ev) => {
                            Self::unknown_repeat(ev_unknowns(ev), &f.body, out);
                            return Ok(());
                        }
                    }
                }
                kept
            }
        };
        if items.is_empty() {
            return self.exec(&f.else_body, out);
        }
        let n = items.len();
        for (i, item) in items.iter().enumerate() {
            Self::step()?;
            let mut lp = vec![
                ("index", Value::from(i + 1)),
                ("index0", Value::from(i)),
                ("revindex", Value::from(n - i)),
                ("revindex0", Value::from(n - i - 1)),
                ("first", Value::from(i == 0)),
                ("last", Value::from(i + 1 == n)),
                ("length", Value::from(n)),
                ("depth", Value::from(1)),
                ("depth0", Value::from(0)),
            ];
            if i > 0 {
                lp.push(("previtem", items[i - 1].clone()));
            }
            if i + 1 < n {
                lp.push(("nextitem", items[i + 1].clone()));
            }
            let mut frame = Frame::default();
            frame.insert(
                "loop".into(),
                Local::Val(Value::from_pairs(
                    lp.into_iter().map(|(k, v)| (Value::from(k), v)),
                )),
            );
            self.frames.borrow_mut().push(frame);
            self.assign(&f.target, Local::Val(item.clone()));
            let r = self.exec(&f.body, out);
            self.frames.borrow_mut().pop();
            r?;
        }
        Ok(())
    }

    /// The output of a loop whose items are not known: unknown, and whole
    /// lines when its body writes whole lines.
    fn unknown_repeat(why: BTreeSet<Unknown>, body: &[Stmt<'_>], out: &mut Vec<Frag>) {
        out.push(Frag::Unknown(why));
        if let Some(Stmt::EmitRaw(r)) = body.last()
            && r.raw.ends_with('\n')
        {
            out.push(Frag::Text("\n".into()));
        }
    }

    /// A call's arguments, all known, or what they depend on.
    fn call_args(&self, call_args: &[CallArg<'_>]) -> Result<Args, BTreeSet<Unknown>> {
        let mut args = Args::default();
        let mut why = BTreeSet::new();
        for a in call_args {
            let (name, expr) = match a {
                CallArg::Pos(x) => (None, x),
                CallArg::Kwarg(n, x) => (Some(*n), x),
                CallArg::PosSplat(x) | CallArg::KwargSplat(x) => {
                    why.insert(Unknown::new(snippet(&self.text(x)), UnknownWhy::TooComplex));
                    continue;
                }
            };
            match self.eval(expr) {
                Ev::Val(v) => match name {
                    Some(n) => args.kw.push((n.to_string(), v)),
                    None => args.pos.push(v),
                },
                other => why.extend(ev_unknowns(other)),
            }
        }
        if why.is_empty() { Ok(args) } else { Err(why) }
    }

    /// Runs a macro's body with its arguments bound (`caller` too, for a
    /// `call` block), its output into `out`.
    fn call_macro(
        &self,
        m: MacroDef,
        args: Args,
        caller: Option<MacroDef>,
        out: &mut Vec<Frag>,
    ) -> Result<(), Failed> {
        let depth = self.calls.get();
        if depth >= MAX_CALL_DEPTH {
            return Err(Unknown::new(
                format!("macro {} calls deeper than the bound", m.decl.name),
                UnknownWhy::TooComplex,
            ));
        }
        let mut frame = Frame::default();
        let ndefaults = m.decl.defaults.len();
        let nargs = m.decl.args.len();
        let mut pos = args.pos.into_iter();
        for (i, a) in m.decl.args.iter().enumerate() {
            let Expr::Var(name) = a else { continue };
            let given = pos.next().or_else(|| {
                args.kw
                    .iter()
                    .find(|(k, _)| k == name.id)
                    .map(|(_, v)| v.clone())
            });
            let l = match given {
                Some(v) => Local::Val(v),
                None if i + ndefaults >= nargs => {
                    let d = &m.decl.defaults[i + ndefaults - nargs];
                    match self.with_file(m.file, || self.eval(d)) {
                        Ev::Val(v) => Local::Val(v),
                        other => Local::Unk(ev_unknowns(other)),
                    }
                }
                // A missing argument is undefined in the body.
                None => Local::Unk(unk(name.id, UnknownWhy::Unset)),
            };
            frame.insert(name.id.to_string(), l);
        }
        if let Some(c) = caller {
            frame.insert("caller".into(), Local::Macro(c));
        }
        self.calls.set(depth + 1);
        self.frames.borrow_mut().push(frame);
        let r = self.with_file(m.file, || self.exec(&m.decl.body, out));
        self.frames.borrow_mut().pop();
        self.calls.set(depth);
        r
    }

    /// The name of a template to include or import, evaluated.
    fn template_name(&self, e: &Expr<'_>) -> Result<String, BTreeSet<Unknown>> {
        match self.eval(e) {
            Ev::Val(v) => Ok(shown(&v)),
            other => Err(ev_unknowns(other)),
        }
    }

    /// The macros a template defines at its top level.
    fn macros_of(&self, name: &str) -> Result<Vec<(&'static str, MacroDef)>, BTreeSet<Unknown>> {
        let p = self.load(name).map_err(|u| BTreeSet::from([u]))?;
        Ok(p.body()
            .iter()
            .filter_map(|s| match s {
                Stmt::Macro(m) => Some((m.name, MacroDef { file: p, decl: m })),
                _ => None,
            })
            .collect())
    }

    fn include(
        &self,
        name: &Expr<'_>,
        ignore_missing: bool,
        out: &mut Vec<Frag>,
    ) -> Result<(), Failed> {
        let names = match self.eval(name) {
            Ev::Val(v) => match py::seq_items(&v) {
                Some(items) => items.iter().map(shown).collect(),
                None => vec![shown(&v)],
            },
            other => {
                out.push(Frag::Unknown(ev_unknowns(other)));
                return Ok(());
            }
        };
        let found = names.iter().find_map(|n| self.loader.load(n).map(|_| n));
        let Some(found) = found else {
            if !ignore_missing {
                out.push(Frag::Unknown(BTreeSet::from([Unknown::failure(
                    names.join(", "),
                    "the included template is not found in the search path",
                )])));
            }
            return Ok(());
        };
        match self.load(found) {
            Ok(p) => self.nested(|| self.template(p, out)),
            Err(u) => {
                out.push(Frag::Unknown(BTreeSet::from([u])));
                Ok(())
            }
        }
    }
}
