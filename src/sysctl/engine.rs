//! The file-set model and the two engines' rules: which files an engine
//! reads, in which order, and which assignment of each key wins.
//!
//! Works on an in-memory [`FileSet`] only; the baseline builds the first one
//! and the simulation edits it write by write. The model keeps indexes
//! (lines by key, files by key, links by target, drop-ins by name) so that a
//! write, and the question of what one key is set to, cost the size of that
//! key's lines rather than the size of the files.

use super::conf::{
    DEV_NULL, SYSCTL_CONF, SysctlDir, SysctlFileKind, glob_matches, is_glob, resolve_link_target,
    sysctl_file_kind,
};
use super::{Engine, Evidence, Setting};
use crate::HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// Most links followed in one resolution (as the kernel's limit).
const MAX_HOPS: usize = 40;

/// One assignment line in a file of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub key: String,
    pub value: Option<String>,
    /// Line number in a baseline file.
    pub number: Option<u32>,
    pub evidence: Option<Evidence>,
    pub conditional: bool,
}

/// A regular file of the model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Content {
    /// The lines in file order; `None` where a later write dropped a line
    /// (kept so that positions stay valid).
    slots: Vec<Option<Line>>,
    /// Positions of each key's lines, ascending.
    by_key: HashMap<String, Vec<usize>>,
    /// Where a baseline file came from.
    source: Option<String>,
}

impl Content {
    fn new(lines: Vec<Line>, source: Option<String>) -> Self {
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::default();
        for (i, l) in lines.iter().enumerate() {
            by_key.entry(l.key.clone()).or_default().push(i);
        }
        Content {
            slots: lines.into_iter().map(Some).collect(),
            by_key,
            source,
        }
    }

    /// The lines, in file order.
    pub fn lines(&self) -> impl Iterator<Item = &Line> {
        self.slots.iter().flatten()
    }

    /// Every key with a line here.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.by_key.keys().map(String::as_str)
    }

    /// The lines of `key` with their positions, in file order.
    fn lines_of<'a>(&'a self, key: &str) -> impl Iterator<Item = (usize, &'a Line)> {
        self.by_key
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|&i| Some((i, self.slots[i].as_ref()?)))
    }

    /// Sets `key`: the first line with a value is replaced and later ones
    /// dropped, or the line is appended. Tells whether the key is new here.
    fn persist(&mut self, new: Line) -> bool {
        let slots = &mut self.slots;
        let at = self.by_key.entry(new.key.clone()).or_default();
        let fresh = at.is_empty();
        let mut placed = false;
        at.retain(|&i| {
            let Some(l) = slots[i].as_mut() else {
                return false;
            };
            if l.value.is_none() {
                return true;
            }
            if placed {
                slots[i] = None;
                return false;
            }
            *l = new.clone();
            placed = true;
            true
        });
        if !placed {
            at.push(slots.len());
            slots.push(Some(new));
        }
        fresh
    }

    /// Drops every line of `key`. Tells whether there was one.
    fn remove(&mut self, key: &str) -> bool {
        let Some(at) = self.by_key.remove(key) else {
            return false;
        };
        for i in at {
            self.slots[i] = None;
        }
        true
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A regular file.
    Content(Content),
    /// A symlink to an absolute, normalised target.
    Link { target: String },
}

/// What a path leads to after following links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A regular file of the model at this path.
    Content(String),
    /// `/dev/null`: a masked file.
    Null,
    /// A sysctl location that does not exist (a dangling link).
    Missing,
    /// A path outside the sysctl locations that the model knows nothing of:
    /// it may exist, its content is unknown.
    Unknown,
    /// Too many links.
    Loop,
}

/// Where a file stands in an engine's reading order: drop-ins by name, then
/// (procps) `/etc/sysctl.conf`.
type Rank = (bool, String);

/// A line as an engine reads it: where in its order, under which name.
type ReadLine<'a> = (Rank, usize, &'a str, &'a Line);

