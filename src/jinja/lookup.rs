//! Ansible's pure lookup plugins (`plugins/lookup/*.py` of ansible-core
//! 2.19): the ones whose result depends on their terms alone, as
//! `with_<name>` and `lookup()`/`query()` run them.
//!
//! It must not read files, the environment or run anything: the lookups
//! that do (`fileglob`, `first_found`, `file`, `template`) are answered by
//! the caller's [`super::VarSource::run_lookup`], and the others (`pipe`,
//! `env`, `password`, `url`, `random_choice`...) are never run. Every list
//! it builds is bounded by [`MAX_LOOKUP_ITEMS`].

use serde_json::Value;

/// Most items one lookup may produce: a longer list is not built (the
/// loop is taken as unknown, with this bound as its reason).
pub const MAX_LOOKUP_ITEMS: usize = 10_000;

/// What running a lookup gave.
#[derive(Debug, Clone, PartialEq)]
pub enum LookupOutcome {
    /// Its result list (as `query()` or `with_<name>` get it).
    Items(Vec<Value>),
    /// Ansible fails the task with this message.
    Failed(String),
    /// Not known statically: why.
    Unknown(String),
}

impl LookupOutcome {
    fn fail(msg: impl Into<String>) -> Self {
        LookupOutcome::Failed(msg.into())
    }

    fn bounded(items: Vec<Value>) -> Self {
        if items.len() > MAX_LOOKUP_ITEMS {
            too_many()
        } else {
            LookupOutcome::Items(items)
        }
    }
}

fn too_many() -> LookupOutcome {
    LookupOutcome::Unknown(format!(
        "more than {MAX_LOOKUP_ITEMS} items (bound of preflint)"
    ))
}

/// The lookups that would run something, read the controller's state or
/// give a different answer each run: never run statically.
pub const RUNTIME_LOOKUPS: &[&str] = &[
    "pipe",
    "lines",
    "env",
    "password",
    "url",
    "random_choice",
    "k8s",
    "kubernetes.core.k8s",
    "config",
    "csvfile",
    "ini",
    "unvault",
    "varnames",
    "vars",
    "inventory_hostnames",
    "dig",
    "community.general.dig",
    "hashi_vault",
    "aws_ssm",
];

/// The plugin's short name (`ansible.builtin.dict` is `dict`).
#[must_use]
pub fn short_name(name: &str) -> &str {
    name.strip_prefix("ansible.builtin.")
        .or_else(|| name.strip_prefix("ansible.legacy."))
        .unwrap_or(name)
}

/// Runs the pure lookup `name` over `terms` (already templated).
/// `None`: `name` is not a pure lookup of ansible-core.
#[must_use]
pub fn pure_lookup(
    name: &str,
    terms: &[Value],
    kwargs: &[(String, Value)],
) -> Option<LookupOutcome> {
    let out = match short_name(name) {
        "items" => LookupOutcome::bounded(flatten_one(terms)),
        "list" => LookupOutcome::bounded(terms.to_vec()),
        "flattened" => flattened(terms),
        "dict" => dict(terms),
        "indexed_items" => LookupOutcome::bounded(
            flatten_one(terms)
                .into_iter()
                .enumerate()
                .map(|(i, x)| Value::Array(vec![Value::from(i), x]))
                .collect(),
        ),
        "together" => together(terms),
        "nested" => nested(terms),
        "cartesian" | "community.general.cartesian" => cartesian(terms),
        "community.general.flattened" => flattened(terms),
        "subelements" => subelements(terms),
        "sequence" => sequence(terms, kwargs),
        _ => return None,
    };
    Some(out)
}

/// `LookupBase._flatten`: one level of lists spliced in.
fn flatten_one(terms: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for t in terms {
        match t {
            Value::Array(items) => out.extend(items.iter().cloned()),
            other => out.push(other.clone()),
        }
    }
    out
}

