//! The lookups that read files on the controller, answered from the run's
//! view of the tree: `fileglob`, `first_found`, `file` and `template`,
//! searched as `DataLoader.path_dwim_relative_stack` searches a task's
//! `ansible_search_path` (its role, the role's `tasks/`, then the
//! playbook's directory), each with the lookup's subdirectory (`files/`,
//! `templates/`...).
//!
//! It reads, never writes or runs anything. Paths are given as preflint
//! knows them (from where it runs), where Ansible gives absolute ones: the
//! same files, and outputs that read alike on every machine.

use super::LoopSource;
use crate::jinja::{LookupOutcome, MAX_LOOKUP_ITEMS, Rendered};
use serde_json::Value;
use std::path::{Path, PathBuf};

impl LoopSource<'_, '_> {
    /// Runs `name` if it is a file lookup; `None` otherwise. `as_with`:
    /// invoked as `with_<name>` (`first_found` then picks its subdirectory
    /// from the task's action).
    pub(super) fn file_lookup(
        &self,
        name: &str,
        terms: &[Value],
        kwargs: &[(String, Value)],
        as_with: bool,
    ) -> Option<LookupOutcome> {
        let out = match crate::jinja::lookup_name(name) {
            "fileglob" => self.fileglob(terms),
            "first_found" => self.first_found(terms, kwargs, as_with),
            "file" => self.file(terms, kwargs),
            "template" => self.template(terms),
            _ => return None,
        };
        Some(out)
    }

    /// The task's search path: its role's directory, the role's `tasks/`,
    /// then the playbook's directory (`ansible_search_path` and the
    /// loader's basedir).
    fn search_path(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(r) = &self.inst.role_path {
            out.push(r.to_path_buf());
            out.push(r.join("tasks"));
        }
        if let Some(dir) = self.playbook_dir() {
            out.push(dir);
        }
        out
    }

    fn playbook_dir(&self) -> Option<PathBuf> {
        match self.tv.resolve("playbook_dir").lookup {
            crate::vars::LookupOwned::Value(Value::String(ref s)) => Some(PathBuf::from(s)),
            _ => None,
        }
    }

    /// `path_dwim_relative_stack`: the first of `<p>/<subdir>/<source>`,
    /// `<p>/<source>` for each search path that exists; an absolute source
    /// as it is.
    fn find(&self, subdir: Option<&str>, source: &str) -> Option<PathBuf> {
        if source.starts_with('/') {
            let p = PathBuf::from(source);
            return self.exists(&p).then_some(p);
        }
        let first = source.split('/').next().unwrap_or(source);
        let mut candidates = Vec::new();
        for p in self.search_path() {
            if let Some(sub) = subdir
                && first != sub
            {
                candidates.push(p.join(sub).join(source));
            }
            candidates.push(p.join(source));
        }
        candidates.into_iter().find(|c| self.exists(c))
    }

    fn exists(&self, p: &Path) -> bool {
        self.fs.is_file(p) || self.fs.is_dir(p)
    }

    fn fileglob(&self, terms: &[Value]) -> LookupOutcome {
        let mut out = Vec::new();
        for term in terms {
            let Some(term) = term.as_str() else {
                return LookupOutcome::Failed("fileglob expects strings".into());
            };
            let (dir, pattern) = match term.rsplit_once('/') {
                Some((d, f)) => (Some(d), f),
                None => (None, term),
            };
            let dirs: Vec<PathBuf> = match dir {
                Some("") => vec![PathBuf::from("/")],
                Some(d) => self.find(Some("files"), d).into_iter().collect(),
                None => self
                    .search_path()
                    .into_iter()
                    .flat_map(|p| [p.join("files"), p])
                    .collect(),
            };
            for d in dirs {
                match glob_files(self.fs, &d, pattern) {
                    Err(why) => return LookupOutcome::Unknown(why),
                    Ok(found) if !found.is_empty() => {
                        out.extend(found.into_iter().map(Value::String));
                        break;
                    }
                    Ok(_) => {}
                }
            }
            if out.len() > MAX_LOOKUP_ITEMS {
                return LookupOutcome::Unknown(format!(
                    "more than {MAX_LOOKUP_ITEMS} items (bound of preflint)"
                ));
            }
        }
        LookupOutcome::Items(out)
    }

    fn first_found(
        &self,
        terms: &[Value],
        kwargs: &[(String, Value)],
        as_with: bool,
    ) -> LookupOutcome {
        let subdir = if as_with {
            // The first of these words in the task's action, else `files`.
            let action = &self.inst.task.action;
            Some(
                ["template", "var", "file"]
                    .into_iter()
                    .find(|w| action.contains(w))
                    .map_or("files", |w| match w {
                        "template" => "templates",
                        "var" => "vars",
                        _ => "files",
                    }),
            )
        } else {
            None
        };
        let mut skip = kwargs
            .iter()
            .any(|(k, v)| k == "skip" && v.as_bool() == Some(true));
        let mut search: Vec<String> = Vec::new();
        let base_files: Vec<String> = kwarg_list(kwargs, "files", ",;");
        let base_paths: Vec<String> = kwarg_list(kwargs, "paths", ",:;");
        let terms: Vec<Value> = if terms.is_empty() {
            base_files.iter().cloned().map(Value::String).collect()
        } else {
            terms.to_vec()
        };
        if let Err(m) = process_terms(&terms, &base_paths, &mut search, &mut skip) {
            return LookupOutcome::Failed(m);
        }
        for f in &search {
            if let Some(p) = self.find(subdir, f) {
                return LookupOutcome::Items(vec![Value::String(p.to_string_lossy().into_owned())]);
            }
        }
        if skip {
            LookupOutcome::Items(Vec::new())
        } else {
            LookupOutcome::Failed("No file was found when using first_found.".into())
        }
    }

