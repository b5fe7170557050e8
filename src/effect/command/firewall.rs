//! The host firewall changed by commands: `ufw`, `firewall-cmd`,
//! `iptables`. Only rules about a destination port are recognised (an
//! application profile, a service name or a rule on a source address say
//! nothing about which port is reachable).
//!
//! Timing: `ufw` saves each rule and applies it when the firewall is on:
//! now and at boot. `firewall-cmd` changes the running firewall, or with
//! `--permanent` the saved one (boot); a `--reload` later on the same line
//! makes the saved rules the running ones, so permanent rules hold now
//! too and runtime-only ones are dropped (`--runtime-to-permanent` the
//! other way round). A reload run by a later task is not read back into
//! the rules of earlier tasks: alone, it has no effect of its own and is
//! an opaque command. `iptables` changes the running rules only.

use super::{Call, Cx, Word, basename};
use crate::effect::{EffectKind, FirewallAction, Timing};

fn push(
    cx: &mut Cx,
    tool: &str,
    action: FirewallAction,
    port: &str,
    proto: Option<&str>,
    timing: Timing,
) {
    cx.push(
        EffectKind::Firewall {
            tool: tool.to_string(),
            action,
            port: Some(port.replace(':', "-")),
            proto: proto.map(str::to_string),
        },
        timing,
    );
}

/// `6443`, `2379:2380`, `2379-2380`.
fn is_port(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_digit() || c == b':' || c == b'-')
        && s.as_bytes()[0].is_ascii_digit()
}

