//! The live values while the playbook's writes are replayed.
//!
//! An application (`sysctl -p FILE`, `sysctl --system`, a restart of
//! systemd-sysctl) sets every key its files give a value. Doing that on the
//! spot costs the size of the files at every application: quadratic for a
//! role that persists and reloads key after key. So an application is only
//! recorded, the latest one per file and per engine (an earlier one sets
//! nothing that the later one does not set again, as long as the key's
//! lines and the way its files are read stay the same), and a key's value
//! is worked out only when one of those is about to change (the caller says
//! so through [`LiveValues::settle_key`] and [`LiveValues::settle_files`])
//! and at the end. A value always carries the stamp of the event that set
//! it, so the latest event wins whatever the order in which values are
//! worked out.
//!
//! Owns that bookkeeping only: what a file or an engine sets a key to is
//! asked of the file model (`engine.rs`).

use super::conf::is_glob;
use super::engine::{FileSet, Globs, KeyBoot};
use super::{Engine, Evidence, Live, Write};
use crate::HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// An application, kept until the keys it set are worked out.
#[derive(Debug)]
struct Record {
    stamp: u64,
    /// The file as it was opened (`sysctl -p FILE`); unused for engines.
    read_as: String,
    by: Evidence,
    conditional: bool,
}

impl Record {
    fn new(stamp: u64, read_as: String, w: &Write) -> Self {
        Record {
            stamp,
            read_as,
            by: w.evidence.clone(),
            conditional: w.conditional,
        }
    }

    fn live(&self, value: &str, file: &str, line_conditional: bool) -> Live {
        Live {
            value: Some(value.to_string()),
            by: Some(self.by.clone()),
            file: Some(file.to_string()),
            conditional: self.conditional || line_conditional,
        }
    }
}

/// A value and the stamp of the event that set it (0: the last boot).
type Stamped = (u64, Live);

/// The live values of one replay. Stamps are given by the caller, one per
/// write and increasing; 0 is the boot before the playbook.
#[derive(Debug)]
pub(crate) struct LiveValues<'g> {
    globs: &'g Globs,
    /// Each key's value when it was last worked out.
    settled: HashMap<String, Stamped>,
    /// When each key was last worked out: records up to then are in `settled`.
    settled_at: HashMap<String, u64>,
    /// The latest `sysctl -p` of each regular file (by its real path).
    by_file: HashMap<String, Record>,
    /// The latest application of everything, indexed like [`Engine::ALL`].
    by_engine: [Option<Record>; 2],
    /// The latest live write of each glob key (it sets every tracked key it matches).
    by_glob: BTreeMap<String, Stamped>,
}

impl<'g> LiveValues<'g> {
    pub fn new(globs: &'g Globs) -> Self {
        LiveValues {
            globs,
            settled: HashMap::default(),
            settled_at: HashMap::default(),
            by_file: HashMap::default(),
            by_engine: [None, None],
            by_glob: BTreeMap::new(),
        }
    }

    /// The values the last boot set.
    pub fn boot(&mut self, applied: BTreeMap<String, KeyBoot>) {
        for (key, kb) in applied {
            let (Some(value), Some(winner)) = (kb.value, kb.winner) else {
                continue;
            };
            let live = Live {
                value: Some(value),
                by: None,
                conditional: winner.conditional,
                file: Some(winner.file),
            };
            self.settled.insert(key, (0, live));
        }
    }

    /// A live write of one key (`sysctl -w`); for a glob key, also of every
    /// tracked key it matches.
    pub fn set(&mut self, key: String, stamp: u64, live: Live) {
        if is_glob(&key) {
            self.by_glob.insert(key.clone(), (stamp, live.clone()));
        }
        self.settled.insert(key, (stamp, live));
    }

    /// `sysctl -p` of the regular file `content`, opened as `read_as`.
    pub fn applied_file(&mut self, content: String, stamp: u64, read_as: String, w: &Write) {
        self.by_file.insert(content, Record::new(stamp, read_as, w));
    }

