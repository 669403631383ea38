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
# libfuse says nothing about threads nobody set; the daemon says when it
# mounts and unmounts (the foreground daemon's stderr; syslog once detached)
LOG=$(mktemp /tmp/memcgfs-log.XXXXXX)
mount_fs_fg "$LOG" "max_threads=4,kernel=5.10" && ok
M=$MNT
umount_fs                       # (waits for the daemon's end)
expect "the daemon's stderr: mount and unmount only" "$(cat "$LOG")" "memcgfs: mounted $M (kernel=5.10)
memcgfs: unmounting $M"
# systemd's readiness protocol (Type=notify): the main process says
# READY=1 once the mount answers, and STOPPING=1 when it is told to end
NS=$(mktemp -u /tmp/memcgfs-notify.XXXXXX)
/usr/bin/python3 - "$NS" > "$LOG.notify" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
for _ in range(2):
    print(s.recv(256).decode().replace("\n", " "), flush=True)
PY
LISTENER=$!
wait_until 10 test -S "$NS" || bad "no notify socket"
NOTIFY_SOCKET=$NS mount_fs_fg "$LOG" && ok
wait_until 10 grep -q READY "$LOG.notify" || bad "no READY=1"
expect "READY=1 from the main process once mounted" "$(head -n1 "$LOG.notify")" "READY=1 MAINPID=$FG_PID"
kill -TERM "$FG_PID"
wait "$LISTENER"
expect "STOPPING=1 when told to end" "$(sed -n 2p "$LOG.notify")" "STOPPING=1"
umount_fs
rm -f "$NS" "$LOG.notify"
# an OOM kill is reported in the kernel's words
mount_fs_fg "$LOG" "kernel=6.18" && ok
mkdir "$MNT/k"
echo 32M > "$MNT/k/memory.limit_in_bytes"
bash -c "echo \$\$ > $MNT/k/tasks && exec $MEMCGFS_BUILD/tools/memhog -a 256 -r 512" > /dev/null 2>&1 < /dev/null &
H=$!
wait "$H" 2>/dev/null
expect "memhog killed at 32M" "$?" 137
expect "kill: oom-kill line" "$(grep -c "^memcgfs: oom-kill:constraint=CONSTRAINT_MEMCG,.*,oom_memcg=/k,task_memcg=/k,task=memhog,pid=$H,uid=0\$" "$LOG")" 1
expect "kill: the kernel's sentence" \
	"$(grep -cE "^memcgfs: Memory cgroup out of memory: Killed process $H \(memhog\) total-vm:[0-9]+kB, anon-rss:[0-9]+kB, file-rss:[0-9]+kB, shmem-rss:[0-9]+kB, UID:0 pgtables:[0-9]+kB oom_score_adj:0\$" "$LOG")" 1
