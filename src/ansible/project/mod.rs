//! The model of a tree: entry playbooks expanded into plays and the ordered
//! tasks each play reaches, as Ansible would compile them.
//!
//! Resolves `import_playbook`, roles (search paths, nested names, meta
//! dependencies, de-duplication), `import_*`/`include_*` and blocks, carrying
//! `when` conditions and variable layers down to every task. Never evaluates a
//! condition or a template: that is `vars`/`jinja`'s job, reached through the
//! [`TemplateResolver`] hook for include targets.
//!
//! This file holds the entry point, [`build`]. The Ansible semantics read
//! straight through in `playbook` (plays and `import_playbook`), `tasks`
//! (task lists, blocks, includes) and `roles` (finding, reading and running
//! roles), over the state in `builder`; `model` is what a build produces and
//! `budget` the bounds that keep any tree's expansion finite. The machinery
//! that only makes the build faster, and must never change its result, sits
//! in `speculate` (plays expanded in parallel) and `share` (plays, roles and
//! tasks shared between the plays of a run).

mod budget;
mod builder;
mod model;
mod playbook;
mod roles;
mod share;
mod speculate;
mod tasks;

pub use budget::{
    MAX_INCLUDE_DEPTH, MAX_PLAY_TASKS, MAX_RUN_TASKS, RUN_TASK_BYTES, run_task_bound,
};
pub use model::{
    BlockPart, BuildOptions, Entry, LayerKind, NoResolver, Play, PlayContext, Project, Role,
    RoleEntry, Section, Stats, TaskInstance, TemplateResolver, Unresolved, VarLayer, is_playbook,
    is_templated,
};

use super::config::AnsibleCfg;
use crate::discover::{DiscoveredFile, FileKind};
use crate::load::Loader;
use crate::source::Span;
use crate::yaml::Node;
use crate::{HashMap, HashSet};
use budget::{RunSpent, run_spent_diag};
use builder::{Builder, Ctx, PlayState};
use share::{SharedRoles, SharedTasks, StackProbe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
                outer_loops: Arc::new([]),
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

#[cfg(test)]
mod tests {
    use super::budget::{Budget, Spent};
    use super::roles::yaml_candidates;
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
