//! Sysctl configuration syntax and locations: which paths the boot engines
//! read, how a `key = value` line is parsed, how keys are normalised and how
//! glob keys match.
//!
//! Pure functions on strings; no file system access.

use serde::Serialize;

/// The path of the compatibility link many distributions ship
/// (`/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf`).
pub const COMPAT_LINK: &str = "/etc/sysctl.d/99-sysctl.conf";
/// The file procps applies last and modern systemd-sysctl does not read.
pub const SYSCTL_CONF: &str = "/etc/sysctl.conf";
/// A link to this path masks a file.
pub const DEV_NULL: &str = "/dev/null";

/// A `sysctl.d` directory, in the order of precedence both engines use
/// (a file in an earlier directory hides same-named files in later ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SysctlDir {
    Etc,
    Run,
    UsrLocalLib,
    UsrLib,
    /// Read on split-usr systems (and by procps everywhere).
    Lib,
}

impl SysctlDir {
    /// Every directory, highest precedence first.
    pub const ALL: [SysctlDir; 5] = [
        SysctlDir::Etc,
        SysctlDir::Run,
        SysctlDir::UsrLocalLib,
        SysctlDir::UsrLib,
        SysctlDir::Lib,
    ];

    #[must_use]
    pub fn path(self) -> &'static str {
        match self {
            SysctlDir::Etc => "/etc/sysctl.d",
            SysctlDir::Run => "/run/sysctl.d",
            SysctlDir::UsrLocalLib => "/usr/local/lib/sysctl.d",
            SysctlDir::UsrLib => "/usr/lib/sysctl.d",
            SysctlDir::Lib => "/lib/sysctl.d",
        }
    }
}

/// What a path is to the boot engines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SysctlFileKind {
    /// `/etc/sysctl.conf`: applied last by procps `sysctl --system`; read by
    /// systemd-sysctl only through the `99-sysctl.conf` link.
    SysctlConf,
    /// `DIR/NAME.conf` in one of the [`SysctlDir`]s.
    DropIn { dir: SysctlDir, name: String },
}

/// Tells whether `path` is a sysctl configuration location that a boot
/// engine reads: `/etc/sysctl.conf` or `*.conf` directly inside one of the
/// `sysctl.d` directories. The path is normalised first (`//`, `.`, `..`);
/// relative paths are never locations.
#[must_use]
#[allow(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "both engines match `.conf` case-sensitively"
)]
pub fn sysctl_file_kind(path: &str) -> Option<SysctlFileKind> {
    let path = normalize_path(path)?;
    if path == SYSCTL_CONF {
        return Some(SysctlFileKind::SysctlConf);
    }
    let (dir, name) = path.rsplit_once('/')?;
    let dir = SysctlDir::ALL.into_iter().find(|d| d.path() == dir)?;
    if name.len() > ".conf".len() && name.ends_with(".conf") {
        Some(SysctlFileKind::DropIn {
            dir,
            name: name.to_string(),
        })
    } else {
        None
    }
}

