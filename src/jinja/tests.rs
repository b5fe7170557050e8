use super::*;
use crate::HashMap;
use serde_json::json;

#[test]
fn the_parse_bounds_hold_for_short_and_long_sources() {
    let nested = |n: usize| format!("{{{{ {}x{} }}}}", "(".repeat(n), ")".repeat(n));
    // Short: the brackets are counted, nesting or not.
    assert!(parseable(&nested(MAX_BRACKET_DEPTH - 2)));
    assert!(!parseable(&nested(MAX_BRACKET_DEPTH)));
    assert!(
        parseable(&"{{ (x) }}".repeat(MAX_BRACKET_DEPTH)),
        "siblings"
    );
    // Long: the full scan.
    let long_siblings = format!("{}{}", " ".repeat(MAX_OPERATORS), "(x)".repeat(40));
    assert!(parseable(&long_siblings));
    let chain = format!("{{{{ {} }}}}", vec!["a"; MAX_OPERATORS + 2].join(" ~ "));
    assert!(!parseable(&chain));
    assert!(parseable(&vec!["a"; MAX_OPERATORS / 4].join(" ~ ")));
}

/// The long scan skips plain text outside the delimiters and inside
/// string literals; what it skips must not change what it finds.
#[test]
fn the_long_scan_sees_delimiters_quotes_and_brackets_after_plain_text() {
    let text = "plain text, long enough for the full scan. ".repeat(20);
    let deep = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
    // `{%` right after text opens code; deep brackets there are counted.
    let code = format!("{text}{{% if {} %}}", deep(MAX_BRACKET_DEPTH + 1));
    assert!(!parseable(&code));
    // A quote outside the delimiters hides the brackets up to its end...
    let quoted = format!(
        "{text}{{{{ x }}}} it's {} here'{{{{ y }}}}",
        "(".repeat(MAX_BRACKET_DEPTH + 1)
    );
    assert!(parseable(&quoted));
    // ...and an escaped quote does not end it.
    let escaped = format!(
        "{text}{{{{ 'a\\'{}' }}}}",
        "(".repeat(MAX_BRACKET_DEPTH + 1)
    );
    assert!(parseable(&escaped));
    // Operators are counted only between the delimiters.
    let ops = vec!["a"; MAX_OPERATORS + 2].join(" ~ ");
    assert!(parseable(&format!("{text}{ops}{{{{ x }}}}")));
    assert!(!parseable(&format!("{text}{{{{ {ops} }}}}")));
}

/// Variables for tests: known values plus names declared unknown.
#[derive(Default)]
struct Vars {
    known: HashMap<String, serde_json::Value>,
    unknown: HashMap<String, UnknownWhy>,
}

impl Vars {
    fn new(known: &serde_json::Value) -> Self {
        let known = known
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        Vars {
            known,
            unknown: HashMap::default(),
        }
    }

    fn with(mut self, name: &str, why: UnknownWhy) -> Self {
        self.unknown.insert(name.into(), why);
        self
    }
}

impl VarSource for Vars {
    fn lookup(&self, name: &str) -> Lookup {
        if let Some(w) = self.unknown.get(name) {
            return Lookup::Unknown(w.clone());
        }
        self.known
            .get(name)
            .map_or(Lookup::Missing, |v| Lookup::Value(v.clone()))
    }
}

#[test]
fn a_template_is_parsed_once_and_renders_as_when_parsed_afresh() {
    let vars = Vars::new(&json!({"a": "x", "n": 2, "l": [1, 2]})).with("r", UnknownWhy::Registered);
    let texts = [
        "{{ a }}-{{ n + 1 }}",
        "{% if n > 1 %}big{% else %}small{% endif %}\n",
        "{% for i in l %}{{ i }},{% endfor %}",
        "{{ r }} and {{ missing }}",
        "{{ a ",
        "plain {# note #} text",
    ];
    for t in texts {
        let first = template::Shape::of(t).expect("memo has room");
        let again = template::Shape::of(t).expect("memo has room");
        assert!(std::sync::Arc::ptr_eq(&first, &again), "{t}: parsed twice");
        assert_eq!(
            render(t, &vars),
            template::render_unremembered(t, &vars),
            "{t}"
        );
    }
}

