//! `ansible.posix.mount`, and what keeps swap off at boot: fstab swap
//! entries removed or commented, swap units masked, swap generators
//! (zram-generator, zram-tools, zram-config, dphys-swapfile) removed or
//! disabled. The service, package and file readings ask here whether what
//! they see is one of these.
//!
//! The mount module (`plugins/modules/mount.py` in ansible.posix) removes
//! an entry with `state: absent` or `absent_from_fstab` by its mount point
//! (`path`, alias `name`) alone: `fstype` is not compared, and `src` only
//! narrows a `path: none` swap entry. Swap entries have the mount point
//! `none` (fstab(5)) or, as older installers wrote, `swap`; so the task
//! turns swap off at boot when `path` is one of those (roles loop over
//! both: `name: "{{ item }}"`, `fstype: swap`, `loop: [swap, none]`). A
//! `fstype: swap` with another mount point removes no swap entry, unless
//! the mount point did not render, where the stated type is the only
//! evidence. `state: unmounted` changes no fstab; `present` and `mounted`
//! add entries (a swap entry added turns swap on, which has no effect
//! type). Any state that changes the file is also a
//! [`EffectKind::FileEdited`] of it (the line written, or the entry
//! removed), for the readers of paths; only [`EffectKind::SwapOff`] says
//! swap.
//!
//! Only `/etc/fstab` is read at boot: a task with another `fstab` (a
//! chroot) edits that file and turns nothing off.

use super::{Content, Edit, Effect, EffectKind, Known, SwapOff, TaskView, Timing};

pub(super) const FSTAB: &str = "/etc/fstab";

pub(super) fn mount(view: &dyn TaskView, out: &mut Vec<Effect>) {
    let Some(path) = view.arg("path") else {
        return;
    };
    let fstab = view.arg("fstab").unwrap_or(FSTAB);
    let state = view.arg("state").unwrap_or_default();
    let fstype = view.arg("fstype");
    match state {
        "absent" | "absent_from_fstab" => {
            out.push(Effect::new(
                EffectKind::FileEdited {
                    path: fstab.to_string(),
                    edit: Edit {
                        text: String::new(),
                        regexp: None,
                        remove: true,
                    },
                },
                Timing::BOTH,
            ));
            let swap_mount_point = matches!(path, "none" | "swap")
                || (fstype == Some("swap") && crate::ansible::project::is_templated(path));
            if swap_mount_point && fstab == FSTAB {
                out.push(Effect::new(
                    EffectKind::SwapOff {
                        how: SwapOff::FstabEntries,
                    },
                    Timing::BOOT,
                ));
            }
        }
        "present" | "mounted" => {
            let field = |k: &str, default: &str| view.arg(k).unwrap_or(default).to_string();
            let line = [
                field("src", "-"),
                path.to_string(),
                field("fstype", "-"),
                field("opts", "defaults"),
                field("dump", "0"),
                field("passno", "0"),
            ]
            .join(" ");
            out.push(Effect::new(
                EffectKind::FileEdited {
                    path: fstab.to_string(),
                    edit: Edit {
                        text: line,
                        regexp: None,
                        remove: false,
                    },
                },
                Timing::BOTH,
            ));
        }
        _ => {}
    }
}

/// Active swap entries as distributions and guides write them: an edit
/// selects swap entries when its pattern matches one of these and none of
/// [`OTHER_ENTRIES`].
const SWAP_ENTRIES: [&str; 8] = [
    // Ubuntu's installer (a swap file).
    "/swap.img\tnone\tswap\tsw\t0\t0",
    // The swap file of most guides.
    "/swapfile none swap sw 0 0",
    // Debian's installer.
    "UUID=3f6a1d2c-8f7e-4b1a-9c55-2d7a1e0b9f11 none            swap    sw              0       0",
    // Ubuntu's installer on a partition, and on LVM.
    "/dev/disk/by-uuid/7d4e1c2b-0a9f-4e3d-8b6a-5c1f2e3d4a5b none swap sw 0 0",
    "/dev/mapper/ubuntu--vg-swap_1 none            swap    sw              0       0",
    // RHEL's installer (8, 9), and CentOS 7's.
    "/dev/mapper/rhel-swap   none                    swap    defaults        0 0",
    "/dev/mapper/centos-swap swap                    swap    defaults        0 0",
    // A partition named by its device.
    "/dev/sda2 none swap sw 0 0",
];

