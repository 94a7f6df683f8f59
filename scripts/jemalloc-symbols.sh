#!/bin/bash
# jemalloc-symbols.sh [--suite S] [--arch A] LIBJEMALLOC_SO DEBUGDIR
#
# Debian's libjemalloc.so.2 is stripped and its dbgsym package is not
# reachable, but the package builds reproducibly: rebuilding the same
# source version with the flags debian/rules and dpkg-buildflags give
# yields a library whose loadable bytes equal the shipped one; only the
# build-id differs (the debug sections feed it).  This script makes that
# rebuild a separate debug file for the shipped library:
#
#   1. reads the shipped file's architecture (e_machine: x86_64 -> amd64,
#      aarch64 -> arm64; --arch must agree), build-id and jemalloc version
#      string ("5.3.0-0-g54eaed1...");
#   2. finds the Debian suite (--suite S, or S1,S2,...; default bookworm,
#      bullseye, trixie) whose libjemalloc2 for that architecture has the
#      same build-id, downloading the .deb with a private apt configuration
#      (scripts/lib/debian-apt.sh; the host's package state is untouched);
#   3. fetches that source version (apt-get source via deb-src), configures
#      it the way the package build does (dh_auto_configure's arguments plus
#      debian/rules' own, compiler flags from dpkg-buildflags evaluated
#      through debian/rules, a cross compiler for a foreign architecture)
#      and builds only lib/libjemalloc.so.2;
#   4. checks that every allocated (SHF_ALLOC) section has the same name,
#      type, address and size in both files and the same bytes (except the
#      build-id note and NOBITS sections), as do the program headers;
#   5. writes the unstripped rebuild, with its .note.gnu.build-id rewritten
#      to the shipped build-id, as DEBUGDIR/.build-id/NN/REST.debug (the
#      path libdwfl and gdb search) and prints that path.
#
# A mismatch is never handed out: the script says which sections differ
# and exits 1.  Nothing is redone when the output exists, carries the
# shipped build-id and its allocated sections match the shipped file.
#
# Exit status: 0 done (path on stdout), 1 failure (one "jemalloc-symbols.sh:
# ..." line on stderr, sometimes after an indented log tail), 2 usage,
# 77 this machine cannot do it (no mirror, source not on the mirror, build
# tools missing and not root).  Build tools missing when root are installed
# with apt-get (build-essential, dpkg-dev; g++-<triple> for a foreign arch).
#
# Environment: HEAPWALK_DEBIAN_MIRROR (see scripts/lib/debian-apt.sh),
# JEMALLOC_SYMBOLS_KEEP=1 keeps the scratch directory, JOBS (make -j),
# JEMALLOC_LG_VADDR (amd64 only: the virtual-address bits configure is
# told, default 48, what Debian's buildds had).
set -euo pipefail

