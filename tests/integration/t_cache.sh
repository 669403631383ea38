# t_cache.sh: the kernel keeps names and attributes (-o cache_timeout,
# docs/design.md, Kernel caches), and no reader ever sees a stale one. A
# name looked at once is looked at again without a request to the daemon;
# after every change, whoever made it, each observer (root, another user,
# a process in another mount namespace) sees the new state at once: rmdir,
# rename, chmod, chown and setfacl by another user, a default ACL's
# inheritance, -o acl_inherit, a directory's nlink and times as children
# come and go; and a worker restart on a state file restored from an
# earlier copy (the dead worker told the kernel things the new one never
# did): every name and attribute, an open descriptor's too, is the
# restored one; and a removal and a rename whose answers died with the
# worker. FLUSH is answered once for the connection. With
# MEMCGFS_TEST_NO_EPOCH (t_cache_noepoch.sh) the daemon takes the way of a
# kernel before 6.16, which cannot be told to drop every name at once.
. "$(dirname "$0")/lib.sh"
ensure_users
U1=$(id -u "$TEST_USER")
U2=$(id -u "$TEST_USER2")
CRASH_TEST=1                  # the restore kills the worker itself

DATA=$(mktemp -d /tmp/memcgfs-cache.XXXXXX)
chmod 755 "$DATA"
ST=$DATA/state
cleanup() {
	[ -n "${FG_PID:-}" ] && kill -CONT "$FG_PID" 2>/dev/null
	exec 7<&- 2>/dev/null
	lib_exit
	rm -rf "$DATA"
}
trap cleanup EXIT

# see DESC WANT CMD: CMD (a shell command line) prints WANT for root, for
# $TEST_USER2 and for root in a new mount namespace
see() {
	local desc=$1 want=$2 cmd=$3
	expect "$desc (root)" "$(sh -c "$cmd" 2>&1)" "$want"
	expect "$desc ($TEST_USER2)" "$(as_user "$TEST_USER2" sh -c "$cmd" 2>&1)" "$want"
	expect "$desc (another mount namespace)" "$(unshare -m sh -c "$cmd" 2>&1)" "$want"
}

# requests: how many requests the worker has received (memcgctl status)
requests() { daemon_status "$MNT" requests_total; }

# quiet DESC CMD...: CMD sends no request to the daemon (the kernel
# answered from what it keeps); a status read's own requests are measured
# beside it
quiet() {
	local desc=$1 a b c d
	shift
	a=$(requests); b=$(requests)
	c=$(requests); "$@" > /dev/null 2>&1; d=$(requests)
	expect "$desc: no request" "$((d - c))" "$((b - a))"
}

mount_fs_fg "$DATA/log" "state=$ST" || exit 1
expect "the kernel keeps names and attributes for a day" \
	"$(daemon_status "$MNT" cache_timeout)" 86400
mkdir -p "$MNT/a/b" "$MNT/a/d"
chown -R "$U1" "$MNT/a/d"
# (a user other than root has the ACLs of each directory on the path
# fetched once for its permission checks)
stat "$MNT/a/b/memory.limit_in_bytes" > /dev/null
as_user "$TEST_USER2" stat "$MNT/a/b/memory.limit_in_bytes" > /dev/null
quiet "a warm stat of a leaf's file" stat "$MNT/a/b/memory.limit_in_bytes"
# (except the mount root's ACL, which this kernel fetches on every walk
# by a user other than its owner: it does not keep it, measured)
a=$(requests); b=$(requests)
c=$(requests); as_user "$TEST_USER2" stat "$MNT/a/b/memory.limit_in_bytes" > /dev/null; d=$(requests)
[ $((d - c - (b - a))) -le 1 ] && ok ||
	bad "a warm stat from another user: $((d - c - (b - a))) requests (the root's ACL at most)"
