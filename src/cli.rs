//! The command line: clap types, converted at once into the library's plain
//! [`Settings`]. Part of the binary only (`main.rs` declares it), so the
//! library never depends on clap; `tests/ci_recipes.rs` includes this file to
//! read the documented commands as the binary does. Nothing here does work
//! but the two outputs that describe the command line itself: shell
//! completions and the man page.

use clap::{Args, Parser, Subcommand, ValueEnum};
use preflint::settings::{self, Settings, Ui};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "preflint",
    args_conflicts_with_subcommands = true,
    version,
    about = "Reads Ansible role trees without running them and tells who prepares each Kubernetes node concern.",
    long_about = "preflint reads Ansible content (playbooks, roles, inventories) the way Ansible does, \
without running it, never writing into the tree it reads and needing no network.\n\n\
Examples:\n  preflint tasks test-repos/mini-kubespray\n  preflint tasks --playbook cluster.yml --format json ~/kubespray"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// When to colour output: auto (a terminal without NO_COLOR), always, never.
    /// Example: --color never
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    /// No progress indicator and no notes on stderr; results only.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

    /// With no subcommand, `preflint [PATH]` runs `check`.
    #[command(flatten)]
    pub check: CheckArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint a tree for node-preparation hazards (what CI runs): sysctl boot
    /// order, settings not persisted, masked preflight errors, cgroup drivers.
    ///
    /// Examples:
    ///   preflint check ~/kubespray
    ///   preflint check --format sarif --fail-level error . > preflint.sarif
    ///   preflint check --distro debian,gce --host-root ./sosreport .
    #[command(verbatim_doc_comment)]
    Check(CheckArgs),
    /// List every lint rule and concern.
    Rules,
    /// Print the documentation of a rule or a concern. Example: preflint explain sysctl-overridden-at-boot
    Explain {
        /// A rule id (`preflint rules` lists them) or a concern id.
        id: String,
    },
    /// Show every sysctl the tree writes, its value now and after reboot under
    /// each engine, and the file that wins.
    ///
    /// Example: preflint sysctl --distro centos7 ~/kubespray
    Sysctl(SysctlArgs),
    /// Print a shell completion script. Example: preflint completions bash > /etc/bash_completion.d/preflint
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff). Example: preflint man > preflint.1 && man ./preflint.1
    Man,
    /// List the tasks each entry playbook reaches, in order, with their conditions
    /// (and with --effects, what each does to a node).
    ///
    /// Examples:
    ///   preflint tasks --playbook cluster.yml ~/kubespray
    ///   preflint tasks --effects --format json ~/kubespray
    #[command(verbatim_doc_comment)]
    Tasks(TasksArgs),
    /// For every node-preparation concern, say who fixes it: the automation, only
    /// under a condition, only checked, or the operator, with evidence.
    ///
    /// Examples:
    ///   preflint who-fixes --playbook cluster.yml ~/kubespray
    ///   preflint who-fixes -e kubelet_fail_swap_on=false --format compact ~/kubespray
    #[command(verbatim_doc_comment)]
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

    /// Stop reading files once this many MiB were read in the run (files past
    /// it are reported as load-file-too-large, in sorted path order). The
    /// model takes about 15 MB of memory per MB of YAML. Example: --max-total-mib 512
    #[arg(long = "max-total-mib", value_name = "MIB", default_value_t = settings::LoadSettings::DEFAULT_MAX_TOTAL_MIB, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub max_total_mib: u64,
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

    /// Also list each task's effects: what it does to a node (sysctl set,
    /// kernel module loaded, file written, service started...), now and/or at
    /// boot, per loop item, with whether its `when` holds. The concerns match
    /// these (see rules/README.md). Example: --effects
    #[arg(long)]
    pub effects: bool,

    /// With --format json, also give each task's evaluation as preflint
    /// computes it from the variables: its loop items, each iteration's
    /// module arguments rendered, its command line, the text of the template
    /// it writes, or why each is not known statically (schema in
    /// docs/tasks-json.md). Example: --format json --evaluated
    #[arg(long)]
    pub evaluated: bool,
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
    /// A self-contained HTML page: concerns x host groups, evidence on click.
    Html,
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

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    /// Source snippets and a summary, for terminals.
    Human,
    /// All findings as JSON.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers).
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// GitLab code quality report.
    Codeclimate,
    /// JUnit XML (GitLab, Jenkins test reports).
    Junit,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Args)]
pub struct SysctlOptions {
    /// Sysctl files distributions and cloud images ship, assumed present on the
    /// hosts (comma-separated profiles from rules/sysctl-distro.yml, or `none`).
    /// Example: --distro debian,gce
    #[arg(long, value_name = "PROFILES")]
    pub distro: Option<String>,

    /// A copy of a real host's /etc, /run, /usr/lib, /usr/local/lib and /lib
    /// (e.g. from an sosreport): its sysctl files become the baseline.
    /// Example: --host-root ./sosreport-node1
    #[arg(long, value_name = "DIR")]
    pub host_root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SysctlArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub sysctl: SysctlOptions,
    /// Output format. Example: --format json
    #[arg(long, value_enum, default_value_t = TasksFormat::Human)]
    pub format: TasksFormat,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub sysctl: SysctlOptions,

    /// Output format. Example: --format github
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    pub format: CheckFormat,

    /// Exit 1 when a finding at or above this level remains (default: warning,
    /// or fail_level in .preflint.yml). Example: --fail-level error
    #[arg(long, value_enum)]
    pub fail_level: Option<Level>,

