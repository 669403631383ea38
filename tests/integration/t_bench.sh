# t_bench.sh: `make bench`'s driver (bench/run.sh) leaves no mount and no
# process behind: when it is interrupted while a benchmark holds a mount,
# when a benchmark fails, and when a benchmark is killed before its own
# cleanup could run. Runs the real mount scripts against build directories
# of links: in "slow", memcgctl is a script that never ends (so that the
# mount stays up until the test acts), in "bad" one that fails at once; the
# driver gets scratch and output directories of its own.
# Then the pipeline itself: a step that prints a line that is not a figure
# fails (nothing is dropped unseen); the report computes its verdicts from
# the figures (a miss inside the run's range is noise, outside it a
# regression; an explanation that does not hold on the figures is none; a
# share of nothing is "not applicable"); and, in the plain pass, the quick
# bench (BENCH_QUICK=1) from a clean build directory produces every
# figure the report's goals name. (Under the sanitizers that last part is
# not run: it builds and times its own plain tree, the same in every pass.)
. "$(dirname "$0")/lib.sh"
RUN="$(dirname "$0")/../../bench/run.sh"
fake=$(mktemp -d /tmp/memcgfs-t-bench.XXXXXX)
mkdir "$fake/tmp" "$fake/bad" "$fake/slow"
ln -s "$MEMCGFS_BUILD/memcgfs" "$fake/bad/memcgfs"
ln -s "$MEMCGFS_BUILD/memcgfs" "$fake/slow/memcgfs"
printf '#!/bin/sh\nexit 3\n' > "$fake/bad/memcgctl"
printf '#!/bin/sh\nwhile :; do sleep 0.1; done\n' > "$fake/slow/memcgctl"
chmod +x "$fake/bad/memcgctl" "$fake/slow/memcgctl"
export MEMCGFS_BENCH_TMPDIR=$fake/tmp MEMCGFS_BENCH_OUT=$fake/out

mounts() { awk -v d="$fake/" 'index($2, d) == 1' /proc/self/mounts | wc -l; }
# the daemon (run by its link) and the scripts standing in for memcgctl
procs() { pgrep -f "$fake/" | wc -l; }
# a daemon exits just after its unmount: give it a moment
no_procs() { [ "$(procs)" -eq 0 ]; }
gone() { wait_until 5 no_procs; procs; }
# the bench's mount is up and its simulated task has started
mounted() { [ "$(mounts)" -gt 0 ] && pgrep -f "$fake/slow/memcgctl sim" > /dev/null; }

# 1. interrupted (SIGINT, as ^C) while move_mount.sh holds its mount (a
# background job of a script starts with SIGINT ignored: perl restores it)
perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$RUN" "$fake/slow" move_mount > /dev/null 2>&1 &
run=$!
wait_until 20 mounted && ok || bad "move_mount never mounted"
kill -INT "$run"
wait "$run"
expect "interrupted: exit status" "$?" "130"
expect "interrupted: no mount left" "$(mounts)" "0"
expect "interrupted: no process left" "$(gone)" "0"

# 2. a benchmark that fails after mounting (its memcgctl fails)
"$RUN" "$fake/bad" sim_throughput > /dev/null 2>&1
expect "failed step: exit status" "$?" "1"
expect "failed step: no mount left" "$(mounts)" "0"
expect "failed step: no process left" "$(gone)" "0"
grep -q "^sim_throughput	[1-9]" "$fake/out/steps.tsv" && ok || bad "failure not recorded in steps.tsv"
[ -s "$fake/out/report.md" ] && ok || bad "no report after a failed step"

# 3. a benchmark killed (SIGKILL) before its own trap could run: the
# driver ends its children and unmounts for it, then goes on
"$RUN" "$fake/slow" move_mount > /dev/null 2>&1 &
run=$!
wait_until 20 mounted && ok || bad "move_mount never mounted (2)"
# the script: the child of the step's timeout, the driver's child
step=$(pgrep -P "$(pgrep -P "$run" -x timeout)")
[ -n "$step" ] && kill -KILL "$step"
wait "$run"
expect "killed step: exit status" "$?" "1"
expect "killed step: no mount left" "$(mounts)" "0"
expect "killed step: no process left" "$(gone)" "0"
expect "scratch directory removed" "$(ls "$fake/tmp" | wc -l)" "0"

# 4. a step that prints a figure with its range in parentheses (the old
# shape of fuse_floor.sh's and scale.sh's lines) or a NaN fails, and the
# line does not reach results.tsv
mkdir "$fake/fmt"
printf '#!/bin/sh\necho "b4.kept 1 pages"\necho "fuse.x 1.02 ratio (range 0.9-1.1)"\necho "b4.y nan ratio"\n' \
	> "$fake/fmt/bench_scan"
chmod +x "$fake/fmt/bench_scan"
"$RUN" "$fake/fmt" scan > /dev/null 2> "$fake/fmt.err"
expect "unparsable line: exit status" "$?" "1"
grep -q "^scan	3	" "$fake/out/steps.tsv" && ok || bad "unparsable line: step not failed: $(cat "$fake/out/steps.tsv")"
grep -q 'fuse.x 1.02 ratio (range' "$fake/fmt.err" && ok || bad "unparsable line not named: $(cat "$fake/fmt.err")"
expect "unparsable lines kept out of results" "$(cut -f1 "$fake/out/results.tsv" | grep -c '^fuse.x\|^b4.y')" "0"
expect "the figure beside them kept" "$(grep -c '^b4.kept	1	pages$' "$fake/out/results.tsv")" "1"

