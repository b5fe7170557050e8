//! How effect derivation sees one task iteration: its module, its
//! arguments after rendering, its command line, the role files it names.
//! The analysis implements it; derivation never resolves variables or
//! reads the file system itself.

use std::sync::Arc;

/// One task iteration, as effect derivation reads it.
pub trait TaskView {
    /// The module's fully qualified name.
    fn module(&self) -> &str;

    /// An argument's text after rendering (the text as written when it
    /// does not render), under its canonical name; `None` when the task
    /// does not give it.
    fn arg(&self, key: &str) -> Option<&str>;

    /// An argument's value after rendering, as JSON (lists stay lists).
    fn arg_value(&self, key: &str) -> Option<serde_json::Value>;

    /// An argument's text as written, before rendering (a scalar; `None`
    /// for a mapping or a list): for what is rendered only on request.
    fn arg_raw(&self, key: &str) -> Option<String> {
        self.arg(key).map(str::to_string)
    }

    /// The command line of `command`/`shell`/`raw` tasks (free form,
    /// `cmd`, or `argv` joined).
    fn command(&self) -> Option<&str>;

    /// The text of a file a role ships (`sub` is `files` or `templates`),
    /// by the `src` the task gives.
    fn role_file(&self, sub: &str, src: &str) -> Option<Arc<str>>;

    /// A template text rendered with the iteration's variables; `None`
    /// when it does not render statically.
    fn render(&self, text: &str) -> Option<String>;

    /// A template file rendered with the iteration's variables, the task's
    /// template options and the templates it includes from the task's
    /// search path, as known lines, conditional lines and unknown lines;
    /// `None` when there is no way to render it. By default, the text
    /// [`TaskView::render`] gives, known whole.
    fn render_file(&self, text: &str) -> Option<crate::jinja::FileText> {
        let whole = self.render(text)?;
        Some(crate::jinja::FileText::known(&whole))
    }

    /// Why a text does not render statically, in words (which variable,
    /// and why); `None` when the view cannot say.
    fn unknown_reason(&self, text: &str) -> Option<String> {
        let _ = text;
        None
    }

    /// The handlers the task notifies.
    fn notify(&self) -> &[String];

    /// A boolean argument read as Ansible's `boolean()` does; when it is
    /// absent, the module's own default (its argument spec), else
    /// `default`; a value that is not a boolean (an unrendered template)
    /// reads as the default.
    fn flag(&self, key: &str, default: bool) -> bool {
        let default = match crate::ansible::module_args::default(self.module(), key) {
            Some(crate::ansible::module_args::DefaultValue::Bool(b)) => b,
            _ => default,
        };
        self.arg(key)
            .map_or(default, |v| boolean(v).unwrap_or(default))
    }

    /// An argument's text, or the module's default for it (its argument
    /// spec) when the task does not give it.
    fn arg_or_default(&self, key: &str) -> Option<std::borrow::Cow<'_, str>> {
        use crate::ansible::module_args::{DefaultValue, default};
        if let Some(v) = self.arg(key) {
            return Some(v.into());
        }
        match default(self.module(), key)? {
            DefaultValue::Str(s) => Some(s.into()),
            DefaultValue::Bool(b) => Some(if b { "true" } else { "false" }.into()),
            DefaultValue::Int(i) => Some(i.to_string().into()),
            DefaultValue::Float(f) => Some(f.to_string().into()),
            DefaultValue::List(_) | DefaultValue::Json(_) => None,
        }
    }

    /// An argument that names one thing or a list of things (`name: [a,
    /// b]`, `name: a,b`), as its items.
    fn list(&self, key: &str) -> Vec<String> {
        match self.arg_value(key) {
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            // A value that did not render is one expression, whatever commas
            // its filters' arguments hold: split, it would read as names.
            Some(serde_json::Value::String(s)) if s.contains("{{") || s.contains("{%") => {
                vec![s.trim().to_string()]
            }
            Some(serde_json::Value::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            Some(serde_json::Value::Null) | None => Vec::new(),
            Some(other) => vec![other.to_string()],
        }
    }
}

/// Ansible's `boolean()` on a rendered value: the strings it accepts
/// (`module_args::boolean_text`), and the floats `1.0`/`0.0` it accepts as
/// numbers, which a rendered value shows as text.
#[must_use]
pub fn boolean(v: &str) -> Option<bool> {
    crate::ansible::module_args::boolean_text(v).or_else(|| match v.trim() {
        "1.0" => Some(true),
        "0.0" => Some(false),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::boolean;

    #[test]
    fn booleans_as_ansible_reads_them() {
        for t in ["yes", "True", "on", "1", "y", "t"] {
            assert_eq!(boolean(t), Some(true), "{t}");
        }
        for f in ["no", "False", "off", "0", "n", "f"] {
            assert_eq!(boolean(f), Some(false), "{f}");
        }
        assert_eq!(boolean("{{ x }}"), None);
    }
}
