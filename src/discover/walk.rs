//! Walking a directory: near the root, each plain directory is listed and
//! its entries taken in parallel; below, or for anything else, one walk
//! follows links, skips what is excluded and reports loops, dangling links
//! and unreadable directories.

use super::links::Deferred;
use super::listing::{listing, runs};
use super::{Discovered, DiscoveredFile, Excludes, Listed, Listing, SKIP_DIRS, classify};
use crate::diagnostic::{Diagnostic, code};
use crate::source::{SourceMap, Span, display_path};
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// How deep below the root directories are listed and split
/// ([`child`]); deeper ones are walked whole, without recursion.
pub(super) const SPLIT_DEPTH: usize = 16;

/// A child, `depth` levels below the root, of a plain directory that is
/// not a regular file. A plain directory is listed and its entries taken
/// in parallel ([`split`]), down to [`SPLIT_DEPTH`]: a walk of its own for
/// each directory kept one thread on kubespray's `roles/kubernetes-apps`
/// (467 of the 723 entries of `roles/`) while the other had finished. A
/// link to a directory of the tree is left for after the walk
/// ([`through_link`](super::links::through_link): listed, and its entries taken from the walk of the
/// target or walked in parallel; kubespray's `extra_playbooks/roles ->
/// ../roles`, a third of its tree, was one walk on one thread). Anything
/// else is walked whole: what the walk would skip or report (an excluded
/// or skipped name, an unreadable directory, a link out of the tree or to
/// an ancestor) is left to it.
pub(super) fn child(
    path: &Path,
    kind: Listed,
    depth: usize,
    root: &Path,
    ancestors: &[PathBuf],
    excludes: &Excludes,
    sources: &SourceMap,
) -> Vec<Walked> {
    let whole = || vec![walk(path, depth, root, ancestors, excludes, sources)];
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let skipped_or_excluded = || {
        name.as_deref().is_none_or(|n| SKIP_DIRS.contains(&n))
            || excludes.matches(&display_path(root, path))
    };
    if kind == Listed::Dir {
        if depth >= SPLIT_DEPTH || skipped_or_excluded() {
            return whole();
        }
        let (Ok(children), Some(parent)) = (std::fs::read_dir(path), ancestors.last()) else {
            return whole();
        };
        // Not a link: its canonical path is its parent's and its name.
        let mut below = ancestors.to_vec();
        below.push(parent.join(path.file_name().unwrap_or_default()));
        return split(path, children, root, excludes, |c, kind| {
            child(c, kind, depth + 1, root, &below, excludes, sources)
        });
    }
    // A link deeper down is followed by a walk of its own: each link left
    // for later is matched against everything the walk found, which costs
    // more than walking a small linked directory again.
    if depth > 2 {
        return whole();
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link || skipped_or_excluded() {
        return whole();
    }
    let Ok(target) = path.canonicalize() else {
        return whole();
    };
    if !target.starts_with(&ancestors[0]) || ancestors.contains(&target) || !target.is_dir() {
        return whole();
    }
    let Ok(in_tree) = target.strip_prefix(&ancestors[0]) else {
        return whole();
    };
    let walked_as = root.join(in_tree);
    let mut below = ancestors.to_vec();
    below.push(target);
    vec![Walked {
        marks: vec![path.to_path_buf()],
        deferred: vec![Deferred {
            link: path.to_path_buf(),
            walked_as,
            ancestors: below,
        }],
        ..Walked::default()
    }]
}

/// A directory listed here, and its entries in parallel, in name order:
/// each regular file taken as it is, anything else given to `each` with
/// what the listing says it is.
pub(super) fn split(
    dir: &Path,
    entries: std::fs::ReadDir,
    root: &Path,
    excludes: &Excludes,
    each: impl Fn(&Path, Listed) -> Vec<Walked> + Sync,
) -> Vec<Walked> {
    use rayon::prelude::*;
    let mut entries = listing(entries);
    entries.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()));
    let listed = Walked {
        dirs: vec![dir.to_path_buf()],
        listings: vec![(dir.to_path_buf(), Listing::of(dir, &entries))],
        ..Walked::default()
    };
    std::iter::once(listed)
        .chain(
            runs(&entries)
                .par_iter()
                .flat_map_iter(|run| {
                    let (c, kind) = &run[0];
                    if *kind == Listed::File {
                        vec![plain(run, root, excludes)]
                    } else {
                        each(c, *kind)
                    }
                })
                .collect::<Vec<_>>(),
        )
        .collect()
}

/// Regular files below the root, found by listing their directory: what
/// walks starting at them find, without them (walkdir resolves the
/// ancestors of every walk's start, a `readlink` per component). One
/// `Walked` for a directory's run of files, not one each (kubespray's
/// whole tree: ~6,000 files in ~700 directories).
pub(super) fn plain(files: &[(PathBuf, Listed)], root: &Path, excludes: &Excludes) -> Walked {
    let mut w = Walked::default();
    for (path, _) in files {
        let rel = display_path(root, path);
        if excludes.matches(&rel) {
            w.marks.push(path.clone());
        } else {
            w.files.push(DiscoveredFile {
                path: path.clone(),
                kind: classify(&rel),
                rel,
                same_as: None,
            });
        }
    }
    w
}

