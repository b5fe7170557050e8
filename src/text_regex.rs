//! Regexes searched through their ASCII form when the text is ASCII.
//!
//! A Unicode class (`\s`, `\S`, `.`, a negated class) is compiled through
//! a UTF-8 automaton whose cache alone is large and fresh for each regex,
//! and its lazy DFA runs over more states. Nearly every text preflint searches
//! (commands, config templates, sysctl lines) is ASCII, where a pattern
//! compiled without Unicode (its ASCII form) answers exactly as the Unicode
//! one does (see [`has_ascii_form`]): that is what an ASCII text is
//! searched with, and
//! the Unicode regex is compiled only when a text that is not ASCII comes.

use std::sync::OnceLock;

/// Whether `src` compiled without Unicode answers every ASCII text as `src`
/// compiled with Unicode does.
///
/// On ASCII text the Unicode classes (`\s`, `\w`, `\d`, `\b`, `.`, negated
/// classes) and case folding agree with their ASCII forms as long as the
/// pattern names no character outside ASCII: neither written out (`(?i)ſ`
/// also matches `s`) nor by an escape (`\x{17F}`, `\u017F`; conservatively,
/// any `\x`, `\u` or `\U`). A pattern that needs Unicode (`\pL`) does not
/// compile without it and is searched with Unicode only.
#[must_use]
pub fn has_ascii_form(src: &str) -> bool {
    src.is_ascii() && !src.contains("\\x") && !src.contains("\\u") && !src.contains("\\U")
}

/// [`has_ascii_form`] under the name `concern::catalog` still calls it by
/// (another session rewrites that module now): drop once it calls the new
/// name.
#[doc(hidden)]
pub use self::has_ascii_form as ascii_twin;

/// A regex of preflint's own (`static`), compiled on first use.
pub struct TextRegex {
    src: &'static str,
    unicode: OnceLock<regex::Regex>,
    ascii: OnceLock<Option<regex::bytes::Regex>>,
}

impl TextRegex {
    /// `src` must be a valid regex: it is compiled on first use, and a
    /// syntax error panics there (the unit tests compile each one).
    #[must_use]
    pub const fn new(src: &'static str) -> Self {
        TextRegex {
            src,
            unicode: OnceLock::new(),
            ascii: OnceLock::new(),
        }
    }

    /// The ASCII form, for an ASCII text whose pattern has one.
    fn ascii_form(&self, text: &str) -> Option<&regex::bytes::Regex> {
        if !text.is_ascii() {
            return None;
        }
        self.ascii
            .get_or_init(|| {
                has_ascii_form(self.src)
                    .then(|| {
                        regex::bytes::RegexBuilder::new(self.src)
                            .unicode(false)
                            .build()
                            .ok()
                    })
                    .flatten()
            })
            .as_ref()
    }

    fn unicode(&self) -> &regex::Regex {
        self.unicode
            .get_or_init(|| regex::Regex::new(self.src).expect("static regex"))
    }

    #[must_use]
    pub fn is_match(&self, text: &str) -> bool {
        match self.ascii_form(text) {
            Some(re) => re.is_match(text.as_bytes()),
            None => self.unicode().is_match(text),
        }
    }

    /// The first match's groups.
    #[must_use]
    pub fn captures<'t>(&self, text: &'t str) -> Option<Captures<'t>> {
        match self.ascii_form(text) {
            Some(re) => re
                .captures(text.as_bytes())
                .map(|c| Captures::of_bytes(text, &c)),
            None => self
                .unicode()
                .captures(text)
                .map(|c| Captures::of(text, &c)),
        }
    }

    /// Every successive non-overlapping match's groups.
    #[must_use]
    pub fn captures_all<'t>(&self, text: &'t str) -> Vec<Captures<'t>> {
        match self.ascii_form(text) {
            Some(re) => re
                .captures_iter(text.as_bytes())
                .map(|c| Captures::of_bytes(text, &c))
                .collect(),
            None => self
                .unicode()
                .captures_iter(text)
                .map(|c| Captures::of(text, &c))
                .collect(),
        }
    }
}

/// The groups of one match: group 0 is the whole match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captures<'t> {
    text: &'t str,
    groups: Vec<Option<(usize, usize)>>,
}

impl<'t> Captures<'t> {
    fn of(text: &'t str, c: &regex::Captures<'_>) -> Self {
        Captures {
            text,
            groups: c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect(),
        }
    }

