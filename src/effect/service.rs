//! The service modules: `ansible.builtin.systemd_service` (and its old
//! name `systemd`), `ansible.builtin.service` and `ansible.builtin.sysvinit`.
//!
//! What they do (`modules/systemd_service.py`, `service.py`, `sysvinit.py`
//! in ansible-core), in the order `systemd_service` runs them:
//!
//! - `daemon_reload: true` (systemd only; also `daemon_reexec`, which
//!   reloads the unit files as well) runs `systemctl daemon-reload`, with
//!   or without a `name`: [`ServiceAction::DaemonReload`] now, on the
//!   empty unit (it is the manager's, not a unit's).
//! - `masked: true`/`false` (systemd only) masks or unmasks the unit:
//!   [`ServiceAction::Masked`]/[`ServiceAction::Unmasked`] at boot (a mask
//!   stops nothing that runs).
//! - `enabled: true`/`false`: [`ServiceAction::Enabled`]/[`ServiceAction::Disabled`]
//!   at boot.
//! - `state: started`/`stopped`/`restarted`/`reloaded`: the action now
//!   (`restarted` and `reloaded` start a unit that is not running).
//!
//! An argument left out changes nothing: none of them has a default that
//! acts. `name` has the aliases `service` and `unit` (`systemd_service`)
//! and `service` (`sysvinit`). A `scope` other than `system` acts on a
//! user's manager, not on the node's units: nothing is emitted for it.
//!
//! What the unit is adds effects with the same timing:
//!
//! - a swap unit (`swap.target`, `*.swap`) masked keeps swap off at boot
//!   ([`SwapOff::UnitMasked`]);
//! - a swap generator's service (`dphys-swapfile`, zram-tools' `zramswap`,
//!   `zram-config`, `systemd-zram-setup@*`) disabled or masked keeps its
//!   swap off at boot, stopped turns it off now ([`SwapOff::Generator`]);
//! - `firewalld` or `ufw` stopped (now), disabled or masked (boot) turns
//!   that firewall off ([`FirewallAction::Disabled`]): stopping either
//!   flushes its rules, and disabled it loads none at boot.
//!
//! Unit names are kept as the task writes them (`kubelet` or
//! `kubelet.service`).

use super::view::boolean;
use super::{Effect, EffectKind, FirewallAction, ServiceAction, SwapOff, TaskView, Timing, fstab};

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let systemd = matches!(
        crate::ansible::task::short_module(view.module()),
        "systemd_service" | "systemd"
    );
    // `service` and `unit` are read as `name` (the task model resolves
    // aliases).
    let unit = view.arg("name").map(str::trim).filter(|u| !u.is_empty());
    let tri = |key: &str| view.arg(key).and_then(boolean);
    if systemd {
        if view.arg("scope").is_some_and(|s| s != "system") {
            return;
        }
        let reload = ["daemon_reload", "daemon_reexec"]
            .iter()
            .any(|k| view.flag(k, false));
        if reload {
            push(out, "", ServiceAction::DaemonReload, Timing::NOW);
        }
    }
    let Some(unit) = unit else { return };
    if systemd {
        match tri("masked") {
            Some(true) => push(out, unit, ServiceAction::Masked, Timing::BOOT),
            Some(false) => push(out, unit, ServiceAction::Unmasked, Timing::BOOT),
            None => {}
        }
    }
    match tri("enabled") {
        Some(true) => push(out, unit, ServiceAction::Enabled, Timing::BOOT),
        Some(false) => push(out, unit, ServiceAction::Disabled, Timing::BOOT),
        None => {}
    }
    let action = match view.arg("state") {
        Some("started") => Some(ServiceAction::Started),
        Some("stopped") => Some(ServiceAction::Stopped),
        Some("restarted") => Some(ServiceAction::Restarted),
        Some("reloaded") => Some(ServiceAction::Reloaded),
        _ => None,
    };
    if let Some(action) = action {
        push(out, unit, action, Timing::NOW);
    }
}

fn push(out: &mut Vec<Effect>, unit: &str, action: ServiceAction, timing: Timing) {
    out.push(Effect::new(
        EffectKind::Service {
            unit: unit.to_string(),
            action,
        },
        timing,
    ));
    what_the_unit_is(out, unit, action, timing);
}

