//! Source files: ids, text, and the mapping from byte offsets to lines.
//!
//! Owns every file preflint reads. Other modules refer to a file by its
//! [`FileId`] and to a place in it by a [`Span`]; turning a span into
//! `path:line:column` happens here and nowhere else. This module never parses.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Index of a file in the [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A place in a file: byte range plus the 1-based line and column of its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub col: u32,
}

impl Span {
    /// A span that covers no text: the start of a file (used for whole-file problems).
    #[must_use]
    pub fn file_start(file: FileId) -> Self {
        Span {
            file,
            start: 0,
            end: 0,
            line: 1,
            col: 1,
        }
    }
}

/// One file as read from disk.
#[derive(Debug)]
pub struct SourceFile {
    /// Path as given to preflint (absolute or relative to the working directory).
    pub path: PathBuf,
    /// Path relative to the analysed root, with `/` separators, for output.
    pub display: String,
    /// The text, when the file is valid UTF-8.
    pub text: Arc<str>,
}

/// All files read during a run. Cheap to share across threads.
#[derive(Debug, Default)]
pub struct SourceMap {
    root: PathBuf,
    files: RwLock<Vec<Arc<SourceFile>>>,
}

impl SourceMap {
    #[must_use]
    pub fn new(root: &Path) -> Self {
        SourceMap {
            root: root.to_path_buf(),
            files: RwLock::new(Vec::new()),
        }
    }

    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Registers a file and returns its id.
    pub fn add(&self, path: &Path, text: Arc<str>) -> FileId {
        let display = display_path(&self.root, path);
        let mut files = self
            .files
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let id = FileId(u32::try_from(files.len()).unwrap_or(u32::MAX));
        files.push(Arc::new(SourceFile {
            path: path.to_path_buf(),
            display,
            text,
        }));
        id
    }

    #[must_use]
    pub fn get(&self, id: FileId) -> Arc<SourceFile> {
        let files = self
            .files
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(&files[id.0 as usize])
    }

    #[must_use]
    pub fn display(&self, id: FileId) -> String {
        self.get(id).display.clone()
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.files.read().map_or(0, |f| f.len())
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `path` relative to `root` with `/` separators, or the path itself when it is
/// outside the root.
#[must_use]
pub fn display_path(root: &Path, path: &Path) -> String {
    if let Some(rest) = plain_rest(root, path) {
        return rest.to_string();
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel.to_string_lossy().replace('\\', "/");
    if s.is_empty() { ".".to_string() } else { s }
}

/// What follows `root` in `path`, found by bytes (`Path::strip_prefix`
/// compares components) in the common case where the two agree: `root`'s
/// bytes and a `/` begin `path`, and the rest is UTF-8 with no empty or `.`
/// segment nor a backslash. `None` otherwise (compare by components then).
pub(crate) fn plain_rest<'p>(root: &Path, path: &'p Path) -> Option<&'p str> {
    let (r, p) = (
        root.as_os_str().as_encoded_bytes(),
        path.as_os_str().as_encoded_bytes(),
    );
    let r = r.strip_suffix(b"/").unwrap_or(r);
    if r.is_empty() {
        return None;
    }
    let rest = p.strip_prefix(r)?.strip_prefix(b"/")?;
    // One pass over the bytes (asked for every path the walk finds).
    let bad = |seg: &[u8]| seg.is_empty() || seg == b".";
    let mut seg_start = 0;
    for (i, &b) in rest.iter().enumerate() {
        match b {
            b'\\' => return None,
            b'/' if bad(&rest[seg_start..i]) => return None,
            b'/' => seg_start = i + 1,
            _ => {}
        }
    }
    if bad(&rest[seg_start..]) {
        return None;
    }
    std::str::from_utf8(rest).ok()
}

/// 1-based line and column (in characters) of a byte offset.
#[must_use]
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn display_path_fast_path_agrees_with_components() {
        let slow = |root: &Path, path: &Path| {
            let rel = path.strip_prefix(root).unwrap_or(path);
            let s = rel.to_string_lossy().replace('\\', "/");
            if s.is_empty() { ".".to_string() } else { s }
        };
        let roots = ["/t", "/t/", "t", "./t", ".", "/", "/t/x/..", "t//u"];
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
            "/u/a",
            "t/a.yml",
            "./t/a.yml",
            "./a",
            "a",
            "/t/x/../a",
            "t//u/a",
            "t/u/a",
            "/tt/a",
            "/t/a\\b",
            "/t/.",
            "/t/.hidden/a",
            "/t/a/.",
            "/t/a/..",
            "/t/..a/b.",
        ];
        for r in roots {
            for p in paths {
                let (r, p) = (Path::new(r), Path::new(p));
                assert_eq!(display_path(r, p), slow(r, p), "{r:?} {p:?}");
            }
        }
    }

    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é\nx", 3), (2, 1));
    }
}
