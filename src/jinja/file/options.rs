//! The template action's Jinja options (`trim_blocks`, `lstrip_blocks`,
//! the delimiters, `newline_sequence`...): the task's arguments first, then
//! the `#jinja2:` first line of the template, as ansible-core 2.19's
//! `TemplateOverrides._extract_template_overrides` reads it.

use minijinja::syntax::SyntaxConfig;

/// The options one template is parsed and rendered with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileOptions {
    pub trim_blocks: bool,
    pub lstrip_blocks: bool,
    pub keep_trailing_newline: bool,
    /// `"\n"`, `"\r"` or `"\r\n"`.
    pub newline_sequence: String,
    pub block: (String, String),
    pub variable: (String, String),
    pub comment: (String, String),
}

impl Default for FileOptions {
    /// The template action's defaults.
    fn default() -> Self {
        FileOptions {
            trim_blocks: true,
            lstrip_blocks: false,
            keep_trailing_newline: false,
            newline_sequence: "\n".into(),
            block: ("{%".into(), "%}".into()),
            variable: ("{{".into(), "}}".into()),
            comment: ("{#".into(), "#}".into()),
        }
    }
}

const HEADER: &str = "#jinja2:";

impl FileOptions {
    /// The `template` module's arguments that are options.
    pub const TASK_ARGS: [&'static str; 9] = [
        "trim_blocks",
        "lstrip_blocks",
        "newline_sequence",
        "block_start_string",
        "block_end_string",
        "variable_start_string",
        "variable_end_string",
        "comment_start_string",
        "comment_end_string",
    ];

    /// Sets one option by its Ansible name from a task argument's text;
    /// `false` when the name is not an option or the value does not fit.
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        let b = crate::jinja::boolean_text;
        match key {
            "trim_blocks" => b(value).map(|v| self.trim_blocks = v).is_some(),
            "lstrip_blocks" => b(value).map(|v| self.lstrip_blocks = v).is_some(),
            "keep_trailing_newline" => b(value).map(|v| self.keep_trailing_newline = v).is_some(),
            "newline_sequence" => {
                let nl = match value {
                    "\\n" | "\n" => "\n",
                    "\\r" | "\r" => "\r",
                    "\\r\\n" | "\r\n" => "\r\n",
                    _ => return false,
                };
                self.newline_sequence = nl.into();
                true
            }
            "block_start_string" => set_str(&mut self.block.0, value),
            "block_end_string" => set_str(&mut self.block.1, value),
            "variable_start_string" => set_str(&mut self.variable.0, value),
            "variable_end_string" => set_str(&mut self.variable.1, value),
            "comment_start_string" => set_str(&mut self.comment.0, value),
            "comment_end_string" => set_str(&mut self.comment.1, value),
            _ => false,
        }
    }

    /// The options after the text's `#jinja2:` header, and the text
    /// without it; an error as Ansible words it for a bad header.
    pub(crate) fn with_header<'t>(&self, text: &'t str) -> Result<(&'t str, FileOptions), String> {
        let Some(rest) = text.strip_prefix(HEADER) else {
            return Ok((text, self.clone()));
        };
        let Some(eol) = rest.find('\n') else {
            return Err("Missing newline after '#jinja2:' override.".into());
        };
        let mut out = self.clone();
        for pair in rest[..eol].split(',') {
            if pair.trim().is_empty() {
                return Err("Empty '#jinja2:' override pair not allowed.".into());
            }
            let Some((key, val)) = pair.split_once(':') else {
                return Err(format!(
                    "Missing key-value separator `:` in '#jinja2:' override pair {pair:?}."
                ));
            };
            let key = key.trim();
            let Some(val) = literal(val.trim()) else {
                return Err(format!("malformed '#jinja2:' override value {val:?}"));
            };
            if !out.set(key, &val) {
                return Err(format!("Invalid '#jinja2:' override key {key:?}."));
            }
        }
        if out.block.0 == out.variable.0
            || out.variable.0 == out.comment.0
            || out.block.0 == out.comment.0
        {
            return Err("Block, variable and comment start strings must be different.".into());
        }
        Ok((&rest[eol + 1..], out))
    }

    /// minijinja's syntax for these options.
    pub(crate) fn syntax(&self) -> Option<SyntaxConfig> {
        SyntaxConfig::builder()
            .block_delimiters(self.block.0.clone(), self.block.1.clone())
            .variable_delimiters(self.variable.0.clone(), self.variable.1.clone())
            .comment_delimiters(self.comment.0.clone(), self.comment.1.clone())
            .trim_blocks(self.trim_blocks)
            .lstrip_blocks(self.lstrip_blocks)
            .keep_trailing_newline(self.keep_trailing_newline)
            .build()
            .ok()
    }

    pub(crate) fn newline_str(&self) -> &'static str {
        match self.newline_sequence.as_str() {
            "\r" => "\r",
            "\r\n" => "\r\n",
            _ => "\n",
        }
    }
}

fn set_str(slot: &mut String, value: &str) -> bool {
    if value.is_empty() {
        return false;
    }
    *slot = value.to_string();
    true
}

/// A Python literal as `ast.literal_eval` reads the header's values: a
/// quoted string (with `\n`-style escapes) or `True`/`False`.
fn literal(v: &str) -> Option<String> {
    match v {
        "True" => return Some("true".into()),
        "False" => return Some("false".into()),
        _ => {}
    }
    let q = v.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = v.strip_prefix(q)?.strip_suffix(q)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            other => out.push(other),
        }
    }
    Some(out)
}
