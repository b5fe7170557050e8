//! The loops of `test-repos/fidelity/loops`, each task's items against the
//! `expect` list ansible-core 2.19.14 gave (the fixture's playbook run with
//! `ANSIBLE_STDOUT_CALLBACK=json ansible-playbook -i localhost, -c local
//! site.yml` from the oracle virtualenv, each result's loop variable read),
//! and the unknown loops with their reason.

use super::LoopItems;
use crate::reach::Scope;
use crate::vars::LookupOwned;
use serde_json::Value;
use std::path::Path;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test-repos/fidelity")
        .join(name)
}

/// A task variable's value as written.
fn task_var(inst: &crate::ansible::project::TaskInstance, key: &str) -> Option<Value> {
    inst.task
        .vars
        .as_ref()?
        .get(key)
        .map(crate::yaml::Node::to_json)
}

#[test]
fn every_loop_of_the_fixture_gives_ansibles_items() {
    let l = crate::check::testing::load(&fixture("loops"));
    let scope = Scope::new(&l.project, &l.extra, None);
    let reached = scope.reached();
    let mut checked = 0;
    for facts in &reached {
        let inst = facts.reach.inst;
        let name = inst.task.name.clone().unwrap_or_default();
        let tv = scope.vars(&facts.reach);
        let items = super::loop_items(inst, &tv, scope.fs);
        if let Some(want) = task_var(inst, "expect") {
            assert_eq!(
                items,
                Some(LoopItems::Known(
                    want.as_array().cloned().unwrap_or_default()
                )),
                "{name}"
            );
            // Each iteration binds its item.
            let iters = facts.iterations(&scope);
            assert_eq!(Some(iters.len()), want.as_array().map(Vec::len), "{name}");
            checked += 1;
        } else if let Some(want) = task_var(inst, "expect_basenames") {
            let Some(LoopItems::Known(found)) = items else {
                panic!("{name}: {items:?}");
            };
            let names: Vec<Value> = found
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|p| Path::new(p).file_name())
                .map(|n| Value::String(n.to_string_lossy().into_owned()))
                .collect();
            assert_eq!(Value::Array(names), want, "{name}");
            checked += 1;
        } else if let Some(Value::String(why)) = task_var(inst, "expect_unknown") {
            let Some(LoopItems::Unknown(u)) = &items else {
                panic!("{name}: {items:?}");
            };
            assert!(u.to_string().contains(&why), "{name}: {u}");
            // The one iteration kept binds the item as unknown.
            let iters = facts.iterations(&scope);
            assert_eq!(iters.len(), 1, "{name}");
            assert!(iters[0].item.is_none());
            assert!(matches!(
                iters[0].tv.resolve("item").lookup,
                LookupOwned::Unknown(_)
            ));
            checked += 1;
        }
    }
    assert_eq!(checked, 31);
}

