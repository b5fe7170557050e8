//! Module names: resolving what a task wrote (`sysctl`, `ansible.legacy.command`)
//! to a fully qualified collection name, and splitting free-form arguments.
//!
//! The name data lives in `rules/modules.yml` (generated from ansible-core) and
//! is turned into sorted tables at build time (`build.rs`).

mod table {
    include!(concat!(env!("OUT_DIR"), "/modules.rs"));
}

/// The module tables from `rules/modules.yml`, sorted at build time.
struct ModuleTable;

impl ModuleTable {
    fn builtin(short: &str) -> bool {
        table::BUILTIN.binary_search(&short).is_ok()
    }

    fn routing(short: &str) -> Option<&'static str> {
        table::ROUTING
            .binary_search_by(|(k, _)| (*k).cmp(short))
            .ok()
            .map(|i| table::ROUTING[i].1)
    }
}

/// Builtin actions ansible-core removed (their tombstones in
/// `config/ansible_builtin_runtime.yml`), with the release that removed
/// them and ansible-core's advice. Old roles still use them: the name is
/// resolved so that the task is read as the release it was written for ran
/// it, and the reader says what ansible-core does now ([`removed`]).
const REMOVED: [(&str, &str, &str); 1] = [(
    "include",
    "2.16",
    "use ansible.builtin.include_tasks (included at run time) or ansible.builtin.import_tasks (read with the playbook)",
)];

/// For a removed builtin action (an FQCN from [`resolve`]): the ansible-core
/// release that removed it and what to use instead.
#[must_use]
pub fn removed(fqcn: &str) -> Option<(&'static str, &'static str)> {
    let short = fqcn.strip_prefix("ansible.builtin.")?;
    REMOVED
        .iter()
        .find(|(name, _, _)| *name == short)
        .map(|(_, release, advice)| (*release, *advice))
}

fn is_removed(short: &str) -> bool {
    REMOVED.iter().any(|(name, _, _)| *name == short)
}

/// The fully qualified name of an action as written in a task.
///
/// `ansible.legacy.X` and short builtin names become `ansible.builtin.X`
/// (removed builtin actions too); short names that ansible-core routes to
/// a collection become that collection's name; anything else is returned
/// as written.
#[must_use]
pub fn resolve(action: &str) -> String {
    if let Some(short) = action
        .strip_prefix("ansible.legacy.")
        .or_else(|| action.strip_prefix("ansible.builtin."))
    {
        if ModuleTable::builtin(short) || is_removed(short) {
            return format!("ansible.builtin.{short}");
        }
        if let Some(target) = ModuleTable::routing(short) {
            return target.to_string();
        }
        return action.to_string();
    }
    if action.contains('.') {
        return action.to_string();
    }
    if ModuleTable::builtin(action) || is_removed(action) {
        return format!("ansible.builtin.{action}");
    }
    if let Some(target) = ModuleTable::routing(action) {
        return target.to_string();
    }
    action.to_string()
}

/// Whether `name` is a module or action Ansible knows without extra collections
/// (used to pick the action key when a task has several unknown keys).
#[must_use]
pub fn is_known(name: &str) -> bool {
    let short = name
        .strip_prefix("ansible.legacy.")
        .or_else(|| name.strip_prefix("ansible.builtin."));
    match short {
        Some(s) => ModuleTable::builtin(s) || is_removed(s),
        None => {
            ModuleTable::builtin(name)
                || is_removed(name)
                || ModuleTable::routing(name).is_some()
                || name.matches('.').count() >= 2
        }
    }
}

/// Modules whose free-form string is the command itself (`_raw_params`).
#[must_use]
pub fn takes_raw_params(fqcn: &str) -> bool {
    matches!(
        fqcn,
        "ansible.builtin.command"
            | "ansible.builtin.shell"
            | "ansible.builtin.raw"
            | "ansible.builtin.script"
            | "ansible.builtin.include_tasks"
            | "ansible.builtin.import_tasks"
            | "ansible.builtin.include_vars"
            | "ansible.builtin.import_playbook"
            | "ansible.builtin.include"
            | "ansible.builtin.meta"
            | "ansible.builtin.set_fact"
            | "ansible.builtin.add_host"
            | "ansible.builtin.group_by"
            | "ansible.builtin.win_command"
            | "ansible.windows.win_command"
            | "ansible.windows.win_shell"
    )
}

/// Modules whose free-form `k=v` words stay in the command unless they are
/// the command's own options (`creates=`, `chdir=`...): ansible-core's
/// `FREEFORM_ACTIONS`, for which `parse_kv` checks raw. Every other module
/// (`set_fact: a=1`, `include_tasks: f.yml`) takes each `k=v` word as an
/// argument.
#[must_use]
pub fn checks_raw(fqcn: &str) -> bool {
    matches!(
        fqcn,
        "ansible.builtin.command"
            | "ansible.builtin.shell"
            | "ansible.builtin.raw"
            | "ansible.builtin.script"
            | "ansible.builtin.win_command"
            | "ansible.builtin.win_shell"
            | "ansible.windows.win_command"
            | "ansible.windows.win_shell"
    )
}

