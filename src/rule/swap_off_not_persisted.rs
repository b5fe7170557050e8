//! `swap-off-not-persisted`: swap is turned off now, but comes back at boot.

use super::Context;
use super::{Finding, Rule, RuleMeta, finding};
use crate::diagnostic::Severity;

pub static META: RuleMeta = RuleMeta {
    id: "swap-off-not-persisted",
    category: "swap",
    severity: Severity::Warning,
    summary: "swapoff without removing swap from /etc/fstab or masking swap.target",
    doc: r#"## What it does
Flags a `swapoff -a` when nothing in the tree keeps swap off at boot (swap
lines removed or commented in /etc/fstab, swap mounts absent, or swap.target
masked).

## Why it matters
kubelet refuses to start with swap on (failSwapOn). After the first reboot
swap is back and the node goes NotReady.

## Example
```yaml
- ansible.builtin.command: swapoff -a
```

## How to fix
Also remove swap from /etc/fstab (`ansible.posix.mount: fstype=swap
state=absent`, or `sed -i '/ swap / s/^/#/' /etc/fstab`) or mask swap.target.
"#,
    preflight: Some("Swap"),
};

pub struct SwapOffNotPersisted;
pub static RULE: SwapOffNotPersisted = SwapOffNotPersisted;

impl Rule for SwapOffNotPersisted {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        let Some(e) = super::module_not_persisted::runtime_without_persistence(cx, "swap") else {
            return;
        };
        let mut f = finding(
            &META,
            &e.file,
            e.line,
            1,
            "swap is turned off here, but nothing keeps it off after a reboot".into(),
            "swap",
        );
        f.help = Some("remove swap entries from /etc/fstab or mask swap.target as well".into());
        out.push(f);
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.builtin.command: swapoff -a
"#;
    const PASSES: &str = r#"- ansible.builtin.command: swapoff -a
- ansible.posix.mount: {name: swap, fstype: swap, state: absent}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "swap-off-not-persisted");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "swap-off-not-persisted").is_empty());
    }
}
