//! The pipeline, visible in one place:
//! discover -> parse (parallel) -> model -> (analyze) -> sort -> emit.

pub use crate::loaded::{Build, CheckRun, Loaded};

use crate::ansible::project::{self, BuildOptions};
use crate::config::{Config, RuleLevel};
use crate::diagnostic::{Diagnostic, LocatedDiagnostic, Severity};
use crate::discover::{self, Excludes};
use crate::load::Loader;
use crate::output;
use crate::settings::{
    CheckSettings, Command, LoadSettings, Settings, SysctlOptions, SysctlSettings, TasksFormat,
    TasksSettings, Ui, WhoFixesFormat, WhoFixesSettings,
};
use crate::source::SourceMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Runs a command; returns the exit code (0 clean, 1 findings, 2 errors are `Err`).
///
/// # Errors
/// A setup error (missing path, unreadable config) as a message.
pub fn run(settings: Settings) -> Result<u8, String> {
    crate::progress::phase("arguments");
    let ui = settings.ui;
    // A panic the analysis did not catch at a file or a task (see
    // `internal_error`) still ends as an error, not a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match settings.command {
        Command::Check(args) => check(&args, ui),
        Command::Tasks(args) => tasks(&args, ui),
        Command::WhoFixes(args) => who_fixes(&args, ui),
        Command::Rules => rules(),
        Command::Explain(id) => explain(&id),
        Command::Sysctl(args) => sysctl(&args),
    }))
    .unwrap_or_else(|payload| {
        Err(format!(
            "internal error: {} (a bug in preflint: please report it)",
            crate::internal_error::panic_message(payload.as_ref())
        ))
    })
}

/// Says each `internal-error` diagnostic on stderr, whatever the format and
/// `--quiet` (some formats show no diagnostics, and a bug must not go
/// unseen); whether there was one: the command then exits 2.
fn report_internal_errors(diagnostics: &[LocatedDiagnostic]) -> bool {
    let mut any = false;
    for d in diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostic::code::INTERNAL)
    {
        eprintln!(
            "preflint: internal error: {}:{}:{}: {}",
            d.file, d.line, d.column, d.message
        );
        any = true;
    }
    any
}

