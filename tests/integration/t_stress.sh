#!/bin/bash
# t_stress.sh: the bounded concurrent stress test of the security issue.
#
# For each profile of STRESS_PROFILES (default 4.19 5.10 6.12 6.18) one
# mount and STRESS_CYCLES cycles (2; 3 from STRESS_SECONDS=30 up) that
# share STRESS_SECONDS of racing (default 4: short in CI; STRESS_SECONDS=300
# for a long run). In a cycle seven workers, each bounded in iterations and
# time and stopping by itself, race through the mount:
#   dirs    mkdir/rmdir of a fixed set of nested groups (GRPS), writing 3 to
#           memory.move_charge_at_immigrate of each new group;
#   hogs    three real processes (memhog -a 8, two with extra threads)
#           moved between the groups and the root through tasks (the
#           leader or another thread) and cgroup.procs, writing 3 to the
#           destination's move_charge_at_immigrate first (EINVAL is the
#           only answer from 6.13 on); OOM-killed ones are restarted;
#   limits  memory, memsw, kmem and soft limits (sometimes below usage,
#           0 included), the watermark files, use_hierarchy (a real flag
#           before 5.11), force_empty, swappiness, max_usage/failcnt resets;
#   sim x2  short simulated tasks (memcgctl sim) in random groups;
#   read    every control file of every existing group, read with wr -r;
#   fds     stress_fds.py: files held open across rmdir and re-read,
#           polled and written, directory listings, event registrations.
# Every operation is bounded by `timeout $OP_LIMIT` (30 s: a hang detector,
# not a speed test; generous for ASan on a loaded 2-core machine, where an
# operation takes milliseconds) and its outcome (OK or the
# errno name) counted; racing operations may fail only with the errors
# allowed below (allowed()), none may time out, and the daemon must stay
# alive and answering. After the workers stop and every task is gone:
# no anon memory (rss, total_rss) and no swap is left in any group,
# memsw >= memory, a hierarchical parent's usage >= the sum of its
# children's, every group can be removed (deepest first) and the root's
# total_rss reads 0; the daemon's fds and its threads (the FUSE loop's idle
# workers apart: a pool that never shrinks, bounded at 64) are back to
# what they were before the workers started, and over the cycles its RSS
# does not keep growing (the last cycle's within 8 MiB of the first's, plus
# the sanitizers' own growth: see SAN_RSS_*). Before the cycles, a warm-up
# checks the profile's answer to move_charge_at_immigrate 3 and the OOM
# kill at a limit of 0 (§11.10: a bug this test found).
# Under MEMCGFS_SANLOG a sanitizer report written during the test fails it.
# The outcome does not depend on timing: races only decide which of the
# allowed errors happen. STRESS_SEED (default 1) seeds the workers' choices.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
CTL="$MEMCGFS_BUILD/memcgctl"
HOG="$MEMCGFS_BUILD/tools/memhog"
STRESS_SECONDS=${STRESS_SECONDS:-4}
STRESS_PROFILES=${STRESS_PROFILES:-4.19 5.10 6.12 6.18}
OP_LIMIT=30
STRESS_SEED=${STRESS_SEED:-1}
if [ -z "${STRESS_CYCLES:-}" ]; then
	STRESS_CYCLES=2
	[ "$STRESS_SECONDS" -ge 30 ] && STRESS_CYCLES=3
fi
CYCLE_SECS=$(( STRESS_SECONDS / STRESS_CYCLES ))
(( CYCLE_SECS >= 1 )) || CYCLE_SECS=1
GRPS=(a a/b a/b/c c c/d e)
DEEPEST_FIRST=(a/b/c a/b c/d a c e)
SIZES=(0 1M 2M 4M 8M 12M 16M 32M 64M 256M -1 -1)
# simulated task programs (lines separated by |); each ends by itself
PROGS=(
	'alloc anon h 8M|touch h seq write|sleep 200ms'
	'file sf1 4M|map sf1 m|touch m seq|sleep 100ms'
	'file sf2 8M|map sf2 m|touch m seq write|sleep 100ms'
	'alloc shmem s 4M|touch s seq|sleep 100ms'
	'alloc anon r 4M|touch r random count=256 write|fork k|alloc anon g 1M|touch g seq write|sleep 100ms'
	'alloc anon k 2M|touch k seq write|mlock k|sleep 100ms|munlock k|free k'
	'repeat 3|alloc anon t 2M|touch t seq write|free t|end|sleep 50ms'
	'alloc anon big 24M|touch big seq write|sleep 50ms'
)
DATA=$(mktemp -d /tmp/memcgfs-stress.XXXXXX)
WORKERS=()
declare -A R
PROF=
PKV=0