    fn file(&self, terms: &[Value], kwargs: &[(String, Value)]) -> LookupOutcome {
        let flag = |k: &str, default: bool| {
            kwargs
                .iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, v)| v.as_bool())
                .unwrap_or(default)
        };
        let (rstrip, lstrip) = (flag("rstrip", true), flag("lstrip", false));
        let mut out = Vec::new();
        for term in terms {
            let Some(term) = term.as_str() else {
                return LookupOutcome::Failed("file expects strings".into());
            };
            let Some(text) = self
                .find(Some("files"), term)
                .and_then(|p| self.fs.text_bounded(&p))
            else {
                return LookupOutcome::Failed(format!(
                    "The 'file' lookup had an issue accessing the file '{term}'"
                ));
            };
            let mut t: &str = &text;
            if rstrip {
                t = t.trim_end();
            }
            if lstrip {
                t = t.trim_start();
            }
            out.push(Value::String(t.to_string()));
        }
        LookupOutcome::Items(out)
    }

    fn template(&self, terms: &[Value]) -> LookupOutcome {
        let mut out = Vec::new();
        for term in terms {
            let Some(term) = term.as_str() else {
                return LookupOutcome::Failed("template expects strings".into());
            };
            let Some(text) = self
                .find(Some("templates"), term)
                .and_then(|p| self.fs.text_bounded(&p))
            else {
                return LookupOutcome::Failed(format!(
                    "the template file {term} could not be found for the lookup"
                ));
            };
            match crate::jinja::render(&text, self) {
                Rendered::Value(Value::String(s)) => out.push(Value::String(s)),
                Rendered::Value(other) => out.push(other),
                Rendered::Unknown(_) => {
                    return LookupOutcome::Unknown(format!(
                        "template {term} not rendered statically"
                    ));
                }
            }
        }
        LookupOutcome::Items(out)
    }
}

/// A `files`/`paths` option: a list, or a string split on `seps`.
fn kwarg_list(kwargs: &[(String, Value)], key: &str, seps: &str) -> Vec<String> {
    kwargs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| split_on(v, seps))
        .unwrap_or_default()
}

fn split_on(v: &Value, seps: &str) -> Vec<String> {
    match v {
        Value::String(s) => s.split(|c| seps.contains(c)).map(str::to_string).collect(),
        Value::Array(items) => items.iter().flat_map(|i| split_on(i, seps)).collect(),
        _ => Vec::new(),
    }
}

/// `first_found._process_terms`: strings are files, mappings give
/// `files`/`paths`/`skip`, lists are walked.
fn process_terms(
    terms: &[Value],
    paths: &[String],
    out: &mut Vec<String>,
    skip: &mut bool,
) -> Result<(), String> {
    for term in terms {
        let (files, paths): (Vec<String>, Vec<String>) = match term {
            Value::Object(m) => {
                if let Some(s) = m.get("skip") {
                    *skip = s.as_bool().unwrap_or(false);
                }
                (
                    m.get("files")
                        .map(|f| split_on(f, ",;"))
                        .unwrap_or_default(),
                    m.get("paths")
                        .map_or_else(|| paths.to_vec(), |p| split_on(p, ",:;")),
                )
            }
            Value::String(s) => (vec![s.clone()], paths.to_vec()),
            Value::Array(items) => {
                process_terms(items, paths, out, skip)?;
                continue;
            }
            _ => {
                return Err("Invalid term supplied. A string, dict or list is required.".into());
            }
        };
        if paths.is_empty() {
            out.extend(files);
        } else {
            for p in &paths {
                for f in &files {
                    out.push(Path::new(p).join(f).to_string_lossy().into_owned());
                }
            }
        }
    }
    Ok(())
}

/// Most entries of one directory a `fileglob` reads.
const MAX_GLOB_ENTRIES: usize = 10_000;

/// The regular files in `dir` whose name matches `pattern` (Python's
/// `glob`: `*`, `?`, `[...]`; names starting with a dot only for a pattern
/// that does), sorted (Python's order is the directory's, arbitrary).
fn glob_files(fs: &crate::load::FsMemo, dir: &Path, pattern: &str) -> Result<Vec<String>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let Some(re) = glob_regex(pattern) else {
        return Err(format!("glob `{pattern}` not modelled"));
    };
    let mut out = Vec::new();
    for (n, e) in entries.enumerate() {
        if n >= MAX_GLOB_ENTRIES {
            return Err(format!("{} has too many entries", dir.display()));
        }
        let Ok(e) = e else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && !pattern.starts_with('.') {
            continue;
        }
        let path = dir.join(&name);
        if re.is_match(&name) && fs.is_file(&path) {
            out.push(path.to_string_lossy().into_owned());
        }
    }
    out.sort();
    Ok(out)
}

/// Python `fnmatch` for one name.
fn glob_regex(pattern: &str) -> Option<regex::Regex> {
    let mut re = String::from("^");
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '[' => {
                let mut class = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' && !class.is_empty() {
                        closed = true;
                        break;
                    }
                    class.push(d);
                }
                if !closed {
                    re.push_str(&regex::escape(&format!("[{class}")));
                } else if let Some(rest) = class.strip_prefix('!') {
                    re.push_str(&format!("[^{}]", rest.replace('\\', "\\\\")));
                } else {
                    re.push_str(&format!("[{}]", class.replace('\\', "\\\\")));
                }
            }
            other => re.push_str(&regex::escape(&other.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).ok()
}
