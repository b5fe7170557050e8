//! Hostile input: every tree in `test-repos/hostile/` holds one bad thing
//! (bad bytes, a bomb, a cycle, a wrong shape) beside a good role. For each,
//! the real binary runs `tasks`, `who-fixes` and `check` with `--format json`
//! and must: exit 0 or 1 (never a panic or a signal), report the problem as a
//! diagnostic with the right code, place and help, and still analyse the good
//! role. Bounds are checked through their diagnostics, never by timing.
//!
//! Cases that git cannot carry well (a 50 MB file, symlink loops) are built
//! at test time in a temporary copy of their tree. The fuzz crashes saved in
//! `fuzz/regressions/` are replayed here through the fuzz harness.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod harness;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn hostile(case: &str) -> PathBuf {
    repo().join("test-repos/hostile").join(case)
}

/// Copies a tree (regular files and directories only) into a new temporary directory.
fn temp_copy(case: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = hostile(case);
    for e in walkdir::WalkDir::new(&src)
        .into_iter()
        .filter_map(Result::ok)
    {
        let rel = e.path().strip_prefix(&src).expect("prefix");
        let dst = dir.path().join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).expect("mkdir");
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &dst).expect("copy");
        }
    }
    dir
}

/// The three JSON reports of one tree.
struct Reports {
    tasks: Value,
    who_fixes: Value,
    check: Value,
}

fn preflint(command: &str, tree: &Path) -> Value {
    preflint_with(command, tree, &[])
}

fn preflint_with(command: &str, tree: &Path, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args([command, "--format", "json"])
        .args(extra)
        .arg(tree)
        .output()
        .expect("run preflint");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "preflint {command} {} exited with {:?} (101 is a panic, None a signal): {stderr}",
        tree.display(),
        out.status
    );
    assert!(
        !stderr.contains("panicked"),
        "preflint {command} {} panicked: {stderr}",
        tree.display()
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "preflint {command} {}: not JSON ({e}): {}",
            tree.display(),
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn reports(tree: &Path) -> Reports {
    reports_with(tree, &[])
}

fn reports_with(tree: &Path, extra: &[&str]) -> Reports {
    let r = Reports {
        tasks: preflint_with("tasks", tree, extra),
        who_fixes: preflint_with("who-fixes", tree, extra),
        check: preflint_with("check", tree, extra),
    };
    r.assert_good_role();
    r
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key]
        .as_array()
        .map_or_else(|| panic!("no `{key}` array in {v}"), Vec::as_slice)
}

/// Every task of every play of every entry in a `tasks` report.
fn tasks(r: &Value) -> Vec<&Value> {
    array(r, "entries")
        .iter()
        .flat_map(|e| array(e, "plays"))
        .flat_map(|p| array(p, "tasks"))
        .collect()
}

