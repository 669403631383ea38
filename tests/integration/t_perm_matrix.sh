# t_perm_matrix.sh: the permission matrix (contract §1.2, §1.3, §2.1, §4,
# §6, §7; docs/files.md §2, §4.11-§4.13, §5, §6). Under each profile, as
# non-root users, every operation on every entry of the root, a group owned
# by a user (own), a group delegated by ACL entries (del) and a group shared
# with a Unix group (grp). Each cell's expected outcome comes from the
# tables below and the kernel's permission rules (default_permissions),
# never from what the mount shows; every cell is also checked for leaving
# nothing changed unless it was allowed (and undone). Failing cells are
# printed one per line, as "PROFILE DIR FILE ACTOR OP: what happened".
# perm_probe.py does the operations for one user on one directory per run.
# Environment: MATRIX_OUT=FILE writes the markdown matrix of
# docs/security.md (perm_matrix.py); PERM_PROFILES="4.19 6.18" narrows the
# profiles; PERM_JOBS=N runs N profiles at once (default 2); PERM_KEEP=FILE
# keeps the raw cells (PROFILE DIR FILE ACTOR OP RESULT).
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
PROBE="$HERE/perm_probe.py"
CTL="$MEMCGFS_BUILD/memcgctl"
PY=/usr/bin/python3          # the test users cannot run root's pyenv shims
[ -x "$PY" ] || PY=$(command -v python3)
T0=$SECONDS

# ---- tables ------------------------------------------------------------------

read -r -a PROFILES <<< "${PERM_PROFILES:-4.19 5.10 6.12 6.18}"

# Actors: no root among them. A owns `own`, B is the ACL-granted user of
# `del`, M is a member (supplementary group) of `grp`'s group, C has no
# rights anywhere. Each acts on every directory, so each is also "others".
ACTORS=(A B C M)
declare -A USER_OF=([A]=memcgfs-test [B]=memcgfs-test2 [C]=memcgfs-test3 [M]=memcgfs-test4)
SHARED_GROUP=memcgfs-grp
# Whose process is "foreign" to each actor (another non-root test user).
declare -A FOREIGN_OF=([A]=C [B]=C [C]=A [M]=A)

# Directories: name, and the order the actors go in (those who may move
# their own process in go last, so that the group's counters stay still
# for the others).
DIRS=(root own del grp)
declare -A DIR_ACTORS=([root]="A B C M" [own]="B C M A" [del]="A C M B" [grp]="A B C M")
declare -A DIR_LABEL=([root]="root" [own]="own (chown A)" [del]="del (ACL u:B:rw)"
	[grp]="grp (group of M, g+w)")

# Setup: what root does after mkdir -m 755 (applied to the mount and to the
# model alike). "*" is every control file of the directory, "." the
# directory. own is what an administrator delegating does (contract §6.2):
# the directory, tasks and cgroup.procs; cgroup.event_control stays root's.
# The root's release_agent is given to A as well: from 5.17 it needs
# CAP_SYS_ADMIN whoever owns it (§3.19, §6.2); before, owning it was enough.
SETUP=(
	"root release_agent chown A"
	"own . chown A"
	"own tasks chown A"
	"own cgroup.procs chown A"
	"del memory.high_watermark_in_bytes acl B 6"
	"del memory.low_watermark_in_bytes acl B 6"
	"del memory.soft_limit_in_bytes acl B 6"
	"grp . chgrp $SHARED_GROUP"
	"grp * chgrp $SHARED_GROUP"
	"grp . chmod-gw"
	"grp * chmod-gw"
)

