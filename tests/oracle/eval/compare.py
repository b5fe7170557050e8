#!/usr/bin/env python3
"""Compares what ansible-core computes of each task with what preflint does.

    compare.py ANSIBLE.json PREFLINT.json [--known FILE --case NAME] [--quiet] [--summary-json OUT]

ANSIBLE.json is the output of evaluate.py; PREFLINT.json that of
`preflint tasks --format json --evaluated`. Tasks are paired by file, line
and handler-ness, in the order each side reaches them. For each pair the
loop, then each iteration's module arguments, command line and template
text are compared, and each iteration gets one status (the worst of its
parts):

  agree      both sides know it, the same
  differ     both know it, and the values differ                 FAILURE
  invented   preflint knows a value where Ansible fails on it    FAILURE
             (an undefined name, an error; not a host fact, a
             registered result, a set_fact or a refused lookup)
  gap        preflint says unknown where Ansible knows: a fidelity gap,
             reported, not a failure
  unknown    neither knows it statically (or only Ansible's run-time
             inputs would tell): skipped, with Ansible's reason

Exit 0 without failures, 1 with (or with a stale --known line), 2 on
unusable input. With --known, lines `CASE<TAB>FILE:LINE<TAB>why` name
failures known and accepted for case CASE (a tab-separated file; `#`
comments); each must still fail, so the list stays true.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import sys
from collections import Counter

RANK = {"agree": 0, "unknown": 1, "gap": 2, "invented": 3, "differ": 4}
FAILING = {"differ", "invented"}
RUNTIME = ("host fact ", "registered result ", "set_fact ", "lookup ")


def same(a, b) -> bool:
    """JSON equality that keeps booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def runtime(reason: str) -> bool:
    return reason.startswith(RUNTIME)


def short(v) -> str:
    s = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return s if len(s) <= 200 else s[:197] + "..."


def preflint_tasks(listing: dict) -> list[dict]:
    out = []
    for e in listing.get("entries", []):
        for p in e.get("plays", []):
            for part, handler in (("tasks", False), ("handlers", True)):
                for t in p.get(part, []):
                    out.append({"file": posixpath.normpath(t["file"]), "line": t["line"], "handler": handler,
                                "name": t.get("name"), "evaluated": t.get("evaluated")})
    return out


def compare_value(a: dict | None, p: dict | None) -> tuple[str, str]:
    """One field: its status and, when not agreeing, what each side says."""
    if a is None and p is None:
        return "agree", ""
    if a is None:
        # Absent on Ansible's side: an omitted argument, or none at all.
        if "unknown" in p:
            return "unknown", "omitted by ansible"
        return "differ", f"ansible: absent, preflint: {short(p['value'])}"
    if p is None:
        if "value" in a:
            return "gap", f"ansible: {short(a['value'])}, preflint: absent"
        return "unknown", a["unknown"]
    if "value" in a and "value" in p:
        if same(a["value"], p["value"]):
            return "agree", ""
        return "differ", f"ansible: {short(a['value'])}, preflint: {short(p['value'])}"
    if "value" in a:
        return "gap", f"ansible: {short(a['value'])}, preflint unknown: {p['unknown']}"
    if "value" in p:
        if runtime(a["unknown"]):
            return "unknown", a["unknown"]
        return "invented", f"ansible fails: {a['unknown']}, preflint: {short(p['value'])}"
    return "unknown", a["unknown"]


def as_field(t: dict | None) -> dict | None:
    if t is None:
        return None
    if t.get("known") == "full":
        return {"value": t.get("text")}
    return {"unknown": t.get("reason") or t.get("known", "unknown")}


def compare_iteration(a: dict, p: dict) -> list[tuple[str, str, str]]:
    fields = []
    keys = sorted(set(a.get("args", {})) | set(p.get("args", {})))
    for k in keys:
        st, why = compare_value(a["args"].get(k), p["args"].get(k))
        fields.append((f"args.{k}", st, why))
    st, why = compare_value(a.get("free_form"), p.get("free_form"))
    fields.append(("free_form", st, why))
    at, pt = a.get("template"), p.get("template")
    if at is not None or pt is not None:
        st, why = compare_value(as_field(at), as_field(pt))
        if st == "differ" and at and pt and at.get("text") is not None:
            why = diff_text(at["text"], pt.get("text") or "")
        fields.append(("template", st, why))
    return fields


def diff_text(a: str, p: str) -> str:
    al, pl = a.splitlines(True), p.splitlines(True)
    for i, (x, y) in enumerate(zip(al, pl)):
        if x != y:
            return f"line {i + 1}: ansible {x!r}, preflint {y!r}"
    return f"ansible {len(al)} lines, preflint {len(pl)} lines (ends: {a[-40:]!r} / {p[-40:]!r})"


