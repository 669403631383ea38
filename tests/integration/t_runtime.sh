#!/bin/bash
# t_runtime.sh: container runtimes on memcgfs (issue 24): crun and runc,
# inside memcgfs-run, each run an OCI bundle of busybox-static with the
# default spec's device rules kept and a memory limit of 64 MiB. Inside, the
# container reads its limit and finds itself in /proc/self/cgroup;
# outside, memcgfs's group holds the container's process while it runs
# and is gone after; a container allocating 256 MiB is OOM-killed by
# memcgfs and the runtime reports a kill; pause and resume stop and
# continue it (the freezer stand-in). runc makes its init with
# CLONE_PARENT: memcgfs (through its tracer, or without eBPF through the
# supervisor, as the stand-ins) places it where its maker is, as the
# kernel does. Static C and Go detectors inside
# find the controller in the container's own mount namespace, and with a
# cgroup namespace see their groups as its roots. The host's hierarchies
# do not change.
. "$(dirname "$0")/lib.sh"

RUN="$MEMCGFS_BUILD/memcgfs-run"
HOGS="$MEMCGFS_BUILD/tools/memhog-static"
require "crun, runc, busybox-static or jq" crun runc /bin/busybox jq
DATA=$(mktemp -d /var/tmp/memcgfs-runtime.XXXXXX)
chmod 755 "$DATA"
ID="ci-rt-$$"

cleanup() {
	crun --root "$DATA/state-crun" delete -f "$ID" > /dev/null 2>&1
	runc --root "$DATA/state-runc" delete -f "$ID" > /dev/null 2>&1
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT

HOST_CGROUPS=$(host_cgroups)
mount_fs || exit 1

# the bundle: busybox-static and the allocator, crun's default spec
B="$DATA/bundle"
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev" "$B/rootfs/tmp"
cp /bin/busybox "$B/rootfs/bin/busybox"
for c in sh cat ls sleep echo grep head; do ln -s busybox "$B/rootfs/bin/$c"; done
cp "$HOGS" "$B/rootfs/bin/memhog"
cp "$MEMCGFS_BUILD/tools/cgread-static" "$B/rootfs/bin/cgread"
cp "$MEMCGFS_BUILD/tools/cgread-go" "$B/rootfs/bin/cgread-go"
(cd "$B" && crun spec)
spec() { jq "$1" "$B/config.json" > "$B/c.json" && mv "$B/c.json" "$B/config.json"; }
# (crun spec on a host with only cgroup2 puts a cgroup namespace in the
# spec, on a v1 host not: the first containers have none, whatever the
# host, and the cgroup namespace's own part below adds it)
spec '.process.terminal = false | .linux.resources.memory = { "limit": 67108864 } |
	.linux.namespaces |= map(select(.type != "cgroup"))'
expect "the default spec's device rules are kept" \
	"$(jq -c '.linux.resources.devices[0]' "$B/config.json")" '{"allow":false,"access":"rwm"}'
args() { spec ".process.args = $1"; }
# the runtime RT, its state apart
crunr() {
	case $RT in
	crun) (cd "$B" && crun --root "$DATA/state-crun" --cgroup-manager=cgroupfs "$@") ;;
	runc) (cd "$B" && runc --root "$DATA/state-runc" "$@") ;;
	esac
}
export -f crunr spec args
export B DATA ID MNT

for RT in crun runc; do
export RT

# --- inside: the limit and the group ---
args '["sh", "-c", "read v < /sys/fs/cgroup/memory/memory.limit_in_bytes; echo limit $v; grep -E \":(memory|devices|freezer):\" /proc/self/cgroup | cut -d: -f2- | sort | tr \"\\n\" \" \""]'
out=$("$RUN" --mount "$MNT" -- bash -c 'crunr run "$ID"' 2>&1)
expect "$RT: inside: the container reads its limit" "$(echo "$out" | grep '^limit')" "limit 67108864"
expect "$RT: inside: /proc/self/cgroup names its group in each hierarchy" "$(echo "$out" | grep -v '^limit')" \
	"devices:/$ID freezer:/$ID memory:/$ID "
