# t_mount.sh: mount.memcgfs as mount(8) calls it (mount -t memcgfs and
# /etc/fstab lines), and the daemon's option handling.
. "$(dirname "$0")/lib.sh"
HELPER="$(dirname "$0")/../../mount-helper/mount.memcgfs"

MNT=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
# mount(8) passes: SPEC DIR [-sfnv] -o OPTIONS, including its own options
MEMCGFS="$MEMCGFS" "$HELPER" memcgfs "$MNT" -n -o rw,noauto,nofail,kernel=6.18,x-systemd.foo
expect "helper mounted" "$(mountpoint -q "$MNT" && echo yes)" "yes"
expect "profile option reached the daemon" "$(stat -c %a "$MNT/cgroup.event_control")" "200"
expect "fstype" "$(findmnt -n -o FSTYPE "$MNT")" "fuse.memcgfs"
expect "source" "$(findmnt -n -o SOURCE "$MNT")" "memcgfs"
expect "allow_other and default_permissions" \
	"$(findmnt -n -o OPTIONS "$MNT" | tr ',' '\n' | grep -cxE 'allow_other|default_permissions')" "2"
umount_fs

MNT=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
expect "bad option refused" "$(MEMCGFS="$MEMCGFS" "$HELPER" memcgfs "$MNT" -o kernel=9.9 2>&1 | grep -c unsupported)" "1"
expect "not mounted" "$(mountpoint -q "$MNT" && echo yes || echo no)" "no"
rmdir "$MNT"
MNT=
# mount(8) itself, and an fstab line: inside a private mount namespace an
# overlay adds the helper to /usr/sbin without touching the host.
H=$(mktemp -d /tmp/memcgfs-helper.XXXXXX)
M1=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
M2=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
cp "$HELPER" "$H/mount.memcgfs"
printf 'memcgfs %s memcgfs kernel=5.10,nofail 0 0\n' "$M2" > "$H/fstab"
out=$(MEMCGFS="$MEMCGFS" unshare -m --propagation private sh -c '
	sbin=$(readlink -f /sbin)
	mount -t overlay overlay -o "lowerdir=$1:$sbin" "$sbin" || exit 1
	mount -t memcgfs memcgfs "$2" -o kernel=6.18 && stat -c %a "$2/cgroup.event_control"
	mount -T "$1/fstab" "$3" && cat "$3/memory.use_hierarchy"
	fusermount3 -u "$2"; fusermount3 -u "$3"' sh "$H" "$M1" "$M2" 2>&1)
expect "mount -t memcgfs and fstab" "$(echo "$out" | tr '\n' ' ')" "200 0 "
rm -rf "$H"
rmdir "$M1" "$M2"
expect "usage" "$("$MEMCGFS" --help 2>&1 | grep -c 'kernel=X.Y')" "1"
# mount -f (fake) through the helper mounts nothing
MNT=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
MEMCGFS="$MEMCGFS" "$HELPER" memcgfs "$MNT" -f -o kernel=6.18 && ok || bad "mount -f failed"
expect "mount -f mounts nothing" "$(mountpoint -q "$MNT" && echo yes || echo no)" "no"
# FUSE's own form, as mount.fuse3 runs the program for -t fuse.memcgfs and
# for remount: memcgfs SOURCE MOUNTPOINT -o OPTIONS (with dev,suid as root)
PATH="$MEMCGFS_BUILD:$PATH" mount.fuse3 memcgfs "$MNT" -t memcgfs -o kernel=6.18 && ok ||
	bad "mount.fuse3 memcgfs (-t fuse.memcgfs) failed"
expect "mount.fuse3: mounted, the profile applied" "$(stat -c %a "$MNT/cgroup.event_control" 2>&1)" "200"
expect "a second mount on a live one is refused" "$("$MEMCGFS" "$MNT" 2>&1; echo "rc $?")" \
	"memcgfs: $MNT is a memcgfs mount already (unmount it first)
rc 1"
PATH="$MEMCGFS_BUILD:$PATH" mount.fuse3 memcgfs "$MNT" -t memcgfs -o remount,ro && ok || bad "remount,ro failed"
expect "remount,ro: read-only" "$(findmnt -n -o OPTIONS "$MNT" | cut -d, -f1)" "ro"
expect "remount,ro: mkdir EROFS" "$(perl -e "$DIROP" mkdir "$MNT/x")" "EROFS"
expect "remount,ro: the same daemon answers" "$(stat -c %a "$MNT/cgroup.event_control")" "200"
PATH="$MEMCGFS_BUILD:$PATH" mount.fuse3 memcgfs "$MNT" -t memcgfs -o remount,rw && ok || bad "remount,rw failed"
expect "remount,rw: mkdir again" "$(perl -e "$DIROP" mkdir "$MNT/x")" "OK"
rmdir "$MNT/x"
umount_fs
d=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
expect "remount of what is no memcgfs mount" "$("$MEMCGFS" -o remount "$d" 2>&1; echo "rc $?")" \
	"memcgfs: remount $d: not a memcgfs mount
rc 1"
rmdir "$d"
# a regular file is no mountpoint: a clear message, a failure, no mount
f=$(mktemp /tmp/memcgfs-test.XXXXXX)
expect "mount on a regular file" "$("$MEMCGFS" "$f" 2>&1; echo "rc $?")" "memcgfs: $f: not a directory
rc 1"
expect "not mounted on the file" "$(mountpoint -q "$f" && echo yes || echo no)" "no"
rm -f "$f"
# libfuse says nothing about threads nobody set (the foreground daemon's stderr)
LOG=$(mktemp /tmp/memcgfs-log.XXXXXX)
mount_fs_fg "$LOG" "max_threads=4" && ok
umount_fs
expect "no libfuse warning on stderr" "$(cat "$LOG")" ""
rm -f "$LOG"
# one version, from the VERSION file: both programs and the man page
V=$(cat "$(dirname "$0")/../../VERSION")
expect "--help on stdout, status 0" "$("$MEMCGFS" --help 2>/dev/null | grep -c 'kernel=X.Y'; echo "rc ${PIPESTATUS[0]}")" "1
rc 0"
expect "memcgfs --version" "$("$MEMCGFS" --version | head -n1; echo "rc ${PIPESTATUS[0]}")" "memcgfs $V
rc 0"
expect "memcgfs -V" "$("$MEMCGFS" -V | head -n1)" "memcgfs $V"
expect "FUSE library version" "$("$MEMCGFS" --version | grep -c '^FUSE library version 3\.')" "1"
expect "memcgctl --version" "$("$MEMCGFS_BUILD/memcgctl" --version; echo "rc $?")" "memcgctl $V
rc 0"
expect "memcgctl --help on stdout" "$("$MEMCGFS_BUILD/memcgctl" --help 2>/dev/null | grep -c 'memcgctl sim')" "1"
expect "the man page's version" "$(sed -n 's/^\.TH MEMCGFS 8 "[^"]*" "memcgfs \([^"]*\)".*/\1/p' "$(dirname "$0")/../../docs/memcgfs.8")" "$V"
summary
