# shellcheck shell=bash
# scripts/corpus/corpus-lib.sh - sourced by make-core.sh and vm-core.sh
# (after scripts/lib/die.sh, with $top set): what both need to build a
# corpus program against another glibc and to check the core it leaves.
#
#   corpus_sysroot VARIANT     make (once) scripts/corpus/sysroot.sh's VARIANT
#                              under $HEAPWALK_SYSROOTS (default
#                              $top/build/sysroot); sets sysroot,
#                              sysroot_stamp, triple and libdir.  cannot
#                              (exit 77) when this machine cannot, die else.
#   corpus_cc CC SRC OUT LOG ARGS...
#                              compile SRC to OUT with CC against only that
#                              sysroot's glibc headers, crt files and
#                              libraries (plus the compiler's own stddef.h,
#                              crtbegin.o and libgcc); ARGS go last (link
#                              options); output appended to LOG.
#   core_complete FILE         does every PT_LOAD of the core FILE fit in it
#                              (RLIMIT_CORE or a broken transfer can cut it)?

corpus_sysroot() {
	local variant=$1 sysroots rc=0
	sysroots=${HEAPWALK_SYSROOTS:-$top/build/sysroot}
	mkdir -p "$sysroots"
	sysroot=$(cd "$sysroots" && pwd)/$variant
	"$top/scripts/corpus/sysroot.sh" "$variant" "$sysroot" || rc=$?
	if [ $rc = 77 ]; then cannot "cannot make a sysroot for $variant here"; fi
	[ $rc = 0 ] || die "no sysroot for $variant"
	sysroot_stamp=$sysroot/.sysroot
	triple=$(sed -n 's/^triple //p' "$sysroot_stamp")
	libdir=$sysroot/usr/lib/$triple
}

corpus_cc() {
	local cc=$1 src=$2 out=$3 log=$4
	shift 4
	$cc -nostdinc -isystem "$($cc -print-file-name=include)" \
		-isystem "$sysroot/usr/include/$triple" -isystem "$sysroot/usr/include" \
		--sysroot="$sysroot" -B"$libdir/" -L"$libdir" \
		-O0 -g -pthread -o "$out" "$src" "$@" >>"$log" 2>&1
}

core_complete() {
	local f=$1 size type off fsz max=0
	size=$(stat -c %s "$f")
	while read -r type off _ _ fsz _; do
		[ "$type" = LOAD ] || continue
		if ((off + fsz > max)); then max=$((off + fsz)); fi
	done < <(readelf -lW "$f" 2>/dev/null)
	[ "$max" -gt 0 ] && [ "$max" -le "$size" ]
}