/// `community.general.flattened`: lists flattened recursively (a list of
/// one list taken as its element), stopping at the first `'None'` or
/// `'null'` string.
fn flattened(terms: &[Value]) -> LookupOutcome {
    fn one_of_one(mut v: &Value) -> &Value {
        while let Value::Array(items) = v {
            match items.as_slice() {
                [only] => v = only,
                _ => break,
            }
        }
        v
    }
    /// `false`: stop (a `'None'` string); `Err`: past the bound.
    fn walk(terms: &[Value], out: &mut Vec<Value>, depth: usize) -> Result<bool, ()> {
        if out.len() > MAX_LOOKUP_ITEMS || depth > 64 {
            return Err(());
        }
        for t in terms {
            let t = one_of_one(t);
            if matches!(t, Value::String(s) if s == "None" || s == "null") {
                return Ok(false);
            }
            match t {
                Value::Array(items) => {
                    // A nested stop ends that list only, as in the plugin.
                    let _ = walk(items, out, depth + 1)?;
                }
                other => out.push(other.clone()),
            }
        }
        Ok(true)
    }
    let mut out = Vec::new();
    if walk(terms, &mut out, 0).is_err() {
        return too_many();
    }
    LookupOutcome::bounded(out)
}

fn dict(terms: &[Value]) -> LookupOutcome {
    let mut out = Vec::new();
    for t in terms {
        let Value::Object(map) = t else {
            return LookupOutcome::fail(format!(
                "the 'dict' lookup plugin expects a dictionary, got '{}'",
                super::py::py_str(&super::py::from_json(t))
            ));
        };
        for (k, v) in map {
            let mut pair = serde_json::Map::new();
            pair.insert("key".into(), Value::String(k.clone()));
            pair.insert("value".into(), v.clone());
            out.push(Value::Object(pair));
        }
    }
    LookupOutcome::bounded(out)
}

/// Python's `iter()` of one term as a list, for `zip_longest` and
/// `product` (a string iterates its characters, a dict its keys).
fn as_list(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::Array(items) => Some(items.clone()),
        Value::String(s) => Some(s.chars().map(|c| Value::String(c.to_string())).collect()),
        Value::Object(m) => Some(m.keys().map(|k| Value::String(k.clone())).collect()),
        _ => None,
    }
}

fn together(terms: &[Value]) -> LookupOutcome {
    if terms.is_empty() {
        return LookupOutcome::fail("with_together requires at least one element in each list");
    }
    let Some(lists) = terms.iter().map(as_list).collect::<Option<Vec<_>>>() else {
        return LookupOutcome::fail("zip_longest argument is not iterable");
    };
    let len = lists.iter().map(Vec::len).max().unwrap_or(0);
    if len > MAX_LOOKUP_ITEMS {
        return too_many();
    }
    LookupOutcome::Items(
        (0..len)
            .map(|i| {
                let row: Vec<Value> = lists
                    .iter()
                    .map(|l| l.get(i).cloned().unwrap_or(Value::Null))
                    .collect();
                Value::Array(flatten_one(&row))
            })
            .collect(),
    )
}

fn nested(terms: &[Value]) -> LookupOutcome {
    if terms.is_empty() {
        return LookupOutcome::fail("with_nested requires at least one element in the nested list");
    }
    let Some(lists) = terms.iter().map(as_list).collect::<Option<Vec<_>>>() else {
        return LookupOutcome::fail("'int' object is not iterable");
    };
    // The product's size is known before it is built.
    let mut size: usize = 1;
    for l in &lists {
        size = size.saturating_mul(l.len());
    }
    if size > MAX_LOOKUP_ITEMS {
        return too_many();
    }
    // `_combine(a, b)` flattens each pair one level, then the whole row once more.
    let mut rows: Vec<Value> = lists[0].clone();
    for l in &lists[1..] {
        let mut next = Vec::with_capacity(rows.len() * l.len());
        for x in &rows {
            for y in l {
                next.push(Value::Array(flatten_one(&[x.clone(), y.clone()])));
            }
        }
        rows = next;
    }
    // Each row flattened once more (`_flatten(x)`: a string row iterates
    // its characters, a number cannot be iterated).
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        match r {
            Value::Array(items) => out.push(Value::Array(flatten_one(&items))),
            Value::String(s) => out.push(Value::Array(
                s.chars().map(|c| Value::String(c.to_string())).collect(),
            )),
            other => {
                return LookupOutcome::fail(format!(
                    "'{}' object is not iterable",
                    super::py::type_name(&super::py::from_json(&other))
                ));
            }
        }
    }
    LookupOutcome::Items(out)
}

