#!/bin/bash
# t_run.sh: memcgfs-run (issue 13). Inside it memcgfs is a cgroup v1
# memory hierarchy at /sys/fs/cgroup/memory: mountinfo, mounts, statfs,
# /proc/PID/cgroup and /proc/cgroups say so, beside the stand-in
# hierarchies a systemd host has (t_standin.sh tests those); cgroup-tools, the JVM, Node.js, a static C and a Go detector work
# unmodified; --group accounts and OOM-kills; as root and as a user (a
# user namespace). Outside nothing changes. Each claim is also checked
# through memcgfs's own files.
. "$(dirname "$0")/lib.sh"

RUN="$MEMCGFS_BUILD/memcgfs-run"
HOG="$MEMCGFS_BUILD/tools/memhog"
CGREAD_STATIC="$MEMCGFS_BUILD/tools/cgread-static"
CGREAD_GO="$MEMCGFS_BUILD/tools/cgread-go"
DATA=$(mktemp -d /var/tmp/memcgfs-run.XXXXXX)
chmod 755 "$DATA"
PIDS=()
MiB=1048576

cleanup() {
	kill_child KILL "${PIDS[@]}"
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT

# mount points and types, what a namespace's copy keeps (ids differ)
# (other tests' memcgfs mounts come and go on a shared machine: only ours)
mounts_seen() {
	awk -v m="$MNT" '{ mp = $5; sub(/.* - /, ""); if ($1 != "fuse.memcgfs" || mp == m) print mp, $0 }' \
		/proc/self/mountinfo | sort
}
other_points() { awk -v m="$MNT" '$5 !~ /^\/sys\/fs\/cgroup/ && ($0 !~ / - fuse.memcgfs / || $5 == m) { print $5 }' | sort; }
oom_key() { awk -v k="$2" '$1 == k { print $2 }' "$MNT/$1/memory.oom_control"; }

ensure_users
mount_fs || exit 1
HOST_MOUNTS=$(mounts_seen)
HOST_CGROUP=$(cat /proc/self/cgroup)
mkdir "$MNT/demo"
echo 256M > "$MNT/demo/memory.limit_in_bytes"
r() { "$RUN" --mount "$MNT" "$@"; }
# the view's hierarchies in the order they are mounted (rdma where the
# kernel has the controller)
VIEW_DIRS="memory cpuset cpu,cpuacct devices freezer net_cls,net_prio blkio perf_event hugetlb pids"
awk '$1 == "rdma" { f = 1 } END { exit !f }' /proc/cgroups && VIEW_DIRS="$VIEW_DIRS rdma"
VIEW_DIRS="$VIEW_DIRS systemd"
NVIEW=$(echo $VIEW_DIRS | wc -w)

# --- the view: mountinfo, mounts, /etc/mtab, statfs ---
line=$(r -- grep ' /sys/fs/cgroup/memory ' /proc/self/mountinfo)
expect "mountinfo: memcgfs is cgroup, rw,memory" "${line#* - }" "cgroup cgroup rw,memory"
expect "mountinfo: the whole hierarchy, nosuid,nodev,noexec" "$(echo "$line" | awk '{ print $4, $6 }')" \
	"/ rw,nosuid,nodev,noexec,relatime"
expect "/proc/mounts" "$(r -- grep ' /sys/fs/cgroup/memory ' /proc/mounts)" \
	"cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0"
expect "/proc/self/mounts" "$(r -- grep -c '^cgroup /sys/fs/cgroup/memory cgroup ' /proc/self/mounts)" 1
if [ "$(readlink /etc/mtab)" = /proc/mounts ] || [ "$(readlink /etc/mtab)" = ../proc/self/mounts ]; then
	expect "/etc/mtab (a link to mounts)" "$(r -- grep -c '^cgroup /sys/fs/cgroup/memory cgroup ' /etc/mtab)" 1
fi
expect "/proc/PID/mountinfo of another process inside" \
	"$(r -- sh -c 'sleep 5 & p=$!; grep " /sys/fs/cgroup/memory " /proc/$p/mountinfo | sed "s/.* - //"; kill $p')" \
	"cgroup cgroup rw,memory"
expect "/proc/thread-self/mountinfo" \
	"$(r -- grep -c ' - cgroup cgroup rw,memory$' /proc/thread-self/mountinfo)" 1
expect "relative to a /proc dirfd and to the cwd" \
	"$(r -- sh -c 'cd /proc/self && grep -c " - cgroup cgroup rw,memory$" mountinfo ./../self/mountinfo')" \
	"mountinfo:1
./../self/mountinfo:1"
expect "every hierarchy listed as cgroup" \
	"$(r -- awk '/ - cgroup cgroup / { print $5, $NF }' /proc/self/mountinfo)" \
	"$(for d in $VIEW_DIRS; do o=$d; [ $d = systemd ] && o=xattr,name=systemd; echo "/sys/fs/cgroup/$d rw,$o"; done)"
expect "only ours below /sys/fs/cgroup (the host's are gone)" \
	"$(r -- awk '$5 ~ /^\/sys\/fs\/cgroup/ { print $5 }' /proc/self/mountinfo | sort | tr '\n' ' ')" \
	"$( (echo /sys/fs/cgroup; for d in $VIEW_DIRS; do echo /sys/fs/cgroup/$d; done) | sort | tr '\n' ' ')"
expect "every other mount point as outside" "$(r -- cat /proc/self/mountinfo | other_points)" \
	"$(other_points < /proc/self/mountinfo)"
expect "the memcgfs mount itself is still fuse.memcgfs inside" \
	"$(r -- awk -v m="$MNT" '$2 == m { print $3 }' /proc/mounts)" "fuse.memcgfs"
expect "statfs: cgroupfs's magic" "$(r -- stat -f -c %t /sys/fs/cgroup/memory /sys/fs/cgroup/memory/demo/tasks)" \
	"27e0eb
27e0eb"
expect "statfs: the companions too" "$(r -- stat -f -c %t /sys/fs/cgroup/cpu /sys/fs/cgroup/cpuacct /sys/fs/cgroup/cpuset | sort -u)" \
	"27e0eb"
expect "statfs: /sys/fs/cgroup is a tmpfs" "$(r -- stat -f -c %T /sys/fs/cgroup)" "tmpfs"
expect "statfs: the memcgfs mount point is FUSE's" "$(r -- stat -f -c %t "$MNT")" "65735546"

# --- /proc/PID/cgroup and /proc/cgroups ---
expect "cgroup: the memory line names --group" "$(r --group /demo -- grep :memory: /proc/self/cgroup | cut -d: -f2-)" \
	"memory:/demo"
expect "cgroup: outside any group, the root" "$(r -- grep :memory: /proc/self/cgroup | cut -d: -f2-)" "memory:/"
# sleeper GROUP: a sleep 30 of this shell's put into GROUP; its pid in
# $SLEPT
sleeper() {
	sleep 30 &
	SLEPT=$!
	PIDS+=("$SLEPT")
	echo "$SLEPT" > "$MNT$1/tasks"
}
sleeper /demo
OTHER=$SLEPT
expect "cgroup: another process's, from the mount's tasks" \
	"$(r -- grep :memory: "/proc/$OTHER/cgroup" | cut -d: -f2-)" "memory:/demo"
expect "cgroup: the companions' lines" "$(r -- grep -E ':(cpu,cpuacct|cpuset):' /proc/self/cgroup | cut -d: -f2- | sort)" \
	"cpu,cpuacct:/
cpuset:/"
# (of the host's lines, the v2 one and named hierarchies other than
# systemd's pass; its v1 hierarchies are mounted nowhere inside, and not
# listed)
expect "cgroup: the v2 line and other named hierarchies pass" \
	"$(r -- grep -E '^0::|^[0-9]+:name=' /proc/self/cgroup | grep -v ':name=systemd:')" \
	"$(grep -E '^0::|^[0-9]+:name=' /proc/self/cgroup | grep -v ':name=systemd:')"
expect "cgroup: name=systemd is the view's" \
	"$(r -- grep ':name=systemd:' /proc/self/cgroup | cut -d: -f2-)" "name=systemd:/"
expect "/proc/cgroups: memory enabled, with a hierarchy" \
	"$(r -- awk '$1 == "memory" { print ($2 > 0), $4 }' /proc/cgroups)" "1 1"
expect "/proc/cgroups: num_cgroups counts memcgfs's groups" \
	"$(r -- awk '$1 == "memory" { print $3 }' /proc/cgroups)" "2"
expect "/proc/cgroups and /proc/self/cgroup agree on the hierarchy" \
	"$(r -- sh -c 'awk "\$1 == \"memory\" { print \$2 }" /proc/cgroups; grep :memory: /proc/self/cgroup | cut -d: -f1')" \
	"$(r -- awk '$1 == "memory" { print $2; print $2 }' /proc/cgroups)"

# --- the stand-ins: an unconstrained group's values at the roots ---
expect "cpu stand-in" "$(r -- cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us \
	/sys/fs/cgroup/cpu/cpu.shares)" "-1
100000
1024"
expect "cpuset stand-in: the online CPUs" "$(r -- cat /sys/fs/cgroup/cpuset/cpuset.cpus)" \
	"$(cat /sys/devices/system/cpu/online)"
expect "stand-ins: the root's cpu.shares is not writable (EINVAL)" \
	"$(r -- "$WR" /sys/fs/cgroup/cpu/cpu.shares 512)" "EINVAL"

# --- the program's own behaviour ---
expect "exit status passes" "$(r -- sh -c 'exit 7'; echo $?)" 7
expect "a signal's end is 128+N" "$(r -- sh -c 'kill -TERM $$'; echo $?)" 143
expect "command not found: 127" "$(r -- /nonexistent/cmd 2>/dev/null; echo $?)" 127
expect "no such group: 125" "$(r --group /nope -- true 2>&1; echo $?)" "memcgfs-run: no group /nope in $MNT
125"
d=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
expect "not a memcgfs mount: 125" "$("$RUN" --mount "$d" -- true 2>&1; echo $?)" \
	"memcgfs-run: $d is not a memcgfs mount
125"
rmdir "$d"
# (other memcgfs mounts may be up on a shared machine)
if [ "$(grep -c ' - fuse.memcgfs ' /proc/self/mountinfo)" = 1 ]; then
	expect "the only memcgfs mount is the default" \
		"$("$RUN" -- grep -c ' - cgroup cgroup rw,memory$' /proc/self/mountinfo)" 1
else
	out=$("$RUN" -- true 2>&1)
	rc=$?
	expect "several memcgfs mounts: --mount is needed" "$(echo "$out" | tail -n1) $rc" \
		"memcgfs-run: several memcgfs mounts: say which with --mount 125"
fi
expect "--version" "$("$RUN" --version)" "memcgfs-run $(cat "$(dirname "$0")/../../VERSION")"
expect "the man page's version" \
	"$(sed -n 's/^\.TH MEMCGFS-RUN 1 "[^"]*" "memcgfs \([^"]*\)".*/\1/p' "$(dirname "$0")/../../docs/memcgfs-run.1")" \
	"$(cat "$(dirname "$0")/../../VERSION")"
