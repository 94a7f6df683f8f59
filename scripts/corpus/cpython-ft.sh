#!/bin/bash
# cpython-ft.sh OUTDIR - a free-threaded CPython 3.13 built from Debian's
# own python3.13 source, for the mimalloc tests on CPython's vendored
# mimalloc 2.1.2 (tests/t0493, issue #56).  Prints OUTDIR/python.
#
#   1. fetches python3.13's source package through the private apt
#      configuration of scripts/lib/debian-apt.sh (trixie's deb-src from
#      the mirror the host's apt sources name, or HEAPWALK_DEBIAN_MIRROR;
#      sid's when trixie's answers 404);
#   2. unpacks it with dpkg-source -x (Debian's patches applied; without
#      dpkg-source, the upstream tarball) into OUTDIR, which is the
#      source and the build tree at once (so OUTDIR/python is the
#      interpreter, and it finds its Lib/ as a build-tree python does);
#   3. configures it with --disable-gil --without-ensurepip and nothing
#      else: a release build (-O3, NDEBUG, MI_DEBUG 0), no PGO or LTO,
#      libpython linked statically into OUTDIR/python (mimalloc with it);
#   4. makes only the interpreter and its build-tree path configuration
#      (make -j2 python pybuilddir.txt): no shared extension modules
#      (_ssl, _decimal, ...), which the tests do not import and which
#      would double the build's time.
#
# Nothing is rebuilt while OUTDIR/python exists and OUTDIR/.cpython-ft
# (the stamp: recipe, configure arguments, compiler) matches; then no
# network is used.  The first run downloads 23 MB and builds for a few
# minutes (2 min 13 s on the project's 2-core VM, 108 s of it make).  Tools missing (a C compiler, make, dpkg-source,
# xz) are installed with apt-get when root; no optional library is.
#
# Idempotent, quiet on success but for the path.  Exit status: 0 done,
# 1 failure (one "cpython-ft.sh: ..." line, sometimes after a log tail),
# 2 usage, 77 this machine cannot do it (no mirror or source, not root
# and tools missing).  Environment: HEAPWALK_DEBIAN_MIRROR, JOBS (make
# -j, default 2), CPYTHON_FT_KEEP=1 keeps the scratch directory.
set -euo pipefail

me=cpython-ft.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/die.sh
. "$here/../lib/die.sh"
# shellcheck source=scripts/lib/debian-apt.sh
. "$here/../lib/debian-apt.sh"

if [ $# -ne 1 ]; then
	echo "usage: $me OUTDIR" >&2
	exit 2
fi
mkdir -p "$(dirname "$1")"
outdir=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
stamp=$outdir/.cpython-ft
cc=${CC:-gcc}
conf_args=(--disable-gil --without-ensurepip)
targets=(python pybuilddir.txt)
# The recipe's number changes when what this script builds changes.
key="recipe 1 | ${conf_args[*]} | ${targets[*]} | $cc $("$cc" -dumpfullversion 2>/dev/null || echo none)"

# One builder at a time per OUTDIR (the lock is beside it: OUTDIR is
# replaced whole).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir.lock"
	flock 9
fi
if [ -x "$outdir/python" ] && [ -f "$stamp" ] && [ "$(sed -n 's/^key //p' "$stamp")" = "$key" ]; then
	echo "$outdir/python"
	exit 0
fi

# ---- host tools ---------------------------------------------------------

command -v apt-get >/dev/null 2>&1 || cannot "apt-get is missing (this needs a Debian host)"
need=()
for t in "$cc" make dpkg-source xz; do
	command -v "$t" >/dev/null 2>&1 && continue
	case $t in
	make) need+=(make) ;;
	dpkg-source) need+=(dpkg-dev) ;;
	xz) need+=(xz-utils) ;;
	*) need+=(build-essential) ;;
	esac
done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || cannot "need ${need[*]} (not root: apt-get install ${need[*]})"
	ilog=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >"$ilog" 2>&1; then
		tail -n 5 "$ilog" | sed 's/^/  /' >&2
		rm -f "$ilog"
		cannot "apt-get install ${need[*]} failed"
	fi
	rm -f "$ilog"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-cpyft.XXXXXX")
new=$outdir.new
if [ "${CPYTHON_FT_KEEP:-0}" = 1 ]; then
	trap 'echo "$me: kept $work (and $new unless it became OUTDIR)" >&2' EXIT
