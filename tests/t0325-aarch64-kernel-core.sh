#!/bin/bash
# heapwalk on genuine aarch64 Linux kernel cores: corpora/aarch64-kernel/
# (corpora/ptmalloc/bins1.c and threads8.c on Debian bookworm's arm64
# glibc 2.36, dumped by Debian's arm64 kernel in qemu-system-aarch64; made
# by scripts/corpus/vm-core.sh).  Unlike t0320's qemu-user cores they have
# NT_FILE, NT_AUXV and one NT_PRSTATUS and NT_ARM_TLS per thread, and the
# libc's text is not in the core (only its ELF header page).  Uses only the
# committed files (no qemu, no network): each case's core.xz is unpacked
# and read with --sysroot (the committed libc and loader) --no-debuginfo;
# chunks, summary and sizes must match the program's truth (truthcmp),
# summary must say aarch64, the truth's glibc version and thread count,
# and every thread's tcache must be found (through its thread pointer)
# in that thread's own arena, and `arenas` must list every thread under
# that arena (thread_arena, through TPIDR_EL0).  When scripts/corpus/sysroot.sh's
# glibc-2.36-arm64 sysroot has libc6-dbg's debug file for the committed
# libc's build-id, the chunks must come out identical with --debug-dir;
# otherwise (the mirror moved on, or no sysroot here) that half is skipped.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd xz tar readelf sha256sum
truthcmp=$(tool truthcmp)
kdir=$TOP/corpora/aarch64-kernel
variant=glibc-2.36-arm64

cases=()
for d in "$kdir"/*/; do
	if [ -f "$d/core.xz" ]; then cases+=("$(basename "$d")"); fi
done
[ ${#cases[@]} -gt 0 ] || fail "no corpora/aarch64-kernel/*/core.xz"

# Every problem is reported; the test fails at the end if there was any.
bad=0
problem() {
	echo "FAIL: $*" >&2
	bad=$((bad + 1))
}

# The optional debug-info half: the sysroot with libc6-dbg.
dbg_sysroot=
dbg_why=
sysroots=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}
mkdir -p "$sysroots"
rc=0
"$TOP/scripts/corpus/sysroot.sh" "$variant" "$sysroots/$variant" >"$T/sysroot.log" 2>&1 || rc=$?
case $rc in
0) dbg_sysroot=$(cd "$sysroots/$variant" && pwd) ;;
77) dbg_why="sysroot.sh cannot make the $variant sysroot here ($(tail -n1 "$T/sysroot.log"))" ;;
*)
	cat "$T/sysroot.log" >&2
	fail "sysroot.sh $variant failed"
	;;
esac

