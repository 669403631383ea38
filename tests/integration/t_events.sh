# t_events.sh: cgroup.event_control (§3.17, §10 item 9) and rmdir with fds
# held open (§2.3, §4.2, §10 item 10).
. "$(dirname "$0")/lib.sh"
ensure_users
mount_fs
A="$MNT/a"
mkdir "$A" "$MNT/other"

# item 9: syntax and fd errors
expect_wr "'x y'" EINVAL "$A/cgroup.event_control" "x y"
expect_wr "'3 4x'" EINVAL "$A/cgroup.event_control" "3 4x"
expect_wr "'3'" EINVAL "$A/cgroup.event_control" "3"
expect_wr "closed fds" EBADF "$A/cgroup.event_control" "900 901"
expect "closed eventfd" "$("$EVCTL" "$A" memory.usage_in_bytes 1M closed-efd)" "EBADF"
expect "closed control fd" "$("$EVCTL" "$A" memory.usage_in_bytes 1M closed-cfd)" "EBADF"
expect "not an eventfd" "$("$EVCTL" "$A" memory.usage_in_bytes 1M pipe)" "EINVAL"
expect "control fd memory.stat" "$("$EVCTL" "$A" memory.stat "")" "EINVAL"
expect "control fd of another group" "$("$EVCTL" "$A" "$MNT/other/memory.usage_in_bytes" 1M)" "EINVAL"
expect "control fd outside the fs" "$("$EVCTL" "$A" /etc/hostname 1M)" "EINVAL"
expect "pressure foo" "$("$EVCTL" "$A" memory.pressure_level foo)" "EINVAL"
expect "pressure low,bogus" "$("$EVCTL" "$A" memory.pressure_level low,bogus)" "EINVAL"
expect "pressure critical,hierarchy" "$("$EVCTL" "$A" memory.pressure_level critical,hierarchy)" "OK"
expect "pressure medium,local,ignored" "$("$EVCTL" "$A" memory.pressure_level medium,local,xyz)" "OK"
expect "threshold" "$("$EVCTL" "$A" memory.usage_in_bytes 64M)" "OK"
expect "bad threshold" "$("$EVCTL" "$A" memory.usage_in_bytes 64Q)" "EINVAL"
expect "memsw threshold" "$("$EVCTL" "$A" memory.memsw.usage_in_bytes -1)" "OK"
expect "oom registration" "$("$EVCTL" "$A" memory.oom_control "")" "OK"
expect "threshold on the root" "$("$EVCTL" "$MNT" memory.usage_in_bytes 1G)" "OK"
# read permission on the control file counts
chmod 600 "$A/memory.usage_in_bytes"
chmod 666 "$A/cgroup.event_control"
expect "unreadable control file" "$(as_user "$TEST_USER" "$EVCTL" "$A" memory.usage_in_bytes 1M)" "open-control:EACCES"
chmod 644 "$A/memory.usage_in_bytes"
expect "user registration" "$(as_user "$TEST_USER" "$EVCTL" "$A" memory.usage_in_bytes 1M)" "OK"
# 6.12 event_control is 0222: a non-root user may write it without chmod
chmod 222 "$A/cgroup.event_control"
expect "world-writable on 6.12" "$(as_user "$TEST_USER" "$EVCTL" "$A" memory.oom_control "")" "OK"

# usage thresholds fire when usage crosses them, up and down (§5.12).
# Each task's memory is declared in calls the daemon answers, so the
# crossing up has happened when the task ends; the crossing down happens
# when the daemon handles its exit, which the group's usage falling back
# to 0 shows: "sim16" ends there. A count that must be reached is waited
# for (bounded); a count of 0 is read at that proof point.
CTL="$MEMCGFS_BUILD/memcgctl"
mkdir "$MNT/t"
SIM16="$MNT.sim16"
cat > "$SIM16" <<EOS
#!/bin/sh
"$CTL" sim -m "$MNT" -g /t -e 'alloc anon h 16M' -e 'touch h seq write' || exit 1
timeout 10 sh -c 'until [ "\$(cat "$MNT/t/memory.usage_in_bytes")" -eq 0 ]; do sleep 0.02; done'
EOS
chmod +x "$SIM16"
expect "threshold crossed up, then down at exit" \
	"$("$EVCTL" "$MNT/t" memory.usage_in_bytes 8M run 2/10000 "$SIM16")" "FIRED 2"
expect "threshold never reached" \
	"$("$EVCTL" "$MNT/t" memory.usage_in_bytes 64M run 0/0 "$SIM16")" "FIRED 0"
expect "memsw threshold" \
	"$("$EVCTL" "$MNT/t" memory.memsw.usage_in_bytes 4M run 2/10000 "$SIM16")" "FIRED 2"
