#!/bin/bash
# make-core.sh [--prog-only] CASE OUTDIR [VARIANT] - build
# corpora/ptmalloc/CASE.c (corpora/jemalloc/CASE.c for the jemalloc-*
# variants, corpora/tcmalloc/CASE.c for the tcmalloc-* ones; or
# corpora/ptmalloc/CASE.cc, C++ built with g++, for the host variant
# only, and corpora/tcmalloc/CASE.cc for tcmalloc-minimal-amd64 and tcmalloc-full-amd64) and
# make it dump a core: leaves OUTDIR/prog, OUTDIR/core and
# OUTDIR/truth.txt.  A CASE.env beside the source (NAME=VALUE lines) is
# the environment the program runs with.
#
# --prog-only: only build OUTDIR/prog (and the OUTDIR/sysroot link), the
# same way, and run nothing: for the live-process tests, which run the
# program themselves in its live mode (CORPUS_LIVE=1, see
# corpora/common/live.h).  Its stamp is OUTDIR/.prog-stamp.
#
# VARIANT (default "host": the host's gcc and glibc) names another glibc,
# one of scripts/corpus/sysroot.sh's: glibc-2.31-amd64, glibc-2.36-amd64,
# glibc-2.41-amd64, glibc-2.43-amd64, glibc-2.44-amd64, glibc-2.36-arm64.
# Its sysroot is made (once) in $HEAPWALK_SYSROOTS/VARIANT (default build/sysroot/VARIANT) and
# OUTDIR/sysroot links to it.  The program is compiled against that
# glibc's own headers and libraries; amd64 programs get the sysroot's
# ld.so as their interpreter and its library directory as RUNPATH, so
# the core's NT_FILE names the sysroot's libc; arm64 programs are built
# -no-pie with aarch64-linux-gnu-gcc and run under qemu-aarch64 -L
# SYSROOT, whose own core (no NT_FILE, no NT_ARM_TLS) becomes OUTDIR/core
# (any core the host writes of qemu itself is thrown away).
# glibc-2.36-arm64-64k is glibc-2.36-arm64 run with 64 KiB pages
# (qemu-aarch64 -p 65536: AT_PAGESZ and mmap granularity as on a 64 KiB
# page kernel), from the same sysroot.
# glibc-2.36-arm64-hostcore is glibc-2.36-arm64 with the other core kept:
# the host kernel's core of the qemu-aarch64 process itself (x86_64, with
# NT_FILE), which holds two glibc heaps, qemu's own and the guest's (the
# guest's memory is mapped 1:1 in qemu's address space).  It needs a
# core_pattern that names a plain file; the qemu-user core is dropped.
#
# glibc-2.36-arm64-pie, -nopie and -static are glibc-2.36-arm64 built as
# programs usually are rather than -O0: -O1, with a 2.3 MiB .bss (beside
# the 64 KiB segment alignment of aarch64 links), as a PIE, a fixed-address
# executable or statically linked.
#
# host-static is "host" linked with -static (the host glibc's libc.a:
# main_arena, mp_ and the tcache TLS variable are then in the executable
# itself); it also leaves OUTDIR/prog.stripped, a `strip`ped copy of prog
# for reading the same core without any symbols (--exe).  77 when the
# host has no static libc.  host-static-pie is the same with -static-pie
# (loaded at a random address, as static programs often are on devices).
#
# jemalloc-5.2.1-amd64, jemalloc-5.3.0-amd64 and jemalloc-5.3.0-arm64 take
# the case from corpora/jemalloc/ and link it with -ljemalloc against
# Debian's libjemalloc2/libjemalloc-dev of that release (sysroot.sh).  The
# amd64 ones use the host's gcc and glibc, with the sysroot's jemalloc.h
# and libjemalloc.so.2 (RUNPATH), so the core's NT_FILE names the
# sysroot's (stripped) libjemalloc.so.2; the arm64 one is built and run
# like glibc-2.36-arm64, against that sysroot's glibc and jemalloc.
# jemalloc-5.3.0-arm64-prof is jemalloc-5.3.0-arm64 with Debian's arm64
# libjemalloc2 (built without prof) replaced by the same source rebuilt
# with --enable-prof and stripped (scripts/corpus/jemalloc-prof.sh, over
# that variant's sysroot: $HEAPWALK_SYSROOTS/jemalloc-5.3.0-arm64-prof;
# the first build takes minutes), for the prof* cases.
#
# tcmalloc-minimal-amd64 and tcmalloc-full-amd64 take the case from
# corpora/tcmalloc/ and link it with the host's gperftools (Debian's
# libgoogle-perftools-dev): -ltcmalloc_minimal, or -ltcmalloc (the full
# library, heap checker and profiler in) with -DTC_FULL.
# tcmalloc-static-amd64 links its libtcmalloc_minimal.a into the
# executable and leaves OUTDIR/prog.stripped too (as host-static does).
# tcmalloc-2.10-arm64 links it with Debian bookworm's arm64
# libtcmalloc-minimal4 and runs it like glibc-2.36-arm64 (sysroot.sh);
# tcmalloc-2.16-amd64 with Debian trixie's libtcmalloc-minimal4t64, on
# trixie's glibc, like glibc-2.41-amd64.
#
# The kernel writes the core when core_pattern names a plain file (e.g.
# "core", "core.%p", core_uses_pid=1, or an absolute pattern); when it is
# a pipe (systemd-coredump, apport) or no usable core appears, the program
# is run under gdb and dumped with `gcore` instead (OUTDIR/core.how says
# which).  Exit 0 on success, 77 when this machine cannot produce a core
# at all (no usable kernel core and no working gdb), 1 otherwise.
# Idempotent: nothing is redone while OUTDIR/.stamp is newer than
# the sources and this script.  Quiet on success.
set -euo pipefail

