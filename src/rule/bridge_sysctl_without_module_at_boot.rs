//! `bridge-sysctl-without-module-at-boot`: `net.bridge.*` persisted, but
//! br_netfilter is not loaded at boot.

use super::Context;
use super::{Finding, Rule, RuleMeta, finding};
use crate::concern::analyze::Status;
use crate::diagnostic::Severity;
use crate::sysctl::WriteKind;

pub static META: RuleMeta = RuleMeta {
    id: "bridge-sysctl-without-module-at-boot",
    category: "kernel-module",
    severity: Severity::Warning,
    summary: "net.bridge.* sysctls are persisted but br_netfilter is not loaded at boot",
    doc: r#"## What it does
Flags a persisted `net.bridge.*` key when nothing in the tree makes the
br_netfilter module load at boot (a modules-load.d file, `modprobe
persistent: present`, or a unit that runs modprobe).

## Why it matters
The net.bridge.* keys exist only once br_netfilter is loaded. At boot,
systemd-sysctl runs before the module is loaded by anything else, so the
setting is silently skipped and bridged pod traffic bypasses iptables.

## Example
```yaml
- community.general.modprobe: {name: br_netfilter, state: present}   # now only
- ansible.posix.sysctl: {name: net.bridge.bridge-nf-call-iptables, value: "1"}
```

## How to fix
Persist the module: write `br_netfilter` to /etc/modules-load.d/k8s.conf (or
use `persistent: present` with community.general.modprobe).
"#,
    preflight: None,
};

pub struct BridgeSysctlWithoutModuleAtBoot;
pub static RULE: BridgeSysctlWithoutModuleAtBoot = BridgeSysctlWithoutModuleAtBoot;

impl Rule for BridgeSysctlWithoutModuleAtBoot {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        let Some(v) = cx.verdict("br_netfilter") else {
            return;
        };
        let persisted = v
            .parts
            .iter()
            .find(|p| p.name == "persistence")
            .is_some_and(|p| {
                matches!(
                    p.status,
                    Status::Fixed | Status::FixedWhenRuntime | Status::Conditional
                )
            });
        if persisted {
            return;
        }
        let mut seen = std::collections::BTreeSet::new();
        for w in cx.writes {
            let WriteKind::Persist { key, file, .. } = &w.write.kind else {
                continue;
            };
            let key = crate::sysctl::normalize_key(key);
            if !key.starts_with("net.bridge.")
                || !seen.insert((w.write.evidence.file.clone(), w.write.evidence.line))
            {
                continue;
            }
            let ev = &w.write.evidence;
            let mut f = finding(
                &META,
                &ev.file,
                ev.line,
                w.column,
                format!(
                    "{key} is persisted in {file}, but br_netfilter is not loaded at boot, so the key does not exist when the file is applied"
                ),
                &format!("{key}|{file}"),
            );
            f.help = Some("load br_netfilter at boot: write it to /etc/modules-load.d/, or use modprobe with persistent: present".into());
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.posix.sysctl: {name: net.bridge.bridge-nf-call-iptables, value: "1", sysctl_file: /etc/sysctl.d/k8s.conf}
"#;
    const PASSES: &str = r#"- ansible.posix.sysctl: {name: net.bridge.bridge-nf-call-iptables, value: "1", sysctl_file: /etc/sysctl.d/k8s.conf}
- ansible.builtin.copy: {dest: /etc/modules-load.d/k8s.conf, content: "br_netfilter\n"}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "bridge-sysctl-without-module-at-boot");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "bridge-sysctl-without-module-at-boot").is_empty());
    }
}
