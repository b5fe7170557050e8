//! What each directory held when the walk listed it, kept for the run so
//! that later probes of its entries are answered without asking the
//! system again (see `load::FsMemo`).

use std::path::{Path, PathBuf};

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
    pub(super) ends: Vec<(u32, u32, Listed)>,
}

impl Listing {
    /// The listing of `dir`'s `entries` (paths below `dir`, as `listing`
    /// gives them).
    pub(super) fn of(dir: &Path, entries: &[(PathBuf, Listed)]) -> Self {
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
pub(super) fn runs(entries: &[(PathBuf, Listed)]) -> Vec<&[(PathBuf, Listed)]> {
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
pub(super) fn listing(entries: std::fs::ReadDir) -> Vec<(PathBuf, Listed)> {
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
