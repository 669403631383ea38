# t_files.sh: file sets, modes, read formats, write grammars and errno of
# the contract (§1, §2, §3, §10 items 1-7 and 11-13), as a user sees them.
. "$(dirname "$0")/lib.sh"

listing() { (cd "$1" && stat -c '%A %h %u %g %s %n' -- * | LC_ALL=C sort -k6); }

# ---- 6.18 with no extensions: exactly the kernel's file set and modes
mount_fs kernel=6.18,nowatermarks
mkdir "$MNT/c"
expect "root dir mode" "$(stat -c %A "$MNT")" "dr-xr-xr-x"
expect "root nlink" "$(stat -c %h "$MNT")" "3"
expect "root listing" "$(listing "$MNT" | grep -v ' c$')" "$(cat <<'L'
-rw-r--r-- 1 0 0 0 cgroup.clone_children
--w------- 1 0 0 0 cgroup.event_control
-rw-r--r-- 1 0 0 0 cgroup.procs
-r--r--r-- 1 0 0 0 cgroup.sane_behavior
-rw-r--r-- 1 0 0 0 memory.failcnt
--w------- 1 0 0 0 memory.force_empty
-rw-r--r-- 1 0 0 0 memory.kmem.failcnt
-rw-r--r-- 1 0 0 0 memory.kmem.limit_in_bytes
-rw-r--r-- 1 0 0 0 memory.kmem.max_usage_in_bytes
-r--r--r-- 1 0 0 0 memory.kmem.slabinfo
-rw-r--r-- 1 0 0 0 memory.kmem.tcp.failcnt
-rw-r--r-- 1 0 0 0 memory.kmem.tcp.limit_in_bytes
-rw-r--r-- 1 0 0 0 memory.kmem.tcp.max_usage_in_bytes
-r--r--r-- 1 0 0 0 memory.kmem.tcp.usage_in_bytes
-r--r--r-- 1 0 0 0 memory.kmem.usage_in_bytes
-rw-r--r-- 1 0 0 0 memory.limit_in_bytes
-rw-r--r-- 1 0 0 0 memory.max_usage_in_bytes
-rw-r--r-- 1 0 0 0 memory.memsw.failcnt
-rw-r--r-- 1 0 0 0 memory.memsw.limit_in_bytes
-rw-r--r-- 1 0 0 0 memory.memsw.max_usage_in_bytes
-r--r--r-- 1 0 0 0 memory.memsw.usage_in_bytes
-rw-r--r-- 1 0 0 0 memory.move_charge_at_immigrate
-r--r--r-- 1 0 0 0 memory.numa_stat
-rw-r--r-- 1 0 0 0 memory.oom_control
-r--r--r-- 1 0 0 0 memory.pressure_level
-rw-r--r-- 1 0 0 0 memory.soft_limit_in_bytes
-r--r--r-- 1 0 0 0 memory.stat
-rw-r--r-- 1 0 0 0 memory.swappiness
-r--r--r-- 1 0 0 0 memory.usage_in_bytes
-rw-r--r-- 1 0 0 0 memory.use_hierarchy
-rw-r--r-- 1 0 0 0 notify_on_release
-rw-r--r-- 1 0 0 0 release_agent
-rw-r--r-- 1 0 0 0 tasks
L
)"
expect "child file count" "$(ls "$MNT/c" | wc -l)" "31"
expect "child has no root-only files" "$(ls "$MNT/c" | grep -cE '^(release_agent|cgroup.sane_behavior)$')" "0"
expect "child modes match root" "$(listing "$MNT/c")" \
	"$(listing "$MNT" | grep -vE ' (c|release_agent|cgroup.sane_behavior)$')"
expect "child dir mode (umask 022)" "$(stat -c %A "$MNT/c")" "drwxr-xr-x"
umount_fs

# ---- the default profile (6.12)
mount_fs
A="$MNT/a"
mkdir "$A"
# item 1: a fresh child
for f in memory.limit_in_bytes memory.soft_limit_in_bytes memory.memsw.limit_in_bytes \
	 memory.kmem.limit_in_bytes memory.kmem.tcp.limit_in_bytes; do
	expect "fresh $f" "$(cat "$A/$f")" "$UNLIMITED"
