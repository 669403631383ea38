# t_acl.sh: ownership, chmod/chown and POSIX ACL delegation (§1.3, §4.4,
# §6.2), as non-root users created for the test.
. "$(dirname "$0")/lib.sh"
ensure_users
U=$TEST_USER
uid=$(id -u "$U")
mount_fs
A="$MNT/a"
mkdir "$A"
F="$A/memory.soft_limit_in_bytes"

# plain modes: root owns everything, others may only read
expect "user cannot write a 0644 file" "$(as_user "$U" "$WR" "$F" 1M)" "EACCES"
expect "user cannot mkdir in the 0555 root" "$(as_user "$U" mkdir "$MNT/u" 2>&1 | grep -c 'Permission denied')" "1"
expect "user cannot chmod root's file" "$(as_user "$U" chmod 666 "$F" 2>&1 | grep -c 'Operation not permitted')" "1"

# an access ACL grants the user rw; the daemon keeps mode and mask in sync
setfacl -m "u:$U:rw" "$F"
expect "getfacl" "$(getfacl -cp "$F" 2>/dev/null | grep . | tr '\n' ' ')" "user::rw- user:$U:rw- group::r-- mask::rw- other::r-- "
expect "ls shows the ACL" "$(ls -l "$F" | cut -c1-11)" "-rw-rw-r--+"
expect "user writes with the ACL" "$(as_user "$U" "$WR" "$F" 1M)" "OK"
expect "value written" "$(cat "$F")" "1048576"
chmod 644 "$F"
expect "chmod 644 narrows the mask" "$(getfacl -cp "$F" 2>/dev/null | grep '^mask')" "mask::r--"
expect "user denied by the mask" "$(as_user "$U" "$WR" "$F" 2M)" "EACCES"
chmod 664 "$F"
expect "chmod 664 widens it again" "$(as_user "$U" "$WR" "$F" 2M)" "OK"
setfacl -x "u:$U" "$F"
expect "setfacl -x revokes" "$(as_user "$U" "$WR" "$F" 3M)" "EACCES"
setfacl -b "$F"
expect "setfacl -b leaves no ACL" "$(ls -l "$F" | cut -c11)" " "
expect "no ACL xattr left" "$(getfattr -m - -d "$F" 2>/dev/null | grep -c posix_acl)" "0"
expect "the limit stays root's" "$(as_user "$U" "$WR" "$A/memory.limit_in_bytes" 1M)" "EACCES"

# a default ACL on a group applies to the files and dirs of new children
# (rwx: new directories need search permission for the delegate; control
# files never take the x)
setfacl -d -m "u:$U:rwx" "$A"
mkdir "$A/kid"
K="$A/kid"
expect "child file carries the entry" "$(getfacl -cp "$K/memory.soft_limit_in_bytes" 2>/dev/null | grep "^user:$U")" "user:$U:rw-"
expect "effective rw (mask as written)" "$(getfacl -cp "$K/memory.soft_limit_in_bytes" 2>/dev/null | grep '^mask')" "mask::rw-"
expect "group bits follow the mask" "$(stat -c %A "$K/memory.soft_limit_in_bytes")" "-rw-rw-r--"
expect "delegated write works" "$(as_user "$U" "$WR" "$K/memory.soft_limit_in_bytes" 4M)" "OK"
expect "read-only file stays read-only" "$(as_user "$U" "$WR" "$K/memory.usage_in_bytes" 1)" "EACCES"
expect "child dir inherits the default" "$(getfacl -cpd "$K" 2>/dev/null | grep "^user:$U")" "user:$U:rwx"
expect "child dir access entry" "$(getfacl -cp "$K" 2>/dev/null | grep "^user:$U")" "user:$U:rwx"
mkdir "$K/grandkid"
expect "grandchild too" "$(as_user "$U" "$WR" "$K/grandkid/memory.soft_limit_in_bytes" 4M)" "OK"
expect "not retroactive" "$(as_user "$U" "$WR" "$A/memory.soft_limit_in_bytes" 1M)" "EACCES"
setfacl -k "$A"
mkdir "$A/plain"
expect "no default, no ACL" "$(as_user "$U" "$WR" "$A/plain/memory.soft_limit_in_bytes" 1M)" "EACCES"
rmdir "$K/grandkid" "$K" "$A/plain"

