#!/bin/sh
# bench_fuzz.sh -- lncsim fuzz throughput: cases/s for 4-core small
# generated programs (~50 instructions per core) with the default jobs
# (one per CPU). Goal: >= 50 cases/s on a 2-core machine. Then the
# throughput with --race against without it on the same seeds.
# usage: bench_fuzz.sh [LNCSIM] [COUNT]
lncsim=${1:-./lncsim}
count=${2:-200}
tmp=${TMPDIR:-/tmp}
echo "lncsim fuzz --no-db -q --count $count --cores 4 (jobs = online CPUs)"
"$lncsim" fuzz --no-db -q --count "$count" --cores 4 || exit 1
echo "single job:"
"$lncsim" fuzz --no-db -q --count "$((count / 2))" --cores 4 --jobs 1 || exit 1
# The race detector's cost: the same seeds with and without --race, one
# job each, run one after the other. Goal: ratio >= 0.4.
rate() { sed -n 's/.*(\([0-9.]*\) cases\/s.*/\1/p' | tail -n 1; }
n=$((count / 2))
echo "--race: lncsim fuzz --no-db -q --count $n --cores 4 --jobs 1 --seed 1, without and with --race"
plain=$("$lncsim" fuzz --no-db -q --count "$n" --cores 4 --jobs 1 --seed 1 | rate) || exit 1
race=$("$lncsim" fuzz --no-db -q --count "$n" --cores 4 --jobs 1 --seed 1 --race | rate) || exit 1
echo "without: $plain cases/s, with --race: $race cases/s"
awk -v a="$plain" -v b="$race" 'BEGIN { if (a > 0) printf "race/plain throughput ratio: %.2f (goal >= 0.4)\n", b / a }'