/// Splits Ansible's `k=v` free-form syntax, as `parse_kv` does: quoting with
/// `'` or `"`, backslash escapes, and Jinja `{{ }}`/`{% %}` kept whole. Words
/// without `=` are joined into `_raw_params` as `join_args` joins them: with
/// the spaces and newlines they had (a command line keeps its text).
#[must_use]
pub fn parse_kv(text: &str, raw_allowed: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut raw: Vec<String> = Vec::new();
    for param in ansible_split_args(text) {
        // The spaces and newline a word carries are the joining's, not the word's.
        let w = param.trim_end_matches([' ', '\n']);
        match find_unquoted_eq(w) {
            Some(i) if !raw_allowed || RAW_KEYS.contains(&w[..i].trim()) => {
                out.push((w[..i].trim().to_string(), unquote(w[i + 1..].trim())));
            }
            _ => raw.push(param),
        }
    }
    if !raw.is_empty() {
        out.push(("_raw_params".to_string(), join_args(&raw)));
    }
    out
}

/// ansible-core's `join_args`: words joined by a space, except after one
/// that ends a line.
fn join_args(params: &[String]) -> String {
    let mut out = String::new();
    for p in params {
        if !(out.is_empty() || out.ends_with('\n')) {
            out.push(' ');
        }
        out.push_str(p);
    }
    out
}

/// ansible-core's `split_args`, step for step: the text is split on
/// newlines, then on single spaces; words split inside quotes or a Jinja
/// block are put back together; a run of spaces is kept on the word
/// before it, a newline too (unless the line ends with a continuation
/// `\`), so that [`join_args`] gives the text back. Unbalanced quotes or
/// blocks (an error in Ansible) are split as they come.
fn ansible_split_args(text: &str) -> Vec<String> {
    let mut params: Vec<String> = Vec::new();
    let items: Vec<&str> = text.split('\n').collect();
    let mut quote: Option<char> = None;
    let (mut print_depth, mut block_depth, mut comment_depth) = (0usize, 0usize, 0usize);
    for (item_idx, item) in items.iter().enumerate() {
        let mut continuation = false;
        for (idx, token) in item.split(' ').enumerate() {
            if token.is_empty() && idx != 0 {
                match params.last_mut() {
                    Some(last) => last.push(' '),
                    None => params.push(" ".into()),
                }
                continue;
            }
            if token == "\\" && quote.is_none() {
                continuation = true;
                continue;
            }
            let was_inside = quote.is_some();
            quote = quote_state(token, quote);
            let inside = quote.is_some();
            let in_block = print_depth > 0 || block_depth > 0 || comment_depth > 0;
            let mut appended = false;
            if inside && !was_inside && !in_block {
                params.push(token.to_string());
                appended = true;
            } else if in_block || inside || was_inside {
                if let Some(last) = params.last_mut() {
                    if !(idx == 0 && was_inside) && idx > 0 {
                        last.push(' ');
                    }
                    last.push_str(token);
                } else {
                    params.push(token.to_string());
                }
                appended = true;
            }
            for (depth, open, close) in [
                (&mut print_depth, "{{", "}}"),
                (&mut block_depth, "{%", "%}"),
                (&mut comment_depth, "{#", "#}"),
            ] {
                let before = *depth;
                let (opens, closes) = (token.matches(open).count(), token.matches(close).count());
                if opens != closes {
                    *depth = (*depth + opens).saturating_sub(closes);
                }
                if *depth != before && !appended {
                    params.push(token.to_string());
                    appended = true;
                }
            }
            let in_block = print_depth > 0 || block_depth > 0 || comment_depth > 0;
            if !in_block && quote.is_none() && !appended && !token.is_empty() {
                params.push(token.to_string());
            }
        }
        if items.len() > 1 && item_idx != items.len() - 1 && !continuation {
            match params.last_mut() {
                Some(last) => last.push('\n'),
                None => params.push("\n".into()),
            }
        }
    }
    params
}

/// ansible-core's `_get_quote_state`: the quote still open after `token`.
fn quote_state(token: &str, mut quote: Option<char>) -> Option<char> {
    let mut prev: Option<char> = None;
    for c in token.chars() {
        if (c == '"' || c == '\'') && prev != Some('\\') {
            match quote {
                Some(q) if q == c => quote = None,
                Some(_) => {}
                None => quote = Some(c),
            }
        }
        prev = Some(c);
    }
    quote
}

/// The `k=v` words Ansible takes out of a command line (the rest is the command).
const RAW_KEYS: &[&str] = &[
    "creates",
    "removes",
    "chdir",
    "executable",
    "warn",
    "stdin",
    "stdin_add_newline",
    "strip_empty_ends",
];

