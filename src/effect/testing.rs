//! A [`TaskView`] test double: one task written as YAML, the way roles
//! write it (`community.general.modprobe: {name: br_netfilter}`), with
//! its arguments taken as already rendered.
//!
//! It does what the analysis does not need to do here: no variables, no
//! rendering (`render` answers `None`), no aliases resolved; role files
//! come from a small map given by the test.

use super::{Effect, TaskView, derive};
use serde_json::Value;
use std::sync::Arc;

pub(crate) struct FakeTask {
    module: String,
    args: serde_json::Map<String, Value>,
    /// Each argument's text, as [`TaskView::arg`] gives it.
    texts: Vec<(String, String)>,
    command: Option<String>,
    files: Vec<(String, String, Arc<str>)>,
    notify: Vec<String>,
}

impl FakeTask {
    /// A task of `module` with `args` (a JSON object, or a string for a
    /// free-form module such as `command`).
    pub(crate) fn new(module: &str, args: Value) -> Self {
        let mut map = serde_json::Map::new();
        let mut command = None;
        match args {
            // Keys under their canonical names, as the task model gives them.
            Value::Object(m) => {
                map = m
                    .into_iter()
                    .map(|(k, v)| {
                        let k = crate::ansible::module_args::canonical_name(module, &k)
                            .map_or(k, str::to_string);
                        (k, v)
                    })
                    .collect();
            }
            Value::String(s) => {
                command = Some(s.clone());
                map.insert("_raw_params".to_string(), Value::String(s));
            }
            Value::Null => {}
            other => panic!("task arguments must be a mapping or a string: {other}"),
        }
        if command.is_none()
            && let Some(Value::String(c)) = map.get("cmd")
        {
            command = Some(c.clone());
        }
        let texts = map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect();
        FakeTask {
            module: module.to_string(),
            args: map,
            texts,
            command,
            files: Vec::new(),
            notify: Vec::new(),
        }
    }

    /// A task from YAML: a mapping of one module to its arguments, and
    /// optionally `notify` (a name or a list).
    pub(crate) fn yaml(src: &str) -> Self {
        let doc: Value = serde_yaml::from_str(src).expect("test task is YAML");
        let Value::Object(task) = doc else {
            panic!("test task is a mapping: {src}")
        };
        let mut notify = Vec::new();
        let mut module = None;
        for (k, v) in task {
            if k == "notify" {
                match v {
                    Value::String(s) => notify.push(s),
                    Value::Array(items) => notify.extend(
                        items
                            .into_iter()
                            .filter_map(|i| i.as_str().map(str::to_string)),
                    ),
                    _ => {}
                }
            } else {
                assert!(module.is_none(), "one module a task: {src}");
                module = Some((k, v));
            }
        }
        let (name, args) = module.expect("a module");
        let mut t = FakeTask::new(&name, args);
        t.notify = notify;
        t
    }

    /// A file the role ships (`sub` is `files` or `templates`).
    pub(crate) fn with_file(mut self, sub: &str, src: &str, text: &str) -> Self {
        self.files
            .push((sub.to_string(), src.to_string(), Arc::from(text)));
        self
    }

    /// Every effect derivation finds.
    pub(crate) fn effects(&self) -> Vec<Effect> {
        derive(self)
    }
}

impl TaskView for FakeTask {
    fn module(&self) -> &str {
        &self.module
    }

    fn arg(&self, key: &str) -> Option<&str> {
        self.texts
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn arg_value(&self, key: &str) -> Option<Value> {
        self.args.get(key).filter(|v| !v.is_null()).cloned()
    }

    fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    fn role_file(&self, sub: &str, src: &str) -> Option<Arc<str>> {
        self.files
            .iter()
            .find(|(s, p, _)| s == sub && p == src)
            .map(|(_, _, t)| Arc::clone(t))
    }

    fn render(&self, _text: &str) -> Option<String> {
        None
    }

    fn notify(&self) -> &[String] {
        &self.notify
    }
}

/// The effects of one YAML task, as one line each (`kind field=value ...
/// @timing`), for assertions that read like the task.
pub(crate) fn lines(src: &str) -> Vec<String> {
    FakeTask::yaml(src).effects().iter().map(line).collect()
}

/// One effect as a line: its kind, its set fields in the catalog's order,
/// and when it holds (`now`, `boot`, `now+boot`, `-`).
pub(crate) fn line(e: &Effect) -> String {
    let kind = e.kind.kind();
    let mut out = kind.name().to_string();
    for f in kind.fields() {
        if *f == "content" {
            continue;
        }
        if let Some(v) = e.field(f) {
            out.push_str(&format!(" {f}={v}"));
        }
    }
    out.push_str(match (e.timing.now, e.timing.boot) {
        (true, true) => " @now+boot",
        (true, false) => " @now",
        (false, true) => " @boot",
        (false, false) => " @-",
    });
    out
}
