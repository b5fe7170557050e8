//! Finding the files of a tree and classifying them by path.
//!
//! Walks the root (following symlinks, reporting loops and dangling links),
//! skips `.git` and excluded paths, and says what each file is by where it
//! lives. Classification by content (is this YAML a playbook?) happens after
//! parsing, in `ansible::project`. Never reads file contents.

use crate::diagnostic::{Diagnostic, code};
use crate::source::{SourceMap, Span, display_path};
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// A YAML file whose role is decided by its content (playbook or not).
    Yaml,
    Tasks,
    Handlers,
    RoleDefaults,
    RoleVars,
    RoleMeta,
    GroupVars,
    HostVars,
    Inventory,
    Template,
    AnsibleCfg,
    Other,
}

impl FileKind {
    #[must_use]
    pub fn is_yaml(self) -> bool {
        matches!(
            self,
            FileKind::Yaml
                | FileKind::Tasks
                | FileKind::Handlers
                | FileKind::RoleDefaults
                | FileKind::RoleVars
                | FileKind::RoleMeta
                | FileKind::GroupVars
                | FileKind::HostVars
        )
    }
}

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
/// to [`SPLIT_DEPTH`] (a walk is mostly time in the kernel, one listing
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

/// A link to a directory of the tree, met below a plain top-level
/// directory: what is below it is what the tree's own walk found below
/// its target (see [`through_link`]).
struct Deferred {
    link: PathBuf,
    /// The target as the tree's walk reaches it (the root joined with the
    /// target's place in the tree).
    walked_as: PathBuf,
    /// The canonical directories above the link's entries.
    ancestors: Vec<PathBuf>,
}

/// What the walks found, looked up by [`through_link`].
struct Found<'w> {
    dirs: crate::HashSet<&'w Path>,
    files: Vec<&'w DiscoveredFile>,
    marks: Vec<&'w Path>,
}

