#!/bin/bash
# bench_db_cli.sh -- what the run log costs whole lncsim commands, logged
# into a scratch database against --no-db: `lncsim diff` of a generated
# 4-core small set, REPS times each way, alternating (a standalone small
# command: every one opens SQLite, reads the schema and the log, probes,
# prepares its statements, commits, closes), then a `lncsim fuzz`
# campaign of COUNT cases each way (the coordinator logs in batches).
# Prints the mean wall and CPU (user + system of the commands) per
# command and the ratios logged / --no-db. Goal: <= 1.05 for fuzz-sized
# work (docs/database.md, "What logging costs"). On a loaded machine the
# CPU ratio is the one to read.
# usage: bash bench_db_cli.sh [LNCSIM] [REPS] [COUNT] (bash: its `times`
# has millisecond resolution, dash's clock ticks)
set -e
lncsim=${1:-./lncsim}
reps=${2:-40}
count=${3:-200}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lncsim-bench-dbcli-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$lncsim" gen --cores 4 --seed 1 -o "$dir/sets" >/dev/null

# the CPU seconds of this shell's finished children (`times`, line 2),
# read in this shell: a subshell has children of its own
mark() {
	times >"$dir/times"
	w=$(date +%s.%N)
	echo "$1 $w $(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m");
		print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$dir/times")" \
		>>"$dir/marks"
}

# one command, between two marks
timed() {
	tag=$1
	shift
	mark "$tag"
	"$@" >/dev/null
	mark "$tag"
}

i=0
while [ "$i" -lt "$reps" ]; do
	timed diff-nodb "$lncsim" diff --no-db -q "$dir/sets/gen1"
	timed diff-db "$lncsim" diff --db "$dir/d.db" -q "$dir/sets/gen1"
	i=$((i + 1))
done
timed fuzz-nodb "$lncsim" fuzz --no-db -q --count "$count"
timed fuzz-db "$lncsim" fuzz --db "$dir/f.db" -q --count "$count"
timed fuzz-db2 "$lncsim" fuzz --db "$dir/f.db" -q --count "$count" \
	--seed "$((count + 1))"
timed fuzz-nodb2 "$lncsim" fuzz --no-db -q --count "$count" \
	--seed "$((count + 1))"

awk -v reps="$reps" -v count="$count" '
{ if ($1 in open) { n[$1]++; wall[$1] += $2 - w0[$1];
		    cpu[$1] += $3 - c0[$1]; delete open[$1] }
  else { open[$1] = 1; w0[$1] = $2; c0[$1] = $3 } }
function row(what, a, b, k) {
	printf "  %-34s %8.1f / %8.1f ms wall  %8.1f / %8.1f ms CPU" \
	       "  ratio %.3f wall, %.3f CPU\n", what, 1e3 * wall[b] / k,
	       1e3 * wall[a] / k, 1e3 * cpu[b] / k, 1e3 * cpu[a] / k,
	       wall[b] / wall[a], cpu[b] / cpu[a]
}
END {
	print "run log cost of whole commands, logged / --no-db:"
	row(sprintf("diff, 4-core small set (x%d)", reps), "diff-nodb",
	    "diff-db", reps)
	wall["fz"] = wall["fuzz-nodb"] + wall["fuzz-nodb2"]
	cpu["fz"] = cpu["fuzz-nodb"] + cpu["fuzz-nodb2"]
	wall["fzd"] = wall["fuzz-db"] + wall["fuzz-db2"]
	cpu["fzd"] = cpu["fuzz-db"] + cpu["fuzz-db2"]
	row(sprintf("fuzz --count %d (x2)", count), "fz", "fzd", 2)
}' "$dir/marks"
