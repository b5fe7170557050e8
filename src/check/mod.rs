//! `preflint check`: everything the lint rules need, computed once (who-fixes
//! verdicts, sysctl writes and their boot-order simulation), then the rules,
//! suppression and sorting.

pub mod extract;

use crate::ansible::project::Project;
use crate::concern::analyze::{Scope, Verdict};
use crate::diagnostic::Severity;
use crate::rule::{Finding, RuleMeta};
use crate::source::SourceMap;
use crate::sysctl::{Baseline, KeyResult, Write};
use crate::{HashMap, HashSet};
use serde::Deserialize;

/// A sysctl value Kubernetes needs (from `rules/sysctl-required.yml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Required {
    pub key: String,
    pub value: String,
    pub group: String,
    pub why: String,
    #[serde(default)]
    pub preflight: Option<String>,
}

/// The embedded list of required sysctl values.
///
/// # Errors
/// When the embedded file does not parse (a build defect, caught by tests).
pub fn required() -> Result<Vec<Required>, String> {
    serde_yaml::from_str(include_str!("../../rules/sysctl-required.yml"))
        .map_err(|e| format!("rules/sysctl-required.yml: {e}"))
}

/// What every rule may read.
pub struct Context<'a, 's> {
    pub project: &'a Project,
    pub sources: &'a SourceMap,
    pub scope: &'s Scope<'s>,
    /// Every reachable task with its cached effects.
    pub reached: &'a [crate::concern::analyze::Facts<'s>],
    pub verdicts: &'a [Verdict],
    pub writes: &'a [extract::Found],
    pub sysctl: &'a [KeyResult],
    pub required: &'a [Required],
}

impl Context<'_, '_> {
    #[must_use]
    pub fn verdict(&self, id: &str) -> Option<&Verdict> {
        self.verdicts.iter().find(|v| v.id == id)
    }

    /// The simulation's result for a normalised key (the results are sorted
    /// by key, one per key).
    #[must_use]
    pub fn sysctl_result(&self, key: &str) -> Option<&KeyResult> {
        self.sysctl
            .binary_search_by(|r| r.key.as_str().cmp(key))
            .ok()
            .map(|i| &self.sysctl[i])
    }

    /// The first entry playbook's first play, where project-wide findings point.
    #[must_use]
    pub fn anchor(&self) -> (String, u32, u32) {
        self.project
            .entries
            .iter()
            .find_map(|e| e.span)
            .or_else(|| {
                self.project
                    .entries
                    .iter()
                    .flat_map(|e| &e.plays)
                    .next()
                    .map(|p| p.span)
            })
            .map_or_else(
                || (".".to_string(), 1, 1),
                |s| (self.sources.display(s.file), s.line, s.col),
            )
    }
}

/// Runs the sysctl simulation for the writes found.
#[must_use]
pub fn simulate(baseline: &Baseline, writes: &[extract::Found]) -> Vec<KeyResult> {
    let plain: Vec<Write> = writes.iter().map(|f| f.write.clone()).collect();
    crate::sysctl::simulate(baseline, &plain)
}

/// Effective settings for one rule after configuration.
#[derive(Debug, Clone)]
pub struct RuleSetting {
    pub enabled: bool,
    pub severity: Severity,
}

/// Runs every enabled rule, applies configured severities, `# noqa`
/// suppression and sorting.
#[must_use]
pub fn run_rules(
    cx: &Context<'_, '_>,
    settings: &dyn Fn(&RuleMeta) -> RuleSetting,
) -> Vec<Finding> {
    use rayon::prelude::*;
    let registry = crate::rule::registry();
    let enabled: Vec<_> = registry
        .iter()
        .map(|rule| (rule, settings(rule.meta())))
        .filter(|(_, s)| s.enabled)
        .collect();
    // Rules run in parallel; their findings are joined in registry order.
    let mut out: Vec<Finding> = enabled
        .par_iter()
        .flat_map_iter(|(rule, s)| {
            let mut found = Vec::new();
            rule.check(cx, &mut found);
            for f in &mut found {
                f.severity = s.severity;
            }
            found
        })
        .collect();
    let noqa = noqa_lines(cx.sources, &out);
    out.retain(|f| !suppressed(&noqa, f));
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out.dedup_by(|a, b| a.sort_key() == b.sort_key());
    out
}

/// The lines that carry `# noqa` in each file a finding points at, by
/// 0-based line index. Each file is read once, however many findings it has.
fn noqa_lines(
    sources: &SourceMap,
    findings: &[Finding],
) -> HashMap<String, HashMap<usize, String>> {
    let wanted: HashSet<&str> = findings.iter().map(|f| f.file.as_str()).collect();
    let mut out: HashMap<String, HashMap<usize, String>> = HashMap::default();
    for i in 0..sources.len() {
        let s = sources.get(crate::source::FileId(u32::try_from(i).unwrap_or(u32::MAX)));
        // The first file shown under a name is the one findings point at.
        if !wanted.contains(s.display.as_str()) || out.contains_key(&s.display) {
            continue;
        }
        let lines = s
            .text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("# noqa"))
            .map(|(n, l)| (n, l.to_string()))
            .collect();
        out.insert(s.display.clone(), lines);
    }
    out
}

/// `# noqa` or `# noqa: rule-id[, rule-id]` on the finding's line.
fn suppressed(noqa: &HashMap<String, HashMap<usize, String>>, f: &Finding) -> bool {
    let Some(line) = noqa
        .get(&f.file)
        .and_then(|lines| lines.get(&(f.line.saturating_sub(1) as usize)))
    else {
        return false;
    };
    let Some(pos) = line.find("# noqa") else {
        return false;
    };
    let rest = line[pos + "# noqa".len()..].trim_start();
    match rest.strip_prefix(':') {
        None => true,
        Some(ids) => ids
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .any(|id| id == f.rule),
    }
}

/// Runs `check` on a small tree written to a temporary directory (for rule tests).
#[cfg(test)]
pub(crate) mod testing {
    use crate::rule::Finding;

    /// A temporary tree holding the given (path, text) pairs.
    pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        dir
    }

    /// The model of the tree at `dir` as every command reads it, without a
    /// configuration file.
    pub(crate) fn load(dir: &std::path::Path) -> crate::run::Loaded {
        let settings = crate::settings::LoadSettings::new(dir);
        crate::run::load(&settings, &crate::config::Config::default()).expect("loads")
    }

    /// The ids of the findings of `rule` for a tree given as (path, text) pairs.
    pub(crate) fn findings(files: &[(&str, &str)], rule: &str) -> Vec<Finding> {
        let dir = tree(files);
        let settings = crate::settings::CheckSettings::new(dir.path());
        let run = crate::run::check_run(&settings).expect("check runs");
        run.findings
            .into_iter()
            .filter(|f| f.rule == rule)
            .collect()
    }

    /// A one-play playbook running `role` with the given tasks file.
    pub(crate) fn role_tree<'a>(role: &'a str, tasks: &'a str) -> Vec<(String, &'a str)> {
        vec![
            ("site.yml".to_string(), "- hosts: all\n  roles: [r]\n"),
            (format!("roles/r/tasks/{role}"), tasks),
        ]
    }

    pub(crate) fn run_role(tasks: &str, rule: &str) -> Vec<Finding> {
        let tree = role_tree("main.yml", tasks);
        let refs: Vec<(&str, &str)> = tree.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        findings(&refs, rule)
    }
}
