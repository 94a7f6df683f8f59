#!/bin/bash
# t0050-sym.sh - libheapwalk/sym (libdwfl layer) against gdb's answers.
#
# Builds tests/helper/sym-probe with ASan+UBSan, makes a kernel core of a
# two-thread program that mallocs and aborts, and checks, with gdb as the
# reference:
#  - addresses of libc's local symbols main_arena, mp_ (from libc6-dbg's
#    separate .symtab), the TLS offset of tcache, the address of malloc;
#  - member offsets and sizes of malloc_state, malloc_par, malloc_chunk,
#    heap_info, tcache_perthread_struct, tcache_entry (near &main_arena,
#    near malloc, and with the every-CU search);
#  - with no_debuginfo: main_arena is not found, malloc (.dynsym) is;
#  - a sysroot: the program and its library moved under a sysroot, with a
#    different library (other build-id) left at the original path; separate
#    debug info found in SYSROOT/usr/lib/debug and in an extra debug dir.
# Exit 0 pass, 77 skip, else fail.
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v cc >/dev/null || skip "no cc"
command -v gdb >/dev/null || skip "no gdb"
if ! command -v pkg-config >/dev/null ||
	! pkg-config --exists libdw libelf; then
	skip "no libdw/libelf development files"
fi
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo "?")
case $pattern in
core*) ;;
*) skip "kernel.core_pattern is '$pattern', cannot collect a core here" ;;
esac

