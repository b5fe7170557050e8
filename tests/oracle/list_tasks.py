#!/usr/bin/env python3
"""Oracle: what real Ansible lists for a playbook, as JSON.

Runs ``ansible-playbook --list-tasks`` on a playbook of a fixture tree (with
the tree as the working directory, so the tree's ansible.cfg applies), parses
the listing and prints:

    {"plays": [{"hosts": "k8s_cluster:etcd", "name": "...",
                "tasks": ["kubernetes/preinstall : Disable swap", "command"]}]}

The task strings are exactly what ansible prints, without the TAGS part.
See README.md in this directory for the rules ansible follows.

Role mode (for trees that hold roles but no playbook): ``--role NAME`` (may be
repeated) with ``--roles-path DIR`` writes a throw-away playbook outside the
tree with one play per role (``hosts: all``, play name = role name) and lists
that. ``--collection NS.NAME`` instead mounts the tree as that collection and
applies ``NS.NAME.ROLE``.

Nothing is written into the tree: ANSIBLE_HOME, ANSIBLE_LOCAL_TEMP and HOME
point into a private temporary directory, every inherited ANSIBLE_* variable
is dropped, and ANSIBLE_CONFIG names the tree's ansible.cfg (or an empty file
when the tree has none, so /etc/ansible/ansible.cfg and ~/.ansible.cfg never
leak in).

Stdlib only. Exit codes: 0 listed, 2 usage error, 3 ansible failed (a JSON
object {"error": {"rc": N, "message": "..."}} is printed on stdout and
ansible's stderr is copied to stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEFAULT_ANSIBLE_PLAYBOOK = "/opt/preflint-venv/bin/ansible-playbook"

PLAY_RE = re.compile(r"^  play #(\d+) \((.*?)\): (.*)\tTAGS: \[(.*)\]$")
TASK_END_RE = re.compile(r"^(.*)\tTAGS: \[([^\]]*)\]$", re.DOTALL)
TASK_PREFIX = " " * 6


def find_ansible_playbook(explicit: str | None) -> str:
    for candidate in (explicit, os.environ.get("PREFLINT_ANSIBLE_PLAYBOOK")):
        if candidate:
            return candidate
    if os.access(DEFAULT_ANSIBLE_PLAYBOOK, os.X_OK):
        return DEFAULT_ANSIBLE_PLAYBOOK
    found = shutil.which("ansible-playbook")
    if found:
        return found
    print("list_tasks.py: ansible-playbook not found (use --ansible-playbook "
          "or PREFLINT_ANSIBLE_PLAYBOOK)", file=sys.stderr)
    sys.exit(2)


def isolated_env(tree: str, tmp: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    home = os.path.join(tmp, "home")
    local_temp = os.path.join(tmp, "local")
    os.makedirs(home, exist_ok=True)
    os.makedirs(local_temp, exist_ok=True)
    cfg = os.path.join(tree, "ansible.cfg")
    if not os.path.isfile(cfg):
        cfg = os.path.join(tmp, "empty-ansible.cfg")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write("[defaults]\n")
    env.update(
        ANSIBLE_CONFIG=cfg,
        ANSIBLE_HOME=home,
        ANSIBLE_LOCAL_TEMP=local_temp,
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_DEPRECATION_WARNINGS="0",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        HOME=home,
        PYTHONDONTWRITEBYTECODE="1",
    )
    lc = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or ""
    if "utf-8" not in lc.lower() and "utf8" not in lc.lower():
        env["LC_ALL"] = "C.UTF-8"
    return env


def parse_listing(text: str) -> list[dict]:
    """Parse the stdout of ``ansible-playbook --list-tasks``.

    Task lines are ``6 spaces + name + TAB + "TAGS: [...]"``; a task name may
    span several lines (names with newlines are printed raw), so an entry runs
    until a line that ends with the TAGS marker.
    """
    plays: list[dict] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = PLAY_RE.match(lines[i])
        i += 1
        if not m:
            continue
        play = {"hosts": m.group(2), "name": m.group(3), "tasks": []}
        plays.append(play)
        if i < len(lines) and lines[i] == "    tasks:":
            i += 1
        while i < len(lines) and lines[i].startswith(TASK_PREFIX):
            entry = lines[i][len(TASK_PREFIX):]
            i += 1
            while not TASK_END_RE.match(entry) and i < len(lines):
                entry += "\n" + lines[i]
                i += 1
            tm = TASK_END_RE.match(entry)
            if not tm:
                raise ValueError("unterminated task entry: %r" % entry)
            play["tasks"].append(tm.group(1))
    return plays


def first_error(stderr: str) -> str:
    """The first [ERROR] paragraph of ansible's stderr (the whole text if none)."""
    start = stderr.find("[ERROR]:")
    if start < 0:
        return stderr.strip()
    rest = stderr[start:]
    end = rest.find("\n\n")
    return (rest if end < 0 else rest[:end]).strip()


