//! What tasks do to sysctls: every write found statically, in execution
//! order, as input for the boot-order simulator.
//!
//! Reads task arguments (rendered with the task's variables), template and
//! `files/` contents, and command lines. Tasks whose conditions are known to
//! be false are left out; tasks with unknown conditions are kept and marked.

use crate::concern::analyze::{Facts, Iteration, Reach, Scope, json_text, read_role_file};
use crate::jinja::{self, Tri};
use crate::source::SourceMap;
use crate::sysctl::{Engine, Evidence, Write, WriteKind, parse_conf, sysctl_file_kind};
use crate::text_regex::TextRegex;
use crate::vars::TaskVars;

/// A write plus where it was found, for findings.
#[derive(Debug, Clone)]
pub struct Found {
    pub write: Write,
    /// The role that owns the task (last of the chain), if any.
    pub role: Option<String>,
    pub column: u32,
}

/// Sysctl keys are ASCII (`[0-9A-Za-z_./*-]`); a Unicode `\w` cost ~300 us
/// more to compile.
static SYSCTL_W: TextRegex =
    TextRegex::new(r"\bsysctl\s+(?:-\S+\s+)*-w\s+((?:[0-9A-Za-z_./*-]+\s*=\s*\S+\s*)+)");
static SYSCTL_P: TextRegex =
    TextRegex::new(r"\bsysctl\s+(?:-\S+\s+)*(?:-p|--load)(?:\s+([^\s;&|]+))?");
static SYSCTL_SYSTEM: TextRegex = TextRegex::new(r"\bsysctl\s+(?:-\S+\s+)*--system\b");
static SYSCTL_RESTART: TextRegex =
    TextRegex::new(r"\bsystemctl\s+(?:-\S+\s+)*(?:re)?start\s+systemd-sysctl");

/// Whether a task's conditions hold: `Some(true)` all true, `Some(false)`
/// one false, `None` unknown.
#[must_use]
pub fn conditions_hold(r: &Reach<'_>, tv: &TaskVars<'_>) -> Option<bool> {
    let mut unknown = false;
    for c in r.inst.conditions.iter() {
        match jinja::eval_condition(&c.expr, tv) {
            Tri::False => return Some(false),
            Tri::Unknown(_) => unknown = true,
            Tri::True => {}
        }
    }
    if unknown { None } else { Some(true) }
}

/// Every sysctl write of the reachable tasks, in execution order.
#[must_use]
pub fn sysctl_writes<'s>(
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    sources: &SourceMap,
) -> Vec<Found> {
    // Tasks in parallel, each by one worker; execution order is kept. A
    // twin (the same task of one play, from another entry) writes what the
    // first of its twins writes. From the last task: `check` runs this
    // beside the concern analysis, which takes them from the first.
    crate::concern::analyze::per_task_from_end(
        reached,
        |facts| task_found(scope, facts, sources),
        |_, found| found.clone(),
    )
}

/// The sysctl writes of one reachable task, every iteration.
fn task_found<'s>(scope: &'s Scope<'_>, facts: &Facts<'s>, sources: &SourceMap) -> Vec<Found> {
    let mut out = Vec::new();
    let r = &facts.reach;
    if r.inst.duplicate || writer(&r.inst.task.module).is_none() {
        return out;
    }
    for it in facts.iterations(scope).iter() {
        // Conditions cost a render: evaluated only for tasks that write.
        let kinds = task_writes(r, it);
        if kinds.is_empty() {
            continue;
        }
        let hold = conditions_hold(r, &it.tv);
        if hold == Some(false) {
            continue;
        }
        let evidence = Evidence {
            file: sources.display(r.inst.task.span.file),
            line: r.inst.task.span.line,
            task: r.inst.task.display_name().to_string(),
        };
        for kind in kinds {
            out.push(Found {
                write: Write {
                    kind,
                    evidence: evidence.clone(),
                    conditional: hold.is_none(),
                },
                role: r.inst.roles.last().cloned(),
                column: r.inst.task.span.col,
            });
        }
    }
    out
}

