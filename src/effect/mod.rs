//! Effects: what a task iteration does to a node, derived once from its
//! normalized arguments (or its command line), and read by every consumer
//! (the who-fixes catalog, the sysctl simulator, the `check` rules, the
//! outputs).
//!
//! This module owns the closed set of effect types and the reading of
//! module semantics: which module (or command) writes which sysctl, loads
//! which kernel module, turns swap off, writes which file, changes which
//! service, installs which package, opens which port. Nothing else in the
//! crate interprets a module's arguments.
//!
//! It does not evaluate conditions, resolve variables or read files itself:
//! it sees a task iteration through [`TaskView`] (arguments already
//! rendered, role files read by the caller), so it depends on no part of
//! the analysis that calls it.

pub mod command;
mod derive;
mod display;
mod file;
mod firewall;
mod fstab;
mod kmod;
mod package;
mod probe;
mod service;
mod sysctl;
#[cfg(test)]
pub(crate) mod testing;
mod to_sysctl;
pub mod units;
mod unknown;
pub mod view;

pub use derive::{derive, kinds_of, may_change_units, may_have, may_have_effects};
pub use display::{shown, shown_raw};
pub use file::unit_of_file;
pub use to_sysctl::{sysctl_writes, sysctl_writes_marked};
pub use unknown::{UNKNOWN_ITEM, UNKNOWN_PREFIX, is_unknown};
pub use view::TaskView;

use crate::jinja::{Coverage, FileText};
use crate::sysctl::Engine;
use serde::Serialize;
use std::sync::{Arc, OnceLock};

/// When an effect holds: during the run (`now`), after the next boot
/// (`boot`), or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Timing {
    pub now: bool,
    pub boot: bool,
}

impl Timing {
    pub const NOW: Timing = Timing {
        now: true,
        boot: false,
    };
    pub const BOOT: Timing = Timing {
        now: false,
        boot: true,
    };
    pub const BOTH: Timing = Timing {
        now: true,
        boot: true,
    };
    /// Neither: a file written outside the places any boot engine reads.
    pub const NEITHER: Timing = Timing {
        now: false,
        boot: false,
    };
}

/// One thing a task iteration does to the node.
#[derive(Debug, Clone, Serialize)]
pub struct Effect {
    #[serde(flatten)]
    pub kind: EffectKind,
    pub timing: Timing,
    /// Holds only under these template conditions, in words (a line of a
    /// written template inside a branch not known statically); the task's
    /// own `when:` is not here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

impl Effect {
    #[must_use]
    pub fn new(kind: EffectKind, timing: Timing) -> Self {
        Effect {
            kind,
            timing,
            when: None,
        }
    }

