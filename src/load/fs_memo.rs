//! The file system as one run sees it: `stat`, canonical paths, listings
//! and bounded texts, each asked of the system once per path.
//!
//! Speed machinery only: the answers cannot change in a run that writes
//! nothing, so a memo never gives an answer the system would not; where a
//! walk already knows an answer (a listing, another path to the same file)
//! the system is not asked at all.

use super::read::read_text_of_size;
use super::{PathMap, locked};
use crate::discover::{Listed, Listing};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file's device and inode.
pub type FileIdentity = (u64, u64);

// The same signature as the version for systems without inodes.
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)]
fn identity(m: &std::fs::Metadata) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> Option<FileIdentity> {
    None
}

/// What `stat` (following links) said about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// Nothing there, or it could not be asked (a dangling link, no permission).
    Missing,
    /// A regular file of this many bytes.
    File(u64),
    Dir,
    /// A device, a FIFO, a socket.
    Other,
}

/// The file system as seen by one run: each path is asked about once, and
/// files the analysis reads beside the YAML (templates, copied files) are
/// read once. Building a model probes the same role and template paths once
/// per play, and the analysis reads a template once per task that renders
/// it; the answers cannot change in a run that writes
/// nothing, except when another program edits the tree meanwhile, and then
/// one consistent view is the better answer anyway.
#[derive(Debug, Default)]
pub struct FsMemo {
    stats: Mutex<PathMap<(Stat, Option<FileIdentity>)>>,
    /// Aliases a walk found: paths that name the same file as another path
    /// ([`FsMemo::know_same`]), with that path.
    aliases: Mutex<PathMap<PathBuf>>,
    canonical: Mutex<PathMap<Option<PathBuf>>>,
    texts: Mutex<PathMap<Option<Arc<str>>>>,
    /// Directories a walk listed whole ([`FsMemo::know_listings`]), under
    /// the path the walk spelled and, when that is relative, under the same
    /// path below the working directory too.
    listings: Mutex<PathMap<Arc<Listing>>>,
    /// The working directory, asked once: every relative path is resolved
    /// against it.
    cwd: std::sync::OnceLock<Option<PathBuf>>,
}

/// `dir` (relative) below `cwd`, spelled as `FsMemo::resolve` builds paths:
/// no `.` components. `None` when `dir` is absolute or climbs with `..`.
pub(super) fn absolute_spelling(cwd: &Path, dir: &Path) -> Option<PathBuf> {
    use std::path::Component;
    if !dir.is_relative() {
        return None;
    }
    let mut out = cwd.to_path_buf();
    for c in dir.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(name) => out.push(name),
            _ => return None,
        }
    }
    Some(out)
}

/// `path` split at its last separator, as its directory and its last name,
/// without parsing its components (a `stat` memo miss asks this of every
/// path); `None` when the name is empty, `.` or `..`, or the directory is.
#[cfg(unix)]
fn dir_and_name(path: &Path) -> Option<(&OsStr, &OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let at = bytes.iter().rposition(|&b| b == b'/')?;
    let (dir, name) = (&bytes[..at], &bytes[at + 1..]);
    if dir.is_empty() || matches!(name, b"" | b"." | b"..") {
        return None;
    }
    Some((OsStr::from_bytes(dir), OsStr::from_bytes(name)))
}

#[cfg(not(unix))]
fn dir_and_name(path: &Path) -> Option<(&OsStr, &OsStr)> {
    Some((path.parent()?.as_os_str(), path.file_name()?))
}

impl FsMemo {
    /// `stat` of `path`, following links.
    pub fn stat(&self, path: &Path) -> Stat {
        self.stat_and_identity(path).0
    }

    /// The device and inode of a regular file (Unix), which name the file
    /// whatever path reaches it (a link, a linked directory, a hard link).
    pub fn identity(&self, path: &Path) -> Option<FileIdentity> {
        self.stat_and_identity(path).1
    }

    fn stat_and_identity(&self, path: &Path) -> (Stat, Option<FileIdentity>) {
        if let Some(s) = locked(&self.stats).get(path.as_os_str()) {
            return *s;
        }
        let alias_of = locked(&self.aliases).get(path.as_os_str()).cloned();
        if let Some(other) = alias_of {
            let s = self.stat_and_identity(&other);
            locked(&self.stats).insert(path.as_os_str().to_owned(), s);
            return s;
        }
        if self.listed(path) == Some(None) {
            let s = (Stat::Missing, None);
            locked(&self.stats).insert(path.as_os_str().to_owned(), s);
            return s;
        }
        // Nothing is below what is not a directory: a role without `vars/`
        // answers its four `vars/main*` probes with one `stat`.
        let in_dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .is_none_or(|p| self.stat(p) == Stat::Dir);
        let meta = if in_dir {
            std::fs::metadata(path).ok()
        } else {
            None
        };
        let s = match meta {
            Some(m) if m.is_file() => (Stat::File(m.len()), identity(&m)),
            Some(m) if m.is_dir() => (Stat::Dir, None),
            Some(_) => (Stat::Other, None),
            None => (Stat::Missing, None),
        };
        locked(&self.stats).insert(path.as_os_str().to_owned(), s);
        s
    }