info() { echo "t_stress: $*"; }
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
kv() { local IFS=.; set -- $1; echo $(( $1 * 1000 + $2 )); }
MOVE_CHARGE=1

# --- the allowed outcomes of each kind of operation ---
allowed() {
	local kind=$1 res=$2 ok
	case $kind in
	# (from 5.9 a child's structures are charged to its parent: a parent
	# at its limit has no room for one, §11.5)
	mkdir)   if ((PKV < 5009)); then ok="OK EEXIST ENOENT ENODEV"; else ok="OK EEXIST ENOENT ENODEV ENOMEM"; fi ;;
	rmdir)   ok="OK ENOENT EBUSY" ;;
	mc3)     if ((MOVE_CHARGE)); then ok="OK ENOENT ENODEV"; else ok="EINVAL ENOENT ENODEV"; fi ;;
	move)    ok="OK ENOENT ENODEV ENOMEM ESRCH" ;;
	limit|memsw) ok="OK EBUSY EINVAL ENOENT ENODEV" ;;
	kmem)    if ((PKV < 5016)); then ok="OK EBUSY ENOENT ENODEV"
	         elif ((PKV < 6006)); then ok="EOPNOTSUPP ENOENT ENODEV"
	         else ok="OK ENOENT ENODEV"; fi ;;
	wmark)   ok="OK EINVAL ENOENT ENODEV" ;;
	uh)      if ((PKV < 5011)); then ok="OK EINVAL EBUSY ENOENT ENODEV"; else ok="OK ENOENT ENODEV"; fi ;;
	uh0)     ok="EINVAL ENOENT ENODEV" ;;
	soft|fe|reset|swp|read) ok="OK ENOENT ENODEV" ;;
	read_einval) ok="EINVAL ENOENT ENODEV" ;;
	hog)     ok="exit137" ;;                     # OOM-killed, restarted
	sim)     ok="ok killed join:ENOENT join:ENODEV" ;;
	py_open|py_listdir) ok="OK ENOENT" ;;
	py_pread|py_write|py_fstat|py_poll) ok="OK ENODEV" ;;
	py_event) ok="OK ENODEV EINVAL" ;;
	*)       ok= ;;
	esac
	[[ " $ok " == *" $res "* ]]
}

