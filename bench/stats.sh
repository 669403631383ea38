# stats.sh: the median, minimum and maximum of a benchmark's rounds, for
# the scripts of bench/ that measure in bash (sourced, not run).
med() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
lo() { printf '%s\n' "$@" | sort -g | head -n1; }
hi() { printf '%s\n' "$@" | sort -g | tail -n1; }
