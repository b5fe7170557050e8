//! Path globs (`*`, `**`, `?`, `{a,b}`) as regexes, for exclusions and the
//! catalog's `writes.path` patterns.

use regex::Regex;

/// An anchored regex for `glob`; with `or_below`, paths below a matching
/// directory match too (`contrib/` excludes everything in it).
#[must_use]
pub fn to_regex(glob: &str, or_below: bool) -> Option<Regex> {
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
            '?' => re.push_str("[^/]"),
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
    Regex::new(&re).ok()
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
}
