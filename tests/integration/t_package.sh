#!/usr/bin/env bash
# t_package.sh: `make deb` builds a Debian package of the project (debhelper,
# debian/) that lintian passes without errors, holding the programs, the
# man pages and the systemd unit, at the version of the VERSION file.
set -u
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
V=$(cat "$ROOT/VERSION")
expect "debian/changelog is at VERSION" "$(cd "$ROOT" && dpkg-parsechangelog -S Version)" "$V"
# (the package builds the sources afresh: a sanitizer pass has nothing to add)
if [ -n "${MEMCGFS_SANLOG:-}" ]; then
	echo "t_package.sh: the plain pass builds and checks the package"
	summary
	exit
fi
OUT=$(mktemp -d /tmp/memcgfs-deb.XXXXXX)
if ! command -v dpkg-buildpackage > /dev/null || ! command -v lintian > /dev/null ||
   ! dpkg -s debhelper > /dev/null 2>&1; then
	bad "debhelper or lintian missing (make deps installs them)"
	summary
	exit
fi
log=$(make -s -C "$ROOT" BUILD="$OUT" deb 2>&1)
expect "make deb, lintian without errors" "$?" 0 || echo "$log" | tail -n 20
deb=$(ls "$OUT"/deb/memcgfs_"$V"_*.deb 2>/dev/null)
expect "one package" "$(echo "$deb" | grep -c '\.deb$')" 1
expect "its version" "$(dpkg-deb -f "$deb" Version)" "$V"
expect "its files" "$(dpkg-deb -c "$deb" | awk '$6 !~ /\/$/ { print $6 }' | sort | tr '\n' ' ')" \
	"./usr/bin/memcgctl ./usr/bin/memcgfs ./usr/bin/memcgfs-run ./usr/lib/systemd/system/memcgfs@.service ./usr/sbin/mount.memcgfs ./usr/share/doc/memcgfs/changelog.gz ./usr/share/doc/memcgfs/copyright ./usr/share/man/man1/memcgfs-run.1.gz ./usr/share/man/man8/memcgctl.8.gz ./usr/share/man/man8/memcgfs.8.gz ./usr/share/man/man8/mount.memcgfs.8.gz "
expect "it needs FUSE" "$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | grep -cE '^ ?(fuse3|libfuse3-3)( |$)')" 2
x=$(mktemp -d /tmp/memcgfs-deb.XXXXXX)
dpkg-deb -x "$deb" "$x"
expect "the unit runs the packaged daemon" "$(grep '^ExecStart=' "$x/usr/lib/systemd/system/memcgfs@.service")" \
	'ExecStart=/usr/bin/memcgfs -f $MEMCGFS_OPTS %f'
expect "the packaged daemon runs" "$("$x/usr/bin/memcgfs" --version | head -n1)" "memcgfs $V"
rm -rf "$x" "$OUT"
summary
