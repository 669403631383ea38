#!/usr/bin/env bash
# fuse_floor.sh: memcgfs's reads against the FUSE floor (issue 14). A bare
# server (bench/fuse_floor.c: the same mount options and loop, a constant
# 20-byte file) and memcgfs are read in turn, 20,000 preads a round, 7
# rounds interleaved; prints the median ratio and its range:
#   fuse.read_over_floor.usage   pread of a leaf's memory.usage_in_bytes
#   fuse.read_over_floor.stat    pread of a leaf's memory.stat (1.3 KB)
#   fuse.open_read_close_over_floor.usage
# and the floor itself (fuse.floor_pread_us). Needs root and /dev/fuse.
# Usage: bench/fuse_floor.sh BUILD_DIR
set -eu
build=${1:-build}
mnt=$(mktemp -d /tmp/memcgfs-bench.XXXXXX)
flo=$(mktemp -d /tmp/memcgfs-bench.XXXXXX)
"$build/memcgfs" "$mnt"
"$build/fuse_floor" "$flo" &
fpid=$!
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || true
	fusermount3 -u "$flo" 2>/dev/null || true
	wait "$fpid" 2>/dev/null || true
	rmdir "$mnt" "$flo" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do mountpoint -q "$flo" && break; sleep 0.05; done
mkdir "$mnt/g"
/usr/bin/python3 - "$mnt/g" "$flo/f" <<'PY'
import os, statistics, sys, time

g, f = sys.argv[1], sys.argv[2]
N, ROUNDS = 20000, 7

def preads(path):
    fd = os.open(path, os.O_RDONLY)
    t = time.perf_counter()
    for _ in range(N):
        os.pread(fd, 65536, 0)
    t = time.perf_counter() - t
    os.close(fd)
    return t / N

def orc(path):
    t = time.perf_counter()
    for _ in range(N // 4):
        fd = os.open(path, os.O_RDONLY)
        os.read(fd, 65536)
        os.close(fd)
    return (time.perf_counter() - t) / (N // 4)

def ratio(fn, a, b):
    r, floor = [], []
    fn(a), fn(b)                      # warm both
    for _ in range(ROUNDS):
        x, y = fn(a), fn(b)
        r.append(x / y)
        floor.append(y)
    return statistics.median(r), min(r), max(r), statistics.median(floor)

for name, fn, path in (("fuse.read_over_floor.usage", preads, g + "/memory.usage_in_bytes"),
                       ("fuse.read_over_floor.stat", preads, g + "/memory.stat"),
                       ("fuse.open_read_close_over_floor.usage", orc, g + "/memory.usage_in_bytes")):
    med, lo, hi, fl = ratio(fn, path, f)
    print("%s %.3f ratio (range %.3f-%.3f)" % (name, med, lo, hi))
    if name.endswith("usage") and fn is preads:
        print("fuse.floor_pread_us %.2f us" % (fl * 1e6))
PY
