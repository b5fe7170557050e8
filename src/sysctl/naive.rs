//! The simulator as first written: every write edits a plain list of lines
//! and every application evaluates every key at once. Quadratic in the
//! number of writes, and kept only as the oracle the real simulator is
//! checked against (`simulate.rs`, randomised differential test).

#![allow(dead_code, clippy::pedantic)]

mod engine {
    use super::super::conf::{
        DEV_NULL, SYSCTL_CONF, SysctlDir, SysctlFileKind, glob_matches, is_glob,
        resolve_link_target, sysctl_file_kind,
    };
    use super::super::{Engine, Evidence, Setting};
    use crate::HashMap;
    use std::collections::{BTreeMap, BTreeSet};

    /// Most links followed in one resolution (as the kernel's limit).
    const MAX_HOPS: usize = 40;

    /// One assignment line in a file of the model.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Line {
        pub key: String,
        pub value: Option<String>,
        /// Line number in a baseline file.
        pub number: Option<u32>,
        pub evidence: Option<Evidence>,
        pub conditional: bool,
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Entry {
        /// A regular file; `source` says where a baseline file came from.
        Content {
            lines: Vec<Line>,
            source: Option<String>,
        },
        /// A symlink to an absolute, normalised target.
        Link { target: String },
    }

    /// What a path leads to after following links.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Resolved {
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