/// The diagnostics of the load plus those of the analysis passes over
/// `reached` (panics caught at a task), in order.
fn with_analysis_errors(
    loaded: &[LocatedDiagnostic],
    sources: &SourceMap,
    reached: &[crate::reach::Facts<'_>],
) -> Vec<LocatedDiagnostic> {
    let mut all = loaded.to_vec();
    let analysis = crate::reach::internal_errors(reached);
    all.extend(analysis.iter().map(|d| d.located(sources)));
    all.sort();
    all.dedup();
    all
}

/// The configuration for a run: `.preflint.yml` at the root (or `--config`).
fn config_for(common: &LoadSettings, explicit: Option<&Path>) -> Result<Config, String> {
    let root = if common.path.is_file() {
        common
            .path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    } else {
        common.path.clone()
    };
    let ids: Vec<&str> = crate::rule::registry()
        .iter()
        .map(|r| r.meta().id)
        .collect();
    Config::load(&root, explicit, &ids)
        .map_err(|errs| format!("invalid configuration:\n  {}", errs.join("\n  ")))
}

/// discover -> parse -> model.
///
/// # Errors
/// When PATH does not exist or an entry playbook is missing.
pub fn load(common: &LoadSettings, config: &Config) -> Result<Loaded, String> {
    let root = common.path.clone();
    crate::progress::phase("start");
    if !root.exists() {
        return Err(format!("{}: no such file or directory", root.display()));
    }
    let (root, playbooks) = if root.is_file() {
        let dir = root
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        (dir, vec![root.clone()])
    } else {
        let mut pbs = Vec::new();
        let listed: Vec<PathBuf> = if common.playbooks.is_empty() {
            config.playbooks.clone()
        } else {
            common.playbooks.clone()
        };
        for p in &listed {
            let full = if p.is_absolute() || p.exists() && !root.join(p).exists() {
                p.clone()
            } else {
                root.join(p)
            };
            if !full.is_file() {
                return Err(format!(
                    "--playbook {}: not found under {}",
                    p.display(),
                    root.display()
                ));
            }
            pbs.push(full);
        }
        (root, pbs)
    };
    let sources = Arc::new(SourceMap::new(&root));
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut exclude_list = common.excludes.clone();
    exclude_list.extend(config.exclude_paths.iter().cloned());
    exclude_list.extend(ansible_lint_excludes(&root));
    let excludes = Excludes::new(&exclude_list);

    let loader = Loader::with_total(Arc::clone(&sources), common.max_total_mib * 1024 * 1024);
    let found = discover::discover(&root, &excludes, &sources, &mut diags);
    loader.fs.know_dirs(found.dirs);
    loader.fs.know_listings(found.listings);
    loader.fs.know_same(
        found
            .files
            .iter()
            .filter_map(|f| Some((f.path.clone(), f.same_as.clone()?))),
    );
    let files = found.files;
    crate::progress::phase("discover");
    let yaml_paths: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.kind.is_yaml())
        .map(|f| f.path.clone())
        .collect();
    // Which files are read is settled before any is: the parse and the
    // model then run side by side, the model reading each file it reaches
    // first itself: one after the other, each would leave a thread idle.
    let plan = loader.plan(&yaml_paths, true);
    crate::progress::phase("plan");
    let mut extra = crate::vars::ExtraVars {
        vars: config.extra_vars.clone(),
    };
    extra
        .vars
        .extend(crate::vars::parse_extra_vars(&common.extra_vars, &sources)?.vars);
    let inventory = match common.inventory.as_ref().or(config.inventory.as_ref()) {
        Some(p) if !p.exists() => {
            return Err(format!("-i {}: no such file or directory", p.display()));
        }
        Some(p) => Some(crate::ansible::inventory::Inventory::load(p, &loader)),
        None => None,
    };
    let resolver = crate::vars::VarsResolver::new(extra.clone());
    let ((), project) = rayon::join(
        || loader.fill(&plan),
        || {
            project::build(
                &root,
                files,
                &loader,
                &BuildOptions {
                    playbooks,
                    resolver: &resolver,
                },
            )
        },
    );
    drop(plan);
    crate::progress::phase("parse+model");
    diags.extend(loader.diagnostics());
    if let Some(inv) = &inventory {
        diags.extend(inv.diagnostics.iter().cloned());
    }
    diags.extend(project.diagnostics.iter().cloned());
    let diagnostics = crate::diagnostic::sorted(&sources, &diags);
    Ok(Loaded {
        project,
        inventory,
        extra,
        sources,
        diagnostics,
        build: Some(Build { loader, resolver }),
    })
}

/// `exclude_paths` from `.ansible-lint` at the root, when present.
fn ansible_lint_excludes(root: &Path) -> Vec<String> {
    for name in [
        ".ansible-lint",
        ".ansible-lint.yml",
        ".ansible-lint.yaml",
        ".config/ansible-lint.yml",
    ] {
        let p = root.join(name);
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let parsed = crate::yaml::parse(crate::source::FileId(u32::MAX), &text);
        let Some(doc) = parsed.docs.first() else {
            return Vec::new();
        };
        return doc
            .get("exclude_paths")
            .and_then(crate::yaml::Node::as_seq)
            .map(|s| {
                s.iter()
                    .filter_map(crate::yaml::Node::scalar_text)
                    .collect()
            })
            .unwrap_or_default();
    }
    Vec::new()
}

