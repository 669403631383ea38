#!/bin/bash
# t_mirror.sh: real processes mirrored from /proc (issue 4 part 3) with the
# memhog test program: accounting, sharing, exit, OOM kill with the
# overshoot bound, oom_kill_disable stop/continue, file pageout under limit
# and background reclaim (usage never below what is resident, issue 17 §2),
# exempt processes, enforce=none, and move charge of a real process.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mirror_lib.sh"

mount_fs || exit 1
MiB=1048576
st=$("$MEMCGFS_BUILD/memcgctl" status -m "$MNT")
expect "status names the charge source" "$(echo "$st" | awk '$1 == "real_processes" { print $2 }')" \
	proc-sampler
expect "status: as root it sees frame numbers and exits" \
	"$(echo "$st" | awk '$1 == "real_processes_sees" { print ($2 ~ /pagemap-frames/ && $2 ~ /pidfd-exits/) }')" 1

# --- accounted by its RSS, in its group and its parent, threads once ---
mkdir "$MNT/a" "$MNT/a/b"
hog acc a/b -- -a 64 -t 4
ready acc || bad "memhog did not start"
expect "four threads" "$(kb "$HOG_PID" Threads)" 4
anon=$(( $(kb "$HOG_PID" RssAnon) * 1024 ))
rss=$(( $(kb "$HOG_PID" VmRSS) * 1024 ))
u=$(usage a/b)
# (plus the page cache the shell touched before it became memhog)
between "usage covers the anon RSS once (4 threads)" "$u" "$anon" $((rss + 4 * MiB))
expect "rss stat is the anon RSS" "$(stat_key a/b rss)" "$anon"
# (and what b's structures cost it, §11.5: 20,480 bytes, charged through a
# per-CPU stock that may still hold the rest of its 64-page batch)
between "parent carries it" "$(usage a)" $((u + 20480)) $((u + 262144))
between "parent total_rss" "$(stat_key a total_rss)" "$anon" "$anon"
# kernel memory: its page tables and a 16 KiB stack per thread, and the
# page it wrote of its output file ($DATA/acc.out: a page-cache tree node
# and a buffer head, 688 bytes, charged as one page)
kmem=$(( ($(kb "$HOG_PID" VmPTE) + 16 * $(kb "$HOG_PID" Threads)) * 1024 ))
expect "kmem: page tables, stacks, the output's page-cache structures" \
	"$(cat "$MNT/a/b/memory.kmem.usage_in_bytes")" $((kmem + 4096))
expect "kmem is in the parent's too, with b's structures" \
	"$(cat "$MNT/a/memory.kmem.usage_in_bytes")" $((kmem + 4096 + 20480))
# (memhog's binary and libraries were in the page cache before it ran:
# the kernel charged them to whoever brought them in, not to a/b)
between "mapped_file: only what it brought in" "$(stat_key a/b mapped_file)" 0 $((rss - anon + 4 * MiB))
# a second process of the group: the next read samples it (the periodic
# sample, with no read at all, is what the kill below relies on)
hog acc2 a/b -- -a 16
ready acc2
expect "a read finds the second process" \
	"$(( $(stat_key a/b rss) >= anon + 16 * MiB ))" 1
# --- exit: anon charges go, page cache stays ---
stop_hog "$HOG_PID"
stop_hog "${HOGS[0]}"
wait_until 5 sh -c "[ \$(awk '\$1==\"rss\"{print \$2}' $MNT/a/b/memory.stat) -eq 0 ]" ||
	bad "rss did not drop after exit"
expect "rss after exit" "$(stat_key a/b rss)" 0
# (the output files' page-cache structures stay with their pages)
expect "kmem after exit" "$(cat "$MNT/a/b/memory.kmem.usage_in_bytes")" 4096
between "usage after exit: page cache only" "$(usage a/b)" 0 $((8 * MiB))

# --- the kernel's accounting of shmem, mlock and mapped files (issue 25):
# a SysV segment is shmem and mapped_file, never dirty; mlocked anon is
# rss and unevictable; every key within 256 KiB of what the kernel's rules
# give for what the process holds ---
near() {   # near DESC ACTUAL WANT: within 256 KiB
	between "$1" "$2" $(($3 - 262144)) $(($3 + 262144))
}
mkdir "$MNT/k"
hog kacc k -- -a 8 -s 32 -l 16
ready kacc || bad "memhog -s -l did not start"
anon=$(( $(kb "$HOG_PID" RssAnon) * 1024 ))
shm=$(( $(kb "$HOG_PID" RssShmem) * 1024 ))
file=$(( $(kb "$HOG_PID" RssFile) * 1024 ))
expect "the segment is resident" "$shm" $((32 * MiB))
near "shmem is the segment" "$(stat_key k shmem)" "$shm"
between "mapped_file: the segment, and the files it maps" "$(stat_key k mapped_file)" \
	"$shm" $((shm + file + 262144))
near "dirty: no shmem page counts" "$(stat_key k dirty)" 0
near "unevictable: the mlocked 16 MiB" "$(stat_key k unevictable)" $((16 * MiB))
near "rss: the anon RSS, mlocked included" "$(stat_key k rss)" "$anon"
between "usage: anon and shmem, the files it brought in, kernel memory" "$(usage k)" \
	$((anon + shm)) $((anon + shm + file + 4 * MiB))
