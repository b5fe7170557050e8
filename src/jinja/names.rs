//! The top-level variable names a template or expression uses.
//!
//! Names bound by the template itself (`for` targets, `set`, macro
//! arguments, `loop`) and global functions are not variables of the
//! caller, so they are left out.

use super::{is_template, parseable, template};
use minijinja::machinery::ast::{CallArg, Expr, Stmt};
use minijinja::machinery::{parse, parse_expr};
use std::collections::BTreeSet;

/// Functions Jinja or Ansible provide; never looked up as variables.
const GLOBAL_FUNCTIONS: &[&str] = &[
    "lookup",
    "query",
    "q",
    "now",
    "range",
    "dict",
    "lipsum",
    "cycler",
    "joiner",
    "namespace",
    "undef",
];

pub(crate) fn referenced(src: &str) -> Vec<String> {
    if is_template(src)
        && let Some(shape) = template::Shape::of(src)
    {
        return shape.names().to_vec();
    }
    walk(src)
}

/// The names a parsed template uses (see [`referenced`]).
pub(crate) fn walk_template(stmt: &minijinja::machinery::ast::Stmt<'_>) -> Vec<String> {
    let mut w = Walker {
        scopes: vec![Vec::new()],
        out: BTreeSet::new(),
    };
    w.stmt(stmt);
    w.out.into_iter().collect()
}

/// [`referenced`] without the memo of templates.
pub(crate) fn walk(src: &str) -> Vec<String> {
    if !parseable(src) {
        return Vec::new();
    }
    if is_template(src) {
        return parse(src, "<template>", template::syntax())
            .map(|stmt| walk_template(&stmt))
            .unwrap_or_default();
    }
    let mut w = Walker {
        scopes: vec![Vec::new()],
        out: BTreeSet::new(),
    };
    if let Ok(expr) = parse_expr(src.trim()) {
        w.expr(&expr);
    }
    w.out.into_iter().collect()
}

struct Walker {
    /// Names bound by the template, innermost scope last.
    scopes: Vec<Vec<String>>,
    out: BTreeSet<String>,
}

impl Walker {
    fn bound(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.iter().any(|n| n == name))
    }

    fn bind(&mut self, target: &Expr<'_>) {
        match target {
            Expr::Var(v) => {
                if let Some(scope) = self.scopes.last_mut() {
                    scope.push(v.id.to_string());
                }
            }
            Expr::List(l) => l.items.iter().for_each(|i| self.bind(i)),
            Expr::Tuple(t) => t.items.iter().for_each(|i| self.bind(i)),
            // `{% set ns.attr = ... %}` uses `ns`.
            other => self.expr(other),
        }
    }

    fn body(&mut self, stmts: &[Stmt<'_>]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt<'_>) {
        match s {
            Stmt::Template(t) => self.body(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::ForLoop(f) => {
                self.expr(&f.iter);
                self.scopes.push(vec!["loop".into()]);
                self.bind(&f.target);
                if let Some(x) = &f.filter_expr {
                    self.expr(x);
                }
                self.body(&f.body);
                self.scopes.pop();
                self.body(&f.else_body);
            }
            Stmt::IfCond(c) => {
                self.expr(&c.expr);
                self.body(&c.true_body);
                self.body(&c.false_body);
            }
            Stmt::WithBlock(w) => {
                for (_, value) in &w.assignments {
                    self.expr(value);
                }
                self.scopes.push(Vec::new());
                for (target, _) in &w.assignments {
                    self.bind(target);
                }
                self.body(&w.body);
                self.scopes.pop();
            }
            Stmt::Set(set) => {
                self.expr(&set.expr);
                self.bind(&set.target);
            }
            Stmt::SetBlock(set) => {
                if let Some(f) = &set.filter {
                    self.expr(f);
                }
                self.body(&set.body);
                self.bind(&set.target);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.body(&a.body);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.body(&f.body);
            }
            Stmt::Block(b) => self.body(&b.body),
            Stmt::Import(i) => {
                self.expr(&i.expr);
                self.bind(&i.name);
            }
            Stmt::FromImport(i) => {
                self.expr(&i.expr);
                for (name, alias) in &i.names {
                    self.bind(alias.as_ref().unwrap_or(name));
                }
            }
            Stmt::Extends(x) => self.expr(&x.name),
            Stmt::Include(x) => self.expr(&x.name),
            Stmt::Macro(m) => {
                if let Some(scope) = self.scopes.last_mut() {
                    scope.push(m.name.to_string());
                }
                m.defaults.iter().for_each(|d| self.expr(d));
                self.scopes
                    .push(vec!["caller".into(), "varargs".into(), "kwargs".into()]);
                m.args.iter().for_each(|a| self.bind(a));
                self.body(&m.body);
                self.scopes.pop();
            }
            Stmt::CallBlock(c) => {
                self.call_args(&c.call.args);
                self.expr(&c.call.expr);
                self.scopes
                    .push(vec!["caller".into(), "varargs".into(), "kwargs".into()]);
                c.macro_decl.args.iter().for_each(|a| self.bind(a));
                self.body(&c.macro_decl.body);
                self.scopes.pop();
            }
            Stmt::Do(d) => {
                self.expr(&d.call.expr);
                self.call_args(&d.call.args);
            }
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
        }
    }

    fn call_args(&mut self, args: &[CallArg<'_>]) {
        for a in args {
            match a {
                CallArg::Pos(e)
                | CallArg::Kwarg(_, e)
                | CallArg::PosSplat(e)
                | CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }

    fn expr(&mut self, e: &Expr<'_>) {
        match e {
            Expr::Var(v) => {
                if !self.bound(v.id) {
                    self.out.insert(v.id.to_string());
                }
            }
            // Conditionals render templates found in string constants.
            Expr::Const(c) => {
                if let Some(text) = c.value.as_str().filter(|t| is_template(t)) {
                    for name in referenced(text) {
                        if !self.bound(&name) {
                            self.out.insert(name);
                        }
                    }
                }
            }
            Expr::Slice(s) => {
                self.expr(&s.expr);
                for x in s.start.iter().chain(&s.stop).chain(&s.step) {
                    self.expr(x);
                }
            }
            Expr::UnaryOp(u) => self.expr(&u.expr),
            Expr::BinOp(b) => {
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr);
                c.ops.iter().for_each(|o| self.expr(&o.expr));
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                self.expr(&i.true_expr);
                if let Some(f) = &i.false_expr {
                    self.expr(f);
                }
            }
            Expr::Filter(f) => {
                if let Some(x) = &f.expr {
                    self.expr(x);
                }
                self.call_args(&f.args);
            }
            Expr::Test(t) => {
                self.expr(&t.expr);
                self.call_args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => {
                match &c.expr {
                    Expr::Var(v) if GLOBAL_FUNCTIONS.contains(&v.id) => {}
                    other => self.expr(other),
                }
                self.call_args(&c.args);
            }
            Expr::List(l) => l.items.iter().for_each(|i| self.expr(i)),
            Expr::Tuple(t) => t.items.iter().for_each(|i| self.expr(i)),
            Expr::Map(m) => m.keys.iter().chain(&m.values).for_each(|i| self.expr(i)),
        }
    }
}
