//! The package modules: what `apt`, `dnf`, `dnf5`, `yum`, `package`,
//! `zypper`, `pacman` and `apk` install or remove, and what
//! `dpkg_selections`, `yum_versionlock` and `dnf_versionlock` hold.
//!
//! Each package's effect holds now and stays ([`Timing::BOTH`]).
//!
//! Names come from `name` (a list, or a comma string the modules split;
//! apt's own name for it is `package`, and `pkg` is an alias everywhere).
//! The state and its default, per module:
//!
//! - `apt` (ansible-core `modules/apt.py`): default `present`; `present`
//!   and `latest` install, `absent` removes, `build-dep` and `fixed`
//!   install no named package. A name `foo=1.2.3` pins a version
//!   (`1.2.3`); `foo>=1.2` keeps the constraint as the version (`>=1.2`).
//! - `dnf`, `dnf5`, `yum` (ansible-core `module_utils/yumdnf.py`; `yum` is
//!   `dnf` since 2.17): no default, which acts as `present` (`absent` with
//!   `autoremove: true`); `present`, `installed`, `latest` install,
//!   `absent`, `removed` remove. A name `foo-1.2.3` or `foo-1.2.3-0.el9`
//!   carries a version only when what follows the dash is clearly one (a
//!   digit, then a dotted part: `java-11-openjdk` is a name). Groups
//!   (`@...`), files and URLs name no package and are skipped.
//! - `package` (ansible-core `modules/package.py`): passes through to the
//!   node's manager; read as `present` by default, a version as apt's
//!   (`=`) or else dnf's (`-1.2.3`) form.
//! - `zypper`, `pacman`, `apk` (community.general): default `present`;
//!   `present`, `installed`, `latest` install, `absent`, `removed` remove
//!   (`zypper`'s `dist-upgrade` names nothing). `zypper` and `apk` take
//!   `foo=1.2.3`; a `zypper` name written `-foo` is removed, `+foo`
//!   installed, whatever the state.
//! - `dpkg_selections` (ansible-core): `selection: hold` holds the package,
//!   `install` releases it; `deinstall` and `purge` only mark it for a later
//!   `dselect-upgrade`, which is not this task.
//! - `yum_versionlock`, `dnf_versionlock` (community.general): `state:
//!   present` (the default) holds, `absent` releases (`dnf_versionlock`'s
//!   `excluded` and `clean` hold nothing by name). Their names are
//!   patterns such as `kubelet-1.28.*`, read as dnf's.
//!
//! A swap generator's package removed (zram-generator, zram-tools,
//! zram-config, dphys-swapfile) keeps its swap off at boot
//! ([`SwapOff::Generator`]).

use super::{Effect, EffectKind, PackageAction, SwapOff, TaskView, Timing, fstab};
use crate::text_regex::TextRegex;

/// How a module writes a version into a package name.
#[derive(Clone, Copy)]
enum Spec {
    /// `foo=1.2.3`, `foo>=1.2` (apt, zypper, apk).
    Equals,
    /// `foo-1.2.3-0.el9` (dnf, yum).
    Dash,
    /// Either (`package`).
    Either,
    /// No version in names (pacman).
    Plain,
}

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let short = crate::ansible::task::short_module(view.module());
    let state = view.arg("state");
    let (action, spec) = match short {
        "dpkg_selections" => {
            let action = match view.arg("selection") {
                Some("hold") => PackageAction::Held,
                Some("install") => PackageAction::Unheld,
                _ => return,
            };
            if let Some(name) = view.arg("name").map(str::trim).filter(|n| !n.is_empty()) {
                push(out, name.to_string(), action, None);
            }
            return;
        }
        "yum_versionlock" | "dnf_versionlock" => {
            let action = match state.unwrap_or("present") {
                "present" => PackageAction::Held,
                "absent" => PackageAction::Unheld,
                _ => return,
            };
            (action, Spec::Dash)
        }
        "apt" => match install_or_remove(state.unwrap_or("present"), &["present", "latest"]) {
            Some(a) => (a, Spec::Equals),
            None => return,
        },
        "dnf" | "dnf5" | "yum" => {
            let default = if view.flag("autoremove", false) {
                "absent"
            } else {
                "present"
            };
            match install_or_remove(state.unwrap_or(default), INSTALL) {
                Some(a) => (a, Spec::Dash),
                None => return,
            }
        }
        "package" => match install_or_remove(state.unwrap_or("present"), INSTALL) {
            Some(a) => (a, Spec::Either),
            None => return,
        },
        "zypper" | "apk" => match install_or_remove(state.unwrap_or("present"), INSTALL) {
            Some(a) => (a, Spec::Equals),
            None => return,
        },
        "pacman" => match install_or_remove(state.unwrap_or("present"), INSTALL) {
            Some(a) => (a, Spec::Plain),
            None => return,
        },
        _ => return,
    };
    for item in names(view) {
        let mut item = item.trim();
        let mut action = action;
        if short == "zypper" {
            if let Some(rest) = item.strip_prefix('-') {
                (item, action) = (rest, PackageAction::Removed);
            } else if let Some(rest) = item.strip_prefix('+') {
                (item, action) = (rest, PackageAction::Installed);
            }
        }
        if item.is_empty() || item == "*" || item.starts_with('@') || item.contains('/') {
            continue;
        }
        // An expression that did not render has no version to split off:
        // its `=` are keyword arguments.
        let (name, version) = if item.contains("{{") || item.contains("{%") {
            (item, None)
        } else {
            split_version(item, spec)
        };
        push(out, name.to_string(), action, version);
    }
}

