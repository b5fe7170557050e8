//! Playbooks and plays: `import_playbook` chains (with their `vars` and
//! `when`), then each play's variables, `vars_files` and sections in
//! Ansible's order (`pre_tasks`, `roles`, `tasks`, `post_tasks`,
//! `handlers`), and the play name and hosts templated last.

use super::super::task::{self, Condition, Origin};
use super::budget::{Budget, MAX_INCLUDE_DEPTH, Spent};
use super::builder::{Builder, Ctx, PlayState, on_stack};
use super::model::{LayerKind, Play, PlayContext, Section, VarLayer, is_templated};
use super::roles::role_entry;
use crate::diagnostic::{Diagnostic, code};
use crate::source::Span;
use crate::yaml::{Node, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A play found in the playbook chain, with what it inherits, before it is
/// expanded (plays are expanded in parallel).
pub(super) struct PlaySpec {
    pub(super) node: Node,
    pub(super) basedir: PathBuf,
    pub(super) layers: Vec<Arc<VarLayer>>,
    pub(super) when: Vec<Condition>,
    pub(super) stack: Vec<PathBuf>,
}

impl Builder<'_> {
    pub(super) fn expand_playbook(
        &mut self,
        path: &Path,
        inherited_layers: &[Arc<VarLayer>],
        inherited_when: &[Condition],
        stack: &mut Vec<PathBuf>,
        plays: &mut Vec<PlaySpec>,
        from: Option<Span>,
    ) {
        let key = self.loader.fs.canonical(path);
        if on_stack(stack, &key) {
            if let Some(span) = from {
                self.push_diag(
                    Diagnostic::error(
                        code::INCLUDE_CYCLE,
                        span,
                        format!(
                            "import_playbook cycle: {} imports itself",
                            self.display(path)
                        ),
                    )
                    .with_help("remove the import that closes the cycle"),
                );
            }
            return;
        }
        if stack.len() >= MAX_INCLUDE_DEPTH {
            return;
        }
        let loaded = self.load(path);
        let Some(doc) = loaded.doc() else {
            if loaded.ok() {
                self.push_diag(Diagnostic::warning(
                    code::SHAPE,
                    Span::file_start(loaded.id),
                    "empty playbook",
                )
                .with_help("write at least one play (`- hosts: ...`) in it, or stop importing it (or passing it with --playbook)"));
            }
            return;
        };
        let Some(items) = doc.as_seq() else {
            self.push_diag(
                Diagnostic::error(code::SHAPE, doc.span, "a playbook must be a list of plays")
                    .with_help("start each play with `- hosts: ...` or `- import_playbook: ...`"),
            );
            return;
        };
        stack.push(key);
        let basedir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for item in items {
            let import = item
                .get_entry("import_playbook")
                .or_else(|| item.get_entry("ansible.builtin.import_playbook"));
            if let Some((_, target)) = import {
                let Some(target_s) = target.scalar_text() else {
                    continue;
                };
                let mut layers = inherited_layers.to_vec();
                if let Some(v) = item.get("vars").filter(|v| v.as_map().is_some()) {
                    layers.push(Arc::new(VarLayer {
                        kind: LayerKind::PlaybookImportVars,
                        node: v.clone(),
                    }));
                }
                let mut when = inherited_when.to_vec();
                if let Some(w) = item.get("when") {
                    when.extend(task::conditions(w, Origin::Playbook));
                }
                let target_s = if is_templated(&target_s) {
                    match self
                        .resolver
                        .resolve(&target_s, &PlayContext { layers: &layers }, &[])
                    {
                        Some(t) => t,
                        None => {
                            self.unresolved(
                                "import_playbook",
                                &target_s,
                                target.span,
                                "templated playbook name".into(),
                            );
                            continue;
                        }
                    }
                } else {
                    target_s
                };
                let target_path = basedir.join(&target_s);
                if !self.loader.fs.is_file(&target_path) {
                    self.push_diag(
                        Diagnostic::error(
                            code::INCLUDE_NOT_FOUND,
                            target.span,
                            format!("imported playbook `{target_s}` not found"),
                        )
                        .with_help(
                            "paths in import_playbook are relative to the importing playbook",
                        ),
                    );
                    continue;
                }
                self.expand_playbook(
                    &target_path,
                    &layers,
                    &when,
                    stack,
                    plays,
                    Some(target.span),
                );
            } else if item.get("hosts").is_some() {
                plays.push(PlaySpec {
                    node: item.clone(),
                    basedir: basedir.clone(),
                    layers: inherited_layers.to_vec(),
                    when: inherited_when.to_vec(),
                    stack: stack.clone(),
                });
            } else {
                self.push_diag(
                    Diagnostic::error(
                        code::SHAPE,
                        item.span,
                        "a play needs `hosts:` (or use `import_playbook:`)",
                    )
                    .with_help("add `hosts: all` or the group this play targets"),
                );
            }
        }
        stack.pop();
    }

    /// Expands one play within `budget`.
    pub(super) fn play(&mut self, spec: &PlaySpec, budget: Budget) -> (Play, Spent) {
        let PlaySpec {
            node,
            basedir,
            layers: inherited_layers,
            when: inherited_when,
            stack,
        } = spec;
        let hosts = match node.get("hosts").map(|h| &h.value) {
            Some(Value::Seq(items)) => items
                .iter()
                .filter_map(Node::scalar_text)
                .collect::<Vec<_>>()
                .join(","),
            _ => node
                .get("hosts")
                .and_then(Node::scalar_text)
                .unwrap_or_default(),
        };
        let mut state = PlayState::new(inherited_layers.clone(), budget);
        state.layers.push(Arc::new(magic_layer(basedir, node.span)));
        if let Some(v) = node.get("vars")
            && v.as_map().is_some()
        {
            state.layers.push(Arc::new(VarLayer {
                kind: LayerKind::PlayVars,
                node: v.clone(),
            }));
        }
        if let Some(vf) = node.get("vars_files") {
            let list: Vec<&Node> = match &vf.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![vf],
            };
            for f in list {
                let Some(name) = f.scalar_text() else {
                    continue;
                };
                if is_templated(&name) {
                    self.unresolved(
                        "vars_files",
                        &name,
                        f.span,
                        "templated vars file name".into(),
                    );
                    continue;
                }
                let p = basedir.join(&name);
                if !self.loader.fs.is_file(&p) {
                    self.push_diag(Diagnostic::warning(
                        code::INCLUDE_NOT_FOUND,
                        f.span,
                        format!("vars file `{name}` not found"),
                    )
                    .with_help("vars_files paths are relative to the playbook's directory; fix the path or create the file"));
                    continue;
                }
                let l = self.load(&p);
                if let Some(doc) = l.doc().filter(|d| d.as_map().is_some()) {
                    state.layers.push(Arc::new(VarLayer {
                        kind: LayerKind::PlayVarsFile,
                        node: doc.clone(),
                    }));
                }
            }
        }
        let base = Ctx {
            conditions: inherited_when[..].into(),
            scopes: Arc::new([]),
            roles: Arc::new([]),
            role_path: None,
            dynamic: false,
            section: Section::PreTasks,
            stack: stack.clone(),
            basedir: basedir.clone(),
            blocks: Arc::new([]),
            tags: task::string_list(node.get("tags")).into(),
            duplicate: false,
            outer_loops: Arc::new([]),
        };
        let sections = [
            ("pre_tasks", Section::PreTasks),
            ("roles", Section::Roles),
            ("tasks", Section::Tasks),
            ("post_tasks", Section::PostTasks),
            ("handlers", Section::Handlers),
        ];
        for (key, section) in sections {
            let Some(list) = node.get(key) else { continue };
            if list.is_null() {
                continue;
            }
            let Some(items) = list.as_seq() else {
                self.push_diag(
                    Diagnostic::error(code::SHAPE, list.span, format!("`{key}` must be a list"))
                        .with_help(format!(
                            "write `{key}:` as a list, one `- ...` item per entry"
                        )),
                );
                continue;
            };
            let ctx = Ctx {
                section,
                ..base.clone()
            };
            if section == Section::Roles {
                for item in items {
                    match role_entry(item, Origin::Role) {
                        Some(entry) => {
                            self.run_role(&entry, &ctx, &mut state, None);
                        }
                        None => self.push_diag(
                            Diagnostic::error(
                                code::SHAPE,
                                item.span,
                                "a role entry needs `role:` or `name:`",
                            )
                            .with_help("write `- role: name` or `- name`"),
                        ),
                    }
                }
            } else {
                self.expand_items(items, &ctx, &mut state);
            }
        }
        // Ansible templates the play name and hosts with the play's variables.
        let render = |s: String| -> String {
            if is_templated(&s) {
                self.resolver
                    .resolve(
                        &s,
                        &PlayContext {
                            layers: &state.layers,
                        },
                        &[],
                    )
                    .unwrap_or(s)
            } else {
                s
            }
        };
        let name = node.get("name").and_then(Node::scalar_text).map(render);
        let hosts = render(hosts);
        let spent = state.spent();
        let play = Play {
            name,
            hosts,
            span: node.span,
            layers: state.layers,
            tasks: state.tasks,
            handlers: state.handlers,
        };
        (play, spent)
    }
}

/// The magic variables of a play read from `basedir` (`playbook_dir`: the
/// directory of its playbook), defined at the play's span. Ansible gives
/// the absolute path; preflint keeps the path as it was given (names the
/// same directory), so that paths built on it read alike in every output
/// and on every machine.
fn magic_layer(basedir: &Path, span: Span) -> VarLayer {
    let dir = if basedir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        basedir
    };
    // Unsafe: a directory name is never templated.
    let text = |s: String| Node {
        value: Value::Str(s),
        span,
        tag: crate::yaml::Tag::Unsafe,
        quoted: true,
    };
    VarLayer {
        kind: LayerKind::Magic,
        node: Node {
            value: Value::Map(vec![(
                text("playbook_dir".into()),
                text(dir.to_string_lossy().into_owned()),
            )]),
            span,
            tag: crate::yaml::Tag::None,
            quoted: false,
        },
    }
}
