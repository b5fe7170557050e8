//! `community.general.modprobe`: a kernel module loaded now, and the files
//! its `persistent` option writes.
//!
//! What the module does (`plugins/modules/modprobe.py` in
//! community.general):
//!
//! - `state: present` (the default) runs `modprobe NAME PARAMS`: the
//!   module is loaded now. `state: absent` runs `modprobe -r`: there is
//!   no effect type for an unload, so nothing is emitted.
//! - `persistent: present` writes `/etc/modules-load.d/NAME.conf` holding
//!   `NAME` (and, when `params` are given, `/etc/modprobe.d/NAME.conf`
//!   holding `options NAME P` for each), whatever `state` is. The write is
//!   emitted as a [`EffectKind::FileWritten`], so the boot load is read
//!   from it like any other `modules-load.d` file: a
//!   [`EffectKind::ModuleLoaded`] at boot naming that file.
//! - `persistent: absent` comments the name out of whichever
//!   `modules-load.d` files hold it: it writes no file of its own and
//!   blocks nothing (no `blacklist` line), so nothing is emitted.
//! - `persistent: disabled` (the default) touches no file.
//!
//! `params` change how the module is loaded, not whether: they are read
//! only into the options file.

use super::{Content, Effect, EffectKind, Known, TaskView, Timing};
use std::sync::Arc;

/// Where the module's `persistent: present` writes.
const MODULES_LOAD_DIR: &str = "/etc/modules-load.d";
const OPTIONS_DIR: &str = "/etc/modprobe.d";

pub(super) fn modprobe(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let Some(name) = view.arg("name").map(str::trim).filter(|n| !n.is_empty()) else {
        return;
    };
    if view.arg("state").unwrap_or("present") == "present" {
        out.push(Effect::new(
            EffectKind::ModuleLoaded {
                name: name.to_string(),
                file: None,
            },
            Timing::NOW,
        ));
    }
    if view.arg("persistent") == Some("present") {
        out.push(written(
            format!("{MODULES_LOAD_DIR}/{name}.conf"),
            format!("{name}\n"),
        ));
        let params: Vec<&str> = view
            .arg("params")
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        if !params.is_empty() {
            let text: String = params
                .iter()
                .map(|p| format!("options {name} {p}\n"))
                .collect();
            out.push(written(format!("{OPTIONS_DIR}/{name}.conf"), text));
        }
    }
}

/// A file the module writes whole, with `open(path, 'w')`: through a link
/// at the path, not in place of it.
fn written(path: String, text: String) -> Effect {
    Effect::new(
        EffectKind::FileWritten {
            path,
            mode: None,
            content: Content::new(Arc::from(text), Known::Known, false),
            replaces_link: false,
        },
        Timing::BOTH,
    )
}

#[cfg(test)]
mod tests {
    use crate::effect::testing::lines;

    #[test]
    fn present_by_default_loads_now_only() {
        let want = vec!["module_loaded name=br_netfilter @now".to_string()];
        assert_eq!(
            lines("community.general.modprobe: {name: br_netfilter}"),
            want
        );
        assert_eq!(
            lines("community.general.modprobe: {name: br_netfilter, state: present}"),
            want
        );
        // `params` do not change what is loaded.
        assert_eq!(
            lines("community.general.modprobe: {name: br_netfilter, params: ''}"),
            want
        );
    }

    #[test]
    fn persistent_present_writes_the_modules_load_file() {
        assert_eq!(
            lines(
                "community.general.modprobe: {name: overlay, state: present, persistent: present}"
            ),
            vec![
                "module_loaded name=overlay @now",
                "file_written path=/etc/modules-load.d/overlay.conf @now+boot",
                "module_loaded name=overlay file=/etc/modules-load.d/overlay.conf @boot",
            ]
        );
    }

    #[test]
    fn persistent_present_with_params_writes_the_options_file() {
        let l = lines(
            "community.general.modprobe: {name: dummy, params: 'numdummies=2', persistent: present}",
        );
        assert!(
            l.contains(&"file_written path=/etc/modprobe.d/dummy.conf @now+boot".to_string()),
            "{l:?}"
        );
        assert!(
            l.contains(
                &"module_loaded name=dummy file=/etc/modules-load.d/dummy.conf @boot".to_string()
            ),
            "{l:?}"
        );
    }

    #[test]
    fn persistent_present_with_state_absent_still_loads_at_boot() {
        // The module unloads now and writes the file all the same.
        assert_eq!(
            lines(
                "community.general.modprobe: {name: nf_conntrack, state: absent, persistent: present}"
            ),
            vec![
                "file_written path=/etc/modules-load.d/nf_conntrack.conf @now+boot",
                "module_loaded name=nf_conntrack file=/etc/modules-load.d/nf_conntrack.conf @boot",
            ]
        );
    }

    #[test]
    fn absent_and_persistent_absent_load_nothing() {
        assert!(
            lines("community.general.modprobe: {name: br_netfilter, state: absent}").is_empty()
        );
        assert!(
            lines("community.general.modprobe: {name: br_netfilter, state: absent, persistent: absent}")
                .is_empty()
        );
        // `persistent: absent` alone: loaded now, nothing written.
        assert_eq!(
            lines("community.general.modprobe: {name: br_netfilter, persistent: absent}"),
            vec!["module_loaded name=br_netfilter @now"]
        );
        assert_eq!(
            lines("community.general.modprobe: {name: br_netfilter, persistent: disabled}"),
            vec!["module_loaded name=br_netfilter @now"]
        );
    }

    #[test]
    fn no_name_no_effect() {
        assert!(lines("community.general.modprobe: {state: present}").is_empty());
    }
}
