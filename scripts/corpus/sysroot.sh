#!/bin/bash
# sysroot.sh VARIANT OUTDIR - unpack one Debian release's glibc (or
# jemalloc) into OUTDIR (a sysroot), for corpus cores of other glibc
# versions, of jemalloc, and of other architectures.
#
#   VARIANT              release    arch   glibc  jemalloc
#   glibc-2.31-amd64     bullseye   amd64  2.31
#   glibc-2.36-amd64     bookworm   amd64  2.36
#   glibc-2.41-amd64     trixie     amd64  2.41
#   glibc-2.43-amd64     sid        amd64  2.43
#   glibc-2.44-amd64     experimental amd64 2.44  (the rest from sid)
#   glibc-2.36-arm64     bookworm   arm64  2.36
#   jemalloc-5.2.1-amd64 bullseye   amd64  (host)  5.2.1
#   jemalloc-5.3.0-amd64 bookworm   amd64  (host)  5.3.0
#   jemalloc-5.3.0-arm64 bookworm   arm64  2.36    5.3.0
#   tcmalloc-2.10-arm64  bookworm   arm64  2.36    (gperftools 2.10)
#   tcmalloc-2.16-amd64  trixie     amd64  2.41    (gperftools 2.16)
#   tcmalloc-2.8-amd64   bullseye   amd64  2.31    (gperftools 2.8)
#   musl-1.2.3-arm64     bookworm   arm64  -       (musl 1.2.3: musl, musl-dev)
#
# glibc variants: downloads libc6, libc6-dev, libc6-dbg, libgcc-s1 and
# linux-libc-dev (the headers libc6-dev's need).  amd64 jemalloc variants:
# only libjemalloc2 and libjemalloc-dev (the program runs on the host's
# glibc, linked against the sysroot's libjemalloc.so.2).  The arm64
# jemalloc variant: the glibc packages plus libjemalloc2, libjemalloc-dev
# and libstdc++6 (libjemalloc2 needs it), enough to run under
# qemu-aarch64 -L OUTDIR.  The musl variant: musl and musl-dev alone
# (musl's libc.so, which is its dynamic linker, at
# OUTDIR/usr/lib/aarch64-linux-musl/libc.so, "ldso"
# lib/ld-musl-aarch64.so.1; libc.a, crt files and headers; the
# aarch64-linux-musl-gcc specs, whose absolute paths a build rewrites to
# OUTDIR).  Packages of that release and architecture come
# through a private apt configuration (scripts/lib/debian-apt.sh: its own
# lists, cache and sources.list; the host's package state is not touched)
# and are extracted with dpkg-deb -x.  The Debian mirror is the one the
# host's apt already uses (see debian_mirror there), unless
# HEAPWALK_DEBIAN_MIRROR names one.  The archive keys are the host's
# /usr/share/keyrings/debian-archive-keyring.gpg.
#
# The sysroot is then made merged-/usr (lib -> usr/lib, lib64 ->
# usr/lib64, as on the Debian systems that run these releases), so the
# loader and libc are at their usual paths under OUTDIR, e.g.
# OUTDIR/lib64/ld-linux-x86-64.so.2 or OUTDIR/lib/ld-linux-aarch64.so.1,
# and debug info under OUTDIR/usr/lib/debug (libjemalloc.so.2 at
# OUTDIR/usr/lib/TRIPLE/).  OUTDIR/.sysroot records the variant, its
# "triple", "ldso" (none for the amd64 jemalloc variants), "jemalloc"
# version and every package's version ("package NAME VERSION").
#
# For arm64 it also installs the host tools the corpus needs when missing
# (qemu-user, gcc-aarch64-linux-gnu) with apt-get.
#
# Idempotent (nothing is redone while OUTDIR/.sysroot is newer than this
# script and scripts/lib/debian-apt.sh), quiet on success; on failure one "sysroot.sh: ..." line (plus
# the tail of the apt log) and exit 1; exit 77 when this machine cannot
# do it (no mirror reachable, tools missing and not root); exit 2 on bad
# usage.
set -euo pipefail

