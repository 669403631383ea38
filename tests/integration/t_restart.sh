# t_restart.sh: the state file (-o state=PATH, docs/reliability.md). A tree
# of 100 groups with varied settings, delegated owners, modes and ACLs, and
# live members, reads back identically after SIGTERM and after kill -9; a
# PID whose start time no longer matches is not re-attached; the journal
# loses no change to kill -9, ignores a torn last frame, refuses a damaged
# one before it, and survives compaction; truncated, corrupted and newer
# files are refused naming the file and the byte;
# -o fresh starts empty; two daemons never share one state file.
. "$(dirname "$0")/lib.sh"
ensure_users

DATA=$(mktemp -d /tmp/memcgfs-restart.XXXXXX)
chmod 755 "$DATA"
ST=$DATA/state
LOG=$DATA/log
MP=$DATA/mnt
U1=$(id -u "$TEST_USER")
U2=$(id -u "$TEST_USER2")
SLEEPS=()
PROFILE=kernel=5.10

FORKER=
cleanup() {
	# the forker ends its child itself (its TERM trap)
	[ -n "$FORKER" ] && kill_child TERM "$FORKER" && wait "$FORKER" 2>/dev/null
	kill_child KILL "${SLEEPS[@]}"
	lib_exit
	rm -rf "$DATA"
}
trap cleanup EXIT

# start [OPTS]: the daemon in the foreground on $MP with state file $ST
start() {
	mkdir -p "$MP"
	MNT=$MP
	"$MEMCGFS" -f -o "$PROFILE,state=$ST${1:+,$1}" "$MP" 2> "$LOG" < /dev/null &
	FG_PID=$!
	wait_until 20 mountpoint -q "$MP" || { bad "not mounted: $(tail -n 5 "$LOG")"; return 1; }
}

# refused STATEFILE: a daemon on it must exit non-zero and leave no mount;
# the worker's message (stderr) is left in $OUT. (The worker reads the
# state file: the supervisor then says the mount never became ready.)
refused() {
	local m=$DATA/mnt2 rc all
	mkdir -p "$m"
	all=$(timeout 20 "$MEMCGFS" -f -o "$PROFILE,state=$1" "$m" 2>&1 < /dev/null)
	rc=$?
	OUT=$(echo "$all" | grep -vx "memcgfs: the worker failed before the mount was ready; unmounting")
	expect "the supervisor ends the mount ($1)" "$(echo "$all" | tail -n1)" \
		"memcgfs: the worker failed before the mount was ready; unmounting"
	if mountpoint -q "$m"; then
		bad "a daemon on $1 mounted"
		fusermount3 -u "$m"
	fi
	rmdir "$m"
	return $(( rc == 0 ))
}

# Every setting of every node, its mode, owner, inode number and ACLs
# (the root's tasks are the machine's, not the hierarchy's).
dump() {
	python3 - "$MP" <<'PY'
import os, re, sys
kept = re.compile(r'^(memory\.(limit_in_bytes|soft_limit_in_bytes|swappiness|oom_control|'
                  r'move_charge_at_immigrate|use_hierarchy|(memsw|kmem|kmem\.tcp)\.limit_in_bytes|'
                  r'(high|low)_watermark_in_bytes)|notify_on_release|cgroup\.clone_children|'
                  r'release_agent|tasks|cgroup\.procs)$')
top = sys.argv[1]
def acl(p, name):
    try:
        return os.getxattr(p, name).hex()
    except OSError:
        return '-'
def walk(d):
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        st = os.stat(p)
        rel = os.path.relpath(p, top)
        print(rel, oct(st.st_mode), st.st_uid, st.st_gid, st.st_ino,
              acl(p, 'system.posix_acl_access'), acl(p, 'system.posix_acl_default'))
        if os.path.isdir(p):
            walk(p)
        elif kept.match(name) and rel not in ('tasks', 'cgroup.procs'):
            print('   =', open(p).read().replace('\n', ' '))
st = os.stat(top)
print('.', oct(st.st_mode), st.st_uid, st.st_gid, st.st_ino)
walk(top)
PY
}

