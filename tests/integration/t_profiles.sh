# t_profiles.sh: the behaviour profiles of §7 (-o kernel=X.Y).
. "$(dirname "$0")/lib.sh"
ensure_users

# 6.18: charge moving gone, event_control 0200, only the memory failcnt
mount_fs kernel=6.18
mkdir "$MNT/a"
expect "6.18 move_charge 1" "$("$WR" "$MNT/a/memory.move_charge_at_immigrate" 1)" "EINVAL"
expect "6.18 move_charge 0" "$("$WR" "$MNT/a/memory.move_charge_at_immigrate" 0)" "OK"
expect "6.18 event_control mode" "$(stat -c %a "$MNT/a/cgroup.event_control")" "200"
expect "6.18 user cannot open event_control" "$(as_user "$TEST_USER" "$WR" "$MNT/a/cgroup.event_control" "1 2")" "EACCES"
expect "6.18 stat has refault keys" "$(grep -c '^workingset_refault_' "$MNT/a/memory.stat")" "2"
expect "6.18 use_hierarchy 0" "$("$WR" "$MNT/a/memory.use_hierarchy" 0)" "EINVAL"
umount_fs

# §11.5 (6.18, measured): a child's structures are kernel memory of its
# parent, 20,480 bytes, charged through the per-CPU stock (a 64-page batch
# shows in the parent's usage); never the root's
mount_fs kernel=6.18,nowatermarks
mkdir "$MNT/p"
expect "mkdir under the root: nothing charged" "$(cat "$MNT/p/memory.usage_in_bytes")" 0
mkdir "$MNT/p/c"
expect "parent kmem after a child's mkdir" "$(cat "$MNT/p/memory.kmem.usage_in_bytes")" 20480
expect "parent usage: the stock's batch" "$(cat "$MNT/p/memory.usage_in_bytes")" 262144
expect "parent memsw usage" "$(cat "$MNT/p/memory.memsw.usage_in_bytes")" 262144
expect "parent max usage" "$(cat "$MNT/p/memory.max_usage_in_bytes")" 262144
expect "the child itself: nothing" "$(cat "$MNT/p/c/memory.usage_in_bytes")" 0
expect "parent rss/cache untouched" "$(awk '$1 == "rss" || $1 == "cache" { s += $2 } END { print s }' "$MNT/p/memory.stat")" 0
expect_wr "limit below what the child costs" EBUSY "$MNT/p/memory.limit_in_bytes" 16384
expect "the stock went, the child's cost stays" "$(cat "$MNT/p/memory.usage_in_bytes")" 20480
expect_wr "limit at what the child costs" OK "$MNT/p/memory.limit_in_bytes" 20480
expect "mkdir with no room: ENOMEM" "$(mkdir "$MNT/p/d" 2>&1 | grep -o 'Cannot allocate memory')" "Cannot allocate memory"
expect "no such child" "$([ -e "$MNT/p/d" ] && echo yes || echo no)" no
expect "failcnt rose" "$(( $(cat "$MNT/p/memory.failcnt") > 0 ))" 1
mkdir "$MNT/z"
echo 0 > "$MNT/z/memory.limit_in_bytes"
expect "mkdir under limit 0: ENOMEM" "$(mkdir "$MNT/z/x" 2>&1 | grep -o 'Cannot allocate memory')" "Cannot allocate memory"
expect "limit 0: failcnt rose" "$(( $(cat "$MNT/z/memory.failcnt") > 0 ))" 1
# (the child's structures go two of the host's RCU grace periods after
# its rmdir, as the kernel's do: until then the parent's limit cannot go
# below them. Whether a write right after the rmdir comes before is the
# host's timing, on the kernel as here: the unit tests hold the order)
rmdir "$MNT/p/c"
expect "the child is gone" "$([ -e "$MNT/p/c" ] && echo yes || echo no)" no
wait_until 5 sh -c "[ \$(cat $MNT/p/memory.kmem.usage_in_bytes) = 0 ]" || true
expect "rmdir gives the kmem back" "$(cat "$MNT/p/memory.kmem.usage_in_bytes")" 0
expect "rmdir gives the usage back" "$(cat "$MNT/p/memory.usage_in_bytes")" 0
expect_wr "then limit 0" OK "$MNT/p/memory.limit_in_bytes" 0
# ... through the stock of the CPU the mkdir runs on, as the kernel
# allocates on the caller's CPU (LTP's memcg_subgroup_charge sees the
# difference): a second child made on the same CPU takes its 5 pages from
# the batch the first left there, one made on another CPU a batch of its own
if [ "$(nproc)" -ge 2 ]; then
	mkdir "$MNT/q"
	taskset -c 0 mkdir "$MNT/q/c1"
	expect "a child made on CPU 0: a batch" "$(cat "$MNT/q/memory.usage_in_bytes")" 262144
	taskset -c 0 mkdir "$MNT/q/c2"
	expect "another on CPU 0: from that batch" "$(cat "$MNT/q/memory.usage_in_bytes")" 262144
	taskset -c 1 mkdir "$MNT/q/c3"
	expect "one on CPU 1: a batch of its own" "$(cat "$MNT/q/memory.usage_in_bytes")" 524288
	expect "their structures, 5 pages each" "$(cat "$MNT/q/memory.kmem.usage_in_bytes")" 61440