# --- helpers of the main script: every read is bounded too ---
rd() { timeout "$OP_LIMIT" cat "$1" 2>/dev/null || echo ERR; }
gd() { echo "$MNT${1:+/$1}"; }
stat_key() { rd "$(gd "$1")/memory.stat" | awk -v k="$2" '$1 == k { print $2 }'; }
daemon_fds() { ls "/proc/$DPID/fd" 2>/dev/null | wc -l; }
# threads: "total idle_fuse_workers"
daemon_threads() {
	local t n=0 f=0 w
	for t in /proc/"$DPID"/task/*; do
		n=$((n + 1))
		w=
		read -r w 2>/dev/null < "$t/wchan"
		[ "$w" = fuse_dev_do_read ] && f=$((f + 1))
	done
	echo "$n $f"
}
daemon_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status" 2>/dev/null; }
daemon_ok() { kill -0 "$DPID" 2>/dev/null && [ "$(rd "$MNT/memory.swappiness")" != ERR ]; }
existing() { local g; for g in "${GRPS[@]}"; do timeout "$OP_LIMIT" test -d "$MNT/$g" && echo "$g"; done; }
root_rss0() { [ "$(stat_key "" total_rss)" = 0 ]; }

# The hogs left by a killed hogs worker (reparented: not by the numbers it
# wrote down, which may be anyone's by now), by their command line.
kill_hogs() { pkill -KILL -f -x "$HOG -a 8 -t [0-9]+"; return 0; }

stop_all() {
	local p
	for p in "${WORKERS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	kill_hogs
	# (not a bare wait: the daemon is this shell's child too)
	(( ${#WORKERS[@]} == 0 )) || wait "${WORKERS[@]}" 2>/dev/null
	WORKERS=()
}
cleanup() {
	stop_all
	lib_exit
	rm -rf "$DATA"
}
trap cleanup EXIT

# --- the workers (each in a subshell of its own) ---
# rec KIND RESULT [CONTEXT]: count an outcome; an unexpected one is also
# logged with its context (the first 20 of each worker)
rec() {
	R["$1 $2"]=$(( ${R["$1 $2"]:-0} + 1 ))
	allowed "$1" "$2" || (( ODD++ >= 20 )) || echo "$1 $2: ${3:-}" >> "$DATA/odd.$BASHPID"
}
# a worker's next iteration: the first 20 whatever the clock says (a
# loaded machine may start a worker late), then until END, at most 100000
more() { (( ++ITER <= 20 || (${EPOCHREALTIME/./} < END && ITER <= 100000) )); }
finish() {
	local k
	{
		for k in "${!R[@]}"; do echo "$k ${R[$k]}"; done
		echo "#ops $OPS"
		echo "#timeouts $TMO"
	} > "$DATA/res.$1"
	: > "$DATA/done.$1"
}
# run KIND CMD...: one operation bounded by $OP_LIMIT s; its outcome (the last line
# of its output, OK or an errno name; TIMEOUT) is counted under KIND.
run() {
	local kind=$1 t0=${EPOCHREALTIME/./} out rc
	shift
	out=$(timeout -k 2 "$OP_LIMIT" "$@" 2>/dev/null)
	rc=$?
	if (( rc == 124 || rc == 137 || ${EPOCHREALTIME/./} - t0 >= OP_LIMIT * 1000000 )); then
		RES=TIMEOUT
		TMO=$((TMO + 1))
	elif (( rc == 0 )); then
		RES=OK
	else
		RES=${out##*$'\n'}
		RES=${RES:-rc$rc}
	fi
	OPS=$((OPS + 1))
	rec "$kind" "$RES" "$*"
}
mc3() { run mc3 "$WR" "$MNT/$1/memory.move_charge_at_immigrate" 3; }
pick() { G=${GRPS[RANDOM % ${#GRPS[@]}]}; }

w_dirs() {
	while more; do
		pick
		if (( RANDOM % 5 < 3 )); then
			run mkdir perl -e "$DIROP" mkdir "$MNT/$G"
			[ "$RES" = OK ] && mc3 "$G"
		else
			run rmdir perl -e "$DIROP" rmdir "$MNT/$G"
		fi
	done
	finish dirs
}

# start time of a process (field 22 of /proc/PID/stat), or "-": with the
# pid it names the process, whatever reuses the number later
starttime() {
	local -a f
	read -ra f 2>/dev/null < "/proc/$1/stat" || { echo -; return; }
	[ "${f[2]}" = Z ] && echo - || echo "${f[21]}"
}

w_hogs() {
	local -a H=() S=()
	local i p t x d restarts=0
	start_hog() {
		"$HOG" -a 8 -t $(( $1 == 2 ? 1 : $1 + 2 )) > /dev/null 2>&1 < /dev/null &
		H[$1]=$!
		S[$1]=$(starttime $!)
	}
	for i in 0 1 2; do start_hog "$i"; done
	while more; do
		i=$((RANDOM % 3))
		p=${H[i]}
		# (bash reaps its children at once: an OOM-killed hog's pid may
		# be anyone's soon, so the start time is checked before each use)
		if [ "$(starttime "$p")" != "${S[i]}" ]; then
			wait "$p" 2>/dev/null
			rec hog "exit$?"
			(( ++restarts <= 50 )) || break
			start_hog "$i"
			continue
		fi
		if (( RANDOM % 8 == 0 )); then
			d=$MNT
		else
			pick
			d=$MNT/$G
			(( RANDOM % 2 )) && mc3 "$G"
		fi
		case $((RANDOM % 3)) in
		0) run move "$WR" "$d/tasks" "$p" ;;
		1) run move "$WR" "$d/cgroup.procs" "$p" ;;
		2)
			t=$p
			for x in /proc/"$p"/task/*; do
				x=${x##*/}
				[[ $x =~ ^[0-9]+$ && $x != "$p" ]] && t=$x && break
			done
			run move "$WR" "$d/tasks" "$t"
			;;
		esac
	done
	kill_child KILL "${H[@]}"
	wait 2>/dev/null
	finish hogs
}