/// Active entries that are not swap, beside which [`SWAP_ENTRIES`] sit.
const OTHER_ENTRIES: [&str; 10] = [
    "UUID=0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e /               ext4    errors=remount-ro 0       1",
    "UUID=5E2D-1A3B  /boot/efi       vfat    umask=0077      0       1",
    "/dev/disk/by-uuid/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d / ext4 defaults 0 1",
    "/dev/mapper/rhel-root   /                       xfs     defaults        0 0",
    "/dev/mapper/centos-home /home                   xfs     defaults        0 0",
    "/dev/fd0        /media/floppy0  auto    rw,user,noauto,exec,utf8 0       0",
    "/dev/sr0        /media/cdrom0   udf,iso9660 user,noauto     0       0",
    "tmpfs /tmp tmpfs defaults,noatime,mode=1777 0 0",
    "proc /proc proc defaults 0 0",
    "192.168.1.10:/export/data /mnt/data nfs defaults,_netdev 0 0",
];

/// Whether an in-place edit of `/etc/fstab` (`lineinfile`, `replace`)
/// keeps swap off at boot: it removes or comments out lines whose type is
/// swap, and leaves the other entries alone.
///
/// - Lines removed (`lineinfile` `state: absent`): the `regexp` selects
///   swap entries, or, without one, the `line` removed is a swap entry.
/// - Lines replaced (`lineinfile` with a `regexp` and a `line`, `replace`
///   with its `replace` text): the `regexp` selects swap entries and what
///   replaces them is commented out (`#\1`, `# \1`, `#/swap.img ...`) or
///   nothing.
///
/// A regexp selects swap entries when it matches an active swap entry of
/// [`SWAP_ENTRIES`] and no active entry of another type: `.*swap.*`,
/// `^([^#].*swap.*)$` and `^/swapfile` do; `^/dev/fd0` (a floppy line) and
/// `^#.*swap` (lines already commented) do not. Patterns are Python's;
/// one that does not compile here (a lookaround) is read by its words: it
/// names swap and does not select comments.
#[must_use]
pub(super) fn edit_turns_swap_off(edit: &Edit) -> bool {
    let Some(regexp) = edit.regexp.as_deref().filter(|r| !r.is_empty()) else {
        return edit.remove && is_active_swap_entry(&edit.text);
    };
    if !selects_swap_entries(regexp) {
        return false;
    }
    let text = edit.text.trim_start();
    edit.remove || text.is_empty() || text.starts_with('#')
}

/// Whether `regexp` (Python's syntax) selects swap entries of an fstab.
fn selects_swap_entries(regexp: &str) -> bool {
    // Python's end of text is `\Z`; the regex crate's is `\z`.
    let pattern = regexp.replace("\\Z", "\\z");
    match regex::RegexBuilder::new(&pattern)
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
    {
        Ok(re) => {
            // Both modules search lines that keep their newline.
            let matches = |l: &&str| re.is_match(&format!("{l}\n"));
            SWAP_ENTRIES.iter().any(matches) && !OTHER_ENTRIES.iter().any(matches)
        }
        Err(_) => {
            let names_swap = regexp.to_ascii_lowercase().contains("swap");
            let comments = regexp.trim_start_matches('^').trim_start().starts_with('#')
                || regexp.starts_with("^\\s*#");
            names_swap && !comments
        }
    }
}

/// Whether `line` is an fstab entry of type swap that is not commented out.
fn is_active_swap_entry(line: &str) -> bool {
    let line = line.trim();
    !line.starts_with('#') && line.split_whitespace().nth(2) == Some("swap")
}

/// Whether a whole `/etc/fstab` written with this text holds no active swap
/// entry.
#[must_use]
pub(super) fn fstab_without_swap(text: &str) -> bool {
    !text.lines().any(is_active_swap_entry)
}