me=sysroot.sh
# shellcheck source=scripts/lib/die.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/die.sh"

if [ $# -ne 2 ]; then
	echo "usage: $me VARIANT OUTDIR" >&2
	exit 2
fi
variant=$1
outdir=$2

# ver: the glibc version to check (empty: the host's glibc is used);
# jever: the jemalloc version (empty: no jemalloc).
jever=
# tcver: the gperftools version (empty: no tcmalloc).
tcver=
# muslver: the musl version (empty: no musl).
muslver=
# extra: a suite that only adds packages to `suite` (experimental): the
# glibc packages come from it, everything else from `suite`.
extra=
case $variant in
glibc-2.31-amd64) suite=bullseye arch=amd64 ver=2.31 ;;
glibc-2.36-amd64) suite=bookworm arch=amd64 ver=2.36 ;;
glibc-2.41-amd64) suite=trixie arch=amd64 ver=2.41 ;;
glibc-2.43-amd64) suite=sid arch=amd64 ver=2.43 ;;
glibc-2.44-amd64) suite=sid extra=experimental arch=amd64 ver=2.44 ;;
glibc-2.36-arm64) suite=bookworm arch=arm64 ver=2.36 ;;
jemalloc-5.2.1-amd64) suite=bullseye arch=amd64 ver='' jever=5.2.1 ;;
jemalloc-5.3.0-amd64) suite=bookworm arch=amd64 ver='' jever=5.3.0 ;;
jemalloc-5.3.0-arm64) suite=bookworm arch=arm64 ver=2.36 jever=5.3.0 ;;
tcmalloc-2.10-arm64) suite=bookworm arch=arm64 ver=2.36 tcver=2.10 ;;
tcmalloc-2.16-amd64) suite=trixie arch=amd64 ver=2.41 tcver=2.16 ;;
tcmalloc-2.8-amd64) suite=bullseye arch=amd64 ver=2.31 tcver=2.8 ;;
musl-1.2.3-arm64) suite=bookworm arch=arm64 ver='' muslver=1.2.3 ;;
*)
	echo "$me: unknown variant '$variant' (glibc-2.31-amd64, glibc-2.36-amd64, glibc-2.41-amd64, glibc-2.43-amd64, glibc-2.44-amd64, glibc-2.36-arm64, jemalloc-5.2.1-amd64, jemalloc-5.3.0-amd64, jemalloc-5.3.0-arm64, tcmalloc-2.10-arm64, tcmalloc-2.16-amd64, tcmalloc-2.8-amd64, musl-1.2.3-arm64)" >&2
	exit 2
	;;
esac

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

# One builder at a time per OUTDIR.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir/.lock"
	flock 9
fi

stamp=$outdir/.sysroot
lib=$(dirname "$0")/../lib/debian-apt.sh
if [ -f "$stamp" ] && ! [ "$0" -nt "$stamp" ] && ! [ "$lib" -nt "$stamp" ] &&
	[ "$(head -n1 "$stamp")" = "variant $variant" ]; then
	exit 0
fi

# ---- host tools ---------------------------------------------------------

need_tools=()
command -v dpkg-deb >/dev/null 2>&1 || die "dpkg-deb is missing (this needs a Debian host)"
command -v apt-get >/dev/null 2>&1 || die "apt-get is missing (this needs a Debian host)"
if [ "$arch" = arm64 ]; then
	command -v qemu-aarch64 >/dev/null 2>&1 || need_tools+=(qemu-user)
	command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need_tools+=(gcc-aarch64-linux-gnu)
