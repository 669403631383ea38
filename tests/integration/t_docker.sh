#!/bin/bash
# t_docker.sh: Docker on memcgfs (the real-clients issue): dockerd, with
# the containerd and runc it starts, inside one memcgfs-run, in network,
# UTS and mount namespaces of its own, its state under a temporary
# directory and tmpfs over /run and /etc/docker (--bridge=none, no
# iptables, the vfs storage driver; an image made offline with docker
# import from busybox-static and a static allocator). docker info finds
# cgroup v1 and warns of nothing; a container's limit is in memcgfs's
# group /docker/ID, read inside and by docker stats; a container over its
# limit is OOM-killed by memcgfs, docker inspect says OOMKilled and docker
# events has its oom event (containerd's shim registers
# cgroup.event_control with memory.oom_control); docker rm removes its
# group. The host's hierarchies do not change.
. "$(dirname "$0")/lib.sh"

RUN="$MEMCGFS_BUILD/memcgfs-run"
require "docker.io or busybox-static" dockerd docker /bin/busybox
DATA=$(mktemp -d /var/tmp/memcgfs-docker.XXXXXX)
chmod 755 "$DATA"
cleanup() {
	[ -s "$DATA/docker.pid" ] && kill "$(cat "$DATA/docker.pid")" 2> /dev/null
	pkill -f -- "--data-root $DATA/data" 2> /dev/null
	# (vfs layers are plain directories; a container's mounts went with
	# its mount namespace)
	rm -rf "$DATA"
	lib_exit
}
trap cleanup EXIT
HOST_CGROUPS=$(host_cgroups)
mount_fs || exit 1

# the image: busybox-static and the allocator
image_tar "$DATA"

# the session: dockerd in namespaces of its own, inside memcgfs-run; what
# the clients say goes to files of $DATA, each one line a question
cat > "$DATA/session.sh" <<'EOF'
D=$1
mount -t tmpfs tmpfs /run
mkdir -p /etc/docker && mount -t tmpfs tmpfs /etc/docker
ip link set lo up
t0=$(date +%s%N)
dockerd --bridge=none --iptables=false --ip6tables=false --storage-driver=vfs \
	--data-root "$D/data" --exec-root "$D/exec" -H "unix://$D/docker.sock" \
	--pidfile "$D/docker.pid" > "$D/dockerd.log" 2>&1 &
export DOCKER_HOST=unix://$D/docker.sock
for i in $(seq 600); do docker version > /dev/null 2>&1 && break; sleep 0.1; done
echo "startup_ms $(( ($(date +%s%N) - t0) / 1000000 ))" > "$D/startup"
docker info > "$D/info" 2> "$D/info.err"
docker import "$D/image.tar" memcgfs-test:1 > /dev/null
# a container with 128 MiB: its limit and its group, inside; its group
# from outside while it runs; docker stats
docker run -d --name lim -m 128m --network none memcgfs-test:1 sleep 60 > "$D/lim.id"
docker exec lim sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; grep :memory: /proc/self/cgroup' > "$D/lim.inside"
cat "$MNT/docker/$(cat "$D/lim.id")/memory.limit_in_bytes" > "$D/lim.outside"
grep -cx "$(docker inspect -f '{{.State.Pid}}' lim)" "$MNT/docker/$(cat "$D/lim.id")/cgroup.procs" > "$D/lim.procs"
docker stats --no-stream --format '{{.MemUsage}}' lim > "$D/lim.stats"
docker rm -f lim > /dev/null
[ -e "$MNT/docker/$(cat "$D/lim.id")" ] && echo left > "$D/lim.after" || echo gone > "$D/lim.after"
# a container allocating 200 MiB under 64 MiB (its group goes with it,
# and with it its oom_kill: on v1 the kernel counts a kill in the group
# that OOMed only)
since=$(date +%s)
docker run --name oomy -m 64m --network none memcgfs-test:1 memhog -a 200 > /dev/null 2>&1
echo "exit $?" > "$D/oom.exit"
docker inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}}' oomy > "$D/oom.inspect"
id=$(docker inspect -f '{{.Id}}' oomy)
# (dockerd publishes the event when containerd's reaches it, which may be
# after docker run returned)
for i in $(seq 50); do
	docker events --since "$since" --until "$(date +%s)" --filter container=oomy --filter event=oom \
		--format '{{.Action}}' > "$D/oom.events"
	[ -s "$D/oom.events" ] && break
	sleep 0.2
done
docker rm oomy > /dev/null
[ -e "$MNT/docker/$id" ] && echo left > "$D/oom.after" || echo gone > "$D/oom.after"
kill "$(cat "$D/docker.pid")"
for i in $(seq 100); do kill -0 "$(cat "$D/docker.pid")" 2> /dev/null || break; sleep 0.1; done
EOF
MNT=$MNT timeout 300 "$RUN" --mount "$MNT" -- unshare -n -u -m --propagation private \
	env MNT=/sys/fs/cgroup/memory bash "$DATA/session.sh" "$DATA" > "$DATA/session.out" 2>&1 ||
	echo "t_docker: the session ended $?: $(tail -n 5 "$DATA/session.out")"

expect "docker info: cgroup version 1, the cgroupfs driver" \
	"$(grep -E '^ *Cgroup (Version|Driver):' "$DATA/info" | tr -s ' ' | xargs)" \
	"Cgroup Driver: cgroupfs Cgroup Version: 1"
expect "docker info: no warning" "$(grep -ci warning "$DATA/info.err" "$DATA/info" | awk -F: '{ s += $NF } END { print s }')" 0
expect "inside: the container reads its limit and its group" \
	"$(sed 's/\(memory:\/docker\/\)[0-9a-f]*$/\1ID/' "$DATA/lim.inside" | cut -d: -f2- | xargs)" \
	"134217728 memory:/docker/ID"
expect "outside: memcgfs's group /docker/ID has the limit" "$(cat "$DATA/lim.outside")" 134217728
expect "outside: ... and the container's process" "$(cat "$DATA/lim.procs")" 1
expect "docker stats: the limit" "$(sed 's/.*\/ *//' "$DATA/lim.stats")" "128MiB"
expect "docker rm: its group is gone" "$(cat "$DATA/lim.after")" gone
expect "over its limit: killed (128+9)" "$(cat "$DATA/oom.exit")" "exit 137"
expect "docker inspect: OOMKilled" "$(cat "$DATA/oom.inspect")" "true 137"
expect "docker events: its oom event" "$(cat "$DATA/oom.events")" oom
expect "docker rm: the killed one's group is gone" "$(cat "$DATA/oom.after")" gone
echo "t_docker: dockerd inside memcgfs-run answered after $(awk '{ print $2 }' "$DATA/startup" 2> /dev/null) ms"
expect "no dockerd left" "$(pgrep -fc -- "--data-root $DATA/data")" 0
expect_host_cgroups "the host's cgroup hierarchies unchanged" "$HOST_CGROUPS"
summary
