//! The concern catalog: what a node needs and which tasks fix or check it.
//!
//! Concern files (`rules/concerns/*.yml`, embedded; plus `--rules DIR`) are
//! read with serde into raw types, then validated into [`Concern`]s; every
//! problem found is reported with the file and line. Matching tasks against
//! patterns happens in `concern::analyze`, not here.

use crate::yaml;
use regex_automata::meta::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A built-in concern file, embedded at build time (see `build.rs`).
#[derive(Debug)]
pub struct Builtin {
    /// Its path in the project (`rules/concerns/ID.yml`).
    pub path: &'static str,
    /// Its text, as written.
    pub yaml: &'static str,
    /// The same content as JSON, read instead of the YAML (serde reads JSON
    /// in a fraction of the work of YAML, on every run); `None` if it did not
    /// convert (the YAML is read then, and reports the problem).
    pub json: Option<&'static str>,
}

mod builtin {
    use super::Builtin;
    include!(concat!(env!("OUT_DIR"), "/concerns.rs"));
}

/// The built-in concern files (every `rules/concerns/*.yml`, by name).
pub use builtin::BUILTIN;

// ----- raw (as written) ------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConcern {
    id: String,
    title: String,
    #[serde(default)]
    applies_to: Vec<String>,
    why: String,
    reference: String,
    #[serde(default)]
    preflight: Option<String>,
    #[serde(default)]
    parts: Vec<RawPart>,
    #[serde(default)]
    fact: Option<RawFact>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPart {
    name: String,
    #[serde(default)]
    fix: Vec<RawPattern>,
    #[serde(default)]
    check: Vec<RawPattern>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFact {
    /// Concerns whose fixing tasks carry the fact in an argument.
    from_concerns: Vec<String>,
    /// Modules whose argument holds the fact.
    module: OneOrMany,
    arg: String,
    /// The module's default when the argument is not given.
    default: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// A pattern as written: an effect kind, when it must hold, the modules it
/// may come from, and what its fields must be (the other keys).
#[derive(Debug, Deserialize)]
struct RawPattern {
    #[serde(default)]
    effect: Option<OneOrMany>,
    /// `now` (during the run) or `boot` (after a reboot).
    #[serde(default)]
    applies: Option<String>,
    #[serde(default)]
    module: Option<OneOrMany>,
    /// Counts only as far as this other part is fixed (e.g. `sysctl --system`
    /// applies what persistence wrote).
    #[serde(default)]
    requires: Option<String>,
    #[serde(flatten)]
    fields: BTreeMap<String, serde_yaml::Value>,
}

// ----- validated -------------------------------------------------------------

/// What an effect's field must be.
#[derive(Debug, Clone)]
pub enum FieldMatch {
    /// One of these values (compared as Ansible would: `1` = `"1"`,
    /// `true` = `yes`); `None` in the list means "not set".
    OneOf(Vec<Option<String>>),
    Regex(LazyRegex),
    Not(Vec<String>),
    /// A path glob (`*`, `**`, `?`, `{a,b}`).
    Glob(crate::glob::Glob),
}

/// A catalog regex: its syntax is checked when the catalog is read, and it
/// is compiled on first use: compiling all of them would be paid by every
/// run, though most patterns never see a task of their module.
///
/// Most texts a pattern sees cannot match it at all: every match of
/// `\b(ss|netstat)\b.*\b6443\b` contains `6443`. The literals a match must
/// contain are taken from the parsed pattern; a text containing none of them
/// is answered `false` without compiling (a Unicode-aware regex is slow to
/// compile). Patterns with the same text share one compiled regex.
#[derive(Debug, Clone)]
pub struct LazyRegex {
    src: String,
    /// Every match contains one of these (`None`: no such small set).
    needles: Option<Vec<String>>,
    /// The needles' searchers, built once (a `contains` call builds one
    /// per call, and every candidate text is searched).
    finders: Vec<memchr::memmem::Finder<'static>>,
    re: std::sync::OnceLock<std::sync::Arc<Regex>>,
    /// The pattern compiled without Unicode (see [`crate::text_regex::ascii_twin`]), for ASCII
    /// texts; `None` inside when the pattern has no such twin.
    ascii: std::sync::OnceLock<Option<std::sync::Arc<Regex>>>,
}

/// At most this many literals are tried before compiling; more (e.g. a long
/// case-insensitive word) cost more to test than they save.
const MAX_NEEDLES: usize = 16;

impl LazyRegex {
    /// Checks the syntax of `src` the way [`Regex::new`] parses it.
    fn new(src: &str) -> Result<Self, String> {
        let hir = regex_syntax::Parser::new()
            .parse(src)
            .map_err(|e| regex::Error::Syntax(e.to_string()).to_string())?;
        let needles = needles(&hir);
        let finders = needles
            .iter()
            .flatten()
            .map(|n| memchr::memmem::Finder::new(n.as_bytes()).into_owned())
            .collect();
        Ok(LazyRegex {
            src: src.to_string(),
            needles,
            finders,
            re: std::sync::OnceLock::new(),
            ascii: std::sync::OnceLock::new(),
        })
    }

    #[must_use]
    pub fn is_match(&self, text: &str) -> bool {
        if self.needles.is_some()
            && !self
                .finders
                .iter()
                .any(|f| f.find(text.as_bytes()).is_some())
        {
            return false;
        }
        if text.is_ascii()
            && let Some(re) = self.ascii.get_or_init(|| {
                crate::text_regex::ascii_twin(&self.src)
                    .then(|| shared_compile(&self.src, false))
                    .flatten()
            })
        {
            return re.is_match(text);
        }
        self.compiled().is_match(text)
    }

    fn compiled(&self) -> &Regex {
        self.re.get_or_init(|| shared_unicode(&self.src))
    }
}

/// Literals at least one of which every match of `hir` contains: the
/// substrings it requires (`net.ipv4.ip_forward` in `(?m)^\s*net\.ipv4...`),
/// else the ones it starts with (which also cover case-insensitive words).
/// `None` when there is no small set without an empty literal.
fn needles(hir: &regex_syntax::hir::Hir) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    if let Some(req) = required(hir) {
        return Some(req);
    }
    let mut ex = Extractor::new();
    ex.kind(ExtractKind::Prefix).limit_total(MAX_NEEDLES);
    let seq = ex.extract(hir);
    let lits = seq.literals()?;
    if lits.is_empty() || lits.len() > MAX_NEEDLES || lits.iter().any(|l| l.is_empty()) {
        return None;
    }
    // A literal cut inside a UTF-8 sequence cannot be searched as text.
    lits.iter()
        .map(|l| std::str::from_utf8(l.as_bytes()).ok().map(str::to_string))
        .collect()
}

/// Substrings one of which every match contains: a literal; any one part of
/// a concatenation (the one whose shortest literal is longest); every branch
/// of an alternation; a repetition done at least once.
fn required(hir: &regex_syntax::hir::Hir) -> Option<Vec<String>> {
    use regex_syntax::hir::HirKind;
    let found = match hir.kind() {
        HirKind::Literal(l) => vec![std::str::from_utf8(&l.0).ok()?.to_string()],
        HirKind::Capture(c) => required(&c.sub)?,
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub)?,
        HirKind::Concat(parts) => parts
            .iter()
            .filter_map(required)
            .max_by_key(|lits| lits.iter().map(String::len).min().unwrap_or(0))?,
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(required(b)?);
            }
            all.sort();
            all.dedup();
            all
        }
        _ => return None,
    };
    (!found.is_empty() && found.len() <= MAX_NEEDLES && found.iter().all(|l| !l.is_empty()))
        .then_some(found)
}