# 5. the report's verdicts, from crafted figures
REPORT="$(dirname "$0")/../../bench/report.py"
verdict() {   # verdict FIGURE: its status in goals.tsv
	awk -F'\t' -v f="$1" '$1 == f { print $2 }' "$fake/rep/goals.tsv"
}
mkdir -p "$fake/rep"
{
	printf 'bench.quick\t0\tbool\n'
	# below the goal (0.85) in every repetition: a regression
	printf 'engine.accounting_keeps\t0.70\tratio\nengine.accounting_keeps.min\t0.60\tratio\n'
	printf 'engine.accounting_keeps.max\t0.80\tratio\n'
	# below the goal (2) at the median, above it in one repetition: noise
	printf 'engine.stock_speedup.t2\t1.9\tratio\nengine.stock_speedup.t2.min\t1.5\tratio\n'
	printf 'engine.stock_speedup.t2.max\t2.1\tratio\n'
	# (f)/(c) missed while (f) is no faster than (a) and a/c < 1.86: explained
	printf 'b3.speedup.f_over_c.t2\t1.30\tratio\nb3.speedup.f_over_c.t2.min\t1.20\tratio\n'
	printf 'b3.speedup.f_over_c.t2.max\t1.40\tratio\nb3.keeps.c.t2\t0.70\tratio\n'
	printf 'b3.keeps.f.t2\t0.95\tratio\nb3.ncpus_online\t2\tcpus\n'
	# B1 missed, but the build did not wait on the disk (iowait 30 %): the
	# explanation (it waits on reads, not on reclaim) fails
	printf 'wmark.completion_ratio.j32.790_760_throttle\t1.10\tratio\n'
	printf 'wmark.iowait_pct.j32.nowmark\t30\t%%\nwmark.swapout_mb_per_s.j32.nowmark\t2\tMB/s\n'
	printf 'wmark.reclaim_cpu_ms.j32.nowmark\t100\tms\nwmark.completion_ms.j32.nowmark\t300000\tms\n'
	printf 'wmark.nap_pct.j32.nowmark\t1\t%%\nwmark.swapin_mb_per_s.j32.nowmark\t0\tMB/s\n'
	printf 'wmark.read_mb_per_s.j32.nowmark\t0.5\tMB/s\n'
	printf 'wmark.disk_reads.j32.nowmark\t5000\treads\nwmark.disk_reads.j32.790_760_throttle\t4000\treads\n'
	# (c) listed nothing: not applicable, whatever rescued_pct would say
	printf 'b4.c.listed\t0\tpages\n'
} > "$fake/rep/results.tsv"
python3 "$REPORT" "$fake/rep" /nonexistent 2> /dev/null
expect "report: every repetition missed" "$(verdict engine.accounting_keeps)" "regression"
expect "report: some repetition met" "$(verdict engine.stock_speedup.t2)" "missed, within noise"
expect "report: an explanation that holds" "$(verdict b3.speedup.f_over_c.t2)" "missed, explained"
expect "report: an explanation that does not" "$(verdict wmark.completion_ratio.j32.790_760_throttle)" "regression"
expect "report: nothing listed" "$(verdict b4.rescued_pct)" "not applicable"
expect "report: a missing figure" "$(verdict engine.bytes_per_page)" "not measured"
grep -q 'iowait 30' "$fake/rep/report.md" && bad "report: a failed explanation printed" || ok
printf 'engine.x\t1\tratio (range 1-2)\n' >> "$fake/rep/results.tsv"
python3 "$REPORT" "$fake/rep" /nonexistent 2> /dev/null
expect "report: a line that is not a figure fails it" "$?" "1"

# 6. the quick bench from a clean build directory: every figure a goal
# names is there, every step ran to its end, nothing is unparsable
if [ -z "${MEMCGFS_SANLOG:-}" ]; then
	top=$(cd "$(dirname "$0")/../.." && pwd)
	qb=$fake/quick
	BENCH_QUICK=1 MEMCGFS_BENCH_OUT=$qb/out make -s -C "$top" BUILD="$qb/build" bench \
		> "$qb.log" 2>&1
	rc=$?
	expect "quick bench: exit status" "$rc" "0"
	[ "$rc" -eq 0 ] || tail -n 20 "$qb.log" >&2
	steps=$(sed -n 's/^all_steps="\(.*\)"$/\1/p' "$top/bench/run.sh" | wc -w)
	expect "quick bench: every step ran" "$(wc -l < "$qb/out/steps.tsv")" "$steps"
	expect "quick bench: every step ended well" "$(awk -F'\t' '$2 != 0' "$qb/out/steps.tsv")" ""
	goals=$(wc -l < "$qb/out/goals.tsv")
	[ "$goals" -ge 25 ] && ok || bad "quick bench: only $goals goals in the report"
	expect "quick bench: no goal unmeasured" \
		"$(awk -F'\t' '$2 == "not measured" || $3 == "missing"' "$qb/out/goals.tsv")" ""
	expect "quick bench: no missing figure in the report" "$(grep -c 'missing' "$qb/out/report.md")" "0"
	expect "quick bench: every result a figure" \
		"$(awk -F'\t' 'NF != 3 || $2 !~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/' "$qb/out/results.tsv")" ""
	grep -q 'A quick run' "$qb/out/report.md" && ok || bad "quick bench: the report does not say it is quick"
	expect "quick bench: no mount left" "$(awk -v d="$qb/" 'index($2, d) == 1' /proc/self/mounts | wc -l)" "0"
	# the simulated B3's lines: a ticket lock's hand-off grows with the
	# CPUs spinning on it, an atomic's does not, a held line is free
	expect "b3sim: the lines' rules" "$("$qb/build/bench_b3sim" --selftest)" "selftest: ok"
fi

rm -rf --one-file-system "$fake"
summary