me=make-core.sh
# shellcheck source=scripts/lib/die.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/die.sh"
# shellcheck source=scripts/corpus/corpus-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus-lib.sh"

prog_only=false
if [ "${1:-}" = --prog-only ]; then
	prog_only=true
	shift
fi
[ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: $me [--prog-only] CASE OUTDIR [VARIANT]"
case_name=$1
outdir=$2
variant=${3:-host}
# The -64k and -hostcore variants share their sysroot with the plain ones.
sysvariant=${variant%-64k}
qemu_pagesize=
[ "$sysvariant" = "$variant" ] || qemu_pagesize=65536
hostcore=false
case $variant in *-hostcore) hostcore=true sysvariant=${variant%-hostcore} ;; esac
# The arm64 link layouts: -pie and -static (see the top).
layout=
case $variant in
*-arm64-pie | *-arm64-nopie | *-arm64-static) layout=${variant##*-} sysvariant=${variant%-*} ;;
esac
arm64=false
case $sysvariant in *-arm64 | *-arm64-prof) arm64=true ;; esac
top=$(cd "$(dirname "$0")/../.." && pwd)
case $variant in
jemalloc-*) srcdir=$top/corpora/jemalloc ;;
tcmalloc-*) srcdir=$top/corpora/tcmalloc ;;
*) srcdir=$top/corpora/ptmalloc ;;
esac
src=$srcdir/$case_name.c
# A C++ case is CASE.cc, built with g++ for the host only (cxx1), or
# for the host's gperftools (tcmalloc's C++ MallocExtension).
if [ ! -f "$src" ] && [ -f "$srcdir/$case_name.cc" ]; then
	src=$srcdir/$case_name.cc
	case $variant in
	host | tcmalloc-minimal-amd64 | tcmalloc-full-amd64) ;;
	*) die "C++ case $case_name is built for the host only" ;;
	esac
fi
[ -f "$src" ] || die "no such corpus case: $src"
# CASE.env: the environment the program starts with (NAME=VALUE lines;
# an allocator reads its options before main, e.g. tcmalloc's
# TCMALLOC_SAMPLE_PARAMETER).
case_env=()
if [ -f "${src%.*}.env" ]; then
	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		case_env+=("$line")
	done <"${src%.*}.env"
fi

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

