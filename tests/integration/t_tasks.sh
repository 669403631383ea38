# t_tasks.sh: tasks and cgroup.procs (§3.18, §6.1, §10 item 8): ids,
# errors, membership, exits, forks, threads and the uid rule.
. "$(dirname "$0")/lib.sh"
ensure_users
# (the tracer's thread tells of a CLONE_PARENT fork 300 ms late: a read of
# tasks must place it first; below)
export MEMCGFS_TEST_TELL_DELAY_MS=300
mount_fs
unset MEMCGFS_TEST_TELL_DELAY_MS
A="$MNT/a"
B="$MNT/b"
mkdir "$A" "$B"

# item 8: bad input
expect_wr "abc" EINVAL "$A/tasks" "abc"
expect_wr "-1" EINVAL "$A/tasks" "-1"
expect_wr "huge" EINVAL "$A/tasks" "99999999999"
expect_wr "two ids" EINVAL "$A/tasks" "1 2"
expect_wr "no such pid" ESRCH "$A/tasks" "$(( $(cat /proc/sys/kernel/pid_max) - 1 ))"
expect_wr "kthreadd" EINVAL "$A/tasks" "2"
expect_wr "procs kthreadd" EINVAL "$A/cgroup.procs" "2"
expect "nothing joined" "$(cat "$A/tasks")" ""

# 0 is the writer itself; the move is visible in both listings
out=$(sh -c 'echo 0 > "$1/tasks"; echo $$; cat "$1/tasks"; cat "$1/cgroup.procs"' sh "$A")
me=$(echo "$out" | head -n1)
expect "writer listed in tasks" "$(echo "$out" | sed -n 2p)" "$me"
expect "writer listed in procs" "$(echo "$out" | grep -cx "$me")" "3"

# a long-lived member, then moves, a single group per task
sleep 30 &
S=$!
echo $S > "$A/tasks"
expect "sleep in a" "$(cat "$A/tasks")" "$S"
expect "sleep not in root" "$(grep -cx $S "$MNT/tasks")" "0"
echo $S > "$B/cgroup.procs"
expect "moved to b" "$(cat "$B/tasks")/$(cat "$A/tasks")" "$S/"
echo $S > "$B/tasks"
expect "move to same group" "$(cat "$B/tasks")" "$S"
# item 10: rmdir of a populated group
expect "rmdir busy" "$(rmdir "$B" 2>&1 | grep -c 'Device or resource busy')" "1"
# an exited task leaves the group's listing (the daemon learns of the exit
# through its pidfd; 10 s bounds a hang, generous for ASan on a loaded
# 2-core machine: the exit is noticed in milliseconds)
kill $S
wait $S 2>/dev/null
wait_until 10 sh -c "[ -z \"\$(cat '$B/tasks')\" ]" && ok || bad "exited task still listed"
rmdir "$B" && ok || bad "rmdir after exit"
mkdir "$B"

# the root lists every live process that is not in a child group
expect "root lists init" "$(grep -cx 1 "$MNT/cgroup.procs")" "1"
expect "root lists kthreadd" "$(grep -cx 2 "$MNT/tasks")" "1"
sorted=$(cat "$MNT/tasks")
expect "root tasks sorted" "$sorted" "$(echo "$sorted" | sort -n)"

# children of a member start in its group (fork inheritance)
out=$(sh -c 'echo $$ > "$1/tasks"; sh -c "echo \$\$; cat \"\$0/tasks\"" "$1"' sh "$A")
child=$(echo "$out" | head -n1)
expect "forked child listed" "$(echo "$out" | tail -n +2 | grep -cx "$child")" "1"