# Natural modes (contract §1.1, docs/files.md §9 for the watermark files);
# cgroup.event_control is 0222 before 6.18 and 0200 from it (§7).
declare -A NAT=(
	[cgroup.procs]=644 [cgroup.clone_children]=644 [cgroup.sane_behavior]=444
	[tasks]=644 [notify_on_release]=644 [release_agent]=644
	[memory.usage_in_bytes]=444 [memory.max_usage_in_bytes]=644
	[memory.limit_in_bytes]=644 [memory.soft_limit_in_bytes]=644
	[memory.failcnt]=644 [memory.stat]=444 [memory.force_empty]=200
	[memory.use_hierarchy]=644 [cgroup.event_control]=EV
	[memory.swappiness]=644 [memory.move_charge_at_immigrate]=644
	[memory.oom_control]=644 [memory.pressure_level]=444 [memory.numa_stat]=444
	[memory.kmem.limit_in_bytes]=644 [memory.kmem.usage_in_bytes]=444
	[memory.kmem.failcnt]=644 [memory.kmem.max_usage_in_bytes]=644
	[memory.kmem.slabinfo]=444 [memory.kmem.tcp.limit_in_bytes]=644
	[memory.kmem.tcp.usage_in_bytes]=444 [memory.kmem.tcp.failcnt]=644
	[memory.kmem.tcp.max_usage_in_bytes]=644 [memory.memsw.usage_in_bytes]=444
	[memory.memsw.max_usage_in_bytes]=644 [memory.memsw.limit_in_bytes]=644
	[memory.memsw.failcnt]=644
	[memory.high_watermark_in_bytes]=644 [memory.low_watermark_in_bytes]=644
)

# The valid value each write uses, and how an allowed write is undone:
# "=" writes back what was read, "-" needs no undo (resets, triggers and
# values equal to the current one). PID is the actor's own process, EVENT a
# threshold registration. Read-only files get "0" (refused either way).
VALUES="
cgroup.procs PID -
tasks PID -
cgroup.clone_children 1 0
notify_on_release 1 0
release_agent /nonexistent-agent =
memory.max_usage_in_bytes 0 -
memory.limit_in_bytes 1G -1
memory.soft_limit_in_bytes 1M -1
memory.failcnt 0 -
memory.force_empty 0 -
memory.use_hierarchy = -
cgroup.event_control EVENT -
memory.swappiness 30 =
memory.move_charge_at_immigrate 0 -
memory.oom_control 1 0
memory.kmem.limit_in_bytes -1 -
memory.kmem.failcnt 0 -
memory.kmem.max_usage_in_bytes 0 -
memory.kmem.tcp.limit_in_bytes -1 -
memory.kmem.tcp.failcnt 0 -
memory.kmem.tcp.max_usage_in_bytes 0 -
memory.memsw.limit_in_bytes -1 -
memory.memsw.max_usage_in_bytes 0 -
memory.memsw.failcnt 0 -
memory.high_watermark_in_bytes 1G -1
memory.low_watermark_in_bytes 512M -1
"

# Operations per entry (the probe's names).
FILE_OPS="r w otrunc truncate chmod chown acl xuser xtrusted"
DIR_OPS="r chmod chown acl xuser xtrusted mkdir rename rmdir"

# Cells that fail today because of a real hole: "PROFILE DIR FILE ACTOR OP"
# (globs allowed). They are reported as "known hole" and not counted, so
# that main stays green until the fix lands; the expectation stays right.
KNOWN_HOLES=(
)

# ---- users ---------------------------------------------------------------------

ensure_users
groupadd -f "$SHARED_GROUP"
id memcgfs-test3 >/dev/null 2>&1 || useradd -M -s /bin/sh memcgfs-test3
id memcgfs-test4 >/dev/null 2>&1 || useradd -M -s /bin/sh memcgfs-test4
id -nG memcgfs-test4 | tr ' ' '\n' | grep -qx "$SHARED_GROUP" || usermod -aG "$SHARED_GROUP" memcgfs-test4
declare -A AUID AGIDS
for a in "${ACTORS[@]}"; do
	AUID[$a]=$(id -u "${USER_OF[$a]}")
	AGIDS[$a]=" $(id -G "${USER_OF[$a]}") "
done
GRP_GID=$(getent group "$SHARED_GROUP" | cut -d: -f3)

# run_as ACTOR CMD...: as the actor, with its supplementary groups (lib.sh's
# as_user clears them, and M's membership is the point).
run_as() {
	local u=${USER_OF[$1]}
	shift
	setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --init-groups -- "$@"
}

# ---- the model -------------------------------------------------------------------

# Per "dir/file" (file "." is the directory): owner uid, group gid, mode
# (decimal), and when there is an ACL: its group-obj perm, mask and named
# user entries ("uid:perm ...").
declare -A MU MG MM MGO MMASK MNAMED