/// Normalises an absolute path lexically: empty and `.` components are
/// dropped, `..` removes the previous component (never above `/`).
/// Relative paths give `None`.
#[must_use]
pub fn normalize_path(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    // Most paths are normal already (asked for every write a task makes).
    if path[1..]
        .split('/')
        .all(|c| !c.is_empty() && c != "." && c != "..")
    {
        return Some(path.to_string());
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Where a symlink at `link_path` pointing to `target` leads (lexically):
/// relative targets are taken from the link's directory.
#[must_use]
pub fn resolve_link_target(link_path: &str, target: &str) -> String {
    if target.starts_with('/') {
        return normalize_path(target).unwrap_or_else(|| target.to_string());
    }
    let dir = link_path.rsplit_once('/').map_or("", |(d, _)| d);
    normalize_path(&format!("{dir}/{target}")).unwrap_or_else(|| target.to_string())
}

/// One assignment line of a sysctl configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfLine {
    /// The key, normalised to the dotted form (see [`normalize_key`]).
    pub key: String,
    /// The value, trimmed; `None` for a `-key` line without `=`, which
    /// excludes the key from glob assignments (systemd, procps 4).
    pub value: Option<String>,
    /// 1-based line number.
    pub line: u32,
    /// The key had a leading `-`: errors setting it are ignored.
    pub ignore_errors: bool,
}

/// Parses a sysctl configuration file as systemd-sysctl and procps do:
/// blank lines and lines whose first non-blank character is `#` or `;` are
/// comments; `key = value` splits at the first `=`, both sides trimmed (no
/// inline comments: `1 # x` is the value); a leading `-` on the key means
/// "ignore errors"; `-key` alone is a glob exclusion; any other line
/// without `=` is invalid and skipped.
#[must_use]
pub fn parse_conf_lines(text: &str) -> Vec<ConfLine> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        let (key_part, value) = match l.split_once('=') {
            Some((k, v)) => (k, Some(v.trim().to_string())),
            None if l.starts_with('-') => (l, None),
            None => continue,
        };
        let mut key_part = key_part.trim();
        let ignore_errors = key_part.starts_with('-');
        if ignore_errors {
            key_part = key_part[1..].trim();
        }
        let key = normalize_key(key_part);
        if key.is_empty() {
            continue;
        }
        out.push(ConfLine {
            key,
            value,
            line,
            ignore_errors,
        });
    }
    out
}

/// The assignments of a sysctl configuration file as `(key, value, line)`,
/// keys normalised; glob exclusions (`-key` without a value) are left out
/// (see [`parse_conf_lines`] for them).
#[must_use]
pub fn parse_conf(text: &str) -> Vec<(String, String, u32)> {
    parse_conf_lines(text)
        .into_iter()
        .filter_map(|l| Some((l.key, l.value?, l.line)))
        .collect()
}

/// Normalises a sysctl key to the dotted form. As in sysctl.d(5): when the
/// first separator is `/`, the key is a path and `/` and `.` are swapped
/// (`net/ipv4/conf/eth0.100/rp_filter` is `net.ipv4.conf.eth0/100.rp_filter`);
/// otherwise the key is already dotted. Repeated and outer separators are
/// dropped (`/proc/sys` is not stripped: neither engine accepts it).
#[must_use]
pub fn normalize_key(raw: &str) -> String {
    let raw = raw.trim();
    // Already dotted, with no empty part: the common case, kept as it is.
    if !raw.contains('/') && !raw.starts_with('.') && !raw.ends_with('.') && !raw.contains("..") {
        return raw.to_string();
    }
    let slash_first = raw
        .find(['.', '/'])
        .is_some_and(|i| raw.as_bytes()[i] == b'/');
    let swapped: String = if slash_first {
        raw.chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                c => c,
            })
            .collect()
    } else {
        raw.to_string()
    };
    swapped
        .split('.')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether a (normalised) key is a glob pattern (`*`, `?` or `[`).
#[must_use]
pub fn is_glob(key: &str) -> bool {
    key.contains(['*', '?', '['])
}

/// Whether the glob `pattern` matches the concrete `key` (both normalised).
/// The engines glob the `/proc/sys` path, so `*` and `?` never cross a
/// key separator (`.`), while a `/` inside a dotted key (a `.` in an
/// interface name) is an ordinary character.
#[must_use]
pub fn glob_matches(pattern: &str, key: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let k: Vec<char> = key.chars().collect();
    match_from(&p, &k)
}

