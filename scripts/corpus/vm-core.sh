#!/bin/bash
# vm-core.sh CASE OUTDIR [PACKDIR] - a genuine aarch64 Linux kernel core
# of corpora/ptmalloc/CASE.c on Debian bookworm's arm64 glibc 2.36.
#
# Unlike make-core.sh's glibc-2.36-arm64 variant (qemu-user, whose cores
# have no NT_FILE and no NT_ARM_TLS), this boots Debian bookworm's arm64
# kernel (linux-image-*-arm64) in qemu-system-aarch64 (-M virt, cortex-a57,
# 2 CPUs, TCG) with a small initramfs: busybox-static, an /init script,
# the program and the loader and libraries it needs from the sysroot of
# scripts/corpus/sysroot.sh glibc-2.36-arm64 (at their merged-/usr paths,
# /usr/lib/aarch64-linux-gnu/..., with the /lib -> usr/lib link).  /init
# sets RLIMIT_CORE unlimited and core_pattern to a file in a tmpfs, runs
# `prog truth.txt` there (it writes its truth, then aborts), and prints
# the exit status, then truth.txt and the core (gzip, base64, with size
# and sha256) between "@@HW" marker lines on the serial console, which
# goes to OUTDIR/vm.log; the host decodes them from there.
#
# Leaves OUTDIR/prog, OUTDIR/core, OUTDIR/truth.txt, OUTDIR/vm.log (the
# console) and OUTDIR/core.how, after checking that the core is an
# AArch64 kernel core (NT_PRSTATUS, NT_FILE, NT_AUXV and NT_ARM_TLS).
#
# With PACKDIR it also writes the commit-ready files there (see
# corpora/aarch64-kernel/README): core.xz, truth.txt, prog,
# sysroot/sysroot.tar.xz (just the libc and loader that ran, at their
# paths, with the merged-/usr links; reproducible bytes) and MANIFEST
# (sha256 of everything, package versions, build-ids, command, date).
#
# The kernel and busybox .debs come through the private apt configuration
# of scripts/lib/debian-apt.sh (the host's mirror, never its apt state)
# and are kept in $HEAPWALK_VM_CACHE (default build/vm/debs); remove them
# there to take newer ones.  The host needs qemu-system-aarch64
# (installed with apt-get as package qemu-system-arm when missing and
# root), cpio, xz, aarch64-linux-gnu-gcc.  HEAPWALK_VM_TIMEOUT (seconds,
# default 900) bounds the VM run.
#
# Exit 0 on success, 77 when qemu-system-aarch64 cannot be installed or
# run here (or no sysroot / no mirror), 1 on failure, 2 on bad usage.
# Nothing is run again while OUTDIR/.stamp is newer than the sources and
# this script (PACKDIR is still rewritten).  Quiet on success.
set -euo pipefail
export LC_ALL=C # readelf's words, sort order

me=vm-core.sh
# shellcheck source=scripts/lib/die.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/die.sh"
# shellcheck source=scripts/corpus/corpus-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus-lib.sh"

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $me CASE OUTDIR [PACKDIR]" >&2
	exit 2
fi
case_name=$1
outdir=$2
packdir=${3:-}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
srcdir=$top/corpora/ptmalloc
src=$srcdir/$case_name.c
[ -f "$src" ] || die "no such corpus case: $src"
variant=glibc-2.36-arm64
suite=bookworm
arch=arm64
vmdir=/opt/heapwalk   # where the program lives inside the VM

# ---- host tools ---------------------------------------------------------

for t in dpkg-deb apt-get readelf gzip xz base64 sha256sum tar; do
	command -v "$t" >/dev/null 2>&1 || die "$t is missing"
done
need=()
command -v qemu-system-aarch64 >/dev/null 2>&1 || need+=(qemu-system-arm)
command -v cpio >/dev/null 2>&1 || need+=(cpio)
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || cannot "need ${need[*]} (not root: apt-get install ${need[*]})"
	ilog=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${need[@]}" >"$ilog" 2>&1; then
		tail -n 5 "$ilog" >&2
		rm -f "$ilog"
		case " ${need[*]} " in
		*" qemu-system-arm "*) cannot "cannot install qemu-system-arm (qemu-system-aarch64) here" ;;
		*) die "apt-get install ${need[*]} failed" ;;
		esac
	fi
	rm -f "$ilog"
