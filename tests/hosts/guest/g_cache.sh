#!/bin/bash
# g_cache.sh (in a guest of the host matrix): the kernel's name and
# attribute cache on this kernel (t_cache.sh holds every case from three
# observers; this is its core, short enough for software emulation). The
# kernel keeps what the daemon tells it: a warm stat sends no request and
# a warm cat looks no name up. A removal and a rename whose answers died
# with the worker (held by tools/holdreply, then the worker killed) are
# right after the restart: the group gone, the old name gone, the new one
# there, from a name the kernel had kept. How: FUSE_NOTIFY_INC_EPOCH from
# 6.16, the recorded names before ("cache_restart" of memcgctl status).
. "$(dirname "$0")/../../integration/lib.sh"
CRASH_TEST=1                      # the restart is ours
DATA=$(mktemp -d /tmp/g_cache.XXXXXX)
cleanup() {
	lib_exit
	rm -rf "$DATA"
}
trap cleanup EXIT
requests() { daemon_status "$MNT" requests_total; }
lookups() { daemon_status "$MNT" requests_lookup; }

mount_fs_fg "$DATA/log" "state=$DATA/state" || exit 1
IFS=. read -r kmaj kmin _ <<< "$(uname -r)"
how=names
(( kmaj > 6 || (kmaj == 6 && kmin >= 16) )) && [ -z "${MEMCGFS_TEST_NO_EPOCH:-}" ] && how=epoch
expect "the kernel keeps names and attributes" "$(daemon_status "$MNT" cache_timeout)" 86400
expect "a restart keeps them right by $how" "$(daemon_status "$MNT" cache_restart)" $how
mkdir -p "$MNT/a/b"
# (a stat after a read asks for the attributes again: the kernel marks
# them stale at every direct read, docs/design.md)
stat "$MNT/a/b/memory.limit_in_bytes" > /dev/null
a=$(requests); b=$(requests)
c=$(requests); stat "$MNT/a/b/memory.limit_in_bytes" > /dev/null; d=$(requests)
expect "a warm stat: no request" "$((d - c))" "$((b - a))"
cat "$MNT/a/b/memory.limit_in_bytes" > /dev/null
a=$(lookups); b=$(lookups)
c=$(lookups); cat "$MNT/a/b/memory.limit_in_bytes" > /dev/null; d=$(lookups)
expect "a warm cat: no name looked up" "$((d - c))" "$((b - a))"

mkdir -p "$MNT/a/x/held" "$MNT/a/y/from"
stat "$MNT/a/x/held/memory.limit_in_bytes" "$MNT/a/y/from/memory.limit_in_bytes" > /dev/null
hold_rmdir_rename "$MNT/a" 1
expect "the held rmdir and rename failed with the worker" "$HELD" "ECONNABORTED ECONNABORTED"
expect "after the restart: the removed group is gone" \
	"$(stat "$MNT/a/x/held" 2>&1 | grep -c 'No such file')" 1
expect "... its files too" "$(stat "$MNT/a/x/held/memory.limit_in_bytes" 2>&1 | grep -c 'No such file')" 1
expect "the renamed group's old name is gone" "$(stat "$MNT/a/y/from" 2>&1 | grep -c 'No such file')" 1
expect "... its new one is there" "$(stat -c %F "$MNT/a/y/to")" directory
expect "the new worker keeps names too, by $how" \
	"$(daemon_status "$MNT" cache_timeout) $(daemon_status "$MNT" cache_restart)" "86400 $how"
summary
