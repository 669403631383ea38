# t_crash.sh: the mount outlives its worker (issue 16). kill -9 of the
# worker under concurrent clients (the mount answers, only the calls in
# flight fail, a queued call is served by the next worker, a handle of the
# dead worker is EBADF, a stopped process is continued); kill -9 of the
# supervisor (no stale mount, a new daemon mounts); a stale mount recovered
# by a new daemon; SIGTERM and fusermount3 -u (status 0, mount gone); a
# worker dying after the unmount is not restarted; an ended daemon's
# unmount agent leaves a newer mount on its device alone.
. "$(dirname "$0")/lib.sh"
CRASH_TEST=1                      # the workers' restarts here are ours
CLIENT="$(cd "$(dirname "$0")" && pwd)/crash_client.py"
PY=/usr/bin/python3
DATA=$(mktemp -d /tmp/memcgfs-crash.XXXXXX)
LOG="$DATA/daemon.log"
now_ms() { date +%s%3N; }
in_mountinfo() { grep -q " $1 " /proc/self/mountinfo; }
unmounted() { ! in_mountinfo "$1"; }
# start: a foreground daemon on a new mountpoint, SUP and W its processes
start() { mount_fs_fg "$LOG"; SUP=$FG_PID; W=$(worker_pid "$MNT"); }
# end_sup SIG: signal the supervisor and wait for it, its status in RC
end_sup() { kill "-$1" "$SUP"; wait "$SUP" 2>/dev/null; RC=$?; FG_PID=; }
answers() { cat "$MNT/memory.usage_in_bytes" > /dev/null 2>&1; }
all_stopped() {
	local t
	for t in /proc/"$1"/task/*; do
		grep -q '^State:[[:space:]]*T' "$t/status" 2>/dev/null || return 1
	done
}
# a process blocked waiting for a FUSE answer (queued or in flight)
fuse_waiting() { grep -qE '^(request_wait_answer|fuse_)' "/proc/$1/wchan" 2>/dev/null; }

# --- 1: kill -9 of the worker under concurrent clients ---
start
W0=$W
expect "status: supervisor_pid is the daemon's" "$(daemon_status "$MNT" supervisor_pid)" "$SUP"
expect "status: no restart yet" "$(daemon_status "$MNT" worker_restarts)" 0
# (no -o state=: the default state file, under lib.sh's $STATE_DIRECTORY)
expect "status: state_file" "$(daemon_status "$MNT" state_file)" \
	"$STATE_DIRECTORY/$(systemd-escape --path "$MNT").$(stat -L -c %i /proc/self/ns/mnt).state"
expect "status: profile" "$(daemon_status "$MNT" profile)" 6.12
[ -n "$W0" ] && [ "$W0" != "$SUP" ] && ok || bad "no worker apart from the supervisor: [$W0]"
# a process stopped at its limit by this worker is continued when it dies
stop_at_limit S
# a handle held across the crash
exec 8< "$MNT/memory.stat"
CLIENTS=()
for m in read read stat write mkdir mkdir; do
	"$PY" "$CLIENT" "$m" "$MNT" "$DATA/stop" > "$DATA/client.${#CLIENTS[@]}" &
	CLIENTS+=($!)
done
marks() { [ "$(ls "$DATA" | grep -c "^stop\.$1\.")" -eq ${#CLIENTS[@]} ]; }
# every client is under way before the kill
wait_until 10 marks up || bad "not every client started: $(ls "$DATA")"
# and three more processes whose calls are made to be in flight at the
# kill: each writes the memory.swappiness of a group of its own (a write
# holds its file's inode lock in the kernel: one file would serialize them)
# through a file it opened, again and again, and the worker's answers to
# them are held (tools/holdreply: the
# thread answering stops at the write of the answer) until each has one
# call read by the worker and not answered. Those calls, and only those
# of theirs, must fail, with ECONNABORTED.
HELD=()
mkdir "$MNT/h1" "$MNT/h2" "$MNT/h3"
for k in 1 2 3; do
	"$PY" -c '
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, b"60\n")        # one answered before the marker: holdreply
n = 1                         # may take the very next one
open(sys.argv[2], "w").close()
while True:
    try:
        os.write(fd, b"60\n")
        n += 1
    except OSError as e:
        print(n, errno.errorcode.get(e.errno, e.errno))
        break' "$MNT/h$k/memory.swappiness" "$DATA/holder.$k" > "$DATA/held.$k" &
	HELD+=($!)
done
holders() { [ -e "$DATA/holder.1" ] && [ -e "$DATA/holder.2" ] && [ -e "$DATA/holder.3" ]; }
wait_until 10 holders || bad "the writers did not start"
"$MEMCGFS_BUILD/tools/holdreply" "$W0" ${#HELD[@]} "${HELD[@]}" > "$DATA/hold" 2>&1 &
HOLD=$!
wait_until 30 grep -q '^held' "$DATA/hold" && ok || bad "the writers' calls were never all in flight: $(cat "$DATA/hold")"
t0=$(now_ms)
kill -9 "$W0"
wait "$HOLD"
held=$(sed -n 's/^total //p' "$DATA/hold")
# (a bound on a hang, generous for ASan on a loaded 2-core machine: the
# restart takes tens of milliseconds, the figure printed below)
deadline=$((SECONDS + 30))
until answers || (( SECONDS > deadline )); do :; done
t1=$(now_ms)
echo "t_crash: restart time (kill -9 of the worker to the first successful read): $((t1 - t0)) ms"
answers && ok || bad "no answer $((t1 - t0)) ms after the kill"
W1=$(worker_pid "$MNT")
expect "status: one restart" "$(daemon_status "$MNT" worker_restarts)" 1
[ -n "$W1" ] && [ "$W1" != "$W0" ] && ok || bad "no new worker: [$W0] -> [$W1]"
expect "the supervisor is the same" "$(daemon_status "$MNT" supervisor_pid)" "$SUP"
wait_until 5 proc_running "$P" && ok || bad "still stopped after its worker's SIGKILL"
kill "$P"; wait "$P" 2>/dev/null
# every client goes on on the new worker, then they stop
touch "$DATA/stop.restarted"
wait_until 10 marks after || bad "not every client went on: $(ls "$DATA")"
touch "$DATA/stop"
for c in "${CLIENTS[@]}"; do wait "$c"; done
inflight=0
for f in "$DATA"/client.*; do
	read -r mode oks last errs < "$f"
	expect "client $mode: its last call succeeded" "$last" yes
	(( oks > 1 )) && ok || bad "client $mode: only $oks calls succeeded"
	# sequential: at most one call of a client is in flight at the kill,
	# or one file it opened on the dead worker (its read or write is then
	# EBADF); a child made before the kill is gone with the hierarchy
	n=0
	for e in ${errs//,/ }; do
		[ "$e" = - ] && continue
		case $e in
		*:ECONNABORTED=1) n=$((n + 1)); inflight=$((inflight + 1)) ;;
		read:EBADF=1|write:EBADF=1) n=$((n + 1)) ;;
		rmdir:ENOENT=1) ;;
		*) bad "client $mode: unexpected errors $errs" ;;
		esac
	done
	(( n <= 1 )) && ok || bad "client $mode: more than the call in flight failed: $errs"
	echo "t_crash: client $mode: $oks calls, errors: $errs"
done
echo "t_crash: $inflight of ${#CLIENTS[@]} looping clients had a call in flight at the kill"
# the writers held in flight: each one's held call failed, ECONNABORTED,
# after calls that all succeeded
for k in 1 2 3; do
	wait "${HELD[$((k - 1))]}"
	read -r wrote err < "$DATA/held.$k"
	expect "writer $k: its call in flight failed with ECONNABORTED" "$err" ECONNABORTED
	(( wrote > 0 )) && ok || bad "writer $k: no write succeeded before its held one"
done
expect "held in flight: one call of each writer" "$held" 3
expect "the root's files read fine" "$(cat "$MNT/memory.use_hierarchy")" 1
expect "mkdir works" "$(perl -e "$DIROP" mkdir "$MNT/after")" OK
echo 50M > "$MNT/after/memory.limit_in_bytes"
expect "a new group's limit" "$(cat "$MNT/after/memory.limit_in_bytes")" 52428800
expect "a handle of the dead worker: EBADF" "$(cat <&8 2>&1 > /dev/null | sed 's/^cat: -: //')" "Bad file descriptor"
exec 8<&-
expect "... and a new open reads" "$(grep -c '^cache ' "$MNT/memory.stat")" 1
# a call queued while the worker cannot read (stopped) is not in flight: the
# next worker answers it
kill -STOP "$W1"
wait_until 5 all_stopped "$W1" || bad "the worker did not stop"
cat "$MNT/memory.use_hierarchy" > "$DATA/queued" 2>&1 &
Q=$!
wait_until 5 fuse_waiting "$Q" || bad "the queued call is not waiting: $(cat "/proc/$Q/wchan")"
kill -9 "$W1"
wait_until 10 daemon_gone "$Q" || bad "the queued call was never answered"
wait "$Q"
expect "a queued call is answered by the next worker" "$? $(cat "$DATA/queued")" "0 1"
expect "status: two restarts" "$(daemon_status "$MNT" worker_restarts)" 2
# the back-off: the first restart at once, the second (soon after) 100 ms later
expect "back-off: first restart" "$(grep -c "worker $W0 killed by signal 9 after [0-9]* ms; restart 1 in 0 ms" "$LOG")" 1
expect "back-off: second restart" "$(grep -c "worker $W1 killed by signal 9 after [0-9]* ms; restart 2 in 100 ms" "$LOG")" 1
end_sup TERM
expect "SIGTERM after restarts: exit status 0" "$RC" 0
wait_until 5 unmounted "$MNT" && ok || bad "still mounted after SIGTERM"
rmdir "$MNT"; MNT=

# --- 2: kill -9 of the supervisor: the mount goes, the worker too ---
start
end_sup KILL
wait_until 5 unmounted "$MNT" && ok || bad "a stale mount is left: $(grep " $MNT " /proc/self/mountinfo)"
wait_until 5 daemon_gone "$W" && ok || bad "the worker outlived its supervisor"
"$MEMCGFS" "$MNT" && ok || bad "no new mount on the same mountpoint"
expect "the new mount answers" "$(cat "$MNT/memory.use_hierarchy")" 1
expect "... with a worker of its own" "$(daemon_status "$MNT" worker_restarts)" 0
umount_fs

# --- 3: a stale mount (the unmount agent killed first) is recovered ---
start
A=$(pgrep -f -x "memcgfs --unmount-agent $MNT [0-9:]*")
[ -n "$A" ] && ok || bad "no unmount agent"
kill -9 $A
wait_until 5 sh -c "grep -q 'the unmount agent died' $LOG" && ok || bad "the agent's death went unseen"
end_sup KILL
# (gone, not a zombie: a zombie leader's other threads may still hold the
# device, and a call made then ends ECONNABORTED when the last one goes)
wait_until 5 sh -c "! test -e /proc/$W" || bad "the worker outlived its supervisor"
expect "a stale mount" "$(stat "$MNT" 2>&1 | sed 's/.*: //')" "Transport endpoint is not connected"
out=$("$MEMCGFS" "$MNT" 2>&1)
expect "memcgfs on it mounts" "$?" 0
expect "... and says what it did" "$out" \
	"memcgfs: $MNT: a stale memcgfs mount (its daemon is gone): unmounting it and mounting again"
expect "the recovered mount answers" "$(cat "$MNT/memory.use_hierarchy")" 1
expect "one mount there" "$(grep -c " $MNT " /proc/self/mountinfo)" 1
umount_fs

# --- 4: SIGTERM and fusermount3 -u: status 0, the mount gone ---
start
end_sup TERM
expect "SIGTERM: exit status 0" "$RC" 0
unmounted "$MNT" && ok || bad "still mounted after SIGTERM"
daemon_gone "$W" && ok || bad "the worker outlived SIGTERM"
rmdir "$MNT"; MNT=
start
fusermount3 -u "$MNT"
wait "$SUP"
expect "fusermount3 -u: exit status 0" "$?" 0
daemon_gone "$W" && ok || bad "the worker outlived the unmount"
FG_PID=
rmdir "$MNT"; MNT=

# --- 4b: a worker that fails after the unmount is not restarted (a
# sanitizer's leak report at exit looked like a crash, and its supervisor
# restarted it until the end of the run) ---
start
kill -STOP "$W"
wait_until 5 all_stopped "$W" || bad "the worker did not stop"
fusermount3 -u -z "$MNT"
wait_until 5 unmounted "$MNT" && ok || bad "the lazy unmount left the mount"
kill -9 "$W"
wait "$SUP"
expect "a worker killed after the unmount: exit status 0" "$?" 0
expect "... and not restarted" \
	"$(grep -c "worker $W ended with status 137 after the unmount; not restarted" "$LOG")" 1
expect "... no restart logged" "$(grep -c "worker $W killed by signal" "$LOG")" 0
FG_PID=
rmdir "$MNT"; MNT=

# --- 5: an unmount agent leaves alone a mount on its device once its
# supervisor said it ended its own: the kernel gives a new mount the device
# number an unmounted one freed, so a new mount made on the same
# mountpoint before the old agent looks has the old agent's device. An
# agent is run here by hand on a live mount's device (that worst case):
# told "ended", it leaves the mount; told nothing (its supervisor killed),
# it ends it, as part 2 shows through a real kill.
start
mdev() { awk -v m="$MNT" '$5 == m { d = $3 } END { print d }' /proc/self/mountinfo; }
"$MEMCGFS" --unmount-agent "$MNT" "$(mdev)" 3< <(printf ended)
expect "told 'ended', the agent leaves a mount on its device" "$(grep -c " $MNT " /proc/self/mountinfo)" 1
expect "... which answers" "$(cat "$MNT/memory.use_hierarchy")" 1
"$MEMCGFS" --unmount-agent "$MNT" "$(mdev)" 3< /dev/null
wait_until 5 unmounted "$MNT" && ok || bad "told nothing, the agent left the mount"
wait "$SUP" 2>/dev/null
FG_PID=
rmdir "$MNT"; MNT=
rm -rf "$DATA"
summary
