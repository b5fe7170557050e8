//! A task's loop as Ansible evaluates it: the item list of `loop:` (a
//! template rendering to a list, with Ansible's filters and pure lookups)
//! or of `with_<lookup>` (the lookup plugin run over the templated terms),
//! and the variables each iteration binds (`loop_control`: `loop_var`,
//! `index_var`, `extended`).
//!
//! When the items cannot be known statically the loop is
//! [`LoopItems::Unknown`] with the reason, and the task keeps one
//! iteration whose loop variables are unknown for that reason: nothing that
//! rests on the item is rendered from it.
//!
//! The pure lookups are `jinja`'s ([`crate::jinja::pure_lookup`]); those
//! that read files on the controller are in `files`, read through the
//! run's [`FsMemo`](crate::load::FsMemo); the others are never run. The
//! item list is bounded by [`crate::jinja::MAX_LOOKUP_ITEMS`].

mod files;
#[cfg(test)]
mod tests;

use crate::ansible::project::TaskInstance;
use crate::ansible::task::LoopControl;
use crate::jinja::{self, Lookup, LookupOutcome, Rendered, UnknownWhy, VarSource};
use crate::vars::{LookupOwned, TaskVars};
use crate::yaml::{Node, Tag, Value as YValue};
use serde::Serialize;
use serde_json::{Value, json};

/// The items of a task's loop.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopItems {
    /// Every item, in loop order.
    Known(Vec<Value>),
    /// Not known statically, and why.
    Unknown(LoopUnknown),
}

/// Why a loop's items are not known statically.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LoopUnknown {
    /// What the items rest on: a variable, a lookup (`with_pipe`,
    /// `lookup('env', ...)`) or the loop's expression.
    pub var: String,
    /// Why it is unknown: `host fact`, `registered result`, `not set`,
    /// `lookup runs on the controller`, `too many items`, or the error
    /// Ansible fails the task with.
    pub why: String,
    /// How the loop variables of the one iteration kept are unknown.
    #[serde(skip)]
    pub binds_as: UnknownWhy,
}

impl LoopUnknown {
    fn new(var: impl Into<String>, why: impl Into<String>, binds_as: UnknownWhy) -> Self {
        LoopUnknown {
            var: var.into(),
            why: why.into(),
            binds_as,
        }
    }

    /// From what a render depended on: the first unknown (sorted).
    fn from_render(unknowns: &[jinja::Unknown], fallback: &str) -> Self {
        match unknowns.iter().min() {
            Some(u) => LoopUnknown::new(
                u.var.clone(),
                u.error
                    .clone()
                    .unwrap_or_else(|| super::why_label(&u.why).to_string()),
                u.why.clone(),
            ),
            None => LoopUnknown::new(fallback, "not evaluated statically", UnknownWhy::TooComplex),
        }
    }
}

impl std::fmt::Display for LoopUnknown {
    /// `sysctl_result (registered result)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.var, self.why)
    }
}

/// The items of `inst`'s loop with the variables `tv` gives; `None` when
/// the task does not loop.
#[must_use]
pub fn loop_items(
    inst: &TaskInstance,
    tv: &TaskVars<'_>,
    fs: &crate::load::FsMemo,
) -> Option<LoopItems> {
    loop_items_of(&inst.task, inst, tv, fs)
}

/// The items of `task`'s loop (`inst`'s own task, or a dynamic include
/// it is reached through), seen from `inst`.
fn loop_items_of(
    task: &crate::ansible::task::Task,
    inst: &TaskInstance,
    tv: &TaskVars<'_>,
    fs: &crate::load::FsMemo,
) -> Option<LoopItems> {
    let node = task.loop_items.as_ref()?;
    let kind = task.loop_kind.as_deref().unwrap_or("loop");
    let src = LoopSource { tv, fs, inst };
    let items = if kind == "loop" {
        match src.value(node) {
            Ok(Value::Array(items)) => LoopItems::Known(items),
            Ok(other) => LoopItems::Unknown(LoopUnknown::new(
                "loop",
                format!(
                    "The `loop` value must resolve to a 'list', not '{}'",
                    json_type(&other)
                ),
                UnknownWhy::TooComplex,
            )),
            Err(u) => LoopItems::Unknown(u),
        }
    } else {
        with_lookup(&src, kind, node)
    };
    Some(match items {
        LoopItems::Known(items) if items.len() > jinja::MAX_LOOKUP_ITEMS => {
            LoopItems::Unknown(too_many())
        }
        other => other,
    })
}