# exit: the segment (removed, detached) and the anon go at once; what was
# mapped of files stays as page cache nobody maps
stop_hog "$HOG_PID"
expect "rss at the first read after the exit" "$(stat_key k rss)" 0
expect "shmem after the exit" "$(stat_key k shmem)" 0
expect "unevictable after the exit" "$(stat_key k unevictable)" 0
expect "mapped_file after the exit" "$(stat_key k mapped_file)" 0
rmdir "$MNT/k"

# --- exit of a process with 64 MiB anon and a 16 MiB mapped file (the
# issue's case 9): the anon goes, the file stays as page cache, no longer
# mapped_file; released with no read asking: the group's usage threshold
# event (nothing reads the usage meanwhile) ---
head -c $((16 * MiB)) /dev/urandom > "$DATA/f16"
uncache "$DATA/f16"
mkdir "$MNT/k9"
hog k9 k9 -- -a 64 -f "$DATA/f16"
ready k9
between "k9 mapped_file: the 16 MiB file" "$(stat_key k9 mapped_file)" $((16 * MiB - 256 * 1024)) \
	$((18 * MiB))
expect "the exit fires the threshold event, no read asking" \
	"$("$MEMCGFS_BUILD/tools/evctl" "$MNT/k9" memory.usage_in_bytes 40M run 1/5000 kill -KILL "$HOG_PID")" \
	"FIRED 1"
wait "$HOG_PID" 2>/dev/null
expect "k9 rss after the exit" "$(stat_key k9 rss)" 0
expect "k9 mapped_file after the exit" "$(stat_key k9 mapped_file)" 0
between "k9 cache: the file stays" "$(stat_key k9 cache)" $((16 * MiB - 256 * 1024)) $((18 * MiB))

# --- page cache a process never maps (the issue's cases 3, 5 and 10), from
# the kernel's own events (eBPF, as root): charged when the kernel adds it,
# dirty while the kernel has it dirty, gone when the kernel drops it ---
expect "status: as root, page cache from the kernel's events" \
	"$(echo "$st" | awk '$1 == "page_cache_source" { print $2 }')" ebpf
head -c $((64 * MiB)) /dev/urandom > "$DATA/f64"
uncache "$DATA/f64"
mkdir "$MNT/k3"
hog k3 k3 -- -R "$DATA/f64"
ready k3
# (the bounds: the issue's 256 KiB below, as a page or two of the file may
# have stayed in the host's cache, where fadvise could not drop them, in
# another CPU's LRU batch; and up to 4 MiB above, memhog's output and its
# binary and libraries where a fault of its own brought them in)
between "k3: read(2) of 64 MiB is cache" "$(stat_key k3 cache)" $((64 * MiB - 256 * 1024)) $((68 * MiB))
between "k3: ... on the inactive file list" "$(stat_key k3 inactive_file)" $((64 * MiB - 256 * 1024)) \
	$((68 * MiB))
between "k3: ... not mapped" "$(stat_key k3 mapped_file)" 0 $((4 * MiB))
between "k3: usage" "$(usage k3)" $((64 * MiB - 256 * 1024)) $((68 * MiB))
stop_hog "$HOG_PID"
between "k3: the cache outlives the reader" "$(stat_key k3 cache)" $((64 * MiB - 256 * 1024)) $((68 * MiB))
rm "$DATA/f64"
between "k3: the file removed, its pages go" "$(stat_key k3 cache)" 0 $((4 * MiB))

mkdir "$MNT/k10"
hog k10 k10 -- -W "$DATA/w32" -w 32
ready k10
between "k10: write(2) of 32 MiB is cache" "$(stat_key k10 cache)" $((32 * MiB)) $((36 * MiB))
# (and memhog's output: a page of $DATA/k10.out, dirty too)
between "k10: ... dirty" "$(stat_key k10 dirty)" $((32 * MiB - 256 * 1024)) $((32 * MiB + 256 * 1024))
# kernel memory, as estimated: a buffer head (104 bytes) per page written
# through ext4 and a page-cache tree node (584) per 64 pages, 904 KiB for
# 32 MiB (the issue measured the kernel's kmem 0.95 MiB above ours without
# them), besides memhog's page tables and stack
between "k10: kmem: buffer heads and tree nodes" "$(cat "$MNT/k10/memory.kmem.usage_in_bytes")" \
	$((904 * 1024)) $((1536 * 1024))
sync "$DATA/w32"
between "k10: written back: clean" "$(stat_key k10 dirty)" 0 $((256 * 1024))
between "k10: ... and still cache" "$(stat_key k10 cache)" $((32 * MiB)) $((36 * MiB))
stop_hog "$HOG_PID"
rm "$DATA/w32"
between "k10: the file removed, its pages go" "$(stat_key k10 cache)" 0 $((4 * MiB))
between "k10: ... and their kernel memory" "$(cat "$MNT/k10/memory.kmem.usage_in_bytes")" 0 $((64 * 1024))

# a memfd filled with write(2), never mapped (case 5): shmem and cache,
# swap-backed (the anon list), never dirty; gone with the memfd
mkdir "$MNT/k5"
hog k5 k5 -- -M 32
ready k5
memfd_is_shmem k5
stop_hog "$HOG_PID"
expect "k5: the memfd's pages go with it" "$(stat_key k5 shmem)" 0

