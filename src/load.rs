//! Reading and parsing files, in parallel, with one cache for the whole run.
//!
//! Every file preflint reads goes through [`Loader`]: size, binary and UTF-8
//! checks, registration in the [`SourceMap`], and YAML parsing. Files found by
//! discovery are planned up front ([`Loader::plan`]) and parsed with rayon
//! ([`Loader::fill`]) while the model is built from them: each file once, by
//! whichever thread needs it first. Files reached otherwise (a role in a
//! `roles_path` outside the tree) are parsed on first use.

use crate::HashMap;
use crate::diagnostic::{Diagnostic, code};
use crate::discover::{Listed, Listing};
use crate::source::{FileId, SourceMap, Span, line_col};
use crate::yaml::{self, YamlFile};
use rayon::prelude::*;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A map keyed by a path's bytes: `Path`'s own `Hash` walks the components
/// and was ~10% of a run's instructions in these maps (kubespray whole tree,
/// callgrind). Two spellings of one path (`a//b`, `a/b`) are two keys,
/// which costs a second read at most.
type PathMap<V> = HashMap<OsString, V>;

/// Largest file preflint reads (bytes); larger files get a diagnostic.
pub const MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;
/// Most bytes read in one run by default, all files together (about 100
/// times kubespray's YAML; the model takes about 15 bytes of memory per byte
/// of YAML); files past it get a diagnostic. `--max-total-mib` changes it.
/// Admission follows the sorted discovery order, then the order the model
/// reaches files, so the same files are kept on every run.
pub const MAX_TOTAL_SIZE: u64 = 128 * 1024 * 1024;

/// A file after reading and, for YAML, parsing.
#[derive(Debug)]
pub struct Loaded {
    pub id: FileId,
    /// The text, when it could be read as UTF-8.
    pub text: Option<Arc<str>>,
    pub yaml: YamlFile,
    /// Problems reading the file (not YAML problems: those are in `yaml`).
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// The first document, when the file parsed.
    #[must_use]
    pub fn doc(&self) -> Option<&yaml::Node> {
        self.yaml.docs.first()
    }

    /// Whether the file was read and parsed without a fatal problem.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.text.is_some() && !self.yaml.failed
    }
}

pub struct Loader {
    pub sources: Arc<SourceMap>,
    /// What the file system said, asked once per path.
    pub fs: Arc<FsMemo>,
    cache: Mutex<PathMap<Arc<Loaded>>>,
    /// Files planned for reading ([`Loader::plan`]), read by the first
    /// thread that needs them.
    planned: Mutex<PathMap<Arc<Pending>>>,
    /// Paths preloaded as another path's file (see [`Loader::preload`]),
    /// with that path.
    twins: Mutex<PathMap<PathBuf>>,
    /// Bytes still allowed by the run's total (default [`MAX_TOTAL_SIZE`]).
    budget: Mutex<u64>,
    total: u64,
}

/// A file planned for reading: admitted when planned, read once.
struct Pending {
    admission: Admission,
    parse_yaml: bool,
    loaded: OnceLock<Arc<Loaded>>,
}

/// The files [`Loader::plan`] admitted, in order, for [`Loader::fill`].
pub struct Plan(Vec<(PathBuf, Arc<Pending>)>);

/// Whether a file may be read: within the total budget, or why not.
#[derive(Clone, Copy)]
enum Admission {
    Yes,
    /// The run has read this many bytes already.
    OverBudget,
}

impl Loader {
    /// Frees the cache (every file parsed) on the worker threads, a share
    /// of the files each: the model holds what it needs of them.
    pub fn free_in_parallel(self) {
        drop(std::mem::take(&mut *locked(&self.planned)));
        let cache = std::mem::take(&mut *locked(&self.cache));
        let files: Vec<Arc<Loaded>> = cache.into_values().collect();
        files.into_par_iter().for_each(drop);
    }

    #[must_use]
    pub fn new(sources: Arc<SourceMap>) -> Self {
        Self::with_total(sources, MAX_TOTAL_SIZE)
    }