    /// The effect under template conditions (see [`Effect::when`]).
    #[must_use]
    pub fn under(mut self, when: Option<String>) -> Self {
        self.when = when;
        self
    }
}

/// The closed set of effects.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "effect")]
pub enum EffectKind {
    /// A sysctl value: set live (`now`: `sysctl -w`, `sysctl_set`, a reload
    /// of the file that holds it) and/or written into `file` (`boot` when
    /// the boot engines read that file).
    SysctlSet {
        key: String,
        value: String,
        file: Option<String>,
    },
    /// A key removed from a sysctl file.
    SysctlRemoved { key: String, file: String },
    /// Sysctl files applied now: one file (`sysctl -p FILE`, the sysctl
    /// module's reload) or every file by one engine (`sysctl --system`,
    /// `systemctl restart systemd-sysctl`).
    SysctlApplied { apply: SysctlApply },
    /// A kernel module loaded now (`modprobe`) and/or at boot (a
    /// `modules-load.d` file, `file` naming it).
    ModuleLoaded { name: String, file: Option<String> },
    /// A kernel module kept from loading (`blacklist x`, `install x
    /// /bin/true` in `modprobe.d`).
    ModuleBlocked { name: String, file: String },
    /// Swap turned off now (`swapoff -a`) or kept off at boot.
    SwapOff { how: SwapOff },
    /// A file written whole (`copy`, `template`, `get_url`...).
    FileWritten {
        path: String,
        mode: Option<String>,
        content: Content,
        /// Written in place of a symlink at `path` (`copy`/`template`
        /// without `follow: true`), not through it.
        replaces_link: bool,
    },
    /// Lines of a file edited in place (`lineinfile`, `blockinfile`,
    /// `replace`, `ini_file`, `sed -i`).
    FileEdited { path: String, edit: Edit },
    /// A file (or link) removed.
    FileRemoved { path: String },
    /// A symlink created at `path`.
    Linked { path: String, target: String },
    /// A systemd (or init) unit changed.
    Service { unit: String, action: ServiceAction },
    /// A package changed.
    Package {
        name: String,
        action: PackageAction,
        version: Option<String>,
    },
    /// A host firewall changed.
    Firewall {
        tool: String,
        action: FirewallAction,
        /// `6443`, `2379-2380`, or none for the whole firewall.
        port: Option<String>,
        proto: Option<String>,
    },
    /// The hostname set.
    Hostname { name: String },
    /// Handlers notified by the task.
    HandlerNotified { name: String },
    /// Notified handlers run here (`meta: flush_handlers`).
    HandlersFlushed,
    /// Something verified without being changed: `assert`/`fail` on an
    /// expression, `wait_for` on a port, a probing command.
    Check {
        /// What must hold: `assert`'s expressions joined with ` and `,
        /// `fail`'s message, the state `wait_for` waits for.
        what: String,
        port: Option<String>,
        /// The message shown when the check fails (`assert`'s `fail_msg`
        /// or `msg`, `fail`'s `msg`): often the only words that say what
        /// is checked.
        msg: Option<String>,
    },
    /// `kubeadm` run with these arguments.
    Kubeadm { args: String },
    /// A command line nothing here recognises.
    Command { line: String },
}

/// Which sysctl files are applied now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SysctlApply {
    File(String),
    All(Engine),
}

/// How swap is kept off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwapOff {
    /// `swapoff -a` (now).
    All,
    /// The swap entries of `/etc/fstab` removed or commented (boot).
    FstabEntries,
    /// A swap unit (`swap.target`, `dev-sdb2.swap`) masked (boot).
    UnitMasked(String),
    /// A swap generator (zram-generator, dphys-swapfile) removed or
    /// disabled (boot).
    Generator(String),
}

/// What an in-place edit does.
#[derive(Debug, Clone, Serialize)]
pub struct Edit {
    /// The lines put in (`line`, `block`, the `replace` text, `option =
    /// value`); empty when lines are only removed.
    pub text: String,
    /// The pattern that selects the lines edited or removed (`regexp`).
    pub regexp: Option<String>,
    /// Lines removed rather than written (`state: absent`).
    pub remove: bool,
}

/// What a unit action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceAction {
    Started,
    Restarted,
    Reloaded,
    Stopped,
    Enabled,
    Disabled,
    Masked,
    Unmasked,
    /// `systemctl daemon-reload`: the manager's, so its `unit` is empty.
    DaemonReload,
}

/// What a package action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PackageAction {
    Installed,
    Removed,
    Held,
    Unheld,
}

/// What a firewall action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FirewallAction {
    Opened,
    Closed,
    /// The firewall as a whole turned off.
    Disabled,
}

/// What a written file holds, as far as known.
#[derive(Debug, Clone)]
pub struct Content {
    /// The text as written in the source (a template before rendering).
    pub raw: Arc<str>,
    /// How much is known before rendering: the source found and literal
    /// ([`Known::Known`]), a template ([`Known::Partly`] until rendered),
    /// or not found. [`Content::coverage`] is the answer after rendering.
    pub known: Known,
    /// The template's rendering, when the caller rendered it (see
    /// [`Content::rendering`]).
    pub rendered: Arc<OnceLock<Option<Rendering>>>,
    /// A template whose text is rendered before it is written.
    pub template: bool,
}

/// A template's rendering: its lines, and its text for patterns.
#[derive(Debug, Clone)]
pub struct Rendering {
    /// Known lines, lines known under template conditions, unknown lines.
    pub file: FileText,
    /// The whole text when every line is known, else the known lines.
    pub text: String,
}

impl Rendering {
    #[must_use]
    pub fn new(file: FileText) -> Self {
        let text = file.full_text().unwrap_or_else(|| file.known_text());
        Rendering { file, text }
    }

