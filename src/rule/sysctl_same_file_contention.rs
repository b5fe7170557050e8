//! `sysctl-same-file-contention`: two tasks write the same key with different
//! values into the same file.

use super::Context;
use super::{Finding, Related, Rule, RuleMeta, finding};
use crate::HashMap;
use crate::check::sysctl::Found;
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
        let persists: Vec<Persist<'_>> = cx
            .writes
            .iter()
            .filter_map(|f| match &f.write.kind {
                // Keys or values not known statically are not the same
                // key or value because their reasons read the same.
                WriteKind::Persist { key, value, .. }
                    if crate::effect::is_unknown(key) || crate::effect::is_unknown(value) =>
                {
                    None
                }
                WriteKind::Persist { file, key, value } => Some(Persist {
                    found: f,
                    file,
                    key: crate::sysctl::normalize_key(key),
                    value: value.trim().to_string(),
                }),
                _ => None,
            })
            .collect();
        let mut groups: HashMap<(&str, &str), Earlier> = HashMap::default();
        for (i, p) in persists.iter().enumerate() {
            let group = groups.entry((p.file, p.key.as_str())).or_default();
            let clash = group.first_clash(&persists, p);
            group.add(&persists, i);
            let Some(earlier) = clash.map(|e| &persists[e]) else {
                continue;
            };
            let (later, file, key, value, old) =
                (p.found, p.file, &p.key, &p.value, &earlier.value);
            let earlier = earlier.found;
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

/// A persist write, with its key normalised and its value trimmed.
struct Persist<'a> {
    found: &'a Found,
    file: &'a str,
    key: String,
    value: String,
}

impl Persist<'_> {
    /// The task that wrote it.
    fn place(&self) -> (&str, u32) {
        let ev = &self.found.write.evidence;
        (ev.file.as_str(), ev.line)
    }
}

/// The earlier writes of one key into one file, reduced to what answers
/// "the first earlier write with another value, by another task" for any
/// later write in constant time (writes are indexes into the persist list).
#[derive(Default)]
struct Earlier {
    /// The first write.
    first: Option<usize>,
    /// The first with a value other than `first`'s.
    other_value: Option<usize>,
    /// The first with a value other than `first`'s, by a task other than `other_value`'s.
    other_value_then_place: Option<usize>,
    /// The first by a task other than `first`'s.
    other_place: Option<usize>,
    /// The first by a task other than `first`'s, with a value other than `other_place`'s.
    other_place_then_value: Option<usize>,
    /// The first with a value and a task both other than `first`'s.
    other_both: Option<usize>,
}

impl Earlier {
    fn add(&mut self, all: &[Persist<'_>], i: usize) {
        let Some(first) = self.first.map(|f| &all[f]) else {
            self.first = Some(i);
            return;
        };
        let p = &all[i];
        let value_differs = p.value != first.value;
        let place_differs = p.place() != first.place();
        let set = |slot: &mut Option<usize>, cond: bool| {
            if slot.is_none() && cond {
                *slot = Some(i);
            }
        };
        set(&mut self.other_value, value_differs);
        let after_value = self
            .other_value
            .is_some_and(|v| value_differs && p.place() != all[v].place());
        set(&mut self.other_value_then_place, after_value);
        set(&mut self.other_place, place_differs);
        let after_place = self
            .other_place
            .is_some_and(|l| place_differs && p.value != all[l].value);
        set(&mut self.other_place_then_value, after_place);
        set(&mut self.other_both, value_differs && place_differs);
    }

    /// The first earlier write with a value other than `p`'s, by a task other than `p`'s.
    fn first_clash(&self, all: &[Persist<'_>], p: &Persist<'_>) -> Option<usize> {
        let first = &all[self.first?];
        match (first.value != p.value, first.place() != p.place()) {
            (true, true) => self.first,
            // Every write before `other_value` has `p`'s value.
            (false, true) => match self.other_value {
                Some(v) if all[v].place() != p.place() => Some(v),
                Some(_) => self.other_value_then_place,
                None => None,
            },
            // Every write before `other_place` is by `p`'s task.
            (true, false) => match self.other_place {
                Some(l) if all[l].value != p.value => Some(l),
                Some(_) => self.other_place_then_value,
                None => None,
            },
            (false, false) => self.other_both,
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

#[cfg(test)]
mod earlier_tests {
    use super::{Earlier, Persist};
    use crate::check::sysctl::Found;
    use crate::sysctl::{Evidence, Write, WriteKind};

    fn found(line: u32) -> Found {
        Found {
            write: Write {
                kind: WriteKind::ApplyFile { file: "f".into() },
                evidence: Evidence {
                    file: "t.yml".into(),
                    line,
                    task: String::new(),
                },
                conditional: false,
            },
            role: None,
            column: 1,
        }
    }

    /// The first clash as the rule once searched for it: every earlier write in turn.
    fn scan(all: &[Persist<'_>], i: usize) -> Option<usize> {
        all[..i]
            .iter()
            .position(|e| e.value != all[i].value && e.place() != all[i].place())
    }

    #[test]
    fn first_clash_is_the_first_earlier_write_that_differs_in_value_and_task() {
        // Every sequence of up to 6 writes over 3 values and 3 tasks.
        let founds: Vec<Found> = (0..3).map(found).collect();
        for len in 1..=6u32 {
            for code in 0..9u32.pow(len) {
                let all: Vec<Persist<'_>> = (0..len)
                    .map(|d| {
                        let c = code / 9u32.pow(d) % 9;
                        Persist {
                            found: &founds[(c / 3) as usize],
                            file: "f",
                            key: "k".into(),
                            value: (c % 3).to_string(),
                        }
                    })
                    .collect();
                let mut group = Earlier::default();
                for i in 0..all.len() {
                    assert_eq!(group.first_clash(&all, &all[i]), scan(&all, i), "write {i}");
                    group.add(&all, i);
                }
            }
        }
    }
}
