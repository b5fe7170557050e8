//! Which reading of module semantics applies to a task, and the effects a
//! task iteration has: the module's own, then what the files it writes
//! mean to the node (a sysctl file, a `modules-load.d` entry, an fstab
//! edit, a unit file).

use super::Kind;
use super::{
    Effect, EffectKind, TaskView, command, file, firewall, fstab, kmod, package, probe, service,
    sysctl,
};

/// The families of modules whose tasks have effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    Sysctl,
    /// `copy`, `template`, `lineinfile`, `blockinfile`, `replace`,
    /// `ini_file`, `file`, `get_url`.
    File,
    Command,
    Modprobe,
    Mount,
    Service,
    Package,
    Firewall,
    Hostname,
    Check,
    Meta,
}

/// The family of a module, by its fully qualified name.
pub(super) fn family(module: &str) -> Option<Family> {
    let short = crate::ansible::task::short_module(module);
    Some(match module {
        "ansible.posix.sysctl" => Family::Sysctl,
        "ansible.builtin.copy"
        | "ansible.builtin.template"
        | "ansible.builtin.lineinfile"
        | "ansible.builtin.blockinfile"
        | "ansible.builtin.replace"
        | "ansible.builtin.file"
        | "ansible.builtin.get_url"
        | "community.general.ini_file"
        | "ansible.builtin.ini_file" => Family::File,
        "ansible.builtin.command" | "ansible.builtin.shell" | "ansible.builtin.raw" => {
            Family::Command
        }
        "community.general.modprobe" => Family::Modprobe,
        "ansible.posix.mount" => Family::Mount,
        "ansible.builtin.systemd_service"
        | "ansible.builtin.systemd"
        | "ansible.builtin.service"
        | "ansible.builtin.sysvinit" => Family::Service,
        "ansible.builtin.apt"
        | "ansible.builtin.dnf"
        | "ansible.builtin.dnf5"
        | "ansible.builtin.yum"
        | "ansible.builtin.package"
        | "ansible.builtin.dpkg_selections"
        | "community.general.zypper"
        | "community.general.yum_versionlock"
        | "community.general.dnf_versionlock"
        | "community.general.pacman"
        | "community.general.apk" => Family::Package,
        "ansible.posix.firewalld" | "community.general.ufw" | "ansible.builtin.iptables" => {
            Family::Firewall
        }
        "ansible.builtin.hostname" => Family::Hostname,
        "ansible.builtin.assert" | "ansible.builtin.fail" | "ansible.builtin.wait_for" => {
            Family::Check
        }
        "ansible.builtin.meta" => Family::Meta,
        // Collections' copies of the builtin file modules route here.
        _ if matches!(short, "copy" | "template") && module.starts_with("ansible.") => Family::File,
        _ => return None,
    })
}

/// Whether tasks of `module` can have effects (a task whose module has
/// none is never rendered for them). Every task that notifies a handler
/// has the notification as an effect.
#[must_use]
pub fn may_have_effects(module: &str, notifies: bool) -> bool {
    notifies || family(module).is_some()
}

/// The effect kinds tasks of `module` can have (besides the handler
/// notification every task with `notify` has): what the family reads, and
/// what the files it may write mean to the node.
#[must_use]
pub fn kinds_of(module: &str) -> &'static [Kind] {
    use Kind as K;
    // What a written or edited file may mean (see `file::meaning`).
    const FILE: &[Kind] = &[
        K::FileWritten,
        K::FileEdited,
        K::FileRemoved,
        K::Linked,
        K::SysctlSet,
        K::SysctlRemoved,
        K::ModuleLoaded,
        K::ModuleBlocked,
        K::SwapOff,
    ];
    match family(module) {
        None => &[],
        Some(Family::Sysctl) => &[K::SysctlSet, K::SysctlRemoved, K::SysctlApplied],
        Some(Family::File) => FILE,
        Some(Family::Modprobe) => &[
            K::ModuleLoaded,
            K::FileWritten,
            K::FileEdited,
            K::FileRemoved,
        ],
        Some(Family::Mount) => &[K::SwapOff, K::FileEdited],
        Some(Family::Service) => &[K::Service, K::SwapOff, K::Firewall],
        Some(Family::Package) => &[K::Package, K::SwapOff],
        Some(Family::Firewall) => &[K::Firewall],
        Some(Family::Hostname) => &[K::Hostname],
        Some(Family::Check) => &[K::Check],
        Some(Family::Meta) => &[K::HandlersFlushed],
        // A command line may do anything.
        Some(Family::Command) => &Kind::ALL,
    }
}

/// Whether a task of `module` (that notifies handlers or not) can have an
/// effect of one of `kinds`: a task that cannot is never rendered for them.
#[must_use]
pub fn may_have(module: &str, notifies: bool, kinds: &[Kind]) -> bool {
    (notifies && kinds.contains(&Kind::HandlerNotified))
        || kinds_of(module).iter().any(|k| kinds.contains(k))
}

/// Whether tasks of `module` may start or enable units (see
/// [`super::units::Units`]).
#[must_use]
pub fn may_change_units(module: &str) -> bool {
    matches!(family(module), Some(Family::Service | Family::Command))
}

/// Every effect of one task iteration, in the order the node sees them.
#[must_use]
pub fn derive(view: &dyn TaskView) -> Vec<Effect> {
    let mut out: Vec<Effect> = Vec::new();
    match family(view.module()) {
        Some(Family::Sysctl) => sysctl::module(view, &mut out),
        Some(Family::File) => file::module(view, &mut out),
        Some(Family::Command) => {
            // `command` runs its program without a shell: pipes, redirects
            // and `&&` are plain arguments there.
            if let Some(line) = view.command() {
                out.extend(if view.module() == "ansible.builtin.command" {
                    command::exec_effects(line)
                } else {
                    command::effects(line)
                });
            }
        }
        Some(Family::Modprobe) => kmod::modprobe(view, &mut out),
        Some(Family::Mount) => fstab::mount(view, &mut out),
        Some(Family::Service) => service::module(view, &mut out),
        Some(Family::Package) => package::module(view, &mut out),
        Some(Family::Firewall) => firewall::module(view, &mut out),
        Some(Family::Hostname) => {
            if let Some(name) = view.arg("name") {
                out.push(Effect::new(
                    EffectKind::Hostname {
                        name: name.to_string(),
                    },
                    super::Timing::BOTH,
                ));
            }
        }
        Some(Family::Check) => probe::module(view, &mut out),
        Some(Family::Meta) if view.arg("_raw_params").map(str::trim) == Some("flush_handlers") => {
            out.push(Effect::new(EffectKind::HandlersFlushed, super::Timing::NOW));
        }
        Some(Family::Meta) | None => {}
    }
    // What the files written mean to the node, right after each write (a
    // command line may apply the file it just wrote).
    let mut with_meaning = Vec::with_capacity(out.len());
    for e in out {
        let at = with_meaning.len();
        with_meaning.push(e);
        let mut derived = Vec::new();
        file::meaning(view, &with_meaning[at], &mut derived);
        with_meaning.extend(derived);
    }
    let mut out = with_meaning;
    super::unknown::mark(view, &mut out);
    for name in view.notify() {
        out.push(Effect::new(
            EffectKind::HandlerNotified { name: name.clone() },
            super::Timing::NOW,
        ));
    }
    out
}
