//! `sysctl-not-persisted`: a live-only sysctl change with no persisted value
//! that wins at boot.

use super::Context;
use super::{Finding, Rule, RuleMeta, finding};
use crate::diagnostic::Severity;
use crate::sysctl::WriteKind;

pub static META: RuleMeta = RuleMeta {
    id: "sysctl-not-persisted",
    category: "sysctl",
    severity: Severity::Warning,
    summary: "A sysctl is set live (sysctl -w, sysctl_set) but not persisted",
    doc: r#"## What it does
Finds live-only changes (`sysctl -w k=v`, `ansible.posix.sysctl` with
`sysctl_set: true`) whose value is not the value the key gets at the next boot.

## Why it matters
kubeadm's preflight reads /proc, so it passes; the first reboot reverts the
value and the node breaks later, far from its cause.

## Example
```yaml
- ansible.builtin.command: sysctl -w net.ipv4.ip_forward=1
```

## How to fix
Persist the value in a sysctl file that wins at boot (e.g. `ansible.posix.sysctl`
with `sysctl_file: /etc/sysctl.d/99-kubernetes.conf`).
"#,
    preflight: None,
};

pub struct SysctlNotPersisted;
pub static RULE: SysctlNotPersisted = SysctlNotPersisted;

impl Rule for SysctlNotPersisted {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        for w in cx.writes {
            let WriteKind::SetLive { key, value } = &w.write.kind else {
                continue;
            };
            let key = crate::sysctl::normalize_key(key);
            let persisted = cx.sysctl_result(&key).is_some_and(|r| {
                !r.boot.is_empty()
                    && r.boot
                        .iter()
                        .all(|b| b.value.as_deref().map(str::trim) == Some(value.trim()))
            });
            if persisted {
                continue;
            }
            let ev = &w.write.evidence;
            let mut f = finding(
                &META,
                &ev.file,
                ev.line,
                w.column,
                format!("{key} = {value} is set live only; after a reboot the value is lost"),
                &format!("{key}|{value}"),
            );
            f.help = Some(format!(
                "persist {key} = {value} in a sysctl file that wins at boot"
            ));
            f.preflight = cx
                .required
                .iter()
                .find(|r| r.key == key)
                .and_then(|r| r.preflight.clone());
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.builtin.command: sysctl -w net.ipv4.ip_forward=1
"#;
    const PASSES: &str = r#"- ansible.builtin.command: sysctl -w net.ipv4.ip_forward=1
- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/k8s.conf}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "sysctl-not-persisted");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "sysctl-not-persisted").is_empty());
    }
}