fn tasks(args: &TasksSettings, ui: Ui) -> Result<u8, String> {
    let progress =
        crate::progress::Progress::start("reading the tree", args.format == TasksFormat::Human, ui);
    let config = config_for(&args.common, None)?;
    let mut loaded = load(&args.common, &config)?;
    let build = loaded.take_build();
    // Effects render arguments: computed only when asked for.
    // The evaluation is listed in JSON only.
    let evaluate = args.evaluated && args.format == TasksFormat::Json;
    let (effects, evaluated) = if args.effects || evaluate {
        let scope = scope(&loaded, build);
        let reached = scope.reached();
        let by_task = args
            .effects
            .then(|| crate::reach::effects_by_task(&scope, &reached, &loaded.sources));
        let evaluated = evaluate
            .then(|| crate::reach::evaluated_by_task(&scope, &reached, &loaded.project.root));
        let diagnostics = with_analysis_errors(&loaded.diagnostics, &loaded.sources, &reached);
        release(reached, Frees::LeaveToExit);
        release(scope, Frees::LeaveToExit);
        loaded.diagnostics = diagnostics;
        (by_task, evaluated)
    } else {
        if let Some(build) = build {
            build.free();
        }
        (None, None)
    };
    drop(progress);
    let effects = effects
        .as_deref()
        .map(|by_task| output::tasks::Effects { by_task });
    let pieces = match args.format {
        TasksFormat::Human => output::tasks::human_pieces(&loaded, effects),
        TasksFormat::Json => vec![output::tasks::json_full(
            &loaded,
            effects,
            evaluated.as_deref(),
        )],
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    for p in &pieces {
        if out.write_all(p.as_bytes()).is_err() {
            break;
        }
    }
    let errors = loaded
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    let internal = report_internal_errors(&loaded.diagnostics);
    release(loaded, Frees::LeaveToExit);
    Ok(if internal { 2 } else { u8::from(errors) })
}

fn who_fixes(args: &WhoFixesSettings, ui: Ui) -> Result<u8, String> {
    let progress = crate::progress::Progress::start(
        "analysing who fixes each concern",
        matches!(
            args.format,
            WhoFixesFormat::Table | WhoFixesFormat::Markdown
        ),
        ui,
    );
    let config = config_for(&args.common, None)?;
    let (catalog, loaded) = rayon::join(
        || catalog(args.rules.as_deref()),
        || load(&args.common, &config),
    );
    let (catalog, mut loaded) = (catalog?, loaded?);
    if let Some(name) = &args.tool_name {
        loaded.project.name.clone_from(name);
    }
    let build = loaded.take_build();
    let scope = scope(&loaded, build);
    let reached = scope.reached();
    crate::progress::phase("variables");
    let verdicts = crate::concern::analyze::analyze(
        &loaded.project,
        &loaded.sources,
        &catalog,
        &scope,
        &reached,
        crate::concern::analyze::IterationsAfter::Dropped,
    );
    crate::progress::phase("concerns");
    let diagnostics = with_analysis_errors(&loaded.diagnostics, &loaded.sources, &reached);
    drop(progress);
    let text = match args.format {
        WhoFixesFormat::Table => output::who_fixes::table(&verdicts),
        WhoFixesFormat::Markdown => output::who_fixes::markdown(&verdicts),
        WhoFixesFormat::Compact => output::who_fixes::compact(&verdicts),
        WhoFixesFormat::Html => output::html::render(&loaded.project.name, &verdicts),
        WhoFixesFormat::Json => output::who_fixes::json(
            &loaded.project.name,
            &verdicts,
            &loaded.project.unresolved,
            &diagnostics,
        ),
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    crate::progress::phase("output");
    let internal = report_internal_errors(&diagnostics);
    release((reached, verdicts), Frees::LeaveToExit);
    release(scope, Frees::LeaveToExit);
    release(loaded, Frees::LeaveToExit);
    Ok(if internal { 2 } else { 0 })
}

/// The built-in concern catalog plus `--rules DIR`, every problem listed.
fn catalog(extra: Option<&Path>) -> Result<Vec<crate::concern::catalog::Concern>, String> {
    crate::concern::catalog::load(extra).map_err(|errs| {
        let lines: Vec<String> = errs.iter().map(ToString::to_string).collect();
        format!("invalid concern catalog:\n  {}", lines.join("\n  "))
    })
}

/// Plays and their variables, indexed once for analysis, while what built
/// the model is freed: the indexing is partly serial, so the freeing takes
/// the other thread.
fn scope(loaded: &Loaded, build: Option<Build>) -> crate::reach::Scope<'_> {
    let (scope, ()) = rayon::join(
        || crate::reach::Scope::new(&loaded.project, &loaded.extra, loaded.inventory.as_ref()),
        || {
            if let Some(build) = build {
                build.free();
            }
        },
    );
    scope
}

/// The sysctl files assumed on the hosts before the playbook.
fn baseline(opts: &SysctlOptions, config: &Config) -> Result<crate::sysctl::Baseline, String> {
    if let Some(dir) = &opts.host_root {
        if !dir.is_dir() {
            return Err(format!("--host-root {}: not a directory", dir.display()));
        }
        return crate::sysctl::Baseline::from_host_root(dir)
            .map_err(|e| format!("--host-root {}: {e}", dir.display()));
    }
    let profiles: Vec<String> = match &opts.distro {
        Some(d) => d
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => config.distro.clone(),
    };
    if profiles.is_empty() || profiles.iter().all(|p| p == "none") {
        return Ok(crate::sysctl::Baseline::empty());
    }
    crate::sysctl::Baseline::from_catalog(&profiles).map_err(|e| format!("--distro: {e}"))
}

/// discover -> parse -> model -> analyze -> rules -> suppress -> sort.
///
/// # Errors
/// Setup errors (missing path, invalid configuration or catalog).
pub fn check_run(args: &CheckSettings) -> Result<CheckRun, String> {
    check_run_with(args, Frees::Drop)
}

/// What to do with the analysis' intermediate structures when done.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frees {
    Drop,
    /// The process exits right after: leave the memory to the OS (freeing
    /// thousands of small allocations one by one costs several percent of a
    /// run).
    LeaveToExit,
}

