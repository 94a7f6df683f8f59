#!/bin/bash
# t0145-source-lines.sh - hw_syms_source_at: functions, inline frames and
# source lines of pcs in a core, from DWARF or from symbol tables.
#
# tests/helper/srcline-prog.c (with srcline-cxx.cc), built -O2 -g, records
# return addresses from inside always_inline functions inlined two levels
# deep, with the frames a symbolizer must give for each (function and
# __LINE__, innermost first), where it and libc are loaded, and a pc in
# libc's abort; then it aborts for a core.  tests/helper/srcat (built
# here from libheapwalk/sym with ASan and UBSan, as t0050 builds
# sym-probe) prints hw_syms_source_at's frames, which must be:
#  - with DWARF: the recorded functions (C++ ones demangled) and lines,
#    inlined on every frame but the last, the right file's basename, the
#    program's module with offsets that agree with its load address;
#  - with the program stripped of DWARF (symbol table kept): one frame,
#    the real function's name from the symbol table, no file or line;
#  - in libc: abort, from DWARF when libc6-dbg is there, and from .dynsym
#    with --no-debuginfo, where the names chosen for 3000 pcs must also be
#    libdwfl's own (dwfl_module_addrinfo; srcat --bench compares them);
#  - an aarch64 build (aarch64-linux-gnu-gcc, qemu-aarch64 with the
#    cross libc, Debian's libc6-arm64-cross, as the sysroot) read on this
#    x86_64 host with --sysroot: the same frames, and abort in libc.
# Exit 0 pass, 77 skip, else fail.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_cmd cc strip objcopy
if ! command -v pkg-config >/dev/null || ! pkg-config --exists libdw libelf; then
	skip "no libdw/libelf development files"
fi
unset DEBUGINFOD_URLS
H=$TOP/tests/helper

