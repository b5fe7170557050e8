//! Units changed by commands: `systemctl`, `service`, `chkconfig`,
//! `update-rc.d`; and what some units mean: restarting `systemd-sysctl`
//! applies the sysctl files, masking a swap unit keeps swap off, stopping
//! or disabling `firewalld`/`ufw` turns the firewall off.

use super::{Call, Cx, expands, operands};
use crate::effect::{EffectKind, FirewallAction, ServiceAction, SwapOff, SysctlApply, Timing};
use crate::sysctl::Engine;

/// `systemctl [--now] VERB UNIT...`; `daemon-reload`. Queries
/// (`is-active`, `status`) and another host's units are not recognised.
pub(super) fn systemctl(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    use ServiceAction as A;
    let mut now = false;
    for w in call.args {
        match w.as_str() {
            "--now" => now = true,
            "-H" | "--host" | "-M" | "--machine" => return false,
            a if a.starts_with("--host=") || a.starts_with("--machine=") => return false,
            _ => {}
        }
    }
    let ops = operands(
        call.args,
        &[
            "-t",
            "-p",
            "-s",
            "-n",
            "-o",
            "--type",
            "--property",
            "--signal",
            "--lines",
            "--output",
            "--root",
            "--state",
            "--kill-whom",
            "--job-mode",
            "--what",
        ],
    );
    let Some((verb, units)) = ops.split_first() else {
        return false;
    };
    let actions: &[(ServiceAction, Timing)] = match (verb.as_str(), now) {
        ("daemon-reload" | "daemon-reexec", _) => {
            cx.push(
                EffectKind::Service {
                    unit: String::new(),
                    action: A::DaemonReload,
                },
                Timing::NOW,
            );
            return true;
        }
        ("start", _) => &[(A::Started, Timing::NOW)],
        ("stop", _) => &[(A::Stopped, Timing::NOW)],
        ("restart" | "try-restart" | "reload-or-restart" | "try-reload-or-restart", _) => {
            &[(A::Restarted, Timing::NOW)]
        }
        ("reload", _) => &[(A::Reloaded, Timing::NOW)],
        ("enable" | "reenable", false) => &[(A::Enabled, Timing::BOOT)],
        ("enable" | "reenable", true) => &[(A::Enabled, Timing::BOOT), (A::Started, Timing::NOW)],
        ("disable", false) => &[(A::Disabled, Timing::BOOT)],
        ("disable", true) => &[(A::Disabled, Timing::BOOT), (A::Stopped, Timing::NOW)],
        ("mask", false) => &[(A::Masked, Timing::BOOT)],
        ("mask", true) => &[(A::Masked, Timing::BOOT), (A::Stopped, Timing::NOW)],
        ("unmask", _) => &[(A::Unmasked, Timing::BOOT)],
        _ => return false,
    };
    for u in units {
        unit(u.as_str(), actions, cx);
    }
    !units.is_empty() && !units.iter().any(|u| expands(u.as_str()))
}

/// `service NAME ACTION`.
pub(super) fn service(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    use ServiceAction as A;
    let ops = operands(call.args, &[]);
    let [name, action, ..] = ops.as_slice() else {
        return false;
    };
    let action = match action.as_str() {
        "start" => A::Started,
        "stop" => A::Stopped,
        "restart" | "try-restart" | "condrestart" | "force-reload" => A::Restarted,
        "reload" => A::Reloaded,
        _ => return false,
    };
    unit(name.as_str(), &[(action, Timing::NOW)], cx);
    !expands(name.as_str())
}

/// `chkconfig [--level L] NAME on|off`.
pub(super) fn chkconfig(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(call.args, &["--level"]);
    let [name, state] = ops.as_slice() else {
        return false;
    };
    let action = match state.as_str() {
        "on" => ServiceAction::Enabled,
        "off" => ServiceAction::Disabled,
        _ => return false,
    };
    unit(name.as_str(), &[(action, Timing::BOOT)], cx);
    !expands(name.as_str())
}

/// `update-rc.d [-f] NAME defaults|enable|disable|remove`.
pub(super) fn update_rc_d(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(call.args, &[]);
    let [name, verb, ..] = ops.as_slice() else {
        return false;
    };
    let action = match verb.as_str() {
        "defaults" | "enable" => ServiceAction::Enabled,
        "disable" | "remove" => ServiceAction::Disabled,
        _ => return false,
    };
    unit(name.as_str(), &[(action, Timing::BOOT)], cx);
    !expands(name.as_str())
}

/// Swap generators: while enabled they create swap at boot.
const SWAP_GENERATORS: [&str; 4] = [
    "dphys-swapfile",
    "zramswap",
    "zram-config",
    "systemd-zram-setup",
];

/// The unit's effects, and what they mean for sysctl, swap and the
/// firewall.
#[allow(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "systemd matches unit suffixes case-sensitively"
)]
fn unit(unit: &str, actions: &[(ServiceAction, Timing)], cx: &mut Cx) {
    use ServiceAction as A;
    if expands(unit) {
        return;
    }
    let base = unit.strip_suffix(".service").unwrap_or(unit);
    let mut firewall_off: Option<Timing> = None;
    for &(action, timing) in actions {
        cx.push(
            EffectKind::Service {
                unit: unit.to_string(),
                action,
            },
            timing,
        );
        if base == "systemd-sysctl" && matches!(action, A::Started | A::Restarted) {
            cx.push(
                EffectKind::SysctlApplied {
                    apply: SysctlApply::All(Engine::SystemdSysctl),
                },
                Timing::NOW,
            );
        }
        if action == A::Masked && (unit == "swap.target" || unit.ends_with(".swap")) {
            cx.push(
                EffectKind::SwapOff {
                    how: SwapOff::UnitMasked(unit.to_string()),
                },
                Timing::BOOT,
            );
        }
        let generator = base.split('@').next().unwrap_or(base);
        if matches!(action, A::Disabled | A::Masked) && SWAP_GENERATORS.contains(&generator) {
            cx.push(
                EffectKind::SwapOff {
                    how: SwapOff::Generator(unit.to_string()),
                },
                Timing::BOOT,
            );
        }
        if matches!(base, "firewalld" | "ufw")
            && matches!(action, A::Stopped | A::Disabled | A::Masked)
        {
            let t = firewall_off.get_or_insert(Timing::NEITHER);
            t.now |= timing.now;
            t.boot |= timing.boot;
        }
    }
    if let Some(timing) = firewall_off {
        cx.push(
            EffectKind::Firewall {
                tool: base.to_string(),
                action: FirewallAction::Disabled,
                port: None,
                proto: None,
            },
            timing,
        );
    }
}
