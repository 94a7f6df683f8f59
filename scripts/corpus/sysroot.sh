#!/bin/bash
# sysroot.sh VARIANT OUTDIR - unpack one Debian release's glibc into OUTDIR
# (a sysroot), for corpus cores of other glibc versions and architectures.
#
#   VARIANT              release    arch   glibc
#   glibc-2.31-amd64     bullseye   amd64  2.31
#   glibc-2.36-amd64     bookworm   amd64  2.36
#   glibc-2.41-amd64     trixie     amd64  2.41
#   glibc-2.36-arm64     bookworm   arm64  2.36
#
# Downloads libc6, libc6-dev, libc6-dbg, libgcc-s1 and linux-libc-dev (the
# headers libc6-dev's need) of that release and architecture with a private
# apt configuration (its own lists, cache and sources.list; the host's
# package state is not touched) and extracts them with dpkg-deb -x.  The
# Debian mirror is the one the host's apt already uses: the first URI of
# /etc/apt/sources.list.d/*.sources (deb822) or /etc/apt/sources.list that
# serves a plain release suite (not -security), unless HEAPWALK_DEBIAN_MIRROR
# names one.  The archive keys are the host's
# /usr/share/keyrings/debian-archive-keyring.gpg.
#
# The sysroot is then made merged-/usr (lib -> usr/lib, lib64 ->
# usr/lib64, as on the Debian systems that run these releases), so the
# loader and libc are at their usual paths under OUTDIR, e.g.
# OUTDIR/lib64/ld-linux-x86-64.so.2 or OUTDIR/lib/ld-linux-aarch64.so.1,
# and debug info under OUTDIR/usr/lib/debug.  OUTDIR/.sysroot records the
# variant and the package versions.
#
# For arm64 it also installs the host tools the corpus needs when missing
# (qemu-user, gcc-aarch64-linux-gnu) with apt-get.
#
# Idempotent (nothing is redone while OUTDIR/.sysroot is newer than this
# script), quiet on success; on failure one "sysroot.sh: ..." line (plus
# the tail of the apt log) and exit 1; exit 77 when this machine cannot
# do it (no mirror reachable, tools missing and not root); exit 2 on bad
# usage.
set -euo pipefail

me=sysroot.sh
die() {
	echo "$me: $*" >&2
	exit 1
}
cannot() {
	echo "$me: $*" >&2
	exit 77
}

if [ $# -ne 2 ]; then
	echo "usage: $me VARIANT OUTDIR" >&2
	exit 2
fi
variant=$1
outdir=$2

case $variant in
glibc-2.31-amd64) suite=bullseye arch=amd64 ver=2.31 ;;
glibc-2.36-amd64) suite=bookworm arch=amd64 ver=2.36 ;;
glibc-2.41-amd64) suite=trixie arch=amd64 ver=2.41 ;;
glibc-2.36-arm64) suite=bookworm arch=arm64 ver=2.36 ;;
*)
	echo "$me: unknown variant '$variant' (glibc-2.31-amd64, glibc-2.36-amd64, glibc-2.41-amd64, glibc-2.36-arm64)" >&2
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
if [ -f "$stamp" ] && ! [ "$0" -nt "$stamp" ] &&
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

# ---- the mirror the host uses -------------------------------------------

# Print the first URI of an enabled deb822 stanza of type deb that serves
# a plain suite (no "-security"/"-updates"/"-backports"/"/updates").
mirror_deb822() {
	awk '
	function flush() {
		if (types ~ /(^| )deb( |$)/ && enabled != "no" && uri != "" && plain)
			{ print uri; found = 1; exit }
		types = ""; uri = ""; plain = 0; enabled = ""
	}
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	{
		key = tolower($1); sub(/:$/, "", key)
		if (key == "types") { $1 = ""; types = $0 " " }
		else if (key == "uris") uri = $2
		else if (key == "enabled") enabled = tolower($2)
		else if (key == "suites") {
			for (i = 2; i <= NF; i++)
				if ($i !~ /[-\/]/) plain = 1
		}
	}
	END { if (!found) flush() }
	' "$@" 2>/dev/null | head -n1
}

