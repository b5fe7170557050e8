//! Replaying the playbook's writes over the baseline: the live value right
//! after the playbook and the outcome of the next boot for every key.
//!
//! Each write costs about the size of what it changes, not the size of the
//! files: the file model indexes lines by key, and applications are
//! recorded and worked out per key (`live.rs`).

use super::baseline::Baseline;
use super::conf::{COMPAT_LINK, is_glob, normalize_key, normalize_path, resolve_link_target};
use super::engine::{Content, Entry, FileSet, Globs, KeyBoot, Resolved, evaluate};
use super::live::LiveValues;
use super::{BootOutcome, Engine, KeyResult, Live, Write, WriteKind};
use std::collections::{BTreeMap, BTreeSet};

/// One complete replay under one assumption about the compatibility link.
struct Run {
    now: BTreeMap<String, Live>,
    /// Indexed like [`Engine::ALL`].
    boot: [BTreeMap<String, KeyBoot>; 2],
}

/// Computes, for every key named in the baseline or the writes (sorted by
/// key), the live value right after the playbook and the value after the
/// next boot under each engine. `writes` are in execution order.
///
/// When the baseline does not say whether `/etc/sysctl.d/99-sysctl.conf ->
/// ../sysctl.conf` exists, everything is computed both ways; outcomes that
/// differ are reported per assumption (`with_link`), the others once.
#[must_use]
pub fn simulate(baseline: &Baseline, writes: &[Write]) -> Vec<KeyResult> {
    let base = baseline.file_set();
    let mut tracked = base.keys();
    for w in writes {
        if let WriteKind::Persist { key, .. }
        | WriteKind::Remove { key, .. }
        | WriteKind::SetLive { key, .. } = &w.kind
        {
            tracked.insert(normalize_key(key));
        }
    }
    tracked.retain(|k| !k.is_empty());
    let globs = Globs::new(&tracked);

    let scenarios = if baseline.link_decided() {
        vec![(None, base)]
    } else {
        let mut with = base.clone();
        with.link(COMPAT_LINK, "../sysctl.conf");
        vec![(Some(true), with), (Some(false), base)]
    };
    let mut runs: Vec<(Option<bool>, Run)> = scenarios
        .into_iter()
        .map(|(assumption, files)| {
            (
                assumption,
                replay(files, baseline.boot_engine(), writes, &tracked, &globs),
            )
        })
        .collect();
    tracked.iter().map(|key| assemble(key, &mut runs)).collect()
}

fn path(p: &str) -> String {
    normalize_path(p).unwrap_or_else(|| p.to_string())
}

fn replay(
    mut files: FileSet,
    boot_engine: Engine,
    writes: &[Write],
    tracked: &BTreeSet<String>,
    globs: &Globs,
) -> Run {
    let mut live = LiveValues::new(globs);
    live.boot(evaluate(
        boot_engine,
        &files.listing(boot_engine),
        tracked,
        globs,
    ));
    // Before each change, the keys whose value an earlier application may
    // have set are worked out, with the files as they still are.
    for (stamp, w) in (1u64..).zip(writes) {
        let ev = || Some(w.evidence.clone());
        match &w.kind {
            WriteKind::Persist { file, key, value } => {
                let (file, key) = (path(file), normalize_key(key));
                if let Some(target) = files.write_target(&file) {
                    if live.engine_pending() && !files.has_entry(&target) {
                        let new = Entry::Content(Content::default());
                        live.settle_files(
                            &files,
                            &files.reading_changes(&target, Some(&new)),
                            stamp,
                        );
                    }
                    live.settle_key(&files, &key, stamp);
                }
                files.persist(&file, &key, value, ev(), w.conditional);
            }
            WriteKind::Remove { file, key } => {
                let (file, key) = (path(file), normalize_key(key));
                if files
                    .write_target(&file)
                    .is_some_and(|t| files.content(&t).is_some())
                {
                    live.settle_key(&files, &key, stamp);
                }
                files.remove_key(&file, &key);
            }
            WriteKind::DeleteFile { file } => {
                let file = path(file);
                reshape(&mut live, &files, &file, None, stamp);
                files.delete(&file);
                live.forget_file(&file);
            }
            WriteKind::Link { file, target } => {
                let file = path(file);
                let new = Entry::Link {
                    target: resolve_link_target(&file, target),
                };
                reshape(&mut live, &files, &file, Some(&new), stamp);
                files.link(&file, target);
                live.forget_file(&file);
            }
            WriteKind::SetLive { key, value } => {
                let set = Live {
                    value: Some(value.clone()),
                    by: ev(),
                    file: None,
                    conditional: w.conditional,
                };
                live.set(normalize_key(key), stamp, set);
            }
            WriteKind::ApplyFile { file } => {
                // `sysctl -p FILE` is procps, whatever boots the host.
                let file = path(file);
                if let Resolved::Content(content) = files.resolve(&file) {
                    live.applied_file(content, stamp, file, w);
                }
            }
            WriteKind::ApplyAll { engine } => live.applied_all(*engine, stamp, w),
        }
    }
    let boot = Engine::ALL.map(|e| evaluate(e, &files.listing(e), tracked, globs));
    Run {
        now: live.finish(&files, tracked),
        boot,
    }
}

