//! The distribution catalog `rules/sysctl-distro.yml`: the sysctl files
//! distributions and cloud images ship, grouped by profile.
//!
//! Read raw through `crate::yaml` (so every problem points at a line), then
//! validated into [`Catalog`]; every problem is collected, not just the
//! first. Choosing profiles and building a baseline is `baseline`'s job.

use super::baseline::BaselineEntry;
use super::conf::{normalize_path, sysctl_file_kind};
use crate::source::FileId;
use crate::yaml::{self, Node};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The built-in catalog: its name and text, embedded at build time.
pub const BUILTIN_CATALOG: (&str, &str) = (
    "rules/sysctl-distro.yml",
    include_str!("../../rules/sysctl-distro.yml"),
);

/// A set of systems that ship the same files (a distribution release, a cloud image).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogProfile {
    pub id: String,
    pub title: String,
    /// Something about the profile the simulation does not model.
    pub note: Option<String>,
    pub source: Option<String>,
}

/// One shipped file (or link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogFile {
    pub id: String,
    pub path: String,
    pub profiles: Vec<String>,
    pub entry: BaselineEntry,
    pub source: String,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    pub profiles: Vec<CatalogProfile>,
    pub files: Vec<CatalogFile>,
}

/// The profiles of the built-in catalog.
///
/// # Errors
/// The built-in catalog is invalid (a test keeps it valid).
pub fn catalog_profiles() -> Result<Vec<CatalogProfile>, String> {
    let (name, text) = BUILTIN_CATALOG;
    load(name, text)
        .map(|c| c.profiles)
        .map_err(|e| e.join("\n"))
}

/// Every problem in a catalog text, as `file:line:column: message`.
#[must_use]
pub fn check_catalog(name: &str, text: &str) -> Vec<String> {
    load(name, text).err().unwrap_or_default()
}

pub(crate) fn load(name: &str, text: &str) -> Result<Catalog, Vec<String>> {
    let parsed = yaml::parse(FileId(0), text);
    let mut v = Validator {
        name,
        errors: Vec::new(),
    };
    for d in &parsed.diagnostics {
        v.errors.push(format!(
            "{name}:{}:{}: {}",
            d.span.line, d.span.col, d.message
        ));
    }
    let catalog = match parsed.docs.first() {
        Some(doc) if !parsed.failed => v.catalog(doc),
        Some(_) => Catalog::default(),
        None => {
            v.errors.push(format!("{name}:1:1: empty catalog"));
            Catalog::default()
        }
    };
    if v.errors.is_empty() {
        Ok(catalog)
    } else {
        Err(v.errors)
    }
}

struct Validator<'a> {
    name: &'a str,
    errors: Vec<String>,
}