fi
command -v qemu-system-aarch64 >/dev/null 2>&1 ||
	cannot "qemu-system-aarch64 is still missing after installing qemu-system-arm"
qemu_cpus=$(qemu-system-aarch64 -machine virt -cpu help 2>/dev/null) ||
	cannot "qemu-system-aarch64 does not run here"
grep -qw cortex-a57 <<<"$qemu_cpus" ||
	cannot "this qemu-system-aarch64 has no cortex-a57 CPU"
qemu_version=$(qemu-system-aarch64 --version | sed -n 1p)

# ---- the arm64 glibc sysroot (sysroot.sh) -------------------------------

corpus_sysroot "$variant"
libc_version=$(sed -n 's/^package libc6 //p' "$sysroot_stamp")
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || die "aarch64-linux-gnu-gcc is missing"

# ---- kernel and busybox .debs (private apt, cached) ---------------------

cache=${HEAPWALK_VM_CACHE:-$top/build/vm}
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=scripts/lib/debian-apt.sh
. "$top/scripts/lib/debian-apt.sh"

# cached_deb PATTERN: the newest cached .deb whose name matches PATTERN.
cached_deb() {
	local f best=
	for f in "$cache"/debs/$1; do
		[ -f "$f" ] || continue
		if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$f" | sort -V | tail -n1)" = "$f" ]; then
			best=$f
		fi
	done
	printf '%s' "$best"
}