fn too_many() -> LoopUnknown {
    LoopUnknown::new(
        "loop",
        format!(
            "more than {} items (bound of preflint)",
            jinja::MAX_LOOKUP_ITEMS
        ),
        UnknownWhy::TooComplex,
    )
}

/// `with_<name>`: the terms templated (a string rendered, a list
/// element-wise; anything but a list becomes a list of itself), then the
/// lookup run over them with `wantlist`.
fn with_lookup(src: &LoopSource<'_, '_>, name: &str, node: &Node) -> LoopItems {
    let terms = match src.value(node) {
        Ok(Value::Array(terms)) => terms,
        Ok(other) => vec![other],
        Err(u) => return LoopItems::Unknown(u),
    };
    let outcome =
        jinja::pure_lookup(name, &terms, &[]).or_else(|| src.file_lookup(name, &terms, &[], true));
    match outcome {
        Some(LookupOutcome::Items(items)) => LoopItems::Known(items),
        Some(LookupOutcome::Failed(m)) => LoopItems::Unknown(LoopUnknown::new(
            format!("with_{name}"),
            m,
            UnknownWhy::TooComplex,
        )),
        Some(LookupOutcome::Unknown(why)) => LoopItems::Unknown(LoopUnknown::new(
            format!("with_{name}"),
            why,
            UnknownWhy::Lookup,
        )),
        None => LoopItems::Unknown(unrun_lookup(name)),
    }
}

