#!/bin/bash
# t_runmount.sh: memcgfs-run's mount guard (issue 24, item 0). Inside the
# wrapper, as root and as a user, no call of the mount family reaches a
# cgroup filesystem of the host: a cgroup v1 mount of memory (or of a
# stand-in's controller) binds the view's tree, every other cgroup or
# cgroup2 mount, fsopen of either, and binds, clones and reconfigurations
# of a host cgroup filesystem fail with EPERM and a message naming
# memcgfs-run; the view's own mounts cannot be unmounted or moved. Driven
# with real programs (util-linux mount and unshare, cgconfigparser) and a
# tool making each raw call. Outside, read only, the host's hierarchies
# are compared before and after: no group gained, no value changed.
. "$(dirname "$0")/lib.sh"

RUN="$MEMCGFS_BUILD/memcgfs-run"
CG="$MEMCGFS_BUILD/tools/mountcg"
DATA=$(mktemp -d /var/tmp/memcgfs-runmount.XXXXXX)
chmod 755 "$DATA"
T="$DATA/t"
mkdir -m 755 "$T"

cleanup() {
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT

# The host's cgroup hierarchies, read only: every group, and the values a
# stray write would change (limits, release agents).
host_state() {
	find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d 2>/dev/null | sort
	for f in /sys/fs/cgroup/*/release_agent /sys/fs/cgroup/*/notify_on_release \
		/sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory/*/memory.limit_in_bytes \
		/sys/fs/cgroup/memory/memory.soft_limit_in_bytes /sys/fs/cgroup/memory/memory.use_hierarchy; do
		[ -r "$f" ] && echo "$f $(cat "$f" 2>/dev/null)"
	done
}
MiB=1048576

ensure_users
mount_fs || exit 1
HOST_BEFORE=$(host_state)
mkdir "$MNT/g1"
echo 64M > "$MNT/g1/memory.limit_in_bytes"
# Nothing below writes through a mount it made before this group, which
# no host hierarchy has, proves the mount is memcgfs: a broken guard
# fails the tests and still leaves the host alone.
MARK="runmount-marker-$$-$RANDOM"
mkdir "$MNT/$MARK"
r() { "$RUN" --mount "$MNT" "$@"; }

# --- a cgroup v1 mount of memory is the view's memcgfs tree ---
out=$(r -- sh -c "mount -t cgroup -o memory cgroup $T && test -d $T/$MARK && stat -f -c %t $T &&
	cat $T/g1/memory.limit_in_bytes && grep \" $T \" /proc/self/mountinfo | sed 's/.* - //' &&
	echo 32M > $T/g1/memory.limit_in_bytes && mkdir $T/made && umount $T && echo unmounted" 2>&1)
expect "mount -t cgroup -o memory: memcgfs, shown as cgroupfs" "$out" "27e0eb
67108864
cgroup cgroup rw,memory
unmounted"
GUARDED=no
[ "$out" = "$(printf '27e0eb\n67108864\ncgroup cgroup rw,memory\nunmounted')" ] && GUARDED=yes
expect "a write through it reached memcgfs" "$(cat "$MNT/g1/memory.limit_in_bytes")" $((32 * MiB))
expect "a mkdir through it made a memcgfs group" "$([ -d "$MNT/made" ] && echo yes)" yes
rmdir "$MNT/made"
expect "the options mount(8) passes (rw,nosuid,...)" \
	"$(r -- sh -c "mount -t cgroup -o rw,nosuid,nodev,noexec,relatime,memory cgroup $T && ls $T/g1 | grep -c '^memory.limit_in_bytes$'")" 1
expect "read-only when asked (ro)" \
	"$(r -- sh -c "$CG mount cgroup $T cgroup ro memory && test -d $T/$MARK && $WR $T/g1/memory.limit_in_bytes 16M")" "ok
EROFS"
expect "cpuset: the stand-in's tree" \
	"$(r -- sh -c "mount -t cgroup -o cpuset cgroup $T && cat $T/cpuset.cpus")" "$(cat /sys/devices/system/cpu/online)"
expect "cpu,cpuacct: the stand-in's tree" \
	"$(r -- sh -c "$CG mount none $T cgroup - cpu,cpuacct && cat $T/cpu.shares")" "ok
1024"
expect "devices and name=systemd: the stand-ins' trees, the same groups" \
	"$(r -- sh -c "mkdir /sys/fs/cgroup/devices/seen && $CG mount none $T cgroup - devices &&
		test -d $T/seen && echo devices; $CG mount none $T cgroup - none,name=systemd && cat $T/tasks | head -c 0;
		rmdir /sys/fs/cgroup/devices/seen")" "ok
devices
ok"

# a path through the caller's own descriptor (/proc/self/fd/N, as crun
# and runc name their targets) is that descriptor, not the helper's
expect "a recursive bind of /proc/self/fd/N onto itself (crun's read-only paths) goes on" \
	"$(r -- sh -c "d=\$(mktemp -d); mount -t tmpfs none \$d; exec 7<\$d; $CG mount /proc/self/fd/7 /proc/self/fd/7 none bind,rec")" "ok"
expect "a cgroup mount below /proc/self/fd/N/ binds the view there" \
	"$(r -- sh -c "d=\$(mktemp -d); mkdir \$d/sub; exec 7<\$d; $CG mount none /proc/self/fd/7/sub cgroup - memory && test -d \$d/sub/$MARK && echo view")" "ok
view"
expect "a cgroup mount onto a descriptor the caller does not have: ENOENT, nothing mounted" \
	"$(r -- "$CG" mount none /proc/self/fd/97 cgroup - memory)" "ENOENT"
expect "a cgroup mount onto /proc/self/fd/N binds the view there" \
	"$(r -- sh -c "d=\$(mktemp -d); exec 7<\$d; $CG mount none /proc/self/fd/7 cgroup - memory && test -d \$d/$MARK && echo view")" "ok
view"

# --- every other cgroup mount fails, with the kernel's errno on a host
# mounted as the view: EBUSY for a set that would take controllers from
# the view's hierarchies (all of them, one co-mounted apart, systemd's
# name with a controller), EINVAL for what the kernel's parser refuses,
# EPERM for what memcgfs-run will not make (a new named hierarchy, a
# release agent) ---
for case in ":EBUSY" "all:EBUSY" "cpu:EBUSY" "cpuacct:EBUSY" "net_cls:EBUSY" "cpu,cpuacct,cpuset:EBUSY" \
	"memory,blkio:EBUSY" "memory,name=systemd:EBUSY" "none:EINVAL" "nosuchcontroller:EINVAL" \
	"none,memory:EINVAL" "all,memory:EINVAL" "memory,noprefix:EINVAL" "name=other:EINVAL" \
	"none,name=other:EPERM" "memory,release_agent=/bin/true:EPERM"; do
	opts=${case%:*}
	expect "cgroup -o '$opts': ${case##*:}" "$(r -- "$CG" mount cgroup "$T" cgroup - "$opts" 2>/dev/null)" \
		"${case##*:}"
done
out=$(r -- "$CG" mount cgroup "$T" cgroup2 - "" 2>&1)
expect "cgroup2: EPERM, and memcgfs-run says why" "$out" \
	"memcgfs-run: refused a cgroup2 mount of $T by $(echo "$out" | sed -n 's/.* by \([0-9]*\):.*/\1/p'): the view is cgroup v1 only
EPERM"
expect "mount(8) of cgroup2 fails" "$(r -- mount -t cgroup2 none "$T" >/dev/null 2>&1; echo $?)" 32
expect "fsopen(cgroup), fsopen(cgroup2): EPERM; fsopen(tmpfs) goes on" \
	"$(r -- sh -c "$CG fsopen cgroup; $CG fsopen cgroup2; $CG fsopen tmpfs" 2>/dev/null)" "EPERM
EPERM
ok"
# (LXC's probe of the new mount API: ENOSYS inside, so it uses mount(2);
# the kernel's EFAULT outside)
expect "fsopen(NULL): ENOSYS inside, EFAULT outside" "$(r -- "$CG" fsopen -) $("$CG" fsopen -)" "ENOSYS EFAULT"
out=$(r -- "$CG" mount32 "$T" memory 2>&1)
case $out in
noia32) expect "the i386 ABI: this kernel has none (nothing to refuse)" "$out" noia32 ;;
*) expect "a cgroup mount through the i386 ABI: EPERM in the filter" "$out" EPERM ;;
esac

