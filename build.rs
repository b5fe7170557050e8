//! Turns `rules/modules.yml` (generated from ansible-core by
//! `scripts/gen-modules.py`) into sorted static tables, so that resolving a
//! module name costs a binary search and no YAML parse at run time (parsing
//! the 220 KB file took ~12 ms of every run).
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
    concerns(&out_dir);
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
