//! The fuzz harness shared by every target in `fuzz_targets/` (and replayed
//! by `tests/hostile.rs` on the saved crash inputs in `fuzz/regressions/`).
//!
//! Each target writes the fuzzer's bytes into one file of a small fixed
//! Ansible tree (a playbook, a role with tasks, defaults and a template, an
//! inventory, a concern file) and runs the whole `check` pipeline on it:
//! discovery, loading, YAML, the model, variables and conditions, the
//! who-fixes analysis, the sysctl simulation, every rule, then every output
//! format. Only a panic, a stack overflow, a hang or an out-of-memory is a
//! failure; load errors and setup errors are normal answers.

use preflint::settings::{CheckFormat, CheckSettings};
use std::path::{Path, PathBuf};

/// Which file of the tree the bytes replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `roles/fuzz/tasks/main.yml`.
    TasksFile,
    /// `site.yml`, the entry playbook.
    Playbook,
    /// `roles/fuzz/defaults/main.yml`, whose variables the fixed tasks use
    /// in `when`, include targets, sysctl values and a template.
    VarsFile,
    /// `inventory/hosts.ini`, or `inventory/hosts.yml` when the first byte
    /// is odd, given with `-i`.
    Inventory,
    /// `rules/fuzz.yml`, a concern file given with `--rules`.
    Catalog,
}

