//! Differential tests of the embedded module argument specs
//! (`rules/module-args.yml`, read from each module's DOCUMENTATION):
//!
//! - against the `argument_spec` each module really builds, taken as
//!   ansible-test's validate-modules takes it (`tests/oracle/module_args.py`),
//!   for every module whose code loads: same options, aliases, types,
//!   defaults and choices, except the differences listed in `KNOWN`;
//! - against the generator: `scripts/gen-modules.py` run now writes the same
//!   `rules/modules.yml` and `rules/module-args.yml` as are committed.
//!
//! Needs a Python with ansible-core and the `ansible` package
//! (`PREFLINT_PYTHON`, set by scripts/test.sh); fails when there is none
//! unless `PREFLINT_SKIP_ORACLE=1`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use common::repo;
use preflint::ansible::module_args::{self, ModuleSpec};
use preflint::source::{FileId, Span};
use serde_json::Value;

/// Where a module's DOCUMENTATION and its argument_spec disagree, and why
/// the documentation is kept: (module, option).
const KNOWN: &[(&str, &str)] = &[
    // The spec's canonical name is `package` (aliases pkg, name); the
    // documentation's is `name` (aliases package, pkg), the name every task
    // and the catalog use.
    ("ansible.builtin.apt", "name"),
    ("ansible.builtin.apt", "package"),
    ("community.general.android_sdk", "name"),
    ("community.general.android_sdk", "package"),
    // Likewise `src` (spec) and `path` (documentation).
    ("community.general.hponcfg", "path"),
    ("community.general.hponcfg", "src"),
    // Undocumented options the shell and dnf action plugins pass.
    ("ansible.builtin.command", "executable"),
    ("ansible.builtin.dnf5", "use_backend"),
    // Options of the action plugin in front of the module.
    ("ansible.builtin.copy", "decrypt"),
    ("ansible.builtin.service", "use"),
    // Choices computed at run time, or validated by the module itself.
    ("ansible.builtin.package_facts", "manager"),
    ("community.general.ipa_vault", "replace"),
    // Documented defaults the spec leaves to the module (None acts as the
    // documented value), and one the spec computes from the host name.
    ("ansible.builtin.user", "generate_ssh_key"),
    ("ansible.builtin.user", "local"),
    ("ansible.builtin.user", "ssh_key_bits"),
    ("ansible.builtin.user", "ssh_key_comment"),
    // A type given as a function (`list_dict_str`), documented as `raw`.
    ("kubernetes.core.k8s", "resource_definition"),
    ("kubernetes.core.k8s_scale", "resource_definition"),
    ("kubernetes.core.k8s_service", "resource_definition"),
];

fn python() -> Option<PathBuf> {
    common::python_with("ansible, ansible_collections.ansible.posix")
}

fn skip_or_fail() {
    assert!(
        std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
        "no Python with ansible-core and the ansible package: run scripts/test.sh (it installs \
         one), set PREFLINT_PYTHON, or PREFLINT_SKIP_ORACLE=1 to skip"
    );
}

/// The embedded option as the oracle prints it.
fn embedded(spec: ModuleSpec) -> BTreeMap<String, Value> {
    let span = Span::file_start(FileId(0));
    spec.options()
        .filter(|o| !o.name().starts_with('_'))
        .map(|o| {
            let mut choices = o.choices().to_vec();
            choices.sort_unstable();
            let mut aliases = o.aliases().to_vec();
            aliases.sort_unstable();
            let value = serde_json::json!({
                "type": o.kind().as_str(),
                "aliases": aliases,
                "default": o.default().map_or(Value::Null, |d| d.to_node(span).to_json()),
                "choices": choices,
            });
            (o.name().to_string(), value)
        })
        .collect()
}

/// The oracle's option, in the embedded form: aliases as a set (the
/// documentation lists them in another order for a few modules), `json` for
/// both JSON types.
fn oracle(opt: &Value) -> Value {
    let mut opt = opt.clone();
    if let Some(a) = opt.get_mut("aliases").and_then(Value::as_array_mut) {
        a.sort_by(|x, y| x.as_str().cmp(&y.as_str()));
    }
    if opt.get("type").and_then(Value::as_str) == Some("jsonarg") {
        opt["type"] = "json".into();
    }
    opt
}

#[test]
fn embedded_specs_agree_with_the_modules_argument_spec() {
    let Some(py) = python() else {
        skip_or_fail();
        return;
    };
    let names: Vec<&str> = module_args::all().map(ModuleSpec::name).collect();
    let out = Command::new(&py)
        .arg(repo().join("tests/oracle/module_args.py"))
        .args(&names)
        .output()
        .expect("run module_args.py");
    assert!(
        out.status.success(),
        "module_args.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let specs: BTreeMap<String, Value> =
        serde_json::from_slice(&out.stdout).expect("module_args.py prints JSON");
    let known: BTreeSet<(&str, &str)> = KNOWN.iter().copied().collect();
    let mut compared = 0;
    let mut differences = Vec::new();
    for spec in module_args::all() {
        let Some(Value::Object(real)) = specs.get(spec.name()) else {
            continue;
        };
        if real.contains_key("error") {
            // An action plugin's documentation stub, or a module whose
            // imports are missing here: nothing to compare with.
            continue;
        }
        compared += 1;
        let ours = embedded(spec);
        let names: BTreeSet<&String> = ours.keys().chain(real.keys()).collect();
        for name in names {
            if known.contains(&(spec.name(), name.as_str())) {
                continue;
            }
            match (ours.get(name), real.get(name).map(oracle)) {
                (Some(a), Some(b)) if *a == b => {}
                (a, b) => differences.push(format!(
                    "{} {name}: documentation {a:?}, argument_spec {b:?}",
                    spec.name()
                )),
            }
        }
    }
    assert!(compared > 700, "only {compared} modules loaded");
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
    println!("module args oracle: {compared} modules agree with their argument_spec");
}

#[test]
fn generated_rules_are_current() {
    let Some(py) = python() else {
        skip_or_fail();
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = Command::new(&py)
        .arg(repo().join("scripts/gen-modules.py"))
        .arg(tmp.path())
        .output()
        .expect("run gen-modules.py");
    assert!(
        out.status.success(),
        "gen-modules.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in ["modules.yml", "module-args.yml"] {
        let fresh = std::fs::read_to_string(tmp.path().join(file)).expect("generated");
        let committed =
            std::fs::read_to_string(repo().join("rules").join(file)).expect("committed");
        assert!(
            fresh == committed,
            "rules/{file} is stale: run `{} scripts/gen-modules.py` and commit the result",
            py.display()
        );
    }
}