ver() { local a=${1%%.*} b=${1#*.}; VER=$((a * 100 + b)); }

model_init() {   # DIR FILE OCTALMODE
	local k="$1/$2"
	MU[$k]=0; MG[$k]=0; MM[$k]=$((8#$3)); MGO[$k]=-1; MMASK[$k]=7; MNAMED[$k]=
}

model_apply() {  # DIR FILE OP ARG PERM
	local k="$1/$2" op=$3 arg=$4 perm=${5:-}
	case $op in
	chown) MU[$k]=${AUID[$arg]} ;;
	chgrp) MG[$k]=$GRP_GID ;;
	chmod-gw)
		MM[$k]=$(( MM[$k] | 8#020 ))
		[ "${MGO[$k]}" -ge 0 ] && MMASK[$k]=$(( (MM[$k] >> 3) & 7 )) ;;
	acl)
		[ "${MGO[$k]}" -lt 0 ] && MGO[$k]=$(( (MM[$k] >> 3) & 7 ))
		MNAMED[$k]="${MNAMED[$k]} ${AUID[$arg]}:$perm"
		local m=${MGO[$k]} e
		for e in ${MNAMED[$k]}; do m=$(( m | ${e#*:} )); done
		MMASK[$k]=$m     # setfacl -m recalculates the mask
		MM[$k]=$(( (MM[$k] & ~8#070) | (m << 3) )) ;;
	esac
}

# fs_apply DIR FILE OP ARG PERM: the same change on the mount, as root.
fs_apply() {
	local p
	p=$(dpath "$1")
	[ "$2" = . ] || p=$p/$2
	case $3 in
	chown) chown "${USER_OF[$4]}" "$p" ;;
	chgrp) chgrp "$SHARED_GROUP" "$p" ;;
	chmod-gw) chmod g+w "$p" ;;
	acl) setfacl -m "u:${USER_OF[$4]}:$( (($5 & 4)) && echo r)$( (($5 & 2)) && echo w)" "$p" ;;
	*) bad "setup: unknown operation $3" ;;
	esac
}

# perm_bits ACTOR KEY: the POSIX permission bits the actor gets (PB):
# owner, then a named-user entry (under the mask), then the owning group
# (the group-obj entry under the mask), then other.
perm_bits() {
	local a=$1 k=$2 e
	if [ "${AUID[$a]}" = "${MU[$k]}" ]; then
		PB=$(( (MM[$k] >> 6) & 7 )); return
	fi
	for e in ${MNAMED[$k]}; do
		if [ "${e%%:*}" = "${AUID[$a]}" ]; then PB=$(( ${e#*:} & MMASK[$k] )); return; fi
	done
	if [[ "${AGIDS[$a]}" == *" ${MG[$k]} "* ]]; then
		if [ "${MGO[$k]}" -ge 0 ]; then PB=$(( MGO[$k] & MMASK[$k] )); else PB=$(( (MM[$k] >> 3) & 7 )); fi
		return
	fi
	PB=$(( MM[$k] & 7 ))
}

# write_result DIR FILE: what a permitted write of the VALUES entry gives
# (contract §3, §7; docs/files.md §1, §4).
write_result() {
	local d=$1 f=$2
	WRES=OK
	if [ "${NAT[$f]}" = 444 ]; then WRES=EINVAL; return; fi      # no write handler
	if [ "$d" = root ]; then
		case $f in
		memory.limit_in_bytes|memory.memsw.limit_in_bytes|memory.kmem.limit_in_bytes|\
		memory.kmem.tcp.limit_in_bytes|memory.oom_control|memory.force_empty|\
		memory.high_watermark_in_bytes|memory.low_watermark_in_bytes) WRES=EINVAL; return ;;
		esac
	fi
	case $f in
	memory.kmem.limit_in_bytes)   # 5.16..6.5: errno 524, carried as EOPNOTSUPP
		[ "$VER" -ge 516 ] && [ "$VER" -lt 606 ] && WRES=EOPNOTSUPP ;;
	release_agent)                # 5.17+: CAP_SYS_ADMIN of the opener
		[ "$VER" -ge 517 ] && WRES=EPERM ;;
	esac
}

# expect_cell DIR FILE ACTOR OP: the expected result (EXP).
expect_cell() {
	local d=$1 f=$2 a=$3 op=$4 k="$1/$2" own=0
	perm_bits "$a" "$k"
	[ "${AUID[$a]}" = "${MU[$k]}" ] && own=1
	case $op in
	r)
		if (( !(PB & 4) )); then EXP=EACCES
		else case $f in
			memory.pressure_level|memory.force_empty|cgroup.event_control) EXP=EINVAL ;;
			*) EXP=OK ;;
		esac; fi ;;
	w)
		if (( PB & 2 )); then write_result "$d" "$f"; EXP=$WRES; else EXP=EACCES; fi ;;
	otrunc|truncate)              # accepted no-ops for whoever may write
		(( PB & 2 )) && EXP=OK || EXP=EACCES ;;
	chmod|acl)                    # the owner (CAP_FOWNER: nobody here)
		(( own )) && EXP=OK || EXP=EPERM ;;
	chown) EXP=EPERM ;;           # CAP_CHOWN: nobody here
	xuser)                        # the kernel checks write permission, then the
		(( PB & 2 )) && EXP=EOPNOTSUPP || EXP=EACCES ;;   # daemon keeps only ACLs
	xtrusted) EXP=EPERM ;;        # CAP_SYS_ADMIN
	fuser|froot) EXP=EACCES ;;    # §6.1: by mode at open, else by the uid rule
	event)                        # write on event_control, read on the control file
		perm_bits "$a" "$d/cgroup.event_control"
		local pw=$PB
		perm_bits "$a" "$d/memory.oom_control"
		(( (pw & 2) && (PB & 4) )) && EXP=OK || EXP=EACCES ;;
	mkdir|rmdir|rename)           # write and search on the directory, no sticky bit
		(( (PB & 3) == 3 )) && EXP=OK || EXP=EACCES ;;
	*) EXP="?" ;;
	esac
}

