#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the fixture trees (the corpus itself is
# not committed). Run from anywhere; needs only coreutils.
set -euo pipefail
cd "$(dirname "$0")"
repos=../test-repos
add() { # target file [prefix-byte]
  local dir="corpus/$1" name
  mkdir -p "$dir"
  name=$(sha1sum "$2" | cut -c1-16)
  if [ -n "${3:-}" ]; then
    { printf "$3"; cat "$2"; } > "$dir/$name"
  else
    cp "$2" "$dir/$name"
  fi
}
while IFS= read -r -d '' f; do
  [ "$(stat -c %s "$f")" -le 65536 ] || continue
  case "$f" in
    */tasks/*|*/handlers/*) add tasks_file "$f" ;;
    */defaults/*|*/vars/*|*group_vars*|*host_vars*) add vars_file "$f" ;;
    */inventory/*.yml|*/inventory/*.yaml|*/inventory/*/*.yml|*/inventory/*/*.yaml) add inventory "$f" '\001' ;;
    */inventory/*) add inventory "$f" '\000' ;;
  esac
  case "$f" in
    *.yml|*.yaml) grep -qE '^- (hosts|import_playbook|name):' "$f" && grep -qE 'hosts:|import_playbook' "$f" && add playbook "$f" ;;
  esac
done < <(find "$repos" ../tests/oracle/inventory -type f -print0)
for f in ../rules/concerns/*.yml; do add catalog "$f"; done
for t in corpus/*; do echo "$t: $(ls "$t" | wc -l) inputs"; done