# SIGTERM to memcgfs-run reaches the command (here a shell that reports it)
# (memcgfs-run itself in the background, not a subshell running it)
"$RUN" --mount "$MNT" -- sh -c "trap 'echo TERM > $DATA/term; exit 3' TERM; echo up > $DATA/up
	while :; do sleep 0.05; done" > /dev/null 2>&1 &
TPID=$!
PIDS+=("$TPID")
wait_until 10 test -s "$DATA/up" || bad "the command did not start"
kill -TERM "$TPID"
wait "$TPID"
expect "SIGTERM is passed to the command" "$?:$(cat "$DATA/term" 2>/dev/null)" "3:TERM"
expect "the command's stdin, stdout and arguments" "$(echo in | r -- sh -c 'cat; echo "$1"' sh 'a b')" "in
a b"
# a process that outlives the command keeps the view (a detached
# supervisor serves it), and memcgfs-run still returns at once
mkfifo "$DATA/go"
r -- sh -c "(read x < $DATA/go; grep -c ' - cgroup cgroup ' /proc/self/mountinfo > $DATA/late) >/dev/null 2>&1 &"
expect "returns before its leftovers" "$([ -e "$DATA/late" ] && echo late || echo early)" "early"
echo go > "$DATA/go"
wait_until 10 test -s "$DATA/late" || bad "the leftover process did not finish"
expect "a leftover process keeps the view" "$(cat "$DATA/late")" "$NVIEW"
wait_until 10 sh -c "! pgrep -f '^$RUN ' >/dev/null" || bad "a supervisor is left: $(pgrep -a -f "^$RUN ")"
# and SIGTERM ends what serves a leftover (the detached supervisor and the
# stand-ins' server) while the leftover lives on
r -- sh -c "sleep 281 > /dev/null 2>&1 &"
wait_until 10 pgrep -f "^$RUN " > /dev/null || bad "no supervisor serves the leftover"
left=$(pgrep -x -f 'sleep 281')
[ -n "$left" ] && ok || bad "the leftover did not start"
pkill -TERM -f "^$RUN "
wait_until 5 sh -c "! pgrep -f '^$RUN ' >/dev/null" && ok ||
	bad "SIGTERM did not end the leftover's servers: $(pgrep -a -f "^$RUN ")"