me=jemalloc-symbols.sh
# shellcheck source=scripts/lib/die.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/die.sh"
usage() {
	local u="usage: $me [--suite S] [--arch A] LIBJEMALLOC_SO DEBUGDIR"
	if [ $# -eq 0 ]; then echo "$u" >&2; else echo "$me: $* ($u)" >&2; fi
	exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/debian-apt.sh
. "$here/lib/debian-apt.sh"

suites=
want_arch=
while [ $# -gt 0 ]; do
	case $1 in
	--suite)
		[ $# -ge 2 ] || usage "--suite needs a value"
		suites=${2//,/ }
		shift 2
		;;
	--suite=*)
		suites=${1#--suite=}
		suites=${suites//,/ }
		shift
		;;
	--arch)
		[ $# -ge 2 ] || usage "--arch needs a value"
		want_arch=$2
		shift 2
		;;
	--arch=*)
		want_arch=${1#--arch=}
		shift
		;;
	--) shift; break ;;
	-*) usage "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
so=$1
debugdir=$2
suites=${suites:-bookworm bullseye trixie}

# ---- the shipped file ---------------------------------------------------

command -v readelf >/dev/null 2>&1 || cannot "readelf is missing (install binutils)"
[ -f "$so" ] || die "$so: no such file"
[ -r "$so" ] || die "$so: not readable"

# build_id FILE: the hex build-id of FILE's NT_GNU_BUILD_ID note.
build_id() {
	{ LC_ALL=C readelf -n "$1" 2>/dev/null || true; } | awk '/Build ID:/ && id == "" { id = $3 } END { if (id != "") print id }'
}

# elf_machine FILE: the e_machine line of readelf -h, e.g. "AArch64".
elf_machine() {
	{ LC_ALL=C readelf -h "$1" 2>/dev/null || true; } | sed -n 's/^ *Machine: *//p'
}

# alloc_sections FILE: "name type address offset size" (hex as readelf
# prints them) of every SHF_ALLOC section, in section-table order.
alloc_sections() {
	{ LC_ALL=C readelf -S -W "$1" 2>/dev/null || true; } | awk '
	/^ *\[ *[0-9]+\]/ {
		sub(/^[^]]*\] */, "")
		# name type addr off size es flg lk inf al; flg is present for A.
		if (NF >= 10 && $7 ~ /A/) print $1, $2, $3, $4, $5
	}'
}

# load_headers FILE: the program headers, one per line, as readelf shows them.
load_headers() {
	{ LC_ALL=C readelf -l -W "$1" 2>/dev/null || true; } |
		awk '/^ *[A-Z_]+ +0x/ { $1 = $1; print }'
}

# same_loadable SHIPPED REBUILD: print the names of what differs (nothing
# when the allocated sections and program headers agree byte for byte
# outside the build-id note).  Status 0 when nothing differs.
same_loadable() {
	local a=$1 b=$2 sa sb diffs="" n t off sz off2
	sa=$(alloc_sections "$a")
	sb=$(alloc_sections "$b")
	if [ -z "$sa" ] || [ -z "$sb" ]; then
		echo "section table unreadable"
		return 1
	fi
	if [ "$(awk '{ print $1 }' <<<"$sa")" != "$(awk '{ print $1 }' <<<"$sb")" ]; then
		echo "the list of allocated sections"
		return 1
	fi
	if [ "$(awk '{ print $1, $2, $3, $5 }' <<<"$sa")" != "$(awk '{ print $1, $2, $3, $5 }' <<<"$sb")" ]; then
		# Name the sections that moved or changed size.
		paste -d' ' <(echo "$sa") <(echo "$sb") |
			awk '$2 != $7 || $3 != $8 || $5 != $10 { if (++n <= 6) { printf "%s%s", sep, $1; sep = " " } }
			END { if (n > 6) printf " and %d more", n - 6; print " (type, address or size)" }'
		return 1
	fi
	while read -r n t _ off sz _ _ _ off2 _; do
		case $t in NOBITS) continue ;; esac
		[ "$n" = .note.gnu.build-id ] && continue
		if ! cmp -s -i "$((16#$off)):$((16#$off2))" -n "$((16#$sz))" "$a" "$b"; then
			diffs="$diffs $n"
		fi
	done < <(paste -d' ' <(echo "$sa") <(echo "$sb"))
	if [ "$(load_headers "$a")" != "$(load_headers "$b")" ]; then
		diffs="$diffs program-headers"
	fi
	[ -z "$diffs" ] && return 0
	echo "${diffs# }"
	return 1
}

machine=$(elf_machine "$so")
case $machine in
"Advanced Micro Devices X86-64") arch=amd64 triple=x86_64-linux-gnu ;;
AArch64) arch=arm64 triple=aarch64-linux-gnu ;;
"") die "$so is not an ELF file" ;;
*) die "$so is for '$machine'; only x86_64 (amd64) and aarch64 (arm64) are supported" ;;
esac
if [ -n "$want_arch" ] && [ "$want_arch" != "$arch" ]; then
	die "--arch $want_arch, but $so is an $arch library"
fi

bid=$(build_id "$so")
[ -n "$bid" ] || die "$so has no build-id note"
# The full version string, e.g. 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c.
jever=$(LC_ALL=C grep -aoE '[0-9]+\.[0-9]+\.[0-9]+-[0-9]+-g[0-9a-f]{40}' "$so" | sed -n 1,1p || true)
[ -n "$jever" ] || die "$so has no jemalloc version string (is it libjemalloc?)"
upver=${jever%%-*}

out_dir=$debugdir/.build-id/${bid:0:2}
out=$out_dir/${bid:2}.debug

# The cached answer: right build-id and the same loadable bytes.
cached() {
	[ -f "$out" ] && [ "$(build_id "$out")" = "$bid" ] && same_loadable "$so" "$out" >/dev/null
}
if cached; then
	echo "$out"
	exit 0
fi

mkdir -p "$out_dir" || die "cannot create $out_dir"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$debugdir/.jemalloc-symbols.lock"
	flock 9
	if cached; then
		echo "$out"
		exit 0
	fi
fi

# ---- host tools ---------------------------------------------------------

host_arch=$(dpkg --print-architecture 2>/dev/null) || cannot "dpkg is missing (this needs a Debian host)"
command -v apt-get >/dev/null 2>&1 || cannot "apt-get is missing (this needs a Debian host)"
if [ "$arch" = "$host_arch" ]; then
	cc=gcc cxx=g++ cross=
