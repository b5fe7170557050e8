//! Reading and parsing files, in parallel, with one cache for the whole run.
//!
//! Every file preflint reads goes through [`Loader`]: size, binary and UTF-8
//! checks, registration in the [`SourceMap`], and YAML parsing. Files found by
//! discovery are parsed up front with rayon; files reached later (a role in a
//! `roles_path` outside the tree) are parsed on first use.

use crate::diagnostic::{Diagnostic, code};
use crate::source::{FileId, SourceMap, Span, line_col};
use crate::yaml::{self, YamlFile};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Largest file preflint reads (bytes); larger files get a diagnostic.
pub const MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;

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
    cache: Mutex<HashMap<PathBuf, Arc<Loaded>>>,
}

impl Loader {
    #[must_use]
    pub fn new(sources: Arc<SourceMap>) -> Self {
        Loader {
            sources,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Reads and parses `paths` in parallel into the cache.
    pub fn preload(&self, paths: &[PathBuf], parse_yaml: bool) {
        let loaded: Vec<(PathBuf, Arc<Loaded>)> = paths
            .par_iter()
            .map(|p| (p.clone(), Arc::new(self.read(p, parse_yaml))))
            .collect();
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (p, l) in loaded {
            cache.entry(p).or_insert(l);
        }
    }

    /// The loaded file at `path`, reading it on first use.
    pub fn yaml(&self, path: &Path) -> Arc<Loaded> {
        if let Some(l) = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(path)
        {
            return Arc::clone(l);
        }
        let l = Arc::new(self.read(path, true));
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(path.to_path_buf())
            .or_insert(l)
            .clone()
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
            .map(|(p, l)| (p.clone(), Arc::clone(l)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    fn read(&self, path: &Path, parse_yaml: bool) -> Loaded {
        let fail = |id: FileId, d: Diagnostic| Loaded {
            id,
            text: None,
            yaml: YamlFile {
                failed: true,
                ..YamlFile::default()
            },
            diagnostics: vec![d],
        };
        match std::fs::metadata(path) {
            Ok(m) if m.len() > MAX_FILE_SIZE => {
                let id = self.sources.add(path, "".into());
                return fail(
                    id,
                    Diagnostic::error(
                        code::TOO_LARGE,
                        Span::file_start(id),
                        format!(
                            "file is {} bytes, over the {MAX_FILE_SIZE}-byte limit; not analysed",
                            m.len()
                        ),
                    )
                    .with_help("exclude it with --exclude if it is not Ansible content"),
                );
            }
            Ok(m) if m.is_dir() => {
                let id = self.sources.add(path, "".into());
                return fail(
                    id,
                    Diagnostic::error(
                        code::IO,
                        Span::file_start(id),
                        "expected a file, found a directory",
                    ),
                );
            }
            _ => {}
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                let id = self.sources.add(path, "".into());
                return fail(
                    id,
                    Diagnostic::error(
                        code::IO,
                        Span::file_start(id),
                        format!("cannot read file: {e}"),
                    )
                    .with_help("check that the path exists and is readable"),
                );
            }
        };
        if bytes.contains(&0) {
            let id = self.sources.add(path, "".into());
            return fail(
                id,
                Diagnostic::error(
                    code::BINARY,
                    Span::file_start(id),
                    "binary file (contains NUL bytes); not analysed",
                )
                .with_help("rename it so it does not look like YAML, or exclude it"),
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
            yaml::parse(id, &text)
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
