//! The sysctl files a host has before the playbook: from catalog profiles,
//! from a copy of a real host's trees, or built by hand.
//!
//! Reading a host root is read-only and never leaves the given directory:
//! every symlink is resolved by hand against that directory as if it were
//! `/`.

use super::Engine;
use super::catalog::{self, BUILTIN_CATALOG};
use super::conf::{
    COMPAT_LINK, DEV_NULL, SYSCTL_CONF, SysctlDir, normalize_path, parse_conf_lines,
    resolve_link_target,
};
use super::engine::{FileSet, Line};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::Path;

/// Most symlinks followed while resolving one path in a host root.
const MAX_HOPS: usize = 40;

/// What is at a baseline path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineEntry {
    /// A regular file with this text.
    Content(String),
    /// A symlink with this target (as written: relative targets are taken
    /// from the link's directory; `/dev/null` masks).
    Link(String),
}

/// One file of the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BaselineFile {
    /// Absolute, normalised host path.
    pub path: String,
    pub entry: BaselineEntry,
    /// Where it came from (`catalog <id>: <url>`, `host root <dir>`, or the caller's words).
    pub source: String,
}

/// The sysctl files on the host before the playbook runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    files: BTreeMap<String, BaselineFile>,
    /// Every file of the host is listed: a path not listed does not exist.
    complete: bool,
    boot_engine: Engine,
    notes: Vec<String>,
}

impl Baseline {
    /// Nothing is known about the host (the `none` profile).
    #[must_use]
    pub fn empty() -> Self {
        Baseline::default()
    }

    /// The files of the chosen profiles of the built-in catalog. Entries
    /// may be comma-separated (`debian,gce`); `none` (alone) or no profile
    /// gives [`Baseline::empty`].
    ///
    /// # Errors
    /// An unknown profile, `none` combined with others, profiles that give
    /// different files at one path, or an invalid built-in catalog.
    pub fn from_catalog(profiles: &[String]) -> Result<Self, String> {
        let (name, text) = BUILTIN_CATALOG;
        Self::from_catalog_text(name, text, profiles)
    }

    /// As [`Baseline::from_catalog`], with another catalog text.
    ///
    /// # Errors
    /// As [`Baseline::from_catalog`], plus every problem of the catalog text.
    pub fn from_catalog_text(name: &str, text: &str, profiles: &[String]) -> Result<Self, String> {
        let wanted: Vec<&str> = profiles
            .iter()
            .flat_map(|p| p.split(','))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if wanted.contains(&"none") {
            return if wanted.iter().all(|p| *p == "none") {
                Ok(Baseline::empty())
            } else {
                Err("the sysctl profile `none` cannot be combined with others".to_string())
            };
        }
        if wanted.is_empty() {
            return Ok(Baseline::empty());
        }
        let cat = catalog::load(name, text).map_err(|e| e.join("\n"))?;
        let mut base = Baseline::empty();
        let mut errors = Vec::new();
        for p in &wanted {
            let Some(profile) = cat.profiles.iter().find(|x| x.id == *p) else {
                let known: Vec<&str> = cat.profiles.iter().map(|x| x.id.as_str()).collect();
                errors.push(format!(
                    "unknown sysctl profile `{p}` (known: {}, none)",
                    known.join(", ")
                ));
                continue;
            };
            if let Some(note) = &profile.note
                && !base.notes.contains(note)
            {
                base.notes.push(note.clone());
            }
        }
        for f in &cat.files {
            if !f.profiles.iter().any(|p| wanted.contains(&p.as_str())) {
                continue;
            }
            let file = BaselineFile {
                path: f.path.clone(),
                entry: f.entry.clone(),
                source: format!("catalog {}: {}", f.id, f.source),
            };
            match base.files.get(&f.path) {
                Some(old) if old.entry != file.entry => errors.push(format!(
                    "sysctl profiles disagree on {}: {} and {}",
                    f.path, old.source, file.source
                )),
                Some(_) => {}
                None => {
                    base.files.insert(f.path.clone(), file);
                }
            }
        }
        if errors.is_empty() {
            Ok(base)
        } else {
            Err(errors.join("\n"))
        }
    }