# Which cells may change state when they are allowed (the rest must leave
# everything as it was, after the probe's undo).
may_change() {
	case "$2:$1" in
	w:tasks|w:cgroup.procs|rmdir:.) return 0 ;;
	esac
	return 1
}

# ---- reporting -------------------------------------------------------------------

RESULTS=$(mktemp /tmp/perm-matrix.XXXXXX)
HOLES=0

is_known_hole() {
	local key="$1" h
	for h in "${KNOWN_HOLES[@]}"; do
		# shellcheck disable=SC2053
		[[ "$key" == $h ]] && return 0
	done
	return 1
}

cell_fail() {   # KEY MESSAGE
	if is_known_hole "$1"; then
		HOLES=$((HOLES + 1))
		echo "known hole: $1: $2" >&2
	else
		bad "$1: $2"
	fi
}

# ---- one profile -------------------------------------------------------------------

dpath() { [ "$1" = root ] && echo "$MNT" || echo "$MNT/$1"; }

# check_batch PROF DIR ACTOR OUTPUT: compare every cell the probe printed.
check_batch() {
	local prof=$1 d=$2 a=$3 out=$4 f op res ch detail n=0 key
	while IFS=$'\t' read -r f op res ch detail; do
		[ -n "$f" ] || continue
		n=$((n + 1))
		key="$prof $d $f $a $op"
		expect_cell "$d" "$f" "$a" "$op"
		echo "$prof $d $f $a $op $res" >> "$RESULTS"
		if [ "$res" != "$EXP" ]; then
			if [ "$res" = OK ]; then
				cell_fail "$key" "UNAUTHORIZED: allowed, want $EXP ${detail}"
			else
				cell_fail "$key" "got $res, want $EXP ${detail}"
			fi
		elif [ "$ch" = 1 ] && ! { [ "$res" = OK ] && may_change "$f" "$op"; }; then
			if [ "$res" = OK ]; then
				cell_fail "$key" "allowed as expected, but left a change: $detail"
			else
				cell_fail "$key" "UNAUTHORIZED CHANGE: refused with $res, but $detail"
			fi
		else
			ok
		fi
	done <<< "$out"
	expect "$prof $d $a: cells probed" "$n" "${NCELLS[$d]}"
}

