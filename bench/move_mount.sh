#!/usr/bin/env bash
# move_mount.sh: seed B2's second measurement, through the mount. A
# simulated task owns 1 GiB of anon memory; `echo PID > B/tasks` moves it
# between two groups with move_charge_at_immigrate=1, five times (A to B,
# B to A, ...), each timed around the shell's own write; between them, the
# same write for a second simulated task that owns nothing (the baseline:
# the write's own round trip), alternately. Prints
#   move.mount_ms.1g MEDIAN ms       (the seed's kernel: 810 ms; goal <= 10)
#   move.mount_ms.1g.min / .max
#   move.mount_ms.empty MEDIAN ms    the baseline
#   move.mount_over_empty MEDIAN ratio (and .min, .max: per pair)
# and checks that every move really carried the 1 GiB. Mounts under
# $MEMCGFS_BENCH_TMP or /tmp; unmounts on every exit, interruptions too.
# Needs root and /dev/fuse. Usage: bench/move_mount.sh BUILD_DIR
set -eu
build=${1:-build}
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
pids=()
mounted=
cleanup() {
	trap '' INT TERM HUP
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done   # (143: not an error)
	[ -n "$mounted" ] && { fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true; }
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
"$build/memcgfs" -o memory=4G "$mnt"
mounted=1
mkdir "$mnt/A" "$mnt/B" "$mnt/C" "$mnt/D"
for g in A B C D; do echo 1 > "$mnt/$g/memory.move_charge_at_immigrate"; done
"$build/memcgctl" sim -m "$mnt" -g /A -e 'alloc anon heap 1G' -e 'touch heap seq write' \
	-e 'sleep 600s' &
pid=$!
pids+=("$pid")
"$build/memcgctl" sim -m "$mnt" -g /C -e 'sleep 600s' &
empty=$!
pids+=("$empty")
gib=$((1 << 30))
. "$(dirname "$0")/stats.sh"     # wait_until; med, lo, hi of the rounds
charged() { [ "$(grep '^rss ' "$mnt/A/memory.stat" | cut -d' ' -f2)" -ge "$gib" ]; }
wait_until 120 "the 1 GiB charge of the task in $mnt/A" charged || exit 1
wait_until 30 "the empty task $empty in $mnt/C/tasks" grep -qx "$empty" "$mnt/C/tasks" || exit 1
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) * 1000 }'; }
times=() base=() ratio=()
from=A to=B efrom=C eto=D
for run in 1 2 3 4 5; do
	t0=$EPOCHREALTIME
	echo "$empty" > "$mnt/$eto/tasks"
	t1=$EPOCHREALTIME
	echo "$pid" > "$mnt/$to/tasks"
	t2=$EPOCHREALTIME
	moved=$(grep '^rss ' "$mnt/$to/memory.stat" | cut -d' ' -f2)
	left=$(grep '^rss ' "$mnt/$from/memory.stat" | cut -d' ' -f2)
	if [ "$moved" -lt "$gib" ] || [ "$left" -ne 0 ]; then
		echo "move_mount: run $run moved $moved bytes, left $left" >&2
		exit 1
	fi
	base+=("$(ms "$t0" "$t1")")
	times+=("$(ms "$t1" "$t2")")
	ratio+=("$(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.2f", (c - b) / (b - a) }')")
	tmp=$from; from=$to; to=$tmp
	tmp=$efrom; efrom=$eto; eto=$tmp
done
fig move.mount_ms.1g ms "${times[@]}"
echo "move.mount_ms.empty $(med "${base[@]}") ms"
fig move.mount_over_empty ratio "${ratio[@]}"
