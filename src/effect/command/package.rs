//! Packages changed by commands: installed, removed, held (pinned) or
//! released, with the version when the command names one (`pkg=1.2.3`
//! for apt, `pkg-1.2.3` for the rpm tools, a package file's name).
//! Upgrades and queries are not recognised; refreshing the package lists
//! (`apt-get update`, `dnf makecache`) is, with no effect.
//!
//! A package stays as the command leaves it across a reboot: every effect
//! here holds now and at boot. Removing a swap generator's package keeps
//! swap off at boot.

use super::{Call, Cx, Stream, Word, basename, expands, operands};
use crate::effect::{EffectKind, PackageAction, SwapOff, Timing};

/// The packages whose removal removes a swap generator.
const SWAP_GENERATOR_PACKAGES: [&str; 6] = [
    "dphys-swapfile",
    "zram-config",
    "zram-tools",
    "zram-generator",
    "zram-generator-defaults",
    "systemd-zram-generator",
];

/// How a tool writes a version into a package argument.
#[derive(Clone, Copy)]
enum Versions {
    /// `name=version` (apt, apk, zypper).
    Equals,
    /// `name-version` (dnf, yum, rpm, zypper).
    Dash,
    /// Only in a package file's name.
    None,
}

/// The package's effects; `false` when its name is not known.
fn push(cx: &mut Cx, name: String, action: PackageAction, version: Option<String>) -> bool {
    if expands(&name) {
        return false;
    }
    if action == PackageAction::Removed && SWAP_GENERATOR_PACKAGES.contains(&name.as_str()) {
        cx.push(
            EffectKind::Package {
                name: name.clone(),
                action,
                version,
            },
            Timing::BOTH,
        );
        cx.push(
            EffectKind::SwapOff {
                how: SwapOff::Generator(name),
            },
            Timing::BOOT,
        );
        return true;
    }
    cx.push(
        EffectKind::Package {
            name,
            action,
            version,
        },
        Timing::BOTH,
    );
    true
}

