//! preflint never writes into the tree it reads: every command, in every
//! output format, run on a copy of a fixture tree (and from inside it),
//! leaves every file's content, mode and symlink target as it was, and adds
//! no file.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies `src` into `dst`, keeping symlinks as symlinks.
fn copy_tree(src: &Path, dst: &Path) {
    for e in walkdir::WalkDir::new(src)
        .into_iter()
        .filter_map(Result::ok)
    {
        let rel = e.path().strip_prefix(src).expect("prefix");
        let to = dst.join(rel);
        let ft = e.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(e.path()).expect("readlink");
            #[cfg(unix)]
            std::os::unix::fs::symlink(&target, &to).expect("symlink");
        } else if ft.is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// Every entry under `root` (not following links): path -> hash of
/// (kind, mode, content or link target).
fn snapshot(root: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        let meta = std::fs::symlink_metadata(e.path()).expect("metadata");
        let mut h = DefaultHasher::new();
        #[cfg(unix)]
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()).hash(&mut h);
        if meta.file_type().is_symlink() {
            "link".hash(&mut h);
            std::fs::read_link(e.path()).expect("readlink").hash(&mut h);
        } else if meta.is_dir() {
            "dir".hash(&mut h);
        } else {
            "file".hash(&mut h);
            std::fs::read(e.path()).expect("read").hash(&mut h);
        }
        let rel = e
            .path()
            .strip_prefix(root)
            .expect("prefix")
            .to_string_lossy()
            .into_owned();
        out.insert(rel, h.finish());
    }
    out
}

fn preflint(args: &[&str], cwd: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(args)
        .current_dir(cwd)
        .env_remove("PREFLINT_CONFIG")
        .output()
        .expect("run preflint");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "preflint {args:?} exited with {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The values `--format` accepts for a command, from its `-h`.
fn formats(command: &str, cwd: &Path) -> Vec<String> {
    let help = preflint(&[command, "-h"], cwd);
    // clap wraps long lines: join them again.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = help
        .find("--format")
        .unwrap_or_else(|| panic!("{command} has no --format: {help}"));
    let rest = &help[at..];
    let start = rest.find("[possible values: ").expect("possible values") + 18;
    let end = rest[start..].find(']').expect("closing bracket") + start;
    rest[start..end]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Every command line to run on a tree at `path` (`.` from inside it).
fn command_lines(path: &str, cwd: &Path) -> Vec<Vec<String>> {
    let mut lines = Vec::new();
    for command in ["tasks", "who-fixes", "check", "sysctl"] {
        for f in formats(command, cwd) {
            lines.push(vec![
                command.to_string(),
                "--format".into(),
                f,
                path.to_string(),
            ]);
        }
    }
    lines.push(vec![
        "sysctl".into(),
        "--distro".into(),
        "debian".into(),
        path.into(),
    ]);
    lines.push(vec![path.into()]);
    lines.push(vec!["rules".into()]);
    // Every rule and concern id `rules` lists.
    let listing = preflint(&["rules"], cwd);
    for line in listing.lines().filter(|l| l.starts_with("  ")) {
        if let Some(id) = line.split_whitespace().next() {
            lines.push(vec!["explain".into(), id.to_string()]);
        }
    }
    lines
}

fn assert_read_only(fixture: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("tree");
    copy_tree(&repo().join(fixture), &tree);
    let before = snapshot(&tree);
    assert!(before.len() > 5, "{fixture}: copy is empty");
    let abs = tree.display().to_string();
    let mut runs = 0;
    // From outside the tree, then from inside it with the default path.
    for (path, cwd) in [(abs.as_str(), dir.path()), (".", tree.as_path())] {
        for args in command_lines(path, cwd) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            preflint(&args, cwd);
            runs += 1;
        }
    }
    let after = snapshot(&tree);
    let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<&String> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        added.is_empty() && removed.is_empty() && changed.is_empty(),
        "{fixture}: after {runs} runs, added {added:?}, removed {removed:?}, changed {changed:?}"
    );
    // Nothing was written beside the tree either.
    let siblings: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read tempdir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(siblings.len(), 1, "{fixture}: {siblings:?}");
    assert!(runs > 20, "{fixture}: only {runs} runs");
    println!("{fixture}: {runs} runs, {} entries unchanged", after.len());
}

#[test]
fn mini_kubespray_is_left_untouched() {
    assert_read_only("test-repos/mini-kubespray");
}

#[test]
fn handmade_who_fixes_tree_is_left_untouched() {
    assert_read_only("test-repos/who-fixes/handmade");
}