    /// How much of the file is known.
    #[must_use]
    pub fn known(&self) -> Known {
        match self.file.coverage() {
            Coverage::Full => Known::Known,
            Coverage::Partly => Known::Partly,
            Coverage::None => Known::Unknown,
        }
    }
}

/// JSON: `raw`, `known`, `template`, and once rendered, the whole `text`
/// when every line is known, else its `lines` (each with why it is
/// unknown and the conditions it is written under).
impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let rendering = self.rendering_now();
        let mut st = ser.serialize_struct("Content", 5)?;
        st.serialize_field("raw", &*self.raw)?;
        st.serialize_field("known", &self.coverage())?;
        st.serialize_field("template", &self.template)?;
        match rendering {
            Some(r) if r.known() == Known::Known => st.serialize_field("text", &r.text)?,
            Some(r) => st.serialize_field("lines", &r.file.lines)?,
            None => st.skip_field("text")?,
        }
        st.end()
    }
}

/// How much of a written file's content is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Known {
    /// Every byte.
    Known,
    /// Some lines: a template with lines that are conditional or unknown
    /// (or not rendered yet), or a source found but not rendered.
    Partly,
    /// Nothing: the source file was not found, or nothing of the template
    /// renders.
    Unknown,
}

impl Content {
    #[must_use]
    pub fn new(raw: Arc<str>, known: Known, template: bool) -> Self {
        Content {
            raw,
            known,
            rendered: Arc::default(),
            template,
        }
    }

    /// A template with template syntax in it (its text is not the raw text).
    fn renders(&self) -> bool {
        self.template && crate::ansible::project::is_templated(&self.raw)
    }

    /// The template's rendering with the iteration's variables (rendered
    /// on first request); `None` for a text written as is.
    pub fn rendering(&self, view: &dyn TaskView) -> Option<&Rendering> {
        if !self.renders() {
            return None;
        }
        self.rendered
            .get_or_init(|| view.render_file(&self.raw).map(Rendering::new))
            .as_ref()
    }

    /// The rendering, when someone already asked for it.
    #[must_use]
    pub fn rendering_now(&self) -> Option<&Rendering> {
        self.rendered.get().and_then(Option::as_ref)
    }

    /// How much is known: from the rendered lines once rendered.
    #[must_use]
    pub fn coverage(&self) -> Known {
        match self.rendering_now() {
            Some(r) if self.known != Known::Unknown => r.known(),
            _ => self.known,
        }
    }

    /// The text as the node gets it as far as known: a template's
    /// rendering (its known lines, when some are not), else the text as
    /// written.
    pub fn text<'c>(&'c self, view: &dyn TaskView) -> &'c str {
        match self.rendering(view) {
            Some(r) => &r.text,
            None => &self.raw,
        }
    }
}

/// The effect types by name, as the catalog names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    SysctlSet,
    SysctlRemoved,
    SysctlApplied,
    ModuleLoaded,
    ModuleBlocked,
    SwapOff,
    FileWritten,
    FileEdited,
    FileRemoved,
    Linked,
    Service,
    Package,
    Firewall,
    Hostname,
    HandlerNotified,
    HandlersFlushed,
    Check,
    Kubeadm,
    Command,
}