# The sanitizers' own exit codes (lib.sh) tell a crash from a failure.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=address,undefined \
	-fno-sanitize-recover=all -I"$TOP/libheapwalk" "$TOP"/libheapwalk/sym/*.c \
	"$TOP/libheapwalk/target/openfile.c" "$H/srcat.c" \
	$(pkg-config --cflags --libs libdw libelf) -lstdc++ -o "$T/srcat" ||
	fail "cannot build srcat"

# srcat OUT ARGS...: run srcat; any sanitizer report or stderr fails.
srcat() {
	local out=$1 rc=0
	shift
	timeout -k 5 120 "$T/srcat" "$@" >"$out" 2>"$out.err" || rc=$?
	if [ $rc != 0 ] || [ -s "$out.err" ]; then
		cat "$out.err" >&2
		fail "srcat $* exited $rc or wrote to stderr"
	fi
}

# check_frames TRUTH OUT WANT: every recorded call site against srcat's
# frames.  WANT "dwarf": all frames with lines; "symtab": the real
# function alone, no line.
check_frames() {
	awk -F'\t' -v want="$3" '
	function base(p) { sub(/.*\//, "", p); return p }
	function bad(msg) { print "FAIL: " msg > "/dev/stderr"; nbad++ }
	FNR == NR {
		if ($0 ~ /^module / || $0 ~ /^libc /) next
		split($0, w, " ")
		addr = w[1]; n = 0
		for (i = 2; i in w; i++) {
			k = match(w[i], /:[0-9]+$/)
			fn[addr, n] = substr(w[i], 1, k - 1)
			ln[addr, n] = substr(w[i], k + 1)
			n++
		}
		nf[addr] = n; order[++na] = addr
		next
	}
	{ got[$1, $2] = $0; gn[$1] = $2 + 1 }
	END {
		for (a = 1; a <= na; a++) {
			addr = order[a]; n = nf[addr]
			if (want == "symtab") {
				if (gn[addr] != 1) bad(addr ": " gn[addr] " frames, want 1")
				split(got[addr, 0], g, "\t")
				if (g[3] != fn[addr, n - 1] || g[4] != "-" || g[5] != 0 || g[7] != "real")
					bad(addr ": got \"" got[addr, 0] "\", want " fn[addr, n - 1] " with no line")
				continue
			}
			if (gn[addr] != n) bad(addr ": " gn[addr] " frames, want " n)
			for (i = 0; i < n; i++) {
				split(got[addr, i], g, "\t")
				f = base(g[4])
				wantfile = fn[addr, i] ~ /::/ ? "srcline-cxx.cc" : "srcline-prog.c"
				wantkind = i < n - 1 ? "inlined" : "real"
				if (g[3] != fn[addr, i] || g[5] != ln[addr, i] || f != wantfile || g[7] != wantkind)
					bad(addr " frame " i ": got \"" got[addr, i] "\", want " fn[addr, i] " " wantfile ":" ln[addr, i] " " wantkind)
			}
		}
		if (na < 3) bad("only " na " call sites recorded")
		exit nbad > 0
	}' "$1" "$2" || fail "$2: frames differ from the program's truth ($1)"
}

# The module checks: the program's frames name its module, and each
# offset is the address less the load address the program recorded.
check_module() { # TRUTH OUT MODULE-PATH
	local base
	base=$(awk -v p="$3" '$1 == "module" && $2 == p { print $3 }' "$1")
	[ -n "$base" ] || fail "$1: no load address for $3"
	awk -F'\t' -v m="$3" -v base="$base" '
	function hex(s,   v, i, c) {
		v = 0; s = tolower(s); sub(/^\+?0x/, "", s)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	$8 != m { print "FAIL: " $0 ": module is not " m > "/dev/stderr"; bad = 1 }
	hex($1) - hex($9) != hex(base) {
		print "FAIL: " $0 ": offset does not agree with base " base > "/dev/stderr"; bad = 1
	}
	END { exit bad }' "$2" || fail "$2: module names or offsets"
}

libc_pc() { awk '$1 == "libc" { print $2 }' "$1"; }

# --- x86_64, the host's compilers and libc ---------------------------------
mkdir -p "$T/run"
cxx=()
if command -v c++ >/dev/null 2>&1; then
	c++ -O2 -g -fno-exceptions -c "$H/srcline-cxx.cc" -o "$T/cxx.o" ||
		fail "cannot build srcline-cxx.cc"
	cxx=(-DWITH_CXX "$T/cxx.o")
else
	say "no C++ compiler: C frames only"
fi
cc -O2 -g -Wall -Wextra -Werror -o "$T/run/prog" "$H/srcline-prog.c" \
	"${cxx[@]}" -ldl || fail "cannot build srcline-prog"
PROG=$T/run/prog

pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo "?")
(
	cd "$T/run"
	ulimit -c unlimited
	"$PROG" "$T/truth" || true
) >/dev/null 2>&1
CORE=$(find "$T/run" -maxdepth 1 -name 'core*' -type f | sed -n 1,1p)
if [ -z "$CORE" ] && command -v gdb >/dev/null 2>&1; then
	# A piped core_pattern: gdb's gcore at the abort instead.
	gdb -nx -batch -iex 'set debuginfod enabled off' -ex run \
		-ex "gcore $T/run/core" --args "$PROG" "$T/truth" >/dev/null 2>&1 || true
	CORE=$(find "$T/run" -maxdepth 1 -name 'core' -type f | sed -n 1,1p)
fi
[ -n "$CORE" ] || skip "no core dumped (core_pattern '$pattern', no gdb)"
[ -s "$T/truth" ] || fail "the program recorded nothing"
grep -q '^0x' "$T/truth" || fail "no call sites in $T/truth"

# With DWARF.
mapfile -t addrs < <(awk '/^0x/ { print $1 }' "$T/truth")
srcat "$T/dwarf.out" "$CORE" "${addrs[@]}"
check_frames "$T/truth" "$T/dwarf.out" dwarf
check_module "$T/truth" "$T/dwarf.out" "$PROG"
if [ ${#cxx[@]} -gt 0 ]; then
	grep -q $'\thwt::Box<int>::put(int)\t' "$T/dwarf.out" ||
		fail "no demangled C++ inline frame"
fi

# Nothing there: no frames.
srcat "$T/none.out" "$CORE" pc:0 ra:1
[ "$(cat "$T/none.out")" = $'0x0\tnone\n0x1\tnone' ] ||
	fail "pcs in no module: $(cat "$T/none.out")"

# libc: abort, by its DWARF when there is some, else by its symbol.
LIBC_PC=$(libc_pc "$T/truth")
srcat "$T/libc.out" "$CORE" "pc:$LIBC_PC"
IFS=$'\t' read -r _ _ fn file line _ kind _ <"$T/libc.out" || true
if [ "$fn" != abort ] || [ "$kind" != real ]; then
	fail "libc pc: $(cat "$T/libc.out")"
fi
if [ "$file" != - ]; then
	if [ "${file##*/}" != abort.c ] || [ "$line" -le 0 ]; then
		fail "libc pc: abort's DWARF line: $(cat "$T/libc.out")"
	fi
else
	say "libc has no DWARF here (libc6-dbg missing?): symbol only"
fi
srcat "$T/libc-nd.out" --no-debuginfo "$CORE" "pc:$LIBC_PC"
IFS=$'\t' read -r _ _ fn file line _ <"$T/libc-nd.out" || true
if [ "$fn" != abort ] || [ "$file" != - ] || [ "$line" != 0 ]; then
	fail "libc pc with --no-debuginfo: $(cat "$T/libc-nd.out")"