/// A line's place in reading order and its value, as [`pick`] takes them.
type Placed<'a> = ((&'a Rank, usize), Option<&'a str>);

/// The places of lines in reading order, with their values.
fn positions<'a>(lines: &'a [ReadLine<'_>]) -> Vec<Placed<'a>> {
    lines
        .iter()
        .map(|l| ((&l.0, l.1), l.3.value.as_deref()))
        .collect()
}

/// The files the engines may read, keyed by absolute normalised path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileSet {
    entries: BTreeMap<String, Entry>,
    /// Key -> the regular files with a line for it.
    holders: HashMap<String, BTreeSet<String>>,
    /// Link target -> the links pointing at it.
    links_to: HashMap<String, BTreeSet<String>>,
    /// Drop-in name -> every entry with that name, in precedence order.
    dropins: HashMap<String, BTreeSet<(SysctlDir, String)>>,
}

/// One file as an engine applies it.
#[derive(Debug, Clone)]
pub(crate) struct Applied<'a> {
    pub read_as: String,
    pub content_path: Option<String>,
    pub source: Option<&'a str>,
    pub lines: Vec<&'a Line>,
}

/// A key's outcome under one engine over one list of files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyBoot {
    pub value: Option<String>,
    pub winner: Option<Setting>,
    pub overridden: Vec<Setting>,
}

/// What an application sets one key to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applies<'a> {
    pub value: &'a str,
    /// The file as the engine opened it.
    pub read_as: &'a str,
    /// The line was written by a conditional task.
    pub conditional: bool,
}

impl FileSet {
    /// Adds a regular file (building the baseline).
    pub fn insert_content(&mut self, path: &str, lines: Vec<Line>, source: Option<String>) {
        self.put(path, Entry::Content(Content::new(lines, source)));
    }

    /// Adds a link whose target is already absolute and normalised (building the baseline).
    pub fn insert_link(&mut self, path: &str, target: String) {
        self.put(path, Entry::Link { target });
    }

    pub fn has_entry(&self, path: &str) -> bool {
        self.entries.contains_key(path)
    }

    pub fn content(&self, path: &str) -> Option<&Content> {
        match self.entries.get(path) {
            Some(Entry::Content(c)) => Some(c),
            _ => None,
        }
    }