expect "$RT: after: memcgfs's group is gone" "$([ -e "$MNT/$ID" ] && echo left || echo gone)" gone

# --- inside: busybox cat (sendfile into a pipe) of the container's files:
# its limit, and its own pid 1 in cgroup.procs (a caller in another pid
# namespace reads instead: the text is the reader's) ---
args '["sh", "-c", "echo procs $(cat /sys/fs/cgroup/memory/cgroup.procs | head -n 1); cat /sys/fs/cgroup/memory/memory.limit_in_bytes"]'
out=$("$RUN" --mount "$MNT" -- bash -c 'crunr run "$ID"' 2>&1)
expect "$RT: inside: busybox cat of cgroup.procs and the limit" "$(echo $out)" "procs 1 67108864"

# --- inside: detectors find the controller in the container's own
# mount namespace (the nested view, by the hierarchies' superblocks) ---
args '["sh", "-c", "cgread; cgread-go; grep \" /sys/fs/cgroup/memory \" /proc/self/mountinfo | cut -d\" \" -f4,5,8-"]'
out=$("$RUN" --mount "$MNT" -- bash -c 'crunr run "$ID"' 2>&1)
expect "$RT: inside: a static C detector and a Go one find their group, cgroupfs and the limit" "$out" \
	"group /$ID
magic 27e0eb 27e0eb
limit 67108864
group /$ID
magic 27e0eb 27e0eb
limit 67108864
/$ID /sys/fs/cgroup/memory cgroup cgroup rw,memory"

# --- with a cgroup namespace (the runtime mounts the hierarchies itself,
# or binds them: the mount guard roots each at the container's group, and
# the view shows its groups and mounts from there, as the kernel does) ---
cp "$B/config.json" "$B/config.plain"
spec '.linux.namespaces += [{ "type": "cgroup" }]'
args '["sh", "-c", "grep -E \":(memory|devices|freezer):\" /proc/self/cgroup | cut -d: -f2- | sort | tr \"\\n\" \" \"; echo; grep -E \" /sys/fs/cgroup/(memory|devices) \" /proc/self/mountinfo | cut -d\" \" -f4 | sort -u; cgread"]'
out=$("$RUN" --mount "$MNT" -- bash -c 'crunr run "$ID"' 2>&1)
expect "$RT: a cgroup namespace: its groups are its roots, a detector finds its limit" "$out" \
	"devices:/ freezer:/ memory:/ 
/
group /
magic 27e0eb 27e0eb
limit 67108864"
# read from outside the container (in the view, outside its cgroup
# namespace), its process's groups are the container's own, as the
# kernel shows them relative to the reader's namespace
args '["sleep", "30"]'
cat > "$DATA/nsout.sh" <<'EOF'
crunr run -d "$ID" || exit 1
pid=$(crunr state "$ID" | jq .pid)
echo "outside $(grep -E ":(memory|devices):" /proc/$pid/cgroup | cut -d: -f2- | sort | tr "\n" " ")"
crunr kill "$ID" KILL
for i in $(seq 100); do [ "$(crunr state "$ID" | jq -r .status)" = stopped ] && break; sleep 0.05; done
crunr delete "$ID"
EOF
expect "$RT: a cgroup namespace: read from outside it, the container's groups" \
	"$("$RUN" --mount "$MNT" -- bash "$DATA/nsout.sh" 2>&1)" "outside devices:/$ID memory:/$ID "
mv "$B/config.plain" "$B/config.json"

