//! What [`build`](super::build) produces: the tree's entries, plays, task
//! instances, roles and variable layers, and the hook through which a build
//! asks for templated names. Plain data: nothing here reads a file or
//! expands anything.

use super::super::task::{Condition, Task};
use crate::HashMap;
use crate::diagnostic::Diagnostic;
use crate::discover::DiscoveredFile;
use crate::source::Span;
use crate::yaml::Node;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a task sits in a play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    PreTasks,
    Roles,
    Tasks,
    PostTasks,
    Handlers,
}

/// What defined a layer of variables.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum LayerKind {
    RoleDefaults {
        role: String,
    },
    /// Inventory variables (`group_vars`, inline group vars) for a group.
    Inventory {
        group: String,
    },
    RoleVars {
        role: String,
    },
    RoleParams {
        role: String,
    },
    PlaybookImportVars,
    PlayVars,
    PlayVarsFile,
    BlockVars,
    IncludeVars,
    TaskVars,
    /// The magic variables Ansible sets for a play (`playbook_dir`...):
    /// above every other definition, extra vars included.
    Magic,
}

/// A mapping of variables and what defined it.
#[derive(Debug, Clone)]
pub struct VarLayer {
    pub kind: LayerKind,
    /// A mapping node (its span is where it was written).
    pub node: Node,
}

/// A role as found on disk.
#[derive(Debug)]
pub struct Role {
    /// Name as referenced (`kubernetes/preinstall`).
    pub name: String,
    pub path: PathBuf,
    pub defaults: Vec<Arc<VarLayer>>,
    pub vars: Vec<Arc<VarLayer>>,
    pub dependencies: Vec<RoleEntry>,
    pub allow_duplicates: bool,
}

/// A reference to a role: in a play's `roles:`, a meta dependency, or an
/// `import_role`/`include_role`.
#[derive(Debug, Clone)]
pub struct RoleEntry {
    pub name: String,
    pub span: Span,
    pub when: Vec<Condition>,
    pub vars: Option<Node>,
    /// Role parameters (keys other than keywords), as a mapping.
    pub params: Option<Node>,
    pub tags: Vec<String>,
    pub tasks_from: Option<String>,
    pub handlers_from: Option<String>,
}

/// A task as reached from a play: the task plus everything inherited on the way.
#[derive(Debug, Clone)]
pub struct TaskInstance {
    pub task: Arc<Task>,
    /// Role chain, outermost first; the last one owns the task. Shared by
    /// the tasks of one role run (as are `role_path`, `blocks` and `tags`):
    /// a whole tree has thousands of instances.
    pub roles: Arc<[String]>,
    pub section: Section,
    /// Inherited conditions (role entries, imports, blocks) then the task's own.
    /// Shared with the context's list when the task adds none (as `scopes`
    /// when it has no `vars`): a whole tree has thousands of instances, most
    /// of them adding no condition of their own.
    pub conditions: Arc<[Condition]>,
    /// Variable layers from role params, blocks, includes and the task, outermost first.
    pub scopes: Arc<[Arc<VarLayer>]>,
    /// Reached only through a dynamic include (`include_tasks`/`include_role`).
    pub dynamic: bool,
    /// Directory of the role that owns the task (for `templates/` and `files/`).
    pub role_path: Option<Arc<Path>>,
    /// For an include task: whether its target was resolved.
    pub include_resolved: Option<bool>,
    /// Enclosing block parts, outermost first (`rescue`/`always` tasks run
    /// only after a failure or in any case).
    pub blocks: Arc<[BlockPart]>,
    /// Effective tags: inherited from role entries, imports, blocks and the play.
    pub tags: Arc<[String]>,
    /// A second run of a role with the same parameters in the same play:
    /// listed by Ansible, but skipped at run time.
    pub duplicate: bool,
    /// The dynamic includes (`include_tasks`, `include_role`) with a loop
    /// the task is reached through, outermost first: the task runs once
    /// per item of each, with their loop variables.
    pub outer_loops: Arc<[Arc<Task>]>,
}