/// Compiles `src` once per process, however many patterns use it.
fn shared_compile(src: &str, unicode: bool) -> Option<std::sync::Arc<Regex>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Done = Mutex<Option<HashMap<(String, bool), Option<Arc<Regex>>>>>;
    static DONE: Done = Mutex::new(None);
    let lock = || {
        DONE.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let key = (src.to_string(), unicode);
    if let Some(r) = lock().as_ref().and_then(|m| m.get(&key)) {
        return r.clone();
    }
    // Compiled outside the lock: two threads may compile one text twice,
    // never wait for each other's patterns.
    //
    // Built without a prefilter: `LazyRegex::is_match` has screened the
    // text by its literals already, and building one (Teddy, Aho-Corasick)
    // was most of the compile time (measured on the built-in catalog's
    // patterns: about half). Otherwise `regex::Regex`'s engine, same syntax.
    //
    // Without Unicode (see [`crate::text_regex::ascii_twin`]) the pattern is compiled to match
    // bytes, as `(?-u)` would, and only ever searched in ASCII text; `None`
    // when it does not compile so (`\pL`).
    let re = Regex::builder()
        .configure(Regex::config().auto_prefilter(false))
        .syntax(
            regex_automata::util::syntax::Config::new()
                .unicode(unicode)
                .utf8(unicode),
        )
        .build(src)
        .ok()
        .map(Arc::new);
    lock()
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert(re)
        .clone()
}

