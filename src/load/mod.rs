//! Reading and parsing files, in parallel, each once for the whole run.
//!
//! Every file preflint reads goes through [`Loader`]: size, binary and UTF-8
//! checks, registration in the [`SourceMap`], and YAML parsing. Files found by
//! discovery are planned up front ([`Loader::plan`]) and parsed with rayon
//! ([`Loader::fill`]) while the model is built from them: each file once, by
//! whichever thread needs it first. Files reached otherwise (a role in a
//! `roles_path` outside the tree) are parsed on first use.
//!
//! Beside the loader: `read` (files read as text with the same bounds, not
//! as Ansible content) and `fs_memo` (what the file system says of a path,
//! asked once per run).

mod fs_memo;
mod read;
#[cfg(test)]
mod tests;

pub use fs_memo::{FileIdentity, FsMemo, Stat};
pub use read::read_text_bounded;

use crate::HashMap;
use crate::diagnostic::{Diagnostic, code};
use crate::source::{FileId, SourceMap, Span, line_col};
use crate::yaml::{self, YamlFile};
use rayon::prelude::*;
use read::read_at_most;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A map keyed by a path's bytes: `Path`'s own `Hash` walks the components,
/// and these maps are asked about every path the run touches, many times
/// over. Two spellings of one path (`a//b`, `a/b`) are two keys, which
/// costs a second read at most.
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
    /// Every file loaded so far, by path: read once for the whole run.
    loaded: Mutex<PathMap<Arc<Loaded>>>,
    /// Files planned for reading ([`Loader::plan`]), read by the first
    /// thread that needs them.
    planned: Mutex<PathMap<Arc<Pending>>>,
    /// Aliases: paths planned as another path's file (the same file
    /// reached through a link or a hard link, see [`Loader::preload`]),
    /// with that path.
    aliases: Mutex<PathMap<PathBuf>>,
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
    /// Frees the files loaded (every file parsed) on the worker threads, a share
    /// of the files each: the model holds what it needs of them.
    pub fn free_in_parallel(self) {
        drop(std::mem::take(&mut *locked(&self.planned)));
        let loaded = std::mem::take(&mut *locked(&self.loaded));
        let files: Vec<Arc<Loaded>> = loaded.into_values().collect();
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
            loaded: Mutex::default(),
            planned: Mutex::default(),
            aliases: Mutex::default(),
            budget: Mutex::new(total),
            total,
        }
    }

    /// Reads and parses `paths` in parallel, each once.
    ///
    /// A path that names the same file as another of `paths` (same device
    /// and inode: a linked directory, a linked file, a hard link) is read
    /// once: the other paths' state and diagnostics are its
    /// ([`Loader::status`], [`Loader::diagnostics`]), and it is parsed from
    /// that text, under its own path, when the model reaches it
    /// ([`Loader::yaml`]). A tree with a link to its own roles reaches most
    /// of its files twice.
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
        // The `stat`s first, in parallel (one per path, the slowest part of
        // planning); the choices below are made in order.
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
            let mut aliases = locked(&self.aliases);
            for (p, id) in paths.iter().zip(&ids) {
                if let Some(first) = id.and_then(|id| read_as.get(&id))
                    && *first != p
                {
                    aliases.insert(p.as_os_str().to_owned(), (*first).clone());
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

    /// Reads and parses the planned files not read yet, in parallel.
    pub fn fill(&self, plan: &Plan) {
        plan.0.par_iter().for_each(|(p, pending)| {
            self.settle(p, pending);
        });
    }

    /// A planned file, read now unless it was already; a file read before it
    /// was planned stays as it was read.
    fn settle(&self, path: &Path, pending: &Pending) -> Arc<Loaded> {
        if let Some(l) = locked(&self.loaded).get(path.as_os_str()) {
            return Arc::clone(l);
        }
        // No lock is held while reading: another thread needing this file
        // waits for it, and reading takes no other file's turn.
        let l = pending
            .loaded
            .get_or_init(|| Arc::new(self.read(path, pending.parse_yaml, pending.admission)));
        Arc::clone(
            locked(&self.loaded)
                .entry(path.as_os_str().to_owned())
                .or_insert_with(|| Arc::clone(l)),
        )
    }

    /// The length of the YAML file at `path` as the run counts it, without
    /// reading a planned file (or an alias of one): its size when the plan
    /// admitted it and it is not too large to read. Other files: the length
    /// of their text, read now if need be.
    pub fn yaml_size(&self, path: &Path) -> Option<usize> {
        let alias_of = locked(&self.aliases).get(path.as_os_str()).cloned();
        if let Some(first) = alias_of {
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
        if let Some(l) = locked(&self.loaded).get(path.as_os_str()) {
            return Arc::clone(l);
        }
        let pending = locked(&self.planned).get(path.as_os_str()).cloned();
        if let Some(p) = pending {
            return self.settle(path, &p);
        }
        let alias_of = locked(&self.aliases).get(path.as_os_str()).cloned();
        let first_text = alias_of.and_then(|o| self.yaml(&o).text.clone());
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
        locked(&self.loaded)
            .entry(path.as_os_str().to_owned())
            .or_insert(Arc::new(l))
            .clone()
    }

    /// Whether the YAML file at `path` was read and parsed ([`Loaded::ok`])
    /// and its length in bytes, without parsing a preloaded alias.
    pub fn status(&self, path: &Path) -> (bool, Option<usize>) {
        let loaded = locked(&self.loaded).get(path.as_os_str()).cloned();
        if let Some(l) = loaded {
            return (l.ok(), l.text.as_ref().map(|t| t.len()));
        }
        let alias_of = locked(&self.aliases).get(path.as_os_str()).cloned();
        match alias_of {
            Some(first) => self.status(&first),
            None => {
                let l = self.yaml(path);
                (l.ok(), l.text.as_ref().map(|t| t.len()))
            }
        }
    }

    /// Every read and parse problem of the files planned (preloaded), aliases
    /// included (an alias of a file with problems is parsed here, so that its
    /// problems carry its own path). Files read otherwise report their
    /// problems where they are used.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let aliases: Vec<(PathBuf, PathBuf)> = locked(&self.aliases)
            .iter()
            .map(|(t, f)| (PathBuf::from(t), f.clone()))
            .collect();
        for (alias, first) in &aliases {
            let f = self.yaml(first);
            if !f.diagnostics.is_empty() || !f.yaml.diagnostics.is_empty() {
                self.yaml(alias);
            }
        }
        // In no particular order: the caller sorts them (most files have
        // none, so only those with problems are looked up). The three maps
        // are held together here only: no other code holds one while
        // taking another.
        let planned = locked(&self.planned);
        let alias_paths = locked(&self.aliases);
        locked(&self.loaded)
            .iter()
            .filter(|(_, l)| !l.diagnostics.is_empty() || !l.yaml.diagnostics.is_empty())
            .filter(|(p, _)| planned.contains_key(*p) || alias_paths.contains_key(*p))
            .flat_map(|(_, l)| l.diagnostics.iter().chain(&l.yaml.diagnostics).cloned())
            .collect()
    }

    /// Reads a file that is not YAML (an INI inventory, a template) with the
    /// same checks (size, binary, UTF-8) and registers it; not kept.
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
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut v: Vec<_> = loaded
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

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