[ -n "$left" ] && kill "$left"

# --- as a user: a user namespace, the same view ---
U=$(id -u "$TEST_USER")
uout=$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- sh -c 'id -u; grep " /sys/fs/cgroup/memory " /proc/self/mountinfo | sed "s/.* - //";
	awk "\$5 ~ /^\/sys\/fs\/cgroup/" /proc/self/mountinfo | wc -l; stat -f -c %t /sys/fs/cgroup/memory;
	grep :memory: /proc/self/cgroup | cut -d: -f2-; cat /sys/fs/cgroup/memory/demo/memory.limit_in_bytes' 2>&1)
expect "as a user: same uid, the view, only ours below /sys/fs/cgroup" "$uout" "$U
cgroup cgroup rw,memory
$((NVIEW + 1))
27e0eb
memory:/
268435456"
expect "as a user: the static detector" "$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- "$CGREAD_STATIC" | head -n 2)" \
	"group /
magic 27e0eb 27e0eb"

# --- cgroup-tools (libcgroup), unmodified ---
# (lssubsys -am: /proc/cgroups lists only the controllers mounted inside;
# issue 24)
out=$(r -- lssubsys -am 2>&1; echo "rc=$?")
expect "lssubsys -am: exit 0" "$(echo "$out" | tail -n 1)" "rc=0"
expect "lssubsys -am: memory at /sys/fs/cgroup/memory" "$(echo "$out" | grep '^memory ')" \
	"memory /sys/fs/cgroup/memory"
