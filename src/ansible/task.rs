//! One task, normalized: which module it runs, with which arguments, under
//! which keywords. Pure function of the task's YAML mapping; knows nothing of
//! files, roles or includes beyond naming the include a task asks for.

use super::module_args::{self, Coerced};
use super::modules;
use crate::diagnostic::{Diagnostic, code};
use crate::source::Span;
use crate::yaml::{Node, Value};
use std::borrow::Cow;

/// Task keywords (everything Ansible accepts on a task that is not the action).
const TASK_KEYWORDS: &[&str] = &[
    "name",
    "when",
    "loop",
    "loop_control",
    "register",
    "tags",
    "vars",
    "become",
    "become_user",
    "become_method",
    "become_flags",
    "become_exe",
    "ignore_errors",
    "ignore_unreachable",
    "notify",
    "listen",
    "delegate_to",
    "delegate_facts",
    "local_action",
    "action",
    "args",
    "environment",
    "changed_when",
    "failed_when",
    "until",
    "retries",
    "delay",
    "no_log",
    "run_once",
    "check_mode",
    "diff",
    "any_errors_fatal",
    "async",
    "poll",
    "throttle",
    "timeout",
    "collections",
    "module_defaults",
    "connection",
    "remote_user",
    "port",
    "debugger",
    "max_fail_percentage",
    "vars_files",
    "apply",
];

/// Keywords that make a mapping a block.
const BLOCK_KEYS: &[&str] = &["block", "rescue", "always"];

/// How a task pulls in other content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncludeKind {
    ImportTasks,
    IncludeTasks,
    ImportRole,
    IncludeRole,
    ImportPlaybook,
}

impl IncludeKind {
    #[must_use]
    pub fn is_static(self) -> bool {
        matches!(
            self,
            IncludeKind::ImportTasks | IncludeKind::ImportRole | IncludeKind::ImportPlaybook
        )
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            IncludeKind::ImportTasks => "import_tasks",
            IncludeKind::IncludeTasks => "include_tasks",
            IncludeKind::ImportRole => "import_role",
            IncludeKind::IncludeRole => "include_role",
            IncludeKind::ImportPlaybook => "import_playbook",
        }
    }

    fn from_fqcn(fqcn: &str) -> Option<Self> {
        Some(match fqcn {
            "ansible.builtin.import_tasks" => IncludeKind::ImportTasks,
            "ansible.builtin.include_tasks" | "ansible.builtin.include" => {
                IncludeKind::IncludeTasks
            }
            "ansible.builtin.import_role" => IncludeKind::ImportRole,
            "ansible.builtin.include_role" => IncludeKind::IncludeRole,
            "ansible.builtin.import_playbook" => IncludeKind::ImportPlaybook,
            _ => return None,
        })
    }
}

/// What an include/import task points at, before resolution.
#[derive(Debug, Clone)]
pub struct IncludeSpec {
    pub kind: IncludeKind,
    /// File (tasks, playbook) or role name, as written (may be templated).
    pub target: String,
    pub target_span: Span,
    pub tasks_from: Option<String>,
    pub vars_from: Option<String>,
    pub defaults_from: Option<String>,
    pub handlers_from: Option<String>,
}

/// One argument of a task, with where it was written.
#[derive(Debug, Clone)]
pub struct Arg {
    /// The option's canonical name when the module's argument spec is known
    /// (`path` for lineinfile's `dest:`), else the key as written.
    pub key: String,
    pub value: Node,
    /// The key as written, when it was an alias of `key`.
    pub alias: Option<String>,
}

/// A `when` condition and where it came from.
#[derive(Debug, Clone)]
pub struct Condition {
    /// The expression as written (a bare Jinja expression). Shared: every
    /// task instance below a condition carries it.
    pub expr: std::sync::Arc<str>,
    pub span: Span,
    pub origin: Origin,
}