done
for f in memory.usage_in_bytes memory.failcnt memory.max_usage_in_bytes \
	 memory.memsw.usage_in_bytes memory.kmem.usage_in_bytes memory.kmem.tcp.usage_in_bytes; do
	expect "fresh $f" "$(cat "$A/$f")" "0"
done
expect "use_hierarchy" "$(cat "$A/memory.use_hierarchy")" "1"
expect "move_charge" "$(cat "$A/memory.move_charge_at_immigrate")" "0"
expect "oom_control" "$(cat "$A/memory.oom_control")" "$(printf 'oom_kill_disable 0\nunder_oom 0\noom_kill 0')"
expect "swappiness = parent's" "$(cat "$A/memory.swappiness")" "$(cat "$MNT/memory.swappiness")"
expect "cgroup.event_control is 0222 on 6.12" "$(stat -c %a "$A/cgroup.event_control")" "222"

# item 3: byte grammar vectors on soft_limit, accepted on the root too
while read -r in want; do
	[ "$in" = "EMPTY" ] && in=$'\n'
	for d in "$MNT" "$A"; do
		r=$("$WR" "$d/memory.soft_limit_in_bytes" "$in")
		if [ "$want" = EINVAL ]; then
			expect "soft_limit '$in' in $d" "$r" "EINVAL"
		else
			expect "soft_limit '$in' accepted" "$r" "OK"
			expect "soft_limit '$in' reads back" "$(cat "$d/memory.soft_limit_in_bytes")" "$want"
		fi
	done
done <<'V'
4096 4096
4097 4096
4095 0
1 0
1k 0
4k 4096
4K 4096
0x1000 4096
010000 4096
1m 1048576
1G 1073741824
1e 1152921504606846976
8E 9223372036854771712
9223372036854775807 9223372036854771712
18446744073709551615 9223372036854771712
16E 0
-1 9223372036854771712
EMPTY 0
1.0 EINVAL
1xx EINVAL
xx EINVAL
1KB EINVAL
-2 EINVAL
+5 EINVAL
0x EINVAL
V
echo "  -1  " > "$A/memory.soft_limit_in_bytes"
expect "'  -1  '" "$(cat "$A/memory.soft_limit_in_bytes")" "$UNLIMITED"
echo > "$A/memory.soft_limit_in_bytes"
expect "empty echo means 0" "$(cat "$A/memory.soft_limit_in_bytes")" "0"
expect_wr "'4 k'" EINVAL "$A/memory.soft_limit_in_bytes" "4 k"

# item 4: the root
for f in memory.limit_in_bytes memory.memsw.limit_in_bytes memory.kmem.limit_in_bytes \
	 memory.kmem.tcp.limit_in_bytes; do
	expect_wr "root $f -1" EINVAL "$MNT/$f" "-1"
	expect_wr "root $f 0" EINVAL "$MNT/$f" "0"
done
expect_wr "root oom_control" EINVAL "$MNT/memory.oom_control" "0"
expect_wr "root force_empty" EINVAL "$MNT/memory.force_empty" "1"
for f in memory.failcnt memory.max_usage_in_bytes memory.memsw.failcnt memory.kmem.failcnt; do
	expect_wr "root reset $f" OK "$MNT/$f" "0"
done
expect_wr "root use_hierarchy 1" OK "$MNT/memory.use_hierarchy" "1"
expect_wr "root use_hierarchy 0" EINVAL "$MNT/memory.use_hierarchy" "0"
old=$(cat "$MNT/memory.swappiness")
echo 10 > "$MNT/memory.swappiness"
expect "root swappiness is the simulated sysctl" "$(cat "$MNT/memory.swappiness")" "10"
mkdir "$MNT/s"
expect "new child copies it" "$(cat "$MNT/s/memory.swappiness")" "10"
rmdir "$MNT/s"
echo "$old" > "$MNT/memory.swappiness"
expect "host sysctl untouched" "$(cat /proc/sys/vm/swappiness)" "$old"

