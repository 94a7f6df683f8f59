#!/bin/bash
# jemalloc-prof.sh BASE OUTDIR - a sysroot like BASE (scripts/corpus/
# sysroot.sh's jemalloc-5.3.0-arm64: Debian's glibc and libjemalloc2 for a
# foreign architecture) whose libjemalloc.so.2 is rebuilt from the same
# Debian source with --enable-prof, which Debian's arm64 package lacks
# (debian/rules turns prof on for i386 and amd64 only).  For the corpus
# variant jemalloc-5.3.0-arm64-prof of make-core.sh: the programs run
# under qemu-aarch64 -L OUTDIR.
#
#   1. reads BASE/.sysroot (sysroot.sh's record): suite, arch, triple and
#      the libjemalloc2 version (e.g. 5.3.0-1);
#   2. fetches that source version with apt-get source through the private
#      apt configuration of scripts/lib/debian-apt.sh (the mirror is the
#      one the host's apt sources name, or HEAPWALK_DEBIAN_MIRROR);
#   3. configures it as the package build would for that architecture
#      (debian/rules' own arguments, evaluated with the target's DEB_*
#      variables: --with-version=VERSION --with-lg-page=16
#      --with-lg-hugepage=21 on arm64; dh_auto_configure's standard
#      arguments; dpkg-buildflags through debian/rules) plus --enable-prof
#      (backtraces by the libgcc unwinder, configure's default) and
#      --disable-cxx (the C++ operator wrappers need a cross g++ and no
#      corpus program is C++), compiles with TRIPLE-gcc and builds only
#      lib/libjemalloc.so.2;
#   4. OUTDIR: a copy of BASE made of hard links (cp -al: no space), with
#      usr/lib/TRIPLE/libjemalloc.so.2 replaced by the new library
#      stripped as dh_strip strips (no .symtab, no debug info: like
#      Debian's, so heapwalk reads it without symbols) and Debian's
#      non-prof static archives removed; the unstripped build (-g) is
#      OUTDIR/.debug/.build-id/NN/REST.debug (a --debug-dir tree outside
#      the sysroot's usr/lib/debug, so nothing finds it unasked).
#      OUTDIR/.sysroot is BASE's record with "variant BASEVARIANT-prof",
#      the configure arguments and the build's wall time in seconds.
#
# The library is rebuilt only when what goes into it changes (source
# version, configure arguments, compiler version: the "key" kept in
# OUTDIR/.debug/key); OUTDIR is reassembled when BASE/.sysroot is newer
# than OUTDIR/.sysroot.  The first run downloads ~750 KB of source and
# compiles for a minute or two on 2 cores.
#
# Idempotent, quiet on success.  Exit status: 0 done, 1 failure (one
# "jemalloc-prof.sh: ..." line, sometimes after an indented log tail),
# 2 usage, 77 this machine cannot do it (no mirror or source reachable,
# cross compiler or dpkg-dev missing and not root).  Tools missing when
# root are installed with apt-get.  Environment: HEAPWALK_DEBIAN_MIRROR,
# JOBS (make -j), JEMALLOC_PROF_KEEP=1 keeps the scratch directory.
set -euo pipefail

me=jemalloc-prof.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/die.sh
. "$here/../lib/die.sh"
# shellcheck source=scripts/lib/debian-apt.sh
. "$here/../lib/debian-apt.sh"

if [ $# -ne 2 ]; then
	echo "usage: $me BASE OUTDIR" >&2
	exit 2
fi
[ -f "$1/.sysroot" ] || die "$1 is not a sysroot made by sysroot.sh (no .sysroot)"
base=$(cd "$1" && pwd)
bstamp=$base/.sysroot
field() { sed -n "s/^$1 //p" "$bstamp" | sed -n 1,1p; }
bvariant=$(field variant)
suite=$(field suite)
arch=$(field arch)
triple=$(field triple)
ldso=$(field ldso)
je_deb=$(sed -n 's/^package libjemalloc2 //p' "$bstamp")
variant=$bvariant-prof
[ -n "$je_deb" ] || die "$base holds no libjemalloc2 (not a jemalloc sysroot)"
# The program runs on BASE's own glibc (qemu -L): a glibc sysroot is needed.
case $ldso in "" | none) die "$base has no glibc of its own (ldso ${ldso:-unknown})" ;; esac
suite=${suite%% *}

mkdir -p "$(dirname "$2")"
outdir=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
stamp=$outdir/.sysroot

# One builder at a time per OUTDIR (the lock is beside it: OUTDIR is
# replaced whole).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir.lock"
	flock 9
fi
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "variant $variant" ] &&
	! [ "$bstamp" -nt "$stamp" ] && [ -f "$outdir/.debug/key" ] &&
	! [ "$0" -nt "$stamp" ]; then
	exit 0
fi

# ---- host tools ---------------------------------------------------------

host_arch=$(dpkg --print-architecture 2>/dev/null) || cannot "dpkg is missing (this needs a Debian host)"
command -v apt-get >/dev/null 2>&1 || cannot "apt-get is missing (this needs a Debian host)"
if [ "$arch" = "$host_arch" ]; then
	cc=gcc strip=strip