else
	trap 'rm -rf "$work" "$new"' EXIT
fi

# ---- the source ---------------------------------------------------------

# trixie's python3.13 first; sid's when trixie's source is not served.
fetched=
for suite in trixie sid; do
	rc=0
	apt_private_init "$work/apt-$suite" "$suite" amd64 with-deb-src || rc=$?
	case $rc in
	0) ;;
	1) exit 77 ;; # no mirror: apt_private_init said so
	*) exit 1 ;;
	esac
	if ! apt_update; then
		apt_log_tail 4
		echo "$me: apt-get update of $suite's deb-src from $APT_MIRROR failed" >&2
		continue
	fi
	src_ver=$(aptcache showsrc python3.13 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	if [ -z "$src_ver" ]; then
		echo "$me: $suite has no python3.13 source package on $APT_MIRROR" >&2
		continue
	fi
	mkdir -p "$work/src-$suite"
	if (cd "$work/src-$suite" && aptc source --download-only "python3.13=$src_ver"); then
		fetched=$suite
		break
	fi
	apt_log_tail 4
	echo "$me: apt-get source python3.13=$src_ver ($suite) failed: the mirror does not serve it" >&2
done
[ -n "$fetched" ] || cannot "no python3.13 source package could be fetched (trixie, sid)"
mirror=$APT_MIRROR
srcdir=$work/src-$fetched
dsc=$(find "$srcdir" -maxdepth 1 -name 'python3.13_*.dsc' | sed -n 1,1p)
[ -n "$dsc" ] || die "apt-get source left no .dsc"

rm -rf "$new"
if command -v dpkg-source >/dev/null 2>&1; then
	how=dpkg-source
	if ! dpkg-source --no-check --no-copy -x "$dsc" "$new" >"$work/unpack.log" 2>&1; then
		tail -n 5 "$work/unpack.log" | sed 's/^/  /' >&2
		die "dpkg-source -x $(basename "$dsc") failed"
	fi
else
	how=orig
	orig=$(find "$srcdir" -maxdepth 1 -name 'python3.13_*.orig.tar.*' | sed -n 1,1p)
	[ -n "$orig" ] || die "no orig tarball beside $(basename "$dsc")"
	mkdir -p "$new"
	tar -xf "$orig" -C "$new" --strip-components=1 || die "cannot unpack $(basename "$orig")"
fi
if ! [ -f "$new/Objects/mimalloc/segment.c" ] || ! [ -f "$new/configure" ]; then
	die "the unpacked source has no configure or Objects/mimalloc/segment.c"
fi

# ---- build --------------------------------------------------------------

clog=$new/heapwalk-configure.log
if ! (cd "$new" && CC=$cc ./configure "${conf_args[@]}") >"$clog" 2>&1; then
	tail -n 5 "$clog" | sed 's/^/  /' >&2
	die "configure ${conf_args[*]} of python3.13 $src_ver failed"
fi
grep -q '^#define Py_GIL_DISABLED 1' "$new/pyconfig.h" || die "configure left the GIL on (no Py_GIL_DISABLED in pyconfig.h)"
blog=$new/heapwalk-make.log
jobs=${JOBS:-2}
t0=$(date +%s)
if ! make -C "$new" -j"$jobs" "${targets[@]}" >"$blog" 2>&1; then
	tail -n 8 "$blog" | sed 's/^/  /' >&2
	die "make ${targets[*]} of python3.13 $src_ver failed (CPYTHON_FT_KEEP=1 keeps the tree and its log)"
fi
secs=$(($(date +%s) - t0))
gil=$("$new/python" -E -c 'import sys; print(sys._is_gil_enabled())' 2>&1) ||
	die "the built python does not run: $gil"
[ "$gil" = False ] || die "the built python has the GIL enabled ($gil)"
{
	echo "key $key"
	echo "source python3.13 $src_ver ($fetched, $how)"
	echo "mirror $mirror"
	echo "configure ${conf_args[*]}"
	echo "make ${targets[*]}"
	echo "build_seconds $secs"
	echo "version $("$new/python" -E -c 'import sys; print(sys.version.replace(chr(10), " "))')"
} >"$new/.cpython-ft"

# Replace OUTDIR, but only one this script made (or nothing).
if [ -e "$outdir" ]; then
	[ -f "$stamp" ] || die "$outdir exists and was not made by $me"
	rm -rf "$outdir"
fi
mv "$new" "$outdir"
echo "$outdir/python"