# --- copy-on-write after a fork (the issue's case 7): 32 MiB, the child
# writes 16 of them; what the two still share is counted once (the kernel
# charged it at the parent's faults), what the child wrote is its own ---
mkdir "$MNT/kc"
hog kc kc -- -a 32 -c 16
ready kc || bad "memhog -c did not start"
kchild=$(awk '$1 == "cow" { print $3 }' "$DATA/kc.out")
HOGS+=("$kchild")
both=$(( ($(kb "$HOG_PID" RssAnon) + $(kb "$kchild" RssAnon)) * 1024 ))
# (the pages they shared before the fork and neither wrote since are
# counted once too: the libraries' data, the stacks, under 1 MiB)
between "kc rss: both processes' anon, the 16 MiB still shared once" "$(stat_key kc rss)" \
	$((both - 17 * MiB)) $((both - 16 * MiB + 262144))
stop_hog "$HOG_PID"
wait_until 5 sh -c "[ ! -e /proc/$kchild ]" || bad "kc: the child outlived its parent"
expect "kc rss after both exits" "$(stat_key kc rss)" 0

# --- LTP's memcg_limit_in_bytes and memcg_failcnt: a SysV shm user over
# its group's limit, with no swap, is OOM-killed (shmem cannot be
# reclaimed without swap) ---
mkdir "$MNT/kshm"
echo 16M > "$MNT/kshm/memory.limit_in_bytes"
hog kshm kshm -- -s 32
kp=$HOG_PID
wait_until 20 sh -c "[ \$(awk '\$1==\"oom_kill\"{print \$2}' $MNT/kshm/memory.oom_control) -ge 1 ]" ||
	bad "kshm: no OOM kill"
wait "$kp" 2>/dev/null
expect "kshm: memhog was killed by SIGKILL" "$?" 137
between "kshm: failcnt counts the refused charges" "$(cat "$MNT/kshm/memory.failcnt")" 1 1000000000
expect "kshm: nothing stays charged" "$(stat_key kshm shmem)" 0

# --- a file mapped in two groups is charged once ---
dd if=/dev/urandom of="$DATA/shared" bs=1M count=32 status=none conv=fsync
uncache "$DATA/shared"
mkdir "$MNT/f1" "$MNT/f2"
hog sh1 f1 -- -f "$DATA/shared"
ready sh1
c1=$(stat_key f1 cache)           # (a read samples sh1: it has mapped the file)
between "first mapper pays for the file" "$c1" $((32 * MiB - 256 * 1024)) $((40 * MiB))
hog sh2 f2 -- -f "$DATA/shared"
ready sh2
c2=$(stat_key f2 cache)
between "second mapper pays nothing for it" "$c2" 0 $((4 * MiB))
expect "the first keeps it" "$(stat_key f1 cache)" "$c1"
stop_hog "${HOGS[-1]}"
stop_hog "${HOGS[-2]}"

# --- past the limit: killed, within the overshoot bound ---
# (with the tracer, the samples as the limit nears come from its alarms:
# the kernel's counters of the process passing half the headroom its last
# sample left; one in a group without a limit arms none)
alarms() { daemon_status "$MNT" page_cache_alarms; }
mkdir "$MNT/nolimit"
a0=$(alarms)
hog nolimit nolimit -- -a 128
ready nolimit
expect "no alarm for growth outside a limited group" "$(alarms)" "$a0"
stop_hog "$HOG_PID"
mkdir "$MNT/k"
echo 256M > "$MNT/k/memory.limit_in_bytes"
hog kill k -- -a 1024 -r 1024
wait "$HOG_PID"
expect "killed by SIGKILL" "$?" 137
expect "the limit's alarms sampled it as it grew" "$(( $(alarms) > a0 ))" 1
last=$(awk '/^anon/ { n = $2 } END { print n + 0 }' "$DATA/kill.out")
echo "t_mirror: overshoot at 1 GiB/s into 256M: allocated $last MiB when killed"
# The bound is the daemon's reaction time; a sanitizer build is 5-15 times
# slower, so it is held by the plain build (where CI runs it first).
if [ -z "${MEMCGFS_SANLOG:-}" ]; then
	between "overshoot at most 128 MiB over the limit" "$last" 200 $((256 + 128))
else
	between "killed past the limit (sanitizer build)" "$last" 200 1024
fi
expect "oom_kill counted" "$(oom_key k oom_kill)" 1
expect "failcnt moved" "$(( $(cat "$MNT/k/memory.failcnt") > 0 ))" 1
wait_until 5 sh -c "[ \$(cat $MNT/k/memory.usage_in_bytes) -le $((8 * MiB)) ]" ||
	bad "usage did not drop after the kill: $(usage k)"
mkdir "$MNT/k2"
echo 256M > "$MNT/k2/memory.limit_in_bytes"
a1=$(alarms)
hog still k2 -- -a 200
ready still
sleep 1
a2=$(alarms)
sleep 1
expect "a process that does not grow sends no alarm" "$(alarms)" "$a2"
# (whether its growth sent alarms is a race between its speed and the
# samples near the limit, every 10 ms, each arming the next alarm half its
# headroom further: at 300 MB/s, 200 MiB under 256M sends none. The kill
# above, which grows up to the limit, where the step is 1 MiB, shows them)
expect "... and stayed under its limit" "$(oom_key k2 oom_kill)" 0
stop_hog "$HOG_PID"

