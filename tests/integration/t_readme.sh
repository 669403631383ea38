#!/usr/bin/env bash
# t_readme.sh: the README's examples run in order as written. Every code
# paragraph of README.md that starts by using the mount (mkdir on it, memcgctl,
# memcgfs-run) is run, in README order, by one bash against a fresh mount:
# /mnt/memcgfs becomes the test's mountpoint (memcgfs-run is told it, as
# other mounts may be up) and build/ the build directory. Every command must succeed, except those marked "# Killed",
# which must end by SIGKILL (the OOM killer). Background jobs a block
# leaves are ended after it. What the README promises a command prints, a
# comment "# -> TEXT" (at the end of the command's line or on a line of
# its own after it; "..." stands for anything), must be a line of the
# block's output (spaces around it aside), in the README's order.
set -u
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

mount_fs || exit 1
WORK=$(mktemp -d /tmp/memcgfs-readme.XXXXXX)
/usr/bin/python3 - "$ROOT/README.md" "$WORK" "$MNT" "$MEMCGFS_BUILD" <<'PY'
import re, sys
readme, work, mnt, build = sys.argv[1:]
blocks, cur = [], []
for line in open(readme).read().split("\n"):
    if line.startswith("    "):
        cur.append(line[4:])
        continue
    if cur:
        blocks.append(cur)
        cur = []
if cur:
    blocks.append(cur)
n = 0
for b in blocks:
    while b and b[-1] == "":
        b.pop()
    if not b or not re.match(r"(mkdir /mnt/memcgfs|build/memcgctl |build/memcgfs-run )", b[0]):
        continue
    out, promised = [], []
    for line in b:
        m = re.search(r"#\s*->\s*(.*\S)\s*$", line)
        if m:
            promised.append(m.group(1))
            line = line[:m.start()].rstrip()
            if not line:
                continue
        line = line.replace("/mnt/memcgfs", mnt)
        line = re.sub(r"(^|[\s(])build/", r"\1" + build + "/", line)
        # (other mounts may be up beside the test's: name its own)
        line = line.replace(build + "/memcgfs-run ", build + "/memcgfs-run --mount " + mnt + " ")
        m = re.match(r"(.*\S)\s+# Killed$", line)
        if m:
            line = "if %s; then false; else [ $? -eq 137 ]; fi" % m.group(1)
        out.append(line)
    n += 1
    with open("%s/block%02d.sh" % (work, n), "w") as f:
        f.write("\n".join(out) + "\n")
    with open("%s/block%02d.want" % (work, n), "w") as f:
        f.write("".join(p + "\n" for p in promised))
print(n)
PY
blocks=$(ls "$WORK"/block*.sh 2>/dev/null | wc -l)
[ "$blocks" -ge 5 ] && ok || bad "only $blocks README blocks found"
promises=0
cd "$ROOT"
for b in "$WORK"/block*.sh; do
	out=$(bash -e -o pipefail -c '. "$1"; rc=$?; kill $(jobs -p) 2>/dev/null || :; wait; exit $rc' \
		sh "$b" 2>&1)
	rc=$?
	expect "README block $(basename "$b" .sh) ($(head -n1 "$b" | cut -c1-60))" "$rc" 0
	[ "$rc" -eq 0 ] || { echo "--- the block:"; cat "$b"; echo "--- its output:"; echo "$out" | tail -n 20; }
	# the promised lines, in order ("..." matches anything)
	missing=$(printf '%s\n' "$out" | /usr/bin/python3 -c '
import re, sys
want = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
got = [l.strip() for l in sys.stdin]
i = 0
for w in want:
    pat = re.compile(".*".join(re.escape(p) for p in w.split("...")))
    while i < len(got) and not pat.fullmatch(got[i]):
        i += 1
    if i == len(got):
        print(w)
        break
    i += 1
' "${b%.sh}.want")
	expect "README block $(basename "$b" .sh): what it promises to print" "$missing" ""
	promises=$((promises + $(grep -c . "${b%.sh}.want")))
done
# (a README that promised nothing would compare nothing)
[ "$promises" -ge 10 ] && ok || bad "only $promises promised outputs compared"
rm -rf "$WORK"
summary
