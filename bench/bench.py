#!/usr/bin/env python3
"""Benchmark driver for preflint (called by bench/bench.sh; Python 3 stdlib only).

Prints figures; never asserts timings. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRATE = HERE.parent
GNU_TIME = "/usr/bin/time"
BASELINE_PACKAGES = ["ansible-lint", "yamllint", "ansible-core", "ansible"]
# Same list as preflint's discover::SKIP_DIRS (the floors skip what preflint skips).
SKIP_DIRS = [".git", ".hg", ".svn", ".tox", ".venv", "node_modules", "__pycache__"]


def say(msg: str = "") -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------
# measuring


def have_gnu_time() -> bool:
    if not os.access(GNU_TIME, os.X_OK):
        return False
    try:
        r = subprocess.run([GNU_TIME, "-f", "%M", "true"], capture_output=True, text=True)
    except OSError:
        return False
    lines = r.stderr.strip().splitlines()
    return r.returncode == 0 and bool(lines) and lines[-1].strip().isdigit()


USE_GNU_TIME = False  # set in main()


# Fallback measurer (no GNU time): a fresh, minimal Python (-S -E, few imports,
# so its own pages add as little as possible) forks, execs the command and
# reports the wall time and getrusage(RUSAGE_CHILDREN).ru_maxrss (KiB on Linux).
# ru_maxrss of a forked child counts the pages it shares with this helper
# before exec, so small commands read ~5 MB high.
CHILD_CODE = """
import os, sys, time, resource
out, cmd = sys.argv[1], sys.argv[3:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status = os.waitpid(pid, 0)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open(out, "w") as f:
    f.write("%r %d %d" % (wall, rss, os.waitstatus_to_exitcode(status)))
"""


def thp_faults():
    """Transparent huge pages faulted in so far, machine-wide (Linux
    /proc/vmstat), or None where the kernel does not say."""
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("thp_fault_alloc "):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run_once(cmd, cwd=None, env=None, stdout_path=None, stderr_path=None):
    """One run. Returns (wall seconds, peak RSS KiB or None, exit code)."""
    fd, meas = tempfile.mkstemp(prefix="preflint-bench-m-")
    os.close(fd)
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        if USE_GNU_TIME:
            full = [GNU_TIME, "-f", "%M", "-o", meas, *cmd]
            t0 = time.perf_counter()
            rc = subprocess.call(full, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            wall = time.perf_counter() - t0
            lines = Path(meas).read_text().strip().splitlines()
            # GNU time writes "Command exited with non-zero status N" before the format.
            rss = int(lines[-1]) if lines and lines[-1].strip().isdigit() else None
        else:
            full = [sys.executable, "-S", "-E", "-c", CHILD_CODE, meas, "--", *cmd]
            subprocess.call(full, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            w, r, c = Path(meas).read_text().split()
            wall, rss, rc = float(w), int(r), int(c)
    finally:
        for f in (out, err):
            if f is not subprocess.DEVNULL:
                f.close()
        os.unlink(meas)
    return wall, rss, rc


class Row:
    def __init__(self, name, kind="", note=""):
        self.name = name
        self.kind = kind  # "preflint", "floor", "baseline", "scale"
        self.times: list[float] = []
        self.rss: list[int] = []
        self.rcs: list[int] = []
        self.thp: list[int] = []
        self.note = note
        self.first_stdout = b""
        self.first_stderr = b""
        self.extra: dict = {}

    @property
    def ok(self):
        return bool(self.times)

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None

    @property
    def peak_mb(self):
        return max(self.rss) / 1024 if self.rss else None


def measure(name, cmd, runs, tmp, kind, cwd=None, env=None, warmup=True, note=""):
    """Runs cmd `runs` times (plus one unmeasured warm-up run if asked; the
    warm-up run, or else the first measured run, has its output kept)."""
    return measure_interleaved([(name, cmd, env, kind, note)], runs, tmp, cwd=cwd, warmup=warmup)[0]


def measure_interleaved(specs, runs, tmp, cwd=None, warmup=True):
    """Like measure() for several (name, cmd, env, kind, note) specs, run in
    turn (A B A B ...) so that load changing over time hits them alike."""
    rows = [Row(name, kind, note) for name, _cmd, _env, kind, note in specs]
    so = Path(tmp) / "stdout.txt"
    se = Path(tmp) / "stderr.txt"
    total = runs + (1 if warmup else 0)
    names = " / ".join(r.name for r in rows)
    say(f"  {names}: {runs} run(s){' + 1 warm-up' if warmup else ''}{' each, interleaved' if len(rows) > 1 else ''} ...")
    for i in range(total):
        for row, (_name, cmd, env, _kind, _note) in zip(rows, specs):
            keep = i == 0
            thp_before = thp_faults()
            wall, rss, rc = run_once(cmd, cwd=cwd, env=env,
                                     stdout_path=so if keep else None,
                                     stderr_path=se if keep else None)
            thp_after = thp_faults()
            if keep:
                row.first_stdout = so.read_bytes()
                row.first_stderr = se.read_bytes()
            if warmup and i == 0:
                continue
            row.times.append(wall)
            if rss is not None:
                row.rss.append(rss)
            if thp_before is not None and thp_after is not None:
                row.thp.append(thp_after - thp_before)
            row.rcs.append(rc)
            if total > 2 and wall > 20:
                say(f"    {row.name} run {len(row.times)}/{runs}: {wall:.1f} s")
    for row in rows:
        if row.kind in ("preflint", "floor", "scale") and row.thp:
            # Fresh memory is much of what separates preflint from the
            # floor (bench/README.md, December 4); machine-wide, so other
            # processes can add to it.
            row.note = join_notes(row.note, f"{statistics.median(row.thp):g} huge pages/run")
        codes = sorted(set(row.rcs))
        if codes != [0]:
            row.note = join_notes(row.note, "exit " + "/".join(map(str, codes)))
        if any(c < 0 or c > 128 for c in codes):
            tail = row.first_stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            row.note = join_notes(row.note, "stderr: " + " | ".join(tail))
    return rows


def join_notes(a, b):
    return f"{a}; {b}" if a else b


# --------------------------------------------------------------------------
# formatting


def fmt_s(t):
    if t is None:
        return "-"
    return f"{t:.3f}" if t < 100 else f"{t:.1f}"


def fmt_x(x, digits=2):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f}x"
    return f"{x:.{digits}f}x"


def print_table(headers, rows, right=None):
    right = right if right is not None else set(range(1, len(headers)))
    widths = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            if i < len(headers) - 1 or len(headers) == 1:
                widths[i] = max(widths[i], len(c))
    def line(cells):
        out = []
        for i, c in enumerate(cells):
            if i == len(headers) - 1:
                out.append(c)
            elif i in right:
                out.append(c.rjust(widths[i]))
            else:
                out.append(c.ljust(widths[i]))
        return "  ".join(out).rstrip()
    say(line(headers))
    say(line(["-" * w if i < len(headers) - 1 else "-" * max(len(headers[i]), 4) for i, w in enumerate(widths)]))
    for r in rows:
        say(line(r))


def verdict(ok):
    return "MET    " if ok else "NOT MET"


# --------------------------------------------------------------------------
# build


def cargo_target_dir():
    try:
        r = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                           cwd=CRATE, capture_output=True, text=True, check=True)
        return Path(json.loads(r.stdout)["target_directory"])
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        return CRATE / "target"


def build(notes):
    """cargo build --release (+ the parse_floor example when the crate has it)."""
    target = cargo_target_dir()
    steps = [["cargo", "build", "--release"]]
    if (CRATE / "examples" / "parse_floor.rs").is_file():
        steps.append(["cargo", "build", "--release", "--example", "parse_floor"])
    for cmd in steps:
        say(f"$ (cd {CRATE} && {' '.join(cmd)})")
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=CRATE, capture_output=True, text=True)
        if r.returncode != 0:
            tail = "\n".join(r.stderr.strip().splitlines()[-25:])
            say(f"BUILD FAILED (exit {r.returncode}):\n{tail}")
            if cmd[-1] == "parse_floor":
                notes.append("parse_floor example failed to build: parse floor not available")
                continue
            if (target / "release" / "preflint").is_file():
                msg = ("WARNING: the release build failed; measuring the EXISTING (stale) "
                       f"binary {target / 'release' / 'preflint'}")
                say(msg)
                notes.append(msg)
            else:
                sys.exit(1)
        else:
            say(f"  done in {time.perf_counter() - t0:.1f} s")
    return target / "release" / "preflint", target / "release" / "examples" / "parse_floor"


def parse_floor_binary(default: Path):
    override = os.environ.get("PREFLINT_PARSE_FLOOR")
    if override:
        p = Path(override)
        return (p, f"PREFLINT_PARSE_FLOOR={p}") if p.is_file() else (None, f"PREFLINT_PARSE_FLOOR={p} does not exist")
    if default.is_file() and (CRATE / "examples" / "parse_floor.rs").is_file():
        return default, str(default)
    return None, "examples/parse_floor.rs is not in the crate yet (source text: bench/parse_floor.rs)"


def has_subcommand(binary, sub):
    r = subprocess.run([str(binary), sub, "--help"], capture_output=True)
    return r.returncode == 0


def yaml_inventory(tree: Path):
    """(files, bytes) of *.yml/*.yaml under tree, following links, skipping SKIP_DIRS."""
    n = size = 0
    for root, dirs, files in os.walk(tree, followlinks=True):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for f in files:
            if f.endswith((".yml", ".yaml")):
                p = os.path.join(root, f)
                try:
                    size += os.path.getsize(p)
                    n += 1
                except OSError:
                    pass
    return n, size


def read_floor_cmd(tree: Path):
    prune = " -o ".join(f"-name {d}" for d in SKIP_DIRS)
    script = (f'find -L "$1" -type d \\( {prune} \\) -prune -o -type f '
              "\\( -name '*.yml' -o -name '*.yaml' \\) -print0 2>/dev/null | xargs -0 cat > /dev/null")
    shown = (f"find -L TREE -type d \\( {prune} \\) -prune -o -type f "
             "\\( -name '*.yml' -o -name '*.yaml' \\) -print0 | xargs -0 cat > /dev/null")
    return ["bash", "-c", script, "bash", str(tree)], shown


def env_without(*names):
    env = dict(os.environ)
    for n in names:
        env.pop(n, None)
    return env


def env_with(**kv):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in kv.items()})
    return env


# --------------------------------------------------------------------------
# baseline tools


def ensure_venv(user_cache: Path):
    venv = user_cache / "preflint-bench" / "venv"
    marker = venv / ".preflint-bench-ok"
    want = " ".join(BASELINE_PACKAGES)
    if marker.is_file() and marker.read_text().strip() == want and (venv / "bin" / "ansible-lint").exists():
        say(f"  using cached virtualenv {venv}")
        return venv, None
    say(f"  creating virtualenv {venv} and running: pip install {want}")
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if r.returncode == 0:
        r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                            *BASELINE_PACKAGES], capture_output=True, text=True)
    if r.returncode != 0:
        tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-3:])
        shutil.rmtree(venv, ignore_errors=True)
        return None, f"could not install the baseline tools ({tail})"
    marker.write_text(want + "\n")
    say(f"  installed in {time.perf_counter() - t0:.1f} s")
    return venv, None


def package_versions(venv: Path):
    code = ("import importlib.metadata as m\n"
            f"for p in {BASELINE_PACKAGES!r}:\n"
            "    try: print(p, m.version(p))\n"
            "    except Exception: print(p, '?')\n")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True)
    return ", ".join(line.strip() for line in r.stdout.splitlines())


def snapshot(tree: Path):
    snap = {}
    for root, dirs, files in os.walk(tree):
        for name in dirs + files:
            p = os.path.join(root, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            snap[os.path.relpath(p, tree)] = (st.st_size, st.st_mtime_ns)
    return snap


def run_baselines(args, tree, playbook, tmp, user_cache, notes):
    rows = []
    say("Baseline tools (the tools users run today):")
    venv, err = ensure_venv(user_cache)
    if venv is None:
        notes.append(err)
        say(f"  {err}; baseline rows skipped")
        return rows
    say(f"  versions: {package_versions(venv)}")
    copy = Path(tmp) / "tree-copy"
    say(f"  copying the tree to {copy} (the tools run there, so nothing can be written into TREE)")
    shutil.copytree(tree, copy, symlinks=True)
    before = snapshot(copy)
    home = Path(tmp) / "tool-home"
    for d in ("ansible_home", "ansible_tmp", "xdg_cache"):
        (home / d).mkdir(parents=True, exist_ok=True)
    env = env_with(
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        VIRTUAL_ENV=venv,
        ANSIBLE_HOME=home / "ansible_home",
        ANSIBLE_LOCAL_TEMP=home / "ansible_tmp",
        XDG_CACHE_HOME=home / "xdg_cache",
        NO_COLOR=1,
    )
    env.pop("RAYON_NUM_THREADS", None)
    b = venv / "bin"
    rows.append(measure("yamllint -s .", [str(b / "yamllint"), "-s", "."], args.runs, tmp,
                        "baseline", cwd=copy, env=env, warmup=False))
    if playbook:
        rows.append(measure(f"ansible-playbook --syntax-check {playbook}",
                            [str(b / "ansible-playbook"), "--syntax-check", "-i", "localhost,", str(playbook)],
                            args.runs, tmp, "baseline", cwd=copy, env=env, warmup=False))
    else:
        r = Row("ansible-playbook --syntax-check", "baseline", "skipped: no playbook")
        rows.append(r)
    cfg = ".ansible-lint" if (copy / ".ansible-lint").exists() else None
    note = f"uses the tree's {cfg}" if cfg else "no .ansible-lint in the tree"
    say(f"  ansible-lint --offline may take minutes per run ({args.baseline_runs} run(s), --baseline-runs)")
    rows.append(measure("ansible-lint --offline", [str(b / "ansible-lint"), "--offline"], args.baseline_runs,
                        tmp, "baseline", cwd=copy, env=env, warmup=False, note=note))
    after = snapshot(copy)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:
        notes.append(f"the baseline tools wrote {len(changed)} path(s) into their copy of the tree "
                     f"(e.g. {', '.join(changed[:5])}); TREE itself was not touched")
    else:
        notes.append("the baseline tools wrote nothing into their copy of the tree")
    return rows


# --------------------------------------------------------------------------
# normal mode


def main_mode(args, tree, playbook, preflint, floor_bin, floor_why, tmp, user_cache, notes):
    n_yaml, yaml_bytes = yaml_inventory(tree)
    say(f"Tree: {tree}  ({n_yaml} YAML files, {yaml_bytes / 1e6:.2f} MB of YAML; links followed, "
        f"{'/'.join(SKIP_DIRS)} skipped)")
    say(f"Playbook: {playbook if playbook else '(none: preflint uses its default entry points)'}")
    say()

    rows: list[Row] = []
    pb = ["--playbook", str(playbook)] if playbook else []
    # With PLAYBOOK: each command on that entry playbook; and check and
    # who-fixes as users run them on a checkout, with no --playbook (every
    # top-level playbook: 8 on kubespray).
    commands = [
        ("tasks", ["tasks", *pb, str(tree)]),
        ("who-fixes", ["who-fixes", *pb, str(tree)]),
        ("check", ["check", *pb, str(tree)]),
    ]
    if pb:
        commands += [
            ("who-fixes (all)", ["who-fixes", str(tree)]),
            ("check (all)", ["check", str(tree)]),
        ]
    # preflint and the floors are measured in one interleaved set (each
    # command once per round): the ratios to the floor then compare runs of
    # the same minutes on a machine whose speed drifts.
    pf = {}
    specs = []
    keys = []
    for key, argv in commands:
        sub = argv[0]
        name = f"preflint {' '.join(a if a != str(tree) else 'TREE' for a in argv)}"
        if not has_subcommand(preflint, sub):
            say(f"  {name}: not implemented yet (`preflint {sub} --help` fails)")
            rows.append(Row(name, "preflint", "not implemented yet"))
            continue
        specs.append((name, [str(preflint), *argv], env_without("RAYON_NUM_THREADS"), "preflint", ""))
        keys.append(key)
    say("Floors:")
    cmd, shown = read_floor_cmd(tree)
    say(f"  read floor command (shell, not Python): {shown}")
    specs.append(("floor: read every YAML byte (find|xargs cat)", cmd, None, "floor", ""))
    keys.append("read floor")
    floor_par = None
    floor_distinct = None
    if floor_bin is None:
        say(f"  parse floor: not available ({floor_why})")
    else:
        specs += [
            ("floor: parse all YAML, 1 thread", [str(floor_bin), str(tree)], env_with(RAYON_NUM_THREADS=1),
             "floor", ""),
            ("floor: parse all YAML, parallel", [str(floor_bin), str(tree)], env_without("RAYON_NUM_THREADS"),
             "floor", ""),
            ("floor: parse each distinct file, parallel", [str(floor_bin), str(tree), "--distinct"],
             env_without("RAYON_NUM_THREADS"), "floor", ""),
        ]
        keys += ["floor 1", "floor par", "floor distinct"]
    say("preflint and floors, interleaved:")
    measured = dict(zip(keys, measure_interleaved(specs, max(args.runs, args.fast_runs), tmp)))
    for key, _argv in commands:
        r = measured.get(key)
        if r is None:
            continue
        lines = r.first_stdout.count(b"\n")
        r.note = join_notes(r.note, f"{lines} output lines")
        rows.append(r)
        pf[key] = r
    rows.append(measured["read floor"])
    if floor_bin is None:
        rows.append(Row("floor: parse all YAML, 1 thread", "floor", "not available"))
        rows.append(Row("floor: parse all YAML, parallel", "floor", "not available"))
    else:
        r1, rp, rd = measured["floor 1"], measured["floor par"], measured["floor distinct"]
        for r in (r1, rp, rd):
            r.note = join_notes(r.note, r.first_stdout.decode("utf-8", "replace").strip())
        rows += [r1, rp, rd]
        floor_par = rp.median if rp.ok else None
        floor_distinct = rd.median if rd.ok else None
    say()

    baseline_rows = []
    if args.no_baseline:
        notes.append("baseline tools skipped (--no-baseline)")
    else:
        baseline_rows = run_baselines(args, tree, playbook, tmp, user_cache, notes)
        rows += baseline_rows

    # ansible-lint lints the whole tree: compared with check on the whole tree.
    ref_name = next((s for s in ("check (all)", "check", "who-fixes", "tasks") if s in pf and pf[s].ok), None)
    ref = pf[ref_name].median if ref_name else None

    say()
    say("=" * 100)
    say(f"Results: {tree}  (playbook {playbook or '-'}; {cpu_info()}; peak RSS via "
        f"{'GNU time %M' if USE_GNU_TIME else 'Python getrusage(RUSAGE_CHILDREN)'})")
    headers = ["name", "runs", "median s", "min s", "max s", "peak MB",
               "x parse floor (parallel)", f"speed-up vs preflint{' ' + ref_name if ref_name else ''}", "note"]
    table = []
    for r in rows:
        if not r.ok:
            table.append([r.name, "0", "-", "-", "-", "-", "-", "-", r.note])
            continue
        x_floor = r.median / floor_par if floor_par else None
        speed = r.median / ref if (r.kind == "baseline" and ref) else None
        table.append([r.name, str(len(r.times)), fmt_s(r.median), fmt_s(min(r.times)), fmt_s(max(r.times)),
                      f"{r.peak_mb:.1f}" if r.peak_mb is not None else "-",
                      fmt_x(x_floor), fmt_x(speed, 0) if speed else "-", r.note])
    print_table(headers, table)
    say()
    say("Notes:")
    say(f"- median/min/max over the runs; preflint and floor rows had 1 extra unmeasured warm-up run, "
        f"baseline rows none (ansible-lint ran {args.baseline_runs} time(s): --baseline-runs).")
    say("- preflint exit codes are ignored (1 means findings); baseline tools ran in a copy of the tree.")
    if ref_name and not ref_name.startswith("check"):
        say(f"- speed-up reference is `preflint {ref_name}` because "
            f"{'check is' if ref_name == 'who-fixes' else 'check and who-fixes are'} not implemented yet.")
    if floor_par is None:
        say(f"- parse floor not available: {floor_why}")
    for n in notes:
        say(f"- {n}")

    say()
    say("Targets (informational, this run only; the exit code is 0 regardless):")
    al = next((r for r in baseline_rows if r.name.startswith("ansible-lint") and r.ok), None)
    for sub in ("check", "who-fixes", "check (all)", "who-fixes (all)"):
        if sub.endswith("(all)") and sub not in pf:
            continue
        r = pf.get(sub)
        label = (f"preflint {sub.split()[0]} TREE (every top-level playbook)" if sub.endswith("(all)")
                 else f"preflint {sub}{' --playbook ' + str(playbook) if playbook else ''}")
        stand_in = pf.get("tasks")
        if r is None or not r.ok:
            extra = ""
            if stand_in and stand_in.ok:
                bits = []
                if floor_par:
                    bits.append(f"{stand_in.median / floor_par:.2f}x parse floor")
                if al:
                    bits.append(f"{al.median / stand_in.median:,.0f}x faster than ansible-lint")
                if stand_in.peak_mb is not None:
                    bits.append(f"{stand_in.peak_mb:.1f} MB")
                extra = f" (for reference, preflint tasks: {', '.join(bits)})"
            say(f"  [N/A    ] {label}: <= 1.5x parse floor, >= 2000x faster than ansible-lint, < 100 MB: "
                f"not measured, not implemented yet{extra}")
            continue
        if floor_par:
            x = r.median / floor_par
            say(f"  [{verdict(x <= 1.5)}] {label} <= 1.5x the parallel parse floor: {x:.2f}x")
            if floor_distinct:
                say(f"            (vs parsing each distinct file once, as preflint reads a file reached "
                    f"through links once: {r.median / floor_distinct:.2f}x)")
        else:
            say(f"  [N/A    ] {label} <= 1.5x the parallel parse floor: parse floor not available")
        if al:
            s = al.median / r.median
            say(f"  [{verdict(s >= 2000)}] {label} >= 2000x faster than ansible-lint: {s:,.0f}x")
        else:
            say(f"  [N/A    ] {label} >= 2000x faster than ansible-lint: ansible-lint not measured")
        if r.peak_mb is not None:
            say(f"  [{verdict(r.peak_mb < 100)}] {label} < 100 MB peak memory: {r.peak_mb:.1f} MB")
        else:
            say(f"  [N/A    ] {label} < 100 MB peak memory: not measured")
    say("  (scale targets: run with --scale)")


# --------------------------------------------------------------------------
# scale mode

ROLE_SUBDIRS = {"tasks", "handlers", "templates", "files", "vars", "defaults", "meta", "library",
                "module_utils", "filter_plugins", "lookup_plugins", "molecule", "tests", ".git"}
MARK = "\x00PREFIX\x00"


class RoleTemplate:
    """roles/ of TREE read once, with every role reference marked for prefixing."""

    def __init__(self, roles: Path):
        self.roles = roles
        self.tops = sorted(e.name for e in roles.iterdir() if e.is_dir())
        alt = "|".join(re.escape(t) for t in sorted(self.tops, key=len, reverse=True))
        end = r"(?=/|[\"'\s,}\]#]|$)"
        # `role: X` (meta dependencies, play roles, include_role's `role:` alias),
        # also in flow mappings `- { role: X }`; not keys like `rh_subscription_role:`.
        self.role_re = re.compile(r"((?<![\w.-])role:[ \t]+[\"']?)(" + alt + r")" + end)
        self.name_re = re.compile(r"^(\s*(?:-\s+)?name:[ \t]+[\"']?)(" + alt + r")" + end)
        self.inline_re = re.compile(r"((?:include|import)_role:[ \t]+.*?\bname=[\"']?)(" + alt + r")" + end)
        self.item_re = re.compile(r"^(\s*-[ \t]+[\"']?)(" + alt + r")" + end)
        # `../../download/tasks/x.yml`: a relative path climbing out of a role into
        # another top-level entry of roles/ (include_tasks, vars_files, src: ...).
        self.relpath_re = re.compile(r"((?<![\w.])(?:\.\./)+)(" + alt + r")(?=/)")
        self.block_re = re.compile(r"^(\s*)(-\s+)?(?:ansible\.builtin\.)?(?:include|import)_role:\s*(#.*)?$")
        self.deps_re = re.compile(r"^dependencies:\s*(#.*)?$")
        self.refs: set[str] = set()
        self.rewrites: dict[str, int] = {"role:": 0, "include/import_role name:": 0,
                                         "include/import_role name=": 0, "meta dependency item": 0,
                                         "relative path ../X/": 0}
        self.entries = []  # (relpath, kind, payload)
        self._load()
        self.role_dirs = self._role_dirs()
        self.roots = sorted(self.role_dirs - self.refs)

    def _ref(self, m, rel, kind):
        self.rewrites[kind] += 1
        if "molecule" not in Path(rel).parts and "tests" not in Path(rel).parts:
            rest = m.string[m.end(1):]
            name = re.match(r"[^\"'\s,}\]#]+", rest).group(0)
            if "{{" not in name:
                self.refs.add(name.rstrip("/"))
        return m.group(1) + MARK + m.group(2)

    def _count(self, m, kind):
        self.rewrites[kind] += 1
        return m.group(1) + MARK + m.group(2)

    def rewrite(self, text: str, rel: str) -> str:
        out = []
        block_col = None
        in_deps = rel.endswith(("meta/main.yml", "meta/main.yaml"))
        deps = False
        for line in text.split("\n"):
            stripped = line.strip()
            indent = len(line) - len(line.lstrip())
            if block_col is not None and stripped and not stripped.startswith("#") and indent <= block_col:
                block_col = None
            if in_deps and stripped and not stripped.startswith("#"):
                if self.deps_re.match(line):
                    deps = True
                    out.append(line)
                    continue
                if deps and indent == 0 and not line.startswith("-"):
                    deps = False
            new = self.role_re.sub(lambda m: self._ref(m, rel, "role:"), line)
            if block_col is not None:
                new = self.name_re.sub(lambda m: self._ref(m, rel, "include/import_role name:"), new)
            new = self.inline_re.sub(lambda m: self._ref(m, rel, "include/import_role name="), new)
            new = self.relpath_re.sub(lambda m: self._count(m, "relative path ../X/"), new)
            if deps and new == line:
                new = self.item_re.sub(lambda m: self._ref(m, rel, "meta dependency item"), new)
            bm = self.block_re.match(line)
            if bm:
                block_col = len(bm.group(1)) + (len(bm.group(2)) if bm.group(2) else 0)
            out.append(new)
        return "\n".join(out)

    def _load(self):
        for top in self.tops:
            base = self.roles / top
            self.entries.append((top, "dir", None))
            for root, dirs, files in os.walk(base):
                rroot = os.path.relpath(root, self.roles)
                for d in list(dirs):
                    p = os.path.join(root, d)
                    if os.path.islink(p):
                        self.entries.append((os.path.join(rroot, d), "link", os.readlink(p)))
                        dirs.remove(d)
                    else:
                        self.entries.append((os.path.join(rroot, d), "dir", None))
                for f in files:
                    p = os.path.join(root, f)
                    rel = os.path.join(rroot, f)
                    if os.path.islink(p):
                        self.entries.append((rel, "link", os.readlink(p)))
                    elif f.endswith((".yml", ".yaml")):
                        raw = Path(p).read_bytes()
                        try:
                            text = raw.decode("utf-8")
                        except UnicodeDecodeError:
                            self.entries.append((rel, "file", p))
                            continue
                        self.entries.append((rel, "text", self.rewrite(text, rel).encode("utf-8")))
                    else:
                        self.entries.append((rel, "file", p))

    def _role_dirs(self):
        found = set()
        def visit(d: Path, rel: str):
            subs = ("tasks", "meta", "handlers", "defaults", "vars")
            if rel and any((d / sub / main).is_file() or (d / sub / "main").is_dir()
                           for sub in subs for main in ("main.yml", "main.yaml")):
                found.add(rel)
            for c in sorted(d.iterdir()):
                if c.is_dir() and not c.is_symlink() and c.name not in ROLE_SUBDIRS:
                    visit(c, f"{rel}/{c.name}" if rel else c.name)
        visit(self.roles, "")
        return found

    def materialize(self, dest_roles: Path, copy: int):
        prefix = f"c{copy:03d}_"
        pb = prefix.encode()
        mark = MARK.encode()
        for rel, kind, payload in self.entries:
            dst = dest_roles / (prefix + rel)
            if kind == "dir":
                dst.mkdir(parents=True, exist_ok=True)
            elif kind == "link":
                os.symlink(payload, dst)
            elif kind == "text":
                dst.write_bytes(payload.replace(mark, pb))
            else:
                shutil.copyfile(payload, dst)


def build_scale_tree(tpl: RoleTemplate, dest: Path, copies: int):
    roles = dest / "roles"
    roles.mkdir(parents=True)
    for i in range(copies):
        tpl.materialize(roles, i)
    plays = []
    for i in range(copies):
        prefix = f"c{i:03d}_"
        lines = [f"- name: Copy {i:03d} of the roles", "  hosts: all", "  roles:"]
        lines += [f"    - {prefix}{r}" for r in tpl.roots]
        plays.append("\n".join(lines))
    (dest / "scale.yml").write_text("---\n" + "\n\n".join(plays) + "\n")


def scale_mode(args, tree, preflint, floor_bin, floor_why, tmp, notes):
    roles = tree / "roles"
    if not roles.is_dir():
        say(f"error: {roles} does not exist; --scale copies TREE/roles")
        return 2
    copies_list = sorted(set(args.copies))
    t0 = time.perf_counter()
    tpl = RoleTemplate(roles)
    say(f"Scale mode: synthetic monorepos of {', '.join(map(str, copies_list))} copies of {roles}")
    say(f"  roles found: {len(tpl.role_dirs)}; listed in each play (roles no other role references "
        f"by a literal name): {len(tpl.roots)}")
    say("  rewritten role references per copy: " + ", ".join(f"{k} {v}" for k, v in tpl.rewrites.items()))
    trees = {}
    for n in copies_list:
        d = Path(tmp) / f"scale-{n}"
        build_scale_tree(tpl, d, n)
        files, size = yaml_inventory(d)
        trees[n] = (d, files, size)
    say(f"  built in {time.perf_counter() - t0:.1f} s under {tmp}")
    say()
    rows = []
    env = env_without("RAYON_NUM_THREADS")
    for n in copies_list:
        d, files, size = trees[n]
        r = measure(f"preflint tasks, {n} {'copy' if n == 1 else 'copies'}", [str(preflint), "tasks", "--playbook", "scale.yml", str(d)],
                    args.runs, tmp, "scale", env=env)
        r.extra.update(n=n, files=files, size=size, lines=r.first_stdout.count(b"\n"))
        if floor_bin:
            f = measure(f"parse floor, {n} {'copy' if n == 1 else 'copies'}", [str(floor_bin), str(d)], args.runs, tmp, "floor", env=env)
            r.extra["floor"] = f.median
        rows.append(r)
    thread_n = 10 if 10 in trees else copies_list[len(copies_list) // 2]
    d = trees[thread_n][0]
    th = dict(zip((1, 2), measure_interleaved(
        [(f"preflint tasks, {thread_n} copies, RAYON_NUM_THREADS={k}",
          [str(preflint), "tasks", "--playbook", "scale.yml", str(d)], env_with(RAYON_NUM_THREADS=k), "scale", "")
         for k in (1, 2)], args.runs, tmp)))
    fth = {}
    if floor_bin:
        fth = dict(zip((1, 2), measure_interleaved(
            [(f"parse floor, {thread_n} copies, RAYON_NUM_THREADS={k}", [str(floor_bin), str(d)],
              env_with(RAYON_NUM_THREADS=k), "floor", "") for k in (1, 2)], args.runs, tmp)))

    say()
    say("=" * 100)
    say(f"Scale results: preflint tasks --playbook scale.yml on N copies of {roles}  ({cpu_info()}; "
        f"{args.runs} runs + 1 warm-up each)")
    base = rows[0]
    headers = ["copies", "YAML files", "YAML MB", "median s", "min s", "max s", "peak MB",
               f"time / time({base.extra['n']})", f"mem / mem({base.extra['n']})",
               f"input / input({base.extra['n']})", "x parse floor", "note"]
    table = []
    for r in rows:
        e = r.extra
        table.append([str(e["n"]), str(e["files"]), f"{e['size'] / 1e6:.1f}", fmt_s(r.median),
                      fmt_s(min(r.times)), fmt_s(max(r.times)),
                      f"{r.peak_mb:.1f}" if r.peak_mb is not None else "-",
                      fmt_x(r.median / base.median), fmt_x(r.peak_mb / base.peak_mb) if r.peak_mb else "-",
                      fmt_x(e["size"] / base.extra["size"]),
                      fmt_x(r.median / e["floor"]) if e.get("floor") else "-",
                      join_notes(r.note, f"{e['lines']} output lines")])
    print_table(headers, table)
    say()
    headers = ["threads (copies=%d)" % thread_n, "median s", "min s", "max s", "peak MB", "speed-up vs 1", "note"]
    table = []
    for label, series in (("preflint tasks", th), ("parse floor", fth)):
        for k, r in series.items():
            table.append([f"{label}, RAYON_NUM_THREADS={k}", fmt_s(r.median), fmt_s(min(r.times)),
                          fmt_s(max(r.times)), f"{r.peak_mb:.1f}" if r.peak_mb is not None else "-",
                          fmt_x(series[1].median / r.median), r.note])
    print_table(headers, table, right={1, 2, 3, 4, 5})
    say()
    say("Notes:")
    say(f"- each copy i is roles/c<iii>_<top-level entry of roles/>; scale.yml has one play per copy "
        f"(hosts: all) listing its {len(tpl.roots)} root roles.")
    say("- rewritten inside the copies (so each copy is self-contained): `role: X` anywhere (meta dependencies, "
        "plays, flow mappings), `name: X` under include_role/import_role, `include_role: name=X`, plain "
        "`- X` items under `dependencies:` in meta/main.yml, and relative paths `../../X/...` climbing into "
        "another entry, when X (the first path component) is a top-level entry of roles/. Names whose first "
        "component is a template and names in non-YAML files are left alone. See bench/README.md.")
    if not floor_bin:
        say(f"- parse floor not available: {floor_why}")
    for n in notes:
        say(f"- {n}")
    say()
    say("Targets (informational, this run only; the exit code is 0 regardless):")
    by_n = {r.extra["n"]: r for r in rows}
    if 1 in by_n and 100 in by_n:
        t = by_n[100].median / by_n[1].median
        say(f"  [{verdict(t <= 110)}] 100 copies take at most 110x the time of one copy: {t:.1f}x")
        if by_n[1].peak_mb and by_n[100].peak_mb:
            m = by_n[100].peak_mb / by_n[1].peak_mb
            inp = by_n[100].extra["size"] / by_n[1].extra["size"]
            say(f"  [{verdict(m <= inp)}] memory grows no faster than the input: mem(100)/mem(1) = {m:.1f}x "
                f"vs input(100)/input(1) = {inp:.1f}x (YAML bytes)")
    else:
        say("  [N/A    ] 100-vs-1-copy targets: need --copies to include 1 and 100")
    s = th[1].median / th[2].median
    lab = f"{thread_n}-copy tree" + ("" if thread_n == 10 else " (10 copies not built)")
    say(f"  [{verdict(s >= 1.6)}] 2 threads at least 1.6x faster than 1 on the {lab}: {s:.2f}x")
    if fth:
        say(f"            (the parse floor itself: {fth[1].median / fth[2].median:.2f}x)")
    return 0


LOAD_AT_START = None


def load_now():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def cpu_info():
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count()
    return f"{n} CPUs, load average {LOAD_AT_START} at start, {load_now()} now"


# --------------------------------------------------------------------------


def main(argv):
    global USE_GNU_TIME
    ap = argparse.ArgumentParser(
        prog="bench/bench.sh",
        description="Benchmark preflint against the floors and the tools users run today. "
                    "Prints figures; never asserts timings (exit code 0 unless the build or the arguments fail).")
    ap.add_argument("tree", metavar="TREE", help="Ansible tree to read, e.g. a kubespray checkout")
    ap.add_argument("playbook", metavar="PLAYBOOK", nargs="?",
                    help="entry playbook relative to TREE (default: cluster.yml when TREE has it)")
    ap.add_argument("--runs", type=int, default=5, help="measured runs per command (default 5)")
    ap.add_argument("--fast-runs", type=int, default=15,
                    help="measured runs of the preflint and floor rows on TREE, which take ~50 ms each "
                         "(default 15; never fewer than --runs): on a noisy machine a 5-run median "
                         "moves by up to 10%% from one run of the script to the next")
    ap.add_argument("--baseline-runs", type=int, default=1, help="runs of ansible-lint (default 1; it takes minutes)")
    ap.add_argument("--no-baseline", action="store_true", help="skip ansible-lint, yamllint and ansible-playbook")
    ap.add_argument("--scale", action="store_true",
                    help="scale mode: preflint tasks on synthetic monorepos of N copies of TREE/roles")
    ap.add_argument("--copies", type=lambda s: [int(x) for x in s.split(",")], default=[1, 10, 100],
                    help="scale mode: comma-separated copy counts (default 1,10,100)")
    ap.add_argument("--keep-temp", action="store_true", help="keep the temporary directory (path is printed)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.baseline_runs < 1:
        ap.error("--runs and --baseline-runs must be at least 1")

    tree = Path(args.tree).resolve()
    if not tree.is_dir():
        ap.error(f"TREE {args.tree} is not a directory")
    playbook = None
    if args.playbook:
        p = Path(args.playbook)
        full = p if p.is_absolute() else tree / p
        if not full.is_file():
            ap.error(f"PLAYBOOK {full} does not exist")
        playbook = Path(os.path.relpath(full.resolve(), tree))
    elif (tree / "cluster.yml").is_file():
        playbook = Path("cluster.yml")

    global LOAD_AT_START
    LOAD_AT_START = load_now()
    notes: list[str] = []
    USE_GNU_TIME = have_gnu_time()
    if not USE_GNU_TIME:
        msg = ("GNU time (/usr/bin/time) not found: peak RSS via Python resource.getrusage(RUSAGE_CHILDREN) "
               "in a fresh subprocess per run; for GNU time install the Debian package `time` "
               "(apt-get install time)")
        say(msg)
        notes.append(msg)

    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    preflint, floor_default = build(notes)
    ver = subprocess.run([str(preflint), "--version"], capture_output=True, text=True).stdout.strip()
    say(f"preflint: {preflint} ({ver})")
    floor_bin, floor_why = parse_floor_binary(floor_default)
    if floor_bin is None:
        say(f"parse floor: not available ({floor_why})")
    else:
        say(f"parse floor: {floor_why}")
    say()

    tmp = tempfile.mkdtemp(prefix="preflint-bench-")
    try:
        if args.scale:
            return scale_mode(args, tree, preflint, floor_bin, floor_why, tmp, notes)
        main_mode(args, tree, playbook, preflint, floor_bin, floor_why, tmp, user_cache, notes)
        return 0
    finally:
        if args.keep_temp:
            say(f"(temporary files kept in {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
