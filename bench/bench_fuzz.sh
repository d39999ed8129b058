#!/bin/sh
# bench_fuzz.sh -- lncsim fuzz throughput: cases/s for 4-core small
# generated programs (~50 instructions per core) with the default jobs
# (one per CPU). Goal: >= 50 cases/s on a 2-core machine.
# usage: bench_fuzz.sh [LNCSIM] [COUNT]
lncsim=${1:-./lncsim}
count=${2:-200}
tmp=${TMPDIR:-/tmp}
echo "lncsim fuzz --no-db -q --count $count --cores 4 (jobs = online CPUs)"
"$lncsim" fuzz --no-db -q --count "$count" --cores 4 || exit 1
echo "single job:"
"$lncsim" fuzz --no-db -q --count "$((count / 2))" --cores 4 --jobs 1 || exit 1
