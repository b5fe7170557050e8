#!/usr/bin/env bash
# The evaluation oracle on one tree:
#   tests/oracle/eval/run.sh TREE PLAYBOOK [INVENTORY] [-- compare.py options]
# Runs ansible-core (evaluate.py, with $PREFLINT_PYTHON or /work/venv's
# python) and preflint (`$PREFLINT`, else target/debug/preflint) on the tree,
# then compare.py. Writes only into a temporary directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
tree="$(cd "$1" && pwd)"; playbook="$2"; shift 2
inventory=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then inventory="$1"; shift; fi
[ "${1:-}" = "--" ] && shift
py="${PREFLINT_PYTHON:-/work/venv/bin/python}"
preflint="${PREFLINT:-$repo/target/debug/preflint}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
inv_a=(); inv_p=()
if [ -n "$inventory" ]; then inv_a=(-i "$inventory"); inv_p=(-i "$tree/$inventory"); fi
"$py" "$here/evaluate.py" "$tree" "$playbook" "${inv_a[@]}" > "$tmp/ansible.json"
"$preflint" tasks --format json --evaluated --playbook "$playbook" "${inv_p[@]}" "$tree" > "$tmp/preflint.json" || true
python3 "$here/compare.py" "$tmp/ansible.json" "$tmp/preflint.json" "$@"
