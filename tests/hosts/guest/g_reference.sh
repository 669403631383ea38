#!/bin/bash
# g_reference.sh (in a v2-only guest of the host matrix): the guest kernel
# as the reference. Each workload of the real-process tests runs once in a
# cgroup2 group of the guest's own and once in a memcgfs group, alone, the
# page cache dropped before each; one second after it says it is ready the
# kernel's memory.current and memory.stat (anon, file, shmem, file_mapped,
# file_dirty) are read beside memcgfs's usage_in_bytes and memory.stat
# (rss, cache, shmem, mapped_file, dirty), and both usages again 100 ms
# after the workload exited ("exit"). Prints a line per workload and
# key ("reference W KEY memcgfs kernel") and holds each within 5 % of the
# workload's size (64 MiB) of the kernel's. Files live on the guest's ext4 disk
# (HOSTS_DISK), whose reads go through the page cache as a host's do.
# G_REFERENCE_OPTS: memcgfs's mount options; G_REFERENCE_ONLY: the
# workloads to run (all by default); G_REFERENCE_SKIP: "KEY:REASON;..."
# keys not compared, each said with its reason; G_REFERENCE_SOURCE: the
# page_cache_source memcgctl status must name (g_scan.sh sets them).
. "$(dirname "$0")/../../integration/lib.sh"
HOG="$MEMCGFS_BUILD/tools/memhog"
MiB=1048576
SIZE=64
V2=/sys/fs/cgroup
REF=$V2/memcgfs-reference
if [ "$(stat -f -c %T $V2)" != cgroup2fs ] || ! grep -qw memory $V2/cgroup.subtree_control; then
	# (nothing asserted: 0 passed; the v1 layouts are the matrix's
	# extra cells, not CI's)
	echo "g_reference.sh: no cgroup2 memory controller here (layout ${HOSTS_LAYOUT:-?}): nothing to compare"
	summary
	exit
