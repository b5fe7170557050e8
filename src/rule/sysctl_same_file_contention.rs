//! `sysctl-same-file-contention`: two tasks write the same key with different
//! values into the same file.

use super::{Finding, Related, Rule, RuleMeta, finding};
use crate::check::Context;
use crate::diagnostic::Severity;
use crate::sysctl::WriteKind;

pub static META: RuleMeta = RuleMeta {
    id: "sysctl-same-file-contention",
    category: "sysctl",
    severity: Severity::Warning,
    summary: "Two tasks write the same sysctl key with different values into the same file",
    doc: r#"## What it does
Finds two writes of one key, with different values, into one sysctl file
(by different roles or tasks). Only the last write survives in the file.

## Why it matters
Which value ends up on the host depends on task order, and each role's
author believes their value is in force. A later run of either role flips it.

## Example
```yaml
# role kubernetes/node
- ansible.posix.sysctl: {name: vm.overcommit_memory, value: "1", sysctl_file: /etc/sysctl.d/99-k8s.conf}
# role hardening
- ansible.posix.sysctl: {name: vm.overcommit_memory, value: "0", sysctl_file: /etc/sysctl.d/99-k8s.conf}
```

## How to fix
Decide which value the node needs and set the key in one place only.
"#,
    preflight: None,
};

pub struct SysctlSameFileContention;
pub static RULE: SysctlSameFileContention = SysctlSameFileContention;

impl Rule for SysctlSameFileContention {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        let persists: Vec<(&crate::check::extract::Found, String, String, String)> = cx
            .writes
            .iter()
            .filter_map(|f| match &f.write.kind {
                WriteKind::Persist { file, key, value } => Some((
                    f,
                    file.clone(),
                    crate::sysctl::normalize_key(key),
                    value.trim().to_string(),
                )),
                _ => None,
            })
            .collect();
        for (i, (later, file, key, value)) in persists.iter().enumerate() {
            let Some((earlier, _, _, old)) = persists[..i].iter().find(|(e, f2, k2, v2)| {
                f2 == file
                    && k2 == key
                    && v2 != value
                    && (e.write.evidence.file != later.write.evidence.file
                        || e.write.evidence.line != later.write.evidence.line)
            }) else {
                continue;
            };
            let ev = &later.write.evidence;
            let mut f = finding(
                &META,
                &ev.file,
                ev.line,
                later.column,
                format!("{key} = {value} is written to {file}, which another task sets to {old}"),
                &format!("{file}|{key}|{value}"),
            );
            f.help = Some("set the key in one place only, with the value the node needs".into());
            f.related.push(Related {
                file: earlier.write.evidence.file.clone(),
                line: earlier.write.evidence.line,
                column: earlier.column,
                message: format!(
                    "{key} = {old} written here ({})",
                    earlier.role.as_deref().unwrap_or("play")
                ),
            });
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.posix.sysctl: {name: vm.overcommit_memory, value: "1", sysctl_file: /etc/sysctl.d/99-k8s.conf}
- ansible.posix.sysctl: {name: vm.overcommit_memory, value: "0", sysctl_file: /etc/sysctl.d/99-k8s.conf}
"#;
    const PASSES: &str = r#"- ansible.posix.sysctl: {name: vm.overcommit_memory, value: "1", sysctl_file: /etc/sysctl.d/99-k8s.conf}
- ansible.posix.sysctl: {name: vm.overcommit_memory, value: "1", sysctl_file: /etc/sysctl.d/99-k8s.conf}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "sysctl-same-file-contention");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "sysctl-same-file-contention").is_empty());
    }
}