fn task_names(r: &Value) -> Vec<String> {
    tasks(r)
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// Every piece of who-fixes evidence as (concern, part, file, line).
fn evidence(r: &Value) -> Vec<(String, String, String, u64)> {
    let mut out = Vec::new();
    for v in array(r, "verdicts") {
        for p in array(v, "parts") {
            for e in array(p, "evidence") {
                out.push((
                    v["id"].as_str().unwrap_or_default().to_string(),
                    p["name"].as_str().unwrap_or_default().to_string(),
                    e["file"].as_str().unwrap_or_default().to_string(),
                    e["line"].as_u64().unwrap_or_default(),
                ));
            }
        }
    }
    out
}

/// Every condition of every piece of evidence, as JSON text.
fn conditions(r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for v in array(r, "verdicts") {
        for p in array(v, "parts") {
            for e in array(p, "evidence") {
                for c in array(e, "conditions") {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

fn unresolved(r: &Value) -> Vec<String> {
    array(r, "unresolved")
        .iter()
        .filter_map(|u| u["expr"].as_str().map(str::to_string))
        .collect()
}

impl Reports {
    /// The good role's task is listed, is evidence for its concern, and its
    /// finding is reported: the bad file did not stop the analysis.
    fn assert_good_role(&self) {
        let good = tasks(&self.tasks).into_iter().any(|t| {
            t["name"] == "Load br_netfilter"
                && t["file"] == "roles/good/tasks/main.yml"
                && t["roles"] == serde_json::json!(["good"])
        });
        assert!(good, "the good role's task is missing: {}", self.tasks);
        let ev = evidence(&self.who_fixes);
        assert!(
            ev.iter().any(|(c, p, f, l)| c == "br_netfilter"
                && p == "runtime"
                && f == "roles/good/tasks/main.yml"
                && *l == 2),
            "who-fixes lost the good role: {ev:?}"
        );
    }

    /// `code` reported at file:line:column with a help text, by all three
    /// commands (`check` reports load problems as findings).
    fn assert_diag(&self, code: &str, file: &str, line: u64, column: u64) -> String {
        let mut message = String::new();
        for (what, list) in [
            ("tasks", array(&self.tasks, "diagnostics")),
            ("who-fixes", array(&self.who_fixes, "diagnostics")),
        ] {
            let found = list.iter().find(|d| {
                d["code"] == code && d["file"] == file && d["line"] == line && d["column"] == column
            });
            let Some(d) = found else {
                panic!("{what}: no {code} at {file}:{line}:{column} in {list:#?}");
            };
            assert!(
                d["help"].as_str().is_some_and(|h| !h.is_empty()),
                "{what}: {code} has no help: {d}"
            );
            message = d["message"].as_str().unwrap_or_default().to_string();
        }
        let findings = array(&self.check, "findings");
        assert!(
            findings.iter().any(|f| f["rule"] == code
                && f["file"] == file
                && f["line"] == line
                && f["column"] == column
                && f["help"].as_str().is_some_and(|h| !h.is_empty())),
            "check: no {code} at {file}:{line}:{column} in {findings:#?}"
        );
        message
    }

    /// The diagnostics of the `tasks` report as (code, file, line, column).
    fn diags(&self) -> Vec<(String, String, u64, u64)> {
        array(&self.tasks, "diagnostics")
            .iter()
            .map(|d| {
                (
                    d["code"].as_str().unwrap_or_default().to_string(),
                    d["file"].as_str().unwrap_or_default().to_string(),
                    d["line"].as_u64().unwrap_or_default(),
                    d["column"].as_u64().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn check_rules_at(&self, file: &str) -> Vec<String> {
        array(&self.check, "findings")
            .iter()
            .filter(|f| f["file"] == file)
            .filter_map(|f| f["rule"].as_str().map(str::to_string))
            .collect()
    }
}

#[test]
fn invalid_utf8_is_reported_at_the_first_bad_byte() {
    let r = reports(&hostile("invalid-utf8"));
    // Line 3 is `  # commentaire caf\xe9 ...`: the bad byte is the 20th character.
    r.assert_diag("load-not-utf8", "roles/latin1/tasks/main.yml", 3, 20);
}

#[test]
fn binary_yaml_file_is_skipped() {
    let r = reports(&hostile("binary-yml"));
    r.assert_diag("load-binary-file", "roles/blob/tasks/main.yml", 1, 1);
}

#[test]
fn empty_files_are_no_errors() {
    let r = reports(&hostile("empty-files"));
    // An empty tasks, defaults, meta or vars file is valid Ansible; only the
    // empty imported playbook is worth a word.
    let msg = r.assert_diag("ansible-bad-shape", "empty-playbook.yml", 1, 1);
    assert!(msg.contains("empty playbook"), "{msg}");
    assert_eq!(r.diags().len(), 1, "{:?}", r.diags());
}

#[test]
fn fifty_megabyte_file_is_refused_before_reading() {
    let dir = temp_copy("huge-file");
    let path = dir.path().join("roles/huge/tasks/main.yml");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let task =
        "- name: Set a sysctl\n  ansible.posix.sysctl:\n    name: vm.swappiness\n    value: '1'\n";
    let mut text = String::from("---\n");
    while text.len() < 50 * 1024 * 1024 {
        text.push_str(task);
    }
    std::fs::write(&path, &text).expect("write 50 MB");
    let r = reports(dir.path());
    let msg = r.assert_diag("load-file-too-large", "roles/huge/tasks/main.yml", 1, 1);
    assert!(msg.contains(&text.len().to_string()), "{msg}");
}

#[test]
fn bytes_read_per_run_are_bounded() {
    // Five files of 7.5 MiB each (comments: quick to parse): the first four
    // fit in 32 MiB (`--max-total-mib 32`; the default, 128, is the same code
    // path with more bytes), the fifth is refused, on every run.
    let dir = temp_copy("huge-file");
    let defaults = dir.path().join("roles/huge/defaults/main");
    std::fs::create_dir_all(&defaults).expect("mkdir");
    let line = format!("# {}\n", "x".repeat(77));
    let text = line.repeat(7_500 * 1024 * 1024 / 80 / 1000);
    for i in 1..=5 {
        std::fs::write(defaults.join(format!("{i:02}.yml")), &text).expect("write");
    }
    let r = reports_with(dir.path(), &["--max-total-mib", "32"]);
    let msg = r.assert_diag(
        "load-file-too-large",
        "roles/huge/defaults/main/05.yml",
        1,
        1,
    );
    assert!(msg.contains("total"), "{msg}");
    assert_eq!(r.diags().len(), 1, "{:?}", r.diags());
}

#[test]
fn deep_nesting_is_bounded_in_flow_and_block_style() {
    let r = reports(&hostile("deep-nesting"));
    // 10,000 `[`: the parser stops at 255 flow levels (column 9 + 255).
    r.assert_diag("yaml-limit-exceeded", "deep-flow.yml", 2, 264);
    // 10,000 `- ` on one line: level 513 starts at column 2 * 512 + 1.
    let msg = r.assert_diag(
        "yaml-limit-exceeded",
        "roles/deepseq/tasks/main.yml",
        2,
        1025,
    );
    assert!(msg.contains("512"), "{msg}");
    // 600 block mappings, one space deeper each: level 513 is line 514.
    r.assert_diag(
        "yaml-limit-exceeded",
        "roles/deepmap/defaults/main.yml",
        514,
        513,
    );
}

#[test]
fn alias_bomb_is_bounded() {
    let r = reports(&hostile("alias-bomb"));
    // lol5 (line 7) is the first level whose expansion passes 200,000 nodes.
    let msg = r.assert_diag("yaml-limit-exceeded", "roles/bomb/defaults/main.yml", 7, 12);
    assert!(msg.contains("200000"), "{msg}");
    assert!(task_names(&r.tasks).contains(&"Use the bomb".to_string()));
}

#[test]
fn aliases_cannot_nest_without_bound() {
    // Each anchor wraps the previous alias in 250 levels of `[`: within the
    // alias budget, but 9,000 levels deep once expanded.
    let r = reports(&hostile("alias-nesting"));
    let msg = r.assert_diag(
        "yaml-limit-exceeded",
        "roles/nest/defaults/main.yml",
        4,
        259,
    );
    assert!(msg.contains("512"), "{msg}");
}

#[test]
fn exponential_templates_stay_unknown() {
    let r = reports(&hostile("jinja-bomb"));
    // grow40 would be 2^41 bytes, `nested` 10^10 iterations: neither is
    // rendered, so their includes stay unresolved and their conditions unknown.
    let unres = unresolved(&r.tasks);
    for expr in ["{{ grow40 }}.yml", "{{ nested }}.yml"] {
        assert!(unres.contains(&expr.to_string()), "{unres:?}");
    }
    let conds = conditions(&r.who_fixes);
    for var in ["grow40", "repeat", "wide", "nested"] {
        assert!(
            conds.iter().any(|c| c.contains("\"result\":\"unknown\"")
                && c.contains(&format!("{var} (not evaluated statically)"))),
            "{var}: {conds:#?}"
        );
    }
}

#[test]
fn variable_cycles_stay_unknown() {
    let r = reports(&hostile("var-cycle"));
    let unres = unresolved(&r.tasks);
    for expr in ["{{ myself }}", "{{ cycle_a }}"] {
        assert!(unres.contains(&expr.to_string()), "{unres:?}");
    }
    let conds = conditions(&r.who_fixes);
    for var in ["myself", "cycle_a"] {
        assert!(
            conds.iter().any(|c| c.contains("\"result\":\"unknown\"")
                && c.contains(&format!("{var} (refers to itself)"))),
            "{var}: {conds:#?}"
        );
    }
}

#[test]
fn task_include_cycles_are_reported() {
    let r = reports(&hostile("include-cycle-tasks"));
    // a -> b -> c -> a, closed by the import on line 6 of c.yml.
    let msg = r.assert_diag("include-cycle", "tasks/c.yml", 6, 33);
    assert!(msg.contains("tasks/a.yml"), "{msg}");
    r.assert_diag("include-cycle", "tasks/self.yml", 6, 33);
    let names = task_names(&r.tasks);
    for n in ["A", "B", "C", "Self"] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
}

#[test]
fn role_dependency_cycles_are_reported() {
    let r = reports(&hostile("include-cycle-roles"));
    let msg = r.assert_diag("include-cycle", "roles/ring_c/meta/main.yml", 3, 11);
    assert!(msg.contains("ring_a"), "{msg}");
    let names = task_names(&r.tasks);
    for n in ["In ring_a", "In ring_b", "In ring_c"] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
}

#[test]
fn playbook_import_cycles_are_reported() {
    let r = reports(&hostile("include-cycle-playbooks"));
    r.assert_diag("include-cycle", "playbooks/two.yml", 8, 20);
    assert!(task_names(&r.tasks).contains(&"In two".to_string()));
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_dangling_links_are_skipped() {
    let dir = temp_copy("symlinks");
    let root = dir.path();
    std::os::unix::fs::symlink("missing.yml", root.join("roles/linked/tasks/dangling.yml"))
        .expect("dangling link");
    std::os::unix::fs::symlink("..", root.join("roles/linked/loop")).expect("loop link");
    std::os::unix::fs::symlink(".", root.join("roles/good/tasks/self")).expect("self link");
    // Back to the root, from below and at the top: each entry of the root is
    // walked on its own, so the root is an ancestor only the tree knows.
    std::os::unix::fs::symlink("../../..", root.join("roles/good/tasks/top")).expect("root link");
    std::os::unix::fs::symlink(".", root.join("here")).expect("root self link");
    // ... and to a directory at the root, whose entries are walked apart too.
    std::os::unix::fs::symlink("../..", root.join("roles/good/tasks/roles")).expect("roles link");
    // Out of the tree: walking /usr would read thousands of files.
    std::os::unix::fs::symlink("/usr", root.join("vendor")).expect("outside link");
    std::os::unix::fs::symlink("/dev/zero", root.join("roles/linked/tasks/zero.yml"))
        .expect("device link");
    let r = reports(root);
    let msg = r.assert_diag("load-io-error", "roles/linked/loop", 1, 1);
    assert!(msg.contains("loop"), "{msg}");
    let msg = r.assert_diag("load-io-error", "roles/good/tasks/self", 1, 1);
    assert!(msg.contains("loop"), "{msg}");
    for link in ["roles/good/tasks/top", "here", "roles/good/tasks/roles"] {
        let msg = r.assert_diag("load-io-error", link, 1, 1);
        assert!(msg.contains("loop"), "{link}: {msg}");
    }
    let msg = r.assert_diag("load-io-error", "roles/linked/tasks/dangling.yml", 1, 1);
    assert!(msg.contains("dangling"), "{msg}");
    r.assert_diag("include-not-found", "roles/linked/tasks/main.yml", 3, 34);
    let msg = r.assert_diag("load-io-error", "vendor", 1, 1);
    assert!(msg.contains("outside the tree"), "{msg}");
    let files = r.tasks["stats"]["files"].as_u64().unwrap_or(u64::MAX);
    assert!(
        files < 10,
        "the walk followed the link out of the tree: {files} files"
    );
    let msg = r.assert_diag("load-io-error", "roles/linked/tasks/zero.yml", 1, 1);
    assert!(msg.contains("outside the tree"), "{msg}");
}

#[test]
fn role_directory_that_is_a_file() {
    let r = reports(&hostile("role-is-file"));
    let msg = r.assert_diag("role-not-found", "site.yml", 7, 7);
    assert!(msg.contains("is a file"), "{msg}");
}

#[test]
fn tasks_file_that_is_a_mapping() {
    let r = reports(&hostile("tasks-mapping"));
    r.assert_diag("ansible-bad-shape", "roles/mapping/tasks/main.yml", 2, 1);
}

#[test]
fn tabs_in_indentation_point_at_the_tab() {
    let r = reports(&hostile("tabs"));
    // PyYAML: "found a tab character that violates indentation", line 3, column 1.
    r.assert_diag("yaml-syntax-error", "roles/tabbed/tasks/main.yml", 3, 1);
    // A tab inside a value is fine.
    assert!(
        !r.diags()
            .iter()
            .any(|d| d.1 == "roles/tabbed/defaults/main.yml"),
        "{:?}",
        r.diags()
    );
}

#[test]
fn duplicate_keys_are_reported_and_the_last_wins() {
    let r = reports(&hostile("duplicate-keys"));
    let msg = r.assert_diag("yaml-duplicate-key", "roles/dup/defaults/main.yml", 4, 1);
    assert!(msg.contains("which"), "{msg}");
    r.assert_diag("yaml-duplicate-key", "roles/dup/tasks/main.yml", 3, 3);
    // `which: right` comes last, so the include reaches right.yml; the task's
    // second `name` is its name.
    let names = task_names(&r.tasks);
    assert!(
        names.contains(&"Included from right.yml".to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"Included from wrong.yml".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"Last name wins".to_string()), "{names:?}");
    assert!(!names.contains(&"First name".to_string()), "{names:?}");
    let ev = evidence(&r.who_fixes);
    assert!(
        ev.iter()
            .any(|(c, _, f, _)| c == "swap" && f == "roles/dup/tasks/right.yml"),
        "{ev:?}"
    );
}

#[test]
fn template_that_is_not_utf8_is_still_read() {
    let r = reports(&hostile("template-not-utf8"));
    // Ansible's template module reads it too (surrogate escapes); its
    // ASCII lines persist both modules.
    let ev = evidence(&r.who_fixes);
    for concern in ["br_netfilter", "overlay"] {
        assert!(
            ev.iter().any(|(c, p, f, _)| c == concern
                && p == "persistence"
                && f == "roles/tmpl/tasks/main.yml"),
            "{concern}: {ev:?}"
        );
    }
    let rules = r.check_rules_at("roles/good/tasks/main.yml");
    assert!(
        !rules.contains(&"module-not-persisted".to_string()),
        "{rules:?}"
    );
}

#[test]
fn inventory_bombs_are_bounded() {
    let tree = hostile("inventory-bombs");
    let inv = tree.join("inventory/hosts.ini");
    let r = reports_with(&tree, &["-i", inv.to_str().expect("utf-8 path")]);
    // 10,000 x 10,000 hosts: the first 100,000 are kept.
    let msg = r.assert_diag("ansible-bad-shape", "inventory/hosts.ini", 2, 1);
    assert!(msg.contains("100000 hosts"), "{msg}");
    let msg = r.assert_diag("ansible-bad-shape", "inventory/hosts.ini", 4, 1);
    assert!(msg.contains("unclosed quote"), "{msg}");
    r.assert_diag("ansible-bad-shape", "inventory/hosts.ini", 5, 1);
    r.assert_diag("load-not-utf8", "inventory/group_vars/all.yml", 2, 6);
    // The range at the edge of i64 and the deep literal are no problem.
    assert_eq!(r.diags().len(), 4, "{:?}", r.diags());
}

/// Every other tree also gets `module-not-persisted` on the good role's
/// `modprobe`, which shows `check` ran its rules past the bad file.
#[test]
fn check_rules_run_past_every_bad_file() {
    for case in [
        "invalid-utf8",
        "binary-yml",
        "empty-files",
        "deep-nesting",
        "alias-bomb",
        "alias-nesting",
        "jinja-bomb",
        "var-cycle",
        "include-cycle-tasks",
        "include-cycle-roles",
        "include-cycle-playbooks",
        "role-is-file",
        "tasks-mapping",
        "tabs",
        "duplicate-keys",
        "inventory-bombs",
    ] {
        let check = preflint("check", &hostile(case));
        let found = array(&check, "findings").iter().any(|f| {
            f["rule"] == "module-not-persisted" && f["file"] == "roles/good/tasks/main.yml"
        });
        assert!(found, "{case}: {check}");
    }
}

/// Imports that fan out without a cycle (each file imports the next twice,
/// 24 levels) reach 2^24 task instances; Ansible would list them all, a
/// static reader must stop at a bound and say so.
#[test]
fn import_fan_out_is_bounded() {
    let r = reports(&hostile("include-fanout"));
    assert!(
        r.diags().iter().any(|d| d.1.starts_with("tasks/l")),
        "{:?}",
        r.diags()
    );
}

/// The same with meta dependencies: each role depends twice on the next
/// with different parameters, so both entries run.
#[test]
fn role_dependency_fan_out_is_bounded() {
    let r = reports(&hostile("role-fanout"));
    assert!(
        r.diags().iter().any(|d| d.1.starts_with("roles/fan")),
        "{:?}",
        r.diags()
    );
}

/// `case` copied with its entry playbook replaced by forty plays that each
/// run the good role then `fan_out` (a task list or a role list).
fn many_plays(case: &str, fan_out: &str) -> tempfile::TempDir {
    let dir = temp_copy(case);
    let mut site = String::from("---\n");
    for i in 0..40 {
        site.push_str(&format!(
            "- name: Play {i}\n  hosts: all\n  gather_facts: false\n{fan_out}"
        ));
    }
    std::fs::write(dir.path().join("site.yml"), site).expect("write");
    dir
}

const IMPORT_FAN_OUT: &str = "  roles:\n    - good\n  tasks:\n    - name: Fan out\n      ansible.builtin.import_tasks: tasks/l0.yml\n";
const ROLE_FAN_OUT: &str = "  roles:\n    - good\n    - fan0\n";

/// The per-play bound alone does not bound a run: forty plays that each
/// import the fan-out would build 40 x 50,000 task instances. The run-wide
/// bound (100,000) lets the first two plays fill it and leaves the other 38
/// out, saying so at the first one left out.
#[test]
fn many_plays_fanning_out_are_bounded_in_total() {
    let dir = many_plays("include-fanout", IMPORT_FAN_OUT);
    let r = reports(dir.path());
    let bounded: Vec<_> = r
        .diags()
        .into_iter()
        .filter(|d| d.0 == "yaml-limit-exceeded")
        .collect();
    assert!(
        bounded.iter().any(|d| d.1.starts_with("tasks/l")),
        "the per-play bound cuts the first plays: {bounded:?}"
    );
    // Play 2 (`- name: Play 2` on line 18) is the first left out.
    let message = r.assert_diag("yaml-limit-exceeded", "site.yml", 18, 3);
    assert!(
        message.contains("the 37 plays after it are not analysed"),
        "{message}"
    );
    let per_play: Vec<usize> = array(&r.tasks, "entries")
        .iter()
        .flat_map(|e| array(e, "plays"))
        .map(|p| array(p, "tasks").len())
        .collect();
    assert_eq!(per_play, [50_000, 50_000], "two plays fill the run's bound");
}

/// The same with role dependencies: the run-wide bound on role runs.
#[test]
fn many_plays_running_fanning_roles_are_bounded_in_total() {
    let dir = many_plays("role-fanout", ROLE_FAN_OUT);
    let r = preflint("tasks", dir.path());
    let diags = array(&r, "diagnostics");
    let left_out = diags
        .iter()
        .find(|d| d["file"] == "site.yml" && d["code"] == "yaml-limit-exceeded")
        .unwrap_or_else(|| panic!("no run-wide bound reported: {diags:#?}"));
    assert_eq!(left_out["line"], 14, "{left_out}");
    assert!(
        left_out["help"]
            .as_str()
            .is_some_and(|h| h.contains("--playbook")),
        "{left_out}"
    );
    let plays: usize = array(&r, "entries")
        .iter()
        .map(|e| array(e, "plays").len())
        .sum();
    assert_eq!(plays, 2, "only the first two plays are expanded");
}

/// Without a playbook every role is run as a play of its own: the same
/// run-wide bound, in the sorted order of the roles.
#[test]
fn roles_without_a_playbook_are_bounded_in_total() {
    let dir = temp_copy("role-fanout");
    std::fs::remove_file(dir.path().join("site.yml")).expect("rm");
    let r = preflint("tasks", dir.path());
    let diags = array(&r, "diagnostics");
    let left_out = diags
        .iter()
        .find(|d| d["code"] == "yaml-limit-exceeded" && d["file"] == "roles/fan10")
        .unwrap_or_else(|| panic!("no run-wide bound reported: {diags:#?}"));
    assert!(
        left_out["message"]
            .as_str()
            .is_some_and(|m| m.contains("the 23 roles after it")),
        "{left_out}"
    );
    let entries: Vec<&str> = array(&r, "entries")
        .iter()
        .filter_map(|e| e["playbook"].as_str())
        .collect();
    assert_eq!(entries, ["role fan0", "role fan1"]);
}

/// Plays are expanded in parallel, yet which are cut by the run-wide bound
/// never depends on thread timing: one thread and two give the same report.
#[test]
fn run_wide_bound_is_the_same_for_any_thread_count() {
    for (case, fan_out) in [
        ("include-fanout", IMPORT_FAN_OUT),
        ("role-fanout", ROLE_FAN_OUT),
    ] {
        let dir = many_plays(case, fan_out);
        let run = |threads: &str| {
            let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
                .args(["tasks", "--format", "json"])
                .arg(dir.path())
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .expect("run preflint");
            assert_eq!(out.status.code(), Some(1), "{case}: {out:?}");
            out.stdout
        };
        let one = run("1");
        let two = run("2");
        assert!(
            one == two,
            "{case}: the report differs between 1 and 2 threads"
        );
    }
}

/// A tasks file just under the size bound, full of sysctl tasks writing the
/// same file: within every bound, so it must be analysed in full.
#[test]
fn tasks_file_just_under_the_size_bound_is_analysed() {
    let dir = temp_copy("huge-file");
    let path = dir.path().join("roles/huge/tasks/main.yml");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut text = String::from("---\n");
    for i in 0.. {
        let task = format!(
            "- name: Forward on eth{i}\n  ansible.posix.sysctl:\n    name: net.ipv4.conf.eth{i}.forwarding\n    value: '1'\n    sysctl_file: /etc/sysctl.d/99-k8s.conf\n  when: enable_{i} | default(true)\n"
        );
        if text.len() + task.len() > 8 * 1024 * 1024 {
            break;
        }
        text.push_str(&task);
    }
    std::fs::write(&path, &text).expect("write");
    let r = reports(dir.path());
    assert!(r.diags().is_empty(), "{:?}", r.diags());
}

/// Each file of the fuzz corpus that once crashed, replayed in-process
/// through the same harness the fuzzer uses.
#[test]
fn fuzz_regressions_do_not_panic() {
    let dir = repo().join("fuzz/regressions");
    let Ok(targets) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut replayed = 0;
    for t in targets.filter_map(Result::ok) {
        let name = t.file_name().to_string_lossy().into_owned();
        let target = harness::Target::from_name(&name)
            .unwrap_or_else(|| panic!("fuzz/regressions/{name}: not a fuzz target"));
        let h = harness::Harness::new(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(t.path())
            .expect("read regressions")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).expect("read regression");
            h.run(&data);
            replayed += 1;
        }
    }
    println!("replayed {replayed} fuzz regressions");
}

/// Templates and role files a task renders or copies are read with the same
/// size and binary bounds as Ansible files: a template over the size bound
/// (or one that is binary) is not read, so what it persists is unknown, and
/// the rest of the tree is still analysed.
#[test]
fn templates_over_the_size_bound_are_not_read() {
    let dir = temp_copy("template-not-utf8");
    let tmpl = dir.path().join("roles/tmpl/templates/modules.conf.j2");
    let line = "br_netfilter\noverlay\n";
    let text = line.repeat(9 * 1024 * 1024 / line.len() + 1);
    std::fs::write(&tmpl, text).expect("write");
    let r = reports(dir.path());
    let ev = evidence(&r.who_fixes);
    assert!(
        !ev.iter()
            .any(|(c, p, f, _)| c == "overlay" && p == "persistence" && f.contains("tmpl")),
        "{ev:?}"
    );
    // The good role is still analysed.
    assert!(
        ev.iter()
            .any(|(c, _, f, _)| c == "br_netfilter" && f == "roles/good/tasks/main.yml"),
        "{ev:?}"
    );
    // Binary content is not read either.
    std::fs::write(&tmpl, b"br_netfilter\n\0overlay\n").expect("write");
    let ev = evidence(&reports(dir.path()).who_fixes);
    assert!(
        !ev.iter()
            .any(|(c, p, f, _)| c == "overlay" && p == "persistence" && f.contains("tmpl")),
        "{ev:?}"
    );
}