fn cond(expr: &str, vars: &Vars) -> Tri {
    eval_condition(expr, vars)
}

fn unknown_of(t: &Tri) -> Vec<(String, UnknownWhy)> {
    match t {
        Tri::Unknown(u) => u.iter().map(|u| (u.var.clone(), u.why.clone())).collect(),
        _ => Vec::new(),
    }
}

fn reg() -> Vars {
    Vars::new(&json!({"t": true, "f": false}))
        .with("reg", UnknownWhy::Registered)
        .with("ansible_os_family", UnknownWhy::Fact)
}

#[test]
fn kleene_and_or_not() {
    let v = reg();
    assert_eq!(cond("f and reg.rc == 0", &v), Tri::False);
    assert_eq!(cond("reg.rc == 0 and f", &v), Tri::False);
    assert_eq!(cond("t or reg.rc == 0", &v), Tri::True);
    assert_eq!(cond("reg.rc == 0 or t", &v), Tri::True);
    assert_eq!(
        unknown_of(&cond("reg.rc == 0 and t", &v)),
        vec![("reg".into(), UnknownWhy::Registered)]
    );
    assert_eq!(
        unknown_of(&cond("reg.rc == 0 or f", &v)),
        vec![("reg".into(), UnknownWhy::Registered)]
    );
    assert_eq!(
        unknown_of(&cond("not (reg is succeeded)", &v)),
        vec![("reg".into(), UnknownWhy::Registered)]
    );
}

#[test]
fn unknowns_are_listed_sorted_and_deduplicated() {
    let v = reg();
    let t = cond(
        "ansible_os_family == 'RedHat' and reg.rc == 0 and reg.stdout != ''",
        &v,
    );
    assert_eq!(
        unknown_of(&t),
        vec![
            ("ansible_os_family".into(), UnknownWhy::Fact),
            ("reg".into(), UnknownWhy::Registered)
        ]
    );
}

#[test]
fn if_expression_with_unknown_test() {
    let v = reg();
    assert_eq!(cond("(1 if reg.rc == 0 else 1) == 1", &v), Tri::True);
    assert!(matches!(
        cond("(1 if reg.rc == 0 else 2) == 1", &v),
        Tri::Unknown(_)
    ));
}

#[test]
fn defined_on_facts_registered_and_missing() {
    let v = reg().with("sf", UnknownWhy::RuntimeFact);
    assert_eq!(cond("reg is defined", &v), Tri::True);
    assert_eq!(cond("sf is defined", &v), Tri::True);
    assert_eq!(cond("ansible_os_family is defined", &v), Tri::True);
    assert_eq!(cond("nope is defined", &v), Tri::False);
    assert_eq!(cond("nope is undefined", &v), Tri::True);
    assert_eq!(cond("nope.x is defined", &v), Tri::False);
    assert!(matches!(cond("reg.stdout is defined", &v), Tri::Unknown(_)));
}

#[test]
fn default_filter_on_missing_and_unknown() {
    let v = reg();
    assert_eq!(cond("nope | default(false)", &v), Tri::False);
    assert_eq!(cond("not (nope | default(false) | bool)", &v), Tri::True);
    assert_eq!(cond("nope | d(true)", &v), Tri::True);
    assert_eq!(cond("'' | default('x', true) == 'x'", &v), Tri::True);
    assert_eq!(
        unknown_of(&cond("reg | default(false)", &v)),
        vec![("reg".into(), UnknownWhy::Registered)]
    );
    assert_eq!(cond("t | default(reg)", &v), Tri::True);
}

#[test]
fn undefined_use_is_unset() {
    let v = reg();
    assert_eq!(
        unknown_of(&cond("nope == 1", &v)),
        vec![("nope".into(), UnknownWhy::Unset)]
    );
    assert_eq!(
        unknown_of(&cond("nope", &v)),
        vec![("nope".into(), UnknownWhy::Unset)]
    );
}

