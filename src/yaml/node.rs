//! Our own YAML tree: every node keeps its span, its tag (`!unsafe`,
//! `!vault`) and whether it was quoted; read as JSON where Ansible's
//! meaning needs a value. Builds nothing from text.

use crate::source::Span;
use std::fmt;

/// A tag that changes how Ansible treats a value.
///
/// One byte: every node carries one, and a tree holds hundreds of thousands
/// of nodes (with the text of other tags kept, a node took 80 bytes, not 56).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    None,
    /// `!unsafe`: never templated by Ansible.
    Unsafe,
    /// `!vault`: encrypted; its value is unknown without the password.
    Vault,
    /// Any other local tag: the value stays a string, as Ansible keeps it.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    pub tag: Tag,
    /// The scalar was quoted or a block scalar (so `yes` stays a string).
    pub quoted: bool,
}

impl Node {
    #[must_use]
    pub fn null(span: Span) -> Self {
        Node {
            value: Value::Null,
            span,
            tag: Tag::None,
            quoted: false,
        }
    }

    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The value of a string key in a mapping.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.get_entry(key).map(|(_, v)| v)
    }

    /// Key and value nodes of a string key in a mapping.
    #[must_use]
    pub fn get_entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, v)| (k, v))
    }

    /// A scalar as the text Ansible would see after templating to a string
    /// (`True`/`False` for booleans, as Python prints them). Containers give `None`.
    #[must_use]
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Null => Some(String::new()),
            Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(format_float(*f)),
            Value::Str(s) => Some(s.clone()),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// Number of nodes in this subtree (used for the alias-expansion budget).
    #[must_use]
    pub fn count(&self) -> usize {
        match &self.value {
            Value::Seq(items) => 1 + items.iter().map(Node::count).sum::<usize>(),
            Value::Map(pairs) => {
                1 + pairs
                    .iter()
                    .map(|(k, v)| k.count() + v.count())
                    .sum::<usize>()
            }
            _ => 1,
        }
    }

    /// Converts to JSON (keys as strings), for output and differential tests.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| J::String(format_float(*f)), J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(pairs) => J::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (json_key(k), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// A mapping key as Python's `json.dumps` writes a dict key.
fn json_key(k: &Node) -> String {
    match &k.value {
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Float(f) if f.is_nan() => "NaN".into(),
        Value::Float(f) if f.is_infinite() => {
            if *f > 0.0 { "Infinity" } else { "-Infinity" }.into()
        }
        _ => k.scalar_text().unwrap_or_else(|| k.to_json().to_string()),
    }
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let s = f.to_string();
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scalar_text() {
            Some(s) => f.write_str(&s),
            None => write!(f, "{}", self.to_json()),
        }
    }
}
