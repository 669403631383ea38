# lib.sh: helpers for memcgfs integration tests. Each test script sources
# this, mounts its own instance, and drives it with echo/cat/mkdir/rmdir.
# Results are counted per assertion; summary() prints them and sets the
# exit status.

: "${MEMCGFS_BUILD:?set MEMCGFS_BUILD to the build directory}"
MEMCGFS="$MEMCGFS_BUILD/memcgfs"
WR="$MEMCGFS_BUILD/tools/wr"
EVCTL="$MEMCGFS_BUILD/tools/evctl"
TEST_USER=memcgfs-test
TEST_USER2=memcgfs-test2
PASS=0
FAIL=0
# Sanitizer builds: the daemon's stderr is gone after it daemonizes, so
# reports go to files that run.sh inspects.
if [ -n "${MEMCGFS_SANLOG:-}" ]; then
	mkdir -p "$MEMCGFS_SANLOG"
	export ASAN_OPTIONS="log_path=$MEMCGFS_SANLOG/asan:detect_leaks=1"
	export UBSAN_OPTIONS="log_path=$MEMCGFS_SANLOG/ubsan:print_stacktrace=1"
	export TSAN_OPTIONS="log_path=$MEMCGFS_SANLOG/tsan:second_deadlock_stack=1"
fi
MNT=
UNLIMITED=9223372036854771712
# Each daemon's default state file (fs/state.h) goes to $STATE_DIRECTORY
# when set, as systemd's StateDirectory= sets it: this script's own
# directory, removed at its end, so no test leaves one in /var/lib/memcgfs
# and no mountpoint name reused by a later run finds an old state.
STATE_DIRECTORY=$(mktemp -d /tmp/memcgfs-state.XXXXXX)
export STATE_DIRECTORY