fi

# The symbol-table index names what libdwfl names (.dynsym of libc).
srcat "$T/bench-nd.out" --no-debuginfo --bench libc.so 3000 "$CORE"
grep -q 'dwarf=no.* 0 differ from libdwfl' "$T/bench-nd.out" ||
	fail "symbol names differ from libdwfl's: $(cat "$T/bench-nd.out")"
# With DWARF, nearly every pc in libc has a line, and some are inlined.
srcat "$T/bench.out" --bench libc.so 2000 "$CORE"
if grep -q 'dwarf=yes' "$T/bench.out"; then
	awk '{ for (i = 1; i <= NF; i++) {
		if ($(i + 1) " " $(i + 2) " " $(i + 3) == "with a line,") l = $i
		if ($(i + 1) " " $(i + 2) " " $(i + 3) == "with inline frames;") n = $i } }
	END { exit !(l >= 1900 && n > 0) }' "$T/bench.out" ||
		fail "libc with DWARF: $(cat "$T/bench.out")"
fi
say "$(cat "$T/bench-nd.out")"
say "$(cat "$T/bench.out")"

# The program without DWARF, its symbol table kept, at the same path.
mv "$PROG" "$T/prog.full"
objcopy --strip-debug "$T/prog.full" "$PROG"
srcat "$T/symtab.out" "$CORE" "${addrs[@]}"
check_frames "$T/truth" "$T/symtab.out" symtab
check_module "$T/truth" "$T/symtab.out" "$PROG"

# --- aarch64 under qemu-user, read with --sysroot ------------------------
arm_why=
for c in aarch64-linux-gnu-gcc qemu-aarch64; do
	command -v "$c" >/dev/null 2>&1 || arm_why="$c is not installed"
done
CROSS=/usr/aarch64-linux-gnu/lib
if [ -z "$arm_why" ] && [ ! -f "$CROSS/libc.so.6" ]; then
	arm_why="no $CROSS/libc.so.6 (libc6-arm64-cross)"
fi
if [ -n "$arm_why" ]; then
	say "aarch64 half skipped: $arm_why"
	exit 0
fi
# The device's root: its libc and dynamic linker where the program
# looks for them.  The program runs from $A, then moves into $S.
S=$T/aroot
A=$T/arun
mkdir -p "$S/lib" "$A"
cp "$CROSS/libc.so.6" "$CROSS/ld-linux-aarch64.so.1" "$S/lib/"
aarch64-linux-gnu-gcc -O2 -g -Wall -Wextra -Werror -o "$A/prog" \
	"$H/srcline-prog.c" || fail "cannot cross-build srcline-prog"
(
	cd "$A"
	ulimit -c unlimited
	qemu-aarch64 -L "$S" "$A/prog" "$T/atruth" || true
) >/dev/null 2>&1
ACORE=$(find "$A" -maxdepth 1 -name 'qemu_prog_*.core' -type f | sed -n 1,1p)
[ -n "$ACORE" ] || fail "qemu-aarch64 wrote no core"
[ -s "$T/atruth" ] || fail "the aarch64 program recorded nothing"
mkdir -p "$S$A"
mv "$A/prog" "$S$A/prog"

# qemu-user cores name no files: they are given as the dynamic linker's
# link_map has them (heapwalk's target does the same).
mapfile -t files < <(awk '$1 == "module" { print "--file"; print $2 "@" $3 }' "$T/atruth")
mapfile -t aaddrs < <(awk '/^0x/ { print $1 }' "$T/atruth")
srcat "$T/arm.out" --sysroot "$S" "${files[@]}" "$ACORE" "${aaddrs[@]}"
check_frames "$T/atruth" "$T/arm.out" dwarf
check_module "$T/atruth" "$T/arm.out" "$A/prog"
srcat "$T/arm-libc.out" --sysroot "$S" "${files[@]}" "$ACORE" \
	"pc:$(libc_pc "$T/atruth")"
IFS=$'\t' read -r _ _ fn _ _ _ kind mod _ <"$T/arm-libc.out" || true
if [ "$fn" != abort ] || [ "$kind" != real ] || [ "${mod##*/}" != libc.so.6 ]; then
	fail "aarch64 libc pc: $(cat "$T/arm-libc.out")"
fi
# Without the sysroot the program is not found: no frames.
srcat "$T/arm-nosys.out" "${files[@]}" "$ACORE" "${aaddrs[0]}"
grep -q $'\tnone$' "$T/arm-nosys.out" ||
	fail "aarch64 without --sysroot: $(cat "$T/arm-nosys.out")"
exit 0