# --- the host's hierarchies through an inherited descriptor ---
exec 8< /
exec 9< /sys/fs/cgroup/memory
expect "bind of a host cgroupfs: EPERM" "$(r -- "$CG" mount /proc/self/fd/9 "$T" - bind 2>/dev/null)" EPERM
expect "recursive bind of it: EPERM" "$(r -- "$CG" mount /proc/self/fd/9 "$T" - bind,rec 2>/dev/null)" EPERM
expect "open_tree clone of it: EPERM" "$(r -- "$CG" clone /proc/self/fd/9 2>/dev/null)" EPERM
expect "fspick of it: EPERM" "$(r -- "$CG" fspick /proc/self/fd/9 2>/dev/null)" EPERM
expect "remount of it: EPERM" "$(r -- "$CG" mount - /proc/self/fd/9 - remount,ro 2>/dev/null)" EPERM
expect "recursive clone from the host's namespace: EPERM" "$(r -- "$CG" rclone /proc/self/fd/8 2>/dev/null)" EPERM
exec 8<&- 9<&-

# --- the view's own mounts stay ---
expect "umount /sys/fs/cgroup/memory, /sys/fs/cgroup: EPERM; the view still works" \
	"$(r -- sh -c "$CG umount /sys/fs/cgroup/memory; $CG umount /sys/fs/cgroup; umount -l /sys/fs/cgroup/cpu 2>/dev/null;
		echo \$?; $CG mount /sys/fs/cgroup/memory $T - move; cat /sys/fs/cgroup/memory/g1/memory.limit_in_bytes" 2>/dev/null)" \
	"EPERM
