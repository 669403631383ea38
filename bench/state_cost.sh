#!/usr/bin/env bash
# state_cost.sh: what the state file (-o state=PATH, docs/reliability.md)
# costs a memory.limit_in_bytes write. For each tree size (GROUPS groups
# under the root), 1,000 write(2)s of one leaf's limit (alternating two
# values, one open file) with -o nostate and with a state file in
# STATE_DIR (default /var/tmp: the disk /var/lib/memcgfs is on), 3 rounds;
# prints the median microseconds per write:
#   state.limit_write_us.nostate.GROUPS   state.limit_write_us.state.GROUPS
# and the state file's size (state.file_bytes.GROUPS). Needs root and
# /dev/fuse. Run by hand. Usage: bench/state_cost.sh BUILD_DIR [GROUPS...]
set -eu
build=${1:-build}
shift || true
sizes=${*:-1 100 1000}
dir=$(mktemp -d "${STATE_DIR:-/var/tmp}/memcgfs-bench.XXXXXX")
mnt=$dir/mnt
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
mkdir "$mnt"
for n in $sizes; do
	for mode in nostate state; do
		opt=nostate
		[ "$mode" = state ] && opt="state=$dir/state,fresh"
		"$build/memcgfs" -o "$opt" "$mnt"
		for i in $(seq "$n"); do mkdir "$mnt/g$i"; done
		us=$(/usr/bin/python3 - "$mnt/g1/memory.limit_in_bytes" <<'PY'
import os, statistics, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
rounds = []
for _ in range(3):
    t = time.perf_counter()
    for i in range(1000):
        os.write(fd, b'%d\n' % ((100 + (i & 1)) << 20))
    rounds.append((time.perf_counter() - t) / 1000 * 1e6)
print('%.0f' % statistics.median(rounds))
PY
)
		echo "state.limit_write_us.$mode.$n $us"
		[ "$mode" = state ] && echo "state.file_bytes.$n $(stat -c %s "$dir/state")"
		fusermount3 -u "$mnt"
		# the daemon writes its final state after the unmount: the next
		# one on the same file waits for its lock
		for _ in $(seq 200); do
			[ "$mode" = nostate ] || flock -n "$dir/state.lock" true && break
			sleep 0.05
		done
	done
done