    /// A loader that reads at most `total` bytes of files in the run.
    #[must_use]
    pub fn with_total(sources: Arc<SourceMap>, total: u64) -> Self {
        Loader {
            sources,
            fs: Arc::new(FsMemo::default()),
            cache: Mutex::default(),
            planned: Mutex::default(),
            twins: Mutex::default(),
            budget: Mutex::new(total),
            total,
        }
    }

    /// Reads and parses `paths` in parallel into the cache.
    ///
    /// A path that names the same file as another of `paths` (same device
    /// and inode: a linked directory, a linked file, a hard link) is read
    /// once: the other paths' state and diagnostics are its
    /// ([`Loader::status`], [`Loader::diagnostics`]), and it is parsed from
    /// that text, under its own path, when the model reaches it
    /// ([`Loader::yaml`]). Kubespray reaches 1,258 YAML paths through its
    /// links, 583 of them distinct files.
    pub fn preload(&self, paths: &[PathBuf], parse_yaml: bool) {
        self.fill(&self.plan(paths, parse_yaml));
    }

    /// Plans the reading of `paths` as [`Loader::preload`] reads them,
    /// reading nothing yet: which path is read for each file, and which
    /// files the run's budget admits (decided here, in order, so the same
    /// files are kept whatever the thread timing). A planned file is read
    /// by [`Loader::fill`] or, if the model needs it first, by
    /// [`Loader::yaml`]: once either way.
    pub fn plan(&self, paths: &[PathBuf], parse_yaml: bool) -> Plan {
        // The path read for a file is its shortest (fewest components, then
        // first in order): usually where the file lives, which the model
        // reaches, rather than a link into it (`extra/roles -> ../roles`).
        // The `stat`s first, in parallel (~3 ms for kubespray's 1,258 paths
        // on one thread); the choices below are made in order.
        let ids: Vec<Option<FileIdentity>> =
            paths.par_iter().map(|p| self.fs.identity(p)).collect();
        let mut read_as: HashMap<FileIdentity, &PathBuf> = HashMap::default();
        for (p, id) in paths.iter().zip(&ids) {
            if let Some(id) = *id {
                let depth = |p: &Path| p.components().count();
                read_as
                    .entry(id)
                    .and_modify(|o| {
                        if depth(p) < depth(o) {
                            *o = p;
                        }
                    })
                    .or_insert(p);
            }
        }
        let mut admitted: Vec<(PathBuf, Arc<Pending>)> = Vec::new();
        {
            let mut twins = locked(&self.twins);
            for (p, id) in paths.iter().zip(&ids) {
                if let Some(first) = id.and_then(|id| read_as.get(&id))
                    && *first != p
                {
                    twins.insert(p.as_os_str().to_owned(), (*first).clone());
                    continue;
                }
                let pending = Pending {
                    admission: self.admit(p),
                    parse_yaml,
                    loaded: OnceLock::new(),
                };
                admitted.push((p.clone(), Arc::new(pending)));
            }
        }
        let mut planned = locked(&self.planned);
        for (p, pending) in &admitted {
            planned
                .entry(p.as_os_str().to_owned())
                .or_insert_with(|| Arc::clone(pending));
        }
        Plan(admitted)
    }

    /// Reads and parses the planned files not read yet, in parallel, into
    /// the cache.
    pub fn fill(&self, plan: &Plan) {
        plan.0.par_iter().for_each(|(p, pending)| {
            self.settle(p, pending);
        });
    }

    /// A planned file, read now unless it was already; a file read before it
    /// was planned stays as it was read.
    fn settle(&self, path: &Path, pending: &Pending) -> Arc<Loaded> {
        if let Some(l) = locked(&self.cache).get(path.as_os_str()) {
            return Arc::clone(l);
        }
        // No lock is held while reading: another thread needing this file
        // waits for it, and reading takes no other file's turn.
        let l = pending
            .loaded
            .get_or_init(|| Arc::new(self.read(path, pending.parse_yaml, pending.admission)));
        Arc::clone(
            locked(&self.cache)
                .entry(path.as_os_str().to_owned())
                .or_insert_with(|| Arc::clone(l)),
        )
    }