run_profile() {
	local prof=$1 d f a line k
	ver "$prof"
	mount_fs "kernel=$prof" || return 1
	mkdir -m 755 "$MNT/park" "$MNT/own" "$MNT/del" "$MNT/grp"
	for d in "${DIRS[@]}"; do mkdir -m 755 "$(dpath "$d")/pv"; done

	# the model of what root made, then the setup applied to both
	declare -gA FILES
	for d in "${DIRS[@]}"; do
		FILES[$d]=$(cd "$(dpath "$d")" && find . -maxdepth 1 -type f -printf '%f\n' | sort)
		model_init "$d" . 755
		for f in ${FILES[$d]}; do
			if [ -z "${NAT[$f]:-}" ]; then
				bad "$prof $d: no expectation for file $f"; continue
			fi
			local m=${NAT[$f]}
			[ "$m" = EV ] && { [ "$VER" -ge 618 ] && m=200 || m=222; }
			model_init "$d" "$f" "$m"
		done
	done
	model_init root . 555
	for line in "${SETUP[@]}"; do
		local -a w
		read -r -a w <<< "$line"     # (no glob: "*" is the table's)
		set -- "${w[@]}"
		local targets=$2
		[ "$2" = "*" ] && targets=${FILES[$1]}
		for f in $targets; do
			model_apply "$1" "$f" "$3" "${4:-}" "${5:-}"
			fs_apply "$1" "$f" "$3" "${4:-}" "${5:-}"
		done
	done
	# the model must describe what root set up (it is checked against the
	# contract's modes, not the other way round)
	local mism=0
	for d in "${DIRS[@]}"; do
		for f in . ${FILES[$d]}; do
			k="$d/$f"
			local p=$(dpath "$d"); [ "$f" = . ] || p=$p/$f
			[ "$(stat -c '%a %u %g' "$p")" = "$(printf '%o' "${MM[$k]}") ${MU[$k]} ${MG[$k]}" ] ||
				{ mism=$((mism + 1)); bad "$prof setup $k: mount shows $(stat -c '%a %u %g' "$p"), model $(printf '%o' "${MM[$k]}") ${MU[$k]} ${MG[$k]}"; }
			if [ -n "${MNAMED[$k]}" ]; then
				local want="" e
				for e in ${MNAMED[$k]}; do
					want+="user:${e%%:*}:$( ((${e#*:} & 4)) && echo r || echo -)$( ((${e#*:} & 2)) && echo w || echo -)$( ((${e#*:} & 1)) && echo x || echo -) "
				done
				[ "$(getfacl -cpn "$p" 2>/dev/null | grep '^user:[0-9]' | tr '\n' ' ')" = "$want" ] ||
					{ mism=$((mism + 1)); bad "$prof setup $k: ACL $(getfacl -cpn "$p" 2>/dev/null | grep '^user:[0-9]' | tr '\n' ' '), model $want"; }
			fi
		done
	done
	[ "$mism" -eq 0 ] && ok
	declare -gA NCELLS
	for d in "${DIRS[@]}"; do
		local n=$(( $(echo "${FILES[$d]}" | wc -w) * $(echo $FILE_OPS | wc -w) + $(echo $DIR_OPS | wc -w) + 4 + 1 ))
		NCELLS[$d]=$n
	done

	# the processes: each actor's and root's, parked in a child group so
	# that any move shows
	declare -gA SLEEPER
	for a in "${ACTORS[@]}"; do
		spawn_as_user "${USER_OF[$a]}" sleep 1000
		SLEEPER[$a]=$SPAWNED
	done
	sleep 1000 &
	SLEEPER[root]=$!
	for a in "${ACTORS[@]}" root; do
		wait_until 2 sh -c "grep -q '^Name:.*sleep' /proc/${SLEEPER[$a]}/status" ||
			bad "sleeper of $a did not start"
		echo "${SLEEPER[$a]}" > "$MNT/park/tasks"
	done

	local values
	values=$(mktemp /tmp/perm-values.XXXXXX)
	echo "$VALUES" > "$values"
	chmod 644 "$values"

	for d in "${DIRS[@]}"; do
		local dp before after out err
		dp=$(dpath "$d")
		before=$("$PY" -I "$PROBE" snapshot "$dp")
		for a in ${DIR_ACTORS[$d]}; do
			err=$(mktemp /tmp/perm-err.XXXXXX)
			chmod 666 "$err"
			out=$(PP_MNT=$MNT PP_DIR=$dp PP_PARK=$MNT/park PP_ACTOR=$a \
				PP_OWNPID=${SLEEPER[$a]} PP_FUSERPID=${SLEEPER[${FOREIGN_OF[$a]}]} \
				PP_FROOTPID=${SLEEPER[root]} PP_EVCTL=$EVCTL PP_SETFACL_UID=${AUID[$a]} \
				PP_VALUES=$values run_as "$a" "$PY" -I "$PROBE" probe 2>"$err")
			[ -s "$err" ] && { echo "probe $prof $d $a stderr:" >&2; cat "$err" >&2; }
			rm -f "$err"
			check_batch "$prof" "$d" "$a" "$out"
			# what allowed cells legitimately left: the actor's process
			# moved in, the victim group removed
			local moved=0
			grep -qx "${SLEEPER[$a]}" "$MNT/park/tasks" || moved=1
			expect_cell "$d" tasks "$a" w
			local want=$([ "$EXP" = OK ] && echo 1 || echo 0)
			expect_cell "$d" cgroup.procs "$a" w
			[ "$EXP" = OK ] && want=1
			expect "$prof $d $a: own process moved" "$moved" "$want"
			[ "$moved" = 1 ] && echo "${SLEEPER[$a]}" > "$MNT/park/tasks"
			[ -d "$dp/pv" ] || mkdir -m 755 "$dp/pv"
			after=$("$PY" -I "$PROBE" snapshot "$dp")
			if [ "$before" = "$after" ]; then ok; else
				cell_fail "$prof $d * $a batch" "state of $d changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -4 | tr '\n' ' ')"
			fi
			before=$after
		done
	done
	rm -f "$values"

	perm_socket_rows "$prof"

	for a in "${ACTORS[@]}" root; do kill "${SLEEPER[$a]}" 2>/dev/null; done
	for a in "${ACTORS[@]}" root; do wait "${SLEEPER[$a]}" 2>/dev/null; done
	umount_fs
}