# item 5: limit / memsw ordering
expect_wr "limit=100M" OK "$A/memory.limit_in_bytes" "100M"
expect_wr "memsw=50M" EINVAL "$A/memory.memsw.limit_in_bytes" "50M"
expect_wr "memsw=200M" OK "$A/memory.memsw.limit_in_bytes" "200M"
expect_wr "limit=300M" EINVAL "$A/memory.limit_in_bytes" "300M"
expect "failed write changed nothing" "$(cat "$A/memory.limit_in_bytes")" "104857600"
expect_wr "memsw=-1" OK "$A/memory.memsw.limit_in_bytes" "-1"
expect_wr "limit=-1" OK "$A/memory.limit_in_bytes" "-1"
echo 1 > "$A/memory.limit_in_bytes"
expect "1 rounds down to 0" "$(cat "$A/memory.limit_in_bytes")" "0"
echo -1 > "$A/memory.limit_in_bytes"
expect "hierarchical limit" "$(grep '^hierarchical_memory_limit ' "$A/memory.stat")" "hierarchical_memory_limit $UNLIMITED"
mkdir "$A/b"
echo 64M > "$A/memory.limit_in_bytes"
expect "hierarchical limit inherited" "$(grep '^hierarchical_memory_limit ' "$A/b/memory.stat")" "hierarchical_memory_limit 67108864"
expect "child limit itself unlimited" "$(cat "$A/b/memory.limit_in_bytes")" "$UNLIMITED"
rmdir "$A/b"
# (b's structures go two RCU grace periods later, as on the kernel: the
# reset below reads the usage before and after)
wait_until 5 sh -c "[ \$(cat $A/memory.kmem.usage_in_bytes) = 0 ]" || bad "b's structures stayed charged"
echo -1 > "$A/memory.limit_in_bytes"
expect_wr "kmem limit accepted and ignored" OK "$A/memory.kmem.limit_in_bytes" "10M"
expect "kmem limit reads unlimited" "$(cat "$A/memory.kmem.limit_in_bytes")" "$UNLIMITED"
expect_wr "tcp limit" OK "$A/memory.kmem.tcp.limit_in_bytes" "1M"
expect "tcp limit reads back" "$(cat "$A/memory.kmem.tcp.limit_in_bytes")" "1048576"

# item 6 and 7: resets and force_empty ignore their content
expect_wr "failcnt xyz" OK "$A/memory.failcnt" "xyz"
expect_wr "max_usage xyz" OK "$A/memory.max_usage_in_bytes" "xyz"
expect "max_usage reads usage after reset" "$(cat "$A/memory.max_usage_in_bytes")" "$(cat "$A/memory.usage_in_bytes")"
expect_wr "force_empty xyz" OK "$A/memory.force_empty" "xyz"

# other G-U64 files
expect_wr "swappiness 201" EINVAL "$A/memory.swappiness" "201"
expect_wr "swappiness ' 1'" EINVAL "$A/memory.swappiness" " 1"
expect_wr "swappiness 1\\n\\n" EINVAL "$A/memory.swappiness" $'1\n\n'
expect_wr "swappiness 010 (octal)" OK "$A/memory.swappiness" "010"
expect "octal read back" "$(cat "$A/memory.swappiness")" "8"
expect_wr "swappiness huge" ERANGE "$A/memory.swappiness" "99999999999999999999"
expect_wr "oom_control 2" EINVAL "$A/memory.oom_control" "2"
echo 1 > "$A/memory.oom_control"
expect "oom_kill_disable set" "$(head -n1 "$A/memory.oom_control")" "oom_kill_disable 1"
mkdir "$A/o"
expect "oom_kill_disable inherited" "$(head -n1 "$A/o/memory.oom_control")" "oom_kill_disable 1"
rmdir "$A/o"
expect_wr "move_charge 3" OK "$A/memory.move_charge_at_immigrate" "3"
expect_wr "move_charge 4" EINVAL "$A/memory.move_charge_at_immigrate" "4"
expect "move_charge read" "$(cat "$A/memory.move_charge_at_immigrate")" "3"
expect_wr "notify_on_release 5" OK "$A/notify_on_release" "5"
expect "notify reads 1" "$(cat "$A/notify_on_release")" "1"
expect_wr "clone_children" OK "$A/cgroup.clone_children" "1"

