#!/bin/bash
# g_basic.sh (in a guest of the host matrix): memcgfs on this kernel and
# cgroup layout as a new user meets it: it mounts, groups and limits work,
# a real process placed with `echo PID > tasks` is mirrored and its exit
# uncharged, one over its limit is OOM-killed and counted. Says which
# page-cache source the daemon could use here ("feature" lines).
. "$(dirname "$0")/../../integration/lib.sh"
HOG="$MEMCGFS_BUILD/tools/memhog"
DATA=$(mktemp -d /tmp/g_basic.XXXXXX)
MiB=1048576
usage() { cat "$MNT/$1/memory.usage_in_bytes"; }
usage_at_least() { [ "$(usage "$1")" -ge "$2" ]; }
usage_below() { [ "$(usage "$1")" -lt "$2" ]; }
oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$MNT/$1/memory.oom_control"; }

mount_fs || exit 1
expect "mounted as fuse.memcgfs" "$(awk -v m="$MNT" '$2 == m { print $3 }' /proc/mounts)" "fuse.memcgfs"
mkdir "$MNT/g"
echo 64M > "$MNT/g/memory.limit_in_bytes"
expect "a limit reads back" "$(cat "$MNT/g/memory.limit_in_bytes")" 67108864
expect "memory.stat has the v1 keys" "$(awk '{ print $1 }' "$MNT/g/memory.stat" | head -n 3 | tr '\n' ' ')" \
	"cache rss rss_huge "

# a real process, placed by its own shell before it allocates
sh -c "echo \$\$ > '$MNT/g/tasks' && exec '$HOG' -a 32" > "$DATA/hog.out" 2>&1 &
hog=$!
wait_until 60 grep -q ready "$DATA/hog.out" || bad "memhog -a 32 never got ready: $(tail -n 3 "$DATA/hog.out")"
expect "the process is in tasks" "$(grep -cx "$hog" "$MNT/g/tasks")" 1
wait_until 30 usage_at_least g $((32 * MiB)) && ok || bad "usage after 32 MiB of anon: $(usage g)"
expect "its anon is rss" "$(awk '$1 == "rss" { print ($2 >= 32 * 1048576) }' "$MNT/g/memory.stat")" 1
kill "$hog"
wait "$hog" 2> /dev/null
wait_until 30 usage_below g $((4 * MiB)) && ok || bad "usage after the exit: $(usage g)"

# a process of four threads: each is in tasks, and when the process is
# killed every one leaves (before Linux 6.9 a thread other than the
# leader has no pidfd: the process connector tells its exit) and the
# group can go
mkdir "$MNT/t4"
sh -c "echo \$\$ > '$MNT/t4/tasks' && exec '$HOG' -t 4 -a 8" > "$DATA/t4.out" 2>&1 &
t4=$!
wait_until 60 grep -q ready "$DATA/t4.out" || bad "memhog -t 4 never got ready"
expect "four threads in tasks, one in cgroup.procs" \
	"$(wc -l < "$MNT/t4/tasks") $(cat "$MNT/t4/cgroup.procs")" "4 $t4"
kill -KILL "$t4"
wait "$t4" 2> /dev/null
tasks_empty() { [ -z "$(cat "$MNT/$1/tasks")" ]; }
wait_until 30 tasks_empty t4 && ok || bad "threads left in tasks after the kill: $(cat "$MNT/t4/tasks" | tr '\n' ' ')"
rmdir "$MNT/t4" && ok || bad "rmdir of the emptied group"

# over the limit: the kernel's OOM kill, counted
sh -c "echo \$\$ > '$MNT/g/tasks' && exec '$HOG' -a 256" > /dev/null 2>&1
expect "256 MiB under a 64M limit: OOM-killed" "$?" 137
expect "oom_kill counted" "$(oom_kills g)" 1
expect "max_usage_in_bytes stayed at the limit" \
	"$(( $(cat "$MNT/g/memory.max_usage_in_bytes") <= 64 * MiB ))" 1

# what this kernel lets the daemon use (the README's table reads these)
echo "feature kernel $(uname -r)"
echo "feature page_cache_source $(daemon_status "$MNT" page_cache_source) $(timeout 5 "$MEMCGFS_BUILD/memcgctl" status -m "$MNT" | awk '$1 == "page_cache_source" { $1 = $2 = ""; print }' | sed 's/^ *//')"
echo "feature cache_timeout $(daemon_status "$MNT" cache_timeout)"
echo "feature cache_restart $(daemon_status "$MNT" cache_restart)"
rm -rf "$DATA"
summary