fn find_unquoted_eq(w: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in w.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '=' => return Some(i),
            None if c == '{' || c == '[' => return None,
            None => {}
        }
        prev = c;
    }
    None
}

fn unquote(v: &str) -> String {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

/// Splits a line into words on whitespace outside quotes and Jinja blocks.
#[must_use]
pub fn parse_kv_words(text: &str) -> Vec<String> {
    split_args(text)
}

/// Splits on whitespace outside quotes and Jinja blocks.
fn split_args(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut jinja = 0usize;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if quote.is_none() && c == '{' && matches!(next, Some('{' | '%' | '#')) {
            jinja += 1;
            cur.push(c);
            cur.push(next.unwrap_or('{'));
            i += 2;
            continue;
        }
        if quote.is_none() && jinja > 0 && matches!(c, '}' | '%' | '#') && next == Some('}') {
            jinja -= 1;
            cur.push(c);
            cur.push('}');
            i += 2;
            continue;
        }
        match quote {
            Some(q) if c == q && (i == 0 || chars[i - 1] != '\\') => {
                quote = None;
                cur.push(c);
            }
            Some(_) => cur.push(c),
            None if jinja == 0 && (c == '"' || c == '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            None if jinja == 0 && c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            None => cur.push(c),
        }
        i += 1;
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_short_and_legacy_names() {
        assert_eq!(resolve("command"), "ansible.builtin.command");
        assert_eq!(resolve("ansible.legacy.shell"), "ansible.builtin.shell");
        assert_eq!(resolve("sysctl"), "ansible.posix.sysctl");
        assert_eq!(resolve("modprobe"), "community.general.modprobe");
        assert_eq!(resolve("mount"), "ansible.posix.mount");
        assert_eq!(
            resolve("community.general.modprobe"),
            "community.general.modprobe"
        );
        assert_eq!(resolve("my_custom_module"), "my_custom_module");
    }

    #[test]
    fn action_redirects_and_removed_actions() {
        // ansible-core routes the `yum` action to dnf (an action redirect).
        assert_eq!(resolve("yum"), "ansible.builtin.dnf");
        assert_eq!(resolve("ansible.builtin.yum"), "ansible.builtin.dnf");
        // `include` is a tombstone: resolved, and said to be removed.
        for written in [
            "include",
            "ansible.builtin.include",
            "ansible.legacy.include",
        ] {
            assert_eq!(resolve(written), "ansible.builtin.include", "{written}");
        }
        assert!(is_known("include"));
        assert_eq!(
            removed("ansible.builtin.include").map(|r| r.0),
            Some("2.16")
        );
        assert_eq!(removed("ansible.builtin.include_tasks"), None);
    }

    #[test]
    fn free_form_kv() {
        assert_eq!(
            parse_kv("name=br_netfilter state=present", false),
            vec![
                ("name".into(), "br_netfilter".into()),
                ("state".into(), "present".into())
            ]
        );
        assert_eq!(
            parse_kv("msg='a b' x=\"{{ y | default('z') }}\"", false),
            vec![
                ("msg".into(), "a b".into()),
                ("x".into(), "{{ y | default('z') }}".into())
            ]
        );
    }

    #[test]
    fn free_form_keeps_its_spaces_and_newlines() {
        let raw = |t: &str| parse_kv(t, true).pop().map(|(_, v)| v);
        assert_eq!(
            raw("a  b 2>&1 | grep 'x  y'").as_deref(),
            Some("a  b 2>&1 | grep 'x  y'")
        );
        assert_eq!(raw("dnf install x\n").as_deref(), Some("dnf install x\n"));
        assert_eq!(
            raw("kubectl get\n  --force\n  nodes").as_deref(),
            Some("kubectl get\n  --force\n  nodes")
        );
        // A line continuation joins the lines.
        assert_eq!(raw("a \\\nb").as_deref(), Some("a b"));
        assert_eq!(
            parse_kv("echo {{ a }}  b\ncreates=/x", true),
            vec![
                ("creates".into(), "/x".into()),
                ("_raw_params".into(), "echo {{ a }}  b\n".into())
            ]
        );
    }

    #[test]
    fn free_form_raw_params() {
        let kv = parse_kv("/sbin/swapoff -a creates=/x", true);
        assert_eq!(kv[0], ("creates".into(), "/x".into()));
        assert_eq!(kv[1], ("_raw_params".into(), "/sbin/swapoff -a".into()));
        let kv = parse_kv("sed -i 's/a=b/c/' /etc/fstab", true);
        assert_eq!(
            kv,
            vec![("_raw_params".into(), "sed -i 's/a=b/c/' /etc/fstab".into())]
        );
        let kv = parse_kv("sysctl -w net.ipv4.ip_forward=1", true);
        assert_eq!(
            kv,
            vec![(
                "_raw_params".into(),
                "sysctl -w net.ipv4.ip_forward=1".into()
            )]
        );
    }
}