# --- outside, while it runs; pause and resume ---
args '["sleep", "30"]'
cat > "$DATA/life.sh" <<'EOF'
crunr run -d "$ID" || exit 1
pid=$(crunr state "$ID" | jq .pid)
echo "pid $pid"
for i in $(seq 100); do [ -s "$DATA/checked" ] && break; sleep 0.05; done
crunr pause "$ID" && echo "paused $(crunr state "$ID" | jq -r .status) $(awk '/^State:/ { print $2 }' /proc/$pid/status)"
crunr resume "$ID" && echo "resumed $(crunr state "$ID" | jq -r .status) $(awk '/^State:/ { print $2 }' /proc/$pid/status)"
crunr kill "$ID" KILL
for i in $(seq 100); do [ "$(crunr state "$ID" | jq -r .status)" = stopped ] && break; sleep 0.05; done
crunr delete "$ID" && echo deleted
EOF
"$RUN" --mount "$MNT" -- bash "$DATA/life.sh" > "$DATA/life.out" 2>&1 &
LIFE=$!
wait_until 20 grep -q '^pid' "$DATA/life.out"
pid=$(awk '/^pid/ { print $2 }' "$DATA/life.out")
expect "$RT: outside: the container's process is in memcgfs's group" \
	"$(grep -c "^$pid\$" "$MNT/$ID/cgroup.procs" 2>/dev/null)" 1
expect "$RT: outside: the group's limit is the spec's" "$(cat "$MNT/$ID/memory.limit_in_bytes" 2>/dev/null)" 67108864
echo checked > "$DATA/checked"
wait "$LIFE"
expect "$RT pause: the freezer stand-in stops it" "$(grep '^paused' "$DATA/life.out")" "paused paused T"
expect "$RT resume: it runs again" "$(grep '^resumed' "$DATA/life.out")" "resumed running S"
expect "$RT delete" "$(grep -c '^deleted' "$DATA/life.out")" 1
expect "$RT: after delete: memcgfs's group is gone" "$([ -e "$MNT/$ID" ] && echo left || echo gone)" gone

# --- past its limit: OOM-killed by memcgfs, crun reports the kill ---
args '["memhog", "-a", "256"]'
cat > "$DATA/oom.sh" <<'EOF'
crunr run "$ID" > /dev/null 2>&1
echo "status $?"
EOF
out=$("$RUN" --mount "$MNT" -- bash "$DATA/oom.sh" 2>&1)
expect "$RT: a container allocating 256 MiB is killed (128+9)" "$out" "status 137"
cat > "$DATA/oomd.sh" <<'EOF'
crunr run -d "$ID" > /dev/null 2>&1
for i in $(seq 200); do [ "$(crunr state "$ID" | jq -r .status)" = stopped ] && break; sleep 0.05; done
awk '$1 == "oom_kill" { print "oom_kill", $2 }' "$MNT/$ID/memory.oom_control"
crunr delete "$ID" > /dev/null
EOF
expect "$RT: memory.oom_control counts the kill" "$("$RUN" --mount "$MNT" -- bash "$DATA/oomd.sh" 2>&1)" "oom_kill 1"

rm -f "$DATA/checked"
done

# --- without eBPF (-o page_cache=scan: a daemon that may not load it, no
# fork events naming a maker): runc's and crun's CLONE_PARENT children are
# placed through memcgfs-run's supervisor, which tells memcgfs of each such
# clone before it runs; the container is in its group, limited and
# OOM-killed there ---
MAIN_MNT=$MNT
MNT=
mount_fs page_cache=scan || exit 1
export MNT
expect "no tracer: the daemon's page cache source is not eBPF" \
	"$(daemon_status "$MNT" page_cache_source | grep -c ebpf)" 0
cat > "$DATA/placed.sh" <<'EOF'
crunr run -d "$ID" || exit 1
echo "pid $(crunr state "$ID" | jq .pid)"
for i in $(seq 200); do [ -s "$DATA/checked" ] && break; sleep 0.05; done
crunr kill "$ID" KILL
for i in $(seq 100); do [ "$(crunr state "$ID" | jq -r .status)" = stopped ] && break; sleep 0.05; done
crunr delete "$ID" && echo deleted
EOF
for RT in crun runc; do
	export RT
	rm -f "$DATA/checked"
	args '["sleep", "30"]'
	"$RUN" --mount "$MNT" -- bash "$DATA/placed.sh" > "$DATA/placed.out" 2>&1 &
	P=$!
	wait_until 20 grep -q '^pid' "$DATA/placed.out"
	pid=$(awk '/^pid/ { print $2 }' "$DATA/placed.out")
	expect "no tracer, $RT: outside: the container's process is in memcgfs's group" \
		"$(grep -c "^$pid\$" "$MNT/$ID/cgroup.procs" 2>/dev/null)" 1
	expect "no tracer, $RT: ... not at the root" "$(grep -c "^$pid\$" "$MNT/cgroup.procs")" 0
	echo checked > "$DATA/checked"
	wait "$P"
	expect "no tracer, $RT: deleted, its group gone" \
		"$(grep -c '^deleted' "$DATA/placed.out") $([ -e "$MNT/$ID" ] && echo left || echo gone)" "1 gone"
	args '["memhog", "-a", "256"]'
	expect "no tracer, $RT: a container allocating 256 MiB is killed (128+9)" \
		"$("$RUN" --mount "$MNT" -- bash "$DATA/oom.sh" 2>&1)" "status 137"
	expect "no tracer, $RT: memory.oom_control counts the kill" \
		"$("$RUN" --mount "$MNT" -- bash "$DATA/oomd.sh" 2>&1)" "oom_kill 1"
