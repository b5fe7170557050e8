//! Command lines as real roles write them, each with the effects it must
//! give, both ways: the forms recognised and their look-alikes.

use super::{effects, exec_effects};
use crate::effect::{Effect, EffectKind, Known, SwapOff, SysctlApply, TaskView, derive};
use std::fmt::Write as _;
use std::sync::Arc;

/// One effect as a short line: `sysctl_set net.ipv4.ip_forward=1 now`.
fn render(e: &Effect) -> String {
    let t = match (e.timing.now, e.timing.boot) {
        (true, true) => "both",
        (true, false) => "now",
        (false, true) => "boot",
        (false, false) => "neither",
    };
    let opt = |label: &str, v: &Option<String>| {
        v.as_ref()
            .map(|v| format!("{label}{v}"))
            .unwrap_or_default()
    };
    let body = match &e.kind {
        EffectKind::SysctlSet { key, value, file } => {
            format!("sysctl_set {key}={value}{}", opt(" in ", file))
        }
        EffectKind::SysctlRemoved { key, file } => format!("sysctl_removed {key} in {file}"),
        EffectKind::SysctlApplied { apply } => match apply {
            SysctlApply::File(f) => format!("sysctl_applied {f}"),
            SysctlApply::All(engine) => format!("sysctl_applied all {}", engine.label()),
        },
        EffectKind::ModuleLoaded { name, file } => {
            format!("module_loaded {name}{}", opt(" in ", file))
        }
        EffectKind::ModuleBlocked { name, file } => format!("module_blocked {name} in {file}"),
        EffectKind::SwapOff { how } => match how {
            SwapOff::All => "swap_off all".to_string(),
            SwapOff::FstabEntries => "swap_off fstab".to_string(),
            SwapOff::UnitMasked(u) => format!("swap_off unit_masked {u}"),
            SwapOff::Generator(g) => format!("swap_off generator {g}"),
        },
        EffectKind::FileWritten {
            path,
            mode,
            content,
            replaces_link,
        } => {
            let mut s = format!("file_written {path}{}", opt(" mode=", mode));
            match content.known {
                Known::Known => write!(s, " {:?}", content.raw.as_ref()).unwrap(),
                Known::Partly => write!(s, " partly {:?}", content.raw.as_ref()).unwrap(),
                Known::Unknown => s.push_str(" unknown"),
            }
            if *replaces_link {
                s.push_str(" replaces_link");
            }
            s
        }
        EffectKind::FileEdited { path, edit } => {
            let mut s = format!("file_edited {path} {:?}", edit.text);
            if let Some(re) = &edit.regexp {
                write!(s, " at {re:?}").unwrap();
            }
            if edit.remove {
                s.push_str(" remove");
            }
            s
        }
        EffectKind::FileRemoved { path } => format!("file_removed {path}"),
        EffectKind::Linked { path, target } => format!("linked {path} -> {target}"),
        EffectKind::Service { unit, action } => format!("service {unit} {}", action.as_str()),
        EffectKind::Package {
            name,
            action,
            version,
        } => format!("package {name}{} {}", opt("=", version), action.as_str()),
        EffectKind::Firewall {
            tool,
            action,
            port,
            proto,
        } => format!(
            "firewall {tool} {}{}{}",
            action.as_str(),
            opt(" ", port),
            opt("/", proto)
        ),
        EffectKind::Hostname { name } => format!("hostname {name}"),
        EffectKind::HandlerNotified { name } => format!("notify {name}"),
        EffectKind::HandlersFlushed => "flush".to_string(),
        EffectKind::Check { what, port, .. } => format!("check{} {what:?}", opt(" ", port)),
        EffectKind::Kubeadm { args } => format!("kubeadm {args}"),
        EffectKind::Command { line } => format!("command {line:?}"),
    };
    format!("{body} {t}")
}