impl Target {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Target::TasksFile => "tasks_file",
            Target::Playbook => "playbook",
            Target::VarsFile => "vars_file",
            Target::Inventory => "inventory",
            Target::Catalog => "catalog",
        }
    }

    #[must_use]
    pub fn from_name(name: &str) -> Option<Target> {
        [
            Target::TasksFile,
            Target::Playbook,
            Target::VarsFile,
            Target::Inventory,
            Target::Catalog,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

const SITE: &str = r#"---
- name: Prepare the nodes
  hosts: k8s_cluster
  gather_facts: false
  vars_files:
    - vars/play.yml
  vars:
    swap_now: "{{ fuzz_flag | default(true) }}"
  roles:
    - role: fuzz
      when: fuzz_role | default(true)
      tags: [node]
  tasks:
    - name: Play-level import
      ansible.builtin.import_tasks: tasks/play.yml
    - name: Templated include
      ansible.builtin.include_tasks: "tasks/{{ fuzz_include | default('play') }}.yml"

- import_playbook: playbooks/more.yml
"#;

const MORE: &str = r"---
- name: Control plane
  hosts: kube_control_plane
  roles:
    - dep
";

const PLAY_VARS: &str = r"---
fuzz_include: play
kube_proxy_mode: ipvs
";

const PLAY_TASKS: &str = r"---
- name: Turn swap off now
  ansible.builtin.command: swapoff -a
  when: swap_now | bool
";

const TASKS: &str = r#"---
- name: Load the modules
  community.general.modprobe:
    name: "{{ item }}"
    state: present
  loop: "{{ fuzz_modules }}"
  when: fuzz_a is defined and fuzz_a | int > 1

- name: Persist the modules
  ansible.builtin.template:
    src: modules.conf.j2
    dest: "/etc/modules-load.d/{{ fuzz_b }}.conf"
    mode: "0644"

- name: Forward packets
  ansible.posix.sysctl:
    name: net.ipv4.ip_forward
    value: "{{ fuzz_c | default(1) }}"
    sysctl_file: /etc/sysctl.d/99-kubernetes.conf
    reload: true
  when:
    - fuzz_enabled | default(false) | bool
    - ansible_os_family in fuzz_families

- name: Late hardening
  ansible.builtin.copy:
    dest: /etc/sysctl.d/zz-hardening.conf
    content: "net.ipv4.ip_forward = {{ fuzz_c }}\n"

- name: Comment out swap
  ansible.builtin.lineinfile:
    path: /etc/fstab
    regexp: '^([^#].*\sswap\s.*)$'
    line: '# \1'
    backrefs: true

- name: Init the cluster
  ansible.builtin.command: "kubeadm init --ignore-preflight-errors={{ fuzz_ignore | default('') }}"
  failed_when: false

- name: Pick a runtime
  ansible.builtin.include_tasks: "{{ fuzz_runtime | default('containerd') }}.yml"

- name: Kubelet config
  ansible.builtin.template:
    src: kubelet.j2
    dest: /var/lib/kubelet/config.yaml
"#;

const CONTAINERD: &str = r#"---
- name: Containerd cgroup driver
  ansible.builtin.lineinfile:
    path: /etc/containerd/config.toml
    line: "SystemdCgroup = {{ fuzz_systemd | default(true) }}"
"#;

const DEFAULTS: &str = r#"---
fuzz_a: 2
fuzz_b: k8s
fuzz_c: "{{ fuzz_a }}"
fuzz_enabled: yes
fuzz_modules: [overlay, br_netfilter]
fuzz_families: [Debian, RedHat]
fuzz_runtime: containerd
fuzz_systemd: true
"#;

const META: &str = r"---
dependencies:
  - role: dep
    when: fuzz_dep | default(false)
";

const DEP_TASKS: &str = r"---
- name: Bridge traffic through iptables
  ansible.posix.sysctl:
    name: net.bridge.bridge-nf-call-iptables
    value: '1'
";

const TEMPLATE: &str = "{% for m in fuzz_modules %}{{ m }}\n{% endfor %}";
const KUBELET: &str = "cgroupDriver: {{ fuzz_driver | default('systemd') }}\nfailSwapOn: false\n";

const INVENTORY: &str = "[kube_control_plane]\nnode1 ansible_host=10.0.0.1\n\n[kube_node]\nnode[2:3]\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n\n[k8s_cluster:vars]\nfuzz_enabled=True\n";

const GROUP_VARS: &str = "---\nfuzz_c: 1\n";

const CONCERN: &str = r"---
id: fuzz_concern
title: Fuzz concern
why: A concern the fuzzer rewrites.
reference: https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/install-kubeadm/
applies_to: [control_plane, worker]
parts:
  - name: runtime
    fix:
      - module: [ansible.builtin.command, ansible.builtin.shell]
        command: '\bswapoff\b'
    check:
      - module: ansible.builtin.assert
        args:
          that: {regex: 'swap'}
  - name: persistence
    fix:
      - module: ansible.builtin.lineinfile
        writes:
          path: /etc/fstab
";

/// A fixed tree in a private directory, one per harness.
pub struct Harness {
    target: Target,
    root: PathBuf,
}

fn scratch_base() -> PathBuf {
    // tmpfs when there is one: the tree is rewritten on every execution.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("create the fuzz tree");
    }
    std::fs::write(&p, data).expect("write the fuzz tree");
}

impl Harness {
    /// Writes the fixed tree for `target` into a new private directory.
    #[must_use]
    pub fn new(target: Target) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = scratch_base().join(format!(
            "preflint-fuzz-{}-{}-{n}",
            target.name(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let files: &[(&str, &str)] = &[
            ("site.yml", SITE),
            ("playbooks/more.yml", MORE),
            ("vars/play.yml", PLAY_VARS),
            ("tasks/play.yml", PLAY_TASKS),
            ("roles/fuzz/tasks/main.yml", TASKS),
            ("roles/fuzz/tasks/containerd.yml", CONTAINERD),
            ("roles/fuzz/defaults/main.yml", DEFAULTS),
            ("roles/fuzz/meta/main.yml", META),
            ("roles/fuzz/templates/modules.conf.j2", TEMPLATE),
            ("roles/fuzz/templates/kubelet.j2", KUBELET),
            ("roles/dep/tasks/main.yml", DEP_TASKS),
            ("inventory/hosts.ini", INVENTORY),
            ("inventory/group_vars/k8s_cluster.yml", GROUP_VARS),
            ("rules/fuzz.yml", CONCERN),
        ];
        for (rel, text) in files {
            write(&root, rel, text.as_bytes());
        }
        Harness { target, root }
    }

    /// The tree's directory.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Puts `data` in place and runs every command's pipeline on the tree.
    ///
    /// # Panics
    /// When the scratch tree cannot be written, or when preflint panics
    /// (what the fuzzer looks for), be it caught and reported as an
    /// `internal-error` finding.
    pub fn run(&self, data: &[u8]) {
        let mut settings = CheckSettings::new(&self.root);
        match self.target {
            Target::TasksFile => write(&self.root, "roles/fuzz/tasks/main.yml", data),
            Target::Playbook => write(&self.root, "site.yml", data),
            Target::VarsFile => write(&self.root, "roles/fuzz/defaults/main.yml", data),
            Target::Inventory => {
                let rel = if data.first().is_some_and(|b| b & 1 == 1) {
                    "inventory/hosts.yml"
                } else {
                    "inventory/hosts.ini"
                };
                let _ = std::fs::remove_file(self.root.join("inventory/hosts.yml"));
                let _ = std::fs::remove_file(self.root.join("inventory/hosts.ini"));
                write(&self.root, rel, data.get(1..).unwrap_or_default());
                settings.common.inventory = Some(self.root.join(rel));
            }
            Target::Catalog => {
                write(&self.root, "rules/fuzz.yml", data);
                settings.rules = Some(self.root.join("rules"));
            }
        }
        // A setup error (an invalid concern file) is an answer, not a failure.
        let Ok(run) = preflint::run::check_run(&settings) else {
            return;
        };
        // A panic the run caught is still a panic.
        if let Some(f) = run
            .findings
            .iter()
            .find(|f| f.rule == preflint::diagnostic::code::INTERNAL)
        {
            panic!("{}:{}: {}", f.file, f.line, f.message);
        }
        let root = self.root.display().to_string();
        for f in [
            CheckFormat::Human,
            CheckFormat::Json,
            CheckFormat::Sarif,
            CheckFormat::Github,
            CheckFormat::Codeclimate,
            CheckFormat::Junit,
        ] {
            std::hint::black_box(preflint::output::check::render(
                f,
                &run,
                &root,
                preflint::settings::Ui::default(),
            ));
        }
        std::hint::black_box(preflint::output::tasks::json(&run.loaded));
        std::hint::black_box(preflint::output::tasks::human(&run.loaded));
    }
}

impl Drop for Harness {
    // The fuzzer's static harness is never dropped; its tree is left in the
    // scratch directory (a few kilobytes).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