    /// The regular files with a line for `key`.
    pub fn holders<'a>(&'a self, key: &str) -> impl Iterator<Item = &'a str> {
        self.holders
            .get(key)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Replaces the entry at `path`, keeping the indexes.
    fn put(&mut self, path: &str, entry: Entry) {
        self.take(path);
        match &entry {
            Entry::Content(c) => {
                for key in c.by_key.keys() {
                    self.holders
                        .entry(key.clone())
                        .or_default()
                        .insert(path.to_string());
                }
            }
            Entry::Link { target } => {
                self.links_to
                    .entry(target.clone())
                    .or_default()
                    .insert(path.to_string());
            }
        }
        if let Some(SysctlFileKind::DropIn { dir, name }) = sysctl_file_kind(path) {
            self.dropins
                .entry(name)
                .or_default()
                .insert((dir, path.to_string()));
        }
        self.entries.insert(path.to_string(), entry);
    }

    /// Removes the entry at `path`, keeping the indexes.
    fn take(&mut self, path: &str) -> Option<Entry> {
        let entry = self.entries.remove(path)?;
        match &entry {
            Entry::Content(c) => {
                for key in c.by_key.keys() {
                    unindex(&mut self.holders, key, path);
                }
            }
            Entry::Link { target } => unindex(&mut self.links_to, target, path),
        }
        if let Some(SysctlFileKind::DropIn { dir, name }) = sysctl_file_kind(path)
            && let Some(set) = self.dropins.get_mut(&name)
        {
            set.remove(&(dir, path.to_string()));
            if set.is_empty() {
                self.dropins.remove(&name);
            }
        }
        Some(entry)
    }

    pub fn resolve(&self, path: &str) -> Resolved {
        self.resolve_with(path, None)
    }

    /// [`FileSet::resolve`] as if the entry at `over.0` were `over.1`.
    fn resolve_with(&self, path: &str, over: Option<(&str, Option<&Entry>)>) -> Resolved {
        let mut p = path.to_string();
        for _ in 0..MAX_HOPS {
            if p == DEV_NULL {
                return Resolved::Null;
            }
            let entry = match over {
                Some((at, e)) if at == p => e,
                _ => self.entries.get(&p),
            };
            match entry {
                Some(Entry::Content(_)) => return Resolved::Content(p),
                Some(Entry::Link { target }) => p.clone_from(target),
                None if sysctl_file_kind(&p).is_some() => return Resolved::Missing,
                None => return Resolved::Unknown,
            }
        }
        Resolved::Loop
    }

    /// The path a write through `path` lands in, following links; `None`
    /// when it is discarded (a link to `/dev/null`, a loop).
    pub fn write_target(&self, path: &str) -> Option<String> {
        let mut p = path.to_string();
        for _ in 0..MAX_HOPS {
            if p == DEV_NULL {
                return None;
            }
            match self.entries.get(&p) {
                Some(Entry::Link { target }) => p.clone_from(target),
                _ => return Some(p),
            }
        }
        None
    }

    /// Sets `key` in the file at `path` (through links): the first line for
    /// the key is replaced and later ones dropped, or the line is appended.
    pub fn persist(
        &mut self,
        path: &str,
        key: &str,
        value: &str,
        evidence: Option<Evidence>,
        conditional: bool,
    ) {
        let Some(target) = self.write_target(path) else {
            return;
        };
        if !self.entries.contains_key(&target) {
            self.put(&target, Entry::Content(Content::default()));
        }
        let Some(Entry::Content(c)) = self.entries.get_mut(&target) else {
            return;
        };
        let new = Line {
            key: key.to_string(),
            value: Some(value.to_string()),
            number: None,
            evidence,
            conditional,
        };
        if c.persist(new) {
            self.holders
                .entry(key.to_string())
                .or_default()
                .insert(target);
        }
    }

    /// Removes every line for `key` from the file at `path` (through links).
    pub fn remove_key(&mut self, path: &str, key: &str) {
        let Some(target) = self.write_target(path) else {
            return;
        };
        if let Some(Entry::Content(c)) = self.entries.get_mut(&target)
            && c.remove(key)
        {
            unindex(&mut self.holders, key, &target);
        }
    }

    pub fn delete(&mut self, path: &str) {
        self.take(path);
    }

    pub fn link(&mut self, path: &str, target: &str) {
        self.put(
            path,
            Entry::Link {
                target: resolve_link_target(path, target),
            },
        );
    }

    /// The regular files whose place in an engine's reading (read at all,
    /// under which name) may change if the entry at `path` became `new`
    /// (`None`: removed; a new regular file is empty, so only what it hides
    /// counts). Includes the file at `path` itself when it is regular.
    pub fn reading_changes(&self, path: &str, new: Option<&Entry>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut add = |r: Resolved| {
            if let Resolved::Content(c) = r {
                out.insert(c);
            }
        };
        // Everything read through `path`, before and after.
        add(self.resolve(path));
        add(self.resolve_with(path, Some((path, new))));
        // A drop-in hides same-named files in later directories.
        if let Some(SysctlFileKind::DropIn { dir, name }) = sysctl_file_kind(path) {
            let me = (dir, path.to_string());
            let set = self.dropins.get(&name);
            let before = set.and_then(BTreeSet::first);
            let after = match (self.entries.contains_key(path), new.is_some()) {
                (false, true) => before.map_or(Some(&me), |b| Some(b.min(&me))),
                (true, false) => set.and_then(|s| s.iter().find(|x| **x != me)),
                _ => before,
            };
            if before != after {
                for (_, p) in [before, after].into_iter().flatten() {
                    if p != path {
                        add(self.resolve(p));
                    }
                }
            }
        }
        out
    }

    /// The file at `path` as `sysctl -p` (or an engine) would read it.
    pub fn applied(&self, path: &str) -> Applied<'_> {
        let resolved = self.resolve(path);
        let (content_path, source, lines): (Option<String>, Option<&str>, Vec<&Line>) =
            match &resolved {
                Resolved::Content(p) => match self.entries.get(p) {
                    Some(Entry::Content(c)) => (
                        Some(p.clone()).filter(|p| p != path),
                        c.source.as_deref(),
                        c.lines().collect(),
                    ),
                    _ => (None, None, Vec::new()),
                },
                Resolved::Null => (Some(DEV_NULL.to_string()), None, Vec::new()),
                Resolved::Missing | Resolved::Unknown | Resolved::Loop => (None, None, Vec::new()),
            };
        Applied {
            read_as: path.to_string(),
            content_path,
            source,
            lines,
        }
    }

    /// The paths `engine` opens, in order: per drop-in name the entry of
    /// the first directory, then (procps) `/etc/sysctl.conf`, if it is a
    /// regular file.
    ///
    /// Every entry of a `sysctl.d` directory counts for hiding same-named
    /// files in later directories, even a dangling link: systemd lists
    /// directory entries without checking them (`conf_files_list_strv` with
    /// no flags) and procps records names before opening them. systemd skips
    /// hidden names (`FOREACH_DIRENT`); procps does not.
    fn opened(&self, engine: Engine) -> Vec<&str> {
        let names: BTreeMap<&str, &str> = self
            .dropins
            .iter()
            .filter(|(name, _)| engine != Engine::SystemdSysctl || !name.starts_with('.'))
            .filter_map(|(name, set)| Some((name.as_str(), set.first()?.1.as_str())))
            .collect();
        let mut out: Vec<&str> = names.into_values().collect();
        // procps applies /etc/sysctl.conf last, if it is a regular file.
        if engine == Engine::Procps
            && matches!(
                self.resolve(SYSCTL_CONF),
                Resolved::Content(_) | Resolved::Unknown
            )
        {
            out.push(SYSCTL_CONF);
        }
        out
    }

    /// The files `engine` applies, in order.
    pub fn listing(&self, engine: Engine) -> Vec<Applied<'_>> {
        self.opened(engine)
            .into_iter()
            .map(|p| self.applied(p))
            .collect()
    }

    /// The paths under which `engine` reads the regular file `content`,
    /// with their place in its order (see [`FileSet::opened`]).
    fn readers(&self, engine: Engine, content: &str) -> Vec<(Rank, &str)> {
        // Every path whose links may lead here, found backwards.
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut queue: Vec<&str> = match self.entries.get_key_value(content) {
            Some((p, _)) => vec![p.as_str()],
            None => Vec::new(),
        };
        while let Some(p) = queue.pop() {
            if !seen.insert(p) {
                continue;
            }
            queue.extend(
                self.links_to
                    .get(p)
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            );
        }
        let mut out = Vec::new();
        for p in seen {
            if !matches!(self.resolve(p), Resolved::Content(c) if c == content) {
                continue;
            }
            if let Some(SysctlFileKind::DropIn { dir, name }) = sysctl_file_kind(p) {
                let chosen = self
                    .dropins
                    .get(&name)
                    .and_then(BTreeSet::first)
                    .is_some_and(|(d, q)| *d == dir && q == p);
                if chosen && (engine != Engine::SystemdSysctl || !name.starts_with('.')) {
                    out.push(((false, name), p));
                }
            } else if p == SYSCTL_CONF && engine == Engine::Procps {
                out.push(((true, String::new()), p));
            }
        }
        out
    }

    /// The lines of `key` as `engine` applying every file reads them, in order.
    fn read_lines(&self, engine: Engine, key: &str) -> Vec<ReadLine<'_>> {
        let mut out = Vec::new();
        for c in self.holders(key) {
            let Some(content) = self.content(c) else {
                continue;
            };
            for (rank, read_as) in self.readers(engine, c) {
                for (i, line) in content.lines_of(key) {
                    out.push((rank.clone(), i, read_as, line));
                }
            }
        }
        out.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        out
    }

    /// What `engine` applying every file now sets `key` to. `globs` are the
    /// glob keys that match `key`.
    pub fn engine_sets(&self, engine: Engine, key: &str, globs: &[String]) -> Option<Applies<'_>> {
        let explicit = self.read_lines(engine, key);
        let glob_lines: Vec<Vec<ReadLine<'_>>> = if explicit.is_empty() {
            globs.iter().map(|g| self.read_lines(engine, g)).collect()
        } else {
            Vec::new()
        };
        let globs: Vec<Vec<Placed<'_>>> = glob_lines.iter().map(|v| positions(v)).collect();
        let at = pick(engine, &positions(&explicit), &globs)?;
        let w = explicit
            .iter()
            .chain(glob_lines.iter().flatten())
            .find(|l| (&l.0, l.1) == at)?;
        Some(Applies {
            value: w.3.value.as_deref()?,
            read_as: w.2,
            conditional: w.3.conditional,
        })
    }

    /// What `sysctl -p` of the regular file `content` sets `key` to.
    /// `globs` are the glob keys that match `key`.
    pub fn file_sets<'a>(
        &'a self,
        content: &str,
        key: &str,
        globs: &[String],
    ) -> Option<(&'a str, bool)> {
        let c = self.content(content)?;
        let lines = |k: &str| -> Vec<(usize, Option<&'a str>)> {
            c.lines_of(k)
                .map(|(i, l)| (i, l.value.as_deref()))
                .collect()
        };
        let explicit = lines(key);
        let glob_lines: Vec<Vec<(usize, Option<&str>)>> = if explicit.is_empty() {
            globs.iter().map(|g| lines(g)).collect()
        } else {
            Vec::new()
        };
        let line = c.slots[pick(Engine::Procps, &explicit, &glob_lines)?].as_ref()?;
        Some((line.value.as_deref()?, line.conditional))
    }

    /// Every key named in any file (explicit keys and glob patterns).
    pub fn keys(&self) -> BTreeSet<String> {
        self.holders.keys().cloned().collect()
    }
}

