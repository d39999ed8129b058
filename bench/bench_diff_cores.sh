#!/bin/bash
# bench_diff_cores.sh -- how `lncsim diff` grows with the number of cores:
# a generated small set at 8, 16, 32 and 64 cores (the same program size
# per core), each diffed REPS times with --no-db, the mean CPU time (user
# + system of the commands) per core count and per core, then the
# exponent of time ~ cores^x fitted over 16..64 cores (least squares on
# the logarithms). Goal: x <= 1.05 (docs/simulator.md, "Scheduler").
# usage: bash bench_diff_cores.sh [LNCSIM] [REPS] (bash: its `times` has
# millisecond resolution)
set -e
lncsim=${1:-./lncsim}
reps=${2:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lncsim-bench-cores-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cores="8 16 32 64"
for c in $cores; do
	"$lncsim" gen --cores "$c" --seed 1 -o "$dir/c$c" >/dev/null
done
# the CPU seconds of this shell's finished children (`times`, line 2),
# read in this shell (a subshell has children of its own)
mark() {
	times >"$dir/times"
	echo "$1 $(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m");
		print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$dir/times")" \
		>>"$dir/marks"
}
for c in $cores; do
	mark "$c"
	i=0
	while [ "$i" -lt "$reps" ]; do
		"$lncsim" diff --no-db -q "$dir/c$c/gen1" >/dev/null
		i=$((i + 1))
	done
	mark "$c"
done
awk '{ if ($1 in t0) { print $1, t0[$1], $2; delete t0[$1] }
       else t0[$1] = $2 }' "$dir/marks" >"$dir/rows"
awk -v reps="$reps" '
{ t = ($3 - $2) / reps; c = $1
  printf "  %2d cores: %8.1f ms CPU per diff, %6.2f ms per core\n", c,
	 1e3 * t, 1e3 * t / c
  if (c >= 16) { x = log(c); y = log(t); n++; sx += x; sy += y;
		 sxx += x * x; sxy += x * y } }
END { printf "time ~ cores^%.3f over 16..64 cores (goal <= 1.05)\n",
	  (n * sxy - sx * sy) / (n * sxx - sx * sx) }' "$dir/rows"
