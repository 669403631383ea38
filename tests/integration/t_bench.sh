# t_bench.sh: `make bench`'s driver (bench/run.sh) leaves no mount and no
# process behind: when it is interrupted while a benchmark holds a mount,
# when a benchmark fails, and when a benchmark is killed before its own
# cleanup could run. Runs the real mount scripts against a build directory
# of links (its memcgctl replaced by one that fails, for the failure), with
# the driver's scratch and output directories of its own.
. "$(dirname "$0")/lib.sh"
RUN="$(dirname "$0")/../../bench/run.sh"
fake=$(mktemp -d /tmp/memcgfs-t-bench.XXXXXX)
mkdir "$fake/tmp" "$fake/bad"
ln -s "$MEMCGFS_BUILD/memcgfs" "$fake/memcgfs"
ln -s "$MEMCGFS_BUILD/memcgctl" "$fake/memcgctl"
ln -s "$MEMCGFS_BUILD/memcgfs" "$fake/bad/memcgfs"
printf '#!/bin/sh\nexit 3\n' > "$fake/bad/memcgctl"
chmod +x "$fake/bad/memcgctl"
export MEMCGFS_BENCH_TMPDIR=$fake/tmp MEMCGFS_BENCH_OUT=$fake/out

mounts() { awk -v d="$fake/" 'index($2, d) == 1' /proc/self/mounts | wc -l; }
procs() { pgrep -f "^$fake/" | wc -l; }
# the bench's mount is up and its 1 GiB task has started
mounted() { [ "$(mounts)" -gt 0 ] && pgrep -f "^$fake/memcgctl sim" > /dev/null; }

# 1. interrupted (SIGINT, as ^C) while move_mount.sh holds its mount (a
# background job of a script starts with SIGINT ignored: perl restores it)
perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$RUN" "$fake" move_mount > /dev/null 2>&1 &
run=$!
wait_until 20 mounted && ok || bad "move_mount never mounted"
kill -INT "$run"
wait "$run"
expect "interrupted: exit status" "$?" "130"
expect "interrupted: no mount left" "$(mounts)" "0"
expect "interrupted: no process left" "$(procs)" "0"

# 2. a benchmark that fails after mounting (its memcgctl fails)
"$RUN" "$fake/bad" sim_throughput > /dev/null 2>&1
expect "failed step: exit status" "$?" "1"
expect "failed step: no mount left" "$(mounts)" "0"
expect "failed step: no process left" "$(procs)" "0"
grep -q "^sim_throughput	[1-9]" "$fake/out/steps.tsv" && ok || bad "failure not recorded in steps.tsv"
[ -s "$fake/out/report.md" ] && ok || bad "no report after a failed step"

# 3. a benchmark killed (SIGKILL) before its own trap could run: the
# driver ends its children and unmounts for it, then goes on
"$RUN" "$fake" move_mount > /dev/null 2>&1 &
run=$!
wait_until 20 mounted && ok || bad "move_mount never mounted (2)"
# the script: the child of the step's timeout, the driver's child
step=$(pgrep -P "$(pgrep -P "$run" -x timeout)")
[ -n "$step" ] && kill -KILL "$step"
wait "$run"
expect "killed step: exit status" "$?" "1"
expect "killed step: no mount left" "$(mounts)" "0"
expect "killed step: no process left" "$(procs)" "0"
expect "scratch directory removed" "$(ls "$fake/tmp" | wc -l)" "0"

rm -rf --one-file-system "$fake"
summary
