#!/usr/bin/env bash
# fuse_floor.sh: memcgfs's reads against the FUSE floor (issue 14). A bare
# server (bench/fuse_floor.c: the same mount options and loop, a constant
# 20-byte file as deep as a leaf group's file) and memcgfs are read in
# turn, 20,000 preads a round (2,000 with BENCH_QUICK=1), 7 rounds
# interleaved; prints the median ratio (and its range as NAME.min and
# NAME.max), of the wall time and of the server's own CPU time per
# operation (what the server adds, less shaken by a busy machine than the
# wall time), read in nanoseconds from /proc/PID/task/*/schedstat; a
# round whose server changed threads during it is read from utime + stime
# instead (a thread that ended takes its schedstat with it):
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
. "$(dirname "$0")/stats.sh"
both_mounted() { mountpoint -q "$flo" && mountpoint -q "$mnt"; }
wait_until 30 "the two mounts ($mnt, $flo)" both_mounted || exit 1
# memcgfs's CPU is its worker's (the process started is its supervisor)
mpid=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "worker_pid" { print $2 }')
mkdir "$mnt/g"
/usr/bin/python3 - "$mnt/g" "$mpid" "$flo/g/f" "$fpid" <<'PY'
import os, statistics, sys, time

g, mpid, f, fpid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
N, ROUNDS = (2000 if os.environ.get("BENCH_QUICK") == "1" else 20000), 7
TICK = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    """(seconds from schedstat, its thread ids, seconds from utime+stime)"""
    ns, tids = 0, []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                ns += int(f.read().split()[0])
            tids.append(t)
        except OSError:
            pass
    s = open("/proc/%d/stat" % pid).read()
    rest = s[s.rindex(")") + 2:].split()
    return ns / 1e9, sorted(tids), (int(rest[11]) + int(rest[12])) / TICK

def used(a, b):
    if a[1] == b[1]:
        return b[0] - a[0]
    return b[2] - a[2]

def preads(path, pid):
    fd = os.open(path, os.O_RDONLY)
    c, t = cpu(pid), time.perf_counter()
    for _ in range(N):
        os.pread(fd, 65536, 0)
    t, c = time.perf_counter() - t, used(c, cpu(pid))
    os.close(fd)
    return t / N, c / N

def orc(path, pid):
    c, t = cpu(pid), time.perf_counter()
    for _ in range(N // 4):
        fd = os.open(path, os.O_RDONLY)
        os.read(fd, 65536)
        os.close(fd)
    return (time.perf_counter() - t) / (N // 4), used(c, cpu(pid)) / (N // 4)

def ratios(fn, a, b):
    wall, cpus, floor = [], [], []
    fn(a, mpid), fn(b, fpid)          # warm both
    for _ in range(ROUNDS):
        x, y = fn(a, mpid), fn(b, fpid)
        wall.append(x[0] / y[0])
        if y[1] > 0:
            cpus.append(x[1] / y[1])
        floor.append(y[0])
    return wall, cpus, statistics.median(floor)

def show(name, r):
    print("%s %.3f ratio" % (name, statistics.median(r)))
    print("%s.min %.3f ratio" % (name, min(r)))
    print("%s.max %.3f ratio" % (name, max(r)))

for what, fn, path in (("read_over_floor.usage", preads, g + "/memory.usage_in_bytes"),
                       ("read_over_floor.stat", preads, g + "/memory.stat"),
                       ("open_read_close_over_floor.usage", orc, g + "/memory.usage_in_bytes")):
    wall, cpus, fl = ratios(fn, path, f)
    show("fuse." + what, wall)
    show("fuse.cpu_over_floor." + what.split("_over_floor.")[0] + "." + what.split(".")[1], cpus)
    if what == "read_over_floor.usage":
        print("fuse.floor_pread_us %.2f us" % (fl * 1e6))
PY