/// The states every module but apt installs with.
const INSTALL: &[&str] = &["present", "installed", "latest"];

fn install_or_remove(state: &str, install: &[&str]) -> Option<PackageAction> {
    if install.contains(&state) {
        Some(PackageAction::Installed)
    } else if matches!(state, "absent" | "removed") {
        Some(PackageAction::Removed)
    } else {
        None
    }
}

/// The package names a task gives.
/// `package` passes its arguments through to the node's manager, whose
/// `name` takes the alias `pkg` (dnf and apt) or `package` (apt): the
/// generic module's own argument spec knows neither, so they are read here.
fn names(view: &dyn TaskView) -> Vec<String> {
    let names = view.list("name");
    if !names.is_empty() || crate::ansible::task::short_module(view.module()) != "package" {
        return names;
    }
    ["pkg", "package"]
        .iter()
        .map(|key| view.list(key))
        .find(|names| !names.is_empty())
        .unwrap_or_default()
}

fn push(out: &mut Vec<Effect>, name: String, action: PackageAction, version: Option<String>) {
    let generator = (action == PackageAction::Removed)
        .then(|| fstab::generator_package(&name))
        .flatten();
    out.push(Effect::new(
        EffectKind::Package {
            name,
            action,
            version,
        },
        Timing::BOTH,
    ));
    if let Some(generator) = generator {
        out.push(Effect::new(
            EffectKind::SwapOff {
                how: SwapOff::Generator(generator.to_string()),
            },
            Timing::BOOT,
        ));
    }
}

/// A dnf name with a version: the shortest name before a dash that a
/// version follows (a digit, a dotted part, an optional release).
static DASH_VERSION: TextRegex =
    TextRegex::new(r"^(.+?)-((?:[0-9]+:)?[0-9]+(?:\.[0-9A-Za-z_*~^+]+)+(?:-[0-9A-Za-z_.*~^+]+)?)$");

/// A package spec split into its name and version, as the module reads it.
fn split_version(item: &str, spec: Spec) -> (&str, Option<String>) {
    if matches!(spec, Spec::Equals | Spec::Either)
        && let Some(at) = item.find(['=', '<', '>'])
    {
        let (name, rest) = item.split_at(at);
        let version = rest.trim_start_matches(['=', '<', '>']);
        let op = &rest[..rest.len() - version.len()];
        let version = if op == "=" {
            version.trim().to_string()
        } else {
            format!("{op}{}", version.trim())
        };
        return (name.trim(), Some(version));
    }
    if matches!(spec, Spec::Dash | Spec::Either)
        && let Some(c) = DASH_VERSION.captures(item)
    {
        return (c.get(1).unwrap_or(item), c.get(2).map(str::to_string));
    }
    (item, None)
}

#[cfg(test)]
mod tests {
    use super::{Spec, split_version};
    use crate::effect::testing::lines;