# threads: cgroup.procs moves every thread; tasks moves one thread
python3 - "$A" "$B" <<'PY' > /tmp/memcgfs-threads.$$ &
import os, sys, threading, time
a, b = sys.argv[1], sys.argv[2]
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for _ in range(3)]
for t in ts: t.start()
time.sleep(0.2)
tids = sorted(int(x) for x in os.listdir("/proc/self/task"))
with open(f"{a}/cgroup.procs", "w") as f: f.write(str(os.getpid()))
in_a = sorted(int(x) for x in open(f"{a}/tasks").read().split())
late = threading.Thread(target=ev.wait); late.start()
in_a_late = late.native_id in [int(x) for x in open(f"{a}/tasks").read().split()]
with open(f"{b}/tasks", "w") as f: f.write(str(tids[-1]))
in_b = open(f"{b}/tasks").read().split()
procs_b = open(f"{b}/cgroup.procs").read().split()
print(len(tids), tids == in_a, in_b == [str(tids[-1])], procs_b == [str(os.getpid())],
      str(os.getpid()) in open(f"{a}/cgroup.procs").read().split(), in_a_late)
ev.set()
for t in ts + [late]: t.join()
PY
wait $!
# (the last field: a thread created after the move joins its process's group)
expect "threads" "$(cat /tmp/memcgfs-threads.$$)" "4 True True True True True"
rm -f /tmp/memcgfs-threads.$$