# item 11: mkdir
expect "mkdir tasks" "$(mkdir "$A/tasks" 2>&1 | grep -c 'File exists')" "1"
mkdir "$A/x"
expect "mkdir existing" "$(mkdir "$A/x" 2>&1 | grep -c 'File exists')" "1"
expect "mkdir newline" "$(mkdir "$A/$(printf 'n\nl')" 2>&1 | grep -c 'Invalid argument')" "1"
mkdir "$A/with space" && ok || bad "mkdir with space"
expect "nlink counts children" "$(stat -c %h "$A")" "4"
# rename
mv "$A/x" "$A/y" && ok || bad "rename"
expect "renamed" "$(ls -d "$A/y" 2>/dev/null)" "$A/y"
expect "rename to other parent" "$(mv "$A/y" "$MNT/y" 2>&1 | grep -c 'Input/output error')" "1"
expect "rename a control file" "$(mv "$A/tasks" "$A/t2" 2>&1 | grep -c 'Not a directory')" "1"
rmdir "$A/y" "$A/with space"
# nlink is 2 and one per child group whatever the names (issue 25's
# differential run read 26 here where the kernel read 25 after odd
# mkdirs): long ones, control-file names (refused), root-only file names
# (groups here, as on the kernel), dots, controls, a newline (refused)
mkdir "$A/n"
( cd "$A/n" && for name in "$(printf 'a%.0s' $(seq 255))" "$(printf 'b%.0s' $(seq 2048))" \
	"$(printf 'g%.0s' $(seq 4000))" tasks memory.stat cgroup.procs notify_on_release release_agent \
	cgroup.sane_behavior memory.foo .hidden ... ..x "$(printf 'tab\tx')" "$(printf '\001c')" '%s%n' \
	'*' 'x:y' "$(printf 'n\nl')" memory; do mkdir -- "$name" 2> /dev/null; done )
dirs=$(cd "$A/n" && find . -mindepth 1 -maxdepth 1 -type d | wc -l)
expect "odd names: the groups made" "$dirs" 15
expect "odd names: nlink is 2 and one per group" "$(stat -c %h "$A/n")" $((2 + dirs))
( cd "$A/n" && find . -mindepth 1 -maxdepth 1 -type d -exec rmdir {} + )
expect "odd names: removed, nlink 2" "$(stat -c %h "$A/n")" 2
rmdir "$A/n"

# other VFS operations
expect "create" "$(: 2>&1 > "$A/newfile" | grep -c 'Permission denied')" "1"
expect "unlink" "$(rm -f "$A/tasks" 2>&1 | grep -c 'Operation not permitted')" "1"
expect "symlink" "$(ln -s x "$A/l" 2>&1 | grep -c 'Operation not permitted')" "1"

# item 12: reads
expect_read_err "event_control read" EINVAL "$A/cgroup.event_control"
expect_read_err "force_empty read" EINVAL "$A/memory.force_empty"
expect_read_err "pressure_level read" EINVAL "$A/memory.pressure_level"
expect "slabinfo empty" "$(wc -c < "$A/memory.kmem.slabinfo")" "0"
expect "sane_behavior" "$(cat "$MNT/cgroup.sane_behavior")" "0"
expect "release_agent empty" "$(od -An -c "$MNT/release_agent" | tr -d ' ')" '\n'
expect_wr "write to a 0444 file as root" EINVAL "$A/memory.usage_in_bytes" "1"
expect_wr "write to sane_behavior" EINVAL "$MNT/cgroup.sane_behavior" "1"
# item 13: E2BIG and 0-byte writes
expect "E2BIG" "$("$WR" -n 4097 "$A/memory.soft_limit_in_bytes")" "E2BIG"
expect "4096 bytes accepted" "$("$WR" -n 4096 "$A/memory.soft_limit_in_bytes")" "OK"
expect "release_agent 4096 bytes" "$("$WR" -n 4096 "$MNT/release_agent")" "E2BIG"
expect_wr "0-byte write" OK "$A/memory.limit_in_bytes" ""