/// `community.general.cartesian`: the product of the terms (a string term
/// is a list of itself), each row flattened one level.
fn cartesian(terms: &[Value]) -> LookupOutcome {
    if terms.is_empty() {
        return LookupOutcome::fail("with_cartesian requires at least one element in each list");
    }
    let lists: Vec<Vec<Value>> = terms
        .iter()
        .map(|t| match t {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        })
        .collect();
    let size = lists.iter().fold(1usize, |n, l| n.saturating_mul(l.len()));
    if size > MAX_LOOKUP_ITEMS {
        return too_many();
    }
    let mut rows: Vec<Vec<Value>> = vec![Vec::new()];
    for l in &lists {
        rows = rows
            .iter()
            .flat_map(|r| {
                l.iter().map(move |x| {
                    let mut r = r.clone();
                    r.push(x.clone());
                    r
                })
            })
            .collect();
    }
    LookupOutcome::Items(rows.iter().map(|r| Value::Array(flatten_one(r))).collect())
}

fn subelements(terms: &[Value]) -> LookupOutcome {
    let err = |msg: &str| {
        LookupOutcome::fail(format!(
            "subelements lookup expects a list of two or three items, {msg}"
        ))
    };
    if !(2..=3).contains(&terms.len()) {
        return err("");
    }
    let Value::String(path) = &terms[1] else {
        return err("first a dict or a list, second a string pointing to the subkey");
    };
    let elements: Vec<Value> = match &terms[0] {
        Value::Array(items) => items.clone(),
        Value::Object(m) => {
            if m.get("skipped").is_some_and(|s| *s != Value::Bool(false)) {
                return LookupOutcome::Items(Vec::new());
            }
            m.values().cloned().collect()
        }
        _ => return err("first a dict or a list, second a string pointing to the subkey"),
    };
    let skip_missing = match terms.get(2) {
        None => false,
        Some(Value::Object(flags)) => flags.get("skip_missing").is_some_and(loose_bool),
        Some(_) => {
            return err("the optional third item must be a dict with flags ['skip_missing']");
        }
    };
    subelements_of(elements, path, skip_missing)
}

/// `boolean(v, strict=False)`.
fn loose_bool(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() == Some(1.0),
        Value::String(s) => matches!(
            s.to_lowercase().as_str(),
            "y" | "yes" | "on" | "1" | "true" | "t" | "1.0"
        ),
        _ => false,
    }
}

fn subelements_of(elements: Vec<Value>, path: &str, skip_missing: bool) -> LookupOutcome {
    let keys: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    for item0 in elements {
        let Value::Object(mut item0) = item0 else {
            return LookupOutcome::fail(format!(
                "subelements lookup expects a dictionary, got '{}'",
                super::py::py_str(&super::py::from_json(&item0))
            ));
        };
        if item0
            .get("skipped")
            .is_some_and(|s| *s != Value::Bool(false))
        {
            continue;
        }
        // The plugin pops the last key from the element it yields: the
        // item's first part no longer holds the list.
        let sublist = match pop_sublist(&mut item0, &keys, skip_missing) {
            Ok(l) => l,
            Err(msg) => return LookupOutcome::fail(msg),
        };
        if out.len() + sublist.len() > MAX_LOOKUP_ITEMS {
            return too_many();
        }
        let first = Value::Object(item0);
        for item1 in sublist {
            out.push(Value::Array(vec![first.clone(), item1]));
        }
    }
    LookupOutcome::Items(out)
}

/// Walks `keys` into `item`, removing and returning the list at the last.
fn pop_sublist(
    item: &mut serde_json::Map<String, Value>,
    keys: &[&str],
    skip_missing: bool,
) -> Result<Vec<Value>, String> {
    let shown = |m: &serde_json::Map<String, Value>| {
        super::py::py_str(&super::py::from_json(&Value::Object(m.clone())))
    };
    let Some((key, rest)) = keys.split_first() else {
        return Ok(Vec::new());
    };
    if !item.contains_key(*key) {
        return if skip_missing {
            Ok(Vec::new())
        } else {
            Err(format!(
                "could not find '{key}' key in iterated item '{}'",
                shown(item)
            ))
        };
    }
    if rest.is_empty() {
        return match item.get(*key) {
            Some(Value::Array(_)) => match item.shift_remove(*key) {
                Some(Value::Array(l)) => Ok(l),
                _ => Ok(Vec::new()),
            },
            Some(other) => Err(format!(
                "the key {key} should point to a list, got '{}'",
                super::py::py_str(&super::py::from_json(other))
            )),
            None => Ok(Vec::new()),
        };
    }
    match item.get_mut(*key) {
        Some(Value::Object(inner)) => pop_sublist(inner, rest, skip_missing),
        Some(_) if skip_missing => Ok(Vec::new()),
        Some(other) => Err(format!(
            "the key {key} should point to a dictionary, got '{}'",
            super::py::py_str(&super::py::from_json(other))
        )),
        None => Ok(Vec::new()),
    }
}