T=$(mktemp -d "${TMPDIR:-/tmp}/t0050.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

# No network lookups, by gdb or by libdwfl.
unset DEBUGINFOD_URLS

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# shellcheck disable=SC2046
# (-lstdc++: the C++ runtime's demangler names C++ symbols; openfile.c:
# how every file a core names is opened.)
cc -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined \
	-I"$TOP/libheapwalk" "$TOP"/libheapwalk/sym/*.c \
	"$TOP/libheapwalk/target/openfile.c" \
	"$TOP/tests/helper/sym-probe.c" \
	$(pkg-config --cflags --libs libdw libelf) -lstdc++ -o "$T/sym-probe"
PROBE=$T/sym-probe

# --- the target: a program with a library of its own --------------------
mkdir -p "$T/lib" "$T/run"
cat >"$T/foo.c" <<'EOF'
#include <stdlib.h>
struct foo_rec { long a; char pad[20]; void *p; int z; };
static struct foo_rec *foo_last;
static long foo_counter = 7;
void *foo_alloc(size_t n)
{
	foo_last = malloc(sizeof *foo_last);
	foo_last->p = malloc(n);
	foo_counter++;
	return foo_last->p;
}
#ifdef OTHER
int foo_other(void) { return 1; }
#endif
EOF
cat >"$T/prog.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
void *foo_alloc(size_t n);
static volatile int ready;
static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		char *p = malloc(32 + i);
		memset(p, 1, 32);
		if (i % 3)
			free(p);
	}
	ready = 1;
	for (;;)
		pause();
	return NULL;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 50; i++) {
		void *p = foo_alloc(100 * i + 8);
		if (i & 1)
			free(p);
	}
	while (!ready)
		usleep(1000);
	abort();
}
EOF
cc -g -O0 -fPIC -shared -Wl,--build-id -o "$T/lib/libfoo.so" "$T/foo.c"
cc -g -O0 -pthread -Wl,--build-id -o "$T/prog" "$T/prog.c" \
	-L"$T/lib" -lfoo -Wl,-rpath,"$T/lib"

(
	cd "$T/run"
	ulimit -c unlimited
	"$T/prog" || true
) >/dev/null 2>&1
CORE=$(find "$T/run" -maxdepth 1 -name 'core*' -type f | sed -n 1,1p)
[ -n "$CORE" ] || skip "no core dumped (ulimit or core_pattern)"

# --- gdb's answers ---------------------------------------------------------
gdbq() { gdb -nx -batch -iex 'set debuginfod enabled off' "$@" 2>/dev/null; }

gdbq -ex 'printf "sym main_arena 0x%lx\n", (unsigned long)&main_arena' \
	-ex 'printf "sym mp_ 0x%lx\n", (unsigned long)&mp_' \
	-ex 'printf "sym malloc 0x%lx\n", (unsigned long)&malloc' \
	-ex 'info address tcache' \
	"$T/prog" "$CORE" >"$T/gdb.sym.raw" || true
grep '^sym ' "$T/gdb.sym.raw" >"$T/gdb.sym" || true
sed -n 's/.*"tcache" is a thread-local variable at offset \(0x[0-9a-f]*\).*/sym tcache tls+\1/p' \
	"$T/gdb.sym.raw" >>"$T/gdb.sym"
grep -q '^sym main_arena 0x' "$T/gdb.sym" ||
	skip "gdb does not know main_arena (libc6-dbg missing?)"
grep -q '^sym tcache tls+' "$T/gdb.sym" || fail "gdb: no tcache offset"

# --- heapwalk's sym layer ----------------------------------------------------
run_probe() { # OUT ARGS...
	local out=$1
	shift
	"$PROBE" "$@" >"$out" 2>"$out.err" ||
		fail "sym-probe $* failed: $(cat "$out.err")"
	if [ -s "$out.err" ]; then
		cat "$out.err" >&2
		fail "sym-probe $* wrote to stderr"
	fi
}

run_probe "$T/p.out" "$CORE"
run_probe "$T/p0.out" --near0 "$CORE"
run_probe "$T/p1.out" --near-sym malloc "$CORE"

grep -q '^module libc\.so\.6 .* debug=/usr/lib/debug/\.build-id/.* dwarf=yes' \
	"$T/p.out" || fail "libc module or its debug file not found: $(grep libc "$T/p.out")"

# Symbols: address (and TLS offset) must equal gdb's.
awk '$1 == "sym" { print $1, $2, $3 }' "$T/p.out" | sort >"$T/ours.sym"
sort "$T/gdb.sym" >"$T/gdb.sym.s"
diff -u "$T/gdb.sym.s" "$T/ours.sym" || fail "symbols differ from gdb"

# Layouts: every member offset and every size must equal gdb's.
gdbtype() {
	case $1 in
	heap_info | tcache_perthread_struct | tcache_entry) echo "$1" ;;
	*) echo "struct $1" ;;
	esac
}
check_layouts() { # PROBE-OUTPUT
	local f=$1 n
	n=$(grep -c '^layout ' "$f" || true)
	[ "$n" -eq 6 ] || fail "$f: $n layouts found, want 6: $(grep nolayout "$f")"
	: >"$T/ours.lay"
	: >"$T/gdb.cmds"
	local tag type kv m v
	while read -r _ tag rest; do
		type=$(gdbtype "$tag")
		for kv in $rest; do
			m=${kv%%=*}
			v=${kv#*=}
			if [ "$m" = sizeof ]; then
				echo "size $tag $v" >>"$T/ours.lay"
				# shellcheck disable=SC2028 # gdb expands the \n
				echo "printf \"size $tag %lu\\n\", (unsigned long)sizeof($type)" >>"$T/gdb.cmds"
			else
				echo "off $tag $m $v" >>"$T/ours.lay"
				# shellcheck disable=SC2028
				echo "printf \"off $tag $m %ld\\n\", (long)&(($type *)0)->$m" >>"$T/gdb.cmds"
			fi
		done
	done < <(grep '^layout ' "$f")
	gdbq -x "$T/gdb.cmds" "$T/prog" "$CORE" | grep -E '^(off|size) ' |
		sort >"$T/gdb.lay" || true
	sort "$T/ours.lay" >"$T/ours.lay.s"
	diff -u "$T/gdb.lay" "$T/ours.lay.s" || fail "$f: layouts differ from gdb"
}
check_layouts "$T/p.out"
check_layouts "$T/p0.out"
check_layouts "$T/p1.out"
grep -q '^layout malloc_state .*top=96 .*bins=112 .*sizeof=2200' "$T/p.out" ||
	echo "note: malloc_state differs from glibc 2.36 x86_64 (fine if gdb agrees)" >&2

# no_debuginfo: .dynsym only.
run_probe "$T/nd.out" --no-debuginfo "$CORE"
grep -q '^nosym main_arena$' "$T/nd.out" || fail "no_debuginfo: main_arena found"
grep -q '^nosym mp_$' "$T/nd.out" || fail "no_debuginfo: mp_ found"
grep -q '^nolayout malloc_state$' "$T/nd.out" || fail "no_debuginfo: DWARF used"
grep -q '^module libc\.so\.6 .* debug=- .*dwarf=no' "$T/nd.out" ||
	fail "no_debuginfo: libc debug file loaded"
grep "^sym malloc " "$T/gdb.sym" | cmp -s - <(grep '^sym malloc ' "$T/nd.out" |
	awk '{ print $1, $2, $3 }') || fail "no_debuginfo: malloc differs from gdb"

# gdb's truth for the program's own library, before it is moved away.
FOO_ADDR=$(gdbq -ex 'printf "%lx\n", (unsigned long)&foo_counter' \
	"$T/prog" "$CORE" | tail -n 1)
gdbq -ex 'printf "layout foo_rec a=%ld pad=%ld p=%ld z=%ld sizeof=%lu\n", (long)&((struct foo_rec *)0)->a, (long)&((struct foo_rec *)0)->pad, (long)&((struct foo_rec *)0)->p, (long)&((struct foo_rec *)0)->z, (unsigned long)sizeof(struct foo_rec)' \
	"$T/prog" "$CORE" | grep '^layout' >"$T/gdb.foo" || true
if [ ! -s "$T/gdb.foo" ] || [ -z "$FOO_ADDR" ]; then
	fail "gdb: nothing about libfoo"
fi
# shellcheck disable=SC2054 # the commas belong to --layout's argument
FOO_ARGS=(--module libfoo.so --layout foo_rec:a,pad,p,z --near-sym foo_counter)

# --- sysroot ---------------------------------------------------------------
# The program and a stripped libfoo go under $S; libfoo's debug info goes to
# $S/usr/lib/debug and to an extra debug dir; the original path now holds
# a different libfoo.
S=$T/sysroot
D=$T/extra-debug
FOO_ID=$(LC_ALL=C readelf -n "$T/lib/libfoo.so" | awk '/Build ID/ { print $3 }')
[ -n "$FOO_ID" ] || fail "libfoo has no build-id"
dbgrel=.build-id/${FOO_ID:0:2}/${FOO_ID:2}.debug
# $S$T/lib is an absolute symbolic link, to be read inside the sysroot.
SFOO=$S/usr/lib/foo/libfoo.so
mkdir -p "$S$T" "$S/usr/lib/foo" "$(dirname "$S/usr/lib/debug/$dbgrel")" \
	"$(dirname "$D/$dbgrel")"
ln -s /usr/lib/foo "$S$T/lib"
objcopy --only-keep-debug "$T/lib/libfoo.so" "$D/$dbgrel"
strip --strip-all -o "$SFOO" "$T/lib/libfoo.so"
mv "$T/prog" "$S$T/prog"
cc -g -O0 -fPIC -shared -DOTHER -Wl,--build-id -o "$T/lib/libfoo.so" "$T/foo.c"

# Without the sysroot: the program is gone and the library at the original
# path is rejected for its build-id.  (Module names: libdwfl 0.188 names a
# module by the basename from the link_map when it opened the file while
# reporting, else by the NT_FILE path.)
run_probe "$T/ns.out" "${FOO_ARGS[@]}" "$CORE" foo_counter
grep -q "^module $T/prog .*file=- " "$T/ns.out" ||
	fail "no sysroot: program file found: $(grep "$T/prog" "$T/ns.out")"
grep -q '^module [^ ]*libfoo\.so .*file=- ' "$T/ns.out" ||
	fail "no sysroot: libfoo with the wrong build-id accepted"
grep -q '^nosym foo_counter$' "$T/ns.out" || fail "no sysroot: foo_counter found"

# With the sysroot: files from $S, debug info from $S/usr/lib/debug.
cp "$D/$dbgrel" "$S/usr/lib/debug/$dbgrel"
run_probe "$T/s.out" --sysroot "$S" "${FOO_ARGS[@]}" "$CORE" foo_counter
grep -q "^module $T/prog .*file=$S$T/prog " "$T/s.out" ||
	fail "sysroot: program not found under the sysroot"
grep -q "^module [^ ]*libfoo\\.so .*file=$SFOO debug=$S/usr/lib/debug/$dbgrel .*dwarf=yes" \
	"$T/s.out" || fail "sysroot: libfoo or its debug file: $(grep libfoo "$T/s.out")"
grep -q "^sym foo_counter 0x$FOO_ADDR " "$T/s.out" ||
	fail "sysroot: foo_counter: $(grep foo_counter "$T/s.out"), gdb: 0x$FOO_ADDR"
grep '^layout' "$T/s.out" | cmp -s - "$T/gdb.foo" ||
	fail "sysroot: foo_rec layout differs from gdb's: $(grep layout "$T/s.out")"
grep -q '^sym main_arena ' "$T/s.out" && fail "probe looked in the wrong module"

# Extra debug dir, searched before $S/usr/lib/debug.
run_probe "$T/d.out" --sysroot "$S" --debug-dir "$D" "${FOO_ARGS[@]}" "$CORE" foo_counter
grep -q "^module [^ ]*libfoo\\.so .* debug=$D/$dbgrel " "$T/d.out" ||
	fail "debug dir: not used first: $(grep libfoo "$T/d.out")"
grep -q "^sym foo_counter 0x$FOO_ADDR " "$T/d.out" || fail "debug dir: foo_counter"

# Sysroot with no_debuginfo: the stripped library has .dynsym only.
run_probe "$T/sn.out" --sysroot "$S" --no-debuginfo "${FOO_ARGS[@]}" \
	"$CORE" foo_counter foo_alloc
grep -q '^nosym foo_counter$' "$T/sn.out" || fail "sysroot+no_debuginfo: foo_counter"
grep -q '^sym foo_alloc 0x' "$T/sn.out" || fail "sysroot+no_debuginfo: foo_alloc"
grep -q '^nolayout foo_rec$' "$T/sn.out" || fail "sysroot+no_debuginfo: DWARF used"

# A library under the sysroot with the wrong build-id is not taken.
mv "$SFOO" "$T/libfoo.good"
cp "$T/lib/libfoo.so" "$SFOO"
run_probe "$T/sw.out" --sysroot "$S" "${FOO_ARGS[@]}" "$CORE" foo_counter
grep -q '^module [^ ]*libfoo\.so .*file=- ' "$T/sw.out" ||
	fail "sysroot: libfoo with the wrong build-id accepted: $(grep libfoo "$T/sw.out")"
mv "$T/libfoo.good" "$SFOO"

# The executable named explicitly, no sysroot.
run_probe "$T/e.out" --exe "$S$T/prog" "${FOO_ARGS[@]}" "$CORE"
grep -q "^module .*file=$S$T/prog " "$T/e.out" || fail "--exe not used"

# Odd input: not a core, an empty file.
: >"$T/empty"
if "$PROBE" "$T/empty" >/dev/null 2>&1; then fail "empty file accepted"; fi
if "$PROBE" "$T/foo.c" >/dev/null 2>&1; then fail "text file accepted"; fi
if "$PROBE" "$T/lib/libfoo.so" >/dev/null 2>&1; then fail "shared object accepted"; fi
head -c 65536 "$CORE" >"$T/short-core"
"$PROBE" "$T/short-core" >/dev/null 2>"$T/short.err" || true
if grep -q 'Sanitizer' "$T/short.err"; then
	cat "$T/short.err" >&2
	fail "truncated core: sanitizer report"
fi
exit 0