w_limits() {
	local v d
	while more; do
		pick
		d=$MNT/$G
		v=${SIZES[RANDOM % ${#SIZES[@]}]}
		case $((RANDOM % 14)) in
		0|1|2) run limit "$WR" "$d/memory.limit_in_bytes" "$v" ;;
		3|4) run memsw "$WR" "$d/memory.memsw.limit_in_bytes" "$v" ;;
		5) run soft "$WR" "$d/memory.soft_limit_in_bytes" "$v" ;;
		6) run wmark "$WR" "$d/memory.high_watermark_in_bytes" "$v" ;;
		7) run wmark "$WR" "$d/memory.low_watermark_in_bytes" "$v" ;;
		8)
			(( RANDOM % 4 == 0 )) && d=$MNT
			if (( PKV < 5011 )); then
				run uh "$WR" "$d/memory.use_hierarchy" $((RANDOM % 2))
			elif (( RANDOM % 2 )); then
				run uh "$WR" "$d/memory.use_hierarchy" 1
			else
				run uh0 "$WR" "$d/memory.use_hierarchy" 0
			fi
			;;
		9) run fe "$WR" "$d/memory.force_empty" 1 ;;
		10) run reset "$WR" "$d/memory.max_usage_in_bytes" 0 ;;
		11) run reset "$WR" "$d/memory.failcnt" 0 ;;
		12) run swp "$WR" "$d/memory.swappiness" $((RANDOM % 101)) ;;
		13) run kmem "$WR" "$d/memory.kmem.limit_in_bytes" "$v" ;;
		esac
	done
	finish limits
}

w_sim() {
	local -a L args
	local l t0 err rc
	while more; do
		pick
		(( RANDOM % 6 == 0 )) && G=
		IFS='|' read -ra L <<< "${PROGS[RANDOM % ${#PROGS[@]}]}"
		args=()
		for l in "${L[@]}"; do args+=(-e "$l"); done
		t0=${EPOCHREALTIME/./}
		err=$(timeout -k 2 "$OP_LIMIT" "$CTL" sim -m "$MNT" -g "/$G" "${args[@]}" 2>&1 > /dev/null)
		rc=$?
		if (( rc == 124 || ${EPOCHREALTIME/./} - t0 >= OP_LIMIT * 1000000 )); then
			RES=TIMEOUT
			TMO=$((TMO + 1))
		else
			case $rc:$err in
			0:*) RES=ok ;;
			137:*) RES=killed ;;
			1:*"cannot join"*"No such file or directory"*) RES=join:ENOENT ;;
			1:*"cannot join"*"No such device"*) RES=join:ENODEV ;;
			*) RES="rc$rc:$(echo "$err" | head -n1 | tr -c 'A-Za-z0-9:/._-' _ | cut -c1-100)" ;;
			esac
		fi
		OPS=$((OPS + 1))
		rec sim "$RES" "-g /$G ${L[*]} :: $err"
	done
	finish "sim$1"
}

w_read() {
	local g f
	while more; do
		for g in "" "${GRPS[@]}"; do
			[ -d "$MNT/$g" ] || continue
			if [ -z "$g" ]; then set -- "${ROOT_FILES[@]}"; else set -- "${CHILD_FILES[@]}"; fi
			for f; do
				more || break 2
				case $f in
				memory.pressure_level|memory.force_empty|cgroup.event_control)
					run read_einval "$WR" -r "$MNT/$g/$f" ;;
				*) run read "$WR" -r "$MNT/$g/$f" ;;
				esac
			done
		done
	done
	finish read
}