/// The `SwapOff` a file write means at boot, when it is one: a whole
/// `/etc/fstab` with no swap entry (when its content is known), or a
/// zram-generator configuration that configures no device.
pub(super) fn written(path: &str, content: &Content, text: &str) -> Option<SwapOff> {
    let known = content.coverage() == Known::Known;
    if !known {
        return None;
    }
    if path == FSTAB {
        return fstab_without_swap(text).then_some(SwapOff::FstabEntries);
    }
    // An administrator's file in `/etc` (or `/run`) overrides the vendor's:
    // written without a `[zramN]` section, it configures no device
    // (zram-generator.conf(5)).
    if ZRAM_CONFIGS[..2].contains(&path) && !text.lines().any(|l| l.trim().starts_with("[zram")) {
        return Some(SwapOff::Generator(ZRAM_GENERATOR.to_string()));
    }
    None
}

/// The `SwapOff` a file removed means at boot: a zram-generator
/// configuration. Removing the administrator's file in `/etc` turns zram
/// off where it was the only one (Debian, Ubuntu, Arch); where the vendor
/// ships defaults in `/usr/lib` (Fedora's zram-generator-defaults) those
/// apply again, which is not seen here.
pub(super) fn removed(path: &str) -> Option<SwapOff> {
    ZRAM_CONFIGS
        .contains(&path)
        .then(|| SwapOff::Generator(ZRAM_GENERATOR.to_string()))
}

/// The `SwapOff` a link means at boot: zram-generator's configuration
/// linked to `/dev/null`, the way zram-generator.conf(5) gives to disable
/// a vendor's file.
pub(super) fn linked(path: &str, target: &str) -> Option<SwapOff> {
    (target == "/dev/null" && ZRAM_CONFIGS[..2].contains(&path))
        .then(|| SwapOff::Generator(ZRAM_GENERATOR.to_string()))
}

const ZRAM_GENERATOR: &str = "zram-generator";

/// zram-generator's main configuration files (zram-generator.conf(5)), the
/// administrator's first.
const ZRAM_CONFIGS: [&str; 5] = [
    "/etc/systemd/zram-generator.conf",
    "/run/systemd/zram-generator.conf",
    "/usr/lib/systemd/zram-generator.conf",
    "/lib/systemd/zram-generator.conf",
    "/usr/local/lib/systemd/zram-generator.conf",
];

/// Whether writing `path` may keep swap off at boot (see [`written`]).
pub(super) fn may_mean_swap(path: &str) -> bool {
    path == FSTAB || ZRAM_CONFIGS[..2].contains(&path)
}

/// Whether masking `unit` keeps swap off at boot: `swap.target`, which
/// every swap unit is ordered before and wanted by, or one swap unit
/// (`dev-sda2.swap`, `swapfile.swap`, `dev-zram0.swap`).
#[must_use]
pub(super) fn is_swap_unit(unit: &str) -> bool {
    unit == "swap.target" || (unit.ends_with(".swap") && unit.len() > ".swap".len())
}

/// The swap generator a service runs, by unit name (`.service` optional):
/// stopping it turns its swap off now, disabling or masking it keeps it off
/// at boot.
#[must_use]
pub(super) fn generator_service(unit: &str) -> Option<&'static str> {
    let name = unit.strip_suffix(".service").unwrap_or(unit);
    match name {
        "dphys-swapfile" => Some("dphys-swapfile"),
        // zram-tools' service.
        "zramswap" => Some("zram-tools"),
        "zram-config" => Some("zram-config"),
        _ if name.starts_with("systemd-zram-setup@") => Some(ZRAM_GENERATOR),
        _ => None,
    }
}

