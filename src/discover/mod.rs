//! Finding the files of a tree and classifying them by path.
//!
//! Walks the root (following symlinks, reporting loops and dangling links),
//! skips `.git` and excluded paths, and says what each file is by where it
//! lives. Classification by content (is this YAML a playbook?) happens after
//! parsing, in `ansible::project`. Never reads file contents.
//!
//! This file holds [`discover`] and what it returns; `walk` walks a
//! directory (listed and split across threads near the root, whole below),
//! `links` takes a link to a directory of the tree from the walk of its
//! target instead of walking it again, `listing` keeps what each listed
//! directory held, and `classify` names a file's kind by its path.

mod classify;
mod links;
mod listing;
#[cfg(test)]
mod tests;
mod walk;

pub use classify::{FileKind, classify};
pub use listing::{Listed, Listing};

use crate::diagnostic::Diagnostic;
use crate::source::{SourceMap, display_path};
use links::{Deferred, Found, through_link};
use listing::{listing, runs};
use std::path::{Path, PathBuf};
use walk::{Walked, child, collect, plain, split, walk};

#[derive(Debug, Clone)]
pub struct DiscoveredFile {
    pub path: PathBuf,
    /// Relative to the root, `/`-separated.
    pub rel: String,
    pub kind: FileKind,
    /// Another path the walk found for this same file, when this one (its
    /// alias) was reached through a link to a directory of the tree and
    /// taken from the walk of its target ([`through_link`]): what `stat`
    /// says of one it says of the other.
    pub same_as: Option<PathBuf>,
}

/// Paths to leave out, given as paths relative to the root or globs.
#[derive(Debug, Default, Clone)]
pub struct Excludes {
    /// One matcher for all of them (every walked path is tested).
    any: Option<crate::glob::Glob>,
}

impl Excludes {
    /// Builds matchers from path or glob strings (`*`, `**`, `?`).
    #[must_use]
    pub fn new(items: &[String]) -> Self {
        let globs = items
            .iter()
            .map(|p| p.trim().trim_start_matches("./").trim_end_matches('/'))
            .filter(|p| !p.is_empty());
        Excludes {
            any: crate::glob::any_of(globs, true),
        }
    }

    #[must_use]
    pub fn matches(&self, rel: &str) -> bool {
        self.any.as_ref().is_some_and(|g| g.is_match(rel))
    }
}

/// Directories never walked into.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".venv",
    "node_modules",
    "__pycache__",
];

/// Walks `root` and returns its files sorted by relative path.
///
/// Plain directories are listed and their entries taken in parallel, down
/// to [`SPLIT_DEPTH`](walk::SPLIT_DEPTH) (a walk is mostly time in the kernel, one listing
/// after another, and listings of different directories can be read at
/// the same time); anything else is walked on its
/// own, in parallel (see [`child`]). A link back to the root or to a
/// directory above, ancestors these walks do not see, is reported as the
/// loop it is.
pub fn discover(
    root: &Path,
    excludes: &Excludes,
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Discovered {
    use rayon::prelude::*;
    // A link out of the tree (`vendor -> /usr`) would make the walk read the
    // whole file system: it is not walked (an include through it still reads
    // the file it reaches).
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let root_only = [canonical_root.clone()];
    let Ok(entries) = std::fs::read_dir(root) else {
        // Not a readable directory: one walk reports why.
        return collect(
            vec![walk(root, 0, root, &root_only, excludes, sources)],
            diags,
        );
    };
    let mut top = listing(entries);
    top.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()));
    let walks: Vec<Vec<Walked>> = runs(&top)
        .par_iter()
        .map(|run| {
            let (entry, kind) = &run[0];
            if *kind == Listed::File {
                return vec![plain(run, root, excludes)];
            }
            // A plain directory is split once more (a monorepo keeps most
            // of its files under one `roles/`); anything else is walked
            // whole, which applies the checks to the entry itself.
            let name = entry.file_name().map(|n| n.to_string_lossy().into_owned());
            let plain_dir = *kind == Listed::Dir
                && name.as_deref().is_some_and(|n| !SKIP_DIRS.contains(&n))
                && !excludes.matches(&display_path(root, entry));
            let children = plain_dir.then(|| std::fs::read_dir(entry).ok()).flatten();
            let Some(children) = children else {
                return vec![walk(entry, 1, root, &root_only, excludes, sources)];
            };
            let ancestors = [
                canonical_root.clone(),
                canonical_root.join(entry.file_name().unwrap_or_default()),
            ];
            split(entry, children, root, excludes, |c, kind| {
                child(c, kind, 2, root, &ancestors, excludes, sources)
            })
        })
        .collect();
    let listed_root = Walked {
        dirs: vec![root.to_path_buf()],
        listings: vec![(root.to_path_buf(), Listing::of(root, &top))],
        ..Walked::default()
    };
    let mut walks: Vec<Walked> = std::iter::once(listed_root)
        .chain(walks.into_iter().flatten())
        .collect();
    let deferred: Vec<Deferred> = walks
        .iter_mut()
        .flat_map(|w| std::mem::take(&mut w.deferred))
        .collect();
    if !deferred.is_empty() {
        let found = Found::of(&walks);
        let more: Vec<Walked> = deferred
            .par_iter()
            .flat_map_iter(|d| through_link(d, &found, root, excludes, sources))
            .collect();
        walks.extend(more);
    }
    collect(walks, diags)
}

/// What the walk found: the files, and the directories it listed (which a
/// later `stat` would find to be directories).
#[derive(Debug, Default)]
pub struct Discovered {
    pub files: Vec<DiscoveredFile>,
    pub dirs: Vec<PathBuf>,
    /// The directories listed whole, by the path they were listed at, with
    /// their listings.
    pub listings: Vec<(PathBuf, Listing)>,
}
