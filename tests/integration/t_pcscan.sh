#!/bin/bash
# t_pcscan.sh: page cache of real processes without the kernel's events
# (issue 25's fallback, -o page_cache=scan, what a daemon that may not load
# eBPF does): the files a mirrored process has open are looked at with
# cachestat(2), and what they hold is charged to its group as the events
# would have charged it (read(2): cache; write(2): cache and dirty until
# written back; a memfd: shmem), gone when the host drops it, when the
# file is truncated, and when the last process that had it open closes it
# or exits (the difference from the kernel docs/files.md names).
# PCSCAN_WAY=mincore (t_pcmincore.sh): the same with -o page_cache=mincore,
# the scan as on a kernel without cachestat(2) (before 6.5), which is what
# page_cache=scan does there: mincore(2) of a mapping of each file, which
# cannot tell dirty pages (nothing is dirty).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mirror_lib.sh"

WAY=${PCSCAN_WAY:-scan}
mount_fs page_cache=$WAY || exit 1
MiB=1048576
# (cachestat(2) came in 6.5)
source=cachestat
IFS=. read -r kmaj kmin _ <<< "$(uname -r)"
if [ "$WAY" = mincore ] || (( kmaj < 6 || (kmaj == 6 && kmin < 5) )); then
	source=mincore
fi
st=$("$MEMCGFS_BUILD/memcgctl" status -m "$MNT")
expect "status: the page cache comes from the scan ($source)" \
	"$(echo "$st" | awk '$1 == "page_cache_source" { print $2 }')" $source
if [ "$source" = mincore ]; then
	expect "status: ... and says why not cachestat" \
		"$(echo "$st" | awk '$1 == "page_cache_source" { print ($0 ~ /cachestat: /) }')" 1
fi
# dirty_known: does the scan tell dirty pages? (cachestat does)
dirty_known() { [ "$source" = cachestat ]; }
expect "status: it sees open files' page cache" \
	"$(echo "$st" | awk '$1 == "real_processes_sees" { print ($2 ~ /open-file-page-cache/) }')" 1
expect "status: it misses closed files'" \
	"$(echo "$st" | awk '$1 == "real_processes_misses" { print ($2 ~ /closed-file-page-cache/) }')" 1

# reader GROUP MIB: a file of MIB out of the host's page cache, read with
# read(2) by memhog in the new GROUP, which keeps it open; its pid in
# $HOG_PID, the file $DATA/GROUP.data
reader() {
	head -c $(($2 * MiB)) /dev/urandom > "$DATA/$1.data"
	uncache "$DATA/$1.data"
	mkdir "$MNT/$1"
	hog "$1" "$1" -- -R "$DATA/$1.data" -K
	ready "$1"
}

# cache_at_most GROUP BYTES / dirty_at_most GROUP BYTES (for wait_until)
cache_at_most() { [ "$(stat_key "$1" cache)" -le "$2" ]; }
dirty_at_most() { [ "$(stat_key "$1" dirty)" -le "$2" ]; }

# --- read(2) of 64 MiB, the file kept open: cache on the inactive list ---
reader r 64
# (bounds as t_mirror's: 256 KiB below, up to 4 MiB above for memhog's own
# output and the stand-ins of its binary's and libraries' mappings). The
# scan looks every 100 ms: a pass that ran while the last reads were being
# made saw part of them, the next one sees all (wait for it, up to 15 s:
# under ASan, beside other work, a pass was seen to take more than 5 s)
cache_at_least() { [ "$(stat_key "$1" cache)" -ge "$2" ]; }
wait_until 15 cache_at_least r $((64 * MiB - 256 * 1024))
between "r: read(2) of 64 MiB is cache" "$(stat_key r cache)" $((64 * MiB - 256 * 1024)) $((68 * MiB))
between "r: ... on the inactive file list" "$(stat_key r inactive_file)" $((64 * MiB - 256 * 1024)) \
	$((68 * MiB))
between "r: ... not mapped" "$(stat_key r mapped_file)" 0 $((4 * MiB))
between "r: ... not dirty" "$(stat_key r dirty)" 0 $((256 * 1024))
if [ "$source" = mincore ]; then
	# (nothing looked at was faulted in: the file's own pages only, once)
	between "r: mincore's mappings fault nothing: not mapped" "$(stat_key r mapped_file)" 0 $((4 * MiB))
fi
between "r: usage" "$(usage r)" $((64 * MiB - 256 * 1024)) $((68 * MiB))
# the host drops half of it (the reader idle: seen at its idle look)
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 32 << 20, os.POSIX_FADV_DONTNEED); os.close(fd)' "$DATA/r.data"
wait_until 10 cache_at_most r $((36 * MiB)) || bad "r: the half the host dropped stays charged"
# (what the host kept of the other half: it may have dropped more)
host=$(( $(cached_kib "$DATA/r.data") * 1024 ))
between "r: what the host kept stays ($host bytes)" "$(stat_key r cache)" $((host - 256 * 1024)) \
	$((host + 4 * MiB))