# fix_crc FILE: recompute the end record after a deliberate edit
fix_crc() {
	python3 - "$1" <<'PY'
import sys, zlib
p = sys.argv[1]
data = open(p, 'rb').read()
body = data[:data.rindex(b'\nend ') + 1]
open(p, 'wb').write(body + b'end %d %08x\n' % (body.count(b'\n'), zlib.crc32(body)))
PY
}

# survives_kill DESC: the tree now, then kill -9 of the daemon and a new
# one on the same state file, mounted after: the same tree (DESC the
# assertion)
survives_kill() {
	dump > "$DATA/before"
	kill -KILL "$FG_PID"
	wait "$FG_PID" 2>/dev/null
	fusermount3 -u "$MP"
	start
	dump > "$DATA/after"
	expect "$1" "$(diff "$DATA/before" "$DATA/after" | head -n 20)" ""
}

# ---- a tree of 100 groups: 10 parents of 9 children each
start || { summary; exit 1; }
echo /bin/true > "$MP/release_agent"
echo 1 > "$MP/notify_on_release"
echo 30 > "$MP/memory.swappiness"
chmod 0644 "$MP/release_agent"
M=1048576
n=0
# w VALUE FILE: one settings write, which must succeed (a tree whose
# writes failed would read back "identically" too)
writes=0
w() { if echo "$1" 2>/dev/null > "$2"; then writes=$((writes + 1)); else bad "write of $1 to $2 failed"; fi; }
setting() {      # setting N GROUP: the settings of group number N
	local g=$MP/$2
	if (( $1 % 3 == 0 )); then
		w $(( ($1 + 4) * M )) "$g/memory.limit_in_bytes"
		(( $1 % 6 == 0 )) && w $(( ($1 + 4) * 2 * M )) "$g/memory.memsw.limit_in_bytes"
		(( $1 % 2 == 0 )) && w $(( ($1 + 4) * 3 * M / 4 )) "$g/memory.high_watermark_in_bytes"
		(( $1 % 4 == 0 )) && w $(( ($1 + 4) * M / 2 )) "$g/memory.low_watermark_in_bytes"
	fi
	(( $1 % 4 == 1 )) && w $(( $1 * 512 * 1024 )) "$g/memory.soft_limit_in_bytes"
	(( $1 % 5 == 2 )) && w $(( $1 % 101 )) "$g/memory.swappiness"
	(( $1 % 7 == 3 )) && w 1 "$g/memory.oom_control"
	(( $1 % 8 == 4 )) && w 3 "$g/memory.move_charge_at_immigrate"
	(( $1 % 9 == 5 )) && w 1 "$g/notify_on_release"
	(( $1 % 10 == 6 )) && w 1 "$g/cgroup.clone_children"
	(( $1 % 11 == 7 )) && w $(( 64 * M )) "$g/memory.kmem.limit_in_bytes"
	(( $1 % 12 == 8 )) && w $(( 32 * M )) "$g/memory.kmem.tcp.limit_in_bytes"
	return 0
}
for i in $(seq 0 9); do
	mkdir "$MP/g$i"
	(( i % 2 == 0 )) && echo 1 > "$MP/g$i/memory.use_hierarchy"
	case $i in
	1) setfacl -m "u:$U2:rw" "$MP/g1/memory.high_watermark_in_bytes" ;;
	2) setfacl -d -m "u:$U1:rwx,g::r-x,o::---" "$MP/g2" ;;   # inherited below
	3) chown "$U1:$U1" "$MP/g3" "$MP/g3/tasks" "$MP/g3/cgroup.procs" ;;   # delegated
	4) chmod 0750 "$MP/g4"; chmod 0664 "$MP/g4/memory.limit_in_bytes" ;;
	esac
	setting $n "g$i"; n=$((n + 1))
	for j in $(seq 0 8); do
		mkdir "$MP/g$i/c$j"
		setting $n "g$i/c$j"; n=$((n + 1))
	done