# --- oom_kill_disable: stopped, then continued when the limit rises ---
mkdir "$MNT/s"
echo 64M > "$MNT/s/memory.limit_in_bytes"
echo 1 > "$MNT/s/memory.oom_control"
hog stop s -- -a 128
wait_until 10 sh -c "[ \"\$(awk '/^State:/{print \$2}' /proc/$HOG_PID/status)\" = T ]" ||
	bad "not stopped"
expect "stopped" "$(state "$HOG_PID")" T
expect "under_oom while stopped" "$(oom_key s under_oom)" 1
between "usage held at the limit" "$(usage s)" $((60 * MiB)) $((64 * MiB))
expect "not killed" "$(oom_key s oom_kill)" 0
echo 512M > "$MNT/s/memory.limit_in_bytes"
ready stop || bad "not continued after the limit rose"
expect "running again" "$(running "$HOG_PID")" yes
expect "under_oom cleared" "$(oom_key s under_oom)" 0
anon=$(( $(kb "$HOG_PID" RssAnon) * 1024 ))
between "all of it charged now" "$(stat_key s rss)" $((anon - MiB)) $((anon + MiB))
stop_hog "$HOG_PID"

# --- clean file pages are paged out under the limit, no OOM ---
# clean pages: written back before they are mapped
dd if=/dev/urandom of="$DATA/big" bs=1M count=64 status=none conv=fsync
dd if=/dev/urandom of="$DATA/big2" bs=1M count=64 status=none conv=fsync
uncache "$DATA/big" "$DATA/big2"
mkdir "$MNT/p"
echo 32M > "$MNT/p/memory.limit_in_bytes"
hog page p -- -f "$DATA/big"
ready page
wait_until 10 sh -c "[ \$(awk '/^RssFile:/{print \$2}' /proc/$HOG_PID/status) -lt 32768 ]" ||
	bad "file pages were not paged out"
expect "still alive" "$(running "$HOG_PID")" yes
expect "no OOM kill" "$(oom_key p oom_kill)" 0
between "usage within the limit" "$(usage p)" 0 $((32 * MiB))
# (direct reclaim at the limit, or background reclaim above the automatic
# high watermark got there first)
expect "reclaim ran" "$(( $(stat_key p pg_scan) + $(stat_key p kswapd_pgscan) > 0 ))" 1
stop_hog "$HOG_PID"

# --- background reclaim pages out a real process's file pages ---
mkdir "$MNT/w"
echo 200M > "$MNT/w/memory.limit_in_bytes"
echo 40M > "$MNT/w/memory.high_watermark_in_bytes"
echo 24M > "$MNT/w/memory.low_watermark_in_bytes"
hog bg w -- -f "$DATA/big2"     # (big's page cache is p's)
ready bg
wait_until 10 sh -c "[ \$(awk '/^RssFile:/{print \$2}' /proc/$HOG_PID/status) -lt 40960 ]" ||
	bad "background reclaim did not page out"
wait_until 10 sh -c "[ \$(cat $MNT/w/memory.usage_in_bytes) -le $((40 * MiB)) ]" ||
	bad "usage stayed above the high watermark"
expect "background scans counted" "$(( $(stat_key w kswapd_pgscan) > 0 ))" 1
expect "no direct reclaim: failcnt" "$(cat "$MNT/w/memory.failcnt")" 0
stop_hog "$HOG_PID"

# --- issue 17 §2: background reclaim really reclaims, and usage is never
# below what the process has resident. real: RssFile + RssAnon in bytes.
# Tolerance: file pages another group faulted first and pays for (the
# loader and libc, shared by every process), 4 MiB. ---
real() { echo $(( ($(kb "$1" RssFile) + $(kb "$1" RssAnon)) * 1024 )); }
TOL=$((4 * MiB))
# truthful GROUP PID: 40 reads in a row, each usage (a read samples the
# group first) at least the real resident memory read after it
truthful() {
	local i u r
	for i in $(seq 1 40); do
		u=$(usage "$1")
		r=$(real "$2")
		[ "$u" -ge $((r - TOL)) ] || { echo "usage $u < resident $r"; return 1; }
	done
}
rss_file_le() { [ "$(kb "$1" RssFile)" -le $(($2 / 1024)) ]; }
dd if=/dev/urandom of="$DATA/f96" bs=1M count=96 status=none conv=fsync
uncache "$DATA/f96"
wm() {
	echo 128M > "$MNT/$1/memory.limit_in_bytes"
	echo 64M > "$MNT/$1/memory.high_watermark_in_bytes"
	echo 48M > "$MNT/$1/memory.low_watermark_in_bytes"
}
# alone: its 96 MiB of clean file pages really go, down past the low mark
mkdir "$MNT/r1"
wm r1
hog r1 r1 -- -f "$DATA/f96"
ready r1
wait_until 10 rss_file_le "$HOG_PID" $((48 * MiB)) ||
	bad "RssFile stayed at $(kb "$HOG_PID" RssFile) kB"
wait_until 10 sh -c "[ \$(cat $MNT/r1/memory.usage_in_bytes) -le $((48 * MiB)) ]" ||
	bad "usage stayed above the low watermark: $(usage r1)"
