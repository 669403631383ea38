# t_security.sh: the holes of the security issue, each reproduced as it was
# found (as an unprivileged user where it is about users) and shown closed.
. "$(dirname "$0")/lib.sh"
ensure_users
U=$TEST_USER
U2=$TEST_USER2
CTL="$MEMCGFS_BUILD/memcgctl"
HOG="$MEMCGFS_BUILD/tools/memhog"
SOCK="$(cd "$(dirname "$0")" && pwd)/sec_sock.py"
PY=/usr/bin/python3
MiB=$((1 << 20))
usage() { cat "$MNT/$1/memory.usage_in_bytes"; }
daemon_alive() { kill -0 "$(worker_pid "$MNT")" 2>/dev/null && [ "$(daemon_status "$MNT" worker_restarts)" = 0 ]; }
proc_state() { awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# delegate DIR USER: what an administrator does to hand a group over
delegate() { chown "$2" "$MNT/$1" "$MNT/$1/tasks" "$MNT/$1/cgroup.procs"; }

# --- 1: moving a process between groups whose counters are not linked ---
mount_fs kernel=5.10
mkdir "$MNT/D"
delegate D "$U"
as_user "$U" mkdir "$MNT/D/c"
as_user "$U" sh -c "echo 3 > $MNT/D/c/memory.move_charge_at_immigrate"
spawn_as_user "$U" "$HOG" -a 16 > /dev/null
P=$SPAWNED
wait_until 5 sh -c "grep -q '^RssAnon:.*[0-9]\{5\} kB' /proc/$P/status"
# what it faulted in the root comes along into D only with move charge
# (§11.9), so that D has a charge to move to its unlinked child
echo 3 > "$MNT/D/memory.move_charge_at_immigrate"
as_user "$U" sh -c "echo $P > $MNT/D/cgroup.procs"
# mirrored and charged in D before it moves (a read of the usage samples it)
wait_until 5 sh -c "[ \$(cat $MNT/D/memory.usage_in_bytes) -ge $((16 * MiB)) ]" && ok ||
	bad "the process is not charged in D: $(usage D)"
expect "a delegate moves its process to its child" "$(as_user "$U" "$WR" "$MNT/D/c/cgroup.procs" "$P")" OK
expect "... and back to the root, and again" "$(echo "$P" > "$MNT/cgroup.procs" && echo "$P" > "$MNT/D/c/cgroup.procs" && echo OK)" OK
daemon_alive && ok || bad "the daemon died of a move between unlinked counters"
wait_until 5 sh -c "[ \$(cat $MNT/D/c/memory.usage_in_bytes) -ge $((16 * MiB)) ]" && ok ||
	bad "the moved charge is not in D/c: $(usage D/c)"
kill "$P"; wait "$P" 2>/dev/null
umount_fs

# --- 2: a mirrored process cannot opt out through the socket: one with
# 32 MiB charged in a 64 MiB group says hello, then grows to 288 MiB ---
mount_fs kernel=6.12
mkdir "$MNT/L"
echo 64M > "$MNT/L/memory.limit_in_bytes"
delegate L "$U"
out="$(mktemp)"
chmod 666 "$out"
spawn_as_user "$U" sh -c "echo \$\$ > $MNT/L/cgroup.procs && exec $PY $SOCK $MNT hog-hello-hog /L 32 256 > $out"
P=$SPAWNED
wait "$P"
rc=$?
expect "a mirrored process is refused" "$(head -n1 "$out" | cut -c1-12)" "err refused:"
expect "... and still killed past its limit" "$rc" 137
expect "L's OOM kill is counted" "$(awk '/^oom_kill / { print $2 }' "$MNT/L/memory.oom_control")" 1
# the other order: connect in the root, then join, then grow for real
spawn_as_user "$U" sh -c "exec $PY $SOCK $MNT connect-join-hog /L 256 > $out"
P=$SPAWNED
wait "$P"
rc=$?
expect "a simulated task is admitted in the root" "$(head -n1 "$out")" ok
expect "... and its real growth is still mirrored (killed)" "$rc" 137
wait_until 5 sh -c "[ \$(cat $MNT/L/memory.usage_in_bytes) -lt $((4 * MiB)) ]" && ok ||
	bad "usage left after the kill: $(usage L)"

# --- 3: a connection is bound to the process that made it ---
: > "$out"
as_user "$U" "$PY" "$SOCK" "$MNT" orphan > "$out"
wait_until 5 test -s "$out"
expect "an inherited socket dies with its process" "$(cat "$out")" EOF

# --- 4: a task killed while waiting under oom_kill_disable ---
mkdir "$MNT/G"
echo 32M > "$MNT/G/memory.limit_in_bytes"
echo 1 > "$MNT/G/memory.oom_control"
"$CTL" sim -m "$MNT" -g /G -e 'alloc anon h 64M' -e 'touch h seq write' &
S=$!
wait_until 5 sh -c "grep -q '^under_oom 1' $MNT/G/memory.oom_control" && ok || bad "G never under OOM"
kill -9 "$S"; wait "$S" 2>/dev/null
wait_until 3 sh -c "[ \$(cat $MNT/G/memory.usage_in_bytes) -eq 0 ]" && ok ||
	bad "a killed waiter left its charge: $(usage G)"
expect "under_oom ends" "$(awk '/^under_oom/ { print $2 }' "$MNT/G/memory.oom_control")" 0
rmdir "$MNT/G"
expect "nothing left in the root's total_rss" "$(awk '/^total_rss / { print $2 }' "$MNT/memory.stat")" 0
# the same wait ended by unmounting: the daemon still exits
"$CTL" sim -m "$MNT" -g /L -e 'alloc anon h 8M' -e 'touch h seq write' -e 'sleep 60s' &
S=$!
mkdir "$MNT/G2"
echo 8M > "$MNT/G2/memory.limit_in_bytes"
echo 1 > "$MNT/G2/memory.oom_control"
"$CTL" sim -m "$MNT" -g /G2 -e 'alloc anon h 64M' -e 'touch h seq write' 2> "$MNT.sim.err" &
S2=$!
wait_until 5 sh -c "grep -q '^under_oom 1' $MNT/G2/memory.oom_control"
pid=$(daemon_pid "$MNT")
fusermount3 -u "$MNT"
wait_until 10 sh -c "! kill -0 $pid 2>/dev/null" && ok || bad "the daemon did not exit with a task waiting"
# --- 8: memcgctl with its daemon gone: an error, not SIGPIPE ---
# (its call was waiting for room when the daemon went: it fails, exit 1,
# and says why; 141 would be SIGPIPE, 0 a success it never had)
wait "$S2" 2>/dev/null
expect "memcgctl with its daemon gone: exit status" "$?" 1
grep -q 'memcgctl: ' "$MNT.sim.err" && ok || bad "memcgctl said nothing: $(cat "$MNT.sim.err")"
rm -f "$MNT.sim.err"
kill "$S" 2>/dev/null; wait "$S" 2>/dev/null
rmdir "$MNT"; MNT=

# --- 5: a process stopped under oom_kill_disable outlives a SIGKILLed daemon ---
mount_fs kernel=6.12
stop_at_limit S
kill -9 "$(daemon_pid "$MNT")"
wait_until 5 proc_running "$P" && ok || bad "still stopped after the daemon's SIGKILL"
kill "$P"; wait "$P" 2>/dev/null
umount -l "$MNT" 2>/dev/null; rmdir "$MNT"; MNT=

# --- 6, 7, 8: what one user can make the daemon hold ---
mount_fs kernel=6.12
pid=$(worker_pid "$MNT")
fds() { ls "/proc/$pid/fd" | wc -l; }
mkdir "$MNT/E"
before=$(fds)
for i in $(seq 40); do as_user "$U" "$EVCTL" "$MNT" memory.usage_in_bytes 1M > /dev/null; done
as_user "$U" "$EVCTL" "$MNT/E" memory.oom_control "" > /dev/null 2>&1
# all of them: one left over would count against the bound below
wait_until 15 sh -c "[ \$(ls /proc/$pid/fd | wc -l) -le $before ]" && ok ||
	bad "registrations of exited users stay: $before fds before, $(fds) after"
got=$(as_user "$U" "$PY" - "$MNT" <<'PY'
import os, sys
mnt = sys.argv[1]
cfd = os.open(mnt + "/memory.usage_in_bytes", os.O_RDONLY)
ctl = os.open(mnt + "/cgroup.event_control", os.O_WRONLY)
n = 0
for i in range(400):
    efd = os.eventfd(0)
    try:
        os.write(ctl, ("%d %d %d" % (efd, cfd, 4096 * (i + 1))).encode())
        n += 1
    except OSError as e:
        print(n, os.strerror(e.errno))
        break
else:
    print(n, "no limit")
PY
)
expect "registrations per user are bounded" "$got" "256 No space left on device"
wait_until 3 sh -c "[ \$(ls /proc/$pid/fd | wc -l) -le $((before + 2)) ]" && ok ||
	bad "the bounded registrations stay after their owner exits: $(fds)"
expect "named files per user are bounded" "$(as_user "$U" "$PY" "$SOCK" "$MNT" files 70 | cut -c1-15)" "64 err no space"
expect "another user's files still work" "$(as_user "$U2" "$PY" "$SOCK" "$MNT" files 3)" "3 "
expect "declared memory per user is bounded" "$(as_user "$U" "$PY" "$SOCK" "$MNT" declare 1T | cut -c1-12)" "err no space"
got=$(as_user "$U" timeout 20 "$PY" "$SOCK" "$MNT" conns 40 | sort | uniq -c | awk '{ $1 = $1; print }' | tr '\n' ';')
expect "connections per user are bounded" "$got" "24 err too many connections (EMFILE);16 ok;"
daemon_alive && ok || bad "the daemon did not survive the limits"
umount_fs

# --- 8: SIGTERM is a clean exit, with a file still open ---
MNT=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
"$MEMCGFS" -f "$MNT" 2>/dev/null &
pid=$!
wait_until 5 mountpoint -q "$MNT"
exec 9< "$MNT/memory.stat"
kill -TERM "$pid"
wait "$pid"
expect "SIGTERM: exit status 0" "$?" 0
exec 9<&-
umount -l "$MNT" 2>/dev/null; rmdir "$MNT"; MNT=
rm -f "$out"
summary
