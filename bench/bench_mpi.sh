#!/bin/sh
# bench_mpi.sh -- fuzz campaigns: cases/s for 1, 2 and 4 workers (MPI
# ranks under mpirun when lncsim is built --with-mpi, else --jobs), 4-core
# small generated programs, no database; then the coordinator alone: the
# workers answer at once (--null-cases), every result logged into a
# database, results/s and the coordinator's CPU per result. Goal: the
# coordinator takes >= 5000 results/s.
# usage: bench_mpi.sh [LNCSIM] [MPIRUN] [MPI_IMPL] [COUNT] [NULL_COUNT]
# (MPI_IMPL: openmpi, or mpich for hydra's mpiexec)
lncsim=${1:-./lncsim}
mpirun=${2:-}
impl=${3:-openmpi}
count=${4:-240}
nulls=${5:-50000}
# hydra runs more ranks than cores without being told
over=--oversubscribe
np=-np
if [ "$impl" = mpich ]; then
	over=
	np=-n
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lncsim-bench-mpi-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ "$(id -u)" = 0 ]; then
	OMPI_ALLOW_RUN_AS_ROOT=1
	OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
echo "online CPUs: $(getconf _NPROCESSORS_ONLN)"
# run N ARGS...: one campaign on N workers
run() {
	n=$1
	shift
	if [ -n "$mpirun" ]; then
		"$mpirun" $over $np "$n" "$lncsim" fuzz "$@"
	else
		"$lncsim" fuzz --jobs "$n" "$@"
	fi
}
if [ -n "$mpirun" ]; then
	echo "MPI ranks ($mpirun $over $np N; each rank runs one case at a time)"
else
	echo "built without MPI: --jobs N case servers on this host"
fi
for n in 1 2 4; do
	echo "-- $n worker(s): lncsim fuzz --no-db -q --count $count --cores 4"
	run "$n" --no-db -q --count "$count" --cores 4 || exit 1
done
for n in 1 2 4; do
	rm -f "$tmp"/null.db*
	echo "-- $n worker(s), the coordinator alone: --null-cases --count $nulls --db (logged)"
	run "$n" --db "$tmp/null.db" --campaign null -q --null-cases \
		--count "$nulls" || exit 1
done