expect "a parent's threshold sees its children" \
	"$("$EVCTL" "$MNT" memory.usage_in_bytes "$(( $(cat "$MNT/memory.usage_in_bytes") + (8 << 20) ))" \
		run 2/10000 "$SIM16")" "FIRED 2"
rm -f "$SIM16"

# pressure levels from reclaim aimed at a group (§5.14). The churn's pages
# are charged in calls the daemon answers, and the reclaim they cause is
# made in them: when the churn ends, every window it filled has been
# reported. (Which level a window reaches depends on how reclaim meets the
# pages, which the daemon's timing decides here; the levels themselves are
# tested on known windows in tests/unit/test_event.c.)
mkdir "$MNT/pr" "$MNT/pr/c"
echo 8M > "$MNT/pr/c/memory.limit_in_bytes"
"$CTL" sim -m "$MNT" -e 'file pf 32M'
CHURN="$MNT.churn"
printf '#!/bin/sh\nexec "%s" sim -m "%s" -g /pr/c -e "map pf m" -e "touch m seq"\n' "$CTL" "$MNT" > "$CHURN"
chmod +x "$CHURN"
fired() { "$EVCTL" "$1" memory.pressure_level "$2" run "$3" "$CHURN" | cut -d' ' -f2; }
expect "low fires on reclaim of clean page cache" "$(( $(fired "$MNT/pr/c" low 1/10000) > 0 ))" 1
expect "local on the parent does not" "$(fired "$MNT/pr" low,local 0/0)" 0
expect "hierarchy on the parent does" "$(( $(fired "$MNT/pr" low,hierarchy 1/10000) > 0 ))" 1
# default mode: the parent's stays quiet while the child's fires
out=$("$EVCTL" "$MNT/pr" memory.pressure_level low run 0/0 \
	"$EVCTL" "$MNT/pr/c" memory.pressure_level low run 1/10000 "$CHURN")
expect "default: the child's fired" "$(( $(echo "$out" | head -n1 | cut -d' ' -f2) > 0 ))" 1
expect "default: the parent's did not" "$(echo "$out" | tail -n1)" "FIRED 0"
rm -f "$CHURN"

# rmdir signals every registration once
mkdir "$MNT/gone"
expect "rmdir fires the eventfd" "$("$EVCTL" "$MNT/gone" memory.oom_control "" rmdir)" "FIRED 1"

# item 10: rmdir rules and ENODEV through held fds
mkdir "$MNT/p" "$MNT/p/c"
expect "rmdir with child" "$(rmdir "$MNT/p" 2>&1 | grep -c 'Device or resource busy')" "1"
rmdir "$MNT/p/c"
exec 3< "$MNT/p/memory.limit_in_bytes"
exec 4> "$MNT/p/memory.limit_in_bytes"
rmdir "$MNT/p" && ok || bad "rmdir of an empty group"
expect "dir gone" "$(ls "$MNT" | grep -cx p)" "0"
expect "read through old fd" "$(cat <&3 2>&1 | grep -c 'No such device')" "1"
expect "write through old fd" "$( (echo 1 >&4) 2>&1 | grep -c 'No such device')" "1"
exec 3<&- 4>&-
expect "rmdir root" "$(rmdir "$MNT" 2>&1 | grep -cE 'busy|Permission denied|Device or resource busy')" "1"
mkdir "$MNT/p" && ok || bad "the name is free again"
# §11.4: the fd numbers and the threshold are read as the kernel reads them
got=$(/usr/bin/python3 - "$MNT" <<'PY'
import os, sys
mnt = sys.argv[1]
cfd = os.open(mnt + "/memory.usage_in_bytes", os.O_RDONLY)
ctl = os.open(mnt + "/cgroup.event_control", os.O_WRONLY)
efd = os.eventfd(0)
def w(s):
    try:
        os.write(ctl, s.encode())
        return "OK"
    except OSError as e:
        return os.strerror(e.errno)
out = [w(t % (efd, cfd)) for t in ("+%d %d 0", "%d +%d 0", "%d  %d 0", "%d %d  1M", "-%d %d 0")]
out.append(w("%d %d 0" % (efd + 2**32, cfd)))
out.append(w("4294967296 %d 0" % cfd))
print(";".join(out))
PY
)
inval="Invalid argument"
expect "event_control: signs, double spaces, a spaced threshold; fd numbers wrap at 2^32" "$got" \
	"$inval;$inval;$inval;$inval;$inval;OK;$inval"
# Registrations from every place a file of the mount can be opened: the
# file is known by the mount's device and its inode number, whatever its
# path says in the writer's mount namespace. First the lines as clients
# write them (Slurm: with the terminating NUL; containerd: a trailing
# space) and a descriptor inherited from the parent.
expect "oom registration with its NUL (Slurm)" \
	"$(EVCTL_WIRE=nul "$EVCTL" "$A" memory.oom_control "")" "OK"
