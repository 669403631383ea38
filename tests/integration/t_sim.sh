# t_sim.sh: simulated tasks (memcgctl sim): real processes whose declared
# memory the engine charges, seen through the mount with cat.
. "$(dirname "$0")/lib.sh"
ensure_users
CTL="$MEMCGFS_BUILD/memcgctl"
mount_fs kernel=6.12
A="$MNT/a"
mkdir "$A" "$A/x" "$MNT/b"
echo 64M > "$A/memory.limit_in_bytes"
usage() { cat "$1/memory.usage_in_bytes"; }
stat_of() { grep "^$2 " "$1/memory.stat" | cut -d' ' -f2; }

# usage rises by what the task declares, in its group and its parent
"$CTL" sim -m "$MNT" -g /a/x -e 'alloc anon heap 16M' -e 'touch heap seq write' -e 'sleep 30s' &
S=$!
wait_until 5 sh -c "[ \$(cat '$A/x/memory.usage_in_bytes') -ge $((16 << 20)) ]" || bad "usage did not rise"
expect "rss in the group" "$(stat_of "$A/x" rss)" "$((16 << 20))"
expect "pgfault counted" "$(stat_of "$A/x" pgfault)" "4096"
expect "parent's total" "$(stat_of "$A" total_rss)" "$((16 << 20))"
[ "$(usage "$A")" -ge $((16 << 20)) ] && ok || bad "parent usage"
expect "the task is listed" "$(cat "$A/x/tasks")" "$S"
[ "$(usage "$MNT")" -ge $((16 << 20)) ] && ok || bad "root usage: the global formula"
# exit releases the anon charge
kill $S
wait $S 2>/dev/null
wait_until 2 sh -c "[ \$(grep '^rss ' '$A/x/memory.stat' | cut -d' ' -f2) -eq 0 ]" && ok || bad "rss stayed after exit"

# a file mapped from two groups is charged once, to the first toucher
"$CTL" sim -m "$MNT" -g /a/x -e 'file lib 8M' -e 'map lib m' -e 'touch m seq' -e 'sleep 30s' &
S1=$!
wait_until 5 sh -c "[ \$(grep '^cache ' '$A/x/memory.stat' | cut -d' ' -f2) -eq $((8 << 20)) ]" || bad "file not charged"
"$CTL" sim -m "$MNT" -g /b -e 'map lib m' -e 'touch m seq'
expect "second task ran" "$?" "0"
expect "not charged to the second group" "$(stat_of "$MNT/b" cache)" "0"
expect "still charged once" "$(stat_of "$A/x" cache)" "$((8 << 20))"
expect "mapped" "$(stat_of "$A/x" mapped_file)" "$((8 << 20))"
kill $S1
wait $S1 2>/dev/null
expect "page cache outlives the tasks" "$(stat_of "$A/x" cache)" "$((8 << 20))"

# over the limit with no swap: the OOM killer ends the process (SIGKILL)
mkdir "$MNT/oom"
echo 8M > "$MNT/oom/memory.limit_in_bytes"
( "$CTL" sim -m "$MNT" -g /oom -e 'alloc anon big 16M' -e 'touch big seq write' 2>/dev/null )
expect "killed with SIGKILL" "$?" "137"
expect "oom_kill counted" "$(grep '^oom_kill ' "$MNT/oom/memory.oom_control")" "oom_kill 1"
[ "$(cat "$MNT/oom/memory.failcnt")" -gt 0 ] && ok || bad "failcnt did not move"
wait_until 2 sh -c "[ \$(cat '$MNT/oom/memory.usage_in_bytes') -lt $((8 << 20)) ]" && ok || bad "victim's memory not freed"

# oom_kill_disable: the task waits, under_oom reads 1; a raised limit frees it
mkdir "$MNT/wait"
echo 4M > "$MNT/wait/memory.limit_in_bytes"
echo 1 > "$MNT/wait/memory.oom_control"
"$CTL" sim -m "$MNT" -g /wait -e 'alloc anon big 8M' -e 'touch big seq write' &
W=$!
wait_until 5 sh -c "grep -q 'under_oom 1' '$MNT/wait/memory.oom_control'" && ok || bad "under_oom never read 1"
expect "waiting, not killed" "$(kill -0 $W 2>/dev/null && echo alive)" "alive"
echo 16M > "$MNT/wait/memory.limit_in_bytes"
wait $W
expect "finished after the limit rose" "$?" "0"
expect "under_oom cleared" "$(grep under_oom "$MNT/wait/memory.oom_control")" "under_oom 0"

