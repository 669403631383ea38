#!/usr/bin/env bash
# scale.sh: what 65,534 groups cost through a mount (issue 14). Builds the
# kernel's full tree (65,535 ids with the root), then prints
#   scale.mkdir_us.first1000 / .last1000   mean mkdir time of each thousand
#   scale.rmdir_us                         mean rmdir time, all of them
#   scale.daemon_bytes_per_group           daemon RSS growth per group
#   scale.root_stat_over_leaf.unchanged    pread of the root's memory.stat
#   scale.root_usage_over_leaf.unchanged   ... and memory.usage_in_bytes,
#                                          each over a leaf's, nothing changed
#   scale.root_stat_over_leaf.changed1pct  the same after 1 % of the groups
#   scale.root_usage_over_leaf.changed1pct   changed (a page each)
#   scale.daemon_rss_after_rmdir_ratio     RSS after removing every group
#                                          over RSS before creating them
#   scale.daemon_anon_after_rmdir_ratio    the same for anonymous pages alone
#   scale.daemon_threads.start / .after_rmdir  the worker's threads then
#   scale.flat_mkdir_us.first1000 / .last1000, scale.flat_rmdir_us
#                                          the same in one flat directory
#                                          of up to 20,000 groups
#   scale.flat_mkdir_last_over_first       their ratio, 5 rounds
# Ratios are medians of repetitions in one run, each with its range as
# NAME.min and NAME.max. BENCH_QUICK=1 makes 2,000 groups.
# Needs root and /dev/fuse. Usage: bench/scale.sh BUILD_DIR [GROUPS]
set -eu
build=${1:-build}
if [ "${BENCH_QUICK:-0}" = 1 ]; then groups=${2:-2000}; else groups=${2:-65534}; fi
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
# (no state file: what a change costs with one is bench/state_cost.sh's)
"$build/memcgfs" -o kernel=6.12,memory=8G,nostate "$mnt"
# the worker: it holds the engine (the pid started is its supervisor's)
pid=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "worker_pid" { print $2 }')
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || true
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
/usr/bin/python3 - "$mnt" "$pid" "$groups" "$build/memcgctl" <<'PY'
import os, statistics, subprocess, sys, time

mnt, pid, n, ctl = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

# from smaps_rollup, which walks the page tables: status's VmRSS is the
# kernel's per-CPU counter, off by up to its batch (hundreds of kB here)
def rss_kb(key="Rss:"):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for l in f:
            if l.startswith(key):
                return int(l.split()[1])

def threads():
    return len(os.listdir("/proc/%d/task" % pid))

