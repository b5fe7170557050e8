//! Kernel state set by commands: `sysctl` (procps), `modprobe`,
//! `swapoff`.

use super::{Call, Cx, Stream, Word, expands};
use crate::effect::{EffectKind, SwapOff, SysctlApply, Timing};
use crate::sysctl::Engine;

/// procps `sysctl`: `-w k=v` (or any `k=v` argument: procps writes an
/// argument that holds `=`) sets a key now; `-p [FILE...]` / `--load`
/// applies files (`/etc/sysctl.conf` by default; `-` is standard input);
/// `--system` applies every file the way procps does at boot. A read
/// (`sysctl key`, `-a`) is not recognised.
pub(super) fn sysctl(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let (mut write, mut load, mut system) = (false, false, false);
    let mut files: Vec<&str> = Vec::new();
    let mut sets: Vec<&str> = Vec::new();
    let mut it = call.args.iter().map(Word::as_str);
    while let Some(a) = it.next() {
        match a {
            "-w" | "--write" => write = true,
            "-p" | "--load" => load = true,
            "--system" => system = true,
            "-r" | "--pattern" => {
                it.next();
            }
            _ if a.starts_with("--load=") => {
                load = true;
                files.push(&a["--load=".len()..]);
            }
            _ if a.starts_with("--") => {}
            _ if a.len() > 1 && a.starts_with('-') => {
                for (k, c) in a.char_indices().skip(1) {
                    match c {
                        'w' => write = true,
                        'p' => {
                            load = true;
                            let rest = &a[k + 1..];
                            if !rest.is_empty() {
                                files.push(rest);
                            }
                            break;
                        }
                        'r' => {
                            if a[k + 1..].is_empty() {
                                it.next();
                            }
                            break;
                        }
                        _ => {}
                    }
                }
            }
            _ if load => files.push(a),
            _ if write || a.contains('=') => sets.push(a),
            _ => {}
        }
    }
    let mut known = true;
    for s in &sets {
        if let Some((k, v)) = s.split_once('=') {
            if expands(k) {
                known = false;
                continue;
            }
            cx.push(
                EffectKind::SysctlSet {
                    key: k.trim().to_string(),
                    value: v.trim().to_string(),
                    file: None,
                },
                Timing::NOW,
            );
        }
    }
    if load {
        if files.is_empty() {
            files.push(crate::sysctl::SYSCTL_CONF);
        }
        for f in files {
            if f == "-" {
                // The settings read from standard input are set now.
                let Stream::Text(text, _) = &call.stdin else {
                    return false;
                };
                for (key, value, _) in crate::sysctl::parse_conf(text) {
                    cx.push(
                        EffectKind::SysctlSet {
                            key,
                            value,
                            file: None,
                        },
                        Timing::NOW,
                    );
                }
            } else {
                cx.push(
                    EffectKind::SysctlApplied {
                        apply: SysctlApply::File(f.to_string()),
                    },
                    Timing::NOW,
                );
            }
        }
    }
    if system {
        cx.push(
            EffectKind::SysctlApplied {
                apply: SysctlApply::All(Engine::Procps),
            },
            Timing::NOW,
        );
    }
    known && (!sets.is_empty() || load || system)
}

/// `modprobe [OPTIONS] NAME [PARAMS]` (`-a`: every argument a module)
/// loads now. Removing (`-r`), a dry run and the queries are not loads.
pub(super) fn modprobe(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let mut all = false;
    let mut names: Vec<&str> = Vec::new();
    let mut it = call.args.iter().map(Word::as_str);
    while let Some(a) = it.next() {
        match a {
            "-a" | "--all" => all = true,
            "-r"
            | "--remove"
            | "--remove-dependencies"
            | "-n"
            | "--dry-run"
            | "--show"
            | "-c"
            | "--showconfig"
            | "--show-config"
            | "-D"
            | "--show-depends"
            | "--show-modversions"
            | "--dump-modversions"
            | "--show-exports"
            | "-V"
            | "--version"
            | "-h"
            | "--help" => return false,
            "-C" | "--config" | "-d" | "--dirname" | "-S" | "--set-version" => {
                it.next();
            }
            _ if a.starts_with("--") => {}
            _ if a.len() > 1 && a.starts_with('-') => {
                for c in a.chars().skip(1) {
                    match c {
                        'a' => all = true,
                        'r' | 'n' | 'c' | 'D' | 'V' | 'h' => return false,
                        _ => {}
                    }
                }
            }
            // After the module, `key=value` parameters.
            _ if names.is_empty() || all => names.push(a),
            _ => {}
        }
    }
    for name in names.iter().filter(|n| !expands(n)) {
        cx.push(
            EffectKind::ModuleLoaded {
                name: (*name).to_string(),
                file: None,
            },
            Timing::NOW,
        );
    }
    !names.is_empty() && !names.iter().any(|n| expands(n))
}

/// `swapoff -a` turns every swap off now. `swapoff DEVICE` turns off one
/// area while others may stay on: not recognised, as no effect says
/// "some swap off".
pub(super) fn swapoff(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let all = call.args.iter().map(Word::as_str).any(|a| {
        a == "--all"
            || (a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a.contains('a'))
    });
    if all {
        cx.push(EffectKind::SwapOff { how: SwapOff::All }, Timing::NOW);
    }
    all
}
