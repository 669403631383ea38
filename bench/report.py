#!/usr/bin/env python3
"""report.py: writes BUILD/bench/report.md and its PNG plots from
BUILD/bench/results.tsv (the "name value unit" lines of `make bench`) and
BUILD/bench/steps.tsv (each step's exit status and duration).

Owns the report's layout: one section per experiment with its setup, its
table, the seed's published figure beside ours and each goal met or missed,
then a closing table of every goal. It only reads figures: it never runs a
benchmark and never changes a figure (a missing one reads "missing", and
its goal "not measured"). Plots are made with gnuplot (pngcairo, or png
where cairo is absent); without gnuplot the report says so.
Usage: report.py BUILD/bench
"""
import os
import shutil
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
PLOTS = os.path.join(OUT, "plots")

R = {}
UNIT = {}
with open(os.path.join(OUT, "results.tsv")) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3:
            try:
                R[parts[0]] = float(parts[1])
                UNIT[parts[0]] = parts[2]
            except ValueError:
                pass
STEPS = {}
if os.path.exists(os.path.join(OUT, "steps.tsv")):
    with open(os.path.join(OUT, "steps.tsv")) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) == 3:
                STEPS[p[0]] = (int(p[1]), float(p[2]))

GOALS = []          # (experiment, figure, text, ours, seed, status)
md = []
plots_made = []


def get(name):
    return R.get(name)


def fmt(name, digits=3, unit=True):
    v = R.get(name)
    if v is None:
        return "missing"
    if UNIT.get(name) == "%" and abs(v) >= 1:
        digits = 1
    if abs(v) >= 1e5 or (v == int(v) and UNIT.get(name) not in ("ratio", "%")):
        s = "%.0f" % v
    else:
        s = ("%%.%df" % digits) % v
    u = UNIT.get(name, "")
    if unit and u and u not in ("ratio", "bool"):
        s += " " + u
    return s


def spread(name, digits=3):
    """median (min-max) when the figure has .min/.max companions"""
    s = fmt(name, digits, unit=False)
    lo, hi = R.get(name + ".min"), R.get(name + ".max")
    if lo is not None and hi is not None:
        s += (" (%%.%df-%%.%df)" % (digits, digits)) % (lo, hi)
    return s


def goal(exp, name, op, threshold, text, seed, why=""):
    """op: '>=', '<=', '>', '<', 'between' (threshold a pair), 'true'.
    why: the reason a miss has, printed only when the goal is missed."""
    v = R.get(name)
    if v is None:
        status = "not measured"
    else:
        ok = {
            ">=": lambda: v >= threshold,
            "<=": lambda: v <= threshold,
            ">": lambda: v > threshold,
            "<": lambda: v < threshold,
            "between": lambda: threshold[0] <= v <= threshold[1],
            "true": lambda: v == 1,
        }[op]()
        status = "**met**" if ok else "**missed**"
    GOALS.append((exp, name, text, fmt(name), seed, status, why if status == "**missed**" else ""))
    return status


def table(header, rows):
    md.append("| " + " | ".join(header) + " |")
    md.append("|" + "---|" * len(header))
    for r in rows:
        md.append("| " + " | ".join(str(c) for c in r) + " |")
    md.append("")


def step_note(step):
    if step not in STEPS:
        md.append("*Step `%s` did not run in this `make bench`.*\n" % step)
        return False
    rc, secs = STEPS[step]
    if rc != 0:
        md.append("*Step `%s` failed (exit %d after %.0f s); figures below may be "
                  "missing: see `%s.log`.*\n" % (step, rc, secs, step))
    else:
        md.append("*Step `%s`: %.0f s.*\n" % (step, secs))
    return True


def gnuplot_term():
    try:
        t = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                           text=True, timeout=30)
        return "pngcairo" if "pngcairo" in (t.stdout + t.stderr) else "png"
    except (OSError, subprocess.SubprocessError):
        return None


TERM = gnuplot_term() if shutil.which("gnuplot") else None


