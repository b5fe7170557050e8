#!/usr/bin/env bash
# The evaluation oracle on a corpus of real trees (read-only):
#   tests/oracle/eval/corpus.sh CORPUS_DIR LIST [OUT_DIR]
# LIST is bench/corpus.txt's format (repository, commit, entry, ...; the
# tree is CORPUS_DIR/<repository with / as +>). An entry playbook is
# evaluated as is; a role (`.` on a role tree, or `role:<dir>`) through a
# one-play playbook written into a temporary directory, never into the tree.
# Prints one row per tree (compare.py's counts); each tree's ansible.json,
# preflint.json, report.txt and summary.json stay in OUT_DIR.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
corpus="$1"; list="$2"; out="${3:-$(mktemp -d)}"
py="${PREFLINT_PYTHON:-/work/venv/bin/python}"
preflint="${PREFLINT:-$repo/target/debug/preflint}"
mkdir -p "$out"
printf '%-45s %s\n' tree "paired only(ansible/preflint) loops(agree/differ/gap/unknown) iterations(agree/differ/invented/gap/unknown) failures"
grep -v '^#' "$list" | awk 'NF >= 3 {print $1, $3}' | while read -r name entry; do
  dir="$corpus/${name//\//+}"
  [ -d "$dir" ] || { printf '%-45s missing\n' "$name"; continue; }
  o="$out/${name//\//+}"; mkdir -p "$o"
  tree="$dir"; pflags=()
  case "$entry" in
    role:*) tree="$dir/${entry#role:}"; playbook="" ;;
    .) if [ -f "$dir/tasks/main.yml" ]; then playbook=""; else printf '%-45s no entry playbook\n' "$name"; continue; fi ;;
    *) playbook="$entry"; pflags=(--playbook "$entry") ;;
  esac
  if [ -z "$playbook" ]; then
    playbook="$o/role-play.yml"
    printf -- '- hosts: all\n  gather_facts: false\n  roles:\n    - role: %s\n' "$tree" > "$playbook"
  fi
  rc=0
  # REUSE=1: keep ansible-core's side from an earlier run (it does not
  # depend on preflint).
  if [ "${REUSE:-0}" != 1 ] || [ ! -s "$o/ansible.json" ]; then
    timeout 1200 "$py" "$here/evaluate.py" "$tree" "$playbook" > "$o/ansible.json" 2> "$o/ansible.err"
    rc=$?
  fi
  if [ $rc -ne 0 ] || [ ! -s "$o/ansible.json" ]; then
    printf '%-45s ansible-core failed (rc %s): %s\n' "$name" "$rc" "$(grep -m1 -i 'error' "$o/ansible.err" | cut -c1-150)"
    continue
  fi
  "$preflint" tasks --format json --evaluated "${pflags[@]}" "$tree" > "$o/preflint.json" 2> "$o/preflint.err"
  python3 "$here/compare.py" "$o/ansible.json" "$o/preflint.json" --quiet --summary-json "$o/summary.json" --tree "$tree" > "$o/report.txt"
  python3 - "$name" "$o/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[2]))
g = lambda k: s.get(k, 0)
loops = "/".join(str(g(f"loop {k}")) for k in ("agree", "differ", "gap", "unknown"))
its = "/".join(str(g(f"iteration {k}")) for k in ("agree", "differ", "invented", "gap", "unknown"))
only = f"{g('only ansible')}/{g('only preflint')}"
print(f"{sys.argv[1]:45} {g('tasks paired'):6} {only:>10} {loops:>16} {its:>24} {g('failures')}")
PY
done
echo "reports in $out"