    /// The length of the YAML file at `path` as the run counts it, without
    /// reading a planned file (or a twin of one): its size when the plan
    /// admitted it and it is not too large to read. Other files: the length
    /// of their text, read now if need be.
    pub fn yaml_size(&self, path: &Path) -> Option<usize> {
        let twin_of = locked(&self.twins).get(path.as_os_str()).cloned();
        if let Some(first) = twin_of {
            return self.yaml_size(&first);
        }
        let pending = locked(&self.planned).get(path.as_os_str()).cloned();
        match pending {
            Some(p) => match (p.admission, self.fs.stat(path)) {
                (Admission::Yes, Stat::File(len)) if len <= MAX_FILE_SIZE => {
                    usize::try_from(len).ok()
                }
                _ => None,
            },
            None => self.status(path).1,
        }
    }

    /// The loaded file at `path`, reading it on first use.
    pub fn yaml(&self, path: &Path) -> Arc<Loaded> {
        if let Some(l) = locked(&self.cache).get(path.as_os_str()) {
            return Arc::clone(l);
        }
        let pending = locked(&self.planned).get(path.as_os_str()).cloned();
        if let Some(p) = pending {
            return self.settle(path, &p);
        }
        let twin_of = locked(&self.twins).get(path.as_os_str()).cloned();
        let first_text = twin_of.and_then(|o| self.yaml(&o).text.clone());
        let l = match first_text {
            Some(text) => {
                let id = self.sources.add(path, Arc::clone(&text));
                Loaded {
                    id,
                    yaml: parse(path, id, &text),
                    text: Some(text),
                    diagnostics: Vec::new(),
                }
            }
            None => self.read(path, true, self.admit(path)),
        };
        locked(&self.cache)
            .entry(path.as_os_str().to_owned())
            .or_insert(Arc::new(l))
            .clone()
    }

    /// Whether the YAML file at `path` was read and parsed ([`Loaded::ok`])
    /// and its length in bytes, without parsing a preloaded twin.
    pub fn status(&self, path: &Path) -> (bool, Option<usize>) {
        let cached = locked(&self.cache).get(path.as_os_str()).cloned();
        if let Some(l) = cached {
            return (l.ok(), l.text.as_ref().map(|t| t.len()));
        }
        let twin_of = locked(&self.twins).get(path.as_os_str()).cloned();
        match twin_of {
            Some(first) => self.status(&first),
            None => {
                let l = self.yaml(path);
                (l.ok(), l.text.as_ref().map(|t| t.len()))
            }
        }
    }

