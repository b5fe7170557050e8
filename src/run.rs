//! The pipeline, visible in one place:
//! discover -> parse (parallel) -> model -> (analyze) -> sort -> emit.

use crate::ansible::project::{self, BuildOptions, Project};
use crate::cli::{Cli, Command, CommonArgs, TasksArgs, WhoFixesArgs, WhoFixesFormat};
use crate::diagnostic::{Diagnostic, LocatedDiagnostic, Severity};
use crate::discover::{self, Excludes};
use crate::load::Loader;
use crate::output;
use crate::source::SourceMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Runs a command; returns the exit code (0 clean, 1 findings, 2 errors are `Err`).
///
/// # Errors
/// A setup error (missing path, unreadable config) as a message.
pub fn run(cli: Cli) -> Result<u8, String> {
    match cli.command {
        Command::Tasks(args) => tasks(&args),
        Command::WhoFixes(args) => who_fixes(&args),
    }
}

/// A model of the tree plus every diagnostic found while reading it.
pub struct Loaded {
    pub project: Project,
    pub inventory: Option<crate::ansible::inventory::Inventory>,
    pub extra: crate::vars::ExtraVars,
    pub sources: Arc<SourceMap>,
    pub diagnostics: Vec<LocatedDiagnostic>,
}

/// discover -> parse -> model.
///
/// # Errors
/// When PATH does not exist or an entry playbook is missing.
pub fn load(common: &CommonArgs) -> Result<Loaded, String> {
    let root = common.path.clone();
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
        for p in &common.playbooks {
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
    exclude_list.extend(ansible_lint_excludes(&root));
    let excludes = Excludes::new(&exclude_list);

    let files = discover::discover(&root, &excludes, &sources, &mut diags);
    let loader = Loader::new(Arc::clone(&sources));
    let yaml_paths: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.kind.is_yaml())
        .map(|f| f.path.clone())
        .collect();
    loader.preload(&yaml_paths, true);
    for (_, l) in loader.all() {
        diags.extend(l.diagnostics.iter().cloned());
        diags.extend(l.yaml.diagnostics.iter().cloned());
    }
    let extra = crate::vars::parse_extra_vars(&common.extra_vars, &sources)?;
    let inventory = match &common.inventory {
        Some(p) if !p.exists() => {
            return Err(format!("-i {}: no such file or directory", p.display()));
        }
        Some(p) => {
            let inv = crate::ansible::inventory::Inventory::load(p, &loader);
            diags.extend(inv.diagnostics.iter().cloned());
            Some(inv)
        }
        None => None,
    };
    let resolver = crate::vars::VarsResolver {
        extra: extra.clone(),
    };
    let project = project::build(
        &root,
        files,
        &loader,
        &BuildOptions {
            playbooks,
            resolver: &resolver,
        },
    );
    diags.extend(project.diagnostics.iter().cloned());
    let diagnostics = crate::diagnostic::sorted(&sources, &diags);
    Ok(Loaded {
        project,
        inventory,
        extra,
        sources,
        diagnostics,
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

fn tasks(args: &TasksArgs) -> Result<u8, String> {
    let loaded = load(&args.common)?;
    let text = match args.format {
        crate::cli::TasksFormat::Human => output::tasks::human(&loaded),
        crate::cli::TasksFormat::Json => output::tasks::json(&loaded),
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = out.write_all(text.as_bytes());
    let errors = loaded
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    Ok(u8::from(errors))
}

fn who_fixes(args: &WhoFixesArgs) -> Result<u8, String> {
    let catalog = crate::concern::catalog::load(args.rules.as_deref()).map_err(|errs| {
        let lines: Vec<String> = errs.iter().map(ToString::to_string).collect();
        format!("invalid concern catalog:\n  {}", lines.join("\n  "))
    })?;
    let mut loaded = load(&args.common)?;
    if let Some(name) = &args.tool_name {
        loaded.project.name.clone_from(name);
    }
    let verdicts = crate::concern::analyze::analyze(
        &loaded.project,
        &loaded.sources,
        &catalog,
        &loaded.extra,
        loaded.inventory.as_ref(),
    );
    let text = match args.format {
        WhoFixesFormat::Table => output::who_fixes::table(&verdicts),
        WhoFixesFormat::Markdown => output::who_fixes::markdown(&verdicts),
        WhoFixesFormat::Compact => output::who_fixes::compact(&verdicts),
        WhoFixesFormat::Json => output::who_fixes::json(
            &loaded.project.name,
            &verdicts,
            &loaded.project.unresolved,
            &loaded.diagnostics,
        ),
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(0)
}
