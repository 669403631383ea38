#!/bin/bash
# vm.sh: boot one guest of the host matrix and run one job in it.
#   vm.sh -k KVER [-l v2|v1] [-t SECS] [-m MIB] [-d DISK] -o OUTDIR JOB
# The guest is Debian's kernel KVER (/boot/vmlinuz-KVER, from its
# linux-image package) with this machine's root read-only over 9p under a
# tmpfs overlay (init), laid out as a host of LAYOUT (pid1: v2 is cgroup2
# only, v1 the legacy hybrid), with DISK (a raw image) as /dev/vda when
# given. JOB (a bash script) runs there as root under SECS seconds; OUTDIR
# is /hosts-out in the guest and gets output.log, rc and console.log.
# Exit status: the job's, or 125 when the guest gave none (console.log's
# tail is printed then). Every wait is bounded: the job by SECS in the
# guest, qemu by SECS + 180 here. Accelerator: software emulation (TCG);
# HOSTS_ACCEL=kvm asks for KVM, which these machines' nested PVM cannot
# use to boot a stock kernel. Nothing of this machine's cgroups is touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kver= layout=v2 secs=600 mem=2048 disk= out=
while getopts k:l:t:m:d:o: o; do
	case $o in
	k) kver=$OPTARG ;;
	l) layout=$OPTARG ;;
	t) secs=$OPTARG ;;
	m) mem=$OPTARG ;;
	d) disk=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$kver" ] && [ -n "$out" ] && [ $# -eq 1 ] ||
	{ echo "usage: vm.sh -k KVER [-l v2|v1] [-t SECS] [-m MIB] [-d DISK] -o OUTDIR JOB" >&2; exit 2; }
[ -r "/boot/vmlinuz-$kver" ] || { echo "vm.sh: no /boot/vmlinuz-$kver (make deps)" >&2; exit 2; }
case $layout in v1|v2) ;; *) echo "vm.sh: layout v1 or v2, not $layout" >&2; exit 2 ;; esac
cache=${HOSTS_CACHE:-/var/tmp/memcgfs-hosts}
initrd=$cache/initramfs-$kver.cpio.gz
if [ ! -s "$initrd" ] || [ "$here/initramfs.sh" -nt "$initrd" ] || [ "$here/init" -nt "$initrd" ]; then
	"$here/initramfs.sh" "$kver" "$initrd"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/output.log" "$out/rc" "$out/console.log"
[ "$(readlink -f "$1")" = "$out/job" ] || cp "$1" "$out/job"
cgargs="cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1"
[ "$layout" = v1 ] && cgargs="systemd.unified_cgroup_hierarchy=0"
append="console=ttyS0 panic=-1 loglevel=4 $cgargs hosts_pid1=$here/pid1 hosts_layout=$layout hosts_timeout=$secs"
case ${HOSTS_ACCEL:-tcg} in
kvm) accel=(-enable-kvm -cpu host,-arch-capabilities) ;;
*) accel=(-accel tcg,thread=multi,tb-size=512 -cpu max) ;;
esac
drive=()
[ -n "$disk" ] && drive=(-drive "file=$disk,if=virtio,format=raw,cache=unsafe")
t0=$SECONDS
set +e
timeout -k 10 $((secs + 180)) qemu-system-x86_64 "${accel[@]}" -smp 2 -m "$mem" \
	-nographic -no-reboot -monitor none -nodefaults -serial stdio \
	-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" -append "$append" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$out",mount_tag=hostsout,security_model=none,multidevs=remap \
	"${drive[@]}" < /dev/null > "$out/console.log" 2>&1
qrc=$?
set -e
echo "vm.sh: $kver $layout: qemu exit $qrc after $((SECONDS - t0)) s" >&2
if [ -s "$out/rc" ]; then
	exit "$(cat "$out/rc")"
fi
echo "vm.sh: $kver $layout: no result from the guest; its console ends:" >&2
tail -n 30 "$out/console.log" >&2
exit 125
