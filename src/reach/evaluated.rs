//! What preflint computes of each reached task from its variables alone:
//! its loop items, each iteration's module arguments rendered, its command
//! line, and the text of the template it writes; or, for each, why it is
//! not known statically. What `preflint tasks --evaluated` lists, and what
//! the evaluation oracle (`tests/oracle/eval/`) compares with ansible-core.
//!
//! It only reads what the iterations already compute (their variables, the
//! loop items of [`super::loop_items`]): it must not evaluate anything its
//! own way, or the oracle would test this file instead of the analysis.

use super::{Facts, Scope};
use crate::ansible::project::TaskInstance;
use crate::jinja::{self, Rendered, Unknown, UnknownWhy};
use crate::vars::{LookupOwned, TaskVars};
use crate::yaml::{Node, Tag, Value};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Reasons named per evaluation, at most: the first few say enough.
const MAX_REASONS: usize = 3;

/// One task evaluated.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluated {
    /// `null` when the task has no loop.
    #[serde(rename = "loop")]
    pub loop_: Option<LoopEval>,
    /// One per loop item when the items are known (none for an empty
    /// list), else one without an item.
    pub iterations: Vec<IterationEval>,
}

/// A task's loop: its kind (`loop`, or the lookup of `with_<kind>`) and its
/// items, or why they are not known.
#[derive(Debug, Clone, Serialize)]
pub struct LoopEval {
    pub kind: String,
    pub known: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A value rendered, or why it is not known.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Eval {
    Value { value: serde_json::Value },
    Unknown { unknown: String },
}

/// One iteration evaluated.
#[derive(Debug, Clone, Serialize)]
pub struct IterationEval {
    pub item: Option<serde_json::Value>,
    /// Every module argument by its canonical name (`_raw_params` aside).
    pub args: BTreeMap<String, Eval>,
    /// The free-form line (`_raw_params`: a command, a shell line).
    pub free_form: Option<Eval>,
    /// The template a `template` task writes.
    pub template: Option<TemplateEval>,
}

/// A template's source and its rendered text.
#[derive(Debug, Clone, Serialize)]
pub struct TemplateEval {
    /// The source file relative to the tree (as written when not found).
    pub src: String,
    /// `full`, `partly` or `unknown`.
    pub known: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Every reached task evaluated, by its index in run order (handlers
/// too; see [`Scope::reached`]).
#[must_use]
pub fn evaluated_by_task<'s>(
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    root: &Path,
) -> Vec<Evaluated> {
    super::per_task(
        reached,
        |facts| vec![evaluate(scope, facts, root)],
        |_, e| e.clone(),
    )
}

fn evaluate<'s>(scope: &'s Scope<'_>, facts: &Facts<'s>, root: &Path) -> Evaluated {
    let inst = facts.reach.inst;
    let iterations = facts.iterations(scope);
    let loop_ = inst.task.loop_items.as_ref().map(|node| {
        let kind = inst.task.loop_kind.clone().unwrap_or_else(|| "loop".into());
        let base = scope.vars(&facts.reach);
        match super::loop_items(inst, &base, scope.fs) {
            Some(super::LoopItems::Known(items)) => LoopEval {
                kind,
                known: true,
                items: Some(items),
                reason: None,
            },
            Some(super::LoopItems::Unknown(why)) => LoopEval {
                kind,
                known: false,
                items: None,
                reason: Some(format!("{} {}", why.why, why.var)),
            },
            None => LoopEval {
                kind,
                known: false,
                items: None,
                reason: Some(match node_value(&base, node) {
                    Eval::Unknown { unknown } => unknown,
                    Eval::Value { value } => {
                        format!("not a list: {}", py_type(&value))
                    }
                }),
            },
        }
    });
    // A known empty list runs nothing (the analysis keeps one iteration
    // without an item for it).
    let runs = loop_
        .as_ref()
        .is_none_or(|l| l.items.as_ref().is_none_or(|i| !i.is_empty()));
    let loop_unknown = loop_.as_ref().is_some_and(|l| !l.known);
    let out = if runs {
        iterations
            .iter()
            .map(|it| iteration(scope, root, inst, it, loop_unknown))
            .collect()
    } else {
        Vec::new()
    };
    iterations.drop_all();
    Evaluated {
        loop_,
        iterations: out,
    }
}

fn iteration(
    scope: &Scope<'_>,
    root: &Path,
    inst: &TaskInstance,
    it: &super::Iteration<'_>,
    loop_unknown: bool,
) -> IterationEval {
    let mut args = BTreeMap::new();
    let mut free_form = None;
    // `include_tasks: {file: x.yml}` is Ansible's free form (`TaskInclude`
    // moves `file` to `_raw_params`).
    let file_is_free_form = matches!(
        crate::ansible::task::short_module(&inst.task.module),
        "include_tasks" | "import_tasks"
    );
    for a in &inst.task.args {
        let mut v = node_value(&it.tv, &a.value);
        if loop_unknown && let Eval::Unknown { unknown } = &mut v {
            about_item(unknown);
        }
        // The last of repeated keys counts (see `Task::arg`).
        if a.key == "_raw_params" || (file_is_free_form && a.key == "file") {
            free_form = Some(v);
        } else {
            args.insert(a.key.clone(), v);
        }
    }
    let template = (crate::ansible::task::short_module(&inst.task.module) == "template")
        .then(|| template(scope, root, inst, it, args.get("src")))
        .flatten();
    IterationEval {
        item: it.item.clone(),
        args,
        free_form,
        template,
    }
}

/// Without known loop items `item` is unbound, which the variables call a
/// run-time name: say so.
fn about_item(reason: &mut String) {
    if reason.ends_with(" item") || reason.contains(" item.") || reason.contains(" item,") {
        *reason = "loop items unknown".into();
    }
}

fn template(
    scope: &Scope<'_>,
    root: &Path,
    inst: &TaskInstance,
    it: &super::Iteration<'_>,
    src: Option<&Eval>,
) -> Option<TemplateEval> {
    let src = match src? {
        Eval::Value {
            value: serde_json::Value::String(s),
        } => s.clone(),
        Eval::Value { value } => {
            return Some(TemplateEval {
                src: value.to_string(),
                known: "unknown",
                text: None,
                reason: Some("src is not a string".into()),
            });
        }
        Eval::Unknown { unknown } => {
            return Some(TemplateEval {
                src: inst
                    .task
                    .arg("src")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default(),
                known: "unknown",
                text: None,
                reason: Some(format!("src: {unknown}")),
            });
        }
    };
    let Some(path) = template_path(inst, &src, scope.fs) else {
        return Some(TemplateEval {
            src,
            known: "unknown",
            text: None,
            reason: Some("template file not found".into()),
        });
    };
    let shown = crate::source::display_path(root, &path);
    let Some(text) = scope.fs.text_bounded(&path) else {
        return Some(TemplateEval {
            src: shown,
            known: "unknown",
            text: None,
            reason: Some("template file not readable".into()),
        });
    };
    if !crate::ansible::project::is_templated(&text) {
        return Some(TemplateEval {
            src: shown,
            known: "full",
            text: Some(text.to_string()),
            reason: None,
        });
    }
    // Rendered as the analysis renders written templates: known lines,
    // lines known under a condition, unknown lines.
    let view = super::IterView::new(inst, it);
    let Some(file) = crate::effect::TaskView::render_file(&view, &text) else {
        return Some(TemplateEval {
            src: shown,
            known: "unknown",
            text: None,
            reason: Some(reasons(&it.tv, &text)),
        });
    };
    let why = || {
        file.unknown_lines()
            .flat_map(|l| &l.unknown)
            .map(jinja::describe)
            .next()
            .or_else(|| {
                file.lines
                    .iter()
                    .find(|l| !l.when.is_empty())
                    .map(|l| format!("lines written only if {}", l.when[0]))
            })
    };
    Some(match file.coverage() {
        jinja::Coverage::Full => TemplateEval {
            src: shown,
            known: "full",
            text: file.full_text(),
            reason: None,
        },
        jinja::Coverage::Partly => TemplateEval {
            src: shown,
            known: "partly",
            text: None,
            reason: why(),
        },
        jinja::Coverage::None => TemplateEval {
            src: shown,
            known: "unknown",
            text: None,
            reason: why().or_else(|| Some(reasons(&it.tv, &text))),
        },
    })
}

/// Where the analysis reads a template from: the candidates of
/// [`super::read_role_file`], kept in step with it.
fn template_path(inst: &TaskInstance, src: &str, fs: &crate::load::FsMemo) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(r) = &inst.role_path {
        candidates.push(r.join("templates").join(src));
        candidates.push(r.join(src));
    }
    if Path::new(src).is_absolute() {
        candidates.push(PathBuf::from(src));
    }
    candidates.into_iter().find(|p| fs.is_file(p))
}