(
	if command -v flock >/dev/null 2>&1; then
		flock 8
	fi
	if [ -n "$(cached_deb 'linux-image-*-arm64_*_arm64.deb')" ] &&
		[ -n "$(cached_deb 'busybox-static_*_arm64.deb')" ]; then
		exit 0
	fi
	rc=0
	apt_private_init "$work/apt" "$suite" "$arch" || rc=$?
	case $rc in
	0) ;;
	1) exit 77 ;;
	*) exit 1 ;;
	esac
	if ! apt_update; then
		apt_log_tail 8
		echo "$me: apt-get update of $suite/$arch failed (no mirror reachable?)" >&2
		exit 77
	fi
	# linux-image-arm64 is a metapackage: take the image it depends on.
	kpkg=$(aptcache depends linux-image-arm64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-.*-arm64$/ { print $2; exit }')
	if [ -z "$kpkg" ]; then
		echo "$me: no linux-image-*-arm64 behind linux-image-arm64 in $suite" >&2
		exit 1
	fi
	mkdir -p "$work/dl"
	if ! (cd "$work/dl" && aptc download "$kpkg" busybox-static); then
		apt_log_tail 8
		echo "$me: downloading $kpkg and busybox-static failed" >&2
		exit 1
	fi
	mv -f "$work"/dl/*.deb "$cache/debs/"
) 8>"$cache/.lock" || {
	rc=$?
	[ $rc = 77 ] && cannot "cannot download Debian $suite $arch packages here"
	die "no kernel or busybox package"
}
kdeb=$(cached_deb 'linux-image-*-arm64_*_arm64.deb')
bbdeb=$(cached_deb 'busybox-static_*_arm64.deb')
if [ -z "$kdeb" ] || [ -z "$bbdeb" ]; then
	die "no kernel or busybox package in $cache/debs"
fi
kpkg=$(dpkg-deb -f "$kdeb" Package)
kver=$(dpkg-deb -f "$kdeb" Version)
bbver=$(dpkg-deb -f "$bbdeb" Version)

# ---- freshness ----------------------------------------------------------

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir/.lock"
	flock 9
fi
stamp=$outdir/.stamp
fresh=0
if [ -f "$stamp" ] && [ -s "$outdir/core" ] && [ -x "$outdir/prog" ] &&
	[ -s "$outdir/truth.txt" ] && [ -s "$outdir/core.how" ]; then
	fresh=1
	for f in "$src" "$srcdir"/*.h "$top"/corpora/common/*.h "$0" \
		"$top/scripts/corpus/corpus-lib.sh" "$sysroot_stamp" "$kdeb" "$bbdeb"; do
		[ -e "$f" ] || continue
		if [ "$f" -nt "$stamp" ]; then fresh=0; fi
	done
fi

# ---- build, boot, decode ------------------------------------------------

# add_file ROOT PATH: copy the sysroot's PATH (following links) to
# ROOT/PATH, and the libraries it needs (NEEDED, from the sysroot's
# library directory) the same way.
add_file() {
	local root=$1 path=$2 real lib
	[ -e "$root/$path" ] && return 0
	real=$(readlink -f "$sysroot/$path") || die "cannot resolve $sysroot/$path"
	[ -f "$real" ] || die "no $path in $sysroot"
	mkdir -p "$(dirname "$root/$path")"
	cp "$real" "$root/$path"
	for lib in $(readelf -dW "$real" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
		add_file "$root" "usr/lib/$triple/$lib"
	done
}

# decode CONSOLE NAME DEST: the file NAME that /init printed between
# "@@HW begin NAME SIZE SHA256" and "@@HW end NAME" on CONSOLE (the
# console log without its carriage returns), checked.
decode() {
	local con=$1 name=$2 dest=$3 size sum
	read -r size sum < <(awk -v n="$name" '$1 == "@@HW" && $2 == "begin" && $3 == n { print $4, $5; exit }' "$con") || true
	[ -n "${sum:-}" ] || die "the VM sent no $name (see $vmlog)"
	awk -v n="$name" '
		$0 == "@@HW end " n { on = 0 }
		on { print }
		$1 == "@@HW" && $2 == "begin" && $3 == n { on = 1 }' "$con" >"$dest.b64"
	base64 -d "$dest.b64" | gzip -dc |
		dd of="$dest" bs=64K iflag=fullblock conv=sparse status=none ||
		die "cannot decode $name from $vmlog"
	rm -f "$dest.b64"
	[ "$(stat -c %s "$dest")" = "$size" ] ||
		die "$name: $(stat -c %s "$dest") bytes decoded, the VM said $size"
	[ "$(sha256sum <"$dest" | cut -d' ' -f1)" = "$sum" ] ||
		die "$name: sha256 differs from what the VM said"
}

if [ $fresh = 0 ]; then
	rm -f "$stamp" "$outdir/core" "$outdir/truth.txt" "$outdir/core.how" \
		"$outdir/prog" "$outdir/vm.log" "$outdir/qemu.err"
	log=$outdir/build.log
	: >"$log"

	# Exactly as make-core.sh builds its arm64 programs.
	corpus_cc aarch64-linux-gnu-gcc "$src" "$outdir/prog" "$log" -no-pie ||
		die "compiling $src for $variant failed (see $log)"

	# The kernel (just boot/vmlinuz-*: no module is needed) and busybox.
	kroot=$cache/$kpkg-$kver
	if ! [ -f "$kroot/.done" ]; then
		rm -rf "$kroot"
		mkdir -p "$kroot"
		dpkg-deb --fsys-tarfile "$kdeb" |
			tar -x -C "$kroot" --wildcards './boot/vmlinuz-*' ||
			die "no boot/vmlinuz-* in $kdeb"
		: >"$kroot/.done"
	fi
	vmlinuz=$(find "$kroot/boot" -maxdepth 1 -name 'vmlinuz-*' | sed -n 1p)
	[ -n "$vmlinuz" ] || die "no boot/vmlinuz-* in $kdeb"
	dpkg-deb -x "$bbdeb" "$work/bb"
	[ -x "$work/bb/bin/busybox" ] || die "no bin/busybox in $bbdeb"

	# The initramfs tree, merged-/usr like Debian's: /lib -> usr/lib.
	root=$work/root
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,usr/lib/"$triple","$vmdir"}
	ln -s usr/lib "$root/lib"
	cp "$work/bb/bin/busybox" "$root/bin/busybox"
	cp "$outdir/prog" "$root/$vmdir/prog"
	interp=$(readelf -lW "$outdir/prog" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
	[ -n "$interp" ] || die "$outdir/prog has no interpreter"
	# The loader: a link in usr/lib (reached through /lib) to the file in
	# the triple directory, as in libc6.
	ldso=${interp##*/}
	add_file "$root" "usr/lib/$triple/$ldso"
	[ -e "$root$interp" ] || ln -s "$triple/$ldso" "$root/usr/lib/$ldso"
	[ -e "$root$interp" ] || die "the interpreter $interp is not at its path in the initramfs"
	for lib in $(readelf -dW "$outdir/prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
		add_file "$root" "usr/lib/$triple/$lib"
	done

	cat >"$root/init" <<EOF
#!/bin/busybox sh
# /init of scripts/corpus/vm-core.sh's VM: run the corpus program so that
# the kernel dumps its core into a tmpfs, send everything out on the
# console, power off.
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /tmp/core
# Nothing but emergencies from the kernel in the middle of the data.
echo 1 >/proc/sys/kernel/printk
echo /tmp/core/core >/proc/sys/kernel/core_pattern
echo 0 >/proc/sys/kernel/core_uses_pid
# The program inherits the shell's filter: keep bit 4 (ELF headers).
filter=\$(cat /proc/self/coredump_filter)
printf '0x%x\n' \$((0x\$filter | 0x10)) >/proc/self/coredump_filter
ulimit -c unlimited
echo "@@HW uname \$(uname -r)"
echo "@@HW cpus \$(nproc)"
echo "@@HW coredump_filter \$(cat /proc/self/coredump_filter)"
cd /tmp/core
$vmdir/prog truth.txt
echo "@@HW status \$?"
for f in truth.txt core; do
	[ -f "\$f" ] || continue
	echo "@@HW begin \$f \$(wc -c <"\$f") \$(sha256sum <"\$f" | cut -d' ' -f1)"
	gzip -c "\$f" | base64
	echo "@@HW end \$f"
done
echo "@@HW done"
poweroff -f
EOF
	chmod 755 "$root/init"
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet) | gzip -9n >"$work/initrd.gz"

	vmlog=$outdir/vm.log
	start=$(date +%s)
	rc=0
	timeout -k 10 "${HEAPWALK_VM_TIMEOUT:-900}" qemu-system-aarch64 \
		-M virt -accel tcg -cpu cortex-a57 -m 1024 -smp 2 -no-reboot \
		-display none -monitor none -nic none \
		-serial "file:$vmlog" \
		-kernel "$vmlinuz" -initrd "$work/initrd.gz" \
		-append "console=ttyAMA0 rdinit=/init panic=-1" \
		</dev/null >"$outdir/qemu.err" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		die "the VM did not finish in ${HEAPWALK_VM_TIMEOUT:-900} s (see $vmlog)"
	fi
	if [ $rc != 0 ]; then
		if ! [ -s "$vmlog" ]; then
			cannot "qemu-system-aarch64 does not run here (exit $rc): $(head -n1 "$outdir/qemu.err")"
		fi
		die "qemu-system-aarch64 exited with status $rc (see $vmlog, $outdir/qemu.err)"
	fi
	con=$work/console
	tr -d '\r' <"$vmlog" >"$con"
	grep -qx '@@HW done' "$con" ||
		die "the VM stopped before sending everything (see $vmlog)"
	status=$(awk '$1 == "@@HW" && $2 == "status" { print $3; exit }' "$con")
	if [ "$status" = 2 ]; then die "$case_name refused its own plan (see $vmlog)"; fi
	[ "$status" = 134 ] ||
		die "$case_name in the VM exited with status ${status:-?}, not SIGABRT (see $vmlog)"
	decode "$con" truth.txt "$outdir/truth.txt"
	decode "$con" core "$outdir/core"
	[ "$(tail -n1 "$outdir/truth.txt")" = end ] ||
		die "$case_name wrote no complete truth file (see $vmlog)"
	uname_r=$(awk '$1 == "@@HW" && $2 == "uname" { print $3; exit }' "$con")
	echo "qemu-system-aarch64 kernel core, Debian $kpkg $kver (uname -r $uname_r, $qemu_version, -M virt -cpu cortex-a57 -smp 2, ${secs} s), glibc $libc_version (Debian libc6 arm64, $variant sysroot), busybox-static $bbver" >"$outdir/core.how"