/// Why a lookup is not run.
fn unrun_lookup(name: &str) -> LoopUnknown {
    let short = jinja::lookup_name(name);
    let why = if jinja::RUNTIME_LOOKUPS.contains(&short) || jinja::RUNTIME_LOOKUPS.contains(&name) {
        format!("lookup `{short}` runs on the controller")
    } else {
        format!("lookup `{name}` not modelled")
    };
    LoopUnknown::new(format!("with_{name}"), why, UnknownWhy::Lookup)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The variables a task's iteration sees, and the lookups that read files
/// answered from the task's search path.
pub(crate) struct LoopSource<'a, 's> {
    tv: &'a TaskVars<'s>,
    fs: &'a crate::load::FsMemo,
    inst: &'a TaskInstance,
}

impl VarSource for LoopSource<'_, '_> {
    fn lookup(&self, name: &str) -> Lookup {
        self.tv.lookup(name)
    }

    fn run_lookup(
        &self,
        name: &str,
        terms: &[Value],
        kwargs: &[(String, Value)],
    ) -> Option<LookupOutcome> {
        self.file_lookup(name, terms, kwargs, false)
    }
}

impl LoopSource<'_, '_> {
    /// A node's value with templates rendered (as `TaskVars::value`, with
    /// the reason of an unknown kept).
    fn value(&self, node: &Node) -> Result<Value, LoopUnknown> {
        if node.tag == Tag::Vault {
            return Err(LoopUnknown::new(
                "loop",
                "vault-encrypted",
                UnknownWhy::Vault,
            ));
        }
        match &node.value {
            YValue::Str(s) if node.tag != Tag::Unsafe && jinja::is_template(s) => {
                match jinja::render(s.trim(), self) {
                    Rendered::Value(v) => Ok(v),
                    Rendered::Unknown(us) => Err(LoopUnknown::from_render(&us, s)),
                }
            }
            YValue::Seq(items) => items
                .iter()
                .map(|i| self.value(i))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            YValue::Map(pairs) => {
                let mut out = serde_json::Map::new();
                for (k, v) in pairs {
                    out.insert(k.scalar_text().unwrap_or_default(), self.value(v)?);
                }
                Ok(Value::Object(out))
            }
            _ => Ok(node.to_json()),
        }
    }
}

/// The loop variables of one iteration: the item under `loop_var`
/// (`item`), `ansible_loop_var`, the index under `index_var`, and
/// `ansible_loop` when extended, as `TaskExecutor._run_loop` sets them.
#[must_use]
pub fn bindings(
    control: Option<&LoopControl>,
    tv: &TaskVars<'_>,
    items: &[Value],
    index: usize,
) -> Vec<(String, LookupOwned)> {
    let loop_var = LoopControl::loop_var(control).to_string();
    let mut out = vec![
        (loop_var.clone(), LookupOwned::Value(items[index].clone())),
        (
            "ansible_loop_var".into(),
            LookupOwned::Value(Value::String(loop_var)),
        ),
    ];
    if let Some(iv) = control.and_then(|c| c.index_var.clone()) {
        out.push((iv.clone(), LookupOwned::Value(json!(index))));
        out.push((
            "ansible_index_var".into(),
            LookupOwned::Value(Value::String(iv)),
        ));
    }
    let flag = |n: Option<&Node>, default: bool| match n {
        None => Some(default),
        Some(n) => match tv.value(n) {
            LookupOwned::Value(Value::Bool(b)) => Some(b),
            LookupOwned::Value(Value::String(s)) => match s.to_lowercase().as_str() {
                "yes" | "true" | "on" | "1" | "y" => Some(true),
                "no" | "false" | "off" | "0" | "n" | "" => Some(false),
                _ => None,
            },
            LookupOwned::Value(Value::Number(x)) => Some(x.as_f64() != Some(0.0)),
            LookupOwned::Value(Value::Null) => Some(default),
            _ => None,
        },
    };
    match flag(control.and_then(|c| c.extended.as_ref()), false) {
        Some(false) => {}
        None => out.push((
            "ansible_loop".into(),
            LookupOwned::Unknown(UnknownWhy::TooComplex),
        )),
        Some(true) => {
            let len = items.len();
            let mut l = serde_json::Map::new();
            l.insert("index".into(), json!(index + 1));
            l.insert("index0".into(), json!(index));
            l.insert("first".into(), json!(index == 0));
            l.insert("last".into(), json!(index + 1 == len));
            l.insert("length".into(), json!(len));
            l.insert("revindex".into(), json!(len - index));
            l.insert("revindex0".into(), json!(len - index - 1));
            let allitems = flag(control.and_then(|c| c.extended_allitems.as_ref()), true);
            // Every iteration holding every item is quadratic: past a
            // bound `ansible_loop` is unknown rather than built.
            let loop_value = match allitems {
                Some(true) if len > MAX_ALLITEMS => None,
                Some(true) => {
                    l.insert("allitems".into(), Value::Array(items.to_vec()));
                    Some(())
                }
                Some(false) => Some(()),
                None => None,
            };
            if index + 1 < len {
                l.insert("nextitem".into(), items[index + 1].clone());
            }
            if index > 0 {
                l.insert("previtem".into(), items[index - 1].clone());
            }
            out.push((
                "ansible_loop".into(),
                match loop_value {
                    Some(()) => LookupOwned::Value(Value::Object(l)),
                    None => LookupOwned::Unknown(UnknownWhy::TooComplex),
                },
            ));
        }
    }
    out
}

/// Most items `ansible_loop.allitems` is built for (each iteration holds
/// a copy).
const MAX_ALLITEMS: usize = 256;

/// The loop variables of the one iteration of a loop whose items are not
/// known: each unknown for the loop's reason.
#[must_use]
pub fn unknown_bindings(
    control: Option<&LoopControl>,
    why: &LoopUnknown,
) -> Vec<(String, LookupOwned)> {
    let unknown = || LookupOwned::Unknown(why.binds_as.clone());
    let loop_var = LoopControl::loop_var(control).to_string();
    let mut out = vec![
        (loop_var.clone(), unknown()),
        (
            "ansible_loop_var".into(),
            LookupOwned::Value(Value::String(loop_var)),
        ),
        ("ansible_loop".into(), unknown()),
    ];
    if let Some(iv) = control.and_then(|c| c.index_var.clone()) {
        out.push((iv.clone(), unknown()));
        out.push((
            "ansible_index_var".into(),
            LookupOwned::Value(Value::String(iv)),
        ));
    }
    out
}

/// One iteration of a task, planned: its own loop item (when it loops and
/// the items are known), the loop variables it binds (its own and those of
/// the dynamic includes with a loop it is reached through), and why its
/// items are unknown.
pub struct Planned {
    pub item: Option<Value>,
    pub bound: Vec<(String, LookupOwned)>,
    pub unknown: Option<LoopUnknown>,
    /// A loop it is in has no items: Ansible runs nothing.
    pub empty: bool,
}

/// The iterations of `inst`: one per combination of the items of the
/// includes' loops it is reached through and of its own loop, each loop
/// evaluated with the variables of the loops around it (`tv_with` gives
/// the task's variables with those bound), the innermost loop's variables
/// first (they win). Empty when neither the task nor an include above it
/// loops. Bounded: past [`jinja::MAX_LOOKUP_ITEMS`] combinations, one
/// iteration with every loop variable unknown.
pub fn plan<'s>(
    inst: &TaskInstance,
    fs: &crate::load::FsMemo,
    tv_with: &dyn Fn(Vec<(String, LookupOwned)>) -> TaskVars<'s>,
) -> Vec<Planned> {
    let loopers: Vec<&crate::ansible::task::Task> = inst
        .outer_loops
        .iter()
        .map(AsRef::as_ref)
        .chain(std::iter::once(&*inst.task))
        .filter(|t| t.loop_items.is_some())
        .collect();
    let Some(last) = loopers.len().checked_sub(1) else {
        return Vec::new();
    };
    let own_loops = inst.task.loop_items.is_some();
    let mut out = vec![Planned {
        item: None,
        bound: Vec::new(),
        unknown: None,
        empty: false,
    }];
    for (depth, task) in loopers.iter().enumerate() {
        let control = task.loop_control.as_deref();
        let is_own = own_loops && depth == last;
        let mut next = Vec::new();
        for p in out {
            let tv = tv_with(p.bound.clone());
            let items = loop_items_of(task, inst, &tv, fs).unwrap_or(LoopItems::Known(Vec::new()));
            match items {
                // An empty loop runs nothing; kept as one iteration
                // without an item that does nothing (its effects are none).
                LoopItems::Known(list) if list.is_empty() => {
                    next.push(Planned { empty: true, ..p });
                }
                LoopItems::Known(list) => {
                    for i in 0..list.len() {
                        let mut bound = bindings(control, &tv, &list, i);
                        bound.extend(p.bound.iter().cloned());
                        next.push(Planned {
                            item: if is_own { Some(list[i].clone()) } else { None },
                            bound,
                            unknown: p.unknown.clone(),
                            empty: p.empty,
                        });
                    }
                }
                LoopItems::Unknown(why) => {
                    let mut bound = unknown_bindings(control, &why);
                    bound.extend(p.bound.iter().cloned());
                    next.push(Planned {
                        item: None,
                        bound,
                        unknown: Some(p.unknown.clone().unwrap_or(why)),
                        empty: p.empty,
                    });
                }
            }
            if next.len() > jinja::MAX_LOOKUP_ITEMS {
                let why = too_many();
                let bound = loopers
                    .iter()
                    .rev()
                    .flat_map(|t| unknown_bindings(t.loop_control.as_deref(), &why))
                    .collect();
                return vec![Planned {
                    item: None,
                    bound,
                    unknown: Some(why),
                    empty: false,
                }];
            }
        }
        out = next;
    }
    out
}
