#!/bin/bash
# gdb-minimal.sh OUTDIR - Debian's gdb-minimal (gdb built without Python,
# as many device and distribution gdbs are) unpacked into OUTDIR, for the
# plugin's tests; prints the path of its gdb binary.
#
# gdb-minimal conflicts with gdb, so it is not installed: the package of
# the host's own release is fetched with `apt-get download` (the host's
# apt sources and lists) and extracted with dpkg-deb -x.  Its libraries
# are gdb's, which setup-deps installs.  Idempotent (nothing is redone
# while OUTDIR/usr/bin/gdb is there and runs); exit 77 when this machine
# cannot do it (not Debian, package not downloadable), 1 on other
# failures, 2 on bad usage.
set -euo pipefail
me=gdb-minimal.sh

if [ $# -ne 1 ]; then
	echo "usage: $me OUTDIR" >&2
	exit 2
fi
out=$1
gdb=$out/usr/bin/gdb

# A gdb that prints its version is a usable one.
if [ -x "$gdb" ] && "$gdb" -nx -batch -ex 'show version' >/dev/null 2>&1; then
	echo "$gdb"
	exit 0
fi
command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 || {
	echo "$me: not a Debian system (no apt-get or dpkg-deb)" >&2
	exit 77
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
gdb=$out/usr/bin/gdb
work=$(mktemp -d "$out/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt-get download works as any user; as root it only warns that the
# _apt user cannot write to the directory.
if ! (cd "$work" && apt-get -q download gdb-minimal >"$work/log" 2>&1); then
	# Lists may be absent on a fresh machine: refresh them when allowed.
	if [ "$(id -u)" = 0 ]; then
		apt-get -q update >>"$work/log" 2>&1 || true
		(cd "$work" && apt-get -q download gdb-minimal >>"$work/log" 2>&1) || {
			sed 's/^/  /' "$work/log" | tail -n 5 >&2
			echo "$me: cannot download gdb-minimal" >&2
			exit 77
		}
	else
		sed 's/^/  /' "$work/log" | tail -n 5 >&2
		echo "$me: cannot download gdb-minimal" >&2
		exit 77
	fi
fi
dpkg-deb -x "$work"/gdb-minimal_*.deb "$out" || {
	echo "$me: cannot unpack $(basename "$work"/gdb-minimal_*.deb)" >&2
	exit 1
}
"$gdb" -nx -batch -ex 'show version' >/dev/null 2>&1 || {
	echo "$me: the unpacked $gdb does not run (gdb's libraries missing?)" >&2
	exit 1
}
echo "$gdb"