else
	cc=$triple-gcc cxx=$triple-g++ cross=1
fi
need=()
for t in make "$cc" "$cxx" dpkg-source dpkg-buildflags dpkg-architecture bzip2 xz; do
	if ! command -v "$t" >/dev/null 2>&1; then
		case $t in
		"$cc" | "$cxx") if [ -n "$cross" ]; then need+=("g++-$triple"); else need+=(build-essential); fi ;;
		make) need+=(build-essential) ;;
		dpkg-*) need+=(dpkg-dev) ;;
		bzip2) need+=(bzip2) ;;
		xz) need+=(xz-utils) ;;
		esac
	fi
done
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

# ---- scratch ------------------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-jemalloc.XXXXXX")
if [ "${JEMALLOC_SYMBOLS_KEEP:-0}" = 1 ]; then
	trap 'echo "$me: kept $work" >&2' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi

# ---- which suite shipped this file --------------------------------------

suite=
deb=
tried=()
reachable=0
for s in $suites; do
	rc=0
	apt_private_init "$work/apt-$s" "$s" "$arch" || rc=$?
	# apt_private_init has said why (one "$me: " line).
	[ $rc = 0 ] || exit 77
	if ! apt_update; then
		tried+=("$s (apt-get update failed)")
		continue
	fi
	reachable=1
	# (awk reads it all: with pipefail, a reader that stops early
	# makes apt-cache die of SIGPIPE, and the script with it.)
	v=$(aptcache show "libjemalloc2:$arch" 2>/dev/null |
		awk '/^Version:/ && v == "" { v = $2 } END { print v }')
	if [ -z "$v" ]; then
		tried+=("$s (no libjemalloc2)")
		continue
	fi
	case $v in
	"$upver"-* | *:"$upver"-*) ;;
	*)
		tried+=("$s ($v)")
		continue
		;;
	esac
	if ! (cd "$APT_WORK/debs" && aptc download "libjemalloc2:$arch=$v"); then
		apt_log_tail
		cannot "apt-get download libjemalloc2:$arch=$v ($s) failed"
	fi
	d=$(find "$APT_WORK/debs" -name 'libjemalloc2_*.deb' -print -quit)
	[ -n "$d" ] || die "apt-get download left no libjemalloc2 deb"
	mkdir -p "$APT_WORK/deb"
	dpkg-deb -x "$d" "$APT_WORK/deb" || die "dpkg-deb -x $(basename "$d") failed"
	f=$(find "$APT_WORK/deb" -name 'libjemalloc.so.2*' -type f -print -quit)
	if [ -n "$f" ] && [ "$(build_id "$f")" = "$bid" ]; then
		suite=$s
		deb=$d
		break
	fi
	tried+=("$s ($v, build-id $(build_id "$f"))")
done
if [ -z "$suite" ]; then
	[ "$reachable" = 1 ] || cannot "no Debian suite reachable through $APT_MIRROR (tried: ${tried[*]})"
	die "no Debian libjemalloc2 for $arch has build-id $bid (tried: ${tried[*]})"
fi

# The source package and version (a binNMU's Source field names it).
src_field=$(dpkg-deb -f "$deb" Source)
bin_ver=$(dpkg-deb -f "$deb" Version)
src_pkg=${src_field%% *}
src_ver=$bin_ver
if [[ $src_field =~ \((.*)\) ]]; then
	src_ver=${BASH_REMATCH[1]}
fi
src_pkg=${src_pkg:-jemalloc}

# ---- the source ---------------------------------------------------------

# The same private tree, now with deb-src (its Packages lists are kept).
apt_private_init "$work/apt-$suite" "$suite" "$arch" with-deb-src || exit 77
if ! apt_update; then
	apt_log_tail 4
	cannot "apt-get update of $suite's deb-src from $APT_MIRROR failed"
fi
mkdir -p "$work/src"
if ! (cd "$work/src" && aptc source --download-only "$src_pkg=$src_ver"); then
	apt_log_tail 4
	cannot "apt-get source $src_pkg=$src_ver ($suite) failed: the mirror does not serve it"
fi
dsc=$(find "$work/src" -maxdepth 1 -name '*.dsc' -print -quit)
[ -n "$dsc" ] || die "apt-get source left no .dsc"
# Debian's buildds unpack into a directory named after the upstream
# version; -ffile-prefix-map makes the path itself irrelevant.
tree=$work/build/$src_pkg-$upver
mkdir -p "$work/build"
xlog=$work/dpkg-source.log
if ! dpkg-source --no-check -x "$dsc" "$tree" >"$xlog" 2>&1; then
	tail -n 5 "$xlog" | sed 's/^/  /' >&2
	die "dpkg-source -x $(basename "$dsc") failed"
