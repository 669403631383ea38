#!/bin/bash
# kernels.sh: Debian's kernels the host matrix boots, by series (6.1 is
# Debian 12's own kernel, 6.12 its newer one).
#   kernels.sh packages       the newest image package of each series in
#                             the archive (for make deps: apt-get install)
#   kernels.sh installed      exit 0 when every series has an image in /boot
#   kernels.sh kver SERIES    the newest installed release of SERIES
set -euo pipefail
SERIES="6.1 6.12"

# the image packages of SERIES's plain amd64 flavour, newest last
pattern() {
	case $1 in
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
	*) echo "kernels.sh: no series $1" >&2; exit 2 ;;
	esac
}

# the newest installed release of SERIES, from /boot
kver() {
	local p
	p=$(pattern "$1")
	p=${p#^linux-image-}
	ls /boot 2> /dev/null | sed -n 's/^vmlinuz-//p' | grep -E "^${p%\$}\$" | sort -V | tail -n 1
}

case ${1:-} in
packages)
	for s in $SERIES; do
		n=$(apt-cache search --names-only "$(pattern "$s")" | awk '{ print $1 }' | sort -V | tail -n 1)
		[ -n "$n" ] || { echo "kernels.sh: no $s image in the archive (apt-get update?)" >&2; exit 1; }
		echo "$n"
	done ;;
installed)
	for s in $SERIES; do
		[ -n "$(kver "$s")" ] || exit 1
	done ;;
kver)
	k=$(kver "${2:?kernels.sh kver SERIES}")
	[ -n "$k" ] || { echo "kernels.sh: no $2 kernel in /boot (make deps)" >&2; exit 1; }
	echo "$k" ;;
*)
	sed -n '2,9p' "$0" >&2
	exit 2 ;;
esac
