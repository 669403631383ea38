#!/bin/bash
# run.sh: the host matrix. Boots Debian's kernels under qemu (vm.sh), one
# guest per cell, and runs every guest test (guest/g_*.sh, or those named
# in HOSTS_TESTS: g_NAME of guest/, t_NAME of the integration tests, run
# there as they are) there against this build; prints each test's summary
# with its cell, what the guests said of their features ("feature KEY
# VALUE" lines), and the total as "hosts: N passed, N failed".
#   run.sh BUILD [CELL...]     CELL is SERIES/LAYOUT: 6.1/v2 (the default
#                              cells: 6.1/v2 6.12/v2), 6.1/v1, 6.12/v1
# Results: BUILD/hosts/CELL/ (the guest's output.log, console.log, rc) and
# BUILD/hosts/results.tsv (cell, test, passed, failed, seconds) and
# BUILD/hosts/features.tsv (cell, key, value). A cell whose guest gives no
# result counts one failure; so does, for the default cells and tests, a
# README table of kernels that is not this run's (table.sh). Needs root (qemu, mkfs of the test disk);
# writes nothing outside BUILD/hosts and the initramfs cache (vm.sh).
# HOSTS_JOBS: guests at once (1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD [CELL...]}" && pwd)
shift
cells=${*:-6.1/v2 6.12/v2}
# every guest test, and the integration tests of what a host's kernel
# decides: FUSE and its notifications, pidfds, the process connector and
# seccomp notification (events, the stand-ins, memcgfs-run's view, crun
# and runc containers)
tests=${HOSTS_TESTS:-$(cd "$here/guest" && ls g_*.sh | sed 's/\.sh$//') t_events t_standin t_run t_runtime}
per_test=${HOSTS_TEST_LIMIT:-600}
out=$build/hosts
mkdir -p "$out"
printf 'cell\ttest\tpassed\tfailed\tseconds\n' > "$out/results.tsv"
printf 'cell\tkey\tvalue\n' > "$out/features.tsv"
pass=0 fail=0
jobs=${HOSTS_JOBS:-1}
# start CELL: its guest, in the background (its status in CELL's dir)
start() {
	local cell=$1 series=${1%/*} layout=${1#*/} dir kver t0
	dir=$out/${series}-$layout
	rm -rf "$dir"
	mkdir -p "$dir"
	if ! kver=$("$here/kernels.sh" kver "$series"); then
		echo "$cell: FAIL: no kernel of series $series (make deps)" > "$dir/setup"
		return
	fi
	# the page-cache tests' disk: ext4 on virtio, as a real host's
	truncate -s 512M "$dir/disk.img" && mkfs.ext4 -q -F "$dir/disk.img" ||
		{ echo "$cell: FAIL: no test disk" > "$dir/setup"; return; }
	# the job: each test under its limit, its output, its summary line
	{
		echo "export MEMCGFS_BUILD='$build' HOSTS_CELL='$cell' HOSTS_KVER='$kver' HOSTS_LAYOUT='$layout'"
		echo "mkdir -p /var/tmp/disk && mount /dev/vda /var/tmp/disk && export HOSTS_DISK=/var/tmp/disk"
		echo "echo \"guest: \$(uname -r), \$(awk '\$3 ~ /^cgroup/ { print \$3, \$2 }' /proc/mounts | tr '\n' ' ')\""
		for t in $tests; do
			echo "t0=\$SECONDS"
			case $t in
			t_*) script=$here/../integration/$t.sh ;;     # an integration test, as it is
			*) script=$here/guest/$t.sh ;;
			esac
			echo "timeout -k 10 $per_test bash '$script'; rc=\$?"
			echo "echo \"$t.sh: \$((SECONDS - t0)) s (exit \$rc)\""
		done
	} > "$dir/job"
	(
		t0=$SECONDS
		for try in 1 2; do
			"$here/vm.sh" -k "$kver" -l "$layout" -t $(( per_test * $(echo $tests | wc -w) + 60 )) \
				-d "$dir/disk.img" -o "$dir" "$dir/job" >> "$dir/vm.log" 2>&1
			rc=$?
			# The emulator's one known fault: a vCPU that runs code the
			# kernel has just patched (a tracepoint switched on as the
			# daemon loads its eBPF programs) as it was, and traps on the
			# patch's int3 after the patching ended ("Oops: int3", then a
			# panic): the cell runs once more, and says so
			grep -q 'Oops: int3' "$dir/console.log" 2> /dev/null && [ $try = 1 ] || break
			echo "$cell: the guest's kernel trapped on a code patch under emulation (Oops: int3): once more" |
				tee -a "$dir/vm.log"
			cp "$dir/console.log" "$dir/console.int3.log"
			truncate -s 512M "$dir/disk.img" && mkfs.ext4 -q -F "$dir/disk.img" || break
		done
		rm -f "$dir/disk.img"
		echo "== $cell ($kver, layout $layout): guest exit $rc, $((SECONDS - t0)) s" > "$dir/done"
	) &
}
# HOSTS_JOBS guests at a time (1: each is a TCG guest of two vCPUs, which
# keep both of this machine's cores busy: two at once took as long), each
# cell reported in order once all are done
running=0
for cell in $cells; do
	if (( running >= jobs )); then
		wait -n
		running=$((running - 1))
	fi
	start "$cell"
	running=$((running + 1))
done
wait
for cell in $cells; do
	series=${cell%/*} layout=${cell#*/}
	dir=$out/${series}-$layout
	if [ -f "$dir/setup" ]; then
		cat "$dir/setup"
		fail=$((fail + 1))
		continue
	fi
	cat "$dir/vm.log" "$dir/done" 2> /dev/null
	log=$dir/output.log
	[ -f "$log" ] && grep -E '^(FAIL|guest|feature)' "$log" | sed "s|^|$cell: |"
	for t in $tests; do
		line=$(grep -E "^$t\.sh: [0-9]+ passed, [0-9]+ failed$" "$log" 2> /dev/null | tail -n 1)
		secs=$(sed -n "s/^$t\.sh: \([0-9]*\) s (exit .*/\1/p" "$log" 2> /dev/null | tail -n 1)
		if [ -z "$line" ]; then
			echo "$cell: $t.sh: FAIL: no summary"
			p=0 f=1
		else
			echo "$cell: $line (${secs:-?} s)"
			p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
			f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
		fi
		printf '%s\t%s\t%s\t%s\t%s\n' "$cell" "$t" "$p" "$f" "${secs:-}" >> "$out/results.tsv"
		pass=$((pass + p))
		fail=$((fail + f))
	done
	[ -f "$log" ] && sed -n 's/^feature \([^ ]*\) \(.*\)$/\1\t\2/p' "$log" | sed "s|^|$cell\t|" >> "$out/features.tsv"
done
# the README's table of kernels and layouts is the default matrix's: this
# run's, if it is one (table.sh --update after a run writes it)
if [ -z "${HOSTS_TESTS:-}" ] && [ "$cells" = "6.1/v2 6.12/v2" ]; then
	"$here/table.sh" --check "$out" || fail=$((fail + 1))
fi
echo "hosts: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
