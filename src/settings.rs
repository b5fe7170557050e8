//! What a run is asked to do, as plain values the library owns: the tree to
//! read, the command's options, and how to talk to the person running it.
//!
//! The command line (`src/cli.rs`, part of the binary, not of the library)
//! parses its arguments with clap and converts them into these at once; the
//! library never sees a clap type. Tests and other callers build these
//! directly.

use crate::diagnostic::Severity;
use std::path::PathBuf;

/// Everything a run needs: what to do, and how to talk while doing it.
#[derive(Debug)]
pub struct Settings {
    pub ui: Ui,
    pub command: Command,
}

/// The commands the library runs. Shell completions and the man page
/// describe the command line itself, so the binary makes them.
#[derive(Debug)]
pub enum Command {
    Check(CheckSettings),
    Tasks(TasksSettings),
    WhoFixes(WhoFixesSettings),
    Sysctl(SysctlSettings),
    /// List every lint rule and concern.
    Rules,
    /// Print the documentation of a rule or a concern (its id).
    Explain(String),
}

/// How to talk to the person running preflint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ui {
    /// Colour the output.
    pub color: bool,
    /// No progress indicator and no notes on stderr.
    pub quiet: bool,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    Always,
    Never,
}

impl Ui {
    /// The settings for `color` and `quiet`, `Auto` decided now for stdout.
    #[must_use]
    pub fn new(color: Color, quiet: bool) -> Self {
        let color = match color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::IsTerminal::is_terminal(&std::io::stdout())
                    && std::env::var_os("NO_COLOR").is_none()
            }
        };
        Ui { color, quiet }
    }
}

/// The tree to read and how (every command that reads one).
#[derive(Debug, Clone)]
pub struct LoadSettings {
    /// A repository, a playbook directory, a playbook, a role, or a roles/ folder.
    pub path: PathBuf,
    /// Entry playbooks, relative to `path`; empty: the playbooks at its top
    /// (or `playbooks` in `.preflint.yml`), else every role.
    pub playbooks: Vec<PathBuf>,
    /// Paths or globs left out, relative to `path`.
    pub excludes: Vec<String>,
    /// Extra variables as `-e` takes them: `key=value`, `@file`, or a mapping.
    pub extra_vars: Vec<String>,
    /// Inventory file or directory.
    pub inventory: Option<PathBuf>,
    /// Most MiB of files read in the run.
    pub max_total_mib: u64,
}

impl LoadSettings {
    /// [`LoadSettings::max_total_mib`] unless told otherwise.
    pub const DEFAULT_MAX_TOTAL_MIB: u64 = crate::load::MAX_TOTAL_SIZE / (1024 * 1024);

    /// The tree at `path`, read with the defaults.
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LoadSettings {
            path: path.into(),
            playbooks: Vec::new(),
            excludes: Vec::new(),
            extra_vars: Vec::new(),
            inventory: None,
            max_total_mib: Self::DEFAULT_MAX_TOTAL_MIB,
        }
    }
}

/// The sysctl files assumed on the hosts before the playbook runs.
#[derive(Debug, Clone, Default)]
pub struct SysctlOptions {
    /// Comma-separated profiles from `rules/sysctl-distro.yml`, or `none`;
    /// unset: `distro` in `.preflint.yml`.
    pub distro: Option<String>,
    /// A copy of a real host's `/etc`, `/run`, `/usr/lib`... whose sysctl
    /// files are the baseline.
    pub host_root: Option<PathBuf>,
}

/// `preflint check`.
#[derive(Debug, Clone)]
pub struct CheckSettings {
    pub common: LoadSettings,
    pub sysctl: SysctlOptions,
    pub format: CheckFormat,
    /// Fail at or above this level; unset: `.preflint.yml`, else warning.
    pub fail_level: Option<Severity>,
    /// Configuration file; unset: `.preflint.yml` at the tree.
    pub config: Option<PathBuf>,
    /// Report only findings not in this baseline file.
    pub baseline: Option<PathBuf>,
    /// Write the findings to this file as a baseline instead of reporting them.
    pub write_baseline: Option<PathBuf>,
    /// A directory of concern files added to the built-in catalog.
    pub rules: Option<PathBuf>,
}

impl CheckSettings {
    /// `preflint check PATH`, with the defaults.
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        CheckSettings {
            common: LoadSettings::new(path),
            sysctl: SysctlOptions::default(),
            format: CheckFormat::Human,
            fail_level: None,
            config: None,
            baseline: None,
            write_baseline: None,
            rules: None,
        }
    }
}

/// The formats of `tasks` and `sysctl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TasksFormat {
    Human,
    Json,
}

/// `preflint tasks`.
#[derive(Debug, Clone)]
pub struct TasksSettings {
    pub common: LoadSettings,
    pub format: TasksFormat,
    /// List the effects of every reached task under it.
    pub effects: bool,
    /// List what each reached task evaluates to (JSON only).
    pub evaluated: bool,
}

/// The formats of `who-fixes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhoFixesFormat {
    Table,
    Markdown,
    Json,
    Compact,
    Html,
}

/// `preflint who-fixes`.
#[derive(Debug, Clone)]
pub struct WhoFixesSettings {
    pub common: LoadSettings,
    pub format: WhoFixesFormat,
    /// A directory of concern files added to the built-in catalog.
    pub rules: Option<PathBuf>,
    /// The automation's name in verdicts; unset: galaxy.yml's, else the directory's.
    pub tool_name: Option<String>,
}

/// `preflint sysctl`.
#[derive(Debug, Clone)]
pub struct SysctlSettings {
    pub common: LoadSettings,
    pub sysctl: SysctlOptions,
    pub format: TasksFormat,
}

/// An output format of `preflint check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckFormat {
    /// miette diagnostics with source snippets, then a summary line.
    Human,
    /// preflint's own JSON: version, findings, summary.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers).
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// GitLab code quality report (a Code Climate issue array).
    Codeclimate,
    /// `JUnit` XML (GitLab test reports, Jenkins).
    Junit,
}

impl CheckFormat {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [CheckFormat; 6] = [
        CheckFormat::Human,
        CheckFormat::Json,
        CheckFormat::Sarif,
        CheckFormat::Github,
        CheckFormat::Codeclimate,
        CheckFormat::Junit,
    ];

    /// The name used on the command line (`--format NAME`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CheckFormat::Human => "human",
            CheckFormat::Json => "json",
            CheckFormat::Sarif => "sarif",
            CheckFormat::Github => "github",
            CheckFormat::Codeclimate => "codeclimate",
            CheckFormat::Junit => "junit",
        }
    }

    /// The format named `name` (as printed by [`CheckFormat::name`]).
    #[must_use]
    pub fn from_name(name: &str) -> Option<CheckFormat> {
        CheckFormat::ALL.into_iter().find(|f| f.name() == name)
    }
}
