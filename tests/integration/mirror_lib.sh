# mirror_lib.sh: what the tests of real processes share (t_mirror.sh,
# t_pcscan.sh), sourced after lib.sh: memhog started in a group and waited
# for, the group's figures, the host's page cache of a file.
HOG="$MEMCGFS_BUILD/tools/memhog"
DATA=$(mktemp -d /var/tmp/memcgfs-mirror.XXXXXX)
HOGS=()

cleanup() {
	kill_child KILL "${HOGS[@]}"
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT

# hog NAME GROUP [PREFIX...] -- ARGS...: start memhog in GROUP (it writes
# itself into tasks before it allocates); its pid goes to $HOG_PID, its
# output to $DATA/NAME.out.
hog() {
	local name=$1 group=$2
	shift 2
	local pre=()
	while [ "$1" != "--" ]; do pre+=("$1"); shift; done
	shift
	"${pre[@]}" bash -c "echo \$\$ > $MNT/$group/tasks && exec $HOG $*" \
		> "$DATA/$name.out" 2>&1 < /dev/null &
	HOG_PID=$!
	HOGS+=("$HOG_PID")
}

# ready NAME: memhog NAME is done allocating. Past the read age (20 ms) a
# read samples afresh, so what follows sees everything it allocated.
ready() { wait_until 20 grep -q '^ready' "$DATA/$1.out" && sleep 0.05; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
stat_key() { awk -v k="$2" '$1 == k { print $2 }' "$MNT/$1/memory.stat"; }
oom_key() { awk -v k="$2" '$1 == k { print $2 }' "$MNT/$1/memory.oom_control"; }
usage() { cat "$MNT/$1/memory.usage_in_bytes"; }
state() { awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
between() { [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] && ok || bad "$1: $2 not in [$3, $4]"; }
# running: a live process, not stopped, not a zombie (kill -0 succeeds on
# a zombie child, and an empty state on a process that vanished)
running() { case $(state "$1") in R|S|D) echo yes ;; *) echo "no (state [$(state "$1")])" ;; esac; }
# enforced GROUP: the daemon has met GROUP's limit (failcnt moved) and has
# been through its enforcement once more since (a read of the usage samples
# the group's processes and acts on what it finds, before it answers)
enforced() {
	wait_until 20 sh -c "[ \$(cat '$MNT/$1/memory.failcnt') -gt 0 ]" ||
		{ bad "$1: the limit was never met"; return 1; }
	usage "$1" > /dev/null
}
stop_hog() { kill_child KILL "$1"; wait "$1" 2>/dev/null; }
# uncache FILE...: written back and out of the host's page cache, so that
# whoever reads or maps it next brings its pages in (and, on the kernel,
# pays for them: page cache is charged to the group of the task that adds
# it, not to those that map it later)
uncache() {
	python3 -c 'import os, sys
for f in sys.argv[1:]:
    fd = os.open(f, os.O_RDONLY); os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$@"
}

# cached_kib FILE: how much of FILE the host's page cache holds (mincore
# of a mapping that touches nothing)
cached_kib() {
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
n = (size + 4095) // 4096
addr = libc.mmap(None, size, 1, 1, fd, 0)
vec = (ctypes.c_ubyte * n)()
libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec)
print(sum(b & 1 for b in vec) * 4)' "$1"
}

# memfd_is_shmem GROUP: memhog -M 32 of GROUP (a memfd filled with
# write(2), never mapped) is shmem and cache on the anon list, never dirty
# (a CPU's LRU batch may hold up to 31 tmpfs folios back: 124 KiB)
memfd_is_shmem() {
	between "$1: memfd write(2) is shmem" "$(stat_key "$1" shmem)" $((32 * MiB - 256 * 1024)) $((32 * MiB))
	between "$1: ... and cache" "$(stat_key "$1" cache)" $((32 * MiB - 256 * 1024)) $((36 * MiB))
	between "$1: ... on the anon list" "$(stat_key "$1" inactive_anon)" $((32 * MiB - 256 * 1024)) \
		$((32 * MiB + 256 * 1024))
	between "$1: ... never dirty" "$(stat_key "$1" dirty)" 0 $((256 * 1024))
}