EPERM
32
EPERM
$((32 * MiB))"
expect "other mounts go on: tmpfs, private, a bind of the view, their unmount" \
	"$(r -- sh -c "$CG mount tmpfs $T tmpfs - && $CG mount - / - private,rec && $CG umount $T &&
		$CG mount /sys/fs/cgroup/memory $T - bind && cat $T/g1/memory.limit_in_bytes && $CG umount $T &&
		$CG clone /sys/fs/cgroup/cpu $T && cat $T/cpu.shares")" "ok
ok
ok
ok
$((32 * MiB))
ok
ok
1024"

# --- cgconfigparser: its mount section lands in memcgfs ---
cat > "$DATA/cg.conf" <<EOF
mount {
	memory = /sys/fs/cgroup/memory;
}
group parsed {
	memory {
		memory.limit_in_bytes = 48M;
	}
}
EOF
# (it writes where it mounted: only once the guard has shown it works)
if [ "$GUARDED" = yes ]; then
	expect "cgconfigparser -l with a mount section" "$(r -- cgconfigparser -l "$DATA/cg.conf" 2>&1; echo $?)" 0
	expect "cgconfigparser's group is memcgfs's" "$(cat "$MNT/parsed/memory.limit_in_bytes" 2>&1)" $((48 * MiB))
	expect "cgget reads it back" "$(r -- cgget -n -v -r memory.limit_in_bytes parsed)" $((48 * MiB))
	rmdir "$MNT/parsed"
else
	bad "cgconfigparser not run: the first cgroup mount was not memcgfs's"
fi

# --- a cgroup namespace: rooted at the caller's memcgfs group ---
expect "unshare -C, then mount: the group is the root" \
	"$(r --group /g1 -- unshare -C sh -c "mount -t cgroup -o memory cgroup $T && cat $T/memory.limit_in_bytes")" \
	$((32 * MiB))
# (a new hierarchy is made only in the initial cgroup namespace: EPERM
# there before any controller is looked at; a name's set is checked first)
expect "unshare -C: a set that would make a new hierarchy: EPERM" \
	"$(r --group /g1 -- unshare -C "$CG" mount cgroup "$T" cgroup - cpu 2>/dev/null)" EPERM
expect "unshare -C: systemd's name with a controller: EBUSY" \
	"$(r --group /g1 -- unshare -C "$CG" mount cgroup "$T" cgroup - memory,name=systemd 2>/dev/null)" EBUSY
expect "unshare -C: all with systemd's name: EBUSY" \
	"$(r --group /g1 -- unshare -C "$CG" mount cgroup "$T" cgroup - all,name=systemd 2>/dev/null)" EBUSY

# --- as a user: no capability, no mount; in a namespace of its own, the view ---
expect "as a user: mount fails with EPERM" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- "$CG" mount cgroup "$T" cgroup - memory 2>/dev/null)" EPERM
# (the capability is asked for before the options are read, whatever they
# are; unshare -r gives it in a user namespace that does not own the
# mounts)
for opts in nosuchcontroller cpu none; do
	expect "as a user: -o $opts: EPERM" \
		"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- "$CG" mount cgroup "$T" cgroup - $opts 2>/dev/null)" EPERM
done
expect "as a user: unshare -r (the mounts' owner is not its namespace): -o cpu: EPERM" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- unshare -r "$CG" mount cgroup "$T" cgroup - cpu 2>/dev/null)" EPERM
# (with mounts of its own but not a cgroup namespace: cgroup1_get_tree
# asks for the capability over the cgroup namespace's owner, after the
# options are parsed)
expect "as a user: unshare -rm, -o memory: EPERM (the cgroup namespace is not its own)" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- unshare -rm "$CG" mount cgroup "$T" cgroup - memory 2>/dev/null)" EPERM
expect "as a user: unshare -rm, -o nosuchcontroller: EINVAL (parsed first)" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- unshare -rm "$CG" mount cgroup "$T" cgroup - nosuchcontroller 2>/dev/null)" EINVAL
expect "as a user: unshare -rm, -o none: EPERM" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- unshare -rm "$CG" mount cgroup "$T" cgroup - none 2>/dev/null)" EPERM
expect "as a user: unshare -rmC, mount -o memory is memcgfs's root" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- unshare -rmC sh -c "mount -t cgroup -o memory cgroup $T &&
		cat $T/memory.limit_in_bytes $T/g1/memory.limit_in_bytes" 2>&1)" "$UNLIMITED
$((32 * MiB))"
expect "as a user: cgroup2 in its own namespaces: EPERM" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- unshare -rmC "$CG" mount none "$T" cgroup2 - "" 2>/dev/null)" EPERM

# --- outside, nothing changed ---
expect "outside: the host's hierarchies as they were" "$(host_state)" "$HOST_BEFORE"
expect "outside: no cgroup mounted on the test's directory" "$(grep -c " $T " /proc/self/mountinfo)" 0
summary
