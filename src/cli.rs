//! Command-line types (clap) and their conversion into plain settings.
//! Nothing here does work; `run` does.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "preflint",
    version,
    about = "Reads Ansible role trees without running them and tells who prepares each Kubernetes node concern.",
    long_about = "preflint reads Ansible content (playbooks, roles, inventories) the way Ansible does, \
without running it, never writing into the tree it reads and needing no network.\n\n\
Examples:\n  preflint tasks test-repos/mini-kubespray\n  preflint tasks --playbook cluster.yml --format json ~/kubespray"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tasks each entry playbook reaches, in order, with their conditions.
    ///
    /// Example: preflint tasks --playbook cluster.yml ~/kubespray
    Tasks(TasksArgs),
    /// For every node-preparation concern, say who fixes it: the automation, only
    /// under a condition, only checked, or the operator, with evidence.
    ///
    /// Examples:
    ///   preflint who-fixes --playbook cluster.yml ~/kubespray
    ///   preflint who-fixes -e kubelet_fail_swap_on=false --format compact ~/kubespray
    WhoFixes(WhoFixesArgs),
}

#[derive(Debug, Args)]
pub struct CommonArgs {
    /// The tree to read (a repository, a playbook directory, a role, or a roles/ folder).
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Entry playbook, relative to PATH (repeatable). Default: the playbooks at
    /// the top of PATH; with none there, every role as if a play ran it.
    /// Example: --playbook cluster.yml
    #[arg(long = "playbook", short = 'p', value_name = "FILE")]
    pub playbooks: Vec<PathBuf>,

    /// Leave out a path or glob relative to PATH (repeatable); `.ansible-lint`
    /// exclude_paths are honoured too. Example: --exclude contrib/ --exclude 'tests/**'
    #[arg(long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<String>,

    /// Extra variables, highest precedence, as with ansible-playbook (repeatable):
    /// `key=value`, `@vars.yml`, or a JSON/YAML mapping. Example: -e kubelet_fail_swap_on=false
    #[arg(long = "extra-vars", short = 'e', value_name = "VARS")]
    pub extra_vars: Vec<String>,

    /// Inventory file or directory (INI or YAML, with group_vars/ and
    /// host_vars/ beside it); its variables apply to the plays whose hosts
    /// pattern names a group. Example: -i inventory/sample/hosts.yaml
    #[arg(long = "inventory", short = 'i', value_name = "INVENTORY")]
    pub inventory: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TasksFormat {
    /// Readable text for terminals.
    Human,
    /// Everything as JSON (schema in docs/tasks-json.md).
    Json,
}

#[derive(Debug, Args)]
pub struct TasksArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Output format. Example: --format json
    #[arg(long, value_enum, default_value_t = TasksFormat::Human)]
    pub format: TasksFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum WhoFixesFormat {
    /// One block per concern with verdict, where and why.
    Table,
    /// A markdown table for pull requests.
    Markdown,
    /// All evidence as JSON (schema in docs/who-fixes-json.md).
    Json,
    /// The flat map concern -> who fixes it.
    Compact,
}

#[derive(Debug, Args)]
pub struct WhoFixesArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Output format. Example: --format markdown
    #[arg(long, value_enum, default_value_t = WhoFixesFormat::Table)]
    pub format: WhoFixesFormat,

    /// A directory of concern files (*.yml) that add to or replace the built-in
    /// catalog. Example: --rules ./audit-rules
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,

    /// Name the automation in verdicts (default: galaxy.yml name, else the
    /// directory name). Example: --tool-name kubespray
    #[arg(long, value_name = "NAME")]
    pub tool_name: Option<String>,
}
