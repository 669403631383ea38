#!/usr/bin/env bash
# run.sh: runs every integration test script (t_*.sh) and prints the total
# as "N passed, N failed". Needs root and /dev/fuse.
set -u
here=$(cd "$(dirname "$0")" && pwd)
pass=0
fail=0
[ -n "${MEMCGFS_SANLOG:-}" ] && rm -rf "$MEMCGFS_SANLOG"
scripts=0
for t in "$here"/t_*.sh; do
	out=$(bash "$t" 2>&1)
	rc=$?
	echo "$out"
	line=$(echo "$out" | grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed$' | tail -n1)
	p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	if [ -z "$line" ]; then
		echo "$(basename "$t"): no summary (exit $rc)"
		f=1; p=0
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
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
