# t_replay.sh: memcgctl replay from the shell: the same file twice gives
# byte-identical timelines, and the numbers obey the scenario's limits.
. "$(dirname "$0")/lib.sh"
CTL="$MEMCGFS_BUILD/memcgctl"
SCN="$(dirname "$0")/../scenarios/kernbench-small.scn"

a=$("$CTL" replay "$SCN")
expect "replay exit status" "$?" "0"
b=$("$CTL" replay "$SCN")
expect "byte-identical rerun" "$(printf '%s' "$a" | md5sum)" "$(printf '%s' "$b" | md5sum)"
expect "from stdin too" "$("$CTL" replay - < "$SCN" | md5sum)" "$(printf '%s\n' "$a" | md5sum)"
expect "timeline: one line per group at 20ms" "$(echo "$a" | grep -c '^t=20ms ')" "4"
max=$(echo "$a" | grep ' /build usage=' | tail -n1 | sed -E 's/.* max_usage=([0-9]+).*/\1/')
[ "$max" -le $((24 << 20)) ] && ok || bad "/build max_usage $max over its 24M limit"
fc=$(echo "$a" | grep ' /build usage=' | tail -n1 | sed -E 's/.* failcnt=([0-9]+).*/\1/')
[ "$fc" -gt 0 ] && ok || bad "/build never hit its limit"
expect "every task finished" "$(echo "$a" | grep -c '^task .* exited')" "5"
expect "bad scenario" "$(printf 'bogus line\n' | "$CTL" replay - 2>&1; echo "rc=$?")" \
	"$(printf 'replay: line 1: unknown statement or task bogus\nrc=1')"
summary
