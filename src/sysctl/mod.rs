//! The sysctl boot-order simulator.
//!
//! Given the sysctl writes a playbook makes (found statically by the caller,
//! in execution order) and the files the host already has (a [`Baseline`]:
//! distribution profiles from `rules/sysctl-distro.yml`, or a copy of a real
//! host's trees), it computes for every key the live value right after the
//! playbook and the value after the next reboot under both boot engines,
//! with the file that wins and the assignments it overrides.
//!
//! The rules are those of DOMAIN.md section 4, checked against the sources
//! (systemd `src/sysctl/sysctl.c` and `conf-files.c`, procps-ng 4
//! `src/sysctl.c`):
//! - both engines read `*.conf` from `/etc/sysctl.d`, `/run/sysctl.d`,
//!   `/usr/local/lib/sysctl.d`, `/usr/lib/sysctl.d`, `/lib/sysctl.d`; a file
//!   hides same-named files in later directories (a link to `/dev/null`
//!   masks); the survivors are applied in byte order of their basename and
//!   the last assignment of a key wins;
//! - systemd-sysctl ignores `/etc/sysctl.conf` except through the
//!   `/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf` link; procps
//!   `sysctl --system` applies `/etc/sysctl.conf` after everything else (so
//!   with the link it is applied twice);
//! - a glob key (`net.ipv4.conf.*.rp_filter`) sets every matching key that
//!   has no explicit assignment anywhere (explicit beats glob whatever the
//!   order; `-key` without `=` only shields the key from globs, and under
//!   systemd it also cancels an earlier explicit assignment). Only keys the
//!   simulation tracks (those named in any file or write) can match; a glob
//!   key is also reported as its own key.
//!
//! When the baseline does not say whether the compatibility link exists,
//! the whole simulation runs twice (with and without it) and an outcome is
//! split by assumption only where the two differ.
//!
//! Pure and read-only: the only I/O is reading a host-root copy in
//! [`Baseline::from_host_root`]. It knows nothing of Ansible: the caller
//! turns tasks into [`Write`]s.

mod baseline;
mod catalog;
pub mod conf;
mod engine;
mod live;
#[cfg(test)]
mod naive;
mod required;
mod simulate;

pub use baseline::{Baseline, BaselineEntry, BaselineFile};
pub use catalog::{BUILTIN_CATALOG, CatalogProfile, catalog_profiles, check_catalog};
pub use conf::{
    COMPAT_LINK, ConfLine, SYSCTL_CONF, SysctlDir, SysctlFileKind, glob_matches, is_glob,
    normalize_key, parse_conf, parse_conf_lines, sysctl_file_kind,
};
pub use required::{Required, required};
pub use simulate::simulate;

use serde::Serialize;

/// Where a write was found in the Ansible content.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Evidence {
    pub file: String,
    pub line: u32,
    pub task: String,
}

/// A program that applies sysctl files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// `systemd-sysctl` (at boot on systemd hosts; `systemctl restart systemd-sysctl`).
    #[default]
    SystemdSysctl,
    /// procps `sysctl --system` (at boot on hosts without systemd).
    Procps,
}

impl Engine {
    /// Both engines, in report order.
    pub const ALL: [Engine; 2] = [Engine::SystemdSysctl, Engine::Procps];

    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Engine::SystemdSysctl => "systemd-sysctl",
            Engine::Procps => "sysctl --system",
        }
    }
}

/// One sysctl-relevant effect of a task.
///
/// Paths are absolute host paths (normalised here; a path that is not
/// absolute, e.g. an unresolved template, is kept as given and is never read
/// at boot); keys may use `/` or `.`.
/// `Persist` and `Remove` write through symlinks, as `ansible.posix.sysctl`
/// and `lineinfile` do (they write to the link's real path): on a Debian
/// host, persisting into `/etc/sysctl.d/99-sysctl.conf` edits
/// `/etc/sysctl.conf`. A module that replaces the link instead (`copy` or
/// `template` without `follow: true`) is a `DeleteFile` followed by the
/// `Persist`s of the new content; a whole-file write is likewise
/// `DeleteFile` then one `Persist` per key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum WriteKind {
    /// A `key=value` line written into a file (`ansible.posix.sysctl` with
    /// its `sysctl_file`; `copy`/`template`/`lineinfile`/`blockinfile`/
    /// `ini_file` into a sysctl file): replaces the file's first line for
    /// the key (dropping later duplicates) or is appended.
    Persist {
        file: String,
        key: String,
        value: String,
    },
    /// A key removed from a file (`ansible.posix.sysctl state=absent`,
    /// `lineinfile state=absent`).
    Remove { file: String, key: String },
    /// A whole file (or link) removed (`file state=absent`).
    DeleteFile { file: String },
    /// A file turned into a link (`file state=link src=..`), e.g.
    /// `/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf`, or `-> /dev/null`
    /// to mask. Relative targets are taken from the link's directory.
    Link { file: String, target: String },
    /// Live change only: `sysctl -w k=v`, `ansible.posix.sysctl sysctl_set: true`.
    SetLive { key: String, value: String },
    /// Apply one file now: `sysctl -p FILE` (`ansible.posix.sysctl reload:
    /// true` applies its `sysctl_file` only). Uses the file's current content.
    ApplyFile { file: String },
    /// Apply everything now: `sysctl --system` (procps) or `systemctl
    /// restart systemd-sysctl`, with the current files.
    ApplyAll { engine: Engine },
}

