//! The variables one task sees: resolving a name through the precedence
//! ladder, the cycle and depth guard, registered results, `set_fact` and
//! run-time names, and rendering values through `jinja`.

use super::{Definition, MAX_RENDER_DEPTH, Memo, PlayVars, set_fact_literal};
use crate::ansible::project::{TaskInstance, VarLayer};
use crate::jinja::{self, Lookup, Rendered, UnknownWhy, VarSource};
use crate::yaml::{Node, Tag, Value};
use crate::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// Names Ansible provides at run time (facts and magic variables).
fn is_runtime_name(name: &str) -> bool {
    name.starts_with("ansible_")
        || matches!(
            name,
            "inventory_hostname"
                | "inventory_hostname_short"
                | "groups"
                | "group_names"
                | "hostvars"
                | "play_hosts"
                | "playbook_dir"
                | "role_path"
                | "role_name"
                | "omit"
                | "item"
                | "environment"
                | "inventory_dir"
                | "inventory_file"
                | "vars"
        )
}

/// Interior state of one task's resolution. A mutex rather than a `RefCell`
/// so that tasks can be analysed on worker threads; one task is resolved by
/// one thread at a time (its cycle guard assumes so), so it never waits.
#[derive(Debug, Default)]
pub(super) struct Slot<T>(Mutex<T>);

impl<T> Slot<T> {
    pub(super) fn new(v: T) -> Self {
        Slot(Mutex::new(v))
    }

    pub(super) fn borrow(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn borrow_mut(&self) -> MutexGuard<'_, T> {
        self.borrow()
    }
}

/// A counter in a task's resolution state.
#[derive(Debug, Default)]
pub(super) struct Count(AtomicUsize);

impl Count {
    pub(super) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    pub(super) fn set(&self, v: usize) {
        self.0.store(v, Ordering::Relaxed);
    }
}

/// The variables one task sees.
pub struct TaskVars<'a> {
    pub(super) play: &'a PlayVars,
    /// The loop variables bound for one iteration (`item` or the
    /// `loop_var`, `index_var`, `ansible_loop`...), known or unknown.
    pub(super) bound: Vec<(String, LookupOwned)>,
    /// Why the loop variables bound as unknown are (`found (registered
    /// result)`), for what is shown in their place.
    pub(super) loop_why: Option<Arc<str>>,
    /// The task instance (its role gives `role_path`, `role_name`...).
    pub(super) inst: Option<&'a TaskInstance>,
    pub(super) scopes: &'a [Arc<VarLayer>],
    /// Every name resolved for this task, with what it rests on.
    pub(super) memo: Slot<HashMap<String, Arc<Memo>>>,
    /// The names being resolved, outermost first: the cycle and depth guard.
    pub(super) stack: Slot<Vec<String>>,
    /// How often the cycle/depth guard cut a resolution short.
    pub(super) cuts: Count,
    /// Every name resolved so far, in order (with the names each kept
    /// result rests on): what a resolution depended on is a slice of it.
    pub(super) touched: Slot<Vec<String>>,
    /// How many resolutions depended on this task's own scopes or `item`.
    pub(super) scoped: Count,
    /// Deepest stack a resolution in progress reached (names entered).
    pub(super) deepest: Count,
    /// Top-level renders in progress: the log of consulted names is kept
    /// until they end (it says what the render rested on).
    pub(super) recording: Count,
    /// Names the task's scopes define (built on first use).
    pub(super) scope_names: OnceLock<HashSet<&'a str>>,
}

/// A resolved variable: the winning definition (if static) and its value.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub lookup: LookupOwned,
    pub winner: Option<Definition>,
}

/// An owned copy of [`Lookup`] (which is not `Clone`).
#[derive(Debug, Clone)]
pub enum LookupOwned {
    Value(serde_json::Value),
    Unknown(UnknownWhy),
    Missing,
}

impl<'a> TaskVars<'a> {
    #[must_use]
    pub fn new(play: &'a PlayVars, instance: Option<&'a TaskInstance>) -> Self {
        let mut tv = Self::in_scopes(play, instance.map_or(&[], |i| &i.scopes[..]));
        tv.inst = instance;
        tv
    }

    /// The variables seen under `scopes` (task, block, include, role
    /// parameter layers) in a play.
    pub(super) fn in_scopes(play: &'a PlayVars, scopes: &'a [Arc<VarLayer>]) -> Self {
        TaskVars {
            play,
            bound: Vec::new(),
            loop_why: None,
            inst: None,
            scopes,
            memo: Slot::new(HashMap::default()),
            stack: Slot::new(Vec::new()),
            cuts: Count::default(),
            touched: Slot::new(Vec::new()),
            scoped: Count::default(),
            deepest: Count::default(),
            recording: Count::default(),
            scope_names: OnceLock::new(),
        }
    }

    /// The same task seen in one loop iteration with `item` bound.
    #[must_use]
    pub fn with_item(self, item: serde_json::Value) -> Self {
        self.with_loop(vec![("item".into(), LookupOwned::Value(item))])
    }

    /// The same task seen in one loop iteration with these loop variables
    /// bound (a value, or unknown with its reason when the loop's items
    /// are not known).
    #[must_use]
    pub fn with_loop(mut self, bound: Vec<(String, LookupOwned)>) -> Self {
        self.bound = bound;
        self
    }

    /// The loop variables bound and why the unknown ones are (see
    /// [`TaskVars::with_loop`], [`TaskVars::with_loop_why`]): to see the same
    /// iteration again with fresh variables.
    #[must_use]
    pub fn loop_binding(&self) -> (Vec<(String, LookupOwned)>, Option<Arc<str>>) {
        (self.bound.clone(), self.loop_why.clone())
    }

