//! The firewall modules: ports opened or closed, and firewalls turned off,
//! by `ansible.posix.firewalld`, `community.general.ufw` and
//! `ansible.builtin.iptables`. Ports are written `6443` or `2379-2380`
//! (ufw's and iptables' `2379:2380` read as a range too).
//!
//! `firewalld` (`plugins/modules/firewalld.py` in ansible.posix): `state:
//! enabled` opens a `port` (`6443/tcp`), `disabled` closes it; `present`
//! and `absent` are zone operations and open nothing. It acts on the
//! running firewall when `immediate` is true or `permanent` is not (the
//! module's rule: not permanent means immediate), and at boot when
//! `permanent` is true. A `service` (firewalld's own name for a set of
//! ports) is kept as the port `service:NAME`, so that nothing reads it as
//! a number; the Kubernetes services firewalld ships are also opened as
//! their ports ([`FIREWALLD_SERVICES`]). A `rich_rule` with one `port` and
//! `accept`, `reject` or `drop` is read as that port.
//!
//! `ufw` (`plugins/modules/ufw.py` in community.general): `rule: allow` or
//! `limit` opens `to_port` (alias `port`) with `proto` (alias `protocol`),
//! `deny` or `reject` closes it, `delete: true` takes an allow back (a
//! close); an application profile (`name`, alias `app`) is kept as the
//! port `app:NAME`; an allow with no port opens every port (to the sources
//! it names). Outgoing and routed rules are not the node's open ports.
//! `state: disabled` and `state: reset` (which disables too) turn ufw off;
//! `state: enabled` alone opens nothing. `default: allow` (incoming) opens
//! every port, `default: deny` or `reject` closes them. ufw keeps its rules
//! and applies them at once: each effect holds now and at boot.
//!
//! `iptables` (ansible-core `modules/iptables.py`): a rule appended or
//! inserted (`state: present`, the default) in the `filter` table's
//! `INPUT` chain with `jump: ACCEPT` opens `destination_port` (or each of
//! `destination_ports`) with `protocol`, `DROP` or `REJECT` closes it; the
//! chain's `policy` opens or closes every port. A rule without a port is
//! not read: most are the loopback, established-connection or one-source
//! boilerplate, not every port opened. It holds now only: the
//! module does not save rules, so they are gone at boot unless something
//! else saves them. A rule removed (`state: absent`) is not read: what it
//! leaves depends on the chain's policy.

use super::{Effect, EffectKind, FirewallAction, TaskView, Timing};
use crate::text_regex::TextRegex;

pub(super) fn module(view: &dyn TaskView, out: &mut Vec<Effect>) {
    match crate::ansible::task::short_module(view.module()) {
        "firewalld" => firewalld(view, out),
        "ufw" => ufw(view, out),
        "iptables" => iptables(view, out),
        _ => {}
    }
}

/// The Kubernetes services firewalld ships (`config/services/*.xml`),
/// with the ports they open, includes followed.
const FIREWALLD_SERVICES: [(&str, &[&str]); 14] = [
    ("kube-apiserver", &["6443"]),
    ("kubelet", &["10250"]),
    // Renamed `kubelet`; kept for old playbooks.
    ("kube-api", &["10250"]),
    ("kubelet-readonly", &["10255"]),
    ("kube-controller-manager", &["10252"]),
    ("kube-controller-manager-secure", &["10257"]),
    ("kube-scheduler", &["10251"]),
    ("kube-scheduler-secure", &["10259"]),
    ("kube-nodeport-services", &["30000-32767"]),
    ("etcd-client", &["2379"]),
    ("etcd-server", &["2380"]),
    (
        "kube-control-plane",
        &["2379", "2380", "6443", "10252", "10251"],
    ),
    (
        "kube-control-plane-secure",
        &["2379", "2380", "6443", "10257", "10259"],
    ),
    ("kube-worker", &["10250", "30000-32767"]),
];