fi
if [ ${#need_tools[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || cannot "need ${need_tools[*]} installed (not root: apt-get install ${need_tools[*]})"
	log=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_tools[@]}" >"$log" 2>&1; then
		tail -n 5 "$log" >&2
		rm -f "$log"
		die "apt-get install ${need_tools[*]} failed"
	fi
	rm -f "$log"
fi

# ---- private apt (scripts/lib/debian-apt.sh) ---------------------------

# shellcheck source=scripts/lib/debian-apt.sh
. "$lib"
work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-sysroot.XXXXXX")
trap 'rm -rf "$work"' EXIT
rc=0
apt_private_init "$work" "$suite" "$arch" || rc=$?
case $rc in
0) ;;
1) exit 77 ;;
*) exit 1 ;;
esac
mirror=$APT_MIRROR
if [ -n "$extra" ]; then
	echo "deb [arch=$arch signed-by=$DEBIAN_KEYRING] $APT_MIRROR $extra main" >>"$APT_WORK/etc/sources.list"
fi
apt_fail() {
	apt_log_tail 8
	die "$*"
}

if ! apt_update; then
	apt_log_tail 8
	cannot "apt-get update of $suite/$arch from $mirror failed"
fi
pkgs=()
if [ -n "$ver" ]; then pkgs+=(libc6 libc6-dev libc6-dbg libgcc-s1 linux-libc-dev); fi
if [ -n "$jever" ]; then pkgs+=(libjemalloc2 libjemalloc-dev); fi
if [ -n "$jever" ] && [ -n "$ver" ]; then pkgs+=(libstdc++6); fi
# gperftools: the minimal library and the headers (libgoogle-perftools-dev
# is arch-independent in content; its .so links are the full library's).
# trixie renamed the library's package in the 64-bit time_t transition.
tcpkg=libtcmalloc-minimal4
case $suite in bullseye | bookworm) ;; *) tcpkg=libtcmalloc-minimal4t64 ;; esac
if [ -n "$tcver" ]; then pkgs+=("$tcpkg" libgoogle-perftools-dev libstdc++6); fi
if [ -n "$muslver" ]; then pkgs+=(musl musl-dev); fi
# What apt-get download is asked for: the glibc packages from $extra.
get=()
for p in "${pkgs[@]}"; do
	case $p in
	libc6 | libc6-dev | libc6-dbg) get+=("$p${extra:+/$extra}") ;;
	*) get+=("$p") ;;
	esac
done
(cd "$APT_WORK/debs" && aptc download "${get[@]}") ||
	apt_fail "apt-get download ${get[*]} ($suite${extra:++$extra}/$arch) failed"

libc_ver='' je_ver='' tc_ver='' musl_ver=''
for p in "${pkgs[@]}"; do
	deb=$(find "$work/debs" -name "${p}_*.deb" | sed -n 1,1p)
	[ -n "$deb" ] || die "apt-get download left no $p deb"
	v=$(dpkg-deb -f "$deb" Version)
	if [ "$p" = libc6 ]; then libc_ver=$v; fi
	if [ "$p" = libjemalloc2 ]; then je_ver=$v; fi
	if [ "$p" = "$tcpkg" ]; then tc_ver=$v; fi
	if [ "$p" = musl ]; then musl_ver=$v; fi
done
if [ -n "$muslver" ]; then
	case $musl_ver in
	"$muslver"-*) ;;
	*) die "$suite/$arch has musl $musl_ver, not musl $muslver" ;;
	esac
fi
if [ -n "$ver" ]; then
	case $libc_ver in
	"$ver"-*) ;;
	*) die "$suite/$arch has libc6 $libc_ver, not glibc $ver" ;;
	esac
fi
if [ -n "$tcver" ]; then
	case $tc_ver in
	"$tcver"-* | "$tcver".*) ;;
	*) die "$suite/$arch has $tcpkg $tc_ver, not gperftools $tcver" ;;
	esac
fi
if [ -n "$jever" ]; then
	case $je_ver in
	"$jever"-*) ;;
	*) die "$suite/$arch has libjemalloc2 $je_ver, not jemalloc $jever" ;;
	esac
fi

# ---- unpack -------------------------------------------------------------