/// Each argument as a package with its version.
fn packages(cx: &mut Cx, args: &[&Word<'_>], action: PackageAction, versions: Versions) -> bool {
    let mut known = !args.is_empty();
    for w in args {
        let (name, version) = name_version(w.as_str(), versions);
        known &= push(cx, name, action, version);
    }
    known
}

/// A package argument's name and version.
fn name_version(arg: &str, versions: Versions) -> (String, Option<String>) {
    let file = basename(arg);
    if let Some(stem) = file.strip_suffix(".deb") {
        // `name_version_arch.deb`.
        let mut parts = stem.splitn(3, '_');
        let name = parts.next().unwrap_or(stem).to_string();
        return (name, parts.next().map(str::to_string));
    }
    if let Some(stem) = file.strip_suffix(".rpm") {
        // `name-version-release.arch.rpm`.
        let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
        return split_dash(stem);
    }
    match versions {
        Versions::Equals => match arg.split_once(['=', '~']) {
            Some((n, v)) => (
                n.trim_end_matches(['<', '>']).to_string(),
                Some(v.trim_start_matches('=').to_string()),
            ),
            // `name/release` picks a release, not a version.
            None => (arg.split('/').next().unwrap_or(arg).to_string(), None),
        },
        Versions::Dash => split_dash(arg),
        Versions::None => (arg.to_string(), None),
    }
}

/// `name-1.2.3-0`: the name ends before the first `-` followed by a digit
/// (or by a shell expansion: `name-$VERSION`).
fn split_dash(arg: &str) -> (String, Option<String>) {
    let b = arg.as_bytes();
    for (i, _) in arg.match_indices('-') {
        if b.get(i + 1)
            .is_some_and(|c| c.is_ascii_digit() || *c == b'$')
            && i > 0
        {
            return (arg[..i].to_string(), Some(arg[i + 1..].to_string()));
        }
    }
    (arg.to_string(), None)
}

const APT_WITH_ARG: [&str; 8] = [
    "-o",
    "-t",
    "-c",
    "-a",
    "--option",
    "--target-release",
    "--default-release",
    "--config-file",
];

/// `apt-get`/`apt install|reinstall|remove|purge PKG...`. In apt's own
/// syntax a `-` after a name to install removes it, a `+` after a name to
/// remove installs it.
pub(super) fn apt(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(call.args, &APT_WITH_ARG);
    let Some((verb, names)) = ops.split_first() else {
        return false;
    };
    let action = match verb.as_str() {
        "install" | "reinstall" => PackageAction::Installed,
        "remove" | "purge" | "autoremove" | "autopurge" => PackageAction::Removed,
        // The package lists and caches change, no package does.
        "update" | "clean" | "autoclean" => return true,
        _ => return false,
    };
    let mut known = !names.is_empty();
    for w in names {
        let a = w.as_str();
        let (a, action) = match (action, a.strip_suffix('-'), a.strip_suffix('+')) {
            (PackageAction::Installed, Some(n), _) if !n.is_empty() => (n, PackageAction::Removed),
            (PackageAction::Removed, _, Some(n)) if !n.is_empty() => (n, PackageAction::Installed),
            _ => (a, action),
        };
        let (name, version) = name_version(a, Versions::Equals);
        known &= push(cx, name, action, version);
    }
    known
}

/// `apt-mark hold|unhold PKG...`.
pub(super) fn apt_mark(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(call.args, &APT_WITH_ARG);
    let Some((verb, names)) = ops.split_first() else {
        return false;
    };
    let action = match verb.as_str() {
        "hold" => PackageAction::Held,
        "unhold" => PackageAction::Unheld,
        _ => return false,
    };
    packages(cx, names, action, Versions::None)
}

/// `dnf`/`yum install|remove PKG...`, `dnf versionlock add|delete PKG`
/// (and the older `yum versionlock PKG`).
pub(super) fn dnf(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(
        call.args,
        &[
            "-c",
            "-d",
            "-e",
            "-x",
            "-R",
            "--enablerepo",
            "--disablerepo",
            "--setopt",
            "--exclude",
            "--releasever",
            "--installroot",
            "--repo",
            "--repoid",
            "--disableexcludes",
            "--config",
            "--color",
            "--downloaddir",
            "--destdir",
            "--forcearch",
        ],
    );
    let Some((verb, rest)) = ops.split_first() else {
        return false;
    };
    let action = match verb.as_str() {
        "install" | "localinstall" | "reinstall" | "downgrade" | "install-n" | "install-nevra" => {
            PackageAction::Installed
        }
        "remove" | "erase" | "autoremove" | "remove-n" | "remove-nevra" => PackageAction::Removed,
        "makecache" | "clean" | "check-update" => return true,
        "versionlock" => {
            return match rest.split_first() {
                Some((sub, names)) => match sub.as_str() {
                    "add" | "lock" => packages(cx, names, PackageAction::Held, Versions::Dash),
                    "delete" | "del" | "remove" | "unlock" => {
                        packages(cx, names, PackageAction::Unheld, Versions::Dash)
                    }
                    "list" | "status" | "clear" | "exclude" => false,
                    _ => packages(cx, rest, PackageAction::Held, Versions::Dash),
                },
                None => false,
            };
        }
        _ => return false,
    };
    packages(cx, rest, action, Versions::Dash)
}

/// `zypper install|remove|addlock|removelock PKG...` (and their short
/// names).
pub(super) fn zypper(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(
        call.args,
        &[
            "-R",
            "--root",
            "-r",
            "--repo",
            "--from",
            "-t",
            "--type",
            "-C",
            "--config",
            "-D",
            "--reposd-dir",
        ],
    );
    let Some((verb, names)) = ops.split_first() else {
        return false;
    };
    let action = match verb.as_str() {
        "in" | "install" => PackageAction::Installed,
        "rm" | "remove" => PackageAction::Removed,
        "al" | "addlock" => PackageAction::Held,
        "rl" | "removelock" => PackageAction::Unheld,
        "ref" | "refresh" | "clean" => return true,
        _ => return false,
    };
    let mut known = !names.is_empty();
    for w in names {
        let a = w.as_str();
        let (name, version) = if a.contains(['=', '<', '>']) {
            let (n, v) = a.split_once(['=', '<', '>']).unwrap_or((a, ""));
            (
                n.to_string(),
                Some(v.trim_start_matches(['=', '<', '>']).to_string()),
            )
        } else {
            name_version(a, Versions::Dash)
        };
        known &= push(cx, name, action, version);
    }
    known
}

/// `rpm -i|-U|-F FILE...` installs, `rpm -e NAME...` removes.
pub(super) fn rpm(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let mut action = None;
    for w in call.args {
        let a = w.as_str();
        let mode = match a {
            "--install" | "--upgrade" | "--freshen" | "--reinstall" => {
                Some(PackageAction::Installed)
            }
            "--erase" => Some(PackageAction::Removed),
            _ if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") => {
                match a.as_bytes()[1] {
                    b'i' | b'U' | b'F' => Some(PackageAction::Installed),
                    b'e' => Some(PackageAction::Removed),
                    // A query, a verification, a key import.
                    b'q' | b'V' | b'K' => return false,
                    _ => None,
                }
            }
            "--query" | "--verify" | "--import" | "--checksig" => return false,
            _ => None,
        };
        if mode.is_some() {
            action = mode;
            break;
        }
    }
    let Some(action) = action else { return false };
    let ops = operands(
        call.args,
        &[
            "--root",
            "--dbpath",
            "--define",
            "-D",
            "--prefix",
            "--relocate",
            "--excludepath",
        ],
    );
    packages(cx, &ops, action, Versions::Dash)
}