#[test]
fn loop_control_binds_loop_var_index_var_and_ansible_loop() {
    let l = crate::check::testing::load(&fixture("loops"));
    let scope = Scope::new(&l.project, &l.extra, None);
    let reached = scope.reached();
    let facts = reached
        .iter()
        .find(|f| {
            f.reach.inst.task.name.as_deref() == Some("loop over dict2items with loop_control")
        })
        .expect("the task");
    let iters = facts.iterations(&scope);
    let msg: Vec<String> = iters
        .iter()
        .map(|it| match it.tv.render_text("{{ idx }} {{ entry.key }} {{ ansible_loop.revindex }} {{ ansible_loop.first }} {{ ansible_loop_var }}") {
            LookupOwned::Value(Value::String(s)) => s,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        msg,
        [
            "0 net.ipv4.ip_forward 2 True entry",
            "1 kernel.randomize_va_space 1 False entry"
        ]
    );
}

#[test]
fn an_unknown_item_is_never_rendered_into_an_argument() {
    let dir = crate::check::testing::tree(&[
        ("site.yml", "- hosts: all\n  roles: [r]\n"),
        (
            "roles/r/tasks/main.yml",
            "- command: cat /x\n  register: found\n- ansible.posix.sysctl:\n    name: \"{{ item.key }}\"\n    value: \"{{ item.value }}\"\n    sysctl_file: /etc/sysctl.d/90-x.conf\n  loop: \"{{ found.stdout | from_yaml | dict2items }}\"\n",
        ),
    ]);
    let l = crate::check::testing::load(dir.path());
    let scope = Scope::new(&l.project, &l.extra, None);
    let reached = scope.reached();
    let facts = &reached[1];
    let inst = facts.reach.inst;
    let iters = facts.iterations(&scope);
    assert_eq!(iters.len(), 1);
    let why = iters[0].loop_unknown.as_deref().expect("unknown items");
    assert_eq!(
        (why.var.as_str(), why.why.as_str()),
        ("found", "registered result")
    );
    let name = iters[0].arg(inst, "name").expect("name");
    assert!(!name.contains("{{"), "{name}");
    assert!(name.starts_with(crate::reach::UNKNOWN_ITEM), "{name}");
    // A known argument stays known.
    assert_eq!(
        iters[0].arg(inst, "sysctl_file"),
        Some("/etc/sysctl.d/90-x.conf")
    );
}

#[test]
fn nested_include_loops_that_explode_are_cut_to_one_unknown_iteration() {
    let dir = crate::check::testing::tree(&[
        ("site.yml", "- hosts: all\n  roles: [r]\n"),
        (
            "roles/r/tasks/main.yml",
            "- include_tasks: inner.yml\n  loop: \"{{ range(200) | list }}\"\n  loop_control: {loop_var: outer}\n",
        ),
        (
            "roles/r/tasks/inner.yml",
            "- command: \"echo {{ outer }} {{ item }}\"\n  loop: \"{{ range(200) | list }}\"\n",
        ),
    ]);
    let l = crate::check::testing::load(dir.path());
    let scope = Scope::new(&l.project, &l.extra, None);
    let reached = scope.reached();
    let facts = reached
        .iter()
        .find(|f| f.reach.inst.task.module == "ansible.builtin.command")
        .expect("the inner task");
    let iters = facts.iterations(&scope);
    assert_eq!(iters.len(), 1);
    let why = iters[0].loop_unknown.as_deref().expect("cut");
    assert!(why.why.contains("bound of preflint"), "{why}");
    let line = iters[0].command(facts.reach.inst).expect("a command");
    assert!(line.starts_with(crate::reach::UNKNOWN_ITEM), "{line}");
}

#[test]
fn a_task_whose_loop_has_no_items_does_nothing() {
    let dir = crate::check::testing::tree(&[
        ("site.yml", "- hosts: all\n  roles: [r]\n"),
        ("roles/r/defaults/main.yml", "extra_sysctl: []\n"),
        (
            "roles/r/tasks/main.yml",
            "- ansible.posix.sysctl:\n    name: \"{{ item.name }}\"\n    value: \"{{ item.value }}\"\n  with_items: \"{{ extra_sysctl }}\"\n- ansible.posix.sysctl:\n    name: \"{{ item.name }}\"\n    value: \"{{ item.value }}\"\n  with_items: [{name: vm.swappiness, value: 1}]\n",
        ),
    ]);
    let l = crate::check::testing::load(dir.path());
    let scope = Scope::new(&l.project, &l.extra, None);
    let reached = scope.reached();
    let effects = |i: usize| {
        let f = &reached[i];
        let iters = f.iterations(&scope);
        iters
            .iter()
            .map(|it| it.effects(f.reach.inst).len())
            .sum::<usize>()
    };
    // Ansible skips the first task: no item, no sysctl named `{{ item.name }}`.
    assert_eq!(effects(0), 0);
    assert!(effects(1) > 0);
}
