#!/bin/bash
# Runs tasks, who-fixes and check (JSON) on every tree of test-repos/hostile,
# plus a copy of huge-file with a 50 MB tasks file and one with an 8 MiB
# sysctl tasks file (as tests/hostile.rs builds them); prints peak RSS and
# wall time per run and the totals. A benchmark: prints figures, asserts
# nothing. Needs GNU time (/usr/bin/time) and python3; builds preflint.
set -u
crate=$(cd "$(dirname "$0")/.." && pwd)
(cd "$crate" && cargo build --release -q) || exit 2
b=$crate/target/release/preflint
t=$(mktemp -d)
cp -r $crate/test-repos/hostile/huge-file $t/huge50
python3 - "$t" <<'PY'
import sys,os
t=sys.argv[1]
p=os.path.join(t,"huge50/roles/huge/tasks"); os.makedirs(p,exist_ok=True)
task="- name: Set a sysctl\n  ansible.posix.sysctl:\n    name: vm.swappiness\n    value: '1'\n"
with open(os.path.join(p,"main.yml"),"w") as f:
    f.write("---\n"+task*(50*1024*1024//len(task)+1))
PY
cp -r $crate/test-repos/hostile/huge-file $t/huge8
python3 - "$t" <<'PY'
import sys,os
t=sys.argv[1]
p=os.path.join(t,"huge8/roles/huge/tasks"); os.makedirs(p,exist_ok=True)
out=["---\n"]; n=4; i=0
while True:
    s=f"- name: Forward on eth{i}\n  ansible.posix.sysctl:\n    name: net.ipv4.conf.eth{i}.forwarding\n    value: '1'\n    sysctl_file: /etc/sysctl.d/99-k8s.conf\n  when: enable_{i} | default(true)\n"
    if n+len(s)>8*1024*1024: break
    out.append(s); n+=len(s); i+=1
open(os.path.join(p,"main.yml"),"w").write("".join(out))
PY
max=0; total=0; runs=0
for tree in $crate/test-repos/hostile/*/ $t/huge50/ $t/huge8/; do
  for cmd in tasks who-fixes check; do
    /usr/bin/time -f "%M %e" -o $t/time $b $cmd --format json $tree > /dev/null 2>&1
    read kb s < <(tail -1 $t/time)
    runs=$((runs+1)); total=$(python3 -c "print($total+$s)")
    [ $kb -gt $max ] && max=$kb && maxat="$cmd $(basename $tree)"
    printf "%-28s %-10s %8.1f MB %6.2f s\n" "$(basename $tree)" $cmd $(python3 -c "print($kb/1024)") $s
  done
done
echo "runs: $runs  total wall: ${total} s  peak: $(python3 -c "print(round($max/1024,1))") MB ($maxat)"
rm -rf $t
