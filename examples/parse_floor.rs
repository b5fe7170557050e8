//! Parse floor for `bench/bench.sh`: the least work any static reader of a
//! tree must do — find every `*.yml` / `*.yaml` file, read it and parse it
//! with the same YAML parser preflint uses — and nothing else (no role
//! resolution, no templating, no output beyond one summary line).
//!
//! Usage: cargo run --release --example parse_floor -- TREE [--distinct]
//!
//! `--distinct` parses each distinct file once (device and inode): a file
//! reached through a linked directory or a hard link is counted and parsed
//! under one path only, the shortest, as preflint's loader does.
//! Threads: rayon's default (one per core); set RAYON_NUM_THREADS=1 for the
//! single-threaded floor.
//!
//! The walk mirrors `discover`: symbolic links are followed and the same
//! version-control / tool directories are skipped. `.ansible-lint`
//! exclude_paths are NOT honoured (the floor reads everything).

use preflint::source::FileId;
use rayon::prelude::*;
use std::path::PathBuf;
use walkdir::WalkDir;

/// Directories never walked into (same list as `discover::SKIP_DIRS`).
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".venv",
    "node_modules",
    "__pycache__",
];

/// The allocator of the `preflint` binary (see `src/main.rs`), so that the
/// floor and preflint are measured with the same one.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let distinct = std::env::args_os().skip(2).any(|a| a == "--distinct");

    let mut paths: Vec<PathBuf> = WalkDir::new(&root)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            !(e.depth() > 0
                && e.file_type().is_dir()
                && SKIP_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            matches!(
                e.path().extension().and_then(|x| x.to_str()),
                Some("yml" | "yaml")
            )
        })
        .map(walkdir::DirEntry::into_path)
        .collect();
    paths.sort();
    if distinct {
        paths = distinct_files(&paths);
    }

    // (files parsed, documents, bytes, files that failed to read or parse)
    let (files, docs, bytes, failed) = paths
        .par_iter()
        .map(|path| match std::fs::read(path) {
            Ok(raw) => {
                let text = String::from_utf8_lossy(&raw);
                let parsed = preflint::yaml::parse(FileId(0), &text);
                (
                    1usize,
                    parsed.docs.len(),
                    raw.len(),
                    usize::from(parsed.failed),
                )
            }
            Err(_) => (0, 0, 0, 1),
        })
        .reduce(
            || (0, 0, 0, 0),
            |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3),
        );

    println!(
        "files: {files}  docs: {docs}  bytes: {bytes}  failed: {failed}  threads: {}",
        rayon::current_num_threads()
    );
}

/// One path per (device, inode), the one with fewest components (then the
/// first in order), in the original order.
#[cfg(unix)]
fn distinct_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &PathBuf| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let mut best: std::collections::HashMap<(u64, u64), &PathBuf> =
        std::collections::HashMap::new();
    for p in paths {
        if let Some(i) = id(p) {
            let e = best.entry(i).or_insert(p);
            if p.components().count() < e.components().count() {
                *e = p;
            }
        }
    }
    paths
        .iter()
        .filter(|p| id(p).is_none_or(|i| best.get(&i) == Some(p)))
        .cloned()
        .collect()
}

#[cfg(not(unix))]
fn distinct_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths.to_vec()
}