/// The options of one `sequence` term.
#[derive(Default)]
struct Seq {
    start: Option<i128>,
    end: Option<i128>,
    stride: Option<i128>,
    count: Option<i128>,
    format: Option<String>,
}

fn sequence(terms: &[Value], kwargs: &[(String, Value)]) -> LookupOutcome {
    let owned_empty = [Value::String(String::new())];
    let terms = if terms.is_empty() && !kwargs.is_empty() {
        &owned_empty[..]
    } else {
        terms
    };
    let mut out = Vec::new();
    for term in terms {
        // `set_options(direct=kwargs)` for each term, then the term's own.
        let mut s = Seq::default();
        for (k, v) in kwargs {
            if let Err(m) = s.set(k, &super::py::py_str(&super::py::from_json(v))) {
                return LookupOutcome::fail(m);
            }
        }
        let text = match term {
            Value::String(t) => t.clone(),
            other => super::py::py_str(&super::py::from_json(other)),
        };
        if let Err(m) = s.parse(&text) {
            return LookupOutcome::fail(m);
        }
        match s.generate(MAX_LOOKUP_ITEMS - out.len().min(MAX_LOOKUP_ITEMS)) {
            Ok(Some(items)) => out.extend(items),
            Ok(None) => return too_many(),
            Err(m) => return LookupOutcome::fail(m),
        }
    }
    LookupOutcome::Items(out)
}

/// Python's `int()` of an option's text (decimal only, as the plugin's
/// `integer` option type takes it).
fn int_option(key: &str, v: &str) -> Result<i128, String> {
    let t = v.trim().replace('_', "");
    t.parse::<i128>().map_err(|_| {
        format!(
            "Config '{key}' for 'sequence' lookup plugin from 'Direct' has an invalid value: Invalid value provided for 'integer': '{v}'"
        )
    })
}

impl Seq {
    fn set(&mut self, key: &str, v: &str) -> Result<(), String> {
        match key {
            "start" => self.start = Some(int_option(key, v)?),
            "end" => self.end = Some(int_option(key, v)?),
            "stride" => self.stride = Some(int_option(key, v)?),
            "count" => self.count = Some(int_option(key, v)?),
            "format" => self.format = Some(v.to_string()),
            other => {
                return Err(format!(
                    "unrecognized arguments to with_sequence: ['{other}']"
                ));
            }
        }
        Ok(())
    }

    /// The shortcut form `[start-]end[/stride][:format]`, else `k=v` pairs.
    fn parse(&mut self, term: &str) -> Result<(), String> {
        if let Some((start, end, stride, format)) = shortcut(term) {
            for (k, v) in [("start", start), ("end", end), ("stride", stride)] {
                if let Some(v) = v {
                    self.set(k, v)?;
                }
            }
            if let Some(f) = format {
                self.format = Some(f.to_string());
            }
            return Ok(());
        }
        for part in term.split_whitespace() {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!(
                    "unknown error parsing with_sequence arguments: '{term}'"
                ));
            };
            self.set(k, v)?;
        }
        Ok(())
    }

    /// The formatted numbers; `Ok(None)` past `room` items.
    fn generate(&self, room: usize) -> Result<Option<Vec<Value>>, String> {
        let start = self.start.unwrap_or(1);
        let stride = self.stride.unwrap_or(1);
        let format = self.format.as_deref().unwrap_or("%d");
        let end = match (self.count, self.end) {
            (None, None) => return Err("must specify count or end in with_sequence".into()),
            (Some(_), Some(_)) => {
                return Err("can't specify both count and end in with_sequence".into());
            }
            (Some(0), None) => return Ok(Some(Vec::new())),
            (Some(c), None) => start + c * stride - 1,
            (None, Some(e)) => e,
        };
        if stride > 0 && end < start {
            return Err("to count backwards make stride negative".into());
        }
        if stride < 0 && end > start {
            return Err("to count forward don't make stride negative".into());
        }
        if stride == 0 {
            return Ok(Some(Vec::new()));
        }
        if format.matches('%').count() != 1 {
            return Err(format!("bad formatting string: {format}"));
        }
        let stop = end + stride.signum();
        let count = (stop - start) / stride + i128::from((stop - start) % stride != 0);
        if usize::try_from(count).map_or(true, |c| c > room) {
            return Ok(None);
        }
        let mut out = Vec::new();
        let mut i = start;
        while (stride > 0 && i < stop) || (stride < 0 && i > stop) {
            match percent_format(format, i) {
                Some(s) => out.push(Value::String(s)),
                None => return Err(format!("problem formatting {i} with '{format}'")),
            }
            i += stride;
        }
        Ok(Some(out))
    }
}

