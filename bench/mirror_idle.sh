#!/usr/bin/env bash
# mirror_idle.sh: what mirrored real processes cost the daemon (issue 14).
# N idle processes (default 1,000; 50 with BENCH_QUICK=1), each with 1 MiB
# of its own and one shared 64 MiB file mapped, in one group; then 10
# processes allocating 64 MiB/s each. Prints the daemon's CPU as a share of
# one core, the median of 5 windows (and .min, .max), read in nanoseconds
# from the worker's threads' /proc/.../schedstat:
#   mirror.idle_processes      N
#   mirror.cpu_pct.idle        N idle (the goal, at N = 1,000: at most 1 %)
#   mirror.cpu_pct.active10
#   mirror.overshoot_mib.1gps  how far past a 256M limit a process
#                              allocating 1 GiB/s got before its OOM kill
#                              (5 runs)
#   mirror.exit_release_ms     from a SIGKILL of an idle process with
#                              64 MiB to its group's usage threshold event
#                              (the charges released, no read asking)
#   mirror.pcache_write_ratio  with page-cache events: dd of 1 GiB into
#                              tmpfs from a group over the same from the root
#   mirror.pcache_cpu_ms_per_gib  ... the daemon's CPU per GiB so charged
#   mirror.host_fault_ratio    what a page fault costs a process of the
#                              root while the daemon (its tracer) runs,
#                              over the same with no daemon
#   mirror.group_fault_ratio   ... a process in a limited group (its
#                              alarm armed), over one of the root
# and mirror.usage_error_pct.idle: the group's usage against what the
# processes really hold (their RssAnon plus the file's pages once).
# Every wait is bounded and names what did not come.
# Needs root, /dev/fuse, build/tools/memhog, evctl and fault_cost (make
# bench builds them).
# Usage: bench/mirror_idle.sh BUILD_DIR [N]
set -eu
build=${1:-build}
if [ "${BENCH_QUICK:-0}" = 1 ]; then n=${2:-50} secs=2; else n=${2:-1000} secs=4; fi
hog=$build/tools/memhog evctl=$build/tools/evctl faults=$build/fault_cost
. "$(dirname "$0")/stats.sh"
for t in "$hog" "$evctl" "$faults"; do
	[ -x "$t" ] || { echo "bench: $t is not built (make bench builds it)" >&2; exit 1; }
done
mnt=$(mktemp -d "${MEMCGFS_BENCH_TMP:-/tmp}/memcgfs-bench.XXXXXX")
file=$(mktemp /var/tmp/memcgfs-bench-file.XXXXXX)
"$build/memcgfs" -o memory=8G "$mnt"
# the worker: it holds the engine (the pid started is its supervisor's)
pid=$("$build/memcgctl" status -m "$mnt" | awk '$1 == "worker_pid" { print $2 }')
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	fusermount3 -u "$mnt" 2>/dev/null || true
	rmdir "$mnt" 2>/dev/null || true
	rm -f "$file" "$file".out.*
}
trap cleanup EXIT
head -c $((64 << 20)) /dev/urandom > "$file"
# out of the page cache: the first idle process brings it in and pays
# for it, as on the kernel (page cache is the adder's)
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$file"
mkdir "$mnt/idle" "$mnt/active"
# the worker's CPU in nanoseconds: the sum over its threads (a thread that
# ends inside a window takes its time with it; the pool is steady here);
# %.0f, as mawk's %d stops at 2^31 (2.1 s of CPU)
cpu_ns() { cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }
window() {   # window SECONDS: the daemon's CPU share over it, in percent
	local t0 t1 w0 w1
	t0=$(cpu_ns) w0=$(date +%s%N)
	sleep "$1"
	t1=$(cpu_ns) w1=$(date +%s%N)
	awk -v d=$((t1 - t0)) -v w=$((w1 - w0)) 'BEGIN { printf "%.3f", d * 100 / w }'
}
windows() {  # windows NAME SECS: 5 windows of SECS, the median and range
	local v=() k
	for k in 1 2 3 4 5; do v+=("$(window "$2")"); done
	fig "$1" % "${v[@]}"
	WIN_MAX=$(hi "${v[@]}")
}
for i in $(seq "$n"); do
	sh -c "echo \$\$ > $mnt/idle/cgroup.procs && exec $hog -a 1 -f $file" > "$file.out.$i" 2>&1 < /dev/null &
	pids+=($!)
