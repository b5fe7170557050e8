//! `sysctl-late-file-unknown-lines`: a sysctl file that sorts after the
//! file holding what Kubernetes needs is written with lines that cannot be
//! known statically.

use super::Context;
use super::{Finding, Related, Rule, RuleMeta, finding};
use crate::diagnostic::Severity;
use crate::sysctl::{SysctlFileKind, WriteKind, sysctl_file_kind};

pub static META: RuleMeta = RuleMeta {
    id: "sysctl-late-file-unknown-lines",
    category: "sysctl",
    severity: Severity::Info,
    summary: "A sysctl file that sorts late is written with lines not known statically",
    doc: r#"## What it does
Finds sysctl files (`/etc/sysctl.d/*.conf` and the other `sysctl.d`
directories, `/etc/sysctl.conf`) written whole by a task (`template`, `copy`)
whose content has lines that cannot be known without running the play (a
value from a host fact or a registered result, a loop over one, a template
that is not found), when the file sorts after the file that holds the
settings Kubernetes needs (after `99-sysctl.conf` when the tree sets none).

## Why it matters
Boot engines apply sysctl files in name order and the last assignment of a
key wins. Lines nobody can read before the run may set
`net.ipv4.ip_forward` or a bridge setting back at the next boot, after the
file that Kubernetes relies on; the boot-order check cannot see them.

## Example
```yaml
# templates/zz-tuning.conf.j2:
#   {% for k, v in ansible_local.tuning.sysctl.items() %}{{ k }} = {{ v }}
#   {% endfor %}
- ansible.builtin.template: {src: zz-tuning.conf.j2, dest: /etc/sysctl.d/zz-tuning.conf}
```

## How to fix
Write the file from variables the tree defines, or name it so that it sorts
before the file that holds the Kubernetes settings.
"#,
    preflight: None,
};

pub struct SysctlLateFileUnknownLines;
pub static RULE: SysctlLateFileUnknownLines = SysctlLateFileUnknownLines;

/// Where a sysctl file comes in the engines' order.
enum Order {
    /// A drop-in, by its name.
    Name(String),
    /// `/etc/sysctl.conf`, applied last by `sysctl --system`.
    Last,
}

/// The order of a sysctl path, when it is a sysctl file.
fn order(path: &str) -> Option<Order> {
    match sysctl_file_kind(path)? {
        SysctlFileKind::SysctlConf => Some(Order::Last),
        SysctlFileKind::DropIn { name, .. } => Some(Order::Name(name)),
    }
}

impl Rule for SysctlLateFileUnknownLines {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        let required: Vec<String> = cx
            .required
            .iter()
            .map(|r| crate::sysctl::normalize_key(&r.key))
            .collect();
        // The files the tree writes what Kubernetes needs into, by name.
        let mut needed: Vec<(String, &crate::check::sysctl::Found)> = cx
            .writes
            .iter()
            .filter_map(|f| match &f.write.kind {
                WriteKind::Persist { file, key, .. }
                    if required.contains(&crate::sysctl::normalize_key(key)) =>
                {
                    match order(file) {
                        Some(Order::Name(n)) => Some((n, f)),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect();
        needed.sort_by(|a, b| a.0.cmp(&b.0));
        for u in crate::check::sysctl::unknown_lines(cx.scope, cx.reached, cx.sources) {
            let Some(at) = order(&u.path) else {
                continue;
            };
            // The last needed file it sorts after; `/etc/sysctl.conf` comes
            // after them all under `sysctl --system`.
            let after = needed.iter().rev().find(|(n, _)| match &at {
                Order::Name(name) => name > n,
                Order::Last => true,
            });
            let late = match (&at, after) {
                (_, Some(_)) | (Order::Last, None) => true,
                (Order::Name(name), None) => needed.is_empty() && name.as_str() > "99-sysctl.conf",
            };
            if !late {
                continue;
            }
            let after_text = after.map_or_else(|| "99-sysctl.conf".to_string(), |(n, _)| n.clone());
            let mut f = finding(
                &META,
                &u.evidence.file,
                u.evidence.line,
                u.column,
                format!(
                    "{} sorts after {after_text} and is written with {} line{} not known statically ({}): it may override what Kubernetes needs at boot",
                    u.path,
                    u.lines,
                    if u.lines == 1 { "" } else { "s" },
                    u.why
                ),
                &u.path,
            );
            f.help = Some(
                "write the file from variables the tree defines, or name it so that it sorts before the file with the Kubernetes settings".into(),
            );
            if let Some((n, w)) = after {
                f.related.push(Related {
                    file: w.write.evidence.file.clone(),
                    line: w.write.evidence.line,
                    column: w.column,
                    message: format!("the Kubernetes settings are written to {n} here"),
                });
            }
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::findings;
    use crate::rule::Finding;

    const RULE: &str = "sysctl-late-file-unknown-lines";

    fn tree(template: &'static str, dest: &'static str) -> Vec<Finding> {
        let tasks: &'static str = Box::leak(
            format!(
                "- ansible.posix.sysctl: {{name: net.ipv4.ip_forward, value: '1', sysctl_file: /etc/sysctl.d/99-kubernetes.conf}}\n- ansible.builtin.template: {{src: s.conf.j2, dest: {dest}}}\n"
            )
            .into_boxed_str(),
        );
        findings(
            &[
                ("site.yml", "- hosts: all\n  roles: [r]\n"),
                ("roles/r/tasks/main.yml", tasks),
                ("roles/r/templates/s.conf.j2", template),
            ],
            RULE,
        )
    }

    const UNKNOWN: &str = "vm.swappiness = 10\n{% for k, v in ansible_local.tuning.items() %}\n{{ k }} = {{ v }}\n{% endfor %}\n";

    #[test]
    fn fires_on_the_hazard() {
        let f = tree(UNKNOWN, "/etc/sysctl.d/zz-tuning.conf");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("sorts after 99-kubernetes.conf"),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("host fact"), "{}", f[0].message);
        assert_eq!(f[0].line, 2);
    }

    #[test]
    fn quiet_on_the_fix() {
        // Sorts before the Kubernetes file.
        assert!(tree(UNKNOWN, "/etc/sysctl.d/10-tuning.conf").is_empty());
        // Every line known.
        assert!(tree("vm.swappiness = 10\n", "/etc/sysctl.d/zz-tuning.conf").is_empty());
        // Not a sysctl file.
        assert!(tree(UNKNOWN, "/etc/tuning/zz-tuning.conf").is_empty());
    }
}