# perl -e "$DIROP" mkdir|rmdir PATH: the errno name as the answer (or OK)
DIROP='my $ok = $ARGV[0] eq "mkdir" ? mkdir($ARGV[1]) : rmdir($ARGV[1]);
if ($ok) { print "OK\n"; exit 0 } my ($e) = grep { $!{$_} } keys %!; print(($e // "E?"), "\n"); exit 1'

ok()   { PASS=$((PASS + 1)); }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }

# expect DESC ACTUAL EXPECTED: counts the assertion; its status is 0 when
# it held and 1 when it failed (so that "expect ... || show more" shows)
expect() {
	if [ "$2" = "$3" ]; then ok; else bad "$1: got [$2], want [$3]"; return 1; fi
}

# The host's cgroup hierarchies, read only: every directory down to depth 3.
host_cgroups() { find /sys/fs/cgroup -maxdepth 3 -type d 2>/dev/null | sort; }

# expect_host_cgroups DESC BEFORE: the host's directories now are BEFORE's
# (a host_cgroups listing taken at the start). One exception, printed and
# not failed: the sandbox harness of some CI machines keeps its own
# processes (this test's among them) in memory:/process_api/SESSION and
# makes and removes those as its sessions come and go; a change below a
# process_api directory that was there before is that harness's.
expect_host_cgroups() {
	local changed ours=
	changed=$(diff <(printf '%s\n' "$2") <(host_cgroups) | sed -n 's/^[<>] //p')
	while IFS= read -r d; do
		[ -n "$d" ] || continue
		case $d in
		/sys/fs/cgroup/*/process_api/*)
			if grep -qxF "${d%/process_api/*}/process_api" <<< "$2"; then
				echo "$1: the harness's $d changed meanwhile (not ours)" >&2
				continue
			fi ;;
		esac
		ours="$ours $d"
	done <<< "$changed"
	expect "$1" "${ours# }" ""
}

# expect_wr DESC ERRNAME FILE DATA: one write(2), compare the errno name.
expect_wr() {
	expect "$1" "$("$WR" "$3" "$4")" "$2"
}

# expect_read DESC ERRNAME FILE: a read that must fail with ERRNAME.
expect_read_err() {
	expect "$1" "$("$WR" -r "$3" 2>/dev/null | tail -n1)" "$2"
}

# as_user USER CMD...: run a command as an unprivileged user.
as_user() {
	local u=$1
	shift
	setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups -- "$@"
}

# spawn_as_user USER CMD...: start CMD in the background as USER; its pid
# (the process itself, not a subshell) is left in $SPAWNED.
spawn_as_user() {
	local u=$1
	shift
	setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups -- "$@" &
	SPAWNED=$!
}

# with_dev_fuse MODE CMD...: CMD in a mount namespace of its own where
# /dev/fuse is a node of MODE (0666: Debian's, once udev has applied its
# rules; 0600: closed to users, as on some hosts): a user's memcgfs-run
# mounts FUSE stand-ins or falls back to read-only copies by that mode, so
# a test sets it rather than take the machine's. The host's /dev/fuse is
# not touched.
with_dev_fuse() {
	local mode=$1
	shift
	unshare -m --propagation private sh -c '
		d=$(mktemp -d /tmp/memcgfs-devfuse.XXXXXX) && mount -t tmpfs -o mode=755 devfuse "$d" &&
		mknod -m "$1" "$d/fuse" c 10 229 && mount --bind "$d/fuse" /dev/fuse && umount -l "$d" &&
		rmdir "$d" && shift && exec "$@"' with_dev_fuse "$mode" "$@"
}

# as_user_fuse MODE USER CMD...: as_user, with /dev/fuse of MODE.
as_user_fuse() {
	local mode=$1 u=$2
	shift 2
	with_dev_fuse "$mode" setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups -- "$@"
}

ensure_users() {
	for u in "$TEST_USER" "$TEST_USER2"; do
		id "$u" >/dev/null 2>&1 || useradd -M -s /bin/sh "$u"
	done
}

# mount_fs [OPTS]: mount a fresh instance on a new directory into $MNT.
mount_fs() {
	MNT=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
	chmod 755 "$MNT"
	if ! "$MEMCGFS" ${1:+-o "$1"} "$MNT"; then
		bad "mount with '$1' failed"
		return 1
	fi
	mountpoint -q "$MNT" || { bad "not mounted: $MNT"; return 1; }
}

# mount_fs_fg LOG [OPTS]: the same, with the daemon in the foreground as
# this shell's child and its stderr in LOG, so that a test can say how it
# ended (daemon_end) if it dies.
mount_fs_fg() {
	local log=$1
	shift
	MNT=$(mktemp -d /tmp/memcgfs-test.XXXXXX)
	chmod 755 "$MNT"
	"$MEMCGFS" -f ${1:+-o "$1"} "$MNT" 2> "$log" < /dev/null &
	FG_PID=$!
	wait_until 20 mountpoint -q "$MNT" || { bad "not mounted: $MNT: $(tail -n 5 "$log")"; return 1; }
}

# daemon_end LOG: how the foreground daemon ended (its wait status as a
# signal name or exit code) and the end of its stderr.
daemon_end() {
	local rc how
	if kill -0 "$FG_PID" 2>/dev/null; then
		how="still running: $(grep -E '^State:' "/proc/$FG_PID/status" | tr -s '\t ' ' ')"
	else
		wait "$FG_PID"
		rc=$?
		if (( rc > 128 )); then how="killed by SIG$(kill -l $((rc - 128)))"; else how="exit $rc"; fi
	fi
	echo "daemon $FG_PID: $how; its stderr ends:"
	tail -n 30 "$1"
}

# The daemon of $MNT, so that unmounting can wait for it to exit (and for a
# sanitizer to write its report).
daemon_pid() {
	pgrep -f -x "$MEMCGFS( -f)?( -o [^ ]*)? $1" | head -n1
}

# daemon_status MNT KEY: one value of memcgctl status (the worker answers):
# supervisor_pid, worker_pid, worker_restarts, state_file, profile.
daemon_status() {
	timeout 5 "$MEMCGFS_BUILD/memcgctl" status -m "$1" 2>/dev/null | awk -v k="$2" '$1 == k { print $2 }'
}

# The worker serving MNT: the process whose fds, threads and memory are the
# daemon's (daemon_pid and FG_PID are its supervisor's).
worker_pid() { daemon_status "$1" worker_pid; }

# kill_child SIG PID...: signal those of PID... that are still children of
# this shell. A child that has ended is reaped by bash at once and its
# number is free for anyone, the daemon's threads included (kill(2) with a
# thread's id signals its whole process).
kill_child() {
	local sig=$1 p
	shift
	for p; do
		[ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$BASHPID" ] && kill "-$sig" "$p" 2>/dev/null
	done
	return 0
}

# stop_at_limit GROUP: a real process (memhog, its pid in $P) stopped by the
# daemon at GROUP's 32M limit under oom_kill_disable.
proc_stopped() { [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" = T ]; }
proc_running() { ! proc_stopped "$1"; }
stop_at_limit() {
	mkdir "$MNT/$1"
	echo 32M > "$MNT/$1/memory.limit_in_bytes"
	echo 1 > "$MNT/$1/memory.oom_control"
	"$MEMCGFS_BUILD/tools/memhog" -a 64 > /dev/null &
	P=$!
	echo "$P" > "$MNT/$1/tasks"
	wait_until 10 proc_stopped "$P" && ok || bad "the process was not stopped at its limit"
}

daemon_gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

umount_fs() {
	[ -n "$MNT" ] || return 0
	local pid r
	pid=$(daemon_pid "$MNT")
	# a worker that crashed was restarted behind the test's back: say so
	# (CRASH_TEST=1 when the test kills workers itself)
	r=$(daemon_status "$MNT" worker_restarts)
	[ -z "$r" ] || [ "$r" = 0 ] || [ -n "${CRASH_TEST:-}" ] || bad "the worker of $MNT restarted $r times (it crashed)"

	fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
	if [ -n "${FG_PID:-}" ]; then
		# a child of this shell stays a zombie (kill -0 answers) until waited for
		wait_until 20 daemon_gone "$FG_PID" && wait "$FG_PID" 2>/dev/null
		FG_PID=
	elif [ -n "$pid" ]; then
		wait_until 20 sh -c "! kill -0 $pid 2>/dev/null"
	fi
	rmdir "$MNT" 2>/dev/null
	MNT=
}

# wait_until SECONDS CMD...: poll a condition (for asynchronous effects
# such as a task exit being noticed), never as a stand-in for ordering.
wait_until() {
	local limit=$(( $1 * 20 ))
	shift
	for _ in $(seq "$limit"); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# hold_rmdir_rename DIR RESTARTS: an rmdir of DIR/x/held and a rename of
# DIR/y/from to DIR/y/to (in two directories: each call holds its
# directory's lock), each answered by $MNT's worker and held by
# tools/holdreply at the write of its answer; then the worker is killed
# and the next one awaited (worker_restarts RESTARTS). HELD: the two
# calls' errors ("ECONNABORTED ECONNABORTED" when both died with the
# worker), or why not.
hold_rmdir_rename() {
	local dir=$1 restarts=$2 tmp w rmp rnp hold
	tmp=$(mktemp -d /tmp/memcgfs-held.XXXXXX)
	# (each waits for the go, once the worker is traced)
	cat > "$tmp/call.py" <<'PY'
import os, sys, errno, time
while not os.path.exists(sys.argv[-1]):
    time.sleep(0.01)
try:
    os.rmdir(sys.argv[1]) if len(sys.argv) == 3 else os.rename(sys.argv[1], sys.argv[2])
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
	python3 "$tmp/call.py" "$dir/x/held" "$tmp/go" > "$tmp/rmdir.out" &
	rmp=$!
	python3 "$tmp/call.py" "$dir/y/from" "$dir/y/to" "$tmp/go" > "$tmp/rename.out" &
	rnp=$!
	w=$(worker_pid "$MNT")
	"$MEMCGFS_BUILD/tools/holdreply" "$w" 2 "$rmp" "$rnp" > "$tmp/hold" 2>&1 &
	hold=$!
	traced() { [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status")" != 0 ]; }
	wait_until 10 traced "$w"
	touch "$tmp/go"
	if wait_until 30 grep -q '^held' "$tmp/hold"; then
		kill -KILL "$w"
		wait "$hold" "$rmp" "$rnp"
		HELD=$(cat "$tmp/rmdir.out" "$tmp/rename.out" | xargs)
		wait_until 30 sh -c "[ \"\$(timeout 5 '$MEMCGFS_BUILD/memcgctl' status -m '$MNT' 2>/dev/null | awk '\$1 == \"worker_restarts\" { print \$2 }')\" = $restarts ]" ||
			HELD="no new worker"
	else
		HELD="never both in flight: $(cat "$tmp/hold")"
		kill "$hold" "$rmp" "$rnp" 2> /dev/null
	fi
	rm -rf "$tmp"
}

# require PACKAGES TOOL...: each TOOL (a command, or an absolute path that
# must be executable) is here, or the test says which of make deps's
# PACKAGES are missing and ends failed: a machine without them passes
# nothing.
require() {
	local what=$1 t
	shift
	for t in "$@"; do
		if { [ "${t#/}" != "$t" ] && [ ! -x "$t" ]; } || { [ "${t#/}" = "$t" ] && ! command -v "$t" > /dev/null; }; then
			echo "$(basename "$0"): $what missing (make deps installs them)" >&2
			echo "$(basename "$0"): 0 passed, 1 failed"
			exit 1
		fi
	done
}

# image_tar DIR: DIR/image.tar, a container image's root file system made
# offline (for docker import, podman import): busybox-static's shell and
# tools and the static allocator as memhog.
image_tar() {
	mkdir -p "$1/rootfs/bin"
	cp /bin/busybox "$1/rootfs/bin/busybox"
	for c in sh cat sleep echo ls grep; do ln -s busybox "$1/rootfs/bin/$c"; done
	cp "$MEMCGFS_BUILD/tools/memhog-static" "$1/rootfs/bin/memhog"
	tar -C "$1/rootfs" -cf "$1/image.tar" .
}

summary() {
	umount_fs
	echo "$(basename "$0"): $PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

lib_exit() {
	umount_fs
	rm -rf "$STATE_DIRECTORY"
}
trap lib_exit EXIT
