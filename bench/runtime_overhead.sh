#!/usr/bin/env bash
# runtime_overhead.sh: what memcgfs-run adds to a container's start (issue
# 24): `crun run` and `runc run` of a busybox-static bundle whose process
# is `true`, wall time from the runtime's start to its exit, median of
# ROUNDS (default 5) rounds, the configurations alternated round by round:
#   crun.bare       crun --cgroup-manager=disabled, outside memcgfs-run, in
#                   a mount namespace of its own with an empty tmpfs on
#                   /sys/fs/cgroup (the baseline: no cgroup is made or
#                   looked at; a crun with cgroups outside would write the
#                   host's, which is never done)
#   crun.run        memcgfs-run -- crun (cgroupfs): memcgfs's memory group
#                   and the stand-ins'
#   runc.run        memcgfs-run -- runc (it cannot run without cgroups, and
#                   the host's are not touched: no baseline of its own)
#   wrapper         memcgfs-run -- true: the wrapper alone
# Prints "name median_ms min_ms max_ms" lines and the ratio crun.run /
# crun.bare. Needs root, crun, runc, busybox-static, jq, a build (BUILD,
# default build) and /dev/fuse.
set -eu
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
RUN="$BUILD/memcgfs-run"
DATA=$(mktemp -d /var/tmp/memcgfs-rtbench.XXXXXX)
MNT="$DATA/mnt"
cleanup() {
	fusermount3 -u "$MNT" 2> /dev/null || true
	rm -rf "$DATA"
}
trap cleanup EXIT
mkdir "$MNT"
"$BUILD/memcgfs" "$MNT"
B="$DATA/bundle"
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev"
cp /bin/busybox "$B/rootfs/bin/busybox"
ln -s busybox "$B/rootfs/bin/true"
(cd "$B" && crun spec)
jq '.process.terminal = false | .process.args = ["true"] | .linux.resources.memory = { "limit": 67108864 }' \
	"$B/config.json" > "$B/c.json" && mv "$B/c.json" "$B/config.json"

ms() {
	local t0 t1
	t0=$(date +%s%N)
	if ! "$@" > "$DATA/out" 2>&1; then
		echo "runtime_overhead: failed: $*" >&2
		cat "$DATA/out" >&2
		return 1
	fi
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
one() {
	case $1 in
	crun.bare) ms unshare -m --propagation private sh -c "mount -t tmpfs none /sys/fs/cgroup &&
		cd $B && crun --root $DATA/s1 --cgroup-manager=disabled run b$2" ;;
	crun.run) ms "$RUN" --mount "$MNT" -- sh -c "cd $B && crun --root $DATA/s2 --cgroup-manager=cgroupfs run c$2" ;;
	runc.run) ms "$RUN" --mount "$MNT" -- sh -c "cd $B && runc --root $DATA/s3 run r$2" ;;
	wrapper) ms "$RUN" --mount "$MNT" -- true ;;
	esac
}
names="crun.bare crun.run runc.run wrapper"
declare -A all
for n in $names; do one "$n" warm > /dev/null; done
for r in $(seq "$ROUNDS"); do
	for n in $names; do all[$n]="${all[$n]:-} $(one "$n" "$r")"; done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
for n in $names; do echo "$n $(echo "${all[$n]}" | med)"; done
bare=$(echo "${all[crun.bare]}" | med | cut -d' ' -f1)
run=$(echo "${all[crun.run]}" | med | cut -d' ' -f1)
awk -v a="$run" -v b="$bare" 'BEGIN { printf "ratio crun.run/crun.bare %.2f\n", a / b }'