for case in "${cases[@]}"; do
	src=$kdir/$case
	w=$T/$case
	sr=$w/sysroot
	mkdir -p "$sr"
	for f in core.xz truth.txt prog sysroot/sysroot.tar.xz MANIFEST; do
		[ -f "$src/$f" ] || fail "$case: no $f in $src"
	done
	xz -dc "$src/core.xz" >"$w/core" || fail "$case: cannot unpack core.xz"
	tar -xJf "$src/sysroot/sysroot.tar.xz" -C "$sr" ||
		fail "$case: cannot unpack sysroot.tar.xz"
	# The program ran as /opt/heapwalk/prog (NT_FILE says so).
	mkdir -p "$sr/opt/heapwalk"
	cp "$src/prog" "$sr/opt/heapwalk/prog"
	truth=$src/truth.txt

	# The committed files are the ones MANIFEST describes.
	while read -r _ sum f _; do
		case $f in
		core) p=$w/core ;;
		sysroot/*.tar.xz) p=$src/$f ;;
		sysroot/*) p=$w/$f ;;
		*) p=$src/$f ;;
		esac
		got=$(sha256sum <"$p" | cut -d' ' -f1)
		[ "$got" = "$sum" ] || problem "$case: $f has sha256 $got, MANIFEST says $sum"
	done < <(grep '^sha256 ' "$src/MANIFEST")

	# A kernel core: AArch64, with the notes qemu-user does not write.
	nthreads=$(grep -c '^thread ' "$truth" || true)
	hdr=$(LC_ALL=C readelf -hW "$w/core")
	grep -Eq '^ *Type: +CORE' <<<"$hdr" || problem "$case: not an ELF core"
	grep -Eq '^ *Machine: +AArch64' <<<"$hdr" || problem "$case: not an AArch64 core"
	notes=$(LC_ALL=C readelf -nW "$w/core")
	for n in NT_PRSTATUS NT_ARM_TLS NT_FILE NT_AUXV; do
		c=$(grep -cw "$n" <<<"$notes" || true)
		want=1
		case $n in NT_PRSTATUS | NT_ARM_TLS) want=$nthreads ;; esac
		[ "$c" = "$want" ] || problem "$case: $c $n notes in the core, expected $want"
	done

	base=(--json --sysroot "$sr" --no-debuginfo)
	for cmd in chunks summary bins; do
		hw "$w/$cmd" "$w/$cmd.err" "${base[@]}" "$w/core" "$cmd"
		expect_rc 0
	done
	hw "$w/sizes" "$w/sizes.err" "${base[@]}" "$w/core" sizes --exact
	expect_rc 0
	"$truthcmp" "$truth" "$w/chunks" "$w/summary" ||
		problem "$case: heapwalk --sysroot --no-debuginfo disagrees with the truth (chunks, summary)"
	"$truthcmp" --sizes "$w/sizes" "$w/summary" "$w/chunks" ||
		problem "$case: sizes, summary and chunks disagree"

	arch=$(json_str "$w/summary" arch)
	[ "$arch" = aarch64 ] || problem "$case: summary says arch '$arch', not aarch64"
	threads=$(json_num "$w/summary" threads)
	[ "$threads" = "$nthreads" ] ||
		problem "$case: summary says $threads threads, the truth $nthreads"
	want_ver=$(sed -n 's/^# glibc //p' "$truth")
	ver=$(json_str "$w/summary" version)
	[ "$ver" = "$want_ver" ] ||
		problem "$case: summary says version '$ver', the truth glibc $want_ver ($(json_str "$w/summary" version_from))"

	# Tcaches: each tcache entry of the truth (thread IDX) is in a tcache
	# bin of that thread's tid, and that bin's arena is the thread's.
	hw "$w/arenas" "$w/arenas.err" "${base[@]}" "$w/core" arenas
	expect_rc 0
	grep -o '{[^{}]*"kind" *: *"tcache"[^{}]*}' "$w/bins" | awk '
		function num(key,   s) {
			if (!match($0, "\"" key "\" *: *-?[0-9]+"))
				return "?"
			s = substr($0, RSTART, RLENGTH)
			sub(/.*: */, "", s)
			return s
		}
		{ print num("thread"), num("arena") }' | sort -u >"$w/tcache.tid-arena"
	grep -o '"arena" *: *[0-9]*, *"addr" *: *"0x[0-9a-f]*"' "$w/arenas" |
		sed 's/"arena" *: *\([0-9]*\), *"addr" *: *"\(0x[0-9a-f]*\)"/\2 \1/' >"$w/arena.index"
	while read -r _ idx tid arena _; do
		grep -q "^alloc .* tcache $idx\$" "$truth" || continue
		if [ "$arena" = main ]; then
			want=0
		else
			want=$(awk -v a="$arena" '$1 == a { print $2 }' "$w/arena.index")
		fi
		got=$(awk -v t="$tid" '$1 == t { print $2 }' "$w/tcache.tid-arena" | tr '\n' ' ')
		if [ -z "$got" ]; then
			problem "$case: no tcache found for thread $idx (tid $tid) ($(json_str "$w/summary" tcache_from))"
		elif [ "$got" != "$want " ]; then
			problem "$case: thread $idx (tid $tid)'s tcache bins are in arena(s) $got, expected $want"
		fi
	done < <(grep '^thread ' "$truth")
	"$truthcmp" --arenas "$truth" "$w/arenas" ||
		problem "$case: arenas' threads (NT_ARM_TLS thread pointers) disagree with the truth"
	check_era "$w/summary" "$want_ver"
	grep -q '"target_limits":\[\]' "$w/summary" ||
		problem "$case: a kernel core with its files lacks nothing, yet: $(grep -o '"target_limits":\[[^]]*\]' "$w/summary")"

	# Bare: no libc at all (an empty --sysroot), as when the device's
	# files are not at hand: no version string, the layout from the data.
	mkdir -p "$w/empty"
	for cmd in chunks summary; do
		hw "$w/b.$cmd" "$w/b.$cmd.err" --json --sysroot "$w/empty" "$w/core" "$cmd"
		expect_rc 0
	done
	"$truthcmp" "$truth" "$w/b.chunks" "$w/b.summary" ||
		problem "$case: without libc's file heapwalk disagrees with the truth"
	grep -q '"version":"unknown"' "$w/b.summary" ||
		problem "$case: a version without libc's file: $(json_str "$w/b.summary" version)"
	check_era "$w/b.summary" "$want_ver"
	grep -q '"target_limits":\[[^]]*missing' "$w/b.summary" ||
		problem "$case: the missing libc is not reported in target_limits"
	say "$case: $(grep -c . "$w/chunks") chunks, $nthreads threads, --no-debuginfo and bare checked (data says $(json_str "$w/b.summary" data_says))"

	# With libc6-dbg, when its build-id still matches the committed libc.
	if [ -z "$dbg_sysroot" ]; then
		say "$case: with-debuginfo half skipped: $dbg_why"
		continue
	fi
	libc=$(find "$sr" -name 'libc.so.6' -type f | sed -n 1p)
	id=$(LC_ALL=C readelf -nW "$libc" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | sed -n 1p)
	debug=$dbg_sysroot/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ -z "$id" ] || ! [ -f "$debug" ]; then
		say "$case: with-debuginfo half skipped: $dbg_sysroot has no debug file for the committed libc (build-id ${id:-none}): the mirror's libc6-dbg no longer matches"
		continue
	fi
	dbase=(--json --sysroot "$sr" --debug-dir "$dbg_sysroot/usr/lib/debug")
	for cmd in chunks summary arenas; do
		hw "$w/d.$cmd" "$w/d.$cmd.err" "${dbase[@]}" "$w/core" "$cmd"
		expect_rc 0
	done
	"$truthcmp" --arenas "$truth" "$w/d.arenas" ||
		problem "$case: with --debug-dir, arenas' threads disagree with the truth"
	"$truthcmp" "$truth" "$w/d.chunks" "$w/d.summary" ||
		problem "$case: heapwalk --sysroot --debug-dir disagrees with the truth"
	if ! cmp -s "$w/chunks" "$w/d.chunks"; then
		diff "$w/chunks" "$w/d.chunks" | sed -n 1,10p >&2
		problem "$case: chunks differ with and without debug info"
	fi
	ver=$(json_str "$w/d.summary" version)
	[ "$ver" = "$want_ver" ] ||
		problem "$case: with --debug-dir, summary says version '$ver', the truth glibc $want_ver"
	grep -q '"main_arena_from" *: *"symbol main_arena"' "$w/d.summary" ||
		problem "$case: with --debug-dir, main_arena was not found by its symbol: $(json_str "$w/d.summary" main_arena_from)"
	say "$case: identical chunks with libc6-dbg (build-id $id)"
done

[ $bad = 0 ] || fail "$bad problem(s) with the aarch64 kernel cores"