w_fds() {
	timeout -k 2 $((CYCLE_SECS + 30)) python3 "$HERE/stress_fds.py" "$MNT" "$((END / 1000))" \
		"$RANDOM" "$DATA/res.fds" "${GRPS[@]}"
	echo "$?" > "$DATA/fds.rc"
	: > "$DATA/done.fds"
}

# STRESS_WORKERS (default all) picks some of them, to find which one a
# failure needs
STRESS_WORKERS=${STRESS_WORKERS:-dirs hogs limits sim1 sim2 read fds}
NWORKERS=$(echo $STRESS_WORKERS | wc -w)
start_workers() {
	local seed=$1 w n=0
	END=$(( ${EPOCHREALTIME/./} + CYCLE_SECS * 1000000 ))
	ITER=0 OPS=0 TMO=0 ODD=0
	for w in $STRESS_WORKERS; do
		n=$((n + 1))
		case $w in
		dirs) ( RANDOM=$((seed + n)); w_dirs ) & ;;
		# (bash reports each OOM-killed hog as "Killed")
		hogs) ( RANDOM=$((seed + n)); w_hogs ) 2> "$DATA/hogs.err" & ;;
		limits) ( RANDOM=$((seed + n)); w_limits ) & ;;
		sim1|sim2) ( RANDOM=$((seed + n)); w_sim "${w#sim}" ) & ;;
		read) ( RANDOM=$((seed + n)); w_read ) & ;;
		fds) ( RANDOM=$((seed + n)); w_fds ) & ;;
		*) bad "STRESS_WORKERS: no worker $w"; continue ;;
		esac
		WORKERS+=($!)
	done
}
workers_done() { [ "$(ls "$DATA" | grep -c '^done\.')" -eq "$NWORKERS" ]; }

# Sum up the workers' counts: CYC_OPS, CYC_TMO, UNEXPECTED; print them.
tally() {
	local f kind res n line k
	declare -A count=() bykind=()
	CYC_OPS=0 CYC_TMO=0 UNEXPECTED=
	for f in "$DATA"/res.*; do
		[ -e "$f" ] || continue
		while read -r kind res n; do
			case $kind in
			'#ops') CYC_OPS=$((CYC_OPS + res)); continue ;;
			'#timeouts') CYC_TMO=$((CYC_TMO + res)); continue ;;
			esac
			count["$kind $res"]=$(( ${count["$kind $res"]:-0} + n ))
		done < "$f"
	done
	for k in $(printf '%s\n' "${!count[@]}" | tr ' ' '=' | sort); do
		kind=${k%%=*} res=${k#*=}
		[ "$res" = TIMEOUT ] && continue
		bykind[$kind]+=" $res=${count["$kind $res"]}"
		allowed "$kind" "$res" || UNEXPECTED+=" $kind:$res(${count["$kind $res"]})"
	done
	[[ " $STRESS_WORKERS " != *" fds "* ]] || [ "$(cat "$DATA/fds.rc" 2>/dev/null)" = 0 ] || { CYC_TMO=$((CYC_TMO + 1)); UNEXPECTED+=" fds-worker-rc:$(cat "$DATA/fds.rc" 2>/dev/null)"; }
	for kind in $(printf '%s\n' "${!bykind[@]}" | sort); do
		line+=" $kind[${bykind[$kind]# }]"
	done
	info "$PROF cycle $CYC results:$line"
}

# The kernel memory that outlives a group's tasks, its children and
# force_empty: the page-cache tracer's estimate (tree nodes, buffer heads)
# for pages a task of ours faulted in that the host still caches (the
# kernel keeps those nodes too), charged in pages per group; none without
# the tracer. A removed child's structures must not be left (from 5.9 its
# kernel memory goes to its parent: nothing but pages keeps it).
tracer_kmem() {
	"$CTL" status -m "$MNT" 2> /dev/null | awk '$1 == "page_cache_kmem_pages" { n = $2 } END { print n + 0 }'
}
kmem_left() {
	local k
	k=$(rd "$MNT/$1/memory.kmem.usage_in_bytes")
	[[ "$k" =~ ^[0-9]+$ ]] && (( k <= $(tracer_kmem) * 4096 ))
}

