#!/bin/bash
# initramfs.sh KVER OUT: the host matrix's initramfs for Debian's kernel
# KVER: busybox-static as /init's shell and the modules the guest needs
# before its root is there (virtio, 9p, overlay, fuse, ext4 for the test
# disk), in the order `modprobe -D` gives, uncompressed (busybox's insmod
# takes plain .ko files). Writes OUT (a gzipped cpio) and nothing else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kver=$1 out=$2
bb=/bin/busybox
file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ echo "initramfs.sh: $bb is not busybox-static (make deps)" >&2; exit 2; }
[ -d "/lib/modules/$kver" ] || { echo "initramfs.sh: no /lib/modules/$kver" >&2; exit 2; }
work=$(mktemp -d /tmp/memcgfs-initramfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,lower,rw,newroot,mods}
cp "$bb" "$work/bin/busybox"
for m in virtio_pci virtio_blk 9pnet_virtio 9p overlay fuse ext4; do
	modprobe -S "$kver" -D "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	name=$(basename "$ko")
	case $name in
	*.xz) xz -dc "$ko" > "$work/mods/${name%.xz}"; name=${name%.xz} ;;
	*.zst) zstd -qdc "$ko" > "$work/mods/${name%.zst}"; name=${name%.zst} ;;
	*) cp "$ko" "$work/mods/$name" ;;
	esac
	echo "$name" >> "$work/mods/order"
done
touch "$work/mods/order"
cp "$here/init" "$work/init"
chmod 755 "$work/init"
mkdir -p "$(dirname "$out")"
(cd "$work" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