fn unindex(index: &mut HashMap<String, BTreeSet<String>>, key: &str, path: &str) {
    if let Some(set) = index.get_mut(key) {
        set.remove(path);
        if set.is_empty() {
            index.remove(key);
        }
    }
}

fn setting(file: &Applied<'_>, line: &Line) -> Setting {
    Setting {
        file: file.read_as.clone(),
        via_link_to: file.content_path.clone(),
        line: line.number,
        key: line.key.clone(),
        value: line.value.clone(),
        evidence: line.evidence.clone(),
        conditional: line.conditional,
        source: file.source.map(str::to_string),
    }
}

/// The glob keys among the tracked keys and the concrete tracked keys each
/// one matches, worked out once per simulation.
#[derive(Debug, Default)]
pub(crate) struct Globs {
    matches: HashMap<String, Vec<String>>,
    of: HashMap<String, Vec<String>>,
}

impl Globs {
    pub fn new(tracked: &BTreeSet<String>) -> Self {
        let mut g = Globs::default();
        for glob in tracked.iter().filter(|k| is_glob(k)) {
            // A match starts with the glob's text up to its first wildcard.
            let prefix = &glob[..glob.find(['*', '?', '[']).unwrap_or(glob.len())];
            for key in tracked
                .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
                .take_while(|k| k.starts_with(prefix))
                .filter(|k| !is_glob(k) && glob_matches(glob, k))
            {
                g.matches.entry(glob.clone()).or_default().push(key.clone());
                g.of.entry(key.clone()).or_default().push(glob.clone());
            }
        }
        g
    }

