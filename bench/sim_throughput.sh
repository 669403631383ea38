#!/usr/bin/env bash
# sim_throughput.sh: how many pages per second one simulated task declares
# through the daemon's socket (the goal: at least 1M). Prints
#   sim.pages_per_s VALUE pages/s
# Needs root and /dev/fuse. Usage: bench/sim_throughput.sh BUILD_DIR
set -eu
build=${1:-build}
mnt=$(mktemp -d /tmp/memcgfs-bench.XXXXXX)
"$build/memcgfs" -o memory=16G "$mnt"
trap 'fusermount3 -u "$mnt"; rmdir "$mnt"' EXIT
mkdir "$mnt/bench"
best=0
for run in 1 2 3; do
	t0=$(date +%s%N)
	"$build/memcgctl" sim -m "$mnt" -g /bench -e 'alloc anon heap 4G' -e 'touch heap seq write'
	t1=$(date +%s%N)
	rate=$(( 1048576 * 1000000000 / (t1 - t0) ))
	[ "$rate" -gt "$best" ] && best=$rate
done
echo "sim.pages_per_s $best pages/s"
