use super::*;
use crate::ansible::project::{LayerKind, PlayContext, TemplateResolver, VarLayer};
use crate::source::SourceMap;
use std::sync::Arc;

fn layer(kind: LayerKind, text: &str) -> Arc<VarLayer> {
    let sources = SourceMap::new(std::path::Path::new("/"));
    let id = sources.add(std::path::Path::new("/vars.yml"), text.into());
    let doc = crate::yaml::parse(id, text).docs.remove(0);
    Arc::new(VarLayer { kind, node: doc })
}

fn task_vars<'a>(
    play: &'a PlayVars,
    scopes: &'a [Arc<VarLayer>],
    item: Option<serde_json::Value>,
) -> TaskVars<'a> {
    let mut tv = TaskVars::new(play, None);
    tv.scopes = scopes;
    if let Some(item) = item {
        tv.bound = vec![("item".into(), LookupOwned::Value(item))];
    }
    tv
}

fn value(tv: &TaskVars<'_>, name: &str) -> Option<serde_json::Value> {
    match &tv.resolve(name).lookup {
        LookupOwned::Value(v) => Some(v.clone()),
        _ => None,
    }
}

fn play() -> PlayVars {
    let defaults = layer(
        LayerKind::RoleDefaults { role: "r".into() },
        "a: \"{{ b }}-x\"\nb: one\nc: \"{{ item }}\"\nd: \"{{ a }}\"\n",
    );
    PlayVars::from_parts(&[defaults], std::iter::empty(), &ExtraVars::default())
}

/// Names are found by their hash and checked against the key of their
/// first definition: every one of many names, and only those, is found.
#[test]
fn the_index_finds_every_name_by_its_key() {
    let text: String = (0..3000).map(|i| format!("n{i}: {i}\n")).collect();
    let more: String = (0..3000)
        .step_by(7)
        .map(|i| format!("n{i}: again\n"))
        .collect();
    let index = DefIndex::new(
        &[
            layer(LayerKind::RoleDefaults { role: "r".into() }, &text),
            layer(LayerKind::PlayVars, &more),
        ],
        &ExtraVars::default(),
    );
    for i in 0..3000 {
        let refs = index.refs(&format!("n{i}"));
        assert_eq!(refs.len(), if i % 7 == 0 { 2 } else { 1 }, "n{i}");
        assert_eq!(index.name_of(refs[0]), Some(format!("n{i}").as_str()));
    }
    for absent in ["n3000", "n", "", "n01"] {
        assert!(index.refs(absent).is_empty(), "{absent}");
    }
}

#[test]
fn the_index_lists_each_names_definitions_lowest_precedence_first() {
    // Layers given out of precedence order: play vars (12) before role
    // defaults (1, in load order); extra vars (30) above all.
    let play = layer(LayerKind::PlayVars, "a: play\nb: only\n");
    let defaults = layer(
        LayerKind::RoleDefaults { role: "r".into() },
        "a: default\nc: 1\n",
    );
    let later = layer(LayerKind::RoleDefaults { role: "s".into() }, "a: again\n");
    let extra = ExtraVars {
        vars: vec![("a".into(), layer(LayerKind::PlayVars, "extra").node.clone())],
    };
    let pv = PlayVars::from_parts(&[play, defaults, later], std::iter::empty(), &extra);
    let seen = |name: &str| -> Vec<(u8, String)> {
        pv.definitions(name)
            .into_iter()
            .map(|d| (d.rank, d.value.scalar_text().unwrap_or_default()))
            .collect()
    };
    assert_eq!(
        seen("a"),
        [
            (1, "default".to_string()),
            (1, "again".to_string()),
            (12, "play".to_string()),
            (30, "extra".to_string()),
        ]
    );
    assert_eq!(seen("b"), [(12, "only".to_string())]);
    assert_eq!(seen("c"), [(1, "1".to_string())]);
    assert!(seen("missing").is_empty());
}