expect "cgcreate" "$(r -- cgcreate -g memory:/ct 2>&1; echo $?)" 0
expect "cgcreate made the group" "$([ -d "$MNT/ct" ] && echo yes)" yes
expect "cgset" "$(r -- cgset -r memory.limit_in_bytes=64M ct 2>&1; echo $?)" 0
expect "cgset reached memcgfs" "$(cat "$MNT/ct/memory.limit_in_bytes")" 67108864
expect "cgget" "$(r -- cgget -r memory.limit_in_bytes ct)" "ct:
memory.limit_in_bytes: 67108864"
expect "cgget: automatic watermarks follow the limit" \
	"$(r -- cgget -n -v -r memory.high_watermark_in_bytes -r memory.low_watermark_in_bytes ct)" \
	"$(cat "$MNT/ct/memory.high_watermark_in_bytes" "$MNT/ct/memory.low_watermark_in_bytes")"
expect "cgset both watermarks" \
	"$(r -- cgset -r memory.high_watermark_in_bytes=60M -r memory.low_watermark_in_bytes=56M ct 2>&1; echo $?)" 0
expect "cgget both watermarks" \
	"$(r -- cgget -n -v -r memory.high_watermark_in_bytes -r memory.low_watermark_in_bytes ct)" "62914560
58720256"
expect "watermarks in memcgfs" "$(cat "$MNT/ct/memory.high_watermark_in_bytes" "$MNT/ct/memory.low_watermark_in_bytes")" \
	"62914560
58720256"
expect "lscgroup" "$(r -- lscgroup | grep -E '^memory:' | sort)" "memory:/
memory:/ct
memory:/demo"
expect "cgexec starts the command in the group" \
	"$(r -- cgexec -g memory:ct sh -c "grep :memory: /proc/self/cgroup | cut -d: -f2-; grep -cx \$\$ $MNT/ct/tasks")" \
	"memory:/ct
1"
expect "cgexec, then a static and a Go program" \
	"$(r -- cgexec -g memory:ct sh -c "$CGREAD_STATIC; $CGREAD_GO" | grep -E '^(group|limit)')" "group /ct
limit 67108864
group /ct
limit 67108864"
sleep 30 &
MOVE=$!
PIDS+=("$MOVE")
expect "cgclassify" "$(r -- cgclassify -g memory:ct "$MOVE" 2>&1; echo $?)" 0
expect "cgclassify moved it" "$(grep -cx "$MOVE" "$MNT/ct/tasks")" 1
kill_child KILL "$MOVE"
wait "$MOVE" 2>/dev/null
wait_until 5 sh -c "[ -z \"\$(cat $MNT/ct/tasks)\" ]" || bad "ct's tasks did not empty"
expect "cgdelete" "$(r -- cgdelete -r memory:/ct 2>&1; echo $?)" 0
expect "cgdelete removed it" "$([ -e "$MNT/ct" ] && echo still || echo gone)" gone

# --- static C and Go detectors: mountinfo + /proc/self/cgroup + the limit ---
for tool in "$CGREAD_STATIC" "$CGREAD_GO"; do
	expect "$(basename "$tool") reads its group's limit" "$(r --group /demo -- "$tool" 2>&1)" "group /demo
magic 27e0eb 27e0eb
limit 268435456"
done
expect "cgread-static is static" "$(file -b "$CGREAD_STATIC" | grep -c 'statically linked')" 1