#[test]
fn non_boolean_condition_fails_like_ansible_2_19() {
    let v = Vars::new(&json!({"s": "false", "n": 1, "l": []}));
    for e in ["s", "n", "l", "'yes'"] {
        match cond(e, &v) {
            Tri::Unknown(u) => assert!(u[0].error.is_some(), "{e}: {u:?}"),
            other => panic!("{e}: {other:?}"),
        }
    }
    assert_eq!(cond("s | bool", &v), Tri::False);
    assert_eq!(cond("True", &v), Tri::True);
    assert_eq!(cond("  False  ", &v), Tri::False);
}

#[test]
fn registered_tests_on_known_results() {
    let v =
        Vars::new(&json!({"ok": {"rc": 0, "changed": true}, "bad": {"failed": true}, "s": "x"}));
    assert_eq!(cond("ok is succeeded", &v), Tri::True);
    assert_eq!(cond("ok is changed", &v), Tri::True);
    assert_eq!(cond("bad is failed", &v), Tri::True);
    assert_eq!(cond("bad is skipped", &v), Tri::False);
    assert!(matches!(&cond("s is succeeded", &v), Tri::Unknown(u) if u[0].error.is_some()));
}

#[test]
fn python_semantics() {
    let v = Vars::new(&json!({"i": 1, "fl": 1.0, "s": "abc", "l": [1, 2], "d": {"k": 1}}));
    assert_eq!(cond("i == fl", &v), Tri::True);
    assert_eq!(cond("True == 1", &v), Tri::True);
    assert_eq!(
        cond("7 // 2 == 3 and -7 // 2 == -4 and 7 / 2 == 3.5", &v),
        Tri::True
    );
    assert_eq!(
        cond("'b' in s and 2 in l and 'k' in d and 'v' not in d", &v),
        Tri::True
    );
    assert_eq!(cond("s ~ i ~ True == 'abc1True'", &v), Tri::True);
    assert_eq!(cond("d.k == d['k']", &v), Tri::True);
    assert_eq!(cond("'abc' < 'abd' and [1, 2] < [1, 3]", &v), Tri::True);
    assert!(matches!(&cond("s < i", &v), Tri::Unknown(u) if u[0].error.is_some()));
    assert_eq!(cond("s[1:] == 'bc' and l[-1] == 2", &v), Tri::True);
    assert_eq!(
        cond("s.startswith('a') and d.keys() | list == ['k']", &v),
        Tri::True
    );
}

#[test]
fn ansible_filters() {
    let v = Vars::new(&json!({"xs": ["a", "b", "a"], "m": {"a": 1}, "ver": "v1.30.2"}));
    for e in [
        "'yes' | bool",
        "'On' | bool",
        "not ('junk' | bool)",
        "xs | unique | length == 2",
        "xs | first == 'a' and xs | last == 'a'",
        "xs | join(',') == 'a,b,a'",
        "(xs | union(['c'])) | length == 3",
        "xs | difference(['a']) == ['b']",
        "xs | intersect(['b', 'z']) == ['b']",
        "'1.5' | int == 1 and '2' | float == 2.0",
        "m | dict2items | items2dict == m",
        "m | combine({'b': 2}) == {'a': 1, 'b': 2}",
        "[[1, [2]], 3] | flatten == [1, 2, 3]",
        "[3, 1, 2] | min == 1 and [3, 1, 2] | max == 3",
        "'/etc/x.conf' | basename == 'x.conf' and '/etc/x.conf' | dirname == '/etc'",
        "'a b' | quote == \"'a b'\"",
        "m | type_debug == 'dict'",
        "'abc' | regex_replace('b', 'X') == 'aXc'",
        "'abc' | regex_search('b.') == 'bc'",
        "'a1b22' | regex_findall('[0-9]+') == ['1', '22']",
        "'a,b' | split(',') == ['a', 'b']",
        "m | to_json == '{\"a\": 1}'",
        "'{\"a\": 1}' | from_json == m",
        "true | ternary('y', 'n') == 'y'",
        "xs | select('match', 'a') | list | length == 2",
        "xs | map('upper') | list == ['A', 'B', 'A']",
        "[{'n': 1}, {}] | selectattr('n', 'defined') | list | length == 1",
        "ver is version('v1.30', '>=')",
        "ver is version_compare('v1.31', 'lt')",
        "'abc' is match('a') and not ('abc' is match('b')) and 'abc' is search('b')",
        "'abc' is regex('^a')",
        "[1] is subset([1, 2]) and [1, 2] is superset([1])",
        "'/x' is abs and 4 is divisibleby 2 and 3 is odd and 'ab' is lower",
        "xs is contains('a') and 'a' is in(xs)",
        "'' is falsy and 'x' is truthy and 'no' is falsy(convert_bool=True)",
    ] {
        assert_eq!(cond(e, &v), Tri::True, "{e}");
    }
}

