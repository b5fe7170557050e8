//! Effects that need two tasks: what a unit file says (`ExecStartPre=
//! modprobe x`) happens when the unit starts, and at boot only when the
//! unit is enabled. The unit file's task knows the first half, the tasks
//! that start and enable the unit the second.

use super::{Effect, EffectKind, ServiceAction, Timing};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The units the reached tasks start and enable.
#[derive(Debug, Default, Clone)]
pub struct Units {
    started: BTreeSet<String>,
    enabled: BTreeSet<String>,
}

/// `containerd` for `containerd`, `containerd.service`,
/// `/etc/systemd/system/containerd.service` and its drop-in
/// `/etc/systemd/system/containerd.service.d/10-x.conf`.
#[must_use]
pub fn unit_name(s: &str) -> Option<&str> {
    let s = s.trim_end_matches('/');
    let name = match s.rsplit_once('/') {
        Some((dir, file)) => match dir.rsplit_once('/') {
            Some((_, d)) if d.ends_with(".d") && file.ends_with(".conf") => &d[..d.len() - 2],
            _ => file,
        },
        None => s,
    };
    let name = name.strip_suffix(".service").unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// Whether `path` is a systemd unit file or drop-in.
#[must_use]
pub fn is_unit_path(path: &str) -> bool {
    [
        "/etc/systemd/system/",
        "/usr/lib/systemd/system/",
        "/lib/systemd/system/",
        "/run/systemd/system/",
    ]
    .iter()
    .any(|d| path.starts_with(d))
}

impl Units {
    /// Takes note of a service effect (of a task whose conditions may hold).
    pub fn note(&mut self, e: &Effect) {
        if let EffectKind::Service { unit, action } = &e.kind {
            let Some(name) = unit_name(unit) else { return };
            match action {
                ServiceAction::Started | ServiceAction::Restarted | ServiceAction::Reloaded => {
                    self.started.insert(name.to_string());
                }
                ServiceAction::Enabled => {
                    self.enabled.insert(name.to_string());
                }
                _ => {}
            }
        }
    }

    /// Joins another task list's notes.
    pub fn extend(&mut self, other: Units) {
        self.started.extend(other.started);
        self.enabled.extend(other.enabled);
    }

    /// The unit whose states decide `e`'s timing: the unit of the unit file
    /// `e` is something done by (see [`Units::resolve`]).
    #[must_use]
    pub fn unit_of(e: &Effect) -> Option<&str> {
        match &e.kind {
            EffectKind::ModuleLoaded {
                file: Some(file), ..
            } if e.timing == Timing::NEITHER && is_unit_path(file) => unit_name(file),
            _ => None,
        }
    }

    /// Whether `e` may start or enable a unit: what [`Units::note`] takes
    /// note of.
    #[must_use]
    pub fn changes_unit(e: &Effect) -> Option<&str> {
        match &e.kind {
            EffectKind::Service {
                unit,
                action:
                    ServiceAction::Started
                    | ServiceAction::Restarted
                    | ServiceAction::Reloaded
                    | ServiceAction::Enabled,
            } => unit_name(unit),
            _ => None,
        }
    }

    /// `e` with its timing decided by the units' states, when it is
    /// something a unit file does when the unit runs: now if a task starts
    /// the unit, at boot if one enables it.
    #[must_use]
    pub fn resolve<'e>(&self, e: &'e Effect) -> Cow<'e, Effect> {
        let Some(unit) = Self::unit_of(e) else {
            return Cow::Borrowed(e);
        };
        Cow::Owned(Effect {
            kind: e.kind.clone(),
            timing: Timing {
                now: self.started.contains(unit),
                boot: self.enabled.contains(unit),
            },
            when: e.when.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_names() {
        assert_eq!(unit_name("containerd"), Some("containerd"));
        assert_eq!(unit_name("containerd.service"), Some("containerd"));
        assert_eq!(
            unit_name("/etc/systemd/system/containerd.service"),
            Some("containerd")
        );
        assert_eq!(
            unit_name("/etc/systemd/system/containerd.service.d/10-modprobe.conf"),
            Some("containerd")
        );
    }

    fn load(file: &str) -> Effect {
        Effect::new(
            EffectKind::ModuleLoaded {
                name: "overlay".into(),
                file: Some(file.into()),
            },
            Timing::NEITHER,
        )
    }

    fn service(unit: &str, action: ServiceAction) -> Effect {
        Effect::new(
            EffectKind::Service {
                unit: unit.into(),
                action,
            },
            Timing::NOW,
        )
    }

    #[test]
    fn a_unit_that_is_started_and_enabled_loads_now_and_at_boot() {
        let mut u = Units::default();
        u.note(&service("containerd.service", ServiceAction::Started));
        u.note(&service("containerd", ServiceAction::Enabled));
        let e = load("/etc/systemd/system/containerd.service");
        assert_eq!(u.resolve(&e).timing, Timing::BOTH);
    }

    #[test]
    fn a_unit_that_is_not_enabled_does_not_load_at_boot() {
        let mut u = Units::default();
        u.note(&service("containerd", ServiceAction::Restarted));
        let e = load("/etc/systemd/system/containerd.service.d/x.conf");
        assert_eq!(u.resolve(&e).timing, Timing::NOW);
        let e = load("/etc/systemd/system/other.service");
        assert_eq!(u.resolve(&e).timing, Timing::NEITHER);
    }
}
