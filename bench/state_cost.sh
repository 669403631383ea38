#!/usr/bin/env bash
# state_cost.sh: what the state file (-o state=PATH, docs/reliability.md)
# costs a change. For each tree size (GROUPS groups under the root, made
# first), with -o nostate and with a state file in STATE_DIR (default
# /var/tmp: the disk /var/lib/memcgfs is on), 3 rounds of 1,000 write(2)s
# of one leaf's memory.limit_in_bytes (alternating two values, one open
# file) and 3 rounds of 200 mkdirs; prints the median microseconds of
# each:
#   state.limit_write_us.nostate.GROUPS   state.limit_write_us.state.GROUPS
#   state.mkdir_us.nostate.GROUPS         state.mkdir_us.state.GROUPS
# the bytes one limit write appends to the journal
# (state.journal_bytes_per_write.GROUPS), and the size of the snapshot a
# clean end leaves (state.file_bytes.GROUPS: GROUPS + 600 groups, the
# mkdirs included). The rounds include the compactions they cause (about
# one per 2 x the snapshot's bytes of journal), so the figures are the
# amortized cost. The mount point is under $MEMCGFS_BENCH_TMP (the run's
# directory, which bench/run.sh cleans) when set. BENCH_QUICK=1 measures
# 1 and 1,000 groups. Then, at 10,000 groups with a state file, the
# latency of each limit write (round-robin over 40 leaves, one open file
# each) over a run that includes at least 3 compactions of the journal
# (memcgctl status's state_compactions; at most 200,000 writes):
#   state.write_p99_us.g10000, state.write_p50_us.g10000,
#   state.write_max_us.g10000, state.write_compactions.g10000
# (the compaction runs in the background: issue 27). The bound before a
# compaction is the daemon's own (twice the snapshot, about 11 MB here)
# unless BENCH_QUICK=1, which sets it to 1 MiB (MEMCGFS_STATE_COMPACT_BYTES)
# so that 3 come sooner. Needs root and /dev/fuse; a step of `make bench`.
# Usage: bench/state_cost.sh BUILD_DIR [GROUPS...]
set -eu
build=${1:-build}
shift || true
if [ "${BENCH_QUICK:-0}" = 1 ]; then sizes=${*:-1 1000}; else sizes=${*:-1 1000 10000}; fi
dir=$(mktemp -d "${STATE_DIR:-/var/tmp}/memcgfs-bench.XXXXXX")
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-$dir}/memcgfs-bench-mnt.XXXXXX")
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || true
	rmdir "$mnt" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
. "$(dirname "$0")/stats.sh"     # wait_until
for n in $sizes; do
	for mode in nostate state; do
		opt=nostate
		[ "$mode" = state ] && opt="state=$dir/state,fresh"
		"$build/memcgfs" -o "$opt" "$mnt"
		sup=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "supervisor_pid" { print $2 }')
		/usr/bin/python3 - "$mnt" "$n" "$mode" "$dir/state" <<'PY'
import os, statistics, sys, time
mnt, n, mode, state = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
for i in range(1, n + 1):
    os.mkdir('%s/g%d' % (mnt, i))
fd = os.open(mnt + '/g1/memory.limit_in_bytes', os.O_WRONLY)
if mode == 'state':
    size = os.stat(state).st_size
    for i in range(10):
        os.write(fd, b'%d\n' % ((100 + (i & 1)) << 20))
    print('state.journal_bytes_per_write.%d %.0f bytes' % (n, (os.stat(state).st_size - size) / 10))
rounds = []
for _ in range(3):
    t = time.perf_counter()
    for i in range(1000):
        os.write(fd, b'%d\n' % ((100 + (i & 1)) << 20))
    rounds.append((time.perf_counter() - t) / 1000 * 1e6)
print('state.limit_write_us.%s.%d %.1f us' % (mode, n, statistics.median(rounds)))
rounds = []
for r in range(3):
    t = time.perf_counter()
    for i in range(200):
        os.mkdir('%s/g1/m%d_%d' % (mnt, r, i))
    rounds.append((time.perf_counter() - t) / 200 * 1e6)
print('state.mkdir_us.%s.%d %.1f us' % (mode, n, statistics.median(rounds)))
PY
		fusermount3 -u "$mnt"
		# the daemon writes its final state after the unmount, and the
		# next one starts once it is gone (bounded: it names what stayed)
		wait_until 30 "the exit of daemon $sup (n=$n, $mode)" sh -c "! kill -0 $sup 2>/dev/null" || exit 1
		[ "$mode" = state ] && echo "state.file_bytes.$n $(stat -c %s "$dir/state") bytes"
	done
done

# ---- the write latency at 10,000 groups, across compactions
[ "${BENCH_QUICK:-0}" = 1 ] && export MEMCGFS_STATE_COMPACT_BYTES=1048576
rm -f "$dir/state"
"$build/memcgfs" -o "state=$dir/state,fresh" "$mnt"
unset MEMCGFS_STATE_COMPACT_BYTES
sup=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "supervisor_pid" { print $2 }')
/usr/bin/python3 - "$mnt" <<'PY'
import os, sys, time
mnt = sys.argv[1]
for p in range(100):
    os.mkdir('%s/p%d' % (mnt, p))
    for c in range(99):
        os.mkdir('%s/p%d/c%d' % (mnt, p, c))

def compactions():
    for line in os.getxattr(mnt, 'user.memcgfs.status').decode().splitlines():
        k, v = line.split(' ', 1)
        if k == 'state_compactions':
            return int(v)

fds = [os.open('%s/p%d/c0/memory.limit_in_bytes' % (mnt, k), os.O_WRONLY) for k in range(40)]
c0, lat, i = compactions(), [], 0
while i < 200000 and (i % 1000 or compactions() - c0 < 3):
    t = time.perf_counter()
    os.write(fds[i % 40], b'%d\n' % ((100 + (i & 7)) << 20))
    lat.append(time.perf_counter() - t)
    i += 1
lat.sort()
print('state.write_compactions.g10000 %d compactions' % (compactions() - c0))
print('state.write_p50_us.g10000 %.1f us' % (lat[len(lat) // 2] * 1e6))
print('state.write_p99_us.g10000 %.1f us' % (lat[int(len(lat) * 0.99)] * 1e6))
print('state.write_max_us.g10000 %.1f us' % (lat[-1] * 1e6))
PY
fusermount3 -u "$mnt"
wait_until 30 "the exit of daemon $sup (10,000 groups)" sh -c "! kill -0 $sup 2>/dev/null" || exit 1