    /// The concrete keys `glob` matches.
    pub fn matching(&self, glob: &str) -> &[String] {
        self.matches.get(glob).map_or(&[], Vec::as_slice)
    }

    /// The glob keys that match the concrete `key`.
    pub fn of(&self, key: &str) -> &[String] {
        self.of.get(key).map_or(&[], Vec::as_slice)
    }
}

/// The winning assignment of one key, given its explicit lines and the
/// lines of each glob that matches it, each list in reading order, as
/// (position, value). Positions compare as the engine reads the lines.
///
/// Explicit keys: the last assignment wins. Under systemd, a `-key`
/// exclusion replaces an earlier assignment (the key is then not written);
/// under procps exclusions are skipped when writing. A glob assignment
/// writes a key only if no explicit line (assignment or exclusion) for it
/// exists anywhere; among globs, systemd applies its options in the order
/// they were last changed (an assignment repeating the same value keeps
/// its place), procps in reading order.
pub(crate) fn pick<P: Copy + Ord>(
    engine: Engine,
    explicit: &[(P, Option<&str>)],
    globs: &[Vec<(P, Option<&str>)>],
) -> Option<P> {
    if !explicit.is_empty() {
        return match engine {
            // The last line is the retained option (same value or a replacement);
            // an exclusion there means the key is not written.
            Engine::SystemdSysctl => explicit.last().map(|l| l.0),
            Engine::Procps => explicit.iter().rev().find(|l| l.1.is_some()).map(|l| l.0),
        };
    }
    match engine {
        Engine::SystemdSysctl => globs
            .iter()
            .filter_map(|lines| {
                // systemd's ordered map: the retained value and where it last changed.
                let (first, rest) = lines.split_first()?;
                let mut retained = *first;
                for l in rest {
                    if l.1 != retained.1 {
                        retained = *l;
                    }
                }
                retained.1?;
                Some((retained.0, lines.last()?.0))
            })
            .max()
            .map(|(_, last)| last),
        Engine::Procps => globs
            .iter()
            .flatten()
            .filter(|l| l.1.is_some())
            .map(|l| l.0)
            .max(),
    }
}