/// The catalog regex `src`, compiled once per process. The syntax was
/// checked; what is left is the compiled size limit, which no catalog regex
/// comes near: such a regex matches nothing rather than stopping the run.
fn shared_unicode(src: &str) -> std::sync::Arc<Regex> {
    shared_compile(src, true).unwrap_or_else(|| {
        static NEVER: std::sync::OnceLock<std::sync::Arc<Regex>> = std::sync::OnceLock::new();
        std::sync::Arc::clone(NEVER.get_or_init(|| {
            std::sync::Arc::new(
                Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable!("valid regex")),
            )
        }))
    })
}

/// A validated pattern: matches one effect of a task iteration.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The effect kinds it matches (one of them).
    pub kinds: Vec<crate::effect::Kind>,
    /// `Some(true)`: the effect must hold now; `Some(false)`: at boot.
    pub now: Option<bool>,
    /// The modules the task must run (any when empty).
    pub modules: Vec<String>,
    pub fields: Vec<(String, FieldMatch)>,
    /// What a written file's text must match (`content:`).
    pub content: Option<LazyRegex>,
    pub requires: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Part {
    pub name: String,
    pub fix: Vec<Pattern>,
    pub check: Vec<Pattern>,
}

#[derive(Debug, Clone)]
pub struct Fact {
    pub from_concerns: Vec<String>,
    pub modules: Vec<String>,
    pub arg: String,
    pub default: String,
}

#[derive(Debug, Clone)]
pub struct Concern {
    pub id: String,
    pub title: String,
    pub applies_to: Vec<String>,
    pub why: String,
    pub reference: String,
    pub preflight: Option<String>,
    pub parts: Vec<Part>,
    pub fact: Option<Fact>,
    /// The file it came from.
    pub source: String,
}

/// A problem in a catalog file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CatalogError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl std::fmt::Display for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

const HOST_ROLES: &[&str] = &["control_plane", "worker", "etcd"];

/// Converts a path glob (`*`, `**`, `?`, `{a,b}`) into an anchored regex.
#[must_use]
pub fn glob_to_regex(glob: &str) -> Option<crate::glob::Glob> {
    crate::glob::to_regex(glob, false)
}

/// Finds the line of a key path (e.g. `["parts", "0", "fix", "1", "command"]`)
/// in a YAML text, for pointing errors at the right place.
fn locate(text: &str, path: &[String]) -> (u32, u32) {
    let parsed = yaml::parse(crate::source::FileId(0), text);
    let Some(mut node) = parsed.docs.first() else {
        return (1, 1);
    };
    let mut at = (node.span.line, node.span.col);
    for key in path {
        let next = if let Ok(i) = key.parse::<usize>() {
            node.as_seq().and_then(|s| s.get(i))
        } else {
            node.get_entry(key).map(|(k, v)| {
                at = (k.span.line, k.span.col);
                v
            })
        };
        match next {
            Some(n) => {
                node = n;
                if key.parse::<usize>().is_ok() {
                    at = (n.span.line, n.span.col);
                }
            }
            None => break,
        }
    }
    at
}

