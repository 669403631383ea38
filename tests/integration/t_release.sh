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

mkdir "$MNT/a" "$MNT/a/b"
echo 1 > "$MNT/a/notify_on_release"
mkdir "$MNT/a/c"
expect "children inherit the flag" "$(cat "$MNT/a/c/notify_on_release")" "1"
rmdir "$MNT/a/b"
expect "not empty yet: no agent" "$(wc -l < "$LOG")" "0"
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
expect "no notification for a never-populated group" "$(wc -l < "$LOG")" "0"
rm -f "$LOG" "$AGENT"
summary