/// Where a condition, or a layer of variables, was attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Playbook,
    Role,
    Import,
    Include,
    Block,
    Task,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub name: Option<String>,
    /// The action key as written (`command`, `ansible.posix.sysctl`).
    pub action: String,
    /// The action resolved to its fully qualified name.
    pub module: String,
    /// The arguments as the module receives them: `args:` and the action's
    /// own (which win), aliases renamed to canonical names when the module's
    /// spec is known (see [`module_args`]). Defaults are not added: read
    /// them with [`Task::arg_or_default`].
    pub args: Vec<Arg>,
    /// The task mapping (start of the task).
    pub span: Span,
    /// Where the action key is written.
    pub action_span: Span,
    pub when: Vec<Condition>,
    pub loop_items: Option<Node>,
    pub loop_kind: Option<String>,
    /// `loop_control:` (absent: `item`, no index, not extended).
    pub loop_control: Option<Box<LoopControl>>,
    pub register: Option<String>,
    pub tags: Vec<String>,
    pub notify: Vec<String>,
    pub become_: Option<Node>,
    pub ignore_errors: Option<Node>,
    pub vars: Option<Node>,
    pub delegate_to: Option<String>,
    pub include: Option<IncludeSpec>,
    /// For `import_role`/`include_role`: the action's mapping (role parameters).
    pub role_params: Option<Node>,
}

/// A task's `loop_control:` as Ansible's `LoopControl` reads it (`pause`
/// and `break_when` change no item and are not kept).
#[derive(Debug, Clone, Default)]
pub struct LoopControl {
    /// The name each item is bound to (`item` when absent).
    pub loop_var: Option<String>,
    /// The name the item's index (from 0) is bound to.
    pub index_var: Option<String>,
    /// What the output shows for each item (a template).
    pub label: Option<Node>,
    /// Whether `ansible_loop` is set (a boolean, maybe templated).
    pub extended: Option<Node>,
    /// Whether `ansible_loop.allitems` is set when extended (default true).
    pub extended_allitems: Option<Node>,
}

impl LoopControl {
    /// From the `loop_control:` mapping; `None` when it is not one.
    fn read(node: &Node) -> Option<LoopControl> {
        node.as_map()?;
        let text = |k: &str| node.get(k).and_then(Node::scalar_text);
        Some(LoopControl {
            loop_var: text("loop_var"),
            index_var: text("index_var"),
            label: node.get("label").cloned(),
            extended: node.get("extended").cloned(),
            extended_allitems: node.get("extended_allitems").cloned(),
        })
    }

    /// The name each item is bound to.
    #[must_use]
    pub fn loop_var(this: Option<&Self>) -> &str {
        this.and_then(|c| c.loop_var.as_deref()).unwrap_or("item")
    }
}

/// The last part of a module name (`template` for
/// `ansible.builtin.template`; the name itself without a dot). A byte scan:
/// it is asked for each reached task by the analysis, the sysctl extraction
/// and the rules, many times per task, where `rsplit('.')` costs more per
/// call.
#[must_use]
pub fn short_module(module: &str) -> &str {
    match module.as_bytes().iter().rposition(|&b| b == b'.') {
        Some(dot) => &module[dot + 1..],
        None => module,
    }
}

impl Task {
    /// A task Ansible adds itself (e.g. role argument validation).
    #[must_use]
    pub fn synthetic(name: String, action: &str, span: Span) -> Self {
        Task {
            name: Some(name),
            action: action.to_string(),
            module: modules::resolve(action),
            args: Vec::new(),
            span,
            action_span: span,
            when: Vec::new(),
            loop_items: None,
            loop_kind: None,
            loop_control: None,
            register: None,
            tags: Vec::new(),
            notify: Vec::new(),
            become_: None,
            ignore_errors: None,
            vars: None,
            delegate_to: None,
            include: None,
            role_params: None,
        }
    }

    /// The argument given for an option, by canonical name (an alias finds
    /// nothing when the module's spec is known: its key was renamed).
    #[must_use]
    pub fn arg(&self, key: &str) -> Option<&Node> {
        self.args
            .iter()
            .rev()
            .find(|a| a.key == key)
            .map(|a| &a.value)
    }