/// Which list of a block a task sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockPart {
    Block,
    Rescue,
    Always,
}

#[derive(Debug)]
pub struct Play {
    pub name: Option<String>,
    pub hosts: String,
    pub span: Span,
    /// Play-wide variable layers in load order: role defaults and role vars of
    /// every role the play uses, then import vars, play vars and vars files.
    pub layers: Vec<Arc<VarLayer>>,
    pub tasks: Vec<TaskInstance>,
    pub handlers: Vec<TaskInstance>,
}

#[derive(Debug)]
pub struct Entry {
    /// The entry playbook, or the role run as if by a play.
    pub name: String,
    /// The entry's first item (play or import), where project-wide findings point.
    pub span: Option<Span>,
    /// The entry's plays. A play imported the same way by several entries
    /// (`upgrade-cluster.yml` and `upgrade_cluster.yml` importing one
    /// playbook) is expanded once and shared.
    pub plays: Vec<Arc<Play>>,
}

/// An include or role reference whose target is not known statically.
#[derive(Debug, Clone, Serialize)]
pub struct Unresolved {
    pub kind: &'static str,
    pub expr: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub reason: String,
}

/// Counts of what was read.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Stats {
    pub files: usize,
    pub yaml_files: usize,
    pub yaml_parsed: usize,
    pub yaml_failed: usize,
    pub roles_loaded: usize,
    pub tasks: usize,
}

pub struct Project {
    pub root: PathBuf,
    /// The automation's name: `galaxy.yml` name, else the directory name.
    pub name: String,
    pub files: Vec<DiscoveredFile>,
    pub entries: Vec<Entry>,
    pub roles: HashMap<PathBuf, Arc<Role>>,
    pub unresolved: Vec<Unresolved>,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: Stats,
    /// The run's view of the file system (shared with the analysis, which
    /// reads templates and copied files).
    pub fs: Arc<crate::load::FsMemo>,
}

/// Renders a templated string (an include target, a role name) when the
/// variables allow; `None` keeps it unresolved.
pub trait TemplateResolver: Sync {
    fn resolve(
        &self,
        template: &str,
        play: &PlayContext<'_>,
        scopes: &[Arc<VarLayer>],
    ) -> Option<String>;
}

/// The resolver that resolves nothing: templated targets stay unresolved.
pub struct NoResolver;

impl TemplateResolver for NoResolver {
    fn resolve(&self, _: &str, _: &PlayContext<'_>, _: &[Arc<VarLayer>]) -> Option<String> {
        None
    }
}

/// What a resolver may look at: the play's layers so far.
pub struct PlayContext<'a> {
    pub layers: &'a [Arc<VarLayer>],
}

/// Options for building the model.
pub struct BuildOptions<'a> {
    /// Entry playbooks (absolute or relative to the working directory); empty:
    /// the playbooks at the top of the root, else every role.
    pub playbooks: Vec<PathBuf>,
    pub resolver: &'a dyn TemplateResolver,
}

#[must_use]
pub fn is_templated(s: &str) -> bool {
    // One pass for both markers: two `contains` calls build two searchers
    // per call, and this is asked of every string a build looks at.
    let b = s.as_bytes();
    memchr::memchr_iter(b'{', b).any(|i| matches!(b.get(i + 1), Some(b'{' | b'%')))
}

/// Whether a parsed YAML document looks like a playbook.
#[must_use]
pub fn is_playbook(doc: &Node) -> bool {
    doc.as_seq().is_some_and(|items| {
        !items.is_empty()
            && items.iter().all(|i| i.as_map().is_some())
            && items.iter().any(|i| {
                i.get("hosts").is_some()
                    || i.get("import_playbook").is_some()
                    || i.get("ansible.builtin.import_playbook").is_some()
            })
    })
}