    /// Every read and parse problem of the files planned (preloaded), twins
    /// included (a twin of a file with problems is parsed here, so that its
    /// problems carry its own path). Files read otherwise report their
    /// problems where they are used.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let twins: Vec<(PathBuf, PathBuf)> = locked(&self.twins)
            .iter()
            .map(|(t, f)| (PathBuf::from(t), f.clone()))
            .collect();
        for (twin, first) in &twins {
            let f = self.yaml(first);
            if !f.diagnostics.is_empty() || !f.yaml.diagnostics.is_empty() {
                self.yaml(twin);
            }
        }
        // In no particular order: the caller sorts them (most files have
        // none, so only those with problems are looked up). The three maps
        // are held together here only: no other code holds one while
        // taking another.
        let planned = locked(&self.planned);
        let twin_paths = locked(&self.twins);
        locked(&self.cache)
            .iter()
            .filter(|(_, l)| !l.diagnostics.is_empty() || !l.yaml.diagnostics.is_empty())
            .filter(|(p, _)| planned.contains_key(*p) || twin_paths.contains_key(*p))
            .flat_map(|(_, l)| l.diagnostics.iter().chain(&l.yaml.diagnostics).cloned())
            .collect()
    }

    /// Reads a file that is not YAML (an INI inventory, a template) with the
    /// same checks (size, binary, UTF-8) and registers it; not cached.
    pub fn text(&self, path: &Path) -> Loaded {
        self.read(path, false, self.admit(path))
    }

    /// Takes a file's size from the run's budget (files too large to read
    /// anyway, and directories, cost nothing).
    fn admit(&self, path: &Path) -> Admission {
        let size = match self.fs.stat(path) {
            Stat::File(len) if len <= MAX_FILE_SIZE => len,
            _ => return Admission::Yes,
        };
        let mut left = self
            .budget
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if size > *left {
            return Admission::OverBudget;
        }
        *left -= size;
        Admission::Yes
    }

    /// Every file loaded so far, sorted by path.
    #[must_use]
    pub fn all(&self) -> Vec<(PathBuf, Arc<Loaded>)> {
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut v: Vec<_> = cache
            .iter()
            .map(|(p, l)| (PathBuf::from(p), Arc::clone(l)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    fn read(&self, path: &Path, parse_yaml: bool, admission: Admission) -> Loaded {
        let fail = |id: FileId, d: Diagnostic| Loaded {
            id,
            text: None,
            yaml: YamlFile {
                failed: true,
                ..YamlFile::default()
            },
            diagnostics: vec![d],
        };
        // The file is not read: an error at its start.
        let refuse = |code: &'static str, message: String, help: &str| {
            let id = self.sources.add(path, "".into());
            fail(
                id,
                Diagnostic::error(code, Span::file_start(id), message).with_help(help),
            )
        };
        let stat = self.fs.stat(path);
        match stat {
            Stat::File(len) if len > MAX_FILE_SIZE => {
                return refuse(
                    code::TOO_LARGE,
                    format!(
                        "file is {len} bytes, over the {MAX_FILE_SIZE}-byte limit; not analysed"
                    ),
                    "exclude it with --exclude if it is not Ansible content",
                );
            }
            Stat::Dir => {
                return refuse(
                    code::IO,
                    "expected a file, found a directory".into(),
                    "point the include or role at a file",
                );
            }
            // A device or a FIFO (`/dev/zero`, `/dev/stdin`) never ends.
            Stat::Other => {
                return refuse(
                    code::IO,
                    "not a regular file (a device or a pipe); not read".into(),
                    "point the include or role at a regular file",
                );
            }
            _ => {}
        }
        if let Admission::OverBudget = admission {
            return refuse(
                code::TOO_LARGE,
                format!(
                    "the files read so far total over {} bytes; this one is not analysed",
                    self.total
                ),
                "exclude large files that are not Ansible content with --exclude, or raise --max-total-mib",
            );
        }
        let size_hint = match stat {
            Stat::File(len) => len,
            _ => 0,
        };
        let bytes = match read_at_most(path, MAX_FILE_SIZE, size_hint) {
            Ok(Some(b)) => b,
            // It grew, or its size was not known (`/proc` files say 0).
            Ok(None) => {
                return refuse(
                    code::TOO_LARGE,
                    format!("file is over the {MAX_FILE_SIZE}-byte limit; not analysed"),
                    "exclude it with --exclude if it is not Ansible content",
                );
            }
            Err(e) => {
                return refuse(
                    code::IO,
                    format!("cannot read file: {e}"),
                    "check that the path exists and is readable",
                );
            }
        };
        if memchr::memchr(0, &bytes).is_some() {
            return refuse(
                code::BINARY,
                "binary file (contains NUL bytes); not analysed".into(),
                "rename it so it does not look like YAML, or exclude it",
            );
        }
        let text: Arc<str> = match String::from_utf8(bytes) {
            Ok(s) => s.into(),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let prefix = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
                let id = self.sources.add(path, lossy.into());
                let (line, col) = line_col(&prefix, prefix.len());
                let span = Span {
                    file: id,
                    start: u32::try_from(valid).unwrap_or(u32::MAX),
                    end: u32::try_from(valid + 1).unwrap_or(u32::MAX),
                    line,
                    col,
                };
                return fail(
                    id,
                    Diagnostic::error(
                        code::NOT_UTF8,
                        span,
                        "invalid UTF-8; the file is not analysed",
                    )
                    .with_help("re-encode the file as UTF-8 (Ansible reads YAML as UTF-8)"),
                );
            }
        };
        let id = self.sources.add(path, Arc::clone(&text));
        let yaml = if parse_yaml {
            parse(path, id, &text)
        } else {
            YamlFile::default()
        };
        Loaded {
            id,
            text: Some(text),
            yaml,
            diagnostics: Vec::new(),
        }
    }
}