# stat and numa_stat formats
expect "memory.stat lines (42 kernel + 6 extension)" "$(wc -l < "$A/memory.stat")" "48"
expect "memory.stat key order" "$(cut -d' ' -f1 "$A/memory.stat" | head -n 22 | tr '\n' ' ')" \
	"cache rss rss_huge shmem mapped_file dirty writeback workingset_refault_anon workingset_refault_file swap swapcached pgpgin pgpgout pgfault pgmajfault inactive_anon active_anon inactive_file active_file unevictable hierarchical_memory_limit hierarchical_memsw_limit "
expect "numa_stat lines" "$(cut -d= -f1 "$A/memory.numa_stat" | tr '\n' ' ')" \
	"total file anon unevictable hierarchical_total hierarchical_file hierarchical_anon hierarchical_unevictable "
expect "numa_stat one node" "$(head -n1 "$A/memory.numa_stat")" "total=0 N0=0"

# a monitor keeping the file open sees fresh values at offset 0
exec 5< "$A/memory.limit_in_bytes"
first=$(head -c 100 <&5)
echo 8M > "$A/memory.limit_in_bytes"
second=$(perl -e 'sysseek(STDIN,0,0); sysread(STDIN,$b,100); print $b' <&5)
exec 5<&-
expect "pread at 0 is fresh" "$first/$second" "$UNLIMITED/8388608"
umount_fs

# ---- machine options
mount_fs nodes=3,memory=1G,cpus=8
mkdir "$MNT/n"
expect "three nodes" "$(head -n1 "$MNT/n/memory.numa_stat")" "total=0 N0=0 N1=0 N2=0"
umount_fs
# §11.7 poll and §11.8 reads, as the 6.18 kernel answers
mount_fs kernel=6.18
mkdir "$MNT/r"
got=$(/usr/bin/python3 - "$MNT" <<'PY'
import os, sys, select
m = sys.argv[1] + "/r/"
def pol(fd):
    p = select.poll()
    p.register(fd, select.POLLIN | select.POLLOUT | select.POLLPRI)
    return str(p.poll(0)[0][1])
out = []
fd = os.open(m + "memory.limit_in_bytes", os.O_RDONLY)
out.append(pol(fd))                      # fresh: 15
out.append(os.read(fd, 3).decode())      # "922"
out.append(pol(fd))                      # after a read: 5
t = os.open(m + "tasks", os.O_RDONLY)
os.read(t, 100)
out.append(pol(t))                       # empty tasks: 15 after reads too
for name, mode in (("cgroup.event_control", os.O_WRONLY), ("memory.force_empty", os.O_WRONLY),
                   ("memory.pressure_level", os.O_RDONLY)):
    out.append(pol(os.open(m + name, mode)))   # never readable: 5 from the open on
w = os.open(m + "memory.limit_in_bytes", os.O_WRONLY)
os.write(w, b"4096")
out.append(repr(os.pread(fd, 100, 5)))   # another offset: the new text's tail
out.append(repr(os.pread(fd, 100, 2)))   # "96\n" of "4096\n"
f2 = os.open(m + "memory.limit_in_bytes", os.O_RDONLY)
out.append(os.read(f2, 3).decode())      # "409"
os.write(w, b"8192")
out.append(repr(os.read(f2, 100)))       # where it ended: the old text goes on
s = os.open(m + "memory.stat", os.O_RDONLY)
first = os.read(s, 40)
os.close(w)
os.rmdir(sys.argv[1] + "/r")
rest = os.read(s, 1 << 20)               # generated before the rmdir: readable
out.append("rest" if rest and (first + rest).endswith(b"\n") else "no rest")
try:
    os.read(s, 100)                      # new text needed: ENODEV
    out.append("read")
except OSError as e:
    out.append(os.strerror(e.errno))
print(" ".join(out))
PY
)
# §11.6: names longer than 255 bytes, for mkdir and rename
n2k=$(head -c 2048 /dev/zero | tr '\0' a)
n3k=$(head -c 3000 /dev/zero | tr '\0' b)
expect "mkdir with a 2,048-byte name" "$(timeout 5 perl -e "$DIROP" mkdir "$MNT/$n2k")" OK
mv "$MNT/$n2k" "$MNT/$n3k" && ok || bad "rename to a 3,000-byte name"
expect "listed with its whole name" "$(ls "$MNT" | awk 'length($0) == 3000' | wc -l)" 1
expect "a child under it" "$(timeout 5 perl -e "$DIROP" mkdir "$MNT/$n3k/c")" OK
expect "its files" "$(cat "$MNT/$n3k/c/memory.limit_in_bytes")" "$UNLIMITED"
rmdir "$MNT/$n3k/c" "$MNT/$n3k" && ok || bad "rmdir of the long names"
expect "poll 15 fresh, 5 after a read, 15 on empty tasks, 5 on files never read; pread regenerates; reads continue, after rmdir too" \
	"$got" "15 922 5 15 5 5 5 b'' b'96\\n' 409 b'6\\n' rest No such device"
