#!/usr/bin/env python3
"""report.py: writes BUILD/bench/report.md, BUILD/bench/goals.tsv and the
report's PNG plots from BUILD/bench/results.tsv (the figures of `make
bench`, "name<TAB>value<TAB>unit") and BUILD/bench/steps.tsv (each step's
exit status and duration).

Owns the report's layout and its verdicts: one section per experiment with
its setup, its table, the seed's published figure beside ours and each goal
met or missed, then a closing table of every goal. Every verdict is
computed from this run's figures: a goal is met or missed against its
threshold; a missed goal whose figure has a range (NAME.min, NAME.max: its
repetitions in this run) is "within noise" only when some repetition met
it, and otherwise a regression unless an explanation holds; an explanation
is a test on this run's figures (the mechanism it names must show in
them), and the figures it cites come from the same results.tsv. A figure
in simulated time has no noise: it is compared with the committed run's
(docs/bench/results.tsv) and every change is listed. It only reads
figures: it never runs a benchmark and never changes a figure (a missing
one reads "missing", and its goal "not measured").
Plots are made with gnuplot (pngcairo, or png where cairo is absent);
without gnuplot the report says so.
Usage: report.py BUILD/bench [COMMITTED_RESULTS]
"""
import os
import shutil
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
HERE = os.path.dirname(os.path.abspath(__file__))
COMMITTED = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "docs", "bench", "results.tsv")
PLOTS = os.path.join(OUT, "plots")
# figures in simulated time: the same on every run and machine
SIMULATED = ("wmark.", "b3.sim.", "b4.", "b5.", "move.model.")


def read_results(path):
    r, u = {}, {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2] or any(c.isspace() for c in parts[0] + parts[2]):
                sys.exit("report.py: %s: not a figure: %r" % (path, line))
            try:
                r[parts[0]] = float(parts[1])
            except ValueError:
                r[parts[0]] = float("nan")
            if r[parts[0]] != r[parts[0]] or abs(r[parts[0]]) == float("inf"):
                sys.exit("report.py: %s: not a finite number: %r" % (path, line))
            u[parts[0]] = parts[2]
    return r, u


R, UNIT = read_results(os.path.join(OUT, "results.tsv"))
BASE = read_results(COMMITTED)[0] if os.path.exists(COMMITTED) else {}
QUICK = R.get("bench.quick") == 1
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


def passes(v, op, threshold):
    return {
        ">=": lambda: v >= threshold,
        "<=": lambda: v <= threshold,
        ">": lambda: v > threshold,
        "<": lambda: v < threshold,
        "between": lambda: threshold[0] <= v <= threshold[1],
        "true": lambda: v == 1,
    }[op]()


def noise(name):
    """the spread of a figure's repetitions in this run, as text, or None"""
    lo, hi, v = R.get(name + ".min"), R.get(name + ".max"), R.get(name)
    if lo is None or hi is None or v is None:
        return None
    rel = (hi - lo) / abs(v) * 100 if v else float("inf")
    return "repetitions %s-%s (spread %.0f %% of the median)" % (num(lo), num(hi), rel)


def num(v, digits=3):
    if v is None:
        return "missing"
    if abs(v) >= 1e5 or v == int(v):
        return "%.0f" % v
    return ("%%.%df" % digits) % v


def goal(exp, name, op, threshold, text, seed, explain=None):
    """op: '>=', '<=', '>', '<', 'between' (threshold a pair), 'true'.
    explain: a function of this run's figures giving the reason a miss has
    (citing them), or None when the mechanism it names does not show in
    them; asked only when the goal is missed outside the run's noise."""
    v = R.get(name)
    why = ""
    if v is None:
        status = "not measured"
    elif passes(v, op, threshold):
        status = "**met**"
    else:
        lo, hi = R.get(name + ".min"), R.get(name + ".max")
        if lo is not None and hi is not None and (passes(lo, op, threshold) or passes(hi, op, threshold)):
            status = "**missed**, within noise"
            why = "%s: some met the goal" % noise(name)
        elif explain and (ex := explain()):
            status = "**missed**, explained"
            why = ex if lo is None else "%s, every one missed; %s" % (noise(name), ex)
        else:
            status = "**regression**"
            why = ("every repetition missed (%s): outside this run's noise" % noise(name)
                   if lo is not None else "no explanation holds on this run's figures")
    GOALS.append((exp, name, text, fmt(name), seed, status, why))
    return status


def not_applicable(exp, name, text, seed, why):
    """a goal whose figure cannot exist in this run: fails, says why"""
    GOALS.append((exp, name, text, "n/a", seed, "**not applicable**", why))


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
     "85.2 % (merged commit, 8 CPUs)")
goal("engine", "engine.stock_speedup.t2", ">=", 2.0, "stock over no stock at T=2 >= 2", "-")
goal("engine", "engine.bytes_per_page", "<=", 16, "descriptor bytes per page <= 16", "-")

# --- B1 ---------------------------------------------------------------------
md.append("## B1: watermarks and throttled direct reclaim (seed 000, Ying Han 2011)\n")
step_note("wmark")
md.append("Setup: `bench/bench_wmark.c`, replays in simulated time in 2.6.24's era: a build of "
          "256 compile units as N jobs in an 800M group on 8 CPUs and 2 nodes. Each unit, in 8 "
          "rounds, reads its source in order and headers at random from a hot 16M set, grows a "
          "35M heap and computes (4.24 s in all on average, the seed's -j4 (User + System) / 256, "
          "0.5x to 1.5x per unit), then writes its 1M object once and frees its heap. The disk is "
          "a 2007 desktop disk (8 ms a seek, 60 MB/s), with a request queue, the swap cache, the "
          "flusher and 2.6.24's waits (`docs/benchmarks.md`). The tree and headers are read once "
          "before the build (kernbench's warm-up, %s, not timed). Cells the seed did not measure "
          "(700M/300M, automatic watermarks, watermarks or throttle alone) are the model's "
          "predictions.\n" % fmt("wmark.warmup_ms", 1))
configs = ["nowmark", "nowmark_throttle", "auto", "auto_throttle", "790_760",
           "790_760_throttle", "700_300", "700_300_throttle"]