/// What one walk found: files and problems.
#[derive(Default)]
pub(super) struct Walked {
    pub(super) files: Vec<DiscoveredFile>,
    pub(super) dirs: Vec<PathBuf>,
    pub(super) listings: Vec<(PathBuf, Listing)>,
    pub(super) diags: Vec<Diagnostic>,
    /// What a listing reached through a link could not simply rename
    /// (see [`through_link`](super::links::through_link)): links, excluded entries, problems.
    pub(super) marks: Vec<PathBuf>,
    /// Links to directories of the tree, resolved after the walk.
    pub(super) deferred: Vec<Deferred>,
}

pub(super) fn collect(walks: Vec<Walked>, diags: &mut Vec<Diagnostic>) -> Discovered {
    // Sized once: with a walk per directory, growing them copied the
    // lists into fresh memory again and again.
    let mut out = Discovered {
        files: Vec::with_capacity(walks.iter().map(|w| w.files.len()).sum()),
        dirs: Vec::with_capacity(walks.iter().map(|w| w.dirs.len()).sum()),
        listings: Vec::with_capacity(walks.iter().map(|w| w.listings.len()).sum()),
    };
    for w in walks {
        out.files.extend(w.files);
        out.dirs.extend(w.dirs);
        out.listings.extend(w.listings);
        diags.extend(w.diags);
    }
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// Walks `start`, which is `depth` levels below `root`; `ancestors` are the
/// canonical directories above it, the root first (a link to one of them is
/// a loop this walk cannot see by itself).
pub(super) fn walk(
    start: &Path,
    depth: usize,
    root: &Path,
    ancestors: &[PathBuf],
    excludes: &Excludes,
    sources: &SourceMap,
) -> Walked {
    let canonical_root = &ancestors[0];
    let mut w = Walked::default();
    let walker = WalkDir::new(start)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    let outside: std::cell::RefCell<Vec<(PathBuf, PathBuf)>> = std::cell::RefCell::default();
    let looped: std::cell::RefCell<Vec<PathBuf>> = std::cell::RefCell::default();
    let marks: std::cell::RefCell<Vec<PathBuf>> = std::cell::RefCell::default();
    let mut it = walker.filter_entry(|e| {
        let depth = e.depth() + depth;
        let name = e.file_name().to_string_lossy();
        if depth > 0 && e.file_type().is_dir() && SKIP_DIRS.contains(&name.as_ref()) {
            return false;
        }
        // walkdir calls the start of a walk that follows links a link
        // whatever it is; only a real link is resolved (each costs a
        // `readlink` per component).
        let is_link = if e.depth() == 0 {
            std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.file_type().is_symlink())
        } else {
            e.path_is_symlink()
        };
        if is_link {
            marks.borrow_mut().push(e.path().to_path_buf());
        }
        if depth > 0
            && is_link
            && let Ok(target) = e.path().canonicalize()
        {
            if !target.starts_with(canonical_root) {
                outside.borrow_mut().push((e.path().to_path_buf(), target));
                return false;
            }
            if ancestors.contains(&target) {
                looped.borrow_mut().push(e.path().to_path_buf());
                return false;
            }
        }
        let rel = display_path(root, e.path());
        let kept = depth == 0 || !excludes.matches(&rel);
        if !kept {
            marks.borrow_mut().push(e.path().to_path_buf());
        }
        kept
    });
    let link_problem = |path: &Path, what: String| {
        let id = sources.add(path, "".into());
        Diagnostic::warning(code::IO, Span::file_start(id), what)
            .with_help("fix or remove the link, or exclude the path with --exclude")
    };
    loop {
        let entry = match it.next() {
            None => break,
            Some(Ok(e)) => e,
            Some(Err(err)) => {
                let path = err
                    .path()
                    .map_or_else(|| start.to_path_buf(), Path::to_path_buf);
                let what = if err.loop_ancestor().is_some() {
                    "symbolic link loop; not followed".to_string()
                } else if path
                    .symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
                    && !path.exists()
                {
                    "dangling symbolic link; skipped".to_string()
                } else {
                    format!("cannot read: {err}")
                };
                w.diags.push(link_problem(&path, what));
                w.marks.push(path);
                continue;
            }
        };
        if entry.file_type().is_dir() {
            w.dirs.push(entry.path().to_path_buf());
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = display_path(root, entry.path());
        let kind = classify(&rel);
        w.files.push(DiscoveredFile {
            path: entry.path().to_path_buf(),
            rel,
            kind,
            same_as: None,
        });
    }
    drop(it);
    w.marks.extend(marks.into_inner());
    for path in looped.into_inner() {
        w.diags.push(link_problem(
            &path,
            "symbolic link loop; not followed".into(),
        ));
    }
    for (link, target) in outside.into_inner() {
        let id = sources.add(&link, "".into());
        w.diags.push(
            Diagnostic::new(
                code::IO,
                crate::diagnostic::Severity::Info,
                Span::file_start(id),
                format!(
                    "symbolic link to {}, outside the tree; not walked",
                    target.display()
                ),
            )
            .with_help("analyse the tree it points to on its own, or include its files by path"),
        );
    }
    w
}