    /// Configuration file (default: .preflint.yml at PATH). Example: --config ci/preflint.yml
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Report only findings not in this baseline file. Example: --baseline .preflint-baseline.json
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Write the current findings to FILE as a baseline and exit 0.
    /// Example: --write-baseline .preflint-baseline.json
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,

    /// A directory of concern files (*.yml) that add to or replace the built-in
    /// catalog. Example: --rules ./audit-rules
    #[arg(long, value_name = "DIR")]
    pub rules: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// What the command line asks for.
pub enum Invocation {
    /// A run of the library (boxed: the other variants are a byte).
    Run(Box<Settings>),
    /// A shell completion script (made from the clap command).
    Completions(clap_complete::Shell),
    /// The man page (made from the clap command).
    Man,
}

impl From<Cli> for Invocation {
    fn from(cli: Cli) -> Self {
        let command = match cli.command {
            None => settings::Command::Check(cli.check.into()),
            Some(Command::Check(args)) => settings::Command::Check(args.into()),
            Some(Command::Tasks(args)) => settings::Command::Tasks(args.into()),
            Some(Command::WhoFixes(args)) => settings::Command::WhoFixes(args.into()),
            Some(Command::Sysctl(args)) => settings::Command::Sysctl(args.into()),
            Some(Command::Rules) => settings::Command::Rules,
            Some(Command::Explain { id }) => settings::Command::Explain(id),
            Some(Command::Completions { shell }) => return Invocation::Completions(shell),
            Some(Command::Man) => return Invocation::Man,
        };
        let color = match cli.color {
            ColorChoice::Auto => settings::Color::Auto,
            ColorChoice::Always => settings::Color::Always,
            ColorChoice::Never => settings::Color::Never,
        };
        Invocation::Run(Box::new(Settings {
            ui: Ui::new(color, cli.quiet),
            command,
        }))
    }
}

/// Runs what the command line asks for; the exit code as
/// [`preflint::run::run`] gives it.
///
/// # Errors
/// A setup error, as a message.
pub fn run(cli: Cli) -> Result<u8, String> {
    match Invocation::from(cli) {
        Invocation::Run(settings) => preflint::run::run(*settings),
        Invocation::Completions(shell) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "preflint", &mut std::io::stdout());
            Ok(0)
        }
        Invocation::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .map_err(|e| e.to_string())?;
            let _ = std::io::stdout().lock().write_all(&out);
            Ok(0)
        }
    }
}

impl From<CommonArgs> for settings::LoadSettings {
    fn from(a: CommonArgs) -> Self {
        settings::LoadSettings {
            path: a.path,
            playbooks: a.playbooks,
            excludes: a.excludes,
            extra_vars: a.extra_vars,
            inventory: a.inventory,
            max_total_mib: a.max_total_mib,
        }
    }
}

impl From<SysctlOptions> for settings::SysctlOptions {
    fn from(a: SysctlOptions) -> Self {
        settings::SysctlOptions {
            distro: a.distro,
            host_root: a.host_root,
        }
    }
}

impl From<TasksFormat> for settings::TasksFormat {
    fn from(f: TasksFormat) -> Self {
        match f {
            TasksFormat::Human => settings::TasksFormat::Human,
            TasksFormat::Json => settings::TasksFormat::Json,
        }
    }
}

impl From<CheckArgs> for settings::CheckSettings {
    fn from(a: CheckArgs) -> Self {
        settings::CheckSettings {
            common: a.common.into(),
            sysctl: a.sysctl.into(),
            format: match a.format {
                CheckFormat::Human => settings::CheckFormat::Human,
                CheckFormat::Json => settings::CheckFormat::Json,
                CheckFormat::Sarif => settings::CheckFormat::Sarif,
                CheckFormat::Github => settings::CheckFormat::Github,
                CheckFormat::Codeclimate => settings::CheckFormat::Codeclimate,
                CheckFormat::Junit => settings::CheckFormat::Junit,
            },
            fail_level: a.fail_level.map(|l| match l {
                Level::Info => preflint::diagnostic::Severity::Info,
                Level::Warning => preflint::diagnostic::Severity::Warning,
                Level::Error => preflint::diagnostic::Severity::Error,
            }),
            config: a.config,
            baseline: a.baseline,
            write_baseline: a.write_baseline,
            rules: a.rules,
        }
    }
}

impl From<TasksArgs> for settings::TasksSettings {
    fn from(a: TasksArgs) -> Self {
        settings::TasksSettings {
            common: a.common.into(),
            format: a.format.into(),
            effects: a.effects,
            evaluated: a.evaluated,
        }
    }
}

impl From<WhoFixesArgs> for settings::WhoFixesSettings {
    fn from(a: WhoFixesArgs) -> Self {
        settings::WhoFixesSettings {
            common: a.common.into(),
            format: match a.format {
                WhoFixesFormat::Table => settings::WhoFixesFormat::Table,
                WhoFixesFormat::Markdown => settings::WhoFixesFormat::Markdown,
                WhoFixesFormat::Json => settings::WhoFixesFormat::Json,
                WhoFixesFormat::Compact => settings::WhoFixesFormat::Compact,
                WhoFixesFormat::Html => settings::WhoFixesFormat::Html,
            },
            rules: a.rules,
            tool_name: a.tool_name,
        }
    }
}

impl From<SysctlArgs> for settings::SysctlSettings {
    fn from(a: SysctlArgs) -> Self {
        settings::SysctlSettings {
            common: a.common.into(),
            sysctl: a.sysctl.into(),
            format: a.format.into(),
        }
    }
}
