//! Differential oracle for `when:` conditions: preflint's `jinja` module
//! against real ansible-core.
//!
//! Reads `tests/oracle/conditions/cases.yml`, evaluates every case with
//! [`preflint::jinja::eval_condition`], asks `tests/oracle/conditions/eval.py`
//! (run with the Python named by `PREFLINT_PYTHON`, or when unset
//! `/opt/preflint-venv/bin/python`, else `python3`) what ansible-core
//! answers, and checks:
//!
//! * where preflint says true or false, ansible says the same for every sample;
//! * where preflint says unknown, the case has names preflint cannot know
//!   (facts, registered results, `set_fact`), or ansible itself fails on it
//!   and preflint says why (`Unset` for undefined, `error` otherwise), or the
//!   case is marked `expect_unknown: true`.
//!
//! Without a Python that has ansible-core the test fails, unless
//! `PREFLINT_SKIP_ORACLE=1`.

use preflint::jinja::{self, Lookup, Tri, Unknown, UnknownWhy, VarSource};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Case {
    id: String,
    when: String,
    vars: serde_json::Map<String, Value>,
    unknown: Vec<(String, UnknownWhy)>,
    samples: usize,
    expect_unknown: bool,
}

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/conditions")
}

/// The cases, and the same cases as JSON for eval.py (so both sides read
/// identical values, whatever YAML version each parser follows).
fn load_cases() -> (Vec<Case>, Value) {
    let text = std::fs::read_to_string(oracle_dir().join("cases.yml")).expect("read cases.yml");
    let doc: Value = serde_yaml::from_str(&text).expect("cases.yml is valid YAML");
    let raw = doc["cases"]
        .as_array()
        .expect("cases.yml has a `cases` list")
        .clone();
    let names = |c: &Value, key: &str| -> Vec<String> {
        c[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut cases = Vec::new();
    for c in &raw {
        let id = c["id"].as_str().expect("case id").to_string();
        let when = match &c["when"] {
            Value::String(s) => s.clone(),
            other => panic!("case {id}: `when` must be a string, got {other}"),
        };
        let mut unknown = Vec::new();
        for (key, why) in [
            ("facts", UnknownWhy::Fact),
            ("registered", UnknownWhy::Registered),
            ("runtime_facts", UnknownWhy::RuntimeFact),
        ] {
            unknown.extend(names(c, key).into_iter().map(|n| (n, why.clone())));
        }
        let samples = c["samples"].as_array().map_or(0, Vec::len);
        assert!(
            unknown.is_empty() || samples > 0,
            "case {id}: unknown names need `samples`"
        );
        cases.push(Case {
            id,
            when,
            vars: c["vars"].as_object().cloned().unwrap_or_default(),
            unknown,
            samples,
            expect_unknown: c["expect_unknown"].as_bool().unwrap_or(false),
        });
    }
    let mut ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "case ids must be unique");
    (cases, serde_json::json!({ "cases": raw }))
}

/// What the variables module would answer: known values (string values
/// that are templates rendered through `jinja`, as Ansible does lazily) and
/// the case's unknown names.
struct CaseVars<'a> {
    case: &'a Case,
}

impl VarSource for CaseVars<'_> {
    fn lookup(&self, name: &str) -> Lookup {
        if let Some((_, why)) = self.case.unknown.iter().find(|(n, _)| n == name) {
            return Lookup::Unknown(why.clone());
        }
        match self.case.vars.get(name) {
            None => Lookup::Missing,
            Some(Value::String(s)) if jinja::is_template(s) => match jinja::render(s, self) {
                jinja::Rendered::Value(v) => Lookup::Value(v),
                jinja::Rendered::Unknown(u) => Lookup::Unknown(
                    u.iter()
                        .map(|x| x.why.clone())
                        .min()
                        .unwrap_or(UnknownWhy::TooComplex),
                ),
            },
            Some(v) => Lookup::Value(v.clone()),
        }
    }
}

/// The Python to run eval.py with, or the candidates that were tried.
fn python() -> Result<PathBuf, String> {
    // An explicit choice is used alone, so a wrong one fails loudly.
    let candidates = match std::env::var_os("PREFLINT_PYTHON") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![
            PathBuf::from("/opt/preflint-venv/bin/python"),
            PathBuf::from("python3"),
        ],
    };
    let works = |p: &PathBuf| {
        Command::new(p)
            .args(["-c", "import ansible.template"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    candidates
        .iter()
        .find(|p| works(p))
        .cloned()
        .ok_or_else(|| {
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        })
}

/// Runs eval.py; returns each case's results by id.
fn ansible_results(python: &Path, input: &Value) -> (String, HashMap<String, Vec<Value>>) {
    let mut child = Command::new(python)
        .arg(oracle_dir().join("eval.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start eval.py");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write cases to eval.py");
    let out = child.wait_with_output().expect("run eval.py");
    assert!(
        out.status.success(),
        "eval.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("eval.py prints JSON");
    let version = doc["ansible"].as_str().unwrap_or("?").to_string();
    let results = doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_string(),
                c["results"].as_array().cloned().unwrap_or_default(),
            )
        })
        .collect();
    (version, results)
}

fn why_label(why: &UnknownWhy) -> &'static str {
    match why {
        UnknownWhy::Fact => "fact",
        UnknownWhy::Registered => "registered",
        UnknownWhy::RuntimeFact => "runtime_fact",
        UnknownWhy::Unset => "unset",
        UnknownWhy::Vault => "vault",
        UnknownWhy::Lookup => "lookup",
        UnknownWhy::TooComplex => "too_complex",
        UnknownWhy::Cycle => "cycle",
    }
}

