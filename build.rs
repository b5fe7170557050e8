//! Turns `rules/modules.yml` (generated from ansible-core by
//! `scripts/gen-modules.py`) into sorted static tables, so that resolving a
//! module name costs a binary search and no YAML parse at run time (parsing
//! the 220 KB file took ~12 ms of every run).
//!
//! Likewise turns `rules/module-args.yml` (each module's argument spec, from
//! the same script) into static tables for `ansible::module_args`.
//!
//! Also embeds the built-in concern files (`rules/concerns/*.yml`, sorted by
//! name), each with a JSON copy of its content: serde reads JSON about ten
//! times faster than YAML, and every run reads the whole built-in catalog
//! (see `concern::catalog::BUILTIN`). The YAML text stays beside it, for the
//! error positions and for `--rules` files, which are read as YAML.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Deserialize)]
struct RawModules {
    builtin: Vec<String>,
    routing: BTreeMap<String, String>,
}

fn main() {
    let src = "rules/modules.yml";
    println!("cargo::rerun-if-changed={src}");
    let text = std::fs::read_to_string(src).expect("read rules/modules.yml");
    let raw: RawModules = serde_yaml::from_str(&text).expect("rules/modules.yml: bad shape");
    let mut builtin = raw.builtin;
    builtin.sort();
    builtin.dedup();
    let mut out = String::new();
    out.push_str(
        "/// Modules shipped in `ansible.builtin`, sorted.\npub static BUILTIN: &[&str] = &[\n",
    );
    for b in &builtin {
        let _ = writeln!(out, "    {b:?},");
    }
    out.push_str("];\n/// Short names ansible-core routes elsewhere, sorted by name.\npub static ROUTING: &[(&str, &str)] = &[\n");
    for (k, v) in &raw.routing {
        let _ = writeln!(out, "    ({k:?}, {v:?}),");
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    let dest = std::path::Path::new(&out_dir).join("modules.rs");
    std::fs::write(dest, out).expect("write modules.rs");
    module_args(&out_dir);
    concerns(&out_dir);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArgs {
    modules: BTreeMap<String, RawModuleSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModuleSpec {
    #[serde(default)]
    free_form: bool,
    options: BTreeMap<String, RawOption>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOption {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    aliases: Vec<String>,
    elements: Option<String>,
    default: Option<serde_yaml::Value>,
    #[serde(default)]
    choices: Vec<serde_yaml::Value>,
    #[serde(default)]
    required: bool,
}

/// `module_args.rs`: the specs as arrays of plain numbers over one text
/// blob (`TEXT`): a table of pointers would cost one relocation per string,
/// applied at every start of the binary whether or not a spec is read.
///
/// - `MODULES`, sorted by name: its options are `OPTIONS[start..start+len]`
///   (sorted by name), its aliases `ALIASES[..]` (sorted, each with the index
///   of its option within the module), and `alias_bits` has bit
///   `name_hash(alias) % 64` set for each alias, so that a key that is no
///   alias is mostly known as such without a search;
/// - `MODULE_SLOTS`: a hash table of the modules by name, since every task
///   looks its module up;
/// - `OPTIONS`: each option's aliases (in the documented order) and choices
///   are ranges of `STRS`, as is a default list of strings.
fn module_args(out_dir: &str) {
    let src = "rules/module-args.yml";
    println!("cargo::rerun-if-changed={src}");
    let text = std::fs::read_to_string(src).expect("read rules/module-args.yml");
    let raw: RawArgs = serde_yaml::from_str(&text).expect("rules/module-args.yml: bad shape");
    let mut t = Interner::default();
    let mut strs: Vec<String> = Vec::new();
    let mut range_of = |t: &mut Interner, items: &[String]| {
        let start = strs.len();
        strs.extend(items.iter().map(|i| t.text(i)));
        format!("R({start}, {})", items.len())
    };
    let (mut modules, mut options, mut aliases) = (String::new(), String::new(), String::new());
    let (mut n_options, mut n_aliases) = (0usize, 0usize);
    for (name, spec) in &raw.modules {
        let mut by_alias: Vec<(&str, usize)> = Vec::new();
        for (i, (opt_name, opt)) in spec.options.iter().enumerate() {
            by_alias.extend(opt.aliases.iter().map(|a| (a.as_str(), i)));
            let elements = match &opt.elements {
                Some(e) => format!("Some({})", kind(e, name)),
                None => "None".into(),
            };
            let default = match &opt.default {
                Some(d) => default_value(d, &mut t, &mut range_of),
                None => "D::None".into(),
            };
            let choices: Vec<String> = opt.choices.iter().map(scalar_text).collect();
            let (opt_text, kind) = (t.text(opt_name), kind(&opt.kind, name));
            let (alias_range, choice_range) =
                (range_of(&mut t, &opt.aliases), range_of(&mut t, &choices));
            let _ = writeln!(
                options,
                "    OptionRow {{ name: {opt_text}, kind: {kind}, elements: {elements}, required: {}, \
                 aliases: {alias_range}, choices: {choice_range}, default: {default} }},",
                opt.required,
            );
        }
        by_alias.sort_unstable();
        let mut alias_bits = 0u64;
        for (alias, i) in &by_alias {
            let _ = writeln!(aliases, "    ({}, {i}),", t.text(alias));
            alias_bits |= 1 << (name_hash(alias) & 63);
        }
        let _ = writeln!(
            modules,
            "    ModuleRow {{ name: {}, free_form: {}, options: R({n_options}, {}), aliases: R({n_aliases}, {}), alias_bits: {alias_bits:#x} }},",
            t.text(name),
            spec.free_form,
            spec.options.len(),
            by_alias.len()
        );
        n_options += spec.options.len();
        n_aliases += by_alias.len();
    }
    // Open addressing with linear probing, at most half full: slot `i` holds
    // the index of a module plus one, 0 when empty.
    let slots = (raw.modules.len() * 2).next_power_of_two();
    let mut table = vec![0usize; slots];
    for (i, name) in raw.modules.keys().enumerate() {
        let mut at = usize::try_from(name_hash(name) & (slots as u64 - 1)).unwrap_or(0);
        while table[at] != 0 {
            at = (at + 1) & (slots - 1);
        }
        table[at] = i + 1;
    }
    let mut out = String::new();
    let _ = writeln!(out, "static TEXT: &str = {:?};", t.blob);
    let _ = writeln!(out, "static MODULE_SLOTS: [u16; {slots}] = {table:?};");
    let _ = writeln!(
        out,
        "static MODULES: [ModuleRow; {}] = [\n{modules}];",
        raw.modules.len()
    );
    let _ = writeln!(
        out,
        "static OPTIONS: [OptionRow; {n_options}] = [\n{options}];"
    );
    let _ = writeln!(
        out,
        "static ALIASES: [(T, u16); {n_aliases}] = [\n{aliases}];"
    );
    let _ = writeln!(
        out,
        "static STRS: [T; {}] = [{}];",
        strs.len(),
        strs.join(", ")
    );
    std::fs::write(std::path::Path::new(out_dir).join("module_args.rs"), out)
        .expect("write module_args.rs");
}

/// FNV-1a, as `ansible::module_args::name_hash` computes it at run time.
fn name_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One text blob, each distinct string once; `text` gives a string's
/// `T(offset, length)` expression.
#[derive(Default)]
struct Interner {
    blob: String,
    seen: BTreeMap<String, String>,
}

impl Interner {
    fn text(&mut self, s: &str) -> String {
        if let Some(t) = self.seen.get(s) {
            return t.clone();
        }
        assert!(
            u16::try_from(s.len()).is_ok(),
            "a string of the module specs is too long"
        );
        let t = format!("T({}, {})", self.blob.len(), s.len());
        self.blob.push_str(s);
        self.seen.insert(s.to_string(), t.clone());
        t
    }
}

/// The `Kind` variant of a documented type.
fn kind(name: &str, module: &str) -> &'static str {
    match name {
        "str" => "Kind::Str",
        "list" => "Kind::List",
        "dict" => "Kind::Dict",
        "bool" => "Kind::Bool",
        "int" => "Kind::Int",
        "float" => "Kind::Float",
        "path" => "Kind::Path",
        "raw" => "Kind::Raw",
        "jsonarg" | "json" => "Kind::Json",
        "bytes" => "Kind::Bytes",
        "bits" => "Kind::Bits",
        "sid" => "Kind::Sid",
        other => panic!("rules/module-args.yml: {module}: unknown type {other:?}"),
    }
}

/// A default as a `D` expression: scalars and lists of strings as
/// themselves, anything else as its JSON text.
fn default_value(
    v: &serde_yaml::Value,
    t: &mut Interner,
    range_of: &mut impl FnMut(&mut Interner, &[String]) -> String,
) -> String {
    use serde_yaml::Value as Y;
    match v {
        Y::Bool(b) => format!("D::Bool({b})"),
        Y::Number(n) if n.is_i64() => format!("D::Int({})", n.as_i64().unwrap_or(0)),
        Y::Number(n) if n.is_f64() => format!("D::Float({:?})", n.as_f64().unwrap_or(0.0)),
        Y::String(s) => format!("D::Str({})", t.text(s)),
        Y::Sequence(items) if items.iter().all(|i| matches!(i, Y::String(_))) => {
            let texts: Vec<String> = items.iter().map(scalar_text).collect();
            format!("D::List({})", range_of(t, &texts))
        }
        other => {
            let json = serde_json::to_string(other).expect("a default converts to JSON");
            format!("D::Json({})", t.text(&json))
        }
    }
}

/// A choice as text: strings as written, booleans as `true`/`false`.
fn scalar_text(v: &serde_yaml::Value) -> String {
    match v {
        serde_yaml::Value::String(s) => s.clone(),
        serde_yaml::Value::Null => String::new(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim_end()
            .to_string(),
    }
}

/// `concerns.rs`: `BUILTIN`, every built-in concern file as (path, YAML
/// text, the same content as JSON).
fn concerns(out_dir: &str) {
    let dir = "rules/concerns";
    println!("cargo::rerun-if-changed={dir}");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("read rules/concerns")
        .map(|e| {
            e.expect("read rules/concerns")
                .file_name()
                .into_string()
                .expect("UTF-8 file name")
        })
        .filter(|n| n.ends_with(".yml"))
        .collect();
    files.sort();
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let mut out = String::from("pub static BUILTIN: &[Builtin] = &[\n");
    for f in &files {
        let path = format!("{dir}/{f}");
        let text = std::fs::read_to_string(&path).expect("read a concern file");
        // A file that does not convert is left to the YAML reader, which
        // reports it with its line (the built-in catalog's test fails).
        let json = serde_yaml::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| serde_json::to_string(&v).ok());
        let _ = writeln!(
            out,
            "    Builtin {{ path: {path:?}, yaml: include_str!({:?}), json: {json:?} }},",
            format!("{root}/{path}")
        );
    }
    out.push_str("];\n");
    std::fs::write(std::path::Path::new(out_dir).join("concerns.rs"), out)
        .expect("write concerns.rs");
}