def plot(name, title, script, data):
    """data: {basename: text}; script uses the files by basename."""
    if not TERM:
        md.append("*(plot `%s` not made: gnuplot is not installed; `make deps` "
                  "installs gnuplot-nox)*\n" % name)
        return
    os.makedirs(PLOTS, exist_ok=True)
    for base, text in data.items():
        with open(os.path.join(PLOTS, base), "w") as f:
            f.write(text)
    png = name + ".png"
    full = ("set terminal %s size 900,500 noenhanced\nset output '%s'\nset title \"%s\"\n"
            "set key outside right\nset grid\n%s\n" % (TERM, png, title, script))
    with open(os.path.join(PLOTS, name + ".gp"), "w") as f:
        f.write(full)
    r = subprocess.run(["gnuplot", name + ".gp"], cwd=PLOTS, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(os.path.join(PLOTS, png)):
        md.append("*(plot `%s` failed: %s)*\n" % (name, r.stderr.strip()[:200]))
        return
    plots_made.append(png)
    md.append("![%s](plots/%s)\n" % (title, png))


# ---------------------------------------------------------------------------
md.append("# memcgfs benchmark report\n")
md.append("Written by `make bench` (`bench/run.sh`, `bench/report.py`) from "
          "`results.tsv` in this directory. Each section: the setup, our figures, "
          "the seed's published figure beside ours, and each goal met or missed; "
          "the closing table gathers every goal. Figures in simulated time (replays, "
          "B1, B4, B5) are the same on every run and machine; wall-clock figures "
          "(B2, B3, the engine's) are ratios against a baseline measured in the same "
          "run, given as median (min-max) over the repetitions, on a shared 2-core "
          "machine. Goals come from `shared/spec/seed-algorithms.md` and issue 15; "
          "no figure is tuned to meet one. Method and models: `docs/benchmarks.md`.\n")

# --- engine -----------------------------------------------------------------
md.append("## Engine: charge pairs, stock, descriptor size\n")
step_note("engine")
md.append("Setup: `bench/bench_engine.c`: a page charged and uncharged in a child "
          "group (64 faulted one at a time, unmapped together), each thread its own "
          "simulated CPU; paired 10 ms slices, median of the pair ratios.\n")
table(["figure", "ours: median (min-max)", "goal"], [
    ["engine.accounting_keeps (stock, T=1, over no accounting)",
     spread("engine.accounting_keeps"), ">= 0.85"],
    ["engine.stock_speedup.t2 (stock over no stock, T=2)", spread("engine.stock_speedup.t2"), ">= 2"],
    ["engine.bytes_per_page", fmt("engine.bytes_per_page"), "<= 16"],
    ["engine.soft_reclaim_faults_per_s.g16", fmt("engine.soft_reclaim_faults_per_s.g16"), ""],
    ["engine.soft_reclaim_faults_per_s.g4096", fmt("engine.soft_reclaim_faults_per_s.g4096"), ""],
    ["engine.soft_reclaim_g4096_over_g16 (same run)", fmt("engine.soft_reclaim_g4096_over_g16"), ""],
])
goal("engine", "engine.accounting_keeps", ">=", 0.85, "stock keeps >= 85 % of no accounting",
     "85.2 % (merged commit, 8 CPUs)",
     "a fixed cost (a spinlock per charge, the stock being drainable from any thread) against "
     "a loop of a few hundred instructions; its median moves between runs on this shared "
     "machine (0.84-0.91 in docs/benchmarks.md), so a run below 0.85 is the neighbours as "
     "much as the code")
goal("engine", "engine.stock_speedup.t2", ">=", 2.0, "stock over no stock at T=2 >= 2", "-",
     "depends on where the host places the two vCPUs: in the fastest placement the no-stock "
     "variant runs close to the stock one, which is within about 12 % of no accounting")
goal("engine", "engine.bytes_per_page", "<=", 16, "descriptor bytes per page <= 16", "-")

# --- B1 ---------------------------------------------------------------------
md.append("## B1: watermarks and throttled direct reclaim (seed 000, Ying Han 2011)\n")
step_note("wmark")
md.append("Setup: `bench/bench_wmark.c`, replays in simulated time: a build of 256 "
          "compile units as N jobs in an 800M group on 8 CPUs and 2 nodes, the "
          "corrected cost model of `docs/benchmarks.md` (a 2007 disk: 8 ms a random "
          "read, 60 MB/s; major faults wait for the disk, one read at a time; direct "
          "reclaimers of a group serialise on its LRU lock). The tree is read once before "
          "the build (kernbench's warm-up, %s, not timed).\n" % fmt("wmark.warmup_ms", 1))
configs = ["nowmark", "nowmark_throttle", "auto", "auto_throttle", "790_760",
           "790_760_throttle", "700_300", "700_300_throttle"]
rows = []
for n in ("j4", "j32"):
    for c in configs:
        rows.append([n, c, fmt("wmark.completion_ms.%s.%s" % (n, c)),
                     fmt("wmark.completion_ratio.%s.%s" % (n, c)),
                     fmt("wmark.direct_scan_pct.%s.%s" % (n, c), 1),
                     fmt("wmark.allocstall.%s.%s" % (n, c)),
                     fmt("wmark.iowait_pct.%s.%s" % (n, c), 1)])
rows.append(["j32", "no limit (the floor)", fmt("wmark.completion_ms.j32.unlimited"),
             fmt("wmark.completion_floor_ratio.j32"), "-", "-",
             fmt("wmark.iowait_pct.j32.unlimited", 1)])
table(["N", "configuration", "completion", "ratio to nowmark", "direct scan share",
       "allocstall", "iowait share"], rows)
md.append("Seed (KAMEZAWA, 3 Dec 2007, ia64 8 CPUs, -j32): 353.957 s before, 232.32 s "
          "with patches 5-8 (ratio 0.656, -34.4 %); -j4 unchanged (266.1 / 267.0 s).\n")
goal("B1", "wmark.completion_ratio.j32.790_760_throttle", "<=", 0.75,
     "N=32, 790M/760M + throttle: completion at least 25 % faster", "0.656 (354 s -> 232 s)",
     "the build is disk-bound; background reclaim takes pages ahead of need and each comes back "
     "as an 8 ms read (disk reads %s -> %s); the throttle alone gives %s" %
     (fmt("wmark.disk_reads.j32.nowmark", 0, False), fmt("wmark.disk_reads.j32.790_760_throttle", 0, False),
      fmt("wmark.completion_ratio.j32.nowmark_throttle")))
goal("B1", "wmark.j4_identical", "true", None, "N=4: identical in every configuration",
     "266.1 / 267.0 s")
goal("B1", "wmark.direct_scan_pct.j32.790_760_throttle", "<=", 50.0,
     "N=32, 790M/760M + throttle: direct share of scans at most half of no watermarks' 100 %",
     "not published")
md.append("The floor, `wmark.completion_floor_ratio.j32` = %s: the N=32 build with no "
          "limit at all, which no reclaim policy can beat.\n" % fmt("wmark.completion_floor_ratio.j32"))
data = "".join("%d %s %s %s\n" % (i, c, R.get("wmark.completion_ratio.j32.%s" % c, 0),
                                  R.get("wmark.direct_scan_pct.j32.%s" % c, 0))
               for i, c in enumerate(configs))
plot("b1_j32", "B1: N=32 completion ratio and direct-scan share per configuration",
     "set style data histograms\nset style fill solid 0.6\nset boxwidth 0.4\n"
     "set xtics rotate by -30\nset ylabel 'completion / nowmark'\nset y2label 'direct scan %'\n"
     "set y2tics\nset yrange [0:*]\nset y2range [0:105]\n"
     "plot 'b1.dat' using ($1-0.2):3:(0.4):xtic(2) with boxes title 'completion ratio', "
     "'' using ($1+0.2):4:(0.4) axes x1y2 with boxes title 'direct scan share %'",
     {"b1.dat": data})
md.append("### Ying Han's scenario (500M, distances 50m/40m)\n")
rows = []
for case in ("write", "read"):
    for bg in ("direct", "bg"):
        k = "wmark.ying.%s.%s" % (case, bg)
        rows.append([case, "direct only" if bg == "direct" else "+ background",
                     fmt(k + ".steal_direct"), fmt(k + ".steal_bg"), fmt(k + ".allocstall"),
                     fmt(k + ".direct_share_pct", 1), fmt(k + ".mb_per_s", 1)])
table(["case", "reclaim", "pg_pgsteal", "kswapd_steal", "allocstall", "direct share of steals",
       "MB/s (simulated)"], rows)
md.append("Seed (V5/V7, 20 GiB): write: direct share 100 % -> 47.4 % (V5) / 72.2 % (V7), "
          "67.37 -> 68.04 MB/s; read: allocstall 159840 -> 0, pg_pgsteal 0 with background "
          "reclaim.\n")
goal("B1", "wmark.ying.read_allocstall", "<=", 0, "read: allocstall 0 with background reclaim", "0")
WHY_WRITE = ("the engine has no dirty throttling and no flusher: background reclaim, which never "
             "waits, finds every dirty page first and queues it to the device, and the writer's few "
             "direct reclaims wait behind that queue")
goal("B1", "wmark.ying.write_direct_share_pct", "between", (40.0, 75.0),
     "write: direct share of steals falls to roughly 50-70 %", "47.4 % / 72.2 %", WHY_WRITE)
goal("B1", "wmark.ying.write_throughput_ratio", "between", (0.98, 1.02),
     "write: throughput within +-2 %", "1.010 / 1.003", WHY_WRITE)

# --- B2 ---------------------------------------------------------------------
md.append("## B2: move charge at immigrate (seed 001)\n")
step_note("move")
md.append("Setup: `bench/bench_move.c` in the engine, medians of 5 interleaved runs; "
          "`bench/move_mount.sh` through a mount (`echo PID > B/tasks`, 1 GiB task).\n")
rows = []
for s in ("252m", "512m", "1g"):
    for c in ("root_00", "00_01", "00_01_swap"):
        rows.append([c, s, fmt("move.ms.%s.%s" % (c, s)), fmt("move.naive_ms.%s.%s" % (c, s)),
                     fmt("move.charge_ms.%s" % s), spread("move.over_charge.%s.%s" % (c, s)),
                     fmt("move.counter_ops.%s.%s" % (c, s))])
table(["case", "size", "move", "naive", "charge from nothing (baseline)",
       "move / charge, median (min-max)",
       "counter ops"], rows)
md.append("Seed (4 Dec 2009, KVM 4 vCPU): 0.15 / 0.30 / 0.60 s for 252M / 512M / 1G; "
          "case (2)/(1) 1.0 after batching (2.1 before); swap case 1.5x.\n")
goal("B2", "move.linearity.00_01", "between", (3.0, 5.5), "time linear in S (1G / 252M in 3-5.5)",
     "4.0")
goal("B2", "move.case2_over_case1.1g", "<=", 1.3, "case (2) / case (1) at most 1.3 (batched)", "1.0")
goal("B2", "move.mount_ms.1g", "<=", 10.0, "through the mount: 1 GiB moved in at most 10 ms",
     "810 ms (2009 kernel)")
md.append("Through the mount: `move.mount_ms.1g` %s ms, median (min-max) %s; the same "
          "write for a task owning nothing %s ms; ratio %s.\n" %
          (fmt("move.mount_ms.1g", 2, False),
           "%s-%s" % (fmt("move.mount_ms.1g.min", 2, False), fmt("move.mount_ms.1g.max", 2, False)),
           fmt("move.mount_ms.empty", 2, False), spread("move.mount_over_empty", 1)))
data = ""
for ci, c in enumerate(("root_00", "00_01", "00_01_swap")):
    for s, mib in (("252m", 252), ("512m", 512), ("1g", 1024)):
        data += "%d %s %s %d\n" % (mib, R.get("move.ms.%s.%s" % (c, s), 0),
                                   R.get("move.naive_ms.%s.%s" % (c, s), 0), ci)
    data += "\n\n"
plot("b2_move", "B2: move time against size, per case and variant",
     "set xlabel 'task size (MiB)'\nset ylabel 'ms'\n"
     "plot for [i=0:2] 'b2.dat' index i using 1:2 with linespoints title "
     "word('root-00 00-01 00-01-swap', i+1).' batched', "
     "for [i=0:2] 'b2.dat' index i using 1:3 with linespoints dt 2 title "
     "word('root-00 00-01 00-01-swap', i+1).' naive'", {"b2.dat": data})

# --- B3 ---------------------------------------------------------------------
md.append("## B3: charge throughput against threads (seed 003, merged commits)\n")
step_note("charge")
md.append("Setup: `bench/bench_charge.c`: T threads (each a simulated CPU) fault a "
          "private 1 MiB region in and unmap it, in a loop; variants (a) no accounting, "
          "(b) root group, (c) child with per-page counters, (d) c + batched uncharge, "
          "(e) d + 32-page stock, (f) d + 64-page stock. Rounds of one slice per variant "
          "(rotating order), each variant's ratio to (a) in its round; median (min-max) "
          "over rounds. This machine has %s CPUs online: at T=4 and T=8 threads share "
          "cores, so contention there is time-slicing, not parallel counter traffic.\n"
          % fmt("b3.ncpus_online", 0, False))
rows = []
for v in "abcdef":
    row = [v]
    for t in (1, 2, 4, 8):
        row.append(spread("b3.keeps.%s.t%d" % (v, t)))
    row += [fmt("b3.counter_ops_per_charge.%s.t2" % v), fmt("b3.stock_hit_pct.%s.t2" % v, 1)]
    rows.append(row)
table(["variant", "T=1 (of a)", "T=2", "T=4", "T=8", "counter ops / charge", "stock hits"], rows)
md.append("Seed (merged commits, 8 CPUs, % of no memcg): root 91.3, child 45.9, + batched "
          "uncharge 67.6, + stock 85.2; Balbir's RFC (64-page stock) on 24 CPUs: 3.04x the "
          "fault rate of the child before it; at 8 CPUs the stock's gain over the child "
          "was 34.2M/18.4M = 1.86x.\n")
goal("B3", "b3.keeps.e", ">=", 0.85, "(e) keeps >= 85 % of (a) (T=2)", "85.2 %")
goal("B3", "b3.speedup.f_over_c.t2", ">=", 1.86, "(f) over (c) at T=2 >= 1.86", "1.86 (8 CPUs), 3.04 (24)",
     "out of reach on 2 cores: (f) is at most as fast as (a), so f/c is at most a/c = %s; 1.86 "
     "needs per-page counters costing 46 %% of a fault (c at 0.54 of a), and contention that "
     "grows with the CPUs sharing the counter's line" %
     ("%.2f" % (1 / R["b3.keeps.c.t2"]) if R.get("b3.keeps.c.t2") else "missing"))
goal("B3", "b3.overcharge_bound_held", "true", None,
     "over-charge never above ncpus x (batch - 1)", "bound by construction")
md.append("Largest over-charge seen: %s pages against a bound of %s (T x (batch - 1) at "
          "that slice).\n" % (fmt("b3.max_overcharge_pages", 0, False),
                               fmt("b3.overcharge_bound_pages", 0, False)))
data = ""
for v in "abcdef":
    for t in (1, 2, 4, 8):
        data += "%d %s %s %s\n" % (t, R.get("b3.faults_per_s.%s.t%d" % (v, t), 0) / 1e6,
                                   R.get("b3.keeps.%s.t%d.min" % (v, t), 0),
                                   R.get("b3.keeps.%s.t%d.max" % (v, t), 0))
    data += "\n\n"
plot("b3_throughput", "B3: charge throughput against threads, per variant",
     "set xlabel 'threads (2 cores)'\nset ylabel 'M faults/s (median)'\nset logscale x 2\n"
     "plot for [i=0:5] 'b3.dat' index i using 1:2 with linespoints title "
     "'('.word('a b c d e f', i+1).')'", {"b3.dat": data})

# --- B4 ---------------------------------------------------------------------
md.append("## B4: scan efficiency with and without the immediate-reclaim list (seed 002)\n")
step_note("scan")
md.append("Setup: `bench/bench_scan.c`, replays in simulated time: a fast clean-page "
          "producer and a writer on a writeback device 100x slower, about 20 % of the "
          "inactive file list dirty, direct reclaim not writing file pages, an "
          "allocation burst when free memory is low. Variants (a) dirty pages rotated "
          "to the head, (b) PG_reclaim and rotation to the tail at writeback end, (c) "
          "(b) + the immediate list, (d) (b) + per-node dirty limits on two nodes.\n")
rows = []
for v in "abcd":
    k = "b4.%s." % v
    rows.append([v, fmt(k + "direct_scanned"), fmt(k + "direct_reclaimed"),
                 fmt(k + "bg_scanned"), fmt(k + "bg_reclaimed"),
                 fmt(k + "direct_efficiency_pct", 0), fmt(k + "direct_velocity", 0),
                 fmt(k + "direct_share_pct", 0), fmt(k + "immediate"), fmt(k + "rescued"),
                 fmt(k + "burst_ms", 1)])
table(["variant", "direct scanned", "direct reclaimed", "bg scanned", "bg reclaimed",
       "direct eff. %", "direct velocity", "direct share %", "immediate", "rescued",
       "burst (ms)"], rows)
md.append("Seed (Mel Gorman, 16 Dec 2011): direct pages scanned 1764930052 (freemore, ~b) -> "
          "115140570 (isolate, ~c): -93.5 %; pzd in its place 1796314840; direct efficiency "
          "0-1 %; rescued 87848 of 111281140 sent (0.08 %).\n")
goal("B4", "b4.direct_scanned_cut_pct.c_vs_b", ">", 90.0, "(c) cuts direct scanning by > 90 % vs (b)",
     "93.5 %",
     "the list removes what it should (kept pages met %s times with it, %s without), but pages "
     "reclaimed at first sight are most of the scanning here; the seed's reclaim for high-order "
     "(THP) allocations, which scanned 1.76 G pages for 3.6 M, is not modelled" %
     (fmt("b4.c.immediate", 0, False), fmt("b4.b.immediate", 0, False)))
goal("B4", "b4.rescued_pct", "<=", 0.1, "rescued <= 0.1 % of pages sent to the immediate list",
     "0.08 %")
md.append("`b4.immediate_reclaimed` (pages marked for immediate reclaim in (c), "
          "nr_vmscan_immediate_reclaim): %s.\n" % fmt("b4.immediate_reclaimed", 0, False))
data = "".join("%d %s %s %s\n" % (i, v, R.get("b4.%s.direct_scanned" % v, 0),
                                  R.get("b4.%s.bg_scanned" % v, 0))
               for i, v in enumerate("abcd"))
plot("b4_scanned", "B4: pages scanned per variant",
     "set style fill solid 0.6\nset logscale y\nset ylabel 'pages scanned'\n"
     "set xrange [-0.5:3.5]\n"
     "plot 'b4.dat' using ($1-0.2):3:(0.4):xtic(2) with boxes title 'direct', "
     "'' using ($1+0.2):($4 > 0 ? $4 : 1):(0.4) with boxes title 'background'",
     {"b4.dat": data})

# --- B5 ---------------------------------------------------------------------
md.append("## B5: reclaim balance across nodes of unequal size (seed 004)\n")
step_note("nodes")
md.append("Setup: `bench/bench_nodes.c`, replays in simulated time: a 64M machine of two "
          "nodes, 48M (node 0, allocated from first, as ZONE_NORMAL) and 16M (node 1, "
          "ZONE_DMA), 2 CPUs, swap on a disk of 8 ms a seek and 60 MB/s; a parallel "
          "build of 30 units in 5, 10 or 15 jobs (x2, x4, x6: footprint 2, 4, 6 times the "
          "memory) and a single-threaded swap-heavy task (swap1, qsbench's stand-in: an "
          "88M array touched at random). The fixed walk (node 0 then node 1, stopping "
          "once enough) against the engine's default, each node's share proportional to "
          "its size, scanned through the priority-shift accumulators.\n")
rows = []
for pol in ("fixed", "proportional"):
    for w in ("x2", "x4", "x6", "swap1"):
        k = "b5.%s.%s." % (pol, w)
        rows.append([pol, w, fmt(k + "steal_large"), fmt(k + "steal_small"),
                     fmt(k + "steal_ratio", 2), fmt(k + "scan_large"), fmt(k + "scan_small"),
                     fmt(k + "completion_ms", 1)])
table(["policy", "workload", "stolen, 48M node", "stolen, 16M node", "large : small",
       "scanned, 48M", "scanned, 16M", "completion (ms)"], rows)
md.append("Overall (every parallel run together): `b5.steal_ratio.fixed` %s, "
          "`b5.steal_ratio.proportional` %s, against the size ratio 3. Single-threaded swap "
          "test: proportional over fixed completion `b5.swap_single.time_ratio` %s.\n" %
          (fmt("b5.steal_ratio.fixed", 2), fmt("b5.steal_ratio.proportional", 2),
           fmt("b5.swap_single.time_ratio")))
md.append("Seed (Andrew Morton, make -j4, mem=64m): DMA:NORMAL 1:51 and 1:24 before, 1:4 with "
          "zone-balancing-batching (ideal 1:3); the batching regressed qsbench ~2:07 -> "
          "2:36-2:43 (+25 %).\n")
goal("B5", "b5.steal_ratio.proportional", "between", (2.5, 3.5),
     "proportional: large:small steal ratio within 2.5-3.5", "4 (1:4)")
goal("B5", "b5.steal_ratio.fixed", ">", 3.5, "fixed order skews toward the large node", "24-51",
     "the fixed walk still scans each node by its size at each priority")
data = ""
for pol in ("fixed", "proportional"):
    for k in (1, 3, 7):
        data += "%d %s\n" % (k, R.get("b5.steal_ratio.%s.size%d" % (pol, k), 0))
    data += "\n\n"
data_ideal = "1 1\n3 3\n7 7\n"
plot("b5_ratio", "B5: steal ratio (large:small) against the size ratio",
     "set xlabel 'size ratio large:small'\nset ylabel 'steal ratio large:small'\n"
     "set logscale y\nset xrange [0:8]\n"
     "plot 'b5.dat' index 0 using 1:2 with linespoints title 'fixed order', "
     "'' index 1 using 1:2 with linespoints title 'proportional', "
     "'ideal.dat' using 1:2 with lines dt 2 title 'size ratio'",
     {"b5.dat": data, "ideal.dat": data_ideal})

# --- simulated tasks through the socket ---------------------------------------
md.append("## Simulated tasks through the socket\n")
step_note("sim_throughput")
md.append("`sim.pages_per_s` %s (min-max %s-%s), goal at least 1M; against the same "
          "program charged in-process by `memcgctl replay`, median (min-max) ratio %s.\n" %
          (fmt("sim.pages_per_s", 0, False), fmt("sim.pages_per_s.min", 0, False),
           fmt("sim.pages_per_s.max", 0, False), spread("sim.socket_over_inprocess")))
goal("sim", "sim.pages_per_s", ">=", 1e6, "a simulated task declares >= 1M pages/s", "-")

# --- scale: 65,534 groups, idle mirrored processes, the FUSE floor --------------
md.append("## Cost that does not grow with the host (issue 14)\n")
step_note("scale")
table(["figure", "ours", "goal"], [
    ["`scale.groups`", fmt("scale.groups"), "65,534 (the kernel's 65,535 ids with the root)"],
    ["`scale.mkdir_us.first1000` / `.last1000`", fmt("scale.mkdir_us.first1000", 1) + " / " +
     fmt("scale.mkdir_us.last1000", 1), "the last thousand cost what the first did"],
    ["`scale.rmdir_us`", fmt("scale.rmdir_us", 1), ""],
    ["`scale.daemon_bytes_per_group`", fmt("scale.daemon_bytes_per_group", 0), ""],
    ["`scale.root_stat_over_leaf.unchanged`", fmt("scale.root_stat_over_leaf.unchanged", 2), "<= 2"],
    ["`scale.root_usage_over_leaf.unchanged`", fmt("scale.root_usage_over_leaf.unchanged", 2), "<= 2"],
    ["`scale.root_stat_over_leaf.changed1pct`", fmt("scale.root_stat_over_leaf.changed1pct", 2),
     "proportional to the groups changed"],
    ["`scale.root_usage_over_leaf.changed1pct`", fmt("scale.root_usage_over_leaf.changed1pct", 2), ""],
    ["`scale.daemon_rss_after_rmdir_ratio`", fmt("scale.daemon_rss_after_rmdir_ratio", 2), "<= 1.10"],
    ["`scale.daemon_anon_after_rmdir_ratio` (anonymous pages alone)",
     fmt("scale.daemon_anon_after_rmdir_ratio", 2), ""],
    ["`scale.daemon_threads.start` / `.after_rmdir`", fmt("scale.daemon_threads.start", 0) + " / " +
     fmt("scale.daemon_threads.after_rmdir", 0), ""],
    ["`scale.flat_mkdir_us.first1000` / `.last1000` (one directory)",
     fmt("scale.flat_mkdir_us.first1000", 1) + " / " + fmt("scale.flat_mkdir_us.last1000", 1),
     "the last thousand cost what the first did"],
    ["`scale.flat_rmdir_us`", fmt("scale.flat_rmdir_us", 1), ""],
])
goal("scale", "scale.root_stat_over_leaf.unchanged", "<=", 2.0,
     "root memory.stat read <= 2x a leaf's at 65,534 groups", "-")
goal("scale", "scale.root_usage_over_leaf.unchanged", "<=", 2.0,
     "root memory.usage_in_bytes read <= 2x a leaf's", "-")
goal("scale", "scale.daemon_rss_after_rmdir_ratio", "<=", 1.10,
     "daemon RSS after removing every group within 10 % of the start", "-",
     "what each FUSE thread the load added keeps (its stack's touched pages, and its "
     "1 MiB request buffer, which may be carved from freed memory not yet trimmed)")
goal("scale", "scale.flat_mkdir_last_over_first", "<=", 1.25,
     "one flat directory: the last thousand mkdirs within 25 % of the first", "-")
step_note("mirror")
md.append("1,000 idle mirrored processes (1 MiB of their own and a shared 64 MiB file each): "
          "`mirror.cpu_pct.idle1000` %s of a core; 10 processes allocating 64 MiB/s: "
          "`mirror.cpu_pct.active10` %s; usage against what the idle ones hold: "
          "`mirror.usage_error_pct.idle` %s; a process allocating 1 GiB/s into 256M got "
          "`mirror.overshoot_mib.1gps` %s past the limit before its kill.\n" %
          (fmt("mirror.cpu_pct.idle1000", 2), fmt("mirror.cpu_pct.active10", 1),
           fmt("mirror.usage_error_pct.idle", 1), fmt("mirror.overshoot_mib.1gps")))
goal("scale", "mirror.cpu_pct.idle1000", "<=", 1.0, "1,000 idle mirrored processes <= 1 % of a core", "-")
goal("scale", "mirror.overshoot_mib.1gps", "<=", 128, "1 GiB/s into 256M: at most 128 MiB over", "-")
step_note("fuse")
md.append("Reads through memcgfs over a bare FUSE server (`bench/fuse_floor.c`) with the same "
          "mount options and loop, interleaved, median (range as printed by the step): "
          "`fuse.read_over_floor.usage` %s, `.stat` %s, open+read+close %s; the servers' own "
          "CPU per operation: %s, %s, %s; the floor's pread %s.\n" %
          (fmt("fuse.read_over_floor.usage"), fmt("fuse.read_over_floor.stat"),
           fmt("fuse.open_read_close_over_floor.usage"), fmt("fuse.cpu_over_floor.read.usage"),
           fmt("fuse.cpu_over_floor.read.stat"), fmt("fuse.cpu_over_floor.open_read_close.usage"),
           fmt("fuse.floor_pread_us", 2)))
goal("scale", "fuse.read_over_floor.usage", "<=", 1.05, "leaf usage pread <= 1.05x the FUSE floor", "-",
     "the machine's spread is wider than the goal; memcgfs's own work per read (rendering, "
     "a copy) is a few percent of the daemon's CPU")

# --- closing ------------------------------------------------------------------
md.append("## Every goal\n")
table(["experiment", "figure", "goal", "ours", "seed", "status", "why missed"],
      [[g[0], "`%s`" % g[1], g[2], g[3], g[4], g[5], g[6]] for g in GOALS])
met = sum(1 for g in GOALS if g[5] == "**met**")
missed = sum(1 for g in GOALS if g[5] == "**missed**")
md.append("%d goals met, %d missed, %d not measured. The models, the corrections made after "
          "a first measurement and the longer account of each miss: `docs/benchmarks.md`.\n"
          % (met, missed, len(GOALS) - met - missed))

with open(os.path.join(OUT, "report.md"), "w") as f:
    f.write("\n".join(md))
print("bench: wrote %s (%d plots)" % (os.path.join(OUT, "report.md"), len(plots_made)),
      file=sys.stderr)