/// Drops `x`, or leaves it to the OS when the process is about to exit.
fn release<T>(x: T, frees: Frees) {
    match frees {
        Frees::Drop => drop(x),
        Frees::LeaveToExit => std::mem::forget(x),
    }
}

fn check_run_with(args: &CheckSettings, frees: Frees) -> Result<CheckRun, String> {
    let config = config_for(&args.common, args.config.as_deref())?;
    // The rule data (the catalog, the sysctl baseline, what kubeadm
    // requires) is read beside the walk, one worker's share.
    let (rule_data, loaded) = rayon::join(
        || -> Result<_, String> {
            Ok((
                catalog(args.rules.as_deref())?,
                baseline(&args.sysctl, &config)?,
                crate::sysctl::required()?,
            ))
        },
        || load(&args.common, &config),
    );
    let (catalog, base, required) = rule_data?;
    let mut loaded = loaded?;
    let build = loaded.take_build();
    let scope = scope(&loaded, build);
    let reached = scope.reached();
    crate::progress::phase("variables");
    // Independent of each other: run side by side, so neither's last
    // tasks leave a worker idle.
    let (verdicts, (writes, sysctl)) = rayon::join(
        || {
            crate::concern::analyze::analyze(
                &loaded.project,
                &loaded.sources,
                &catalog,
                &scope,
                &reached,
                // The sysctl extraction and the rules read them too.
                crate::concern::analyze::IterationsAfter::Kept,
            )
        },
        || {
            let writes = crate::check::sysctl::sysctl_writes(&scope, &reached, &loaded.sources);
            let sysctl = crate::check::simulate(&base, &writes);
            (writes, sysctl)
        },
    );
    crate::progress::phase("concerns+sysctl");
    let cx = crate::rule::Context {
        project: &loaded.project,
        sources: &loaded.sources,
        scope: &scope,
        reached: &reached,
        verdicts: &verdicts,
        writes: &writes,
        sysctl: &sysctl,
        required: &required,
    };
    let settings = |m: &crate::rule::RuleMeta| match config.rules.get(m.id) {
        Some(RuleLevel::Off) => crate::rule::RuleSetting {
            enabled: false,
            severity: m.severity,
        },
        Some(RuleLevel::Level(s)) => crate::rule::RuleSetting {
            enabled: true,
            severity: *s,
        },
        None => crate::rule::RuleSetting {
            enabled: true,
            severity: m.severity,
        },
    };
    let mut findings = crate::rule::run_rules(&cx, &settings);
    let diagnostics = with_analysis_errors(&loaded.diagnostics, &loaded.sources, &reached);
    // Load problems are findings too (reserved ids), so CI sees broken files.
    for d in &diagnostics {
        findings.push(crate::rule::Finding {
            rule: d.code.to_string(),
            severity: d.severity,
            message: d.message.clone(),
            help: d.help.clone(),
            file: d.file.clone(),
            line: d.line,
            column: d.column,
            preflight: None,
            related: Vec::new(),
            fingerprint: crate::rule::fingerprint(d.code, &d.file, &d.message),
        });
    }
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    crate::progress::phase("rules");
    release((reached, verdicts, writes, sysctl), frees);
    release(scope, frees);
    loaded.diagnostics = diagnostics;
    let fail_level = args
        .fail_level
        .or(config.fail_level)
        .unwrap_or(Severity::Warning);
    Ok(CheckRun {
        loaded,
        findings,
        fail_level,
    })
}