# Everything a cycle leaves: tasks gone, anon gone, hierarchy sums, rmdir.
final_state() {
	local g p c u m s sum kids tag="$PROF cycle $CYC"
	kill_hogs
	no_tasks() {
		local g
		for g in $(existing); do [ -z "$(rd "$MNT/$g/tasks")" ] || return 1; done
	}
	wait_until 10 no_tasks && ok || bad "$tag: tasks still listed after every task ended"
	# (exits reach the engine asynchronously: the checks below come after)
	wait_until 10 root_rss0
	for g in $(existing); do
		expect "$tag: /$g: no anon left (rss total_rss swap total_swap)" \
			"$(stat_key "$g" rss) $(stat_key "$g" total_rss) $(stat_key "$g" swap) $(stat_key "$g" total_swap)" "0 0 0 0"
		m=$(rd "$MNT/$g/memory.memsw.usage_in_bytes")
		u=$(rd "$MNT/$g/memory.usage_in_bytes")
		[[ "$u" =~ ^[0-9]+$ && "$m" =~ ^[0-9]+$ ]] && (( u >= 0 && m >= u )) && ok ||
			bad "$tag: /$g: usage $u, memsw usage $m (want 0 <= usage <= memsw)"
	done
	# a parent with use_hierarchy 1 holds at least its children's sum; the
	# parent is read first (with no task left, usage only goes down)
	for p in "" $(existing); do
		kids=()
		for c in $(existing); do [ "$(dirname "/$c")" = "/$p" ] && kids+=("$c"); done
		[ "${#kids[@]}" -gt 0 ] || continue
		s=$(stat_key "$p" total_cache)
		for c in "${kids[@]}"; do
			(( s >= $(stat_key "$c" total_cache) )) && ok || bad "$tag: total_cache of /$p below its child /$c's"
		done
		[ -n "$p" ] && [ "$(rd "$MNT/$p/memory.use_hierarchy")" = 1 ] || continue
		u=$(rd "$MNT/$p/memory.usage_in_bytes")
		sum=0
		for c in "${kids[@]}"; do sum=$(( sum + $(rd "$MNT/$c/memory.usage_in_bytes") )); done
		(( u >= sum )) && ok || bad "$tag: /$p (use_hierarchy 1) usage $u below its children's sum $sum (${kids[*]})"
	done
	for g in "${DEEPEST_FIRST[@]}"; do
		[ -d "$MNT/$g" ] || continue
		# every child removed, every task and fd gone: once force_empty
		# has taken the page cache that kept removed children alive,
		# nothing is left of them (their structures' kernel memory)
		timeout "$OP_LIMIT" "$WR" "$MNT/$g/memory.force_empty" 1 > /dev/null
		# (as on the kernel, a removed child's structures go after the
		# last of its charges, which an exit gives back asynchronously)
		wait_until 10 kmem_left "$g"
		kmem_left "$g" && ok ||
			bad "$tag: /$g: kmem once its children are gone and force_empty ran:" \
				"$(rd "$MNT/$g/memory.kmem.usage_in_bytes"), the tracer's estimates $(tracer_kmem) pages"
		expect "$tag: rmdir /$g" "$(timeout "$OP_LIMIT" perl -e "$DIROP" rmdir "$MNT/$g")" OK
	done
	expect "$tag: no group left" "$(timeout "$OP_LIMIT" ls "$MNT" | grep -cvE '^(cgroup|memory|tasks|notify|release)')" 0
	expect "$tag: root total_rss" "$(stat_key "" total_rss)" 0
}

SAN_BEFORE=
[ -n "${MEMCGFS_SANLOG:-}" ] && SAN_BEFORE=$(ls "$MEMCGFS_SANLOG" 2>/dev/null)
san_check() {
	[ -n "${MEMCGFS_SANLOG:-}" ] || return 0
	local now new
	now=$(ls "$MEMCGFS_SANLOG" 2>/dev/null)
	new=$(comm -13 <(echo "$SAN_BEFORE" | sort) <(echo "$now" | sort) | grep .)
	if [ -n "$new" ]; then
		bad "$1: sanitizer reports: $(echo $new)"
		for f in $new; do head -n 40 "$MEMCGFS_SANLOG/$f" >&2; done
	else
		ok
	fi
	SAN_BEFORE=$now
}

