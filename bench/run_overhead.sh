#!/usr/bin/env bash
# run_overhead.sh: what memcgfs-run costs (issue 13), each figure against
# a baseline measured in the same run, the two alternated round by round
# (5 rounds; the median of the rounds' figures):
#   run.openat_ns.direct / .wrapped      openat+close of a regular file,
#                                        read-only (one supervisor round trip)
#   run.openat.ratio
#   run.openat_wronly.ratio              write-only opens, which the filter
#                                        passes in the kernel (no round trip)
#   run.mountinfo_us.direct / .wrapped   open, read and close
#                                        /proc/self/mountinfo (synthesized)
#   run.start_ms.wrapped                 memcgfs-run -- true (the namespace,
#                                        the stand-ins, two forks)
#   run.jvm_ms.direct / .wrapped         java -version, wall time (the
#   run.jvm.ratio                        JVM finds cgroup v1 inside)
#   run.jvm_group_ms.direct / .wrapped   the same in a 256M group, joined by
#   run.jvm_group.ratio                  echo $$ > tasks, or by --group
#   run.jvm.round_trips / .answered      supervisor round trips of one
#                                        java -version, and files answered
#   run.jvm.round_trip_ms                what those round trips cost it
# Needs root and /dev/fuse. Usage: bench/run_overhead.sh BUILD_DIR
set -eu
build=${1:-build}
run="$build/memcgfs-run"
loop="$build/run_openloop"
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
file=$(mktemp "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
"$build/memcgfs" "$mnt"
cleanup() {
	fusermount3 -u "$mnt"
	rmdir "$mnt"
	rm -f "$file"
}
trap cleanup EXIT
mkdir "$mnt/bench"
echo 256M > "$mnt/bench/memory.limit_in_bytes"
if [ "${BENCH_QUICK:-0}" = 1 ]; then N=${RUN_BENCH_N:-10000}; else N=${RUN_BENCH_N:-100000}; fi
. "$(dirname "$0")/stats.sh"     # med, lo, hi, fig
ms() { local t0=$EPOCHREALTIME; "$@" > /dev/null 2>&1; echo "$t0 $EPOCHREALTIME" | awk '{ printf "%.1f\n", ($2 - $1) * 1000 }'; }

declare -A val
for round in 1 2 3 4 5; do
	d=$("$loop" "$file" "$N"); w=$("$run" --mount "$mnt" -- "$loop" "$file" "$N")
	val[od]+="$d "; val[ow]+="$w "; val[or]+="$(awk -v a="$w" -v b="$d" 'BEGIN { print a / b }') "
	d=$("$loop" -w "$file" "$N"); w=$("$run" --mount "$mnt" -- "$loop" -w "$file" "$N")
	val[wr]+="$(awk -v a="$w" -v b="$d" 'BEGIN { print a / b }') "
	d=$("$loop" -r /proc/self/mountinfo $((N / 20))); w=$("$run" --mount "$mnt" -- "$loop" -r /proc/self/mountinfo $((N / 20)))
	val[md]+="$(awk -v a="$d" 'BEGIN { print a / 1000 }') "; val[mw]+="$(awk -v a="$w" 'BEGIN { print a / 1000 }') "
	val[st]+="$(ms "$run" --mount "$mnt" -- true) "
	d=$(ms java -version); w=$(ms "$run" --mount "$mnt" -- java -version)
	val[jd]+="$d "; val[jw]+="$w "; val[jr]+="$(awk -v a="$w" -v b="$d" 'BEGIN { print a / b }') "
	d=$(ms sh -c "echo \$\$ > $mnt/bench/tasks && exec java -version")
	w=$(ms "$run" --mount "$mnt" --group /bench -- java -version)
	val[gd]+="$d "; val[gw]+="$w "; val[gr]+="$(awk -v a="$w" -v b="$d" 'BEGIN { print a / b }') "
done
counts=$(MEMCGFS_RUN_COUNTS=1 "$run" --mount "$mnt" -- java -version 2>&1 | sed -n 's/^memcgfs-run: //p')
# one: the median of a value's rounds; range: and their range (.min, .max)
one() { echo "$1 $(med ${val[$2]}) $3"; }
range() { fig "$1" "$3" ${val[$2]}; }
one run.openat_ns.direct od ns
one run.openat_ns.wrapped ow ns
range run.openat.ratio or ratio
range run.openat_wronly.ratio wr ratio
one run.mountinfo_us.direct md us
one run.mountinfo_us.wrapped mw us
range run.start_ms.wrapped st ms
one run.jvm_ms.direct jd ms
one run.jvm_ms.wrapped jw ms
range run.jvm.ratio jr ratio
one run.jvm_group_ms.direct gd ms
one run.jvm_group_ms.wrapped gw ms
range run.jvm_group.ratio gr ratio
echo "run.jvm.round_trips $(echo "$counts" | awk '{ print $1 }') calls"
echo "run.jvm.answered $(echo "$counts" | awk '{ print $3 }') files"
# what the round trips themselves cost a JVM start-up (the case for an
# LD_PRELOAD fast path): round trips x (wrapped - direct openat)
od=$(med ${val[od]})
ow=$(med ${val[ow]})
echo "run.jvm.round_trip_ms $(echo "$counts" | awk -v d="$od" -v w="$ow" '{ printf "%.2f", $1 * (w - d) / 1e6 }') ms"