#[test]
fn play_level_results_are_shared_only_with_tasks_that_see_the_same() {
    let pv = play();
    let plain = task_vars(&pv, &[], None);
    assert_eq!(value(&plain, "d"), Some("one-x".into()));
    // A task whose vars redefine a name the shared result rests on (two
    // levels down) must not reuse it.
    let scope = [layer(LayerKind::TaskVars, "b: two\n")];
    let scoped = task_vars(&pv, &scope, None);
    assert_eq!(value(&scoped, "d"), Some("two-x".into()));
    // ... and its result is not shared with the next plain task.
    let again = task_vars(&pv, &[], None);
    assert_eq!(value(&again, "a"), Some("one-x".into()));
    // A scope that defines unrelated names reuses the play-level result.
    let other = [layer(LayerKind::TaskVars, "z: 1\n")];
    let unrelated = task_vars(&pv, &other, None);
    assert_eq!(value(&unrelated, "d"), Some("one-x".into()));
}

#[test]
fn loop_item_results_are_not_shared() {
    let pv = play();
    let first = task_vars(&pv, &[], Some("i1".into()));
    assert_eq!(value(&first, "c"), Some("i1".into()));
    let second = task_vars(&pv, &[], Some("i2".into()));
    assert_eq!(value(&second, "c"), Some("i2".into()));
    let plain = task_vars(&pv, &[], None);
    assert_eq!(value(&plain, "c"), None);
}

#[test]
fn shared_results_never_reach_past_the_depth_guard() {
    // v0 -> v1 -> ... -> v39: resolving v0 afresh hits the depth guard,
    // resolving v10 does not. Whichever task comes first, v0 is the same.
    let mut text = String::new();
    for i in 0..39 {
        text.push_str(&format!("v{i}: \"{{{{ v{} }}}}\"\n", i + 1));
    }
    text.push_str("v39: end\n");
    let fresh = |names: &[&str]| {
        let l = layer(LayerKind::RoleDefaults { role: "r".into() }, &text);
        let pv = PlayVars::from_parts(&[l], std::iter::empty(), &ExtraVars::default());
        let mut out = Vec::new();
        for n in names {
            let tv = task_vars(&pv, &[], None);
            out.push(value(&tv, n));
        }
        out
    };
    let alone = fresh(&["v0"]);
    assert_eq!(alone, vec![None]);
    let after = fresh(&["v10", "v0"]);
    assert_eq!(after, vec![Some("end".into()), None]);
}

/// Role defaults `a: "{{ b }}-x"`, `b: one`, shared by the plays of a run.
fn run_defaults() -> Arc<VarLayer> {
    layer(
        LayerKind::RoleDefaults { role: "r".into() },
        "a: \"{{ b }}-x\"\nb: one\n",
    )
}

/// A play of `run` over `defaults`, with play vars `extra` when given.
fn run_play(run: &Arc<RunShared>, defaults: &Arc<VarLayer>, extra: Option<&str>) -> PlayVars {
    let mut layers = vec![Arc::clone(defaults)];
    if let Some(text) = extra {
        layers.push(layer(LayerKind::PlayVars, text));
    }
    PlayVars::from_parts(&layers, std::iter::empty(), &ExtraVars::default())
        .with_run(Arc::clone(run))
}

#[test]
fn the_resolver_indexes_each_list_of_play_layers_once() {
    let r = VarsResolver::new(ExtraVars::default());
    let defaults = run_defaults();
    let play = layer(LayerKind::PlayVars, "b: two\n");
    let resolve = |layers: &[Arc<VarLayer>], scopes: &[Arc<VarLayer>]| {
        r.resolve("{{ a }}", &PlayContext { layers }, scopes)
    };
    let first = [Arc::clone(&defaults)];
    assert_eq!(resolve(&first, &[]).as_deref(), Some("one-x"));
    // A task scope of its own does not reach the shared index.
    let scope = [layer(LayerKind::TaskVars, "b: three\n")];
    assert_eq!(resolve(&first, &scope).as_deref(), Some("three-x"));
    assert_eq!(resolve(&first, &[]).as_deref(), Some("one-x"));
    let longer = [Arc::clone(&defaults), play];
    assert_eq!(resolve(&longer, &[]).as_deref(), Some("two-x"));
    assert_eq!(r.plays.lock().expect("lock").len(), 2);
}

#[test]
fn run_wide_results_hold_only_where_the_same_definitions_win() {
    let run = Arc::new(RunShared::default());
    let defaults = run_defaults();
    let play = |extra: Option<&str>| run_play(&run, &defaults, extra);
    let first = play(None);
    assert_eq!(
        value(&task_vars(&first, &[], None), "a"),
        Some("one-x".into())
    );
    // Another play whose vars override a name `a` rests on.
    let other = play(Some("b: two\n"));
    assert_eq!(
        value(&task_vars(&other, &[], None), "a"),
        Some("two-x".into())
    );
    // ... and one that overrides nothing it rests on.
    let same = play(Some("c: 3\n"));
    assert_eq!(
        value(&task_vars(&same, &[], None), "a"),
        Some("one-x".into())
    );
    assert_eq!(run.0.lock().expect("lock")["a"].len(), 2);
}

