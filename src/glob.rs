//! Path globs (`*`, `**`, `?`, `{a,b}`) as regexes, for exclusions and the
//! catalog's `writes.path` patterns.
//!
//! A glob is compiled as a byte regex without Unicode classes: `[^/]` over
//! characters is a Unicode class, whose compilation allocates and clears a
//! large map for every glob, though paths need none of it.
//! Over the UTF-8 bytes of a path the same strings match: `/` and `\n` are
//! ASCII, so no byte of a longer character is taken for them, and `?` takes
//! one character (a first byte and its continuation bytes).

use regex::bytes::{Regex, RegexBuilder};

/// A compiled glob.
#[derive(Debug, Clone)]
pub struct Glob(Regex);

impl Glob {
    #[must_use]
    pub fn is_match(&self, path: &str) -> bool {
        self.0.is_match(path.as_bytes())
    }
}

/// One character: a byte that does not continue another, then the bytes
/// that continue it.
const ONE_CHAR: &str = r"[^/\x80-\xBF][\x80-\xBF]*";

/// An anchored matcher for `glob`; with `or_below`, paths below a matching
/// directory match too (`contrib/` excludes everything in it). `None` for
/// an unclosed `{`.
#[must_use]
pub fn to_regex(glob: &str, or_below: bool) -> Option<Glob> {
    let re = translate(glob, or_below, ONE_CHAR)?;
    RegexBuilder::new(&re).unicode(false).build().ok().map(Glob)
}

/// One matcher for a path matching any of `globs` (as [`to_regex`] with
/// `or_below`): one pass over the path instead of one per glob. Globs with
/// an unclosed `{` are left out; `None` when none is left.
#[must_use]
pub fn any_of<'g>(globs: impl IntoIterator<Item = &'g str>, or_below: bool) -> Option<Glob> {
    let alternatives: Vec<String> = globs
        .into_iter()
        .filter_map(|g| translate(g, or_below, ONE_CHAR))
        .map(|re| format!("(?:{re})"))
        .collect();
    if alternatives.is_empty() {
        return None;
    }
    RegexBuilder::new(&alternatives.join("|"))
        .unicode(false)
        .build()
        .ok()
        .map(Glob)
}

/// The regex text of `glob`, `?` written as `one_char`.
fn translate(glob: &str, or_below: bool, one_char: &str) -> Option<String> {
    let mut re = String::from("^");
    let chars: Vec<char> = glob.chars().collect();
    let mut i = 0;
    let mut in_alt = false;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                re.push_str(".*");
                i += 1;
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str(one_char),
            '{' => {
                re.push_str("(?:");
                in_alt = true;
            }
            '}' if in_alt => {
                re.push(')');
                in_alt = false;
            }
            ',' if in_alt => re.push('|'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    if in_alt {
        return None;
    }
    re.push_str(if or_below { "(/.*)?$" } else { "$" });
    Some(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let r = to_regex("{/etc,/run}/sysctl.d/*.conf", false).expect("valid");
        assert!(r.is_match("/etc/sysctl.d/99-k8s.conf"));
        assert!(!r.is_match("/etc/sysctl.d/sub/x.conf"));
        let r = to_regex("contrib", true).expect("valid");
        assert!(r.is_match("contrib/a/b.yml"));
        assert!(to_regex("{a,b", false).is_none());
    }

    /// `any_of` matches what one of its globs matches, and skips the
    /// globs that do not compile.
    #[test]
    fn any_of_is_the_union() {
        let globs = ["contrib", "**/*.md", "a?c/x", "{b,c", "dir/{x,y}.yml"];
        let paths = [
            "contrib/a.yml",
            "contribx",
            "docs/r.md",
            "abc/x",
            "abc/x/deeper",
            "a/c/x",
            "dir/x.yml",
            "dir/z.yml",
            "{b,c",
            "",
        ];
        let all = any_of(globs, true).expect("some compile");
        for p in paths {
            let want = globs
                .iter()
                .filter_map(|g| to_regex(g, true))
                .any(|g| g.is_match(p));
            assert_eq!(all.is_match(p), want, "{p:?}");
        }
        assert!(any_of(["{a"], true).is_none());
        assert!(any_of([], false).is_none());
    }

    /// The same answers as the character regex the glob used to be.
    #[test]
    fn bytes_match_as_characters_do() {
        // The character regex a glob used to be: `?` is one character.
        let char_regex = |glob: &str, or_below: bool| {
            regex::Regex::new(&translate(glob, or_below, "[^/]").expect("closed")).expect("valid")
        };
        let globs = [
            "?", "??", "?*", "*?", "é?", "?é", "a/?/b", "**/x.yml", "*", "ü*ß", "{é,ab}?", "r/**",
            "x?y", "日本?",
        ];
        let paths = [
            "",
            "a",
            "é",
            "ab",
            "éé",
            "aé",
            "a/é/b",
            "a/ab/b",
            "d/e/x.yml",
            "x.yml",
            "ü/ß",
            "üaß",
            "ab日",
            "é本",
            "r/a\nb",
            "x\ny",
            "x/y",
            "日本語",
            "日本",
        ];
        for g in globs {
            for below in [false, true] {
                let want = char_regex(g, below);
                let got = to_regex(g, below).expect("valid");
                for p in paths {
                    assert_eq!(got.is_match(p), want.is_match(p), "{g} on {p:?}");
                }
            }
        }
    }
}