    #[test]
    fn apt_installs_by_default_with_pinned_versions() {
        assert_eq!(
            lines(
                "ansible.builtin.apt: {name: [kubelet=1.28.2-1.1, kubeadm=1.28.2-1.1, kubectl], state: present}"
            ),
            vec![
                "package name=kubelet action=installed version=1.28.2-1.1 @now+boot",
                "package name=kubeadm action=installed version=1.28.2-1.1 @now+boot",
                "package name=kubectl action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines(
                "ansible.builtin.apt: {name: 'containerd, apt-transport-https', update_cache: true}"
            ),
            vec![
                "package name=containerd action=installed @now+boot",
                "package name=apt-transport-https action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.apt: {pkg: containerd.io, state: latest}"),
            vec!["package name=containerd.io action=installed @now+boot"]
        );
        assert_eq!(
            lines(
                "ansible.builtin.apt: {package: 'kubelet>=1.28', allow_change_held_packages: true}"
            ),
            vec!["package name=kubelet action=installed version=>=1.28 @now+boot"]
        );
        assert_eq!(
            lines("ansible.builtin.apt: {name: 'kubelet=1.28.*'}"),
            vec!["package name=kubelet action=installed version=1.28.* @now+boot"]
        );
    }

    #[test]
    fn apt_states_that_name_no_install() {
        assert_eq!(
            lines(
                "ansible.builtin.apt: {name: [docker.io, docker-ce], state: absent, purge: true}"
            ),
            vec![
                "package name=docker.io action=removed @now+boot",
                "package name=docker-ce action=removed @now+boot",
            ]
        );
        assert!(lines("ansible.builtin.apt: {name: foo, state: build-dep}").is_empty());
        assert!(lines("ansible.builtin.apt: {update_cache: true}").is_empty());
        assert!(lines("ansible.builtin.apt: {upgrade: dist}").is_empty());
    }

