"""Renders template cases as ansible-core's `template` action does.

Reads JSON from stdin: a list of cases, each {"id", "template", "vars",
"files": {name: text}, "samples": [{...}]}. Writes JSON to stdout: for each
case id, a list of outputs, one per sample (the case's vars updated with
the sample; one output without samples): the rendered text, or
{"error": message}.

Drives ansible-core offline: a Templar over the given variables and a
search path holding the case's files, called as plugins/action/template.py
calls it. Nothing is executed, no host is contacted.
"""
import json
import os
import sys
import tempfile

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template


def render(template, variables, searchpath):
    loader = DataLoader()
    templar = Templar(loader=loader, variables=variables)
    data_templar = templar.copy_with_new_env(searchpath=[searchpath], available_variables=variables)
    overrides = dict(trim_blocks=True, lstrip_blocks=False, newline_sequence="\n")
    try:
        result = data_templar.template(trust_as_template(template), escape_backslashes=False, overrides=overrides)
    except Exception as e:  # Ansible fails the task: the case says so.
        return {"error": "%s: %s" % (type(e).__name__, e)}
    return result if isinstance(result, str) else str(result)


def main():
    cases = json.load(sys.stdin)
    out = {}
    for case in cases:
        with tempfile.TemporaryDirectory() as d:
            for name, text in (case.get("files") or {}).items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            samples = case.get("samples") or [{}]
            results = []
            for s in samples:
                v = dict(case.get("vars") or {})
                v.update(s)
                results.append(render(case["template"], v, d))
            out[case["id"]] = results
    json.dump(out, sys.stdout)


main()