# ---- the simulated-task socket ----------------------------------------------------
# Only what holds by construction while its policy is rewritten: a
# simulated task joins its group through the mount (memcgctl writes
# cgroup.procs), so `memcgctl sim -g G` works exactly for those who may
# write G/cgroup.procs, and C gets no simulated task into own or del, with
# or without -g. A refused run must leave G's usage, watermark, failcnt,
# rss and members as they were. Extend here.
sim_state() {
	local g=$MNT/$1
	echo "$(cat "$g/memory.usage_in_bytes") $(cat "$g/memory.max_usage_in_bytes") $(cat "$g/memory.failcnt") $(grep '^rss ' "$g/memory.stat") [$(tr '\n' ' ' < "$g/tasks")]"
}

perm_socket_rows() {
	local prof=$1 a g rc before after want max0
	for a in "${ACTORS[@]}"; do
		for g in own del grp; do
			echo 0 > "$MNT/$g/memory.max_usage_in_bytes"
			before=$(sim_state "$g")
			max0=$(cat "$MNT/$g/memory.max_usage_in_bytes")
			run_as "$a" "$CTL" sim -m "$MNT" -g "/$g" -e 'alloc anon h 1M' -e 'touch h seq write' \
				>/dev/null 2>&1
			rc=$?
			after=$(sim_state "$g")
			perm_bits "$a" "$g/cgroup.procs"
			want=$( ((PB & 2)) && echo OK || echo refused)
			echo "$prof $g . $a sim $([ $rc = 0 ] && echo OK || echo EACCES)" >> "$RESULTS"
			if [ "$want" = OK ]; then
				if [ "$rc" = 0 ] && [ $(( $(cat "$MNT/$g/memory.max_usage_in_bytes") - max0 )) -ge $((1 << 20)) ]; then
					ok
				else
					bad "$prof $g . $a sim: want a 1M task charged in $g, rc $rc, $before -> $after"
				fi
			elif [ "$rc" = 0 ]; then
				cell_fail "$prof $g . $a sim" "UNAUTHORIZED: sim -g /$g ran ($before -> $after)"
			elif [ "$before" != "$after" ]; then
				cell_fail "$prof $g . $a sim" "UNAUTHORIZED CHANGE: refused but $before -> $after"
			else
				ok
			fi
		done
	done
	# C without -g: its task is wherever C's process is (the root), never
	# in own or del
	local s_own s_del
	s_own=$(sim_state own); s_del=$(sim_state del)
	run_as C "$CTL" sim -m "$MNT" -e 'alloc anon h 1M' -e 'touch h seq write' >/dev/null 2>&1
	expect "$prof sim as C without a group runs" "$?" 0
	expect "$prof sim as C: nothing in own" "$(sim_state own)" "$s_own"
	expect "$prof sim as C: nothing in del" "$(sim_state del)" "$s_del"
}