# move charge at immigrate: echo 1 > B/memory.move_charge_at_immigrate;
# echo PID > B/tasks moves the task's anon charge at once, exactly
mkdir "$MNT/from" "$MNT/to" "$MNT/keep"
"$CTL" sim -m "$MNT" -g /from -e 'alloc anon heap 16M' -e 'touch heap seq write' -e 'sleep 30s' &
M=$!
wait_until 5 sh -c "[ \$(grep '^rss ' '$MNT/from/memory.stat' | cut -d' ' -f2) -eq $((16 << 20)) ]" || bad "task did not charge"
echo $M > "$MNT/keep/tasks"
expect "mask 0: the charge stays" "$(stat_of "$MNT/from" rss)/$(stat_of "$MNT/keep" rss)" "$((16 << 20))/0"
echo 1 > "$MNT/to/memory.move_charge_at_immigrate"
echo $M > "$MNT/to/tasks"
expect "mask 1: rss moved" "$(stat_of "$MNT/from" rss)/$(stat_of "$MNT/to" rss)" "0/$((16 << 20))"
[ "$(usage "$MNT/to")" -ge $((16 << 20)) ] && ok || bad "usage did not move"
expect "nothing left behind" "$(usage "$MNT/from")" "0"
mkdir "$MNT/tiny"
echo 1 > "$MNT/tiny/memory.move_charge_at_immigrate"
echo 4M > "$MNT/tiny/memory.limit_in_bytes"
expect "a failed move fails the attach" "$("$WR" "$MNT/tiny/tasks" "$M")" "ENOMEM"
expect "and moves nothing" "$(stat_of "$MNT/to" rss)/$(cat "$MNT/tiny/tasks")" "$((16 << 20))/"
kill $M
wait $M 2>/dev/null

# every verb of the workload language, through the mount
mkdir "$MNT/verbs"
V="$MNT/verbs"
stat_is() { wait_until 5 sh -c "[ \"\$(grep '^$2 ' '$1/memory.stat' | cut -d' ' -f2)\" = '$3' ]"; }
"$CTL" sim -m "$MNT" -g /verbs -e 'alloc shmem sh 4M' -e 'touch sh seq' -e 'sleep 30s' &
S=$!
stat_is "$V" shmem $((4 << 20)) && ok || bad "shmem: $(stat_of "$V" shmem)"
expect "shmem is page cache" "$(stat_of "$V" cache)" "$((4 << 20))"
kill $S; wait $S 2>/dev/null
"$CTL" sim -m "$MNT" -e 'file dirtyf 4M'
"$CTL" sim -m "$MNT" -g /verbs -e 'map dirtyf d' -e 'touch d seq write' -e 'sleep 30s' &
S=$!
stat_is "$V" dirty $((4 << 20)) && ok || bad "written file pages are dirty: $(stat_of "$V" dirty)"
kill $S; wait $S 2>/dev/null
mkdir "$MNT/verbs2"
V="$MNT/verbs2"
"$CTL" sim -m "$MNT" -g /verbs2 -e 'alloc anon r 4M' -e 'touch r random count=256 write' \
	-e 'alloc anon h 4M' -e 'touch h hot=90/10 count=512 write' -e 'sleep 30s' &
S=$!
wait_until 5 sh -c "[ \$(grep '^pgfault ' '$V/memory.stat' | cut -d' ' -f2) -gt 0 ]"
sleep 0.2
pf=$(stat_of "$V" pgfault)
[ "$pf" -gt 0 ] && [ "$pf" -le 768 ] && ok || bad "random and hot touches fault at most once per page: $pf"
[ "$(stat_of "$V" rss)" -le $((8 << 20)) ] && [ "$(stat_of "$V" rss)" -gt 0 ] && ok || bad "random/hot rss"
kill $S; wait $S 2>/dev/null
mkdir "$MNT/verbs3"
V="$MNT/verbs3"
"$CTL" sim -m "$MNT" -g /verbs3 -e 'alloc anon k 2M' -e 'touch k seq write' -e 'mlock k' -e 'sleep 1s' \
	-e 'munlock k' -e 'alloc anon g 2M' -e 'touch g seq write' -e 'free g' -e 'sleep 30s' &
S=$!
stat_is "$V" unevictable $((2 << 20)) && ok || bad "mlock: unevictable $(stat_of "$V" unevictable)"
stat_is "$V" unevictable 0 && ok || bad "munlock"
stat_is "$V" rss $((2 << 20)) && ok || bad "free gives the region back: rss $(stat_of "$V" rss)"
kill $S; wait $S 2>/dev/null
mkdir "$MNT/verbs4"
V="$MNT/verbs4"
"$CTL" sim -m "$MNT" -g /verbs4 -e 'repeat 3' -e 'alloc anon t 1M' -e 'touch t seq write' -e 'free t' \
	-e 'end' -e 'compute 20ms' -e 'fork kid' -e 'alloc anon f 1M' -e 'touch f seq write' -e 'sleep 30s' &