    /// The argument given for an option, else the module's default for it,
    /// placed at the action key.
    #[must_use]
    pub fn arg_or_default(&self, key: &str) -> Option<Cow<'_, Node>> {
        if let Some(node) = self.arg(key) {
            return Some(Cow::Borrowed(node));
        }
        module_args::default(&self.module, key).map(|d| Cow::Owned(d.to_node(self.action_span)))
    }

    /// An option read as Ansible's `boolean()` reads it, its default applied:
    /// `None` when neither is there or the value is no literal boolean (a
    /// template, `maybe`).
    #[must_use]
    pub fn arg_bool(&self, key: &str) -> Option<bool> {
        self.arg_or_default(key)
            .and_then(|n| module_args::boolean(&n))
    }

    /// An option after the module's type check (default applied), or `None`
    /// when it is neither given nor defaulted. Without a known spec for the
    /// option, the value as written.
    #[must_use]
    pub fn arg_coerced(&self, key: &str) -> Option<Coerced> {
        let node = self.arg_or_default(key)?;
        Some(
            match module_args::spec(&self.module).and_then(|s| s.option(key)) {
                Some(opt) => module_args::coerce(opt.kind(), opt.elements(), &node),
                None => Coerced::Value(node.into_owned()),
            },
        )
    }

    /// Whether the module's argument spec is known: when it is not, `args`
    /// are as written (aliases unresolved, no defaults).
    #[must_use]
    pub fn has_arg_spec(&self) -> bool {
        module_args::has_spec(&self.module)
    }

    /// The name Ansible shows: the task name, else the action as written.
    #[must_use]
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.action)
    }
}

/// A task list item: a block or a task.
#[derive(Debug)]
pub enum Item<'a> {
    Block(Box<Block<'a>>),
    Task(Box<Task>),
}

#[derive(Debug)]
pub struct Block<'a> {
    pub name: Option<String>,
    pub span: Span,
    pub when: Vec<Condition>,
    pub vars: Option<&'a Node>,
    pub tags: Vec<String>,
    pub block: &'a [Node],
    pub rescue: &'a [Node],
    pub always: &'a [Node],
}

/// Reads a `when` value: a string, a boolean, or a list of them.
#[must_use]
pub fn conditions(node: &Node, origin: Origin) -> Vec<Condition> {
    match &node.value {
        Value::Seq(items) => items.iter().flat_map(|n| conditions(n, origin)).collect(),
        Value::Null => Vec::new(),
        Value::Map(_) => vec![Condition {
            expr: node.to_json().to_string().into(),
            span: node.span,
            origin,
        }],
        _ => vec![Condition {
            expr: node.scalar_text().unwrap_or_default().trim().into(),
            span: node.span,
            origin,
        }],
    }
}

/// A list of strings from a string (comma-separated), a list, or nothing.
#[must_use]
pub fn string_list(node: Option<&Node>) -> Vec<String> {
    match node {
        None => Vec::new(),
        Some(n) => match &n.value {
            Value::Seq(items) => items.iter().filter_map(Node::scalar_text).collect(),
            Value::Str(s) => s
                .split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect(),
            _ => n.scalar_text().into_iter().collect(),
        },
    }
}

