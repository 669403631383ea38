#!/bin/bash
# table.sh: the README's table of kernels and layouts, from a run of the
# host matrix (run.sh's BUILD/hosts/results.tsv and features.tsv): a
# column a cell, a row a feature, each cell what that run found. Only
# what a run decides: no timings, no kernel's exact version (the archive
# publishes new ones; the run's log names them), so that the same results
# give the same table.
#   table.sh HOSTS_DIR              print it
#   table.sh --check HOSTS_DIR      does README.md's (between its
#                                   hosts-table markers) say the same?
#                                   0, or 1 and the difference
#   table.sh --update HOSTS_DIR     write it into README.md
set -u
here=$(cd "$(dirname "$0")" && pwd)
readme=$here/../../README.md
mode=print
case ${1:-} in
--check) mode=check; shift ;;
--update) mode=update; shift ;;
esac
dir=${1:?usage: table.sh [--check|--update] HOSTS_DIR}
results=$dir/results.tsv
features=$dir/features.tsv
[ -r "$results" ] && [ -r "$features" ] || { echo "table.sh: no results in $dir" >&2; exit 2; }

render() {
	awk -F'\t' -v features="$features" '
	function layout(c) { return c ~ /\/v2$/ ? "cgroup2 only" : "v1 hybrid" }
	function series(c) { sub(/\/.*/, "", c); return c }
	# a test: yes when it passed and checked something
	function verdict(c, t) {
		if (!((c, t) in pass)) return "not run"
		if (fail[c, t] > 0) return "**no** (" fail[c, t] " of " pass[c, t] + fail[c, t] " checks failed)"
		if (pass[c, t] == 0) return "(nothing to compare)"
		return "yes"
	}
	function feat(c, k) { return (c, k) in fv ? fv[c, k] : "" }
	function source(v) {
		if (v ~ /^ebpf/) return "eBPF"
		if (v ~ /^cachestat/) return "`cachestat(2)`"
		if (v ~ /^mincore/) return "`mincore(2)`"
		return v == "" ? "not seen" : "none"
	}
	function caching(c) {
		v = feat(c, "cache_restart")
		if (v == "epoch") return "yes (`FUSE_NOTIFY_INC_EPOCH`)"
		if (v == "names") return "yes (recorded names, stale ones dropped)"
		if (v == "none") return "**no** (`cache_timeout=0`)"
		return "not seen"
	}
	function row(label, what,   c, line) {
		line = "| " label
		for (i = 1; i <= n; i++) {
			c = cell[i]
			if (what == "caching") line = line " | " caching(c)
			else if (what == "source") line = line " | " source(feat(c, "page_cache_source"))
			else if (what == "scan") line = line " | " source(feat(c, "page_cache_scan"))
			else line = line " | " verdict(c, what)
		}
		print line " |"
	}
	BEGIN {
		while ((getline l < features) > 0) {
			split(l, f, "\t")
			if (f[1] == "cell") continue
			v = f[3]; sub(/ +$/, "", v)
			fv[f[1], f[2]] = v
		}
	}
	NR > 1 {
		if (!($1 in seen)) { seen[$1] = 1; cell[++n] = $1 }
		pass[$1, $2] = $3; fail[$1, $2] = $4
	}
	END {
		line = "|"; sep = "|---"
		for (i = 1; i <= n; i++) { line = line " | " series(cell[i]) ", " layout(cell[i]); sep = sep "|---" }
		print line " |"
		print sep "|"
		row("mount, groups, limits; a real process mirrored, its threads\x27 exits, an OOM kill at its limit (`g_basic`)", "g_basic")
		row("page-cache source (`memcgctl status`)", "source")
		row("ten workloads against the kernel\x27s own accounting, usage and every `memory.stat` key within 5 % (`g_reference`)", "g_reference")
		row("page-cache source without eBPF (`-o page_cache=scan`)", "scan")
		row("... `read(2)`, `write(2)` and memfd within 5 % of the kernel\x27s (`g_scan`)", "g_scan")
		row("event registrations, inside `memcgfs-run` too (`t_events`)", "t_events")
		row("the stand-in hierarchies (`t_standin`)", "t_standin")
		row("`memcgfs-run`: the view, cgroup namespaces, cgroup-tools, the JVM, sendfile, `CLONE_PARENT` without eBPF (`t_run`)", "t_run")
		row("crun and runc containers with a 64M limit, OOM-killed, removed, with and without eBPF (`t_runtime`)", "t_runtime")
		row("names and attributes kept by the kernel, right after a worker\x27s restart (`g_cache`)", "g_cache")
		row("... how", "caching")
	}' "$results"
}

table=$(render)
case $mode in
print)
	echo "$table"
	;;
check)
	have=$(sed -n '/^<!--hosts-table-->$/,/^<!--\/hosts-table-->$/p' "$readme" | sed '1d;$d')
	if [ "$have" = "$table" ]; then
		echo "table.sh: README.md's hosts table is this run's"
	else
		echo "table.sh: README.md's hosts table is not this run's (tests/hosts/table.sh --update $dir):"
		diff <(echo "$have") <(echo "$table")
		exit 1
	fi
	;;
update)
	awk -v table="$table" '
	$0 == "<!--hosts-table-->" { print; print table; skip = 1; next }
	$0 == "<!--/hosts-table-->" { skip = 0 }
	!skip' "$readme" > "$readme.new" && mv "$readme.new" "$readme"
	;;
esac