def compare_task(a: dict, p: dict) -> list[dict]:
    """The rows of one task pair: its loop and each iteration."""
    where = f"{a['file']}:{a['line']}"
    ae, pe = a.get("evaluated") or {}, p.get("evaluated")
    rows = []
    if pe is None:
        return [{"where": where, "part": "task", "status": "unknown", "why": "preflint did not evaluate"}]
    if "error" in ae:
        return [{"where": where, "part": "task", "status": "unknown", "why": ae["error"]}]
    al, pl = ae.get("loop"), pe.get("loop")
    comparable = True
    if al is not None or pl is not None:
        if al is None or pl is None:
            st, why = "differ", f"loop: ansible {short(al)}, preflint {short(pl)}"
            comparable = False
        else:
            af = {"value": al["items"]} if al.get("known") else {"unknown": al.get("reason", "")}
            pf = {"value": pl["items"]} if pl.get("known") else {"unknown": pl.get("reason", "")}
            st, why = compare_value(af, pf)
            comparable = st == "agree"
        rows.append({"where": where, "part": "loop", "status": st, "why": why})
    if not comparable:
        return rows
    ai, pi = ae.get("iterations", []), pe.get("iterations", [])
    if len(ai) != len(pi):
        rows.append({"where": where, "part": "iterations", "status": "differ",
                     "why": f"ansible {len(ai)} iterations, preflint {len(pi)}"})
        return rows
    for n, (x, y) in enumerate(zip(ai, pi)):
        fields = compare_iteration(x, y)
        worst = max((f[1] for f in fields), key=RANK.get, default="agree")
        rows.append({"where": where, "part": f"iteration {n}", "status": worst,
                     "fields": [{"field": f, "status": s, "why": w} for f, s, w in fields],
                     "item": x.get("item")})
    return rows


def pair(ansible: list[dict], preflint: list[dict]):
    by_key: dict[tuple, list[dict]] = {}
    for t in preflint:
        by_key.setdefault((t["file"], t["line"], t["handler"]), []).append(t)
    used: Counter = Counter()
    pairs, only_ansible = [], []
    for t in ansible:
        key = (t["file"], t["line"], t["handler"])
        cands = by_key.get(key, [])
        if used[key] < len(cands):
            pairs.append((t, cands[used[key]]))
            used[key] += 1
        else:
            only_ansible.append(t)
    only_preflint = sum(max(0, len(v) - used[k]) for k, v in by_key.items())
    return pairs, only_ansible, only_preflint


def load_known(path: str | None, case: str | None) -> dict[str, str]:
    known = {}
    if not path:
        return known
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and parts[0] == case:
                known[parts[1]] = parts[2]
    return known


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ansible")
    ap.add_argument("preflint")
    ap.add_argument("--known")
    ap.add_argument("--case")
    ap.add_argument("--quiet", action="store_true", help="print only what does not agree, and the summary")
    ap.add_argument("--summary-json", help="write the counts as JSON to this file")
    args = ap.parse_args(argv[1:])
    try:
        with open(args.ansible, encoding="utf-8") as f:
            a = json.load(f)["tasks"]
        with open(args.preflint, encoding="utf-8") as f:
            p = preflint_tasks(json.load(f))
    except (OSError, ValueError, KeyError) as e:
        print(f"unusable input: {e}", file=sys.stderr)
        return 2
    known = load_known(args.known, args.case)
    pairs, only_a, only_p = pair(a, p)
    counts: Counter = Counter()
    fields: Counter = Counter()
    reasons: Counter = Counter()
    failures = 0
    failing_where: set[str] = set()
    for at, pt in pairs:
        for row in compare_task(at, pt):
            st = row["status"]
            kind = "loop" if row["part"] == "loop" else "iteration"
            counts[f"{kind} {st}"] += 1
            for fl in row.get("fields", []):
                fields[f"{fl['field'].split('.')[0]} {fl['status']}"] += 1
                if fl["status"] == "unknown" and fl["why"]:
                    reasons[fl["why"].split(" ")[0] + " " + " ".join(fl["why"].split(" ")[1:2])] += 1
            accepted = st in FAILING and row["where"] in known
            if st in FAILING:
                failing_where.add(row["where"])
                if not accepted:
                    failures += 1
            if args.quiet and st in ("agree", "unknown"):
                continue
            tag = st.upper() if st in FAILING and not accepted else st
            if accepted:
                tag += f" (known: {known[row['where']]})"
            item = f" item={short(row['item'])}" if row.get("item") is not None else ""
            print(f"{tag:10} {row['where']} {row['part']}{item}" + (f": {row['why']}" if row.get("why") else ""))
            for fl in row.get("fields", []):
                if fl["status"] != "agree" and (not args.quiet or fl["status"] != "unknown"):
                    print(f"             {fl['field']}: {fl['status']}" + (f": {fl['why']}" if fl["why"] else ""))
    stale = sorted(set(known) - failing_where)
    for w in stale:
        print(f"STALE      {w}: listed as a known difference but agrees now: remove it from {args.known}")
    summary = {
        "tasks paired": len(pairs),
        "only ansible": len(only_a),
        "only preflint": only_p,
        **dict(sorted(counts.items())),
        "fields": dict(sorted(fields.items())),
        "failures": failures,
    }
    print("summary: " + json.dumps(summary, sort_keys=False))
    if args.summary_json:
        summary["unknown reasons"] = dict(reasons.most_common(20))
        with open(args.summary_json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return 1 if failures or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