    /// Reads a copy of a real host's `/etc`, `/run`, `/usr/local/lib`,
    /// `/usr/lib` and `/lib` trees under `dir`: the `sysctl.d` directories'
    /// `*.conf` entries and `/etc/sysctl.conf`, keeping symlinks as links
    /// (and reading what they point to when that is inside `dir`). The
    /// result is complete: a file not found does not exist on the host.
    ///
    /// # Errors
    /// `dir` is not a readable directory, or a file in it cannot be read.
    #[allow(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "both engines match `.conf` case-sensitively"
    )]
    pub fn from_host_root(dir: &Path) -> io::Result<Self> {
        if !std::fs::metadata(dir)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", dir.display()),
            ));
        }
        let source = format!("host root {}", dir.display());
        let mut reader = HostReader {
            root: dir,
            base: Baseline {
                complete: true,
                ..Baseline::default()
            },
            source: &source,
        };
        for d in SysctlDir::ALL {
            let Some(real_dir) = resolve_in_root(dir, d.path())? else {
                continue;
            };
            let listing = match std::fs::read_dir(host_join(dir, &real_dir)) {
                Ok(l) => l,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut names: Vec<String> = Vec::new();
            for entry in listing {
                let name = entry?.file_name().to_string_lossy().into_owned();
                if name.ends_with(".conf") {
                    names.push(name);
                }
            }
            names.sort();
            for name in names {
                reader.entry(
                    &format!("{}/{name}", d.path()),
                    &format!("{real_dir}/{name}"),
                )?;
            }
        }
        if let Some(real_etc) = resolve_in_root(dir, "/etc")? {
            reader.entry(SYSCTL_CONF, &format!("{real_etc}/sysctl.conf"))?;
        }
        Ok(reader.base)
    }

    /// Adds (or replaces) a regular file.
    #[must_use]
    pub fn with_file(mut self, path: &str, content: &str, source: &str) -> Self {
        self.insert(path, BaselineEntry::Content(content.to_string()), source);
        self
    }

    /// Adds (or replaces) a symlink.
    #[must_use]
    pub fn with_link(mut self, path: &str, target: &str, source: &str) -> Self {
        self.insert(path, BaselineEntry::Link(target.to_string()), source);
        self
    }

    /// Declares the listed files to be all the host has (as a host root is).
    #[must_use]
    pub fn complete(mut self) -> Self {
        self.complete = true;
        self
    }

    /// The engine that applied the files at the host's last boot (default
    /// systemd-sysctl; procps on hosts without systemd).
    #[must_use]
    pub fn with_boot_engine(mut self, engine: Engine) -> Self {
        self.boot_engine = engine;
        self
    }

    fn insert(&mut self, path: &str, entry: BaselineEntry, source: &str) {
        let path = normalize_path(path).unwrap_or_else(|| path.to_string());
        self.files.insert(
            path.clone(),
            BaselineFile {
                path,
                entry,
                source: source.to_string(),
            },
        );
    }

    /// The files, by path.
    pub fn files(&self) -> impl Iterator<Item = &BaselineFile> {
        self.files.values()
    }

    #[must_use]
    pub fn boot_engine(&self) -> Engine {
        self.boot_engine
    }

    /// Whether the baseline says if `/etc/sysctl.d/99-sysctl.conf` exists
    /// (it lists that path, or it lists every file of the host).
    #[must_use]
    pub fn link_decided(&self) -> bool {
        self.complete || self.files.contains_key(COMPAT_LINK)
    }

    /// Profile notes for what the simulation does not model.
    #[must_use]
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The model the simulation starts from.
    pub(crate) fn file_set(&self) -> FileSet {
        let mut fs = FileSet::default();
        for f in self.files.values() {
            match &f.entry {
                BaselineEntry::Content(text) => fs.insert_content(
                    &f.path,
                    parse_conf_lines(text)
                        .into_iter()
                        .map(|l| Line {
                            key: l.key,
                            value: l.value,
                            number: Some(l.line),
                            evidence: None,
                            conditional: false,
                        })
                        .collect(),
                    Some(f.source.clone()),
                ),
                BaselineEntry::Link(target) => {
                    fs.insert_link(&f.path, resolve_link_target(&f.path, target));
                }
            }
        }
        fs
    }
}

struct HostReader<'a> {
    root: &'a Path,
    base: Baseline,
    source: &'a str,
}

impl HostReader<'_> {
    /// Records the entry at host path `nominal` (really at `real`, after the
    /// directory's own links): a file's text, or a link and what it leads to.
    fn entry(&mut self, nominal: &str, real: &str) -> io::Result<()> {
        let on_disk = host_join(self.root, real);
        let meta = match std::fs::symlink_metadata(&on_disk) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&on_disk)?.to_string_lossy().into_owned();
            let lexical = resolve_link_target(real, &target);
            // `..` in the target is resolved physically by `resolve_in_root`.
            let joined = if target.starts_with('/') {
                target.clone()
            } else {
                format!("{}/{target}", real.rsplit_once('/').map_or("", |(d, _)| d))
            };
            let end = if lexical == DEV_NULL {
                Some(lexical.clone())
            } else {
                resolve_in_root(self.root, &joined)?
            };
            let Some(end) = end else {
                // A link loop: the engines cannot open it; keep it as a link to nowhere.
                self.base
                    .insert(nominal, BaselineEntry::Link(lexical), self.source);
                return Ok(());
            };
            self.base
                .insert(nominal, BaselineEntry::Link(end.clone()), self.source);
            if end != DEV_NULL && !self.base.files.contains_key(&end) {
                let file = host_join(self.root, &end);
                if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
                    let text = read_text(&file)?;
                    self.base
                        .insert(&end, BaselineEntry::Content(text), self.source);
                }
            }
        } else if meta.is_file() {
            let text = read_text(&on_disk)?;
            self.base
                .insert(nominal, BaselineEntry::Content(text), self.source);
        }
        Ok(())
    }
}

