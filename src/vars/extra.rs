//! Extra vars (`-e`): parsed from `k=v` pairs, `@file` and inline
//! mappings into the highest-precedence layer.

use crate::source::Span;
use crate::yaml::{Node, Tag, Value};

/// Extra vars (`-e`), the highest precedence.
#[derive(Debug, Default, Clone)]
pub struct ExtraVars {
    pub vars: Vec<(String, Node)>,
}

/// Parses `-e` arguments: `k=v` pairs (values are strings, as Ansible's
/// `parse_kv`), `@file.yml`, or inline JSON/YAML mappings.
///
/// # Errors
/// A message when a file cannot be read or a value is not a mapping.
pub fn parse_extra_vars(
    items: &[String],
    sources: &crate::source::SourceMap,
) -> Result<ExtraVars, String> {
    let mut out = ExtraVars::default();
    for item in items {
        let (text, path) = if let Some(p) = item.strip_prefix('@') {
            let text = std::fs::read_to_string(p).map_err(|e| format!("-e @{p}: {e}"))?;
            (text, std::path::PathBuf::from(p))
        } else if item.trim_start().starts_with('{') {
            (item.clone(), std::path::PathBuf::from("<-e>"))
        } else {
            let id = sources.add(std::path::Path::new("<-e>"), item.as_str().into());
            for (k, v) in crate::ansible::modules::parse_kv(item, false) {
                let span = Span::file_start(id);
                out.vars.push((
                    k,
                    Node {
                        value: Value::Str(v),
                        span,
                        tag: Tag::None,
                        quoted: true,
                    },
                ));
            }
            continue;
        };
        let id = sources.add(&path, text.as_str().into());
        let parsed = crate::yaml::parse(id, &text);
        if let Some(d) = parsed.diagnostics.first() {
            return Err(format!("-e {item}: line {}: {}", d.span.line, d.message));
        }
        match parsed.docs.first().and_then(Node::as_map) {
            Some(pairs) => {
                for (k, v) in pairs {
                    out.vars
                        .push((k.scalar_text().unwrap_or_default(), v.clone()));
                }
            }
            None => return Err(format!("-e {item}: expected a mapping of variables")),
        }
    }
    Ok(out)
}