fi

# ---- is it really an AArch64 kernel core? -------------------------------

core=$outdir/core
core_complete "$core" || die "$core is truncated"
hdr=$(readelf -hW "$core") || die "$core is not ELF"
grep -Eq '^ *Type: +CORE' <<<"$hdr" || die "$core is not a core file"
grep -Eq '^ *Machine: +AArch64' <<<"$hdr" || die "$core is not AArch64"
notes=$(readelf -nW "$core") || die "readelf -n $core failed"
for n in NT_PRSTATUS NT_FILE NT_AUXV NT_ARM_TLS; do
	grep -qw "$n" <<<"$notes" || die "$core has no $n note: not a kernel core?"
done
nthreads=$(grep -c '^thread ' "$outdir/truth.txt" || true)
for n in NT_PRSTATUS NT_ARM_TLS; do
	c=$(grep -cw "$n" <<<"$notes" || true)
	[ "$c" = "$nthreads" ] ||
		die "$core has $c $n notes, the truth $nthreads threads"
done
: >"$stamp"

[ -n "$packdir" ] || exit 0

# ---- commit-ready files -------------------------------------------------

mkdir -p "$packdir/sysroot"
packdir=$(cd "$packdir" && pwd)
xz -9 -c "$core" >"$packdir/core.xz.tmp"
mv -f "$packdir/core.xz.tmp" "$packdir/core.xz"
cp "$outdir/truth.txt" "$packdir/truth.txt"
cp "$outdir/prog" "$packdir/prog.tmp"
chmod 755 "$packdir/prog.tmp"
mv -f "$packdir/prog.tmp" "$packdir/prog"

