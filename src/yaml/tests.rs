use super::builder::nesting;
use super::scalar::{resolve_float, resolve_int};
use super::*;
use crate::diagnostic::code;

fn one(text: &str) -> Node {
    let f = parse(FileId(0), text);
    assert!(!f.failed, "{:?}", f.diagnostics);
    f.docs.into_iter().next().expect("a document")
}

#[test]
fn yaml11_scalars() {
    let n = one(
        "a: yes\nb: Off\nc: 0644\nd: 0x1F\ne: 1_000\nf: 1.5\ng: '1'\nh: ~\ni: 1:30\nj: yEs\nk: 1e3\nl: .5\n",
    );
    let get = |k: &str| n.get(k).unwrap().value.clone();
    assert_eq!(get("a"), Value::Bool(true));
    assert_eq!(get("b"), Value::Bool(false));
    assert_eq!(get("c"), Value::Int(420));
    assert_eq!(get("d"), Value::Int(31));
    assert_eq!(get("e"), Value::Int(1000));
    assert_eq!(get("f"), Value::Float(1.5));
    assert_eq!(get("g"), Value::Str("1".into()));
    assert_eq!(get("h"), Value::Null);
    assert_eq!(get("i"), Value::Int(90));
    assert_eq!(get("j"), Value::Str("yEs".into()));
    assert_eq!(get("k"), Value::Str("1e3".into()));
    assert_eq!(get("l"), Value::Float(0.5));
}

#[test]
fn a_scalar_not_starting_with_a_digit_or_dot_is_no_number() {
    let texts = [
        "_1", "+_1", "-_1", "e5", "+", "-", "inf", "NaN", "x1", ":30", "_1:30", "_.5", "+x",
        "-.inf", "+.inf", ".nan", ".Inf", "._1", "0x1F", "-0b11", "1:30", "1_000", "1.", "+1.5",
        "-0o7", "0644",
    ];
    for t in texts {
        let body = t.strip_prefix(['-', '+']).unwrap_or(t);
        let number = resolve_int(t).is_some() || resolve_float(t).is_some();
        if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            assert!(!number, "{t} resolves as a number");
            assert_eq!(resolve_plain(t), Value::Str(t.into()));
        }
    }
    assert_eq!(resolve_plain("-.inf"), Value::Float(f64::NEG_INFINITY));
    assert_eq!(resolve_plain("+1.5"), Value::Float(1.5));
    assert_eq!(resolve_plain("-0b11"), Value::Int(-3));
}

#[test]
fn tags_unsafe_and_vault() {
    let n = one(
        "a: !unsafe '{{ x }}'\nb: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\nc: !!str 12\n",
    );
    assert_eq!(n.get("a").unwrap().tag, Tag::Unsafe);
    assert_eq!(n.get("b").unwrap().tag, Tag::Vault);
    assert_eq!(n.get("c").unwrap().value, Value::Str("12".into()));
}

#[test]
fn merge_keys_and_duplicates() {
    let f = parse(
        FileId(0),
        "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: 1\n  z: 2\n",
    );
    let n = &f.docs[0];
    let m = n.get("m").unwrap();
    assert_eq!(m.get("x").unwrap().value, Value::Int(1));
    assert_eq!(m.get("y").unwrap().value, Value::Int(3));
    assert_eq!(m.get("z").unwrap().value, Value::Int(2));
    assert_eq!(f.diagnostics.len(), 1);
    assert_eq!(f.diagnostics[0].code, code::YAML_DUPLICATE_KEY);
    assert_eq!(f.diagnostics[0].span.line, 6);
}

#[test]
fn spans_point_at_lines() {
    let n = one("---\n- name: a\n  command: x\n- name: b\n");
    let items = n.as_seq().unwrap();
    assert_eq!(items[1].get("name").unwrap().span.line, 4);
    assert_eq!(items[0].get("command").unwrap().span.col, 12);
}

#[test]
fn syntax_error_is_a_diagnostic() {
    let f = parse(FileId(0), "a: [1, 2\nb: c\n");
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_SYNTAX);
}

