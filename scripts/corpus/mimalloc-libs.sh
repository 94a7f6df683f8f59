#!/bin/bash
# mimalloc-libs.sh VARIANT OUTDIR - unpack one Debian release's mimalloc
# into OUTDIR, for the mimalloc corpus (corpora/mimalloc, tests/t049N).
#
#   VARIANT               release   arch   what
#   mimalloc-2.0.9-src    bookworm  -      the source package (apt-get
#                                          source): OUTDIR is the source
#                                          tree (src/static.c, include/)
#   mimalloc-2.0.9-arm64  bookworm  arm64  libmimalloc2.0, libmimalloc-dev
#   mimalloc-3.0.1-amd64  trixie    amd64  libmimalloc3, libmimalloc-dev
#   mimalloc-3.6.0-amd64  sid       amd64  libmimalloc3, libmimalloc-dev
#   mimalloc-3.6.0-arm64  sid       arm64  libmimalloc3, libmimalloc-dev
#
# Binary variants are extracted with dpkg-deb -x: the library at
# OUTDIR/usr/lib/TRIPLE/libmimalloc.so.N (Debian's, stripped), the
# headers at OUTDIR/usr/include (mimalloc.h).  Programs link with
# -L OUTDIR/usr/lib/TRIPLE and run with LD_LIBRARY_PATH or an RPATH
# there; the arm64 ones run under qemu-aarch64 -L with the glibc of
# scripts/corpus/sysroot.sh's glibc-2.36-arm64.  (bookworm's amd64
# libmimalloc2.0 is the host's own: scripts/setup-deps.sh installs it.)
# The source variant is bookworm's (Debian keeps no patches on it), for
# a program with mimalloc compiled in (src/static.c): trixie's and
# sid's source packages are not on every mirror, their binaries are.
#
# Packages come through a private apt configuration
# (scripts/lib/debian-apt.sh: its own lists, cache and sources.list; the
# host's package state is not touched), from the Debian mirror the host's
# apt already uses (debian_mirror there) unless HEAPWALK_DEBIAN_MIRROR
# names one.  The version each variant names must be the release's, or
# the variant cannot be made here (sid moves on).
#
# OUTDIR/.mimalloc records the variant, suite, arch, triple, version,
# mirror and each package's version.  Idempotent (nothing is redone while
# OUTDIR/.mimalloc is newer than this script and debian-apt.sh), quiet on
# success; on failure one "mimalloc-libs.sh: ..." line (plus the tail of
# the apt log) and exit 1; exit 77 when this machine cannot do it (no
# mirror reachable, the release has another version); exit 2 on bad
# usage.
set -euo pipefail

me=mimalloc-libs.sh
# shellcheck source=scripts/lib/die.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/die.sh"

if [ $# -ne 2 ]; then
	echo "usage: $me VARIANT OUTDIR" >&2
	exit 2
fi
variant=$1
outdir=$2

case $variant in
mimalloc-2.0.9-src) suite=bookworm arch=amd64 ver=2.0.9 pkgs=() ;;
mimalloc-2.0.9-arm64) suite=bookworm arch=arm64 ver=2.0.9 pkgs=(libmimalloc2.0 libmimalloc-dev) ;;
mimalloc-3.0.1-amd64) suite=trixie arch=amd64 ver=3.0.1 pkgs=(libmimalloc3 libmimalloc-dev) ;;
mimalloc-3.6.0-amd64) suite=sid arch=amd64 ver=3.6.0 pkgs=(libmimalloc3 libmimalloc-dev) ;;
mimalloc-3.6.0-arm64) suite=sid arch=arm64 ver=3.6.0 pkgs=(libmimalloc3 libmimalloc-dev) ;;
*)
	echo "$me: unknown variant '$variant' (mimalloc-2.0.9-src, mimalloc-2.0.9-arm64, mimalloc-3.0.1-amd64, mimalloc-3.6.0-amd64, mimalloc-3.6.0-arm64)" >&2
	exit 2
	;;
esac
case $arch in
amd64) triple=x86_64-linux-gnu ;;
arm64) triple=aarch64-linux-gnu ;;
esac

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

# One builder at a time per OUTDIR.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir/.lock"
	flock 9
fi

stamp=$outdir/.mimalloc
lib=$(dirname "$0")/../lib/debian-apt.sh
if [ -f "$stamp" ] && ! [ "$0" -nt "$stamp" ] && ! [ "$lib" -nt "$stamp" ] &&
	[ "$(head -n1 "$stamp")" = "variant $variant" ]; then
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || cannot "apt-get is missing (this needs a Debian host)"
command -v dpkg-deb >/dev/null 2>&1 || cannot "dpkg-deb is missing (this needs a Debian host)"

