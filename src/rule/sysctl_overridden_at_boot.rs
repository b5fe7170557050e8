//! `sysctl-overridden-at-boot`: a value Kubernetes needs, which the tree
//! persists, loses at boot to another sysctl file.

use super::Context;
use super::{Finding, Related, Rule, RuleMeta, finding};
use crate::check::sysctl::Found;
use crate::diagnostic::Severity;
use crate::sysctl::WriteKind;
use crate::{HashMap, HashSet};

pub static META: RuleMeta = RuleMeta {
    id: "sysctl-overridden-at-boot",
    category: "sysctl",
    severity: Severity::Error,
    summary: "A sysctl value Kubernetes needs is persisted, but another file wins at boot",
    doc: r#"## What it does
Simulates boot: sysctl files are read from /etc/sysctl.d, /run/sysctl.d,
/usr/local/lib/sysctl.d, /usr/lib/sysctl.d (a same-named file in a higher
directory hides the lower one), sorted by file name, and the last file that
sets a key wins; procps `sysctl --system` also applies /etc/sysctl.conf last.
It flags a value Kubernetes needs (net.ipv4.ip_forward = 1, the bridge
netfilter keys, and the values kubelet's protectKernelDefaults requires) that
the tree persists but that another file overrides, under systemd-sysctl or
`sysctl --system`, with or without the `99-sysctl.conf -> ../sysctl.conf` link.

## Why it matters
Right after the playbook the live value is right (the task reloaded its own
file), so kubeadm's preflight passes. After the next reboot the later file
wins: pods lose forwarding, or kubelet refuses to start.

## Example
```yaml
# the automation writes 99-sysctl.conf
- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/99-sysctl.conf}
# a hardening role writes a file that sorts later
- ansible.builtin.copy: {dest: /etc/sysctl.d/zz-hardening.conf, content: "net.ipv4.ip_forward = 0\n"}
```

## How to fix
Write Kubernetes' values to a file that sorts after every other file setting
the key (or remove the key from the other file), and avoid /etc/sysctl.conf
for values that must match under both engines.
"#,
    preflight: Some("FileContent--proc-sys-net-ipv4-ip_forward"),
};

pub struct SysctlOverriddenAtBoot;
pub static RULE: SysctlOverriddenAtBoot = SysctlOverriddenAtBoot;

impl Rule for SysctlOverriddenAtBoot {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        // The tree's persists of the keys Kubernetes needs, in order.
        let needed: HashSet<String> = cx
            .required
            .iter()
            .map(|r| crate::sysctl::normalize_key(&r.key))
            .collect();
        let mut persists: HashMap<String, Vec<(&str, &Found)>> = HashMap::default();
        for f in cx.writes {
            if let WriteKind::Persist { key, value, .. } = &f.write.kind {
                let key = crate::sysctl::normalize_key(key);
                if needed.contains(&key) {
                    persists.entry(key).or_default().push((value.trim(), f));
                }
            }
        }
        for req in cx.required {
            let key = crate::sysctl::normalize_key(&req.key);
            // The tree's own write of the needed value.
            let Some(&(_, ours)) = persists
                .get(&key)
                .and_then(|p| p.iter().find(|(value, _)| *value == req.value))
            else {
                continue;
            };
            let Some(result) = cx.sysctl_result(&key) else {
                continue;
            };
            let losing: Vec<_> = result
                .boot
                .iter()
                .filter(|b| b.value.as_deref().map(str::trim) != Some(req.value.as_str()))
                .collect();
            if losing.is_empty() {
                continue;
            }
            let ev = &ours.write.evidence;
            let our_file = match &ours.write.kind {
                WriteKind::Persist { file, .. } => file.clone(),
                _ => String::new(),
            };
            let outcomes: Vec<String> = result
                .boot
                .iter()
                .map(|b| {
                    let link = match b.with_link {
                        Some(true) => " with the 99-sysctl.conf link",
                        Some(false) => " without the 99-sysctl.conf link",
                        None => "",
                    };
                    format!(
                        "{}{link}: {} from {}",
                        b.engine.label(),
                        b.value.as_deref().unwrap_or("unset"),
                        b.winner_file().unwrap_or("no file")
                    )
                })
                .collect();
            let mut f = finding(
                &META,
                &ev.file,
                ev.line,
                ours.column,
                format!(
                    "{key} = {} is written to {our_file}, but at boot {}",
                    req.value,
                    outcomes.join("; ")
                ),
                &format!("{key}|{our_file}"),
            );
            f.preflight.clone_from(&req.preflight);
            f.help = Some(format!(
                "{} Persist it in a file that sorts after the winning file, or remove the key there",
                req.why
            ));
            // One related location per winning line, naming every engine it wins under.
            let mut winners: Vec<(String, u32, String, Vec<&str>)> = Vec::new();
            for b in &losing {
                if let Some(w) = &b.winner {
                    let (file, line) = match &w.evidence {
                        Some(e) => (e.file.clone(), e.line),
                        None => (w.file.clone(), w.line.unwrap_or(1)),
                    };
                    let text = format!(
                        "{} = {} in {}",
                        key,
                        w.value.as_deref().unwrap_or(""),
                        w.file
                    );
                    match winners
                        .iter_mut()
                        .find(|x| x.0 == file && x.1 == line && x.2 == text)
                    {
                        Some(x) => x.3.push(b.engine.label()),
                        None => winners.push((file, line, text, vec![b.engine.label()])),
                    }
                }
            }
            for (file, line, text, mut engines) in winners {
                engines.dedup();
                f.related.push(Related {
                    file,
                    line,
                    column: 1,
                    message: format!("{text} wins under {}", engines.join(" and ")),
                });
            }
            f.related.sort();
            f.related.dedup();
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/99-k8s.conf}
- ansible.builtin.copy: {dest: /etc/sysctl.d/zz-hardening.conf, content: "net.ipv4.ip_forward = 0\n"}
"#;
    const PASSES: &str = r#"- ansible.posix.sysctl: {name: net.ipv4.ip_forward, value: "1", sysctl_file: /etc/sysctl.d/zz-k8s.conf}
- ansible.builtin.copy: {dest: /etc/sysctl.d/50-hardening.conf, content: "net.ipv4.ip_forward = 0\n"}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "sysctl-overridden-at-boot");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "sysctl-overridden-at-boot").is_empty());
    }
}