# ---- the printed matrix -------------------------------------------------------------

file_class() {   # DIR FILE -> CLASS
	case $2 in
	.) CLASS="(directory)" ;;
	tasks|cgroup.procs) CLASS="tasks, cgroup.procs" ;;
	cgroup.event_control|memory.force_empty|memory.pressure_level|release_agent) CLASS=$2 ;;
	*)
		if [ "$1" = del ] && [ -n "$(printf '%s\n' "${SETUP[@]}" | awk -v f="$2" '$1 == "del" && $2 == f && $3 == "acl"')" ]; then
			CLASS="ACL-granted (watermarks, soft limit)"
		elif [ "${NAT[$2]}" = 444 ]; then CLASS="read-only (0444)"
		else CLASS="read-write (0644)"; fi ;;
	esac
}

write_matrix() {
	local out=$1 prof d f a op res classed
	classed=$(mktemp /tmp/perm-classed.XXXXXX)
	declare -A seen
	while read -r prof d f a op res; do
		if [ -z "${seen[$d/$f]:-}" ]; then file_class "$d" "$f"; seen[$d/$f]=$CLASS; fi
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$prof" "$d" "${seen[$d/$f]}" "$f" "$a" "$op" "$res"
	done < "$RESULTS" > "$classed"
	"$PY" -I "$HERE/perm_matrix.py" "$classed" "${PROFILES[*]}" "${DIRS[*]}" \
		"${DIR_LABEL[root]}" "${DIR_LABEL[own]}" "${DIR_LABEL[del]}" "${DIR_LABEL[grp]}" > "$out"
	rm -f "$classed"
}

# ---- main ----------------------------------------------------------------------------
# The profiles run in PERM_JOBS lanes at once (default 2), each with its own
# mount, processes, counters and results; a lane prints its failing cells
# and then its counts.

run_lane() {   # LANE PROFILE...
	local lane=$1 prof
	shift
	PASS=0; FAIL=0; HOLES=0
	RESULTS=$LANEDIR/results.$lane
	trap umount_fs EXIT
	for prof in "$@"; do
		run_profile "$prof"
	done
	echo "$PASS $FAIL $HOLES" > "$LANEDIR/counts.$lane"
}

LANEDIR=$(mktemp -d /tmp/perm-lanes.XXXXXX)
JOBS=${PERM_JOBS:-2}
[ "$JOBS" -ge 1 ] || JOBS=1
pids=()
for ((l = 0; l < JOBS; l++)); do
	mine=()
	for ((i = l; i < ${#PROFILES[@]}; i += JOBS)); do mine+=("${PROFILES[$i]}"); done
	[ ${#mine[@]} -gt 0 ] || continue
	run_lane "$l" "${mine[@]}" > "$LANEDIR/out.$l" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for ((l = 0; l < JOBS; l++)); do
	[ -f "$LANEDIR/out.$l" ] || continue
	cat "$LANEDIR/out.$l" >&2
	if [ -f "$LANEDIR/counts.$l" ]; then
		read -r p f h < "$LANEDIR/counts.$l"
		PASS=$((PASS + p)); FAIL=$((FAIL + f)); HOLES=$((HOLES + h))
	else
		bad "lane $l ended without its counts"
	fi
	cat "$LANEDIR/results.$l" >> "$RESULTS" 2>/dev/null
done
rm -rf "$LANEDIR"
[ -n "${MATRIX_OUT:-}" ] && write_matrix "$MATRIX_OUT"
[ -n "${PERM_KEEP:-}" ] && cp "$RESULTS" "$PERM_KEEP"
rm -f "$RESULTS"
[ "$HOLES" -gt 0 ] && echo "$HOLES known hole cells (KNOWN_HOLES)"
echo "run time: $((SECONDS - T0))s"
summary
