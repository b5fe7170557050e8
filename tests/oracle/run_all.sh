#!/usr/bin/env bash
# Run the ansible oracle over every fixture case and, optionally, compare
# preflint's listing with it.
#
# Cases (paths relative to test-repos/, fields separated by one TAB):
#   cases.txt         <tree>  <playbook relative to tree>
#   role-cases.txt    <tree>  <roles path relative to tree>  <role name>
#   broken-cases.txt  <tree>  <playbook>  <exit code of ansible-playbook>
#
# Usage:
#   tests/oracle/run_all.sh            live ansible vs expected/ (and vs preflint
#                                      when PREFLINT_CMD is set)
#   tests/oracle/run_all.sh --update   rewrite expected/ from live ansible
#   tests/oracle/run_all.sh --offline  no ansible: expected/ is the oracle
#                                      (needs PREFLINT_CMD)
#   tests/oracle/run_all.sh --list     print the cases and exit
#
# PREFLINT_CMD is a shell command template run with the tree as working
# directory; {tree} is replaced by the tree's absolute path and {playbook} by
# the playbook path relative to it, e.g.
#   PREFLINT_CMD='/work/main/target/debug/preflint tasks --format json {playbook}'
# Role cases are compared with preflint only when PREFLINT_ROLE_CMD is set
# ({tree}, {roles_path}, {role}).
#
# Exit code: 0 all good, 1 at least one mismatch or failure.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repos=$(cd "$here/../../test-repos" && pwd)
expected="$here/expected"
py=${PYTHON:-python3}
mode=live
case "${1:-}" in
  --update) mode=update ;;
  --offline) mode=offline ;;
  --list) cat "$here/cases.txt"; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--update|--offline|--list]" >&2; exit 2 ;;
esac
if [ "$mode" = offline ] && [ -z "${PREFLINT_CMD:-}" ]; then
  echo "run_all.sh: --offline needs PREFLINT_CMD" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/preflint-oracle-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# expand TEMPLATE with {key} -> value pairs
expand() {
  local s=$1; shift
  while [ $# -ge 2 ]; do s=${s//\{$1\}/$2}; shift 2; done
  printf '%s' "$s"
}

# check_oracle <label> <expected file> <fresh oracle json or ""> -> sets $oracle
check_oracle() {
  local label=$1 exp=$2 fresh=$3
  case "$mode" in
    update)
      mkdir -p "$(dirname "$exp")"
      cp "$fresh" "$exp"
      oracle=$exp
      echo "wrote ${exp#$here/}" ;;
    offline)
      if [ ! -f "$exp" ]; then fail "$label: no ${exp#$here/}"; oracle=""; return; fi
      oracle=$exp ;;
    live)
      oracle=$fresh
      if [ ! -f "$exp" ]; then
        fail "$label: no ${exp#$here/} (run with --update)"
      elif ! cmp -s "$exp" "$fresh"; then
        fail "$label: ansible's listing differs from ${exp#$here/}"
        diff -u "$exp" "$fresh" | sed 's/^/    /'
      fi ;;
  esac
}

while IFS=$'\t' read -r tree playbook; do
  [ -n "$tree" ] || continue
  label="$tree $playbook"
  exp="$expected/$tree/$playbook.json"
  fresh="$work/oracle.json"
  if [ "$mode" != offline ]; then
    if ! "$py" "$here/list_tasks.py" "$repos/$tree" "$playbook" >"$fresh" 2>"$work/stderr"; then
      fail "$label: ansible failed"; sed 's/^/    /' "$work/stderr"; continue
    fi
  fi
  check_oracle "$label" "$exp" "$fresh"
  [ -n "$oracle" ] || continue
  if [ -n "${PREFLINT_CMD:-}" ] && [ "$mode" != update ]; then
    cmd=$(expand "$PREFLINT_CMD" tree "$repos/$tree" playbook "$playbook")
    if ! (cd "$repos/$tree" && bash -c "$cmd") >"$work/preflint.json" 2>"$work/stderr"; then
      # preflint may exit 1 on findings; only a missing/invalid JSON is fatal
      :
    fi
    if "$py" "$here/compare.py" --playbook "$playbook" "$oracle" "$work/preflint.json" >"$work/diff"; then
      echo "ok   $label"
    else
      fail "$label: preflint differs"; sed 's/^/    /' "$work/diff" "$work/stderr"
    fi
  elif [ "$mode" = live ]; then
    echo "ok   $label (oracle only)"
  fi
done <"$here/cases.txt"

while IFS=$'\t' read -r tree roles_path role; do
  [ -n "$tree" ] || continue
  label="$tree role $role"
  exp="$expected/$tree/@role/$role.json"
  fresh="$work/oracle.json"
  if [ "$mode" != offline ]; then
    if ! "$py" "$here/list_tasks.py" "$repos/$tree" --roles-path "$roles_path" --role "$role" >"$fresh" 2>"$work/stderr"; then
      fail "$label: ansible failed"; sed 's/^/    /' "$work/stderr"; continue
    fi
  fi
  check_oracle "$label" "$exp" "$fresh"
  [ -n "$oracle" ] || continue
  if [ -n "${PREFLINT_ROLE_CMD:-}" ] && [ "$mode" != update ]; then
    cmd=$(expand "$PREFLINT_ROLE_CMD" tree "$repos/$tree" roles_path "$roles_path" role "$role")
    (cd "$repos/$tree" && bash -c "$cmd") >"$work/preflint.json" 2>"$work/stderr" || :
    if "$py" "$here/compare.py" --tasks-only "$oracle" "$work/preflint.json" >"$work/diff"; then
      echo "ok   $label"
    else
      fail "$label: preflint differs"; sed 's/^/    /' "$work/diff" "$work/stderr"
    fi
  elif [ "$mode" = live ]; then
    echo "ok   $label (oracle only)"
  fi
done <"$here/role-cases.txt"

if [ "$mode" = live ]; then
  while IFS=$'\t' read -r tree playbook rc; do
    [ -n "$tree" ] || continue
    "$py" "$here/list_tasks.py" "$repos/$tree" "$playbook" >"$work/err.json" 2>/dev/null
    got=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error",{}).get("rc",0))' "$work/err.json")
    if [ "$got" = "$rc" ]; then
      echo "ok   $tree $playbook (ansible fails with rc $rc)"
    else
      fail "$tree $playbook: ansible rc $got, expected $rc"
    fi
  done <"$here/broken-cases.txt"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all cases passed"
