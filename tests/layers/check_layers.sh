#!/usr/bin/env bash
# check_layers.sh: the include rules of docs/design.md ("Layers"), checked
# on every #include "..." under src/, tests/ and bench/. Three floors: the
# programs (src/*.c, src/daemon/, src/bridge/), then the file surface and
# the charge sources side by side with what they share, then the engine.
#   - src/engine/ includes only itself, and no system header of FUSE;
#   - src/util/ (the log, the size parser) and src/os/ (/proc, pidfd
#     watches, the watchdog process) include only themselves (os/ may use
#     util/, and the page-cache tracer the two headers the build makes
#     for it: the kernel's types, vmlinux.h, and its skeleton,
#     pcache.skel.h); every floor above the engine may include them;
#   - above the engine the one engine header included is engine/engine.h,
#     the engine's public face; only the engine's white-box tests
#     (tests/unit, tests/fuzz) include its other headers;
#   - src/source/ (the charge sources) includes engine/engine.h, os/,
#     util/ and its own, never src/fs/ nor the journal;
#   - src/fs/ (the file surface) includes engine/engine.h, os/, util/,
#     its own and, of the sources, only their interface source/source.h;
#     it tells the journal of changes through a hook (struct
#     cgfs_journal), so it never includes it;
#   - src/journal/ (the state file) sits above the file surface: it may
#     include fs/ as well;
#   - src/replay/ (replay's own engine) includes engine/engine.h, util/,
#     the workload language (source/workload.h) and its own;
#   - only src/memcgfs.c, src/daemon/supervisor.c and src/daemon/ops.[ch]
#     include a FUSE header (and bench/fuse_floor.c, the bare server the
#     benchmark reads beside us, and src/bridge/standin.c, memcgfs-run's
#     server of the stand-in hierarchies), and only they include
#     daemon/ops.h;
#   - src/bridge/ (memcgfs-run's modules, a program of the top floor)
#     includes only itself: it knows memcgfs only through the mount's
#     files, never through the engine, the file surface or the sources;
#     and only src/memcgfs-run.c and the unit tests include src/bridge/.
# Inside the engine, every file has a rank (ENGINE_RANKS below, drawn in
# docs/design.md): a file calls functions of other modules only where
# they are defined in a file of a lower rank, and includes only headers of
# a lower rank, so no two modules call each other. A module is a .c and
# its .h (internal.h is memcg's); a header may rank below its .c when
# lower files need its types. Calls are read from function bodies (names
# followed by "(" inside braces, comments and strings left out), against
# the non-static functions and the static inline ones of headers defined
# in src/engine/; a file missing from the table is a violation too.
# Last, no function in src/ is longer than 100 lines (its signature to its
# closing brace), and every "§N.M" a file under src/ cites names a heading
# of docs/semantics.md ("## §N.M ..."), the repository's own statement of
# the kernel behaviour the code follows.
# Prints each violation and the count; exit 1 if any.
set -u
cd "$(dirname "$0")/../.."
bad=0
violation() { echo "layers: $1: $2"; bad=$((bad + 1)); }
while IFS= read -r line; do
	file=${line%%:*}
	rest=${line#*:}
	inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<< "$rest")
	sys=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' <<< "$rest")
	if [ -n "$sys" ]; then
		case $sys in
		fuse*|fuse3/*)
			case $file in src/memcgfs.c|src/daemon/supervisor.c|src/daemon/ops.c|src/daemon/ops.h|bench/fuse_floor.c|src/bridge/standin.c) ;; *) violation "$file" "includes <$sys>" ;; esac ;;
		esac
		continue
	fi
	[ -n "$inc" ] || continue
	if [ "$inc" = daemon/ops.h ]; then
		case $file in src/memcgfs.c|src/daemon/ops.c) ;; *) violation "$file" "includes daemon/ops.h (FUSE)" ;; esac
	fi
	case $inc in
	bridge/*)
		case $file in src/bridge/*|src/memcgfs-run.c|tests/unit/*) ;; *) violation "$file" "includes $inc (memcgfs-run's)" ;; esac ;;
	engine/engine.h) ;;
	engine/*)
		case $file in src/engine/*|tests/unit/*|tests/fuzz/*) ;; *) violation "$file" "includes $inc (only engine/engine.h is the engine's face)" ;; esac ;;
	esac
	case $file in
	src/bridge/*)
		case $inc in bridge/*) ;; *) violation "$file" "memcgfs-run's module includes $inc" ;; esac ;;
	src/engine/*)
		case $inc in engine/*) ;; *) violation "$file" "the engine includes $inc" ;; esac ;;
	src/util/*)
		case $inc in util/*) ;; *) violation "$file" "a utility includes $inc" ;; esac ;;
	src/os/*)
		case $inc in os/*|util/*|vmlinux.h|pcache.skel.h) ;; *) violation "$file" "an OS helper includes $inc" ;; esac ;;
	src/source/*)
		case $inc in engine/*|source/*|os/*|util/*) ;; *) violation "$file" "a source includes $inc" ;; esac ;;
	src/fs/*)
		case $inc in engine/*|fs/*|source/source.h|os/*|util/*) ;; *) violation "$file" "the file layer includes $inc" ;; esac ;;
	src/journal/*)
		case $inc in engine/*|fs/*|journal/*|os/*|util/*) ;; *) violation "$file" "the journal includes $inc" ;; esac ;;
	src/replay/*)
		case $inc in engine/*|replay/*|source/workload.h|util/*) ;; *) violation "$file" "replay includes $inc" ;; esac ;;
	esac
done < <(grep -rHn -E '^[[:space:]]*#[[:space:]]*include' src tests bench | sed -E 's/^([^:]*):[0-9]+:/\1:/')

# The engine's ranks, from the bottom: "RANK FILE..." (a bare name is the
# module's .c and .h). Reasons for the order are in docs/design.md.
ENGINE_RANKS='
1  spin.h
2  env profile page_counter
3  page stat.h
4  rstat.h
5  lru.h engine.h
6  internal.h
7  stat.c names oom_wait blkdev
8  rstat.c
9  lru.c
10 memcg.c
11 softlimit task page_state
12 uncharge
13 swap
14 charge_core
15 vm writeback
16 reclaim
17 bgreclaim oom move zone flusher compaction
18 charge
19 vm_fault memcg_policy
20 construct check
'
rank_out=$(ENGINE_RANKS="$ENGINE_RANKS" python3 - src/engine <<'PY'
import os, re, sys, glob
eng = sys.argv[1]
rank = {}
for line in os.environ["ENGINE_RANKS"].strip().splitlines():
    r, *names = line.split()
    for n in names:
        for f in ([n] if "." in n else [n + ".c", n + ".h"]):
            rank[f] = int(r)
alias = {"internal": "memcg"}
def module(f):
    m = os.path.splitext(f)[0]
    return alias.get(m, m)
files = sorted(os.path.basename(p) for p in glob.glob(eng + "/*.[ch]"))
raw = {f: open(os.path.join(eng, f)).read() for f in files}
def code(s):
    s = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), s, flags=re.S)
    s = re.sub(r"//[^\n]*", "", s)
    return re.sub(r'"(\\.|[^"\\])*"', '""', s)
src = {f: code(raw[f]) for f in files}
bad = [f"{f}: has no rank" for f in files if f not in rank]
defined = {}
for f, s in src.items():
    # non-static definitions, and static inline ones of headers
    for m in re.finditer(r"^(?!static\b)[A-Za-z_][\w \t*]*?[\s*]\(?([a-z_]\w*)\)?\s*\([^;{}]*\)\s*\{", s, re.M):
        defined.setdefault(m.group(1), f)
    if f.endswith(".h"):
        for m in re.finditer(r"^static inline (?:[^;{(]|__attribute__\(\([^)]*\)\))*?\b([a-z_]\w*)\s*\(", s, re.M):
            defined.setdefault(m.group(1), f)
for n in [n for n in defined if n.startswith("__")]:
    del defined[n]
def below(a, b):
    """a may use b"""
    return module(a) == module(b) or rank.get(b, 99) < rank.get(a, 0)
for f in files:
    if f not in rank:
        continue
    for m in re.finditer(r'^\s*#\s*include\s*"engine/(\w+\.h)"', raw[f], re.M):
        h = m.group(1)
        if not below(f, h):
            bad.append(f"{f}: includes {h} (rank {rank.get(h, 'none')}, not below {rank[f]})")
    depth, body = 0, []
    for ch in src[f]:
        depth += (ch == "{") - (ch == "}")
        body.append(ch if depth > 0 or ch == "\n" else " ")
    seen = set()
    for m in re.finditer(r"\b([a-z_]\w*)\s*\(", "".join(body)):
        g = defined.get(m.group(1))
        if g and (m.group(1), g) not in seen and not below(f, g):
            seen.add((m.group(1), g))
            bad.append(f"{f}: calls {m.group(1)} of {g} (rank {rank.get(g, 'none')}, not below {rank[f]})")
print("\n".join(bad))
PY
)
if [ -n "$rank_out" ]; then
	while IFS= read -r v; do violation "src/engine/${v%%:*}" "${v#*: }"; done <<< "$rank_out"
fi
long_out=$(python3 - src <<'PY'
import glob, re, sys
for f in sorted(glob.glob(sys.argv[1] + "/**/*.c", recursive=True)):
    lines = open(f).read().split("\n")
    i = 0
    while i < len(lines):
        if re.match(r"^[A-Za-z_][^;]*\(", lines[i]) and not lines[i].rstrip().endswith(";"):
            j = i
            while j < len(lines) and lines[j] != "{" and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j
                while k < len(lines) and lines[k] != "}":
                    k += 1
                if k - i + 1 > 100:
                    name = re.search(r"(\w+)\s*\(", lines[i]).group(1)
                    print(f"{f}: {name} is {k - i + 1} lines (at most 100)")
                i = k
        i += 1
PY
)
if [ -n "$long_out" ]; then
	while IFS= read -r v; do violation "${v%%:*}" "${v#*: }"; done <<< "$long_out"
fi
cite_out=$(python3 - src docs/semantics.md <<'PY'
import glob, re, sys
heads = set(re.findall(r"^## (§[0-9]+(?:\.[0-9]+)*) ", open(sys.argv[2]).read(), re.M))
for f in sorted(glob.glob(sys.argv[1] + "/**/*.[ch]", recursive=True)):
    for n, line in enumerate(open(f), 1):
        for c in re.findall(r"§[0-9]+(?:\.[0-9]+)*", line):
            if c not in heads:
                print(f"{f}:{n}: cites {c}, which is no heading of {sys.argv[2]}")
PY
)
if [ -n "$cite_out" ]; then
	while IFS= read -r v; do violation "${v%%: *}" "${v#*: }"; done <<< "$cite_out"
fi
echo "layers: $bad violations"
[ "$bad" -eq 0 ]
