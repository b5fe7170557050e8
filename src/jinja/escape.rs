//! ansible-core's `escape_backslashes`: before Jinja reads a template that
//! came from YAML (a task argument, a variable's value, a `loop:`), every
//! backslash in a string constant inside `{{ }}` is doubled, so that the
//! constant keeps the backslashes YAML left in it instead of reading them
//! as escape sequences (`regex_replace('\\.', '')` in a single-quoted YAML
//! string matches a backslash, `split('\n')` splits on a backslash and an
//! `n`). Constants in `{% %}` are read as Jinja reads them, and so are
//! conditionals and template files, which Ansible renders without it.
//!
//! This file only rewrites the text so that the template parser, which
//! unescapes string constants as Jinja does, gets each constant's text back
//! verbatim; it must not change anything else (outside `{{ }}`, inside
//! `{% %}`, `{# #}` and `{% raw %}`).

use std::borrow::Cow;

/// The template with each string constant inside `{{ }}` written so that
/// it reads as its raw text (see the module docs).
#[must_use]
pub fn escape_backslashes(template: &str) -> Cow<'_, str> {
    if !template.contains('\\') || !template.contains("{{") {
        return Cow::Borrowed(template);
    }
    let b = template.as_bytes();
    let mut out = String::with_capacity(template.len() + 8);
    let mut i = 0;
    let mut copied = 0;
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'{', b'{') => {
                out.push_str(&template[copied..i]);
                i = variable(template, i + 2, &mut out);
                copied = i;
            }
            (b'{', b'%') => {
                i = match raw_block_end(template, i) {
                    Some(end) => end,
                    None => skip_block(template, i + 2, b"%}"),
                };
            }
            (b'{', b'#') => {
                i = template[i + 2..]
                    .find("#}")
                    .map_or(b.len(), |k| i + 2 + k + 2);
            }
            _ => i += 1,
        }
    }
    if copied == 0 {
        return Cow::Borrowed(template);
    }
    out.push_str(&template[copied..]);
    Cow::Owned(out)
}

/// Copies `{{` and the expression from `from` (just past `{{`) to its
/// `}}` (which closes it only outside brackets, as Jinja's lexer reads it)
/// into `out`, each string constant re-encoded; returns where it stopped.
fn variable(t: &str, from: usize, out: &mut String) -> usize {
    let b = t.as_bytes();
    out.push_str("{{");
    let mut depth = 0usize;
    let mut i = from;
    let mut copied = from;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                let (end, closed) = string_end(b, i);
                out.push_str(&t[copied..i]);
                let content = &t[i + 1..if closed { end - 1 } else { end }];
                out.push(char::from(q));
                for c in content.chars() {
                    if c == '\\' {
                        out.push_str("\\\\");
                    } else if c == char::from(q) {
                        out.push('\\');
                        out.push(c);
                    } else {
                        out.push(c);
                    }
                }
                if closed {
                    out.push(char::from(q));
                }
                i = end;
                copied = i;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'}' if depth == 0 && b.get(i + 1) == Some(&b'}') => {
                out.push_str(&t[copied..i + 2]);
                return i + 2;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.push_str(&t[copied..]);
    b.len()
}

/// Just past the string constant opening at `start` (its closing quote)
/// and `true`, or the end of the text and `false` when it is not closed.
fn string_end(b: &[u8], start: usize) -> (usize, bool) {
    let q = b[start];
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == q => return (i + 1, true),
            _ => i += 1,
        }
    }
    (b.len(), false)
}

/// Just past the `close` of a block whose body starts at `from`, string
/// constants skipped.
fn skip_block(t: &str, from: usize, close: &[u8]) -> usize {
    let b = t.as_bytes();
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => i = string_end(b, i).0,
            _ if b[i..].starts_with(close) => return i + close.len(),
            _ => i += 1,
        }
    }
    b.len()
}

/// When a `{% raw %}` block opens at `at`: just past its `{% endraw %}`
/// (its content is text, never read as Jinja).
fn raw_block_end(t: &str, at: usize) -> Option<usize> {
    let tag_end = skip_block(t, at + 2, b"%}");
    let inner = t.get(at + 2..tag_end.checked_sub(2)?)?;
    if inner.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace()) != "raw" {
        return None;
    }
    let mut i = tag_end;
    while let Some(k) = t[i..].find("{%") {
        let start = i + k;
        let end = skip_block(t, start + 2, b"%}");
        let tag = t.get(start + 2..end.saturating_sub(2)).unwrap_or_default();
        if tag.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace()) == "endraw" {
            return Some(end);
        }
        i = start + 2;
    }
    Some(t.len())
}

#[cfg(test)]
mod tests {
    use super::escape_backslashes as esc;

    #[test]
    fn constants_in_expressions_keep_their_backslashes() {
        assert_eq!(
            esc(r"{{ x | regex_replace('^net\\.', '') }}"),
            r"{{ x | regex_replace('^net\\\\.', '') }}"
        );
        assert_eq!(esc(r#"{{ "a\nb" }}"#), r#"{{ "a\\nb" }}"#);
        // An escaped quote stays inside the constant, its backslash kept.
        assert_eq!(esc(r"{{ 'it\'s' }}"), r"{{ 'it\\\'s' }}");
        // A dict literal's `}}` does not end the expression.
        assert_eq!(
            esc(r"{{ {'a': {'b': '\d'}} }} tail \d"),
            r"{{ {'a': {'b': '\\d'}} }} tail \d"
        );
    }

    #[test]
    fn text_blocks_comments_and_raw_are_left_alone() {
        for t in [
            r"no expression \d",
            r"{% set x = '\d' %}{{ x }}",
            r"{# '\d' #}{{ y }}",
            r"{% raw %}{{ '\d' }}{% endraw %}",
            r"{{ x }} \\",
        ] {
            assert_eq!(esc(t), t);
        }
        assert_eq!(
            esc(r"{% raw %}{{ '\d' }}{% endraw %}{{ '\d' }}"),
            r"{% raw %}{{ '\d' }}{% endraw %}{{ '\\d' }}"
        );
    }
}