/// What `engine` does with `files` (applied in this order), for every key
/// in `keys` (see [`pick`] for the rules). `globs` indexes `keys` and every
/// key of `files`.
pub(crate) fn evaluate(
    engine: Engine,
    files: &[Applied<'_>],
    keys: &BTreeSet<String>,
    globs: &Globs,
) -> BTreeMap<String, KeyBoot> {
    // Settings are built only for the lines a key's outcome names.
    let seq: Vec<(&Applied<'_>, &Line)> = files
        .iter()
        .flat_map(|f| f.lines.iter().map(move |l| (f, *l)))
        .collect();

    let mut by_key: HashMap<&str, Vec<(usize, Option<&str>)>> = HashMap::default();
    for (i, (_, l)) in seq.iter().enumerate() {
        by_key
            .entry(l.key.as_str())
            .or_default()
            .push((i, l.value.as_deref()));
    }

    let mut out = BTreeMap::new();
    for key in keys {
        let explicit = by_key.get(key.as_str()).map_or(&[][..], Vec::as_slice);
        let globs: Vec<Vec<(usize, Option<&str>)>> = globs
            .of(key)
            .iter()
            .filter_map(|g| by_key.get(g.as_str()).cloned())
            .collect();
        let winner = pick(engine, explicit, &globs);
        let mut related: Vec<usize> = explicit
            .iter()
            .chain(globs.iter().flatten())
            .map(|l| l.0)
            .collect();
        related.sort_unstable();
        let overridden = related
            .into_iter()
            .filter(|&i| Some(i) != winner)
            .map(|i| setting(seq[i].0, seq[i].1))
            .collect();
        let winner = winner.map(|i| setting(seq[i].0, seq[i].1));
        out.insert(
            key.clone(),
            KeyBoot {
                value: winner.as_ref().and_then(|w| w.value.clone()),
                winner,
                overridden,
            },
        );
    }
    out
}