fn scalar_string(v: &serde_yaml::Value) -> Option<String> {
    match v {
        serde_yaml::Value::String(s) => Some(s.clone()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
    errors: Vec<CatalogError>,
}

impl Validator<'_> {
    fn err(&mut self, path: &[&str], message: String) {
        let path: Vec<String> = path.iter().map(|s| (*s).to_string()).collect();
        let (line, column) = locate(self.text, &path);
        self.errors.push(CatalogError {
            file: self.file.to_string(),
            line,
            column,
            message,
        });
    }

    fn regex(&mut self, path: &[&str], src: &str) -> Option<LazyRegex> {
        match LazyRegex::new(src) {
            Ok(r) => Some(r),
            Err(e) => {
                self.err(path, format!("invalid regular expression: {e}"));
                None
            }
        }
    }

    /// Tasks' arguments are read under their canonical names (aliases
    /// resolved, `ansible::module_args`), so a fact on an alias, or on an
    /// option none of its modules has, would never be found.
    fn arg_name(&mut self, path: &[&str], modules: &[String], key: &str) {
        let mut known = false;
        let mut specs = 0;
        for m in modules {
            let Some(spec) = crate::ansible::module_args::spec(m) else {
                continue;
            };
            specs += 1;
            match spec.option(key) {
                Some(opt) if opt.name() != key => {
                    known = true;
                    self.err(
                        path,
                        format!(
                            "`{key}` is an alias of `{}` for {m}: write `{}` (arguments are read by canonical name)",
                            opt.name(),
                            opt.name()
                        ),
                    );
                }
                Some(_) => known = true,
                None => known |= key == "_raw_params" && spec.free_form(),
            }
        }
        if specs > 0 && !known {
            self.err(path, format!("no option `{key}` in {}", modules.join(", ")));
        }
    }

    fn pattern(&mut self, base: &[&str], raw: RawPattern) -> Option<Pattern> {
        use crate::effect::Kind;
        let modules = raw.module.map(OneOrMany::into_vec).unwrap_or_default();
        for m in &modules {
            if !m.contains('.') {
                self.err(
                    &[base, &["module"]].concat(),
                    format!("module `{m}` must be fully qualified (e.g. ansible.builtin.{m})"),
                );
            }
        }
        let Some(effect) = raw.effect else {
            let old = ["args", "command", "writes"]
                .into_iter()
                .find(|k| raw.fields.contains_key(*k));
            self.err(
                base,
                match old {
                    Some(k) => format!(
                        "patterns name effects now, not module arguments (`{k}:`): write `effect: <kind>` with the effect's fields (see rules/README.md)"
                    ),
                    None => "a pattern needs `effect:` (see rules/README.md)".into(),
                },
            );
            return None;
        };
        let mut kinds = Vec::new();
        for k in effect.into_vec() {
            match Kind::from_name(&k) {
                Some(kind) => kinds.push(kind),
                None => self.err(
                    &[base, &["effect"]].concat(),
                    format!(
                        "unknown effect `{k}` (expected one of {})",
                        Kind::ALL.map(Kind::name).join(", ")
                    ),
                ),
            }
        }
        if kinds.is_empty() {
            return None;
        }
        let now = match raw.applies.as_deref() {
            None => None,
            Some("now") => Some(true),
            Some("boot") => Some(false),
            Some(other) => {
                self.err(
                    &[base, &["applies"]].concat(),
                    format!("`applies: {other}`: expected `now` or `boot`"),
                );
                return None;
            }
        };
        let mut fields = Vec::new();
        let mut content = None;
        for (k, v) in raw.fields {
            let path = [base, &[k.as_str()]].concat();
            if let Some(kind) = kinds
                .iter()
                .find(|kind| !kind.fields().contains(&k.as_str()))
            {
                self.err(
                    &path,
                    format!(
                        "effect `{}` has no field `{k}` (its fields: {})",
                        kind.name(),
                        kind.fields().join(", ")
                    ),
                );
                continue;
            }
            let regex_of = |v: &serde_yaml::Value| match v {
                serde_yaml::Value::Mapping(map) => map.get("regex").and_then(scalar_string),
                _ => None,
            };
            if k == "content" {
                match regex_of(&v) {
                    Some(r) => content = Some(self.regex(&path, &r)?),
                    None => self.err(&path, "`content` takes `{regex: ...}`".into()),
                }
                continue;
            }
            let m = match &v {
                serde_yaml::Value::Sequence(items) => FieldMatch::OneOf(
                    items
                        .iter()
                        .map(|i| if i.is_null() { None } else { scalar_string(i) })
                        .collect(),
                ),
                serde_yaml::Value::Mapping(map) => {
                    if let Some(r) = regex_of(&v) {
                        match self.regex(&path, &r) {
                            Some(r) => FieldMatch::Regex(r),
                            None => continue,
                        }
                    } else if let Some(g) = map.get("glob").and_then(scalar_string) {
                        match glob_to_regex(&g) {
                            Some(g) => FieldMatch::Glob(g),
                            None => {
                                self.err(&path, format!("invalid path glob `{g}`"));
                                continue;
                            }
                        }
                    } else if let Some(n) = map.get("not") {
                        let vals = match n {
                            serde_yaml::Value::Sequence(s) => {
                                s.iter().filter_map(scalar_string).collect()
                            }
                            other => scalar_string(other).into_iter().collect(),
                        };
                        FieldMatch::Not(vals)
                    } else {
                        self.err(
                            &path,
                            "a field pattern mapping needs `regex:`, `glob:` or `not:`".into(),
                        );
                        continue;
                    }
                }
                serde_yaml::Value::Null => FieldMatch::OneOf(vec![None]),
                other => FieldMatch::OneOf(vec![scalar_string(other)]),
            };
            fields.push((k, m));
        }
        Some(Pattern {
            kinds,
            now,
            modules,
            fields,
            content,
            requires: raw.requires,
        })
    }
}

/// Parses and validates one concern file.
///
/// # Errors
/// Every problem found, each with file and line.
pub fn parse_concern(file: &str, text: &str) -> Result<Concern, Vec<CatalogError>> {
    validate(file, text, serde_yaml::from_str(text))
}

/// A built-in concern file, read from its JSON copy when it has one. What
/// is found invalid is reported at its line in the YAML text, as for any
/// concern file.
///
/// # Errors
/// As [`parse_concern`].
pub fn parse_builtin(b: &Builtin) -> Result<Concern, Vec<CatalogError>> {
    match b.json.map(serde_json::from_str::<RawConcern>) {
        Some(Ok(raw)) => validate(b.path, b.yaml, Ok(raw)),
        // The YAML reader gives the position of what serde rejects.
        _ => parse_concern(b.path, b.yaml),
    }
}

/// Validates a concern file read into its raw form (`text` locates errors).
fn validate(
    file: &str,
    text: &str,
    raw: Result<RawConcern, serde_yaml::Error>,
) -> Result<Concern, Vec<CatalogError>> {
    let raw: RawConcern = match raw {
        Ok(r) => r,
        Err(e) => {
            let (line, column) = e.location().map_or((1, 1), |l| {
                (
                    u32::try_from(l.line()).unwrap_or(1),
                    u32::try_from(l.column()).unwrap_or(1),
                )
            });
            return Err(vec![CatalogError {
                file: file.to_string(),
                line,
                column,
                message: e.to_string(),
            }]);
        }
    };
    let mut v = Validator {
        file,
        text,
        errors: Vec::new(),
    };
    if raw.id.is_empty()
        || !raw
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        v.err(
            &["id"],
            format!("id `{}` must be lowercase letters, digits and `_`", raw.id),
        );
    }
    for (i, r) in raw.applies_to.iter().enumerate() {
        if !HOST_ROLES.contains(&r.as_str()) {
            let idx = i.to_string();
            v.err(
                &["applies_to", idx.as_str()],
                format!(
                    "unknown host role `{r}` (expected one of {})",
                    HOST_ROLES.join(", ")
                ),
            );
        }
    }
    if raw.parts.is_empty() && raw.fact.is_none() {
        v.err(
            &["id"],
            "a concern needs `parts:` (or `fact:` for a fact)".into(),
        );
    }
    let mut parts = Vec::new();
    for (pi, p) in raw.parts.into_iter().enumerate() {
        let pi_s = pi.to_string();
        let mut fix = Vec::new();
        for (i, pat) in p.fix.into_iter().enumerate() {
            let i_s = i.to_string();
            if let Some(p) = v.pattern(&["parts", &pi_s, "fix", &i_s], pat) {
                fix.push(p);
            }
        }
        let mut check = Vec::new();
        for (i, pat) in p.check.into_iter().enumerate() {
            let i_s = i.to_string();
            if let Some(p) = v.pattern(&["parts", &pi_s, "check", &i_s], pat) {
                check.push(p);
            }
        }
        parts.push(Part {
            name: p.name,
            fix,
            check,
        });
    }
    let fact = raw.fact.map(|f| {
        let modules = f.module.into_vec();
        v.arg_name(&["fact", "arg"], &modules, &f.arg);
        Fact {
            from_concerns: f.from_concerns,
            modules,
            arg: f.arg,
            default: f.default,
        }
    });
    if !v.errors.is_empty() {
        return Err(v.errors);
    }
    Ok(Concern {
        id: raw.id,
        title: raw.title,
        applies_to: raw.applies_to,
        why: raw.why,
        reference: raw.reference,
        preflight: raw.preflight,
        parts,
        fact,
        source: file.to_string(),
    })
}

