//! The model of a tree: entry playbooks expanded into plays and the ordered
//! tasks each play reaches, as Ansible would compile them.
//!
//! Resolves `import_playbook`, roles (search paths, nested names, meta
//! dependencies, de-duplication), `import_*`/`include_*` and blocks, carrying
//! `when` conditions and variable layers down to every task. Never evaluates a
//! condition or a template: that is `vars`/`jinja`'s job, reached through the
//! [`TemplateResolver`] hook for include targets.

use super::config::AnsibleCfg;
use super::task::{self, Condition, IncludeKind, IncludeSpec, Item, Origin, Task};
use crate::diagnostic::{Diagnostic, Severity, code};
use crate::discover::{DiscoveredFile, FileKind};
use crate::load::{Loaded, Loader};
use crate::source::Span;
use crate::yaml::{Node, Value};
use crate::{HashMap, HashSet};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

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
    /// when it has no `vars`): copied per instance, they cost kubespray's
    /// whole-tree `check` ~2.5 MB of resident memory.
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
    // One pass for both markers (two `contains` calls built two searchers
    // per call: 6.5M instructions on kubespray for 23k tag lists alone).
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

/// A play found in the playbook chain, with what it inherits, before it is
/// expanded (plays are expanded in parallel).
/// A rough size of a play before it is expanded, to start large plays
/// first: its roles (each worth many tasks) and its tasks.
fn play_size_estimate(play: &Node) -> usize {
    let len = |k: &str| play.get(k).and_then(Node::as_seq).map_or(0, <[Node]>::len);
    20 * len("roles") + len("pre_tasks") + len("tasks") + len("post_tasks") + len("handlers")
}

struct PlaySpec {
    node: Node,
    basedir: PathBuf,
    layers: Vec<Arc<VarLayer>>,
    when: Vec<Condition>,
    stack: Vec<PathBuf>,
}

/// What a play's expansion depends on besides its include stack: the play
/// node, its directory, and the variables and conditions its imports gave.
#[derive(PartialEq, Eq, Hash)]
struct TwinKey {
    node: Span,
    basedir: PathBuf,
    layers: Vec<(LayerKind, Span)>,
    when: Vec<(String, Span, Origin)>,
}

impl PlaySpec {
    fn twin_key(&self) -> TwinKey {
        TwinKey {
            node: self.node.span,
            basedir: self.basedir.clone(),
            layers: self
                .layers
                .iter()
                .map(|l| (l.kind.clone(), l.node.span))
                .collect(),
            when: self
                .when
                .iter()
                .map(|c| (c.expr.to_string(), c.span, c.origin))
                .collect(),
        }
    }
}

impl StackProbe {
    /// Whether an expansion that started with stack `had` builds the same
    /// with stack `other`: no path looked up could be in one stack and not
    /// the other (only playbooks are), and no depth check comes out
    /// otherwise.
    fn holds_for(self, had: &[PathBuf], other: &[PathBuf]) -> bool {
        let deepest_other = self.deepest + other.len().saturating_sub(had.len());
        !self.touched_playbook
            && self.deepest < MAX_INCLUDE_DEPTH
            && deepest_other < MAX_INCLUDE_DEPTH
    }
}

struct Builder<'a> {
    root: PathBuf,
    loader: &'a Loader,
    cfg: AnsibleCfg,
    resolver: &'a dyn TemplateResolver,
    roles: HashMap<PathBuf, Arc<Role>>,
    /// Roles already read by any builder of this run (plays expand in
    /// parallel; each role's files are read and indexed once).
    shared_roles: &'a SharedRoles,
    shared_tasks: &'a SharedTasks,
    unresolved: Vec<Unresolved>,
    diags: Vec<Diagnostic>,
    reported: HashSet<(String, u32, u32, &'static str)>,
    /// Set while plays are expanded speculatively in parallel.
    speculation: Option<Speculation<'a>>,
    /// The run's bound on task instances ([`run_task_bound`]).
    run_cap: usize,
    /// Every playbook on the import chain of some play (canonical paths):
    /// the only paths in a play's initial include stack.
    playbook_keys: Arc<HashSet<PathBuf>>,
    /// How this builder's play used its include stack.
    probe: StackProbe,
}

/// How a play's expansion used the include stack it started with (the
/// import chain of playbooks above it), for sharing the expansion with a
/// play imported the same way through another chain.
#[derive(Debug, Clone, Copy, Default)]
struct StackProbe {
    /// Longest stack a depth check saw.
    deepest: usize,
    /// A tasks file or role looked up was one of the run's playbooks, which
    /// another chain's stack may hold where this one's does not.
    touched_playbook: bool,
}

/// Roles read so far in a run, each with the diagnostics its reading raised
/// (replayed by every builder that uses the role, so that they do not depend
/// on which play read it first).
type SharedRoles = Mutex<HashMap<PathBuf, (Arc<Role>, Vec<Diagnostic>)>>;

/// Tasks already read from their YAML node, by the node's address and span
/// (every node comes from a file the loader keeps for the whole run, or a
/// play spec alive for the whole build), with the diagnostics reading gave:
/// a role used by many plays is read once.
type SharedTasks = Mutex<HashMap<(usize, Span), (Arc<Task>, Vec<Diagnostic>)>>;

/// A play expanded in parallel before the plays ahead of it are known: it
/// counts what it builds into a counter shared by the run, and gives up (its
/// result is thrown away and the play expanded again, in order) once the run
/// as a whole is past what remains of [`MAX_RUN_TASKS`].
struct Speculation<'a> {
    spent: &'a AtomicUsize,
    cap: usize,
    /// What this play has added to `spent` so far.
    counted: usize,
    aborted: bool,
}

/// What one play may expand to: task instances (tasks and handlers) and role runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Budget {
    tasks: usize,
    role_runs: usize,
}

impl Budget {
    fn is_empty(self) -> bool {
        self.tasks == 0 || self.role_runs == 0
    }

    /// Whether a play built with a larger budget `wide` and ending as `spent`
    /// is exactly what this budget builds: same budget, or one never reached.
    fn same_as(self, wide: Budget, spent: &Spent) -> bool {
        self == wide
            || (!spent.full && spent.tasks < self.tasks && spent.role_runs <= self.role_runs)
    }
}

/// What a play used of its budget.
#[derive(Debug, Clone, Copy, Default)]
struct Spent {
    tasks: usize,
    role_runs: usize,
    /// The play hit its budget and was cut short.
    full: bool,
}

/// What the plays expanded so far used of the run's bound (`cap`).
#[derive(Debug)]
struct RunSpent {
    cap: usize,
    tasks: usize,
    role_runs: usize,
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
    fn next(&self) -> Budget {
        Budget {
            tasks: MAX_PLAY_TASKS.min(self.cap.saturating_sub(self.tasks)),
            role_runs: MAX_PLAY_TASKS.min(self.cap.saturating_sub(self.role_runs)),
        }
    }

    fn add(&mut self, spent: Spent) {
        self.tasks += spent.tasks;
        self.role_runs += spent.role_runs;
    }
}

#[derive(Clone)]
struct Ctx {
    conditions: Arc<[Condition]>,
    scopes: Arc<[Arc<VarLayer>]>,
    roles: Arc<[String]>,
    role_path: Option<Arc<Path>>,
    dynamic: bool,
    section: Section,
    /// Files and roles being expanded, for cycle detection.
    stack: Vec<PathBuf>,
    basedir: PathBuf,
    blocks: Arc<[BlockPart]>,
    tags: Arc<[String]>,
    duplicate: bool,
}

/// `a` followed by `more`: `a` itself (shared) when there is nothing more.
fn extended<T: Clone>(a: &Arc<[T]>, more: &[T]) -> Arc<[T]> {
    if more.is_empty() {
        return Arc::clone(a);
    }
    a.iter().chain(more).cloned().collect()
}

/// Whether `key`, a canonical path, is on the expansion stack. Canonical
/// paths are equal as paths exactly when their bytes are (no `.`, `..`,
/// doubled or trailing separators), and bytes compare without walking the
/// components from the end as `Path`'s equality does.
fn on_stack(stack: &[PathBuf], key: &Path) -> bool {
    stack.iter().any(|p| p.as_os_str() == key.as_os_str())
}