expect "kill: the group's counters" "$(grep -cE '^memcgfs: memory: usage [0-9]+kB, limit 32768kB, failcnt [1-9][0-9]*$' "$LOG")" 1
umount_fs
rm -f "$LOG"
# a tree taken down gives its memory back: the worker trims its heap once
# removals stop (status heap_trims, heap_trim_pending), and its RSS comes
# back to within a tenth of where it was before the tree, plus what the
# FUSE threads the load added keep. Not under a sanitizer, whose allocator
# keeps what it frees (a sanitizer's RSS says nothing of the daemon's). A
# thread made during the load takes libfuse's 1 MiB request buffer from
# wherever the heap has room, which may be a removed tree's memory not yet
# trimmed, and keeps it with its stack's touched pages: at most 1,280 kB a
# thread. Twice: the pool held at two threads (both made by the first
# request: nothing may stay), and the default pool (the case that once
# failed), each added thread allowed its 1,280 kB.
trim_case() {    # trim_case OPTS
	mount_fs "nostate$1" && ok
	W=$(worker_pid "$MNT")
	# (smaps_rollup counts the pages; status's VmRSS is a per-CPU
	# counter, off by up to its batch)
	rss() { awk '/^Rss:/ { print $2 }' "/proc/$W/smaps_rollup"; }
	thr() { ls "/proc/$W/task" | wc -l; }
	# trimmed since the last removal (heap_trim_pending 0)
	trimmed() { [ "$(daemon_status "$MNT" heap_trim_pending)" = 0 ]; }
	# the start: after a first mkdir and rmdir, and the trim that follows
	# (a child's too: the engine's thread that frees removed groups'
	# structures starts with the first)
	N0=$(daemon_status "$MNT" heap_trims)
	mkdir "$MNT/warm" "$MNT/warm/c" && rmdir "$MNT/warm/c" "$MNT/warm"
	wait_until 5 trimmed && ok || bad "trim$1: no heap trim after one rmdir"
	expect "trim$1: one trim after one rmdir" "$(daemon_status "$MNT" heap_trims)" $((N0 + 1))
	R0=$(rss) T0=$(thr) N0=$(daemon_status "$MNT" heap_trims)
	/usr/bin/python3 -c '
import os, sys
m = sys.argv[1]
for p in range(20):
    os.mkdir("%s/p%d" % (m, p))
    for c in range(200):
        os.mkdir("%s/p%d/c%d" % (m, p, c))' "$MNT"
	R1=$(rss)
	/usr/bin/python3 -c '
import os, sys
m = sys.argv[1]
for p in range(20):
    for c in range(200):
        os.rmdir("%s/p%d/c%d" % (m, p, c))
    os.rmdir("%s/p%d" % (m, p))' "$MNT"
	# (3 on the way, every 1,024 rmdirs, and 1 once they stopped)
	wait_until 5 trimmed && ok || bad "trim$1: $(daemon_status "$MNT" heap_trim_pending) rmdirs not trimmed"
	(( $(daemon_status "$MNT" heap_trims) > N0 + 3 )) && ok ||
		bad "trim$1: $(daemon_status "$MNT" heap_trims) heap trims after 4,020 rmdirs (before: $N0)"
	R2=$(rss) T2=$(thr)
	[ -z "$1" ] || expect "trim$1: the pool did not grow" "$T2" "$T0"
	ALLOW=$(( R0 / 10 + 1280 * (T2 > T0 ? T2 - T0 : 0) ))
	(( R1 > R0 + 8192 )) && ok || bad "trim$1: 4,020 groups cost the worker only $((R1 - R0)) kB"
	(( R2 <= R0 + ALLOW )) && ok ||
		bad "trim$1: RSS $R0 kB -> $R1 kB with 4,020 groups -> $R2 kB without (allowed +$ALLOW kB; threads $T0 -> $T2)"
	echo "t_mount: trim$1: RSS $R0 -> $R1 -> $R2 kB, threads $T0 -> $T2"
	umount_fs
}
if ! grep -q -a -e __asan_init -e __tsan_init "$MEMCGFS"; then
	trim_case ",max_threads=2"
	trim_case ""
fi
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
for page in memcgfs.8 memcgctl.8 mount.memcgfs.8 memcgfs-run.1; do
	expect "$page: the version" "$(sed -n 's/^\.TH [^ ]* [18] "[^"]*" "memcgfs \([^"]*\)".*/\1/p' "$(dirname "$0")/../../docs/$page")" "$V"
	expect "$page: man reads it" "$(MANWIDTH=80 man -l "$(dirname "$0")/../../docs/$page" 2>&1 >/dev/null | wc -l)" 0
done
# make install puts down what it names, the systemd unit naming the
# installed binary, which systemd-analyze accepts (it needs the binary and
# the man page the unit names: the scratch root is the prefix); make
# uninstall takes it all away again
R=$(mktemp -d /tmp/memcgfs-root.XXXXXX)
inst() { make -s -C "$(dirname "$0")/../.." BUILD="$MEMCGFS_BUILD" PREFIX="$R/usr" SBINDIR="$R/usr/sbin" "$@" > /dev/null; }
inst install || bad "make install failed"
expect "installed files" "$(cd "$R" && find . -type f | sort | tr '\n' ' ')" \
	"./usr/bin/memcgctl ./usr/bin/memcgfs ./usr/bin/memcgfs-run ./usr/lib/systemd/system/memcgfs@.service ./usr/sbin/mount.memcgfs ./usr/share/man/man1/memcgfs-run.1 ./usr/share/man/man8/memcgctl.8 ./usr/share/man/man8/memcgfs.8 ./usr/share/man/man8/mount.memcgfs.8 "
U=$R/usr/lib/systemd/system
expect "the unit runs the installed binary" "$(grep '^ExecStart=' "$U/memcgfs@.service")" \
	"ExecStart=$R/usr/bin/memcgfs -f \$MEMCGFS_OPTS %f"
if command -v systemd-analyze > /dev/null; then
	ln -s memcgfs@.service "$U/memcgfs@mnt-memcg.service"
	expect "systemd-analyze verify" \
		"$(MANPATH="$R/usr/share/man" systemd-analyze verify "$U/memcgfs@mnt-memcg.service" 2>&1; echo "rc $?")" "rc 0"
	rm "$U/memcgfs@mnt-memcg.service"
else
	bad "systemd-analyze is missing (make deps installs systemd)"
fi
inst uninstall
expect "uninstall leaves no file" "$(find "$R" -type f | wc -l)" 0
rm -rf "$R"
summary
