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

/// `module_args.rs`: `MODULES`, sorted by name, each with its options sorted
/// by name and its aliases sorted, so lookups are binary searches.
fn module_args(out_dir: &str) {
    let src = "rules/module-args.yml";
    println!("cargo::rerun-if-changed={src}");
    let text = std::fs::read_to_string(src).expect("read rules/module-args.yml");
    let raw: RawArgs = serde_yaml::from_str(&text).expect("rules/module-args.yml: bad shape");
    let mut out = String::from("pub static MODULES: &[ModuleSpec] = &[\n");
    for (name, spec) in &raw.modules {
        let _ = writeln!(
            out,
            "ModuleSpec {{ name: {name:?}, free_form: {}, options: &[",
            spec.free_form
        );
        let mut aliases: Vec<(&str, usize)> = Vec::new();
        for (i, (opt_name, opt)) in spec.options.iter().enumerate() {
            aliases.extend(opt.aliases.iter().map(|a| (a.as_str(), i)));
            let elements = match &opt.elements {
                Some(e) => format!("Some({})", kind(e, name)),
                None => "None".into(),
            };
            let default = match &opt.default {
                Some(d) => format!("Some({})", default_value(d)),
                None => "None".into(),
            };
            let choices: Vec<String> = opt.choices.iter().map(scalar_text).collect();
            let _ = writeln!(
                out,
                "    OptionSpec {{ name: {opt_name:?}, aliases: &{:?}, kind: {}, elements: {elements}, \
                 default: {default}, choices: &{choices:?}, required: {} }},",
                opt.aliases,
                kind(&opt.kind, name),
                opt.required
            );
        }
        aliases.sort_unstable();
        out.push_str("], aliases: &[");
        for (alias, i) in &aliases {
            let _ = write!(out, "({alias:?}, {i}), ");
        }
        out.push_str("] },\n");
    }
    out.push_str("];\n");
    std::fs::write(std::path::Path::new(out_dir).join("module_args.rs"), out)
        .expect("write module_args.rs");
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

/// A default as a `DefaultValue` expression: scalars and lists of strings as
/// themselves, anything else as its JSON text.
fn default_value(v: &serde_yaml::Value) -> String {
    use serde_yaml::Value as Y;
    match v {
        Y::Bool(b) => format!("DefaultValue::Bool({b})"),
        Y::Number(n) if n.is_i64() => format!("DefaultValue::Int({})", n.as_i64().unwrap_or(0)),
        Y::Number(n) if n.is_f64() => {
            format!("DefaultValue::Float({:?})", n.as_f64().unwrap_or(0.0))
        }
        Y::String(s) => format!("DefaultValue::Str({s:?})"),
        Y::Sequence(items) if items.iter().all(|i| matches!(i, Y::String(_))) => {
            let texts: Vec<String> = items.iter().map(scalar_text).collect();
            format!("DefaultValue::List(&{texts:?})")
        }
        other => {
            let json = serde_json::to_string(other).expect("a default converts to JSON");
            format!("DefaultValue::Json({json:?})")
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
