//! `preflint check`: the sysctl writes read from the reached tasks' effects
//! and their boot-order simulation, computed once for the rules (see
//! `crate::rule`).

pub mod sysctl;

use crate::sysctl::{Baseline, KeyResult, Write};

/// Runs the sysctl simulation for the writes found.
#[must_use]
pub fn simulate(baseline: &Baseline, writes: &[sysctl::Found]) -> Vec<KeyResult> {
    let plain: Vec<Write> = writes.iter().map(|f| f.write.clone()).collect();
    crate::sysctl::simulate(baseline, &plain)
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