#[test]
fn run_wide_renders_hold_only_where_the_same_definitions_win() {
    let run = Arc::new(RunShared::default());
    let defaults = run_defaults();
    let play = |extra: Option<&str>| run_play(&run, &defaults, extra);
    let arg = layer(LayerKind::TaskVars, "dest: \"/etc/{{ a }}.conf\"\n");
    let dest = arg.node.get("dest").expect("dest").clone();
    let render =
        |pv: &PlayVars, scopes: &[Arc<VarLayer>], item: Option<serde_json::Value>| match task_vars(
            pv, scopes, item,
        )
        .value(&dest)
        {
            LookupOwned::Value(v) => Some(v),
            _ => None,
        };
    let first = play(None);
    assert_eq!(render(&first, &[], None), Some("/etc/one-x.conf".into()));
    assert_eq!(
        run.1.lock().expect("lock")[dest.as_str().expect("str")].len(),
        1
    );
    // Another play overriding a name two levels down renders afresh.
    let other = play(Some("b: two\n"));
    assert_eq!(render(&other, &[], None), Some("/etc/two-x.conf".into()));
    // A task whose own vars define such a name, in the first play.
    let scope = [layer(LayerKind::TaskVars, "b: three\n")];
    assert_eq!(
        render(&first, &scope, None),
        Some("/etc/three-x.conf".into())
    );
    // A loop item is the task's own: `b` as the item is not shared either.
    let looped = layer(LayerKind::TaskVars, "dest: \"{{ item }}-{{ a }}\"\n");
    let node = looped.node.get("dest").expect("dest").clone();
    let tv = task_vars(&first, &[], Some("i".into()));
    assert!(matches!(tv.value(&node), LookupOwned::Value(v) if v == "i-one-x"));
    let tv = task_vars(&first, &[], Some("j".into()));
    assert!(matches!(tv.value(&node), LookupOwned::Value(v) if v == "j-one-x"));
    // A play where the same definitions win takes the first render.
    let same = play(Some("c: 3\n"));
    assert_eq!(render(&same, &[], None), Some("/etc/one-x.conf".into()));
    assert_eq!(
        run.1.lock().expect("lock")[dest.as_str().expect("str")].len(),
        2
    );
}

#[test]
fn run_wide_renders_over_set_fact_names_hold_where_the_same_sites_set_them() {
    let run = Arc::new(RunShared::default());
    let defaults = run_defaults();
    // `f` has no static definition: the play's `set_fact` tasks give it.
    let sites = layer(LayerKind::TaskVars, "s1: one\ns2: two\ns3: \"{{ b }}\"\n");
    let site = |k: &str| {
        let n = sites.node.get(k).expect("site").clone();
        (n.span, n)
    };
    let play = |set: &[&str]| {
        let mut pv = run_play(&run, &defaults, None);
        pv.set_facts
            .insert("f".into(), set.iter().map(|k| site(k)).collect());
        pv
    };
    let arg = layer(LayerKind::TaskVars, "dest: \"/etc/{{ f }}.conf\"\n");
    let dest = arg.node.get("dest").expect("dest").clone();
    let render = |pv: &PlayVars| match task_vars(pv, &[], None).value(&dest) {
        LookupOwned::Value(v) => Some(v),
        _ => None,
    };
    let variants = || run.1.lock().expect("lock")[dest.as_str().expect("str")].len();
    assert_eq!(render(&play(&["s1"])), Some("/etc/one.conf".into()));
    // The same site in another play: the render is taken, not redone.
    assert_eq!(render(&play(&["s1"])), Some("/etc/one.conf".into()));
    assert_eq!(variants(), 1);
    // Another literal is another value.
    assert_eq!(render(&play(&["s2"])), Some("/etc/two.conf".into()));
    assert_eq!(variants(), 2);
    // Sites that disagree, or a templated one, leave it to run time,
    // whichever sites they are.
    assert_eq!(render(&play(&["s1", "s2"])), None);
    assert_eq!(render(&play(&["s3"])), None);
    assert_eq!(variants(), 3);
}
