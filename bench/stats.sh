# stats.sh: the median, minimum and maximum of a benchmark's rounds, and a
# bounded wait, for the scripts of bench/ that measure in bash (sourced,
# not run). Never prints a figure itself.
med() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
lo() { printf '%s\n' "$@" | sort -g | head -n1; }
hi() { printf '%s\n' "$@" | sort -g | tail -n1; }
# fig NAME UNIT VALUE...: the median of the values as NAME, and their
# range as NAME.min and NAME.max (one figure per line, three fields each)
fig() {
	local name=$1 unit=$2
	shift 2
	echo "$name $(med "$@") $unit"
	echo "$name.min $(lo "$@") $unit"
	echo "$name.max $(hi "$@") $unit"
}
# wait_until SECONDS WHAT CMD...: run CMD every 50 ms until it succeeds;
# after SECONDS, say on standard error that WHAT did not come and fail
wait_until() {
	local secs=$1 what=$2 end
	shift 2
	end=$((SECONDS + secs))
	until "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "bench: $what did not come within $secs s" >&2
			return 1
		fi
		sleep 0.05
	done
}