impl Kind {
    pub const ALL: [Kind; 19] = [
        Kind::SysctlSet,
        Kind::SysctlRemoved,
        Kind::SysctlApplied,
        Kind::ModuleLoaded,
        Kind::ModuleBlocked,
        Kind::SwapOff,
        Kind::FileWritten,
        Kind::FileEdited,
        Kind::FileRemoved,
        Kind::Linked,
        Kind::Service,
        Kind::Package,
        Kind::Firewall,
        Kind::Hostname,
        Kind::HandlerNotified,
        Kind::HandlersFlushed,
        Kind::Check,
        Kind::Kubeadm,
        Kind::Command,
    ];

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::SysctlSet => "sysctl_set",
            Kind::SysctlRemoved => "sysctl_removed",
            Kind::SysctlApplied => "sysctl_applied",
            Kind::ModuleLoaded => "module_loaded",
            Kind::ModuleBlocked => "module_blocked",
            Kind::SwapOff => "swap_off",
            Kind::FileWritten => "file_written",
            Kind::FileEdited => "file_edited",
            Kind::FileRemoved => "file_removed",
            Kind::Linked => "linked",
            Kind::Service => "service",
            Kind::Package => "package",
            Kind::Firewall => "firewall",
            Kind::Hostname => "hostname",
            Kind::HandlerNotified => "handler_notified",
            Kind::HandlersFlushed => "handlers_flushed",
            Kind::Check => "check",
            Kind::Kubeadm => "kubeadm",
            Kind::Command => "command",
        }
    }

    #[must_use]
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The fields a catalog pattern may match for this kind (see
    /// [`Effect::field`]). `content` of `file_written` is matched against
    /// the file's text.
    #[must_use]
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::SysctlSet => &["key", "value", "file"],
            Kind::SysctlRemoved => &["key", "file"],
            Kind::SysctlApplied => &["file", "engine"],
            Kind::ModuleLoaded => &["name", "file"],
            Kind::ModuleBlocked => &["name", "file"],
            Kind::SwapOff => &["how", "unit"],
            Kind::FileWritten => &["path", "mode", "content"],
            Kind::FileEdited => &["path", "content", "text", "regexp", "remove"],
            Kind::FileRemoved => &["path"],
            Kind::Linked => &["path", "target"],
            Kind::Service => &["unit", "action"],
            Kind::Package => &["name", "action", "version"],
            Kind::Firewall => &["tool", "action", "port", "proto"],
            Kind::Hostname => &["name"],
            Kind::HandlerNotified => &["name"],
            Kind::HandlersFlushed => &[],
            Kind::Check => &["what", "port", "msg"],
            Kind::Kubeadm => &["args"],
            Kind::Command => &["line"],
        }
    }
}

impl ServiceAction {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceAction::Started => "started",
            ServiceAction::Restarted => "restarted",
            ServiceAction::Reloaded => "reloaded",
            ServiceAction::Stopped => "stopped",
            ServiceAction::Enabled => "enabled",
            ServiceAction::Disabled => "disabled",
            ServiceAction::Masked => "masked",
            ServiceAction::Unmasked => "unmasked",
            ServiceAction::DaemonReload => "daemon_reload",
        }
    }
}

impl PackageAction {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PackageAction::Installed => "installed",
            PackageAction::Removed => "removed",
            PackageAction::Held => "held",
            PackageAction::Unheld => "unheld",
        }
    }
}

impl FirewallAction {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            FirewallAction::Opened => "opened",
            FirewallAction::Closed => "closed",
            FirewallAction::Disabled => "disabled",
        }
    }
}

impl EffectKind {
    #[must_use]
    pub fn kind(&self) -> Kind {
        match self {
            EffectKind::SysctlSet { .. } => Kind::SysctlSet,
            EffectKind::SysctlRemoved { .. } => Kind::SysctlRemoved,
            EffectKind::SysctlApplied { .. } => Kind::SysctlApplied,
            EffectKind::ModuleLoaded { .. } => Kind::ModuleLoaded,
            EffectKind::ModuleBlocked { .. } => Kind::ModuleBlocked,
            EffectKind::SwapOff { .. } => Kind::SwapOff,
            EffectKind::FileWritten { .. } => Kind::FileWritten,
            EffectKind::FileEdited { .. } => Kind::FileEdited,
            EffectKind::FileRemoved { .. } => Kind::FileRemoved,
            EffectKind::Linked { .. } => Kind::Linked,
            EffectKind::Service { .. } => Kind::Service,
            EffectKind::Package { .. } => Kind::Package,
            EffectKind::Firewall { .. } => Kind::Firewall,
            EffectKind::Hostname { .. } => Kind::Hostname,
            EffectKind::HandlerNotified { .. } => Kind::HandlerNotified,
            EffectKind::HandlersFlushed => Kind::HandlersFlushed,
            EffectKind::Check { .. } => Kind::Check,
            EffectKind::Kubeadm { .. } => Kind::Kubeadm,
            EffectKind::Command { .. } => Kind::Command,
        }
    }