else
	cc=$triple-gcc strip=$triple-strip
fi
need=()
for t in make "$cc" "$strip" dpkg-source dpkg-buildflags dpkg-architecture bzip2 xz; do
	command -v "$t" >/dev/null 2>&1 && continue
	case $t in
	"$cc") need+=("gcc-$triple") ;;
	"$strip") need+=("binutils-$triple") ;;
	make) need+=(make) ;;
	dpkg-*) need+=(dpkg-dev) ;;
	bzip2) need+=(bzip2) ;;
	xz) need+=(xz-utils) ;;
	esac
done
if [ "$arch" = "$host_arch" ]; then
	# Native: the plain names come with build-essential.
	need=("${need[@]/#gcc-$triple/build-essential}")
	need=("${need[@]/#binutils-$triple/binutils}")
fi
if [ ${#need[@]} -gt 0 ]; then
	mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
	[ "$(id -u)" = 0 ] || cannot "need ${need[*]} (not root: apt-get install ${need[*]})"
	ilog=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >"$ilog" 2>&1; then
		tail -n 5 "$ilog" | sed 's/^/  /' >&2
		rm -f "$ilog"
		cannot "apt-get install ${need[*]} failed"
	fi
	rm -f "$ilog"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-jeprof.XXXXXX")
if [ "${JEMALLOC_PROF_KEEP:-0}" = 1 ]; then
	trap 'echo "$me: kept $work" >&2' EXIT
else
	trap 'rm -rf "$work" "$outdir.new"' EXIT
fi

# ---- the source ---------------------------------------------------------

rc=0
apt_private_init "$work/apt" "$suite" "$arch" with-deb-src || rc=$?
case $rc in
0) ;;
1) exit 77 ;; # no mirror: apt_private_init said so
*) exit 1 ;;
esac
if ! apt_update; then
	apt_log_tail 4
	cannot "apt-get update of $suite's deb-src from $APT_MIRROR failed"
fi
# libjemalloc2's source package and version (a binNMU's Source names it).
src_field=$(aptcache show "libjemalloc2:$arch=$je_deb" 2>/dev/null |
	awk '/^Source:/ { $1 = ""; sub(/^ /, ""); print; exit }')
