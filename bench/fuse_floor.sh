#!/usr/bin/env bash
# fuse_floor.sh: memcgfs's requests against the FUSE floor (issues 14 and
# 27). A bare server (bench/fuse_floor.c: the same mount options, loop and
# entry and attribute timeout, constant files in a tree of directories)
# and memcgfs are read in turn, 7 rounds interleaved; prints the median
# ratio (and its range as NAME.min and NAME.max), of the wall time and of
# the server's own CPU time per operation (what the server adds, less
# shaken by a busy machine than the wall time), read in nanoseconds from
# /proc/PID/task/*/schedstat; a round whose server changed threads during
# it is read from utime + stime instead (a thread that ended takes its
# schedstat with it):
#   fuse.read_over_floor.usage   pread of a leaf's memory.usage_in_bytes
#                                (20,000 a round; 2,000 with BENCH_QUICK=1)
#   fuse.read_over_floor.stat    pread of a leaf's memory.stat
#   fuse.open_read_close_over_floor.usage
#   fuse.cpu_over_floor.*        the same three, server CPU per operation
#   fuse.sweep_over_floor        open, read to the end and close memory.stat
#                                of each of 1,000 groups (10 x 10 x 10), a
#                                tenth at a time on each mount in turn
#   fuse.sweep_speedup_vs_uncached  the same sweep on a memcgfs mount with
#                                -o cache_timeout=0, over the cached one
#   scale.mkdir_over_floor       mkdir(2) of 500 new groups a round, one on
#                                each server in turn
# the floor itself (fuse.floor_pread_us, fuse.sweep_floor_us_per_file,
# scale.mkdir_floor_us),
# and the requests each server receives (its own count, a status read's
# own requests taken off) for a warm `cat a/b/memory.stat` and
# `mkdir a/b/c`: fuse.requests.cat_stat, fuse.requests.mkdir and the
# floor's fuse.requests_floor.*. Needs root and /dev/fuse.
# Usage: bench/fuse_floor.sh BUILD_DIR
set -eu
build=${1:-build}
# (the timeout both servers give the kernel: memcgfs's default)
ttl=86400
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
unc=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
flo=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
fpid=
cleanup() {
	for m in "$mnt" "$unc" "$flo"; do fusermount3 -u "$m" 2>/dev/null || true; done
	[ -z "$fpid" ] || wait "$fpid" 2>/dev/null || true
	rmdir "$mnt" "$unc" "$flo" 2>/dev/null || true
}
trap cleanup EXIT
. "$(dirname "$0")/stats.sh"
"$build/memcgfs" -o "nostate,cache_timeout=$ttl" "$mnt"
"$build/memcgfs" -o nostate,cache_timeout=0 "$unc"
mkdir "$mnt/g" "$mnt/g/c"
# the floor's memory.stat is as long as a leaf's here
"$build/fuse_floor" -t "$ttl" -s "$(wc -c < "$mnt/g/c/memory.stat")" "$flo" &
fpid=$!
wait_until 30 "the floor's mount ($flo)" mountpoint -q "$flo" || exit 1
rmdir "$mnt/g/c"
# memcgfs's CPU is its worker's (the process started is its supervisor)
mpid=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "worker_pid" { print $2 }')
/usr/bin/python3 - "$mnt/g" "$mpid" "$flo/g/f" "$fpid" "$mnt" "$flo" "$unc" <<'PY'
import os, statistics, subprocess, sys, time

g, mpid, f, fpid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
mnt, flo, unc = sys.argv[5], sys.argv[6], sys.argv[7]
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

# ---- requests: each server's own count, a status read's own taken off
def requests(root):
    if root == flo:
        return int(os.getxattr(flo, "user.floor.requests"))
    for line in os.getxattr(root, "user.memcgfs.status").decode().splitlines():
        k, v = line.split(" ", 1)
        if k == "requests_total":
            return int(v)

def count(root, argv):
    a = requests(root); b = requests(root)
    c = requests(root)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    d = requests(root)
    return (d - c) - (b - a)

for name, root in (("requests", mnt), ("requests_floor", flo)):
    os.makedirs(root + "/a/b")
    st = root + "/a/b/memory.stat"
    os.mkdir(root + "/a/b/c0")             # (warm: a/b and its new times)
    subprocess.run(["cat", st], check=True, stdout=subprocess.DEVNULL)
    print("fuse.%s.cat_stat %d requests" % (name, count(root, ["cat", st])))
    print("fuse.%s.mkdir %d requests" % (name, count(root, ["mkdir", root + "/a/b/c1"])))

# ---- the sweep: 1,000 groups, 10 x 10 x 10
leaves = ["t%d/m%d/l%d" % (i, j, k) for i in range(10) for j in range(10) for k in range(10)]
for root in (mnt, unc, flo):
    for l in leaves:
        os.makedirs(root + "/" + l)

def sweep(root, part):
    t = time.perf_counter()
    for l in part:
        fd = os.open(root + "/" + l + "/memory.stat", os.O_RDONLY)
        while os.read(fd, 65536):
            pass
        os.close(fd)
    return time.perf_counter() - t

# a round sweeps all 1,000 on each mount, a tenth at a time in turn (the
# order rotating), so that the three share the machine's moments
def round_():
    tot = {mnt: 0.0, flo: 0.0, unc: 0.0}
    order = [mnt, flo, unc]
    for c in range(10):
        for root in order[c % 3:] + order[:c % 3]:
            tot[root] += sweep(root, leaves[c * 100:(c + 1) * 100])
    return tot[mnt], tot[flo], tot[unc]

over, speedup, fl = [], [], []
round_()                                   # warm all three
for _ in range(7):
    x, y, z = round_()
    over.append(x / y)
    speedup.append(z / x)
    fl.append(y)
show("fuse.sweep_over_floor", over)
show("fuse.sweep_speedup_vs_uncached", speedup)
print("fuse.sweep_floor_us_per_file %.1f us" % (statistics.median(fl) / len(leaves) * 1e6))

# ---- mkdir: 500 new groups a round on each, under a parent made before,
# one on each server in turn (so that both share the machine's moments)
def mkdirs(r):
    tot = {mnt: 0.0, flo: 0.0}
    for root in tot:
        os.mkdir("%s/mk%d" % (root, r))
    for i in range(500):
        for root in ((mnt, flo) if i & 1 else (flo, mnt)):
            t = time.perf_counter()
            os.mkdir("%s/mk%d/c%d" % (root, r, i))
            tot[root] += time.perf_counter() - t
    return tot[mnt], tot[flo]

mk, mfl = [], []
for r in range(7):
    x, y = mkdirs(r)
    mk.append(x / y)
    mfl.append(y / 500)
show("scale.mkdir_over_floor", mk)
print("scale.mkdir_floor_us %.1f us" % (statistics.median(mfl) * 1e6))
PY