    /// The files the engines may read, keyed by absolute normalised path.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct FileSet {
        pub entries: BTreeMap<String, Entry>,
    }

    /// One file as an engine applies it.
    #[derive(Debug, Clone)]
    pub struct Applied<'a> {
        pub read_as: String,
        pub content_path: Option<String>,
        pub source: Option<&'a str>,
        pub lines: &'a [Line],
    }

    /// A key's outcome under one engine over one list of files.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct KeyBoot {
        pub value: Option<String>,
        pub winner: Option<Setting>,
        pub overridden: Vec<Setting>,
    }

    impl FileSet {
        pub fn resolve(&self, path: &str) -> Resolved {
            let mut p = path.to_string();
            for _ in 0..MAX_HOPS {
                if p == DEV_NULL {
                    return Resolved::Null;
                }
                match self.entries.get(&p) {
                    Some(Entry::Content { .. }) => return Resolved::Content(p),
                    Some(Entry::Link { target }) => p.clone_from(target),
                    None if sysctl_file_kind(&p).is_some() => return Resolved::Missing,
                    None => return Resolved::Unknown,
                }
            }
            Resolved::Loop
        }

        /// The path a write through `path` lands in, following links; `None`
        /// when it is discarded (a link to `/dev/null`, a loop).
        fn write_target(&self, path: &str) -> Option<String> {
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

        fn content_mut(&mut self, path: &str, create: bool) -> Option<&mut Vec<Line>> {
            let target = self.write_target(path)?;
            if create && !self.entries.contains_key(&target) {
                self.entries.insert(
                    target.clone(),
                    Entry::Content {
                        lines: Vec::new(),
                        source: None,
                    },
                );
            }
            match self.entries.get_mut(&target) {
                Some(Entry::Content { lines, .. }) => Some(lines),
                _ => None,
            }
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
            let Some(lines) = self.content_mut(path, true) else {
                return;
            };
            let new = Line {
                key: key.to_string(),
                value: Some(value.to_string()),
                number: None,
                evidence,
                conditional,
            };
            let mut placed = false;
            lines.retain_mut(|l| {
                if l.key != key || l.value.is_none() {
                    return true;
                }
                if placed {
                    return false;
                }
                *l = new.clone();
                placed = true;
                true
            });
            if !placed {
                lines.push(new);
            }
        }

        /// Removes every line for `key` from the file at `path` (through links).
        pub fn remove_key(&mut self, path: &str, key: &str) {
            if let Some(lines) = self.content_mut(path, false) {
                lines.retain(|l| l.key != key);
            }
        }

        pub fn delete(&mut self, path: &str) {
            self.entries.remove(path);
        }

        pub fn link(&mut self, path: &str, target: &str) {
            self.entries.insert(
                path.to_string(),
                Entry::Link {
                    target: resolve_link_target(path, target),
                },
            );
        }

        /// The file at `path` as `sysctl -p` (or an engine) would read it.
        pub fn applied(&self, path: &str) -> Applied<'_> {
            let resolved = self.resolve(path);
            let (content_path, source, lines): (Option<String>, Option<&str>, &[Line]) =
                match &resolved {
                    Resolved::Content(p) => match self.entries.get(p) {
                        Some(Entry::Content { lines, source }) => (
                            Some(p.clone()).filter(|p| p != path),
                            source.as_deref(),
                            lines.as_slice(),
                        ),
                        _ => (None, None, &[]),
                    },
                    Resolved::Null => (Some(DEV_NULL.to_string()), None, &[]),
                    Resolved::Missing | Resolved::Unknown | Resolved::Loop => (None, None, &[]),
                };
            Applied {
                read_as: path.to_string(),
                content_path,
                source,
                lines,
            }
        }

        /// The files `engine` applies, in order.
        ///
        /// Every entry of a `sysctl.d` directory counts for hiding same-named
        /// files in later directories, even a dangling link: systemd lists
        /// directory entries without checking them (`conf_files_list_strv` with
        /// no flags) and procps records names before opening them. systemd skips
        /// hidden names (`FOREACH_DIRENT`); procps does not.
        pub fn listing(&self, engine: Engine) -> Vec<Applied<'_>> {
            let mut chosen: BTreeMap<String, &str> = BTreeMap::new();
            for dir in SysctlDir::ALL {
                for path in self.entries.keys() {
                    let Some(SysctlFileKind::DropIn { dir: d, name }) = sysctl_file_kind(path)
                    else {
                        continue;
                    };
                    if d != dir || (engine == Engine::SystemdSysctl && name.starts_with('.')) {
                        continue;
                    }
                    chosen.entry(name).or_insert(path.as_str());
                }
            }
            let mut out: Vec<Applied<'_>> = chosen.values().map(|p| self.applied(p)).collect();
            // procps applies /etc/sysctl.conf last, if it is a regular file.
            if engine == Engine::Procps
                && matches!(
                    self.resolve(SYSCTL_CONF),
                    Resolved::Content(_) | Resolved::Unknown
                )
            {
                out.push(self.applied(SYSCTL_CONF));
            }
            out
        }

        /// Every key named in any file (explicit keys and glob patterns).
        pub fn keys(&self) -> BTreeSet<String> {
            let mut keys = BTreeSet::new();
            for entry in self.entries.values() {
                if let Entry::Content { lines, .. } = entry {
                    keys.extend(lines.iter().map(|l| l.key.clone()));
                }
            }
            keys
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

    /// What `engine` does with `files` (applied in this order), for every key
    /// in `keys`.
    ///
    /// Explicit keys: the last assignment wins. Under systemd, a `-key`
    /// exclusion replaces an earlier assignment (the key is then not written);
    /// under procps exclusions are skipped when writing. A glob assignment
    /// writes a key only if no explicit line (assignment or exclusion) for it
    /// exists anywhere; among globs, systemd applies its options in the order
    /// they were last changed (an assignment repeating the same value keeps
    /// its place), procps in reading order.
    pub fn evaluate(
        engine: Engine,
        files: &[Applied<'_>],
        keys: &BTreeSet<String>,
    ) -> BTreeMap<String, KeyBoot> {
        let seq: Vec<Setting> = files
            .iter()
            .flat_map(|f| f.lines.iter().map(move |l| setting(f, l)))
            .collect();

        let mut by_key: HashMap<&str, Vec<usize>> = HashMap::default();
        // systemd's ordered map: key -> (retained value, position of last change).
        let mut retained: HashMap<&str, (Option<&str>, usize)> = HashMap::default();
        for (i, s) in seq.iter().enumerate() {
            by_key.entry(s.key.as_str()).or_default().push(i);
            let v = s.value.as_deref();
            match retained.get(s.key.as_str()) {
                Some((old, _)) if *old == v => {}
                _ => {
                    retained.insert(s.key.as_str(), (v, i));
                }
            }
        }
        let glob_keys: Vec<&str> = by_key.keys().copied().filter(|k| is_glob(k)).collect();

        let mut out = BTreeMap::new();
        for key in keys {
            let explicit = by_key.get(key.as_str()).map_or(&[][..], Vec::as_slice);
            let matching_globs: Vec<&str> = if is_glob(key) {
                Vec::new()
            } else {
                glob_keys
                    .iter()
                    .copied()
                    .filter(|g| glob_matches(g, key))
                    .collect()
            };
            let winner = if explicit.is_empty() {
                glob_winner(engine, &seq, &by_key, &retained, &matching_globs)
            } else {
                explicit_winner(engine, &seq, explicit)
            };
            let mut related: Vec<usize> = explicit.to_vec();
            for g in &matching_globs {
                related.extend(by_key[g].iter().copied());
            }
            related.sort_unstable();
            let overridden = related
                .into_iter()
                .filter(|&i| Some(i) != winner)
                .map(|i| seq[i].clone())
                .collect();
            let winner = winner.map(|i| seq[i].clone());
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

    fn explicit_winner(engine: Engine, seq: &[Setting], explicit: &[usize]) -> Option<usize> {
        match engine {
            // The last line is the retained option (same value or a replacement);
            // an exclusion there means the key is not written.
            Engine::SystemdSysctl => explicit.last().copied(),
            Engine::Procps => explicit
                .iter()
                .rev()
                .copied()
                .find(|&i| seq[i].value.is_some()),
        }
    }

    fn glob_winner(
        engine: Engine,
        seq: &[Setting],
        by_key: &HashMap<&str, Vec<usize>>,
        retained: &HashMap<&str, (Option<&str>, usize)>,
        globs: &[&str],
    ) -> Option<usize> {
        match engine {
            Engine::SystemdSysctl => globs
                .iter()
                .filter_map(|g| match retained.get(g) {
                    Some((Some(_), pos)) => Some((*pos, *by_key[g].last()?)),
                    _ => None,
                })
                .max()
                .map(|(_, last)| last),
            Engine::Procps => globs
                .iter()
                .flat_map(|g| by_key[g].iter().copied())
                .filter(|&i| seq[i].value.is_some())
                .max(),
        }
    }
}

use self::engine::{Entry, FileSet, KeyBoot, Line, evaluate};
use super::baseline::Baseline;
use super::conf::{COMPAT_LINK, glob_matches, is_glob, normalize_key, normalize_path};
use super::{BaselineEntry, BootOutcome, Engine, KeyResult, Live, Write, WriteKind};
use std::collections::{BTreeMap, BTreeSet};

/// One complete replay under one assumption about the compatibility link.
struct Run {
    now: BTreeMap<String, Live>,
    /// Indexed like [`Engine::ALL`].
    boot: [BTreeMap<String, KeyBoot>; 2],
}

/// Computes, for every key named in the baseline or the writes (sorted by
/// key), the live value right after the playbook and the value after the
/// next boot under each engine. `writes` are in execution order.
///
/// When the baseline does not say whether `/etc/sysctl.d/99-sysctl.conf ->
/// ../sysctl.conf` exists, everything is computed both ways; outcomes that
/// differ are reported per assumption (`with_link`), the others once.
pub fn simulate(baseline: &Baseline, writes: &[Write]) -> Vec<KeyResult> {
    let base = file_set(baseline);
    let mut tracked = base.keys();
    for w in writes {
        if let WriteKind::Persist { key, .. }
        | WriteKind::Remove { key, .. }
        | WriteKind::SetLive { key, .. } = &w.kind
        {
            tracked.insert(normalize_key(key));
        }
    }
    tracked.retain(|k| !k.is_empty());

    let scenarios = if baseline.link_decided() {
        vec![(None, base)]
    } else {
        let mut with = base.clone();
        with.link(COMPAT_LINK, "../sysctl.conf");
        vec![(Some(true), with), (Some(false), base)]
    };
    let runs: Vec<(Option<bool>, Run)> = scenarios
        .into_iter()
        .map(|(assumption, files)| {
            (
                assumption,
                replay(files, baseline.boot_engine(), writes, &tracked),
            )
        })
        .collect();
    tracked.iter().map(|key| assemble(key, &runs)).collect()
}

fn path(p: &str) -> String {
    normalize_path(p).unwrap_or_else(|| p.to_string())
}

fn replay(
    mut files: FileSet,
    boot_engine: Engine,
    writes: &[Write],
    tracked: &BTreeSet<String>,
) -> Run {
    let mut live: BTreeMap<String, Live> = BTreeMap::new();
    set_from(
        &mut live,
        evaluate(boot_engine, &files.listing(boot_engine), tracked),
        None,
    );
    for w in writes {
        let ev = || Some(w.evidence.clone());
        match &w.kind {
            WriteKind::Persist { file, key, value } => {
                files.persist(&path(file), &normalize_key(key), value, ev(), w.conditional);
            }
            WriteKind::Remove { file, key } => files.remove_key(&path(file), &normalize_key(key)),
            WriteKind::DeleteFile { file } => files.delete(&path(file)),
            WriteKind::Link { file, target } => files.link(&path(file), target),
            WriteKind::SetLive { key, value } => {
                let key = normalize_key(key);
                let set = Live {
                    value: Some(value.clone()),
                    by: ev(),
                    file: None,
                    conditional: w.conditional,
                };
                if is_glob(&key) {
                    for k in tracked
                        .iter()
                        .filter(|k| !is_glob(k) && glob_matches(&key, k))
                    {
                        live.insert(k.clone(), set.clone());
                    }
                }
                live.insert(key, set);
            }
            WriteKind::ApplyFile { file } => {
                // `sysctl -p FILE` is procps, whatever boots the host.
                let applied = files.applied(&path(file));
                set_from(
                    &mut live,
                    evaluate(Engine::Procps, &[applied], tracked),
                    Some(w),
                );
            }
            WriteKind::ApplyAll { engine } => {
                set_from(
                    &mut live,
                    evaluate(*engine, &files.listing(*engine), tracked),
                    Some(w),
                );
            }
        }
    }
    let boot = Engine::ALL.map(|e| evaluate(e, &files.listing(e), tracked));
    Run { now: live, boot }
}

/// Writes the keys an application set into the live values.
fn set_from(
    live: &mut BTreeMap<String, Live>,
    applied: BTreeMap<String, KeyBoot>,
    by: Option<&Write>,
) {
    for (key, kb) in applied {
        let (Some(value), Some(winner)) = (kb.value, kb.winner) else {
            continue;
        };
        live.insert(
            key,
            Live {
                value: Some(value),
                by: by.map(|w| w.evidence.clone()),
                conditional: by.is_some_and(|w| w.conditional) || winner.conditional,
                file: Some(winner.file),
            },
        );
    }
}

fn assemble(key: &str, runs: &[(Option<bool>, Run)]) -> KeyResult {
    let live_of = |r: &Run| r.now.get(key).cloned().unwrap_or_default();
    let now = live_of(&runs[0].1);
    let now_without_link = runs
        .get(1)
        .map(|(_, r)| live_of(r))
        .filter(|alt| *alt != now);
    let mut boot = Vec::new();
    for (i, engine) in Engine::ALL.into_iter().enumerate() {
        let outcomes: Vec<(Option<bool>, KeyBoot)> = runs
            .iter()
            .map(|(assumption, r)| (*assumption, r.boot[i].get(key).cloned().unwrap_or_default()))
            .collect();
        let same = outcomes.windows(2).all(|w| w[0].1 == w[1].1);
        for (assumption, kb) in outcomes {
            boot.push(BootOutcome {
                engine,
                with_link: if same { None } else { assumption },
                value: kb.value,
                winner: kb.winner,
                overridden: kb.overridden,
            });
            if same {
                break;
            }
        }
    }
    KeyResult {
        key: key.to_string(),
        glob: is_glob(key),
        now: now.value,
        now_by: now.by,
        now_file: now.file,
        now_conditional: now.conditional,
        now_without_link,
        boot,
    }
}

/// The starting model, built as the first `Baseline::file_set` did.
fn file_set(baseline: &Baseline) -> FileSet {
    let mut fs = FileSet::default();
    for f in baseline.files() {
        let entry = match &f.entry {
            BaselineEntry::Content(text) => Entry::Content {
                lines: super::conf::parse_conf_lines(text)
                    .into_iter()
                    .map(|l| Line {
                        key: l.key,
                        value: l.value,
                        number: Some(l.line),
                        evidence: None,
                        conditional: false,
                    })
                    .collect(),
                source: Some(f.source.clone()),
            },
            BaselineEntry::Link(target) => Entry::Link {
                target: super::conf::resolve_link_target(&f.path, target),
            },
        };
        fs.entries.insert(f.path.clone(), entry);
    }
    fs
}