fn describe(us: &[Unknown]) -> String {
    us.iter()
        .map(|u| match &u.error {
            Some(e) => format!("{} ({}: ansible fails: {e})", u.var, why_label(&u.why)),
            None => format!("{} ({})", u.var, why_label(&u.why)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Does preflint's unknown explain the error ansible raised?
fn explains(us: &[Unknown], error_kind: &str) -> bool {
    match error_kind {
        "undefined" => us.iter().any(|u| u.why == UnknownWhy::Unset),
        _ => us.iter().any(|u| u.error.is_some()),
    }
}

#[test]
fn conditions_agree_with_ansible() {
    let (cases, input) = load_cases();
    assert!(
        cases.len() >= 60,
        "the oracle needs at least 60 cases, has {}",
        cases.len()
    );
    let python = match python() {
        Ok(p) => p,
        Err(_) if std::env::var("PREFLINT_SKIP_ORACLE").as_deref() == Ok("1") => {
            eprintln!("conditions: oracle skipped (PREFLINT_SKIP_ORACLE=1)");
            return;
        }
        Err(tried) => panic!(
            "no Python with ansible-core found (tried: {tried}); install ansible-core, point \
             PREFLINT_PYTHON at a Python that has it, or set PREFLINT_SKIP_ORACLE=1 to skip this oracle"
        ),
    };
    let (version, results) = ansible_results(&python, &input);

    let (mut agree, mut both_fail) = (0, 0);
    let mut unknown_cases = 0;
    let mut by_reason: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut listing = Vec::new();
    for case in &cases {
        let answers = results
            .get(&case.id)
            .unwrap_or_else(|| panic!("eval.py has no result for {}", case.id));
        let expected_runs = if case.unknown.is_empty() {
            1
        } else {
            case.samples
        };
        assert_eq!(
            answers.len(),
            expected_runs,
            "case {}: one result per sample",
            case.id
        );
        let ansible: Vec<String> = answers
            .iter()
            .map(|r| match (&r["value"], &r["error"]) {
                (Value::Bool(b), _) => b.to_string(),
                (_, Value::String(e)) => {
                    format!("error:{e}: {}", r["message"].as_str().unwrap_or_default())
                }
                _ => "?".into(),
            })
            .collect();
        let preflint = jinja::eval_condition(&case.when, &CaseVars { case });
        match &preflint {
            Tri::True | Tri::False => {
                let want = (preflint == Tri::True).to_string();
                if ansible.iter().all(|a| *a == want) {
                    agree += 1;
                } else {
                    problems.push(format!(
                        "{}: `{}`: preflint says {want}, ansible says {ansible:?}",
                        case.id, case.when
                    ));
                }
            }
            Tri::Unknown(us) => {
                unknown_cases += 1;
                let mut reasons: Vec<&'static str> = us.iter().map(|u| why_label(&u.why)).collect();
                reasons.dedup();
                for r in &reasons {
                    *by_reason.entry(r).or_default() += 1;
                }
                listing.push(format!(
                    "  unknown: {}: `{}`: {}; ansible: {ansible:?}",
                    case.id,
                    case.when,
                    describe(us)
                ));
                if case.unknown.is_empty() && !case.expect_unknown {
                    // A known-only case may be unknown only because ansible
                    // itself fails on it and preflint says why.
                    let failing = answers
                        .iter()
                        .all(|r| r["error"].as_str().is_some_and(|e| explains(us, e)));
                    if failing {
                        both_fail += 1;
                    } else {
                        problems.push(format!(
                            "{}: `{}`: every name is known but preflint says unknown ({}); ansible says {ansible:?}",
                            case.id,
                            case.when,
                            describe(us)
                        ));
                    }
                } else if case.expect_unknown && !case.unknown.is_empty() {
                    problems.push(format!(
                        "{}: expect_unknown is only for cases without unknown names",
                        case.id
                    ));
                }
            }
        }
        if case.expect_unknown && !matches!(preflint, Tri::Unknown(_)) {
            problems.push(format!(
                "{}: marked expect_unknown but preflint answers {preflint:?}; drop the mark",
                case.id
            ));
        }
    }

    let reasons = by_reason
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let disagree = problems.len();
    println!("ansible-core {version}, python {}", python.display());
    for line in &listing {
        println!("{line}");
    }
    println!(
        "conditions: {agree} agree, {disagree} disagree, {unknown_cases} unknown ({reasons}); {both_fail} of the unknown fail in ansible too"
    );
    assert!(
        problems.is_empty(),
        "preflint and ansible disagree:\n{}",
        problems.join("\n")
    );
}