quiet "a warm stat of a group" stat "$MNT/a/b"
# a warm cat: no name looked up, only the file's own requests (open, the
# reads, the attributes fstat asks for after a read, release), as many
# as on a kernel that can be told to drop every name (the figure printed)
lookups() { daemon_status "$MNT" requests_lookup; }
cat "$MNT/a/b/memory.limit_in_bytes" > /dev/null
a=$(requests); b=$(requests); la=$(lookups); lb=$(lookups)
c=$(requests); lc=$(lookups); cat "$MNT/a/b/memory.limit_in_bytes" > /dev/null; d=$(requests); ld=$(lookups)
expect "a warm cat looks no name up" "$((ld - lc))" "$((lb - la))"
echo "t_cache${MEMCGFS_TEST_NO_EPOCH:+ (no INC_EPOCH)}: a warm cat of a leaf's file: $((d - c - (b - a))) requests"
cat "$MNT/a/b/memory.stat" > /dev/null
f0=$(daemon_status "$MNT" requests_flush)
cat "$MNT/a/b/memory.stat" > /dev/null
cat "$MNT/a/b/memory.usage_in_bytes" > /dev/null
expect "FLUSH is sent at most once on the connection" "$(daemon_status "$MNT" requests_flush)" "$f0"
[ "$f0" -le 1 ] && ok || bad "FLUSH answered $f0 times"

# ---- rmdir: the name, the parent's nlink and times
mkdir "$MNT/a/x"
see "a new group" "x" "ls $MNT/a | grep -x x"
see "its parent's nlink" 5 "stat -c %h $MNT/a"
t0=$(stat -c %y "$MNT/a")
stat "$MNT/a/x/memory.limit_in_bytes" > /dev/null
as_user "$TEST_USER2" stat "$MNT/a/x" > /dev/null
sleep 0.01
rmdir "$MNT/a/x"
see "a removed group is gone" "1" "stat -c %i $MNT/a/x 2>&1 | grep -c 'No such file'"
see "its file is gone" "1" \
	"stat $MNT/a/x/memory.limit_in_bytes 2>&1 | grep -c 'No such file'"
see "the listing has no removed group" "b d" "ls $MNT/a | grep -v '^memory\|^cgroup\|^tasks\|^notify' | xargs"
see "its parent's nlink after the rmdir" 4 "stat -c %h $MNT/a"
t1=$(stat -c %y "$MNT/a")
[ "$t1" != "$t0" ] && ok || bad "the parent's mtime did not move at rmdir ($t0)"
see "the parent's mtime after the rmdir" "$t1" "stat -c %y $MNT/a"
# a new group of the same name: a new inode, seen by all
mkdir "$MNT/a/x"
ino=$(stat -c %i "$MNT/a/x")
see "a group made again under the same name" "$ino
5" "stat -c %i $MNT/a/x; stat -c %h $MNT/a"
rmdir "$MNT/a/x"

# ---- rename
mkdir "$MNT/a/r1"
ino=$(stat -c %i "$MNT/a/r1/memory.limit_in_bytes")
see "before the rename" "$ino" "stat -c %i $MNT/a/r1/memory.limit_in_bytes"
mv "$MNT/a/r1" "$MNT/a/r2"
see "the old name is gone" "1" "stat $MNT/a/r1 2>&1 | grep -c 'No such file'"
see "the new name has the same files" "$ino" "stat -c %i $MNT/a/r2/memory.limit_in_bytes"
rmdir "$MNT/a/r2"

# ---- chmod, chown, setfacl by another user than the observers
F=$MNT/a/d/memory.soft_limit_in_bytes
L=$MNT/a/d/memory.limit_in_bytes
see "the delegated file's mode" "644 $TEST_USER" "stat -c '%a %U' $F"
expect "another user reads it" "$(as_user "$TEST_USER2" cat "$F" > /dev/null 2>&1; echo $?)" 0
as_user "$TEST_USER" chmod 600 "$F"
see "a chmod by its owner" "600 $TEST_USER" "stat -c '%a %U' $F"
expect "another user may not read it any more" "$(as_user "$TEST_USER2" "$WR" -r "$F" 2>/dev/null | tail -n1)" EACCES
chown "$U2" "$F"
see "a chown by root" "600 $TEST_USER2" "stat -c '%a %U' $F"
expect "its new owner writes it" "$(as_user "$TEST_USER2" "$WR" "$F" 1M)" OK
expect "(as the old owner)" "$(as_user "$TEST_USER" "$WR" "$F" 1M)" EACCES
see "the limit's mode" "644" "stat -c %a $L"
expect "another user may not write the limit" "$(as_user "$TEST_USER2" "$WR" "$L" 64M)" EACCES
as_user "$TEST_USER" setfacl -m "u:$TEST_USER2:rw" "$L"
see "an ACL set by the owner" "user:$TEST_USER2:rw-" "getfacl -cp $L 2>/dev/null | grep '^user:$TEST_USER2'"
see "the mode shows the ACL's mask" "664" "stat -c %a $L"
expect "the named user writes the limit" "$(as_user "$TEST_USER2" "$WR" "$L" 64M)" OK
as_user "$TEST_USER" setfacl -x "u:$TEST_USER2" "$L"
see "the ACL entry removed" "0" "getfacl -cp $L 2>/dev/null | grep -c '^user:$TEST_USER2'"
expect "the user may not write the limit any more" "$(as_user "$TEST_USER2" "$WR" "$L" 64M)" EACCES
as_user "$TEST_USER" setfacl -b "$L"
see "the ACL gone, the mode back" "644" "stat -c %a $L"