# The files from the sysroot that ran: the loader and the libraries the
# program needs (what went into the initramfs), as /usr/lib/... paths.
# When eu-readelf can decode NT_FILE (binutils 2.40's readelf cannot, for
# 64-bit cores), each must also be named there.
# needed_closure FILE: the sysroot paths of FILE's NEEDED libraries, and
# of theirs.
needed_closure() {
	local lib p
	for lib in $(readelf -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
		p=usr/lib/$triple/$lib
		[ -e "$sysroot/$p" ] || die "$lib (needed by $1) is not in $sysroot/usr/lib/$triple"
		echo "/$p"
		needed_closure "$(readlink -f "$sysroot/$p")"
	done
}
interp=$(readelf -lW "$outdir/prog" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')
ldso=${interp##*/}
mapfile -t files < <({
	echo "/usr/lib/$triple/$ldso"
	needed_closure "$outdir/prog"
} | sort -u)
if command -v eu-readelf >/dev/null 2>&1; then
	named=$(eu-readelf -n "$core" | awk '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ && $4 ~ /^\// { print $4 }' | sort -u)
	for p in "${files[@]}"; do
		grep -qxF "$p" <<<"$named" || die "$core's NT_FILE does not name $p"
	done
fi
sr=$work/sysroot
rm -rf "$sr"
mkdir -p "$sr/usr/lib"
ln -s usr/lib "$sr/lib"
for p in "${files[@]}"; do
	p=${p#/}
	real=$(readlink -f "$sysroot/$p")
	[ -f "$real" ] || die "no $p in $sysroot"
	mkdir -p "$sr/$(dirname "$p")"
	cp "$real" "$sr/$p"
done
if [ -f "$sr/usr/lib/$triple/$ldso" ] && ! [ -e "$sr/usr/lib/$ldso" ]; then
	ln -s "$triple/$ldso" "$sr/usr/lib/$ldso"
fi
# Reproducible: same files, same bytes (git then stores one blob).
tar -C "$sr" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	--format=gnu -cf - lib usr | xz -9 -c >"$packdir/sysroot/sysroot.tar.xz"

buildid() {
	readelf -nW "$1" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | sed -n 1p
}
rel=$packdir
case $rel in "$top"/*) rel=${rel#"$top"/} ;; esac
relout=$outdir
case $relout in "$top"/*) relout=${relout#"$top"/} ;; esac
{
	echo "# $rel: an aarch64 Linux kernel core of corpora/ptmalloc/$case_name.c"
	echo "# (see corpora/aarch64-kernel/README)"
	echo "case $case_name"
	echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "command scripts/corpus/vm-core.sh $case_name $relout $rel"
	echo "how $(cat "$outdir/core.how")"
	echo "package libc6:arm64 $libc_version"
	echo "package $kpkg:arm64 $kver"
	echo "package busybox-static:arm64 $bbver"
	echo "compiler $(aarch64-linux-gnu-gcc --version | sed -n 1p)"
	echo "threads $nthreads"
	for p in "${files[@]}"; do
		p=${p#/}
		echo "build-id $(buildid "$sr/$p") sysroot/$p"
	done
	echo "build-id $(buildid "$outdir/prog") prog"
	for f in core.xz truth.txt prog sysroot/sysroot.tar.xz; do
		echo "sha256 $(sha256sum <"$packdir/$f" | cut -d' ' -f1) $f"
	done
	echo "sha256 $(sha256sum <"$core" | cut -d' ' -f1) core (core.xz unpacked)"
	for p in "${files[@]}"; do
		p=${p#/}
		echo "sha256 $(sha256sum <"$sr/$p" | cut -d' ' -f1) sysroot/$p (in sysroot.tar.xz)"
	done
} >"$packdir/MANIFEST"