struct PlayState {
    layers: Vec<Arc<VarLayer>>,
    tasks: Vec<TaskInstance>,
    handlers: Vec<TaskInstance>,
    ran: HashSet<String>,
    /// What the play may expand to.
    budget: Budget,
    /// The play hit its budget (or gave up speculating); nothing more is expanded.
    full: bool,
    /// Roles run so far (bounded like tasks).
    role_runs: usize,
}

impl PlayState {
    fn new(layers: Vec<Arc<VarLayer>>, budget: Budget) -> Self {
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

    fn count(&self) -> usize {
        self.tasks.len() + self.handlers.len()
    }

    fn spent(&self) -> Spent {
        Spent {
            tasks: self.count(),
            // The run that went past the budget did not happen.
            role_runs: self.role_runs.min(self.budget.role_runs),
            full: self.full,
        }
    }
}

/// Builds the model of `root` from discovered files already preloaded in `loader`.
#[must_use]
pub fn build(
    root: &Path,
    files: Vec<DiscoveredFile>,
    loader: &Loader,
    opts: &BuildOptions<'_>,
) -> Project {
    let shared_roles = SharedRoles::default();
    let shared_tasks = SharedTasks::default();
    let mut b = Builder {
        root: root.to_path_buf(),
        loader,
        cfg: AnsibleCfg::load(root),
        resolver: opts.resolver,
        roles: HashMap::default(),
        shared_roles: &shared_roles,
        shared_tasks: &shared_tasks,
        unresolved: Vec::new(),
        diags: Vec::new(),
        reported: HashSet::default(),
        speculation: None,
        run_cap: MAX_RUN_TASKS,
        playbook_keys: Arc::default(),
        probe: StackProbe::default(),
    };
    let mut entries = Vec::new();
    let yaml_bytes = files
        .iter()
        .filter(|f| f.kind.is_yaml())
        .filter_map(|f| loader.yaml_size(&f.path))
        .sum();
    let mut run = RunSpent {
        cap: run_task_bound(yaml_bytes),
        ..RunSpent::default()
    };
    b.run_cap = run.cap;
    let playbooks: Vec<PathBuf> = if opts.playbooks.is_empty() {
        files
            .iter()
            .filter(|f| f.kind == FileKind::Yaml && !f.rel.contains('/'))
            .filter(|f| loader.yaml(&f.path).doc().is_some_and(is_playbook))
            .map(|f| f.path.clone())
            .collect()
    } else {
        opts.playbooks.clone()
    };
    if playbooks.is_empty() {
        let roles = find_roles(root, &files);
        for (i, (name, path)) in roles.iter().enumerate() {
            let entry = RoleEntry::bare(
                name.clone(),
                Span::file_start(loader.sources.add(path, "".into())),
            );
            let budget = run.next();
            if budget.is_empty() {
                b.push_diag(run_spent_diag(
                    entry.span,
                    "role",
                    roles.len() - i - 1,
                    run.cap,
                ));
                break;
            }
            let mut state = PlayState::new(Vec::new(), budget);
            let ctx = Ctx {
                conditions: Arc::new([]),
                scopes: Arc::new([]),
                roles: Arc::new([]),
                role_path: None,
                dynamic: false,
                section: Section::Roles,
                stack: Vec::new(),
                basedir: root.to_path_buf(),
                blocks: Arc::new([]),
                tags: Arc::new([]),
                duplicate: false,
            };
            let unit = crate::internal_error::Unit::Role;
            if let Err(d) = crate::internal_error::catch(
                unit,
                || name.clone(),
                entry.span,
                || {
                    b.run_role_at(&entry, path, &ctx, &mut state);
                },
            ) {
                b.push_diag(d);
            }
            run.add(state.spent());
            entries.push(Entry {
                span: Some(entry.span),
                name: format!("role {name}"),
                plays: vec![Arc::new(Play {
                    name: Some(format!("role {name}")),
                    hosts: "all".into(),
                    span: entry.span,
                    layers: state.layers,
                    tasks: state.tasks,
                    handlers: state.handlers,
                })],
            });
        }
    } else {
        // The plays of every entry, in order, then expanded all together.
        let mut specs = Vec::new();
        let mut owners = Vec::new();
        for (i, pb) in playbooks.iter().enumerate() {
            let pb_yaml = loader.yaml(pb);
            let unit = crate::internal_error::Unit::Playbook;
            let label = || pb.display().to_string();
            if let Err(d) =
                crate::internal_error::catch(unit, label, Span::file_start(pb_yaml.id), || {
                    b.expand_playbook(pb, &[], &[], &mut Vec::new(), &mut specs, None);
                })
            {
                b.push_diag(d);
            }
            owners.resize(specs.len(), i);
            let span = pb_yaml
                .doc()
                .and_then(Node::as_seq)
                .and_then(|s| s.first())
                .map(|n| n.span);
            entries.push(Entry {
                span,
                name: crate::source::display_path(root, pb),
                plays: Vec::new(),
            });
        }
        b.playbook_keys = Arc::new(specs.iter().flat_map(|s| s.stack.iter().cloned()).collect());
        let plays = b.plays(&specs, &mut run);
        for (play, owner) in plays.into_iter().zip(owners) {
            entries[owner].plays.push(play);
        }
    }
    let mut stats = Stats {
        files: files.len(),
        ..Stats::default()
    };
    for f in files.iter().filter(|f| f.kind.is_yaml()) {
        stats.yaml_files += 1;
        if loader.status(&f.path).0 {
            stats.yaml_parsed += 1;
        } else {
            stats.yaml_failed += 1;
        }
    }
    stats.roles_loaded = b.roles.len();
    stats.tasks = entries
        .iter()
        .flat_map(|e| &e.plays)
        .map(|p| p.tasks.len())
        .sum();
    let name = project_name(root, loader);
    Project {
        root: root.to_path_buf(),
        name,
        files,
        entries,
        roles: b.roles,
        unresolved: b.unresolved,
        diagnostics: b.diags,
        stats,
        fs: Arc::clone(&loader.fs),
    }
}

fn project_name(root: &Path, loader: &Loader) -> String {
    let galaxy = root.join("galaxy.yml");
    if galaxy.is_file()
        && let Some(n) = loader
            .yaml(&galaxy)
            .doc()
            .and_then(|d| d.get("name"))
            .and_then(Node::scalar_text)
    {
        return n;
    }
    root.canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "automation".into())
}

/// Role directories in a tree with no playbook: the parents of `tasks/`,
/// `defaults/`, `meta/`... named by their path below the nearest `roles/`.
fn find_roles(root: &Path, files: &[DiscoveredFile]) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let mut seen = HashSet::default();
    for f in files {
        let part = match f.kind {
            FileKind::Tasks => "tasks",
            FileKind::Handlers => "handlers",
            FileKind::RoleDefaults => "defaults",
            FileKind::RoleVars => "vars",
            FileKind::RoleMeta => "meta",
            _ => continue,
        };
        let parts: Vec<&str> = f.rel.split('/').collect();
        let Some(i) = parts.iter().position(|p| *p == part) else {
            continue;
        };
        let role_rel = parts[..i].join("/");
        if !seen.insert(role_rel.clone()) {
            continue;
        }
        let path = if role_rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&role_rel)
        };
        let name = match parts[..i].iter().rposition(|p| *p == "roles") {
            Some(r) => parts[r + 1..i].join("/"),
            None if role_rel.is_empty() => root
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| ".".into()),
            None => role_rel.clone(),
        };
        found.push((name, path));
    }
    // Nested role directories (a role inside another's folder) are not roles of their own.
    found.sort_by(|a, b| a.1.cmp(&b.1));
    found
}

