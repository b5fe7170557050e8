//! `sysctl-engines-disagree`: systemd-sysctl and `sysctl --system` end with
//! different values for a key the tree writes.

use super::Context;
use super::{Finding, Related, Rule, RuleMeta, finding};
use crate::HashMap;
use crate::check::sysctl::Found;
use crate::diagnostic::Severity;
use crate::sysctl::{Engine, WriteKind};

pub static META: RuleMeta = RuleMeta {
    id: "sysctl-engines-disagree",
    category: "sysctl",
    severity: Severity::Warning,
    summary: "systemd-sysctl and `sysctl --system` give a written key different values",
    doc: r#"## What it does
Compares, for every key the tree persists, the value at boot under
systemd-sysctl with the value under procps `sysctl --system` (which also
applies /etc/sysctl.conf, last). Flags keys where the two differ.

## Why it matters
systemd hosts boot with systemd-sysctl, but operators (and some roles) run
`sysctl --system` by hand: the node changes behaviour depending on who applied
the files last.

## Example
```yaml
- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/k8s.conf}
- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "0"}  # default file /etc/sysctl.conf
```

## How to fix
Keep Kubernetes' keys out of /etc/sysctl.conf, or set them to the same value
in every file.
"#,
    preflight: None,
};

pub struct SysctlEnginesDisagree;
pub static RULE: SysctlEnginesDisagree = SysctlEnginesDisagree;

impl Rule for SysctlEnginesDisagree {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        // The tree's first persist of each key.
        let mut first_persist: HashMap<String, &Found> = HashMap::default();
        for f in cx.writes {
            if let WriteKind::Persist { key, .. } = &f.write.kind {
                first_persist
                    .entry(crate::sysctl::normalize_key(key))
                    .or_insert(f);
            }
        }
        for r in cx.sysctl {
            let Some(ours) = first_persist.get(&r.key) else {
                continue;
            };
            for with_link in [true, false] {
                let s = r.boot_for(Engine::SystemdSysctl, with_link);
                let p = r.boot_for(Engine::Procps, with_link);
                let (Some(s), Some(p)) = (s, p) else { continue };
                if s.value == p.value {
                    continue;
                }
                let ev = &ours.write.evidence;
                let link = match (s.with_link, p.with_link) {
                    (None, None) => String::new(),
                    _ if with_link => " (with the 99-sysctl.conf link)".into(),
                    _ => " (without the 99-sysctl.conf link)".into(),
                };
                let mut f = finding(
                    &META,
                    &ev.file,
                    ev.line,
                    ours.column,
                    format!(
                        "{} boots as {} under systemd-sysctl ({}) but {} under sysctl --system ({}){link}",
                        r.key,
                        s.value.as_deref().unwrap_or("unset"),
                        s.winner_file().unwrap_or("no file"),
                        p.value.as_deref().unwrap_or("unset"),
                        p.winner_file().unwrap_or("no file"),
                    ),
                    &format!("{}|{with_link}", r.key),
                );
                f.help = Some(
                    "set the key to one value in every file, and keep it out of /etc/sysctl.conf"
                        .into(),
                );
                for b in [s, p] {
                    if let Some(e) = b.winner_evidence() {
                        f.related.push(Related {
                            file: e.file.clone(),
                            line: e.line,
                            column: 1,
                            message: format!("wins under {}", b.engine.label()),
                        });
                    }
                }
                out.push(f);
                break;
            }
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/k8s.conf}
- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "0"}
"#;
    const PASSES: &str = r#"- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/k8s.conf}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "sysctl-engines-disagree");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "sysctl-engines-disagree").is_empty());
    }
}