expect "oom registration with a trailing space (containerd)" \
	"$(EVCTL_WIRE=space "$EVCTL" "$A" memory.oom_control "")" "OK"
expect "threshold with its NUL" "$(EVCTL_WIRE=nul "$EVCTL" "$A" memory.usage_in_bytes 64M)" "OK"
expect "pressure low,hierarchy with a trailing space" \
	"$(EVCTL_WIRE=space "$EVCTL" "$A" memory.pressure_level low,hierarchy)" "OK"
expect "NUL after a bad line: still refused" "$(EVCTL_WIRE=nul "$EVCTL" "$A" memory.stat "")" "EINVAL"
expect "an inherited control descriptor" "$("$EVCTL" "$A" fd:7 "" 7< "$A/memory.oom_control")" "OK"
expect "an inherited descriptor of another group" \
	"$("$EVCTL" "$A" fd:7 "" 7< "$MNT/other/memory.oom_control")" "EINVAL"
expect "a directory of the mount" "$("$EVCTL" "$A" fd:7 "" 7< "$A")" "EINVAL"
# a descriptor of another memcgfs mount, with the same paths below it
MNT1=$MNT
mount_fs
MNT2=$MNT
MNT=$MNT1
mkdir "$MNT2/a"
expect "the same file of another memcgfs mount" \
	"$("$EVCTL" "$A" "$MNT2/a/memory.oom_control" "")" "EINVAL"
expect "... registered on its own mount" "$("$EVCTL" "$MNT2/a" memory.oom_control "")" "OK"
rmdir "$MNT2/a"
fusermount3 -u "$MNT2" && rmdir "$MNT2"

# Inside memcgfs-run, whose view binds the mount at /sys/fs/cgroup/memory
# in a mount namespace of its own: OOM, thresholds and pressure register,
# and the OOM registration fires when the group's process is killed
RUN="$MEMCGFS_BUILD/memcgfs-run"
HOG="$MEMCGFS_BUILD/tools/memhog"
V=/sys/fs/cgroup/memory
mkdir "$MNT/in"
r() { "$RUN" --mount "$MNT" "$@"; }
expect "in the view: oom registration" "$(r -- "$EVCTL" $V/in memory.oom_control "")" "OK"
expect "in the view: with its NUL" "$(EVCTL_WIRE=nul r -- "$EVCTL" $V/in memory.oom_control "")" "OK"
expect "in the view: threshold" "$(r -- "$EVCTL" $V/in memory.usage_in_bytes 16M)" "OK"
expect "in the view: pressure" "$(r -- "$EVCTL" $V/in memory.pressure_level medium,hierarchy)" "OK"
expect "in the view: memsw threshold on the root" "$(r -- "$EVCTL" $V memory.memsw.usage_in_bytes 1G)" "OK"
expect "in the view: a file of another group" "$(r -- "$EVCTL" $V/in $V/a/memory.oom_control "")" "EINVAL"
expect "in the view: a file outside" "$(r -- "$EVCTL" $V/in /etc/hostname "")" "EINVAL"
expect "in the view: a bind of the group in a namespace of its own" \
	"$(r -- unshare -m sh -c "mount --bind $V/in /mnt && exec $EVCTL /mnt memory.oom_control ''")" "OK"
echo 32M > "$MNT/in/memory.limit_in_bytes"
kills0=$(awk '$1 == "oom_kill" { print $2 }' "$MNT/in/memory.oom_control")
HOG256="exec $HOG -a 256 > /dev/null"
expect "in the view: an OOM kill in --group fires the registration" \
	"$(r --group /in -- "$EVCTL" $V/in memory.oom_control "" run 1/20000 sh -c "$HOG256")" "FIRED 1"
expect "... and oom_kill counts it" \
	"$(awk '$1 == "oom_kill" { print $2 }' "$MNT/in/memory.oom_control")" "$((kills0 + 1))"
expect "--group-as-root: the group is the view's root" \
	"$(r --group /in --group-as-root -- "$EVCTL" $V memory.oom_control "" run 1/20000 sh -c "$HOG256")" \
	"FIRED 1"
mkdir "$MNT/in/gone"
expect "in the view: rmdir fires the registration" \
	"$(r -- "$EVCTL" $V/in/gone memory.oom_control "" rmdir)" "FIRED 1"
chmod 666 "$MNT/in/cgroup.event_control"
expect "in the view as a user (a user namespace)" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- "$EVCTL" $V/in memory.oom_control "")" "OK"
expect "in the view as a user: another group's file" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- "$EVCTL" $V/in $V/a/memory.oom_control "")" "EINVAL"

