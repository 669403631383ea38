#!/usr/bin/env bash
# run.sh: `make bench`. Runs every benchmark step to its end, each in its
# own process group under a time limit, and collects their figures into
# BUILD/bench/results.tsv, then writes BUILD/bench/report.md and its PNG
# plots (bench/report.py, gnuplot). A step prints one figure per line, in
# exactly three fields, "name value unit", the value a finite number (a
# range is two more figures, NAME.min and NAME.max); a line of any other
# shape fails its step, naming the line, so no figure is dropped unseen. Owns the run's scratch directory: every mount
# a step makes is under it, and whatever a step leaves there (a mount, a
# process) is removed here, on success, failure or interruption. Never
# touches a mount or a process outside its own run.
# Usage: bench/run.sh BUILD_DIR [STEP...]   (default: every step)
# Environment: MEMCGFS_BENCH_OUT (default BUILD_DIR/bench) for the results,
# MEMCGFS_BENCH_TMPDIR (default /tmp) for the run's scratch directory,
# BENCH_QUICK=1 for the quick run (smaller sizes and fewer rounds, every
# figure still printed: what tests/integration/t_bench.sh runs; its
# figures are not the benchmark's, and the report says so).
# Exit: 0 when every step ran to its end (goals met or not), 1 when a step
# failed, 128+N when interrupted by signal N.
set -u
build=${1:-build}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
out=${MEMCGFS_BENCH_OUT:-$build/bench}
mkdir -p "$out"
# every step and its time limit (seconds); a step is a program or script
# of bench/ given the build directory
all_steps="engine charge b3sim sim_throughput move b2model move_mount wmark scan nodes run_overhead state scale mirror fuse"
steps=${*:-$all_steps}
declare -A limit=([engine]=120 [charge]=240 [b3sim]=120 [sim_throughput]=120 [move]=120 [b2model]=120 [move_mount]=120
		  [wmark]=300 [scan]=120 [nodes]=240 [run_overhead]=300 [state]=300
		  [scale]=1200 [mirror]=400 [fuse]=300)
quick=${BENCH_QUICK:-0}
export BENCH_QUICK=$quick
qflag=
[ "$quick" = 1 ] && qflag=--quick

run_tmp=$(mktemp -d "${MEMCGFS_BENCH_TMPDIR:-/tmp}/memcgfs-bench-run.XXXXXX")
export MEMCGFS_BENCH_TMP=$run_tmp       # the scripts mount under it
mkdir "$run_tmp/state"
export STATE_DIRECTORY=$run_tmp/state   # and their daemons' state files go with it
step_pgid=

# End what is left of a step: every process of its group (a script killed
# before its own trap ran leaves its children there), then whatever is
# still mounted under the run's directory, the deepest first.
reap_step() {
	local m
	if [ -n "$step_pgid" ]; then
		kill -TERM -- "-$step_pgid" 2>/dev/null && sleep 0.2
		kill -KILL -- "-$step_pgid" 2>/dev/null
		step_pgid=
	fi
	for m in $(awk -v d="$run_tmp/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r); do
		echo "bench: unmounting $m, left behind" >&2
		fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
}
cleanup() {
	trap '' INT TERM HUP
	reap_step
	rm -rf --one-file-system "$run_tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

command_of() {
	case $1 in
	engine) echo "$build/bench_engine $qflag" ;;
	charge) echo "$build/bench_charge $qflag" ;;
	b3sim) echo "$build/bench_b3sim $qflag" ;;
	move) echo "$build/bench_move" ;;
	b2model) echo "$build/bench_b2model" ;;
	wmark) echo "$build/bench_wmark" ;;
	scan) echo "$build/bench_scan" ;;
	nodes) echo "$build/bench_nodes" ;;
	sim_throughput) echo "$here/sim_throughput.sh $build" ;;
	move_mount) echo "$here/move_mount.sh $build" ;;
	run_overhead) echo "$here/run_overhead.sh $build" ;;
	state) echo "$here/state_cost.sh $build" ;;
	scale) echo "$here/scale.sh $build" ;;
	mirror) echo "$here/mirror_idle.sh $build" ;;
	fuse) echo "$here/fuse_floor.sh $build" ;;
	*) return 1 ;;
	esac
}

# one figure: a name, a finite number, a unit (no "nan", no "(range ...)")
figure_re='^[A-Za-z0-9_.%-]+ -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)? [^ ]+$'
# the lines of a step's output that are not one figure each
unparsable() { grep -nvE "$figure_re" "$1"; }

results=$out/results.tsv
printf 'bench.quick\t%s\tbool\n' "$quick" > "$results.part"
: > "$out/steps.tsv"
failed=0
for s in $steps; do
	cmd=$(command_of "$s") || { echo "bench: no step $s" >&2; failed=1; continue; }
	log=$out/$s.log
	t0=$(date +%s.%N)
	echo "== $s" >&2
	# its own process group (setsid), so that an interruption here can end
	# every process of the step; the time limit ends a step that hangs
	setsid timeout --kill-after=10 "${limit[$s]:-300}" $cmd > "$log.out" 2> "$log" &
	step_pgid=$!
	wait "$step_pgid"
	rc=$?
	reap_step
	t1=$(date +%s.%N)
	cat "$log.out"
	if bad=$(unparsable "$log.out"); then
		echo "bench: step $s printed lines that are not figures (name value unit):" >&2
		echo "$bad" | head -n 5 >&2
		[ "$rc" -ne 0 ] || rc=3
	fi
	grep -E "$figure_re" "$log.out" | tr ' ' '\t' >> "$results.part"
	cat "$log.out" >> "$log"
	rm -f "$log.out"
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	printf '%s\t%d\t%s\n' "$s" "$rc" "$secs" >> "$out/steps.tsv"
	printf 'bench.step_s.%s\t%s\ts\n' "$s" "$secs" >> "$results.part"
	if [ "$rc" -ne 0 ]; then
		echo "bench: step $s failed (exit $rc), its log: $log" >&2
		tail -n 5 "$log" >&2
		failed=1
	fi
done
# the whole run's time, a figure like the others
total=$(awk -F'\t' '$1 ~ /^bench\.step_s\./ { t += $2 } END { printf "%.0f", t }' "$results.part")
printf 'bench.total_s\t%s\ts\n' "$total" >> "$results.part"
mv "$results.part" "$results"
python3 "$here/report.py" "$out" || failed=1
exit "$failed"