fn match_from(p: &[char], k: &[char]) -> bool {
    let (mut pi, mut ki) = (0usize, 0usize);
    // Backtracking point for the last `*`: (pattern index after it, key index).
    let mut star: Option<(usize, usize)> = None;
    while ki < k.len() {
        let step = if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi + 1, ki));
                    pi += 1;
                    continue;
                }
                '?' if k[ki] != '.' => Some(1),
                '[' => match class_at(p, pi) {
                    Some((set, len)) => (k[ki] != '.' && set.matches(k[ki])).then_some(len),
                    None => (k[ki] == '[').then_some(1),
                },
                c if c == k[ki] && c != '?' => Some(1),
                _ => None,
            }
        } else {
            None
        };
        if let Some(len) = step {
            pi += len;
            ki += 1;
            continue;
        }
        // Mismatch: let the last `*` eat one more character, unless that
        // character is a separator (then the `*` cannot grow).
        match star {
            Some((after, from)) if k[from] != '.' => {
                star = Some((after, from + 1));
                pi = after;
                ki = from + 1;
            }
            _ => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

struct CharClass {
    negated: bool,
    items: Vec<(char, char)>,
}

impl CharClass {
    fn matches(&self, c: char) -> bool {
        self.items.iter().any(|&(a, b)| a <= c && c <= b) != self.negated
    }
}

/// Parses `[...]` at `p[at]`; gives the class and its length in pattern chars,
/// or `None` when there is no closing `]` (then `[` is literal).
fn class_at(p: &[char], at: usize) -> Option<(CharClass, usize)> {
    let mut i = at + 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    while i < p.len() {
        let c = p[i];
        if c == ']' && !first {
            return Some((CharClass { negated, items }, i + 1 - at));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            items.push((c, p[i + 2]));
            i += 3;
        } else {
            items.push((c, c));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_kinds() {
        assert_eq!(
            sysctl_file_kind("/etc/sysctl.conf"),
            Some(SysctlFileKind::SysctlConf)
        );
        assert_eq!(
            sysctl_file_kind("/etc/sysctl.d/99-sysctl.conf"),
            Some(SysctlFileKind::DropIn {
                dir: SysctlDir::Etc,
                name: "99-sysctl.conf".into()
            })
        );
        for dir in SysctlDir::ALL {
            let p = format!("{}/k8s.conf", dir.path());
            assert!(
                matches!(sysctl_file_kind(&p), Some(SysctlFileKind::DropIn { dir: d, .. }) if d == dir)
            );
        }
        assert_eq!(
            sysctl_file_kind("/etc//sysctl.d/./x.conf"),
            Some(SysctlFileKind::DropIn {
                dir: SysctlDir::Etc,
                name: "x.conf".into()
            })
        );
        assert!(sysctl_file_kind("/etc/sysctl.d/sub/x.conf").is_none());
        assert!(sysctl_file_kind("/etc/sysctl.d/x.txt").is_none());
        assert!(sysctl_file_kind("/etc/sysctl.d/.conf").is_none());
        assert!(sysctl_file_kind("etc/sysctl.conf").is_none());
        assert!(sysctl_file_kind("/etc/modules-load.d/k8s.conf").is_none());
        assert!(sysctl_file_kind("/usr/local/lib/sysctl.d/a.conf").is_some());
    }

    #[test]
    fn paths_and_links() {
        assert_eq!(normalize_path("/a//b/./c/../d").as_deref(), Some("/a/b/d"));
        assert_eq!(normalize_path("/../..").as_deref(), Some("/"));
        for (p, want) in [
            ("/", "/"),
            ("/etc/sysctl.d/99-k8s.conf", "/etc/sysctl.d/99-k8s.conf"),
            ("/etc/sysctl.d/", "/etc/sysctl.d"),
            ("/etc/.", "/etc"),
            ("/etc/..", "/"),
            ("/.hidden/a..b", "/.hidden/a..b"),
        ] {
            assert_eq!(normalize_path(p).as_deref(), Some(want), "{p}");
        }
        assert_eq!(normalize_path("etc/x"), None);
        assert_eq!(
            resolve_link_target(COMPAT_LINK, "../sysctl.conf"),
            SYSCTL_CONF
        );
        assert_eq!(
            resolve_link_target("/etc/sysctl.d/x.conf", "/dev/null"),
            DEV_NULL
        );
    }

    #[test]
    fn parses_syntax() {
        let text = "# comment\n; also comment\n\n  net.ipv4.ip_forward = 1 \nkernel.panic=10\n\
                    -net.core.default_qdisc = fq_codel\n-net.ipv4.conf.all.rp_filter\nnot an assignment\n\
                    net/ipv4/conf/eth0.100/rp_filter=2\nkernel.x = a # not a comment\nkernel.empty =\n";
        let lines = parse_conf_lines(text);
        let got: Vec<(&str, Option<&str>, u32, bool)> = lines
            .iter()
            .map(|l| (l.key.as_str(), l.value.as_deref(), l.line, l.ignore_errors))
            .collect();
        assert_eq!(
            got,
            vec![
                ("net.ipv4.ip_forward", Some("1"), 4, false),
                ("kernel.panic", Some("10"), 5, false),
                ("net.core.default_qdisc", Some("fq_codel"), 6, true),
                ("net.ipv4.conf.all.rp_filter", None, 7, true),
                ("net.ipv4.conf.eth0/100.rp_filter", Some("2"), 9, false),
                ("kernel.x", Some("a # not a comment"), 10, false),
                ("kernel.empty", Some(""), 11, false),
            ]
        );
        let simple = parse_conf(text);
        assert_eq!(simple.len(), 6, "the exclusion has no value");
        assert_eq!(
            simple[0],
            ("net.ipv4.ip_forward".to_string(), "1".to_string(), 4)
        );
    }

    #[test]
    fn crlf_lines() {
        let lines = parse_conf("a.b = 1\r\nc.d=2\r\n");
        assert_eq!(
            lines,
            vec![("a.b".into(), "1".into(), 1), ("c.d".into(), "2".into(), 2)]
        );
    }

    #[test]
    fn normalises_keys() {
        assert_eq!(normalize_key("net/ipv4/ip_forward"), "net.ipv4.ip_forward");
        assert_eq!(normalize_key("net.ipv4.ip_forward"), "net.ipv4.ip_forward");
        assert_eq!(
            normalize_key("/net/ipv4//ip_forward"),
            "net.ipv4.ip_forward"
        );
        assert_eq!(
            normalize_key("net/ipv4/conf/eth0.100/rp_filter"),
            "net.ipv4.conf.eth0/100.rp_filter"
        );
        assert_eq!(
            normalize_key("net.ipv4.conf.eth0/100.rp_filter"),
            "net.ipv4.conf.eth0/100.rp_filter"
        );
        assert_eq!(normalize_key(" kernel.panic "), "kernel.panic");
        assert_eq!(
            normalize_key(".net..ipv4.ip_forward."),
            "net.ipv4.ip_forward"
        );
        assert_eq!(normalize_key(" "), "");
        assert_eq!(normalize_key("."), "");
    }

    #[test]
    fn globs() {
        assert!(is_glob("net.ipv4.conf.*.rp_filter"));
        assert!(!is_glob("net.ipv4.ip_forward"));
        assert!(glob_matches(
            "net.ipv4.conf.*.rp_filter",
            "net.ipv4.conf.all.rp_filter"
        ));
        assert!(glob_matches(
            "net.ipv4.conf.*.rp_filter",
            "net.ipv4.conf.eth0/100.rp_filter"
        ));
        assert!(!glob_matches(
            "net.ipv4.conf.*.rp_filter",
            "net.ipv4.conf.a.b.rp_filter"
        ));
        assert!(!glob_matches(
            "net.ipv4.conf.*.rp_filter",
            "net.ipv6.conf.all.rp_filter"
        ));
        assert!(glob_matches(
            "net.ipv4.conf.eth?.rp_filter",
            "net.ipv4.conf.eth0.rp_filter"
        ));
        assert!(glob_matches(
            "net.ipv4.conf.eth[0-1].rp_filter",
            "net.ipv4.conf.eth1.rp_filter"
        ));
        assert!(!glob_matches(
            "net.ipv4.conf.eth[!0-1].rp_filter",
            "net.ipv4.conf.eth1.rp_filter"
        ));
        assert!(glob_matches(
            "net.*.conf.*.forwarding",
            "net.ipv6.conf.all.forwarding"
        ));
        assert!(glob_matches("kernel.*", "kernel.panic"));
        assert!(!glob_matches("kernel.*", "kernel.keys.root_maxkeys"));
        assert!(glob_matches("net.ipv4.conf.*_x.y", "net.ipv4.conf.a_b_x.y"));
    }
}