# --- --group-as-root: the group is the hierarchy's root, as in a cgroup
# namespace made there (Docker's v1 containers): /proc/self/cgroup says
# memory:/, mountinfo's root is /, the root's files are the group's, and
# what is made inside is made in the group ---
expect "as-root: needs --group" "$(r --group-as-root -- true 2>&1; echo $?)" \
	"memcgfs-run: --group-as-root needs --group (of at most 1023 bytes, no empty, . or .. component)
125"
expect "as-root: a group path with . is refused" "$(r --group /demo/. --group-as-root -- true 2>/dev/null; echo $?)" 125
expect "as-root: cgroup says memory:/" "$(r --group /demo --group-as-root -- grep :memory: /proc/self/cgroup | cut -d: -f2-)" \
	"memory:/"
expect "as-root: mountinfo's root is /" \
	"$(r --group /demo --group-as-root -- awk '$5 == "/sys/fs/cgroup/memory" { print $4, $NF }' /proc/self/mountinfo)" \
	"/ rw,memory"
expect "as-root: the root's limit is the group's" \
	"$(r --group /demo --group-as-root -- cat /sys/fs/cgroup/memory/memory.limit_in_bytes)" 268435456
expect "as-root: the root's tasks list the command" \
	"$(r --group /demo --group-as-root -- sh -c 'grep -cx $$ /sys/fs/cgroup/memory/tasks')" 1
for tool in "$CGREAD_STATIC" "$CGREAD_GO"; do
	expect "as-root: $(basename "$tool") reads its group's limit" \
		"$(r --group /demo --group-as-root -- "$tool" 2>&1)" "group /
magic 27e0eb 27e0eb
limit 268435456"
done
mkdir "$MNT/demo/a"
sleeper /demo
BESIDE=$SLEPT
expect "as-root: a process of the parent group is above it" \
	"$(r --group /demo/a --group-as-root -- grep :memory: "/proc/$BESIDE/cgroup" | cut -d: -f2-)" "memory:/.."
kill_child KILL "$BESIDE"
rmdir "$MNT/demo/a"
expect "as-root: a group made inside is the group's child" \
	"$(r --group /demo --group-as-root -- mkdir /sys/fs/cgroup/memory/inner; [ -d "$MNT/demo/inner" ] && echo yes)" yes
rmdir "$MNT/demo/inner"
expect "as-root: java's limit is the group's" \
	"$(r --group /demo --group-as-root -- java -XshowSettings:system -version 2>&1 | sed -n 's/^ *Memory Limit: //p')" \
	"256.00M"

# --- cgroup namespaces as the kernel shows them (proc_cgroup_show): each
# reader sees a process's groups relative to the reader's own cgroup
# namespace, whatever the process's (a process made with unshare -C in
# /demo/ns, read from outside it, is memory:/demo/ns; from inside, /; and
# a reader inside sees the outside's groups above its root, /..) ---
mkdir "$MNT/demo/ns"
cat > "$DATA/cgns.sh" <<'EOF'
sh -c 'echo $$ > /sys/fs/cgroup/memory/demo/ns/cgroup.procs; exec unshare -C sleep 30' &
p=$!
for i in $(seq 100); do [ "$(readlink /proc/$p/ns/cgroup)" != "$(readlink /proc/self/ns/cgroup)" ] && break; sleep 0.05; done
echo "outside $(grep :memory: /proc/$p/cgroup | cut -d: -f3)"
echo "inside-self $(nsenter -t $p -C cat /proc/$p/cgroup | grep :memory: | cut -d: -f3)"
echo "inside-outer $(nsenter -t $p -C cat /proc/$$/cgroup | grep :memory: | cut -d: -f3)"
echo "inside-reader $(nsenter -t $p -C sh -c 'grep :memory: /proc/self/cgroup' | cut -d: -f3)"
echo "outside-mountinfo-of-it $(awk '$5 == "/sys/fs/cgroup/memory" { print $4 }' /proc/$p/mountinfo)"
kill $p
EOF
expect "unshare -C in /demo/ns, read from outside, inside, and the outside read from inside" \
	"$(r --group /demo -- bash "$DATA/cgns.sh" 2>&1)" "outside /demo/ns
inside-self /
inside-outer /..
inside-reader /..
outside-mountinfo-of-it /"
rmdir "$MNT/demo/ns"

# --- OpenJDK 17: its cgroup v1 detector ---
jout=$(r --group /demo -- java -XshowSettings:system -version 2>&1)
expect "java: provider" "$(echo "$jout" | sed -n 's/^ *Provider: //p')" "cgroupv1"
expect "java: Memory Limit" "$(echo "$jout" | sed -n 's/^ *Memory Limit: //p')" "256.00M"
heap() { "$@" -XX:+PrintFlagsFinal -version 2>/dev/null | awk '$2 == "MaxHeapSize" { print $4 }'; }
inside=$(heap r --group /demo -- java)
expect "java: MaxHeapSize as with -XX:MaxRAM=256m" "$inside" "$(heap java -XX:MaxRAM=256m)"
expect "java: not the host's heap" "$([ "$inside" != "$(heap java)" ] && echo differs)" differs