/// The YAML of the file at `path`; a panic while parsing it fails the file
/// with an internal error, and the run goes on.
fn parse(path: &Path, id: FileId, text: &str) -> YamlFile {
    let unit = crate::internal_error::Unit::File;
    let label = || path.display().to_string();
    crate::internal_error::catch(unit, label, Span::file_start(id), || yaml::parse(id, text))
        .unwrap_or_else(|d| YamlFile {
            failed: true,
            diagnostics: vec![d],
            ..YamlFile::default()
        })
}

/// The file's bytes, or `None` when it holds more than `limit` bytes.
/// Reads a file the analysis looks into without loading it as Ansible
/// content (a template a task renders, a file it copies): regular files of at
/// most [`MAX_FILE_SIZE`] bytes, not binary (NUL bytes); invalid UTF-8 is
/// replaced, as Ansible's template module reads such files too. `None` when
/// the file is not read: its content is then unknown to the analysis.
#[must_use]
pub fn read_text_bounded(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    read_text_of_size(path, m.len())
}

/// [`read_text_bounded`] of a regular file whose size `stat` gave.
fn read_text_of_size(path: &Path, len: u64) -> Option<String> {
    if len > MAX_FILE_SIZE {
        return None;
    }
    bounded_text(read_at_most(path, MAX_FILE_SIZE, len).ok()??)
}

