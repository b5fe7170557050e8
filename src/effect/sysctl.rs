//! `ansible.posix.sysctl`: a key written into its `sysctl_file`, set live
//! when `sysctl_set` is on, and the file applied when `reload` is on (the
//! module's default).

use super::{Effect, EffectKind, SysctlApply, TaskView, Timing};

/// The module's default `sysctl_file`.
pub(super) const DEFAULT_FILE: &str = "/etc/sysctl.conf";

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let Some(key) = view.arg("name") else { return };
    let file = view
        .arg_or_default("sysctl_file")
        .map_or_else(|| DEFAULT_FILE.to_string(), |f| f.into_owned());
    let boot = crate::sysctl::sysctl_file_kind(&file).is_some();
    // `reload` (on by default) runs `sysctl -p <sysctl_file>`: the value in
    // the file is live afterwards; `sysctl_set` runs `sysctl -w`.
    let reload = view.flag("reload", true);
    let set = view.flag("sysctl_set", false);
    if view.arg_or_default("state").as_deref() == Some("absent") {
        out.push(Effect::new(
            EffectKind::SysctlRemoved {
                key: key.to_string(),
                file: file.clone(),
            },
            Timing { now: false, boot },
        ));
    } else {
        let value = view.arg("value").unwrap_or_default().to_string();
        // Written to the file; live after the reload that follows.
        out.push(Effect::new(
            EffectKind::SysctlSet {
                key: key.to_string(),
                value: value.clone(),
                file: Some(file.clone()),
            },
            Timing { now: reload, boot },
        ));
        // `sysctl_set` sets the value live itself (`sysctl -w`).
        if set {
            out.push(Effect::new(
                EffectKind::SysctlSet {
                    key: key.to_string(),
                    value,
                    file: None,
                },
                Timing::NOW,
            ));
        }
    }
    if reload {
        out.push(Effect::new(
            EffectKind::SysctlApplied {
                apply: SysctlApply::File(file),
            },
            Timing::NOW,
        ));
    }
}