echo "t_mirror: alone: usage $(usage r1), resident $(real "$HOG_PID")"
msg=$(truthful r1 "$HOG_PID") && ok || bad "alone: $msg"
# (a confirmed pageout took the pages from the page cache: no stand-in
# stays charged for them)
between "alone: usage is what stayed resident" "$(usage r1)" 0 $(($(real "$HOG_PID") + TOL))
expect "alone: background reclaim did it" "$(( $(stat_key r1 kswapd_steal) > 0 ))" 1
stop_hog "$HOG_PID"
# shared with a process of the root: MADV_PAGEOUT leaves pages another
# process maps. Usage stays what is resident, the stand-ins stay charged
# (unevictable for the back-off), reclaim does not spin, nothing is killed.
# r2 brings the file in (so it pays for it), the root's process maps it
# too, then r2's watermarks come. (r1's process is gone, but its address
# space may outlive it a moment, held by the daemon's read of its smaps or
# a pageout in flight: until it goes, the pages it mapped cannot be
# dropped, and r2 would find them cached)
uncached96() { uncache "$DATA/f96"; [ "$(cached_kib "$DATA/f96")" -le 256 ]; }
wait_until 10 uncached96 || bad "shared: $(cached_kib "$DATA/f96") KiB of the file stayed cached"
mkdir "$MNT/r2"
hog r2 r2 -- -f "$DATA/f96"
ready r2
R2=$HOG_PID
"$HOG" -f "$DATA/f96" > "$DATA/root96.out" 2>&1 < /dev/null &
R96=$!
HOGS+=("$R96")
ready root96
HOG_PID=$R2
between "shared: r2 pays for what it brought in" "$(stat_key r2 cache)" $((96 * MiB - 256 * 1024)) \
	$((100 * MiB))
wm r2
wait_until 10 sh -c "[ \$(awk '\$1==\"kswapd_steal\"{print \$2}' $MNT/r2/memory.stat) -gt 0 ]" ||
	bad "shared: no background reclaim"
wait_until 10 sh -c "[ \$(awk '\$1==\"unevictable\"{print \$2}' $MNT/r2/memory.stat) -gt $((64 * MiB)) ]" ||
	bad "shared: the pages the kernel kept were not charged back"
echo "t_mirror: shared: usage $(usage r2), resident $(real "$HOG_PID")"
msg=$(truthful r2 "$HOG_PID") && ok || bad "shared: $msg"
between "shared: RssFile stayed (the kernel keeps shared pages)" "$(kb "$HOG_PID" RssFile)" \
	$((90 * 1024)) $((100 * 1024))
expect "shared: no OOM kill" "$(oom_key r2 oom_kill)" 0
expect "shared: no failcnt" "$(cat "$MNT/r2/memory.failcnt")" 0
stop_hog "$HOG_PID"
stop_hog "$R96"

# --- never signalled: oom_score_adj -1000; a container's PID 1 is, as the
# kernel's OOM killer exempts only the global init (issue 24) ---
mkdir "$MNT/x" "$MNT/y"
echo 32M > "$MNT/x/memory.limit_in_bytes"
echo 32M > "$MNT/y/memory.limit_in_bytes"
if sh -c 'echo -1000 > /proc/self/oom_score_adj' 2>/dev/null; then
	hog adj x sh -c 'echo -1000 > /proc/self/oom_score_adj && exec "$@"' sh -- -a 64
	ready adj
	enforced x
	expect "no oom_kill for it" "$(oom_key x oom_kill)" 0
	expect "oom_score_adj -1000 not killed" "$(running "$HOG_PID")" yes
	between "usage within the limit" "$(usage x)" 0 $((32 * MiB))
	stop_hog "$HOG_PID"
else
	# This root lacks CAP_SYS_RESOURCE (a container's root, as on the CI
	# machines), so no process here can have -1000. The daemon learns it
	# from /proc/PID/oom_score_adj alone: in a private mount namespace a
	# daemon of its own sees a file saying -1000 bound over the process's,
	# bound before the process allocates (it waits on a FIFO, then execs
	# memhog, keeping its PID).
	out=$(unshare -m --propagation private bash -s "$MEMCGFS" "$HOG" "$DATA" <<'EOS'
set -u
memcgfs=$1 hog=$2 data=$3
m=$data/adjmnt
mkdir "$m"
"$memcgfs" "$m" || { echo "mount failed"; exit 1; }
mkdir "$m/x"
echo 32M > "$m/x/memory.limit_in_bytes"
mkfifo "$data/adj.fifo"
echo -1000 > "$data/adj.value"
sh -c 'echo $$ > "$1/x/tasks" && read x < "$2" && exec "$3" -a 64' sh "$m" "$data/adj.fifo" "$hog" \
	> "$data/adj.out" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -qx "$pid" "$m/x/tasks" && break; sleep 0.05; done
mount --bind "$data/adj.value" "/proc/$pid/oom_score_adj"
echo "seen $(cat "/proc/$pid/oom_score_adj")"
echo go > "$data/adj.fifo"
for _ in $(seq 400); do grep -q '^ready' "$data/adj.out" && break; sleep 0.05; done
for _ in $(seq 400); do [ "$(cat "$m/x/memory.failcnt")" -gt 0 ] && break; sleep 0.05; done
echo "failcnt_moved $(( $(cat "$m/x/memory.failcnt") > 0 ))"
cat "$m/x/memory.usage_in_bytes" > /dev/null
echo "oom_kill $(awk '$1 == "oom_kill" { print $2 }' "$m/x/memory.oom_control")"
echo "state $(awk '/^State:/ { print $2 }' "/proc/$pid/status")"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
umount "/proc/$pid/oom_score_adj" 2>/dev/null
fusermount3 -u "$m"
rmdir "$m"
EOS
)
	field() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }
	expect "oom_score_adj -1000 (bound): the daemon's /proc says so" "$(field seen)" -1000
	expect "oom_score_adj -1000 (bound): its limit was hit" "$(field failcnt_moved)" 1
	expect "oom_score_adj -1000 (bound): no oom_kill for it" "$(field oom_kill)" 0
	expect "oom_score_adj -1000 (bound): not killed" "$(field state | tr RSD +)" "+"
