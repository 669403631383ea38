#!/usr/bin/env bash
# fuse_floor.sh: memcgfs's reads against the FUSE floor (issue 14). A bare
# server (bench/fuse_floor.c: the same mount options and loop, a constant
# 20-byte file as deep as a leaf group's file) and memcgfs are read in
# turn, 20,000 preads a round, 7 rounds interleaved; prints the median
# ratio and its range, of the wall time and of the server's own CPU time
# (utime + stime of its process per operation: what the server adds,
# less shaken by a busy machine than the wall time):
#   fuse.read_over_floor.usage   pread of a leaf's memory.usage_in_bytes
#   fuse.read_over_floor.stat    pread of a leaf's memory.stat (1.3 KB)
#   fuse.open_read_close_over_floor.usage
#   fuse.cpu_over_floor.*        the same three, server CPU per operation
# and the floor itself (fuse.floor_pread_us). Needs root and /dev/fuse.
# Usage: bench/fuse_floor.sh BUILD_DIR
set -eu
build=${1:-build}
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
flo=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
"$build/memcgfs" -f "$mnt" 2>/dev/null &
spid=$!
"$build/fuse_floor" "$flo" &
fpid=$!
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || true
	fusermount3 -u "$flo" 2>/dev/null || true
	wait "$fpid" "$spid" 2>/dev/null || true
	rmdir "$mnt" "$flo" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do mountpoint -q "$flo" && mountpoint -q "$mnt" && break; sleep 0.05; done
# memcgfs's CPU is its worker's (the process started is its supervisor)
mpid=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "worker_pid" { print $2 }')
mkdir "$mnt/g"
/usr/bin/python3 - "$mnt/g" "$mpid" "$flo/g/f" "$fpid" <<'PY'
import os, statistics, sys, time

g, mpid, f, fpid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
N, ROUNDS = 20000, 7
TICK = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    s = open("/proc/%d/stat" % pid).read()
    rest = s[s.rindex(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) / TICK    # utime + stime

def preads(path, pid):
    fd = os.open(path, os.O_RDONLY)
    c, t = cpu(pid), time.perf_counter()
    for _ in range(N):
        os.pread(fd, 65536, 0)
    t, c = time.perf_counter() - t, cpu(pid) - c
    os.close(fd)
    return t / N, c / N

def orc(path, pid):
    c, t = cpu(pid), time.perf_counter()
    for _ in range(N // 4):
        fd = os.open(path, os.O_RDONLY)
        os.read(fd, 65536)
        os.close(fd)
    return (time.perf_counter() - t) / (N // 4), (cpu(pid) - c) / (N // 4)

def ratios(fn, a, b):
    wall, cpus, floor = [], [], []
    fn(a, mpid), fn(b, fpid)          # warm both
    for _ in range(ROUNDS):
        x, y = fn(a, mpid), fn(b, fpid)
        wall.append(x[0] / y[0])
        cpus.append(x[1] / y[1] if y[1] > 0 else float("nan"))
        floor.append(y[0])
    return wall, cpus, statistics.median(floor)

def show(name, r):
    print("%s %.3f ratio (range %.3f-%.3f)" % (name, statistics.median(r), min(r), max(r)))

for what, fn, path in (("read_over_floor.usage", preads, g + "/memory.usage_in_bytes"),
                       ("read_over_floor.stat", preads, g + "/memory.stat"),
                       ("open_read_close_over_floor.usage", orc, g + "/memory.usage_in_bytes")):
    wall, cpus, fl = ratios(fn, path, f)
    show("fuse." + what, wall)
    show("fuse.cpu_over_floor." + what.split("_over_floor.")[0] + "." + what.split(".")[1], cpus)
    if what == "read_over_floor.usage":
        print("fuse.floor_pread_us %.2f us" % (fl * 1e6))
PY
