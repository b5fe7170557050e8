//! Every command in README.md's shell blocks runs as documented: `preflint
//! ...` lines run the built binary (from a temporary directory, with
//! `test-repos/` made absolute), the first block's `cargo run` line runs the
//! same command, and `cargo install --path .` installs into a temporary root.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Shell lines of the README's ```sh blocks, comments stripped.
fn commands() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        // The fuzzing section is for developers with a nightly toolchain.
        if line.starts_with("## Fuzzing") {
            break;
        }
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if in_sh {
            let cmd = line.split(" #").next().unwrap_or("").trim();
            if !cmd.is_empty() {
                out.push(cmd.to_string());
            }
        }
    }
    out
}

#[test]
fn readme_commands_run() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bin = env!("CARGO_BIN_EXE_preflint");
    let repos = repo().join("test-repos").display().to_string();
    let cmds = commands();
    assert!(cmds.len() >= 15, "README commands found: {cmds:?}");
    let mut ran = 0;
    for cmd in &cmds {
        if cmd == "bash scripts/test.sh" {
            continue; // this suite itself
        }
        if cmd == "cargo install --path ." {
            // Debug profile and the shared target dir keep it fast; same code path.
            let root = tmp.path().join("install");
            let out = Command::new(env!("CARGO"))
                .args([
                    "install",
                    "--path",
                    ".",
                    "--debug",
                    "--offline",
                    "--target-dir",
                    "target",
                    "--root",
                ])
                .arg(&root)
                .current_dir(repo())
                .output()
                .expect("cargo install");
            assert!(
                out.status.success(),
                "{cmd}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(root.join("bin/preflint").is_file());
            ran += 1;
            continue;
        }
        let rest = cmd
            .strip_prefix("cargo run --release -- ")
            .or_else(|| cmd.strip_prefix("preflint "))
            .unwrap_or_else(|| panic!("README command not understood by this test: {cmd}"));
        let line = format!(
            "{bin} {}",
            rest.replace("test-repos/", &format!("{repos}/"))
        );
        let out = Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(tmp.path())
            .output()
            .expect("sh");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{cmd} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.stdout.is_empty() || line.contains('>') || line.contains("--write-baseline"),
            "{cmd} printed nothing"
        );
        ran += 1;
    }
    assert!(
        tmp.path().join("who-fixes.html").is_file(),
        "the html report was written"
    );
    println!("README: {ran} commands ran");
}