/// `ufw allow|limit|deny|reject [in] [on IF] PORT[/PROTO]`, the extended
/// form (`... proto tcp from X to Y port 6443`), `ufw disable`.
pub(super) fn ufw(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let args: Vec<&str> = call
        .args
        .iter()
        .map(Word::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mut rest = args.as_slice();
    // `insert N RULE`, `prepend RULE`.
    match rest {
        ["insert", _, r @ ..] | ["prepend", r @ ..] => rest = r,
        _ => {}
    }
    let Some((verb, mut rule)) = rest.split_first() else {
        return false;
    };
    // `... comment 'TEXT'` ends a rule.
    if let Some(k) = rule.iter().position(|w| *w == "comment") {
        rule = &rule[..k];
    }
    let action = match *verb {
        "disable" => {
            cx.push(
                EffectKind::Firewall {
                    tool: "ufw".to_string(),
                    action: FirewallAction::Disabled,
                    port: None,
                    proto: None,
                },
                Timing::BOTH,
            );
            return true;
        }
        "allow" | "limit" => FirewallAction::Opened,
        "deny" | "reject" => FirewallAction::Closed,
        _ => return false,
    };
    loop {
        match rule {
            ["in" | "log" | "log-all", r @ ..] | ["on", _, r @ ..] => rule = r,
            ["out", ..] => return false,
            _ => break,
        }
    }
    // Simple form.
    if let [spec] = rule {
        let (ports, proto) = spec
            .split_once('/')
            .map_or((*spec, None), |(p, t)| (p, Some(t)));
        if !ports.split(',').all(is_port) {
            return false;
        }
        for p in ports.split(',') {
            push(cx, "ufw", action, p, proto, Timing::BOTH);
        }
        return true;
    }
    // Extended form: the port after `to ADDR`.
    let mut proto = None;
    let mut port = None;
    let mut to = false;
    let mut it = rule.iter();
    while let Some(w) = it.next() {
        match *w {
            "proto" => proto = it.next().copied(),
            "to" => {
                to = true;
                it.next();
            }
            "from" => {
                to = false;
                it.next();
            }
            "port" if to => port = it.next().copied(),
            "port" => {
                it.next();
            }
            _ => {}
        }
    }
    let Some(ports) = port else { return false };
    if !ports.split(',').all(is_port) {
        return false;
    }
    for p in ports.split(',') {
        push(cx, "ufw", action, p, proto, Timing::BOTH);
    }
    true
}

/// `firewall-cmd [--permanent] [--zone=Z] --add-port=P/PROTO...`,
/// `--remove-port`, `--reload`. A port list in braces
/// (`--add-port={6443/tcp,10250/tcp}`, a bash expansion) is read as its
/// items.
pub(super) fn firewall_cmd(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let mut permanent = call.name == "firewall-offline-cmd";
    let mut changes: Vec<(FirewallAction, &str)> = Vec::new();
    let (mut reload, mut to_permanent, mut other) = (false, false, false);
    let mut it = call.args.iter().map(Word::as_str);
    while let Some(a) = it.next() {
        let (name, value) = a.split_once('=').map_or((a, None), |(n, v)| (n, Some(v)));
        match name {
            "--permanent" => permanent = true,
            "--add-port" | "--remove-port" => {
                let action = if name == "--add-port" {
                    FirewallAction::Opened
                } else {
                    FirewallAction::Closed
                };
                match value.or_else(|| it.next()) {
                    Some(v) => changes.push((action, v)),
                    None => other = true,
                }
            }
            "--zone" => {
                if value.is_none() {
                    it.next();
                }
            }
            "--reload" | "--complete-reload" => reload = true,
            "--runtime-to-permanent" => to_permanent = true,
            "-q" | "--quiet" => {}
            _ => other = true,
        }
    }
    if changes.is_empty() && !reload && !to_permanent {
        return false;
    }
    let timing = if permanent { Timing::BOOT } else { Timing::NOW };
    for (action, value) in changes {
        let list = value
            .strip_prefix('{')
            .and_then(|v| v.strip_suffix('}'))
            .unwrap_or(value);
        for spec in list.split(',') {
            let (port, proto) = spec
                .split_once('/')
                .map_or((spec, None), |(p, t)| (p, Some(t)));
            if !is_port(port) {
                other = true;
                continue;
            }
            push(cx, "firewalld", action, port, proto, timing);
        }
    }
    if reload || to_permanent {
        // Earlier firewalld rules of this line.
        for e in &mut cx.out {
            let firewalld = matches!(
                &e.kind,
                EffectKind::Firewall { tool, port: Some(_), .. } if tool == "firewalld"
            );
            if firewalld && reload {
                e.timing.now = e.timing.boot;
            } else if firewalld {
                e.timing.boot |= e.timing.now;
            }
        }
    }
    !other
}

/// `iptables -A|-I INPUT [-p PROTO] --dport N -j ACCEPT|DROP|REJECT` (or
/// `-m multiport --dports A,B:C`), in the filter table.
pub(super) fn iptables(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let tool = basename(call.name);
    let tool = tool.split('-').next().unwrap_or(tool);
    let mut chain = None;
    let mut proto = None;
    let mut ports: Vec<&str> = Vec::new();
    let mut target = None;
    let args = call.args;
    let mut i = 0;
    while let Some(a) = args.get(i).map(Word::as_str) {
        let next = args.get(i + 1).map(Word::as_str);
        i += 1;
        match a {
            "-A" | "--append" | "-I" | "--insert" => {
                chain = next;
                i += 1;
            }
            "-t" | "--table" => {
                if next != Some("filter") {
                    return false;
                }
                i += 1;
            }
            "-p" | "--protocol" => {
                proto = next;
                i += 1;
            }
            "--dport" | "--destination-port" => {
                ports.extend(next);
                i += 1;
            }
            "--dports" | "--destination-ports" => {
                ports.extend(next.into_iter().flat_map(|n| n.split(',')));
                i += 1;
            }
            "-j" | "--jump" => {
                target = next;
                i += 1;
            }
            // A negated match, or any command but appending and inserting.
            "!" | "-D" | "--delete" | "-R" | "--replace" | "-C" | "--check" | "-F" | "--flush"
            | "-X" | "-P" | "--policy" | "-N" | "-L" | "--list" | "-S" | "-Z" => return false,
            _ => {}
        }
    }
    if chain != Some("INPUT") || ports.is_empty() || !ports.iter().all(|p| is_port(p)) {
        return false;
    }
    let action = match target {
        Some("ACCEPT") => FirewallAction::Opened,
        Some("DROP" | "REJECT") => FirewallAction::Closed,
        _ => return false,
    };
    for p in ports {
        push(cx, tool, action, p, proto, Timing::NOW);
    }
    true
}