/// Before the entry at `path` becomes `new` (`None`: removed), works out the
/// keys whose value depends on it: those of the regular file there, which
/// goes (if it was applied), and once everything has been applied, those of
/// every file whose reading changes.
fn reshape(live: &mut LiveValues<'_>, files: &FileSet, path: &str, new: Option<&Entry>, now: u64) {
    if live.engine_pending() {
        live.settle_files(files, &files.reading_changes(path, new), now);
    } else if live.file_pending(path) {
        live.settle_files(files, &BTreeSet::from([path.to_string()]), now);
    }
}

/// The result for `key`, taken out of the runs.
fn assemble(key: &str, runs: &mut [(Option<bool>, Run)]) -> KeyResult {
    let live_of = |r: &mut Run| r.now.remove(key).unwrap_or_default();
    let now = live_of(&mut runs[0].1);
    let now_without_link = runs
        .get_mut(1)
        .map(|(_, r)| live_of(r))
        .filter(|alt| *alt != now);
    let mut boot = Vec::new();
    for (i, engine) in Engine::ALL.into_iter().enumerate() {
        let outcomes: Vec<(Option<bool>, KeyBoot)> = runs
            .iter_mut()
            .map(|(assumption, r)| (*assumption, r.boot[i].remove(key).unwrap_or_default()))
            .collect();
        let same = outcomes.windows(2).all(|w| w[0].1 == w[1].1);
        for (assumption, kb) in outcomes {
            boot.push(BootOutcome {
                engine,
                with_link: if same { None } else { assumption },
                value: kb.value,
                winner: kb.winner,
                overridden: kb.overridden,
            });
            if same {
                break;
            }
        }
    }
    KeyResult {
        key: key.to_string(),
        glob: is_glob(key),
        now: now.value,
        now_by: now.by,
        now_file: now.file,
        now_conditional: now.conditional,
        now_without_link,
        boot,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Evidence, SYSCTL_CONF};
    use super::*;

    const FWD: &str = "net.ipv4.ip_forward";
    const LINK: &str = COMPAT_LINK;

    fn ev(task: &str) -> Evidence {
        Evidence {
            file: "roles/x/tasks/main.yml".into(),
            line: 7,
            task: task.into(),
        }
    }

    fn w(task: &str, kind: WriteKind) -> Write {
        Write {
            kind,
            evidence: ev(task),
            conditional: false,
        }
    }

    fn persist(file: &str, key: &str, value: &str) -> Write {
        w(
            &format!("persist {key} in {file}"),
            WriteKind::Persist {
                file: file.into(),
                key: key.into(),
                value: value.into(),
            },
        )
    }

    fn apply_file(file: &str) -> Write {
        w("reload", WriteKind::ApplyFile { file: file.into() })
    }

    fn set_live(key: &str, value: &str) -> Write {
        w(
            "sysctl -w",
            WriteKind::SetLive {
                key: key.into(),
                value: value.into(),
            },
        )
    }

    fn get<'a>(rs: &'a [KeyResult], key: &str) -> &'a KeyResult {
        rs.iter()
            .find(|r| r.key == key)
            .unwrap_or_else(|| panic!("no result for {key}: {rs:#?}"))
    }

    /// The only outcome for `engine` (the link question is decided or moot).
    fn only(r: &KeyResult, engine: Engine) -> &BootOutcome {
        let v: Vec<&BootOutcome> = r.boot.iter().filter(|b| b.engine == engine).collect();
        assert_eq!(
            v.len(),
            1,
            "expected one outcome for {engine:?}: {:#?}",
            r.boot
        );
        assert_eq!(v[0].with_link, None);
        v[0]
    }

    /// A host without the compatibility link (decided).
    fn no_link_host() -> Baseline {
        Baseline::empty().complete()
    }

    fn debian() -> Baseline {
        Baseline::from_catalog(&["debian".into()]).unwrap()
    }

    #[test]
    fn later_file_beats_99_sysctl_at_boot_while_reload_sets_now() {
        // A hardening file sorts after 99-sysctl.conf (`z` > `9`); the
        // playbook writes 99-sysctl.conf (a regular file here) and reloads it.
        let base = no_link_host().with_file(
            "/etc/sysctl.d/zz-hardening.conf",
            "net.ipv4.ip_forward = 0\n",
            "test",
        );
        let writes = [
            persist("/etc/sysctl.d/99-sysctl.conf", FWD, "1"),
            apply_file("/etc/sysctl.d/99-sysctl.conf"),
        ];
        let rs = simulate(&base, &writes);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("1"));
        assert_eq!(r.now_by.as_ref().map(|e| e.task.as_str()), Some("reload"));
        assert_eq!(r.now_file.as_deref(), Some("/etc/sysctl.d/99-sysctl.conf"));
        for engine in Engine::ALL {
            let b = only(r, engine);
            assert_eq!(b.value.as_deref(), Some("0"), "{engine:?}");
            assert_eq!(b.winner_file(), Some("/etc/sysctl.d/zz-hardening.conf"));
            assert_eq!(b.winner.as_ref().unwrap().line, Some(1));
            assert_eq!(b.overridden.len(), 1);
            assert_eq!(b.overridden[0].file, "/etc/sysctl.d/99-sysctl.conf");
            assert_eq!(b.overridden[0].value.as_deref(), Some("1"));
            assert_eq!(
                b.overridden[0].evidence,
                Some(ev(
                    "persist net.ipv4.ip_forward in /etc/sysctl.d/99-sysctl.conf"
                ))
            );
        }
    }

    #[test]
    fn digits_sort_before_letters() {
        let base = no_link_host()
            .with_file(
                "/etc/sysctl.d/hardening.conf",
                "net.ipv4.ip_forward = 0\n",
                "t",
            )
            .with_file(
                "/etc/sysctl.d/99-k8s.conf",
                "net.ipv4.ip_forward = 1\n",
                "t",
            );
        let rs = simulate(&base, &[]);
        let b = only(get(&rs, FWD), Engine::SystemdSysctl);
        assert_eq!(b.winner_file(), Some("/etc/sysctl.d/hardening.conf"));
        assert_eq!(b.value.as_deref(), Some("0"));
    }

    #[test]
    fn sysctl_conf_is_last_for_procps_and_unread_by_systemd_without_link() {
        let base = no_link_host().with_file(
            "/etc/sysctl.d/zz-hardening.conf",
            "net.ipv4.ip_forward = 0\n",
            "t",
        );
        // ansible.posix.sysctl's default sysctl_file
        let rs = simulate(&base, &[persist(SYSCTL_CONF, FWD, "1")]);
        let r = get(&rs, FWD);
        let procps = only(r, Engine::Procps);
        assert_eq!(procps.value.as_deref(), Some("1"));
        assert_eq!(procps.winner_file(), Some(SYSCTL_CONF));
        assert_eq!(procps.overridden[0].file, "/etc/sysctl.d/zz-hardening.conf");
        let systemd = only(r, Engine::SystemdSysctl);
        assert_eq!(systemd.value.as_deref(), Some("0"));
        assert!(
            systemd.overridden.is_empty(),
            "systemd never reads /etc/sysctl.conf: {systemd:#?}"
        );
    }

    #[test]
    fn with_the_link_systemd_reads_sysctl_conf_at_99_and_procps_twice() {
        let base = debian()
            .with_file(
                "/usr/lib/sysctl.d/50-vendor.conf",
                "net.ipv4.ip_forward = 0\n",
                "t",
            )
            .with_file("/etc/sysctl.d/zz-hardening.conf", "kernel.panic = 0\n", "t");
        let writes = [
            persist(SYSCTL_CONF, FWD, "1"),
            persist(SYSCTL_CONF, "kernel.panic", "10"),
        ];
        let rs = simulate(&base, &writes);

        let fwd = get(&rs, FWD);
        let systemd = only(fwd, Engine::SystemdSysctl);
        assert_eq!(systemd.value.as_deref(), Some("1"));
        let win = systemd.winner.as_ref().unwrap();
        assert_eq!(win.file, LINK);
        assert_eq!(win.via_link_to.as_deref(), Some(SYSCTL_CONF));
        let procps = only(fwd, Engine::Procps);
        assert_eq!(procps.winner_file(), Some(SYSCTL_CONF));
        let files: Vec<&str> = procps.overridden.iter().map(|s| s.file.as_str()).collect();
        assert_eq!(
            files,
            ["/usr/lib/sysctl.d/50-vendor.conf", LINK],
            "applied at 99 and again at the end"
        );

        // A file sorting after 99-sysctl.conf beats it under systemd only.
        let panic = get(&rs, "kernel.panic");
        assert_eq!(
            only(panic, Engine::SystemdSysctl).value.as_deref(),
            Some("0")
        );
        assert_eq!(only(panic, Engine::Procps).value.as_deref(), Some("10"));
    }

    #[test]
    fn undecided_link_splits_only_what_depends_on_it() {
        let writes = [
            persist(SYSCTL_CONF, FWD, "1"),
            persist("/etc/sysctl.d/k8s.conf", "vm.swappiness", "1"),
        ];
        let rs = simulate(&Baseline::empty(), &writes);
        let fwd = get(&rs, FWD);
        let systemd: Vec<(Option<bool>, Option<&str>)> = fwd
            .boot
            .iter()
            .filter(|b| b.engine == Engine::SystemdSysctl)
            .map(|b| (b.with_link, b.value.as_deref()))
            .collect();
        assert_eq!(systemd, [(Some(true), Some("1")), (Some(false), None)]);
        assert_eq!(fwd.boot_value(Engine::SystemdSysctl, true), Some("1"));
        assert_eq!(fwd.boot_value(Engine::SystemdSysctl, false), None);
        assert_eq!(fwd.boot_value(Engine::Procps, true), Some("1"));
        assert_eq!(fwd.boot_value(Engine::Procps, false), Some("1"));
        // A key in a sysctl.d file does not depend on the link.
        let swap = get(&rs, "vm.swappiness");
        assert_eq!(
            only(swap, Engine::SystemdSysctl).value.as_deref(),
            Some("1")
        );
        assert_eq!(only(swap, Engine::Procps).value.as_deref(), Some("1"));
    }

    #[test]
    fn a_link_write_decides_the_link() {
        let writes = [
            w(
                "link",
                WriteKind::Link {
                    file: LINK.into(),
                    target: "../sysctl.conf".into(),
                },
            ),
            persist(SYSCTL_CONF, FWD, "1"),
        ];
        let rs = simulate(&Baseline::empty(), &writes);
        let r = get(&rs, FWD);
        assert_eq!(only(r, Engine::SystemdSysctl).value.as_deref(), Some("1"));
        assert_eq!(only(r, Engine::Procps).value.as_deref(), Some("1"));
    }

    #[test]
    fn live_value_can_depend_on_the_link() {
        let writes = [
            persist(SYSCTL_CONF, FWD, "1"),
            w(
                "restart systemd-sysctl",
                WriteKind::ApplyAll {
                    engine: Engine::SystemdSysctl,
                },
            ),
        ];
        let rs = simulate(&Baseline::empty(), &writes);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("1"), "with the link (assumed)");
        assert_eq!(r.now_file.as_deref(), Some(LINK));
        assert_eq!(r.now_value(false), None);
        assert_eq!(r.now_without_link, Some(Live::default()));
    }

    #[test]
    fn etc_file_hides_same_named_vendor_file() {
        let base = no_link_host()
            .with_file(
                "/usr/lib/sysctl.d/50-default.conf",
                "net.ipv4.conf.all.rp_filter = 2\nkernel.sysrq = 16\n",
                "t",
            )
            .with_file(
                "/etc/sysctl.d/50-default.conf",
                "net.ipv4.conf.all.rp_filter = 1\n",
                "t",
            );
        let rs = simulate(&base, &[]);
        for engine in Engine::ALL {
            let rp = only(get(&rs, "net.ipv4.conf.all.rp_filter"), engine);
            assert_eq!(rp.value.as_deref(), Some("1"));
            assert_eq!(rp.winner_file(), Some("/etc/sysctl.d/50-default.conf"));
            assert!(
                rp.overridden.is_empty(),
                "the hidden file is not read at all"
            );
            assert_eq!(
                only(get(&rs, "kernel.sysrq"), engine).value,
                None,
                "whole file hidden"
            );
        }
    }

    #[test]
    fn directory_precedence_run_over_usr_lib() {
        let base = no_link_host()
            .with_file("/usr/lib/sysctl.d/10-a.conf", "k.x = lib\n", "t")
            .with_file("/usr/local/lib/sysctl.d/10-a.conf", "k.x = local\n", "t")
            .with_file("/run/sysctl.d/10-a.conf", "k.x = run\n", "t")
            .with_file("/lib/sysctl.d/10-b.conf", "k.y = splitusr\n", "t");
        let rs = simulate(&base, &[]);
        assert_eq!(
            only(get(&rs, "k.x"), Engine::SystemdSysctl)
                .value
                .as_deref(),
            Some("run")
        );
        assert_eq!(
            only(get(&rs, "k.y"), Engine::Procps).value.as_deref(),
            Some("splitusr")
        );
    }

    #[test]
    fn dev_null_link_masks() {
        let base = Baseline::from_catalog(&["gce".into()])
            .unwrap()
            .complete()
            .with_link(
                "/etc/sysctl.d/60-gce-network-security.conf",
                "/dev/null",
                "t",
            )
            .with_file(
                "/usr/lib/sysctl.d/60-gce-network-security.conf",
                "net.ipv4.ip_forward = 0\n",
                "t",
            );
        let rs = simulate(&base, &[]);
        for engine in Engine::ALL {
            assert_eq!(only(get(&rs, FWD), engine).value, None, "{engine:?}");
        }
        // Masking by a playbook task works the same way.
        let base = Baseline::from_catalog(&["gce".into()]).unwrap().complete();
        let mask = w(
            "mask",
            WriteKind::Link {
                file: "/etc/sysctl.d/60-gce-network-security.conf".into(),
                target: "/dev/null".into(),
            },
        );
        let rs = simulate(&base, std::slice::from_ref(&mask));
        assert_eq!(only(get(&rs, FWD), Engine::SystemdSysctl).value, None);
        // Writing through a mask is discarded.
        let rs = simulate(
            &base,
            &[
                mask,
                persist("/etc/sysctl.d/60-gce-network-security.conf", FWD, "1"),
            ],
        );
        assert_eq!(only(get(&rs, FWD), Engine::SystemdSysctl).value, None);
    }

    #[test]
    fn centos7_bridge_off_loses_to_a_later_file() {
        let base = Baseline::from_catalog(&["centos7".into()]).unwrap();
        let key = "net.bridge.bridge-nf-call-iptables";
        let rs = simulate(&base, &[]);
        assert_eq!(
            only(get(&rs, key), Engine::SystemdSysctl).value.as_deref(),
            Some("0")
        );

        let rs = simulate(&base, &[persist("/etc/sysctl.d/k8s.conf", key, "1")]);
        for engine in Engine::ALL {
            let b = only(get(&rs, key), engine);
            assert_eq!(b.value.as_deref(), Some("1"));
            assert_eq!(b.winner_file(), Some("/etc/sysctl.d/k8s.conf"));
            let loser = &b.overridden[0];
            assert_eq!(loser.file, "/usr/lib/sysctl.d/00-system.conf");
            assert_eq!(loser.line, Some(8), "line 8 of the shipped file");
            assert!(
                loser
                    .source
                    .as_deref()
                    .unwrap()
                    .contains("fedora-sysv/initscripts")
            );
            assert_eq!(loser.evidence, None);
        }
    }

    #[test]
    fn gce_file_beats_an_earlier_sorting_k8s_file() {
        let base = Baseline::from_catalog(&["debian,gce".into()]).unwrap();
        let writes = [
            persist("/etc/sysctl.d/10-k8s.conf", FWD, "1"),
            apply_file("/etc/sysctl.d/10-k8s.conf"),
        ];
        let rs = simulate(&base, &writes);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("1"));
        for engine in Engine::ALL {
            let b = only(r, engine);
            assert_eq!(b.value.as_deref(), Some("0"));
            assert_eq!(
                b.winner_file(),
                Some("/etc/sysctl.d/60-gce-network-security.conf")
            );
        }
    }

    #[test]
    fn slash_keys_are_normalised() {
        let base =
            no_link_host().with_file("/etc/sysctl.d/10-a.conf", "net/ipv4/ip_forward = 0\n", "t");
        let rs = simulate(
            &base,
            &[persist(
                "/etc/sysctl.d/20-b.conf",
                "net/ipv4/ip_forward",
                "1",
            )],
        );
        assert_eq!(rs.len(), 1, "one key whatever the separator: {rs:#?}");
        let b = only(get(&rs, FWD), Engine::SystemdSysctl);
        assert_eq!(b.value.as_deref(), Some("1"));
        assert_eq!(b.overridden[0].key, FWD);
    }

    #[test]
    fn set_live_without_persistence() {
        let base =
            no_link_host().with_file("/etc/sysctl.d/10-a.conf", "net.ipv4.ip_forward = 0\n", "t");
        let rs = simulate(&base, &[set_live("net/ipv4/ip_forward", "1")]);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("1"));
        assert_eq!(
            r.now_by.as_ref().map(|e| e.task.as_str()),
            Some("sysctl -w")
        );
        assert_eq!(r.now_file, None);
        for engine in Engine::ALL {
            assert_eq!(
                only(r, engine).value.as_deref(),
                Some("0"),
                "boot unchanged"
            );
        }
    }

    #[test]
    fn boot_value_is_the_starting_live_value_and_persist_alone_keeps_it() {
        let base =
            no_link_host().with_file("/etc/sysctl.d/10-a.conf", "net.ipv4.ip_forward = 0\n", "t");
        let rs = simulate(&base, &[persist("/etc/sysctl.d/20-b.conf", FWD, "1")]);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("0"));
        assert_eq!(r.now_by, None);
        assert_eq!(r.now_file.as_deref(), Some("/etc/sysctl.d/10-a.conf"));
        assert_eq!(only(r, Engine::SystemdSysctl).value.as_deref(), Some("1"));
    }

    #[test]
    fn boot_engine_decides_the_starting_value() {
        let base = no_link_host().with_file(SYSCTL_CONF, "net.ipv4.ip_forward = 1\n", "t");
        let systemd = simulate(&base, &[]);
        assert_eq!(
            get(&systemd, FWD).now,
            None,
            "systemd-sysctl did not read sysctl.conf"
        );
        let procps = simulate(&base.with_boot_engine(Engine::Procps), &[]);
        assert_eq!(get(&procps, FWD).now.as_deref(), Some("1"));
    }

    #[test]
    fn apply_file_uses_current_content() {
        let f = "/etc/sysctl.d/k8s.conf";
        let writes = [
            persist(f, FWD, "1"),
            persist(f, "vm.swappiness", "1"),
            persist(f, FWD, "0"),
            w(
                "drop swappiness",
                WriteKind::Remove {
                    file: f.into(),
                    key: "vm.swappiness".into(),
                },
            ),
            apply_file(f),
        ];
        let rs = simulate(&no_link_host(), &writes);
        assert_eq!(get(&rs, FWD).now.as_deref(), Some("0"));
        assert_eq!(get(&rs, "vm.swappiness").now, None);
        assert_eq!(
            only(get(&rs, "vm.swappiness"), Engine::SystemdSysctl).value,
            None
        );
    }

    #[test]
    fn apply_file_outside_the_boot_locations_is_live_only() {
        let f = "/etc/kubernetes/sysctl.conf";
        let rs = simulate(&no_link_host(), &[persist(f, FWD, "1"), apply_file(f)]);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("1"));
        assert_eq!(only(r, Engine::SystemdSysctl).value, None);
        assert_eq!(only(r, Engine::Procps).value, None);
    }

    #[test]
    fn apply_all_applies_the_engines_order_now() {
        let base = no_link_host().with_file(
            "/etc/sysctl.d/zz-hardening.conf",
            "net.ipv4.ip_forward = 0\n",
            "t",
        );
        let mut writes = vec![
            persist(SYSCTL_CONF, FWD, "1"),
            w(
                "sysctl --system",
                WriteKind::ApplyAll {
                    engine: Engine::Procps,
                },
            ),
        ];
        let rs = simulate(&base, &writes);
        let r = get(&rs, FWD);
        assert_eq!(r.now.as_deref(), Some("1"));
        assert_eq!(r.now_file.as_deref(), Some(SYSCTL_CONF));
        assert_eq!(
            r.now_by.as_ref().map(|e| e.task.as_str()),
            Some("sysctl --system")
        );
        writes.push(w(
            "restart systemd-sysctl",
            WriteKind::ApplyAll {
                engine: Engine::SystemdSysctl,
            },
        ));
        let rs = simulate(&base, &writes);
        assert_eq!(get(&rs, FWD).now.as_deref(), Some("0"));
    }

    #[test]
    fn remove_drops_the_key_from_the_file() {
        let base = no_link_host()
            .with_file("/etc/sysctl.d/10-a.conf", "net.ipv4.ip_forward = 1\n", "t")
            .with_file(
                "/etc/sysctl.d/90-b.conf",
                "net.ipv4.ip_forward = 0\nkernel.panic = 10\n",
                "t",
            );
        let remove = w(
            "remove",
            WriteKind::Remove {
                file: "/etc/sysctl.d/90-b.conf".into(),
                key: "net/ipv4/ip_forward".into(),
            },
        );
        let rs = simulate(&base, &[remove]);
        let b = only(get(&rs, FWD), Engine::SystemdSysctl);
        assert_eq!(b.value.as_deref(), Some("1"));
        assert!(b.overridden.is_empty());
        assert_eq!(
            only(get(&rs, "kernel.panic"), Engine::SystemdSysctl)
                .value
                .as_deref(),
            Some("10")
        );
    }

    #[test]
    fn delete_file_removes_it_and_its_shadow() {
        let base = no_link_host()
            .with_file("/etc/sysctl.d/10-a.conf", "net.ipv4.ip_forward = 1\n", "t")
            .with_file(
                "/etc/sysctl.d/zz-hardening.conf",
                "net.ipv4.ip_forward = 0\n",
                "t",
            )
            .with_file(
                "/usr/lib/sysctl.d/zz-hardening.conf",
                "kernel.panic = 0\n",
                "t",
            );
        let del = w(
            "delete",
            WriteKind::DeleteFile {
                file: "/etc/sysctl.d/zz-hardening.conf".into(),
            },
        );
        let rs = simulate(&base, &[del]);
        assert_eq!(
            only(get(&rs, FWD), Engine::SystemdSysctl).value.as_deref(),
            Some("1")
        );
        assert_eq!(
            only(get(&rs, "kernel.panic"), Engine::SystemdSysctl)
                .value
                .as_deref(),
            Some("0"),
            "the vendor file is no longer hidden"
        );
    }

    #[test]
    fn persist_writes_through_the_debian_link() {
        // kubespray's default sysctl_file_path on a Debian host
        let rs = simulate(&debian(), &[persist(LINK, FWD, "1")]);
        let r = get(&rs, FWD);
        let systemd = only(r, Engine::SystemdSysctl);
        assert_eq!(systemd.winner_file(), Some(LINK));
        assert_eq!(
            systemd.winner.as_ref().unwrap().via_link_to.as_deref(),
            Some(SYSCTL_CONF)
        );
        let procps = only(r, Engine::Procps);
        assert_eq!(
            procps.winner_file(),
            Some(SYSCTL_CONF),
            "the link target is really sysctl.conf"
        );
        // Replacing the link (copy without follow) is DeleteFile + Persist.
        let writes = [
            w("copy", WriteKind::DeleteFile { file: LINK.into() }),
            persist(LINK, FWD, "1"),
        ];
        let rs = simulate(&debian(), &writes);
        let procps = only(get(&rs, FWD), Engine::Procps);
        assert_eq!(procps.winner_file(), Some(LINK));
        assert!(procps.overridden.is_empty());
    }

    #[test]
    fn explicit_key_beats_glob_whatever_the_order() {
        let base = Baseline::from_catalog(&["fedora".into()]).unwrap();
        let writes = [
            persist(
                "/etc/sysctl.d/10-k8s.conf",
                "net.ipv4.conf.eth0.rp_filter",
                "0",
            ),
            set_live("net.ipv4.conf.lo.rp_filter", "0"),
        ];
        let rs = simulate(&base, &writes);
        for engine in Engine::ALL {
            // 10-k8s.conf sorts before 50-default.conf, yet wins: explicit beats glob.
            let eth0 = only(get(&rs, "net.ipv4.conf.eth0.rp_filter"), engine);
            assert_eq!(eth0.value.as_deref(), Some("0"), "{engine:?}");
            assert_eq!(eth0.overridden[0].key, "net.ipv4.conf.*.rp_filter");
            // Only the glob sets lo.
            let lo = only(get(&rs, "net.ipv4.conf.lo.rp_filter"), engine);
            assert_eq!(lo.value.as_deref(), Some("2"));
            assert_eq!(lo.winner.as_ref().unwrap().key, "net.ipv4.conf.*.rp_filter");
            // `-net.ipv4.conf.all.rp_filter` shields `all` from the glob.
            let all = only(get(&rs, "net.ipv4.conf.all.rp_filter"), engine);
            assert_eq!(all.value, None);
            // The glob is a key of its own.
            let g = get(&rs, "net.ipv4.conf.*.rp_filter");
            assert!(g.glob);
            assert_eq!(only(g, engine).value.as_deref(), Some("2"));
            // Unrelated keys are not matched.
            assert_eq!(
                only(get(&rs, "net.ipv4.conf.default.rp_filter"), engine)
                    .value
                    .as_deref(),
                Some("2")
            );
        }
        assert_eq!(
            get(&rs, "net.ipv4.conf.lo.rp_filter").now.as_deref(),
            Some("0")
        );
    }

    #[test]
    fn later_glob_wins_among_globs() {
        let base = no_link_host()
            .with_file(
                "/etc/sysctl.d/10-a.conf",
                "net.ipv4.conf.*.rp_filter = 2\n",
                "t",
            )
            .with_file(
                "/etc/sysctl.d/20-b.conf",
                "net.ipv4.conf.e*.rp_filter = 1\n",
                "t",
            )
            .with_file(
                "/etc/sysctl.d/30-c.conf",
                "net.ipv4.conf.eth0.forwarding = 1\n",
                "t",
            );
        let rs = simulate(&base, &[set_live("net.ipv4.conf.eth0.rp_filter", "0")]);
        for engine in Engine::ALL {
            let b = only(get(&rs, "net.ipv4.conf.eth0.rp_filter"), engine);
            assert_eq!(b.value.as_deref(), Some("1"));
            assert_eq!(b.overridden.len(), 1);
        }
    }

    #[test]
    fn glob_exclusion_after_assignment() {
        // systemd: `-key` replaces the earlier assignment (nothing is written);
        // procps skips exclusions when writing.
        let base = no_link_host()
            .with_file(
                "/etc/sysctl.d/10-a.conf",
                "net.ipv4.conf.all.rp_filter = 1\n",
                "t",
            )
            .with_file(
                "/etc/sysctl.d/20-b.conf",
                "-net.ipv4.conf.all.rp_filter\n",
                "t",
            );
        let rs = simulate(&base, &[]);
        let r = get(&rs, "net.ipv4.conf.all.rp_filter");
        let systemd = only(r, Engine::SystemdSysctl);
        assert_eq!(systemd.value, None);
        assert_eq!(systemd.winner.as_ref().unwrap().value, None);
        assert_eq!(only(r, Engine::Procps).value.as_deref(), Some("1"));
    }

    #[test]
    fn hidden_files_are_read_by_procps_only() {
        let base =
            no_link_host().with_file("/etc/sysctl.d/.old.conf", "net.ipv4.ip_forward = 0\n", "t");
        let rs = simulate(&base, &[]);
        assert_eq!(only(get(&rs, FWD), Engine::SystemdSysctl).value, None);
        assert_eq!(
            only(get(&rs, FWD), Engine::Procps).value.as_deref(),
            Some("0")
        );
    }

    #[test]
    fn dangling_link_still_hides_a_vendor_file() {
        let base = no_link_host()
            .with_link("/etc/sysctl.d/50-x.conf", "/etc/sysctl.d/gone.conf", "t")
            .with_file(
                "/usr/lib/sysctl.d/50-x.conf",
                "net.ipv4.ip_forward = 0\n",
                "t",
            );
        let rs = simulate(&base, &[]);
        for engine in Engine::ALL {
            assert_eq!(only(get(&rs, FWD), engine).value, None);
        }
    }

    #[test]
    fn conditional_writes_are_flagged() {
        let mut p = persist("/etc/sysctl.d/k8s.conf", FWD, "1");
        p.conditional = true;
        let mut s = set_live(FWD, "1");
        s.conditional = true;
        let rs = simulate(&no_link_host(), &[p, s]);
        let r = get(&rs, FWD);
        assert!(r.now_conditional);
        assert!(
            only(r, Engine::SystemdSysctl)
                .winner
                .as_ref()
                .unwrap()
                .conditional
        );
    }

    #[test]
    fn results_are_sorted_and_cover_every_named_key() {
        let base = Baseline::from_catalog(&["centos7".into()]).unwrap();
        let rs = simulate(&base, &[set_live("a.b", "1")]);
        let keys: Vec<&str> = rs.iter().map(|r| r.key.as_str()).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        assert!(keys.contains(&"a.b") && keys.contains(&"kernel.sysrq"));
        assert!(
            rs.iter().all(|r| r.boot.len() == 2),
            "centos7 decides the link"
        );
    }

    #[test]
    fn host_root_end_to_end() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("etc/sysctl.d")).unwrap();
        std::fs::create_dir_all(root.join("usr/lib/sysctl.d")).unwrap();
        std::fs::write(root.join("etc/sysctl.conf"), "# nothing\n").unwrap();
        symlink("../sysctl.conf", root.join("etc/sysctl.d/99-sysctl.conf")).unwrap();
        std::fs::write(
            root.join("etc/sysctl.d/zz-hardening.conf"),
            "net.ipv4.ip_forward=0\n",
        )
        .unwrap();
        std::fs::write(
            root.join("usr/lib/sysctl.d/00-system.conf"),
            "net.bridge.bridge-nf-call-iptables = 0\n",
        )
        .unwrap();
        let base = Baseline::from_host_root(root).unwrap();
        let writes = [
            persist(LINK, FWD, "1"),
            apply_file(LINK),
            persist(LINK, "net.bridge.bridge-nf-call-iptables", "1"),
        ];
        let rs = simulate(&base, &writes);
        let fwd = get(&rs, FWD);
        assert_eq!(fwd.now.as_deref(), Some("1"));
        assert_eq!(only(fwd, Engine::SystemdSysctl).value.as_deref(), Some("0"));
        assert_eq!(only(fwd, Engine::Procps).value.as_deref(), Some("1"));
        let br = get(&rs, "net.bridge.bridge-nf-call-iptables");
        assert_eq!(br.now.as_deref(), Some("0"), "written but never applied");
        assert_eq!(only(br, Engine::SystemdSysctl).value.as_deref(), Some("1"));
        // The host root was only read.
        assert_eq!(
            std::fs::read_to_string(root.join("etc/sysctl.conf")).unwrap(),
            "# nothing\n"
        );
    }

    /// xorshift64*: deterministic, so a failing case replays from its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap()
        }

        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len())]
        }
    }

    const PATHS: &[&str] = &[
        "/etc/sysctl.d/10-a.conf",
        "/etc/sysctl.d/99-sysctl.conf",
        "/etc/sysctl.d/zz.conf",
        "/etc/sysctl.d/.hidden.conf",
        "/etc/sysctl.d//50-x.conf",
        "/run/sysctl.d/10-a.conf",
        "/usr/lib/sysctl.d/10-a.conf",
        "/usr/lib/sysctl.d/50-x.conf",
        "/usr/lib/sysctl.d/99-sysctl.conf",
        "/lib/sysctl.d/50-x.conf",
        "/etc/sysctl.conf",
        "/opt/k8s.conf",
        "relative.conf",
    ];
    const TARGETS: &[&str] = &[
        "../sysctl.conf",
        "/dev/null",
        "/etc/sysctl.d/10-a.conf",
        "10-a.conf",
        "zz.conf",
        "/usr/lib/sysctl.d/50-x.conf",
        "/etc/sysctl.d/gone.conf",
        "/etc/sysctl.d/99-sysctl.conf",
        "/opt/k8s.conf",
    ];
    const KEYS: &[&str] = &[
        "a.b",
        "a/b",
        "k.z",
        "net.x.eth0.f",
        "net.x.eth1.f",
        "net.x.lo.f",
        "net.x.*.f",
        "net.x.e*.f",
        "net.x.eth[01].f",
        "",
    ];
    const VALUES: &[&str] = &["0", "1", "2"];

    fn random_text(rng: &mut Rng) -> String {
        let mut text = String::new();
        for _ in 0..rng.below(5) {
            let key = rng.pick(KEYS);
            if rng.below(5) == 0 {
                text.push_str(&format!("-{key}\n"));
            } else {
                text.push_str(&format!("{key} = {}\n", rng.pick(VALUES)));
            }
        }
        text
    }

    fn random_baseline(rng: &mut Rng) -> Baseline {
        let mut base = match rng.below(6) {
            0 => Baseline::empty(),
            1 => Baseline::empty().complete(),
            2 => debian(),
            3 => Baseline::from_catalog(&["fedora".into()]).unwrap(),
            4 => Baseline::from_catalog(&["centos7,gce".into()]).unwrap(),
            _ => Baseline::from_catalog(&["ubuntu".into()]).unwrap(),
        };
        for _ in 0..rng.below(5) {
            let path = rng.pick(PATHS);
            base = if rng.below(3) == 0 {
                base.with_link(path, rng.pick(TARGETS), "t")
            } else {
                base.with_file(path, &random_text(rng), "t")
            };
        }
        if rng.below(3) == 0 {
            base = base.with_boot_engine(Engine::Procps);
        }
        base
    }

    fn random_write(rng: &mut Rng, i: usize) -> Write {
        let file = rng.pick(PATHS).to_string();
        let key = rng.pick(KEYS).to_string();
        let value = rng.pick(VALUES).to_string();
        let kind = match rng.below(12) {
            0..=3 => WriteKind::Persist { file, key, value },
            4 => WriteKind::Remove { file, key },
            5 => WriteKind::DeleteFile { file },
            6 => WriteKind::Link {
                file,
                target: rng.pick(TARGETS).to_string(),
            },
            7 => WriteKind::SetLive { key, value },
            8 | 9 => WriteKind::ApplyFile { file },
            _ => WriteKind::ApplyAll {
                engine: Engine::ALL[rng.below(2)],
            },
        };
        Write {
            kind,
            evidence: Evidence {
                file: "roles/x/tasks/main.yml".into(),
                line: u32::try_from(i).unwrap(),
                task: format!("task {i}"),
            },
            conditional: rng.below(4) == 0,
        }
    }

    #[test]
    fn same_results_as_the_naive_replay() {
        for seed in 1..=3000u64 {
            let mut rng = Rng(seed);
            let base = random_baseline(&mut rng);
            let n = rng.below(30);
            let writes: Vec<Write> = (0..n).map(|i| random_write(&mut rng, i)).collect();
            let fast = simulate(&base, &writes);
            let naive = super::super::naive::simulate(&base, &writes);
            assert!(
                fast == naive,
                "seed {seed}: {base:#?}\n{writes:#?}\n{}",
                first_difference(&fast, &naive)
            );
        }
    }

    fn first_difference(fast: &[KeyResult], naive: &[KeyResult]) -> String {
        if fast.len() != naive.len() {
            return format!("{} keys, naive {}", fast.len(), naive.len());
        }
        fast.iter()
            .zip(naive)
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("fast {a:#?}\nnaive {b:#?}"))
            .unwrap_or_default()
    }

    #[test]
    fn persist_replaces_in_place_and_drops_duplicates() {
        let base = no_link_host().with_file(
            "/etc/sysctl.d/10-a.conf",
            "a.b = 1\nc.d = 1\na.b = 2\n",
            "t",
        );
        let rs = simulate(&base, &[persist("/etc/sysctl.d/10-a.conf", "a.b", "3")]);
        let b = only(get(&rs, "a.b"), Engine::SystemdSysctl);
        assert_eq!(b.value.as_deref(), Some("3"));
        assert!(b.overridden.is_empty(), "{b:#?}");
    }
}