# ---- a default ACL reaches new groups (all their files by default)
as_user "$TEST_USER" setfacl -d -m "u:$TEST_USER2:rwx" "$MNT/a/d"
as_user "$TEST_USER" mkdir "$MNT/a/d/kid"
see "the new group's file inherits the default ACL" "user:$TEST_USER2:rw-" \
	"getfacl -cp $MNT/a/d/kid/memory.limit_in_bytes 2>/dev/null | grep '^user:$TEST_USER2'"
expect "the named user writes the new group's limit" \
	"$(as_user "$TEST_USER2" "$WR" "$MNT/a/d/kid/memory.limit_in_bytes" 32M)" OK
as_user "$TEST_USER" rmdir "$MNT/a/d/kid"
as_user "$TEST_USER" setfacl -k "$MNT/a/d"

# ---- the restore: a state saved earlier, then changes every observer
# sees, then a worker restart on the saved file
mkdir "$MNT/a/gone"
echo 48M > "$MNT/a/d/memory.limit_in_bytes"
cp "$ST" "$DATA/saved"
rmdir "$MNT/a/gone"
mkdir "$MNT/a/new"
chmod 600 "$MNT/a/b/memory.soft_limit_in_bytes"
setfacl -m "u:$TEST_USER2:rw" "$MNT/a/b/memory.limit_in_bytes"
exec 7< "$MNT/a/b/memory.soft_limit_in_bytes"
see "before the restore: the changes" "1 new 600" \
	"(stat $MNT/a/gone 2>&1 | grep -c 'No such file'; ls $MNT/a | grep -x new; stat -c %a $MNT/a/b/memory.soft_limit_in_bytes) | xargs"
see "before the restore: the ACL" "user:$TEST_USER2:rw-" \
	"getfacl -cp $MNT/a/b/memory.limit_in_bytes 2>/dev/null | grep '^user:$TEST_USER2'"
expect "before the restore: the open descriptor's mode" "$(stat -L -c %a /proc/$$/fd/7)" 600
w=$(worker_pid "$MNT")
kill -STOP "$FG_PID"          # the supervisor: no new worker yet
kill -KILL "$w"
wait_until 10 daemon_gone "$w" || bad "the worker did not end"
cp "$DATA/saved" "$ST"
kill -CONT "$FG_PID"
wait_until 20 sh -c "[ \"\$(timeout 5 '$MEMCGFS_BUILD/memcgctl' status -m '$MNT' 2>/dev/null | awk '\$1 == \"worker_restarts\" { print \$2 }')\" = 1 ]" ||
	bad "no new worker: $(tail -n 5 "$DATA/log")"
see "after the restore: the removed group is back" "$(stat -c %i "$MNT/a/gone")" "stat -c %i $MNT/a/gone"
see "after the restore: its files too" "0" "stat $MNT/a/gone/memory.stat 2>&1 | grep -c 'No such file'"
see "after the restore: the group made after the copy is gone" "0" "ls $MNT/a | grep -cx new"
see "after the restore: its name is gone" "1" "stat $MNT/a/new 2>&1 | grep -c 'No such file'"
see "after the restore: the mode" "644" "stat -c %a $MNT/a/b/memory.soft_limit_in_bytes"
see "after the restore: no ACL" "0" \
	"getfacl -cp $MNT/a/b/memory.limit_in_bytes 2>/dev/null | grep -c '^user:$TEST_USER2'"