# --- Node.js (libuv's v1 lookup: memory.limit_in_bytes, and the soft
# limit when lower) ---
if command -v node > /dev/null && [ "$(node -e 'console.log(typeof process.constrainedMemory)')" = function ]; then
	nheap() { "$@" -e 'console.log(require("v8").getHeapStatistics().heap_size_limit)'; }
	expect "node: process.constrainedMemory() is the group's limit" \
		"$(r --group /demo -- node -e 'console.log(process.constrainedMemory())')" 268435456
	expect "node: the V8 heap limit is below the host's" \
		"$([ "$(nheap r --group /demo -- node)" -lt "$(nheap node)" ] && echo below)" below
	echo 128M > "$MNT/demo/memory.soft_limit_in_bytes"
	expect "node: a lower soft limit is the constrained memory" \
		"$(r --group /demo -- node -e 'console.log(process.constrainedMemory())')" 134217728
	echo -1 > "$MNT/demo/memory.soft_limit_in_bytes"
fi

# --- --group: accounted, and OOM-killed past the limit ---
mkdir "$MNT/acct" "$MNT/oom" "$MNT/oom2"
echo 512M > "$MNT/acct/memory.limit_in_bytes"
"$RUN" --mount "$MNT" --group /acct -- "$HOG" -a 64 > "$DATA/acct.out" 2>&1 < /dev/null &
PIDS+=("$!")
wait_until 20 grep -q '^ready' "$DATA/acct.out" || bad "memhog did not start"
HOGPID=$(cat "$MNT/acct/tasks")
expect "--group: the command itself is in tasks" "$(tr '\0' ' ' < "/proc/$HOGPID/cmdline" 2>/dev/null)" "$HOG -a 64 "
expect "--group: usage rises" "$(( $(cat "$MNT/acct/memory.usage_in_bytes") >= 64 * MiB ))" 1
kill "$HOGPID"
wait "${PIDS[-1]}"
expect "killed command: 128+15" "$?" 143
echo 128M > "$MNT/oom/memory.limit_in_bytes"
echo 128M > "$MNT/oom2/memory.limit_in_bytes"
r --group /oom -- "$HOG" -a 1024 -r 1024 > /dev/null 2>&1
expect "--group: OOM-killed" "$?" 137
expect "--group: oom_kill counted" "$(oom_key oom oom_kill)" 1
bash -c "echo \$\$ > $MNT/oom2/tasks && exec $HOG -a 1024 -r 1024" > /dev/null 2>&1
expect "as with echo PID > tasks" "$?:$(oom_key oom2 oom_kill)" "137:1"

# --- sendfile(2) and splice(2) from the view's files (memcgfs's are read
# with direct I/O and have size 0: the kernel's splice finds nothing; the
# supervisor answers with their text): busybox cat, which uses sendfile,
# and every readable file of a quiet group and of the stand-ins' roots as
# read(2) gives it; then an offset, a full pipe, EAGAIN and EPIPE, and
# outputs the supervisor must not write in the caller's place ---
mkdir "$MNT/cp"
expect "busybox cat of a limit (sendfile)" \
	"$(r -- /bin/busybox cat /sys/fs/cgroup/memory/cp/memory.limit_in_bytes)" 9223372036854771712
expect "busybox cat of memory.stat: its keys" \
	"$(r -- /bin/busybox cat /sys/fs/cgroup/memory/cp/memory.stat | awk '{ print $1 }' | tr '\n' ' ')" \
	"$(awk '{ print $1 }' "$MNT/cp/memory.stat" | tr '\n' ' ')"
