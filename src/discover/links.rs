//! Links to a directory of the tree, met during the walk: what is below
//! one is what the tree's own walk found below its target, renamed, so its
//! listings are not read twice; where that cannot be told (a link inside,
//! a problem, an excluded entry), it is walked.

use super::walk::{Walked, split, walk};
use super::{DiscoveredFile, Excludes, classify};
use crate::source::{SourceMap, display_path};
use std::path::{Path, PathBuf};

/// A link to a directory of the tree, met below a plain top-level
/// directory: what is below it is what the tree's own walk found below
/// its target (see [`through_link`]).
pub(super) struct Deferred {
    pub(super) link: PathBuf,
    /// The target as the tree's walk reaches it (the root joined with the
    /// target's place in the tree).
    pub(super) walked_as: PathBuf,
    /// The canonical directories above the link's entries.
    pub(super) ancestors: Vec<PathBuf>,
}

/// What the walks found, looked up by [`through_link`].
pub(super) struct Found<'w> {
    pub(super) dirs: crate::HashSet<&'w Path>,
    pub(super) files: Vec<&'w DiscoveredFile>,
    pub(super) marks: Vec<&'w Path>,
}

impl<'w> Found<'w> {
    pub(super) fn of(walks: &'w [Walked]) -> Self {
        Found {
            dirs: walks
                .iter()
                .flat_map(|w| &w.dirs)
                .map(PathBuf::as_path)
                .collect(),
            files: walks.iter().flat_map(|w| &w.files).collect(),
            marks: walks
                .iter()
                .flat_map(|w| &w.marks)
                .map(PathBuf::as_path)
                .collect(),
        }
    }
}

/// The files and directories below a link to a directory of the tree.
///
/// The link is listed and each of its entries taken as the walk through
/// it would take it, except a directory whose counterpart below the target
/// the tree's walk listed without meeting anything that depends on the
/// path it is reached by (a link, which may loop back through the link's
/// own ancestors; a problem; an excluded entry), with no excluded path
/// under the link's name either: what is below it is what the tree's walk
/// found there, renamed, and its listings are not read twice (kubespray's
/// `extra_playbooks/roles -> ../roles` is a third of its tree).
pub(super) fn through_link(
    d: &Deferred,
    found: &Found<'_>,
    root: &Path,
    excludes: &Excludes,
    sources: &SourceMap,
) -> Vec<Walked> {
    // What the tree's walk found below the target, by the entry of the
    // target it is under: (directories, files, whether anything is marked).
    type Group<'w> = (Vec<&'w Path>, Vec<&'w DiscoveredFile>, bool);
    let Ok(entries) = std::fs::read_dir(&d.link) else {
        let above = &d.ancestors[..d.ancestors.len() - 1];
        return vec![walk(&d.link, 2, root, above, excludes, sources)];
    };
    let mut groups: crate::HashMap<&std::ffi::OsStr, Group<'_>> = crate::HashMap::default();
    if found.dirs.contains(d.walked_as.as_path()) {
        for dir in &found.dirs {
            if let Some(name) = entry_below(dir, &d.walked_as) {
                groups.entry(name).or_default().0.push(dir);
            }
        }
        for f in &found.files {
            if let Some(name) = entry_below(&f.path, &d.walked_as) {
                groups.entry(name).or_default().1.push(f);
            }
        }
        for m in &found.marks {
            if let Some(name) = entry_below(m, &d.walked_as) {
                groups.entry(name).or_default().2 = true;
            }
        }
    }
    split(&d.link, entries, root, excludes, |c, _| {
        // Only a directory the walk listed, with nothing marked below it.
        let reused = c.file_name().and_then(|name| {
            let g = groups.get(name)?;
            (!g.2 && found.dirs.contains(d.walked_as.join(name).as_path())).then_some(g)
        });
        match reused.and_then(|g| renamed(g, d, root, excludes)) {
            Some(w) => vec![w],
            None => vec![walk(c, 3, root, &d.ancestors, excludes, sources)],
        }
    })
}

/// The name of the entry of `dir` that `path` is or is under.
fn entry_below<'p>(path: &'p Path, dir: &Path) -> Option<&'p std::ffi::OsStr> {
    below(path, dir)?
        .components()
        .next()
        .map(std::path::Component::as_os_str)
}

/// `path.strip_prefix(dir)`, by bytes where that agrees with components
/// (see [`crate::source::plain_rest`]): each link's listing takes every
/// path the walk found below its target apart, and taking a path apart by
/// components walks all of them.
pub(super) fn below<'p>(path: &'p Path, dir: &Path) -> Option<&'p Path> {
    match crate::source::plain_rest(dir, path) {
        Some(rest) => Some(Path::new(rest)),
        None => path.strip_prefix(dir).ok(),
    }
}

/// A group's directories and files under the link's name, unless an
/// excluded path is among them.
pub(super) fn renamed(
    (dirs, files, _): &(Vec<&Path>, Vec<&DiscoveredFile>, bool),
    d: &Deferred,
    root: &Path,
    excludes: &Excludes,
) -> Option<Walked> {
    let rename = |p: &Path| below(p, &d.walked_as).map(|sub| d.link.join(sub));
    let mut w = Walked::default();
    for dir in dirs {
        let path = rename(dir)?;
        if excludes.matches(&display_path(root, &path)) {
            return None;
        }
        w.dirs.push(path);
    }
    for f in files {
        let path = rename(&f.path)?;
        let rel = display_path(root, &path);
        if excludes.matches(&rel) {
            return None;
        }
        w.files.push(DiscoveredFile {
            kind: classify(&rel),
            path,
            rel,
            same_as: Some(f.path.clone()),
        });
    }
    Some(w)
}