impl<'w> Found<'w> {
    fn of(walks: &'w [Walked]) -> Self {
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
fn through_link(
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
fn below<'p>(path: &'p Path, dir: &Path) -> Option<&'p Path> {
    match crate::source::plain_rest(dir, path) {
        Some(rest) => Some(Path::new(rest)),
        None => path.strip_prefix(dir).ok(),
    }
}

/// A group's directories and files under the link's name, unless an
/// excluded path is among them.
fn renamed(
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

/// How deep below the root directories are listed and split
/// ([`child`]); deeper ones are walked whole, without recursion.
const SPLIT_DEPTH: usize = 16;

/// A child, `depth` levels below the root, of a plain directory that is
/// not a regular file. A plain directory is listed and its entries taken
/// in parallel ([`split`]), down to [`SPLIT_DEPTH`]: a walk of its own for
/// each directory kept one thread on kubespray's `roles/kubernetes-apps`
/// (467 of the 723 entries of `roles/`) while the other had finished. A
/// link to a directory of the tree is left for after the walk
/// ([`through_link`]: listed, and its entries taken from the walk of the
/// target or walked in parallel; kubespray's `extra_playbooks/roles ->
/// ../roles`, a third of its tree, was one walk on one thread). Anything
/// else is walked whole: what the walk would skip or report (an excluded
/// or skipped name, an unreadable directory, a link out of the tree or to
/// an ancestor) is left to it.
fn child(
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
fn split(
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

/// What a directory's listing says an entry is (links not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    File,
    Dir,
    /// A link, or anything else.
    Other,
}

/// Every name a directory held when the walk listed it, each with what
/// the listing said it is: later probes of the directory's entries (a
/// role's `vars/`, `handlers/main.yml`...) are answered from it without a
/// `stat` where it can tell (see `load::FsMemo`).
#[derive(Debug, Default)]
pub struct Listing {
    /// The names' bytes, one after the other, sorted.
    names: Vec<u8>,
    /// Per name, in order: where it starts and ends in `names`, and what
    /// it is.
    ends: Vec<(u32, u32, Listed)>,
}

impl Listing {
    /// The listing of `dir`'s `entries` (paths below `dir`, as `listing`
    /// gives them).
    fn of(dir: &Path, entries: &[(PathBuf, Listed)]) -> Self {
        let dir = dir.as_os_str().as_encoded_bytes();
        let mut named: Vec<(&[u8], Listed)> = entries
            .iter()
            .map(|(p, k)| (entry_name(dir, p), *k))
            .collect();
        if !named.is_sorted_by(|a, b| a.0 <= b.0) {
            named.sort_unstable_by(|a, b| a.0.cmp(b.0));
        }
        let mut l = Listing {
            names: Vec::with_capacity(named.iter().map(|(n, _)| n.len()).sum()),
            ends: Vec::with_capacity(named.len()),
        };
        let at = |names: &Vec<u8>| u32::try_from(names.len()).unwrap_or(u32::MAX);
        for (name, kind) in named {
            let start = at(&l.names);
            l.names.extend_from_slice(name);
            l.ends.push((start, at(&l.names), kind));
        }
        l
    }

    /// What the listing says `name` is; `None` when it held no such name.
    #[must_use]
    pub fn get(&self, name: &std::ffi::OsStr) -> Option<Listed> {
        let name = name.as_encoded_bytes();
        self.ends
            .binary_search_by(|&(start, end, _)| self.names[start as usize..end as usize].cmp(name))
            .ok()
            .map(|i| self.ends[i].2)
    }
}

/// A listing's entries in pieces for the walk to take in parallel: each
/// run of regular files (in name order) in one piece, each other entry
/// alone.
fn runs(entries: &[(PathBuf, Listed)]) -> Vec<&[(PathBuf, Listed)]> {
    entries
        .chunk_by(|a, b| a.1 == Listed::File && b.1 == Listed::File)
        .collect()
}

/// The name of `entry`, a path `dir` joined with one name: what follows
/// `dir` and a `/` (no parse of its components), else its file name.
fn entry_name<'p>(dir: &[u8], entry: &'p Path) -> &'p [u8] {
    let bytes = entry.as_os_str().as_encoded_bytes();
    match bytes.strip_prefix(dir).and_then(|r| r.strip_prefix(b"/")) {
        Some(name) if !name.is_empty() && !name.contains(&b'/') => name,
        _ => entry.file_name().unwrap_or_default().as_encoded_bytes(),
    }
}

/// A directory's entries, each with what it is (the type comes with the
/// listing, no `stat`).
fn listing(entries: std::fs::ReadDir) -> Vec<(PathBuf, Listed)> {
    entries
        .filter_map(Result::ok)
        .map(|e| {
            let kind = match e.file_type() {
                Ok(t) if t.is_file() => Listed::File,
                Ok(t) if t.is_dir() => Listed::Dir,
                _ => Listed::Other,
            };
            (e.path(), kind)
        })
        .collect()
}

/// Regular files below the root, found by listing their directory: what
/// walks starting at them find, without them (walkdir resolves the
/// ancestors of every walk's start, a `readlink` per component). One
/// `Walked` for a directory's run of files, not one each (kubespray's
/// whole tree: ~6,000 files in ~700 directories).
fn plain(files: &[(PathBuf, Listed)], root: &Path, excludes: &Excludes) -> Walked {
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
struct Walked {
    files: Vec<DiscoveredFile>,
    dirs: Vec<PathBuf>,
    listings: Vec<(PathBuf, Listing)>,
    diags: Vec<Diagnostic>,
    /// What a listing reached through a link could not simply rename
    /// (see [`through_link`]): links, excluded entries, problems.
    marks: Vec<PathBuf>,
    /// Links to directories of the tree, resolved after the walk.
    deferred: Vec<Deferred>,
}

fn collect(walks: Vec<Walked>, diags: &mut Vec<Diagnostic>) -> Discovered {
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
fn walk(
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

/// Classifies a file by its path relative to the root.
#[must_use]
pub fn classify(rel: &str) -> FileKind {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let is_yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    if name == "ansible.cfg" {
        return FileKind::AnsibleCfg;
    }
    if name.ends_with(".j2") || parts.iter().rev().skip(1).any(|p| *p == "templates") {
        return FileKind::Template;
    }
    let dirs = &parts[..parts.len().saturating_sub(1)];
    if dirs.contains(&"group_vars") {
        return FileKind::GroupVars;
    }
    if dirs.contains(&"host_vars") {
        return FileKind::HostVars;
    }
    // The innermost role sub-directory decides (`roles/x/tasks/sub/a.yml` is tasks).
    for d in dirs.iter().rev() {
        let kind = match *d {
            "tasks" => FileKind::Tasks,
            "handlers" => FileKind::Handlers,
            "defaults" => FileKind::RoleDefaults,
            "vars" => FileKind::RoleVars,
            "meta" => FileKind::RoleMeta,
            "files" | "library" | "module_utils" | "filter_plugins" | "lookup_plugins" => {
                FileKind::Other
            }
            _ => continue,
        };
        if kind == FileKind::Other || is_yaml || name == "main" {
            return kind;
        }
        return FileKind::Other;
    }
    let in_inventory = dirs
        .iter()
        .any(|d| d.starts_with("inventory") || *d == "inventories");
    if in_inventory
        && (name.ends_with(".ini")
            || name == "hosts"
            || name.starts_with("hosts.")
            || name == "inventory")
    {
        return FileKind::Inventory;
    }
    if is_yaml {
        if in_inventory && (name.starts_with("hosts") || name.starts_with("inventory")) {
            return FileKind::Inventory;
        }
        return FileKind::Yaml;
    }
    FileKind::Other
}

#[cfg(test)]
mod tests {
    #[test]
    fn below_by_bytes_agrees_with_strip_prefix() {
        use std::path::Path;
        let dirs = [
            "/t", "/t/", "t", "./t", ".", "/", "/t/x/..", "t//u", "/t/.", "/t/a",
        ];
        let paths = [
            "/t/a.yml",
            "/t/a/b.yml",
            "/t//a.yml",
            "/t/./a.yml",
            "/t/a/./b",
            "/t/a//b",
            "/t/a/",
            "/t",
            "/t/",
            "t/a",
            "./t/a",
            "a",
            "/tt/a",
            "t//u/v",
            "t/u/v",
            "/t/x/../a",
            "/t/a/b/c",
            "/t/a\\b",
        ];
        for d in dirs {
            for p in paths {
                let (d, p) = (Path::new(d), Path::new(p));
                // As bytes: `Path`'s equality compares components.
                assert_eq!(
                    super::below(p, d).map(Path::as_os_str),
                    p.strip_prefix(d).ok().map(Path::as_os_str),
                    "{} below {}",
                    p.display(),
                    d.display()
                );
            }
        }
    }

    use super::*;

    /// A scratch tree with these files (each `- x`).
    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "- x\n").expect("write");
        }
        dir
    }

    #[test]
    fn classifies_role_parts() {
        assert_eq!(
            classify("roles/kubernetes/preinstall/tasks/main.yml"),
            FileKind::Tasks
        );
        assert_eq!(
            classify("roles/k/defaults/main/a.yml"),
            FileKind::RoleDefaults
        );
        assert_eq!(classify("roles/k/defaults/main"), FileKind::RoleDefaults);
        assert_eq!(classify("roles/k/templates/x.conf.j2"), FileKind::Template);
        assert_eq!(classify("roles/k/meta/main.yml"), FileKind::RoleMeta);
        assert_eq!(
            classify("inventory/sample/group_vars/all/all.yml"),
            FileKind::GroupVars
        );
        assert_eq!(classify("inventory/sample/hosts.yaml"), FileKind::Inventory);
        assert_eq!(
            classify("inventory/sample/inventory.ini"),
            FileKind::Inventory
        );
        assert_eq!(classify("cluster.yml"), FileKind::Yaml);
        assert_eq!(classify("roles/k/files/x.yml"), FileKind::Other);
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_tree_are_not_walked() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("site.yml"), "- hosts: all\n").expect("write");
        std::os::unix::fs::symlink("/usr", dir.path().join("vendor")).expect("link");
        let sources = SourceMap::new(dir.path());
        let mut diags = Vec::new();
        let found = discover(dir.path(), &Excludes::default(), &sources, &mut diags);
        assert_eq!(found.files.len(), 1);
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("outside the tree"));
    }

    #[test]
    fn files_and_listed_directories_at_every_depth() {
        let dir = tree(&[
            "site.yml",
            "roles/README",
            "roles/r/tasks/main.yml",
            "skip/x.yml",
        ]);
        let d = dir.path();
        std::fs::create_dir_all(d.join("roles/.git")).expect("mkdir");
        let sources = SourceMap::new(d);
        let mut diags = Vec::new();
        let found = discover(d, &Excludes::new(&["skip/".into()]), &sources, &mut diags);
        let files: Vec<&str> = found.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(
            files,
            ["roles/README", "roles/r/tasks/main.yml", "site.yml"]
        );
        assert_eq!(found.files[1].kind, FileKind::Tasks);
        let mut dirs: Vec<String> = found.dirs.iter().map(|p| display_path(d, p)).collect();
        dirs.sort();
        // The root, the listed `roles/` and the walked directories; not the
        // excluded or skipped ones.
        assert_eq!(dirs, [".", "roles", "roles/r", "roles/r/tasks"]);
        assert!(diags.is_empty(), "{diags:?}");
    }

    /// Directories listed and split at every depth find what one walk from
    /// the root finds: files, directories and problems, below links
    /// deeper down too, past the depth where splitting stops.
    #[cfg(unix)]
    #[test]
    fn split_listings_find_what_one_walk_finds_at_every_depth() {
        let dir = tree(&[
            "roles/apps/a/b/c/d/tasks/main.yml",
            "roles/apps/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/deep.yml",
            "roles/apps/a/b/skip/x.yml",
            "roles/apps/a/.git/y.yml",
            "roles/apps/a/b/kept.yml",
            "roles/net/defaults/main/one.yml",
            "roles/net/defaults/main/two.yml",
            "inventory/sample/group_vars/all.yml",
            "contrib/t/x/notes.txt",
        ]);
        let d = dir.path();
        // Links below the second level: to a directory of the tree, to an
        // ancestor (a loop), out of the tree, and dangling.
        std::os::unix::fs::symlink(
            "../../../inventory/sample/group_vars",
            d.join("contrib/t/x/group_vars"),
        )
        .expect("link");
        std::os::unix::fs::symlink("../..", d.join("roles/apps/a/b/up")).expect("link");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("o.yml"), "- x\n").expect("write");
        std::os::unix::fs::symlink(outside.path(), d.join("roles/net/defaults/out")).expect("link");
        std::os::unix::fs::symlink("nowhere", d.join("roles/net/defaults/main/gone.yml"))
            .expect("link");
        let excludes = Excludes::new(&["roles/apps/a/b/skip".into()]);
        let sources = SourceMap::new(d);
        let mut diags = Vec::new();
        let found = discover(d, &excludes, &sources, &mut diags);
        // The same tree walked whole, in one walk from the root.
        let canonical = d.canonicalize().expect("canonical");
        let mut once = Vec::new();
        let reference = collect(
            vec![walk(d, 0, d, &[canonical], &excludes, &sources)],
            &mut once,
        );
        let rels = |f: &Discovered| -> Vec<(String, FileKind)> {
            f.files.iter().map(|x| (x.rel.clone(), x.kind)).collect()
        };
        assert_eq!(rels(&found), rels(&reference));
        assert!(
            found
                .files
                .iter()
                .any(|f| f.rel == "contrib/t/x/group_vars/all.yml")
        );
        assert!(found.files.iter().any(|f| f.rel.ends_with("r/deep.yml")));
        let mut dirs: Vec<&PathBuf> = found.dirs.iter().collect();
        let mut reference_dirs: Vec<&PathBuf> = reference.dirs.iter().collect();
        dirs.sort();
        dirs.dedup();
        reference_dirs.sort();
        reference_dirs.dedup();
        assert_eq!(dirs, reference_dirs);
        let messages = |ds: &[Diagnostic]| -> Vec<String> {
            let mut m: Vec<String> = ds.iter().map(|g| g.message.clone()).collect();
            m.sort();
            m
        };
        assert_eq!(messages(&diags), messages(&once));
        assert_eq!(diags.len(), 3, "{diags:?}");
        // Each listing holds what the directory holds, links and skipped
        // or excluded entries included, each as `read_dir` types it.
        assert!(found.listings.iter().any(|(l, _)| l == d));
        assert!(found.listings.len() > 10, "{}", found.listings.len());
        for (listed, listing) in &found.listings {
            assert!(found.dirs.contains(listed), "{}", listed.display());
            let mut names = 0;
            for e in std::fs::read_dir(listed).expect("read_dir") {
                let e = e.expect("entry");
                let t = e.file_type().expect("type");
                let kind = if t.is_file() {
                    Listed::File
                } else if t.is_dir() {
                    Listed::Dir
                } else {
                    Listed::Other
                };
                assert_eq!(listing.get(&e.file_name()), Some(kind), "{:?}", e.path());
                names += 1;
            }
            assert_eq!(listing.ends.len(), names);
        }
        let listing_of = |rel: &str| {
            let dir = d.join(rel);
            &found.listings.iter().find(|(l, _)| *l == dir).expect(rel).1
        };
        let defaults = listing_of("roles/net/defaults");
        assert_eq!(defaults.get("out".as_ref()), Some(Listed::Other));
        assert_eq!(defaults.get("main".as_ref()), Some(Listed::Dir));
        assert_eq!(defaults.get("mai".as_ref()), None);
        assert_eq!(
            listing_of("roles/apps/a/b").get("skip".as_ref()),
            Some(Listed::Dir)
        );
        assert_eq!(
            listing_of("roles/apps/a").get(".git".as_ref()),
            Some(Listed::Dir)
        );
        // Below a skipped or excluded directory nothing is listed.
        assert!(
            !found
                .listings
                .iter()
                .any(|(l, _)| l.starts_with(d.join("roles/apps/a/.git"))
                    || l.starts_with(d.join("roles/apps/a/b/skip")))
        );
    }

    #[test]
    fn a_listing_finds_each_name_it_holds_and_no_other() {
        let names = [
            "main.yml",
            "main",
            "a",
            "main.yaml",
            "b.yml",
            "ma",
            "zz",
            "Main.yml",
        ];
        let entries: Vec<(PathBuf, Listed)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let kind = [Listed::File, Listed::Dir, Listed::Other][i % 3];
                (Path::new("/d").join(n), kind)
            })
            .collect();
        let l = Listing::of(Path::new("/d"), &entries);
        for (p, kind) in &entries {
            assert_eq!(l.get(p.file_name().expect("name")), Some(*kind), "{p:?}");
        }
        for absent in [
            "",
            "m",
            "mai",
            "main.y",
            "main.yml.j2",
            "MAIN.YML",
            "zzz",
            "0",
        ] {
            assert_eq!(l.get(absent.as_ref()), None, "{absent}");
        }
        assert_eq!(Listing::of(Path::new("/d"), &[]).get("x".as_ref()), None);
    }

    /// A link to a directory of the tree, below a top-level directory, is
    /// walked as the whole walk would walk it (its entries split in
    /// parallel): every file under the link's path, the link listed as a
    /// directory, a loop below it reported, and an excluded link skipped.
    #[cfg(unix)]
    #[test]
    fn links_to_directories_of_the_tree_are_walked_through() {
        let dir = tree(&["roles/a/tasks/main.yml", "roles/b/x.yml", "roles/top.yml"]);
        let d = dir.path();
        std::fs::create_dir_all(d.join("extra")).expect("mkdir");
        std::os::unix::fs::symlink("../roles", d.join("extra/roles")).expect("link");
        std::os::unix::fs::symlink("../roles", d.join("extra/skipped")).expect("link");
        // A loop below the link: back to the directory it points to.
        std::os::unix::fs::symlink("..", d.join("roles/b/up")).expect("link");
        let sources = SourceMap::new(d);
        let mut diags = Vec::new();
        let found = discover(
            d,
            &Excludes::new(&["extra/skipped".into()]),
            &sources,
            &mut diags,
        );
        let files: Vec<&str> = found.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(
            files,
            [
                "extra/roles/a/tasks/main.yml",
                "extra/roles/b/x.yml",
                "extra/roles/top.yml",
                "roles/a/tasks/main.yml",
                "roles/b/x.yml",
                "roles/top.yml",
            ]
        );
        assert_eq!(found.files[0].kind, FileKind::Tasks);
        // Taken from the walk of the target: an alias of the same file
        // there. `b/` holds a link, so it was walked again; `top.yml` was
        // listed.
        assert_eq!(
            found.files[0].same_as.as_deref(),
            Some(d.join("roles/a/tasks/main.yml").as_path())
        );
        assert!(found.files[1..].iter().all(|f| f.same_as.is_none()));
        let dirs: Vec<String> = found.dirs.iter().map(|p| display_path(d, p)).collect();
        assert!(dirs.iter().any(|p| p == "extra/roles"), "{dirs:?}");
        assert!(dirs.iter().any(|p| p == "extra/roles/a/tasks"), "{dirs:?}");
        let loops = diags
            .iter()
            .filter(|g| g.message.contains("symbolic link loop"))
            .count();
        // `roles/b/up` seen from `roles/` and from `extra/roles/`.
        assert_eq!(loops, 2, "{diags:?}");
    }

    /// Below a link to a directory of the tree, a directory the tree's walk
    /// listed is taken from that walk, renamed, only where nothing below it
    /// depends on the path (a link, an excluded entry): the result is the
    /// walk through the link, entry for entry.
    #[cfg(unix)]
    #[test]
    fn listings_reached_through_a_link_are_reused_only_where_the_path_does_not_matter() {
        let dir = tree(&[
            "roles/plain/tasks/main.yml",
            "roles/plain/defaults/main.yml",
            "roles/linked/tasks/main.yml",
            "roles/cut/tasks/main.yml",
            "roles/other/x.yml",
        ]);
        let d = dir.path();
        std::fs::create_dir_all(d.join("extra")).expect("mkdir");
        std::os::unix::fs::symlink("../roles", d.join("extra/roles")).expect("link");
        // A link below the target: walked through under each name.
        std::os::unix::fs::symlink("../other", d.join("roles/linked/dep")).expect("link");
        let sources = SourceMap::new(d);
        let mut diags = Vec::new();
        // Excluded under the link's name only.
        let found = discover(
            d,
            &Excludes::new(&["extra/roles/cut/tasks".into()]),
            &sources,
            &mut diags,
        );
        let files: Vec<&str> = found.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(
            files,
            [
                "extra/roles/linked/dep/x.yml",
                "extra/roles/linked/tasks/main.yml",
                "extra/roles/other/x.yml",
                "extra/roles/plain/defaults/main.yml",
                "extra/roles/plain/tasks/main.yml",
                "roles/cut/tasks/main.yml",
                "roles/linked/dep/x.yml",
                "roles/linked/tasks/main.yml",
                "roles/other/x.yml",
                "roles/plain/defaults/main.yml",
                "roles/plain/tasks/main.yml",
            ]
        );
        let kinds: Vec<FileKind> = found.files.iter().map(|f| f.kind).collect();
        assert_eq!(kinds[3], FileKind::RoleDefaults, "{files:?}");
        assert_eq!(kinds[4], FileKind::Tasks, "{files:?}");
        let dirs: Vec<String> = found.dirs.iter().map(|p| display_path(d, p)).collect();
        for listed in [
            "extra/roles",
            "extra/roles/plain/defaults",
            "extra/roles/linked/dep",
            "extra/roles/cut",
        ] {
            assert!(dirs.iter().any(|p| p == listed), "{listed}: {dirs:?}");
        }
        assert!(
            !dirs.iter().any(|p| p == "extra/roles/cut/tasks"),
            "{dirs:?}"
        );
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn excludes_paths_and_globs() {
        let ex = Excludes::new(&["contrib/".into(), "tests/**/*.yml".into(), "*.bak".into()]);
        assert!(ex.matches("contrib/x/y.yml"));
        assert!(ex.matches("tests/a/b.yml"));
        assert!(ex.matches("a.bak"));
        assert!(!ex.matches("roles/a.yml"));
    }
}