fn check(args: &CheckSettings, ui: Ui) -> Result<u8, String> {
    let progress = crate::progress::Progress::start(
        "checking",
        args.format == crate::settings::CheckFormat::Human,
        ui,
    );
    let mut run = check_run_with(args, Frees::LeaveToExit)?;
    drop(progress);
    let internal = report_internal_errors(&run.loaded.diagnostics);
    if let Some(path) = &args.write_baseline {
        crate::baseline::write(path, &run.findings)?;
        if !ui.quiet {
            eprintln!(
                "preflint: wrote {} findings to {}",
                run.findings.len(),
                path.display()
            );
        }
        return Ok(if internal { 2 } else { 0 });
    }
    if let Some(path) = &args.baseline {
        let known = crate::baseline::read(path)?;
        run.findings.retain(|f| !known.contains(&f.fingerprint));
    }
    let text = output::check::render(
        args.format,
        &run,
        &args.common.path.display().to_string(),
        ui,
    );
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    crate::progress::phase("output");
    let failing = run.findings.iter().any(|f| f.severity >= run.fail_level);
    release(run, Frees::LeaveToExit);
    Ok(if internal { 2 } else { u8::from(failing) })
}

fn rules() -> Result<u8, String> {
    let mut out = String::new();
    out.push_str("Rules (preflint explain ID for details):\n");
    for r in crate::rule::registry() {
        let m = r.meta();
        out.push_str(&format!(
            "  {:<38} {:<8} {}\n",
            m.id,
            m.severity.as_str(),
            m.summary
        ));
    }
    out.push_str("\nConcerns (preflint who-fixes):\n");
    let catalog = catalog(None)?;
    for c in &catalog {
        out.push_str(&format!("  {:<38} {}\n", c.id, c.title));
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(0)
}

fn explain(id: &str) -> Result<u8, String> {
    if let Some(r) = crate::rule::registry()
        .into_iter()
        .find(|r| r.meta().id == id)
    {
        let m = r.meta();
        let text = format!(
            "# {} ({}, {})\n\n{}\n\n{}",
            m.id,
            m.category,
            m.severity.as_str(),
            m.summary,
            m.doc
        );
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return Ok(0);
    }
    let catalog = catalog(None)?;
    if let Some(c) = catalog.iter().find(|c| c.id == id) {
        let mut text = format!(
            "# {} (concern)\n\n{}\n\n{}\n\nReference: {}\n",
            c.id,
            c.title,
            c.why.trim(),
            c.reference
        );
        if let Some(p) = &c.preflight {
            text.push_str(&format!("kubeadm preflight check: {p}\n"));
        }
        if !c.applies_to.is_empty() {
            text.push_str(&format!("Applies to: {}\n", c.applies_to.join(", ")));
        }
        for p in &c.parts {
            text.push_str(&format!(
                "Part `{}`: {} fix patterns, {} check patterns\n",
                p.name,
                p.fix.len(),
                p.check.len()
            ));
        }
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return Ok(0);
    }
    Err(format!(
        "no rule or concern `{id}` (run `preflint rules` for the list)"
    ))
}

fn sysctl(args: &SysctlSettings) -> Result<u8, String> {
    let config = config_for(&args.common, None)?;
    let base = baseline(&args.sysctl, &config)?;
    let mut loaded = load(&args.common, &config)?;
    let build = loaded.take_build();
    let scope = scope(&loaded, build);
    let reached = scope.reached();
    let writes = crate::check::sysctl::sysctl_writes(&scope, &reached, &loaded.sources);
    let results = crate::check::simulate(&base, &writes);
    let diagnostics = with_analysis_errors(&loaded.diagnostics, &loaded.sources, &reached);
    let text = match args.format {
        TasksFormat::Json => {
            let mut s = serde_json::to_string_pretty(&results).unwrap_or_default();
            s.push('\n');
            s
        }
        TasksFormat::Human => output::sysctl::table(
            &results,
            &base,
            &crate::check::sysctl::unknown_lines(&scope, &reached, &loaded.sources),
        ),
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if report_internal_errors(&diagnostics) {
        2
    } else {
        0
    })
}
