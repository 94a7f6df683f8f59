#!/bin/bash
# mimalloc-versions.sh SRC OUTDIR [TAG...] - cores of mimalloc 2.x and
# 3.x releases, with their truth, for corpora/mimalloc/cores/ (read by
# tests/t0494-mimalloc-versions.sh, 2.x, and t0496-mimalloc-v3-versions.sh,
# 3.x).
#
# SRC is a git repository of microsoft/mimalloc (a clone, or the bare
# mirror /work/.mirror/microsoft+mimalloc/repo) or a source tree (the
# directory holding include/ and src/: then one TAG, which names the
# output).  Each TAG (default: eight releases, below) is taken from SRC
# with git archive, and for each variant
#   release   -O2 -DNDEBUG -DMI_MALLOC_OVERRIDE -DMI_STATIC_LIB
#             -fvisibility=hidden -ftls-model=initial-exec
#             (tests/mimalloc-lib.sh's mi_static_objects)
#   secure    the same with -DMI_SECURE=4 (encoded free lists, guard
#             pages; from 2.1 every block padded with 8 bytes)
# its src/static.c is compiled into corpora/mimalloc/miversions.c, which
# runs to its abort and leaves the kernel's core where core_pattern is a
# plain file name, else is run under gdb and dumped with gcore (MI_CORE=
# kernel or gcore chooses; gcore's cores are twice the size in xz: they
# hold the libraries' text too).  Nothing is stripped.  Written: OUTDIR/TAG-VARIANT/core.xz
# (xz -9), truth.txt (miversions.c's head says its format) and about.txt
# (what was built how, on what: the release's commit, compiler, C
# library, the core's size and sha256).  The executable is not kept:
# mimalloc's segments are anonymous memory and its main heap lies in the
# executable's .data, both in the core.
#
# VARIANTS (default "release secure") chooses the variants.
#
# A 3.x tag (3.0 to 3.5: 3.6's source is not in the mirror) builds
# corpora/mimalloc/mitruth1.c instead, release only (its truth checker
# assumes unpadded blocks), run with eight workers (`8 visit,mistats`,
# t0491's truth); its executable is kept, debug info stripped
# (OUTDIR/TAG-release/mitruth1.xz): heapwalk searches for 3.0-3.4's page
# map only where the program's symbols name mimalloc.  Their place is
# corpora/mimalloc/cores-v3 (t0494 reads every case of cores/).
#
# The default tags: one release of each of eight of layout.c's rows,
# those whose layouts differ most (2.0.9, Debian's, is t0490's):
#   v2.0.2   8 MiB segments, blocks from the page's start
#   v2.0.6   64 MiB segments, the encoded build's keys after `free`, the
#            heap's cookie at 2856, blocks 128 bytes in (2.0.3 to 2.0.7
#            differ only in the huge sentinel and the heap's arena_id)
#   v2.1.2   2.0.9's structures, the SMALL page start, secure builds'
#            blocks padded with 8 bytes
#   v2.1.4   a 64-bit block size, page_start, the heap's delayed list,
#            cookie and keys before its queues
#   v2.1.7   blocks aligned to their size (to 128 KiB), the heap tag
#   v2.1.9   the segment's subproc and abandoned_os links (cookie at
#            224), the page start rounded to 16
#   v2.2.7   medium blocks to 64 KiB, the heap's counters
#   v2.4.1   the heap's pages_full_size (queues at 1288/1296)
# Together about 2.7 MB of kernel cores in xz (each core of 2.1 and
# later holds the 1 GiB arena mimalloc reserves, zeros but for its
# segments; unpacked, each takes xz about a second).
#
# Needs git, gcc, xz and a plain core_pattern or gdb.  Exit 0 done, 1 failure, 2 usage, 77 this machine
# cannot make a core.
set -euo pipefail

me=mimalloc-versions.sh
# shellcheck source=scripts/lib/die.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/die.sh"
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=$top/corpora/mimalloc/miversions.c

if [ $# -lt 2 ]; then
	echo "usage: $me SRC OUTDIR [TAG...]" >&2
	exit 2
fi
src=$1 outdir=$2
shift 2
tags=("$@")
[ ${#tags[@]} -gt 0 ] || tags=(v2.0.2 v2.0.6 v2.1.2 v2.1.4 v2.1.7 v2.1.9 v2.2.7 v2.4.1)
read -r -a variants <<<"${VARIANTS:-release secure}"
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '|')
plain=true
case $pattern in
'|'* | /* | *%* | */*) plain=false ;;
esac
if [ -n "${MI_CORE:-}" ]; then
	how=$MI_CORE
elif $plain; then
	how=kernel
else
	how=gcore
fi

for c in gcc xz sha256sum; do
	command -v "$c" >/dev/null 2>&1 || cannot "$c is not installed"
done
case $how in
gcore) command -v gdb >/dev/null 2>&1 || cannot "gdb is not installed, and core_pattern is not a plain file name" ;;
kernel) $plain || cannot "core_pattern is not a plain file name: $pattern" ;;
*) die "MI_CORE is gcore or kernel, not $how" ;;
esac

