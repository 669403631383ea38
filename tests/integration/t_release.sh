# t_release.sh: notify_on_release and release_agent (§3.19).
. "$(dirname "$0")/lib.sh"
ensure_users
mount_fs
LOG=$(mktemp /tmp/memcgfs-agent.XXXXXX)
AGENT=$(mktemp /tmp/memcgfs-agent.XXXXXX)
cat > "$AGENT" <<A
#!/bin/sh
echo "\$1 \$HOME \$PATH" >> $LOG
A
chmod 755 "$AGENT"

echo "$AGENT" > "$MNT/release_agent"
expect "agent path reads back" "$(cat "$MNT/release_agent")" "$AGENT"
chmod 666 "$MNT/release_agent"
expect "release_agent needs CAP_SYS_ADMIN" "$(as_user "$TEST_USER" "$WR" "$MNT/release_agent" /bin/true)" "EPERM"
expect "unchanged" "$(cat "$MNT/release_agent")" "$AGENT"

# settled: proof that the agent's queue has been worked through. The
# agents run one at a time in the order their groups emptied, so once a
# marker group emptied now has had its agent run, anything that came
# before it has run too. Leaves the log's lines that are not the marker's
# in $OTHERS.
marks=0
settled() {
	marks=$((marks + 1))
	mkdir "$MNT/mark$marks" "$MNT/mark$marks/x"
	echo 1 > "$MNT/mark$marks/notify_on_release"
	rmdir "$MNT/mark$marks/x"
	wait_until 10 grep -q "^/mark$marks " "$LOG" || bad "the marker's agent never ran"
	rmdir "$MNT/mark$marks"
	OTHERS=$(grep -v "^/mark$marks " "$LOG")
	: > "$LOG"
}

mkdir "$MNT/a" "$MNT/a/b"
echo 1 > "$MNT/a/notify_on_release"
mkdir "$MNT/a/c"
expect "children inherit the flag" "$(cat "$MNT/a/c/notify_on_release")" "1"
rmdir "$MNT/a/b"
settled
expect "not empty yet: no agent" "$OTHERS" ""
rmdir "$MNT/a/c"
wait_until 5 sh -c "[ -s $LOG ]" || bad "agent did not run"
expect "agent got the group path and the kernel's environment" "$(cat "$LOG")" \
	"/a / /sbin:/bin:/usr/sbin:/usr/bin"

# a task leaving empties the group too
: > "$LOG"
sleep 30 &
S=$!
echo $S > "$MNT/a/tasks"
echo $S > "$MNT/tasks"
wait_until 5 sh -c "[ -s $LOG ]" || bad "agent did not run after the last task left"
expect "second notification" "$(cat "$LOG" | cut -d' ' -f1)" "/a"
kill $S

# setting the flag on an empty group does not fire
: > "$LOG"
mkdir "$MNT/quiet"
echo 1 > "$MNT/quiet/notify_on_release"
rmdir "$MNT/quiet"
settled
expect "no notification for a never-populated group" "$OTHERS" ""
rm -f "$LOG" "$AGENT"
summary