done
as_user "$TEST_USER" mkdir "$MP/g3/mine"         # the delegate's own group
setfacl -m "u:$U1:rw,g:$U2:r" "$MP/g5/c1/memory.low_watermark_in_bytes"
setfacl -d -m "u:$U2:rx" "$MP/g5/c2"
setfacl -m "u:$U2:rwx" "$MP/g5/c2"
mv "$MP/g9/c8" "$MP/g9/renamed"
rmdir "$MP/g9/c7"
expect "100 groups" "$(find "$MP" -mindepth 1 -type d | wc -l)" 100
[ "$writes" -ge 100 ] && ok || bad "only $writes settings written"
# and a few read back as written before any restart
expect "g0's limit as written" "$(cat "$MP/g0/memory.limit_in_bytes")" $((4 * M))
expect "g0/c1's swappiness as written" "$(cat "$MP/g0/c1/memory.swappiness")" 2
sleep 1000 & SLEEPS+=($!); LIVE=$!
sleep 1000 & SLEEPS+=($!); REUSED=$!
echo "$LIVE" > "$MP/g0/c1/tasks"
echo "$REUSED" > "$MP/g3/c2/cgroup.procs"
dump > "$DATA/before"
expect "the dump covers every node" "$(grep -c '^[^ ]* 0o100' "$DATA/before")" \
	$(( $(ls "$MP" | wc -l) - 10 + 100 * $(ls "$MP/g0/c0" | wc -l) ))

# ---- SIGTERM: a clean end writes the final state; all of it comes back
kill -TERM "$FG_PID"
wait "$FG_PID"
expect "SIGTERM: exit status 0" "$?" 0
fusermount3 -u "$MP" 2>/dev/null
start
dump > "$DATA/after"
expect "after SIGTERM: every setting, mode, owner, inode and ACL" \
	"$(diff "$DATA/before" "$DATA/after" | head -n 20)" ""
expect "the live task is back in its group" "$(cat "$MP/g0/c1/tasks")" "$LIVE"
expect "the daemon says so" "$(grep -c "state file $ST: 2 tasks back in their groups, 0 gone" "$LOG")" 1

# ---- kill -9: a change acknowledged before it is on disk already
echo $(( 77 * M )) > "$MP/g7/c3/memory.limit_in_bytes"
chmod 0600 "$MP/g7/c3/memory.swappiness"
mkdir "$MP/g7/new"
# a fork in a group: no reply waits for it, the state's saver writes it
bash -c 'trap "kill \$c; exit" TERM; echo $$ > "$1/tasks"; sleep 1000 & c=$!; echo $c > "$2"; wait' \
	_ "$MP/g7/new" "$DATA/forked" &
FORKER=$!
wait_until 10 test -s "$DATA/forked"
CHILD=$(cat "$DATA/forked")
wait_until 10 grep -qx "$CHILD" "$MP/g7/new/tasks" && ok || bad "the forked child joined its parent's group"
wait_until 10 grep -q "^task $CHILD " "$ST" && ok || bad "the saver did not write the fork"
survives_kill "after kill -9: every setting, including the last changes"
expect "the forked child is back in its group, with its parent" \
	"$(sort -n "$MP/g7/new/tasks" | tr '\n' ' ')" "$(printf '%s\n' "$FORKER" "$CHILD" | sort -n | tr '\n' ' ')"

# ---- kill -9 of the worker alone: the mount stays, and the supervisor's
# next worker reads the state back before it serves anything
CRASH_TEST=1                    # (umount_fs: this worker restart is expected)
echo $(( 55 * M )) > "$MP/g5/c1/memory.soft_limit_in_bytes"
dump > "$DATA/before"
W=$(worker_pid "$MP")
kill -KILL "$W"
restarted() { [ "$(daemon_status "$MP" worker_restarts)" = 1 ]; }
wait_until 20 restarted && ok || bad "no new worker"
expect "the mount stayed" "$(mountpoint -q "$MP" && echo yes)" yes
dump > "$DATA/after"
expect "after kill -9 of the worker: every setting, mode, owner, inode and ACL" \
	"$(diff "$DATA/before" "$DATA/after" | head -n 20)" ""
