//! The evaluation oracle: what `preflint tasks --evaluated` computes of each
//! task (loop items, module arguments, command line, template text) against
//! what ansible-core computes from the same variables
//! (`tests/oracle/eval/`).

#[allow(dead_code)] // the live oracle (step 2) uses the rest
mod common;

use std::path::Path;
use std::process::Command;

use common::repo;
use serde_json::{Value, json};

fn evaluated(tree: &Path, playbook: Option<&str>, extra: &[&str]) -> Value {
    let mut c = Command::new(env!("CARGO_BIN_EXE_preflint"));
    c.args(["tasks", "--format", "json", "--evaluated"]);
    if let Some(p) = playbook {
        c.args(["--playbook", p]);
    }
    let out = c.args(extra).arg(tree).output().expect("run preflint");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "preflint output is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every task of the listing (handlers after their play's tasks).
fn all_tasks(listing: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for e in listing["entries"].as_array().into_iter().flatten() {
        for p in e["plays"].as_array().into_iter().flatten() {
            for part in ["tasks", "handlers"] {
                out.extend(p[part].as_array().into_iter().flatten());
            }
        }
    }
    out
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

#[test]
fn evaluated_lists_items_args_command_and_template() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    write(root, "site.yml", "- hosts: all\n  roles: [r]\n");
    write(
        root,
        "roles/r/defaults/main.yml",
        "mods: [overlay, br_netfilter]\nports: [6443, 10250]\nfwd: 1\nempty: []\n",
    );
    write(
        root,
        "roles/r/tasks/main.yml",
        "- name: Load\n  community.general.modprobe:\n    name: \"{{ item }}\"\n  loop: \"{{ mods }}\"\n\
         - name: Ports\n  ansible.builtin.wait_for:\n    port: \"{{ item }}\"\n    timeout: 3\n  loop: \"{{ ports }}\"\n\
         - name: Echo\n  ansible.builtin.command: echo {{ fwd }} {{ ansible_hostname }}\n\
         - name: Conf\n  ansible.builtin.template:\n    src: k8s.conf.j2\n    dest: /etc/sysctl.d/90-k8s.conf\n\
         - name: Facts\n  ansible.builtin.debug:\n    msg: \"{{ item }}\"\n  loop: \"{{ ansible_interfaces }}\"\n\
         - name: Nothing\n  ansible.builtin.debug:\n    msg: \"{{ item }}\"\n  loop: \"{{ empty }}\"\n",
    );
    write(
        root,
        "roles/r/templates/k8s.conf.j2",
        "net.ipv4.ip_forward = {{ fwd }}\n",
    );
    let listing = evaluated(root, None, &[]);
    let tasks = all_tasks(&listing);
    let by_name = |n: &str| {
        tasks
            .iter()
            .find(|t| t["name"] == n)
            .unwrap_or_else(|| panic!("task {n} listed"))["evaluated"]
            .clone()
    };
    let load = by_name("Load");
    assert_eq!(
        load["loop"],
        json!({"kind": "loop", "known": true, "items": ["overlay", "br_netfilter"]})
    );
    assert_eq!(
        load["iterations"][1]["args"]["name"],
        json!({"value": "br_netfilter"})
    );
    // A single expression keeps its type; a literal keeps YAML's.
    let ports = by_name("Ports");
    assert_eq!(
        ports["iterations"][0]["args"]["port"],
        json!({"value": 6443})
    );
    assert_eq!(
        ports["iterations"][0]["args"]["timeout"],
        json!({"value": 3})
    );
    assert_eq!(
        by_name("Echo")["iterations"][0]["free_form"],
        json!({"unknown": "host fact ansible_hostname"})
    );
    assert_eq!(
        by_name("Conf")["iterations"][0]["template"],
        json!({"src": "roles/r/templates/k8s.conf.j2", "known": "full",
               "text": "net.ipv4.ip_forward = 1\n"})
    );
    let facts = by_name("Facts");
    assert_eq!(
        facts["loop"],
        json!({"kind": "loop", "known": false, "reason": "host fact ansible_interfaces"})
    );
    assert_eq!(
        facts["iterations"][0]["args"]["msg"],
        json!({"unknown": "loop items unknown"})
    );
    // A known empty list runs nothing.
    assert_eq!(by_name("Nothing")["iterations"], json!([]));
    // Without the flag no task has the field.
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--format", "json"])
        .arg(root)
        .output()
        .expect("run preflint");
    let plain: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        all_tasks(&plain)
            .iter()
            .all(|t| t.get("evaluated").is_none())
    );
}

#[test]
fn evaluated_ignores_human_format() {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--evaluated"])
        .arg(repo().join("test-repos/who-fixes/effects-forms"))
        .output()
        .expect("run preflint");
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\"evaluated\""));
}
