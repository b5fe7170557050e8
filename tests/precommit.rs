//! The hooks of `.pre-commit-hooks.yaml`, run by the real pre-commit on a
//! throw-away repository: a commit whose Ansible tree sets a sysctl live only
//! is refused, the same commit with the value persisted goes through.
//!
//! The hook repository is a temporary git clone of this working tree (a fresh
//! `git init` and commit in a temp dir; this repository's own git is never
//! touched), referenced by path and commit as a user's
//! `.pre-commit-config.yaml` would reference the published repository.
//!
//! Needs pre-commit in the venv of `PREFLINT_PYTHON` (scripts/test.sh installs
//! it) and git; fails when either is missing unless `PREFLINT_SKIP_ORACLE=1`.
//! The `language: rust` hook is built by pre-commit with `cargo install`; its
//! build directory is kept under target/ so only the first run compiles the
//! dependencies.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The pre-commit release scripts/test.sh installs.
const PRE_COMMIT: &str = "pre-commit==4.7.0";

use common::repo;

fn skipping() -> bool {
    std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1")
}

/// A Python whose environment has pre-commit.
fn python() -> Option<PathBuf> {
    common::python_with("pre_commit")
}

/// The Python with pre-commit, or `None` when the test is skipped.
fn require_tools() -> Option<PathBuf> {
    let git = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let py = python();
    if git && py.is_some() {
        return py;
    }
    assert!(
        skipping(),
        "the pre-commit hook tests need git and pre-commit: run scripts/test.sh (it installs \
         {PRE_COMMIT} into its venv), or `\"$PREFLINT_PYTHON\" -m pip install '{PRE_COMMIT}'`, \
         or set PREFLINT_SKIP_ORACLE=1 to skip (git found: {git}, pre-commit found: {})",
        py.is_some()
    );
    eprintln!("pre-commit hook test skipped (PREFLINT_SKIP_ORACLE=1)");
    None
}

/// Runs a command; panics with its output when it cannot start.
fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A sandbox: its own git configuration and pre-commit cache.
struct Sandbox {
    dir: tempfile::TempDir,
    python: PathBuf,
}

impl Sandbox {
    fn new(python: PathBuf) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("gitconfig"),
            "[user]\n\tname = preflint test\n\temail = test@preflint.invalid\n\
             [init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n",
        )
        .expect("write gitconfig");
        Sandbox { dir, python }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A command with this sandbox's environment, run in `cwd`.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(cwd)
            .env("GIT_CONFIG_GLOBAL", self.path("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("PRE_COMMIT_HOME", self.path("pre-commit-cache"))
            .env("PRE_COMMIT_COLOR", "never")
            .env("NO_COLOR", "1")
            // pre-commit builds the rust hook with `cargo install --path .`,
            // which honours CARGO_TARGET_DIR: keep that build between runs.
            .env(
                "CARGO_TARGET_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("precommit-hook-build"),
            );
        c
    }

    fn git(&self, cwd: &Path, args: &[&str]) -> Output {
        run(self.command("git", cwd).args(args))
    }

    fn git_ok(&self, cwd: &Path, args: &[&str]) {
        let o = self.git(cwd, args);
        assert!(o.status.success(), "git {args:?} failed:\n{}", text(&o));
    }

    /// This working tree (without target/ and .git), committed in a new
    /// repository; returns the repository and the commit.
    fn hook_repository(&self) -> (PathBuf, String) {
        let dest = self.path("preflint-hook-repo");
        copy_tree(&repo(), &dest);
        assert!(
            dest.join(".pre-commit-hooks.yaml").is_file(),
            "the working tree has no .pre-commit-hooks.yaml"
        );
        self.git_ok(&dest, &["init", "-q"]);
        self.git_ok(&dest, &["add", "-A"]);
        self.git_ok(&dest, &["commit", "-q", "-m", "preflint working tree"]);
        let o = self.git(&dest, &["rev-parse", "HEAD"]);
        assert!(o.status.success(), "rev-parse: {}", text(&o));
        let sha = String::from_utf8_lossy(&o.stdout).trim().to_string();
        (dest, sha)
    }
}