done
rm -f "$DATA/checked"
umount_fs
MNT=$MAIN_MNT
export MNT

# --- LXC: lxc-execute and lxc-start of the same rootfs, common.conf's
# device rules, LXC's own cgroup mounts in the container's cgroup
# namespace (it probes fsopen(NULL): ENOSYS, so it mounts with mount(2),
# which the guard binds), lxc.cgroup.memory.limit_in_bytes 64M ---
L="$DATA/lxc"
mkdir -p "$L/path"
printf '%s\n' "lxc.uts.name = $ID" "lxc.rootfs.path = dir:$B/rootfs" "lxc.net.0.type = empty" \
	"lxc.include = /usr/share/lxc/config/common.conf" "lxc.apparmor.profile = unconfined" \
	"lxc.mount.auto = cgroup:mixed:force" "lxc.cgroup.memory.limit_in_bytes = 64M" > "$L/config"
export L
lxcr() { local c=$1; shift; "lxc-$c" -n "$ID" -P "$L/path" "$@"; }
export -f lxcr
out=$("$RUN" --mount "$MNT" -- bash -c 'lxcr execute -f "$L/config" -- sh -c "$1"' _ \
	'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; grep -E ":(memory|devices):" /proc/self/cgroup | cut -d: -f2- | sort | tr "\n" " "; echo; grep -c " - cgroup cgroup " /proc/self/mountinfo' 2>&1)
# (one cgroup mount a hierarchy of the view, its links aside)
nhier=$("$RUN" --mount "$MNT" -- find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d | wc -l)
expect "lxc: inside: its limit, its groups (the namespace's roots), its own cgroup mounts" \
	"$(echo $out)" "67108864 devices:/ memory:/ $nhier"
cat > "$L/start.sh" <<'EOF'
lxcr start -f "$L/config" -d -- /bin/sleep 30 || exit 1
lxcr wait -s RUNNING -t 10
echo "cgroup $(lxcr cgroup memory.limit_in_bytes)"
lxcr info -S | awk '/^Memory use:/ { print "memory", ($3 > 0) }'
echo "procs $(grep -cx "$(lxcr info -p -H)" "$MNT/lxc.payload.$ID/cgroup.procs")"
lxcr stop -k
EOF
expect "lxc: lxc-cgroup reads the limit, lxc-info -S the use, memcgfs's group holds it" \
	"$("$RUN" --mount "$MNT" -- bash "$L/start.sh" 2>&1 | tr '\n' ' ')" "cgroup 67108864 memory 1 procs 1 "
"$RUN" --mount "$MNT" -- bash -c 'lxcr execute -f "$L/config" -- memhog -a 256' > /dev/null 2>&1
expect "lxc: a container allocating 256 MiB is killed" "$?" 137
expect "lxc: after: memcgfs's group is gone" "$([ -e "$MNT/lxc.payload.$ID" ] && echo left || echo gone)" gone

expect_host_cgroups "the host's cgroup hierarchies unchanged" "$HOST_CGROUPS"
wait_until 10 sh -c "! pgrep -f '^$RUN .*$DATA' > /dev/null"
expect "no memcgfs-run left (supervisors, stand-ins' servers)" "$(pgrep -fc "^$RUN .*$DATA")" 0
summary
