#!/usr/bin/env python3
"""Regenerates rules/modules.yml and rules/module-args.yml from an installed
ansible-core and the collections of the `ansible` package.

Usage: python3 scripts/gen-modules.py [OUT_DIR]   (OUT_DIR defaults to rules/)
Run it with the Python that has ansible-core and ansible, e.g. the venv
scripts/test.sh makes (target/oracle-venv/bin/python).

modules.yml: only names, the builtin module list and where short names route to.
module-args.yml: each module's options as its DOCUMENTATION gives them, with
the doc fragments merged in (the same reading `ansible-doc` does): canonical
name, aliases, type, elements, default, choices, required; and whether the
module takes a free-form string. Collections keep their modules' DOCUMENTATION
in step with the argument_spec (ansible-test's validate-modules checks both
agree), which is why the documentation is read rather than the module run.
"""
import importlib.metadata
import json
import os
import sys

# The deprecation notices of the modules read are not this script's output;
# ansible reads its configuration when first imported.
os.environ.setdefault("ANSIBLE_DEPRECATION_WARNINGS", "false")

import ansible  # noqa: E402
import ansible_collections  # noqa: E402
import yaml  # noqa: E402
from ansible.module_utils.common.parameters import DEFAULT_TYPE_VALIDATORS  # noqa: E402
from ansible.plugins.loader import fragment_loader, init_plugin_loader  # noqa: E402
from ansible.utils.plugin_docs import get_docstring  # noqa: E402

# Collections whose modules node-preparation automation calls: files,
# packages, services, sysctl, mounts, firewalls, SELinux, users, containers
# and Kubernetes objects.
COLLECTIONS = [
    "ansible.netcommon",
    "ansible.posix",
    "ansible.utils",
    "community.crypto",
    "community.docker",
    "community.general",
    "containers.podman",
    "kubernetes.core",
]

# Documented "options" that stand for the free-form string, not a parameter.
FREE_FORM_OPTIONS = {"free_form", "free-form", "key_value"}

# Types whose default Ansible coerces the way this script can repeat without
# looking at the controller (`path` expands `~` and variables, so its default
# is kept as written).
COERCED_DEFAULT_TYPES = {"str", "list", "dict", "bool", "int", "float"}

KNOWN_TYPES = {"str", "list", "dict", "bool", "int", "float", "path", "raw",
               "jsonarg", "json", "bytes", "bits", "sid"}


def builtin_dir():
    return os.path.join(os.path.dirname(ansible.__file__), "modules")


def collection_dir(name):
    for root in ansible_collections.__path__:
        path = os.path.join(root, *name.split("."))
        if os.path.isdir(path):
            return path
    sys.exit("collection %s is not installed" % name)


def collection_version(name):
    with open(os.path.join(collection_dir(name), "MANIFEST.json")) as fh:
        return json.load(fh)["collection_info"]["version"]


def module_files(directory):
    return sorted(
        f for f in os.listdir(directory)
        if f.endswith(".py") and not f.startswith("_") and f != "__init__.py"
    )


