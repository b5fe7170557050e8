#!/usr/bin/env python3
"""Oracle: what real ansible-core answers for `when:` conditions, as JSON.

Reads a list of cases (JSON on stdin, or ``cases.yml`` given as the first
argument, which needs PyYAML). Each case is::

    {"id": "...", "when": "expr", "vars": {...},
     "facts": [...], "registered": [...], "runtime_facts": [...],
     "samples": [{name: value, ...}, ...]}

A case without unknown names (facts/registered/runtime_facts) is evaluated
once with its ``vars``. A case with unknown names is evaluated once per
sample, with the sample's values layered over ``vars``, so the output says
whether the answer depends on the unknowns.

Evaluation uses ansible-core's own machinery: ``Templar.evaluate_conditional``
(what ``when:`` uses in 2.19), with the expression and every string
variable marked trusted, as Ansible does for playbook content.

Prints ``{"ansible": "2.19.x", "cases": [{"id": ..., "results": [R, ...]}]}``
where each R is ``{"value": true|false}`` or
``{"error": "undefined"|"broken_conditional"|"other", "type": ..., "message": ...}``.

Nothing is read from or written to the user's Ansible setup: every
inherited ANSIBLE_* variable is dropped and ANSIBLE_CONFIG names an empty
file in a private temporary directory. Exit codes: 0 evaluated, 2 usage or
import error (message on stderr).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def _isolate() -> tempfile.TemporaryDirectory:
    for key in list(os.environ):
        if key.startswith("ANSIBLE_"):
            del os.environ[key]
    tmp = tempfile.TemporaryDirectory(prefix="preflint-oracle-")
    cfg = os.path.join(tmp.name, "ansible.cfg")
    with open(cfg, "w", encoding="utf-8"):
        pass
    os.environ["ANSIBLE_CONFIG"] = cfg
    os.environ["ANSIBLE_HOME"] = tmp.name
    os.environ["ANSIBLE_LOCAL_TEMP"] = os.path.join(tmp.name, "tmp")
    os.environ["ANSIBLE_NOCOLOR"] = "1"
    return tmp


def _load_cases() -> list:
    if len(sys.argv) > 1:
        import yaml  # only needed when run by hand on cases.yml

        with open(sys.argv[1], encoding="utf-8") as f:
            return yaml.safe_load(f)["cases"]
    data = json.load(sys.stdin)
    return data["cases"] if isinstance(data, dict) else data


def main() -> int:
    tmp = _isolate()
    real_stdout = sys.stdout
    # Ansible's display may print; keep stdout for our JSON only.
    sys.stdout = sys.stderr
    try:
        import ansible
        from ansible.errors import AnsibleBrokenConditionalError, AnsibleUndefinedVariable
        from ansible.parsing.dataloader import DataLoader
        from ansible.template import Templar, trust_as_template
    except ImportError as ex:
        print(f"eval.py: cannot import ansible-core: {ex}", file=sys.stderr)
        return 2

    def trust(value):
        if isinstance(value, str):
            return trust_as_template(value)
        if isinstance(value, list):
            return [trust(v) for v in value]
        if isinstance(value, dict):
            return {k: trust(v) for k, v in value.items()}
        return value

    loader = DataLoader()

    def evaluate(expr: str, variables: dict) -> dict:
        templar = Templar(loader=loader, variables=trust(variables))
        try:
            result = templar.evaluate_conditional(trust_as_template(expr))
        except AnsibleUndefinedVariable as ex:
            return {"error": "undefined", "type": type(ex).__name__, "message": str(ex)}
        except AnsibleBrokenConditionalError as ex:
            return {"error": "broken_conditional", "type": type(ex).__name__, "message": str(ex)}
        except Exception as ex:  # noqa: BLE001 - any failure is an answer here
            return {"error": "other", "type": type(ex).__name__, "message": str(ex)}
        return {"value": bool(result)}

    try:
        cases = _load_cases()
    except Exception as ex:  # noqa: BLE001
        print(f"eval.py: cannot read cases: {ex}", file=sys.stderr)
        return 2

    out = []
    for case in cases:
        base = dict(case.get("vars") or {})
        unknown = [*case.get("facts", []), *case.get("registered", []), *case.get("runtime_facts", [])]
        samples = (case.get("samples") or [{}]) if unknown else [{}]
        results = []
        for sample in samples:
            results.append(evaluate(case["when"], {**base, **sample}))
        out.append({"id": case["id"], "results": results})

    sys.stdout = real_stdout
    json.dump({"ansible": ansible.__version__, "cases": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
