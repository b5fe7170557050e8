//! The bounds that keep expansion finite on any tree: how deep includes
//! nest, how many task instances and role runs one play and the whole run
//! may expand to, and the diagnostics of a play cut short. Plays take from
//! the run's budget in play order, so which plays are cut never depends on
//! thread timing. Decides nothing about Ansible's semantics.

use super::builder::{Builder, PlayState};
use crate::diagnostic::{Diagnostic, code};
use crate::source::Span;

/// Deepest chain of includes/imports/roles followed (a guard besides cycle detection).
pub const MAX_INCLUDE_DEPTH: usize = 64;
/// Most task instances one play may expand to (imports and role dependencies
/// can fan out exponentially); past it the play is cut short with a diagnostic.
/// Role runs are bounded by the same number.
pub const MAX_PLAY_TASKS: usize = 50_000;
/// Fewest task instances (and, separately, role runs) a whole run may expand
/// to, all entries and plays together: many plays each cut at
/// [`MAX_PLAY_TASKS`] would still add up without bound. Large trees get one
/// more per [`RUN_TASK_BYTES`] bytes of YAML they hold (a monorepo of 100
/// kubespray role trees expands to about 500,000). Plays take from it in
/// order, so which plays are cut never depends on thread timing. Kubespray's
/// eight top-level playbooks together expand to about 9,400 (handlers
/// included; 715 in the largest play).
pub const MAX_RUN_TASKS: usize = 100_000;

/// Bytes of YAML per task instance a run may expand to above [`MAX_RUN_TASKS`]
/// (kubespray: about 290 bytes of YAML per instance).
pub const RUN_TASK_BYTES: usize = 64;

/// The run's bound on task instances for a tree holding `yaml_bytes` of YAML.
#[must_use]
pub fn run_task_bound(yaml_bytes: usize) -> usize {
    MAX_RUN_TASKS.max(yaml_bytes / RUN_TASK_BYTES)
}

/// What one play may expand to: task instances (tasks and handlers) and role runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Budget {
    pub(super) tasks: usize,
    pub(super) role_runs: usize,
}

impl Budget {
    pub(super) fn is_empty(self) -> bool {
        self.tasks == 0 || self.role_runs == 0
    }

    /// Whether a play built with a larger budget `wide` and ending as `spent`
    /// is exactly what this budget builds: same budget, or one never reached.
    pub(super) fn same_as(self, wide: Budget, spent: &Spent) -> bool {
        self == wide
            || (!spent.full && spent.tasks < self.tasks && spent.role_runs <= self.role_runs)
    }
}

/// What a play used of its budget.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Spent {
    pub(super) tasks: usize,
    pub(super) role_runs: usize,
    /// The play hit its budget and was cut short.
    pub(super) full: bool,
}

/// What the plays expanded so far used of the run's bound (`cap`).
#[derive(Debug)]
pub(super) struct RunSpent {
    pub(super) cap: usize,
    pub(super) tasks: usize,
    pub(super) role_runs: usize,
}

impl Default for RunSpent {
    fn default() -> Self {
        RunSpent {
            cap: MAX_RUN_TASKS,
            tasks: 0,
            role_runs: 0,
        }
    }
}

impl RunSpent {
    /// The budget of the next play.
    pub(super) fn next(&self) -> Budget {
        Budget {
            tasks: MAX_PLAY_TASKS.min(self.cap.saturating_sub(self.tasks)),
            role_runs: MAX_PLAY_TASKS.min(self.cap.saturating_sub(self.role_runs)),
        }
    }

    pub(super) fn add(&mut self, spent: Spent) {
        self.tasks += spent.tasks;
        self.role_runs += spent.role_runs;
    }
}

/// The diagnostic of a play cut short by its budget: the per-play bound, or
/// what the plays before it left of the run's.
fn budget_diag(span: Span, budget: Budget, role_run: bool, cap: usize) -> Diagnostic {
    let (message, help) = match (role_run, budget) {
        (false, Budget { tasks, .. }) if tasks >= MAX_PLAY_TASKS => (
            format!(
                "this play expands to more than {MAX_PLAY_TASKS} tasks (imports or role dependencies fan out); the rest of the play is not analysed"
            ),
            "check for a file imported many times over, or a role dependency repeated at every level",
        ),
        (true, Budget { role_runs, .. }) if role_runs >= MAX_PLAY_TASKS => (
            format!(
                "this play runs roles more than {MAX_PLAY_TASKS} times (role dependencies fan out); the rest of the play is not analysed"
            ),
            "check for a role dependency repeated at every level",
        ),
        (false, Budget { tasks, .. }) => (
            format!(
                "the run reaches its bound of {cap} task instances in this play (all plays together; the plays before left this one {tasks}); the rest of this play and the plays after it are not analysed"
            ),
            RUN_SPENT_HELP,
        ),
        (true, Budget { role_runs, .. }) => (
            format!(
                "the run reaches its bound of {cap} role runs in this play (all plays together; the plays before left this one {role_runs}); the rest of this play and the plays after it are not analysed"
            ),
            RUN_SPENT_HELP,
        ),
    };
    Diagnostic::error(code::YAML_LIMIT, span, message).with_help(help)
}

const RUN_SPENT_HELP: &str = "analyse fewer playbooks at a time with --playbook, or look for a file imported many times over or a role dependency repeated at every level in the plays before this one";

/// The diagnostic at the first play (`noun` "play"; "role" in a tree without
/// playbooks) left out because the run's budget ran out; `after` more are
/// left out.
pub(super) fn run_spent_diag(span: Span, noun: &str, after: usize, cap: usize) -> Diagnostic {
    let (which, them) = match after {
        0 => (format!("this {noun} is"), "it"),
        1 => (format!("this {noun} and the one after it are"), "them"),
        n => (
            format!("this {noun} and the {n} {noun}s after it are"),
            "them",
        ),
    };
    Diagnostic::error(
        code::YAML_LIMIT,
        span,
        format!("{which} not analysed: the {noun}s before {them} already reach the bound of {cap} task instances (or role runs) for one run"),
    )
    .with_help(if noun == "role" {
        "analyse fewer roles at a time (give one role's directory as the path), or look for a role dependency repeated at every level in the roles before this one"
    } else {
        RUN_SPENT_HELP
    })
}

impl Builder<'_> {
    /// Whether the play must stop expanding: it is full, it gave up
    /// speculating, or it just went past its budget of tasks (or, with
    /// `role_run`, of role runs), reported at `span`.
    pub(super) fn must_stop(&mut self, state: &mut PlayState, span: Span, role_run: bool) -> bool {
        if state.full {
            return true;
        }
        if self.speculation_over(state) {
            state.full = true;
            return true;
        }
        let over = if role_run {
            state.role_runs > state.budget.role_runs
        } else {
            state.count() >= state.budget.tasks
        };
        if over {
            state.full = true;
            self.push_diag(budget_diag(span, state.budget, role_run, self.run_cap));
        }
        over
    }
}
