#!/usr/bin/env python3
"""The Ansible side of the evaluation oracle.

    evaluate.py TREE PLAYBOOK [-i INVENTORY] [-e EXTRA]... [--host NAME]

Loads PLAYBOOK (relative to TREE) with ansible-core's own classes, the way
`ansible-playbook` does before it runs anything, and prints, for every task
it reaches (handlers too, dynamic includes with known file names expanded as
the strategy would), what ansible-core computes from the variables alone:

    {"tasks": [{"file", "line", "name", "module", "handler",
                "evaluated": {"loop", "iterations": [{"item", "args",
                              "free_form", "template"}]}}]}

in the schema of `preflint tasks --format json --evaluated`
(docs/tasks-json.md). Nothing runs: no connection, no host, no module, no
fact gathering. Facts and registered results are therefore absent, and
whatever rests on them is unknown, with the reason. Lookups that read the
controller's files are allowed (`file`, `fileglob`, `first_found`,
`template`...); any other lookup (`pipe`, `env`, `password`, `url`, ...) is
refused and the value is unknown ("lookup pipe would run at run time").

The inventory is `localhost,` unless given; each play is evaluated for the
first host it targets (or `localhost` when it targets none), as the linear
strategy would compute that host's task variables.

Isolated like tests/oracle/list_tasks.py: no inherited ANSIBLE_* variable,
ANSIBLE_CONFIG is the tree's ansible.cfg (or an empty one), HOME and
ANSIBLE_HOME point into a temporary directory. Nothing is written into the
tree. Needs only the standard library and ansible-core.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

CHILD = "PREFLINT_EVAL_CHILD"

# Lookups that only read the controller's files or compute from their
# arguments: what `with_<name>` and `lookup()` may evaluate here.
PURE_LOOKUPS = {
    "items", "list", "flattened", "dict", "indexed_items", "together", "nested",
    "cartesian", "subelements", "sequence", "file", "fileglob", "first_found",
    "template", "vars", "varnames", "ini", "csvfile", "inventory_hostnames",
}


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
        ANSIBLE_SYSTEM_WARNINGS="0",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        HOME=home,
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
        PYTHONWARNINGS="ignore",
    )
    env[CHILD] = "1"
    lc = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or ""
    if "utf-8" not in lc.lower() and "utf8" not in lc.lower():
        env["LC_ALL"] = "C.UTF-8"
    return env


def parent(argv: list[str]) -> int:
    """Runs the evaluation in a child process with an isolated environment."""
    if len(argv) < 3 or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    tree = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="preflint-eval-")
    try:
        env = isolated_env(tree, tmp)
        proc = subprocess.run(
            [sys.executable, os.path.abspath(__file__), tree, *argv[2:]],
            env=env, cwd=tree, check=False,
        )
        return proc.returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- the child


class Refused(Exception):
    """A lookup that would read the environment, run something or go out."""

    def __init__(self, name: str):
        super().__init__(f"lookup {name} would run at run time")
        self.name = name


def child(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("playbook")
    ap.add_argument("-i", "--inventory", default="localhost,")
    ap.add_argument("-e", "--extra-vars", action="append", default=[])
    ap.add_argument("--host", default=None)
    args = ap.parse_args(argv[1:])

    from ansible import context
    from ansible.cli import CLI
    from ansible.cli.playbook import PlaybookCLI
    from ansible.plugins.loader import add_all_plugin_dirs
    from ansible.utils.collection_loader import AnsibleCollectionConfig
    from ansible.utils.display import Display

    Display().verbosity = 0
    cli_args = ["ansible-playbook", "-i", args.inventory]
    for e in args.extra_vars:
        cli_args += ["-e", e]
    cli_args.append(args.playbook)
    cli = PlaybookCLI(cli_args)
    cli.parse()
    CLI.run(cli)
    pb_dir = os.path.dirname(os.path.abspath(args.playbook))
    add_all_plugin_dirs(pb_dir.encode())
    AnsibleCollectionConfig.playbook_paths = [pb_dir.encode()]
    loader, inventory, vm = cli._play_prereqs()
    guard_lookups()
    ev = Evaluator(args.tree, loader, inventory, vm, args.host)
    out = ev.playbook(args.playbook)
    text = json.dumps({"tasks": out}, indent=1, sort_keys=True, ensure_ascii=False)
    # The one machine-dependent value a tree can see without facts: stored
    # outputs must not depend on where the virtualenv is.
    text = text.replace(json.dumps(sys.executable)[1:-1], "<ansible_playbook_python>")
    sys.stdout.write(text + "\n")
    return 0


def guard_lookups() -> None:
    """Every lookup goes through `_invoke_lookup`, which asks this loader:
    refuse the ones that are not pure before they are even loaded."""
    from ansible._internal._templating import _jinja_plugins

    real = _jinja_plugins.lookup_loader

    class Guard:
        def __getattr__(self, name):
            return getattr(real, name)

        def get(self, name, *a, **kw):
            short = name.rsplit(".", 1)[-1]
            if short not in PURE_LOOKUPS or ("." in name and not name.startswith("ansible.builtin.")):
                raise Refused(short)
            return real.get(name, *a, **kw)

    _jinja_plugins.lookup_loader = Guard()


def to_json(v, depth=0):
    """A rendered value as plain JSON (tagged strings and lazy containers
    become what they hold)."""
    if depth > 200:
        raise ValueError("too deep")
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, dict) or hasattr(v, "items"):
        return {str(k): to_json(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json(x, depth + 1) for x in v]
    return str(v)


UNDEF = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' is undefined")
NO_ATTR = re.compile(r"has no attribute '([^']+)'")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
JINJA_CODE = re.compile(r"{{(.*?)}}|{%(.*?)%}", re.S)


class Evaluator:
    def __init__(self, tree, loader, inventory, vm, host_name):
        self.tree = os.path.realpath(tree)
        self.tree_as_given = os.path.normpath(os.path.abspath(tree))
        self.loader = loader
        self.inventory = inventory
        self.vm = vm
        self.host_name = host_name
        self.registered: set[str] = set()
        self.set_facts: set[str] = set()
        self.out: list[dict] = []
        self._aliases: dict[str, dict[str, str]] = {}
        self._tree_names = None

    # -- reasons

    def reason(self, ex: BaseException) -> str:
        seen = set()
        e = ex
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            if isinstance(e, Refused):
                return str(e)
            e = e.__cause__ or e.__context__
        text = str(ex)
        m = UNDEF.search(text)
        if m:
            name = m.group(1)
            if name in self.registered:
                return f"registered result {name}"
            if name in self.set_facts:
                return f"set_fact {name}"
            if name.startswith(("ansible_", "facter_", "ohai_")):
                return f"host fact {name}"
            return f"undefined {name}"
        m = NO_ATTR.search(text)
        if m:
            return f"undefined attribute {m.group(1)}"
        first = text.strip().splitlines()[0] if text.strip() else type(ex).__name__
        # Machine-dependent words out before the cut: the virtualenv's
        # Python and the controller's host name (a missing library's message).
        first = first.replace(sys.executable, "<ansible_playbook_python>")
        first = first.replace(f"on {platform.node()}'s Python", "on <controller>'s Python")
        return f"ansible error: {first[:160]}"

    # -- walking the playbook

    def playbook(self, path: str) -> list[dict]:
        from ansible.playbook import Playbook
        from ansible._internal._templating._engine import TemplateEngine

        pb = Playbook.load(path, variable_manager=self.vm, loader=self.loader)
        for play in pb.get_plays():
            if play._included_path is not None:
                self.loader.set_basedir(play._included_path)
            else:
                self.loader.set_basedir(pb._basedir)
            self.inventory.remove_restriction()
            all_vars = self.vm.get_vars(play=play)
            templar = TemplateEngine(loader=self.loader, variables=all_vars)
            play.vars_prompt = templar.template(play.vars_prompt)
            for var in play.vars_prompt or []:
                if var["name"] not in self.vm.extra_vars:
                    play.vars[var["name"]] = var.get("default")
            all_vars = self.vm.get_vars(play=play)
            templar = TemplateEngine(loader=self.loader, variables=all_vars)
            play.post_validate(templar)
            self.play(play)
        return self.out

    def play(self, play) -> None:
        from ansible.playbook.block import Block

        hosts = self.inventory.get_hosts(play.hosts)
        names = [h.name for h in hosts]
        host = None
        if self.host_name:
            host = self.inventory.get_host(self.host_name)
        elif hosts:
            host = hosts[0]
        if host is None:
            host = self.inventory.get_host("localhost")
        self.hosts = names
        self.host = host
        all_vars = self.vm.get_vars(play=play)
        blocks = []
        for block in play.compile():
            block = block.filter_tagged_tasks(all_vars)
            if block.has_tasks():
                blocks.append(block)
        handlers = play.compile_roles_handlers() + play.handlers
        tasks = [t for b in blocks for t in self.flat(b, Block)]
        handler_tasks = [t for b in handlers for t in self.flat(b, Block)]
        self.registered = {t.register for t in tasks + handler_tasks if t.register}
        self.set_facts = set()
        for t in tasks + handler_tasks:
            if t.action in ("set_fact", "ansible.builtin.set_fact", "ansible.legacy.set_fact"):
                self.set_facts.update(k for k in t.args if k != "cacheable")
        # Tasks only a dynamic include reaches set facts and register
        # results too: every task file of the tree is read for their names.
        registered, set_facts = self.tree_names()
        self.registered |= registered
        self.set_facts |= set_facts
        for t in tasks:
            self.task(play, t, handler=False, stack=())
        for t in handler_tasks:
            self.task(play, t, handler=True, stack=())

    def tree_names(self):
        """The names `register:` and `set_fact` give anywhere in the tree's
        YAML files (read once, bounded)."""
        if self._tree_names is not None:
            return self._tree_names
        import yaml

        registered, set_facts = set(), set()

        class Loader(yaml.SafeLoader):
            pass

        # `!vault`, `!unsafe`: their values do not name anything here.
        Loader.add_multi_constructor("!", lambda loader, suffix, node: None)

        def visit(node, depth=0):
            if depth > 50:
                return
            if isinstance(node, dict):
                reg = node.get("register")
                if isinstance(reg, str):
                    registered.add(reg)
                for key in ("set_fact", "ansible.builtin.set_fact", "ansible.legacy.set_fact"):
                    args = node.get(key)
                    if isinstance(args, dict):
                        set_facts.update(str(k) for k in args if k != "cacheable")
                    elif isinstance(args, str):
                        set_facts.update(m.group(1) for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)=", args))
                for v in node.values():
                    visit(v, depth + 1)
            elif isinstance(node, list):
                for v in node:
                    visit(v, depth + 1)

        seen = 0
        for base, dirs, files in os.walk(self.tree):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for f in sorted(files):
                if not f.endswith((".yml", ".yaml")) or seen > 20000:
                    continue
                seen += 1
                path = os.path.join(base, f)
                try:
                    if os.path.getsize(path) > 4 << 20:
                        continue
                    with open(path, encoding="utf-8") as fh:
                        for doc in yaml.load_all(fh, Loader=Loader):
                            visit(doc)
                except Exception:  # noqa: BLE001 - not YAML Ansible reads
                    continue
        self._tree_names = (registered, set_facts)
        return self._tree_names

    def flat(self, block, Block):
        for t in block.block + block.rescue + block.always:
            if isinstance(t, Block):
                yield from self.flat(t, Block)
            else:
                yield t

    def task_vars(self, play, task):
        return self.vm.get_vars(play=play, host=self.host, task=task,
                                _hosts=self.hosts, _hosts_all=self.hosts)

    def task(self, play, task, handler: bool, stack: tuple) -> None:
        from ansible import constants as C

        if task.action in C._ACTION_META and task.implicit:
            return
        origin = task._origin
        path = getattr(origin, "path", None)
        if not path:
            return
        entry = {
            "file": self.rel(path),
            "line": origin.line_num or 1,
            "name": task.name or None,
            "action": task.action,
            "handler": handler,
        }
        try:
            tv = self.task_vars(play, task)
            entry["evaluated"], items = self.evaluate(task, tv)
        except Exception as ex:  # noqa: BLE001 - reported, never fatal
            entry["evaluated"] = {"error": self.reason(ex)}
            items = None
        self.out.append(entry)
        if len(stack) < 20 and task.action in C._ACTION_INCLUDE_TASKS + C._ACTION_INCLUDE_ROLE:
            self.include(play, task, handler, stack, items)

    def rel(self, path: str) -> str:
        """A path relative to the tree as reached (through links, as
        preflint shows it), else as resolved, else absolute."""
        for root, p in ((self.tree_as_given, os.path.normpath(os.path.abspath(path))),
                        (self.tree, os.path.realpath(path))):
            if p == root or p.startswith(root + os.sep):
                return os.path.relpath(p, root).replace(os.sep, "/")
        return os.path.realpath(path)

    # -- one task

    def search_vars(self, task, tv):
        tv["ansible_search_path"] = task.get_search_path()
        if self.loader.get_basedir() not in tv["ansible_search_path"]:
            tv["ansible_search_path"].append(self.loader.get_basedir())

    def loop_items(self, task, tv):
        """`TaskExecutor._get_loop_items`, with lookups guarded."""
        from ansible._internal._datatag import _utils
        from ansible._internal._datatag._tags import TrustedAsTemplate
        from ansible._internal._templating._engine import TemplateEngine
        from ansible._internal._templating._jinja_plugins import _invoke_lookup, _DirectCall
        from ansible.errors import AnsibleError

        self.search_vars(task, tv)
        templar = TemplateEngine(loader=self.loader, variables=tv)
        if task.loop_with:
            terms = task.loop
            if isinstance(terms, str):
                terms = templar.resolve_to_container(_utils.str_problematic_strip(terms))
            if not isinstance(terms, list):
                terms = [terms]

            @_DirectCall.mark
            def invoke_lookup():
                return _invoke_lookup(plugin_name=task.loop_with, lookup_terms=terms,
                                      lookup_kwargs=dict(wantlist=True), invoked_as_with=True)

            return templar.evaluate_expression(expression=TrustedAsTemplate().tag("invoke_lookup()"),
                                               local_variables=dict(invoke_lookup=invoke_lookup))
        if task.loop is not None:
            items = templar.template(task.loop)
            if not isinstance(items, list):
                raise AnsibleError(f"The `loop` value must resolve to a 'list', not {type(items).__name__!r}.")
            return items
        return None

    def evaluate(self, task, tv):
        from ansible._internal._templating._engine import TemplateEngine

        out: dict = {"loop": None, "iterations": []}
        items = None
        has_loop = task.loop_with or task.loop is not None
        if has_loop:
            kind = task.loop_with or "loop"
            try:
                raw = self.loop_items(task, tv)
                items = to_json(raw)
                out["loop"] = {"kind": kind, "known": True, "items": items}
            except Exception as ex:  # noqa: BLE001
                out["loop"] = {"kind": kind, "known": False, "reason": self.reason(ex)}
                return out, None
        else:
            self.search_vars(task, tv)
        templar = TemplateEngine(loader=self.loader, variables=tv)
        task.loop_control.post_validate(templar=templar)
        loop_var = task.loop_control.loop_var
        index_var = task.loop_control.index_var
        extended = task.loop_control.extended
        runs = [None] if items is None else list(enumerate(items))
        raws = raw if items is not None else None
        for run in runs:
            vars_ = dict(tv)
            item = None
            if run is not None:
                i, item = run
                vars_["ansible_loop_var"] = loop_var
                vars_[loop_var] = raws[i]
                if index_var:
                    vars_["ansible_index_var"] = index_var
                    vars_[index_var] = i
                if extended:
                    n = len(raws)
                    vars_["ansible_loop"] = {
                        "index": i + 1, "index0": i, "first": i == 0, "last": i + 1 == n,
                        "length": n, "revindex": n - i, "revindex0": n - i - 1,
                    }
                    if task.loop_control.extended_allitems:
                        vars_["ansible_loop"]["allitems"] = raws
                    if i + 1 < n:
                        vars_["ansible_loop"]["nextitem"] = raws[i + 1]
                    if i >= 1:
                        vars_["ansible_loop"]["previtem"] = raws[i - 1]
            out["iterations"].append(self.iteration(task, vars_, item))
        return out, raws

    def iteration(self, task, vars_, item):
        from ansible._internal._templating._engine import TemplateEngine
        from ansible.errors import AnsibleValueOmittedError
        from ansible._internal._templating._jinja_bits import is_possibly_template
        from ansible.plugins.loader import action_loader, module_loader

        templar = TemplateEngine(loader=self.loader, variables=vars_)
        args: dict = {}
        free_form = None
        action_type = None
        try:
            action = templar.template(task.action)
            ctx = action_loader.get_with_context(action, collection_list=task.collections, class_only=True)
            if not ctx.plugin_load_context.resolved:
                mctx = module_loader.find_plugin_with_context(action, collection_list=task.collections)
                if mctx.resolved:
                    ctx = action_loader.get_with_context("ansible.legacy.normal", collection_list=task.collections,
                                                         class_only=True)
            action_type = ctx.object
        except Exception:  # noqa: BLE001 - args are then templated plainly
            action_type = None
        raw_args = dict(task.args)
        vp = raw_args.pop("_variable_params", None)
        layers = []
        if vp is not None:
            try:
                resolved = templar.resolve_to_container(vp)
                if isinstance(resolved, dict):
                    layers.append(resolved)
            except Exception as ex:  # noqa: BLE001
                args["_variable_params"] = {"unknown": self.reason(ex)}
        layers.append(raw_args)
        merged: dict = {}
        for layer in layers:
            merged.update(layer)

        def finalize(name, value):
            if action_type is not None:
                with action_type.get_finalize_task_args_context() as context:
                    return action_type.finalize_task_arg(name, value, templar, context)
            return templar.template(value)

        for name, value in merged.items():
            late = self.set_fact_names(value)
            if late:
                # Nothing ran: the value a set_fact of the play gives at run
                # time is not the one seen here.
                v = {"unknown": f"set_fact {late}"}
                if name == "_raw_params":
                    free_form = v
                else:
                    args[name] = v
                continue
            try:
                final = finalize(name, value)
                if final is value and isinstance(value, str) and is_possibly_template(value):
                    # Left for the action to evaluate (`assert`'s `that`):
                    # not an argument value to compare.
                    v = {"unknown": "condition evaluated by the action"}
                else:
                    v = {"value": to_json(final)}
            except AnsibleValueOmittedError:
                continue
            except Exception as ex:  # noqa: BLE001
                v = {"unknown": self.reason(ex)}
            if name == "_raw_params":
                free_form = v
            else:
                args[name] = v
        args = self.canonical(task, args)
        template = None
        if task.resolved_action in ("ansible.builtin.template", "ansible.legacy.template") or \
                task.action in ("template", "ansible.builtin.template", "ansible.legacy.template"):
            template = self.template(task, vars_, args)
        return {"item": item, "args": args, "free_form": free_form, "template": template}

    def set_fact_names(self, value) -> str | None:
        """The first name a template in `value` uses that a `set_fact` of
        the play sets, if any."""
        if not self.set_facts:
            return None
        texts = []
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                if "{{" in v or "{%" in v:
                    texts.append(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
            elif isinstance(v, (list, tuple)):
                stack.extend(v)
        for t in texts:
            code = " ".join(m.group(1) or m.group(2) for m in JINJA_CODE.finditer(t))
            for name in sorted(set(IDENT.findall(code)) & self.set_facts):
                return name
        return None

    def aliases(self, action: str) -> dict[str, str]:
        """The module's option aliases, alias -> canonical name, read from
        its documentation with its fragments (never by running it)."""
        if action in self._aliases:
            return self._aliases[action]
        from ansible.plugins.loader import fragment_loader, module_loader
        from ansible.utils.plugin_docs import get_docstring

        out: dict[str, str] = {}
        try:
            ctx = module_loader.find_plugin_with_context(action)
            if ctx.resolved and ctx.plugin_resolved_path:
                doc = get_docstring(ctx.plugin_resolved_path, fragment_loader)[0] or {}
                for name, opt in (doc.get("options") or {}).items():
                    for alias in (opt or {}).get("aliases") or []:
                        out[alias] = name
        except Exception:  # noqa: BLE001 - no documentation: names as written
            pass
        self._aliases[action] = out
        return out

    def canonical(self, task, args: dict) -> dict:
        aliases = self.aliases(task.resolved_action or task.action)
        if not aliases:
            return args
        out = {}
        for k, v in args.items():
            name = aliases.get(k, k)
            if name in out and name == k:
                continue
            out[name] = v
        return out

    def template(self, task, vars_, args):
        """The text the template action would write: its `_find_needle`, its
        search path, its template variables and Jinja overrides."""
        from ansible.module_utils.parsing.convert_bool import boolean
        from ansible.template import Templar, trust_as_template
        from ansible._internal._templating import _template_vars as tv_mod

        src = args.get("src")
        if src is None:
            return None
        if "unknown" in src:
            raw = task.args.get("src")
            return {"src": str(raw), "known": "unknown", "reason": src["unknown"]}
        src = src["value"]
        if not isinstance(src, str):
            return {"src": json.dumps(src), "known": "unknown", "reason": "src is not a string"}
        try:
            source = self.loader.path_dwim_relative_stack(task.get_search_path(), "templates", src)
        except Exception:  # noqa: BLE001
            return {"src": src, "known": "unknown", "reason": "template file not found"}

        def opt(name, default):
            v = args.get(name)
            if v is None:
                return default
            if "unknown" in v:
                raise ValueError(f"{name}: {v['unknown']}")
            return v["value"]

        try:
            trim_blocks = boolean(opt("trim_blocks", True), strict=False)
            lstrip_blocks = boolean(opt("lstrip_blocks", False), strict=False)
            newline_sequence = opt("newline_sequence", "\n")
            wrong = ["\\n", "\\r", "\\r\\n"]
            allowed = ["\n", "\r", "\r\n"]
            if newline_sequence in wrong:
                newline_sequence = allowed[wrong.index(newline_sequence)]
            overrides = dict(
                block_start_string=opt("block_start_string", "{%"),
                block_end_string=opt("block_end_string", "%}"),
                variable_start_string=opt("variable_start_string", "{{"),
                variable_end_string=opt("variable_end_string", "}}"),
                comment_start_string=opt("comment_start_string", "{#"),
                comment_end_string=opt("comment_end_string", "#}"),
                trim_blocks=trim_blocks,
                lstrip_blocks=lstrip_blocks,
                newline_sequence=newline_sequence,
            )
            # Only `template_destpath` shows the destination: a dest known
            # only on the host does not keep the text from rendering.
            dest = args.get("dest", {}).get("value")
            data = trust_as_template(self.loader.get_text_file_contents(source))
            searchpath = list(vars_.get("ansible_search_path", []))
            searchpath.extend([self.loader._basedir, os.path.dirname(source)])
            newsearchpath = []
            for p in searchpath:
                newsearchpath.append(os.path.join(p, "templates"))
                newsearchpath.append(p)
            temp_vars = dict(vars_)
            temp_vars.update(tv_mod.generate_ansible_template_vars(
                path=task.args.get("src"), fullpath=source, dest_path=dest,
                include_ansible_managed="ansible_managed" not in temp_vars))
            templar = Templar(loader=self.loader, variables=temp_vars)
            data_templar = templar.copy_with_new_env(searchpath=newsearchpath, available_variables=temp_vars)
            resultant = data_templar.template(data, escape_backslashes=False, overrides=overrides)
            if resultant is None:
                resultant = ""
            return {"src": self.rel(source), "known": "full", "text": str(resultant)}
        except Exception as ex:  # noqa: BLE001
            return {"src": self.rel(source), "known": "unknown", "reason": self.reason(ex)}

    # -- dynamic includes

    def include(self, play, task, handler, stack, items) -> None:
        """Expands an `include_tasks`/`include_role` as the strategy does
        after the include "ran": `IncludedFile.process_include_results` over
        the results the executor returns, then the included blocks."""
        from ansible import constants as C
        from ansible.playbook.block import Block
        from ansible.playbook.included_file import IncludedFile
        from ansible._internal._templating._engine import TemplateEngine
        from ansible.playbook.helpers import load_list_of_blocks

        tv = self.task_vars(play, task)
        loop_var = task.loop_control.loop_var if task.loop_control else "item"
        runs = [None] if items is None else list(enumerate(items))
        if items is None and (task.loop_with or task.loop is not None):
            return  # unknown items: the include is not expanded
        results = []
        for run in runs:
            vars_ = dict(tv)
            if run is not None:
                vars_[loop_var] = run[1]
            templar = TemplateEngine(loader=self.loader, variables=vars_)
            ti = task.copy(exclude_parent=True, exclude_tasks=True)
            ti._parent = task._parent
            try:
                ti.post_validate(templar=templar)
            except Exception:  # noqa: BLE001 - not statically known
                return
            res = {}
            if task.action in C._ACTION_INCLUDE_TASKS:
                include_args = ti.args.copy()
                res["include"] = include_args.pop("_raw_params", None)
                if not res["include"]:
                    return
                res["include_args"] = include_args
            else:
                res["include_args"] = ti.args.copy()
            if run is not None:
                res[loop_var] = run[1]
                res["ansible_loop_var"] = loop_var
            results.append(res)

        class Result:
            pass

        class Iterator:
            _play = play

        r = Result()
        r.host = self.host
        r.task = task
        r._return_data = {"results": results} if items is not None else results[0]
        r._loop_results = results
        try:
            included = IncludedFile.process_include_results([r], Iterator(), self.loader, self.vm)
        except Exception:  # noqa: BLE001
            return
        for inc in included:
            # An include of a file (or role) being included already only
            # runs again when a run goes that way (a retry in `rescue`):
            # walked once, as the listing does.
            key = ("role", inc._filename) if inc._is_role else os.path.realpath(inc._filename)
            if key in stack:
                continue
            ti_copy = inc._task.copy(exclude_parent=True)
            ti_copy._parent = inc._task._parent
            ti_copy.vars = ti_copy.vars | inc._vars
            try:
                if inc._is_role:
                    blocks, _handlers = ti_copy.get_block_list(play=play, variable_manager=self.vm, loader=self.loader)
                else:
                    data = self.loader.load_from_file(inc._filename, trusted_as_template=True)
                    if not data or not isinstance(data, list):
                        continue
                    blocks = load_list_of_blocks(data, play=play, parent_block=ti_copy.build_parent_block(),
                                                 role=inc._task._role, use_handlers=handler, loader=self.loader,
                                                 variable_manager=self.vm)
            except Exception:  # noqa: BLE001 - an include Ansible fails on
                continue
            all_vars = self.vm.get_vars(play=play, task=ti_copy)
            for b in blocks:
                b = b.filter_tagged_tasks(all_vars)
                for t in self.flat(b, Block):
                    self.task(play, t, handler, stack + (key,))


def main(argv: list[str]) -> int:
    if os.environ.get(CHILD) == "1":
        return child(argv)
    return parent(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