/// A write with where it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    pub kind: WriteKind,
    pub evidence: Evidence,
    /// The task's conditions are not all known to hold. The simulation
    /// applies the write anyway and flags what depends on it.
    pub conditional: bool,
}

/// One assignment of a key, as an engine read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The file as the engine opened it (e.g. `/etc/sysctl.d/99-sysctl.conf`).
    pub file: String,
    /// The file the line really lives in, when `file` is a link to it
    /// (e.g. `/etc/sysctl.conf`).
    pub via_link_to: Option<String>,
    /// Line number in a baseline file; `None` for lines written by the playbook.
    pub line: Option<u32>,
    /// The key as written (normalised); differs from the result's key when a
    /// glob assignment matched it.
    pub key: String,
    /// The value; `None` for a `-key` glob exclusion.
    pub value: Option<String>,
    /// The write that put the line there.
    pub evidence: Option<Evidence>,
    /// That write was conditional.
    pub conditional: bool,
    /// Where a baseline file came from (catalog entry and its source, or the host root).
    pub source: Option<String>,
}

/// A key's value after the next boot under one engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BootOutcome {
    pub engine: Engine,
    /// `Some(b)`: this outcome holds if the `99-sysctl.conf -> ../sysctl.conf`
    /// link exists (`true`) or not (`false`); given only when the baseline
    /// leaves it open and the answer depends on it. `None`: holds either way.
    pub with_link: Option<bool>,
    /// The value written at boot; `None`: no file sets it (the kernel's default stays).
    pub value: Option<String>,
    /// The assignment that wins.
    pub winner: Option<Setting>,
    /// Every other assignment of the key, in the order the engine reads them
    /// (explicit ones and matching glob ones; an explicit key beats globs).
    pub overridden: Vec<Setting>,
}

impl BootOutcome {
    /// The winning file, as the engine opened it.
    #[must_use]
    pub fn winner_file(&self) -> Option<&str> {
        self.winner.as_ref().map(|s| s.file.as_str())
    }

    /// The write behind the winning line, when the playbook wrote it.
    #[must_use]
    pub fn winner_evidence(&self) -> Option<&Evidence> {
        self.winner.as_ref().and_then(|s| s.evidence.as_ref())
    }
}

/// A live value and what set it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Live {
    /// `None`: unknown (nothing in the baseline or the playbook set it).
    pub value: Option<String>,
    /// The write that last set it; `None` when it is the boot value of the baseline.
    pub by: Option<Evidence>,
    /// The file whose line supplied the value (boot, `ApplyFile`, `ApplyAll`).
    pub file: Option<String>,
    /// The setting write, or the line it applied, was conditional.
    pub conditional: bool,
}

/// Everything known about one key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyResult {
    /// The normalised key (dotted form).
    pub key: String,
    /// The key is a glob pattern; its outcomes are those of the pattern's own assignments.
    pub glob: bool,
    /// Live value right after the playbook (starting from the baseline's boot
    /// value under [`Baseline::boot_engine`]). When the compatibility link is
    /// undecided, this assumes it exists; see `now_without_link`.
    pub now: Option<String>,
    /// The write that last set the live value.
    pub now_by: Option<Evidence>,
    /// The file whose line supplied the live value, when a file did.
    pub now_file: Option<String>,
    pub now_conditional: bool,
    /// The live value without the compatibility link, given only when the
    /// link is undecided and the answer differs.
    pub now_without_link: Option<Live>,
    /// One outcome per engine, split by link assumption where that matters.
    pub boot: Vec<BootOutcome>,
}

impl KeyResult {
    /// The outcome for `engine` under a link assumption (an outcome that
    /// holds either way answers both).
    #[must_use]
    pub fn boot_for(&self, engine: Engine, with_link: bool) -> Option<&BootOutcome> {
        self.boot
            .iter()
            .find(|b| b.engine == engine && b.with_link.is_none_or(|l| l == with_link))
    }

    /// The value at boot for `engine` under a link assumption.
    #[must_use]
    pub fn boot_value(&self, engine: Engine, with_link: bool) -> Option<&str> {
        self.boot_for(engine, with_link)
            .and_then(|b| b.value.as_deref())
    }

    /// The live value right after the playbook under a link assumption.
    #[must_use]
    pub fn now_value(&self, with_link: bool) -> Option<&str> {
        match (&self.now_without_link, with_link) {
            (Some(alt), false) => alt.value.as_deref(),
            _ => self.now.as_deref(),
        }
    }
}