/// `port port="6443" protocol="tcp"` and the verdict of a firewalld rich
/// rule.
static RICH_PORT: TextRegex =
    TextRegex::new(r#"\bport\s+port="?([0-9:-]+)"?\s+protocol="?([a-z]+)"?"#);
static RICH_VERDICT: TextRegex = TextRegex::new(r"\b(accept|reject|drop)\b");

fn firewalld(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let action = match view.arg("state") {
        Some("enabled") => FirewallAction::Opened,
        Some("disabled") => FirewallAction::Closed,
        _ => return,
    };
    let permanent = view.flag("permanent", false);
    let timing = Timing {
        now: view.flag("immediate", false) || !permanent,
        boot: permanent,
    };
    let mut push = |port: String, proto: Option<String>, action| {
        out.push(effect("firewalld", action, Some(port), proto, timing));
    };
    if let Some(spec) = view.arg("port") {
        let (port, proto) = match spec.trim().split_once('/') {
            Some((p, proto)) => (p.trim(), Some(proto.trim().to_string())),
            None => (spec.trim(), None),
        };
        push(range(port), proto, action);
    } else if let Some(service) = view.arg("service").map(str::trim) {
        push(format!("service:{service}"), None, action);
        if let Some((_, ports)) = FIREWALLD_SERVICES.iter().find(|(s, _)| *s == service) {
            for port in *ports {
                push((*port).to_string(), Some("tcp".to_string()), action);
            }
        }
    } else if let Some(rule) = view.arg("rich_rule") {
        let verdict = match RICH_VERDICT.captures(rule).and_then(|c| c.get(1)) {
            Some("accept") => FirewallAction::Opened,
            Some(_) => FirewallAction::Closed,
            None => return,
        };
        // `enabled` adds the rule: its verdict holds. `disabled` removes it:
        // an accept taken back closes; a drop taken back leaves the zone's
        // own verdict, not known here.
        let action = match (action, verdict) {
            (FirewallAction::Opened, v) => v,
            (_, FirewallAction::Opened) => FirewallAction::Closed,
            _ => return,
        };
        if let Some(c) = RICH_PORT.captures(rule) {
            push(range(&c[1]), Some(c[2].to_string()), action);
        }
    }
}

fn ufw(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let push = |out: &mut Vec<Effect>, action, port: Option<String>, proto: Option<String>| {
        out.push(effect("ufw", action, port, proto, Timing::BOTH));
    };
    if matches!(view.arg("state"), Some("disabled" | "reset")) {
        push(out, FirewallAction::Disabled, None, None);
    }
    let direction = view.arg("direction");
    if let Some(policy) = view.arg("default")
        && matches!(direction, None | Some("incoming"))
    {
        let action = if policy == "allow" {
            FirewallAction::Opened
        } else {
            FirewallAction::Closed
        };
        push(out, action, None, None);
    }
    let Some(rule) = view.arg("rule") else { return };
    if matches!(direction, Some("out" | "outgoing")) || view.flag("route", false) {
        return;
    }
    let delete = view.flag("delete", false);
    let action = match (rule, delete) {
        ("allow" | "limit", false) => FirewallAction::Opened,
        ("allow" | "limit", true) | ("deny" | "reject", false) => FirewallAction::Closed,
        _ => return,
    };
    let port = view.arg("to_port");
    let app = view.arg("name");
    let proto = view
        .arg("proto")
        .filter(|p| *p != "any")
        .map(str::to_string);
    let port = match (port, app) {
        (Some(p), _) => Some(range(p)),
        (None, Some(app)) => Some(format!("app:{app}")),
        (None, None) => None,
    };
    push(out, action, port, proto);
}

fn iptables(view: &dyn TaskView, out: &mut Vec<Effect>) {
    if view.arg("table").unwrap_or("filter") != "filter"
        || view.arg("chain") != Some("INPUT")
        || view.arg("state").unwrap_or("present") != "present"
    {
        return;
    }
    let tool = if view.arg("ip_version") == Some("ipv6") {
        "ip6tables"
    } else {
        "iptables"
    };
    let verdict = |v: &str| match v {
        "ACCEPT" => Some(FirewallAction::Opened),
        "DROP" | "REJECT" => Some(FirewallAction::Closed),
        _ => None,
    };
    if let Some(action) = view.arg("policy").and_then(verdict) {
        out.push(effect(tool, action, None, None, Timing::NOW));
    }
    let Some(action) = view.arg("jump").and_then(verdict) else {
        return;
    };
    let proto = view.arg("protocol").map(str::to_string);
    let mut ports: Vec<String> = view.list("destination_ports");
    if let Some(p) = view.arg("destination_port") {
        ports.insert(0, p.to_string());
    }
    for port in ports {
        out.push(effect(
            tool,
            action,
            Some(range(&port)),
            proto.clone(),
            Timing::NOW,
        ));
    }
}

fn effect(
    tool: &str,
    action: FirewallAction,
    port: Option<String>,
    proto: Option<String>,
    timing: Timing,
) -> Effect {
    Effect::new(
        EffectKind::Firewall {
            tool: tool.to_string(),
            action,
            port,
            proto,
        },
        timing,
    )
}

/// A port or range as written here: `2379:2380` (ufw, iptables) reads
/// `2379-2380`.
fn range(port: &str) -> String {
    port.trim().replace(':', "-")
}

#[cfg(test)]
mod tests {
    use crate::effect::testing::lines;

    #[test]
    fn firewalld_ports_and_timing() {
        assert_eq!(
            lines("ansible.posix.firewalld: {port: 6443/tcp, permanent: true, state: enabled}"),
            vec!["firewall tool=firewalld action=opened port=6443 proto=tcp @boot"]
        );
        assert_eq!(
            lines(
                "ansible.posix.firewalld: {port: 2379-2380/tcp, permanent: true, immediate: true, state: enabled}"
            ),
            vec!["firewall tool=firewalld action=opened port=2379-2380 proto=tcp @now+boot"]
        );
        assert_eq!(
            lines("ansible.posix.firewalld: {port: 10250/tcp, state: enabled}"),
            vec!["firewall tool=firewalld action=opened port=10250 proto=tcp @now"]
        );
        assert_eq!(
            lines("ansible.posix.firewalld: {port: 8472/udp, permanent: yes, state: disabled}"),
            vec!["firewall tool=firewalld action=closed port=8472 proto=udp @boot"]
        );
        // Zone operations open nothing.
        assert!(
            lines("ansible.posix.firewalld: {zone: trusted, state: present, permanent: true}")
                .is_empty()
        );
    }

    #[test]
    fn firewalld_services() {
        assert_eq!(
            lines(
                "ansible.posix.firewalld: {service: kube-apiserver, permanent: true, state: enabled}"
            ),
            vec![
                "firewall tool=firewalld action=opened port=service:kube-apiserver @boot",
                "firewall tool=firewalld action=opened port=6443 proto=tcp @boot",
            ]
        );
        assert_eq!(
            lines("ansible.posix.firewalld: {service: https, state: enabled}"),
            vec!["firewall tool=firewalld action=opened port=service:https @now"]
        );
        let l = lines(
            "ansible.posix.firewalld: {service: kube-control-plane-secure, permanent: true, state: enabled}",
        );
        assert!(
            l.contains(
                &"firewall tool=firewalld action=opened port=10259 proto=tcp @boot".to_string()
            ),
            "{l:?}"
        );
    }

    #[test]
    fn firewalld_rich_rules() {
        assert_eq!(
            lines(
                r#"ansible.posix.firewalld: {rich_rule: 'rule family="ipv4" source address="10.0.0.0/8" port port="6443" protocol="tcp" accept', permanent: true, state: enabled}"#
            ),
            vec!["firewall tool=firewalld action=opened port=6443 proto=tcp @boot"]
        );
        assert_eq!(
            lines(
                r#"ansible.posix.firewalld: {rich_rule: 'rule port port="6443" protocol="tcp" accept', state: disabled}"#
            ),
            vec!["firewall tool=firewalld action=closed port=6443 proto=tcp @now"]
        );
    }

    #[test]
    fn ufw_rules() {
        assert_eq!(
            lines("community.general.ufw: {rule: allow, port: '6443', proto: tcp}"),
            vec!["firewall tool=ufw action=opened port=6443 proto=tcp @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {rule: allow, to_port: '2379:2380', protocol: tcp}"),
            vec!["firewall tool=ufw action=opened port=2379-2380 proto=tcp @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {rule: limit, name: OpenSSH}"),
            vec!["firewall tool=ufw action=opened port=app:OpenSSH @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {rule: allow, src: 10.0.0.0/8}"),
            vec!["firewall tool=ufw action=opened @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {rule: allow, port: '6443', proto: tcp, delete: true}"),
            vec!["firewall tool=ufw action=closed port=6443 proto=tcp @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {rule: deny, port: '10255'}"),
            vec!["firewall tool=ufw action=closed port=10255 @now+boot"]
        );
        // Outgoing and routed rules are not the node's open ports.
        assert!(
            lines("community.general.ufw: {rule: allow, port: '53', direction: out}").is_empty()
        );
        assert!(lines("community.general.ufw: {rule: allow, route: true, port: '80'}").is_empty());
    }

    #[test]
    fn ufw_state_and_policy() {
        assert_eq!(
            lines("community.general.ufw: {state: disabled}"),
            vec!["firewall tool=ufw action=disabled @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {state: reset}"),
            vec!["firewall tool=ufw action=disabled @now+boot"]
        );
        assert!(lines("community.general.ufw: {state: enabled}").is_empty());
        assert!(lines("community.general.ufw: {state: reloaded}").is_empty());
        assert_eq!(
            lines("community.general.ufw: {state: enabled, policy: allow}"),
            vec!["firewall tool=ufw action=opened @now+boot"]
        );
        assert_eq!(
            lines("community.general.ufw: {default: deny, direction: incoming}"),
            vec!["firewall tool=ufw action=closed @now+boot"]
        );
        assert!(lines("community.general.ufw: {default: allow, direction: outgoing}").is_empty());
    }

    #[test]
    fn iptables_rules_hold_now_only() {
        assert_eq!(
            lines(
                "ansible.builtin.iptables: {chain: INPUT, protocol: tcp, destination_port: '6443', jump: ACCEPT}"
            ),
            vec!["firewall tool=iptables action=opened port=6443 proto=tcp @now"]
        );
        assert_eq!(
            lines(
                "ansible.builtin.iptables: {chain: INPUT, protocol: tcp, destination_ports: ['2379:2380', '10250'], jump: ACCEPT, action: insert}"
            ),
            vec![
                "firewall tool=iptables action=opened port=2379-2380 proto=tcp @now",
                "firewall tool=iptables action=opened port=10250 proto=tcp @now",
            ]
        );
        assert_eq!(
            lines(
                "ansible.builtin.iptables: {chain: INPUT, protocol: tcp, destination_port: '10255', jump: DROP, ip_version: ipv6}"
            ),
            vec!["firewall tool=ip6tables action=closed port=10255 proto=tcp @now"]
        );
        assert_eq!(
            lines("ansible.builtin.iptables: {chain: INPUT, policy: ACCEPT}"),
            vec!["firewall tool=iptables action=opened @now"]
        );
        for task in [
            "ansible.builtin.iptables: {chain: FORWARD, jump: ACCEPT}",
            "ansible.builtin.iptables: {chain: OUTPUT, protocol: tcp, destination_port: '6443', jump: ACCEPT}",
            "ansible.builtin.iptables: {table: nat, chain: INPUT, destination_port: '6443', jump: ACCEPT}",
            "ansible.builtin.iptables: {chain: INPUT, destination_port: '6443', jump: ACCEPT, state: absent}",
            "ansible.builtin.iptables: {chain: INPUT, destination_port: '6443', jump: LOG}",
            "ansible.builtin.iptables: {chain: INPUT, in_interface: lo, jump: ACCEPT}",
            "ansible.builtin.iptables: {chain: INPUT, ctstate: [ESTABLISHED, RELATED], jump: ACCEPT}",
        ] {
            assert!(lines(task).is_empty(), "{task}");
        }
    }
}