# Same for one-line style: deb [options] URI SUITE COMPONENTS...
mirror_oneline() {
	awk '
	$1 == "deb" {
		i = 2
		if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
		uri = $i; s = $(i + 1)
		if (uri != "" && s !~ /[-\/]/) { print uri; exit }
	}' "$@" 2>/dev/null | head -n1
}

mirror=${HEAPWALK_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	shopt -s nullglob
	d822=(/etc/apt/sources.list.d/*.sources)
	lists=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
	shopt -u nullglob
	if [ ${#d822[@]} -gt 0 ]; then mirror=$(mirror_deb822 "${d822[@]}"); fi
	if [ -z "$mirror" ]; then
		for f in "${lists[@]}"; do
			[ -f "$f" ] || continue
			mirror=$(mirror_oneline "$f")
			[ -n "$mirror" ] && break
		done
	fi
fi
[ -n "$mirror" ] || cannot "no Debian mirror found in /etc/apt/sources.list{,.d/*.sources,.d/*.list} (set HEAPWALK_DEBIAN_MIRROR)"
mirror=${mirror%/}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "no $keyring (install debian-archive-keyring)"

# ---- private apt --------------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-sysroot.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{lists/partial,archives/partial,etc/sources.list.d,etc/preferences.d,debs}
: >"$work/status"
echo "deb [arch=$arch signed-by=$keyring] $mirror $suite main" >"$work/etc/sources.list"
cat >"$work/apt.conf" <<EOF
Dir::State "$work";
Dir::State::lists "$work/lists";
Dir::State::status "$work/status";
Dir::Cache "$work";
Dir::Cache::archives "$work/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Dir::Etc::sourcelist "$work/etc/sources.list";
Dir::Etc::sourceparts "$work/etc/sources.list.d";
Dir::Etc::preferences "$work/etc/preferences";
Dir::Etc::preferencesparts "$work/etc/preferences.d";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
APT::Sandbox::User "root";
EOF
apt_log=$work/apt.log
aptc() { apt-get -c "$work/apt.conf" -q "$@" >>"$apt_log" 2>&1; }
apt_fail() {
	tail -n 8 "$apt_log" | sed 's/^/  /' >&2
	die "$*"
}

if ! aptc update || grep -qE '^(W|E): Failed to fetch' "$apt_log"; then
	tail -n 8 "$apt_log" | sed 's/^/  /' >&2
	cannot "apt-get update of $suite/$arch from $mirror failed"
fi
pkgs=(libc6 libc6-dev libc6-dbg libgcc-s1 linux-libc-dev)
(cd "$work/debs" && aptc download "${pkgs[@]}") ||
	apt_fail "apt-get download ${pkgs[*]} ($suite/$arch) failed"

libc_ver=
for p in "${pkgs[@]}"; do
	deb=$(find "$work/debs" -name "${p}_*.deb" | head -n1)
	[ -n "$deb" ] || die "apt-get download left no $p deb"
	v=$(dpkg-deb -f "$deb" Version)
	if [ "$p" = libc6 ]; then libc_ver=$v; fi
done
case $libc_ver in
"$ver"-*) ;;
*) die "$suite/$arch has libc6 $libc_ver, not glibc $ver" ;;
esac

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
[ -e "$outdir/$ldso" ] || die "no $ldso in the unpacked $suite/$arch libc6"
[ -e "$outdir/usr/lib/$triple/libc.so.6" ] || die "no usr/lib/$triple/libc.so.6 in the unpacked libc6"
[ -d "$outdir/usr/lib/debug" ] || die "libc6-dbg of $suite/$arch has no usr/lib/debug"

{
	echo "variant $variant"
	echo "suite $suite"
	echo "arch $arch"
	echo "triple $triple"
	echo "ldso $ldso"
	echo "mirror $mirror"
	for deb in "$work"/debs/*.deb; do
		echo "package $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
	done
} >"$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
rm -f "$outdir/.sysroot-partial"