/// The effects a unit action has through what the unit is: swap kept off,
/// a firewall turned off.
fn what_the_unit_is(out: &mut Vec<Effect>, unit: &str, action: ServiceAction, timing: Timing) {
    let off = matches!(
        action,
        ServiceAction::Stopped | ServiceAction::Disabled | ServiceAction::Masked
    );
    if !off {
        return;
    }
    if action == ServiceAction::Masked && fstab::is_swap_unit(unit) {
        out.push(Effect::new(
            EffectKind::SwapOff {
                how: SwapOff::UnitMasked(unit.to_string()),
            },
            timing,
        ));
    }
    if let Some(generator) = fstab::generator_service(unit) {
        out.push(Effect::new(
            EffectKind::SwapOff {
                how: SwapOff::Generator(generator.to_string()),
            },
            timing,
        ));
    }
    let name = unit.strip_suffix(".service").unwrap_or(unit);
    if matches!(name, "firewalld" | "ufw") {
        out.push(Effect::new(
            EffectKind::Firewall {
                tool: name.to_string(),
                action: FirewallAction::Disabled,
                port: None,
                proto: None,
            },
            timing,
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::effect::testing::lines;

    #[test]
    fn state_enabled_masked_and_reload_in_the_modules_order() {
        assert_eq!(
            lines(
                "ansible.builtin.systemd_service: {name: kubelet, state: restarted, enabled: true, daemon_reload: true}"
            ),
            vec![
                "service unit= action=daemon_reload @now",
                "service unit=kubelet action=enabled @boot",
                "service unit=kubelet action=restarted @now",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.systemd: {name: containerd, state: started, enabled: yes}"),
            vec![
                "service unit=containerd action=enabled @boot",
                "service unit=containerd action=started @now",
            ]
        );
        assert_eq!(
            lines(
                "ansible.builtin.systemd: {name: docker.service, masked: false, enabled: false, state: stopped}"
            ),
            vec![
                "service unit=docker.service action=unmasked @boot",
                "service unit=docker.service action=disabled @boot",
                "service unit=docker.service action=stopped @now",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.systemd_service: {name: kubelet, state: reloaded}"),
            vec!["service unit=kubelet action=reloaded @now"]
        );
    }

    #[test]
    fn daemon_reload_alone_and_its_aliases() {
        for task in [
            "ansible.builtin.systemd_service: {daemon_reload: true}",
            "ansible.builtin.systemd: {daemon-reload: yes}",
            "ansible.builtin.systemd: {daemon_reexec: true}",
        ] {
            assert_eq!(
                lines(task),
                vec!["service unit= action=daemon_reload @now"],
                "{task}"
            );
        }
        assert!(lines("ansible.builtin.systemd_service: {daemon_reload: false}").is_empty());
        // `service` has no daemon_reload.
        assert!(lines("ansible.builtin.service: {daemon_reload: true}").is_empty());
    }

    #[test]
    fn name_aliases() {
        // `service` is an alias of `name`.
        assert_eq!(
            lines("ansible.builtin.systemd_service: {service: kubelet, enabled: true}"),
            vec!["service unit=kubelet action=enabled @boot"]
        );
        assert_eq!(
            lines("ansible.builtin.systemd_service: {unit: kubelet, state: started}"),
            vec!["service unit=kubelet action=started @now"]
        );
        assert_eq!(
            lines("ansible.builtin.sysvinit: {service: ntp, state: started, enabled: true}"),
            vec![
                "service unit=ntp action=enabled @boot",
                "service unit=ntp action=started @now",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.service: {name: kubelet, state: started, enabled: true}"),
            vec![
                "service unit=kubelet action=enabled @boot",
                "service unit=kubelet action=started @now",
            ]
        );
    }

    #[test]
    fn nothing_said_changes_nothing() {
        // `enabled` left out: the unit's boot state is not touched.
        assert_eq!(
            lines("ansible.builtin.systemd_service: {name: kubelet, state: started}"),
            vec!["service unit=kubelet action=started @now"]
        );
        // An unrendered boolean says nothing.
        assert!(
            lines("ansible.builtin.systemd_service: {name: kubelet, enabled: '{{ x }}'}")
                .is_empty()
        );
        // A user's manager is not the node's.
        assert!(
            lines("ansible.builtin.systemd_service: {name: foo, scope: user, enabled: true, daemon_reload: true}")
                .is_empty()
        );
        // `masked` is systemd's only.
        assert!(lines("ansible.builtin.service: {name: swap.target, masked: true}").is_empty());
    }

    #[test]
    fn masking_swap_units_keeps_swap_off() {
        assert_eq!(
            lines("ansible.builtin.systemd_service: {name: swap.target, masked: true}"),
            vec![
                "service unit=swap.target action=masked @boot",
                "swap_off how=unit_masked unit=swap.target @boot",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.systemd: {name: dev-zram0.swap, masked: yes}"),
            vec![
                "service unit=dev-zram0.swap action=masked @boot",
                "swap_off how=unit_masked unit=dev-zram0.swap @boot",
            ]
        );
        // Unmasked, stopped or disabled: no mask, swap comes back at boot.
        for task in [
            "ansible.builtin.systemd_service: {name: swap.target, masked: false}",
            "ansible.builtin.systemd_service: {name: swap.target, state: stopped, enabled: false}",
            "ansible.builtin.systemd_service: {name: swap.service, masked: true}",
        ] {
            let l = lines(task);
            assert!(
                !l.iter().any(|x| x.starts_with("swap_off")),
                "{task}: {l:?}"
            );
        }
    }

    #[test]
    fn swap_generator_services() {
        assert_eq!(
            lines(
                "ansible.builtin.systemd: {name: dphys-swapfile, state: stopped, enabled: false}"
            ),
            vec![
                "service unit=dphys-swapfile action=disabled @boot",
                "swap_off how=generator unit=dphys-swapfile @boot",
                "service unit=dphys-swapfile action=stopped @now",
                "swap_off how=generator unit=dphys-swapfile @now",
            ]
        );
        let l = lines("ansible.builtin.service: {name: zramswap.service, enabled: false}");
        assert!(
            l.contains(&"swap_off how=generator unit=zram-tools @boot".to_string()),
            "{l:?}"
        );
        let l = lines(
            "ansible.builtin.systemd: {name: systemd-zram-setup@zram0.service, masked: true}",
        );
        assert!(
            l.contains(&"swap_off how=generator unit=zram-generator @boot".to_string()),
            "{l:?}"
        );
        let l =
            lines("ansible.builtin.systemd: {name: dphys-swapfile, state: started, enabled: true}");
        assert!(!l.iter().any(|x| x.starts_with("swap_off")), "{l:?}");
    }

    #[test]
    fn firewalls_stopped_or_disabled() {
        assert_eq!(
            lines("ansible.builtin.systemd: {name: firewalld, state: stopped, enabled: false}"),
            vec![
                "service unit=firewalld action=disabled @boot",
                "firewall tool=firewalld action=disabled @boot",
                "service unit=firewalld action=stopped @now",
                "firewall tool=firewalld action=disabled @now",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.service: {name: ufw.service, state: stopped}"),
            vec![
                "service unit=ufw.service action=stopped @now",
                "firewall tool=ufw action=disabled @now",
            ]
        );
        assert_eq!(
            lines("ansible.builtin.systemd_service: {name: firewalld, masked: true}"),
            vec![
                "service unit=firewalld action=masked @boot",
                "firewall tool=firewalld action=disabled @boot",
            ]
        );
        for task in [
            "ansible.builtin.systemd: {name: firewalld, state: started, enabled: true}",
            "ansible.builtin.systemd: {name: firewalld, state: restarted}",
            "ansible.builtin.systemd: {name: nftables, state: stopped}",
        ] {
            let l = lines(task);
            assert!(
                !l.iter().any(|x| x.starts_with("firewall")),
                "{task}: {l:?}"
            );
        }
    }

    #[test]
    fn notify_follows_the_effects() {
        assert_eq!(
            lines(
                "{ansible.builtin.systemd: {name: kubelet, enabled: true}, notify: restart kubelet}"
            ),
            vec![
                "service unit=kubelet action=enabled @boot",
                "handler_notified name=restart kubelet @now",
            ]
        );
    }
}