    /// A path this effect writes, edits, removes or links, if any.
    #[must_use]
    pub fn path(&self) -> Option<&str> {
        match self {
            EffectKind::FileWritten { path, .. }
            | EffectKind::FileEdited { path, .. }
            | EffectKind::FileRemoved { path }
            | EffectKind::Linked { path, .. } => Some(path),
            _ => None,
        }
    }
}

impl Effect {
    /// The text of a named field (see [`Kind::fields`]), for the catalog's
    /// patterns; `None` when the effect has no such field or it is unset.
    /// `content` is not a field here: see [`Content::text`].
    #[must_use]
    pub fn field(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow::{Borrowed, Owned};
        #[allow(clippy::unnecessary_wraps, reason = "every arm gives an Option")]
        fn b(s: &str) -> Option<std::borrow::Cow<'_, str>> {
            Some(Borrowed(s))
        }
        #[allow(clippy::ref_option, reason = "the fields are Option<String>")]
        fn ob(s: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
            s.as_deref().map(Borrowed)
        }
        match (&self.kind, name) {
            (EffectKind::SysctlSet { key, .. } | EffectKind::SysctlRemoved { key, .. }, "key") => {
                Some(Owned(crate::sysctl::normalize_key(key)))
            }
            (EffectKind::SysctlSet { value, .. }, "value") => b(value),
            (EffectKind::SysctlSet { file, .. }, "file") => ob(file),
            (EffectKind::SysctlRemoved { file, .. }, "file") => b(file),
            (EffectKind::SysctlApplied { apply }, "file") => match apply {
                SysctlApply::File(f) => b(f),
                SysctlApply::All(_) => None,
            },
            (EffectKind::SysctlApplied { apply }, "engine") => match apply {
                SysctlApply::File(_) => None,
                SysctlApply::All(e) => b(e.label()),
            },
            (
                EffectKind::ModuleLoaded { name, .. }
                | EffectKind::ModuleBlocked { name, .. }
                | EffectKind::Hostname { name }
                | EffectKind::HandlerNotified { name }
                | EffectKind::Package { name, .. },
                "name",
            ) => b(name),
            (EffectKind::ModuleLoaded { file, .. }, "file") => ob(file),
            (EffectKind::ModuleBlocked { file, .. }, "file") => b(file),
            (EffectKind::SwapOff { how }, "how") => b(match how {
                SwapOff::All => "all",
                SwapOff::FstabEntries => "fstab",
                SwapOff::UnitMasked(_) => "unit_masked",
                SwapOff::Generator(_) => "generator",
            }),
            (
                EffectKind::SwapOff {
                    how: SwapOff::UnitMasked(u) | SwapOff::Generator(u),
                },
                "unit",
            ) => b(u),
            (k, "path") => k.path().map(Borrowed),
            (EffectKind::FileWritten { mode, .. }, "mode") => ob(mode),
            (EffectKind::FileEdited { edit, .. }, "text") => b(&edit.text),
            (EffectKind::FileEdited { edit, .. }, "regexp") => ob(&edit.regexp),
            (EffectKind::FileEdited { edit, .. }, "remove") => {
                b(if edit.remove { "true" } else { "false" })
            }
            (EffectKind::Linked { target, .. }, "target") => b(target),
            (EffectKind::Service { unit, .. }, "unit") => b(unit),
            (EffectKind::Service { action, .. }, "action") => b(action.as_str()),
            (EffectKind::Package { action, .. }, "action") => b(action.as_str()),
            (EffectKind::Package { version, .. }, "version") => ob(version),
            (EffectKind::Firewall { tool, .. }, "tool") => b(tool),
            (EffectKind::Firewall { action, .. }, "action") => b(action.as_str()),
            (EffectKind::Firewall { port, .. } | EffectKind::Check { port, .. }, "port") => {
                ob(port)
            }
            (EffectKind::Firewall { proto, .. }, "proto") => ob(proto),
            (EffectKind::Check { what, .. }, "what") => b(what),
            (EffectKind::Check { msg, .. }, "msg") => ob(msg),
            (EffectKind::Kubeadm { args }, "args") => b(args),
            (EffectKind::Command { line }, "line") => b(line),
            _ => None,
        }
    }
}