/// A node's value as the task's variables render it (see
/// [`TaskVars::value`]), or why it is not known.
fn node_value(tv: &TaskVars<'_>, node: &Node) -> Eval {
    match tv.value(node) {
        LookupOwned::Value(value) => Eval::Value { value },
        LookupOwned::Unknown(_) | LookupOwned::Missing => Eval::Unknown {
            unknown: node_reason(tv, node),
        },
    }
}

/// Why a node's value is unknown: its first unknown part, rendered again
/// for the names it rests on.
fn node_reason(tv: &TaskVars<'_>, node: &Node) -> String {
    if node.tag == Tag::Vault {
        return "vault-encrypted".into();
    }
    match &node.value {
        Value::Str(s) => reasons(tv, s),
        Value::Seq(items) => items
            .iter()
            .find(|i| !matches!(tv.value(i), LookupOwned::Value(_)))
            .map_or_else(|| "not evaluated".into(), |i| node_reason(tv, i)),
        Value::Map(pairs) => pairs
            .iter()
            .find(|(_, v)| !matches!(tv.value(v), LookupOwned::Value(_)))
            .map_or_else(|| "not evaluated".into(), |(_, v)| node_reason(tv, v)),
        _ => "not evaluated".into(),
    }
}

/// Why a template does not render: the names or sub-expressions it rests
/// on and why each is unknown, short and stable.
fn reasons(tv: &TaskVars<'_>, template: &str) -> String {
    match jinja::render(template, tv) {
        Rendered::Unknown(mut us) => {
            us.sort();
            us.dedup();
            let mut out: Vec<String> = us.iter().take(MAX_REASONS).map(reason).collect();
            out.dedup();
            if out.is_empty() {
                "not evaluated".into()
            } else {
                out.join(", ")
            }
        }
        Rendered::Value(_) => "not evaluated".into(),
    }
}