/// The swap generator a package ships, by package name: removing it keeps
/// its swap off at boot (zram-generator-defaults holds Fedora's default
/// configuration; without it zram-generator configures no device).
#[must_use]
pub(super) fn generator_package(name: &str) -> Option<&'static str> {
    match name {
        "zram-generator" | "zram-generator-defaults" | "systemd-zram-generator" => {
            Some(ZRAM_GENERATOR)
        }
        "zram-tools" => Some("zram-tools"),
        "zram-config" => Some("zram-config"),
        "dphys-swapfile" => Some("dphys-swapfile"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{Edit, edit_turns_swap_off, is_swap_unit, selects_swap_entries};
    use crate::effect::testing::lines;

    const OFF: &str = "swap_off how=fstab @boot";

    fn has(l: &[String], want: &str) -> bool {
        l.iter().any(|x| x == want)
    }

    #[test]
    fn mount_absent_on_swap_mount_points_turns_swap_off() {
        for task in [
            // The loop roles write, one iteration each.
            "ansible.posix.mount: {name: swap, fstype: swap, state: absent}",
            "ansible.posix.mount: {name: none, fstype: swap, state: absent}",
            "ansible.posix.mount: {path: none, src: /swapfile, fstype: swap, state: absent_from_fstab}",
            "ansible.posix.mount: {path: swap, state: absent}",
            // Unrendered mount point: the type stated is the evidence.
            "ansible.posix.mount: {name: '{{ item }}', fstype: swap, state: absent}",
        ] {
            let l = lines(task);
            assert!(has(&l, OFF), "{task}: {l:?}");
            assert!(
                has(
                    &l,
                    "file_edited path=/etc/fstab text= remove=true @now+boot"
                ),
                "{task}: {l:?}"
            );
        }
    }

    #[test]
    fn mount_that_is_not_a_swap_removal_is_not_swap_off() {
        for task in [
            // The module removes by mount point: none of these is a swap entry.
            "ansible.posix.mount: {path: /swapfile, fstype: swap, state: absent}",
            "ansible.posix.mount: {path: /mnt/data, state: absent}",
            // Unmounted: fstab unchanged.
            "ansible.posix.mount: {path: none, src: /swapfile, fstype: swap, state: unmounted}",
            // Adding a swap entry turns swap on.
            "ansible.posix.mount: {path: none, src: /swapfile, fstype: swap, state: present}",
            "ansible.posix.mount: {path: /mnt/data, src: /dev/sdb1, fstype: ext4, state: mounted}",
            // Another fstab (a chroot) is not read at boot.
            "ansible.posix.mount: {path: none, fstype: swap, state: absent, fstab: /mnt/root/etc/fstab}",
        ] {
            let l = lines(task);
            assert!(
                !l.iter().any(|x| x.starts_with("swap_off")),
                "{task}: {l:?}"
            );
        }
        assert_eq!(
            lines(
                "ansible.posix.mount: {path: /mnt/data, src: /dev/sdb1, fstype: ext4, state: mounted}"
            ),
            vec![
                "file_edited path=/etc/fstab text=/dev/sdb1 /mnt/data ext4 defaults 0 0 remove=false @now+boot"
            ]
        );
        assert!(lines("ansible.posix.mount: {path: /mnt/data, state: unmounted}").is_empty());
    }

    #[test]
    fn lineinfile_and_replace_on_swap_lines_turn_swap_off() {
        for task in [
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '.*swap.*', state: absent}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^/swap', state: absent}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '\\sswap\\s', state: absent}",
            "ansible.builtin.lineinfile: {dest: /etc/fstab, regexp: 'swap', state: absent}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, line: '/swapfile none swap sw 0 0', state: absent}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^([^#].*?\\sswap\\s+sw\\s+.*)$', line: '# \\1', backrefs: true}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^/swap.img', line: '#/swap.img none swap sw 0 0'}",
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '^([^#].*swap.*)$', replace: '# \\1'}",
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '^(/swapfile.*)$', replace: '#\\1'}",
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '^(.*/swap.*)$', replace: '# \\1'}",
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '(^.*\\sswap\\s.*$)', replace: '#\\g<1>'}",
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '^[^#].*\\sswap\\s.*\\n', replace: ''}",
            // Python's lookahead, which the regex crate lacks: read by its words.
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '^(?!#)(.*swap.*)$', replace: '#\\1'}",
        ] {
            let l = lines(task);
            assert!(has(&l, OFF), "{task}: {l:?}");
        }
    }

    #[test]
    fn fstab_edits_that_leave_swap_on_are_not_swap_off() {
        for task in [
            // A role removing a floppy line (issue 41).
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^/dev/fd0', state: absent}",
            // Lines already commented.
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^#.*swap', state: absent}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^\\s*#.*swap', state: absent}",
            // Every UUID entry, root included: not a swap edit.
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^UUID=', state: absent}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '.*', state: absent}",
            // A swap entry written, or rewritten active.
            "ansible.builtin.lineinfile: {path: /etc/fstab, line: '/swapfile none swap sw 0 0'}",
            "ansible.builtin.lineinfile: {path: /etc/fstab, regexp: '^/swapfile', line: '/swapfile none swap sw,pri=10 0 0'}",
            "ansible.builtin.blockinfile: {path: /etc/fstab, block: '/swapfile none swap sw 0 0'}",
            // A non-swap line removed by its text.
            "ansible.builtin.lineinfile: {path: /etc/fstab, line: 'tmpfs /tmp tmpfs defaults 0 0', state: absent}",
            // Another file.
            "ansible.builtin.lineinfile: {path: /etc/fstab.bak, regexp: '.*swap.*', state: absent}",
            "ansible.builtin.replace: {path: /etc/fstab, regexp: '^(/dev/sdb1.*)$', replace: '#\\1'}",
        ] {
            let l = lines(task);
            assert!(
                !l.iter().any(|x| x.starts_with("swap_off")),
                "{task}: {l:?}"
            );
        }
    }

    #[test]
    fn the_decision_itself() {
        let edit = |regexp: Option<&str>, text: &str, remove: bool| Edit {
            text: text.to_string(),
            regexp: regexp.map(str::to_string),
            remove,
        };
        assert!(edit_turns_swap_off(&edit(Some("swap"), "", true)));
        assert!(!edit_turns_swap_off(&edit(Some("^/dev/fd0"), "", true)));
        assert!(!edit_turns_swap_off(&edit(
            Some("swap"),
            "/swapfile none swap sw 0 0",
            false
        )));
        assert!(edit_turns_swap_off(&edit(
            Some("swap"),
            "  # commented",
            false
        )));
        assert!(!edit_turns_swap_off(&edit(None, "", true)));
        assert!(!edit_turns_swap_off(&edit(Some(""), "", true)));
        assert!(selects_swap_entries("\\snone\\s"));
        assert!(!selects_swap_entries("{{ fstab_regexp }}"));
    }

    #[test]
    fn written_fstab_without_swap_turns_swap_off() {
        let l = lines(
            "ansible.builtin.copy: {dest: /etc/fstab, content: \"UUID=1 / ext4 defaults 0 1\\n# /swapfile none swap sw 0 0\\n\"}",
        );
        assert!(has(&l, OFF), "{l:?}");
        let l = lines(
            "ansible.builtin.copy: {dest: /etc/fstab, content: \"UUID=1 / ext4 defaults 0 1\\n/swapfile none swap sw 0 0\\n\"}",
        );
        assert!(!l.iter().any(|x| x.starts_with("swap_off")), "{l:?}");
        // Content not known: nothing said.
        let l = lines("ansible.builtin.template: {src: fstab.j2, dest: /etc/fstab}");
        assert!(!l.iter().any(|x| x.starts_with("swap_off")), "{l:?}");
    }

    #[test]
    fn zram_generator_configuration() {
        let generator = "swap_off how=generator unit=zram-generator @boot";
        for task in [
            "ansible.builtin.file: {path: /etc/systemd/zram-generator.conf, state: absent}",
            "ansible.builtin.file: {path: /usr/lib/systemd/zram-generator.conf, state: absent}",
            "ansible.builtin.file: {path: /etc/systemd/zram-generator.conf, src: /dev/null, state: link}",
            "ansible.builtin.copy: {dest: /etc/systemd/zram-generator.conf, content: ''}",
            "ansible.builtin.copy: {dest: /etc/systemd/zram-generator.conf, content: \"# no zram\\n\"}",
        ] {
            let l = lines(task);
            assert!(has(&l, generator), "{task}: {l:?}");
        }
        for task in [
            "ansible.builtin.copy: {dest: /etc/systemd/zram-generator.conf, content: \"[zram0]\\nzram-size = ram / 2\\n\"}",
            "ansible.builtin.file: {path: /etc/systemd/zram-generator.conf.d/size.conf, state: absent}",
            "ansible.builtin.template: {src: zram.j2, dest: /etc/systemd/zram-generator.conf}",
        ] {
            let l = lines(task);
            assert!(
                !l.iter().any(|x| x.starts_with("swap_off")),
                "{task}: {l:?}"
            );
        }
    }

    #[test]
    fn swap_units() {
        assert!(is_swap_unit("swap.target"));
        assert!(is_swap_unit("dev-sda2.swap"));
        assert!(is_swap_unit("swapfile.swap"));
        assert!(!is_swap_unit(".swap"));
        assert!(!is_swap_unit("swap.service"));
        assert!(!is_swap_unit("swap"));
    }
}
