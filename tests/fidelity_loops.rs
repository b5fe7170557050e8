//! Roles written the way public roles write them, read as Ansible reads
//! them (issue 42): `with_dict` over combined dicts, a role run from its
//! own playbook through `{{ playbook_dir }}`.

use std::path::PathBuf;
use std::process::Command;

fn tree(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test-repos/fidelity")
        .join(name)
        .display()
        .to_string()
}

/// `preflint sysctl --format json` of a fixture: each key with its value
/// now and the file it is written to.
fn sysctls(name: &str) -> Vec<(String, String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["sysctl", "--format", "json", &tree(name)])
        .env("NO_COLOR", "1")
        .output()
        .expect("run preflint");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut found: Vec<(String, String, String)> = v
        .as_array()
        .expect("a list")
        .iter()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
            (text("key"), text("now"), text("now_file"))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn with_dict_over_combined_dicts_sets_each_sysctl() {
    let file = "/etc/sysctl.d/90-x.conf".to_string();
    assert_eq!(
        sysctls("with-dict-sysctl"),
        [
            ("kernel.randomize_va_space".into(), "2".into(), file.clone()),
            ("net.ipv4.ip_forward".into(), "1".into(), file),
        ]
    );
}

#[test]
fn a_role_run_from_its_own_playbook_dir_is_analysed() {
    assert_eq!(
        sysctls("playbook-dir-role"),
        [(
            "net.ipv4.ip_forward".to_string(),
            "1".to_string(),
            "/etc/sysctl.d/80-forward.conf".to_string()
        )]
    );
}

#[test]
fn help_states_the_ansible_core_release_modelled() {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .arg("--help")
        .output()
        .expect("run preflint");
    let (major, minor, revision) = preflint::vars::ANSIBLE_CORE_VERSION;
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains(&format!("ansible-core {major}.{minor}.{revision}")),
        "{help}"
    );
}

#[test]
fn an_include_loop_passes_its_loop_var_down() {
    let file = "/etc/sysctl.d/70-forward.conf".to_string();
    assert_eq!(
        sysctls("include-loop"),
        [
            (
                "net.ipv4.conf.all.accept_redirects".into(),
                "0".into(),
                file.clone()
            ),
            (
                "net.ipv4.conf.default.accept_redirects".into(),
                "0".into(),
                file.clone()
            ),
            ("net.ipv4.ip_forward".into(), "1".into(), file.clone()),
            (
                "net.ipv6.conf.all.accept_redirects".into(),
                "0".into(),
                file.clone()
            ),
            ("net.ipv6.conf.all.forwarding".into(), "1".into(), file),
        ]
    );
}

/// The command lines `preflint tasks --effects` finds in a fixture.
fn command_lines(name: &str, extra: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["tasks", "--effects", "--format", "json", &tree(name)])
        .args(extra)
        .output()
        .expect("run preflint");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut lines = Vec::new();
    let mut todo = vec![&v];
    while let Some(x) = todo.pop() {
        match x {
            serde_json::Value::Object(m) => {
                if m.get("effect").and_then(serde_json::Value::as_str) == Some("command") {
                    lines.push(m["line"].as_str().unwrap_or_default().to_string());
                }
                todo.extend(m.values());
            }
            serde_json::Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    lines
}

#[test]
fn magic_variables_are_ansibles() {
    let inventory = tree("magic-vars/hosts.ini");
    // What ansible-core 2.19.14 prints for the same expression (see the
    // fixture's site.yml); magic variables win over extra vars.
    assert_eq!(
        command_lines(
            "magic-vars",
            &[
                "-i",
                &inventory,
                "-e",
                "playbook_dir=x",
                "-e",
                "ansible_check_mode=true"
            ]
        ),
        ["echo m1 ['k8s', 'masters'] ['m1', 'w1', 'w2'] ['m1'] probe False 2.19.14 True"]
    );
    // Without an inventory the host's names are not known.
    let lines = command_lines("magic-vars", &[]);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("{{ inventory_hostname }}"),
        "{}",
        lines[0]
    );
}