impl Validator<'_> {
    fn err(&mut self, at: &Node, message: impl std::fmt::Display) {
        self.errors.push(format!(
            "{}:{}:{}: {message}",
            self.name, at.span.line, at.span.col
        ));
    }

    /// Checks that `node` is a mapping with only `allowed` keys.
    fn keys(&mut self, node: &Node, allowed: &[&str], what: &str) -> bool {
        let Some(map) = node.as_map() else {
            self.err(node, format!("{what} must be a mapping"));
            return false;
        };
        for (k, _) in map {
            match k.as_str() {
                Some(s) if allowed.contains(&s) => {}
                _ => self.err(
                    k,
                    format!("unknown field in {what} (allowed: {})", allowed.join(", ")),
                ),
            }
        }
        true
    }

    fn string(&mut self, node: &Node, key: &str, required: bool) -> Option<String> {
        let Some(v) = node.get(key) else {
            if required {
                self.err(node, format!("missing `{key}`"));
            }
            return None;
        };
        match v.as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            _ => {
                self.err(v, format!("`{key}` must be a non-empty string"));
                None
            }
        }
    }

    fn url(&mut self, node: &Node, key: &str, required: bool) -> Option<String> {
        let s = self.string(node, key, required)?;
        if !(s.starts_with("https://") || s.starts_with("http://")) {
            let at = node.get(key).unwrap_or(node);
            self.err(at, format!("`{key}` must be an http(s) URL"));
        }
        Some(s)
    }

    fn catalog(&mut self, doc: &Node) -> Catalog {
        let mut cat = Catalog::default();
        if !self.keys(doc, &["profiles", "files"], "the catalog") {
            return cat;
        }
        let mut ids = BTreeSet::new();
        match doc.get("profiles").and_then(Node::as_seq) {
            Some(items) => {
                for item in items {
                    if let Some(p) = self.profile(item, &mut ids) {
                        cat.profiles.push(p);
                    }
                }
            }
            None => self.err(doc, "`profiles` must be a list"),
        }
        let known: BTreeSet<String> = cat.profiles.iter().map(|p| p.id.clone()).collect();
        let mut file_ids = BTreeSet::new();
        let mut used = BTreeSet::new();
        // (path, profile) -> entry id, to find two entries for one path in one profile.
        let mut claimed: BTreeMap<(String, String), String> = BTreeMap::new();
        match doc.get("files").and_then(Node::as_seq) {
            Some(items) => {
                for item in items {
                    let Some(f) = self.file(item, &known, &mut file_ids) else {
                        continue;
                    };
                    for p in &f.profiles {
                        used.insert(p.clone());
                        if let Some(other) =
                            claimed.insert((f.path.clone(), p.clone()), f.id.clone())
                        {
                            self.err(
                                item,
                                format!(
                                    "`{}` and `{other}` both give {} in profile `{p}`",
                                    f.id, f.path
                                ),
                            );
                        }
                    }
                    cat.files.push(f);
                }
            }
            None => self.err(doc, "`files` must be a list"),
        }
        if let Some(items) = doc.get("profiles").and_then(Node::as_seq) {
            for item in items {
                if let Some(id) = item.get("id").and_then(Node::as_str)
                    && !used.contains(id)
                {
                    self.err(item, format!("profile `{id}` has no file"));
                }
            }
        }
        cat
    }

    fn profile(&mut self, item: &Node, ids: &mut BTreeSet<String>) -> Option<CatalogProfile> {
        if !self.keys(item, &["id", "title", "note", "source"], "a profile") {
            return None;
        }
        let id = self.string(item, "id", true);
        let title = self.string(item, "title", true);
        let note = self.string(item, "note", false);
        let source = self.url(item, "source", false);
        let id = id?;
        if id == "none"
            || !id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            self.err(
                item,
                format!(
                    "profile id `{id}` must be lowercase letters, digits, `-`, `_` and not `none`"
                ),
            );
        }
        if !ids.insert(id.clone()) {
            self.err(item, format!("duplicate profile `{id}`"));
        }
        Some(CatalogProfile {
            id,
            title: title?,
            note,
            source,
        })
    }

    fn file(
        &mut self,
        item: &Node,
        known: &BTreeSet<String>,
        ids: &mut BTreeSet<String>,
    ) -> Option<CatalogFile> {
        if !self.keys(
            item,
            &[
                "id", "path", "profiles", "package", "why", "source", "content", "link",
            ],
            "a file",
        ) {
            return None;
        }
        let id = self.string(item, "id", true);
        if let Some(id) = &id
            && !ids.insert(id.clone())
        {
            self.err(item, format!("duplicate file id `{id}`"));
        }
        let path = self.string(item, "path", true);
        if let Some(p) = &path
            && (sysctl_file_kind(p).is_none() || normalize_path(p).as_deref() != Some(p.as_str()))
        {
            let at = item.get("path").unwrap_or(item);
            self.err(
                at,
                format!("`{p}` is not a normalised sysctl file location"),
            );
        }
        let _ = self.string(item, "package", false);
        let _ = self.string(item, "why", false);
        let source = self.url(item, "source", true);
        let mut profiles = Vec::new();
        match item.get("profiles").and_then(Node::as_seq) {
            Some(seq) if !seq.is_empty() => {
                for p in seq {
                    match p.as_str() {
                        Some(s) if known.contains(s) => profiles.push(s.to_string()),
                        Some(s) => self.err(p, format!("unknown profile `{s}`")),
                        None => self.err(p, "a profile must be a string"),
                    }
                }
            }
            _ => self.err(item, "`profiles` must be a non-empty list"),
        }
        let entry = match (item.get_entry("content"), item.get_entry("link")) {
            (Some((_, c)), None) => {
                if let Some(text) = c.as_str() {
                    self.check_content(c, text);
                    Some(BaselineEntry::Content(text.to_string()))
                } else {
                    self.err(c, "`content` must be a string");
                    None
                }
            }
            (None, Some((_, l))) => match l.as_str() {
                Some(t) if !t.trim().is_empty() => Some(BaselineEntry::Link(t.to_string())),
                _ => {
                    self.err(l, "`link` must be a non-empty string");
                    None
                }
            },
            _ => {
                self.err(item, "a file needs exactly one of `content` and `link`");
                None
            }
        };
        Some(CatalogFile {
            id: id?,
            path: path?,
            profiles,
            entry: entry?,
            source: source?,
        })
    }

    /// Every non-comment line of a shipped file must be an assignment or a
    /// `-key` exclusion: a typo here would silently drop a key.
    fn check_content(&mut self, at: &Node, text: &str) {
        for (i, raw) in text.lines().enumerate() {
            let l = raw.trim();
            if l.is_empty()
                || l.starts_with('#')
                || l.starts_with(';')
                || l.contains('=')
                || l.starts_with('-')
            {
                continue;
            }
            self.err(
                at,
                format!("content line {} is not an assignment: `{l}`", i + 1),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_is_valid() {
        let (name, text) = BUILTIN_CATALOG;
        let errors = check_catalog(name, text);
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        let cat = load(name, text).unwrap();
        let ids: Vec<&str> = cat.profiles.iter().map(|p| p.id.as_str()).collect();
        for want in ["centos7", "debian", "ubuntu", "fedora", "gce"] {
            assert!(ids.contains(&want), "missing profile {want}");
        }
        assert!(cat.files.iter().all(|f| f.source.starts_with("https://")));
    }

    #[test]
    fn builtin_catalog_has_the_known_hazards() {
        let cat = load(BUILTIN_CATALOG.0, BUILTIN_CATALOG.1).unwrap();
        let find = |path: &str, profile: &str| {
            cat.files
                .iter()
                .find(|f| f.path == path && f.profiles.iter().any(|p| p == profile))
                .map(|f| f.entry.clone())
        };
        let Some(BaselineEntry::Content(c)) = find("/usr/lib/sysctl.d/00-system.conf", "centos7")
        else {
            panic!("centos7 00-system.conf")
        };
        assert!(c.contains("net.bridge.bridge-nf-call-iptables = 0"));
        for p in ["debian", "ubuntu", "centos7", "fedora"] {
            assert_eq!(
                find("/etc/sysctl.d/99-sysctl.conf", p),
                Some(BaselineEntry::Link("../sysctl.conf".into())),
                "{p}"
            );
        }
        let Some(BaselineEntry::Content(c)) =
            find("/etc/sysctl.d/60-gce-network-security.conf", "gce")
        else {
            panic!("gce file")
        };
        assert!(c.contains("net.ipv4.ip_forward=0"));
    }

    #[test]
    fn reports_every_problem_with_lines() {
        let text = "profiles:\n  - id: a\n    title: A\n  - id: b\n    title: B\nfiles:\n  - id: x\n    path: /etc/foo.conf\n    profiles: [a, zz]\n    source: ftp://x\n    content: |\n      oops\n  - id: x\n    path: /etc/sysctl.d/x.conf\n    profiles: [a]\n    source: https://e\n    link: ../sysctl.conf\n    content: a=1\n    color: red\n";
        let errors = check_catalog("t.yml", text);
        let joined = errors.join("\n");
        for want in [
            "t.yml:8:11: `/etc/foo.conf` is not a normalised sysctl file location",
            "t.yml:9:19: unknown profile `zz`",
            "must be an http(s) URL",
            "content line 1 is not an assignment: `oops`",
            "duplicate file id `x`",
            "exactly one of `content` and `link`",
            "t.yml:19:5: unknown field in a file",
            "profile `b` has no file",
        ] {
            assert!(joined.contains(want), "missing {want:?} in:\n{joined}");
        }
    }

    #[test]
    fn same_path_twice_in_a_profile() {
        let text = "profiles:\n  - id: a\n    title: A\nfiles:\n  - id: x\n    path: /etc/sysctl.d/x.conf\n    profiles: [a]\n    source: https://e\n    content: a=1\n  - id: y\n    path: /etc/sysctl.d/x.conf\n    profiles: [a]\n    source: https://e\n    content: a=2\n";
        let errors = check_catalog("t.yml", text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("both give /etc/sysctl.d/x.conf"));
    }

    #[test]
    fn yaml_syntax_error() {
        assert!(!check_catalog("t.yml", "profiles: [a\n").is_empty());
        assert!(!check_catalog("t.yml", "").is_empty());
    }
}
