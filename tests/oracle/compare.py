#!/usr/bin/env python3
"""Compare the oracle's task listing with preflint's ``tasks --format json``.

    compare.py ORACLE.json PREFLINT.json [--playbook cluster.yml] [--tasks-only]

Both files are reduced to the same text form, one line per play header and one
per task, the way ``ansible-playbook --list-tasks`` prints them (without
TAGS):

    play #1 (k8s_cluster:etcd): Prepare nodes
        kubernetes/preinstall : Turn swap off now
        modprobe

and a unified diff (ansible first, preflint second) is printed when they
differ. Exit codes: 0 equal, 1 different, 2 unusable input.

How a preflint task becomes an ansible line (README.md has the evidence):
- dropped when ``dynamic`` is true (ansible does not expand include_tasks /
  include_role in a listing; the include task itself stays);
- dropped when it sits in the ``rescue:`` or ``always:`` part of any enclosing
  block (ansible lists only the ``block:`` parts). Read from the first of these
  fields that the task has: ``blocks`` (list, outermost first, of objects with
  ``part`` or of strings), ``block_parts`` (list of strings), ``block_part`` or
  ``branch`` (string), ``in_rescue`` / ``in_always`` / ``rescue_or_always``
  (booleans);
- dropped when its effective ``tags`` (if the field is present) contain
  ``never`` but not ``always``;
- named task: ``"<last role> : <name>"``, or ``<name>`` when ``roles`` is
  empty, and also for a named include_role task (ansible prints only its
  name, even inside a role);
- unnamed task (name null, "" or otherwise falsy): the ``action`` as written
  (``command``, ``ansible.builtin.command``, ``modprobe``, ``include_tasks``,
  ``meta`` ...), never with a role prefix;
- non-string names print like Python's str(): 42 -> "42", true -> "True".
Play header: hosts joined with "," when a list; name defaults to the hosts.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys

HIDDEN_PARTS = {"rescue", "always"}


def load(path: str):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("compare.py: cannot read %s: %s" % (path, e)) from None


def show(value) -> str:
    """How Python (and so ansible) prints a scalar."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def short_action(action) -> str:
    a = show(action or "")
    for prefix in ("ansible.builtin.", "ansible.legacy."):
        if a.startswith(prefix):
            return a[len(prefix):]
    return a


def hidden_by_block(task: dict) -> bool:
    if "blocks" in task and task["blocks"] is not None:
        parts = [b.get("part") if isinstance(b, dict) else b for b in task["blocks"]]
        return any(p in HIDDEN_PARTS for p in parts)
    if "block_parts" in task and task["block_parts"] is not None:
        return any(p in HIDDEN_PARTS for p in task["block_parts"])
    for key in ("block_part", "branch"):
        if key in task and task[key] is not None:
            return task[key] in HIDDEN_PARTS
    return any(bool(task.get(k)) for k in ("in_rescue", "in_always", "rescue_or_always"))


def hidden_by_tags(task: dict) -> bool:
    tags = task.get("tags")
    if not tags:
        return False
    tags = {show(t) for t in tags}
    return "never" in tags and "always" not in tags


def is_include_role(task: dict) -> bool:
    inc = task.get("include")
    if isinstance(inc, dict) and inc.get("kind"):
        return short_action(inc["kind"]) == "include_role"
    return short_action(task.get("action")) == "include_role"


def task_line(task: dict) -> str:
    name = task.get("name")
    roles = task.get("roles") or []
    if name:
        name = show(name)
        if roles and not is_include_role(task):
            return "%s : %s" % (roles[-1], name)
        return name
    return show(task.get("action") or "")


def play_header(index: int, hosts, name) -> str:
    if isinstance(hosts, list):
        hosts = ",".join(show(h) for h in hosts)
    hosts = "" if hosts is None else show(hosts)
    return "play #%d (%s): %s" % (index, hosts, show(name) if name else hosts)


def oracle_lines(data: dict, tasks_only: bool) -> list[str]:
    out = []
    for i, play in enumerate(data["plays"], 1):
        if not tasks_only:
            out.append(play_header(i, play.get("hosts"), play.get("name")))
        out.extend("    " + escape(t) for t in play["tasks"])
    return out


def pick_entry(data: dict, playbook: str | None) -> dict:
    entries = data.get("entries")
    if entries is None:
        raise SystemExit("compare.py: preflint JSON has no 'entries'")
    if playbook:
        want = playbook.removeprefix("./")
        for e in entries:
            have = show(e.get("playbook", "")).removeprefix("./")
            if have == want or have.endswith("/" + want):
                return e
        if len(entries) == 1:
            return entries[0]
        raise SystemExit("compare.py: no entry for playbook %r (have %s)"
                         % (playbook, [e.get("playbook") for e in entries]))
    if len(entries) != 1:
        raise SystemExit("compare.py: %d entries, choose one with --playbook (have %s)"
                         % (len(entries), [e.get("playbook") for e in entries]))
    return entries[0]


def preflint_lines(data: dict, playbook: str | None, tasks_only: bool) -> list[str]:
    entry = pick_entry(data, playbook)
    out = []
    for i, play in enumerate(entry.get("plays", []), 1):
        if not tasks_only:
            out.append(play_header(i, play.get("hosts"), play.get("name")))
        for task in play.get("tasks", []):
            if task.get("dynamic") or hidden_by_block(task) or hidden_by_tags(task):
                continue
            out.append("    " + escape(task_line(task)))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("oracle", help="JSON printed by list_tasks.py ('-' for stdin)")
    ap.add_argument("preflint", help="JSON printed by 'preflint tasks --format json' ('-' for stdin)")
    ap.add_argument("--playbook", help="which preflint entry to use (its 'playbook' value)")
    ap.add_argument("--tasks-only", action="store_true",
                    help="compare task lines only, without play headers")
    ap.add_argument("-q", "--quiet", action="store_true", help="no diff, exit code only")
    args = ap.parse_args(argv)
    if args.oracle == "-" and args.preflint == "-":
        ap.error("only one input can be stdin")

    try:
        oracle = load(args.oracle)
        preflint = load(args.preflint)
        if "error" in oracle:
            raise SystemExit("compare.py: the oracle failed: %s" % oracle["error"].get("message"))
        a = oracle_lines(oracle, args.tasks_only)
        b = preflint_lines(preflint, args.playbook, args.tasks_only)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            return 2
        raise
    except (KeyError, TypeError, AttributeError) as e:
        print("compare.py: unexpected JSON shape: %r" % (e,), file=sys.stderr)
        return 2

    if a == b:
        return 0
    if not args.quiet:
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
            a, b, fromfile="ansible --list-tasks", tofile="preflint tasks", lineterm=""))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