fi
hog pid1 y unshare -fp -- -a 64 -t 3
wait_until 20 sh -c "[ \$(awk '\$1 == \"oom_kill\" { print \$2 }' $MNT/y/memory.oom_control) -ge 1 ]" ||
	bad "PID 1 of a namespace over its limit: no OOM kill"
# (unshare -f reports its child's SIGKILL as exit 1 here: util-linux 2.38
# fails to re-raise it, "sigprocmask unblock failed")
wait "$HOG_PID" 2>/dev/null
expect "... it is gone, and its namespace with it" "$(pgrep -f -x "$HOG -a 64 -t 3" | wc -l)" 0
expect "... one kill" "$(oom_key y oom_kill)" 1
between "... its charges gone" "$(usage y)" 0 $((MiB))

# --- move charge at immigrate with a real process ---
mkdir "$MNT/m1" "$MNT/m2"
hog mv m1 -- -a 64
ready mv
anon=$(( $(kb "$HOG_PID" RssAnon) * 1024 ))
between "charged to the first group" "$(stat_key m1 rss)" $((anon - MiB)) $((anon + MiB))
cache=$(stat_key m1 cache)
echo 1 > "$MNT/m2/memory.move_charge_at_immigrate"
echo "$HOG_PID" > "$MNT/m2/tasks"
between "value 1: anon moved to the destination" "$(stat_key m2 rss)" $((anon - MiB)) $((anon + MiB))
expect "source lost its rss" "$(stat_key m1 rss)" 0
expect "source kept its page cache (value 1 is anon only)" "$(stat_key m1 cache)" "$cache"
echo 0 > "$MNT/m1/memory.move_charge_at_immigrate"
echo "$HOG_PID" > "$MNT/m1/tasks"
between "value 0: the charge stays behind" "$(stat_key m2 rss)" $((anon - MiB)) $((anon + MiB))
expect "nothing arrived" "$(stat_key m1 rss)" 0
stop_hog "$HOG_PID"
umount_fs

# --- charges stay with the group that faulted them (§11.9), as LTP's
# memcg_lib.sh expects: warm up in the root, attach, then only what is
# allocated afterwards is charged; move_charge_at_immigrate (6.12) moves ---
mount_fs || exit 1
mkdir "$MNT/g" "$MNT/h" "$MNT/m"
for d in g h m; do expect "$d starts empty" "$(usage $d)" 0; done
# in the root, outside every child: 64 MiB faulted there
"$HOG" -a 64 -m 16 > "$DATA/im.out" 2>&1 < /dev/null &
IM=$!
HOGS+=("$IM")
ready im
echo "$IM" > "$MNT/g/tasks"
# (what the write found stays the root's; only the sample's page tables
# and the like could differ, and memhog is waiting in sigwait)
between "attached with 64 MiB from the root: g's usage" "$(usage g)" 0 $((1 * MiB))
expect "attached: g's rss" "$(stat_key g rss)" 0
expect "attached: g's kmem" "$(cat "$MNT/g/memory.kmem.usage_in_bytes")" 0
# 16 MiB more, touched page by page after the attach: 4,096 pages of anon
# (RssAnon counts every page touched); usage adds the page tables of one
# 16 MiB mapping (8 or 9 pages of 4 KiB, each maps 2 MiB) and what is left
# of the per-CPU stock's 64-page batch (at most 63 pages)
kill -USR1 "$IM"
wait_until 10 grep -q '^more 1' "$DATA/im.out" || bad "memhog did not grow"
wait_until 5 sh -c "[ \$(awk '\$1==\"rss\"{print \$2}' $MNT/g/memory.stat) -ge $((16 * MiB)) ]" ||
	bad "the growth was not charged"
g_rss=$(stat_key g rss)
between "growth after the attach: g's rss" "$g_rss" $((16 * MiB)) $((16 * MiB + 128 * 1024))
between "growth after the attach: g's usage" "$(usage g)" $((16 * MiB)) $((16 * MiB + (9 + 63) * 4096))
# between two children without move_charge: the old group keeps its pages
echo "$IM" > "$MNT/h/tasks"
expect "moved without move_charge: g keeps them" "$(stat_key g rss)" "$g_rss"
between "moved without move_charge: h has nothing" "$(usage h)" 0 $((1 * MiB))
kill -USR1 "$IM"
wait_until 10 grep -q '^more 2' "$DATA/im.out" || bad "memhog did not grow again"
wait_until 5 sh -c "[ \$(awk '\$1==\"rss\"{print \$2}' $MNT/h/memory.stat) -ge $((16 * MiB)) ]" ||
	bad "h's growth was not charged"
