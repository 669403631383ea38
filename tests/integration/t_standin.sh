#!/bin/bash
# t_standin.sh: memcgfs-run's writable stand-in hierarchies (issue 24,
# item 1). Inside the wrapper, /sys/fs/cgroup is laid out as a systemd
# host lays out cgroup v1 (cpu,cpuacct and net_cls,net_prio co-mounted
# with links, devices, freezer, pids, blkio, perf_event, hugetlb,
# name=systemd, rdma where the kernel has it), each hierarchy a mount of
# its own listed as cgroup in mountinfo, /proc/cgroups and
# /proc/PID/cgroup; groups are made and removed, values kept with the
# kernel's grammars and errnos, devices rules as the kernel keeps them,
# tasks' membership per hierarchy inherited by their children, freezer
# stops and continues, pids counts; as root and as a user. Outside, the
# host's hierarchies and mounts do not change, and the server goes with
# the last process.
. "$(dirname "$0")/lib.sh"

RUN="$MEMCGFS_BUILD/memcgfs-run"
DATA=$(mktemp -d /var/tmp/memcgfs-standin.XXXXXX)
chmod 755 "$DATA"

cleanup() {
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT

ensure_users
mount_fs || exit 1
r() { "$RUN" --mount "$MNT" "$@"; }
# the host's cgroup hierarchies, read only: every directory below them
HOST_CGROUPS=$(host_cgroups)
HOST_MI=$(awk '{ print $5, $9 }' /proc/self/mountinfo | grep -v "^$MNT " | sort | md5sum)
has_ctl() { awk -v c="$1" '$1 == c { f = 1 } END { exit !f }' /proc/cgroups; }

# --- the layout ---
want="blkio cpu cpu,cpuacct cpuacct cpuset devices freezer hugetlb memory net_cls net_cls,net_prio net_prio perf_event pids"
has_ctl rdma && want="$want rdma"
want="$want systemd"
expect "systemd's layout under /sys/fs/cgroup" "$(r -- ls /sys/fs/cgroup | tr '\n' ' ')" "$want "
expect "the co-mounted ones' links" "$(r -- readlink /sys/fs/cgroup/cpu /sys/fs/cgroup/cpuacct /sys/fs/cgroup/net_cls /sys/fs/cgroup/net_prio | tr '\n' ' ')" \
	"cpu,cpuacct cpu,cpuacct net_cls,net_prio net_cls,net_prio "
expect "mountinfo: each a cgroup mount with its controllers" \
	"$(r -- awk '/ - cgroup cgroup / { print $5, $NF }' /proc/self/mountinfo | grep -E 'cpu,|net_|systemd|devices')" \
	"/sys/fs/cgroup/cpu,cpuacct rw,cpu,cpuacct
/sys/fs/cgroup/devices rw,devices
/sys/fs/cgroup/net_cls,net_prio rw,net_cls,net_prio
/sys/fs/cgroup/systemd rw,xattr,name=systemd"
expect "statfs: cgroupfs's magic on the stand-ins" \
	"$(r -- stat -f -c %t /sys/fs/cgroup/devices /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/systemd | sort -u)" "27e0eb"
cg=$(r -- cat /proc/self/cgroup)
expect "/proc/self/cgroup: every hierarchy at its root" \
	"$(echo "$cg" | cut -d: -f2,3 | grep -v '^:' | sort | tr '\n' ' ')" \
	"$(echo "blkio:/ cpu,cpuacct:/ cpuset:/ devices:/ freezer:/ hugetlb:/ memory:/ name=systemd:/ net_cls,net_prio:/ perf_event:/ pids:/ $(has_ctl rdma && echo rdma:/)" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')"
expect "/proc/cgroups: cpu and cpuacct share a hierarchy id" \
	"$(r -- awk '$1 == "cpu" || $1 == "cpuacct" { print $2 }' /proc/cgroups | uniq | wc -l)" 1
expect "/proc/cgroups and /proc/self/cgroup agree on devices' id" \
	"$(r -- sh -c 'awk "\$1 == \"devices\" { print \$2 }" /proc/cgroups; grep ":devices:" /proc/self/cgroup | cut -d: -f1')" \
	"$(r -- sh -c 'grep ":devices:" /proc/self/cgroup | cut -d: -f1; grep ":devices:" /proc/self/cgroup | cut -d: -f1')"
if command -v lssubsys > /dev/null; then
	out=$(r -- lssubsys -am 2>&1)
	expect "lssubsys -am: exit 0" "$?" 0
	expect "lssubsys -am: the co-mount and devices" \
		"$(echo "$out" | grep -E '^(cpu,cpuacct|devices) ')" \
		"cpu,cpuacct /sys/fs/cgroup/cpu,cpuacct
devices /sys/fs/cgroup/devices"
fi

# --- files: the kernel's names and modes ---
expect "devices' files and modes" \
	"$(r -- stat -c '%n %a' /sys/fs/cgroup/devices/devices.allow /sys/fs/cgroup/devices/devices.deny /sys/fs/cgroup/devices/devices.list /sys/fs/cgroup/devices/tasks /sys/fs/cgroup/devices/release_agent)" \
	"/sys/fs/cgroup/devices/devices.allow 200
/sys/fs/cgroup/devices/devices.deny 200
/sys/fs/cgroup/devices/devices.list 444
/sys/fs/cgroup/devices/tasks 644
/sys/fs/cgroup/devices/release_agent 644"
expect "freezer.state and pids.max are not at the root" \
	"$(r -- sh -c 'ls /sys/fs/cgroup/freezer/freezer.state /sys/fs/cgroup/pids/pids.max 2>&1 | grep -c "No such file"')" 2
expect "a write-only file cannot be read, even by root" \
	"$(r -- sh -c 'cat /sys/fs/cgroup/devices/devices.allow 2>&1 >/dev/null | grep -c "Permission denied"')" 1

# --- a runtime's sequence on devices, cpuset, cpu, pids, freezer ---
cat > "$DATA/seq.sh" <<'EOF'
cd /sys/fs/cgroup
w() { printf '%s' "$2" > "$1" 2>/dev/null && echo ok || echo err; }
mkdir devices/c1 cpuset/c1 cpu,cpuacct/c1 pids/c1 freezer/c1 systemd/c1 blkio/c1
echo "deny-all $(w devices/c1/devices.deny a)"
w devices/c1/devices.allow 'c 1:3 rwm' >/dev/null; w devices/c1/devices.allow 'c 1:5 rwm' >/dev/null
w devices/c1/devices.allow 'c *:* m' >/dev/null; w devices/c1/devices.allow 'b *:* m' >/dev/null
echo "list $(tr '\n' ';' < devices/c1/devices.list)"
mkdir devices/c1/sub
echo "child widens $(w devices/c1/sub/devices.allow 'c 4:1 rw')"
echo "bad rule $(w devices/c1/devices.allow 'c 1:3 x')"
echo "cpus empty [$(cat cpuset/c1/cpuset.cpus)] join $(w cpuset/c1/tasks $$)"
w cpuset/c1/cpuset.cpus 0 >/dev/null; w cpuset/c1/cpuset.mems 0 >/dev/null
echo "cpus [$(cat cpuset/c1/cpuset.cpus)] join $(w cpuset/c1/tasks $$)"
echo "quota $(w cpu,cpuacct/c1/cpu.cfs_quota_us 50000) $(cat cpu,cpuacct/c1/cpu.cfs_quota_us) bad $(w cpu,cpuacct/c1/cpu.cfs_quota_us 10)" \
	"kept $(cat cpu,cpuacct/c1/cpu.cfs_quota_us)"
echo "blkio $(w blkio/c1/blkio.throttle.read_bps_device '8:0 1048576') $(cat blkio/c1/blkio.throttle.read_bps_device)"
echo "pids $(w pids/c1/pids.max 64) $(cat pids/c1/pids.max) bad $(w pids/c1/pids.max -1)"
echo "procs $(w pids/c1/cgroup.procs $$) $(w systemd/c1/cgroup.procs $$)"
sh -c 'grep -E ":(pids|name=systemd|cpuset|devices):" /proc/self/cgroup | cut -d: -f2,3 | sort | tr "\n" " "; echo'
echo "current $(cat pids/c1/pids.current)"
echo "supervisor $(w freezer/c1/cgroup.procs $PPID) $(grep -c . freezer/c1/cgroup.procs)"
sleep 60 & s=$!
w freezer/c1/cgroup.procs $s > /dev/null
echo "frozen $(w freezer/c1/freezer.state FROZEN)"
for i in $(seq 100); do [ "$(cat freezer/c1/freezer.state)" = FROZEN ] && break; sleep 0.05; done
echo "state $(cat freezer/c1/freezer.state) $(awk '/^State:/ { print $2 }' /proc/$s/status)"
w freezer/c1/freezer.state THAWED > /dev/null
for i in $(seq 100); do [ "$(awk '/^State:/ { print $2 }' /proc/$s/status)" != T ] && break; sleep 0.05; done
echo "thawed $(cat freezer/c1/freezer.state) $(awk '/^State:/ { print $2 }' /proc/$s/status)"
kill $s; wait $s 2>/dev/null
echo "busy $(rmdir pids/c1 2>&1 | grep -c busy)"
w pids/cgroup.procs $$ > /dev/null; w systemd/cgroup.procs $$ > /dev/null; w cpuset/cgroup.procs $$ >/dev/null
rmdir devices/c1/sub devices/c1 cpuset/c1 cpu,cpuacct/c1 pids/c1 freezer/c1 systemd/c1 blkio/c1 && echo "removed"
ls devices
EOF
out=$(r -- bash "$DATA/seq.sh" 2>&1)
line() { echo "$out" | grep "^$1"; }
expect "devices: a deny-all group" "$(line deny-all)" "deny-all ok"
expect "devices: the list runc reads back" "$(line list)" "list c 1:3 rwm;c 1:5 rwm;c *:* m;b *:* m;"
expect "devices: a child may not widen its parent's" "$(line 'child widens')" "child widens err"
expect "devices: the grammar" "$(line 'bad rule')" "bad rule err"
expect "cpuset: a new group has no CPU, and takes no task" "$(line 'cpus empty')" "cpus empty [] join err"
expect "cpuset: with CPUs and nodes it does" "$(line 'cpus \[')" "cpus [0] join ok"
expect "cpu: a quota kept, a bad one refused and nothing changed" "$(line quota)" "quota ok 50000 bad err kept 50000"
expect "blkio: a device's rule kept" "$(line blkio)" "blkio ok 8:0 1048576"
expect "pids: pids.max kept, -1 refused" "$(line pids)" "pids ok 64 bad err"
expect "membership: written through cgroup.procs" "$(line procs)" "procs ok ok"
expect "membership: a child of the task is in its groups, per hierarchy" \
	"$(echo "$out" | grep '^cpuset:')" "cpuset:/c1 devices:/ name=systemd:/c1 pids:/c1 "
expect "pids.current: the shell and the cat" "$(line current)" "current 2"
expect "memcgfs-run's own processes cannot be moved (nor frozen)" "$(line supervisor)" "supervisor err 0"
expect "freezer: FROZEN written" "$(line frozen)" "frozen ok"
expect "freezer: the task is stopped, the state FROZEN" "$(line state)" "state FROZEN T"
expect "freezer: THAWED continues it" "$(line thawed)" "thawed THAWED S"
expect "rmdir of a group with tasks: busy" "$(line busy)" "busy 1"
expect "rmdir of every group once empty" "$(line removed)" "removed"
expect "nothing left behind" "$(echo "$out" | tail -n +$(($(echo "$out" | grep -n '^removed' | cut -d: -f1) + 1)) | grep -c c1)" 0

# --- as a user (a user namespace), with /dev/fuse open to users and closed
# (its mode set in a mount namespace of the test's: lib.sh, with_dev_fuse) ---
uout=$(as_user_fuse 0666 "$TEST_USER" "$RUN" --mount "$MNT" -- sh -c '
	cd /sys/fs/cgroup; mkdir pids/u && stat -c "%U %a" pids/u pids/u/tasks
	echo $$ > pids/u/cgroup.procs && grep -c ":pids:/u$" /proc/self/cgroup
	perl -e "open(F, \">\", \$ARGV[0]) or die; syswrite(F, \"a\") or print \"\$!\\n\"" devices/devices.deny
	echo $$ > pids/cgroup.procs; rmdir pids/u && echo gone' 2>&1)
expect "as a user with /dev/fuse: a group of one's own, membership, no devices rule" "$uout" \
	"$TEST_USER 755
$TEST_USER 644
1
Operation not permitted
gone"
# /dev/fuse closed to users: the stand-ins are read-only copies of the
# roots, with the same layout and defaults
uout=$(as_user_fuse 0600 "$TEST_USER" "$RUN" --mount "$MNT" -- sh -c '
	ls /sys/fs/cgroup | tr "\n" " "; echo
	cat /sys/fs/cgroup/devices/devices.list /sys/fs/cgroup/cpu,cpuacct/cpu.shares
	stat -c %a /sys/fs/cgroup/devices/devices.allow
	perl -e "mkdir(\$ARGV[0]) or print \"\$!\\n\"" /sys/fs/cgroup/pids/u' 2>&1)
expect "as a user without /dev/fuse: the layout, defaults and modes, read-only" "$uout" \
	"$want 
a *:* rwm
1024
200
Read-only file system"
expect "as a user: /proc/self/cgroup names every hierarchy" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- cat /proc/self/cgroup | grep -c -E ':(devices|freezer|pids|name=systemd|cpu,cpuacct):/$')" 5

# --- outside: nothing changed, and the server went ---
r -- sh -c 'mkdir /sys/fs/cgroup/devices/left /sys/fs/cgroup/pids/left'
expect_host_cgroups "the host's cgroup hierarchies unchanged" "$HOST_CGROUPS"
expect "the host's mounts unchanged" "$(awk '{ print $5, $9 }' /proc/self/mountinfo | grep -v "^$MNT " | sort | md5sum)" "$HOST_MI"
r -- sh -c 'sleep 0.1' "marker-standin-$$"
gone() { ! pgrep -f "marker-standin-$$" > /dev/null; }
wait_until 10 gone
expect "the stand-ins' server ends with the last process" "$(pgrep -fc "marker-standin-$$")" 0
expect "a new run starts afresh" "$(r -- ls /sys/fs/cgroup/devices | grep -c left)" 0

summary