/// Classifies and normalizes one task-list item.
///
/// # Errors
/// A diagnostic when the item is not a mapping or has no action.
pub fn read_item<'a>(
    node: &'a Node,
    diags: &mut Vec<Diagnostic>,
) -> Result<Item<'a>, Box<Diagnostic>> {
    let Some(map) = node.as_map() else {
        return Err(Box::new(
            Diagnostic::error(code::SHAPE, node.span, "a task must be a mapping").with_help(
                "write each task as `- name: ...` followed by a module, e.g. `ansible.builtin.command: ...`",
            ),
        ));
    };
    if map
        .iter()
        .any(|(k, _)| k.as_str().is_some_and(|k| k == "block"))
    {
        let list = |key: &str| node.get(key).and_then(Node::as_seq).unwrap_or(&[]);
        return Ok(Item::Block(Box::new(Block {
            name: node.get("name").and_then(Node::scalar_text),
            span: node.span,
            when: node
                .get("when")
                .map(|w| conditions(w, Origin::Block))
                .unwrap_or_default(),
            vars: node.get("vars"),
            tags: string_list(node.get("tags")),
            block: list("block"),
            rescue: list("rescue"),
            always: list("always"),
        })));
    }
    read_task(node, map, diags).map(|t| Item::Task(Box::new(t)))
}

fn read_task(
    node: &Node,
    map: &[(Node, Node)],
    diags: &mut Vec<Diagnostic>,
) -> Result<Task, Box<Diagnostic>> {
    let mut candidates: Vec<(&Node, &Node)> = Vec::new();
    let mut loop_kind = None;
    let mut loop_items = None;
    for (k, v) in map {
        let Some(key) = k.as_str() else { continue };
        if let Some(lookup) = key.strip_prefix("with_") {
            loop_kind = Some(lookup.to_string());
            loop_items = Some(v.clone());
        } else if key == "loop" {
            loop_kind = Some("loop".into());
            loop_items = Some(v.clone());
        } else if !TASK_KEYWORDS.contains(&key) && !BLOCK_KEYS.contains(&key) {
            candidates.push((k, v));
        }
    }
    // action:/local_action: carry the module inside their value.
    let (action_key, action_value, action_span, from_action) = if let Some((k, v)) = node
        .get_entry("action")
        .or_else(|| node.get_entry("local_action"))
    {
        let (module, rest) = split_action(v);
        (module, rest, k.span, true)
    } else {
        if candidates.len() > 1 {
            let names: Vec<String> = candidates.iter().map(|(k, _)| k.to_string()).collect();
            let known: Vec<&(&Node, &Node)> = candidates
                .iter()
                .filter(|(k, _)| k.as_str().is_some_and(modules::is_known))
                .collect();
            if known.len() == 1 {
                let chosen = known[0].0.to_string();
                candidates.retain(|(k, _)| k.to_string() == chosen);
            } else {
                diags.push(
                    Diagnostic::warning(
                        code::MODULE_AMBIGUOUS,
                        node.span,
                        format!("task has several possible actions: {}", names.join(", ")),
                    )
                    .with_help(
                        "keep one module per task; Ansible rejects conflicting action statements",
                    ),
                );
            }
        }
        let Some((k, v)) = candidates.first() else {
            return Err(Box::new(
                Diagnostic::error(code::SHAPE, node.span, "task has no action (module)")
                    .with_help("add the module to run, e.g. `ansible.builtin.debug: msg=...`"),
            ));
        };
        (k.to_string(), Some((*v).clone()), k.span, false)
    };
    let module = modules::resolve(&action_key);
    if let Some((release, advice)) = modules::removed(&module) {
        diags.push(
            Diagnostic::warning(
                code::ACTION_REMOVED,
                action_span,
                format!(
                    "`{action_key}` was removed from ansible-core in {release}: later releases refuse this playbook; read here as the releases before ran it"
                ),
            )
            .with_help(advice),
        );
    }
    // `args:` first: Ansible updates it with the action's own arguments,
    // which win (`ModuleArgsParser._normalize_parameters`), and `Task::arg`
    // reads the last one.
    let mut args: Vec<Arg> = node
        .get("args")
        .and_then(Node::as_map)
        .unwrap_or(&[])
        .iter()
        .map(|(k, v)| Arg {
            key: k.to_string(),
            value: v.clone(),
            alias: None,
        })
        .collect();
    args.extend(action_args(&module, action_value.as_ref()));
    if let Some(spec) = module_args::spec(&module) {
        for c in module_args::resolve_aliases(spec, &mut args) {
            for (key, span) in c.dropped {
                diags.push(
                    Diagnostic::warning(
                        code::ARG_ALIAS_CONFLICT,
                        span,
                        format!(
                            "option `{}` is set as both `{key}` and `{}`: Ansible uses `{}` and ignores this value",
                            c.option, c.winner, c.winner
                        ),
                    )
                    .with_help(format!("set `{}` once, under one name", c.option)),
                );
            }
        }
    }
    let include =
        IncludeKind::from_fqcn(&module).and_then(|kind| include_spec(kind, &args, action_span));
    let mut delegate_to = node.get("delegate_to").and_then(Node::scalar_text);
    if from_action && node.get("local_action").is_some() {
        delegate_to = Some("localhost".into());
    }
    Ok(Task {
        name: node.get("name").and_then(Node::scalar_text),
        action: action_key,
        module,
        args,
        span: node.span,
        action_span,
        when: node
            .get("when")
            .map(|w| conditions(w, Origin::Task))
            .unwrap_or_default(),
        loop_items,
        loop_kind,
        loop_control: node
            .get("loop_control")
            .and_then(LoopControl::read)
            .map(Box::new),
        register: node.get("register").and_then(Node::scalar_text),
        tags: string_list(node.get("tags")),
        notify: string_list(node.get("notify")),
        become_: node.get("become").cloned(),
        ignore_errors: node.get("ignore_errors").cloned(),
        vars: node.get("vars").cloned(),
        delegate_to,
        role_params: include
            .as_ref()
            .filter(|i| matches!(i.kind, IncludeKind::ImportRole | IncludeKind::IncludeRole))
            .and_then(|_| action_value.clone()),
        include,
    })
}