# Start clean: leftovers of another variant must not mix in.  Only ever
# empty a directory this script made (or an empty one).
if [ -n "$(find "$outdir" -mindepth 1 -maxdepth 1 ! -name .lock ! -name '.sysroot*' -print -quit)" ] &&
	! [ -e "$stamp" ] && ! [ -e "$outdir/.sysroot-partial" ]; then
	die "$outdir is not empty and not a sysroot made by $me"
fi
: >"$outdir/.sysroot-partial"
find "$outdir" -mindepth 1 -maxdepth 1 ! -name .lock ! -name .sysroot-partial -exec rm -rf {} +
for deb in "$work"/debs/*.deb; do
	dpkg-deb -x "$deb" "$outdir" || die "dpkg-deb -x $(basename "$deb") failed"
done

# Merged /usr: move /lib, /lib64 into /usr and leave symlinks behind.
for d in lib lib64; do
	if [ -d "$outdir/$d" ] && ! [ -L "$outdir/$d" ]; then
		mkdir -p "$outdir/usr/$d"
		cp -a "$outdir/$d/." "$outdir/usr/$d/"
		rm -rf "${outdir:?}/$d"
	fi
	if [ -d "$outdir/usr/$d" ] && ! [ -e "$outdir/$d" ]; then
		ln -s "usr/$d" "$outdir/$d"
	fi
done

# Absolute symlinks (bullseye's /lib64/ld-linux-x86-64.so.2 ->
# /lib/x86_64-linux-gnu/ld-2.31.so) would lead out of the sysroot.
while IFS= read -r -d '' l; do
	t=$(readlink "$l")
	case $t in
	/*) ln -sfn --relative "$outdir$t" "$l" ;;
	esac
done < <(find "$outdir" -type l -print0)

case $arch in
amd64) ldso=lib64/ld-linux-x86-64.so.2 triple=x86_64-linux-gnu ;;
arm64) ldso=lib/ld-linux-aarch64.so.1 triple=aarch64-linux-gnu ;;
esac
if [ -n "$muslver" ]; then
	triple=aarch64-linux-musl ldso=lib/ld-musl-aarch64.so.1
	[ -e "$outdir/usr/lib/$triple/libc.so" ] || die "no usr/lib/$triple/libc.so in the unpacked musl"
	[ -e "$outdir/usr/lib/$triple/libc.a" ] || die "no usr/lib/$triple/libc.a in the unpacked musl-dev"
	[ -e "$outdir/usr/lib/$triple/musl-gcc.specs" ] || die "no usr/lib/$triple/musl-gcc.specs in the unpacked musl-dev"
elif [ -n "$ver" ]; then
	[ -e "$outdir/$ldso" ] || die "no $ldso in the unpacked $suite/$arch libc6"
	[ -e "$outdir/usr/lib/$triple/libc.so.6" ] || die "no usr/lib/$triple/libc.so.6 in the unpacked libc6"
	[ -d "$outdir/usr/lib/debug" ] || die "libc6-dbg of $suite/$arch has no usr/lib/debug"
else
	ldso=none
fi
if [ -n "$jever" ]; then
	[ -e "$outdir/usr/lib/$triple/libjemalloc.so.2" ] || die "no usr/lib/$triple/libjemalloc.so.2 in the unpacked libjemalloc2"
	[ -e "$outdir/usr/lib/$triple/libjemalloc.so" ] || die "no usr/lib/$triple/libjemalloc.so in the unpacked libjemalloc-dev"
	[ -e "$outdir/usr/include/jemalloc/jemalloc.h" ] || die "no usr/include/jemalloc/jemalloc.h in the unpacked libjemalloc-dev"
fi

{
	echo "variant $variant"
	echo "suite $suite${extra:+ $extra}"
	echo "arch $arch"
	echo "triple $triple"
	echo "ldso $ldso"
	if [ -n "$jever" ]; then echo "jemalloc $jever"; fi
	echo "mirror $mirror"
	for deb in "$work"/debs/*.deb; do
		echo "package $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
	done
} >"$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
rm -f "$outdir/.sysroot-partial"