between "growth in h is h's" "$(stat_key h rss)" $((16 * MiB)) $((16 * MiB + 128 * 1024))
expect "g unchanged by h's growth" "$(stat_key g rss)" "$g_rss"
# freeing: the current group's charges go first (here the newest mapping
# is h's), then the others', the most recent first
kill -USR2 "$IM"
wait_until 10 grep -q '^less 1' "$DATA/im.out" || bad "memhog did not free"
wait_until 5 sh -c "[ \$(awk '\$1==\"rss\"{print \$2}' $MNT/h/memory.stat) -eq 0 ]" ||
	bad "h's pages were not uncharged"
expect "freed h's mapping: g keeps its own" "$(stat_key g rss)" "$g_rss"
kill -USR2 "$IM"
wait_until 10 grep -q '^less 0' "$DATA/im.out" || bad "memhog did not free again"
wait_until 5 sh -c "[ \$(awk '\$1==\"rss\"{print \$2}' $MNT/g/memory.stat) -eq 0 ]" ||
	bad "g's pages were not uncharged from h"
expect "freed g's mapping from h: h's rss" "$(stat_key h rss)" 0
# back to the root, then into m with move_charge_at_immigrate 3: what it
# has in the root (its 64 MiB) moves to m
echo "$IM" > "$MNT/tasks"
echo 3 > "$MNT/m/memory.move_charge_at_immigrate"
echo "$IM" > "$MNT/m/tasks"
anon=$(( $(kb "$IM" RssAnon) * 1024 ))
between "move_charge 3 from the root: the 64 MiB moved" "$(stat_key m rss)" $((anon - MiB)) $((anon + MiB))
# a process never seen before, written into m with move_charge 3
"$HOG" -a 32 > "$DATA/im2.out" 2>&1 < /dev/null &
IM2=$!
HOGS+=("$IM2")
ready im2
m_rss=$(stat_key m rss)
echo "$IM2" > "$MNT/m/tasks"
anon2=$(( $(kb "$IM2" RssAnon) * 1024 ))
between "move_charge 3, first seen: its 32 MiB moved" "$(( $(stat_key m rss) - m_rss ))" \
	$((anon2 - MiB)) $((anon2 + MiB))
# exits: every anon and kernel charge goes; g and h charged no page cache
# (what memhog mapped was resident before it came), m keeps the page cache
# it was moved (bit 1)
stop_hog "$IM"
stop_hog "$IM2"
for d in g h m; do
	wait_until 5 sh -c "[ \$(awk '\$1==\"rss\"{print \$2}' $MNT/$d/memory.stat) -eq 0 ]" ||
		bad "$d: rss did not drop after the exits"
	expect "$d: kmem after the exits" "$(cat "$MNT/$d/memory.kmem.usage_in_bytes")" 0
done
# (usage is the page counter's, as on the kernel: what a CPU's stock took
# for g or h and has not handed on stays counted, at most 63 pages of the
# 64-page batch per CPU the processes charged from)
between "g: usage back to what it was (and the stocks' rest)" "$(usage g)" 0 $((2 * 63 * 4096))
between "h: usage back to what it was (and the stocks' rest)" "$(usage h)" 0 $((2 * 63 * 4096))
# (and what the per-CPU stocks its two processes charged through kept:
# at most 63 pages each)
cache=$(stat_key m cache)
between "m: only its page cache is left (and the stocks' rest)" "$(usage m)" "$cache" $((cache + 2 * 63 * 4096))

# --- LTP's memcg_subgroup_charge, step by step as its memcg_lib.sh runs it
# on a kernel from 6.1 (65-page stat batches): a process of the root warmed
# up there (its 130 pages allocated and freed), written into the test's
# group, allocates 130 pages; once usage has grown by that much, the
# group's rss is exactly those pages; written into a subgroup (limits
# twice that, that, and 0, as memcg_adjust_limit_for_kmem raises them),
# the subgroup has no rss and the group keeps it. (The subgroup's mkdir
# charges the group a 64-page batch through the stock of the CPU it runs
# on, 5 pages of it used, as the kernel's does: a process allocating on
# that CPU draws on the rest and usage grows by 128 pages, not 130, so
# that LTP's wait would time out. The kernel's scheduler placed it on
# another CPU in the issue's run; here the two are pinned apart.) ---
lsize=$((2 * 65 * 4096))
cpu_mk=() cpu_run=()
read -r -a cpus <<< "$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')"
[ "${#cpus[@]}" -ge 2 ] && cpu_mk=(taskset -c "${cpus[0]}") cpu_run=(taskset -c "${cpus[1]}")
for sublimit in $((2 * lsize)) $lsize 0; do
	mkdir "$MNT/ltp"
	"${cpu_mk[@]}" mkdir "$MNT/ltp/subgroup"
	[ "$sublimit" -ne 0 ] && sublimit=$((sublimit + (4 + $(nproc)) * 4096))
	echo "$sublimit" > "$MNT/ltp/subgroup/memory.limit_in_bytes"
	"${cpu_run[@]}" "$HOG" -m $((lsize / 4096)) -p > "$DATA/ltp.out" 2>&1 < /dev/null &
	LTP=$!
	HOGS+=("$LTP")
	ready ltp
	kill -USR1 "$LTP"
	wait_until 10 grep -q '^more 1' "$DATA/ltp.out" || bad "ltp: no warm-up allocation"
	kill -USR2 "$LTP"
	wait_until 10 grep -q '^less 0' "$DATA/ltp.out" || bad "ltp: no warm-up free"
	echo "$LTP" > "$MNT/ltp/tasks"
	start=$(usage ltp)
	kill -USR1 "$LTP"
	wait_until 10 sh -c "[ \$(( \$(cat $MNT/ltp/memory.usage_in_bytes) - $start )) -ge $lsize ]" ||
		bad "ltp: usage never grew by $lsize"
	expect "LTP subgroup_charge (subgroup limit $sublimit): the group's rss" "$(stat_key ltp rss)" "$lsize"
	echo "$LTP" > "$MNT/ltp/subgroup/tasks"
	expect "LTP subgroup_charge (subgroup limit $sublimit): the subgroup's rss" \
		"$(stat_key ltp/subgroup rss)" 0
	expect "LTP subgroup_charge (subgroup limit $sublimit): the group keeps it" "$(stat_key ltp rss)" "$lsize"
	stop_hog "$LTP"
	rmdir "$MNT/ltp/subgroup" "$MNT/ltp"
