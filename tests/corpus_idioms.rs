//! Idioms of public roles that preflint read wrong (found by the corpus run,
//! `bench/corpus.sh`): each `test-repos/fidelity/<idiom>/` tree is written
//! in that style, and `preflint tasks --effects --format json` must give
//! what Ansible does with it.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tasks_json(tree: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--effects", "--format", "json", "-q"])
        .arg(repo().join("test-repos/fidelity").join(tree))
        .output()
        .expect("run preflint");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{tree}: no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every task as `file:line module`, with its effects as
/// `kind key=value...` lines (fields sorted, timing left out).
fn listing(json: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for entry in json["entries"].as_array().expect("entries") {
        for play in entry["plays"].as_array().expect("plays") {
            for task in play["tasks"].as_array().expect("tasks") {
                out.push(format!(
                    "{}:{} {}",
                    task["file"].as_str().unwrap_or_default(),
                    task["line"],
                    task["module"].as_str().unwrap_or_default()
                ));
                for it in task["effects"].as_array().into_iter().flatten() {
                    for ef in it["effects"].as_array().into_iter().flatten() {
                        let map = ef.as_object().expect("effect");
                        let mut fields: Vec<String> = map
                            .iter()
                            .filter(|(k, v)| {
                                !matches!(k.as_str(), "effect" | "timing") && !v.is_null()
                            })
                            .map(|(k, v)| match v {
                                Value::String(s) => format!("{k}={s}"),
                                other => format!("{k}={other}"),
                            })
                            .collect();
                        fields.sort();
                        out.push(format!(
                            "  {} {}",
                            map["effect"].as_str().unwrap_or_default(),
                            fields.join(" ")
                        ));
                    }
                }
            }
        }
    }
    out
}

fn diagnostics(json: &Value) -> Vec<String> {
    json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            format!(
                "{}:{} {}",
                d["file"].as_str().unwrap_or_default(),
                d["line"],
                d["code"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn removed_include_is_followed_and_reported() {
    let json = tasks_json("removed-include");
    assert_eq!(
        listing(&json),
        vec![
            "site.yml:7 ansible.builtin.include",
            "forwarding.yml:2 ansible.posix.sysctl",
            "  sysctl_set file=/etc/sysctl.d/50-forwarding.conf key=net.ipv4.ip_forward value=1",
            "  sysctl_applied apply={\"file\":\"/etc/sysctl.d/50-forwarding.conf\"}",
            "site.yml:10 ansible.builtin.include",
            "modules.yml:2 community.general.modprobe",
            "  module_loaded name=br_netfilter",
        ]
    );
    assert_eq!(
        diagnostics(&json),
        vec![
            "site.yml:7 task-action-removed",
            "site.yml:10 task-action-removed"
        ]
    );
}

#[test]
fn yum_runs_dnf() {
    let json = tasks_json("yum-action-redirect");
    assert_eq!(
        listing(&json),
        vec![
            "site.yml:6 ansible.builtin.dnf",
            "  package action=installed name=conntrack-tools",
            "  package action=installed name=socat",
            "site.yml:13 ansible.builtin.dnf",
            "  package action=removed name=iptables-services",
        ]
    );
    assert!(diagnostics(&json).is_empty());
}

#[test]
fn package_names_under_aliases_and_unrendered_lists() {
    let json = tasks_json("package-name-aliases");
    let listing = listing(&json);
    assert_eq!(
        listing[..5],
        [
            "site.yml:7 ansible.builtin.package",
            "  package action=installed name=ethtool",
            "  package action=installed name=ebtables",
            "site.yml:14 ansible.builtin.package",
            "  package action=installed name=ipvsadm",
        ]
    );
    // The list built from a registered result is one unknown name, not
    // three names cut at the commas of its filters' arguments, and never
    // its template text.
    let last: Vec<&String> = listing
        .iter()
        .skip_while(|l| !l.starts_with("site.yml:25 "))
        .collect();
    assert_eq!(last.len(), 2, "{listing:#?}");
    assert!(
        last[1].starts_with("  package action=installed name=<unknown: wanted | difference(")
            && last[1].contains("registered result"),
        "{last:?}"
    );
}

#[test]
fn a_missing_dependency_names_each_directory_searched_once() {
    let json = tasks_json("role-dependency-elsewhere");
    assert_eq!(
        listing(&json)[..2],
        [
            "tasks/main.yml:2 ansible.posix.sysctl",
            "  sysctl_set file=/etc/sysctl.d/60-bridge.conf key=net.bridge.bridge-nf-call-iptables value=1",
        ]
    );
    let messages: Vec<&str> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "role-not-found")
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let searched = messages[0]
        .split_once("(searched ")
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .expect("the directories searched");
    let dirs: Vec<&str> = searched.split(", ").collect();
    let mut unique = dirs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(dirs.len(), unique.len(), "{dirs:?}");
}

#[test]
fn quoted_scalars_continued_as_libyaml_allows_are_read() {
    let json = tasks_json("quoted-scalar-continuation");
    assert_eq!(
        listing(&json),
        vec![
            "tasks/main.yml:2 ansible.posix.sysctl",
            "  sysctl_set file=/etc/sysctl.d/90-node.conf key=net.ipv4.ip_forward value=1",
            "  sysctl_applied apply={\"file\":\"/etc/sysctl.d/90-node.conf\"}",
            "tasks/main.yml:9 ansible.builtin.shell",
            "  swap_off how=all",
            "  file_edited edit={\"text\":\"\",\"regexp\":\" swap \",\"remove\":true} path=/etc/fstab",
            "  swap_off how=fstab_entries",
            "  swap_off how=fstab_entries",
            "tasks/main.yml:13 ansible.builtin.set_fact",
            "tasks/main.yml:19 community.general.modprobe",
            "  module_loaded name=br_netfilter",
        ]
    );
    assert!(diagnostics(&json).is_empty(), "{:?}", diagnostics(&json));
}