#[test]
fn unsupported_and_lookups() {
    let v = Vars::default();
    assert_eq!(
        unknown_of(&cond("'x' | to_nice_yaml == ''", &v)),
        vec![("'x' | to_nice_yaml".into(), UnknownWhy::TooComplex)]
    );
    assert_eq!(
        unknown_of(&cond("lookup('env', 'HOME') == '/root'", &v)),
        vec![("lookup('env', 'HOME')".into(), UnknownWhy::Lookup)]
    );
    assert_eq!(
        unknown_of(&cond("x | community.general.foo", &v))[0].1,
        UnknownWhy::TooComplex
    );
    assert_eq!(
        unknown_of(&cond("this is ( not valid", &v))[0].1,
        UnknownWhy::TooComplex
    );
}

#[test]
fn render_keeps_native_type_for_single_expression() {
    let v = Vars::new(&json!({"l": [1, 2], "b": true, "n": null, "s": "x"}));
    assert_eq!(render("{{ l }}", &v), Rendered::Value(json!([1, 2])));
    assert_eq!(render("{{ b }}", &v), Rendered::Value(json!(true)));
    assert_eq!(render("a{{ b }}", &v), Rendered::Value(json!("aTrue")));
    assert_eq!(render("a{{ n }}", &v), Rendered::Value(json!("a")));
    assert_eq!(render("a{{ l }}", &v), Rendered::Value(json!("a[1, 2]")));
    assert_eq!(
        render("{% if b %}\n{{ l }}{% endif %}", &v),
        Rendered::Value(json!([1, 2]))
    );
    assert_eq!(render("{{ s }}\n", &v), Rendered::Value(json!("x\n")));
    // Several pieces joined as strings, the dropped newlines restored.
    assert_eq!(
        render("a: {{ s }}\nb: {{ l }} {{ b }}{{ n }}\n\n", &v),
        Rendered::Value(json!("a: x\nb: [1, 2] True\n\n"))
    );
    assert_eq!(render("plain", &v), Rendered::Value(json!("plain")));
    assert_eq!(
        render("{% for i in l %}{{ i }}{% endfor %}", &v),
        Rendered::Value(json!("12"))
    );
    assert_eq!(render("{{ 1.0 }}", &v), Rendered::Value(json!(1.0)));
}

#[test]
fn render_unknown_lists_dependencies() {
    let v = reg();
    assert_eq!(
        render("{{ reg.stdout }}-{{ ansible_os_family }}", &v),
        Rendered::Unknown(vec![
            Unknown::new("ansible_os_family", UnknownWhy::Fact),
            Unknown::new("reg", UnknownWhy::Registered),
        ])
    );
    assert_eq!(
        render("{% for i in [1] %}{{ reg }}{% endfor %}", &v),
        Rendered::Unknown(vec![Unknown::new("reg", UnknownWhy::Registered)])
    );
}

#[test]
fn eval_expression_returns_values() {
    let v = Vars::new(&json!({"a": [1, 2, 3]}));
    assert_eq!(
        eval_expression("a | length * 2", &v),
        Rendered::Value(json!(6))
    );
    assert_eq!(eval_expression("a[1:]", &v), Rendered::Value(json!([2, 3])));
}