/// Candidate file names for `main`-style lookups: `x.yml`, `x.yaml`, `x`.
fn yaml_candidates(dir: &Path, stem: &str) -> Vec<PathBuf> {
    let plain = dir.join(stem);
    if Path::new(stem)
        .extension()
        .is_some_and(|e| e == "yml" || e == "yaml")
    {
        return vec![plain];
    }
    // `dir/stem` with each suffix appended (not `set_extension`, which
    // would replace a dotted stem's last part): one join for the four.
    let with = |suffix: &str| {
        let mut p = plain.clone().into_os_string();
        p.push(suffix);
        PathBuf::from(p)
    };
    vec![with(".yml"), with(".yaml"), with(".json"), plain]
}

fn keyword_node(map: &Node, keys: &[&str]) -> Option<Node> {
    let pairs = map.as_map()?;
    let rest: Vec<(Node, Node)> = pairs
        .iter()
        .filter(|(k, _)| k.as_str().is_none_or(|k| !keys.contains(&k)))
        .cloned()
        .collect();
    if rest.is_empty() {
        None
    } else {
        Some(Node {
            value: Value::Map(rest),
            ..map.clone()
        })
    }
}

const ROLE_ENTRY_KEYWORDS: &[&str] = &[
    "role",
    "name",
    "when",
    "tags",
    "vars",
    "become",
    "become_user",
    "become_method",
    "delegate_to",
    "environment",
    "ignore_errors",
    "no_log",
    "any_errors_fatal",
    "run_once",
    "check_mode",
    "diff",
    "collections",
    "connection",
    "remote_user",
    "tasks_from",
    "vars_from",
    "defaults_from",
    "handlers_from",
    "public",
    "apply",
    "allow_duplicates",
    "rolespec_validate",
    "debugger",
    "module_defaults",
    "throttle",
    "timeout",
];

impl RoleEntry {
    /// A role named with nothing else (`- common` in a play's roles).
    fn bare(name: String, span: Span) -> Self {
        RoleEntry {
            name,
            span,
            when: Vec::new(),
            vars: None,
            params: None,
            tags: Vec::new(),
            tasks_from: None,
            handlers_from: None,
        }
    }
}

