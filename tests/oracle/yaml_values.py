#!/usr/bin/env python3
"""Oracle: YAML values as Ansible loads them, against preflint's reading.

Reads JSON lines {"file", "ok", "docs"} (preflint's view of each file) on
stdin, loads every file with ansible-core's own YAML loader, and compares
the values (as JSON: mapping keys as json.dumps writes them). Prints a summary
line and every disagreement; exit 0 when all agree, 1 otherwise.
"""
import json
import os
import sys

import yaml
from ansible.parsing.yaml.loader import AnsibleLoader


def exceeds_bound(docs, limits):
    """Whether Ansible's value is deeper or, with aliases expanded, bigger
    than preflint's bounds. Walks the object graph once per object (aliases
    are shared objects in PyYAML: never json.dumps an alias bomb), without
    recursion."""
    sizes = {}
    max_depth = 0
    stack = [(d, 1, False) for d in docs]
    while stack:
        obj, depth, done = stack.pop()
        if not isinstance(obj, (list, dict)):
            continue
        items = obj if isinstance(obj, list) else [x for kv in obj.items() for x in kv]
        if done:
            sizes[id(obj)] = 1 + sum(sizes.get(id(i), 1) for i in items)
            continue
        max_depth = max(max_depth, depth)
        if id(obj) in sizes:
            continue
        stack.append((obj, depth, True))
        stack.extend((i, depth + 1, False) for i in items)
    total = sum(sizes.get(id(d), 1) for d in docs)
    return max_depth > min(limits["depth"], limits["flow_depth"]) or total > limits["alias_nodes"]


def main() -> int:
    agree = differ = both_fail = bounded = 0
    problems = []
    for line in sys.stdin:
        rec = json.loads(line)
        path = os.path.abspath(rec["file"])
        try:
            with open(path, encoding="utf-8") as fh:
                docs = list(yaml.load_all(fh, Loader=AnsibleLoader))
            ok = True
        except Exception as e:  # noqa: BLE001 - any load failure is a 'not ok'
            ok, err = False, repr(e)[:200]
        if not ok and not rec["ok"]:
            both_fail += 1
            continue
        if ok and not rec["ok"] and rec.get("bounded"):
            # preflint stops at a documented bound (README "Limits") where
            # PyYAML goes on: expected, and reported with yaml-limit-exceeded,
            # as long as Ansible's value really is beyond the bound.
            if "limits" not in rec or exceeds_bound(docs, rec["limits"]):
                bounded += 1
                continue
            differ += 1
            problems.append("%s: preflint reports a bound, but ansible's value is within it" % rec["file"])
            continue
        if ok != rec["ok"]:
            differ += 1
            problems.append("%s: ansible %s, preflint %s (%s)" % (
                rec["file"], "loads" if ok else "fails: " + err,
                "loads" if rec["ok"] else "fails", rec.get("error")))
            continue
        want = json.loads(json.dumps(docs, default=str))
        if want != rec["docs"]:
            differ += 1
            problems.append("%s: values differ\n  ansible:  %s\n  preflint: %s" % (
                rec["file"], json.dumps(want)[:400], json.dumps(rec["docs"])[:400]))
        else:
            agree += 1
    for p in problems:
        print(p)
    print("yaml values: %d agree, %d differ, %d rejected by both, %d stopped at a preflint bound"
          % (agree, differ, both_fail, bounded))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