fi
umount_fs

# 6.12 (default): charge moving with the 2-bit mask
mount_fs kernel=6.12
mkdir "$MNT/a"
for v in 0 1 2 3; do
	expect "6.12 move_charge $v" "$("$WR" "$MNT/a/memory.move_charge_at_immigrate" $v)" "OK"
done
expect "6.12 move_charge 4" "$("$WR" "$MNT/a/memory.move_charge_at_immigrate" 4)" "EINVAL"
expect "6.12 event_control mode" "$(stat -c %a "$MNT/a/cgroup.event_control")" "222"
expect "6.12 kmem limit ignored" "$("$WR" "$MNT/a/memory.kmem.limit_in_bytes" 1M)" "OK"
umount_fs

# 6.1: kmem limit writes fail; the kernel's errno 524 cannot cross FUSE,
# so EOPNOTSUPP stands in for it (docs/files.md)
mount_fs kernel=6.1
mkdir "$MNT/a"
expect "6.1 kmem limit" "$("$WR" "$MNT/a/memory.kmem.limit_in_bytes" 1M)" "EOPNOTSUPP"
expect "6.1 root kmem limit" "$("$WR" "$MNT/memory.kmem.limit_in_bytes" 1M)" "EINVAL"
umount_fs

# 5.10: use_hierarchy is a real flag, root defaults to 0, no refault keys
mount_fs kernel=5.10,nowatermarks
expect "5.10 root use_hierarchy" "$(cat "$MNT/memory.use_hierarchy")" "0"
mkdir "$MNT/flat"
expect "5.10 child inherits 0" "$(cat "$MNT/flat/memory.use_hierarchy")" "0"
expect "5.10 root to 1 with a child" "$("$WR" "$MNT/memory.use_hierarchy" 1)" "EBUSY"
expect "5.10 value 2" "$("$WR" "$MNT/flat/memory.use_hierarchy" 2)" "EINVAL"
expect "5.10 set 1 on a leaf" "$("$WR" "$MNT/flat/memory.use_hierarchy" 1)" "OK"
mkdir "$MNT/flat/h"
expect "5.10 inherited 1" "$(cat "$MNT/flat/h/memory.use_hierarchy")" "1"
expect "5.10 0 under a hierarchical parent" "$("$WR" "$MNT/flat/h/memory.use_hierarchy" 0)" "EINVAL"
echo 32M > "$MNT/flat/memory.limit_in_bytes"
expect "5.10 hierarchical limit follows the flag" "$(grep '^hierarchical_memory_limit ' "$MNT/flat/h/memory.stat")" "hierarchical_memory_limit 33554432"
expect "5.10 no refault keys" "$(grep -c 'workingset_refault\|swapcached' "$MNT/flat/memory.stat")" "0"
expect "5.10 stat lines" "$(wc -l < "$MNT/flat/memory.stat")" "36"
expect "5.10 kmem limit is real" "$("$WR" "$MNT/flat/h/memory.kmem.limit_in_bytes" 1M)" "OK"
expect "5.10 kmem limit reads back" "$(cat "$MNT/flat/h/memory.kmem.limit_in_bytes")" "1048576"
expect "5.10 swappiness 200" "$("$WR" "$MNT/flat/memory.swappiness" 200)" "OK"
umount_fs

# 5.4: swappiness capped at 100
mount_fs kernel=5.4
mkdir "$MNT/a"
expect "5.4 swappiness 101" "$("$WR" "$MNT/a/memory.swappiness" 101)" "EINVAL"
# before 5.9 a child's structures were not accounted (§11.5)
mkdir "$MNT/a/b"
expect "5.4 mkdir charges nothing" "$(cat "$MNT/a/memory.kmem.usage_in_bytes") $(cat "$MNT/a/memory.usage_in_bytes")" "0 0"
umount_fs
summary