def plain(value):
    """Ansible's tagged YAML values as plain Python values."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return text(value)


def text(value):
    """A plain `str`: `str()` keeps the tagged subclass Ansible reads YAML
    into, which PyYAML cannot write; formatting builds a new string."""
    return "%s" % (value,)


def coerce_default(kind, value):
    """The default as the module sees it: Ansible type-checks the default
    like any given value (`purge: {type: bool, default: 'no'}` is False)."""
    if kind not in COERCED_DEFAULT_TYPES:
        return value
    try:
        return plain(DEFAULT_TYPE_VALIDATORS[kind](value))
    except (TypeError, ValueError):
        return value


def option_entry(name, opt, module):
    kind = text(opt.get("type") or "str")
    if kind not in KNOWN_TYPES:
        sys.exit("%s: option %s has unknown type %r" % (module, name, kind))
    entry = {"type": kind}
    aliases = [text(a) for a in opt.get("aliases") or []]
    if aliases:
        entry["aliases"] = aliases
    if opt.get("elements"):
        entry["elements"] = text(opt["elements"])
    default = plain(opt.get("default"))
    if default is not None:
        entry["default"] = coerce_default(kind, default)
    if opt.get("choices"):
        entry["choices"] = [plain(c) for c in opt["choices"]]
    if opt.get("required"):
        entry["required"] = True
    return entry


def module_spec(path, collection, fqcn):
    with open(path, encoding="utf-8") as fh:
        if "DOCUMENTATION" not in fh.read():
            return None  # a helper such as async_wrapper, not a task's module
    doc, _, _, _ = get_docstring(
        path, fragment_loader,
        collection_name=None if collection == "ansible.builtin" else collection,
        is_module=True,
    )
    if not doc:
        return None
    options = {}
    free_form = False
    for name, opt in sorted((doc.get("options") or {}).items()):
        if name in FREE_FORM_OPTIONS:
            free_form = True
            continue
        options[text(name)] = option_entry(text(name), opt or {}, fqcn)
    return {"free_form": free_form, "options": options}


def flow(value):
    """One YAML flow value on one line."""
    text = yaml.safe_dump(value, default_flow_style=True, width=float("inf"),
                          allow_unicode=True, sort_keys=False)
    return text.strip().removesuffix("...").strip()


def write_modules(out_dir):
    base = os.path.dirname(ansible.__file__)
    builtin = [f[:-3] for f in module_files(builtin_dir())]
    with open(os.path.join(base, "config", "ansible_builtin_runtime.yml")) as fh:
        runtime = yaml.safe_load(fh)
    routing = {}
    for name, entry in (runtime.get("plugin_routing", {}).get("modules", {}) or {}).items():
        if isinstance(entry, dict) and entry.get("redirect"):
            routing[name] = entry["redirect"]
    # A task's action is looked up as an action plugin before a module, so an
    # action redirect to a module decides what runs: `yum:` runs
    # ansible.builtin.dnf although no `yum` module is routed any more. The
    # other action redirects (network platforms' action bases) name no module.
    modules = {"ansible.builtin." + m for m in builtin} | set(routing.values())
    for name, entry in (runtime.get("plugin_routing", {}).get("action", {}) or {}).items():
        target = entry.get("redirect") if isinstance(entry, dict) else None
        if target in modules and name not in builtin:
            routing.setdefault(name, target)
    lines = [
        "# Module names used to resolve a task's action to its fully qualified name.",
        "# Generated by scripts/gen-modules.py from ansible-core %s; do not edit by hand."
        % ansible.__version__,
        "# builtin: modules shipped in ansible.builtin.",
        "# routing: where ansible-core routes a short name (e.g. sysctl -> ansible.posix.sysctl).",
        "builtin:",
    ]
    lines += ["  - %s" % m for m in builtin]
    lines.append("routing:")
    lines += ["  %s: %s" % (k, routing[k]) for k in sorted(routing)]
    with open(os.path.join(out_dir, "modules.yml"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def write_module_args(out_dir):
    sources = [("ansible.builtin", builtin_dir())]
    sources += [(c, os.path.join(collection_dir(c), "plugins", "modules")) for c in COLLECTIONS]
    specs = {}
    for collection, directory in sources:
        for f in module_files(directory):
            fqcn = "%s.%s" % (collection, f[:-3])
            spec = module_spec(os.path.join(directory, f), collection, fqcn)
            if spec is not None:
                specs[fqcn] = spec
    versions = ", ".join("%s %s" % (c, collection_version(c)) for c in COLLECTIONS)
    lines = [
        "# Module argument specs: per module, whether it takes a free-form string",
        "# and each option's canonical name, aliases, type, elements, default (as the",
        "# module coerces it), choices and whether it is required.",
        "# Generated by scripts/gen-modules.py from ansible-core %s and ansible %s"
        % (ansible.__version__, importlib.metadata.version("ansible")),
        "# (%s);" % versions,
        "# do not edit by hand: run `python3 scripts/gen-modules.py` with that Python.",
        "modules:",
    ]
    for fqcn in sorted(specs):
        spec = specs[fqcn]
        lines.append("  %s:" % fqcn)
        if spec["free_form"]:
            lines.append("    free_form: true")
        if spec["options"]:
            lines.append("    options:")
            for name, entry in spec["options"].items():
                lines.append("      %s: %s" % (flow(name), flow(entry)))
        else:
            lines.append("    options: {}")
    with open(os.path.join(out_dir, "module-args.yml"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "rules")
    init_plugin_loader()
    write_modules(out_dir)
    write_module_args(out_dir)


if __name__ == "__main__":
    main()