fn is_sysctl_path(p: &str) -> bool {
    sysctl_file_kind(p).is_some()
}

/// The sysctl effects of one task in one iteration.
fn task_writes(r: &Reach<'_>, it: &Iteration<'_>) -> Vec<WriteKind> {
    let tv = &it.tv;
    let t = &r.inst.task;
    let text = |k: &str| it.arg(r.inst, k).map(str::to_string);
    let truthy = |k: &str, default: bool| {
        text(k).map_or(default, |v| {
            matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1")
        })
    };
    let short = crate::ansible::task::short_module(&t.module);
    let mut out = Vec::new();
    let Some(writer) = writer(&t.module) else {
        return out;
    };
    match writer {
        Writer::Sysctl => {
            let (Some(key), file) = (
                text("name"),
                text("sysctl_file").unwrap_or_else(|| "/etc/sysctl.conf".into()),
            ) else {
                return out;
            };
            if text("state").as_deref() == Some("absent") {
                out.push(WriteKind::Remove {
                    file: file.clone(),
                    key,
                });
            } else {
                let value = text("value").unwrap_or_default();
                out.push(WriteKind::Persist {
                    file: file.clone(),
                    key: key.clone(),
                    value: value.clone(),
                });
                if truthy("sysctl_set", false) {
                    out.push(WriteKind::SetLive { key, value });
                }
            }
            // reload defaults to true: `sysctl -p <sysctl_file>`.
            if truthy("reload", true) {
                out.push(WriteKind::ApplyFile { file });
            }
        }
        Writer::CopyOrTemplate => {
            let Some(dest) = text("dest") else { return out };
            if !is_sysctl_path(&dest) {
                return out;
            }
            let content = if short == "copy" {
                text("content").or_else(|| {
                    text("src")
                        .and_then(|s| read_role_file(r.inst, "files", &s, it.fs))
                        .map(|raw| raw.to_string())
                })
            } else {
                text("src")
                    .and_then(|s| read_role_file(r.inst, "templates", &s, it.fs))
                    .map(|raw| match jinja::render(&raw, tv) {
                        jinja::Rendered::Value(serde_json::Value::String(s)) => s,
                        _ => raw.to_string(),
                    })
            };
            out.push(WriteKind::DeleteFile { file: dest.clone() });
            for (key, value, _) in parse_conf(&content.unwrap_or_default()) {
                out.push(WriteKind::Persist {
                    file: dest.clone(),
                    key,
                    value,
                });
            }
        }
        Writer::InFile => {
            let Some(path) = text("path")
                .or_else(|| text("dest"))
                .or_else(|| text("name"))
            else {
                return out;
            };
            if !is_sysctl_path(&path) {
                return out;
            }
            let absent = text("state").as_deref() == Some("absent");
            let lines = match short {
                "lineinfile" => text("line").unwrap_or_default(),
                "blockinfile" => text("block").unwrap_or_default(),
                _ => format!(
                    "{} = {}",
                    text("option").unwrap_or_default(),
                    text("value").unwrap_or_default()
                ),
            };
            for (key, value, _) in parse_conf(&lines) {
                if absent {
                    out.push(WriteKind::Remove {
                        file: path.clone(),
                        key,
                    });
                } else {
                    out.push(WriteKind::Persist {
                        file: path.clone(),
                        key,
                        value,
                    });
                }
            }
        }
        Writer::File => {
            let Some(path) = text("path")
                .or_else(|| text("dest"))
                .or_else(|| text("name"))
            else {
                return out;
            };
            if !is_sysctl_path(&path) {
                return out;
            }
            match text("state").as_deref() {
                Some("absent") => out.push(WriteKind::DeleteFile { file: path }),
                Some("link") => {
                    if let Some(src) = text("src") {
                        out.push(WriteKind::Link {
                            file: path,
                            target: src,
                        });
                    }
                }
                _ => {}
            }
        }
        Writer::Command => {
            let Some(cmd) = it.command(r.inst) else {
                return out;
            };
            out.extend(command_writes(cmd));
        }
        Writer::Service => {
            let name = text("name").unwrap_or_default();
            let state = text("state").unwrap_or_default();
            if name.trim_end_matches(".service") == "systemd-sysctl"
                && matches!(state.as_str(), "restarted" | "started" | "reloaded")
            {
                out.push(WriteKind::ApplyAll {
                    engine: Engine::SystemdSysctl,
                });
            }
        }
    }
    out
}

