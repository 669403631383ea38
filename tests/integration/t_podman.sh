#!/bin/bash
# t_podman.sh: Podman on memcgfs (the real-clients issue): podman 4.3 with
# conmon and crun inside one memcgfs-run, in network, UTS and mount
# namespaces of its own, its storage under a temporary directory and its
# run root on a tmpfs over /run (--cgroup-manager=cgroupfs, --network=none,
# the vfs storage driver; an image made offline with podman import from
# busybox-static and a static allocator). A container's limit is in
# memcgfs's group libpod_parent/libpod-ID, read inside and by podman
# stats; a container over its limit is OOM-killed by memcgfs and podman
# exits 137 and conmon leaves its OOM notice (conmon registers
# cgroup.event_control with memory.oom_control; when that failed, conmon
# died and podman exited 127). Podman 4.3 with conmon 2.1.6 never sets OOMKilled on cgroup v1,
# a bug of theirs fixed in podman 5 (memcgfs-run(1)). No group is left
# behind. The host's hierarchies do not change.
. "$(dirname "$0")/lib.sh"

RUN="$MEMCGFS_BUILD/memcgfs-run"
require "podman, conmon or busybox-static" podman conmon /bin/busybox
DATA=$(mktemp -d /var/tmp/memcgfs-podman.XXXXXX)
chmod 755 "$DATA"
cleanup() {
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT
HOST_CGROUPS=$(host_cgroups)
mount_fs || exit 1

image_tar "$DATA"

# (the run's limits as they are: podman as root would raise nofile and
# nproc to 1048576, which a root without CAP_SYS_RESOURCE may not)
LIMITS="--ulimit nofile=1024:$(ulimit -Hn) --ulimit nproc=4096:4096"
cat > "$DATA/session.sh" <<'EOF'
D=$1 LIMITS=$2
# (conmon writes its OOM notice, a file "oom", where it was started: here)
cd "$D"
mount -t tmpfs tmpfs /run
ip link set lo up
P() { podman --root "$D/storage" --runroot /run/podman --tmpdir /run/libpod --cgroup-manager=cgroupfs \
	--storage-driver=vfs --events-backend=file "$@"; }
P import "$D/image.tar" memcgfs-test:1 > /dev/null 2>&1
P run --rm -m 128m --network=none $LIMITS memcgfs-test:1 \
	sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; grep :memory: /proc/self/cgroup' > "$D/lim.inside" 2>&1
P run -d --name lim -m 128m --network=none $LIMITS memcgfs-test:1 sleep 60 > "$D/lim.id" 2> "$D/lim.err"
id=$(cat "$D/lim.id")
cat "$MNT/libpod_parent/libpod-$id/memory.limit_in_bytes" > "$D/lim.outside"
grep -cx "$(P inspect -f '{{.State.Pid}}' lim)" "$MNT/libpod_parent/libpod-$id/cgroup.procs" > "$D/lim.procs"
P stats --no-stream --format '{{.MemUsage}}' lim > "$D/lim.stats" 2>&1
P rm -f lim > /dev/null 2>&1
[ -e "$MNT/libpod_parent/libpod-$id" ] && echo left > "$D/lim.after" || echo gone > "$D/lim.after"
rm -f "$D/oom"
P run --name oomy -m 64m --network=none $LIMITS memcgfs-test:1 memhog -a 200 > /dev/null 2>&1
echo "exit $?" > "$D/oom.exit"
[ -e "$D/oom" ] && echo notice > "$D/oom.notice" || echo none > "$D/oom.notice"
P inspect -f '{{.State.ExitCode}}' oomy > "$D/oom.inspect" 2>&1
id=$(P inspect -f '{{.Id}}' oomy)
P rm oomy > /dev/null 2>&1
[ -e "$MNT/libpod_parent/libpod-$id" ] && echo left > "$D/oom.after" || echo gone > "$D/oom.after"
ls "$MNT/libpod_parent" | grep -c '^libpod-' > "$D/left" || true
EOF
timeout 300 "$RUN" --mount "$MNT" -- unshare -n -u -m --propagation private \
	env MNT=/sys/fs/cgroup/memory bash "$DATA/session.sh" "$DATA" "$LIMITS" > "$DATA/session.out" 2>&1 ||
	echo "t_podman: the session ended $?: $(tail -n 5 "$DATA/session.out")"

expect "inside: the container reads its limit and its group" \
	"$(sed 's/\(memory:\/libpod_parent\/libpod-\)[0-9a-f]*$/\1ID/' "$DATA/lim.inside" | cut -d: -f2- | xargs)" \
	"134217728 memory:/libpod_parent/libpod-ID"
expect "outside: memcgfs's group libpod_parent/libpod-ID has the limit" "$(cat "$DATA/lim.outside")" 134217728
expect "outside: ... and the container's process" "$(cat "$DATA/lim.procs")" 1
expect "podman stats: the limit" "$(sed 's/.*\/ *//' "$DATA/lim.stats")" "134.2MB"
expect "podman rm: its group is gone" "$(cat "$DATA/lim.after")" gone
expect "over its limit: killed (128+9), conmon alive to tell" "$(cat "$DATA/oom.exit")" "exit 137"
expect "podman inspect: the exit code" "$(cat "$DATA/oom.inspect")" 137
expect "conmon's OOM notice (its file oom, from the eventfd memcgfs signalled)" "$(cat "$DATA/oom.notice")" notice
expect "podman rm: the killed one's group is gone" "$(cat "$DATA/oom.after")" gone
expect "no container's group left" "$(cat "$DATA/left")" 0
expect_host_cgroups "the host's cgroup hierarchies unchanged" "$HOST_CGROUPS"
summary
