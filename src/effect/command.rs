//! Command lines (`command`, `shell`, `raw`, handler commands) read into
//! the same effects the modules have; anything not recognised is an
//! opaque [`EffectKind::Command`].

use super::{Effect, EffectKind, SysctlApply, Timing};
use crate::sysctl::Engine;
use crate::text_regex::TextRegex;

/// Sysctl keys are ASCII (`[0-9A-Za-z_./*-]`).
static SYSCTL_W: TextRegex =
    TextRegex::new(r"\bsysctl\s+(?:-\S+\s+)*-w\s+((?:[0-9A-Za-z_./*-]+\s*=\s*\S+\s*)+)");
static SYSCTL_P: TextRegex =
    TextRegex::new(r"\bsysctl\s+(?:-\S+\s+)*(?:-p|--load)(?:\s+([^\s;&|]+))?");
static SYSCTL_SYSTEM: TextRegex = TextRegex::new(r"\bsysctl\s+(?:-\S+\s+)*--system\b");
static SYSCTL_RESTART: TextRegex =
    TextRegex::new(r"\bsystemctl\s+(?:-\S+\s+)*(?:re)?start\s+systemd-sysctl");

/// The effects of one command line, in order.
#[must_use]
pub fn effects(line: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    if line.contains("sysctl") {
        sysctl(line, &mut out);
    }
    if out.is_empty() {
        out.push(Effect::new(
            EffectKind::Command {
                line: line.to_string(),
            },
            Timing::NOW,
        ));
    }
    out
}

fn sysctl(line: &str, out: &mut Vec<Effect>) {
    for c in SYSCTL_W.captures_all(line) {
        for pair in c[1]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .split(' ')
        {
            if let Some((k, v)) = pair.split_once('=') {
                out.push(Effect::new(
                    EffectKind::SysctlSet {
                        key: k.trim().to_string(),
                        value: v.trim().trim_matches(['"', '\'']).to_string(),
                        file: None,
                    },
                    Timing::NOW,
                ));
            }
        }
    }
    for c in SYSCTL_P.captures_all(line) {
        let file = c.get(1).unwrap_or("/etc/sysctl.conf").to_string();
        out.push(Effect::new(
            EffectKind::SysctlApplied {
                apply: SysctlApply::File(file),
            },
            Timing::NOW,
        ));
    }
    if SYSCTL_SYSTEM.is_match(line) {
        out.push(Effect::new(
            EffectKind::SysctlApplied {
                apply: SysctlApply::All(Engine::Procps),
            },
            Timing::NOW,
        ));
    }
    if SYSCTL_RESTART.is_match(line) {
        out.push(Effect::new(
            EffectKind::SysctlApplied {
                apply: SysctlApply::All(Engine::SystemdSysctl),
            },
            Timing::NOW,
        ));
    }
}