/// The kinds of module whose tasks may have a sysctl effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    Sysctl,
    CopyOrTemplate,
    /// lineinfile, blockinfile, ini_file.
    InFile,
    File,
    Command,
    Service,
}

/// What kind of sysctl writer a module is; `None`: its tasks have no
/// sysctl effect (their iterations are not even computed).
fn writer(module: &str) -> Option<Writer> {
    let short = crate::ansible::task::short_module(module);
    Some(match (module, short) {
        ("ansible.posix.sysctl", _) => Writer::Sysctl,
        (_, "copy" | "template") => Writer::CopyOrTemplate,
        (
            "ansible.builtin.lineinfile"
            | "ansible.builtin.blockinfile"
            | "community.general.ini_file",
            _,
        ) => Writer::InFile,
        ("ansible.builtin.file", _) => Writer::File,
        ("ansible.builtin.command" | "ansible.builtin.shell" | "ansible.builtin.raw", _) => {
            Writer::Command
        }
        (
            "ansible.builtin.systemd_service"
            | "ansible.builtin.systemd"
            | "ansible.builtin.service",
            _,
        ) => Writer::Service,
        _ => return None,
    })
}

/// Sysctl effects of a shell command line.
#[must_use]
pub fn command_writes(cmd: &str) -> Vec<WriteKind> {
    // Each of the four patterns contains `sysctl`.
    if !cmd.contains("sysctl") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in SYSCTL_W.captures_all(cmd) {
        for pair in c[1]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .split(' ')
        {
            if let Some((k, v)) = pair.split_once('=') {
                out.push(WriteKind::SetLive {
                    key: k.trim().to_string(),
                    value: v.trim().trim_matches(['"', '\'']).to_string(),
                });
            }
        }
    }
    for c in SYSCTL_P.captures_all(cmd) {
        let file = c.get(1).unwrap_or("/etc/sysctl.conf").to_string();
        out.push(WriteKind::ApplyFile { file });
    }
    if SYSCTL_SYSTEM.is_match(cmd) {
        out.push(WriteKind::ApplyAll {
            engine: Engine::Procps,
        });
    }
    if SYSCTL_RESTART.is_match(cmd) {
        out.push(WriteKind::ApplyAll {
            engine: Engine::SystemdSysctl,
        });
    }
    out
}

/// A loop item or a rendered value as text (re-exported for rules).
#[must_use]
pub fn value_text(v: &serde_json::Value) -> String {
    json_text(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        let w = command_writes("sysctl -w net.ipv4.ip_forward=1 && sysctl --system");
        assert_eq!(
            w,
            vec![
                WriteKind::SetLive {
                    key: "net.ipv4.ip_forward".into(),
                    value: "1".into()
                },
                WriteKind::ApplyAll {
                    engine: Engine::Procps
                }
            ]
        );
        let w =
            command_writes("sysctl -p /etc/sysctl.d/k8s.conf; systemctl restart systemd-sysctl");
        assert_eq!(
            w,
            vec![
                WriteKind::ApplyFile {
                    file: "/etc/sysctl.d/k8s.conf".into()
                },
                WriteKind::ApplyAll {
                    engine: Engine::SystemdSysctl
                }
            ]
        );
    }
}
