//! `module-not-persisted`: a kernel module Kubernetes needs is loaded now but
//! not at boot.

use super::Context;
use super::{Finding, Rule, RuleMeta, finding};
use crate::concern::analyze::Status;
use crate::diagnostic::Severity;

pub static META: RuleMeta = RuleMeta {
    id: "module-not-persisted",
    category: "kernel-module",
    severity: Severity::Warning,
    summary: "A kernel module (overlay, br_netfilter) is loaded now but not at boot",
    doc: r#"## What it does
For the kernel-module concerns of the catalog, flags a runtime fix (modprobe)
without a persistence fix (modules-load.d, `persistent: present`, a unit's
ExecStartPre).

## Why it matters
After a reboot the module is missing: containerd cannot use overlayfs, and
the bridge netfilter sysctls disappear.

## Example
```yaml
- community.general.modprobe: {name: br_netfilter, state: present}
```

## How to fix
Also write the module name to /etc/modules-load.d/k8s.conf, or add
`persistent: present` to the modprobe task.
"#,
    preflight: None,
};

/// Concerns whose parts are `runtime` (loaded now) and `persistence` (at boot).
const MODULE_CONCERNS: &[&str] = &["br_netfilter", "overlay"];

pub struct ModuleNotPersisted;
pub static RULE: ModuleNotPersisted = ModuleNotPersisted;

/// The runtime fix of a concern whose persistence part nothing addresses.
pub(crate) fn runtime_without_persistence<'a>(
    cx: &'a Context<'_, '_>,
    id: &str,
) -> Option<&'a crate::concern::analyze::TaskEvidence> {
    let v = cx.verdict(id)?;
    let fixed = |s: Status| {
        matches!(
            s,
            Status::Fixed | Status::FixedWhenRuntime | Status::Conditional
        )
    };
    let runtime = v.parts.iter().find(|p| p.name == "runtime")?;
    let persistence = v.parts.iter().find(|p| p.name == "persistence")?;
    if fixed(runtime.status) && !fixed(persistence.status) {
        runtime.evidence.iter().find(|e| e.role == "fix")
    } else {
        None
    }
}

impl Rule for ModuleNotPersisted {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        for id in MODULE_CONCERNS {
            let Some(e) = runtime_without_persistence(cx, id) else {
                continue;
            };
            let mut f = finding(
                &META,
                &e.file,
                e.line,
                1,
                format!("kernel module {id} is loaded here but nothing loads it at boot"),
                id,
            );
            f.help = Some(format!(
                "write `{id}` to /etc/modules-load.d/k8s.conf, or add `persistent: present`"
            ));
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- community.general.modprobe: {name: overlay, state: present}
"#;
    const PASSES: &str = r#"- community.general.modprobe: {name: overlay, state: present, persistent: present}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "module-not-persisted");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "module-not-persisted").is_empty());
    }
}
