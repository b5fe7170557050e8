#!/usr/bin/env python3
"""Prints, as JSON, the argument_spec each named module builds when it runs,
taken as ansible-test's validate-modules takes it: the module runs as
__main__ with AnsibleModule.__init__ replaced by a stub that records its
arguments and stops the module.

Usage: module_args.py FQCN...
Output: {fqcn: {option: {type, aliases, default, choices}} or {"error": why}}.
Each default is passed through the type check the module applies to it, and
options whose names start with `_` (internal: `_raw_params`) are left out.
"""
import contextlib
import io
import json
import runpy
import sys

from ansible.module_utils import basic
from ansible.module_utils.common.parameters import DEFAULT_TYPE_VALIDATORS


class Stop(Exception):
    pass


def capture(fqcn):
    namespace, collection, name = fqcn.split(".")
    if (namespace, collection) == ("ansible", "builtin"):
        module = "ansible.modules.%s" % name
    else:
        module = "ansible_collections.%s.%s.plugins.modules.%s" % (namespace, collection, name)
    seen = {}

    def fake_init(self, *args, **kwargs):
        seen["kwargs"] = kwargs
        seen["args"] = args
        raise Stop()

    original = basic.AnsibleModule.__init__
    basic.AnsibleModule.__init__ = fake_init
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    except Stop:
        pass
    except BaseException as e:  # noqa: B036 (a module may sys.exit)
        return {"error": "%s: %s" % (type(e).__name__, e)}
    finally:
        basic.AnsibleModule.__init__ = original
    if "kwargs" not in seen:
        return {"error": "AnsibleModule was not created"}
    kwargs = dict(seen["kwargs"])
    if seen["args"]:
        kwargs.setdefault("argument_spec", seen["args"][0])
    spec = dict(kwargs.get("argument_spec") or {})
    if kwargs.get("add_file_common_args"):
        for k, v in basic.FILE_COMMON_ARGUMENTS.items():
            spec.setdefault(k, v)
    out = {}
    for name, opt in spec.items():
        if name.startswith("_"):
            continue
        kind = opt.get("type", "str")
        if callable(kind):
            kind = getattr(kind, "__name__", "callable")
        entry = {"type": kind, "aliases": list(opt.get("aliases") or [])}
        default = opt.get("default")
        if default is not None and kind in ("str", "list", "dict", "bool", "int", "float"):
            try:
                default = DEFAULT_TYPE_VALIDATORS[kind](default)
            except (TypeError, ValueError):
                pass
        entry["default"] = default
        entry["choices"] = sorted(str(c).lower() if isinstance(c, bool) else str(c)
                                  for c in opt.get("choices") or [])
        out[name] = entry
    return out


def main():
    print(json.dumps({fqcn: capture(fqcn) for fqcn in sys.argv[1:]}, default=str, sort_keys=True))


if __name__ == "__main__":
    main()