sysroot=
sysroot_stamp=
case $variant in
host | tcmalloc-minimal-amd64 | tcmalloc-full-amd64 | tcmalloc-static-amd64) ;;
host-static | host-static-pie)
	# gcc prints the bare name back when it has no such file.
	case $(${CC:-gcc} -print-file-name=libc.a) in
	/*) ;;
	*) cannot "no static libc (libc.a) for ${CC:-gcc}: install libc6-dev" ;;
	esac
	;;
glibc-*-amd64 | glibc-*-arm64 | glibc-*-arm64-64k | glibc-*-arm64-hostcore | glibc-*-arm64-pie | glibc-*-arm64-nopie | glibc-*-arm64-static | jemalloc-*-amd64 | jemalloc-*-arm64 | tcmalloc-*-arm64 | tcmalloc-2.*-amd64)
	corpus_sysroot "$sysvariant"
	;;
jemalloc-*-arm64-prof)
	corpus_sysroot "${sysvariant%-prof}"
	rc=0
	"$top/scripts/corpus/jemalloc-prof.sh" "$sysroot" "$sysroot-prof" || rc=$?
	if [ $rc = 77 ]; then cannot "cannot build a prof-enabled jemalloc for $variant here"; fi
	[ $rc = 0 ] || die "no prof-enabled jemalloc for $variant"
	sysroot=$sysroot-prof
	sysroot_stamp=$sysroot/.sysroot
	libdir=$sysroot/usr/lib/$triple
	;;
*) die "unknown variant '$variant'" ;;
esac

# One builder at a time per OUTDIR.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$outdir/.lock"
	flock 9
fi

stamp=$outdir/.stamp
have_outputs() {
	[ -x "$outdir/prog" ] &&
		{ [ "${variant#host-static}" = "$variant" ] && [ "$variant" != tcmalloc-static-amd64 ] ||
			[ -x "$outdir/prog.stripped" ]; } &&
		{ $prog_only || { [ -s "$outdir/core" ] && [ -s "$outdir/truth.txt" ]; }; }
}
if $prog_only; then stamp=$outdir/.prog-stamp; fi
if [ -f "$stamp" ] && have_outputs; then
	fresh=1
	# A case may be another directory's, included (jemalloc/leaks1.c).
	included=()
	while IFS= read -r inc; do included+=("$srcdir/$inc"); done \
		< <(sed -n 's/^#include "\([^"]*\.cc\?\)"$/\1/p' "$src")
	for f in "$src" "${src%.*}.env" "${included[@]}" "$srcdir"/*.h "$top"/corpora/common/*.h "$0" \
		"$top/scripts/corpus/corpus-lib.sh" ${sysroot_stamp:+"$sysroot_stamp"}; do
		[ -e "$f" ] || continue
		if [ "$f" -nt "$stamp" ]; then fresh=0; fi
	done
	if [ $fresh = 1 ]; then exit 0; fi
fi
# prof.heap: the profile the jemalloc prof* cases dump themselves.
rm -f "$stamp" "$outdir/core" "$outdir/truth.txt" "$outdir/core.how" \
	"$outdir/prog" "$outdir/prog.stripped" "$outdir/sysroot" "$outdir/prof.heap"

log=$outdir/build.log
: >"$log"
case $variant in
host)
	host_cc=${CC:-gcc}
	case $src in *.cc) host_cc=${CXX:-g++} ;; esac
	$host_cc -O0 -g -pthread -o "$outdir/prog" "$src" >>"$log" 2>&1 ||
		die "compiling $src failed (see $log)"
	;;
host-static | host-static-pie)
	${CC:-gcc} -O0 -g "-${variant#host-}" -pthread -o "$outdir/prog" "$src" >>"$log" 2>&1 ||
		die "compiling $src -${variant#host-} failed (see $log)"
	strip -o "$outdir/prog.stripped" "$outdir/prog" >>"$log" 2>&1 ||
		die "stripping $outdir/prog failed (see $log)"
	;;
tcmalloc-minimal-amd64 | tcmalloc-full-amd64)
	# The host's gperftools (libgoogle-perftools-dev): the minimal
	# library, or the full one with the heap checker and profiler.
	lib=tcmalloc_minimal def=
	case $variant in tcmalloc-full-*) lib=tcmalloc def=-DTC_FULL ;; esac
	cc=${CC:-gcc}
	case $src in *.cc) cc=${CXX:-g++} ;; esac
	$cc $def -O0 -g -pthread -o "$outdir/prog" "$src" "-l$lib" \
		>>"$log" 2>&1 || die "compiling $src for $variant failed (see $log)"
	;;
tcmalloc-static-amd64)
	# libtcmalloc_minimal.a linked into the executable (glibc and
	# libstdc++ stay shared), and a stripped copy for reading the core
	# without any symbols (--exe).
	archive=$(${CC:-gcc} -print-file-name=libtcmalloc_minimal.a)
	[ -f "$archive" ] || cannot "no libtcmalloc_minimal.a (libgoogle-perftools-dev)"
	${CC:-gcc} -O0 -g -pthread -o "$outdir/prog" "$src" "$archive" -lstdc++ -lm \
		>>"$log" 2>&1 || die "compiling $src for $variant failed (see $log)"
	strip -o "$outdir/prog.stripped" "$outdir/prog" >>"$log" 2>&1 ||
		die "stripping $outdir/prog failed (see $log)"
	;;
jemalloc-*-amd64)
	ln -s "$sysroot" "$outdir/sysroot"
	${CC:-gcc} -isystem "$sysroot/usr/include" -L"$libdir" "-Wl,-rpath=$libdir" \
		-O0 -g -pthread -o "$outdir/prog" "$src" -ljemalloc >>"$log" 2>&1 ||
		die "compiling $src for $variant failed (see $log)"
	;;
*)
	ln -s "$sysroot" "$outdir/sysroot"
	ldso=$(sed -n 's/^ldso //p' "$sysroot_stamp")
	if $arm64 && [ -n "$layout" ]; then
		# As programs are usually built: optimised, with a .bss far
		# larger than the 64 KiB the segments are aligned to.
		printf 'char corpus_big_bss[2300 * 1024];\n' >"$outdir/bigbss.c"
		cc=aarch64-linux-gnu-gcc link=(-O1 "$outdir/bigbss.c")
		case $layout in
		pie) link+=(-fPIE -pie) ;;
		nopie) link+=(-no-pie) ;;
		static) link+=(-static) ;;
		esac
	elif $arm64; then
		cc=aarch64-linux-gnu-gcc link=(-no-pie)
		# tcmalloc takes its first spans with sbrk: past a non-PIE
		# program's .bss they sit at addresses below 16 MiB, which
		# ld.so's and libstdc++'s hash values hit by chance (leaks1's
		# lost blocks would turn "possible").  Debian builds PIE.
		case $variant in tcmalloc-*) link=(-fPIE -pie) ;; esac
	else
		cc=gcc link=("-Wl,--dynamic-linker=$sysroot/$ldso" "-Wl,-rpath=$libdir")
		# libtcmalloc's own libstdc++ and libgcc_s must be the
		# sysroot's too (the host's may need a newer glibc): an RPATH,
		# unlike a RUNPATH, serves the libraries' dependencies.
		case $variant in tcmalloc-*) link+=(-Wl,--disable-new-dtags) ;; esac
	fi
	case $variant in
	jemalloc-*) link+=("-Wl,-rpath-link=$libdir" -ljemalloc) ;;
	# -ldl: leaks1 looks up a vtable with dlsym, in libdl before 2.34.
	tcmalloc-*) link+=("-Wl,-rpath-link=$libdir" "$libdir/libtcmalloc_minimal.so.4" -ldl) ;;
	esac
	corpus_cc "$cc" "$src" "$outdir/prog" "$log" "${link[@]}" ||
		die "compiling $src for $variant failed (see $log)"
	;;
esac

if $prog_only; then
	: >"$stamp"
	exit 0
fi

# Is the kernel going to write a file we can find?
# (MAKE_CORE_PATTERN overrides what we believe, to exercise the fallback.)
pattern=${MAKE_CORE_PATTERN:-$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo core)}
uses_pid=$(cat /proc/sys/kernel/core_uses_pid 2>/dev/null || echo 0)

how=
if $arm64; then
	# qemu-aarch64 writes qemu_prog_<date>-<time>_<pid>.core into its cwd,
	# whatever core_pattern says.  Run it in a scratch directory where a
	# directory named like a plain relative core_pattern stops the host
	# kernel from writing a core of qemu itself (when it does write one,
	# it is deleted with the directory).
	command -v qemu-aarch64 >/dev/null 2>&1 || cannot "qemu-aarch64 is not installed"
	run=$outdir/.run
	rm -rf "$run"
	mkdir -p "$run"
	plain_pattern=false
	if [ "${pattern:0:1}" != "|" ] && [ "${pattern:0:1}" != / ] &&
		[[ "$pattern" != *%* ]] && [[ "$pattern" != */* ]]; then
		plain_pattern=true
	fi
	if $hostcore && ! $plain_pattern; then
		cannot "the host core of qemu needs a plain core_pattern, not '$pattern'"
	fi
	if $plain_pattern && ! $hostcore; then
		mkdir -p "$run/$pattern" 2>/dev/null || true
	fi
	set +e
	(
		cd "$run"
		ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -H -c)"
		exec env ${case_env[@]+"${case_env[@]}"} \
			qemu-aarch64 ${qemu_pagesize:+-p "$qemu_pagesize"} -L "$sysroot" \
			"$outdir/prog" "$outdir/truth.txt"
	) >>"$log" 2>&1 &
	pid=$!
	{ wait $pid; } 2>/dev/null
	rc=$?
	set -e
	if [ $rc -eq 2 ]; then die "$case_name refused its own plan (see $log)"; fi
	# SIGABRT, or SIGSEGV for a case that crashes so on purpose (segv1).
	[ $rc -eq 134 ] || [ $rc -eq 139 ] ||
		die "$case_name under qemu-aarch64 exited with status $rc, not SIGABRT or SIGSEGV (see $log)"
	found=$(find "$run" -maxdepth 1 -type f -name 'qemu_prog_*.core' | sed -n 1,1p)
	[ -n "$found" ] || die "qemu-aarch64 wrote no qemu_prog_*.core (see $log)"
	how="qemu-aarch64${qemu_pagesize:+ -p $qemu_pagesize} (qemu-user core)"
	if $hostcore; then
		found=$run/$pattern
		if [ "$uses_pid" = 1 ]; then found=$found.$pid; fi
		[ -f "$found" ] || cannot "the host kernel wrote no core of qemu-aarch64 ($found)"
		how="kernel core of qemu-aarch64 (host process, core_pattern '$pattern')"
	fi
	core_complete "$found" || die "core $found is truncated"
	mv -f "$found" "$outdir/core"
	rm -rf "$run"