    /// The same iteration with the reason its unknown loop variables are
    /// unknown.
    #[must_use]
    pub fn with_loop_why(mut self, why: Arc<str>) -> Self {
        self.loop_why = Some(why);
        self
    }

    /// Why the loop variables bound as unknown are.
    #[must_use]
    pub fn loop_why(&self) -> Option<&str> {
        self.loop_why.as_deref()
    }

    /// The loop variables bound as unknown for this iteration (the one
    /// iteration of a loop whose items are not known).
    pub fn unknown_loop_vars(&self) -> impl Iterator<Item = &str> {
        self.bound
            .iter()
            .filter(|(_, v)| !matches!(v, LookupOwned::Value(_)))
            .map(|(n, _)| n.as_str())
    }

    /// Whether `name` is a loop variable bound for this iteration.
    pub(super) fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|(n, _)| n == name)
    }

    /// Resolves `name` to a value or says why it is unknown.
    pub fn resolve(&self, name: &str) -> Arc<Resolved> {
        if let Some((_, v)) = self.bound.iter().find(|(n, _)| n == name) {
            // What rests on a loop variable holds for this iteration only.
            self.scoped.set(self.scoped.get() + 1);
            return Arc::new(Resolved {
                lookup: v.clone(),
                winner: None,
            });
        }
        if let Some(v) = self.magic(name) {
            // Per task (its role) or per play: never shared.
            self.scoped.set(self.scoped.get() + 1);
            return Arc::new(Resolved {
                lookup: v,
                winner: None,
            });
        }
        if let Some(r) = self.memoized(name) {
            return r;
        }
        let guarded = {
            let stack = self.stack.borrow();
            stack.iter().any(|n| n == name) || stack.len() >= MAX_RENDER_DEPTH
        };
        if guarded {
            self.cuts.set(self.cuts.get() + 1);
            return Arc::new(Resolved {
                lookup: LookupOwned::Unknown(UnknownWhy::Cycle),
                winner: None,
            });
        }
        let recording = self.record(name);
        let (winner, from_scope) = self.winner_from(name);
        if from_scope {
            self.scoped.set(self.scoped.get() + 1);
        }
        let lookup = match &winner {
            Some(d) if d.rank < 30 && self.play.registered.contains_key(name) => {
                LookupOwned::Unknown(UnknownWhy::Registered)
            }
            Some(d) => {
                self.stack.borrow_mut().push(name.to_string());
                let v = self.value(&d.value);
                self.stack.borrow_mut().pop();
                v
            }
            None if self.play.registered.contains_key(name) => {
                LookupOwned::Unknown(UnknownWhy::Registered)
            }
            None if self.play.set_facts.contains_key(name) => self.set_fact_value(name),
            None if is_runtime_name(name) => LookupOwned::Unknown(UnknownWhy::Fact),
            None => LookupOwned::Missing,
        };
        let resolved = Arc::new(Resolved { lookup, winner });
        self.remember(name, &resolved, &recording);
        resolved
    }

    pub(super) fn render(&self, template: &str) -> LookupOwned {
        match jinja::render(template, self) {
            Rendered::Value(v) => LookupOwned::Value(v),
            Rendered::Unknown(u) => LookupOwned::Unknown(
                u.iter()
                    .map(|x| x.why.clone())
                    .min()
                    .unwrap_or(UnknownWhy::TooComplex),
            ),
        }
    }

    /// A name only set by `set_fact`: known when every `set_fact` of it gives
    /// the same literal (what it will be at run time), unknown otherwise.
    pub(super) fn set_fact_value(&self, name: &str) -> LookupOwned {
        let sites = self.play.set_facts.get(name).map_or(&[][..], Vec::as_slice);
        match set_fact_literal(sites) {
            Some(n) => LookupOwned::Value(n.to_json()),
            None => LookupOwned::Unknown(UnknownWhy::RuntimeFact),
        }
    }

    /// Renders a node's value (strings through Jinja, containers recursively).
    pub fn value(&self, node: &Node) -> LookupOwned {
        if node.tag == Tag::Vault {
            return LookupOwned::Unknown(UnknownWhy::Vault);
        }
        match &node.value {
            Value::Str(s)
                if node.tag != Tag::Unsafe && crate::ansible::project::is_templated(s) =>
            {
                // Templates written in YAML are read as Ansible reads them.
                self.render_text(&jinja::escape_backslashes(s))
            }
            Value::Seq(items) => {
                let mut out = Vec::new();
                for i in items {
                    match self.value(i) {
                        LookupOwned::Value(v) => out.push(v),
                        other => return other,
                    }
                }
                LookupOwned::Value(serde_json::Value::Array(out))
            }
            Value::Map(pairs) => {
                let mut out = serde_json::Map::new();
                for (k, v) in pairs {
                    match self.value(v) {
                        LookupOwned::Value(val) => {
                            out.insert(k.scalar_text().unwrap_or_default(), val);
                        }
                        other => return other,
                    }
                }
                LookupOwned::Value(serde_json::Value::Object(out))
            }
            _ => LookupOwned::Value(node.to_json()),
        }
    }
}

impl VarSource for TaskVars<'_> {
    fn lookup(&self, name: &str) -> Lookup {
        match &self.resolve(name).lookup {
            LookupOwned::Value(v) => Lookup::Value(v.clone()),
            LookupOwned::Unknown(w) => Lookup::Unknown(w.clone()),
            LookupOwned::Missing => Lookup::Missing,
        }
    }
}