/// `action: modprobe name=x` or `action: {module: modprobe, name: x}`.
fn split_action(v: &Node) -> (String, Option<Node>) {
    match &v.value {
        Value::Str(s) => {
            let s = s.trim();
            let (module, rest) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
            let rest_node = Node {
                value: Value::Str(rest.trim().to_string()),
                ..v.clone()
            };
            (module.to_string(), Some(rest_node))
        }
        Value::Map(pairs) => {
            let module = v
                .get("module")
                .and_then(Node::scalar_text)
                .unwrap_or_default();
            let rest: Vec<(Node, Node)> = pairs
                .iter()
                .filter(|(k, _)| k.as_str() != Some("module"))
                .cloned()
                .collect();
            (
                module,
                Some(Node {
                    value: Value::Map(rest),
                    ..v.clone()
                }),
            )
        }
        _ => (v.scalar_text().unwrap_or_default(), None),
    }
}

/// Arguments from the action's value: a mapping, or a free-form string.
fn action_args(module: &str, value: Option<&Node>) -> Vec<Arg> {
    let Some(value) = value else {
        return Vec::new();
    };
    match &value.value {
        Value::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| Arg {
                key: k.to_string(),
                value: v.clone(),
                alias: None,
            })
            .collect(),
        Value::Null => Vec::new(),
        Value::Str(s) => {
            // include_tasks: file.yml has the file as its raw parameter;
            // `set_fact: a=1` sets `a`.
            modules::parse_kv(s, modules::checks_raw(module))
                .into_iter()
                .map(|(k, v)| Arg {
                    key: k,
                    value: Node {
                        value: Value::Str(v),
                        ..value.clone()
                    },
                    alias: None,
                })
                .collect()
        }
        _ => vec![Arg {
            key: "_raw_params".into(),
            value: value.clone(),
            alias: None,
        }],
    }
}

