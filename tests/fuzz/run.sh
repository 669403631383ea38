#!/usr/bin/env bash
# run.sh BUILD SECONDS NAME...: run each libFuzzer harness BUILD/fuzz_NAME for
# SECONDS on a scratch copy of tests/fuzz/corpus/NAME and print its figures
# (fuzz.NAME.execs, fuzz.NAME.coverage). Owns the scratch corpora and logs
# under BUILD only: it never writes into tests/fuzz/corpus. Exits non-zero if
# any harness crashed, leaked, hung or failed an invariant (all still run).
set -uo pipefail

build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
failed=0

for name in "$@"; do
	bin=$build/fuzz_$name
	scratch=$build/corpus/$name
	log=$build/fuzz_$name.log
	rm -rf "$scratch" "$build/artifacts/$name"
	mkdir -p "$scratch" "$build/artifacts/$name"
	cp "$here/corpus/$name"/* "$scratch"/ 2>/dev/null
	# -timeout: an input that runs this long is a hang (a deadlock in
	# the engine); -max_len: room for the 4096-byte write limit and past.
	"$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -max_len=4200 \
	       -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/$name/" \
	       "$scratch" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
	echo "fuzz.$name.execs ${execs:-0} execs"
	echo "fuzz.$name.coverage ${cov:-0} edges"
	if [ "$rc" -ne 0 ] || ls "$build/artifacts/$name"/* >/dev/null 2>&1; then
		echo "fuzz.$name: FAILED (exit $rc); log $log, inputs in $build/artifacts/$name/" >&2
		grep -m 1 -A 30 'ERROR:\|fuzz_[a-z]*: \|runtime error' "$log" >&2
		failed=1
	fi
done
exit $failed