def name(i):
    # 256 parents of up to 256 children: no directory holds 65k entries
    return "%s/p%d/c%d" % (mnt, i // 256, i % 256)

# the daemon warmed up first (its threads, the socket's, a sample): the
# start is what it costs with nothing in it, not before it ever ran
# (and the code each later step runs: its pages count in VmRSS once read)
os.mkdir(mnt + "/warm")
os.mkdir(mnt + "/warm/c")
subprocess.run([ctl, "sim", "-m", mnt, "-g", "/warm/c", "-e", "alloc anon h 4K", "-e", "touch h seq write"],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
for d in (mnt, mnt + "/warm", mnt + "/warm/c"):
    for f in ("memory.stat", "memory.usage_in_bytes"):
        with open(d + "/" + f) as fh:
            fh.read()
for d in ("/warm/c", "/warm"):
    for _ in range(20):
        try:
            os.rmdir(mnt + d)
            break
        except OSError:
            time.sleep(0.1)
time.sleep(0.5)
rss0, anon0, thr0 = rss_kb(), rss_kb("Anonymous:"), threads()
times = []
parents = set()
for i in range(n):
    p = "%s/p%d" % (mnt, i // 256)
    if p not in parents:
        os.mkdir(p)
        parents.add(p)
        continue
    t = time.perf_counter()
    os.mkdir(name(i))
    times.append(time.perf_counter() - t)
made = len(times) + len(parents)
print("scale.groups %d groups" % made)
print("scale.mkdir_us.first1000 %.1f us" % (statistics.mean(times[:1000]) * 1e6))
print("scale.mkdir_us.last1000 %.1f us" % (statistics.mean(times[-1000:]) * 1e6))
rss1 = rss_kb()
print("scale.daemon_bytes_per_group %.0f bytes" % ((rss1 - rss0) * 1024 / made))

def pread_us(path, reps=5):
    fd = os.open(path, os.O_RDONLY)
    best = []
    for _ in range(reps):
        t = time.perf_counter()
        os.pread(fd, 1 << 20, 0)
        best.append(time.perf_counter() - t)
    os.close(fd)
    return min(best)

leaf = name(n - 1) if (n - 1) % 256 else name(n - 2)

def ratios(file, rounds=7):
    r = []
    for _ in range(rounds):
        a = pread_us(mnt + "/" + file)
        b = pread_us(leaf + "/" + file)
        r.append(a / b)
    return statistics.median(r), min(r), max(r)

def show(name, med, lo, hi, unit="ratio", fmt="%.2f"):
    print(("%s " + fmt + " %s") % (name, med, unit))
    print(("%s.min " + fmt + " %s") % (name, lo, unit))
    print(("%s.max " + fmt + " %s") % (name, hi, unit))

def report(tag):
    for file, key in (("memory.stat", "root_stat_over_leaf"), ("memory.usage_in_bytes", "root_usage_over_leaf")):
        med, lo, hi = ratios(file)
        show("scale.%s.%s" % (key, tag), med, lo, hi)

report("unchanged")
# 1 % of the groups change (a simulated task charges a page in each and
# ends: its page in and out moved the group's sums), then one read: the
# read that flushes what changed, over a leaf's
def change(offset):
    done = 0
    for i in range(offset, n, 100):
        g = name(i)
        if os.path.isdir(g):
            subprocess.run([ctl, "sim", "-m", mnt, "-g", g[len(mnt):], "-e", "alloc anon h 4K",
                            "-e", "touch h seq write"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            done += 1
    return done

for file, key in (("memory.stat", "root_stat_over_leaf"), ("memory.usage_in_bytes", "root_usage_over_leaf")):
    r = []
    for rnd in range(3):
        changed = change(1 + rnd + (3 if key.startswith("root_usage") else 0))
        fd = os.open(mnt + "/" + file, os.O_RDONLY)
        t = time.perf_counter()
        os.pread(fd, 1 << 20, 0)
        a = time.perf_counter() - t
        os.close(fd)
        r.append(a / pread_us(leaf + "/" + file))
    show("scale.%s.changed1pct" % key, statistics.median(r), min(r), max(r))
print("scale.changed_groups %d groups" % changed)
t = time.perf_counter()
removed = 0
for i in reversed(range(n)):
    if i % 256:
        os.rmdir(name(i))
        removed += 1
rm = time.perf_counter() - t
for p in parents:
    os.rmdir(p)
print("scale.rmdir_us %.1f us" % (rm / removed * 1e6))
time.sleep(1)
rss2, anon2, thr2 = rss_kb(), rss_kb("Anonymous:"), threads()
print("scale.daemon_rss_kb.start %d kB" % rss0)
print("scale.daemon_rss_kb.full %d kB" % rss1)
print("scale.daemon_rss_kb.after_rmdir %d kB" % rss2)
print("scale.daemon_rss_after_rmdir_ratio %.2f ratio" % (rss2 / rss0))
# the anonymous part alone (Rss has the program's and libraries' file
# pages too, which the first run of a path makes resident)
print("scale.daemon_anon_kb.start %d kB" % anon0)
print("scale.daemon_anon_kb.after_rmdir %d kB" % anon2)
print("scale.daemon_anon_after_rmdir_ratio %.2f ratio" % (anon2 / anon0))
# (each FUSE thread the load added since the start keeps its stack's and
# its request buffer's touched pages: tens of kB, not the groups')
print("scale.daemon_threads.start %d threads" % thr0)
print("scale.daemon_threads.after_rmdir %d threads" % thr2)
# one flat directory (as a tool that makes its groups side by side): the
# last thousand mkdirs against the first, and rmdir in creation order
# (each from the far end of the children list)
flat = min(n, 20000)
firsts, lasts, ratios_, rms = [], [], [], []
for rnd in range(5):
    os.mkdir(mnt + "/flat")
    times = []
    for i in range(flat):
        t = time.perf_counter()
        os.mkdir("%s/flat/g%d" % (mnt, i))
        times.append(time.perf_counter() - t)
    first, last = statistics.mean(times[:1000]), statistics.mean(times[-1000:])
    t = time.perf_counter()
    for i in range(flat):
        os.rmdir("%s/flat/g%d" % (mnt, i))
    rms.append((time.perf_counter() - t) / flat)
    os.rmdir(mnt + "/flat")
    firsts.append(first * 1e6)
    lasts.append(last * 1e6)
    ratios_.append(last / first)
print("scale.flat_groups %d groups" % flat)
print("scale.flat_mkdir_us.first1000 %.1f us" % statistics.median(firsts))
print("scale.flat_mkdir_us.last1000 %.1f us" % statistics.median(lasts))
show("scale.flat_mkdir_last_over_first", statistics.median(ratios_), min(ratios_), max(ratios_))
print("scale.flat_rmdir_us %.1f us" % (statistics.median(rms) * 1e6))
PY
