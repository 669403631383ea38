# t_bench.sh: `make bench`'s driver (bench/run.sh) leaves no mount and no
# process behind: when it is interrupted while a benchmark holds a mount,
# when a benchmark fails, and when a benchmark is killed before its own
# cleanup could run. Runs the real mount scripts against build directories
# of links: in "slow", memcgctl is a script that never ends (so that the
# mount stays up until the test acts), in "bad" one that fails at once; the
# driver gets scratch and output directories of its own.
. "$(dirname "$0")/lib.sh"
RUN="$(dirname "$0")/../../bench/run.sh"
fake=$(mktemp -d /tmp/memcgfs-t-bench.XXXXXX)
mkdir "$fake/tmp" "$fake/bad" "$fake/slow"
ln -s "$MEMCGFS_BUILD/memcgfs" "$fake/bad/memcgfs"
ln -s "$MEMCGFS_BUILD/memcgfs" "$fake/slow/memcgfs"
printf '#!/bin/sh\nexit 3\n' > "$fake/bad/memcgctl"
printf '#!/bin/sh\nwhile :; do sleep 0.1; done\n' > "$fake/slow/memcgctl"
chmod +x "$fake/bad/memcgctl" "$fake/slow/memcgctl"
export MEMCGFS_BENCH_TMPDIR=$fake/tmp MEMCGFS_BENCH_OUT=$fake/out

mounts() { awk -v d="$fake/" 'index($2, d) == 1' /proc/self/mounts | wc -l; }
# the daemon (run by its link) and the scripts standing in for memcgctl
procs() { pgrep -f "$fake/" | wc -l; }
# a daemon exits just after its unmount: give it a moment
no_procs() { [ "$(procs)" -eq 0 ]; }
gone() { wait_until 5 no_procs; procs; }
# the bench's mount is up and its simulated task has started
mounted() { [ "$(mounts)" -gt 0 ] && pgrep -f "$fake/slow/memcgctl sim" > /dev/null; }

# 1. interrupted (SIGINT, as ^C) while move_mount.sh holds its mount (a
# background job of a script starts with SIGINT ignored: perl restores it)
perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$RUN" "$fake/slow" move_mount > /dev/null 2>&1 &
run=$!
wait_until 20 mounted && ok || bad "move_mount never mounted"
kill -INT "$run"
wait "$run"
expect "interrupted: exit status" "$?" "130"
expect "interrupted: no mount left" "$(mounts)" "0"
expect "interrupted: no process left" "$(gone)" "0"

# 2. a benchmark that fails after mounting (its memcgctl fails)
"$RUN" "$fake/bad" sim_throughput > /dev/null 2>&1
expect "failed step: exit status" "$?" "1"
expect "failed step: no mount left" "$(mounts)" "0"
expect "failed step: no process left" "$(gone)" "0"
grep -q "^sim_throughput	[1-9]" "$fake/out/steps.tsv" && ok || bad "failure not recorded in steps.tsv"
[ -s "$fake/out/report.md" ] && ok || bad "no report after a failed step"

# 3. a benchmark killed (SIGKILL) before its own trap could run: the
# driver ends its children and unmounts for it, then goes on
"$RUN" "$fake/slow" move_mount > /dev/null 2>&1 &
run=$!
wait_until 20 mounted && ok || bad "move_mount never mounted (2)"
# the script: the child of the step's timeout, the driver's child
step=$(pgrep -P "$(pgrep -P "$run" -x timeout)")
[ -n "$step" ] && kill -KILL "$step"
wait "$run"
expect "killed step: exit status" "$?" "1"
expect "killed step: no mount left" "$(mounts)" "0"
expect "killed step: no process left" "$(gone)" "0"
expect "scratch directory removed" "$(ls "$fake/tmp" | wc -l)" "0"

rm -rf --one-file-system "$fake"
summary