expect "its live task is back" "$(cat "$MP/g0/c1/tasks")" "$LIVE"
expect "status names the state file" "$(daemon_status "$MP" state_file)" "$ST"
expect "the new worker says where it came from" \
	"$(grep -c "serves $MP again (restart 1), from the state file" "$LOG")" 1

# ---- a second daemon on the same state file refuses, naming it (and
# the worker that holds it)
refused "$ST" && ok || bad "a second daemon on $ST started"
expect "the second daemon's message" "$OUT" \
	"memcgfs: state file $ST is in use by another memcgfs (pid $(worker_pid "$MP")) (locked through $ST.lock)"
umount_fs

# ---- a PID that names another process now (its start time differs)
cp "$ST" "$DATA/good"
awk -v p="$REUSED" '$1 == "task" && $2 == p { $3 = $3 + 1 } { print }' "$DATA/good" > "$ST"
fix_crc "$ST"
start
expect "a reused PID is not re-attached" "$(cat "$MP/g3/c2/tasks")" ""
expect "it is in the root" "$(grep -cx "$REUSED" "$MP/tasks")" 1
expect "the other one is back" "$(cat "$MP/g0/c1/tasks")" "$LIVE"
expect "the daemon counts it gone" "$(grep -c '3 tasks back in their groups, 1 gone' "$LOG")" 1
umount_fs
expect "the next state no longer records it" "$(grep -c "^task $REUSED " "$ST")" 0

# ---- the journal: a change appends one frame with its group's records
# only (docs/reliability.md, Writes); load replays the frames in order
journal() { sed -n '/^end /,$p' "$1" | tail -n +2; }
start
echo $(( 33 * M )) > "$MP/g1/c1/memory.soft_limit_in_bytes"
expect "a limit write appends one frame" "$(journal "$ST" | grep -c '^commit ')" 1
expect "with its group's records only" "$(journal "$ST" | grep '^group ' | cut -d' ' -f2)" /g1/c1
# many changes of every kind, then kill -9 of the whole daemon: none lost
for i in $(seq 0 39); do
	g=g$(( i % 10 ))/c$(( i % 9 ))
	echo $(( (i + 8) * M )) > "$MP/$g/memory.soft_limit_in_bytes"
	echo $(( i % 101 )) > "$MP/$g/memory.swappiness"
	mkdir "$MP/g6/j$i"
	(( i % 3 == 0 )) && echo $(( (i + 4) * M )) > "$MP/g6/j$i/memory.limit_in_bytes"
	(( i % 4 == 1 )) && chmod 0700 "$MP/g6/j$i"
	(( i % 5 == 2 )) && setfacl -m "u:$U2:r" "$MP/g6/j$i/memory.stat"
	if (( i % 6 == 3 )); then
		mv "$MP/g6/j$i" "$MP/g6/k$i"
	elif (( i % 7 == 4 )); then
		rmdir "$MP/g6/j$i"
	fi
done
rmdir "$MP/g6/j0" && mkdir "$MP/g6/j0"          # the same name, a new group
mv "$MP/g9" "$MP/g9b"                           # a parent renamed
echo "$LIVE" > "$MP/g9b/c0/tasks"               # a task moved between groups
dump > "$DATA/before-last"
echo 17 > "$MP/g8/memory.swappiness"            # the last change
dump > "$DATA/before"
kill -KILL "$FG_PID"
wait "$FG_PID" 2>/dev/null
fusermount3 -u "$MP"
cp "$ST" "$DATA/journaled"
expect "the changes went to the journal" "$(( $(journal "$ST" | grep -c '^commit ') > 100 ))" 1
start
dump > "$DATA/after"
expect "after kill -9 right after many changes: every one of them" \
	"$(diff "$DATA/before" "$DATA/after" | head -n 20)" ""
expect "the moved task is in its new group only" "$(cat "$MP/g9b/c0/tasks"; cat "$MP/g0/c1/tasks")" "$LIVE"
umount_fs
expect "a clean end compacts the journal into the snapshot" "$(journal "$ST" | wc -c)" 0