# An OOM kill signals the registrations of the group whose limit was met
# and of every group below it, as the kernel's mem_cgroup_oom_notify
# walks that subtree: a task of op/c over op's limit fires op's and
# op/c's; over op/c's own limit, op/c's and not op's
mkdir "$MNT/op" "$MNT/op/c"
echo 32M > "$MNT/op/memory.limit_in_bytes"
INTO_C="echo \$\$ > $MNT/op/c/tasks && exec $HOG -a 256 > /dev/null"
expect "OOM at the parent's limit: the parent's and the child's registrations fire" \
	"$("$EVCTL" "$MNT/op" memory.oom_control "" run 1/20000 \
		"$EVCTL" "$MNT/op/c" memory.oom_control "" run 1/20000 sh -c "$INTO_C")" "FIRED 1
FIRED 1"
echo -1 > "$MNT/op/memory.limit_in_bytes"
echo 32M > "$MNT/op/c/memory.limit_in_bytes"
expect "OOM at the child's own limit: the child's fires, the parent's does not" \
	"$("$EVCTL" "$MNT/op" memory.oom_control "" run 0/0 \
		"$EVCTL" "$MNT/op/c" memory.oom_control "" run 1/20000 sh -c "$INTO_C")" "FIRED 1
FIRED 0"

# A registration lives while any process holds its eventfd: a fork that
# inherited it keeps it after the registering process exits (found by the
# reaper's search of every process), and the fork's exit ends it.
DP=$(worker_pid "$MNT")
# the daemon's eventfds, one per registration: its other fds come and go
# (the reaper's pass opens /proc, pidfds and fd tables), so a count of
# every fd can catch a pass midway and miss a registration's +1
dfds() { ls -l "/proc/$DP/fd" 2>/dev/null | grep -c 'anon_inode:\[eventfd\]'; }
# (the registrations of the tests above go first: their processes exited)
fds_above() { [ "$(dfds)" -gt "$1" ]; }
fds_are() { [ "$(dfds)" -eq "$1" ]; }
fds_at_most() { [ "$(dfds)" -le "$1" ]; }
settled() { local a; a=$(dfds); sleep 0.6; [ "$a" = "$(dfds)" ]; }
wait_until 5 settled
fds0=$(dfds)
FIFO=$(mktemp -u /tmp/memcgfs-ev.XXXXXX)
mkfifo "$FIFO"
kid=$(/usr/bin/python3 - "$MNT" "$FIFO" <<'PY'
import os, sys
mnt, fifo = sys.argv[1], sys.argv[2]
cfd = os.open(mnt + "/memory.usage_in_bytes", os.O_RDONLY)
ctl = os.open(mnt + "/cgroup.event_control", os.O_WRONLY)
efd = os.eventfd(0)
os.write(ctl, ("%d %d 1M" % (efd, cfd)).encode())
os.close(ctl)
os.close(cfd)
pid = os.fork()
if pid == 0:
    # the child keeps only the eventfd, on another number, until the fifo opens
    e2 = os.dup(efd)
    os.close(efd)
    for fd in (0, 1, 2):
        os.close(fd)
    os.close(os.open(fifo, os.O_RDONLY))
    os._exit(0)
print(pid)
PY
)
wait_until 3 fds_above "$fds0" && ok || bad "the registration was not made"
held=$(dfds)
# the proof that the reaper has looked since the registering process left:
# a registration no process holds once its process exits is made, seen,
# and then dropped by the reaper; the fork's must still be there after that
FIFO2=$(mktemp -u /tmp/memcgfs-ev.XXXXXX)
mkfifo "$FIFO2"
/usr/bin/python3 - "$MNT" "$FIFO2" <<'PY' &
import os, sys
mnt, fifo = sys.argv[1], sys.argv[2]
cfd = os.open(mnt + "/memory.usage_in_bytes", os.O_RDONLY)
ctl = os.open(mnt + "/cgroup.event_control", os.O_WRONLY)
os.write(ctl, ("%d %d 1M" % (os.eventfd(0), cfd)).encode())
os.close(os.open(fifo, os.O_RDONLY))     # until told to exit
PY
ctl_pid=$!
wait_until 5 fds_above "$held" && ok || bad "the unheld registration was not made"
exec 6> "$FIFO2"
exec 6>&-
wait "$ctl_pid"
rm -f "$FIFO2"
wait_until 10 fds_are "$held" && ok || bad "the unheld registration was never reaped"
expect "a fork holding the eventfd keeps the registration" "$(dfds)" "$held"
exec 5> "$FIFO"              # the fork exits
exec 5>&-
rm -f "$FIFO"
wait_until 3 fds_at_most "$fds0" && ok ||
	bad "the registration stayed after the fork that held it exited: $fds0 fds before, $(dfds) after"
summary