/// The parts of a shortcut term: start, end, stride, format.
type Shortcut<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

/// The plugin's `SHORTCUT` regex: `^((0?x?[0-9a-f]+)-)?(0?x?[0-9a-f]+)(/(0?x?[0-9a-f]+))?(:(.+))?$`
/// (case-insensitive): start, end, stride, format.
fn shortcut(term: &str) -> Option<Shortcut<'_>> {
    let (body, format) = match term.find(':') {
        Some(i) if i + 1 < term.len() => (&term[..i], Some(&term[i + 1..])),
        Some(_) => return None,
        None => (term, None),
    };
    let (range, stride) = match body.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (body, None),
    };
    let (start, end) = match range.split_once('-') {
        Some((s, e)) => (Some(s), e),
        None => (None, range),
    };
    let num = |s: &str| {
        let t = s.strip_prefix('0').unwrap_or(s);
        let t = t
            .strip_prefix('x')
            .or_else(|| t.strip_prefix('X'))
            .unwrap_or(t);
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let ok = num(end) && start.is_none_or(num) && stride.is_none_or(num);
    ok.then_some((start, Some(end), stride, format))
}

/// Python's `format % i` for one integer conversion (`%d`, `%5d`, `%02x`,
/// `%X`, `%o`, `%s`, `%%` aside): `None` for what we do not model.
fn percent_format(format: &str, i: i128) -> Option<String> {
    let at = format.find('%')?;
    let (head, rest) = (&format[..at], &format[at + 1..]);
    let spec_end = rest.find(|c: char| c.is_ascii_alphabetic())?;
    let (flags, conv) = (&rest[..spec_end], rest[spec_end..].chars().next()?);
    let tail = &rest[spec_end + conv.len_utf8()..];
    let (zero, left) = (flags.starts_with('0'), flags.starts_with('-'));
    let width: usize = flags.trim_start_matches(['0', '-']).parse().unwrap_or(0);
    if !flags
        .trim_start_matches(['0', '-'])
        .chars()
        .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let body = match conv {
        'd' | 'i' | 's' | 'u' => i.to_string(),
        'x' => format!("{i:x}"),
        'X' => format!("{i:X}"),
        'o' => format!("{i:o}"),
        _ => return None,
    };
    let padded = if body.len() >= width {
        body
    } else if left {
        format!("{body:<width$}")
    } else if zero && conv != 's' {
        let (sign, digits) = body
            .strip_prefix('-')
            .map_or(("", body.as_str()), |d| ("-", d));
        format!("{sign}{digits:0>w$}", w = width - sign.len())
    } else {
        format!("{body:>width$}")
    };
    Some(format!("{head}{padded}{tail}"))
}