def role_playbook(path: str, roles: list[str], collection: str | None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("---\n")
        for role in roles:
            name = role
            if collection and "." not in role:
                name = "%s.%s" % (collection, role)
            f.write("- name: %s\n  hosts: all\n  gather_facts: false\n"
                    "  roles:\n    - role: %s\n" % (json.dumps(name), json.dumps(name)))


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", help="directory of the fixture tree (the working directory)")
    ap.add_argument("playbook", nargs="?", help="playbook path relative to the tree")
    ap.add_argument("-i", "--inventory", default="localhost,",
                    help="inventory argument, relative to the tree (default: localhost,)")
    ap.add_argument("--ansible-playbook", help="path of ansible-playbook")
    ap.add_argument("--role", action="append", default=[],
                    help="role mode: list this role (repeatable) instead of a playbook")
    ap.add_argument("--roles-path", default=".",
                    help="role mode: roles directory relative to the tree (default: .)")
    ap.add_argument("--collection", help="role mode: mount the tree as collection NS.NAME")
    ap.add_argument("--raw", action="store_true", help="print ansible's stdout instead of JSON")
    ap.add_argument("--with-tags", action="store_true",
                    help="add play 'tags' and per-task 'task_tags' to the JSON")
    args = ap.parse_args(argv)

    tree = os.path.abspath(args.tree)
    if not os.path.isdir(tree):
        ap.error("not a directory: %s" % args.tree)
    if bool(args.playbook) == bool(args.role):
        ap.error("give either a playbook or at least one --role")

    ansible_playbook = find_ansible_playbook(args.ansible_playbook)
    with tempfile.TemporaryDirectory(prefix="preflint-oracle-") as tmp:
        env = isolated_env(tree, tmp)
        if args.role:
            playbook = os.path.join(tmp, "oracle-roles.yml")
            role_playbook(playbook, args.role, args.collection)
            if args.collection:
                ns, _, name = args.collection.partition(".")
                coll_root = os.path.join(tmp, "collections")
                os.makedirs(os.path.join(coll_root, "ansible_collections", ns))
                os.symlink(tree, os.path.join(coll_root, "ansible_collections", ns, name))
                env["ANSIBLE_COLLECTIONS_PATH"] = coll_root
            else:
                env["ANSIBLE_ROLES_PATH"] = os.path.normpath(os.path.join(tree, args.roles_path))
        else:
            playbook = args.playbook
        cmd = [ansible_playbook, "-i", args.inventory, "--list-tasks", playbook] + extra
        try:
            proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        except OSError as e:
            print("list_tasks.py: cannot run %s: %s" % (ansible_playbook, e), file=sys.stderr)
            return 2

    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        json.dump({"error": {"rc": proc.returncode, "message": first_error(proc.stderr)}},
                  sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 3
    if args.raw:
        sys.stdout.write(proc.stdout)
        return 0

    plays = parse_listing(proc.stdout)
    if args.with_tags:
        tagged = parse_listing_with_tags(proc.stdout)
        for play, (ptags, ttags) in zip(plays, tagged):
            play["tags"] = ptags
            play["task_tags"] = ttags
    json.dump({"plays": plays}, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def parse_listing_with_tags(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Tags per play and per task, in listing order (same walk as parse_listing)."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = PLAY_RE.match(lines[i])
        i += 1
        if not m:
            continue
        # play tags are joined with "," and come from a set (unordered)
        ptags = sorted(t for t in m.group(4).split(",") if t)
        ttags: list[list[str]] = []
        if i < len(lines) and lines[i] == "    tasks:":
            i += 1
        while i < len(lines) and lines[i].startswith(TASK_PREFIX):
            entry = lines[i][len(TASK_PREFIX):]
            i += 1
            while not TASK_END_RE.match(entry) and i < len(lines):
                entry += "\n" + lines[i]
                i += 1
            tm = TASK_END_RE.match(entry)
            ttags.append([t for t in tm.group(2).split(", ") if t])
        out.append((ptags, ttags))
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