# chown delegation: a user owns a group, makes subgroups, moves its tasks
D="$MNT/deleg"
mkdir "$D"
chown "$U" "$D" "$D/tasks" "$D/cgroup.procs"
expect "owner shown" "$(stat -c %U "$D")" "$U"
expect "user mkdir" "$(as_user "$U" mkdir "$D/sub" && echo OK)" "OK"
expect "subgroup owned by its creator" "$(stat -c '%U %G' "$D/sub" "$D/sub/tasks" | sort -u)" "$U $(id -gn "$U")"
expect "user sets its limit" "$(as_user "$U" "$WR" "$D/sub/memory.limit_in_bytes" 64M)" "OK"
expect "umask applies to the dir only" "$(stat -c %a "$D/sub" "$D/sub/memory.stat" | tr '\n' ' ')" "755 444 "
spawn_as_user "$U" sleep 30
S=$SPAWNED
wait_until 2 sh -c "grep -q '^Uid:.*$uid' /proc/$S/status" || bad "user process did not start"
expect "user moves its process" "$(as_user "$U" "$WR" "$D/sub/cgroup.procs" "$S")" "OK"
expect "listed" "$(cat "$D/sub/tasks")" "$S"
expect "user cannot move root's" "$(as_user "$U" "$WR" "$D/sub/tasks" 1)" "EACCES"
expect "cannot chown as user" "$(as_user "$U" chown root "$D/sub/tasks" 2>&1 | grep -c 'Operation not permitted')" "1"
expect "user chmod own file" "$(as_user "$U" chmod 600 "$D/sub/memory.stat" && stat -c %a "$D/sub/memory.stat")" "600"
kill "$S"
wait_until 2 sh -c "[ -z \"\$(cat '$D/sub/tasks')\" ]" || bad "exit not seen"
expect "user rmdir" "$(as_user "$U" rmdir "$D/sub" && echo OK)" "OK"
umount_fs

# -o acl_inherit: "delegate the watermarks of every future group, keep the
# limit" as one inherited default ACL
expect "a pattern naming no file is refused" \
	"$(d=$(mktemp -d); "$MEMCGFS" -o acl_inherit=memory.nosuch "$d" 2>&1; echo "rc $?"; rmdir "$d")" \
	"memcgfs: acl_inherit=memory.nosuch: a pattern names no control file
rc 1"
mount_fs "acl_inherit=memory.*watermark*:memory.soft_limit_in_bytes" || exit 1
W="$MNT/wm"
mkdir "$W"
setfacl -d -m "u:$U:rwx" "$W"
mkdir "$W/job"
J="$W/job"
expect "a named file takes the entry" "$(getfacl -cp "$J/memory.high_watermark_in_bytes" 2>/dev/null | grep "^user:$U")" "user:$U:rw-"
expect "the delegate tunes the watermark" "$(as_user "$U" "$WR" "$J/memory.high_watermark_in_bytes" 64M)" "OK"
expect "and the soft limit" "$(as_user "$U" "$WR" "$J/memory.soft_limit_in_bytes" 32M)" "OK"
expect "the limit has no entry" "$(getfacl -cp "$J/memory.limit_in_bytes" 2>/dev/null | grep -c "^user:$U")" "0"
expect "the limit keeps its plain mode" "$(stat -c %a "$J/memory.limit_in_bytes")" "644"
expect "the delegate cannot set the limit" "$(as_user "$U" "$WR" "$J/memory.limit_in_bytes" 1G)" "EACCES"
expect "the directory inherits as POSIX says" "$(getfacl -cpd "$J" 2>/dev/null | grep "^user:$U")" "user:$U:rwx"
mkdir "$J/step"
expect "grandchildren follow the same rule" \
	"$(as_user "$U" "$WR" "$J/step/memory.low_watermark_in_bytes" 16M) $(as_user "$U" "$WR" "$J/step/memory.limit_in_bytes" 1G)" \
	"OK EACCES"
rmdir "$J/step" "$J" "$W"
summary
