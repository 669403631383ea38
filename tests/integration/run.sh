#!/usr/bin/env bash
# run.sh: runs every integration test script, each under a time limit, and
# prints the total as "N passed, N failed". Needs root and /dev/fuse.
# The scripts it expects are listed below: a listed script that is missing,
# a t_*.sh that is not listed, a script without its summary line and a
# script that outlives its limit all fail the run. Each script's time is
# printed beside its summary. A limit is a hang detector, not a benchmark:
# generous on a loaded 2-core machine, three times that under the
# sanitizers (MEMCGFS_SANLOG set).
set -u
here=$(cd "$(dirname "$0")" && pwd)
expected="t_acl t_bench t_cache t_cache_noepoch t_crash t_docker t_events t_files t_mirror t_mount t_package t_pcmincore t_pcscan t_perm_matrix t_podman
	  t_profiles t_readme t_release t_replay t_restart t_run t_runmount t_runtime t_security t_sim t_standin
	  t_stress t_tasks t_watermarks"
# seconds (plain build); the default for the others
declare -A limit=([t_bench]=900 [t_stress]=900 [t_perm_matrix]=900 [t_package]=900 [t_run]=900
		  [t_runmount]=900)
default_limit=600
scale=1
[ -n "${MEMCGFS_SANLOG:-}" ] && scale=3
pass=0
fail=0
[ -n "${MEMCGFS_SANLOG:-}" ] && rm -rf "$MEMCGFS_SANLOG"
for t in "$here"/t_*.sh; do
	n=$(basename "$t" .sh)
	case " $(echo $expected) " in
	*" $n "*) ;;
	*) echo "$n.sh: not in run.sh's list of expected scripts"; fail=$((fail + 1)) ;;
	esac
done
scripts=0
for n in $expected; do
	t=$here/$n.sh
	if [ ! -f "$t" ]; then
		echo "$n.sh: expected, but missing"
		fail=$((fail + 1))
		continue
	fi
	secs=$(( ${limit[$n]:-$default_limit} * scale ))
	t0=$SECONDS
	out=$(timeout --kill-after=30 "$secs" bash "$t" 2>&1)
	rc=$?
	echo "$out"
	line=$(echo "$out" | grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed$' | tail -n1)
	p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "$n.sh: FAIL: still running after its limit of $secs s: ended"
		f=$(( ${f:-0} + 1 )); p=${p:-0}
	elif [ -z "$line" ]; then
		echo "$n.sh: no summary (exit $rc)"
		f=1; p=0
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	echo "$n.sh: $((SECONDS - t0)) s (limit $secs)"
	pass=$((pass + p))
	fail=$((fail + f))
	scripts=$((scripts + 1))
done
if [ -n "${MEMCGFS_SANLOG:-}" ] && ls "$MEMCGFS_SANLOG"/* >/dev/null 2>&1; then
	echo "sanitizer reports:"
	cat "$MEMCGFS_SANLOG"/*
	fail=$((fail + 1))
fi
echo "($scripts integration scripts)"
echo "integration: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