# a torn last frame (an append a crash cut short: never acknowledged) is
# ignored, and only it; a damaged frame that another follows is refused
head -c $(( $(stat -c %s "$DATA/journaled") - 12 )) "$DATA/journaled" > "$ST"
start
dump > "$DATA/after"
expect "a torn last frame: ignored, the changes before it kept" \
	"$(diff "$DATA/before-last" "$DATA/after" | head -n 20)" ""
umount_fs
python3 - "$DATA/journaled" "$DATA/damaged" > "$DATA/damage" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
start = data.index(b'\nend ') + 1
start = data.index(b'\n', start) + 1                 # the first frame
at = data.index(b'\nset memory.soft_limit_in_bytes ', start) + 32
assert data.index(b'\ncommit ', start) > at
data[at] = ord('9') if data[at] != ord('9') else ord('8')
commit = data.index(b'\ncommit ', start) + 1
open(sys.argv[2], 'wb').write(data)
print(data[:start].count(b'\n') + 1, start, commit - start, commit)
PY
read -r fl fb fn fc < "$DATA/damage"
refused "$DATA/damaged" && ok || bad "a damaged journal frame was accepted"
expect "a damaged frame before the last: refused, named" "$OUT" \
	"memcgfs: $DATA/damaged: line $fl, byte $fb: checksum mismatch: the journal frame of the $fn bytes up to its commit record at byte $fc was changed or damaged"

# compaction (forced with a small bound) keeps everything, and a kill -9
# right after one loses nothing
cp "$DATA/journaled" "$ST"
MEMCGFS_STATE_COMPACT_BYTES=3000 start
for i in $(seq 0 29); do
	echo $(( (i + 20) * M )) > "$MP/g$(( i % 9 ))/memory.soft_limit_in_bytes"
	mkdir "$MP/g5/m$i"
done
chown "$U1" "$MP/g5/m3/tasks"
# (the saver compacts in the background, soon after the bound is passed)
short() { (( $(journal "$ST" | wc -c) <= 3000 + 4000 )); }
wait_until 10 short && ok || bad "compactions did not keep the journal short: $(journal "$ST" | wc -c) bytes"
survives_kill "after compactions and kill -9: everything"
umount_fs

# the same at the real bound (max(1 MiB, twice the snapshot): 1 MiB for
# this tree): 2,500 limit writes of one open file append about 1.4 MB of
# frames: 1,500 leave the journal under the bound, 1,000 more take it past
# it once, so it was compacted and is shorter; a kill -9 then loses nothing
start
limits() {       # limits N: N limit writes of g1, alternating two values
	python3 - "$MP/g1/memory.limit_in_bytes" "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(int(sys.argv[2])):
    os.write(fd, b"%d\n" % ((100 + (i & 1)) << 20))
os.close(fd)
PY
}
limits 1500
jb1=$(journal "$ST" | wc -c)
(( jb1 > 700000 && jb1 < 1048576 )) && ok || bad "1,500 writes journaled $jb1 bytes"
limits 1000
expect "the writes' last value" "$(cat "$MP/g1/memory.limit_in_bytes")" $((101 * M))
shorter() { (( $(journal "$ST" | wc -c) < jb1 )); }
wait_until 10 shorter && ok ||
	bad "no compaction at the real bound: $jb1 then $(journal "$ST" | wc -c) bytes of journal"
survives_kill "after a compaction at the real bound and kill -9: everything"
umount_fs