fi
DISK=${HOSTS_DISK:-/var/tmp}
DATA=$(mktemp -d "$DISK/g_reference.XXXXXX")
HOGS=()
cleanup() {
	kill_child KILL "${HOGS[@]}"
	for d in "$REF"/*/; do [ -d "$d" ] && rmdir "$d"; done
	[ -d "$REF" ] && rmdir "$REF"
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT

mkdir -p "$REF"
echo +memory > "$REF/cgroup.subtree_control"
dd if=/dev/urandom of="$DATA/file" bs=1M count=$SIZE status=none
sync
mount_fs "${G_REFERENCE_OPTS:-}" || exit 1
if [ -n "${G_REFERENCE_SOURCE:-}" ]; then
	src=$("$MEMCGFS_BUILD/memcgctl" status -m "$MNT" | awk '$1 == "page_cache_source" { print $2 }')
	expect "the page cache's source on $(uname -r)" "$src" "$G_REFERENCE_SOURCE"
	echo "feature page_cache_scan $src"
fi

# the workloads: name and memhog's arguments
WORKLOADS=(
	"anon|-a $SIZE"
	"mmap|-f $DATA/file"
	"read|-R $DATA/file -K"
	"shm|-s $SIZE"
	"memfd|-M $SIZE"
	"mlock|-l $SIZE"
	"cow|-a $SIZE -c 16"
	"write|-W $DATA/written -w $SIZE"
	"placed|-a $SIZE -m 16"
)
v1_key() { case $1 in rss) echo anon ;; cache) echo file ;; mapped_file) echo file_mapped ;; dirty) echo file_dirty ;; *) echo "$1" ;; esac; }

# run PLACE NAME ARGS...: memhog in the kernel's group (PLACE k) or
# memcgfs's (m), its output in $DATA/PLACE-NAME.out. "placed" starts
# outside the group, allocates, is moved in (as echo PID > tasks moves a
# running process: its charges stay where they were made, on the kernel
# and, without move_charge_at_immigrate, on memcgfs), then allocates 16
# MiB more there.
run() {
	local place=$1 name=$2 into
	shift 2
	sync
	echo 3 > /proc/sys/vm/drop_caches
	if [ "$place" = k ]; then
		mkdir "$REF/$name"
		into=$REF/$name/cgroup.procs
	else
		mkdir "$MNT/$name"
		into=$MNT/$name/tasks
	fi
	if [ "$name" = placed ]; then
		"$HOG" "$@" > "$DATA/$place-$name.out" 2>&1 < /dev/null &
	else
		bash -c "echo \$\$ > $into && exec $HOG $*" > "$DATA/$place-$name.out" 2>&1 < /dev/null &
	fi
	HOG_PID=$!
	HOGS+=("$HOG_PID")
	wait_until 120 grep -q '^ready' "$DATA/$place-$name.out" ||
		bad "$name: memhog never ready in $place: $(tail -n 2 "$DATA/$place-$name.out")"
	if [ "$name" = placed ]; then
		echo "$HOG_PID" > "$into"
		kill -USR1 "$HOG_PID"
		wait_until 60 grep -q '^more 1' "$DATA/$place-$name.out" || bad "placed: no more in $place"
	fi
	sleep 1
}
stop() { kill_child KILL "$HOG_PID"; wait "$HOG_PID" 2> /dev/null; }

# measure PLACE NAME ARGS...: the workload NAME in PLACE's group (k: the
# kernel's, m: memcgfs's), its usage and keys (memcgfs's names) into the
# array fig_PLACE, read one second after it is ready
KEYS="rss cache shmem mapped_file dirty"
declare -A fig_k fig_m
measure() {
	local place=$1 name=$2 key
	local -n fig=fig_$place
	shift 2
	rm -f "$DATA/written"
	run "$place" "$name" "$@"
	if [ "$place" = k ]; then
		fig[usage]=$(cat "$REF/$name/memory.current")
		for key in $KEYS; do
			fig[$key]=$(awk -v k="$(v1_key $key)" '$1 == k { print $2 }' "$REF/$name/memory.stat")
		done
	else
		fig[usage]=$(cat "$MNT/$name/memory.usage_in_bytes")
		for key in $KEYS; do
			fig[$key]=$(awk -v k="$key" '$1 == k { print $2 }' "$MNT/$name/memory.stat")
		done
	fi
	stop
	# and 100 ms after its exit (reaped): what stays charged
	sleep 0.1
	if [ "$place" = k ]; then
		fig[exit]=$(cat "$REF/$name/memory.current")
	else
		fig[exit]=$(cat "$MNT/$name/memory.usage_in_bytes")
	fi
}

declare -A skip=()
IFS=';' read -ra skips <<< "${G_REFERENCE_SKIP:-}"
for s in "${skips[@]}"; do [ -n "$s" ] && skip[${s%%:*}]=${s#*:}; done
for w in "${WORKLOADS[@]}"; do
	IFS='|' read -r name args <<< "$w"
	if [ -n "${G_REFERENCE_ONLY:-}" ] && [[ " $G_REFERENCE_ONLY " != *" $name "* ]]; then
		continue
	fi
	measure k "$name" $args
	measure m "$name" $args
	for key in usage rss cache shmem mapped_file dirty exit; do
		k=${fig_k[$key]:-0} m=${fig_m[$key]:-0}
		d=$(( m > k ? m - k : k - m ))
		echo "reference $name $key memcgfs $m kernel $k"
		if [ -n "${skip[$key]:-}" ]; then
			echo "reference $name $key: not compared: ${skip[$key]}"
			continue
		fi
		[ "$d" -le $(( SIZE * MiB / 20 )) ] && ok ||
			bad "$name: $key: memcgfs $m, the kernel $k (more than 5 % of $SIZE MiB apart)"
	done
	rmdir "$REF/$name" 2> /dev/null
	wait_until 10 rmdir "$MNT/$name" 2> /dev/null
done
summary