/// `dpkg -i FILE...`, `dpkg -r|-P NAME...`, and `dpkg --set-selections`
/// reading `NAME hold` lines from its standard input.
pub(super) fn dpkg(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(call.args, &["--root", "--admindir", "--instdir"]);
    for w in call.args {
        let action = match w.as_str() {
            "-i" | "--install" => PackageAction::Installed,
            "-r" | "--remove" | "-P" | "--purge" => PackageAction::Removed,
            "--set-selections" => return selections(call, cx),
            _ => continue,
        };
        return packages(cx, &ops, action, Versions::None);
    }
    false
}

fn selections(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let Stream::Text(text, _) = &call.stdin else {
        return false;
    };
    let mut any = false;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(sel)) = (words.next(), words.next()) else {
            continue;
        };
        let action = match sel {
            "hold" => PackageAction::Held,
            "install" => PackageAction::Unheld,
            _ => continue,
        };
        any |= push(cx, name.to_string(), action, None);
    }
    any
}

/// `apk add|del PKG...`.
pub(super) fn apk(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(
        call.args,
        &[
            "-X",
            "--repository",
            "-p",
            "--root",
            "-t",
            "--virtual",
            "--repositories-file",
        ],
    );
    let Some((verb, names)) = ops.split_first() else {
        return false;
    };
    let action = match verb.as_str() {
        "add" => PackageAction::Installed,
        "del" => PackageAction::Removed,
        _ => return false,
    };
    packages(cx, names, action, Versions::Equals)
}

/// `pacman -S PKG...` installs, `pacman -R PKG...` removes, `pacman -U
/// FILE...` installs.
pub(super) fn pacman(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let mut action = None;
    for w in call.args {
        let a = w.as_str();
        if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
            let flags = &a[1..];
            action = match flags.as_bytes()[0] {
                // Searching, showing and cleaning the cache are not
                // installs.
                b'S' if !flags.contains(['s', 'i', 'c', 'l', 'g', 'p']) => {
                    Some(PackageAction::Installed)
                }
                b'U' => Some(PackageAction::Installed),
                b'R' if !flags.contains('p') => Some(PackageAction::Removed),
                _ => return false,
            };
            break;
        }
    }
    let Some(action) = action else { return false };
    let ops = operands(
        call.args,
        &["--root", "-r", "--dbpath", "-b", "--config", "--cachedir"],
    );
    packages(cx, &ops, action, Versions::None)
}
