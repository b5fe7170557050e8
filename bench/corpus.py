#!/usr/bin/env python3
"""Measure how much of real public roles preflint reads (issue 42).

Reads bench/corpus.txt, runs `preflint tasks --effects --format json` (with
`--evaluated` when the binary has it) on each repository of a corpus
directory, and prints one row per repository plus a total row. It fetches
nothing: a repository missing from the corpus directory is reported with the
command that obtains it. Python 3 standard library only.

Columns (see bench/README.md, "Corpus"):
  tasks      tasks and handlers listed over all entry plays
  loops k/u  tasks with a loop whose item list is known / unknown (--evaluated)
  args%      task iterations whose module arguments are all rendered (--evaluated)
  tpl f/p/n  template files a task writes, rendered fully / partly / not (--evaluated)
  leaks      `{{`/`{%` printed as a sysctl key or value, a path, a kernel or
             Ansible module name, a package or a unit name (must be 0)
  unres      includes and roles not resolved (the reasons follow the table)
  yaml       YAML files preflint could not parse
  sysctl     sysctl_set effects (every loop item counts)
  kmod       module_loaded effects
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time

JINJA = ("{{", "{%")

# Effect fields that name a thing on the node: raw Jinja there is a leak.
LEAK_FIELDS = {
    "sysctl_set": ("key", "value", "file"),
    "sysctl_removed": ("key", "file"),
    "sysctl_applied": ("apply",),
    "module_loaded": ("name", "file"),
    "module_blocked": ("name", "file"),
    "file_written": ("path",),
    "file_edited": ("path",),
    "file_removed": ("path",),
    "linked": ("path", "target"),
    "service": ("unit",),
    "package": ("name",),
}

# Diagnostics that mean an include or a role was not followed.
UNRESOLVED_CODES = ("role-not-found", "role-from-collection", "include-not-found", "include-unresolved")


def parse_list(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 4:
                sys.exit(f"{path}:{n}: expected `repository commit entry source`, got {line!r}")
            repo, commit, entry, source = parts[:4]
            rows.append({"repo": repo, "commit": commit, "entry": entry, "source": source,
                         "dir": repo.replace("/", "+")})
    return rows


def has_flag(preflint, flag):
    out = subprocess.run([preflint, "tasks", "--help"], capture_output=True, text=True, check=False)
    return flag in out.stdout


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)


def leaky(s):
    return any(j in s for j in JINJA)


def measure(data, evaluated):
    m = {
        "tasks": 0, "loops_known": 0, "loops_unknown": 0, "iters": 0, "iters_full": 0,
        "tpl": collections.Counter(), "leaks": 0, "leak_examples": [], "sysctl": 0, "kmod": 0,
        "loop_reasons": collections.Counter(),
    }
    for entry in data.get("entries", []):
        for play in entry.get("plays", []):
            for task in play.get("tasks", []) + play.get("handlers", []):
                m["tasks"] += 1
                where = f"{task.get('file')}:{task.get('line')}"
                module = task.get("module") or ""
                if leaky(module):
                    m["leaks"] += 1
                    m["leak_examples"].append(f"{where} module {module}")
                for it in task.get("effects") or []:
                    for ef in it.get("effects", []):
                        kind = ef.get("effect")
                        if kind == "sysctl_set":
                            m["sysctl"] += 1
                        elif kind == "module_loaded":
                            m["kmod"] += 1
                        for field in LEAK_FIELDS.get(kind, ()):
                            for s in strings(ef.get(field)):
                                if leaky(s):
                                    m["leaks"] += 1
                                    m["leak_examples"].append(f"{where} {kind}.{field} {s!r}")
                if not evaluated:
                    continue
                ev = task.get("evaluated")
                if not ev:
                    continue
                loop = ev.get("loop")
                if loop is not None:
                    if loop.get("known"):
                        m["loops_known"] += 1
                    else:
                        m["loops_unknown"] += 1
                        m["loop_reasons"][str(loop.get("reason", "?"))[:80]] += 1
                for iteration in ev.get("iterations") or []:
                    m["iters"] += 1
                    args = iteration.get("args") or {}
                    parts = list(args.values())
                    if iteration.get("free_form") is not None:
                        parts.append(iteration["free_form"])
                    if all(isinstance(p, dict) and "value" in p for p in parts):
                        m["iters_full"] += 1
                    tpl = iteration.get("template")
                    if tpl:
                        m["tpl"][tpl.get("known", "unknown")] += 1
    unres = collections.Counter()
    for u in data.get("unresolved", []):
        unres[f"{u.get('kind')}: {u.get('reason')}"] += 1
    yaml_errors = 0
    for d in data.get("diagnostics", []):
        if d.get("code") in UNRESOLVED_CODES:
            unres[d["code"]] += 1
        elif d.get("code") == "yaml-syntax-error":
            yaml_errors += 1
    m["unres"] = unres
    m["yaml"] = yaml_errors
    return m


def run_one(preflint, corpus, row, evaluated):
    path = os.path.join(corpus, row["dir"])
    args = [preflint, "tasks", "--effects", "--format", "json", "-q"]
    if evaluated:
        args.append("--evaluated")
    entry = row["entry"]
    if entry.startswith("role:"):
        args.append(os.path.join(path, entry[len("role:"):]))
    elif entry == ".":
        args.append(path)
    else:
        args += ["--playbook", entry, path]
    start = time.monotonic()
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - start
    try:
        data = json.loads(out.stdout)
    except json.JSONDecodeError:
        return None, elapsed, (out.stderr.strip().splitlines() or ["no JSON on stdout"])[-1]
    return data, elapsed, None


def fmt_row(cells, widths):
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="directory holding one checkout per repository (owner+name)")
    ap.add_argument("--list", default=os.path.join(here, "corpus.txt"))
    ap.add_argument("--preflint", required=True)
    ap.add_argument("--only", action="append", default=[], help="measure only this repository (repeatable)")
    ap.add_argument("--details", action="store_true", help="also list every leak and unknown-loop reason")
    ns = ap.parse_args()

    rows = parse_list(ns.list)
    if ns.only:
        rows = [r for r in rows if r["repo"] in ns.only or r["dir"] in ns.only]
    evaluated = has_flag(ns.preflint, "--evaluated")
    na = "n/a"

    header = ["repository", "entry", "tasks", "loops k/u", "args%", "tpl f/p/n", "leaks", "unres",
              "yaml", "sysctl", "kmod", "s"]
    table = []
    missing = []
    notes = []
    total = collections.Counter()
    total_unres = collections.Counter()
    total_tpl = collections.Counter()
    for row in rows:
        path = os.path.join(ns.corpus, row["dir"])
        if not os.path.isdir(path):
            missing.append(row)
            table.append([row["repo"], row["entry"], "missing"] + [""] * (len(header) - 3))
            continue
        head = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=False).stdout.strip()
        if head and head != row["commit"]:
            notes.append(f"{row['repo']}: checked out at {head[:12]}, the list says {row['commit'][:12]}")
        data, elapsed, err = run_one(ns.preflint, ns.corpus, row, evaluated)
        if data is None:
            notes.append(f"{row['repo']}: preflint gave no JSON: {err}")
            table.append([row["repo"], row["entry"], "error"] + [""] * (len(header) - 3))
            continue
        m = measure(data, evaluated)
        for k in ("tasks", "loops_known", "loops_unknown", "iters", "iters_full", "leaks", "yaml",
                  "sysctl", "kmod"):
            total[k] += m[k]
        total["secs"] += elapsed
        total_unres.update(m["unres"])
        total_tpl.update(m["tpl"])
        if evaluated:
            loops = f"{m['loops_known']}/{m['loops_unknown']}"
            args = f"{100 * m['iters_full'] / m['iters']:.0f}" if m["iters"] else "-"
            tpl = f"{m['tpl']['full']}/{m['tpl']['partly']}/{m['tpl']['unknown']}"
        else:
            loops = args = tpl = na
        table.append([row["repo"], row["entry"], str(m["tasks"]), loops, args, tpl, str(m["leaks"]),
                      str(sum(m["unres"].values())), str(m["yaml"]), str(m["sysctl"]), str(m["kmod"]),
                      f"{elapsed:.1f}"])
        for reason, n in sorted(m["unres"].items()):
            notes.append(f"{row['repo']}: unresolved {n}x {reason}")
        if ns.details:
            for ex in m["leak_examples"]:
                notes.append(f"{row['repo']}: leak {ex}")
            for reason, n in sorted(m["loop_reasons"].items()):
                notes.append(f"{row['repo']}: unknown loop {n}x {reason}")
        elif m["leak_examples"]:
            shown = m["leak_examples"][:3]
            more = len(m["leak_examples"]) - len(shown)
            for ex in shown:
                notes.append(f"{row['repo']}: leak {ex}")
            if more:
                notes.append(f"{row['repo']}: ... {more} more leaks (--details lists them)")

    measured = [r for r in table if r[2] not in ("missing", "error")]
    if evaluated:
        loops = f"{total['loops_known']}/{total['loops_unknown']}"
        args = f"{100 * total['iters_full'] / total['iters']:.0f}" if total["iters"] else "-"
        tpl = f"{total_tpl['full']}/{total_tpl['partly']}/{total_tpl['unknown']}"
    else:
        loops = args = tpl = na
    table.append([f"total ({len(measured)} repositories)", "", str(total["tasks"]), loops, args, tpl,
                  str(total["leaks"]), str(sum(total_unres.values())), str(total["yaml"]),
                  str(total["sysctl"]), str(total["kmod"]), f"{total['secs']:.1f}"])

    widths = [max(len(header[i]), *(len(r[i]) for r in table)) for i in range(len(header))]
    print(f"preflint: {ns.preflint}  (--evaluated: {'yes' if evaluated else 'no, so n/a columns'})")
    print(fmt_row(header, widths))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in table:
        print(fmt_row(r, widths))
    if notes:
        print()
        for n in notes:
            print(f"- {n}")
    if total_unres:
        print()
        print("unresolved over the corpus, by reason:")
        for reason, n in total_unres.most_common():
            print(f"  {n:5}  {reason}")
    if missing:
        print()
        print(f"{len(missing)} repositories are missing from {ns.corpus}; obtain each with:")
        for r in missing:
            print(f"  git clone -q {r['source']} {os.path.join(ns.corpus, r['dir'])} && "
                  f"git -C {os.path.join(ns.corpus, r['dir'])} checkout -q {r['commit']}")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