done
for i in $(seq "$n"); do
	wait_until 120 "process $i's ready line (memhog in $mnt/idle)" grep -q '^ready' "$file.out.$i" || exit 1
done
sleep 5                        # the first samples, then the idle back-off
echo "mirror.idle_processes $n processes"
windows mirror.cpu_pct.idle "$secs"
real=$(for p in "${pids[@]}"; do awk '/^RssAnon:/ { print $2 }' "/proc/$p/status"; done |
	awk -v f=$((64 << 10)) '{ s += $1 } END { print (s + f) * 1024 }')
got=$(cat "$mnt/idle/memory.usage_in_bytes")
awk -v g="$got" -v r="$real" 'BEGIN { printf "mirror.usage_error_pct.idle %.2f %%\n", (g - r) * 100 / r }'
# the idle ones are done with; the active ones allocate through the five
# 2 s windows, the second before them and one after (10 x 768 MiB: a
# window after they were done would measure idle processes)
for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
{ wait "${pids[@]}"; } 2>/dev/null || true
amib=$((64 * 12))
apids=()
for i in $(seq 10); do
	sh -c "echo \$\$ > $mnt/active/cgroup.procs && exec $hog -a $amib -r 64" > /dev/null 2>&1 < /dev/null &
	apids+=($!)
	pids+=($!)
done
sleep 1
windows mirror.cpu_pct.active10 2
# ten processes allocating cost the daemon something: a zero is the
# instrument failing, not a figure
awk -v m="$WIN_MAX" 'BEGIN { exit !(m > 0) }' ||
	{ echo "bench: the daemon's CPU read 0 while 10 processes allocated: the reading is broken" >&2; exit 1; }
# one process allocating 1 GiB/s into a 256M group: how far past the limit
# it had got when the OOM killer ended it (the sampling's reaction bound;
# with the tracer, its alarm's), 5 times
for p in "${apids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
# reaped before the limit write below: a SIGCHLD arriving during it makes
# it fail with EINTR, as the kernel's mem_cgroup_resize_max does with a
# signal pending
for p in "${apids[@]}"; do wait "$p" 2>/dev/null || true; done
mkdir "$mnt/burst"
echo 256M > "$mnt/burst/memory.limit_in_bytes"
over=()
for k in 1 2 3 4 5; do
	timeout 60 sh -c "echo \$\$ > $mnt/burst/cgroup.procs && exec $hog -a 1024 -r 1024" > "$file.out.burst" 2>&1 < /dev/null || true
	last=$(awk '/^anon/ { n = $2 } END { print n + 0 }' "$file.out.burst")
	over+=("$((last > 256 ? last - 256 : 0))")
done
fig mirror.overshoot_mib.1gps MiB "${over[@]}"
# exit to release: an idle process (its next sample seconds away) with
# 64 MiB is killed; the group's 32M usage threshold fires when its charges
# go. Timed from before the kill to the event, evctl's own start included
# (an upper bound); nothing reads the usage meanwhile
mkdir "$mnt/exit"
rel=()
for k in 1 2 3 4 5; do
	sh -c "echo \$\$ > $mnt/exit/cgroup.procs && exec $hog -a 64" > "$file.out.exit" 2>&1 < /dev/null &
	xp=$!
	pids+=($xp)
	wait_until 60 "the exiting process's ready line" grep -q '^ready' "$file.out.exit" || exit 1
	sleep "$secs"              # idle: the sampler backs off
	t0=$(date +%s%N)
	got=$("$evctl" "$mnt/exit" memory.usage_in_bytes 32M run 1/10000 kill -KILL "$xp")
	t1=$(date +%s%N)
	{ wait "$xp"; } 2>/dev/null || true
	[ "$got" = "FIRED 1" ] ||
		{ echo "bench: the exit of $xp did not bring $mnt/exit below 32M within 10 s ($got)" >&2; exit 1; }
	rel+=("$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e6 }')")