/// The text of a file's bytes as [`read_text_bounded`] takes it: `None`
/// for a binary file.
fn bounded_text(bytes: Vec<u8>) -> Option<String> {
    if memchr::memchr(0, &bytes).is_some() {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `size_hint` (the size `stat` gave) sizes the buffer so that a file is read
/// in one call plus the one that sees its end.
fn read_at_most(path: &Path, limit: u64, size_hint: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(usize::try_from(size_hint.min(limit) + 1).unwrap_or(0));
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// A file's device and inode.
pub type FileIdentity = (u64, u64);

#[cfg(unix)]
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
/// per play (kubespray: ~21,000 `stat` calls for ~3,100 paths, each template
/// read up to 90 times); the answers cannot change in a run that writes
/// nothing, except when another program edits the tree meanwhile, and then
/// one consistent view is the better answer anyway.
#[derive(Debug, Default)]
pub struct FsMemo {
    stats: Mutex<PathMap<(Stat, Option<FileIdentity>)>>,
    /// Paths a walk found to name the same file as another path
    /// ([`FsMemo::know_same`]).
    same: Mutex<PathMap<PathBuf>>,
    canonical: Mutex<PathMap<Option<PathBuf>>>,
    texts: Mutex<PathMap<Option<Arc<str>>>>,
    /// Directories a walk listed whole ([`FsMemo::know_listings`]), under
    /// the path the walk spelled and, when that is relative, under the same
    /// path below the working directory too.
    listings: Mutex<PathMap<Arc<Listing>>>,
    /// The working directory, asked once: relative paths are resolved
    /// against it (kubespray's whole tree checked as `.`: ~300 `getcwd`
    /// calls before).
    cwd: std::sync::OnceLock<Option<PathBuf>>,
}

/// `dir` (relative) below `cwd`, spelled as `FsMemo::resolve` builds paths:
/// no `.` components. `None` when `dir` is absolute or climbs with `..`.
fn absolute_spelling(cwd: &Path, dir: &Path) -> Option<PathBuf> {
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

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
        let same = locked(&self.same).get(path.as_os_str()).cloned();
        if let Some(other) = same {
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

    /// Records paths a walk found to name the same file as another path
    /// (a file below a link to a directory of the tree, and the same file
    /// below the link's target): `stat` asks about the other path only.
    /// Kubespray's whole tree reaches 1,258 YAML paths, ~600 of them
    /// through `extra_playbooks/roles -> ../roles`.
    pub fn know_same(&self, pairs: impl IntoIterator<Item = (PathBuf, PathBuf)>) {
        let mut same = locked(&self.same);
        for (path, other) in pairs {
            same.insert(path.into_os_string(), other);
        }
    }

    /// Records the listings of directories a walk listed whole: a path
    /// below one is known to be missing when its name is not in it (on
    /// Linux, whose file systems tell names apart by case; elsewhere `stat`
    /// is asked), and not to be a link when its listing says it is a
    /// regular file or a directory. On kubespray's whole tree ~500 probes
    /// of absent role directories and files, and ~400 `lstat`s of the
    /// components of paths being resolved.
    pub fn know_listings(&self, listings: Vec<(PathBuf, Listing)>) {
        let cwd = self.cwd();
        let mut known = locked(&self.listings);
        known.reserve(listings.len() * 2);
        for (dir, l) in listings {
            let l = Arc::new(l);
            // A relative directory is also known by its absolute spelling,
            // which `resolve` asks about (kubespray's whole tree checked as
            // `.`: ~440 `lstat`s of components already listed, before).
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
    /// asks `readlink` for every component of every path (kubespray:
    /// ~4,000 calls for ~530 distinct directories).
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

    /// [`read_text_bounded`], once per path.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn loader(root: &Path) -> Loader {
        Loader::new(Arc::new(SourceMap::new(root)))
    }

    #[cfg(unix)]
    #[test]
    fn a_file_reached_by_two_paths_is_read_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("roles/r/tasks/main.yml");
        std::fs::create_dir_all(real.parent().expect("parent")).expect("mkdir");
        std::fs::write(&real, "- debug: msg=hi\n").expect("write");
        std::fs::create_dir_all(dir.path().join("extra")).expect("mkdir");
        std::os::unix::fs::symlink("../roles", dir.path().join("extra/roles")).expect("link");
        let link = dir.path().join("extra/roles/r/tasks/main.yml");
        let l = loader(dir.path());
        // The link comes first in order; the shorter path is the one read.
        l.preload(&[link.clone(), real.clone()], true);
        assert_eq!(l.all().len(), 1);
        assert_eq!(l.all()[0].0, real);
        assert_eq!(l.status(&link), (true, Some(16)));
        assert_eq!(l.all().len(), 1, "status does not parse the twin");
        let (a, b) = (l.yaml(&real), l.yaml(&link));
        assert_ne!(a.id, b.id);
        assert_eq!(a.text, b.text);
        assert_eq!(b.doc().map(|d| d.span.file), Some(b.id));
        assert_eq!(l.all().len(), 2);
    }

    #[test]
    fn a_planned_file_is_read_once_whoever_needs_it_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (dir.path().join("a.yml"), dir.path().join("b.yml"));
        std::fs::write(&a, "x: 1\n").expect("write");
        std::fs::write(&b, "- [\n").expect("write");
        let l = loader(dir.path());
        let plan = l.plan(&[a.clone(), b.clone()], true);
        assert!(l.all().is_empty(), "planning reads nothing");
        // The sizes the run counts come from the plan, without reading.
        assert_eq!(l.yaml_size(&a), Some(5));
        assert_eq!(l.yaml_size(&b), Some(4));
        assert!(l.all().is_empty());
        // The model reaches `a` before the parallel fill does.
        let first = l.yaml(&a);
        assert_eq!(l.all().len(), 1);
        l.fill(&plan);
        assert_eq!(l.all().len(), 2);
        assert!(Arc::ptr_eq(&first, &l.yaml(&a)), "read once");
        // The planned files' problems are the loader's; a file read later
        // reports its own where it is used.
        let c = dir.path().join("c.yml");
        std::fs::write(&c, "- [\n").expect("write");
        assert!(!l.yaml(&c).ok());
        let diags = l.diagnostics();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].span.file, l.yaml(&b).id);
    }

    #[test]
    fn the_file_system_is_asked_once_per_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("t.j2");
        std::fs::write(&f, "one").expect("write");
        let fs = FsMemo::default();
        assert_eq!(fs.stat(&f), Stat::File(3));
        assert!(fs.is_file(&f) && !fs.is_dir(&f));
        assert!(fs.is_dir(dir.path()));
        assert_eq!(fs.stat(&dir.path().join("missing")), Stat::Missing);
        assert_eq!(fs.text_bounded(&f).as_deref(), Some("one"));
        assert_eq!(
            fs.canonical(&dir.path().join("x/../t.j2")),
            dir.path().join("x/../t.j2"),
            "unresolvable: the path itself"
        );
        // Later changes are not seen: one consistent view per run.
        std::fs::write(&f, "two, longer").expect("write");
        assert_eq!(fs.stat(&f), Stat::File(3));
        assert_eq!(fs.text_bounded(&f).as_deref(), Some("one"));
        assert_eq!(FsMemo::default().stat(&f), Stat::File(11));
    }

    #[test]
    fn nothing_is_below_what_is_not_a_directory() {
        let dir = crate::check::testing::tree(&[("r/tasks/main.yml", "- x\n")]);
        let d = dir.path();
        let fs = FsMemo::default();
        assert_eq!(fs.stat(&d.join("r/vars/main.yml")), Stat::Missing);
        assert_eq!(fs.stat(&d.join("r/tasks/main.yml/x")), Stat::Missing);
        assert_eq!(fs.stat(&d.join("r/tasks/main.yml")), Stat::File(4));
        // Directories a walk listed are taken as they were listed.
        let walked = FsMemo::default();
        walked.know_dirs(vec![d.join("listed")]);
        assert!(walked.is_dir(&d.join("listed")));
        assert_eq!(walked.stat(&d.join("listed/x")), Stat::Missing);
        // A path known to name the same file as another is answered for it.
        walked.know_same([(d.join("link/main.yml"), d.join("r/tasks/main.yml"))]);
        assert_eq!(walked.stat(&d.join("link/main.yml")), Stat::File(4));
        assert_eq!(
            walked.identity(&d.join("link/main.yml")),
            walked.identity(&d.join("r/tasks/main.yml"))
        );
        assert_eq!(
            walked.identity(&d.join("link/main.yml")).is_some(),
            cfg!(unix)
        );
    }

    /// A relative directory's listing is also known below the working
    /// directory, spelled as `resolve` builds paths; one that climbs with
    /// `..` or is absolute is known as spelled only.
    #[test]
    #[cfg(unix)]
    fn relative_listings_are_known_by_their_absolute_spelling() {
        let cwd = Path::new("/w/tree");
        assert_eq!(
            absolute_spelling(cwd, Path::new("./roles/r/tasks")),
            Some(PathBuf::from("/w/tree/roles/r/tasks"))
        );
        assert_eq!(
            absolute_spelling(cwd, Path::new("roles/./r")),
            Some(PathBuf::from("/w/tree/roles/r"))
        );
        assert_eq!(absolute_spelling(cwd, Path::new(".")), Some(cwd.into()));
        assert_eq!(absolute_spelling(cwd, Path::new("../other/roles")), None);
        assert_eq!(absolute_spelling(cwd, Path::new("/abs/roles")), None);
    }

    /// What a walk's listing says is taken as it was listed: a name it
    /// does not hold is missing (on Linux), one it lists as a file or a
    /// directory is not a link; a file's size still comes from `stat`.
    #[test]
    fn listed_directories_answer_for_their_entries() {
        let dir = crate::check::testing::tree(&[("r/tasks/main.yml", "- x\n")]);
        let d = dir.path().canonicalize().expect("canonical");
        let mut found = Vec::new();
        let sources = SourceMap::new(&d);
        let mut diags = Vec::new();
        for (listed, listing) in
            crate::discover::discover(&d, &Default::default(), &sources, &mut diags).listings
        {
            found.push(listed.clone());
            if listed == d.join("r/tasks") {
                let fs = FsMemo::default();
                fs.know_listings(vec![(listed, listing)]);
                // Created after the listing: not seen where absent names
                // are trusted to be absent.
                std::fs::write(d.join("r/tasks/late.yml"), "- y\n").expect("write");
                let late = d.join("r/tasks/late.yml");
                let expected = if cfg!(target_os = "linux") {
                    Stat::Missing
                } else {
                    Stat::File(4)
                };
                assert_eq!(fs.stat(&late), expected);
                assert_eq!(fs.canonical(&late), late, "unresolvable: the path itself");
                assert_eq!(fs.stat(&d.join("r/tasks/main.yml")), Stat::File(4));
                let main = d.join("r/tasks/main.yml");
                assert_eq!(fs.canonical(&main), main);
                assert_eq!(fs.text_bounded(&main).as_deref(), Some("- x\n"));
                // Outside the listed directory, `stat` answers.
                assert_eq!(fs.stat(&d.join("r/late.yml")), Stat::Missing);
                std::fs::write(d.join("r/late.yml"), "z").expect("write");
                assert_eq!(FsMemo::default().stat(&d.join("r/late.yml")), Stat::File(1));
            }
        }
        assert!(found.contains(&d.join("r/tasks")), "{found:?}");
    }

    #[cfg(unix)]
    #[test]
    fn canonical_paths_are_what_canonicalize_says() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("a/b/c")).expect("mkdir");
        std::fs::write(d.join("a/b/f.yml"), "x").expect("write");
        std::os::unix::fs::symlink("b/c", d.join("a/up")).expect("link");
        std::os::unix::fs::symlink(d.join("a/b"), d.join("abs")).expect("link");
        std::os::unix::fs::symlink("../a/b/f.yml", d.join("a/flink")).expect("link");
        std::os::unix::fs::symlink("nowhere", d.join("dangling")).expect("link");
        let fs = FsMemo::default();
        for rel in [
            "a",
            "a/b/f.yml",
            "a/up",
            "a/up/..",
            "a/up/../f.yml",
            "abs/c/../../b/f.yml",
            "a/flink",
            "a/flink/..",
            "a/b/f.yml/..",
            "a/missing/..",
            "a/missing",
            "dangling",
            "a/./b/../b/c",
            "../",
        ] {
            let p = d.join(rel);
            let want = p.canonicalize().unwrap_or_else(|_| p.clone());
            assert_eq!(fs.canonical(&p), want, "{rel}");
            assert_eq!(fs.canonical(&p), want, "{rel}, memoized");
        }
    }

    #[test]
    fn bounded_text_reads_skip_large_binary_and_special_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ok = dir.path().join("ok.j2");
        std::fs::write(&ok, b"a \xff b").expect("write");
        assert_eq!(read_text_bounded(&ok).as_deref(), Some("a \u{fffd} b"));
        let bin = dir.path().join("bin.j2");
        std::fs::write(&bin, b"a\0b").expect("write");
        assert_eq!(read_text_bounded(&bin), None);
        let big = dir.path().join("big.j2");
        let f = std::fs::File::create(&big).expect("create");
        f.set_len(MAX_FILE_SIZE + 1).expect("set_len");
        assert_eq!(read_text_bounded(&big), None);
        assert_eq!(read_text_bounded(dir.path()), None);
        assert_eq!(read_text_bounded(Path::new("/dev/zero")), None);
    }

    #[test]
    fn total_budget_keeps_the_first_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let big = "a: b\n".repeat(usize::try_from(MAX_FILE_SIZE).unwrap() / 5 - 1);
        let paths: Vec<PathBuf> = (0..10)
            .map(|i| {
                let p = dir.path().join(format!("{i:02}.yml"));
                std::fs::write(&p, &big).expect("write");
                p
            })
            .collect();
        let total = 32 * 1024 * 1024;
        let l = Loader::with_total(Arc::new(SourceMap::new(dir.path())), total);
        l.preload(&paths, false);
        let fits = usize::try_from(total / big.len() as u64).unwrap();
        for (i, p) in paths.iter().enumerate() {
            let f = l.yaml(p);
            assert_eq!(f.text.is_some(), i < fits, "{i}");
            if i >= fits {
                assert_eq!(f.diagnostics[0].code, code::TOO_LARGE);
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_not_read() {
        let l = loader(Path::new("/"));
        let f = l.yaml(Path::new("/dev/zero"));
        assert!(f.text.is_none());
        assert_eq!(f.diagnostics[0].code, code::IO);
    }
}
