#!/usr/bin/env bash
# Build the libFuzzer harnesses of lncsim's readers with clang
# (-fsanitize=fuzzer,address,undefined) and run each for a bounded time.
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]
# Harnesses: module (BIR JSON), npy, klr, affine (the quasi-affine
# expressions). Seeds come from examples/ and tests/fixtures/; crashes
# are left in the work directory it prints.
# Exit 0 when no harness found a problem. Not part of `make check`.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
shift || true
harnesses=${*:-module npy klr affine}
CC=${CLANG:-clang}
work=$(mktemp -d "${TMPDIR:-/tmp}/lncsim-fuzz.XXXXXX")
echo "work directory: $work"

cflags="-g -O1 -DLNCSIM_LIBFUZZER -I$top/tests/fuzz -ffp-contract=off -fsanitize=fuzzer-no-link,address,undefined
	-fno-sanitize-recover=undefined -I$top/model -I$top/linker
	-I$top/linker/provision
	$(pkg-config --cflags libcjson)"
libs="$(pkg-config --libs libcjson) -lpthread -lm"

# the libraries the readers need, built once
objs=()
for src in "$top"/model/*.c "$top"/linker/*.c "$top"/linker/provision/*.c; do
	o="$work/$(basename "$(dirname "$src")")_$(basename "${src%.c}").o"
	$CC $cflags -c "$src" -o "$o"
	objs+=("$o")
done

status=0
for h in $harnesses; do
	corpus="$work/corpus-$h"
	mkdir -p "$corpus"
	case $h in
	module) find "$top/examples" "$top/tests/fixtures" -name '*.json' \
			-size -512k -exec cp -t "$corpus" {} + 2>/dev/null || true ;;
	npy) find "$top/examples" "$top/tests/fixtures" -name '*.npy' \
			-size -512k -exec cp -t "$corpus" {} + 2>/dev/null || true ;;
	klr) # seeds: the .klr fixtures (older schema generations) and the
		# KLR JSON fixtures packed by a built lncsim
		cp -t "$corpus" "$top"/tests/fixtures/klr/*.klr
		lncsim=${LNCSIM:-$top/lncsim}
		if [ -x "$lncsim" ]; then
			for j in "$top"/tests/fixtures/klr/*.json; do
				"$lncsim" klr pack -o "$corpus/$(basename "${j%.json}").klr" \
					"$j" 2>/dev/null || true
			done
		fi ;;
	affine) cp -t "$corpus" "$top"/tests/fixtures/affine/*.json ;;
	*) echo "unknown harness '$h'" >&2; exit 2 ;;
	esac
	$CC $cflags -fsanitize=fuzzer "$top/tests/fuzz/fuzz_$h.c" "${objs[@]}" \
		$libs -o "$work/fuzz_$h"
	echo "== fuzz_$h: ${secs} s, $(ls "$corpus" | wc -l) seeds"
	if ! (cd "$work" && ASAN_OPTIONS=detect_leaks=1 \
		./"fuzz_$h" -max_total_time="$secs" -max_len=65536 \
		-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
		"$corpus" 2>"$work/fuzz_$h.log"); then
		echo "fuzz_$h found a problem: $work/fuzz_$h.log" >&2
		tail -40 "$work/fuzz_$h.log" >&2
		status=1
	else
		grep -E '^stat::number_of_executed_units|^stat::new_units_added' \
			"$work/fuzz_$h.log" | sed "s/^/  /"
	fi
done
exit $status