# ---- a kill -9 of the worker in the middle of a compaction loses no
# acknowledged write, and a write never waits for one: 2,000 groups (a
# snapshot of about a megabyte, rendered, written and synced in the
# background), a bound of 4 KiB (a compaction every few writes), and a
# writer that keeps what each acknowledged write set. The worker is killed
# until a kill finds the compaction's temporary file, the mark of one in
# flight (it is renamed or removed at its end), at most 8 times: each
# kill comes as soon as that file appears.
rm -f "$ST"
MEMCGFS_STATE_COMPACT_BYTES=4096 start
for i in $(seq 0 39); do mkdir "$MP/p$i"; for j in $(seq 0 49); do mkdir "$MP/p$i/c$j"; done; done
writer() {      # writer ROUND: writes limits until one fails; prints "group value ack|maybe"
	python3 - "$MP" "$1" <<'PY'
import os, sys
mp, rnd = sys.argv[1], int(sys.argv[2])
fds = [os.open("%s/p%d/c0/memory.limit_in_bytes" % (mp, k), os.O_WRONLY) for k in range(40)]
last = {}
i = 0
while True:
    k, v = i % 40, ((rnd * 100000 + i) % 4000 + 64) << 20
    try:
        os.write(fds[k], b"%d\n" % v)
    except OSError:
        for g, w in last.items():
            print(g, w, "ack")
        print(k, v, "maybe")
        break
    last[k] = v
    i += 1
PY
}
mid=0
for try in 1 2 3 4 5 6 7 8; do
	restarts=$(daemon_status "$MP" worker_restarts)
	writer "$try" > "$DATA/writes" &
	wpid=$!
	# (the kill as soon as a compaction's file appears, or after 2 s)
	python3 - "$ST.compact.tmp" "$(daemon_status "$MP" worker_pid)" <<'PY'
import os, signal, sys, time
end = time.time() + 2
while not os.path.exists(sys.argv[1]) and time.time() < end:
    pass
os.kill(int(sys.argv[2]), signal.SIGKILL)
PY
	inc=no
	[ -e "$ST.compact.tmp" ] && inc=yes && mid=$((mid + 1))
	wait "$wpid"
	newer() { [ "$(daemon_status "$MP" worker_restarts)" = $((restarts + 1)) ]; }
	wait_until 20 newer || { bad "no new worker after kill $try"; break; }
	# each group holds its last acknowledged value; the group of the write
	# in flight at the kill may hold that one's instead
	lost=$(python3 - "$MP" "$DATA/writes" <<'PY'
import sys
mp, want, maybe = sys.argv[1], {}, None
for line in open(sys.argv[2]):
    k, v, how = line.split()
    if how == "ack":
        want[k] = v
    else:
        maybe = (k, v)
for k in sorted(set(want) | {maybe[0]}):
    got = open("%s/p%s/c0/memory.limit_in_bytes" % (mp, k)).read().strip()
    ok = {want.get(k)} | ({maybe[1]} if maybe[0] == k else set())
    if got not in ok and not (k not in want and k == maybe[0]):
        print("p%s: %s, want %s" % (k, got, " or ".join(sorted(x for x in ok if x))))
PY
)
	expect "kill -9 $try (in a compaction: $inc): every acknowledged write kept" "$lost" ""
	(( mid > 0 )) && break
done
(( mid > 0 )) && ok || bad "no kill landed in a compaction in 8 tries"
echo "t_restart: $try kill(s) of the worker to land one in a compaction"
expect "the tree after the kills" "$(ls -d "$MP"/p*/c[0-9]* | wc -l)" 2000
umount_fs

# ---- damaged files: the error names the file, the line and the byte
size=$(stat -c %s "$DATA/good")
cut=$(( size / 2 ))
[ "$(head -c "$cut" "$DATA/good" | tail -c 1 | od -An -c | tr -d ' ')" = '\n' ] && cut=$((cut + 1))
head -c "$cut" "$DATA/good" > "$DATA/truncated"
line=$(( $(tr -cd '\n' < "$DATA/truncated" | wc -c) + 1 ))
refused "$DATA/truncated" && ok || bad "a truncated state file was accepted"
expect "truncated mid-record" "$OUT" \
	"memcgfs: $DATA/truncated: line $line, byte $cut: truncated: the file ends inside a record"
head -n -1 "$DATA/good" > "$DATA/noend"
refused "$DATA/noend" && ok || bad "a state file without its end record was accepted"
expect "truncated at a record's end" "$OUT" \
	"memcgfs: $DATA/noend: line $(( $(wc -l < "$DATA/noend") + 1 )), byte $(stat -c %s "$DATA/noend"): truncated: no end record"