S=$!
stat_is "$V" rss $((2 << 20)) && ok || bad "fork: parent and child 1M each: rss $(stat_of "$V" rss)"
expect "fork: two processes" "$(wc -l < "$V/cgroup.procs")" 2
expect "repeat: three rounds of faults, then two" "$(stat_of "$V" pgfault)" $((3 * 256 + 2 * 256))
pkill -P $S; kill $S; wait $S 2>/dev/null
"$CTL" sim -m "$MNT" -g /verbs4 -e 'alloc anon e 1M' -e 'touch e seq write' -e 'exit' \
	-e 'alloc anon never 8M' -e 'touch never seq write'
expect "exit ends the task" "$?" 0
wait_until 5 sh -c "[ \$(grep '^rss ' '$V/memory.stat' | cut -d' ' -f2) -eq 0 ]" && ok ||
	bad "exit: nothing after it ran, its memory is gone"

# the mount says where its socket is (the status attribute), and two
# daemons on the same path in two mount namespaces have one socket each:
# each one's simulated tasks land in its own tree
expect "the status names the socket" "$(daemon_status "$MNT" socket | grep -c '^/run/memcgfs/.*\.sock$')" 1
test -S "$(daemon_status "$MNT" socket)" && ok || bad "no socket at the path the status names"
mkdir "$MNT/host"
out=$(unshare -m --propagation private sh -c '
	umount -l "$1"
	"$2/memcgfs" -o kernel=6.12 "$1" || exit 1
	mkdir "$1/inner"
	"$2/memcgctl" sim -m "$1" -g /inner -e "alloc anon x 4M" -e "touch x seq write" || echo "sim failed"
	ls "$1" | grep -c "^host$"
	fusermount3 -u "$1"' sh "$MNT" "$MEMCGFS_BUILD" 2>&1)
expect "the inner daemon serves its own tree" "$out" "0"
"$CTL" sim -m "$MNT" -g /host -e 'alloc anon h 2M' -e 'touch h seq write' -e 'sleep 30s' &
S=$!
stat_is "$MNT/host" rss $((2 << 20)) && ok || bad "the outer daemon's task lands in its own tree: rss $(stat_of "$MNT/host" rss)"
expect "nothing of the inner tree here" "$(ls "$MNT" | grep -c '^inner$')" 0
kill $S; wait $S 2>/dev/null

# joining obeys the tasks permission rule: a user cannot join root's group
expect "user cannot join" "$(as_user "$TEST_USER" "$CTL" sim -m "$MNT" -g /a -e 'alloc anon x 1M' 2>&1 | grep -c 'Permission denied')" "1"

# zones (-o zones=): a 64M machine of two zones (swap only to give the user
# a declared share over 64M), 80M of files read through:
# the zones' reclaim (kswapd's thread, direct reclaim) makes room, and both
# zones hold pages
umount_fs
mount_fs memory=64M,swap=512M,nodes=2,zones=accumulate
mkdir "$MNT/z"
"$CTL" sim -m "$MNT" -g /z -e 'file f1 40M' -e 'file f2 40M' -e 'touch f1 seq' -e 'touch f2 seq'
expect "the task read 80M on a 64M machine" "$?" "0"
cache=$(stat_of "$MNT/z" cache)
# the zones keep their reserve free: at least NORMAL's min and DMA's
# incremental one, 192 + 256 pages (a machine without zones fills up)
[ "$cache" -ge $((32 << 20)) ] && [ "$cache" -le $(((16384 - 448) * 4096)) ] && ok ||
	bad "page cache kept, the zones' reserve free: $cache"
n0=$(head -n1 "$MNT/z/memory.numa_stat" | sed 's/.* N0=\([0-9]*\).*/\1/')
n1=$(head -n1 "$MNT/z/memory.numa_stat" | sed 's/.* N1=\([0-9]*\).*/\1/')
[ "$n0" -gt 0 ] && [ "$n1" -gt 0 ] && ok || bad "both zones hold pages: N0=$n0 N1=$n1"
d=$(mktemp -d)
expect "bad zones= refused" "$("$MEMCGFS" -o zones=sideways "$d" 2>&1 | grep -c 'zones= takes')" "1"
rmdir "$d"
summary
