#!/usr/bin/env python3
"""Unit tests of compare.py's normalization (stdlib unittest).

    python3 tests/oracle/test_compare.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def task(name=None, action="ansible.builtin.command", roles=(), **kw):
    t = {"name": name, "action": action, "roles": list(roles), "dynamic": False, "include": None}
    t.update(kw)
    return t


class TaskLine(unittest.TestCase):
    def test_named_role_task_gets_last_role(self):
        t = task("Disable swap", roles=["kubernetes/preinstall", "container-engine/runc"])
        self.assertEqual(compare.task_line(t), "container-engine/runc : Disable swap")

    def test_named_play_task_has_no_prefix(self):
        self.assertEqual(compare.task_line(task("Disable swap")), "Disable swap")

    def test_unnamed_task_is_action_without_role(self):
        self.assertEqual(compare.task_line(task(None, "modprobe", roles=["r"])), "modprobe")
        self.assertEqual(compare.task_line(task("", "ansible.legacy.shell", roles=["r"])),
                         "ansible.legacy.shell")

    def test_named_include_role_has_no_prefix(self):
        t = task("Label nodes", "include_role", roles=["kubernetes/node"],
                 include={"kind": "include_role", "target": "x", "resolved": True})
        self.assertEqual(compare.task_line(t), "Label nodes")
        t = task("Label nodes", "ansible.builtin.include_role", roles=["r"])
        self.assertEqual(compare.task_line(t), "Label nodes")

    def test_named_include_tasks_keeps_prefix(self):
        t = task("Configure NTP", "include_tasks", roles=["kubernetes/preinstall"],
                 include={"kind": "include_tasks", "target": "x.yml", "resolved": True})
        self.assertEqual(compare.task_line(t), "kubernetes/preinstall : Configure NTP")

    def test_non_string_names(self):
        self.assertEqual(compare.task_line(task(42)), "42")
        self.assertEqual(compare.task_line(task(True)), "True")


class Filters(unittest.TestCase):
    def test_rescue_and_always_hidden(self):
        self.assertTrue(compare.hidden_by_block(task("x", blocks=[{"part": "block"}, {"part": "rescue"}])))
        self.assertTrue(compare.hidden_by_block(task("x", block_parts=["always"])))
        self.assertTrue(compare.hidden_by_block(task("x", branch="rescue")))
        self.assertTrue(compare.hidden_by_block(task("x", in_always=True)))
        self.assertFalse(compare.hidden_by_block(task("x", blocks=["block", "block"])))
        self.assertFalse(compare.hidden_by_block(task("x")))

    def test_never_tag(self):
        self.assertTrue(compare.hidden_by_tags(task("x", tags=["never", "swapon"])))
        self.assertFalse(compare.hidden_by_tags(task("x", tags=["never", "always"])))
        self.assertFalse(compare.hidden_by_tags(task("x", tags=["node"])))


class EndToEnd(unittest.TestCase):
    def run_compare(self, oracle, preflint, *args):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            json.dump(oracle, open(a, "w"))
            json.dump(preflint, open(b, "w"))
            here = os.path.dirname(os.path.abspath(__file__))
            return subprocess.run([sys.executable, os.path.join(here, "compare.py"), *args, a, b],
                                  capture_output=True, text=True)

    oracle = {"plays": [{"hosts": "k8s_cluster:etcd", "name": "k8s_cluster:etcd",
                         "tasks": ["r : Named", "command", "include_tasks"]}]}

    def preflint(self, extra=()):
        tasks = [task("Named", roles=["r"]), task(None, "command", roles=["r"]),
                 task(None, "include_tasks", roles=["r"],
                      include={"kind": "include_tasks", "target": "k.yml", "resolved": True}),
                 task("Inside the include", roles=["r"], dynamic=True),
                 task("Rescue", roles=["r"], blocks=["rescue"]), *extra]
        return {"entries": [{"playbook": "site.yml", "plays": [
            {"name": None, "hosts": ["k8s_cluster:etcd"], "tasks": tasks}]}],
            "unresolved": [], "diagnostics": []}

    def test_equal(self):
        r = self.run_compare(self.oracle, self.preflint())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_different(self):
        r = self.run_compare(self.oracle, self.preflint([task("Extra")]))
        self.assertEqual(r.returncode, 1)
        self.assertIn("+    Extra", r.stdout)

    def test_oracle_error_is_unusable(self):
        r = self.run_compare({"error": {"rc": 4, "message": "boom"}}, self.preflint())
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
