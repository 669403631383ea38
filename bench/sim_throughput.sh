#!/usr/bin/env bash
# sim_throughput.sh: how many pages per second one simulated task declares
# through the daemon's socket (the goal: at least 1M), against the same
# program charged in-process by `memcgctl replay` (no socket, no daemon),
# timed alternately in the same run. Prints
#   sim.pages_per_s MEDIAN pages/s            (and .min, .max)
#   sim.replay_pages_per_s MEDIAN pages/s     the in-process baseline
#   sim.socket_over_inprocess MEDIAN ratio    (and .min, .max over the runs)
# Mounts under $MEMCGFS_BENCH_TMP (bench/run.sh's run directory) or /tmp,
# and unmounts on every exit, an interruption included.
# Needs root and /dev/fuse. Usage: bench/sim_throughput.sh BUILD_DIR
set -eu
build=${1:-build}
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
mounted=
cleanup() {
	trap '' INT TERM HUP
	[ -n "$mounted" ] && { fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || true; }
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
"$build/memcgfs" -o memory=16G "$mnt"
mounted=1
mkdir "$mnt/bench"
scn=$(mktemp "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench-scn.XXXXXX")
printf 'machine memory=16G cpus=1\ngroup /bench\ntask t group=/bench\nt alloc anon heap 4G\nt touch heap seq write\n' > "$scn"
pages=1048576
sock=() inproc=() ratio=()
for run in 1 2 3 4 5; do
	t0=$(date +%s%N)
	"$build/memcgctl" sim -m "$mnt" -g /bench -e 'alloc anon heap 4G' -e 'touch heap seq write'
	t1=$(date +%s%N)
	"$build/memcgctl" replay "$scn" > /dev/null
	t2=$(date +%s%N)
	sock+=("$(( pages * 1000000000 / (t1 - t0) ))")
	inproc+=("$(( pages * 1000000000 / (t2 - t1) ))")
	ratio+=("$(awk -v a="$((t1 - t0))" -v b="$((t2 - t1))" 'BEGIN { printf "%.3f", b / a }')")
done
rm -f "$scn"
. "$(dirname "$0")/stats.sh"     # med, lo, hi of the rounds
fig sim.pages_per_s pages/s "${sock[@]}"
echo "sim.replay_pages_per_s $(med "${inproc[@]}") pages/s"
fig sim.socket_over_inprocess ratio "${ratio[@]}"
