//! The check modules: `ansible.builtin.assert`, `ansible.builtin.fail`
//! and `ansible.builtin.wait_for`, each a [`EffectKind::Check`] now. They
//! verify the node and change nothing.
//!
//! - `assert` (ansible-core `plugins/action/assert.py`): `that` is one
//!   expression or a list, all of which must hold; `what` is them joined
//!   with ` and `. `fail_msg` (alias `msg`; a string or a list) is the
//!   check's `msg`: the words a catalog can read when the expressions are
//!   opaque (`(?i)memory`).
//! - `fail` (`plugins/action/fail.py`): the check is the task's `when`,
//!   which a task view does not carry; `what` is the message (`msg`, by
//!   default `Failed as requested from task`) and `msg` is it when given.
//! - `wait_for` (`modules/wait_for.py`): with a `port`, `what` is the state
//!   waited for, as the module reads it: `started` (the default; also
//!   `present`) for a listener, `stopped` (also `absent`) or `drained` for
//!   a free port; a `host` other than this node's loopback is added (`started
//!   on 10.0.0.10`), since it checks another machine. With a `path`,
//!   `what` is `present PATH` or `absent PATH`. Neither is a sleep, and no
//!   check.

use super::{Effect, EffectKind, TaskView, Timing};
use serde_json::Value;

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let check = match crate::ansible::task::short_module(view.module()) {
        "assert" => assert(view),
        "fail" => {
            let msg = text(view, "msg");
            Some(EffectKind::Check {
                what: msg
                    .clone()
                    .unwrap_or_else(|| "Failed as requested from task".to_string()),
                port: None,
                msg,
            })
        }
        "wait_for" => wait_for(view),
        _ => None,
    };
    if let Some(kind) = check {
        out.push(Effect::new(kind, Timing::NOW));
    }
}

fn assert(view: &dyn TaskView) -> Option<EffectKind> {
    let that: Vec<String> = match view.arg_value("that")? {
        Value::Array(items) => items.iter().map(item).collect(),
        other => vec![item(&other)],
    };
    let that: Vec<String> = that
        .into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if that.is_empty() {
        return None;
    }
    let msg = text(view, "fail_msg");
    Some(EffectKind::Check {
        what: that.join(" and "),
        port: None,
        msg,
    })
}

fn wait_for(view: &dyn TaskView) -> Option<EffectKind> {
    let state = view.arg("state").unwrap_or("started");
    let msg = text(view, "msg");
    if let Some(port) = view.arg("port").map(str::trim).filter(|p| !p.is_empty()) {
        let state = match state {
            "present" => "started",
            "absent" => "stopped",
            s => s,
        };
        let what = match view.arg("host").map(str::trim) {
            Some(h) if !matches!(h, "127.0.0.1" | "localhost" | "::1" | "0.0.0.0" | "") => {
                format!("{state} on {h}")
            }
            _ => state.to_string(),
        };
        return Some(EffectKind::Check {
            what,
            port: Some(port.to_string()),
            msg,
        });
    }
    let path = view.arg("path").map(str::trim).filter(|p| !p.is_empty())?;
    let state = match state {
        "started" => "present",
        "stopped" => "absent",
        s => s,
    };
    Some(EffectKind::Check {
        what: format!("{state} {path}"),
        port: None,
        msg,
    })
}

/// An argument that is a string or a list of strings, as one text.
fn text(view: &dyn TaskView, key: &str) -> Option<String> {
    match view.arg_value(key)? {
        Value::Array(items) => Some(items.iter().map(item).collect::<Vec<_>>().join(" ")),
        Value::Null => None,
        other => Some(item(&other)),
    }
}

fn item(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::effect::testing::lines;

    #[test]
    fn assert_joins_its_expressions_and_keeps_the_message() {
        assert_eq!(
            lines("ansible.builtin.assert: {that: ansible_memtotal_mb >= 1700}"),
            vec!["check what=ansible_memtotal_mb >= 1700 @now"]
        );
        assert_eq!(
            lines(
                "ansible.builtin.assert:\n  that:\n    - ansible_processor_vcpus >= 2\n    - ansible_memtotal_mb >= 1700\n  fail_msg: Not enough CPU or memory\n"
            ),
            vec![
                "check what=ansible_processor_vcpus >= 2 and ansible_memtotal_mb >= 1700 msg=Not enough CPU or memory @now"
            ]
        );
        // `msg` is an alias of `fail_msg`.
        assert_eq!(
            lines("ansible.builtin.assert: {that: ['x in [1, 2]'], msg: [Memory, too low]}"),
            vec!["check what=x in [1, 2] msg=Memory too low @now"]
        );
        assert!(lines("ansible.builtin.assert: {that: []}").is_empty());
        assert!(lines("ansible.builtin.assert: {msg: nothing asserted}").is_empty());
    }

    #[test]
    fn fail_reads_its_message() {
        assert_eq!(
            lines("ansible.builtin.fail: {msg: Swap must be disabled}"),
            vec!["check what=Swap must be disabled msg=Swap must be disabled @now"]
        );
        assert_eq!(
            lines("ansible.builtin.fail: {}"),
            vec!["check what=Failed as requested from task @now"]
        );
    }

    #[test]
    fn wait_for_ports() {
        assert_eq!(
            lines("ansible.builtin.wait_for: {port: 6443, state: stopped, timeout: 5}"),
            vec!["check what=stopped port=6443 @now"]
        );
        assert_eq!(
            lines("ansible.builtin.wait_for: {port: 2379, state: drained}"),
            vec!["check what=drained port=2379 @now"]
        );
        assert_eq!(
            lines("ansible.builtin.wait_for: {port: 10250, state: absent}"),
            vec!["check what=stopped port=10250 @now"]
        );
        assert_eq!(
            lines("ansible.builtin.wait_for: {port: 6443}"),
            vec!["check what=started port=6443 @now"]
        );
        assert_eq!(
            lines("ansible.builtin.wait_for: {host: localhost, port: 6443, state: present}"),
            vec!["check what=started port=6443 @now"]
        );
        assert_eq!(
            lines("ansible.builtin.wait_for: {host: 10.0.0.10, port: 6443, msg: API not up}"),
            vec!["check what=started on 10.0.0.10 port=6443 msg=API not up @now"]
        );
    }

    #[test]
    fn wait_for_paths_and_sleeps() {
        assert_eq!(
            lines("ansible.builtin.wait_for: {path: /etc/kubernetes/admin.conf}"),
            vec!["check what=present /etc/kubernetes/admin.conf @now"]
        );
        assert_eq!(
            lines("ansible.builtin.wait_for: {path: /var/lib/dpkg/lock, state: absent}"),
            vec!["check what=absent /var/lib/dpkg/lock @now"]
        );
        assert!(lines("ansible.builtin.wait_for: {timeout: 30}").is_empty());
    }
}