expect "after the restore: the user may not write the limit" \
	"$(as_user "$TEST_USER2" "$WR" "$MNT/a/b/memory.limit_in_bytes" 64M)" EACCES
see "after the restore: a setting" "50331648" "cat $MNT/a/d/memory.limit_in_bytes"
see "after the restore: the parent's nlink" "5" "stat -c %h $MNT/a"
expect "after the restore: the open descriptor's mode" "$(stat -L -c %a /proc/$$/fd/7)" 644
exec 7<&-
expect "the new worker keeps names too" "$(daemon_status "$MNT" cache_timeout)" 86400
stat "$MNT/a/gone" > /dev/null
quiet "a warm stat after the restart" stat "$MNT/a/gone"

# ---- a removal and a rename the dead worker made whose answers never
# reached the kernel (tools/holdreply stops the worker's thread at the
# write of each answer; then the worker is killed): the kernel still has
# the old names, which were the groups' when it was told them. The new
# worker has the state file's: the removed group and the old name are
# gone, for every observer, the new name is there (INC_EPOCH from 6.16;
# before, the names recorded for the next worker: MEMCGFS_TEST_NO_EPOCH)
mkdir -p "$MNT/a/x/held" "$MNT/a/y/from"
stat "$MNT/a/x/held/memory.limit_in_bytes" "$MNT/a/y/from/memory.limit_in_bytes" > /dev/null
as_user "$TEST_USER2" stat "$MNT/a/x/held" "$MNT/a/y/from" > /dev/null
unshare -m stat "$MNT/a/x/held" "$MNT/a/y/from" > /dev/null
hold_rmdir_rename "$MNT/a" 2
expect "the held rmdir and rename failed with the worker" "$HELD" "ECONNABORTED ECONNABORTED"
if [ "$HELD" = "ECONNABORTED ECONNABORTED" ]; then
	see "a removal without its answer: the group is gone" "1" "stat $MNT/a/x/held 2>&1 | grep -c 'No such file'"
	see "... its files too" "1" "stat $MNT/a/x/held/memory.limit_in_bytes 2>&1 | grep -c 'No such file'"
	see "a rename without its answer: the old name is gone" "1" "stat $MNT/a/y/from 2>&1 | grep -c 'No such file'"
	see "... the new one is there" "$(stat -c %i "$MNT/a/y/to")" "stat -c %i $MNT/a/y/to"
	stat "$MNT/a/y/to" > /dev/null
	quiet "a warm stat of the renamed group after the restart" stat "$MNT/a/y/to"
	rmdir "$MNT/a/y/to" "$MNT/a/x" "$MNT/a/y"
fi
umount_fs

# ---- -o acl_inherit: only the named files take the default ACL
mount_fs "nostate,acl_inherit=memory.soft_limit_in_bytes" || exit 1
mkdir "$MNT/p"
as_user "$TEST_USER2" stat "$MNT/p/memory.limit_in_bytes" > /dev/null
setfacl -d -m "u:$TEST_USER2:rwx" "$MNT/p"
mkdir "$MNT/p/c"
see "acl_inherit: the named file takes the ACL" "1" \
	"getfacl -cp $MNT/p/c/memory.soft_limit_in_bytes 2>/dev/null | grep -c '^user:$TEST_USER2'"
see "acl_inherit: another file does not" "0" \
	"getfacl -cp $MNT/p/c/memory.limit_in_bytes 2>/dev/null | grep -c '^user:$TEST_USER2'"
expect "acl_inherit: the user writes the named file" \
	"$(as_user "$TEST_USER2" "$WR" "$MNT/p/c/memory.soft_limit_in_bytes" 16M)" OK
expect "acl_inherit: not the other" \
	"$(as_user "$TEST_USER2" "$WR" "$MNT/p/c/memory.limit_in_bytes" 16M)" EACCES
umount_fs

# ---- -o cache_timeout=0: every lookup asks (the bench's uncached sweep)
mount_fs "nostate,cache_timeout=0" || exit 1
mkdir "$MNT/g"
stat "$MNT/g/memory.limit_in_bytes" > /dev/null
a=$(requests); b=$(requests); c=$(requests)
stat "$MNT/g/memory.limit_in_bytes" > /dev/null
d=$(requests)
[ $((d - c)) -gt $((b - a)) ] && ok || bad "cache_timeout=0: a stat sent no request"
summary