# §6.1: the uid rule, as a non-root user
chmod 666 "$A/tasks" "$A/cgroup.procs"
expect "user moves root's process" "$(as_user "$TEST_USER" "$WR" "$A/tasks" 1)" "EACCES"
spawn_as_user "$TEST_USER" sleep 30
U=$SPAWNED
wait_until 2 sh -c "grep -q '^Uid:.*$(id -u "$TEST_USER")' /proc/$U/status" || bad "user process did not start"
expect "user moves own process" "$(as_user "$TEST_USER" "$WR" "$A/tasks" "$U")" "OK"
expect "other user cannot" "$(as_user "$TEST_USER2" "$WR" "$A/cgroup.procs" "$U")" "EACCES"
chmod 644 "$A/tasks"
expect "mode still checked at open" "$(as_user "$TEST_USER" "$WR" "$A/tasks" "$U")" "EACCES"
# open-time credentials: an fd opened by root and used after dropping to
# the user still carries root's right to move anything (5.16+).
expect "opener's creds count" "$(perl -e '
	open(my $f, ">", $ARGV[0]) or die; $| = 1;
	$) = "$ARGV[2] $ARGV[2]"; $( = $ARGV[2]; $< = $> = $ARGV[1];
	syswrite($f, "1") ? print "OK" : print "ERR:$!";' "$B/tasks" "$(id -u "$TEST_USER")" "$(id -g "$TEST_USER")")" "OK"
expect "init moved by root-opened fd" "$(cat "$B/tasks")" "1"
echo 1 > "$MNT/tasks"
kill $U 2>/dev/null

# Thread groups in the middle of exit_group make /proc fail with ESRCH
# for a moment (their task directory): such a group has no task left to
# list, and the read that met it still succeeds.
expect "root tasks read while processes exit" "$("$MEMCGFS_BUILD/tools/exitrace" "$MNT/tasks" 300)" "OK"
expect "root cgroup.procs read while processes exit" \
	"$("$MEMCGFS_BUILD/tools/exitrace" "$MNT/cgroup.procs" 300)" "OK"

# PID namespaces: ids are read in the writer's namespace and shown in the
# reader's ("1" inside a container is its init, never the host's)
mkdir "$MNT/ns"
F1=$(mktemp -u /tmp/memcgfs-ns.XXXXXX) F2=$(mktemp -u /tmp/memcgfs-ns.XXXXXX)
mkfifo "$F1" "$F2"
NSOUT=$(mktemp /tmp/memcgfs-ns.XXXXXX)
# the container tells the host it is set up, and waits until the host has
# looked (read builtins: nothing forks while the host reads the listing)
unshare -p -f --mount-proc sh -c '
	sleep 30 & s=$!
	echo 1 > "$1/ns/tasks"
	echo $s > "$1/ns/tasks"
	cat "$1/ns/tasks" | tr "\n" " "; echo
	grep -cx 1 "$1/tasks"
	echo ready > "$2"
	read x < "$3"
	echo 1 > "$1/tasks"; kill $s' sh "$MNT" "$F1" "$F2" > "$NSOUT" &
U=$!
ready=$(timeout 10 cat "$F1")
expect "the container set up" "$ready" "ready"
cinit=$(pgrep -P "$U")
csleep=$(pgrep -P "$cinit" -x sleep)
# while it lives: the host sees the container's two tasks by host ids
expect "host sees host ids" "$(sort -n "$MNT/ns/tasks" | tr '\n' ' ')" \
	"$(printf '%s\n' "$cinit" "$csleep" | sort -n | tr '\n' ' ')"
expect "the container's init is not the host's" "$(grep -cx 1 "$MNT/ns/tasks")" "0"
echo go > "$F2"
wait "$U"
out=$(cat "$NSOUT")
rm -f "$F1" "$F2" "$NSOUT"
# (the listing also shows cat and tr, forked from the member shell)
expect "container ids in a container" "$(echo "$out" | head -n1 | cut -d' ' -f1-2)" "1 2"
expect "only container ids" "$(echo "$out" | head -n1 | tr ' ' '\n' | awk '$1 > 20' | wc -l)" "0"
ns_empty() { [ "$(wc -l < "$MNT/ns/tasks")" -eq 0 ]; }
wait_until 10 ns_empty && ok || bad "the container's tasks stayed after it ended: $(cat "$MNT/ns/tasks")"
expect "host init stays in the root" "$(grep -cx 1 "$MNT/tasks")" "1"
sleep 30 &
H=$!
echo $H > "$MNT/ns/tasks"
out=$(unshare -p -f --mount-proc sh -c 'cat "$1/ns/tasks" | wc -l; echo 1 > "$1/tasks" 2>&1; grep -c . "$1/tasks"' sh "$MNT")
expect "host task invisible in a container" "$(echo "$out" | head -n1)" "0"
kill $H
# The mount's own processes (supervisor, worker, unmount agent) are to it
# what kernel threads are to cgroupfs: no group takes them (EINVAL, as for
# kthreadd), so none is ever charged, limited or signalled by memcgfs. A
# worker moved into a group limited to 0 once OOM-killed itself.
mkdir "$MNT/zero"
echo 0 > "$MNT/zero/memory.limit_in_bytes"
SUP=$(daemon_status "$MNT" supervisor_pid)
WRK=$(worker_pid "$MNT")
AGT=$(pgrep -f -x "memcgfs --unmount-agent $MNT [0-9:]*")
[ -n "$SUP" ] && [ -n "$WRK" ] && [ -n "$AGT" ] && ok || bad "not all three found: [$SUP] [$WRK] [$AGT]"
expect "kthreadd into a group" "$("$WR" "$MNT/zero/tasks" 2)" EINVAL
own() {         # own NAME PID: no group takes it
	expect "the $1 into tasks" "$("$WR" "$MNT/zero/tasks" "$2")" EINVAL
	expect "the $1 into cgroup.procs" "$("$WR" "$MNT/zero/cgroup.procs" "$2")" EINVAL
	expect "the $1 into the root's tasks" "$("$WR" "$MNT/tasks" "$2")" EINVAL
}
own supervisor "$SUP"
own worker "$WRK"
own "unmount agent" "$AGT"
# one of the worker's threads, by its own id
thr=$(ls "/proc/$WRK/task" | grep -vx "$WRK" | head -n1)
expect "a worker thread into tasks" "$("$WR" "$MNT/zero/tasks" "$thr")" EINVAL
expect "the group took none of them" "$(cat "$MNT/zero/tasks")" ""
expect "the same worker still serves" "$(worker_pid "$MNT")" "$WRK"
expect "no OOM kill" "$(awk '$1 == "oom_kill" { print $2 }' "$MNT/zero/memory.oom_control")" 0
rmdir "$MNT/zero"

# --- a process made with CLONE_PARENT (runc's init) starts where its
# maker is, not where its real parent is (cgroup_post_fork copies the
# maker's); the process events name the real parent, the tracer the
# maker (without it, the real parent's group is used: docs/files.md) ---
if [ "$(daemon_status "$MNT" page_cache_source)" = ebpf ]; then
	mkdir "$MNT/maker"
	child=$(sh -c "echo \$\$ > $MNT/maker/tasks; exec $MEMCGFS_BUILD/tools/cloneparent sh -c 'exec sleep 30 > /dev/null'")
	expect "CLONE_PARENT: its real parent is the test" "$(awk '{ print $4 }' "/proc/$child/stat")" "$$"
	wait_until 5 grep -qx "$child" "$MNT/maker/tasks"
	expect "CLONE_PARENT: the new process is in its maker's group" "$(cat "$MNT/maker/tasks")" "$child"
	expect "CLONE_PARENT: not in its real parent's (the root)" "$(grep -cx "$child" "$MNT/tasks")" 0
	expect "CLONE_PARENT: counted in memcgctl status" \
		"$(daemon_status "$MNT" real_processes_clone_parent)" 1
	kill "$child" 2>/dev/null
	wait_until 5 sh -c "[ -z \"\$(cat $MNT/maker/tasks)\" ]"
	# the new process's first act reads its maker's group, as runc's init
	# reads /proc/self/cgroup: it is listed there already, though the
	# daemon's tracer thread waits 300 ms before it tells of such a fork
	# (MEMCGFS_TEST_TELL_DELAY_MS, above): a read of tasks places what the
	# tracer saw made first. The reader is the new process itself (the
	# shell's read and echo are builtins), each of 10 times
	first=$(mktemp /tmp/memcgfs-first.XXXXXX)
	listed=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		: > "$first"
		child=$(sh -c "echo \$\$ > $MNT/maker/tasks; exec $MEMCGFS_BUILD/tools/cloneparent sh -c 'n=0; while read -r p; do [ \"\$p\" = \$\$ ] && n=1; done < $MNT/maker/cgroup.procs; echo \$n > $first; exec sleep 30 > /dev/null'")
		wait_until 5 test -s "$first"
		[ "$(cat "$first")" = 1 ] && listed=$((listed + 1))
		kill "$child" 2>/dev/null
	done
	rm -f "$first"
	expect "CLONE_PARENT: the new process's first read finds it in its maker's group" "$listed" 10
	wait_until 5 sh -c "[ -z \"\$(cat $MNT/maker/tasks)\" ]"
	rmdir "$MNT/maker"
fi
# --- every id comes back: a group a process left by exiting, then
# removed, keeps nothing (before, the record of where exited processes had
# been held a reference to each of the last 64 such groups, and with it
# its id). Groups are made until EBUSY, twice, with such an exit and
# removal between: the second fill makes as many (groups removed earlier
# with charges left, dying, hold theirs in both). The plain build only
# (65k mkdirs take a minute under a sanitizer) ---
if [ -z "${MEMCGFS_SANLOG:-}" ]; then
	fill() {
		python3 - "$MNT" <<'PY'
import errno, os, sys
mnt = sys.argv[1]
made = 0
while True:
    p = "%s/full%d" % (mnt, made // 256)
    try:
        os.mkdir(p if made % 256 == 0 else "%s/c%d" % (p, made % 256))
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
    made += 1
for i in reversed(range(made)):
    p = "%s/full%d" % (mnt, i // 256)
    os.rmdir(p if i % 256 == 0 else "%s/c%d" % (p, i % 256))
print(made, err)
PY
	}
	first=$(fill)
	sleep 0.5                     # (two grace periods: their ids come back)
	mkdir "$MNT/left" "$MNT/left/c"
	sh -c "echo \$\$ > $MNT/left/c/tasks; exit 0"
	wait_until 5 sh -c "[ -z \"\$(cat $MNT/left/c/tasks)\" ]"
	rmdir "$MNT/left/c" "$MNT/left"
	sleep 0.5
	second=$(fill)
	expect "a full tree ends in EBUSY (6.12)" "${first#* }" EBUSY
	expect "a group left by an exit and removed holds no id: as many groups" "${second% *}" "${first% *}"
fi
summary