    #[test]
    fn dnf_and_yum() {
        assert_eq!(
            lines(
                "ansible.builtin.dnf: {name: [kubelet-1.28.2, kubeadm-1.28.2-150500.1.1, kubectl], disable_excludes: kubernetes}"
            ),
            vec![
                "package name=kubelet action=installed version=1.28.2 @now+boot",
                "package name=kubeadm action=installed version=1.28.2-150500.1.1 @now+boot",
                "package name=kubectl action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines(
                "ansible.builtin.yum: {name: 'java-11-openjdk,containerd.io-1.6.21-3.1.el8', state: installed}"
            ),
            vec![
                "package name=java-11-openjdk action=installed @now+boot",
                "package name=containerd.io action=installed version=1.6.21-3.1.el8 @now+boot",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.dnf5: {name: zram-generator-defaults, state: removed}"),
            vec![
                "package name=zram-generator-defaults action=removed @now+boot",
                "swap_off how=generator unit=zram-generator @boot",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.dnf: {name: podman, autoremove: true}"),
            vec!["package name=podman action=removed @now+boot"]
        );
        // Groups, files, everything: no package named.
        assert!(lines("ansible.builtin.dnf: {name: ['@Development tools', /tmp/x.rpm, '*'], state: latest}").is_empty());
    }

    #[test]
    fn package_names_under_the_managers_aliases() {
        assert_eq!(
            lines("ansible.builtin.package: {pkg: [conntrack, socat], state: present}"),
            vec![
                "package name=conntrack action=installed @now+boot",
                "package name=socat action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.package: {package: ipvsadm}"),
            vec!["package name=ipvsadm action=installed @now+boot"]
        );
        // `name` wins, as the manager reads it.
        assert_eq!(
            lines("ansible.builtin.package: {name: socat, pkg: other}"),
            vec!["package name=socat action=installed @now+boot"]
        );
    }

    #[test]
    fn a_name_that_did_not_render_is_not_split_at_its_commas() {
        assert_eq!(
            lines(
                "ansible.builtin.package: {name: \"{{ pkgs | selectattr('state', 'eq', 'present') | list }}\"}"
            ),
            // One name, unknown (never its template text).
            vec![
                "package name=<unknown: pkgs | selectattr('state', 'eq', 'present') | list (not rendered statically)> action=installed @now+boot"
            ]
        );
        assert_eq!(
            lines(
                "ansible.builtin.package: {name: \"{{ pkgs | select('match', 'k', ignorecase=true) }}\"}"
            ),
            vec![
                "package name=<unknown: pkgs | select('match', 'k', ignorecase=true) (not rendered statically)> action=installed @now+boot"
            ]
        );
    }

    #[test]
    fn package_and_the_collections() {
        assert_eq!(
            lines("ansible.builtin.package: {name: [conntrack, socat], state: present}"),
            vec![
                "package name=conntrack action=installed @now+boot",
                "package name=socat action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.package: {name: dphys-swapfile, state: absent}"),
            vec![
                "package name=dphys-swapfile action=removed @now+boot",
                "swap_off how=generator unit=dphys-swapfile @boot",
            ]
        );
        assert_eq!(
            lines("community.general.zypper: {name: [kubelet=1.28.2, -docker, +containerd]}"),
            vec![
                "package name=kubelet action=installed version=1.28.2 @now+boot",
                "package name=docker action=removed @now+boot",
                "package name=containerd action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines("community.general.pacman: {name: [ebtables, ethtool], state: installed}"),
            vec![
                "package name=ebtables action=installed @now+boot",
                "package name=ethtool action=installed @now+boot",
            ]
        );
        assert_eq!(
            lines("community.general.apk: {name: kubelet=1.28.2-r0}"),
            vec!["package name=kubelet action=installed version=1.28.2-r0 @now+boot"]
        );
        assert_eq!(
            lines("community.general.pacman: {name: zram-generator, state: absent}"),
            vec![
                "package name=zram-generator action=removed @now+boot",
                "swap_off how=generator unit=zram-generator @boot",
            ]
        );
    }

    #[test]
    fn holds() {
        assert_eq!(
            lines("ansible.builtin.dpkg_selections: {name: kubelet, selection: hold}"),
            vec!["package name=kubelet action=held @now+boot"]
        );
        assert_eq!(
            lines("ansible.builtin.dpkg_selections: {name: kubelet, selection: install}"),
            vec!["package name=kubelet action=unheld @now+boot"]
        );
        assert!(
            lines("ansible.builtin.dpkg_selections: {name: kubelet, selection: deinstall}")
                .is_empty()
        );
        assert_eq!(
            lines("community.general.yum_versionlock: {name: [kubelet, kubeadm-1.28.*]}"),
            vec![
                "package name=kubelet action=held @now+boot",
                "package name=kubeadm action=held version=1.28.* @now+boot",
            ]
        );
        assert_eq!(
            lines("community.general.dnf_versionlock: {name: kubelet, state: absent}"),
            vec!["package name=kubelet action=unheld @now+boot"]
        );
        assert!(lines("community.general.dnf_versionlock: {state: clean}").is_empty());
    }

    #[test]
    fn a_package_removed_is_not_swap_off_unless_it_is_a_generator() {
        let l = lines("ansible.builtin.apt: {name: zram-generator, state: present}");
        assert!(!l.iter().any(|x| x.starts_with("swap_off")), "{l:?}");
        let l = lines("ansible.builtin.apt: {name: kubelet, state: absent}");
        assert!(!l.iter().any(|x| x.starts_with("swap_off")), "{l:?}");
    }

    #[test]
    fn versions_only_when_clearly_versions() {
        for (item, name, version) in [
            ("kubelet-1.28.2", "kubelet", Some("1.28.2")),
            ("kubelet-0:1.28.2-0", "kubelet", Some("0:1.28.2-0")),
            ("python3-dnf", "python3-dnf", None),
            ("java-11-openjdk", "java-11-openjdk", None),
            ("kernel-devel", "kernel-devel", None),
            ("libseccomp2", "libseccomp2", None),
        ] {
            let (n, v) = split_version(item, Spec::Dash);
            assert_eq!((n, v.as_deref()), (name, version), "{item}");
        }
        assert_eq!(
            split_version("kubelet-1.28.2", Spec::Plain),
            ("kubelet-1.28.2", None)
        );
        assert_eq!(
            split_version("kubelet=1.28.2", Spec::Either),
            ("kubelet", Some("1.28.2".to_string()))
        );
    }
}
