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
            # PyYAML goes on: expected, and reported with yaml-limit-exceeded.
            bounded += 1
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
