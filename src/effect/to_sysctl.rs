//! The sysctl simulator's input from effects: what each effect of a task
//! iteration does to sysctl files and live values, in order.

use super::{Effect, EffectKind, ServiceAction, SysctlApply};
use crate::sysctl::{Engine, WriteKind, sysctl_file_kind};

/// The sysctl writes of one task iteration's effects, in order.
#[must_use]
pub fn sysctl_writes(effects: &[Effect]) -> Vec<WriteKind> {
    sysctl_writes_marked(effects)
        .into_iter()
        .map(|(w, _)| w)
        .collect()
}

/// [`sysctl_writes`], each marked `true` when it happens only under
/// template conditions (a line of a written template inside a branch not
/// known statically: [`Effect::when`]).
#[must_use]
pub fn sysctl_writes_marked(effects: &[Effect]) -> Vec<(WriteKind, bool)> {
    let mut out: Vec<(WriteKind, bool)> = Vec::new();
    let push = |w: WriteKind, out: &mut Vec<(WriteKind, bool)>, conditional: bool| {
        // A command line and the unit it restarts may both say "apply
        // everything": once is what happens.
        if out.last().map(|(l, _)| l) != Some(&w) {
            out.push((w, conditional));
        }
    };
    for e in effects {
        let conditional = e.when.is_some();
        match &e.kind {
            EffectKind::SysctlSet { key, value, file } => {
                if let Some(file) = file {
                    push(
                        WriteKind::Persist {
                            file: file.clone(),
                            key: key.clone(),
                            value: value.clone(),
                        },
                        &mut out,
                        conditional,
                    );
                }
                // A value set live by itself (`sysctl -w`); one written to a
                // file is live through the file's reload, its own effect.
                if file.is_none() && e.timing.now {
                    push(
                        WriteKind::SetLive {
                            key: key.clone(),
                            value: value.clone(),
                        },
                        &mut out,
                        conditional,
                    );
                }
            }
            EffectKind::SysctlRemoved { key, file } => push(
                WriteKind::Remove {
                    file: file.clone(),
                    key: key.clone(),
                },
                &mut out,
                conditional,
            ),
            EffectKind::SysctlApplied { apply } => push(
                match apply {
                    SysctlApply::File(file) => WriteKind::ApplyFile { file: file.clone() },
                    SysctlApply::All(engine) => WriteKind::ApplyAll { engine: *engine },
                },
                &mut out,
                conditional,
            ),
            // A whole file replaced: what it held before is gone, then its
            // keys are persisted (the `SysctlSet`s that follow).
            EffectKind::FileWritten {
                path,
                replaces_link,
                ..
            } if *replaces_link && sysctl_file_kind(path).is_some() => {
                push(
                    WriteKind::DeleteFile { file: path.clone() },
                    &mut out,
                    conditional,
                );
            }
            EffectKind::FileRemoved { path } if sysctl_file_kind(path).is_some() => {
                push(
                    WriteKind::DeleteFile { file: path.clone() },
                    &mut out,
                    conditional,
                );
            }
            EffectKind::Linked { path, target } if sysctl_file_kind(path).is_some() => push(
                WriteKind::Link {
                    file: path.clone(),
                    target: target.clone(),
                },
                &mut out,
                conditional,
            ),
            EffectKind::Service { unit, action }
                if unit.trim_end_matches(".service") == "systemd-sysctl"
                    && matches!(
                        action,
                        ServiceAction::Started | ServiceAction::Restarted | ServiceAction::Reloaded
                    ) =>
            {
                push(
                    WriteKind::ApplyAll {
                        engine: Engine::SystemdSysctl,
                    },
                    &mut out,
                    conditional,
                );
            }
            _ => {}
        }
    }
    out
}