    /// `engine` applying every file.
    pub fn applied_all(&mut self, engine: Engine, stamp: u64, w: &Write) {
        let i = usize::from(engine == Engine::Procps);
        self.by_engine[i] = Some(Record::new(stamp, String::new(), w));
    }

    /// Some application of everything happened: a change to which files are
    /// read, and under which name, matters.
    pub fn engine_pending(&self) -> bool {
        self.by_engine.iter().any(Option::is_some)
    }

    /// The regular file at `path` was applied.
    pub fn file_pending(&self, path: &str) -> bool {
        self.by_file.contains_key(path)
    }

    /// The regular file at `path` is gone: its application was worked out
    /// (see [`LiveValues::settle_files`]) and is dropped.
    pub fn forget_file(&mut self, path: &str) {
        self.by_file.remove(path);
    }

    /// Works out `key` (and, for a glob key, every key it matches) before
    /// its lines change.
    pub fn settle_key(&mut self, files: &FileSet, key: &str, now: u64) {
        self.settle(files, key, now);
        if is_glob(key) {
            let globs = self.globs;
            for k in globs.matching(key) {
                self.settle(files, k, now);
            }
        }
    }

    /// Works out every key of the regular files `contents` before the way
    /// they are read changes.
    pub fn settle_files(&mut self, files: &FileSet, contents: &BTreeSet<String>, now: u64) {
        for c in contents {
            if let Some(content) = files.content(c) {
                for key in content.keys() {
                    self.settle_key(files, key, now);
                }
            }
        }
    }

    fn settle(&mut self, files: &FileSet, key: &str, now: u64) {
        if let Some(v) = self.current(files, key) {
            self.settled.insert(key.to_string(), v);
        }
        self.settled_at.insert(key.to_string(), now);
    }

    /// The value of `key` now, glob live writes aside. The records newer
    /// than the key's last settling still see the key as it was when they
    /// ran.
    fn current(&self, files: &FileSet, key: &str) -> Option<Stamped> {
        let since = self.settled_at.get(key).copied().unwrap_or(0);
        let mut best = self.settled.get(key).cloned();
        let newer = |stamp: u64, best: &Option<Stamped>| {
            stamp > since && best.as_ref().is_none_or(|b| stamp > b.0)
        };
        let globs = self.globs.of(key);
        let holders = files
            .holders(key)
            .chain(globs.iter().flat_map(|g| files.holders(g)));
        for c in holders {
            let Some(r) = self.by_file.get(c) else {
                continue;
            };
            if !newer(r.stamp, &best) {
                continue;
            }
            if let Some((value, conditional)) = files.file_sets(c, key, globs) {
                best = Some((r.stamp, r.live(value, &r.read_as, conditional)));
            }
        }
        for (engine, r) in Engine::ALL.into_iter().zip(&self.by_engine) {
            let Some(r) = r else {
                continue;
            };
            if !newer(r.stamp, &best) {
                continue;
            }
            if let Some(a) = files.engine_sets(engine, key, globs) {
                best = Some((r.stamp, r.live(a.value, a.read_as, a.conditional)));
            }
        }
        best
    }

    /// The live value of every tracked key that has one, after the last write.
    pub fn finish(&self, files: &FileSet, tracked: &BTreeSet<String>) -> BTreeMap<String, Live> {
        let mut globbed: HashMap<&str, &Stamped> = HashMap::default();
        for (glob, set) in &self.by_glob {
            for key in self.globs.matching(glob) {
                match globbed.get(key.as_str()) {
                    Some(old) if old.0 > set.0 => {}
                    _ => {
                        globbed.insert(key, set);
                    }
                }
            }
        }
        let mut out = BTreeMap::new();
        for key in tracked {
            let own = self.current(files, key);
            let live = match (own, globbed.get(key.as_str())) {
                (Some(own), Some(g)) if g.0 > own.0 => g.1.clone(),
                (Some(own), _) => own.1,
                (None, Some(g)) => g.1.clone(),
                (None, None) => continue,
            };
            out.insert(key.clone(), live);
        }
        out
    }
}