src_pkg=${src_field%% *}
src_pkg=${src_pkg:-jemalloc}
src_ver=$je_deb
if [[ $src_field =~ \((.*)\) ]]; then src_ver=${BASH_REMATCH[1]}; fi
upver=${src_ver#*:}
upver=${upver%%-*}
mkdir -p "$work/src"
if ! (cd "$work/src" && aptc source --download-only "$src_pkg=$src_ver"); then
	apt_log_tail 4
	cannot "apt-get source $src_pkg=$src_ver ($suite) failed: the mirror does not serve it"
fi
dsc=$(find "$work/src" -maxdepth 1 -name '*.dsc' | sed -n 1,1p)
[ -n "$dsc" ] || die "apt-get source left no .dsc"
tree=$work/build/$src_pkg-$upver
mkdir -p "$work/build"
if ! dpkg-source --no-check -x "$dsc" "$tree" >"$work/dpkg-source.log" 2>&1; then
	tail -n 5 "$work/dpkg-source.log" | sed 's/^/  /' >&2
	die "dpkg-source -x $(basename "$dsc") failed"
fi

# ---- configure arguments ------------------------------------------------

# With the target's DEB_* variables, as dpkg-buildpackage -a sets them.
darch() {
	CC=$cc dpkg-architecture -a"$arch" -c "$@" 2>/dev/null
}
# debian/rules' own arguments: override_dh_auto_configure's recipe after
# "dh_auto_configure --".
rules_args=$(cd "$tree" && darch make -s -n -f debian/rules override_dh_auto_configure |
	awk '$1 == "dh_auto_configure" {
		for (i = 2; i <= NF && $i != "--"; i++) ;
		for (i++; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "")
		print ""; exit
	}') || true
[ -n "$rules_args" ] || die "no configure arguments found in $src_pkg $src_ver's debian/rules"
cat >"$work/buildflags.mk" <<'EOF'
heapwalk-buildflags:
	@dpkg-buildflags --export=sh
EOF
flags=$(cd "$tree" && darch make -s -f debian/rules -f "$work/buildflags.mk" heapwalk-buildflags) ||
	die "cannot evaluate dpkg-buildflags through debian/rules"
# dh_auto_configure's standard arguments for autoconf (debhelper 13).
# shellcheck disable=SC2016 # ${prefix} is for configure, literally
std_args=(--build="$(dpkg-architecture -qDEB_BUILD_GNU_TYPE 2>/dev/null)" --prefix=/usr
	'--includedir=${prefix}/include' '--mandir=${prefix}/share/man'
	'--infodir=${prefix}/share/info' --sysconfdir=/etc --localstatedir=/var
	--disable-option-checking --disable-silent-rules
	"--libdir=\${prefix}/lib/$triple")
# debhelper passes --runstatedir only to a configure that knows it.
if grep -q runstatedir "$tree/configure"; then std_args+=(--runstatedir=/run); fi
std_args+=(--disable-maintainer-mode --disable-dependency-tracking)
if [ "$arch" != "$host_arch" ]; then std_args+=(--host="$triple"); fi
# Ours on top of Debian's (configure takes the last of repeated options).
ours=(--enable-prof --disable-cxx)
# The flags name the scratch tree (-ffile-prefix-map): not part of the key.
key="$src_pkg $src_ver $arch | ${std_args[*]} $rules_args ${ours[*]} | $("$cc" -dumpfullversion 2>/dev/null) | ${flags//"$tree"/TREE}"
key=$(printf '%s\n' "$key" | sha256sum | cut -c1-16)

# ---- build (unless the kept one has the same key) -----------------------

dbg=$outdir/.debug
lib=
secs=
if [ -f "$dbg/key" ] && [ "$(head -n1 "$dbg/key")" = "$key" ] && [ -f "$dbg/libjemalloc.so.2" ]; then
	lib=$dbg/libjemalloc.so.2
	secs=$(sed -n 's/^seconds //p' "$dbg/key")
else
	clog=$work/configure.log
	# shellcheck disable=SC2086 # rules_args is a word list, as make gave it
	if ! (cd "$tree" && eval "$flags" && export CC="$cc" &&
		./configure "${std_args[@]}" $rules_args "${ours[@]}") >"$clog" 2>&1; then
		tail -n 5 "$clog" | sed 's/^/  /' >&2
		die "configure of $src_pkg $src_ver ($arch, --enable-prof) failed"
	fi
	defs=$tree/include/jemalloc/internal/jemalloc_internal_defs.h
	grep -q '^#define JEMALLOC_PROF ' "$defs" || die "configure left prof off (no JEMALLOC_PROF in $defs)"
	grep -q '^#define JEMALLOC_PROF_LIBGCC ' "$defs" ||
		die "configure chose another backtrace method than libgcc's unwinder: $(grep '^#define JEMALLOC_PROF_' "$defs" | tr '\n' ' ')"
	blog=$work/make.log
	jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
	t0=$(date +%s)
	if ! make -C "$tree" -j"$jobs" lib/libjemalloc.so.2 >"$blog" 2>&1; then
		tail -n 5 "$blog" | sed 's/^/  /' >&2
		die "building lib/libjemalloc.so.2 of $src_pkg $src_ver ($arch, --enable-prof) failed"
	fi
	secs=$(($(date +%s) - t0))
	lib=$tree/lib/libjemalloc.so.2
	LC_ALL=C grep -aq 'prof_active' "$lib" || die "the built library has no prof code"
fi

# ---- assemble OUTDIR ----------------------------------------------------

new=$outdir.new
rm -rf "$new"
mkdir -p "$new"
# Hard links: the copy costs no space; files are replaced, never written.
if ! cp -al "$base/." "$new/" 2>/dev/null; then
	rm -rf "$new"
	mkdir -p "$new"
	cp -a "$base/." "$new/" || die "cannot copy $base to $new"
fi
rm -f "$new/.sysroot" "$new/.lock" "$new/.sysroot-partial"
libdir=$new/usr/lib/$triple
[ -f "$libdir/libjemalloc.so.2" ] || die "$base has no usr/lib/$triple/libjemalloc.so.2"
rm -f "$libdir/libjemalloc.so.2" "$libdir/libjemalloc.a" "$libdir/libjemalloc_pic.a"
# As dh_strip strips a shared library (the build-id note stays).
"$strip" --remove-section=.comment --remove-section=.note --strip-unneeded \
	-o "$libdir/libjemalloc.so.2" "$lib" || die "$strip of the built library failed"
chmod 644 "$libdir/libjemalloc.so.2"
bid=$({ LC_ALL=C readelf -n "$libdir/libjemalloc.so.2" 2>/dev/null || true; } | awk '/Build ID:/ && !n++ { print $3 }')
[ -n "$bid" ] || die "the built library has no build-id"
mkdir -p "$new/.debug/.build-id/${bid:0:2}"
cp "$lib" "$new/.debug/libjemalloc.so.2"
ln "$new/.debug/libjemalloc.so.2" "$new/.debug/.build-id/${bid:0:2}/${bid:2}.debug"
printf '%s\nseconds %s\n' "$key" "$secs" >"$new/.debug/key"
{
	echo "variant $variant"
	sed '1d' "$bstamp"
	echo "base $bvariant"
	echo "jemalloc_source $src_pkg $src_ver"
	echo "configure ${std_args[*]} $rules_args ${ours[*]}"
	echo "build_id $bid"
	echo "build_seconds $secs"
} >"$new/.sysroot"

# Replace OUTDIR, but only one this script made (or nothing).
if [ -e "$outdir" ]; then
	if ! [ -f "$stamp" ] || [ "$(head -n1 "$stamp")" != "variant $variant" ]; then
		die "$outdir exists and is not a sysroot made by $me"
	fi
	rm -rf "$outdir"
fi
mv "$new" "$outdir"