/// One unknown as a short reason: `host fact ansible_os_family`,
/// `registered result foo`, `undefined bar`, `lookup lookup('pipe', 'x')`.
#[must_use]
pub fn reason(u: &Unknown) -> String {
    let what = match u.why {
        UnknownWhy::Fact => "host fact",
        UnknownWhy::Registered => "registered result",
        UnknownWhy::RuntimeFact => "set_fact",
        UnknownWhy::Unset => "undefined",
        UnknownWhy::Vault => "vault-encrypted",
        UnknownWhy::Lookup => "lookup",
        UnknownWhy::Cycle => "refers to itself",
        UnknownWhy::TooComplex if u.error.is_some() => "ansible fails on",
        UnknownWhy::TooComplex => "not evaluated",
    };
    format!("{what} {}", excerpt(&u.var))
}

/// A sub-expression named in a reason: its first line, cut short.
fn excerpt(s: &str) -> String {
    const MAX: usize = 60;
    let line = s.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None if line.len() < s.trim().len() => format!("{line}..."),
        None => line.to_string(),
    }
}

/// Python's name of a JSON value's type, as Ansible's messages say it.
fn py_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "NoneType",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(n) if n.is_f64() => "float",
        serde_json::Value::Number(_) => "int",
        serde_json::Value::String(_) => "str",
        serde_json::Value::Array(_) => "list",
        serde_json::Value::Object(_) => "dict",
    }
}
