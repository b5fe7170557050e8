//! Ansible's `version` / `version_compare` test: `LooseVersion` (the
//! default), `StrictVersion` and `SemanticVersion`, compared exactly as
//! `ansible.module_utils.compat.version` and `ansible.utils.version` do,
//! including the `TypeError` Python raises when a loose version compares a
//! number with a word (`'1.30' is version('v1.30', '>=')` fails in Ansible).

use super::Fail;
use std::cmp::Ordering;

/// One `LooseVersion` component: digits (compared as numbers) or other text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Decimal digits without leading zeros (arbitrary length, like Python ints).
    Num(String),
    Word(String),
}

fn cmp_digits(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn normalize_digits(s: &str) -> String {
    let t = s.trim_start_matches('0');
    if t.is_empty() { "0".into() } else { t.into() }
}

/// `LooseVersion.parse`: `re.split(r'(\d+|[a-z]+|\.)')`, dropping dots and
/// empty pieces, digits become ints.
fn loose_parts(s: &str) -> Vec<Part> {
    let chars: Vec<char> = s.chars().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    let starts_match = |c: char| c.is_ascii_digit() || c.is_ascii_lowercase() || c == '.';
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            parts.push(Part::Num(normalize_digits(
                &chars[start..i].iter().collect::<String>(),
            )));
        } else if c.is_ascii_lowercase() {
            while i < chars.len() && chars[i].is_ascii_lowercase() {
                i += 1;
            }
            parts.push(Part::Word(chars[start..i].iter().collect()));
        } else if c == '.' {
            i += 1;
        } else {
            while i < chars.len() && !starts_match(chars[i]) {
                i += 1;
            }
            parts.push(Part::Word(chars[start..i].iter().collect()));
        }
    }
    parts
}

/// Python list comparison of two loose versions; `int` vs `str` is a `TypeError`.
fn loose_cmp(a: &str, b: &str) -> Result<Ordering, Fail> {
    let (pa, pb) = (loose_parts(a), loose_parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        if x == y {
            continue;
        }
        return match (x, y) {
            (Part::Num(p), Part::Num(q)) => Ok(cmp_digits(p, q)),
            (Part::Word(p), Part::Word(q)) => Ok(p.cmp(q)),
            (Part::Num(_), Part::Word(_)) => Err(Fail::Invalid(
                "Version comparison failed: '<' not supported between instances of 'int' and 'str'"
                    .into(),
            )),
            (Part::Word(_), Part::Num(_)) => Err(Fail::Invalid(
                "Version comparison failed: '<' not supported between instances of 'str' and 'int'"
                    .into(),
            )),
        };
    }
    Ok(pa.len().cmp(&pb.len()))
}

/// A parsed `StrictVersion`: three numbers and an optional `a`/`b` pre-release.
type Strict = ([String; 3], Option<(char, String)>);

/// `StrictVersion`: `N.N[.N][(a|b)N]`.
fn strict_parse(s: &str) -> Result<Strict, Fail> {
    let bad = || {
        Fail::Invalid(format!(
            "Version comparison failed: invalid version number '{s}'"
        ))
    };
    let (core, pre) = match s.find(['a', 'b']) {
        Some(i) => {
            let letter = s[i..].chars().next().ok_or_else(bad)?;
            let num = &s[i + 1..];
            if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            (&s[..i], Some((letter, normalize_digits(num))))
        }
        None => (s, None),
    };
    let nums: Vec<&str> = core.split('.').collect();
    if !(2..=3).contains(&nums.len())
        || nums
            .iter()
            .any(|n| n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(bad());
    }
    let patch = nums
        .get(2)
        .map_or_else(|| "0".to_string(), |p| normalize_digits(p));
    Ok((
        [normalize_digits(nums[0]), normalize_digits(nums[1]), patch],
        pre,
    ))
}

fn strict_cmp(a: &str, b: &str) -> Result<Ordering, Fail> {
    let (ca, pa) = strict_parse(a)?;
    let (cb, pb) = strict_parse(b)?;
    let core = ca
        .iter()
        .zip(&cb)
        .map(|(x, y)| cmp_digits(x, y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal);
    if core.is_ne() {
        return Ok(core);
    }
    Ok(match (pa, pb) {
        (None, None) => Ordering::Equal,
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some((l1, n1)), Some((l2, n2))) => l1.cmp(&l2).then_with(|| cmp_digits(&n1, &n2)),
    })
}