# The RSS allowance: 8 MiB of allocator noise; under ASan also its
# quarantine of freed memory (kept to catch use-after-free: 256 MiB unless
# ASAN_OPTIONS says otherwise), under TSan the shadow of that noise (2.5
# bytes of shadow and metadata for each byte of the heap it touches first:
# the plain pass grows by under 1 MiB a cycle, TSan's by up to 11) and
# about 4 MiB of its own state for each thread the daemon has more than in
# the first cycle (the FUSE loop's pool of workers only grows). The plain
# pass is the one that holds a leak to 8 MiB.
SAN_RSS_FIXED=0 SAN_RSS_PER_THREAD=0
if grep -q -a __asan_init "$MEMCGFS"; then
	q=$(echo "${ASAN_OPTIONS:-}" | tr ':' '\n' | sed -n 's/^quarantine_size_mb=//p' | tail -n1)
	SAN_RSS_FIXED=$(( ${q:-256} * 1024 ))
elif grep -q -a __tsan_init "$MEMCGFS"; then
	SAN_RSS_FIXED=$(( 8192 * 5 / 2 ))
	SAN_RSS_PER_THREAD=4096
fi
T0=$SECONDS
info "profiles [$STRESS_PROFILES], $STRESS_CYCLES cycles of ${CYCLE_SECS}s each, seed $STRESS_SEED"
for PROF in $STRESS_PROFILES; do
	PKV=$(kv "$PROF")
	MOVE_CHARGE=$(( PKV <= 6012 ))
	mount_fs_fg "$DATA/daemon.$PROF.log" "kernel=$PROF,memory=2G,swap=512M" || continue
	DPID=$(worker_pid "$MNT")     # (FG_PID is its supervisor)
	ROOT_FILES=($(ls "$MNT"))
	mkdir "$MNT/warm"
	CHILD_FILES=($(ls "$MNT/warm" | grep -v '^warm$'))
	# the profile's answer to charge moving, and a first background
	# reclaim (its workers start with their first work and stay)
	expect "$PROF: move_charge_at_immigrate 3" "$("$WR" "$MNT/warm/memory.move_charge_at_immigrate" 3)" \
		"$( ((MOVE_CHARGE)) && echo OK || echo EINVAL)"
	echo 64M > "$MNT/warm/memory.limit_in_bytes"
	echo 4M > "$MNT/warm/memory.high_watermark_in_bytes"
	echo 2M > "$MNT/warm/memory.low_watermark_in_bytes"
	timeout 10 "$CTL" sim -m "$MNT" -g /warm -e 'file warmf 8M' -e 'map warmf m' -e 'touch m seq'
	expect "$PROF: warm-up task" "$?" 0
	wait_until 5 sh -c "[ -z \"\$(cat $MNT/warm/tasks)\" ]"
	rmdir "$MNT/warm"
	# found by this test: at a limit of 0 a task that charges anything is
	# the OOM victim even with nothing charged yet (§11.10); the engine
	# answered "err out of memory" instead
	fdz=$(daemon_fds)
	mkdir "$MNT/zero"
	echo 0 > "$MNT/zero/memory.limit_in_bytes"
	{ timeout 10 "$CTL" sim -m "$MNT" -g /zero -e 'alloc anon h 1M' -e 'touch h seq write'; } 2> /dev/null
	expect "$PROF: limit 0: the charging task is killed (§11.10)" "$?" 137
	expect "$PROF: limit 0: one kill counted" "$(awk '$1 == "oom_kill" { print $2 }' "$MNT/zero/memory.oom_control")" 1
	wait_until 5 sh -c "[ -z \"\$(cat $MNT/zero/tasks)\" ]"
	rmdir "$MNT/zero"
	# (the engine's thread that frees removed groups' structures starts
	# with the first child removed: before the cycles' baseline too)
	mkdir "$MNT/warm" "$MNT/warm/c" && rmdir "$MNT/warm/c" "$MNT/warm"
	# the killed task's connection and pidfds are closed before the
	# cycles' baseline is taken
	wait_until 5 sh -c "[ \$(ls /proc/$DPID/fd | wc -l) -le $fdz ]" ||
		bad "$PROF: the limit-0 task's fds stayed: $(daemon_fds), $fdz before"
	RSS=() THR=()
	unset allow
	for CYC in $(seq "$STRESS_CYCLES"); do
		rm -f "$DATA"/res.* "$DATA"/done.* "$DATA"/odd.* "$DATA"/fds.rc
		fds0=$(daemon_fds)
		read -r thr0 fuse0 <<< "$(daemon_threads)"
		t_start=$(now_ms)
		start_workers $(( STRESS_SEED * 1000 + PKV + CYC * 100 ))
		wait_until $(( CYCLE_SECS + 40 )) workers_done && ok ||
			bad "$PROF cycle $CYC: workers still running $((CYCLE_SECS + 40))s after they should have stopped: $(ls "$DATA" | grep done | tr '\n' ' ')"
		stop_all
		t_workers=$(now_ms)
		tally
		(( CYC_OPS > 0 )) && ok || bad "$PROF cycle $CYC: no operation done"
		expect "$PROF cycle $CYC: operations timed out" "$CYC_TMO" 0
		expect "$PROF cycle $CYC: unexpected results" "${UNEXPECTED# }" ""
		[ -z "$UNEXPECTED" ] || cat "$DATA"/odd.* >&2
		if ! daemon_ok; then
			bad "$PROF cycle $CYC: the daemon died or stopped answering"
			daemon_end "$DATA/daemon.$PROF.log" >&2
			break
		fi
		ok
		final_state
		t_final=$(now_ms)
		# (event registrations whose eventfd is closed, and the pidfds
		# of their holders, go with the reaper's next round: 500 ms)
		fds_back() { [ "$(daemon_fds)" -le "$fds0" ]; }
		wait_until 10 fds_back
		(( $(daemon_fds) <= fds0 + 2 )) && ok || bad "$PROF cycle $CYC: fds $fds0 before, $(daemon_fds) after"
		thr_back() { local t f; read -r t f <<< "$(daemon_threads)"; (( t - f <= thr0 - fuse0 + 1 )); }
		wait_until 10 thr_back && ok ||
			bad "$PROF cycle $CYC: threads besides idle FUSE workers: $((thr0 - fuse0)) before, $(daemon_threads) after"
		read -r thr fuse <<< "$(daemon_threads)"
		(( fuse <= 64 )) && ok || bad "$PROF cycle $CYC: $fuse idle FUSE workers (the loop's maximum is 64)"
		RSS+=("$(daemon_rss_kb)")
		THR+=("$thr")
		t_end=$(now_ms)
		info "$PROF cycle $CYC: ops $CYC_OPS, timeouts $CYC_TMO, fds $fds0 -> $(daemon_fds)," \
			"threads $thr0 -> $thr (idle FUSE workers $fuse0 -> $fuse), rss ${RSS[-1]} kB;" \
			"took $((t_end - t_start)) ms (workers $((t_workers - t_start)), final state $((t_final - t_workers)), leaks $((t_end - t_final)))"
	done
	if daemon_ok && [ "${#RSS[@]}" -ge 2 ]; then
		allow=$(( 8192 + SAN_RSS_FIXED + SAN_RSS_PER_THREAD * (${THR[-1]} > ${THR[0]} ? ${THR[-1]} - ${THR[0]} : 0) ))
		(( ${RSS[-1]} <= ${RSS[0]} + allow )) && ok ||
			bad "$PROF: the daemon's RSS keeps growing over the cycles: ${RSS[*]} kB (allowed: +$allow kB)"
	fi
	info "$PROF: daemon rss per cycle: ${RSS[*]} kB (allowed growth ${allow:-0} kB), threads per cycle: ${THR[*]}"
	umount_fs
	daemon_gone "$DPID" && ok || bad "$PROF: the daemon did not exit at unmount"
	san_check "$PROF"
done
info "done in $((SECONDS - T0))s"
summary