    /// Offsets in ASCII text fall between characters.
    fn of_bytes(text: &'t str, c: &regex::bytes::Captures<'_>) -> Self {
        Captures {
            text,
            groups: c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect(),
        }
    }

    /// Group `i`'s byte offsets in the text, if the group took part.
    #[must_use]
    pub fn range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        let (start, end) = (*self.groups.get(i)?)?;
        Some(start..end)
    }

    /// Group `i`'s text, if the group took part in the match.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&'t str> {
        let (start, end) = (*self.groups.get(i)?)?;
        self.text.get(start..end)
    }
}

impl std::ops::Index<usize> for Captures<'_> {
    type Output = str;

    /// Group `i`'s text; panics if it did not take part, as `regex` does.
    fn index(&self, i: usize) -> &str {
        self.get(i)
            .unwrap_or_else(|| panic!("no group {i} in this match"))
    }
}

#[cfg(test)]
mod tests {
    use super::{TextRegex, has_ascii_form};

    const PATTERNS: &[&str] = &[
        r"\bsysctl\s+(?:-\S+\s+)*-w\s+((?:[0-9A-Za-z_./*-]+\s*=\s*\S+\s*)+)",
        r"--ignore-preflight-errors[= ](\{\{.*?\}\}|[^\s]+)",
        r"(?m)^\s*cgroupDriver:\s*(\S+)$",
        r"(?i)\b(swap)\w*\b",
        r"(?i)k",
        r"(?i)s",
        r"(\d+)\.(\d+)",
        r"[^a-z]+",
        r"(?s)a.b",
        r"a.b",
        r"\W+(\w+)",
        r"\B\w\B",
        r"(?i)ſ",
        r"(?i)\x{212A}",
        r"\x{41}+",
        r"\pL+",
        r"é|e",
    ];

    const TEXTS: &[&str] = &[
        "",
        "sysctl -w net.ipv4.ip_forward=1 vm.swappiness=0",
        "kubeadm init --ignore-preflight-errors={{ errs }} --v=5",
        "kubeadm init --ignore-preflight-errors all",
        "a: 1\n  cgroupDriver: systemd\nb",
        "SWAPOFF -a; swapon",
        "KUBE kelvin",
        "Sss",
        "v1.28 and 10.250",
        "abcXYZ 123",
        "a\nb axb",
        "  foo bar_baz",
        "\u{a0}sysctl\u{a0}-w a=1",
        "K\u{212A}ſs",
        "straße Ünïcode",
        "AAA",
    ];

    #[test]
    fn the_ascii_form_answers_as_the_unicode_regex_does() {
        for p in PATTERNS {
            let ours = TextRegex::new(p);
            let re = regex::Regex::new(p).expect("valid");
            for t in TEXTS {
                assert_eq!(ours.is_match(t), re.is_match(t), "{p} on {t:?}");
                let want: Vec<Vec<Option<&str>>> = re
                    .captures_iter(t)
                    .map(|c| c.iter().map(|m| m.map(|m| m.as_str())).collect())
                    .collect();
                let got: Vec<Vec<Option<&str>>> = ours
                    .captures_all(t)
                    .iter()
                    .map(|c| (0..c.groups.len()).map(|i| c.get(i)).collect())
                    .collect();
                assert_eq!(got, want, "{p} on {t:?}");
                assert_eq!(
                    ours.captures(t).and_then(|c| c.get(0)),
                    re.find(t).map(|m| m.as_str()),
                    "{p} on {t:?}"
                );
            }
        }
    }

    #[test]
    fn patterns_naming_characters_beyond_ascii_have_no_ascii_form() {
        assert!(has_ascii_form(r"\bsysctl\s+-w"));
        assert!(!has_ascii_form("(?i)ſ"));
        assert!(!has_ascii_form(r"(?i)\x{17F}"));
        assert!(!has_ascii_form(r"\u017F"));
        // Needs Unicode: no ASCII form compiles, the Unicode regex answers.
        let letters = TextRegex::new(r"\pL+");
        assert!(letters.is_match("abc"));
        assert!(letters.ascii.get().is_some_and(Option::is_none));
        // Only an ASCII text is searched with the ASCII form.
        let ws = TextRegex::new(r"a\sb");
        assert!(ws.is_match("a\u{a0}b"));
        assert!(ws.ascii.get().is_none() && ws.unicode.get().is_some());
        assert!(ws.is_match("a b"));
        assert!(ws.ascii.get().is_some_and(Option::is_some));
    }
}