# shellcheck source=scripts/lib/debian-apt.sh
. "$lib"
work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-mimalloc.XXXXXX")
trap 'rm -rf "$work"' EXIT
rc=0
if [ ${#pkgs[@]} = 0 ]; then
	apt_private_init "$work" "$suite" "$arch" with-deb-src || rc=$?
else
	apt_private_init "$work" "$suite" "$arch" || rc=$?
fi
case $rc in
0) ;;
1) exit 77 ;;
*) exit 1 ;;
esac
mirror=$APT_MIRROR
if ! apt_update; then
	apt_log_tail 8
	cannot "apt-get update of $suite/$arch from $mirror failed"
fi

# Start clean: only ever empty a directory this script made (or an
# empty one).
if [ -n "$(find "$outdir" -mindepth 1 -maxdepth 1 ! -name .lock ! -name '.mimalloc*' -print -quit)" ] &&
	! [ -e "$stamp" ] && ! [ -e "$outdir/.mimalloc-partial" ]; then
	die "$outdir is not empty and not made by $me"
fi

versions=()
if [ ${#pkgs[@]} = 0 ]; then
	# The source package: its version first (a mirror may lack it).
	srcver=$(aptcache showsrc mimalloc 2>/dev/null | sed -n 's/^Version: //p' | sed -n 1,1p)
	case $srcver in
	"$ver"+* | "$ver"-*) ;;
	"") cannot "$suite has no mimalloc source package on $mirror" ;;
	*) cannot "$suite's mimalloc source is $srcver, not $ver" ;;
	esac
	(cd "$work/debs" && aptc source --download-only "mimalloc=$srcver") || {
		apt_log_tail 8
		cannot "apt-get source mimalloc=$srcver ($suite) failed: the mirror does not serve it"
	}
	dsc=$(find "$work/debs" -name 'mimalloc_*.dsc' | sed -n 1,1p)
	[ -n "$dsc" ] || die "apt-get source left no .dsc"
	: >"$outdir/.mimalloc-partial"
	find "$outdir" -mindepth 1 -maxdepth 1 ! -name .lock ! -name .mimalloc-partial -exec rm -rf {} +
	if command -v dpkg-source >/dev/null 2>&1; then
		dpkg-source --no-check -x "$dsc" "$work/src" >"$work/unpack.log" 2>&1 ||
			{ tail -n 5 "$work/unpack.log" >&2; die "dpkg-source -x $(basename "$dsc") failed"; }
	else
		# (No dpkg-dev: the upstream tarball; Debian patches none of it.)
		orig=$(find "$work/debs" -name 'mimalloc_*.orig.tar.*' | sed -n 1,1p)
		[ -n "$orig" ] || die "no orig tarball beside $(basename "$dsc")"
		mkdir -p "$work/src"
		tar -xf "$orig" -C "$work/src" --strip-components=1 ||
			die "cannot unpack $(basename "$orig")"
	fi
	cp -a "$work/src/." "$outdir/"
	if ! [ -f "$outdir/src/static.c" ] || ! [ -f "$outdir/include/mimalloc.h" ]; then
		die "the unpacked source has no src/static.c or include/mimalloc.h"
	fi
	versions+=("source mimalloc $srcver")
else
	(cd "$work/debs" && aptc download "${pkgs[@]}") || {
		apt_log_tail 8
		die "apt-get download ${pkgs[*]} ($suite/$arch) failed"
	}
	for p in "${pkgs[@]}"; do
		deb=$(find "$work/debs" -name "${p}_*.deb" | sed -n 1,1p)
		[ -n "$deb" ] || die "apt-get download left no $p deb"
		v=$(dpkg-deb -f "$deb" Version)
		case $v in
		"$ver"+* | "$ver"-*) ;;
		*) cannot "$suite/$arch has $p $v, not mimalloc $ver" ;;
		esac
		versions+=("package $p $v")
	done
	: >"$outdir/.mimalloc-partial"
	find "$outdir" -mindepth 1 -maxdepth 1 ! -name .lock ! -name .mimalloc-partial -exec rm -rf {} +
	for deb in "$work"/debs/*.deb; do
		dpkg-deb -x "$deb" "$outdir" || die "dpkg-deb -x $(basename "$deb") failed"
	done
	so=$(find "$outdir/usr/lib/$triple" -maxdepth 1 -name 'libmimalloc.so.[0-9]*' | sed -n 1,1p)
	[ -n "$so" ] || die "no usr/lib/$triple/libmimalloc.so.N in the unpacked ${pkgs[0]}"
	[ -e "$outdir/usr/lib/$triple/libmimalloc.so" ] || die "no usr/lib/$triple/libmimalloc.so in the unpacked libmimalloc-dev"
	[ -f "$outdir/usr/include/mimalloc.h" ] || die "no usr/include/mimalloc.h in the unpacked libmimalloc-dev"
fi

{
	echo "variant $variant"
	echo "suite $suite"
	echo "arch $arch"
	echo "triple $triple"
	echo "version $ver"
	echo "mirror $mirror"
	printf '%s\n' "${versions[@]}"
} >"$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
rm -f "$outdir/.mimalloc-partial"