if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	repo=true
elif [ -d "$src/include" ] && [ -f "$src/src/static.c" ]; then
	repo=false
	[ $# = 1 ] ||
		die "$src is a source tree: name it with one TAG"
else
	die "$src is neither a mimalloc repository nor a source tree"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mi-versions.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$outdir"

# The flags of the static library, as tests/mimalloc-lib.sh's
# mi_static_objects has them (with debug info: gdb can read the heap).
mi_flags=(-O2 -g -DNDEBUG -DMI_MALLOC_OVERRIDE -DMI_STATIC_LIB
	-fvisibility=hidden -ftls-model=initial-exec -fno-builtin-malloc)

# run_core DIR EXE ARG...: EXE ARG... run in DIR to its abort: DIR/core,
# DIR/truth.txt; $made says who wrote the core.  The kernel's, where
# it was to write it but did not (ulimit -c), gives way to gcore's
# unless MI_CORE asked for it.
run_core() {
	local d=$1 exe=$2 c
	shift 2
	made=
	if [ "$how" = kernel ]; then
		( (cd "$d" && ulimit -c unlimited 2>/dev/null; exec "$exe" "$@") \
			>"$d/run.log" 2>&1 || :) 2>/dev/null
		c=$(find "$d" -maxdepth 1 -type f -name "$pattern*" | sed -n 1,1p)
		[ -z "$c" ] || [ "$c" = "$d/core" ] || mv "$c" "$d/core"
		[ -s "$d/core" ] && made=kernel
	fi
	if [ -z "$made" ] && [ "${MI_CORE:-}" != kernel ] &&
		command -v gdb >/dev/null 2>&1; then
		rm -f "$d/core"
		(cd "$d" && gdb -batch -nx -ex run -ex "gcore $d/core" \
			--args "$exe" "$@") >"$d/run.log" 2>&1 || true
		made=gcore
	fi
	if ! [ -s "$d/core" ] || [ "$(tail -n 1 "$d/truth.txt" 2>/dev/null)" != end ]; then
		tail -n 20 "$d/run.log" >&2
		die "$exe: no core or no complete truth.txt"
	fi
}

for tag in "${tags[@]}"; do
	tree=$work/$tag
	mkdir -p "$tree"
	if $repo; then
		git -C "$src" rev-parse -q --verify "$tag^{commit}" >/dev/null ||
			die "$src has no $tag"
		commit=$(git -C "$src" rev-parse "$tag^{commit}")
		git -C "$src" archive "$tag" include src | tar x -C "$tree" ||
			die "git archive $tag failed"
	else
		commit="source tree $src"
		cp -r "$src/include" "$src/src" "$tree/"
	fi
	want=$(sed -n 's/^#define MI_MALLOC_VERSION *\([0-9]*\).*/\1/p' "$tree/include/mimalloc.h")
	vs=("${variants[@]}")
	case $want in
	2*) v3=false ;;
	3*) v3=true vs=(release) ;;
	*) want= ;;
	esac
	# (3.x's numbers: 301, 3012, 316, 30403; 3.6 is 30600.)
	[ -n "$want" ] && { ! $v3 || [ "$want" -lt 30600 ]; } ||
		die "$tag is not a mimalloc 2.x or 3.0-3.5 release (MI_MALLOC_VERSION ${want:-none})"
	for v in "${vs[@]}"; do
		case $v in
		release) extra=() ;;
		secure) extra=(-DMI_SECURE=4) ;;
		*) die "unknown variant $v (release, secure)" ;;
		esac
		d=$work/$tag-$v
		mkdir -p "$d"
		gcc "${mi_flags[@]}" "${extra[@]}" -I "$tree/include" -c \
			-o "$d/mi.o" "$tree/src/static.c" 2>"$d/cc.log" || {
			tail -n 20 "$d/cc.log" >&2
			die "$tag $v: cannot compile src/static.c"
		}
		if $v3; then
			name=mitruth1 psrc=$top/corpora/mimalloc/mitruth1.c
			args=(8 visit,mistats) key=mimalloc def=(-DMI_HAVE_HEADER)
		else
			name=miversions psrc=$prog args=("$tag") key=version def=()
		fi
		gcc -std=c11 -O1 -g -pthread "${def[@]}" -I "$tree/include" \
			-o "$d/$name" "$psrc" "$d/mi.o" 2>>"$d/cc.log" || {
			tail -n 20 "$d/cc.log" >&2
			die "$tag $v: cannot build $name"
		}
		run_core "$d" "$d/$name" "${args[@]}"
		got=$(sed -n "s/^$key //p" "$d/truth.txt")
		[ "$got" = "$want" ] ||
			die "$tag $v: mi_version() says $got, mimalloc.h $want"
		size=$(stat -c %s "$d/core")
		sum=$(sha256sum <"$d/core")
		xz -9 -T1 -c "$d/core" >"$d/core.xz"
		o=$outdir/$tag-$v
		mkdir -p "$o"
		cp "$d/core.xz" "$d/truth.txt" "$o/"
		if $v3; then
			strip -g -o "$d/$name.kept" "$d/$name"
			xz -9 -T1 -c "$d/$name.kept" >"$o/$name.xz"
		fi
		{
			echo "release    $tag ($commit), MI_MALLOC_VERSION $want"
			echo "variant    $v: gcc ${mi_flags[*]}${extra[*]:+ ${extra[*]}} src/static.c"
			echo "program    corpora/mimalloc/$name.c ${args[*]}, gcc -std=c11 -O1 -g -pthread${def[*]:+ ${def[*]}}"
			if $v3; then
				echo "executable $d/$name (kept as $name.xz, strip -g)"
			else
				echo "executable $d/$name (not kept)"
			fi
			echo "compiler   $(gcc --version | sed -n 1p)"
			echo "C library  $(ldd --version 2>&1 | sed -n 1p)"
			if [ "$made" = gcore ]; then
				echo "core       gdb's gcore ($(gdb --version | sed -n 1p)), on $(uname -sr)"
			else
				echo "core       the kernel's ($(uname -sr))"
			fi
			echo "unpacked   $size bytes, sha256 ${sum%% *}"
		} >"$o/about.txt"
		echo "$me: $tag-$v: $(stat -c %s "$o/core.xz") bytes (core $size)"
		rm -f "$d/core"
	done
done