umount_fs

# Times as kernfs keeps them: a node's times are its creation; a directory's
# mtime and ctime move when a child group comes or goes; chmod, chown and
# utimensat move ctime; reads and writes of control files move nothing.
t0=$(date +%s.%N)
mount_fs || exit 1
tm() { stat -c "%.9${2:-Y}" "$1"; }            # X atime, Y mtime, Z ctime
ge() { awk -v a="$2" -v b="$3" 'BEGIN { exit !(a >= b) }' && ok || bad "$1: $2 < $3"; }
root_t=$(tm "$MNT")
ge "root born at mount" "$root_t" "$t0"
expect "root: atime = mtime = ctime" "$(tm "$MNT" X) $(tm "$MNT" Z)" "$root_t $root_t"
expect "root files born with it" "$(tm "$MNT/memory.stat")" "$root_t"
mkdir "$MNT/t"
born=$(tm "$MNT/t")
ge "child born after the root" "$born" "$root_t"
ge "parent's mtime moved by mkdir" "$(tm "$MNT")" "$born"
expect "parent's ctime with it" "$(tm "$MNT" Z)" "$(tm "$MNT")"
expect "parent's atime stays" "$(tm "$MNT" X)" "$root_t"
expect "child's files born with it" "$(tm "$MNT/t/memory.limit_in_bytes") $(tm "$MNT/t/tasks" Z)" "$born $born"
echo 64M > "$MNT/t/memory.limit_in_bytes"
cat "$MNT/t/memory.limit_in_bytes" > /dev/null
expect "a write and a read move no time" \
	"$(tm "$MNT/t/memory.limit_in_bytes" X) $(tm "$MNT/t/memory.limit_in_bytes") $(tm "$MNT/t/memory.limit_in_bytes" Z)" \
	"$born $born $born"
chmod 600 "$MNT/t/memory.soft_limit_in_bytes"
c=$(tm "$MNT/t/memory.soft_limit_in_bytes" Z)
ge "chmod moves ctime" "$c" "$born"
[ "$c" != "$born" ] && ok || bad "chmod left ctime at birth"
expect "chmod leaves mtime" "$(tm "$MNT/t/memory.soft_limit_in_bytes")" "$born"
expect "chmod of a file leaves its directory" "$(tm "$MNT/t" Z)" "$born"
expect "other files keep their times" "$(tm "$MNT/t/memory.swappiness" Z)" "$born"
touch -d '2020-01-02 03:04:05.5' "$MNT/t/memory.swappiness"
expect "utimensat sets atime and mtime" "$(tm "$MNT/t/memory.swappiness" X) $(tm "$MNT/t/memory.swappiness")" \
	"$(date -d '2020-01-02 03:04:05.5' +%s.%N) $(date -d '2020-01-02 03:04:05.5' +%s.%N)"
ge "utimensat moves ctime" "$(tm "$MNT/t/memory.swappiness" Z)" "$born"
chown 1:1 "$MNT/t"
ge "chown of a directory moves its ctime" "$(tm "$MNT/t" Z)" "$born"
expect "and not its mtime" "$(tm "$MNT/t")" "$born"
before=$(tm "$MNT")
rmdir "$MNT/t"
ge "rmdir moves the parent's mtime" "$(tm "$MNT")" "$before"
[ "$(tm "$MNT")" != "$before" ] && ok || bad "rmdir left the parent's mtime"
umount_fs

d=$(mktemp -d)
expect "bad kernel= refused" "$("$MEMCGFS" -o kernel=2.6 "$d" 2>&1 | grep -c unsupported)" "1"
rmdir "$d"
summary
