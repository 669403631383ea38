#!/usr/bin/env bash
# move_mount.sh: seed B2's second measurement, through the mount. A
# simulated task owns 1 GiB of anon memory; `echo PID > B/tasks` moves it
# between two groups with move_charge_at_immigrate=1, five times (A to B,
# B to A, ...), each timed around the shell's own write. Prints
#   move.mount_ms.1g MEDIAN ms      (the seed's kernel: 810 ms; goal <= 10)
# and checks that every move really carried the 1 GiB.
# Needs root and /dev/fuse. Usage: bench/move_mount.sh BUILD_DIR
set -eu
build=${1:-build}
mnt=$(mktemp -d /tmp/memcgfs-bench.XXXXXX)
"$build/memcgfs" -o memory=4G "$mnt"
pid=
cleanup() {
	{ [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; } || true   # (wait says 143: set -e)
	fusermount3 -u "$mnt"
	rmdir "$mnt"
}
trap cleanup EXIT
mkdir "$mnt/A" "$mnt/B"
echo 1 > "$mnt/A/memory.move_charge_at_immigrate"
echo 1 > "$mnt/B/memory.move_charge_at_immigrate"
"$build/memcgctl" sim -m "$mnt" -g /A -e 'alloc anon heap 1G' -e 'touch heap seq write' \
	-e 'sleep 600s' &
pid=$!
gib=$((1 << 30))
until [ "$(grep '^rss ' "$mnt/A/memory.stat" | cut -d' ' -f2)" -ge "$gib" ]; do sleep 0.05; done
times=()
from=A
to=B
for run in 1 2 3 4 5; do
	t0=$EPOCHREALTIME
	echo "$pid" > "$mnt/$to/tasks"
	t1=$EPOCHREALTIME
	moved=$(grep '^rss ' "$mnt/$to/memory.stat" | cut -d' ' -f2)
	left=$(grep '^rss ' "$mnt/$from/memory.stat" | cut -d' ' -f2)
	if [ "$moved" -lt "$gib" ] || [ "$left" -ne 0 ]; then
		echo "move_mount: run $run moved $moved bytes, left $left" >&2
		exit 1
	fi
	times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
	tmp=$from; from=$to; to=$tmp
done
median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n 3p)
printf 'move.mount_ms.1g %.3f ms\n' "$median"