done
umount_fs

# --- an idle process is looked at less often, yet held to its limit when it
# wakes: nobody reads the group's files meanwhile (a read samples anyway) ---
mount_fs || exit 1
mkdir "$MNT/idle"
echo 24M > "$MNT/idle/memory.limit_in_bytes"
FIFO=$(mktemp -u /tmp/memcgfs-idle.XXXXXX)
mkfifo "$FIFO"
/usr/bin/python3 - "$MNT/idle/cgroup.procs" "$FIFO" <<'PY' &
import os, sys
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
a = bytearray(8 << 20)
for i in range(0, len(a), 4096):
    a[i] = 1
with open(sys.argv[2]) as f:                     # idle until told
    f.read()
b = bytearray(64 << 20)                          # past the limit
for i in range(0, len(b), 4096):
    b[i] = 1
with open(sys.argv[2]) as f:
    f.read()
PY
IDLE=$!
sleep 5                                          # idle: its looks back off
echo > "$FIFO"                                   # it wakes and takes 64 MiB
wait "$IDLE"
expect "idle, then 64 MiB into 24M: OOM-killed without a reader" "$?" 137
rm -f "$FIFO"
expect "idle: one kill" "$(oom_key idle oom_kill)" 1

# --- kernel memory that outlives its tasks: a fault of a file the host did
# not cache adds page-cache tree nodes, charged to the faulting task's group
# (estimated); they stay while the host keeps the pages, force_empty
# included (the kernel keeps the nodes too), and from 5.9 go to the parent
# when the group is removed, which then goes at once (nothing but kernel
# memory held it: the kernel's obj_cgroup reparenting) ---
kmem() { cat "$MNT/$1/memory.kmem.usage_in_bytes"; }
tracer_pages() { "$MEMCGFS_BUILD/memcgctl" status -m "$MNT" | awk '$1 == "page_cache_kmem_pages" { print $2 }'; }
head -c $((4 * MiB)) /dev/urandom > "$DATA/kf"
uncache "$DATA/kf"
mkdir "$MNT/kp" "$MNT/kp/c"
structs=$(kmem kp)                               # c's (20 KiB, §11.5)
# memhog's own pages are in the host's cache before it starts in kp/c: if
# they were not (evicted since the build), its exec would fault them in
# there, charging kp tree nodes for a file this test never drops (a CI run
# saw kp's kmem stay one page)
cat "$HOG" > /dev/null
hog kf kp/c -- -f "$DATA/kf"
ready kf
stop_hog "$HOG_PID"
wait_until 10 sh -c "[ -z \"\$(cat $MNT/kp/c/tasks)\" ]"
echo 1 > "$MNT/kp/c/memory.force_empty"
est=$(( $(tracer_pages) * 4096 ))
expect "kmem after exit and force_empty: the tree nodes' estimate" "$(( $(kmem kp/c) > 0 ))/$(kmem kp/c)" "1/$est"
rmdir "$MNT/kp/c"
gone_c() { [ "$(kmem kp)" = "$est" ]; }
wait_until 10 gone_c
expect "c removed: its tree nodes are kp's, its structures gone" "$(kmem kp)" "$est"
# (the mkdir of c charged kp a 64-page batch through the stock of the CPU
# it ran on, 59 pages of which stay stocked, in kp's usage as on the
# kernel, until that CPU charges another group; force_empty drains the
# stocks first)
echo 1 > "$MNT/kp/memory.force_empty"
expect "... and kp's usage is only that" "$(usage kp)" "$est"
# (the file, and the one memhog's output went to: its page too)
dropped() { uncache "$DATA/kf" "$DATA/kf.out"; [ "$(kmem kp)" = 0 ]; }
wait_until 10 dropped || bad "the host dropped the files: kp's kmem stays $(kmem kp), $(tracer_pages) pages"
rmdir "$MNT/kp"
umount_fs

# --- enforce=none: accounted, never signalled or paged out ---
mount_fs enforce=none || exit 1
mkdir "$MNT/n"
echo 32M > "$MNT/n/memory.limit_in_bytes"
hog none n -- -a 64
ready none
enforced n
expect "enforce=none: no oom_kill" "$(oom_key n oom_kill)" 0
expect "enforce=none: alive past the limit" "$(running "$HOG_PID")" yes
between "enforce=none: usage capped at the limit" "$(usage n)" 0 $((32 * MiB))
stop_hog "$HOG_PID"

summary