#[test]
fn embedded_templates_in_conditions() {
    let v = Vars::new(&json!({"x": "a", "b": true}));
    assert_eq!(cond("'{{ x }}' == 'a'", &v), Tri::True);
    assert_eq!(cond("{{ b }}", &v), Tri::True);
}

#[test]
fn referenced_variables_are_top_level_names() {
    assert_eq!(
        referenced_variables(
            "a.b and c['d'] | default(e) and lookup('env', f) and g is version(h, '>=')"
        ),
        vec!["a", "c", "e", "f", "g", "h"]
    );
    assert_eq!(
        referenced_variables(
            "{% for i in items %}{{ i ~ sep }}{% set z = 1 %}{{ z }}{% endfor %}{{ loop_free }}"
        ),
        vec!["items", "loop_free", "sep"]
    );
}

#[test]
fn bounds_stop_runaway_templates_fast() {
    let v = Vars::default();
    let start = std::time::Instant::now();
    for e in [
        "'x' * 10**9",
        "('x' * 1000000) ~ ('x' * 1000000)",
        "range(10**9) | length > 0",
        "[1] * 10**9",
        "2 ** 100000",
    ] {
        let r = eval_expression(e, &v);
        assert!(
            matches!(&r, Rendered::Unknown(u) if u[0].why == UnknownWhy::TooComplex),
            "{e}: {r:?}"
        );
    }
    let exp = "{% set ns = namespace(a='xx') %}{% for i in range(64) %}{% set ns.a = ns.a ~ ns.a %}{% endfor %}{{ ns.a }}";
    let r = render(exp, &v);
    assert!(
        matches!(&r, Rendered::Unknown(u) if u[0].why == UnknownWhy::TooComplex),
        "{r:?}"
    );
    let exp = "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}";
    assert!(matches!(render(exp, &v), Rendered::Unknown(_)));
    let deep = format!("{}1{}", "(".repeat(400), ")".repeat(400));
    assert!(matches!(eval_expression(&deep, &v), Rendered::Unknown(_)));
    // Deep trees end at MAX_AST_DEPTH well within a small thread stack
    // (rayon workers and test threads have 2 MiB).
    let deep = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let vars = Vars::new(&json!({"t": true, "x": "a"}));
            let chain = vec!["t"; 5000].join(" and ");
            let filters = format!("x{}", " | upper".repeat(3000));
            let brackets = format!("{}x{}", "[".repeat(100), "]".repeat(100));
            let parens = format!("{}x{}", "(".repeat(3000), ")".repeat(3000));
            let ok = format!("{}x{}", "(".repeat(20), ")".repeat(20));
            [chain, filters, brackets, parens, ok]
                .map(|e| matches!(eval_expression(&e, &vars), Rendered::Unknown(_)))
        })
        .expect("spawn")
        .join()
        .expect("no stack overflow");
    assert_eq!(deep, [true, true, true, true, false]);
    let long = vec!["t"; 5000].join(" and ");
    assert!(matches!(
        eval_expression(&long, &Vars::new(&json!({"t": true}))),
        Rendered::Unknown(_) | Rendered::Value(_)
    ));
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}

/// A variable source whose values are themselves templates over each
/// other, like the variables module.
struct Chain;

impl VarSource for Chain {
    fn lookup(&self, name: &str) -> Lookup {
        let n: usize = name.trim_start_matches('v').parse().unwrap_or(0);
        if n == 0 {
            return Lookup::Value(json!("x"));
        }
        match render(&format!("{{{{ v{} ~ v{} }}}}", n - 1, n - 1), self) {
            Rendered::Value(v) => Lookup::Value(v),
            Rendered::Unknown(u) => Lookup::Unknown(u[0].why.clone()),
        }
    }
}

#[test]
fn nesting_is_bounded() {
    // Without memoization this would take 2^60 steps.
    let start = std::time::Instant::now();
    assert!(matches!(render("{{ v60 }}", &Chain), Rendered::Unknown(_)));
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}