# (files whose text stays put between two reads: the comparison's own)
copy_files=$(r -- sh -c 'for f in /sys/fs/cgroup/memory/cp/* /sys/fs/cgroup/cpuset/* /sys/fs/cgroup/devices/* \
	/sys/fs/cgroup/pids/* /sys/fs/cgroup/systemd/*; do
	[ -f "$f" ] && a=$(cat "$f" 2> /dev/null) && [ "$a" = "$(cat "$f")" ] && echo "$f"
done')
for f in memory/cp/memory.stat memory/cp/memory.limit_in_bytes memory/cp/memory.oom_control \
	cpuset/cpuset.cpus devices/devices.list; do
	grep -qx "/sys/fs/cgroup/$f" <<< "$copy_files" && ok || bad "files to copy: /sys/fs/cgroup/$f missing"
done
out=$(r -- python3 "$(dirname "$0")/copy_probe.py" $copy_files 2>&1)
expect "sendfile and splice of $(echo "$copy_files" | wc -l) files, as read(2)" \
	"$(echo "$out" | grep -v ': ok$')" ""
expect "... offset, full pipe, EAGAIN, EPIPE; a socket, /proc and a file refused" \
	"$(echo "$out" | grep -c -E '^(offset|full pipe|full non-blocking pipe|no reader|socket|/proc file|regular file): ok$')" 7
# the same as a user (memcgfs-run in a user namespace, its supervisor the
# user's too): the same files (readable by anyone), through sendfile and
# splice, with /dev/fuse open to users (the stand-ins are FUSE mounts made
# in the wrapper's user namespace, whose attributes the supervisor outside
# it may not ask: it knows them by their mounts) and closed (read-only
# copies)
for mode in 0666 0600; do
	uout=$(as_user_fuse "$mode" "$TEST_USER" "$RUN" --mount "$MNT" -- \
		python3 "$(dirname "$0")/copy_probe.py" $copy_files 2>&1)
	expect "as a user, /dev/fuse $mode: sendfile and splice as read(2)" "$(echo "$uout" | grep -v ': ok$')" ""
	expect "as a user, /dev/fuse $mode: offset, full pipe, EAGAIN, EPIPE; a socket, /proc and a file refused" \
		"$(echo "$uout" | grep -c -E '^(offset|full pipe|full non-blocking pipe|no reader|socket|/proc file|regular file): ok$')" 7
	expect "as a user, /dev/fuse $mode: sendfile of a stand-in directory is EINVAL" \
		"$(as_user_fuse "$mode" "$TEST_USER" "$RUN" --mount "$MNT" -- python3 -c '
import errno, os
fd = os.open("/sys/fs/cgroup/pids", os.O_RDONLY | os.O_DIRECTORY)
r, w = os.pipe()
try:
    os.sendfile(w, fd, None, 100)
    print("no error")
except OSError as e:
    print(errno.errorcode[e.errno])')" EINVAL
done
expect "as a user: busybox cat of a limit" \
	"$(as_user "$TEST_USER" "$RUN" --mount "$MNT" -- /bin/busybox cat /sys/fs/cgroup/memory/cp/memory.limit_in_bytes)" \
	9223372036854771712
for mode in 0666 0600; do
	expect "as a user, /dev/fuse $mode: busybox cat of a stand-in" \
		"$(as_user_fuse "$mode" "$TEST_USER" "$RUN" --mount "$MNT" -- /bin/busybox cat /sys/fs/cgroup/cpuset/cpuset.cpus)" \
		"$(cat /sys/devices/system/cpu/online)"
done
# (into a file sendfile fails with EINVAL, and busybox reads instead)
r -- sh -c "/bin/busybox cat /sys/fs/cgroup/memory/cp/memory.stat > $DATA/bb.out"
expect "busybox cat into a file" "$(cat "$DATA/bb.out" | awk '{ print $1 }' | tr '\n' ' ')" \
	"$(awk '{ print $1 }' "$MNT/cp/memory.stat" | tr '\n' ' ')"
rmdir "$MNT/cp"

# --- CLONE_PARENT without eBPF (-o page_cache=scan: no tracer, no fork
# events naming the maker; a daemon that may not load eBPF): inside
# memcgfs-run the supervisor tells memcgfs of each such clone before it
# runs (the root's user.memcgfs.clone_parent.TID), and the new process
# starts in its maker's group, not its real parent's, as the kernel places
# it (runc's init). Outside memcgfs-run nothing tells it: it starts in its
# real parent's group (docs/files.md) ---
MAIN_MNT=$MNT
MNT=
mount_fs page_cache=scan || exit 1
SCAN_MNT=$MNT
IFS=. read -r kmaj kmin _ <<< "$(uname -r)"
expect "no tracer: the page cache comes from the scan" "$(daemon_status "$MNT" page_cache_source)" \
	"$( (( kmaj > 6 || (kmaj == 6 && kmin >= 5) )) && echo cachestat || echo mincore)"
mkdir "$MNT/maker"
child=$("$RUN" --mount "$MNT" --group /maker -- "$MEMCGFS_BUILD/tools/cloneparent" sh -c 'exec sleep 30 > /dev/null')
PIDS+=("$child")
expect "no tracer, in memcgfs-run: the CLONE_PARENT child is in its maker's group" \
	"$(grep -cx "$child" "$MNT/maker/tasks")" 1
expect "no tracer, in memcgfs-run: ... not in its real parent's (the root)" "$(grep -cx "$child" "$MNT/tasks")" 0
kill "$child"
wait_until 5 sh -c "[ -z \"\$(cat $MNT/maker/tasks)\" ]"
# its first act reads its maker's group and finds itself there, 10 times
first=$DATA/first
listed=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	: > "$first"
	child=$("$RUN" --mount "$MNT" --group /maker -- "$MEMCGFS_BUILD/tools/cloneparent" sh -c \
		"n=0; while read -r p; do [ \"\$p\" = \$\$ ] && n=1; done < /sys/fs/cgroup/memory/maker/cgroup.procs; echo \$n > $first; exec sleep 30 > /dev/null")
	wait_until 5 test -s "$first"
	[ "$(cat "$first")" = 1 ] && listed=$((listed + 1))
	kill "$child" 2> /dev/null
done
expect "no tracer, in memcgfs-run: the new process's first read finds it in its maker's group" "$listed" 10
wait_until 5 sh -c "[ -z \"\$(cat $MNT/maker/tasks)\" ]"
# the same made by a user's memcgfs-run, in a group the user may write to
chown "$TEST_USER" "$MNT/maker" "$MNT/maker/tasks" "$MNT/maker/cgroup.procs"
child=$(as_user "$TEST_USER" "$RUN" --mount "$MNT" --group /maker -- "$MEMCGFS_BUILD/tools/cloneparent" \
	sh -c 'exec sleep 30 > /dev/null')
PIDS+=("$child")
expect "no tracer, a user's memcgfs-run: the CLONE_PARENT child is in its maker's group" \
	"$(grep -cx "$child" "$MNT/maker/tasks")" 1
kill "$child"
wait_until 5 sh -c "[ -z \"\$(cat $MNT/maker/tasks)\" ]"
# the control: outside memcgfs-run nothing tells memcgfs
child=$(sh -c "echo \$\$ > $MNT/maker/tasks; exec $MEMCGFS_BUILD/tools/cloneparent sh -c 'exec sleep 30 > /dev/null'")
PIDS+=("$child")
# (cloneparent returned once the child ran its command; a read of tasks
# reads every fork event queued before it)
expect "no tracer, outside memcgfs-run: the child is where its real parent is (the root)" \
	"$(grep -cx "$child" "$MNT/maker/tasks") $(grep -cx "$child" "$MNT/tasks")" "0 1"
kill "$child"
# the telling's grammar and rights: a user may tell of its own threads
# only, and a name that is not a thread id is no attribute
xattr() { python3 -c 'import os, sys, errno
try:
    os.getxattr(sys.argv[1], sys.argv[2]); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$@"; }
expect "clone_parent of a user's own process" \
	"$(as_user "$TEST_USER" bash -c "$(declare -f xattr); xattr $MNT user.memcgfs.clone_parent.\$\$")" ok
expect "clone_parent of root's process, by a user: EACCES" \
	"$(as_user "$TEST_USER" bash -c "$(declare -f xattr); xattr $MNT user.memcgfs.clone_parent.1")" EACCES
expect "clone_parent of no process: ESRCH" "$(xattr "$MNT" user.memcgfs.clone_parent.999999999)" ESRCH
for bad in "" x 1x -1 0 " 1" 99999999999; do
	expect "clone_parent.'$bad': no such attribute" "$(xattr "$MNT" "user.memcgfs.clone_parent.$bad")" ENODATA
done
expect "clone_parent of a group's directory: no such attribute" \
	"$(xattr "$MNT/maker" user.memcgfs.clone_parent.$$)" ENODATA
expect "the root's attributes list no clone_parent" "$(getfattr -d -m - "$MNT" 2> /dev/null | grep -c clone_parent)" 0
rmdir "$MNT/maker"
umount_fs
MNT=$MAIN_MNT

# --- outside, nothing changed ---
kill_child KILL "${PIDS[@]}"
expect "outside: /proc/mounts still shows fuse.memcgfs" "$(awk -v m="$MNT" '$2 == m { print $3 }' /proc/mounts)" \
	"fuse.memcgfs"
expect "outside: the same mounts" "$(mounts_seen)" "$HOST_MOUNTS"
expect "outside: /proc/self/cgroup as it was" "$(cat /proc/self/cgroup)" "$HOST_CGROUP"
expect "outside: statfs of the mount is FUSE's" "$(stat -f -c %t "$MNT")" "65735546"
wait_until 10 sh -c "! pgrep -f '^$RUN ' >/dev/null" || bad "a supervisor is left: $(pgrep -a -f "^$RUN ")"
summary