/// The built-in catalog plus the `*.yml` files of `extra_dir` (which add
/// concerns or replace built-in ones with the same id), sorted by id.
///
/// # Errors
/// Every problem in every file, or duplicate ids within one source.
pub fn load(extra_dir: Option<&Path>) -> Result<Vec<Concern>, Vec<CatalogError>> {
    let mut errors = Vec::new();
    let mut by_id: BTreeMap<String, Concern> = BTreeMap::new();
    for b in BUILTIN {
        match parse_builtin(b) {
            Ok(c) => {
                if by_id.insert(c.id.clone(), c).is_some() {
                    errors.push(CatalogError {
                        file: b.path.to_string(),
                        line: 1,
                        column: 1,
                        message: "duplicate concern id in the built-in catalog".into(),
                    });
                }
            }
            Err(e) => errors.extend(e),
        }
    }
    if let Some(dir) = extra_dir {
        let mut files: Vec<_> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
                .collect(),
            Err(e) => {
                return Err(vec![CatalogError {
                    file: dir.display().to_string(),
                    line: 1,
                    column: 1,
                    message: format!("cannot read rules directory: {e}"),
                }]);
            }
        };
        files.sort();
        let mut seen = BTreeMap::new();
        for f in files {
            let name = f.display().to_string();
            let text = match std::fs::read_to_string(&f) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(CatalogError {
                        file: name,
                        line: 1,
                        column: 1,
                        message: format!("cannot read: {e}"),
                    });
                    continue;
                }
            };
            match parse_concern(&name, &text) {
                Ok(c) => {
                    if let Some(prev) = seen.insert(c.id.clone(), name.clone()) {
                        errors.push(CatalogError {
                            file: name.clone(),
                            line: 1,
                            column: 1,
                            message: format!("concern id `{}` is also defined in {prev}", c.id),
                        });
                    }
                    by_id.insert(c.id.clone(), c);
                }
                Err(e) => errors.extend(e),
            }
        }
    }
    if !errors.is_empty() {
        errors.sort();
        return Err(errors);
    }
    Ok(by_id.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::{BUILTIN, LazyRegex, parse_builtin, parse_concern};

    #[test]
    fn the_builtin_catalog_is_valid() {
        for b in BUILTIN {
            assert!(
                parse_builtin(b).is_ok(),
                "{}: {:?}",
                b.path,
                parse_builtin(b).err()
            );
        }
    }

    #[test]
    fn a_fact_on_an_alias_or_unknown_option_is_a_catalog_error() {
        let text = "id: x\ntitle: x\nwhy: x\nreference: x\nfact:\n  from_concerns: [a]\n  module: ansible.posix.sysctl\n  arg: key\n  default: x\n";
        let errors = parse_concern("x.yml", text).expect_err("an alias");
        assert!(
            errors[0].message.contains("`key` is an alias of `name`"),
            "{errors:?}"
        );
        let text = text.replace("arg: key", "arg: sysctl_fil");
        let errors = parse_concern("x.yml", &text).expect_err("unknown");
        assert!(
            errors[0]
                .message
                .contains("no option `sysctl_fil` in ansible.posix.sysctl"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_catalog_regex_is_checked_at_once_and_compiled_on_use() {
        let r = LazyRegex::new(r"\bswapoff\s+-a").expect("valid");
        assert!(r.re.get().is_none(), "not compiled yet");
        assert!(r.is_match("sudo swapoff  -a"));
        assert!(!r.is_match("swapon -a"));
        let e = LazyRegex::new("(unclosed").expect_err("syntax");
        assert!(e.contains("unclosed group"), "{e}");
    }

    #[test]
    fn a_text_without_a_required_literal_is_answered_without_compiling() {
        let r = LazyRegex::new(r"\b(ss|netstat|lsof)\b.*\b10250\b").expect("valid");
        assert_eq!(r.needles.as_deref(), Some(&["10250".to_string()][..]));
        assert!(!r.is_match("systemctl restart kubelet"));
        assert!(!r.is_match("ss -ltn | grep 6443"));
        assert!(r.re.get().is_none(), "no text could match: not compiled");
        assert!(!r.is_match("grep 10250 /etc/kubernetes"));
        assert!(
            r.ascii.get().is_some_and(Option::is_some),
            "a candidate text compiles it (its ASCII twin, for an ASCII text)"
        );
        assert!(r.is_match("ss -ltn | grep 10250"));
        let swap = LazyRegex::new(r"(?m)^\s*vm\.swappiness\s*=\s*0\s*$").expect("valid");
        assert_eq!(
            swap.needles.as_deref(),
            Some(&["vm.swappiness".to_string()][..])
        );
        let ci = LazyRegex::new(r"(?i)cpu").expect("valid");
        assert!(
            ci.needles.as_ref().is_some_and(|s| s.len() == 8),
            "{:?}",
            ci.needles
        );
    }

    #[test]
    fn the_prefilter_answers_as_the_regex_does() {
        let pats = [
            r"\bfuser\s+(-\S+\s+)*-k\s+6443/tcp",
            r"(?i)(memory|cpu)",
            r"(?i)(product_uuid|hostname|macaddress)",
            r"(?m)^\s*overlay\s*$",
            r"^(firewalld|ufw)(\.service)?$",
            r"sysctl\s+--system|sysctl\s+-p\b",
            r"(?i)straße",
            r"x*",
            r"é+t",
            r"(a|bc)+d|x(yz)?",
            r"\b(ss|netstat|lsof)\b.*\b10250\b",
            r"(?i)kernel\s+\S+",
            r"(?i)ſwap\w*",
            r"(?i)\x{212A}ubelet",
            r"\bswap\b.*[^a-z]off",
        ];
        let texts = [
            "",
            "fuser -k 6443/tcp",
            "FUSER -k 6443/tcp",
            "Memory check",
            "MEMORY",
            "HostName",
            "  overlay  \n",
            "ufw.service",
            "sysctl -p /etc/sysctl.conf",
            "STRASSE",
            "STRAẞE",
            "éét",
            "et",
            "bcbcd",
            "xy",
            "lsof -i :10250",
            "10250 ss",
            "KERNEL  4.19",
            "\u{212A}ernel\u{a0}x",
            "kernel\u{a0}x",
            "swapoff",
            "SWAPON",
            "\u{212A}ubelet",
            "Kubelet",
            "swap 0ff",
            "swap\u{e9}off",
        ];
        for p in pats {
            let lazy = LazyRegex::new(p).expect("valid");
            let re = regex::Regex::new(p).expect("valid");
            for t in texts {
                assert_eq!(lazy.is_match(t), re.is_match(t), "{p} on {t:?}");
            }
        }
    }

    #[test]
    fn a_regex_past_the_compiled_size_limit_matches_nothing() {
        let r = LazyRegex::new(r"(?:\w{500}){500}").expect("the syntax is valid");
        assert!(!r.is_match(&"a".repeat(300_000)));
    }
}