/// Checks every case and reports all the differences at once. A case
/// that expects nothing expects the opaque command alone; [`OPAQUE`] in a
/// list stands for the opaque command of the line.
fn check_all(cases: &[(&str, &[&str])], read: fn(&str) -> Vec<Effect>) {
    let mut failures = String::new();
    for (line, want) in cases {
        let want: Vec<String> = if want.is_empty() {
            vec![opaque(line)]
        } else {
            want.iter()
                .map(|w| {
                    if *w == OPAQUE {
                        opaque(line)
                    } else {
                        (*w).to_string()
                    }
                })
                .collect()
        };
        let got: Vec<String> = read(line).iter().map(render).collect();
        if got != want {
            writeln!(failures, "\n{line:?}\n  want: {want:#?}\n  got:  {got:#?}").unwrap();
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

const OPAQUE: &str = "command";

/// The opaque effect of a line.
fn opaque(line: &str) -> String {
    format!("{OPAQUE} {line:?} now")
}

#[test]
fn sysctl_commands() {
    let cases: &[(&str, &[&str])] = &[
        (
            "sysctl -w net.ipv4.ip_forward=1",
            &["sysctl_set net.ipv4.ip_forward=1 now"],
        ),
        (
            "sysctl -w net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1",
            &[
                "sysctl_set net.bridge.bridge-nf-call-iptables=1 now",
                "sysctl_set net.bridge.bridge-nf-call-ip6tables=1 now",
            ],
        ),
        // procps writes any argument that holds `=`.
        (
            "sysctl net.ipv4.ip_forward=1",
            &["sysctl_set net.ipv4.ip_forward=1 now"],
        ),
        (
            "sudo /usr/sbin/sysctl -q -w vm.swappiness=0",
            &["sysctl_set vm.swappiness=0 now"],
        ),
        (
            "sysctl -w 'net.ipv4.ip_local_port_range=1024 65535'",
            &["sysctl_set net.ipv4.ip_local_port_range=1024 65535 now"],
        ),
        (
            "sysctl -e -w \"net.ipv4.ip_forward = 1\"",
            &["sysctl_set net.ipv4.ip_forward=1 now"],
        ),
        ("sysctl -p", &["sysctl_applied /etc/sysctl.conf now"]),
        (
            "sysctl -p /etc/sysctl.d/k8s.conf",
            &["sysctl_applied /etc/sysctl.d/k8s.conf now"],
        ),
        (
            "sysctl --load=/etc/sysctl.d/k8s.conf",
            &["sysctl_applied /etc/sysctl.d/k8s.conf now"],
        ),
        (
            "sysctl -p/etc/sysctl.d/a.conf",
            &["sysctl_applied /etc/sysctl.d/a.conf now"],
        ),
        (
            "sysctl --system",
            &["sysctl_applied all sysctl --system now"],
        ),
        (
            "sysctl --system >/dev/null 2>&1",
            &["sysctl_applied all sysctl --system now"],
        ),
        (
            "systemctl restart systemd-sysctl",
            &[
                "service systemd-sysctl restarted now",
                "sysctl_applied all systemd-sysctl now",
            ],
        ),
        (
            "systemctl start systemd-sysctl.service",
            &[
                "service systemd-sysctl.service started now",
                "sysctl_applied all systemd-sysctl now",
            ],
        ),
        (
            "sysctl -w net.ipv4.ip_forward=1 && sysctl --system",
            &[
                "sysctl_set net.ipv4.ip_forward=1 now",
                "sysctl_applied all sysctl --system now",
            ],
        ),
        (
            "sysctl -p /etc/sysctl.d/k8s.conf; systemctl restart systemd-sysctl",
            &[
                "sysctl_applied /etc/sysctl.d/k8s.conf now",
                "service systemd-sysctl restarted now",
                "sysctl_applied all systemd-sysctl now",
            ],
        ),
        // A live value under /proc/sys.
        (
            "echo 1 > /proc/sys/net/ipv4/ip_forward",
            &["sysctl_set net.ipv4.ip_forward=1 now"],
        ),
        (
            "echo '1' | sudo tee /proc/sys/net/bridge/bridge-nf-call-iptables",
            &["sysctl_set net.bridge.bridge-nf-call-iptables=1 now"],
        ),
        (
            "sudo bash -c \"echo '1' > /proc/sys/net/bridge/bridge-nf-call-iptables\"",
            &["sysctl_set net.bridge.bridge-nf-call-iptables=1 now"],
        ),
        (
            "echo 0 > /proc/sys/net/ipv4/conf/eth0.100/rp_filter",
            &["sysctl_set net.ipv4.conf.eth0/100.rp_filter=0 now"],
        ),
        // Standard input given to `sysctl -p -`.
        (
            "printf 'net.ipv4.ip_forward = 1\\n' | sysctl -p -",
            &["sysctl_set net.ipv4.ip_forward=1 now"],
        ),
        // Reads and look-alikes.
        ("sysctl net.ipv4.ip_forward", &[]),
        ("sysctl -n net.ipv4.ip_forward", &[]),
        ("sysctl -a | grep forward", &[]),
        ("echo sysctl -w net.ipv4.ip_forward=1", &[]),
        (
            "echo \"sysctl -w net.ipv4.ip_forward=1; sysctl --system\"",
            &[],
        ),
        ("grep -r sysctl /etc", &[]),
        ("cat /proc/sys/net/ipv4/ip_forward", &[]),
        ("# sysctl -w net.ipv4.ip_forward=1", &[]),
        // `cat FILE` into /proc/sys: the value is not known.
        ("cat /tmp/v > /proc/sys/net/ipv4/ip_forward", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn file_writes() {
    let cases: &[(&str, &[&str])] = &[
        (
            "echo 'net.ipv4.ip_forward = 1' >> /etc/sysctl.d/k8s.conf",
            &["file_edited /etc/sysctl.d/k8s.conf \"net.ipv4.ip_forward = 1\" both"],
        ),
        (
            "echo br_netfilter > /etc/modules-load.d/k8s.conf",
            &["file_written /etc/modules-load.d/k8s.conf \"br_netfilter\\n\" both"],
        ),
        (
            "echo -e 'overlay\\nbr_netfilter' | sudo tee /etc/modules-load.d/k8s.conf > /dev/null",
            &["file_written /etc/modules-load.d/k8s.conf \"overlay\\nbr_netfilter\\n\" both"],
        ),
        (
            "echo br_netfilter | tee -a /etc/modules",
            &["file_edited /etc/modules \"br_netfilter\" both"],
        ),
        (
            "printf '%s\\n' overlay br_netfilter > /etc/modules-load.d/containerd.conf",
            &[
                "file_written /etc/modules-load.d/containerd.conf \"overlay\\nbr_netfilter\\n\" both",
            ],
        ),
        (
            "printf 'net.ipv4.ip_forward=1\\n' >> /etc/sysctl.conf",
            &["file_edited /etc/sysctl.conf \"net.ipv4.ip_forward=1\" both"],
        ),
        (
            "cat <<EOF | sudo tee /etc/modules-load.d/k8s.conf\noverlay\nbr_netfilter\nEOF\nsudo modprobe overlay\nsudo modprobe br_netfilter",
            &[
                "file_written /etc/modules-load.d/k8s.conf \"overlay\\nbr_netfilter\\n\" both",
                "module_loaded overlay now",
                "module_loaded br_netfilter now",
            ],
        ),
        (
            "cat > /etc/sysctl.d/k8s.conf <<EOF\nnet.ipv4.ip_forward = 1\nEOF\nsysctl --system",
            &[
                "file_written /etc/sysctl.d/k8s.conf \"net.ipv4.ip_forward = 1\\n\" both",
                "sysctl_applied all sysctl --system now",
            ],
        ),
        (
            "tee /etc/sysctl.d/kubernetes.conf <<'EOT'\nnet.ipv4.ip_forward = 1\nEOT",
            &["file_written /etc/sysctl.d/kubernetes.conf \"net.ipv4.ip_forward = 1\\n\" both"],
        ),
        (
            "cat <<EOF >> /etc/sysctl.d/10-kubernetes.conf\nnet.ipv4.ip_forward=$X\nEOF",
            &["file_edited /etc/sysctl.d/10-kubernetes.conf \"net.ipv4.ip_forward=$X\" both"],
        ),
        (
            "cat <<EOF > /etc/x.conf\na=$HOME\nEOF",
            &["file_written /etc/x.conf partly \"a=$HOME\\n\" both"],
        ),
        (
            "echo \"x=$Y\" > /etc/x",
            &["file_written /etc/x partly \"x=$Y\\n\" both"],
        ),
        // dash's echo reads escapes, bash's does not: partly known.
        (
            "echo 'a\\nb' > /etc/x",
            &["file_written /etc/x partly \"a\\\\nb\\n\" both"],
        ),
        ("echo -n 1 > /etc/x", &["file_written /etc/x \"1\" both"]),
        (
            "cat - > /etc/x <<EOF\na\nEOF",
            &["file_written /etc/x \"a\\n\" both"],
        ),
        ("> /etc/x", &["file_written /etc/x \"\" both"]),
        (
            "curl -fsSLo /etc/apt/keyrings/k.gpg https://x/k.gpg",
            &["file_written /etc/apt/keyrings/k.gpg unknown both"],
        ),
        (
            "wget -qO /usr/local/bin/x https://x/x",
            &["file_written /usr/local/bin/x unknown both"],
        ),
        ("cat /tmp/a > /etc/b", &["file_written /etc/b unknown both"]),
        (
            "echo never > /sys/kernel/mm/transparent_hugepage/enabled",
            &["file_written /sys/kernel/mm/transparent_hugepage/enabled \"never\\n\" now"],
        ),
        // An unrecognised command's redirection is still a write.
        (
            "./install.sh > /var/log/install.log",
            &[OPAQUE, "file_written /var/log/install.log unknown both"],
        ),
        (
            "rm -f /etc/sysctl.d/99-sysctl.conf",
            &["file_removed /etc/sysctl.d/99-sysctl.conf both"],
        ),
        ("rm -f /etc/sysctl.d/*.conf", &[]),
        (
            "ln -sf /dev/null /etc/sysctl.d/99-sysctl.conf",
            &["linked /etc/sysctl.d/99-sysctl.conf -> /dev/null both"],
        ),
        ("ln /a /b", &[]),
        (
            "cp /tmp/k8s.conf /etc/sysctl.d/k8s.conf",
            &["file_written /etc/sysctl.d/k8s.conf unknown both"],
        ),
        ("cp a b c/", &[]),
        (
            "mv /etc/sysctl.d/a.conf /etc/sysctl.d/b.conf",
            &[
                "file_removed /etc/sysctl.d/a.conf both",
                "file_written /etc/sysctl.d/b.conf unknown replaces_link both",
            ],
        ),
        (
            "install -m 0644 k8s.conf /etc/sysctl.d/k8s.conf",
            &["file_written /etc/sysctl.d/k8s.conf mode=0644 unknown replaces_link both"],
        ),
        ("install -d /etc/x", &[]),
        // Text alone, to nobody.
        ("echo hello", &[]),
        ("cat /etc/fstab", &[]),
        ("echo ok > /dev/null", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn kernel_modules() {
    let cases: &[(&str, &[&str])] = &[
        ("modprobe br_netfilter", &["module_loaded br_netfilter now"]),
        ("/sbin/modprobe -v overlay", &["module_loaded overlay now"]),
        ("modprobe dummy numdummies=2", &["module_loaded dummy now"]),
        (
            "modprobe -a overlay br_netfilter",
            &[
                "module_loaded overlay now",
                "module_loaded br_netfilter now",
            ],
        ),
        // A name the shell computes is not known.
        ("for m in overlay br_netfilter; do modprobe $m; done", &[]),
        (
            "modprobe overlay; modprobe \"$M\"",
            &["module_loaded overlay now", OPAQUE],
        ),
        ("modprobe -r br_netfilter", &[]),
        ("modprobe --remove br_netfilter", &[]),
        ("modprobe -n br_netfilter", &[]),
        ("lsmod | grep br_netfilter", &[]),
        ("echo modprobe br_netfilter", &[]),
        (
            "lsmod | grep -q br_netfilter || modprobe br_netfilter",
            &[OPAQUE, "module_loaded br_netfilter now"],
        ),
    ];
    check_all(cases, effects);
}

#[test]
fn swap() {
    let cases: &[(&str, &[&str])] = &[
        ("swapoff -a", &["swap_off all now"]),
        ("sudo swapoff --all", &["swap_off all now"]),
        ("/sbin/swapoff -av", &["swap_off all now"]),
        ("swapoff /swap.img", &[]),
        ("swapon --show", &[]),
        ("grep swapoff /etc/rc.local", &[]),
        (
            "swapoff -a && sed -i '/ swap / s/^/#/' /etc/fstab",
            &[
                "swap_off all now",
                "file_edited /etc/fstab \"\" at \" swap \" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "sed -i '/swap/d' /etc/fstab",
            &[
                "file_edited /etc/fstab \"\" at \"swap\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "sed -ri '/\\sswap\\s/s/^#?/#/' /etc/fstab",
            &[
                "file_edited /etc/fstab \"\" at \"\\\\sswap\\\\s\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "sed -ri '/^[^#]*swap/s@^@#@' /etc/fstab",
            &[
                "file_edited /etc/fstab \"\" at \"^[^#]*swap\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "sed -i -e 's/.*swap.*/#&/' /etc/fstab",
            &[
                "file_edited /etc/fstab \"\" at \".*swap.*\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "sed -i.bak '/\\/swap.img/d' /etc/fstab",
            &[
                "file_edited /etc/fstab \"\" at \"/swap.img\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "sed -i '/swap/{s/^/#/}' /etc/fstab",
            &[
                "file_edited /etc/fstab \"\" at \"swap\" remove both",
                "swap_off fstab boot",
            ],
        ),
        // Look-alikes: another line, uncommenting, the swap lines kept.
        (
            "sed -i '/fd0/d' /etc/fstab",
            &["file_edited /etc/fstab \"\" at \"fd0\" remove both"],
        ),
        (
            "sed -i '/dev\\/fd0/d' /etc/fstab",
            &["file_edited /etc/fstab \"\" at \"dev/fd0\" remove both"],
        ),
        (
            "sed -i 's/^#\\(.*swap.*\\)/\\1/' /etc/fstab",
            &["file_edited /etc/fstab \"\\\\1\" at \"^#\\\\(.*swap.*\\\\)\" both"],
        ),
        (
            "sed -i '/swap/!d' /etc/fstab",
            &["file_edited /etc/fstab \"\" remove both"],
        ),
        ("sed -n '/swap/p' /etc/fstab", &[]),
        // Not fstab.
        (
            "sed -i '/swap/d' /etc/fstab.bak",
            &["file_edited /etc/fstab.bak \"\" at \"swap\" remove both"],
        ),
        (
            "systemctl mask swap.target",
            &[
                "service swap.target masked boot",
                "swap_off unit_masked swap.target boot",
            ],
        ),
        (
            "systemctl mask --now dev-sdb2.swap",
            &[
                "service dev-sdb2.swap masked boot",
                "swap_off unit_masked dev-sdb2.swap boot",
                "service dev-sdb2.swap stopped now",
            ],
        ),
        (
            "systemctl disable --now dphys-swapfile",
            &[
                "service dphys-swapfile disabled boot",
                "swap_off generator dphys-swapfile boot",
                "service dphys-swapfile stopped now",
            ],
        ),
        (
            "apt-get purge -y dphys-swapfile",
            &[
                "package dphys-swapfile removed both",
                "swap_off generator dphys-swapfile boot",
            ],
        ),
        (
            "systemctl unmask swap.target",
            &["service swap.target unmasked boot"],
        ),
        (
            "[[ $(swapon --show) ]] && swapoff -a && sed -i 's/^\\([^#].*?\\sswap\\s+sw\\s+.*\\)$/# \\1/' /etc/fstab",
            &[
                "swap_off all now",
                "file_edited /etc/fstab \"\" at \"^\\\\([^#].*?\\\\sswap\\\\s+sw\\\\s+.*\\\\)$\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "update-rc.d dphys-swapfile remove",
            &[
                "service dphys-swapfile disabled boot",
                "swap_off generator dphys-swapfile boot",
            ],
        ),
        ("dphys-swapfile swapoff", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn sed_edits() {
    let cases: &[(&str, &[&str])] = &[
        (
            "sed -i 's/#net.ipv4.ip_forward=1/net.ipv4.ip_forward=1/g' /etc/sysctl.conf",
            &[
                "file_edited /etc/sysctl.conf \"net.ipv4.ip_forward=1\" at \"#net.ipv4.ip_forward=1\" both",
            ],
        ),
        (
            "sed -i -e 's|a|b|' -e '$a net.ipv4.ip_forward = 1' /etc/sysctl.conf",
            &[
                "file_edited /etc/sysctl.conf \"b\" at \"a\" both",
                "file_edited /etc/sysctl.conf \"net.ipv4.ip_forward = 1\" both",
            ],
        ),
        (
            "sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml",
            &[
                "file_edited /etc/containerd/config.toml \"SystemdCgroup = true\" at \"SystemdCgroup = false\" both",
            ],
        ),
        (
            "sed -i -f script.sed /etc/x",
            &[OPAQUE, "file_edited /etc/x \"\" both"],
        ),
        (
            "sed 's/a/b/' in > /etc/out",
            &["file_written /etc/out unknown both"],
        ),
        ("sed -i 's/a/b/'", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn services() {
    let cases: &[(&str, &[&str])] = &[
        (
            "systemctl enable kubelet",
            &["service kubelet enabled boot"],
        ),
        (
            "systemctl enable --now containerd",
            &[
                "service containerd enabled boot",
                "service containerd started now",
            ],
        ),
        (
            "systemctl --now disable kubelet",
            &[
                "service kubelet disabled boot",
                "service kubelet stopped now",
            ],
        ),
        (
            "systemctl daemon-reload && systemctl restart kubelet",
            &[
                "service  daemon_reload now",
                "service kubelet restarted now",
            ],
        ),
        (
            "sudo systemctl start containerd docker",
            &[
                "service containerd started now",
                "service docker started now",
            ],
        ),
        ("systemctl reload crio", &["service crio reloaded now"]),
        ("systemctl -q is-active kubelet", &[]),
        ("systemctl status kubelet", &[]),
        ("systemctl -H host restart kubelet", &[]),
        ("service docker restart", &["service docker restarted now"]),
        ("service kubelet status", &[]),
        ("chkconfig kubelet on", &["service kubelet enabled boot"]),
        (
            "update-rc.d kubelet defaults",
            &["service kubelet enabled boot"],
        ),
        (
            "systemctl is-active kubelet || systemctl start kubelet",
            &[OPAQUE, "service kubelet started now"],
        ),
        ("hostnamectl set-hostname node1", &["hostname node1 both"]),
        (
            "hostnamectl --transient set-hostname node1",
            &["hostname node1 now"],
        ),
        ("hostname node1", &["hostname node1 now"]),
        ("hostname -f", &[]),
        ("hostname", &[]),
        (
            "kubeadm init --config /etc/kubernetes/kubeadm.yaml --ignore-preflight-errors=Swap",
            &[
                "kubeadm init --config /etc/kubernetes/kubeadm.yaml --ignore-preflight-errors=Swap now",
            ],
        ),
        (
            "/usr/local/bin/kubeadm join 10.0.0.1:6443 --token \"$TOKEN\"",
            &["kubeadm join 10.0.0.1:6443 --token $TOKEN now"],
        ),
        ("kubeadm reset -f", &["kubeadm reset -f now"]),
        // Jinja the caller could not render stays one opaque part.
        (
            "{{ bin_dir }}/kubeadm init --config={{ kube_config_dir }}/kubeadm-config.yaml",
            &["kubeadm init --config={{ kube_config_dir }}/kubeadm-config.yaml now"],
        ),
        ("systemctl restart {{ item }}", &[]),
        (
            "echo '{{ x }}' > /etc/x",
            &["file_written /etc/x partly \"{{ x }}\\n\" both"],
        ),
    ];
    check_all(cases, effects);
}

#[test]
fn packages() {
    let cases: &[(&str, &[&str])] = &[
        (
            "apt-mark hold kubelet kubeadm kubectl",
            &[
                "package kubelet held both",
                "package kubeadm held both",
                "package kubectl held both",
            ],
        ),
        ("apt-mark unhold kubelet", &["package kubelet unheld both"]),
        ("apt-mark showhold", &[]),
        (
            "apt-get install -y kubelet=1.28.2-1.1 kubeadm=1.28.2-1.1",
            &[
                "package kubelet=1.28.2-1.1 installed both",
                "package kubeadm=1.28.2-1.1 installed both",
            ],
        ),
        (
            "DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Options::=--force-confold install -y --no-install-recommends containerd.io",
            &["package containerd.io installed both"],
        ),
        (
            "apt install ./cri-o_1.28.1_amd64.deb",
            &["package cri-o=1.28.1 installed both"],
        ),
        (
            "apt-get -y -t bullseye-backports install foo/bullseye",
            &["package foo installed both"],
        ),
        (
            "apt-get remove -y docker docker.io",
            &[
                "package docker removed both",
                "package docker.io removed both",
            ],
        ),
        ("apt-get update && apt-get upgrade -y", &[]),
        (
            "apt-get update && apt-get install -y kubelet",
            &["package kubelet installed both"],
        ),
        ("apt-get update", &[]),
        (
            "yum makecache fast && yum install -y kubelet-$V",
            &["package kubelet=$V installed both"],
        ),
        ("apt-get install -y $PKGS", &[]),
        (
            "yum install -y kubelet-1.28.2 kubeadm-1.28.2 --disableexcludes=kubernetes",
            &[
                "package kubelet=1.28.2 installed both",
                "package kubeadm=1.28.2 installed both",
            ],
        ),
        (
            "dnf install -y containerd.io",
            &["package containerd.io installed both"],
        ),
        (
            "dnf --enablerepo kubernetes install -y cri-tools",
            &["package cri-tools installed both"],
        ),
        ("dnf remove -y podman", &["package podman removed both"]),
        (
            "dnf versionlock add kubelet-1.28.2",
            &["package kubelet=1.28.2 held both"],
        ),
        (
            "yum versionlock kubelet kubeadm",
            &["package kubelet held both", "package kubeadm held both"],
        ),
        (
            "dnf versionlock delete kubelet",
            &["package kubelet unheld both"],
        ),
        ("dnf versionlock list", &[]),
        ("dnf mark install kubelet", &[]),
        (
            "zypper -n in -y kubernetes-kubelet",
            &["package kubernetes-kubelet installed both"],
        ),
        ("zypper addlock kubelet", &["package kubelet held both"]),
        (
            "rpm -ivh /tmp/kubelet-1.28.2-0.x86_64.rpm",
            &["package kubelet=1.28.2-0 installed both"],
        ),
        ("rpm -e podman", &["package podman removed both"]),
        ("rpm -qa | grep kube", &[]),
        (
            "dpkg -i /tmp/containerd_1.7.0_amd64.deb",
            &["package containerd=1.7.0 installed both"],
        ),
        (
            "echo 'kubelet hold' | dpkg --set-selections",
            &["package kubelet held both"],
        ),
        (
            "apk add --no-cache containerd=1.7.0-r0",
            &["package containerd=1.7.0-r0 installed both"],
        ),
        (
            "pacman -S --noconfirm containerd",
            &["package containerd installed both"],
        ),
        ("pacman -Ss containerd", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn firewall() {
    let cases: &[(&str, &[&str])] = &[
        ("ufw allow 6443/tcp", &["firewall ufw opened 6443/tcp both"]),
        (
            "ufw allow 2379:2380/tcp",
            &["firewall ufw opened 2379-2380/tcp both"],
        ),
        ("ufw allow 10250", &["firewall ufw opened 10250 both"]),
        (
            "ufw allow 6443/tcp comment 'kube-apiserver'",
            &["firewall ufw opened 6443/tcp both"],
        ),
        ("ufw deny 6443", &["firewall ufw closed 6443 both"]),
        ("ufw --force disable", &["firewall ufw disabled both"]),
        (
            "ufw allow from 10.0.0.0/8 to any port 6443 proto tcp",
            &["firewall ufw opened 6443/tcp both"],
        ),
        ("ufw allow OpenSSH", &[]),
        ("ufw allow from 10.0.0.0/8", &[]),
        ("ufw status", &[]),
        ("ufw enable", &[]),
        (
            "firewall-cmd --permanent --add-port=6443/tcp",
            &["firewall firewalld opened 6443/tcp boot"],
        ),
        (
            "firewall-cmd --add-port=6443/tcp",
            &["firewall firewalld opened 6443/tcp now"],
        ),
        (
            "firewall-cmd --zone=public --add-port=30000-32767/tcp --permanent",
            &["firewall firewalld opened 30000-32767/tcp boot"],
        ),
        (
            "firewall-cmd --permanent --add-port=6443/tcp && firewall-cmd --reload",
            &["firewall firewalld opened 6443/tcp both"],
        ),
        (
            "firewall-cmd --add-port=6443/tcp && firewall-cmd --reload",
            &["firewall firewalld opened 6443/tcp neither"],
        ),
        (
            "firewall-cmd --add-port=6443/tcp && firewall-cmd --runtime-to-permanent",
            &["firewall firewalld opened 6443/tcp both"],
        ),
        (
            "firewall-cmd --permanent --add-port={6443/tcp,2379-2380/tcp}",
            &[
                "firewall firewalld opened 6443/tcp boot",
                "firewall firewalld opened 2379-2380/tcp boot",
            ],
        ),
        (
            "firewall-cmd --permanent --remove-port=6443/tcp",
            &["firewall firewalld closed 6443/tcp boot"],
        ),
        ("firewall-cmd --reload", &[]),
        ("firewall-cmd --permanent --add-service=http", &[]),
        ("firewall-cmd --state", &[]),
        (
            "systemctl stop firewalld",
            &[
                "service firewalld stopped now",
                "firewall firewalld disabled now",
            ],
        ),
        (
            "systemctl disable --now firewalld.service",
            &[
                "service firewalld.service disabled boot",
                "service firewalld.service stopped now",
                "firewall firewalld disabled both",
            ],
        ),
        (
            "systemctl disable ufw",
            &["service ufw disabled boot", "firewall ufw disabled boot"],
        ),
        (
            "service ufw stop",
            &["service ufw stopped now", "firewall ufw disabled now"],
        ),
        (
            "systemctl start firewalld",
            &["service firewalld started now"],
        ),
        (
            "iptables -A INPUT -p tcp --dport 6443 -j ACCEPT",
            &["firewall iptables opened 6443/tcp now"],
        ),
        (
            "iptables -I INPUT 1 -p tcp -m multiport --dports 2379:2380,10250 -j ACCEPT",
            &[
                "firewall iptables opened 2379-2380/tcp now",
                "firewall iptables opened 10250/tcp now",
            ],
        ),
        (
            "ip6tables -A INPUT -p tcp --dport 6443 -j DROP",
            &["firewall ip6tables closed 6443/tcp now"],
        ),
        ("iptables -A FORWARD -p tcp --dport 6443 -j ACCEPT", &[]),
        ("iptables -D INPUT -p tcp --dport 6443 -j ACCEPT", &[]),
        (
            "iptables -t nat -A INPUT -p tcp --dport 6443 -j ACCEPT",
            &[],
        ),
        ("iptables -P FORWARD ACCEPT", &[]),
        ("iptables -A INPUT -i lo -j ACCEPT", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn probes() {
    let cases: &[(&str, &[&str])] = &[
        (
            "ss -ltn | grep 6443",
            &["check 6443 \"ss -ltn | grep 6443\" now"],
        ),
        (
            "netstat -tulpn | grep -E ':(2379|2380)\\s'",
            &[
                "check 2379 \"netstat -tulpn | grep -E ':(2379|2380)\\\\s'\" now",
                "check 2380 \"netstat -tulpn | grep -E ':(2379|2380)\\\\s'\" now",
            ],
        ),
        ("lsof -i :10250", &["check 10250 \"lsof -i :10250\" now"]),
        (
            "sudo lsof -i TCP:6443",
            &["check 6443 \"sudo lsof -i TCP:6443\" now"],
        ),
        (
            "timeout 2 bash -c \"</dev/tcp/127.0.0.1/6443\" && echo in use || echo free",
            &["check 6443 \"</dev/tcp/127.0.0.1/6443\" now", OPAQUE],
        ),
        (
            "ss -H -ltn 'sport = :10259'",
            &["check 10259 \"ss -H -ltn 'sport = :10259'\" now"],
        ),
        (
            "ss -tlnp | grep 127.0.0.1 | wc -l",
            &["check \"ss -tlnp | grep 127.0.0.1 | wc -l\" now"],
        ),
        (
            "ss -ltn | grep 6443 | xargs echo",
            &["check 6443 \"ss -ltn | grep 6443\" now", OPAQUE],
        ),
        (
            "ss -ltnp | grep :6443 > /tmp/ports",
            &[
                "check 6443 \"ss -ltnp | grep :6443 > /tmp/ports\" now",
                "file_written /tmp/ports unknown both",
            ],
        ),
        ("fuser 6443/tcp", &["check 6443 \"fuser 6443/tcp\" now"]),
        (
            "fuser -n tcp 10250",
            &["check 10250 \"fuser -n tcp 10250\" now"],
        ),
        ("fuser -k 6443/tcp", &[]),
        ("fuser -vk 6443/tcp", &[]),
        (
            "nc -zv 10.0.0.1 6443",
            &["check 6443 \"nc -zv 10.0.0.1 6443\" now"],
        ),
        (
            "nc -z -w 2 localhost 2379-2380",
            &["check 2379-2380 \"nc -z -w 2 localhost 2379-2380\" now"],
        ),
        ("nc -l 6443", &[]),
        (
            "curl -sk https://127.0.0.1:6443/healthz",
            &["check 6443 \"curl -sk https://127.0.0.1:6443/healthz\" now"],
        ),
        (
            "curl -fsS http://localhost/healthz",
            &["check \"curl -fsS http://localhost/healthz\" now"],
        ),
        ("curl -X POST http://x:8080/api", &[]),
        ("curl -fsSL https://get.docker.com | sh", &[]),
        (
            "wget --spider -q http://127.0.0.1:10248/healthz",
            &["check 10248 \"wget --spider -q http://127.0.0.1:10248/healthz\" now"],
        ),
        ("wget https://x/y.tar.gz", &[]),
        (
            "timeout 1 bash -c '</dev/tcp/127.0.0.1/6443'",
            &["check 6443 \"</dev/tcp/127.0.0.1/6443\" now"],
        ),
        (
            "echo > /dev/tcp/127.0.0.1/6443",
            &["check 6443 \"echo > /dev/tcp/127.0.0.1/6443\" now"],
        ),
    ];
    check_all(cases, effects);
}

#[test]
fn shell_forms() {
    let cases: &[(&str, &[&str])] = &[
        ("set -e; modprobe overlay", &["module_loaded overlay now"]),
        ("set -o pipefail\nswapoff -a", &["swap_off all now"]),
        (
            "env LC_ALL=C sysctl --system",
            &["sysctl_applied all sysctl --system now"],
        ),
        (
            "sudo -E -u root modprobe overlay",
            &["module_loaded overlay now"],
        ),
        ("nohup timeout -s KILL 30 swapoff -a", &["swap_off all now"]),
        (
            "sh -c 'modprobe overlay && modprobe br_netfilter'",
            &[
                "module_loaded overlay now",
                "module_loaded br_netfilter now",
            ],
        ),
        (
            "/bin/bash -euo pipefail -c \"swapoff -a\"",
            &["swap_off all now"],
        ),
        ("su - root -c 'swapoff -a'", &["swap_off all now"]),
        ("bash <<EOF\nswapoff -a\nEOF", &["swap_off all now"]),
        ("echo 'swapoff -a' | sh", &["swap_off all now"]),
        (
            "printf 'modprobe x\\n' | sudo bash -s -- --verbose",
            &["module_loaded x now"],
        ),
        ("bash /tmp/setup.sh", &[]),
        (
            "if [ -f /etc/fstab ]; then sed -i '/swap/d' /etc/fstab; fi",
            &[
                "file_edited /etc/fstab \"\" at \"swap\" remove both",
                "swap_off fstab boot",
            ],
        ),
        (
            "grep -q '^br_netfilter$' /etc/modules || echo br_netfilter >> /etc/modules",
            &["file_edited /etc/modules \"br_netfilter\" both"],
        ),
        // Quoted separators are text.
        ("echo 'a; swapoff -a'", &[]),
        (
            "echo \"x && modprobe y\" > /tmp/note",
            &["file_written /tmp/note \"x && modprobe y\\n\" both"],
        ),
        // Substitutions stay opaque.
        (
            "kubeadm token create --print-join-command > /tmp/join",
            &[
                "kubeadm token create --print-join-command now",
                "file_written /tmp/join unknown both",
            ],
        ),
        ("echo $(modprobe x)", &[]),
        ("true", &[]),
        ("", &[]),
    ];
    check_all(cases, effects);
}

#[test]
fn command_module_has_no_shell() {
    let cases: &[(&str, &[&str])] = &[
        ("modprobe br_netfilter", &["module_loaded br_netfilter now"]),
        (
            "sysctl -w net.ipv4.ip_forward=1",
            &["sysctl_set net.ipv4.ip_forward=1 now"],
        ),
        // `>` and `&&` are arguments: echo prints them.
        ("echo 1 > /proc/sys/net/ipv4/ip_forward", &[]),
        (
            "swapoff -a && sed -i '/swap/d' /etc/fstab",
            &["swap_off all now"],
        ),
    ];
    check_all(cases, exec_effects);
}

/// A `shell` task as derivation sees it.
struct ShellTask(&'static str);

impl TaskView for ShellTask {
    fn module(&self) -> &'static str {
        "ansible.builtin.shell"
    }
    fn arg(&self, _: &str) -> Option<&str> {
        None
    }
    fn arg_value(&self, _: &str) -> Option<serde_json::Value> {
        None
    }
    fn command(&self) -> Option<&str> {
        Some(self.0)
    }
    fn role_file(&self, _: &str, _: &str) -> Option<Arc<str>> {
        None
    }
    fn render(&self, _: &str) -> Option<String> {
        None
    }
    fn notify(&self) -> &[String] {
        &[]
    }
}

/// What the files a command writes mean comes from the file reading, as
/// for the file modules.
#[test]
fn written_files_mean_through_derive() {
    let cases: &[(&str, &[&str])] = &[
        (
            "echo br_netfilter > /etc/modules-load.d/k8s.conf",
            &[
                "file_written /etc/modules-load.d/k8s.conf \"br_netfilter\\n\" both",
                "module_loaded br_netfilter in /etc/modules-load.d/k8s.conf boot",
            ],
        ),
        (
            "echo 'net.ipv4.ip_forward = 1' >> /etc/sysctl.d/k8s.conf",
            &[
                "file_edited /etc/sysctl.d/k8s.conf \"net.ipv4.ip_forward = 1\" both",
                "sysctl_set net.ipv4.ip_forward=1 in /etc/sysctl.d/k8s.conf boot",
            ],
        ),
        (
            "cat <<EOF | tee /etc/sysctl.d/k8s.conf\nnet.bridge.bridge-nf-call-iptables = 1\nnet.ipv4.ip_forward = 1\nEOF\nsysctl --system",
            &[
                "file_written /etc/sysctl.d/k8s.conf \"net.bridge.bridge-nf-call-iptables = 1\\nnet.ipv4.ip_forward = 1\\n\" both",
                "sysctl_set net.bridge.bridge-nf-call-iptables=1 in /etc/sysctl.d/k8s.conf boot",
                "sysctl_set net.ipv4.ip_forward=1 in /etc/sysctl.d/k8s.conf boot",
                "sysctl_applied all sysctl --system now",
            ],
        ),
        (
            "echo br_netfilter >> /etc/modules",
            &[
                "file_edited /etc/modules \"br_netfilter\" both",
                "module_loaded br_netfilter in /etc/modules boot",
            ],
        ),
        (
            "sed -i 's/#net.ipv4.ip_forward=1/net.ipv4.ip_forward=1/' /etc/sysctl.conf",
            &[
                "file_edited /etc/sysctl.conf \"net.ipv4.ip_forward=1\" at \"#net.ipv4.ip_forward=1\" both",
                "sysctl_set net.ipv4.ip_forward=1 in /etc/sysctl.conf boot",
            ],
        ),
        // Not a sysctl file: no key.
        (
            "echo 'net.ipv4.ip_forward = 1' >> /etc/sysctl.d/k8s",
            &["file_edited /etc/sysctl.d/k8s \"net.ipv4.ip_forward = 1\" both"],
        ),
    ];
    let mut failures = String::new();
    for (line, want) in cases {
        let got: Vec<String> = derive(&ShellTask(line)).iter().map(render).collect();
        if got != *want {
            writeln!(failures, "\n{line:?}\n  want: {want:#?}\n  got:  {got:#?}").unwrap();
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

/// The screen never hides what splitting finds: a line it skips gives
/// exactly the opaque command.
#[test]
fn screen_agrees_with_reading() {
    for line in [
        "echo hello",
        "true",
        "set -e",
        "grep -q x /etc/y",
        "/opt/bin/thing --flag",
        "apt-get update",
    ] {
        assert_eq!(
            effects(line).iter().map(render).collect::<Vec<_>>(),
            [opaque(line)],
            "{line}"
        );
    }
}

/// Lines cut anywhere (an unclosed quote, a here-document without its
/// end, half an expansion) are read without panicking.
#[test]
fn truncated_lines_never_panic() {
    let lines = [
        "cat <<'EOF' | sudo tee -a /etc/modules-load.d/k8s.conf >/dev/null\noverlay\nEOF\nsysctl -p",
        "sudo bash -c \"echo '1' > /proc/sys/net/ipv4/ip_forward\" && sed -ri '/\\sswap\\s/s/^#?/#/' /etc/fstab",
        "printf '%s\\n' \"$(cat x)\" `id -u` ${A:-b} $'c\\'d' {{ x }} {% if y %}z{% endif %} | tee /é/ü",
        "firewall-cmd --permanent --add-port={6443/tcp,2379-2380/tcp} && firewall-cmd --reload",
        "curl -fsSLo /x https://h:1/p; wget -qO- https://h | sh -s -- -x; nc -zw1 h 1-2",
        "iptables -I INPUT 1 -p tcp -m multiport --dports 2379:2380 -j ACCEPT; ufw allow from a to any port 22 proto tcp",
        "sed -e 'a\\\nx' -e '/a/,/b/{s/x/y/;d}' -i /etc/fstab; systemctl --now mask dev-x.swap",
    ];
    for line in lines {
        for (i, _) in line.char_indices() {
            for part in [&line[..i], &line[i..]] {
                let _ = effects(part);
                let _ = exec_effects(part);
            }
        }
    }
}