rows = []
for n in ("j4", "j32"):
    for c in configs:
        measured = c in ("nowmark", "790_760_throttle")
        rows.append([n, c if measured else c + " (prediction)", fmt("wmark.completion_ms.%s.%s" % (n, c)),
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
md.append("The regime: whether the model's -j32 build is in the seed's conditions. None of "
          "these figures chose a parameter (the CPU time per unit came from -j4's, so "
          "`cpu_busy_pct.j4` is not a check); the seed's are from its kernbench summary and its "
          "`vmstat -n 60` (si, so, bi in KB/s, wa), before and after the patches.\n")
table(["figure", "ours (nowmark)", "ours (790M/760M + throttle)", "seed before", "seed after"], [
    ["CPU busy, % of 8 CPUs (`cpu_busy_pct.j32`)", fmt("wmark.cpu_busy_pct.j32.nowmark", 1),
     fmt("wmark.cpu_busy_pct.j32.790_760_throttle", 1), "44.0 % (351.7 of 800)",
     "67.2 % (537.7 of 800)"],
    ["-j32 time over -j4's (`j32_over_j4.nowmark`)", fmt("wmark.j32_over_j4.nowmark"), "-",
     "1.330 (354.0 / 266.1 s)", "0.870 (232.3 / 267.0 s)"],
    ["swap-out (`swapout_mb_per_s.j32`)", fmt("wmark.swapout_mb_per_s.j32.nowmark", 2),
     fmt("wmark.swapout_mb_per_s.j32.790_760_throttle", 2), "3.9-32.4 MB/s, mostly 15-31",
     "8.2-32.4 MB/s"],
    ["swap-in (`swapin_mb_per_s.j32`)", fmt("wmark.swapin_mb_per_s.j32.nowmark", 2),
     fmt("wmark.swapin_mb_per_s.j32.790_760_throttle", 2), "0.03-0.52 MB/s", "0.01-0.35 MB/s"],
    ["disk reads (`read_mb_per_s.j32`)", fmt("wmark.read_mb_per_s.j32.nowmark", 2),
     fmt("wmark.read_mb_per_s.j32.790_760_throttle", 2), "0.32-1.18 MB/s", "0.41-1.28 MB/s"],
    ["jobs' time waiting for I/O (`iowait_pct.j32`)", fmt("wmark.iowait_pct.j32.nowmark", 1),
     fmt("wmark.iowait_pct.j32.790_760_throttle", 1), "wa 12-59 %", "wa 3-36 %"],
    ["reclaim CPU (`reclaim_cpu_ms.j32`; seed: System time)", fmt("wmark.reclaim_cpu_ms.j32.nowmark"),
     fmt("wmark.reclaim_cpu_ms.j32.790_760_throttle"), "154.6 s (-j4: 70.1 s)", "116.8 s"],
    ["reclaim CPU with the patches over without (`reclaim_cpu_ratio.j32.790_760_throttle`)", "-",
     fmt("wmark.reclaim_cpu_ratio.j32.790_760_throttle"), "-", "0.756 (System time)"],
])


def why_b1():
    # the mechanism: the build waits on the disk's reads, not on reclaim:
    # it swaps out a fraction of the seed's, reclaim costs next to nothing,
    # so what the patches cut (reclaim's waits and CPU) is not its time
    # (a miss the other way, faster than the goal, is not this)
    ratio = R.get("wmark.completion_ratio.j32.790_760_throttle")
    io = R.get("wmark.iowait_pct.j32.nowmark")
    nap = R.get("wmark.nap_pct.j32.nowmark")
    so = R.get("wmark.swapout_mb_per_s.j32.nowmark")
    si = R.get("wmark.swapin_mb_per_s.j32.nowmark")
    rd = R.get("wmark.read_mb_per_s.j32.nowmark")
    rc = R.get("wmark.reclaim_cpu_ms.j32.nowmark")
    t = R.get("wmark.completion_ms.j32.nowmark")
    a, b = R.get("wmark.disk_reads.j32.nowmark"), R.get("wmark.disk_reads.j32.790_760_throttle")
    if None in (ratio, io, nap, so, si, rd, rc, t, a, b) or ratio <= 0.80 or io - nap < 50 or \
            so >= 15 or rc >= 0.01 * t or si > 0.1 * rd:
        return None
    return ("the build waits on the disk (iowait %s %% of its jobs' time without watermarks, of "
            "which reclaim's congestion naps %s %%) for its reads (%s of them, page cache reclaimed "
            "and read again: swap-ins are %s MB/s of its %s MB/s of reads), not on reclaim: it "
            "swaps out %s MB/s to the seed's 15-31 and reclaim's CPU is %s ms of a %s ms build, so "
            "what the patches cut (reclaim's waits and CPU) is not where its time goes; with "
            "watermarks it reads %s times"
            % (num(io, 1), num(nap, 1), num(a), num(si, 2), num(rd, 2), num(so, 2), num(rc, 1),
               num(t, 0), num(b)))


goal("B1", "wmark.completion_ratio.j32.790_760_throttle", "between", (0.60, 0.80),
     "N=32, 790M/760M + throttle: completion 20-40 % faster", "0.656 (354 s -> 232 s)", why_b1)
def why_b1_cpu():
    # the mechanism: the jobs wait on the disk longer than the seed's did,
    # and a waiting job holds no CPU
    busy, io = R.get("wmark.cpu_busy_pct.j32.nowmark"), R.get("wmark.iowait_pct.j32.nowmark")
    if busy is None or io is None or busy >= 35.0 or io <= 59.0:
        return None
    return ("the jobs wait on the disk %s %% of their time, more than the seed's `wa` of 25-59 %%, "
            "for page cache reclaimed and read again (B1's completion goal), and a waiting job "
            "holds no CPU" % num(io, 1))


goal("B1", "wmark.cpu_busy_pct.j32.nowmark", "between", (35.0, 55.0),
     "the regime: N=32 without watermarks keeps the CPUs 35-55 % busy", "44 % (351.7 of 800)",
     why_b1_cpu)
goal("B1", "wmark.j32_over_j4.nowmark", "between", (1.1, 1.7),
     "the regime: N=32 without watermarks takes 1.1-1.7 x N=4's time", "1.33 (354.0 / 266.1 s)")
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
md.append("The direct-only read's allocstall (here %s) is an identity of the model, as the "
          "seed's 159,840 is of the kernel's: every page read past the limit is reclaimed in "
          "batches of 32 (SWAP_CLUSTER_MAX), one stall each, so (20 GiB - 500 MiB) / 4 KiB / 32 "
          "= (5,242,880 - 128,000) / 32 = 159,840. It checks the batch, not the dynamics.\n"
          % fmt("wmark.ying.read.direct.allocstall", 0, False))
goal("B1", "wmark.ying.read_allocstall", "<=", 0, "read: allocstall 0 with background reclaim", "0")
def why_write():
    # the mechanism: the writer is held at the disk's pace by
    # balance_dirty_pages, and background reclaim, never waiting, keeps up
    bg, dr = R.get("wmark.ying.write.bg.steal_bg"), R.get("wmark.ying.write.bg.steal_direct")
    sc = R.get("wmark.ying.write.bg.scan_bg")
    t0, t1 = R.get("wmark.ying.write.direct.mb_per_s"), R.get("wmark.ying.write.bg.mb_per_s")
    if None in (bg, dr, sc, t0, t1) or bg <= 100 * dr or abs(t1 / t0 - 1) >= 0.02:
        return None
    return ("the writer is held by balance_dirty_pages (2.6.39's era) at the disk's pace, %s and %s "
            "MB/s with and without background reclaim, so it dirties pages no faster than the disk "
            "cleans them, and background reclaim, which never waits, keeps the group under its "
            "watermark: it scanned %s pages (the seed's kswapd 10.53 M) and stole %s (the seed's "
            "2.70 M) to direct reclaim's %s; in the seed the writer outran background reclaim"
            % (num(t1, 1), num(t0, 1), num(sc), num(bg), num(dr)))


goal("B1", "wmark.ying.write_direct_share_pct", "between", (45.0, 75.0),
     "write: direct share of steals falls to roughly 50-70 %", "47.4 % / 72.2 %", why_write)
goal("B1", "wmark.ying.write_throughput_ratio", "between", (0.98, 1.02),
     "write: throughput within +-2 %", "1.010 / 1.003", why_write)

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

# --- B2 beside the seed: the 2009 mechanism's costs (issue 23, item 4) -------
md.append("## B2 in modelled time: the 2009 versions, like with like (issue 23)\n")
step_note("b2model")
md.append("Setup: `bench/bench_b2model.c`. The engine moves the same tasks as above and gives "
          "the pages and swap entries it moved; each 2009 version's time is the work seed 2.4 "
          "describes at unit costs read off seed 001's own table (1G column): a page's move "
          "3.090 us (3 Dec batched (1)), a per-page try-charge 0.042 us (19 Nov (1) less it), a "
          "per-page uncharge 3.391 us (19 Nov (2) less (1)), a PTE of the walk 0.076 us (3 Dec "
          "with the walk less without), a swap entry's own work 2.404 us (19 Nov (3)). Versions: "
          "naive (19 Nov), batched (3 Dec; the swap side still uncharged entry by entry), walk "
          "(batched, counted by a page-table walk), deferred (walk, the swap side's uncharges at "
          "the end: 4 Dec 7/7).\n")
rows = []
for c in ("root_00", "00_01", "00_01_swap"):
    rows.append([c] + [fmt("move.model.s_per_gib.%s.%s.1g" % (v, c)) for v in
                       ("naive", "batched", "walk", "deferred")])
table(["case (1 GiB)", "naive (19 Nov)", "batched (3 Dec)", "walk", "deferred (4 Dec 7/7)"], rows)
md.append("Calibrated, identities of the unit costs (not evidence): naive (1) 0.821, (2) 1.71, "
          "(3) 1.62 s; batched 0.81; walk 0.83 (`move.model.naive_2_over_1` %s: seed 2.08 by "
          "construction). Structural: `move.model.batched_2_over_1` %s (one uncharge for the whole "
          "move) and `move.model.linearity` %s (4.06 for linear). Held out: "
          "`move.model.defer_saving_s` %s s for the %s swap entries of the 1G case (seed, 4 Dec "
          "7/7: 1.3 s -> 0.9 s for 1 GiB with about 500 MB in swap). Against the 4 Dec posting "
          "(which also sped up what the model calls a page's move, 0.60 s for (1) where 3 Dec "
          "took 0.81): `move.model.swap_3_over_1` %s (seed 1.48), "
          "`move.model.naive2_over_deferred2` %s (seed 2.85).\n" %
          (fmt("move.model.naive_2_over_1"), fmt("move.model.batched_2_over_1"),
           fmt("move.model.linearity", 2), fmt("move.model.defer_saving_s", 3, False),
           fmt("move.model.swap_entries_1g", 0, False), fmt("move.model.swap_3_over_1"),
           fmt("move.model.naive2_over_deferred2")))


def why_b2_swap():
    v = R.get("move.model.swap_3_over_1")
    if v is None or v >= 1:
        return None
    return ("at 19 Nov's unit costs a swap entry's work (2.40 us) is cheaper than a page's move "
            "(3.09 us), so a task half in swap moves faster (%.3f); the 4 Dec posting's own table "
            "puts its entry at about 4.5 us ((3) 0.89 s = half of (1)'s 0.60 s plus half an "
            "entry's cost), a change in that version's swap path the 19 Nov data cannot show" % v)


def why_b2_naive_over():
    v = R.get("move.model.naive2_over_deferred2")
    if v is None:
        return None
    return ("the model compares the 19 Nov naive (2) with the deferred version at the same unit "
            "costs (%.3f); the seed's 2.85 divides by the 4 Dec posting's 0.60 s, whose other "
            "changes also cut the page's move by a quarter (0.81 -> 0.60 s for (1))" % v)


goal("B2", "move.model.naive_2_over_1", "between", (1.8, 2.4),
     "modelled naive (2)/(1) (calibrated: an identity)", "2.1")
goal("B2", "move.model.batched_2_over_1", "between", (0.9, 1.1),
     "modelled batched (2)/(1)", "1.0")
goal("B2", "move.model.naive2_over_deferred2", "between", (2.5, 3.2),
     "modelled naive (2) over the batched, deferred version", "2.85", why_b2_naive_over)
goal("B2", "move.model.swap_3_over_1", "between", (1.3, 1.7),
     "modelled swap case (3)/(1), deferred version", "1.48", why_b2_swap)
goal("B2", "move.model.defer_saving_s", "between", (0.3, 0.5),
     "held out: what deferring the swap side's uncharges saves, 1G half in swap", "0.4 s")
goal("B2", "move.model.linearity", "between", (3.8, 4.3), "modelled time linear in S", "4.06")

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
def why_b3():
    # the bound: (f) is at most as fast as (a), so f/c is at most a/c
    c = R.get("b3.keeps.c.t2")
    f = R.get("b3.keeps.f.t2")
    if not c or f is None or 1 / c >= 1.86 or f > 1.05:
        return None
    return ("out of reach on this machine: (f) runs at %s of (a), so f/c is at most a/c = %.2f; 1.86 "
            "needs per-page counters costing 46 %% of a fault (c at 0.54 of a; here %s) and contention "
            "growing with the CPUs sharing the counter's line (%s CPUs online)"
            % (num(f), 1 / c, num(c), num(R.get("b3.ncpus_online"))))


goal("B3", "b3.speedup.f_over_c.t2", ">=", 1.86, "(f) over (c) at T=2 >= 1.86", "1.86 (8 CPUs), 3.04 (24)",
     why_b3)
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

# --- B3 in simulated time (issue 23) ----------------------------------------
md.append("### B3 in simulated time: 8 CPUs calibrated, 24 predicted\n")
step_note("b3sim")
md.append("Model (`bench/bench_b3sim.c`): T simulated CPUs run the same loop through the "
          "engine (profile 4.19: a child of the root is not hierarchical; memory and "
          "memory+swap counters), each fault costing an exponential time of mean %s us "
          "(the seed's (a): 40,156,968 faults in 60 s on 8 CPUs), then its operations on "
          "the memcg's shared lines: a css reference taken per charge and dropped per "
          "uncharge (2.6.32's charge path, in (b) to (f)), and one spinlock acquisition "
          "per counter level the engine updates. The reference count's line serves one "
          "atomic at a time, each move costing the hand-off; a ticket spinlock's hand-off "
          "costs the hand-off times the CPUs spinning on it (Boyd-Wickizer et al., "
          "\"Non-scalable locks are dangerous\", 2012). One parameter is fitted: the "
          "hand-off, %s ns, so that (c) at T=8 keeps the seed's 45.9 %% of (a) (here %s); "
          "everything else is held out or predicted.\n"
          % (fmt("b3.sim.fault_base_us", 2, False), fmt("b3.sim.handoff_ns", 0, False),
             fmt("b3.sim.keeps.c.t8")))
rows = []
for v in "abcdef":
    row = [v]
    for t in (1, 2, 4, 8, 16, 24):
        row.append(fmt("b3.sim.keeps.%s.t%d" % (v, t)))
    row += [fmt("b3.sim.ops_per_fault.%s.t8" % v), fmt("b3.sim.spin_pct.%s.t8" % v, 1)]
    rows.append(row)
table(["variant", "T=1 (of a)", "T=2", "T=4", "T=8", "T=16", "T=24",
       "line operations / fault (T=8)", "spinning % (T=8)"], rows)
md.append("Calibrated: (a) sets the fault's cost, (c) at T=8 the hand-off. Held out (T=8): "
          "(b) %s against the seed's 0.913, (d) and (e) below. Predicted: T=24.\n"
          % fmt("b3.sim.keeps.b.t8"))
def why_b3sim_d():
    d, c = R.get("b3.sim.keeps.d.t8"), R.get("b3.sim.keeps.c.t8")
    if d is None or c is None or d <= 0.75:
        return None
    return ("batched uncharge leaves (d) two reference-count operations and two counter "
            "locks a fault against (c)'s two and four; the model's locks cost (d) only what "
            "their hand-offs do (%s of a), while the seed's (d) kept 0.676: the false sharing "
            "of the counters with the reference count's line (one 64-byte line holds "
            "css.refcnt and res.usage in 2.6.32) is not modelled" % num(d))
def why_b3sim_t24():
    f, c = R.get("b3.sim.keeps.f.t24"), R.get("b3.sim.keeps.c.t24")
    if not f or not c or f / c <= 3.5:
        return None
    return ("at 24 CPUs the model's (c) collapses (%s of a: each hand-off of its counter "
            "locks waits for every spinning CPU, growth calibrated at 8) while (f) is held by "
            "the reference count's line alone (%s); Balbir's (c) kept a third of (f)'s fault "
            "rate, so the 24-way machine's hand-offs grew more slowly with the waiters than "
            "the linear model calibrated at 8 CPUs, and something else (mmap_sem, the zone "
            "locks: not modelled) held (f)" % (num(c), num(f)))
goal("B3", "b3.sim.speedup.f_over_c.t8", "between", (1.67, 2.05),
     "(sim, calibrated) (f) over (c) at T=8 in 1.67-2.05", "1.86")
goal("B3", "b3.sim.keeps.d.t8", "between", (0.61, 0.75),
     "(sim, held out) (d) keeps 0.61-0.75 of (a) at T=8", "0.676", why_b3sim_d)
goal("B3", "b3.sim.keeps.e.t8", "between", (0.80, 0.90),
     "(sim, held out) (e) keeps 0.80-0.90 of (a) at T=8", "0.852")
goal("B3", "b3.sim.speedup.f_over_c.t24", "between", (2.5, 3.5),
     "(sim, predicted) (f) over (c) at T=24 in 2.5-3.5", "3.04 (Balbir, 24-way)", why_b3sim_t24)
goal("B3", "b3.sim.overcharge_bound_held", "true", None,
     "(sim) over-charge never above ncpus x (batch - 1)", "bound by construction")
md.append("Cycles per fault, (f) over (c) at T=24: %s (Balbir: 67,771 / 199,794 = 0.34). "
          "Largest over-charge in the simulated stocks: %s pages against %s.\n"
          % (fmt("b3.sim.cycles_per_fault.f_over_c.t24"), fmt("b3.sim.max_overcharge_pages", 0, False),
             fmt("b3.sim.overcharge_bound_pages", 0, False)))

# --- B4 ---------------------------------------------------------------------
md.append("## B4: scan efficiency with and without the immediate-reclaim list (seed 002)\n")
step_note("scan")
md.append("Setup: `bench/bench_scan.c`, replays in simulated time: a fast clean-page "
          "producer and a writer on a writeback device 100x slower, about 20 % of the "
          "inactive file list dirty, direct reclaim not writing file pages, 3.2's era "
          "with transparent huge pages: from 2 s an anon region the size of RAM faulted "
          "in 2M at a time (compaction, reclaim for the order, fallback), 4 times. "
          "Variants (a) dirty pages rotated "
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
rows = []
for v in "abcd":
    k = "b4.%s." % v
    rows.append([v, fmt(k + "thp_alloc"), fmt(k + "thp_fallback"), fmt(k + "compact_stall"),
                 fmt(k + "compact_success"), fmt(k + "compact_fail"), fmt(k + "pages_moved")])
table(["variant", "THP fault alloc", "THP fault fallback", "compaction stalls",
       "compaction success", "compaction failures", "pages moved"], rows)
md.append("Seed (freemore, ~b, 5 runs): THP fault alloc 753, fallback 4263 (85 %% fall back; "
          "here %s %%); compaction stalls 623, success 60, failures 563, pages moved 243185.\n"
          % fmt("b4.thp_fallback_pct.b", 1, False))
def why_b4():
    # the mechanism: what (c) still scans is mostly pages reclaimed at first
    # sight, which no list can spare
    eff = R.get("b4.c.direct_efficiency_pct")
    if eff is None or eff < 50:
        return None
    return ("the list removes what it should (kept pages met %s times with it, %s without), but "
            "%s %% of what (c) scans directly is reclaimed at first sight: the huge-page faults "
            "mostly succeed (%s %% fall back, the seed's 85 %%), and reclaim for the order finds "
            "the 400 MB/s reader's clean page cache at the tail, not only the dirty pages; the "
            "seed's reclaim scanned 1.76 G pages for 3.6 M"
            % (fmt("b4.c.immediate", 0, False), fmt("b4.b.immediate", 0, False), num(eff, 0),
               fmt("b4.thp_fallback_pct.b", 1, False)))


goal("B4", "b4.direct_scanned_cut_pct.c_vs_b", ">", 90.0, "(c) cuts direct scanning by > 90 % vs (b)",
     "93.5 %", why_b4)
if R.get("b4.c.listed") == 0:
    not_applicable("B4", "b4.rescued_pct", "rescued <= 0.1 % of pages sent to the immediate list",
                   "0.08 %", "(c) put no page on the immediate list (b4.c.listed 0): nothing to rescue, "
                   "so the list was never exercised")
else:
    goal("B4", "b4.rescued_pct", "<=", 0.1, "rescued <= 0.1 % of pages sent to the immediate list",
         "0.08 %")
def why_b4_regime():
    # the mechanism: (b)'s direct reclaim is order 0 beside a fast clean
    # reader, so it finds clean pages and stops at its 32; the seed's
    # scanned for huge pages, over dirty pages, and reclaimed almost none
    eff, dirty = R.get("b4.direct_efficiency_pct.b"), R.get("b4.direct_dirty_share_pct.b")
    if eff is None or dirty is None or eff < 50 or dirty > 50:
        return None
    return ("(b)'s direct reclaim reclaims %s %% of what it scans and meets a dirty or writeback "
            "page in %s %% of its scans: its compaction gives a block in %s %% of its stalls "
            "(the seed's 10 %%) and seldom fails outright, since every page here is movable "
            "and clean page cache abounds; when a fault reclaims for the order, it finds the "
            "400 MB/s reader's clean pages at the tail; the seed's memory also held "
            "unmovable kernel pages (slab, page tables) in its pageblocks, which the engine "
            "does not have, so its compaction failed and reclaim for huge pages (2 << 9 pages, "
            "then until compaction could run) scanned 1.76 G pages for 3.6 M, 93 %% of them "
            "dirty or under writeback"
            % (num(eff, 1), num(dirty, 1), fmt("b4.compact_success_pct.b", 1, False)))


goal("B4", "b4.direct_dirty_share_pct.b", ">=", 85.0,
     "the regime: most of (b)'s direct scans meet dirty or writeback pages", "93 %", why_b4_regime)
goal("B4", "b4.direct_efficiency_pct.b", "<=", 5.0,
     "the regime: (b)'s direct reclaim frees few of the pages it scans", "0.2 %", why_b4_regime)
goal("B4", "b4.direct_scanned_cut_pct.d_vs_b", "between", (-5.0, 5.0),
     "(d), per-node dirty limits, alone does not cut (b)'s direct scanning",
     "-1.8 % (pzd scanned 1796314840, freemore 1764930052)")
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
md.append("## B5: reclaim balance across zones of unequal size (seed 004)\n")
step_note("nodes")
md.append("Setup: `bench/bench_nodes.c`, replays in simulated time through the engine's zoned "
          "allocator and kswapd (`zones=`, `src/engine/zone.c`): the seed's mem=64M, ZONE_NORMAL "
          "48M (tried first) and ZONE_DMA 16M, 2.6.3's watermarks (min_free 1024 KiB: min 192 "
          "and 64 pages, low twice, high three times), the incremental-min fallback, kswapd "
          "woken at pages_low; swap on a disk of 8 ms a seek and 60 MB/s. A build of about 30 "
          "units in 4, 5, 10 or 15 jobs (-j5/-j10/-j15: footprint 2, 4, 6 times memory) on a UP "
          "and a 2-way machine; qsbench's stand-in (one task, a 350M array touched at random on "
          "a 2-way 256M machine). Policies: fixed (2.6.3), batching (zone-balancing-batching), "
          "proportional (the priority-shift accumulators). A steal ratio with no DMA steal is a "
          "lower bound (DMA counted as 1). Nothing in B5 was fitted: the watermarks, batches and "
          "policies are 2004's code, the costs B1's, so every figure below is a prediction of "
          "the mechanisms.\n")
rows = []
for pol in ("fixed", "batching", "proportional"):
    for m in ("up", "2way"):
        for w in ("j4", "j5", "j10", "j15"):
            k = "b5.%s.%s.%s." % (pol, m, w)
            rows.append([pol, m, w, fmt(k + "steal_large"), fmt(k + "steal_small"),
                         fmt(k + "steal_ratio", 2), fmt(k + "allocstall"), fmt(k + "kswapd_pct"),
                         fmt(k + "completion_ms", 1)])
    k = "b5.%s.qsbench." % pol
    rows.append([pol, "2way 256M", "qsbench", fmt(k + "steal_large"), fmt(k + "steal_small"),
                 fmt(k + "steal_ratio", 2), fmt(k + "allocstall"), fmt(k + "kswapd_pct"),
                 fmt(k + "completion_ms", 1)])
table(["policy", "machine", "workload", "stolen, NORMAL", "stolen, DMA", "NORMAL : DMA",
       "allocstall", "kswapd's share", "completion (ms)"], rows)
md.append("Build time over 2.6.3's (batching over fixed), Nick's UP runs: -j5 %s, -j10 %s, -j15 %s "
          "(seed, 2.6.3-mm3 over 2.6.3: 0.98, 0.97, 0.74); qsbench proportional over fixed %s.\n" %
          (fmt("b5.up.j5.batching_over_fixed"), fmt("b5.up.j10.batching_over_fixed"),
           fmt("b5.up.j15.batching_over_fixed"), fmt("b5.qsbench.proportional_over_fixed")))
md.append("Seed (Andrew Morton, make -j4 vmlinux, 2-way, mem=64m): DMA:NORMAL 1:51 and 1:24 before, "
          "1:4 with zone-balancing-batching (ideal 1:3), build 7:46 -> 4:27; the batching "
          "regressed qsbench ~2:07 -> 2:36-2:43 (+25 %).\n")


def why_b5_batching():
    # the mechanism: kswapd makes (nearly) every steal, and its pass asks
    # each zone for its batch, so the ratio is the batches' 3
    ks, ratio = R.get("b5.batching.2way.j4.kswapd_pct", 0), R.get("b5.steal_ratio.batching")
    if ks < 90 or ratio is None or abs(ratio / 3 - 1) > 0.05:
        return None
    return ("kswapd made %s %% of the -j4 run's steals (allocstall %s), and a kswapd pass asks each "
            "zone for exactly its batch, 24 and 8: the ratio is within 5 %% of the batches' 3 "
            "(here %s). The "
            "seed's 1:4 needs direct reclaim, which tries NORMAL first, to make a larger share: "
            "in 2004, kswapd fell behind the build, in this model it does not" %
            (num(ks, 1), fmt("b5.batching.2way.j4.allocstall"), num(ratio)))


def why_b5_qsbench():
    # the mechanism: uniform random touches make every victim equal, so the
    # policies steal about as many pages and take about as long
    b, p = R.get("b5.qsbench.batching_over_fixed"), R.get("b5.qsbench.proportional_over_fixed")
    st = [(R.get("b5.%s.qsbench.steal_large" % k) or 0) + (R.get("b5.%s.qsbench.steal_small" % k) or 0)
          for k in ("fixed", "batching", "proportional")]
    if b is None or p is None or not st[0] or abs(b - 1) > 0.05 or abs(p - 1) > 0.05 or \
            max(abs(x / st[0] - 1) for x in st) > 0.05:
        return None
    return ("the stand-in touches its array uniformly at random, so one victim is as good as "
            "another and how reclaim spreads over the zones cannot change its faults: the policies "
            "steal within 5 %% of one another (%s, %s, %s pages) and take within 5 %% of the time "
            "(batching %.3f, proportional %.3f of fixed); qsbench's quicksort has the locality "
            "this lacks" % (num(st[0]), num(st[1]), num(st[2]), b, p))


def why_b5_j4():
    # the mechanism: batching steals several times the pages 2.6.3's policy
    # does, and every page stolen from this loop comes back as a read
    fl, fs = R.get("b5.fixed.2way.j4.steal_large"), R.get("b5.fixed.2way.j4.steal_small")
    bl, bs = R.get("b5.batching.2way.j4.steal_large"), R.get("b5.batching.2way.j4.steal_small")
    fa, ba = R.get("b5.fixed.2way.j4.allocstall"), R.get("b5.batching.2way.j4.allocstall")
    if None in (fl, fs, bl, bs, fa, ba) or bl + bs <= 1.5 * (fl + fs):
        return None
    return ("batching steals %.0f pages to 2.6.3's %.0f: its kswapd takes every zone's batch while "
            "any zone is short, where 2.6.3's names only the zones under pages_high and its direct "
            "reclaim stops at the first zone that gave 32; this loop of sequential writes and "
            "random re-reads brings every stolen page back as a read (allocstall: 2.6.3 %.0f, "
            "batching %.0f). In the seed 2.6.3 was the slower (7:46 against 4:27); what made it "
            "slow there does not show in this model" % (bl + bs, fl + fs, fa, ba))


goal("B5", "b5.steal_ratio.fixed", ">=", 10, "2.6.3's policy skews toward NORMAL (make -j4, 2-way)",
     "24-51")
goal("B5", "b5.steal_ratio.batching", "between", (3, 5), "zone-balancing-batching's NORMAL:DMA",
     "4", why_b5_batching)
goal("B5", "b5.steal_ratio.proportional", "between", (2.5, 3.5),
     "the accumulators' NORMAL:DMA near the sizes' 3", "ideal 3")
goal("B5", "b5.qsbench.batching_over_fixed", ">=", 1.10, "batching slows qsbench (the regression)",
     "1.25", why_b5_qsbench)
goal("B5", "b5.j4_2way.batching_over_fixed", "between", (0.45, 0.80),
     "batching's make -j4 time over 2.6.3's (2-way)", "0.57", why_b5_j4)
data = ""
for pol in ("fixed", "batching", "proportional"):
    for k in (1, 3, 7):
        data += "%d %s\n" % (k, R.get("b5.steal_ratio.%s.size%d" % (pol, k), 0))
    data += "\n\n"
data_ideal = "1 1\n3 3\n7 7\n"
plot("b5_ratio", "B5: steal ratio (large:small) against the size ratio (make -j4, 2-way)",
     "set xlabel 'size ratio large:small'\nset ylabel 'steal ratio large:small'\n"
     "set logscale y\nset xrange [0:8]\n"
     "plot 'b5.dat' index 0 using 1:2 with linespoints title 'fixed (2.6.3; DMA 0 as 1)', "
     "'' index 1 using 1:2 with linespoints title 'batching', "
     "'' index 2 using 1:2 with linespoints title 'accumulators', "
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
    ["`scale.root_stat_over_leaf.unchanged`", spread("scale.root_stat_over_leaf.unchanged", 2), "<= 2"],
    ["`scale.root_usage_over_leaf.unchanged`", spread("scale.root_usage_over_leaf.unchanged", 2), "<= 2"],
    ["`scale.root_stat_over_leaf.changed1pct` (%s groups changed)" % fmt("scale.changed_groups", 0, False),
     spread("scale.root_stat_over_leaf.changed1pct", 2), "proportional to the groups changed"],
    ["`scale.root_usage_over_leaf.changed1pct`", spread("scale.root_usage_over_leaf.changed1pct", 2), ""],
    ["`scale.daemon_rss_after_rmdir_ratio`", fmt("scale.daemon_rss_after_rmdir_ratio", 2), "<= 1.10"],
    ["`scale.daemon_anon_after_rmdir_ratio` (anonymous pages alone)",
     fmt("scale.daemon_anon_after_rmdir_ratio", 2), ""],
    ["`scale.daemon_threads.start` / `.after_rmdir`", fmt("scale.daemon_threads.start", 0) + " / " +
     fmt("scale.daemon_threads.after_rmdir", 0), ""],
    ["`scale.flat_mkdir_us.first1000` / `.last1000` (one directory of %s)"
     % fmt("scale.flat_groups", 0, False),
     fmt("scale.flat_mkdir_us.first1000", 1) + " / " + fmt("scale.flat_mkdir_us.last1000", 1), ""],
    ["`scale.flat_mkdir_last_over_first`, 5 rounds", spread("scale.flat_mkdir_last_over_first", 2),
     "<= 1.25"],
    ["`scale.flat_rmdir_us`", fmt("scale.flat_rmdir_us", 1), ""],
])
goal("scale", "scale.root_stat_over_leaf.unchanged", "<=", 2.0,
     "root memory.stat read <= 2x a leaf's at 65,534 groups", "-")
goal("scale", "scale.root_usage_over_leaf.unchanged", "<=", 2.0,
     "root memory.usage_in_bytes read <= 2x a leaf's", "-")
def why_rss():
    # the mechanism: the threads the load added keep their stacks' touched
    # pages and 1 MiB request buffers: at most about 1.25 MiB each
    r0, r2 = R.get("scale.daemon_rss_kb.start"), R.get("scale.daemon_rss_kb.after_rmdir")
    t0, t2 = R.get("scale.daemon_threads.start"), R.get("scale.daemon_threads.after_rmdir")
    if None in (r0, r2, t0, t2) or t2 <= t0 or r2 - r0 > (t2 - t0) * 1280:
        return None
    return ("the %d FUSE threads the load added (%d -> %d) keep their stacks' touched pages and "
            "their 1 MiB request buffers: %d kB more, at most 1,280 kB a thread"
            % (t2 - t0, t0, t2, r2 - r0))


goal("scale", "scale.daemon_rss_after_rmdir_ratio", "<=", 1.10,
     "daemon RSS after removing every group within 10 % of the start", "-", why_rss)
goal("scale", "scale.flat_mkdir_last_over_first", "<=", 1.25,
     "one flat directory: the last thousand mkdirs within 25 % of the first", "-")
step_note("mirror")
md.append("%s idle mirrored processes (1 MiB of their own and a shared 64 MiB file each): "
          "`mirror.cpu_pct.idle` %s %% of a core (the daemon's threads' schedstat, median and range "
          "of 5 windows); 10 processes allocating 64 MiB/s: "
          "`mirror.cpu_pct.active10` %s %%; usage against what the idle ones hold: "
          "`mirror.usage_error_pct.idle` %s; a process allocating 1 GiB/s into 256M got "
          "`mirror.overshoot_mib.1gps` %s MiB past the limit before its kill (median and range of 5); "
          "an idle process "
          "with 64 MiB killed: its charges released after `mirror.exit_release_ms` %s (to the "
          "group's usage threshold event, median and range of 5).\n" %
          (fmt("mirror.idle_processes", 0, False), spread("mirror.cpu_pct.idle", 2),
           spread("mirror.cpu_pct.active10", 1),
           fmt("mirror.usage_error_pct.idle", 1), spread("mirror.overshoot_mib.1gps", 0),
           spread("mirror.exit_release_ms", 1)))
goal("scale", "mirror.cpu_pct.idle", "<=", 1.0, "%s idle mirrored processes <= 1 %% of a core"
     % fmt("mirror.idle_processes", 0, False), "-")
goal("scale", "mirror.overshoot_mib.1gps", "<=", 8,
     "1 GiB/s into 256M: at most 8 MiB over (issue 25)", "-")
goal("scale", "mirror.cpu_pct.active10", "<=", 5.0,
     "10 processes allocating 64 MiB/s: at most 5 % of a core (issue 25)", "-")
goal("scale", "mirror.exit_release_ms", "<=", 100, "an exit's charges released within 100 ms", "-")
if R.get("mirror.pcache_write_ratio") is not None:
    md.append("Page cache from the kernel's events: 1 GiB written into tmpfs by `dd` from a group "
              "took `mirror.pcache_write_ratio` %s of the time it took from the root (7 rounds, "
              "the order alternating); the daemon charged it with `mirror.pcache_cpu_ms_per_gib` "
              "%s of CPU per GiB.\n" %
              (spread("mirror.pcache_write_ratio", 3), spread("mirror.pcache_cpu_ms_per_gib", 1)))
goal("scale", "mirror.pcache_write_ratio", "<=", 1.25,
     "page cache from events: a writer in a group within 25 % of one in the root (issue 25)", "-")
if R.get("mirror.host_fault_ratio") is not None:
    md.append("What the tracer's programs cost page faults (they run in the faulting task): a "
              "process of the root faulted 64 MiB in `mirror.host_fault_ratio` %s of the time it "
              "took with no daemon, and a process in a group with a limit (its alarm armed) "
              "`mirror.group_fault_ratio` %s of a process of the root's (best of 10 each, 7 "
              "rounds, the order alternating).\n" %
              (spread("mirror.host_fault_ratio", 3), spread("mirror.group_fault_ratio", 3)))
step_note("fuse")
md.append("Reads through memcgfs over a bare FUSE server (`bench/fuse_floor.c`) with the same "
          "mount options and loop, 7 interleaved rounds, median (min-max): "
          "`fuse.read_over_floor.usage` %s, `.stat` %s, open+read+close %s; the servers' own "
          "CPU per operation (schedstat): %s, %s, %s; the floor's pread %s.\n" %
          (spread("fuse.read_over_floor.usage"), spread("fuse.read_over_floor.stat"),
           spread("fuse.open_read_close_over_floor.usage"), spread("fuse.cpu_over_floor.read.usage"),
           spread("fuse.cpu_over_floor.read.stat"), spread("fuse.cpu_over_floor.open_read_close.usage"),
           fmt("fuse.floor_pread_us", 2)))
goal("scale", "fuse.read_over_floor.usage", "<=", 1.05, "leaf usage pread <= 1.05x the FUSE floor", "-")
md.append("Names and attributes the kernel keeps (`-o cache_timeout`, issue 27): requests the daemon "
          "received for a warm `cat a/b/memory.stat` `fuse.requests.cat_stat` %s and `mkdir a/b/c` "
          "`fuse.requests.mkdir` %s (the bare server, same timeout: %s and %s); open, read to the end "
          "and close of `memory.stat` in each of 1,000 groups (10 x 10 x 10) over the bare server's "
          "`fuse.sweep_over_floor` %s (the floor %s a file), and a mount with `cache_timeout=0` over "
          "the cached one `fuse.sweep_speedup_vs_uncached` %s; 500 mkdirs a round over the bare "
          "server's `scale.mkdir_over_floor` %s.\n" %
          (fmt("fuse.requests.cat_stat", 0, False), fmt("fuse.requests.mkdir", 0, False),
           fmt("fuse.requests_floor.cat_stat", 0, False), fmt("fuse.requests_floor.mkdir", 0, False),
           spread("fuse.sweep_over_floor"), fmt("fuse.sweep_floor_us_per_file", 1),
           spread("fuse.sweep_speedup_vs_uncached"), spread("scale.mkdir_over_floor")))

def floor_requests(what):
    """A request count above the goal that the bare server, given the same
    timeouts, received too: what FUSE itself asks for."""
    ours, flo = R.get("fuse.requests." + what), R.get("fuse.requests_floor." + what)
    if ours is None or flo is None or ours > flo:
        return None
    return ("the bare server received %d as well: after a direct read the kernel marks the atime "
            "stale (fs/fuse/file.c, fuse_invalidate_atime) and cat's fstat asks for it again"
            % flo if what == "cat_stat" else "the bare server received %d as well" % flo)

goal("scale", "fuse.requests.cat_stat", "<=", 4, "a warm cat of memory.stat: at most 4 requests", "-",
     lambda: floor_requests("cat_stat"))
goal("scale", "fuse.requests.mkdir", "<=", 2, "a warm mkdir: at most 2 requests", "-",
     lambda: floor_requests("mkdir"))
goal("scale", "fuse.sweep_over_floor", "<=", 1.10, "a sweep of 1,000 memory.stat <= 1.10x the floor", "-")
goal("scale", "fuse.sweep_speedup_vs_uncached", ">=", 2, "the sweep cached >= 2x faster than uncached", "-")
goal("scale", "scale.mkdir_over_floor", "<=", 1.3, "mkdir <= 1.3x the floor's", "-")
step_note("state")
md.append("The state file at 10,000 groups: `memory.limit_in_bytes` writes across "
          "`state.write_compactions.g10000` %s compactions of its journal (made in the background): "
          "median `state.write_p50_us.g10000` %s, 99th percentile `state.write_p99_us.g10000` %s, "
          "slowest `state.write_max_us.g10000` %s.\n" %
          (fmt("state.write_compactions.g10000", 0, False), fmt("state.write_p50_us.g10000", 1),
           fmt("state.write_p99_us.g10000", 1), fmt("state.write_max_us.g10000", 1)))
goal("scale", "state.write_p99_us.g10000", "<=", 5000,
     "limit writes at 10,000 groups across compactions: p99 <= 5 ms (issue 27)", "-")

# --- closing ------------------------------------------------------------------
md.append("## Every goal\n")
table(["experiment", "figure", "goal", "ours", "seed", "status", "why missed"],
      [[g[0], "`%s`" % g[1], g[2], g[3], g[4], g[5], g[6]] for g in GOALS])
count = {}
for g in GOALS:
    count[g[5]] = count.get(g[5], 0) + 1
md.append("%s. A goal missed \"within noise\" was met by some repetition of this run; a "
          "\"regression\" was missed by every one (or has no range and no explanation that holds "
          "on this run's figures). The models and the longer account of each miss: "
          "`docs/benchmarks.md`.\n" % ", ".join("%d %s" % (n, k.replace("*", ""))
                                                for k, n in sorted(count.items())))

# figures in simulated time against the committed run's: they have no
# noise, so any change is the code's
md.append("## Simulated-time figures against the committed run\n")
if not BASE:
    md.append("*No committed run (`docs/bench/results.tsv`) to compare with.*\n")
else:
    changed = [(k, BASE.get(k), R.get(k)) for k in sorted(set(R) | set(BASE))
               if k.startswith(SIMULATED) and BASE.get(k) != R.get(k)]
    if QUICK or R.get("bench.quick") != BASE.get("bench.quick"):
        md.append("*Not compared: this run and the committed one differ in mode (quick or full).*\n")
    elif not changed:
        md.append("Every figure in simulated time (%d) equals the committed run's.\n"
                  % sum(1 for k in R if k.startswith(SIMULATED)))
    else:
        table(["figure", "committed", "this run"],
              [["`%s`" % k, num(a), num(b)] for k, a, b in changed])

if QUICK:
    md.insert(1, "**A quick run (`BENCH_QUICK=1`): smaller sizes and fewer rounds; its figures "
                 "and verdicts are not the benchmark's.**\n")
with open(os.path.join(OUT, "report.md"), "w") as f:
    f.write("\n".join(md))
# the goals, for tests and scripts: figure, status, value
with open(os.path.join(OUT, "goals.tsv"), "w") as f:
    for g in GOALS:
        f.write("%s\t%s\t%s\n" % (g[1], g[5].replace("*", ""), g[3]))
print("bench: wrote %s (%d plots)" % (os.path.join(OUT, "report.md"), len(plots_made)),
      file=sys.stderr)