    /// Records aliases a walk found: paths that name the same file as another path
    /// (a file below a link to a directory of the tree, and the same file
    /// below the link's target): `stat` asks about the other path only. A
    /// tree that links to its own roles reaches most of their files that way.
    pub fn know_same(&self, pairs: impl IntoIterator<Item = (PathBuf, PathBuf)>) {
        let mut aliases = locked(&self.aliases);
        for (path, other) in pairs {
            aliases.insert(path.into_os_string(), other);
        }
    }

    /// Records the listings of directories a walk listed whole: a path
    /// below one is known to be missing when its name is not in it (on
    /// Linux, whose file systems tell names apart by case; elsewhere `stat`
    /// is asked), and not to be a link when its listing says it is a
    /// regular file or a directory. Role lookups probe many absent
    /// directories and files, and resolving a path `lstat`s each of its
    /// components: the walk already saw most of them.
    pub fn know_listings(&self, listings: Vec<(PathBuf, Listing)>) {
        let cwd = self.cwd();
        let mut known = locked(&self.listings);
        known.reserve(listings.len() * 2);
        for (dir, l) in listings {
            let l = Arc::new(l);
            // A relative directory is also known by its absolute spelling,
            // which `resolve` asks about (a tree checked as `.` is listed
            // under relative paths and resolved under absolute ones).
            if let Some(absolute) = cwd.and_then(|cwd| absolute_spelling(cwd, &dir)) {
                known.insert(absolute.into_os_string(), Arc::clone(&l));
            }
            known.insert(dir.into_os_string(), l);
        }
    }

    /// The working directory (asked of the system once per run; preflint
    /// never changes it).
    fn cwd(&self) -> Option<&Path> {
        self.cwd
            .get_or_init(|| std::env::current_dir().ok())
            .as_deref()
    }

    /// What the listing of `path`'s directory says of it: `None` when no
    /// listing is known (or the path does not end in a name), `Some(None)`
    /// when the listing holds no such name and absent names can be trusted
    /// to be absent.
    #[allow(clippy::option_option)]
    fn listed(&self, path: &Path) -> Option<Option<Listed>> {
        let (dir, name) = dir_and_name(path)?;
        let listings = locked(&self.listings);
        match listings.get(dir)?.get(name) {
            Some(kind) => Some(Some(kind)),
            None if cfg!(target_os = "linux") => Some(None),
            None => None,
        }
    }

    /// Records directories a walk listed, as `stat` would find them.
    pub fn know_dirs(&self, dirs: Vec<PathBuf>) {
        let mut stats = locked(&self.stats);
        for d in dirs {
            stats.insert(d.into_os_string(), (Stat::Dir, None));
        }
    }

    /// Whether `path` is a regular file (links followed), as [`Path::is_file`].
    pub fn is_file(&self, path: &Path) -> bool {
        matches!(self.stat(path), Stat::File(_))
    }

    /// Whether `path` is a directory (links followed), as [`Path::is_dir`].
    pub fn is_dir(&self, path: &Path) -> bool {
        self.stat(path) == Stat::Dir
    }

    /// The canonical path (links and `..` resolved), or `path` itself when
    /// it cannot be resolved.
    pub fn canonical(&self, path: &Path) -> PathBuf {
        self.resolved(path).unwrap_or_else(|| path.to_path_buf())
    }

    /// `realpath` one component at a time: each directory above a path is
    /// resolved once and each new name costs one `lstat`. `canonicalize`
    /// asks `readlink` for every component of every path, again for each
    /// path below the same directories.
    fn resolved(&self, path: &Path) -> Option<PathBuf> {
        if let Some(c) = locked(&self.canonical).get(path.as_os_str()) {
            return c.clone();
        }
        let c = self.resolve(path);
        locked(&self.canonical).insert(path.as_os_str().to_owned(), c.clone());
        c
    }

    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        use std::path::Component;
        if path.is_relative() {
            return self.resolved(&self.cwd()?.join(path));
        }
        let mut parts = path.components();
        let last = parts.next_back();
        let parent = parts.as_path();
        match last {
            Some(Component::Normal(name)) => {
                let here = self.resolved(parent)?.join(name);
                match self.listed(&here) {
                    Some(Some(Listed::File | Listed::Dir)) => return Some(here),
                    Some(None) => return None,
                    Some(Some(Listed::Other)) | None => {}
                }
                let meta = std::fs::symlink_metadata(&here).ok()?;
                if meta.file_type().is_symlink() {
                    here.canonicalize().ok()
                } else {
                    Some(here)
                }
            }
            Some(Component::ParentDir) => {
                let dir = self.resolved(parent)?;
                // `file/..` is an error, as for realpath.
                if self.stat(&dir) != Stat::Dir {
                    return None;
                }
                Some(dir.parent().map_or_else(|| dir.clone(), Path::to_path_buf))
            }
            _ => path.canonicalize().ok(),
        }
    }

    /// [`read_text_bounded`](super::read_text_bounded), once per path.
    pub fn text_bounded(&self, path: &Path) -> Option<Arc<str>> {
        if let Some(t) = locked(&self.texts).get(path.as_os_str()) {
            return t.clone();
        }
        // The size from the memo's `stat`: the file was usually probed
        // before it is read.
        let t: Option<Arc<str>> = match self.stat(path) {
            Stat::File(len) => read_text_of_size(path, len).map(Into::into),
            _ => None,
        };
        locked(&self.texts).insert(path.as_os_str().to_owned(), t.clone());
        t
    }
}