elif [ "${pattern:0:1}" != "|" ]; then
	marker=$outdir/.marker
	: >"$marker"
	set +e
	(
		cd "$outdir"
		ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -H -c)"
		exec env ${case_env[@]+"${case_env[@]}"} ./prog truth.txt
	) >>"$log" 2>&1 &
	pid=$!
	{ wait $pid; } 2>/dev/null # no "Aborted (core dumped)" chatter
	rc=$?
	set -e
	if [ $rc -eq 2 ]; then die "$case_name refused its own plan (see $log)"; fi
	[ $rc -eq 134 ] || [ $rc -eq 139 ] ||
		die "$case_name exited with status $rc, not SIGABRT or SIGSEGV (see $log)"
	# Where did it go?  Expand what we know of the pattern, glob the rest
	# (%P, %t, %h, ... and namespaces make exact expansion guesswork).
	glob=$pattern
	[ "${glob:0:1}" = / ] || glob=$outdir/$glob
	glob=${glob//%%/@PERCENT@}
	glob=${glob//%p/$pid}
	glob=${glob//%e/prog}
	glob=${glob//%s/$((rc - 128))}
	glob=$(printf '%s' "$glob" | sed 's/%./*/g')
	glob=${glob//@PERCENT@/%}
	if [ "$uses_pid" = 1 ] && [[ "$pattern" != *%p* ]]; then
		glob="$glob.$pid"
	fi
	found=
	shopt -s nullglob
	IFS= # no word splitting of the glob, only pathname expansion
	for f in $glob; do
		if [ -f "$f" ] && ! [ "$marker" -nt "$f" ]; then found=$f; fi
	done
	unset IFS
	shopt -u nullglob
	rm -f "$marker"
	if [ -n "$found" ] && core_complete "$found"; then
		[ "$found" -ef "$outdir/core" ] || mv -f "$found" "$outdir/core"
		how="kernel (core_pattern '$pattern')"
	elif [ -n "$found" ]; then
		how_note="kernel core $found was truncated"
		rm -f "$found"
	else
		how_note="no kernel core found for core_pattern '$pattern'"
	fi
else
	how_note="core_pattern is a pipe: '$pattern'"
fi

if [ -z "$how" ]; then
	command -v gdb >/dev/null 2>&1 ||
		cannot "${how_note}, and gdb is not installed for the gcore fallback"
	rm -f "$outdir/truth.txt" "$outdir/prof.heap"
	(
		cd "$outdir"
		ulimit -c 0
		env ${case_env[@]+"${case_env[@]}"} \
			gdb -batch -nx -ex run -ex "gcore $outdir/core" --args ./prog truth.txt
	) >>"$log" 2>&1 || true
	[ -s "$outdir/core" ] ||
		cannot "${how_note}; gdb gcore fallback wrote no core either (see $log)"
	how="gdb gcore (${how_note})"
fi

if ! [ -s "$outdir/truth.txt" ] || [ "$(tail -n1 "$outdir/truth.txt")" != end ]; then
	die "$case_name wrote no complete truth file (see $log)"
fi
echo "$how" >"$outdir/core.how"
: >"$stamp"