#[test]
fn alias_bomb_is_bounded() {
    let mut s = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = (b'a' + i - 1) as char;
        let cur = (b'a' + i) as char;
        s.push_str(&format!("{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let f = parse(FileId(0), &s);
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
}

#[test]
fn deep_nesting_is_bounded() {
    let s = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let f = parse(FileId(0), &s);
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
}

#[test]
fn tab_error_points_at_the_tab() {
    let f = parse(
        FileId(0),
        "---\n- name: Turn swap off\n\tcommand: swapoff -a\n",
    );
    assert!(f.failed);
    let d = &f.diagnostics[0];
    assert_eq!(d.code, code::YAML_SYNTAX);
    assert_eq!((d.span.line, d.span.col), (3, 1));
    assert!(d.help.as_deref().is_some_and(|h| h.contains("spaces")));
}

#[test]
fn deep_block_nesting_is_bounded() {
    // 10,000 levels of block sequences on one line, and of block
    // mappings (one more space per level): caught at MAX_DEPTH, with no
    // recursion in the parser or the builder.
    let seq = format!("{}x\n", "- ".repeat(10_000));
    let f = parse(FileId(0), &seq);
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
    let mut map = String::new();
    for i in 0..10_000 {
        map.push_str(&" ".repeat(i));
        map.push_str("k:\n");
    }
    let f = parse(FileId(0), &map);
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
    assert_eq!(
        f.diagnostics[0].span.line,
        u32::try_from(MAX_DEPTH).unwrap() + 1
    );
}

#[test]
fn aliases_cannot_nest_deeper_than_the_bound() {
    // Each anchor wraps the previous alias in 250 more levels: 35 of
    // them stay within the alias budget but would nest 9,000 deep.
    let mut s = format!("a0: &a0 {}x{}\n", "[".repeat(250), "]".repeat(250));
    for i in 1..36 {
        s.push_str(&format!(
            "a{i}: &a{i} {}*a{}{}\n",
            "[".repeat(250),
            i - 1,
            "]".repeat(250)
        ));
    }
    let f = parse(FileId(0), &s);
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
    // a1 nests 1 + 250 + 250 levels; a2 would nest 751.
    assert_eq!(f.diagnostics[0].span.line, 3);
    assert!(f.diagnostics[0].message.contains("alias"));
    // Within the bound, an alias is expanded.
    let ok = parse(FileId(0), "a: &a [[1]]\nb: [[*a]]\n");
    assert!(!ok.failed);
    assert_eq!(nesting(&ok.docs[0]), 5);
}

#[test]
fn flow_nesting_stops_at_the_parser_limit() {
    // saphyr-parser counts flow levels in a u8.
    let ok = format!(
        "{}{}",
        "[".repeat(MAX_FLOW_DEPTH),
        "]".repeat(MAX_FLOW_DEPTH)
    );
    assert!(!parse(FileId(0), &ok).failed);
    let deep = format!(
        "{}{}",
        "[".repeat(MAX_FLOW_DEPTH + 1),
        "]".repeat(MAX_FLOW_DEPTH + 1)
    );
    let f = parse(FileId(0), &deep);
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
}

#[test]
fn multi_document() {
    let f = parse(FileId(0), "---\na: 1\n---\nb: 2\n");
    assert_eq!(f.docs.len(), 2);
}

#[test]
fn non_ascii_offsets() {
    let f = parse(FileId(0), "é: ü\nb: c\n");
    let b = f.docs[0].get_entry("b").unwrap().0;
    assert_eq!(b.span.start as usize, "é: ü\n".len());
    assert_eq!(b.span.line, 2);
}

#[test]
fn quoted_continuations_libyaml_accepts_are_read_with_spans_into_the_file() {
    // A continuation at the key's indentation, one indented with tabs, and
    // a token after a closing quote on a re-indented line.
    let text = "a: \"{{ x |\nd }}\"\nb: 'one\n\t\ttwo'\nc: [\"é\nz\", after]\nd: 1\n";
    let f = parse(FileId(0), text);
    assert!(!f.failed, "{:?}", f.diagnostics);
    let n = &f.docs[0];
    assert_eq!(n.get("a").unwrap().value, Value::Str("{{ x | d }}".into()));
    assert_eq!(n.get("b").unwrap().value, Value::Str("one two".into()));
    let after = &n.get("c").unwrap().as_seq().unwrap()[1];
    assert_eq!(after.value, Value::Str("after".into()));
    assert_eq!(after.span.start as usize, text.find("after").unwrap());
    assert_eq!((after.span.line, after.span.col), (6, 5));
    let d = n.get_entry("d").unwrap().0;
    assert_eq!(d.span.start as usize, text.find("d: 1").unwrap());
    assert_eq!((d.span.line, d.span.col), (7, 1));
}

#[test]
fn a_quoted_scalar_libyaml_rejects_stays_an_error() {
    // A document marker inside the scalar: libyaml stops there too.
    let f = parse(FileId(0), "a: \"x\n---\ny\"\n");
    assert!(f.failed);
    assert_eq!(f.diagnostics[0].code, code::YAML_SYNTAX);
}