fn role_entry(node: &Node, origin: Origin) -> Option<RoleEntry> {
    match &node.value {
        Value::Str(s) => Some(RoleEntry::bare(s.trim().to_string(), node.span)),
        Value::Map(_) => {
            let name_node = node.get("role").or_else(|| node.get("name"))?;
            Some(RoleEntry {
                name: name_node.scalar_text()?.trim().to_string(),
                span: name_node.span,
                when: node
                    .get("when")
                    .map(|w| task::conditions(w, origin))
                    .unwrap_or_default(),
                vars: node.get("vars").cloned(),
                params: keyword_node(node, ROLE_ENTRY_KEYWORDS),
                tags: task::string_list(node.get("tags")),
                tasks_from: node.get("tasks_from").and_then(Node::scalar_text),
                handlers_from: node.get("handlers_from").and_then(Node::scalar_text),
            })
        }
        _ => None,
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
fn run_spent_diag(span: Span, noun: &str, after: usize, cap: usize) -> Diagnostic {
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

/// A play expanded by its own builder, with what that builder collected.
#[derive(Clone)]
struct Built {
    play: Arc<Play>,
    spent: Spent,
    diags: Vec<Diagnostic>,
    unresolved: Vec<Unresolved>,
    roles: HashMap<PathBuf, Arc<Role>>,
    probe: StackProbe,
}

impl<'a> Builder<'a> {
    fn display(&self, p: &Path) -> String {
        crate::source::display_path(&self.root, p)
    }

    fn push_diag(&mut self, d: Diagnostic) {
        let file = self.loader.sources.display(d.span.file);
        if self
            .reported
            .insert((file, d.span.line, d.span.col, d.code))
        {
            self.diags.push(d);
        }
    }

    fn unresolved(&mut self, kind: &'static str, expr: &str, span: Span, reason: String) {
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
    fn load(&mut self, path: &Path) -> Arc<Loaded> {
        let l = self.loader.yaml(path);
        for d in l.diagnostics.iter().chain(&l.yaml.diagnostics) {
            self.push_diag(d.clone());
        }
        l
    }

    /// Records how a stack check for `key` depends on the play's initial stack.
    fn probe_stack(&mut self, key: &Path, ctx: &Ctx) {
        self.probe.deepest = self.probe.deepest.max(ctx.stack.len());
        self.probe.touched_playbook |= self.playbook_keys.contains(key);
    }

    // ----- budgets ---------------------------------------------------------

    /// A builder for one play, sharing this one's settings and role cache.
    fn fork(&self) -> Builder<'a> {
        Builder {
            root: self.root.clone(),
            loader: self.loader,
            cfg: self.cfg.clone(),
            resolver: self.resolver,
            roles: HashMap::default(),
            shared_roles: self.shared_roles,
            shared_tasks: self.shared_tasks,
            unresolved: Vec::new(),
            diags: Vec::new(),
            reported: HashSet::default(),
            speculation: None,
            run_cap: self.run_cap,
            playbook_keys: Arc::clone(&self.playbook_keys),
            probe: StackProbe::default(),
        }
    }

    /// Expands one play with this (fresh) builder; `true` with it when the
    /// builder gave up speculating and the result must be thrown away.
    /// A panic while expanding leaves the play without tasks, reported.
    fn expand(mut self, spec: &PlaySpec, budget: Budget) -> (Built, bool) {
        let unit = crate::internal_error::Unit::Play;
        let name = || spec.node.get("name").and_then(Node::scalar_text);
        let label = || name().unwrap_or_default();
        let (play, spent) =
            crate::internal_error::catch(unit, label, spec.node.span, || self.play(spec, budget))
                .unwrap_or_else(|d| {
                    self.push_diag(d);
                    let play = Play {
                        name: name(),
                        hosts: String::new(),
                        span: spec.node.span,
                        layers: spec.layers.clone(),
                        tasks: Vec::new(),
                        handlers: Vec::new(),
                    };
                    (play, Spent::default())
                });
        let aborted = self.speculation.as_ref().is_some_and(|s| s.aborted);
        let built = Built {
            play: Arc::new(play),
            spent,
            diags: self.diags,
            unresolved: self.unresolved,
            roles: self.roles,
            probe: self.probe,
        };
        (built, aborted)
    }

    /// Expands the plays, in parallel, each with its own builder, and merges
    /// them in order, each within what the plays before it left of
    /// [`MAX_RUN_TASKS`]. Returns the plays expanded: all of them, or the
    /// first ones when the run's budget ran out (reported at the first play
    /// left out).
    ///
    /// A play's budget depends on what the plays before it used, unknown
    /// while they expand in parallel. So each play is first expanded with the
    /// budget of the first, and kept if its own budget builds the same (the
    /// same budget, or one it never reached); else it is expanded again here,
    /// in order, with its own. The parallel pass gives up once the run as a
    /// whole is past the bound, so plays that all fan out cost about twice
    /// the bound, not the per-play bound once per play. The result is the
    /// same as expanding the plays one after the other, for any thread count.
    ///
    /// A play imported the same way as an earlier one (a twin: see
    /// [`PlaySpec::twin_key`]) is not expanded again when the earlier
    /// expansion holds for it too (see [`StackProbe`]): both entries share it.
    fn plays(&mut self, specs: &[PlaySpec], run: &mut RunSpent) -> Vec<Arc<Play>> {
        let first = run.next();
        // The first spec of each twin group, for every spec.
        let mut firsts: HashMap<TwinKey, usize> = HashMap::default();
        let primary: Vec<usize> = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| *firsts.entry(spec.twin_key()).or_insert(i))
            .collect();
        let spent = AtomicUsize::new(0);
        let cap = run.cap.saturating_sub(run.tasks.min(run.role_runs));
        let this = &*self;
        let build = |spec: &PlaySpec| {
            let mut w = this.fork();
            w.speculation = Some(Speculation {
                spent: &spent,
                cap,
                counted: 0,
                aborted: false,
            });
            let (built, aborted) = w.expand(spec, first);
            (!aborted).then_some(built)
        };
        // Plays differ a lot in size (kubespray's cluster.yml: 1 to 367
        // tasks), so the largest are started first, each worker taking the
        // next play when it is done; the results do not depend on the order
        // (the budget is settled in play order below).
        let mut order: Vec<usize> = (0..specs.len()).filter(|&i| primary[i] == i).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(play_size_estimate(&specs[i].node)));
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Option<Built>>>> =
            specs.iter().map(|_| Mutex::new(None)).collect();
        rayon::scope(|s| {
            for _ in 0..rayon::current_num_threads().min(specs.len()) {
                s.spawn(|_| {
                    while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let built = build(&specs[i]);
                        *slots[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(built);
                    }
                });
            }
        });
        let speculative: Vec<Option<Built>> = slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(PoisonError::into_inner)
                    .flatten()
            })
            .collect();
        let mut plays = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let budget = run.next();
            if budget.is_empty() {
                self.push_diag(run_spent_diag(
                    spec.node.span,
                    "play",
                    specs.len() - i - 1,
                    self.run_cap,
                ));
                break;
            }
            let p = primary[i];
            let shared = speculative[p]
                .as_ref()
                .filter(|b| budget.same_as(first, &b.spent))
                .filter(|b| p == i || b.probe.holds_for(&specs[p].stack, &spec.stack));
            let built = match shared {
                Some(b) => b.clone(),
                None => self.fork().expand(spec, budget).0,
            };
            run.add(built.spent);
            for d in built.diags {
                self.push_diag(d);
            }
            for u in built.unresolved {
                if !self
                    .unresolved
                    .iter()
                    .any(|x| x.file == u.file && x.line == u.line && x.expr == u.expr)
                {
                    self.unresolved.push(u);
                }
            }
            for (path, role) in built.roles {
                self.roles.entry(path).or_insert(role);
            }
            plays.push(built.play);
        }
        plays
    }

    /// Whether the play must stop expanding: it is full, it gave up
    /// speculating, or it just went past its budget of tasks (or, with
    /// `role_run`, of role runs), reported at `span`.
    fn must_stop(&mut self, state: &mut PlayState, span: Span, role_run: bool) -> bool {
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

    /// While speculating: adds what the play built since the last call to
    /// the run's counter; `true` once the run is past its cap.
    fn speculation_over(&mut self, state: &PlayState) -> bool {
        let Some(s) = self.speculation.as_mut() else {
            return false;
        };
        if !s.aborted {
            let now = state.count() + state.role_runs;
            let new = now.saturating_sub(s.counted);
            s.counted = now;
            let total = s.spent.fetch_add(new, Ordering::Relaxed) + new;
            s.aborted = total > s.cap;
        }
        s.aborted
    }

    // ----- playbooks -------------------------------------------------------

    fn expand_playbook(
        &mut self,
        path: &Path,
        inherited_layers: &[Arc<VarLayer>],
        inherited_when: &[Condition],
        stack: &mut Vec<PathBuf>,
        plays: &mut Vec<PlaySpec>,
        from: Option<Span>,
    ) {
        let key = self.loader.fs.canonical(path);
        if on_stack(stack, &key) {
            if let Some(span) = from {
                self.push_diag(
                    Diagnostic::error(
                        code::INCLUDE_CYCLE,
                        span,
                        format!(
                            "import_playbook cycle: {} imports itself",
                            self.display(path)
                        ),
                    )
                    .with_help("remove the import that closes the cycle"),
                );
            }
            return;
        }
        if stack.len() >= MAX_INCLUDE_DEPTH {
            return;
        }
        let loaded = self.load(path);
        let Some(doc) = loaded.doc() else {
            if loaded.ok() {
                self.push_diag(Diagnostic::warning(
                    code::SHAPE,
                    Span::file_start(loaded.id),
                    "empty playbook",
                )
                .with_help("write at least one play (`- hosts: ...`) in it, or stop importing it (or passing it with --playbook)"));
            }
            return;
        };
        let Some(items) = doc.as_seq() else {
            self.push_diag(
                Diagnostic::error(code::SHAPE, doc.span, "a playbook must be a list of plays")
                    .with_help("start each play with `- hosts: ...` or `- import_playbook: ...`"),
            );
            return;
        };
        stack.push(key);
        let basedir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for item in items {
            let import = item
                .get_entry("import_playbook")
                .or_else(|| item.get_entry("ansible.builtin.import_playbook"));
            if let Some((_, target)) = import {
                let Some(target_s) = target.scalar_text() else {
                    continue;
                };
                let mut layers = inherited_layers.to_vec();
                if let Some(v) = item.get("vars").filter(|v| v.as_map().is_some()) {
                    layers.push(Arc::new(VarLayer {
                        kind: LayerKind::PlaybookImportVars,
                        node: v.clone(),
                    }));
                }
                let mut when = inherited_when.to_vec();
                if let Some(w) = item.get("when") {
                    when.extend(task::conditions(w, Origin::Playbook));
                }
                let target_s = if is_templated(&target_s) {
                    match self
                        .resolver
                        .resolve(&target_s, &PlayContext { layers: &layers }, &[])
                    {
                        Some(t) => t,
                        None => {
                            self.unresolved(
                                "import_playbook",
                                &target_s,
                                target.span,
                                "templated playbook name".into(),
                            );
                            continue;
                        }
                    }
                } else {
                    target_s
                };
                let target_path = basedir.join(&target_s);
                if !self.loader.fs.is_file(&target_path) {
                    self.push_diag(
                        Diagnostic::error(
                            code::INCLUDE_NOT_FOUND,
                            target.span,
                            format!("imported playbook `{target_s}` not found"),
                        )
                        .with_help(
                            "paths in import_playbook are relative to the importing playbook",
                        ),
                    );
                    continue;
                }
                self.expand_playbook(
                    &target_path,
                    &layers,
                    &when,
                    stack,
                    plays,
                    Some(target.span),
                );
            } else if item.get("hosts").is_some() {
                plays.push(PlaySpec {
                    node: item.clone(),
                    basedir: basedir.clone(),
                    layers: inherited_layers.to_vec(),
                    when: inherited_when.to_vec(),
                    stack: stack.clone(),
                });
            } else {
                self.push_diag(
                    Diagnostic::error(
                        code::SHAPE,
                        item.span,
                        "a play needs `hosts:` (or use `import_playbook:`)",
                    )
                    .with_help("add `hosts: all` or the group this play targets"),
                );
            }
        }
        stack.pop();
    }

    /// Expands one play within `budget`.
    fn play(&mut self, spec: &PlaySpec, budget: Budget) -> (Play, Spent) {
        let PlaySpec {
            node,
            basedir,
            layers: inherited_layers,
            when: inherited_when,
            stack,
        } = spec;
        let hosts = match node.get("hosts").map(|h| &h.value) {
            Some(Value::Seq(items)) => items
                .iter()
                .filter_map(Node::scalar_text)
                .collect::<Vec<_>>()
                .join(","),
            _ => node
                .get("hosts")
                .and_then(Node::scalar_text)
                .unwrap_or_default(),
        };
        let mut state = PlayState::new(inherited_layers.clone(), budget);
        if let Some(v) = node.get("vars")
            && v.as_map().is_some()
        {
            state.layers.push(Arc::new(VarLayer {
                kind: LayerKind::PlayVars,
                node: v.clone(),
            }));
        }
        if let Some(vf) = node.get("vars_files") {
            let list: Vec<&Node> = match &vf.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![vf],
            };
            for f in list {
                let Some(name) = f.scalar_text() else {
                    continue;
                };
                if is_templated(&name) {
                    self.unresolved(
                        "vars_files",
                        &name,
                        f.span,
                        "templated vars file name".into(),
                    );
                    continue;
                }
                let p = basedir.join(&name);
                if !self.loader.fs.is_file(&p) {
                    self.push_diag(Diagnostic::warning(
                        code::INCLUDE_NOT_FOUND,
                        f.span,
                        format!("vars file `{name}` not found"),
                    )
                    .with_help("vars_files paths are relative to the playbook's directory; fix the path or create the file"));
                    continue;
                }
                let l = self.load(&p);
                if let Some(doc) = l.doc().filter(|d| d.as_map().is_some()) {
                    state.layers.push(Arc::new(VarLayer {
                        kind: LayerKind::PlayVarsFile,
                        node: doc.clone(),
                    }));
                }
            }
        }
        let base = Ctx {
            conditions: inherited_when[..].into(),
            scopes: Arc::new([]),
            roles: Arc::new([]),
            role_path: None,
            dynamic: false,
            section: Section::PreTasks,
            stack: stack.to_vec(),
            basedir: basedir.to_path_buf(),
            blocks: Arc::new([]),
            tags: task::string_list(node.get("tags")).into(),
            duplicate: false,
        };
        let sections = [
            ("pre_tasks", Section::PreTasks),
            ("roles", Section::Roles),
            ("tasks", Section::Tasks),
            ("post_tasks", Section::PostTasks),
            ("handlers", Section::Handlers),
        ];
        for (key, section) in sections {
            let Some(list) = node.get(key) else { continue };
            if list.is_null() {
                continue;
            }
            let Some(items) = list.as_seq() else {
                self.push_diag(
                    Diagnostic::error(code::SHAPE, list.span, format!("`{key}` must be a list"))
                        .with_help(format!(
                            "write `{key}:` as a list, one `- ...` item per entry"
                        )),
                );
                continue;
            };
            let ctx = Ctx {
                section,
                ..base.clone()
            };
            if section == Section::Roles {
                for item in items {
                    match role_entry(item, Origin::Role) {
                        Some(entry) => {
                            self.run_role(&entry, &ctx, &mut state, None);
                        }
                        None => self.push_diag(
                            Diagnostic::error(
                                code::SHAPE,
                                item.span,
                                "a role entry needs `role:` or `name:`",
                            )
                            .with_help("write `- role: name` or `- name`"),
                        ),
                    }
                }
            } else {
                self.expand_items(items, &ctx, &mut state);
            }
        }
        // Ansible templates the play name and hosts with the play's variables.
        let render = |s: String| -> String {
            if is_templated(&s) {
                self.resolver
                    .resolve(
                        &s,
                        &PlayContext {
                            layers: &state.layers,
                        },
                        &[],
                    )
                    .unwrap_or(s)
            } else {
                s
            }
        };
        let name = node.get("name").and_then(Node::scalar_text).map(render);
        let hosts = render(hosts);
        let spent = state.spent();
        let play = Play {
            name,
            hosts,
            span: node.span,
            layers: state.layers,
            tasks: state.tasks,
            handlers: state.handlers,
        };
        (play, spent)
    }

    // ----- task lists ------------------------------------------------------

    fn expand_items(&mut self, items: &[Node], ctx: &Ctx, state: &mut PlayState) {
        for item in items {
            if self.must_stop(state, item.span, false) {
                return;
            }
            let key = (std::ptr::from_ref(item) as usize, item.span);
            let known = self
                .shared_tasks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&key)
                .cloned();
            if let Some((t, diags)) = known {
                for d in diags {
                    self.push_diag(d);
                }
                self.task(t, ctx, state);
                continue;
            }
            let mut local = Vec::new();
            let parsed = task::read_item(item, &mut local);
            for d in &local {
                self.push_diag(d.clone());
            }
            match parsed {
                Err(d) => self.push_diag(*d),
                Ok(Item::Block(block)) => {
                    let mut inner = ctx.clone();
                    inner.conditions = extended(&inner.conditions, &block.when);
                    if let Some(v) = block.vars.filter(|v| v.as_map().is_some()) {
                        inner.scopes = extended(
                            &inner.scopes,
                            &[Arc::new(VarLayer {
                                kind: LayerKind::BlockVars,
                                node: v.clone(),
                            })],
                        );
                    }
                    inner.tags = extended(&inner.tags, &block.tags);
                    for (part, list) in [
                        (BlockPart::Block, block.block),
                        (BlockPart::Rescue, block.rescue),
                        (BlockPart::Always, block.always),
                    ] {
                        let mut c = inner.clone();
                        c.blocks = extended(&c.blocks, &[part]);
                        self.expand_items(list, &c, state);
                    }
                }
                Ok(Item::Task(t)) => {
                    let t: Arc<Task> = Arc::from(t);
                    self.shared_tasks
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .entry(key)
                        .or_insert_with(|| (Arc::clone(&t), local));
                    self.task(t, ctx, state);
                }
            }
        }
    }

    fn task(&mut self, t: Arc<Task>, ctx: &Ctx, state: &mut PlayState) {
        let mut scopes = Arc::clone(&ctx.scopes);
        if let Some(v) = t.vars.as_ref().filter(|v| v.as_map().is_some()) {
            let kind = if t.include.is_some() {
                LayerKind::IncludeVars
            } else {
                LayerKind::TaskVars
            };
            scopes = extended(
                &scopes,
                &[Arc::new(VarLayer {
                    kind,
                    node: v.clone(),
                })],
            );
        }
        let Some(inc) = t.include.clone() else {
            self.emit(t, ctx, scopes, state, None);
            return;
        };
        if inc.kind == IncludeKind::ImportPlaybook {
            self.push_diag(Diagnostic::error(
                code::SHAPE,
                t.action_span,
                "import_playbook is only allowed at the top level of a playbook",
            )
            .with_help("move it to the top level of the playbook, between plays; inside a play, use import_tasks or include_tasks"));
            return;
        }
        let mut inner = ctx.clone();
        if inc.kind.is_static() {
            inner.tags = extended(&inner.tags, &t.tags);
        }
        let origin = if inc.kind.is_static() {
            Origin::Import
        } else {
            Origin::Include
        };
        let own: Vec<Condition> = t
            .when
            .iter()
            .cloned()
            .map(|mut c| {
                c.origin = origin;
                c
            })
            .collect();
        inner.conditions = extended(&inner.conditions, &own);
        inner.scopes = Arc::clone(&scopes);
        let task_ref = Arc::new(t);
        // Ansible lists a dynamic include itself, before what it pulls in.
        let slot = if inc.kind.is_static() {
            None
        } else {
            let inst = self.instance(
                Arc::clone(&task_ref),
                ctx,
                scopes,
                Some(false),
                &state.layers,
            );
            let list = if ctx.section == Section::Handlers {
                &mut state.handlers
            } else {
                &mut state.tasks
            };
            list.push(inst);
            Some(list.len() - 1)
        };
        if !inc.kind.is_static() {
            inner.dynamic = true;
        }
        let resolved = match inc.kind {
            IncludeKind::ImportTasks | IncludeKind::IncludeTasks => {
                self.include_tasks(&inc, &inner, state)
            }
            IncludeKind::ImportRole | IncludeKind::IncludeRole => {
                self.include_role(&inc, &task_ref, &inner, state)
            }
            IncludeKind::ImportPlaybook => false,
        };
        if let Some(i) = slot {
            let list = if ctx.section == Section::Handlers {
                &mut state.handlers
            } else {
                &mut state.tasks
            };
            list[i].include_resolved = Some(resolved);
        }
    }

    fn instance(
        &self,
        task: Arc<Task>,
        ctx: &Ctx,
        scopes: Arc<[Arc<VarLayer>]>,
        include: Option<bool>,
        layers: &[Arc<VarLayer>],
    ) -> TaskInstance {
        let conditions = extended(&ctx.conditions, &task.when);
        let mut tags = extended(&ctx.tags, &task.tags);
        // Ansible templates tags; keep the template when it cannot be rendered.
        if tags.iter().any(|t| is_templated(t)) {
            let mut own = tags.to_vec();
            for t in &mut own {
                if is_templated(t)
                    && let Some(r) = self.resolver.resolve(t, &PlayContext { layers }, &scopes)
                {
                    *t = r;
                }
            }
            tags = own.into();
        }
        TaskInstance {
            task,
            roles: Arc::clone(&ctx.roles),
            section: ctx.section,
            conditions,
            scopes,
            dynamic: ctx.dynamic,
            role_path: ctx.role_path.clone(),
            include_resolved: include,
            blocks: Arc::clone(&ctx.blocks),
            tags,
            duplicate: ctx.duplicate,
        }
    }

    fn emit(
        &mut self,
        t: Arc<Task>,
        ctx: &Ctx,
        scopes: Arc<[Arc<VarLayer>]>,
        state: &mut PlayState,
        include: Option<bool>,
    ) {
        let inst = self.instance(t, ctx, scopes, include, &state.layers);
        if ctx.section == Section::Handlers {
            state.handlers.push(inst);
        } else {
            state.tasks.push(inst);
        }
    }

    fn resolve_target(
        &mut self,
        inc: &IncludeSpec,
        ctx: &Ctx,
        state: &PlayState,
    ) -> Option<String> {
        if !is_templated(&inc.target) {
            return Some(inc.target.clone());
        }
        let r = self.resolver.resolve(
            &inc.target,
            &PlayContext {
                layers: &state.layers,
            },
            &ctx.scopes,
        );
        if r.is_none() {
            self.unresolved(
                inc.kind.as_str(),
                &inc.target,
                inc.target_span,
                "templated target; its variables are not known statically".into(),
            );
        }
        r
    }

    fn include_tasks(&mut self, inc: &IncludeSpec, ctx: &Ctx, state: &mut PlayState) -> bool {
        let Some(target) = self.resolve_target(inc, ctx, state) else {
            return false;
        };
        let current_dir = self
            .loader
            .sources
            .get(inc.target_span.file)
            .path
            .parent()
            .map(Path::to_path_buf);
        let mut candidates = Vec::new();
        if let Some(role) = &ctx.role_path {
            candidates.push(role.join("tasks").join(&target));
            candidates.push(role.join(&target));
        }
        if let Some(d) = current_dir {
            candidates.push(d.join(&target));
        }
        candidates.push(ctx.basedir.join(&target));
        let Some(path) = candidates.into_iter().find(|p| self.loader.fs.is_file(p)) else {
            self.push_diag(
                Diagnostic::error(
                    code::INCLUDE_NOT_FOUND,
                    inc.target_span,
                    format!("{} target `{target}` not found", inc.kind.as_str()),
                )
                .with_help(
                    "paths are relative to the role's tasks/ directory or the including file",
                ),
            );
            return false;
        };
        let dynamic_edge = inc.kind == IncludeKind::IncludeTasks;
        self.tasks_file(&path, inc.target_span, ctx, state, dynamic_edge)
    }

    /// Expands a tasks file, detecting include cycles.
    fn tasks_file(
        &mut self,
        path: &Path,
        from: Span,
        ctx: &Ctx,
        state: &mut PlayState,
        dynamic_edge: bool,
    ) -> bool {
        let key = self.loader.fs.canonical(path);
        self.probe_stack(&key, ctx);
        if on_stack(&ctx.stack, &key) && dynamic_edge {
            // A dynamic include of itself is Ansible's retry loop: bounded at
            // run time by its conditions, so it is followed once, not an error.
            self.push_diag(Diagnostic::new(
                code::INCLUDE_CYCLE,
                Severity::Info,
                from,
                format!(
                    "recursive include_tasks of {}: followed once; at run time it repeats while its conditions hold",
                    self.display(path)
                ),
            )
            .with_help("make sure the include's `when` ends the recursion; its tasks are listed once"));
            return true;
        }
        if on_stack(&ctx.stack, &key) {
            self.push_diag(
                Diagnostic::error(
                    code::INCLUDE_CYCLE,
                    from,
                    format!(
                        "include cycle: {} is already being included",
                        self.display(path)
                    ),
                )
                .with_help("remove the include or import that closes the cycle"),
            );
            return false;
        }
        if ctx.stack.len() >= MAX_INCLUDE_DEPTH {
            self.push_diag(Diagnostic::error(
                code::INCLUDE_CYCLE,
                from,
                format!("includes nested deeper than {MAX_INCLUDE_DEPTH}; not followed"),
            )
            .with_help("shorten the chain of includes; a chain this deep is usually a recursion through several files"));
            return false;
        }
        let loaded = self.load(path);
        let Some(doc) = loaded.doc() else {
            return loaded.ok();
        };
        let Some(items) = doc.as_seq() else {
            if !doc.is_null() {
                self.push_diag(
                    Diagnostic::error(code::SHAPE, doc.span, "a tasks file must be a list of tasks")
                        .with_help("start each task with `- name: ...`; a mapping at the top level is not a task list"),
                );
            }
            return false;
        };
        let mut inner = ctx.clone();
        inner.stack.push(key);
        self.expand_items(items, &inner, state);
        true
    }

    // ----- roles -----------------------------------------------------------

    fn include_role(
        &mut self,
        inc: &IncludeSpec,
        t: &Arc<Task>,
        ctx: &Ctx,
        state: &mut PlayState,
    ) -> bool {
        let Some(name) = self.resolve_target(inc, ctx, state) else {
            return false;
        };
        let params = t.role_params.as_ref().and_then(|n| {
            keyword_node(
                n,
                &[
                    "name",
                    "role",
                    "tasks_from",
                    "vars_from",
                    "defaults_from",
                    "handlers_from",
                    "apply",
                    "public",
                    "allow_duplicates",
                    "rolespec_validate",
                ],
            )
        });
        let entry = RoleEntry {
            name,
            span: inc.target_span,
            when: Vec::new(),
            vars: None,
            params,
            tags: Vec::new(),
            tasks_from: inc.tasks_from.clone(),
            handlers_from: inc.handlers_from.clone(),
        };
        self.run_role(&entry, ctx, state, Some(inc))
    }

    /// Finds a role directory as Ansible does: `roles/` next to the playbook,
    /// `roles_path`, the directory of the role that declares the dependency,
    /// the playbook directory, then the name as a path.
    fn find_role(&self, name: &str, ctx: &Ctx) -> Result<PathBuf, String> {
        let mut search = vec![ctx.basedir.join("roles")];
        search.extend(self.cfg.roles_path.iter().cloned());
        if let Some(parent) = ctx.role_path.as_ref().and_then(|p| p.parent()) {
            search.push(parent.to_path_buf());
        }
        search.push(ctx.basedir.clone());
        search.push(self.root.clone());
        let mut file_instead = None;
        for dir in &search {
            let p = dir.join(name);
            if self.loader.fs.is_dir(&p) {
                return Ok(p);
            }
            if self.loader.fs.is_file(&p) && file_instead.is_none() {
                file_instead = Some(p);
            }
        }
        let p = PathBuf::from(name);
        if p.is_absolute() && self.loader.fs.is_dir(&p) {
            return Ok(p);
        }
        if let Some(f) = file_instead {
            return Err(format!(
                "{} is a file, not a role directory",
                self.display(&f)
            ));
        }
        let shown: Vec<String> = search.iter().map(|d| self.display(d)).collect();
        Err(format!("searched {}", shown.join(", ")))
    }

    fn run_role(
        &mut self,
        entry: &RoleEntry,
        ctx: &Ctx,
        state: &mut PlayState,
        inc: Option<&IncludeSpec>,
    ) -> bool {
        let name = if is_templated(&entry.name) {
            match self.resolver.resolve(
                &entry.name,
                &PlayContext {
                    layers: &state.layers,
                },
                &ctx.scopes,
            ) {
                Some(n) => n,
                None => {
                    self.unresolved(
                        "role",
                        &entry.name,
                        entry.span,
                        "templated role name".into(),
                    );
                    return false;
                }
            }
        } else {
            entry.name.clone()
        };
        match self.find_role(&name, ctx) {
            Ok(path) => {
                let entry = RoleEntry {
                    name,
                    ..entry.clone()
                };
                self.run_role_at(&entry, &path, ctx, state);
                true
            }
            Err(searched) => {
                if name.matches('.').count() >= 2 && !name.contains('/') {
                    self.push_diag(Diagnostic::new(
                        code::ROLE_EXTERNAL,
                        Severity::Info,
                        entry.span,
                        format!("role `{name}` comes from a collection that is not in the tree; not analysed"),
                    )
                    .with_help("to check the role's tasks too, run preflint on the collection's source tree"));
                    self.unresolved(
                        "role",
                        &name,
                        entry.span,
                        "role from an external collection".into(),
                    );
                } else {
                    let what = inc.map_or("role", |i| i.kind.as_str());
                    self.push_diag(
                        Diagnostic::error(
                            code::ROLE_NOT_FOUND,
                            entry.span,
                            format!("{what} `{name}` not found ({searched})"),
                        )
                        .with_help("check the role name, or set roles_path in ansible.cfg"),
                    );
                }
                false
            }
        }
    }

    /// The validation task Ansible puts first in a role whose entry point has
    /// an argument spec (`meta/argument_specs.yml` or `argument_specs` in
    /// `meta/main.yml`).
    fn argument_spec_task(&mut self, path: &Path, entry: &str) -> Option<Task> {
        let meta = path.join("meta");
        let files = [
            meta.join("argument_specs.yml"),
            meta.join("argument_specs.yaml"),
            meta.join("main.yml"),
            meta.join("main.yaml"),
        ];
        let file = files.iter().find(|f| {
            self.loader.fs.is_file(f)
                && self
                    .loader
                    .yaml(f)
                    .doc()
                    .and_then(|d| d.get("argument_specs"))
                    .is_some()
        })?;
        let loaded = self.load(file);
        let (key, spec) = loaded.doc()?.get("argument_specs")?.get_entry(entry)?;
        let mut name = format!("Validating arguments against arg spec '{entry}'");
        if let Some(d) = spec.get("short_description").and_then(Node::scalar_text) {
            name.push_str(" - ");
            name.push_str(&d);
        }
        Some(Task::synthetic(
            name,
            "ansible.builtin.validate_argument_spec",
            key.span,
        ))
    }

    fn role(&mut self, name: &str, path: &Path) -> Arc<Role> {
        if let Some(r) = self.roles.get(path) {
            return Arc::clone(r);
        }
        let shared = self
            .shared_roles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(path)
            .cloned();
        if let Some((r, diags)) = shared {
            for d in diags {
                self.push_diag(d);
            }
            self.roles.insert(path.to_path_buf(), Arc::clone(&r));
            return r;
        }
        // What reading the role reports is kept with it and replayed by every
        // builder that uses it: which play reads a role first is a matter of
        // thread timing, and a play's diagnostics may be thrown away.
        let outer_diags = std::mem::take(&mut self.diags);
        let outer_reported = std::mem::take(&mut self.reported);
        let defaults = self.role_vars_dir(
            &path.join("defaults"),
            LayerKind::RoleDefaults { role: name.into() },
        );
        let vars = self.role_vars_dir(
            &path.join("vars"),
            LayerKind::RoleVars { role: name.into() },
        );
        let mut dependencies = Vec::new();
        let mut allow_duplicates = false;
        if let Some(meta) = yaml_candidates(&path.join("meta"), "main")
            .into_iter()
            .find(|p| self.loader.fs.is_file(p))
        {
            let l = self.load(&meta);
            if let Some(doc) = l.doc() {
                allow_duplicates = doc
                    .get("allow_duplicates")
                    .and_then(Node::as_bool)
                    .unwrap_or(false);
                if let Some(deps) = doc.get("dependencies").and_then(Node::as_seq) {
                    for d in deps {
                        match role_entry(d, Origin::Role) {
                            Some(e) => dependencies.push(e),
                            None => self.push_diag(
                                Diagnostic::error(
                                    code::SHAPE,
                                    d.span,
                                    "a dependency needs `role:` or `name:`",
                                )
                                .with_help("write the dependency as `- role: name` or `- name`"),
                            ),
                        }
                    }
                }
            }
        }
        let role = Arc::new(Role {
            name: name.to_string(),
            path: path.to_path_buf(),
            defaults,
            vars,
            dependencies,
            allow_duplicates,
        });
        let diags = std::mem::replace(&mut self.diags, outer_diags);
        self.reported = outer_reported;
        for d in &diags {
            self.push_diag(d.clone());
        }
        self.roles.insert(path.to_path_buf(), Arc::clone(&role));
        self.shared_roles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(path.to_path_buf())
            .or_insert_with(|| (Arc::clone(&role), diags));
        role
    }

    /// `defaults/main` or `vars/main`: a file (`main.yml`, `main.yaml`, `main`)
    /// or a directory whose files are read in sorted order.
    fn role_vars_dir(&mut self, dir: &Path, kind: LayerKind) -> Vec<Arc<VarLayer>> {
        let mut files = Vec::new();
        let main_dir = dir.join("main");
        // A main.yml file wins over a main/ directory beside it (as in Ansible).
        let main_file = yaml_candidates(dir, "main")
            .into_iter()
            .find(|p| self.loader.fs.is_file(p));
        if let Some(f) = main_file {
            files.push(f);
        } else if self.loader.fs.is_dir(&main_dir) {
            let mut found: Vec<PathBuf> = walkdir::WalkDir::new(&main_dir)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
                .map(|e| e.path().to_path_buf())
                .filter(|p| {
                    p.extension()
                        .is_none_or(|e| e == "yml" || e == "yaml" || e == "json")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            found.sort();
            files.extend(found);
        } else if let Some(f) = yaml_candidates(dir, "main")
            .into_iter()
            .find(|p| self.loader.fs.is_file(p))
        {
            files.push(f);
        }
        let mut layers = Vec::new();
        for f in files {
            let l = self.load(&f);
            if let Some(doc) = l.doc() {
                if doc.as_map().is_some() {
                    layers.push(Arc::new(VarLayer {
                        kind: kind.clone(),
                        node: doc.clone(),
                    }));
                } else if !doc.is_null() {
                    self.push_diag(Diagnostic::error(
                        code::SHAPE,
                        doc.span,
                        "a vars file must be a mapping",
                    )
                    .with_help("write the variables as `name: value` pairs at the top level of the file"));
                }
            }
        }
        layers
    }

    fn run_role_at(&mut self, entry: &RoleEntry, path: &Path, ctx: &Ctx, state: &mut PlayState) {
        if state.full {
            return;
        }
        // Role dependencies can fan out without producing tasks: count runs too.
        state.role_runs += 1;
        if self.must_stop(state, entry.span, true) {
            return;
        }
        let key = self.loader.fs.canonical(path);
        self.probe_stack(&key, ctx);
        if on_stack(&ctx.stack, &key) {
            self.push_diag(
                Diagnostic::error(
                    code::INCLUDE_CYCLE,
                    entry.span,
                    format!("role dependency cycle: `{}` depends on itself", entry.name),
                )
                .with_help("remove the dependency that closes the cycle from meta/main.yml"),
            );
            return;
        }
        if ctx.stack.len() >= MAX_INCLUDE_DEPTH {
            return;
        }
        let role = self.role(&entry.name, path);
        let params_key = entry
            .params
            .as_ref()
            .map(|p| p.to_json().to_string())
            .unwrap_or_default();
        let run_key = format!(
            "{}|{}|{}",
            key.display(),
            entry.tasks_from.as_deref().unwrap_or("main"),
            params_key
        );
        let duplicate = !role.allow_duplicates && !ctx.dynamic && state.ran.contains(&run_key);
        state.ran.insert(run_key);
        // Role defaults and vars are visible play-wide (Ansible's default).
        for l in role.defaults.iter().chain(&role.vars) {
            if !state.layers.iter().any(|x| Arc::ptr_eq(x, l)) {
                state.layers.push(Arc::clone(l));
            }
        }
        let mut inner = ctx.clone();
        inner.duplicate |= duplicate;
        inner.stack.push(key);
        inner.conditions = extended(&inner.conditions, &entry.when);
        inner.tags = extended(&inner.tags, &entry.tags);
        inner.role_path = Some(Arc::from(path));
        let layers: Vec<Arc<VarLayer>> = [
            entry.params.as_ref(),
            entry.vars.as_ref().filter(|v| v.as_map().is_some()),
        ]
        .into_iter()
        .flatten()
        .map(|node| {
            Arc::new(VarLayer {
                kind: LayerKind::RoleParams {
                    role: entry.name.clone(),
                },
                node: node.clone(),
            })
        })
        .collect();
        inner.scopes = extended(&inner.scopes, &layers);
        // Dependencies run first, inside the role's conditions.
        let deps = role.dependencies.clone();
        for dep in &deps {
            let _ = self.run_role(dep, &inner, state, None);
        }
        inner.roles = extended(&inner.roles, std::slice::from_ref(&entry.name));
        let tasks_dir = path.join("tasks");
        let stem = entry.tasks_from.as_deref().unwrap_or("main");
        if let Some(t) = self.argument_spec_task(path, stem) {
            self.emit(Arc::new(t), &inner, Arc::clone(&inner.scopes), state, None);
        }
        let tasks_file = yaml_candidates(&tasks_dir, stem)
            .into_iter()
            .find(|p| self.loader.fs.is_file(p));
        match tasks_file {
            Some(f) => {
                self.tasks_file(&f, entry.span, &inner, state, false);
            }
            None if entry.tasks_from.is_some() => self.push_diag(Diagnostic::error(
                code::INCLUDE_NOT_FOUND,
                entry.span,
                format!("tasks_from `{stem}` not found in role `{}`", entry.name),
            )
            .with_help("tasks_from names a file in the role's tasks/ directory, with or without .yml; check the name")),
            None => {}
        }
        let hstem = entry.handlers_from.as_deref().unwrap_or("main");
        if let Some(h) = yaml_candidates(&path.join("handlers"), hstem)
            .into_iter()
            .find(|p| self.loader.fs.is_file(p))
        {
            let hctx = Ctx {
                section: Section::Handlers,
                ..inner.clone()
            };
            self.tasks_file(&h, entry.span, &hctx, state, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_candidates_append_each_suffix_to_the_stem() {
        let old = |dir: &Path, stem: &str| -> Vec<PathBuf> {
            if Path::new(stem)
                .extension()
                .is_some_and(|e| e == "yml" || e == "yaml")
            {
                return vec![dir.join(stem)];
            }
            vec![
                dir.join(format!("{stem}.yml")),
                dir.join(format!("{stem}.yaml")),
                dir.join(format!("{stem}.json")),
                dir.join(stem),
            ]
        };
        for dir in ["roles/r/tasks", "/abs/dir", "", "d/"] {
            for stem in [
                "main", "a.b", "main.yml", "x.yaml", "", "sub/", "/abs/t", "ü.j2",
            ] {
                let dir = Path::new(dir);
                assert_eq!(yaml_candidates(dir, stem), old(dir, stem), "{dir:?} {stem}");
            }
        }
    }

    /// The model of a tree given as (path, text) pairs, every top-level playbook an entry.
    fn model(files: &[(&str, &str)]) -> Project {
        let dir = crate::check::testing::tree(files);
        crate::check::testing::load(dir.path()).project
    }

    const INNER: &str = "- hosts: all\n  roles: [r]\n";
    const ROLE: &str = "- name: one\n  ansible.builtin.debug: {msg: hi}\n";

    #[test]
    fn a_play_imported_the_same_way_by_two_entries_is_expanded_once() {
        let p = model(&[
            ("a.yml", "- import_playbook: pb/inner.yml\n"),
            ("b.yml", "- import_playbook: pb/mid.yml\n"),
            ("pb/mid.yml", "- import_playbook: inner.yml\n"),
            ("pb/inner.yml", INNER),
            ("pb/roles/r/tasks/main.yml", ROLE),
        ]);
        let (a, b) = (&p.entries[0], &p.entries[1]);
        assert_eq!((a.name.as_str(), b.name.as_str()), ("a.yml", "b.yml"));
        assert_eq!(a.plays[0].tasks.len(), 1);
        assert!(Arc::ptr_eq(&a.plays[0], &b.plays[0]), "shared");
    }

    #[test]
    fn imports_with_other_variables_or_conditions_are_expanded_apart() {
        let p = model(&[
            ("a.yml", "- import_playbook: inner.yml\n"),
            ("b.yml", "- import_playbook: inner.yml\n  vars: {x: 1}\n"),
            (
                "c.yml",
                "- import_playbook: inner.yml\n  when: x is defined\n",
            ),
            ("inner.yml", INNER),
            ("roles/r/tasks/main.yml", ROLE),
        ]);
        let plays: Vec<&Arc<Play>> = p.entries.iter().map(|e| &e.plays[0]).collect();
        let names: Vec<&str> = p.entries.iter().map(|e| e.name.as_str()).collect();
        // `inner.yml` is an entry of its own too, imported by nobody: shared with a.yml.
        assert_eq!(names, ["a.yml", "b.yml", "c.yml", "inner.yml"]);
        assert!(Arc::ptr_eq(plays[0], plays[3]));
        assert!(!Arc::ptr_eq(plays[0], plays[1]), "import vars");
        assert!(!Arc::ptr_eq(plays[0], plays[2]), "import condition");
        assert!(!Arc::ptr_eq(plays[1], plays[2]));
    }

    #[test]
    fn a_play_that_looks_up_a_playbook_of_the_run_is_expanded_per_chain() {
        // Including an entry playbook as a tasks file is a cycle in one
        // chain and not in the other: each chain's play is its own.
        let p = model(&[
            ("a.yml", "- import_playbook: inner.yml\n"),
            ("b.yml", "- import_playbook: inner.yml\n"),
            (
                "inner.yml",
                "- hosts: all\n  tasks:\n    - ansible.builtin.include_tasks: a.yml\n",
            ),
        ]);
        let (a, b) = (&p.entries[0], &p.entries[1]);
        assert!(!Arc::ptr_eq(&a.plays[0], &b.plays[0]));
    }

    fn spent(tasks: usize, role_runs: usize, full: bool) -> Spent {
        Spent {
            tasks,
            role_runs,
            full,
        }
    }

    #[test]
    fn plays_take_the_run_budget_in_order() {
        let play = Budget {
            tasks: MAX_PLAY_TASKS,
            role_runs: MAX_PLAY_TASKS,
        };
        let mut run = RunSpent::default();
        assert_eq!(run.next(), play);
        run.add(spent(30_000, 10, false));
        assert_eq!(run.next(), play);
        run.add(spent(MAX_PLAY_TASKS, 10, true));
        assert_eq!(
            run.next(),
            Budget {
                tasks: MAX_RUN_TASKS - 30_000 - MAX_PLAY_TASKS,
                role_runs: MAX_PLAY_TASKS,
            }
        );
        run.add(spent(MAX_RUN_TASKS - 30_000 - MAX_PLAY_TASKS + 1, 0, true));
        assert!(run.next().is_empty(), "an overshoot spends it all");
    }

    #[test]
    fn a_speculative_play_is_kept_only_if_its_own_budget_builds_the_same() {
        let wide = Budget {
            tasks: MAX_PLAY_TASKS,
            role_runs: MAX_PLAY_TASKS,
        };
        let narrow = Budget {
            tasks: 1_000,
            role_runs: 500,
        };
        assert!(narrow.same_as(wide, &spent(999, 500, false)));
        assert!(!narrow.same_as(wide, &spent(1_000, 3, false)), "reached");
        assert!(!narrow.same_as(wide, &spent(3, 501, false)), "past");
        assert!(!narrow.same_as(wide, &spent(10, 3, true)), "cut");
        assert!(wide.same_as(wide, &spent(MAX_PLAY_TASKS, 3, true)));
    }

    #[test]
    fn the_first_play_left_out_says_how_many_follow() {
        let span = Span::file_start(crate::source::FileId(0));
        for (after, text) in [
            (0, "this play is not analysed"),
            (1, "this play and the one after it are not analysed"),
            (37, "this play and the 37 plays after it are not analysed"),
        ] {
            let d = run_spent_diag(span, "play", after, MAX_RUN_TASKS);
            assert!(d.message.starts_with(text), "{}", d.message);
            assert!(d.help.is_some_and(|h| h.contains("--playbook")));
        }
    }
}
