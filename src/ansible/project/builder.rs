//! The state of one expansion: the [`Builder`] (what a play's expansion has
//! collected: roles, diagnostics, unresolved targets), the context a task
//! inherits on its way down ([`Ctx`]), and what a play has expanded so far
//! ([`PlayState`]). Holds no Ansible rule of its own: those are in
//! `playbook`, `tasks` and `roles`.

use super::super::config::AnsibleCfg;
use super::super::task::{Condition, Task};
use super::budget::{Budget, Spent};
use super::model::{
    BlockPart, Role, Section, TaskInstance, TemplateResolver, Unresolved, VarLayer,
};
use super::share::{SharedRoles, SharedTasks, StackProbe};
use super::speculate::Speculation;
use crate::diagnostic::Diagnostic;
use crate::load::{Loaded, Loader};
use crate::source::Span;
use crate::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) struct Builder<'a> {
    pub(super) root: PathBuf,
    pub(super) loader: &'a Loader,
    pub(super) cfg: AnsibleCfg,
    pub(super) resolver: &'a dyn TemplateResolver,
    pub(super) roles: HashMap<PathBuf, Arc<Role>>,
    /// Roles already read by any builder of this run (plays expand in
    /// parallel; each role's files are read and indexed once).
    pub(super) shared_roles: &'a SharedRoles,
    pub(super) shared_tasks: &'a SharedTasks,
    pub(super) unresolved: Vec<Unresolved>,
    pub(super) diags: Vec<Diagnostic>,
    pub(super) reported: HashSet<(String, u32, u32, &'static str)>,
    /// Set while plays are expanded speculatively in parallel.
    pub(super) speculation: Option<Speculation<'a>>,
    /// The run's bound on task instances ([`run_task_bound`](super::run_task_bound)).
    pub(super) run_cap: usize,
    /// Every playbook on the import chain of some play (canonical paths):
    /// the only paths in a play's initial include stack.
    pub(super) playbook_keys: Arc<HashSet<PathBuf>>,
    /// How this builder's play used its include stack.
    pub(super) probe: StackProbe,
}

#[derive(Clone)]
pub(super) struct Ctx {
    pub(super) conditions: Arc<[Condition]>,
    pub(super) scopes: Arc<[Arc<VarLayer>]>,
    pub(super) roles: Arc<[String]>,
    pub(super) role_path: Option<Arc<Path>>,
    pub(super) dynamic: bool,
    pub(super) section: Section,
    /// Files and roles being expanded, for cycle detection.
    pub(super) stack: Vec<PathBuf>,
    pub(super) basedir: PathBuf,
    pub(super) blocks: Arc<[BlockPart]>,
    pub(super) tags: Arc<[String]>,
    pub(super) duplicate: bool,
    /// The dynamic includes with a loop the tasks are reached through,
    /// outermost first (see `TaskInstance::outer_loops`).
    pub(super) outer_loops: Arc<[Arc<Task>]>,
}

/// `a` followed by `more`: `a` itself (shared) when there is nothing more.
pub(super) fn extended<T: Clone>(a: &Arc<[T]>, more: &[T]) -> Arc<[T]> {
    if more.is_empty() {
        return Arc::clone(a);
    }
    a.iter().chain(more).cloned().collect()
}

/// Whether `key`, a canonical path, is on the expansion stack. Canonical
/// paths are equal as paths exactly when their bytes are (no `.`, `..`,
/// doubled or trailing separators), and bytes compare without walking the
/// components from the end as `Path`'s equality does.
pub(super) fn on_stack(stack: &[PathBuf], key: &Path) -> bool {
    stack.iter().any(|p| p.as_os_str() == key.as_os_str())
}

pub(super) struct PlayState {
    pub(super) layers: Vec<Arc<VarLayer>>,
    pub(super) tasks: Vec<TaskInstance>,
    pub(super) handlers: Vec<TaskInstance>,
    pub(super) ran: HashSet<String>,
    /// What the play may expand to.
    pub(super) budget: Budget,
    /// The play hit its budget (or gave up speculating); nothing more is expanded.
    pub(super) full: bool,
    /// Roles run so far (bounded like tasks).
    pub(super) role_runs: usize,
}

impl PlayState {
    pub(super) fn new(layers: Vec<Arc<VarLayer>>, budget: Budget) -> Self {
        PlayState {
            layers,
            tasks: Vec::new(),
            handlers: Vec::new(),
            ran: HashSet::default(),
            budget,
            full: false,
            role_runs: 0,
        }
    }

    pub(super) fn count(&self) -> usize {
        self.tasks.len() + self.handlers.len()
    }

    pub(super) fn spent(&self) -> Spent {
        Spent {
            tasks: self.count(),
            // The run that went past the budget did not happen.
            role_runs: self.role_runs.min(self.budget.role_runs),
            full: self.full,
        }
    }
}

impl Builder<'_> {
    pub(super) fn display(&self, p: &Path) -> String {
        crate::source::display_path(&self.root, p)
    }

    pub(super) fn push_diag(&mut self, d: Diagnostic) {
        let file = self.loader.sources.display(d.span.file);
        if self
            .reported
            .insert((file, d.span.line, d.span.col, d.code))
        {
            self.diags.push(d);
        }
    }

    pub(super) fn unresolved(
        &mut self,
        kind: &'static str,
        expr: &str,
        span: Span,
        reason: String,
    ) {
        let file = self.loader.sources.display(span.file);
        if self
            .unresolved
            .iter()
            .any(|u| u.file == file && u.line == span.line && u.expr == expr)
        {
            return;
        }
        self.unresolved.push(Unresolved {
            kind,
            expr: expr.to_string(),
            file,
            line: span.line,
            column: span.col,
            reason,
        });
    }

    /// Loads a YAML file and reports its read/parse problems once.
    pub(super) fn load(&mut self, path: &Path) -> Arc<Loaded> {
        let l = self.loader.yaml(path);
        for d in l.diagnostics.iter().chain(&l.yaml.diagnostics) {
            self.push_diag(d.clone());
        }
        l
    }
}