fi

# ---- configure and build ------------------------------------------------

# Everything runs with the DEB_* variables of the target architecture, as
# dpkg-buildpackage -a would set them.
darch() {
	CC=$cc CXX=$cxx dpkg-architecture -a"$arch" -c "$@" 2>/dev/null
}

# debian/rules' own configure arguments: the recipe of
# override_dh_auto_configure after "dh_auto_configure --".
rules_args=$(cd "$tree" && darch make -s -n -f debian/rules override_dh_auto_configure |
	awk '$1 == "dh_auto_configure" {
		for (i = 2; i <= NF && $i != "--"; i++) ;
		for (i++; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "")
		print ""; exit
	}') || true

# Compiler flags as the package build sees them: dpkg-buildflags run from
# within debian/rules, so that its exported DEB_*_MAINT_* settings apply.
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
if grep -q runstatedir "$tree/configure"; then
	std_args+=(--runstatedir=/run)
fi
std_args+=(--disable-maintainer-mode --disable-dependency-tracking)
if [ -n "$cross" ]; then
	std_args+=(--host="$triple")
fi
# On x86_64, configure asks the build machine's CPU (cpuid) how many
# virtual-address bits it has, and that number sizes jemalloc's radix
# tree (.text and a 1.75 MiB larger .bss at 57).  Debian's buildds said
# 48; a host with 5-level paging says 57.  Cross builds take 48 already.
# JEMALLOC_LG_VADDR overrides.
if [ "$arch" = amd64 ] && grep -q with-lg-vaddr "$tree/configure"; then
	std_args+=(--with-lg-vaddr="${JEMALLOC_LG_VADDR:-48}")
fi

clog=$work/configure.log
# shellcheck disable=SC2086 # rules_args is a word list, as make gave it
if ! (cd "$tree" && eval "$flags" && export CC="$cc" CXX="$cxx" &&
	./configure "${std_args[@]}" $rules_args) >"$clog" 2>&1; then
	tail -n 5 "$clog" | sed 's/^/  /' >&2
	die "configure of $src_pkg $src_ver ($arch) failed"
fi

blog=$work/make.log
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if ! make -C "$tree" -j"$jobs" lib/libjemalloc.so.2 >"$blog" 2>&1; then
	tail -n 5 "$blog" | sed 's/^/  /' >&2
	die "building lib/libjemalloc.so.2 of $src_pkg $src_ver ($arch) failed"
fi
rebuilt=$tree/lib/libjemalloc.so.2

# ---- compare ------------------------------------------------------------

if ! d=$(same_loadable "$so" "$rebuilt"); then
	die "the rebuild of $src_pkg $src_ver ($suite/$arch, $("$cc" -dumpfullversion 2>/dev/null || echo "$cc")) differs from the shipped library in: $d; no symbol file written"
fi
# The version string and the note size must agree too.
LC_ALL=C grep -aqF "$jever" "$rebuilt" || die "the rebuild lacks the version string $jever"

# ---- write the debug file -----------------------------------------------

note=$(alloc_sections "$rebuilt" | awk '$1 == ".note.gnu.build-id" { print $4, $5 }')
note_ship=$(alloc_sections "$so" | awk '$1 == ".note.gnu.build-id" { print $5 }')
[ -n "$note" ] || die "the rebuild has no .note.gnu.build-id section"
read -r note_off note_size <<<"$note"
[ "$note_size" = "$note_ship" ] || die "build-id notes differ in size (shipped 0x$note_ship, rebuild 0x$note_size)"
# The note: namesz, descsz, type (4 bytes each), "GNU\0", then the id.
[ "$(( (16#$note_size - 16) * 2 ))" = "${#bid}" ] ||
	die "build-id note size 0x$note_size does not fit a ${#bid}-digit build-id"

tmp=$out.tmp$$
cp "$rebuilt" "$tmp"
# shellcheck disable=SC2001 # a regex with a back-reference
esc=$(sed 's/../\\x&/g' <<<"$bid")
# shellcheck disable=SC2059 # the escapes are the point
printf "$esc" | dd of="$tmp" bs=1 seek="$((16#$note_off + 16))" conv=notrunc status=none ||
	{ rm -f "$tmp"; die "cannot write the build-id into $tmp"; }
if [ "$(build_id "$tmp")" != "$bid" ] || ! same_loadable "$so" "$tmp" >/dev/null; then
	rm -f "$tmp"
	die "rewriting the build-id went wrong"
fi
chmod 644 "$tmp"
mv -f "$tmp" "$out"
echo "$out"