# truncated while open: its pages go
truncate -s 0 "$DATA/r.data"
wait_until 10 cache_at_most r $((4 * MiB)) || bad "r: the truncated file's pages stay charged"
stop_hog "$HOG_PID"

# --- the reader exits: what its open file held goes with it at once ---
reader x 32
between "x: read(2) of 32 MiB is cache" "$(stat_key x cache)" $((32 * MiB - 256 * 1024)) $((36 * MiB))
stop_hog "$HOG_PID"
between "x: the exit lets go of the open file's pages (the scan cannot follow a closed file)" \
	"$(stat_key x cache)" 0 $((4 * MiB))

# --- a memfd of 32 MiB written with write(2): shmem, never dirty ---
mkdir "$MNT/m"
hog m m -- -M 32
ready m
memfd_is_shmem m
stop_hog "$HOG_PID"
between "m: the memfd goes with its last holder" "$(stat_key m shmem)" 0 0

# --- write(2) of 32 MiB, no fsync: dirty until written back ---
mkdir "$MNT/w"
hog w w -- -W "$DATA/w32" -w 32
ready w
between "w: write(2) of 32 MiB is cache" "$(stat_key w cache)" $((32 * MiB - 256 * 1024)) $((36 * MiB))
if dirty_known; then
	between "w: ... dirty" "$(stat_key w dirty)" $((32 * MiB - 256 * 1024)) $((32 * MiB + 256 * 1024))
else
	between "w: ... dirty: mincore cannot tell (0)" "$(stat_key w dirty)" 0 0
fi
# kernel memory, estimated as with the events: a buffer head per page
# written through ext4 and a tree node per 64 pages (904 KiB for 32 MiB)
if dirty_known; then
	between "w: kmem: buffer heads and tree nodes" "$(cat "$MNT/w/memory.kmem.usage_in_bytes")" \
		$((904 * 1024)) $((1536 * 1024))
else
	# (buffer heads are charged with the dirtying, which mincore cannot
	# see: tree nodes only, 128 of them for 32 MiB)
	between "w: kmem: tree nodes only" "$(cat "$MNT/w/memory.kmem.usage_in_bytes")" \
		$((64 * 1024)) $((904 * 1024 - 1))
fi
sync "$DATA/w32"
dirty_known && { wait_until 10 dirty_at_most w $((256 * 1024)) ||
	bad "w: written back, still dirty: $(stat_key w dirty)"; }
host=$(( $(cached_kib "$DATA/w32") * 1024 ))
between "w: written back, what the host keeps is still cache ($host bytes)" "$(stat_key w cache)" \
	$((host - 256 * 1024)) $((host + 4 * MiB))
stop_hog "$HOG_PID"
between "w: closed, its pages go" "$(stat_key w cache)" 0 $((4 * MiB))
between "w: ... and their kernel memory" "$(cat "$MNT/w/memory.kmem.usage_in_bytes")" 0 $((64 * 1024))

# --- descriptors that are not local files are passed by, never duplicated:
# one of memcgfs itself (a FUSE file: its duplicate's close would ask
# this very daemon), a FIFO, a pipe ---
head -c $((16 * MiB)) /dev/urandom > "$DATA/fz.data"
uncache "$DATA/fz.data"
mkfifo "$DATA/fifo"
mkdir "$MNT/fz"
# (the pipe first: its writer must not hold the others)
hog fz fz bash -c 'exec 5< <(sleep 30) 3< "$1/fz/memory.stat" 4<> "$2"; shift 2; exec "$@"' _ \
	"$MNT" "$DATA/fifo" -- -R "$DATA/fz.data" -K
ready fz
between "fz: the local file beside a FUSE file, a FIFO and a pipe is cache" "$(stat_key fz cache)" \
	$((16 * MiB - 256 * 1024)) $((20 * MiB))
expect "fz: the daemon answers" "$(timeout 5 cat "$MNT/fz/memory.limit_in_bytes")" 9223372036854771712
stop_hog "$HOG_PID"

# --- nothing counted twice: a file read by a process and mapped by it ---
head -c $((16 * MiB)) /dev/urandom > "$DATA/f16"
uncache "$DATA/f16"
mkdir "$MNT/b"
hog b b -- -R "$DATA/f16" -K -f "$DATA/f16"
ready b
# (the scan's pass may charge a range it looked at just before the mapping
# appeared while the sampler fills the mapping: the scan then has the
# mapping sampled again, and a read's refresh samples it before it answers,
# so the first read after both is right)
between "b: read and mapped, 16 MiB once" "$(stat_key b cache)" $((16 * MiB - 256 * 1024)) $((20 * MiB))
stop_hog "$HOG_PID"

summary