/// Semantic versioning 2.0.0 as `ansible.utils.version.SemanticVersion`.
fn semver_parse(s: &str) -> Result<([String; 3], Vec<Part>), Fail> {
    let bad = || {
        Fail::Invalid(format!(
            "Version comparison failed: invalid semantic version '{s}'"
        ))
    };
    let (no_build, build) = s.split_once('+').map_or((s, None), |(v, b)| (v, Some(b)));
    let valid_ident =
        |id: &str| !id.is_empty() && id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-');
    if build.is_some_and(|b| !b.split('.').all(valid_ident)) {
        return Err(bad());
    }
    let (core, pre) = no_build
        .split_once('-')
        .map_or((no_build, None), |(c, p)| (c, Some(p)));
    let nums: Vec<&str> = core.split('.').collect();
    let valid_num = |n: &str| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
    };
    if nums.len() != 3 || !nums.iter().all(|n| valid_num(n)) {
        return Err(bad());
    }
    let mut pre_parts = Vec::new();
    if let Some(pre) = pre {
        for ident in pre.split('.') {
            if !valid_ident(ident) {
                return Err(bad());
            }
            if ident.bytes().all(|b| b.is_ascii_digit()) {
                if !valid_num(ident) {
                    return Err(bad());
                }
                pre_parts.push(Part::Num(normalize_digits(ident)));
            } else {
                pre_parts.push(Part::Word(ident.to_string()));
            }
        }
    }
    Ok(([nums[0].into(), nums[1].into(), nums[2].into()], pre_parts))
}

fn semver_cmp(a: &str, b: &str) -> Result<Ordering, Fail> {
    let (ca, pa) = semver_parse(a)?;
    let (cb, pb) = semver_parse(b)?;
    let core = ca
        .iter()
        .zip(&cb)
        .map(|(x, y)| cmp_digits(x, y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal);
    if core.is_ne() {
        return Ok(core);
    }
    Ok(match (pa.is_empty(), pb.is_empty()) {
        (true, true) => Ordering::Equal,
        (false, true) => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, false) => {
            for (x, y) in pa.iter().zip(&pb) {
                let o = match (x, y) {
                    (Part::Num(p), Part::Num(q)) => cmp_digits(p, q),
                    (Part::Word(p), Part::Word(q)) => p.cmp(q),
                    (Part::Num(_), Part::Word(_)) => Ordering::Less,
                    (Part::Word(_), Part::Num(_)) => Ordering::Greater,
                };
                if o.is_ne() {
                    return Ok(o);
                }
            }
            pa.len().cmp(&pb.len())
        }
    })
}

/// `version_compare(value, version, operator, strict, version_type)` on the
/// already-stringified operands.
pub(crate) fn compare(
    value: &str,
    version: &str,
    operator: &str,
    strict: bool,
    version_type: Option<&str>,
) -> Result<bool, Fail> {
    if value.is_empty() {
        return Err(Fail::Invalid("Input version value cannot be empty".into()));
    }
    if version.is_empty() {
        return Err(Fail::Invalid(
            "Version parameter to compare against cannot be empty".into(),
        ));
    }
    let op = match operator {
        "==" | "=" | "eq" => "eq",
        "<" | "lt" => "lt",
        "<=" | "le" => "le",
        ">" | "gt" => "gt",
        ">=" | "ge" => "ge",
        "!=" | "<>" | "ne" => "ne",
        other => return Err(Fail::Invalid(format!("Invalid operator type ({other})"))),
    };
    let kind = if strict {
        "strict"
    } else {
        version_type.unwrap_or("loose")
    };
    let ord = match kind {
        "loose" => {
            // LooseVersion checks `==` on the component lists first, which
            // never raises, so equal versions compare fine whatever the types.
            if loose_parts(value) == loose_parts(version) {
                Ordering::Equal
            } else {
                loose_cmp(value, version)?
            }
        }
        "strict" => strict_cmp(value, version)?,
        "semver" | "semantic" => semver_cmp(value, version)?,
        "pep440" => return Err(Fail::TooComplex("pep440 version comparison".into())),
        other => return Err(Fail::Invalid(format!("Invalid version type ({other})"))),
    };
    Ok(match op {
        "eq" => ord.is_eq(),
        "ne" => ord.is_ne(),
        "lt" => ord.is_lt(),
        "le" => ord.is_le(),
        "gt" => ord.is_gt(),
        _ => ord.is_ge(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loose(a: &str, b: &str, op: &str) -> Option<bool> {
        compare(a, b, op, false, None).ok()
    }

    #[test]
    fn loose_versions_compare_numerically() {
        assert_eq!(loose("v1.30.2", "v1.30", ">="), Some(true));
        assert_eq!(loose("v1.29.9", "v1.30", ">="), Some(false));
        assert_eq!(loose("1.10", "1.9", ">"), Some(true));
        assert_eq!(loose("2.0", "2.0", "=="), Some(true));
        assert_eq!(loose("1.0-rc1", "1.0", ">"), Some(true));
    }

    #[test]
    fn loose_number_against_word_is_an_error() {
        assert!(matches!(
            compare("1.30", "v1.30", ">=", false, None),
            Err(Fail::Invalid(_))
        ));
    }

    #[test]
    fn strict_and_semver() {
        assert_eq!(compare("1.0a1", "1.0", "<", true, None).ok(), Some(true));
        assert!(compare("1", "1.0", "<", true, None).is_err());
        assert_eq!(
            compare("1.0.0-alpha", "1.0.0", "<", false, Some("semver")).ok(),
            Some(true)
        );
        assert_eq!(
            compare(
                "1.0.0-alpha.1",
                "1.0.0-alpha.beta",
                "<",
                false,
                Some("semver")
            )
            .ok(),
            Some(true)
        );
        assert!(compare("1.0", "1.0.0", "<", false, Some("semver")).is_err());
    }
}