done
fig mirror.exit_release_ms ms "${rel[@]}"
# page cache from the kernel's events (issue 25): dd writes 1 GiB into a
# tmpfs file from a group, and the same from the root, where the tracer
# lets it pass (7 rounds, the order alternating): the group's wall time
# over the root's, and the daemon's CPU per GiB charged (a read of the
# usage after each charges what is still queued)
ebpf=0
"$build/memcgctl" status -m "$mnt" | grep -q '^page_cache_source ebpf' && ebpf=1
if [ "$ebpf" = 1 ]; then
	mkdir "$mnt/pcache"
	shm=$(mktemp -d /dev/shm/memcgfs-bench.XXXXXX)
	# (both started the same way: a shell that writes itself into a
	# group, or does not, and execs dd)
	in_root() {
		local a
		a=$(date +%s%N)
		sh -c "exec dd if=/dev/zero of=$shm/root bs=1M count=1024 status=none"
		echo $(($(date +%s%N) - a))
	}
	in_group() {
		local a b c
		a=$(date +%s%N) c=$(cpu_ns)
		sh -c "echo \$\$ > $mnt/pcache/cgroup.procs && exec dd if=/dev/zero of=$shm/group bs=1M count=1024 status=none"
		b=$(date +%s%N)
		cat "$mnt/pcache/memory.usage_in_bytes" > /dev/null
		echo $((b - a)) $(($(cpu_ns) - c))
	}
	ratio=() cpums=()
	for k in 1 2 3 4 5 6 7; do
		if [ $((k % 2)) = 1 ]; then r=$(in_root); read -r g c < <(in_group)
		else read -r g c < <(in_group); r=$(in_root); fi
		rm -f "$shm/root" "$shm/group"
		ratio+=("$(awk -v g="$g" -v r="$r" 'BEGIN { printf "%.3f", g / r }')")
		cpums+=("$(awk -v c="$c" 'BEGIN { printf "%.1f", c / 1e6 }')")
	done
	rmdir "$shm"
	fig mirror.pcache_write_ratio x "${ratio[@]}"
	fig mirror.pcache_cpu_ms_per_gib ms "${cpums[@]}"
fi
# what the tracer's programs cost every process's page faults (they run
# in the faulting task): 7 rounds, the order alternating, of the best of
# 10 faults of 64 MiB each; a process of the root with the daemon and
# without it (unmounted: its programs go with it), and one in a group
# with a limit (its alarm armed at every sample) against one of the root
if [ "$ebpf" = 1 ]; then
	# (made again after each remount, if the state file did not keep it)
	faults_group() { mkdir -p "$mnt/faults" && echo 1G > "$mnt/faults/memory.limit_in_bytes"; }
	faults_group
	in_group() { sh -c "echo \$\$ > $mnt/faults/cgroup.procs && exec $faults 64 10"; }
	host=() grp=()
	for k in 1 2 3 4 5 6 7; do
		if [ $((k % 2)) = 1 ]; then r=$("$faults" 64 10); g=$(in_group)
		else g=$(in_group); r=$("$faults" 64 10); fi
		grp+=("$(awk -v g="$g" -v r="$r" 'BEGIN { printf "%.3f", g / r }')")
		fusermount3 -u "$mnt"
		o=$("$faults" 64 10)
		"$build/memcgfs" -o memory=8G "$mnt"
		wait_until 10 "the remount of $mnt" sh -c "\"$build/memcgctl\" status -m \"$mnt\" > /dev/null" || exit 1
		faults_group
		on=$("$faults" 64 10)
		host+=("$(awk -v a="$on" -v b="$o" 'BEGIN { printf "%.3f", a / b }')")
	done
	fig mirror.host_fault_ratio x "${host[@]}"
	fig mirror.group_fault_ratio x "${grp[@]}"
fi