/// Copies `src` to `dst`, leaving out the top-level `target` and `.git`.
fn copy_tree(src: &Path, dst: &Path) {
    let walk = walkdir::WalkDir::new(src)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.depth() == 1 && (e.file_name() == "target" || e.file_name() == ".git"))
        });
    for entry in walk {
        let e = entry.expect("walk the working tree");
        let rel = e.path().strip_prefix(src).expect("under the root");
        let to = dst.join(rel);
        let ft = e.file_type();
        if ft.is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
        } else if ft.is_symlink() {
            let link = std::fs::read_link(e.path()).expect("readlink");
            std::os::unix::fs::symlink(link, &to).expect("symlink");
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

const SITE: &str =
    "---\n- name: Prepare nodes\n  hosts: all\n  become: true\n  roles:\n    - net\n";

/// `sysctl-not-persisted` (a warning, the default fail level).
const LIVE_ONLY: &str = "---\n- name: Forward packets now\n  \
    ansible.builtin.command: sysctl -w net.ipv4.ip_forward=1\n  changed_when: false\n";

/// The same value, persisted: only info findings remain.
const PERSISTED: &str = "---\n- name: Forward packets, now and after reboots\n  \
    ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: '1'\n    \
    sysctl_file: /etc/sysctl.d/99-kubernetes.conf\n    reload: true\n";

/// A user's repository using `hook_id`; commits a hazard (refused), then the
/// fix (accepted). Returns the transcript of both commits.
fn refuses_hazard_then_accepts_fix(hook_id: &str, path_prefix: Option<&Path>) -> String {
    let Some(python) = require_tools() else {
        return String::new();
    };
    let sb = Sandbox::new(python);
    let (hook_repo, sha) = sb.hook_repository();
    let project = sb.path("ansible-nodes");
    let tasks = project.join("roles/net/tasks");
    std::fs::create_dir_all(&tasks).expect("mkdir");
    std::fs::write(project.join("site.yml"), SITE).expect("write");
    std::fs::write(
        project.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n  - repo: {}\n    rev: {sha}\n    hooks:\n      - id: {hook_id}\n",
            hook_repo.display()
        ),
    )
    .expect("write");
    sb.git_ok(&project, &["init", "-q"]);

    let with_path = |mut c: Command| {
        if let Some(dir) = path_prefix {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![dir.to_path_buf()];
            dirs.extend(std::env::split_paths(&path));
            c.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        }
        c
    };

    // Installs the git hook and builds the hook's environment up front
    // (`cargo install` for the rust hook), so a build failure says so.
    let mut install = with_path(sb.command(&sb.python, &project));
    install.args(["-m", "pre_commit", "install", "--install-hooks"]);
    let o = run(&mut install);
    let log =
        std::fs::read_to_string(sb.path("pre-commit-cache/pre-commit.log")).unwrap_or_default();
    assert!(
        o.status.success(),
        "pre-commit install --install-hooks failed:\n{}\n{log}",
        text(&o)
    );

    let commit = |message: &str| {
        sb.git_ok(&project, &["add", "-A"]);
        let mut c = with_path(sb.command("git", &project));
        c.args(["commit", "-m", message]);
        run(&mut c)
    };
    let mut transcript = String::new();

    std::fs::write(tasks.join("main.yml"), LIVE_ONLY).expect("write");
    let refused = commit("Forward packets");
    let out = text(&refused);
    let _ = write!(
        transcript,
        "$ git commit -m 'Forward packets'   # exit {:?}\n{out}\n",
        refused.status.code()
    );
    assert!(
        !refused.status.success(),
        "the commit with a live-only sysctl went through:\n{out}"
    );
    assert!(
        out.contains("sysctl-not-persisted") && out.contains("Failed"),
        "the hook did not report sysctl-not-persisted:\n{out}"
    );
    assert!(
        out.contains(&format!("- hook id: {hook_id}")),
        "not the {hook_id} hook:\n{out}"
    );
    assert!(
        !sb.git(&project, &["rev-parse", "--verify", "-q", "HEAD"])
            .status
            .success(),
        "a commit was made although the hook failed"
    );

    std::fs::write(tasks.join("main.yml"), PERSISTED).expect("write");
    let accepted = commit("Forward packets, persisted");
    let out = text(&accepted);
    let _ = write!(
        transcript,
        "$ git commit -m 'Forward packets, persisted'   # exit {:?}\n{out}",
        accepted.status.code()
    );
    assert!(
        accepted.status.success(),
        "the commit with the sysctl persisted was refused:\n{out}"
    );
    assert!(out.contains("Passed"), "the hook did not pass:\n{out}");

    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("precommit-{hook_id}.txt"));
    let _ = std::fs::write(&file, &transcript);
    eprintln!("{transcript}\n(transcript in {})", file.display());
    transcript
}

/// The documented hook: pre-commit builds preflint from the hook repository
/// with `cargo install` (the first run takes minutes).
#[test]
fn rust_hook_refuses_live_only_sysctl_and_accepts_persisted() {
    refuses_hazard_then_accepts_fix("preflint", None);
}

/// The `language: system` hook, with the binary under test on PATH.
#[test]
fn system_hook_refuses_live_only_sysctl_and_accepts_persisted() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_preflint"));
    let dir = bin.parent().expect("binary directory").to_path_buf();
    refuses_hazard_then_accepts_fix("preflint-system", Some(&dir));
}

#[test]
fn hooks_file_declares_both_hooks() {
    let text = std::fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).expect("read");
    let hooks: Vec<serde_yaml::Value> = serde_yaml::from_str(&text).expect("a YAML list");
    let get = |id: &str| {
        hooks
            .iter()
            .find(|h| h["id"].as_str() == Some(id))
            .unwrap_or_else(|| panic!("no hook `{id}`"))
    };
    for (id, language) in [("preflint", "rust"), ("preflint-system", "system")] {
        let h = get(id);
        assert_eq!(h["language"].as_str(), Some(language), "{id}");
        assert_eq!(h["entry"].as_str(), Some("preflint check"), "{id}");
        // preflint reads the whole tree: file names would be taken as PATHs.
        assert_eq!(h["pass_filenames"].as_bool(), Some(false), "{id}");
        assert_eq!(h["always_run"].as_bool(), Some(true), "{id}");
    }
}