# one digit changed: still well-formed, caught by the checksum
sed "0,/^set memory.swappiness 30$/s//set memory.swappiness 31/" "$DATA/good" > "$DATA/flipped"
endat=$(( size - $(tail -n 1 "$DATA/good" | wc -c) ))
sum=$(md5sum < "$DATA/flipped")
refused "$DATA/flipped" && ok || bad "a corrupted state file was accepted"
expect "corrupted: the checksum" "$OUT" \
	"memcgfs: $DATA/flipped: line $(wc -l < "$DATA/good"), byte $endat: checksum mismatch: the $endat bytes before the end record were changed or damaged"
# a damaged record, checksum fixed: the record itself is named
gl=$(grep -n -m1 '^group /g4 ' "$DATA/good" | cut -d: -f1)
sed "${gl}s/^group/gr0up/" "$DATA/good" > "$DATA/garbled"
fix_crc "$DATA/garbled"
refused "$DATA/garbled" && ok || bad "a garbled state file was accepted"
expect "garbled: the record" "$OUT" \
	"memcgfs: $DATA/garbled: line $gl, byte $(head -n $(( gl - 1 )) "$DATA/good" | wc -c): unknown record \"gr0up\""
sed '1s/^memcgfs-state 2$/memcgfs-state 3/' "$DATA/good" > "$DATA/newer"
refused "$DATA/newer" && ok || bad "a newer state file was accepted"
expect "newer format" "$OUT" \
	"memcgfs: $DATA/newer: line 1, byte 14: format 3 is newer than this memcgfs reads (2)"
PROFILE=kernel=6.12 refused "$DATA/good" && ok || bad "a state file of another profile was accepted"
expect "another profile" "$OUT" \
	"memcgfs: $DATA/good: line 3, byte $(head -n 2 "$DATA/good" | wc -c): written under kernel=5.10; this daemon runs kernel=6.12 (give the same options, or -o fresh)"
expect "a refused file is left as it was" "$(md5sum < "$DATA/flipped")" "$sum"

# a file someone else may write, or a link, is not trusted (release_agent runs as root)
cp "$DATA/good" "$DATA/open"
chmod 0666 "$DATA/open"
refused "$DATA/open" && ok || bad "a world-writable state file was accepted"
expect "world-writable" "$OUT" "memcgfs: state file $DATA/open: not a regular file of this user's that only it may write: refused"
ln -s "$DATA/good" "$DATA/link"
refused "$DATA/link" && ok || bad "a state file behind a link was accepted"
expect "a link" "$OUT" "memcgfs: state file $DATA/link: Too many levels of symbolic links"

# ---- -o fresh starts empty on purpose, and replaces the old state
start fresh
expect "-o fresh: no group" "$(find "$MP" -mindepth 1 -type d | wc -l)" 0
expect "-o fresh: the root's settings are a new mount's" "$(cat "$MP/release_agent")" ""
umount_fs
expect "-o fresh: the state file now records only the root" "$(grep -c '^group ' "$ST")" 1

# ---- the default path, and -o nostate
unset MNT
d=$DATA/default-mnt
mkdir "$d"
"$MEMCGFS" "$d" && ok || bad "mount with the default state file"
MNT=$d
mkdir "$d/x"
umount_fs
ns=$(stat -L -c %i /proc/self/ns/mnt)
def="$STATE_DIRECTORY/$(systemd-escape --path "$d").$ns.state"
expect "the default state file: \$STATE_DIRECTORY, the escaped mountpoint, the mount namespace" \
	"$(grep -c '^group /x ' "$def" 2>&1)" 1
mkdir "$d"
"$MEMCGFS" "$d" && MNT=$d
expect "the default state file is read back" "$(ls -d "$d/x" 2>&1)" "$d/x"
umount_fs
mkdir "$d"
before=$(ls "$STATE_DIRECTORY" | wc -l)
"$MEMCGFS" -o nostate "$d" && MNT=$d
expect "-o nostate: a new mount" "$(find "$d" -mindepth 1 -type d | wc -l)" 0
mkdir "$d/y"
umount_fs
expect "-o nostate: no file written" "$(ls "$STATE_DIRECTORY" | wc -l)" "$before"
summary