/// `lookup()`'s result when `wantlist` is off: an empty list, the one
/// element, the strings joined with commas, or the list as is.
#[must_use]
pub fn unwrap_lookup(items: Vec<Value>) -> Value {
    match items.len() {
        1 => items.into_iter().next().unwrap_or(Value::Null),
        n if n >= 2 && items.iter().all(Value::is_string) => Value::String(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => Value::Array(items),
    }
}

#[cfg(test)]
mod tests {
    //! Expected items checked with ansible-core 2.19.14 from the oracle
    //! virtualenv: `lookup_loader.get(name, loader=DataLoader(),
    //! templar=Templar(loader=DataLoader())).run(terms, variables={}, **kw)`.
    use super::*;
    use serde_json::json;

    fn run(name: &str, terms: &Value) -> LookupOutcome {
        pure_lookup(name, terms.as_array().unwrap_or(&Vec::new()), &[])
            .unwrap_or(LookupOutcome::Unknown("not pure".into()))
    }

    fn items(name: &str, terms: &Value) -> Value {
        match run(name, terms) {
            LookupOutcome::Items(i) => Value::Array(i),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn items_list_and_indexed_items() {
        let terms = json!([["a", ["b"]], "c"]);
        assert_eq!(items("items", &terms), json!(["a", ["b"], "c"]));
        assert_eq!(items("list", &terms), json!([["a", ["b"]], "c"]));
        assert_eq!(
            items("indexed_items", &terms),
            json!([[0, "a"], [1, ["b"]], [2, "c"]])
        );
        assert_eq!(
            items("flattened", &json!([["a", ["b", [null]]], "c"])),
            json!(["a", "b", null, "c"])
        );
        assert_eq!(
            items("flattened", &json!([["a"], "None", "c"])),
            json!(["a"])
        );
        assert_eq!(
            items("cartesian", &json!([[1, 2], "x"])),
            json!([[1, "x"], [2, "x"]])
        );
    }

    #[test]
    fn dict_keeps_order_and_fails_on_non_dicts() {
        assert_eq!(
            items("dict", &json!([{"z": 1, "a": {"b": 2}}])),
            json!([{"key": "z", "value": 1}, {"key": "a", "value": {"b": 2}}])
        );
        assert!(matches!(
            run("dict", &json!(["x"])),
            LookupOutcome::Failed(_)
        ));
    }

    #[test]
    fn together_and_nested() {
        assert_eq!(
            items("together", &json!([[1, 2], [3]])),
            json!([[1, 3], [2, null]])
        );
        assert_eq!(
            items("nested", &json!([[1, 2], ["a", "b"], [[5, 6]]])),
            json!([
                [1, "a", 5, 6],
                [1, "b", 5, 6],
                [2, "a", 5, 6],
                [2, "b", 5, 6]
            ])
        );
        assert!(matches!(
            run("nested", &json!([])),
            LookupOutcome::Failed(_)
        ));
    }

    #[test]
    fn nested_products_are_bounded() {
        let big: Vec<i64> = (0..1000).collect();
        let out = run("nested", &json!([big, big, big]));
        assert!(matches!(out, LookupOutcome::Unknown(_)), "{out:?}");
    }

    #[test]
    fn subelements_pops_the_list_and_skips_missing() {
        let users = json!([{"n": 1, "l": [1, 2]}, {"n": 2}]);
        assert_eq!(
            items("subelements", &json!([users, "l", {"skip_missing": true}])),
            json!([[{"n": 1}, 1], [{"n": 1}, 2]])
        );
        assert_eq!(
            run("subelements", &json!([users, "l"])),
            LookupOutcome::Failed("could not find 'l' key in iterated item '{'n': 2}'".into())
        );
    }

    #[test]
    fn sequence_forms() {
        for (term, want) in [
            ("5", json!(["1", "2", "3", "4", "5"])),
            ("5-8", json!(["5", "6", "7", "8"])),
            ("2-10/2", json!(["2", "4", "6", "8", "10"])),
            (
                "4:host%02d",
                json!(["host01", "host02", "host03", "host04"]),
            ),
            (
                "start=5 end=11 stride=2 format=0x%02x",
                json!(["0x05", "0x07", "0x09", "0x0b"]),
            ),
            ("count=5", json!(["1", "2", "3", "4", "5"])),
            ("start=0 count=5 stride=2", json!(["0", "2", "4", "6", "8"])),
            ("start=10 end=1 stride=-3", json!(["10", "7", "4", "1"])),
            ("count=0", json!([])),
            ("start=3 end=3", json!(["3"])),
            (
                "010",
                json!(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]),
            ),
        ] {
            assert_eq!(items("sequence", &json!([term])), want, "{term}");
        }
        for bad in ["end=0", "start=5 end=1", "0x10", "start=0x0f00 count=4"] {
            assert!(
                matches!(run("sequence", &json!([bad])), LookupOutcome::Failed(_)),
                "{bad}"
            );
        }
        let kw = [
            ("start".to_string(), json!(1)),
            ("end".to_string(), json!(3)),
        ];
        assert_eq!(
            pure_lookup("sequence", &[], &kw),
            Some(LookupOutcome::Items(vec![
                json!("1"),
                json!("2"),
                json!("3")
            ]))
        );
    }

    #[test]
    fn huge_sequences_are_bounded() {
        assert!(matches!(
            run("sequence", &json!(["end=1000000"])),
            LookupOutcome::Unknown(_)
        ));
    }

    #[test]
    fn lookup_unwraps_like_ansible() {
        assert_eq!(unwrap_lookup(vec![json!("a"), json!("b")]), json!("a,b"));
        assert_eq!(unwrap_lookup(vec![json!({"k": 1})]), json!({"k": 1}));
        assert_eq!(unwrap_lookup(vec![]), json!([]));
        assert_eq!(unwrap_lookup(vec![json!(1), json!("b")]), json!([1, "b"]));
    }
}