fn read_text(path: &Path) -> io::Result<String> {
    Ok(String::from_utf8_lossy(&std::fs::read(path)?).into_owned())
}

/// `root` joined with an absolute host path.
fn host_join(root: &Path, host_path: &str) -> std::path::PathBuf {
    root.join(host_path.trim_start_matches('/'))
}

/// Resolves an absolute host path inside `root` as the kernel would if
/// `root` were `/`: every component that is a symlink is replaced by its
/// target (absolute targets start again from `root`), `..` goes up from the
/// real directory. Only paths under `root` are ever looked at. Missing
/// components are kept as they are. `None` on a link loop.
fn resolve_in_root(root: &Path, host_path: &str) -> io::Result<Option<String>> {
    let mut queue: VecDeque<String> = host_path.split('/').map(str::to_string).collect();
    let mut done: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(c) = queue.pop_front() {
        match c.as_str() {
            "" | "." => continue,
            ".." => {
                done.pop();
                continue;
            }
            _ => {}
        }
        let here = format!(
            "/{}",
            done.iter()
                .chain(std::iter::once(&c))
                .cloned()
                .collect::<Vec<_>>()
                .join("/")
        );
        if let Ok(m) = std::fs::symlink_metadata(host_join(root, &here))
            && m.file_type().is_symlink()
        {
            hops += 1;
            if hops > MAX_HOPS {
                return Ok(None);
            }
            let target = std::fs::read_link(host_join(root, &here))?
                .to_string_lossy()
                .into_owned();
            if target.starts_with('/') {
                done.clear();
            }
            for part in target.split('/').rev() {
                queue.push_front(part.to_string());
            }
            continue;
        }
        done.push(c);
    }
    Ok(Some(format!("/{}", done.join("/"))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn write(root: &Path, host: &str, text: &str) {
        let p = host_join(root, host);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn link(root: &Path, host: &str, target: &str) {
        let p = host_join(root, host);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink(target, p).unwrap();
    }

    fn entry<'a>(b: &'a Baseline, path: &str) -> Option<&'a BaselineEntry> {
        b.files().find(|f| f.path == path).map(|f| &f.entry)
    }

    #[test]
    fn catalog_profiles_and_none() {
        assert_eq!(
            Baseline::from_catalog(&["none".into()]).unwrap(),
            Baseline::empty()
        );
        assert_eq!(Baseline::from_catalog(&[]).unwrap(), Baseline::empty());
        assert!(Baseline::from_catalog(&["none,debian".into()]).is_err());
        let err = Baseline::from_catalog(&["plan9".into()]).unwrap_err();
        assert!(
            err.contains("unknown sysctl profile `plan9`") && err.contains("centos7"),
            "{err}"
        );

        let b = Baseline::from_catalog(&["debian,gce".into()]).unwrap();
        assert!(b.link_decided());
        assert_eq!(
            entry(&b, COMPAT_LINK),
            Some(&BaselineEntry::Link("../sysctl.conf".into()))
        );
        assert!(entry(&b, "/etc/sysctl.d/60-gce-network-security.conf").is_some());
        assert!(entry(&b, "/usr/lib/sysctl.d/00-system.conf").is_none());

        let gce = Baseline::from_catalog(&["gce".into()]).unwrap();
        assert!(!gce.link_decided(), "gce alone says nothing of the link");
        let c7 = Baseline::from_catalog(&["centos7".into()]).unwrap();
        assert!(
            !c7.notes().is_empty(),
            "centos7 carries the systemd 219 note"
        );
        assert!(c7.files().all(|f| f.source.starts_with("catalog ")));
    }

    #[test]
    fn catalog_profiles_that_disagree() {
        let text = "profiles:\n  - id: a\n    title: A\n  - id: b\n    title: B\nfiles:\n  - id: x\n    path: /etc/sysctl.d/x.conf\n    profiles: [a]\n    source: https://e\n    content: k=1\n  - id: y\n    path: /etc/sysctl.d/x.conf\n    profiles: [b]\n    source: https://e\n    content: k=2\n";
        let err =
            Baseline::from_catalog_text("t.yml", text, &["a".into(), "b".into()]).unwrap_err();
        assert!(err.contains("disagree on /etc/sysctl.d/x.conf"), "{err}");
        assert!(Baseline::from_catalog_text("t.yml", text, &["a".into()]).is_ok());
    }

    #[test]
    fn host_root_reads_files_links_and_masks() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "/etc/sysctl.conf", "net.ipv4.ip_forward = 1\n");
        link(root, "/etc/sysctl.d/99-sysctl.conf", "../sysctl.conf");
        link(root, "/etc/sysctl.d/50-default.conf", "/dev/null");
        write(
            root,
            "/etc/sysctl.d/zz-hardening.conf",
            "net.ipv4.ip_forward = 0\n",
        );
        write(root, "/etc/sysctl.d/README", "not a conf file\n");
        write(
            root,
            "/usr/lib/sysctl.d/50-default.conf",
            "kernel.sysrq = 16\n",
        );
        write(root, "/run/sysctl.d/10-run.conf", "vm.x = 1\n");
        write(root, "/usr/local/lib/sysctl.d/20-local.conf", "vm.y = 1\n");
        // /lib -> usr/lib, as on merged-/usr hosts
        link(root, "/lib", "usr/lib");
        // an absolute link resolves inside the root, not on this machine
        write(
            root,
            "/opt/k8s/k8s.conf",
            "net.bridge.bridge-nf-call-iptables = 1\n",
        );
        link(root, "/etc/sysctl.d/k8s.conf", "/opt/k8s/k8s.conf");
        // a link that tries to leave the root stays inside it
        link(
            root,
            "/etc/sysctl.d/escape.conf",
            "../../../../../../etc/hostname",
        );

        let b = Baseline::from_host_root(root).unwrap();
        assert!(b.link_decided());
        assert_eq!(
            entry(&b, COMPAT_LINK),
            Some(&BaselineEntry::Link(SYSCTL_CONF.into()))
        );
        assert_eq!(
            entry(&b, SYSCTL_CONF),
            Some(&BaselineEntry::Content("net.ipv4.ip_forward = 1\n".into()))
        );
        assert_eq!(
            entry(&b, "/etc/sysctl.d/50-default.conf"),
            Some(&BaselineEntry::Link(DEV_NULL.into()))
        );
        assert!(entry(&b, "/etc/sysctl.d/README").is_none());
        assert!(matches!(
            entry(&b, "/usr/lib/sysctl.d/50-default.conf"),
            Some(BaselineEntry::Content(_))
        ));
        assert!(matches!(
            entry(&b, "/lib/sysctl.d/50-default.conf"),
            Some(BaselineEntry::Content(_))
        ));
        assert!(entry(&b, "/run/sysctl.d/10-run.conf").is_some());
        assert!(entry(&b, "/usr/local/lib/sysctl.d/20-local.conf").is_some());
        assert_eq!(
            entry(&b, "/etc/sysctl.d/k8s.conf"),
            Some(&BaselineEntry::Link("/opt/k8s/k8s.conf".into()))
        );
        assert!(
            matches!(entry(&b, "/opt/k8s/k8s.conf"), Some(BaselineEntry::Content(c)) if c.contains("bridge"))
        );
        assert_eq!(
            entry(&b, "/etc/sysctl.d/escape.conf"),
            Some(&BaselineEntry::Link("/etc/hostname".into()))
        );
        assert!(
            entry(&b, "/etc/hostname").is_none(),
            "nothing outside the sysctl trees is read unless linked and present"
        );
    }

    #[test]
    fn host_root_link_loop_and_missing_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        link(root, "/etc/sysctl.d/a.conf", "b.conf");
        link(root, "/etc/sysctl.d/b.conf", "a.conf");
        let b = Baseline::from_host_root(root).unwrap();
        assert!(matches!(
            entry(&b, "/etc/sysctl.d/a.conf"),
            Some(BaselineEntry::Link(_))
        ));
        assert!(entry(&b, SYSCTL_CONF).is_none());
        assert!(Baseline::from_host_root(&root.join("nope")).is_err());
    }

    #[test]
    fn hand_built_baseline() {
        let b = Baseline::empty()
            .with_file("/etc/sysctl.d//x.conf", "a.b = 1\n", "test")
            .with_boot_engine(Engine::Procps);
        assert_eq!(b.boot_engine(), Engine::Procps);
        assert!(!b.link_decided());
        assert!(b.clone().complete().link_decided());
        assert!(
            b.with_link(COMPAT_LINK, "../sysctl.conf", "test")
                .link_decided()
        );
    }
}