fn include_spec(kind: IncludeKind, args: &[Arg], action_span: Span) -> Option<IncludeSpec> {
    let get = |k: &str| args.iter().rev().find(|a| a.key == k);
    let target_arg = match kind {
        IncludeKind::ImportRole | IncludeKind::IncludeRole => get("name").or_else(|| get("role")),
        _ => get("file").or_else(|| get("_raw_params")),
    }?;
    let text = |k: &str| get(k).and_then(|a| a.value.scalar_text());
    Some(IncludeSpec {
        kind,
        target: target_arg.value.scalar_text()?.trim().to_string(),
        target_span: if target_arg.value.span.line == 0 {
            action_span
        } else {
            target_arg.value.span
        },
        tasks_from: text("tasks_from"),
        vars_from: text("vars_from"),
        defaults_from: text("defaults_from"),
        handlers_from: text("handlers_from"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn task(yaml: &str) -> Task {
        let doc = crate::yaml::parse(FileId(0), yaml).docs.remove(0);
        match read_item(&doc, &mut Vec::new()).expect("a task") {
            Item::Task(t) => *t,
            Item::Block(_) => panic!("a block"),
        }
    }

    #[test]
    fn short_module_is_what_rsplit_gives() {
        for m in [
            "ansible.builtin.template",
            "template",
            "",
            ".",
            "a.",
            ".b",
            "community.general.ini_file",
            "ns.coll.ré.x",
        ] {
            assert_eq!(short_module(m), m.rsplit('.').next().unwrap_or(""), "{m}");
        }
    }

    #[test]
    fn free_form_command() {
        let t = task("name: off\ncommand: /sbin/swapoff -a\nwhen: x\n");
        assert_eq!(t.module, "ansible.builtin.command");
        assert_eq!(
            t.arg("_raw_params").unwrap().as_str(),
            Some("/sbin/swapoff -a")
        );
        assert_eq!(&*t.when[0].expr, "x");
    }

    #[test]
    fn free_form_kv_module() {
        let t = task("modprobe: name=br_netfilter state=present\n");
        assert_eq!(t.module, "community.general.modprobe");
        assert_eq!(t.arg("name").unwrap().as_str(), Some("br_netfilter"));
    }

    #[test]
    fn action_and_args_forms() {
        let t = task("action: sysctl name=net.ipv4.ip_forward value=1\nargs:\n  reload: true\n");
        assert_eq!(t.module, "ansible.posix.sysctl");
        assert_eq!(t.arg("name").unwrap().as_str(), Some("net.ipv4.ip_forward"));
        assert_eq!(t.arg("reload").unwrap().as_bool(), Some(true));
        let t = task("local_action:\n  module: command\n  cmd: echo\n");
        assert_eq!(t.module, "ansible.builtin.command");
        assert_eq!(t.delegate_to.as_deref(), Some("localhost"));
    }

    #[test]
    fn includes() {
        let t = task("include_role:\n  name: a/b\n  tasks_from: x\n");
        let inc = t.include.unwrap();
        assert_eq!(inc.kind, IncludeKind::IncludeRole);
        assert_eq!(inc.target, "a/b");
        assert_eq!(inc.tasks_from.as_deref(), Some("x"));
        let t = task("ansible.builtin.import_tasks: 0010-swapoff.yml\n");
        assert_eq!(t.include.unwrap().target, "0010-swapoff.yml");
        let t = task("include_tasks:\n  file: \"{{ x }}.yml\"\n");
        assert_eq!(t.include.unwrap().target, "{{ x }}.yml");
    }

    #[test]
    fn aliases_are_read_under_canonical_names() {
        let t = task("lineinfile:\n  dest: /etc/fstab\n  regex: '^/dev/fd0'\n  state: absent\n");
        assert_eq!(t.arg("path").and_then(Node::as_str), Some("/etc/fstab"));
        assert_eq!(t.arg("dest"), None);
        assert_eq!(t.arg("regexp").and_then(Node::as_str), Some("^/dev/fd0"));
        let dest = t.args.iter().find(|a| a.key == "path").expect("path");
        assert_eq!(dest.alias.as_deref(), Some("dest"));
        assert_eq!(dest.value.span.line, 2);
        // The free-form k=v form too.
        let t = task("lineinfile: dest=/etc/x line=y\n");
        assert_eq!(t.arg("path").and_then(Node::as_str), Some("/etc/x"));
        let t = task("systemd: unit=kubelet daemon-reload=yes\n");
        assert_eq!(t.arg("name").and_then(Node::as_str), Some("kubelet"));
        assert_eq!(t.arg_bool("daemon_reload"), Some(true));
        let t = task("ansible.posix.sysctl:\n  key: vm.swappiness\n  val: 0\n");
        assert_eq!(t.arg("name").and_then(Node::as_str), Some("vm.swappiness"));
        assert_eq!(
            t.arg("value").and_then(Node::scalar_text).as_deref(),
            Some("0")
        );
        let t = task("apt:\n  pkg: [curl]\n");
        assert!(t.arg("name").is_some());
        // An unknown module keeps its arguments as written.
        let t = task("my.own.module:\n  dest: x\n");
        assert!(!t.has_arg_spec());
        assert_eq!(t.arg("dest").and_then(Node::as_str), Some("x"));
    }

    #[test]
    fn alias_and_canonical_both_set_warns_and_the_alias_wins() {
        let doc = crate::yaml::parse(FileId(0), "lineinfile:\n  path: /a\n  dest: /b\n")
            .docs
            .remove(0);
        let mut diags = Vec::new();
        let Ok(Item::Task(t)) = read_item(&doc, &mut diags) else {
            panic!("a task")
        };
        assert_eq!(t.arg("path").and_then(Node::as_str), Some("/b"));
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, code::ARG_ALIAS_CONFLICT);
        assert_eq!(diags[0].span.line, 2, "points at the ignored value");
        assert!(diags[0].message.contains("`path`"), "{}", diags[0].message);
    }

    #[test]
    fn action_arguments_win_over_the_args_keyword() {
        let t = task("sysctl: name=vm.swappiness value=1\nargs:\n  value: 2\n  reload: no\n");
        assert_eq!(t.arg("value").and_then(Node::as_str), Some("1"));
        assert_eq!(t.arg_bool("reload"), Some(false));
    }

    #[test]
    fn defaults_and_typed_reads() {
        let t = task("ansible.posix.sysctl:\n  name: net.ipv4.ip_forward\n  value: '1'\n");
        assert_eq!(t.arg("reload"), None, "defaults are not added to args");
        let reload = t.arg_or_default("reload").expect("default");
        assert_eq!(reload.as_bool(), Some(true));
        assert_eq!(reload.span, t.action_span);
        assert_eq!(t.arg_bool("reload"), Some(true));
        assert_eq!(t.arg_bool("sysctl_set"), Some(false));
        assert_eq!(
            t.arg_or_default("sysctl_file")
                .and_then(|n| n.scalar_text())
                .as_deref(),
            Some("/etc/sysctl.conf")
        );
        assert_eq!(
            t.arg_or_default("state")
                .and_then(|n| n.scalar_text())
                .as_deref(),
            Some("present")
        );
        assert_eq!(t.arg_or_default("ignoreerrorz"), None);
        let t = task("sysctl: name=x value=1 reload=no\n");
        assert_eq!(t.arg_bool("reload"), Some(false));
        let t = task("sysctl:\n  name: x\n  reload: \"{{ do_reload }}\"\n");
        assert_eq!(t.arg_bool("reload"), None);
        assert_eq!(t.arg_coerced("reload"), Some(Coerced::Unknown));
        let t = task("apt: name=curl,git state=present\n");
        let Some(Coerced::Value(names)) = t.arg_coerced("name") else {
            panic!("a list")
        };
        assert_eq!(names.to_json(), serde_json::json!(["curl", "git"]));
    }

    #[test]
    fn when_list_and_loop() {
        let t = task("debug: msg=x\nwhen:\n  - a\n  - b | bool\nwith_items: [1, 2]\n");
        assert_eq!(t.when.len(), 2);
        assert_eq!(&*t.when[1].expr, "b | bool");
        assert_eq!(t.loop_kind.as_deref(), Some("items"));
    }
}
