#!/bin/bash
# make install, as a distribution package or an analysis host does it:
#  (a) DESTDIR staging with PREFIX=/usr puts every file under DESTDIR at
#      its /usr path: the tool, libheapwalk.so.0 (SONAME libheapwalk.so.0,
#      the libheapwalk.so link), libheapwalk.a, include/heapwalk/heapwalk.h,
#      lib/pkgconfig/heapwalk.pc naming /usr, the gdb plugin and its
#      script, the man pages and the bash completion;
#  (b) the shared library exports heapwalk.h's functions and nothing
#      else (nm -D), each in the version node libheapwalk.map names;
#  (c) installed to a real PREFIX (a directory of the test): the
#      installed heapwalk runs (--version names the version and the git
#      revision) and reads a corpus core; examples/triage.c compiles
#      with `pkg-config --cflags --libs heapwalk` (and statically with
#      --static) and, run on corpora/ptmalloc/leaks1.c's core, reports
#      as many definite leaks as that program recorded (its truth: each
#      `definite` block, and one block of its lost cycle) and the heap's
#      blocks in use that the truth lists, its arenas adding up to its
#      total; gdb loads the installed
#      plugin script and `heap` prints the summary;
#  (d) make uninstall removes every file again.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd make cc pkg-config nm readelf
build=${BUILDDIR:-$TOP/build}

run_make() {
	make -C "$TOP" --no-print-directory BUILD="$build" "$@" >"$T/make.log" 2>&1 ||
		fail "make $*: $(tail -n 5 "$T/make.log")"
}

# (a)
stage=$T/stage
run_make install DESTDIR="$stage" PREFIX=/usr
for f in bin/heapwalk lib/libheapwalk.so.0 lib/libheapwalk.so lib/libheapwalk.a \
	include/heapwalk/heapwalk.h lib/pkgconfig/heapwalk.pc \
	lib/heapwalk/heapwalk-gdb.so share/heapwalk/heapwalk.gdb; do
	[ -e "$stage/usr/$f" ] || fail "make install DESTDIR= PREFIX=/usr: no /usr/$f"
done
for m in "$TOP"/doc/*.1 "$TOP"/doc/*.7; do
	[ -e "$m" ] || continue
	sec=${m##*.}
	[ -f "$stage/usr/share/man/man$sec/${m##*/}" ] || fail "the man page ${m##*/} is not installed"
done
if [ -f "$TOP/scripts/completion/heapwalk.bash" ]; then
	[ -f "$stage/usr/share/bash-completion/completions/heapwalk" ] ||
		fail "the bash completion is not installed"
fi
[ "$(readlink "$stage/usr/lib/libheapwalk.so")" = libheapwalk.so.0 ] ||
	fail "libheapwalk.so does not link to libheapwalk.so.0"
readelf -d "$stage/usr/lib/libheapwalk.so.0" >"$T/dyn.out"
grep -q 'SONAME.*\[libheapwalk\.so\.0\]' "$T/dyn.out" ||
	fail "libheapwalk.so.0's SONAME: $(readelf -d "$stage/usr/lib/libheapwalk.so.0" | grep SONAME)"
grep -qx 'prefix=/usr' "$stage/usr/lib/pkgconfig/heapwalk.pc" &&
	grep -qx 'libdir=/usr/lib' "$stage/usr/lib/pkgconfig/heapwalk.pc" ||
	fail "heapwalk.pc does not name /usr: $(head -n 3 "$stage/usr/lib/pkgconfig/heapwalk.pc")"
grep -q '/usr/lib/heapwalk/heapwalk-gdb.so' "$stage/usr/share/heapwalk/heapwalk.gdb" ||
	fail "the installed gdb script does not name the installed reader"
if grep -q "$stage" "$stage/usr/share/heapwalk/heapwalk.gdb" "$stage/usr/lib/pkgconfig/heapwalk.pc"; then
	fail "an installed file names the DESTDIR staging directory"
fi

# (b)
nm -D --defined-only "$stage/usr/lib/libheapwalk.so.0" | awk '{ print $3 }' | sort >"$T/exports"
# Each function in the version node the map puts it in, and the nodes; a
# function in several nodes (its arguments changed) in each, the last
# one its default (@@), the others kept for programs linked before (@).
awk '/^HEAPWALK_[0-9.]+ \{/ { node = $1; print node }
	/^\thw_[a-z_]*;$/ { f = $1; sub(/;$/, "", f)
		if (f in last) print f "@" last[f]
		last[f] = node }
	END { for (f in last) print f "@@" last[f] }' \
	"$TOP/libheapwalk/libheapwalk.map" | sort >"$T/want"
diff "$T/want" "$T/exports" >"$T/exports.diff" ||
	fail "libheapwalk.so.0 exports other symbols than heapwalk.h's (< wanted, > exported): $(head -n 8 "$T/exports.diff")"
while read -r fn; do
	grep -q "\b$fn(" "$TOP/libheapwalk/heapwalk.h" || fail "$fn is exported but not declared in heapwalk.h"
done < <(sed -n 's/^\t\(hw_[a-z_]*\);$/\1/p' "$TOP/libheapwalk/libheapwalk.map" | sort -u)

# (c)
prefix=$T/prefix
run_make install PREFIX="$prefix"
"$prefix/bin/heapwalk" --version >"$T/v.out" || fail "the installed heapwalk --version fails"
grep -qE '^heapwalk [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-z.-]+\)$' "$T/v.out" ||
	fail "--version: $(cat "$T/v.out")"
dir=$(corpus_core leaks1)
mkdir -p "$T/leaks1"
corpus_copy "$dir" "$T/leaks1"
cp "$dir/prog" "$T/leaks1/"
"$prefix/bin/heapwalk" "$T/leaks1/core" summary >"$T/s.out" 2>&1 ||
	fail "the installed heapwalk cannot read leaks1's core: $(head -n 3 "$T/s.out")"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046 # pkg-config's words
cc -Wall -Wextra -Werror -o "$T/triage" "$TOP/examples/triage.c" \
	$(pkg-config --cflags --libs heapwalk) 2>"$T/cc.err" ||
	fail "examples/triage.c does not build with pkg-config: $(head -n 5 "$T/cc.err")"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$T/triage-static" "$TOP/examples/triage.c" \
	-Wl,-Bstatic $(pkg-config --cflags --libs-only-L heapwalk) -lheapwalk -Wl,-Bdynamic \
	$(pkg-config --static --libs-only-l heapwalk | sed 's/-lheapwalk//') 2>"$T/cc2.err" ||
	fail "examples/triage.c does not link statically: $(head -n 5 "$T/cc2.err")"
LD_LIBRARY_PATH=$prefix/lib "$T/triage" "$T/leaks1/core" >"$T/t.out" 2>"$T/t.err" ||
	fail "triage on leaks1: exit $?: $(head -n 3 "$T/t.err")"
"$T/triage-static" "$T/leaks1/core" >"$T/t2.out" 2>&1 || fail "the static triage fails"
cmp -s "$T/t.out" "$T/t2.out" || fail "the static and shared triage disagree"
# The library's triage record is the tool's, but for when it was made.
LD_LIBRARY_PATH=$prefix/lib "$T/triage" --record "$T/leaks1/core" >"$T/rec.lib" 2>"$T/rec.err" ||
	fail "triage --record on leaks1: exit $?: $(head -n 3 "$T/rec.err")"
LD_LIBRARY_PATH=$prefix/lib "$prefix/bin/heapwalk" --json triage "$T/leaks1/core" >"$T/rec.tool" 2>&1 ||
	fail "heapwalk --json triage on leaks1: exit $?: $(head -n 3 "$T/rec.tool")"
sed -E 's/"analysed_at":"[^"]*","seconds":[0-9.]+//' "$T/rec.lib" >"$T/rec.lib.n"
sed -E 's/"analysed_at":"[^"]*","seconds":[0-9.]+//' "$T/rec.tool" >"$T/rec.tool.n"
grep -q '"schema":1,' "$T/rec.lib.n" || fail "triage --record: no record: $(head -c 300 "$T/rec.lib")"
cmp -s "$T/rec.lib.n" "$T/rec.tool.n" ||
	fail "hw_triage's record is not the tool's: $(diff "$T/rec.lib.n" "$T/rec.tool.n" | head -c 600)"
# A program linked before HEAPWALK_0.6 passes the old struct hw_output
# (no size, a bool for JSON) to hw_session_run@HEAPWALK_0.1: it must get
# the report it asked for, as the tool prints it.
cat >"$T/old.c" <<'OLD'
#include <stdbool.h>
#include <stdio.h>
#include <heapwalk/heapwalk.h>
struct old_output { hw_write_fn *write; void *cookie; bool json; bool color; };
__asm__(".symver old_run, hw_session_run@HEAPWALK_0.1");
enum hw_status old_run(hw_session *, int, char *const [], const struct old_output *);
static bool to_stdout(void *cookie, const char *d, size_t n)
{
	(void)cookie;
	return fwrite(d, 1, n, stdout) == n;
}
int main(int argc, char **argv)
{
	struct hw_open_opts o = HW_OPEN_OPTS_INIT;
	hw_session *s;
	o.core = argv[1];
	o.cache_dir = NULL;
	if (argc < 3 || hw_session_open(&o, &s) != HW_OK)
		return 3;
	char *cmd[] = { argv[2], NULL };
	struct old_output out = { to_stdout, NULL, argc > 3, false };
	enum hw_status st = old_run(s, 1, cmd, &out);
	hw_session_close(s);
	return st;
}
OLD
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$T/old" "$T/old.c" $(pkg-config --cflags --libs heapwalk) 2>"$T/old.err" ||
	fail "a caller of hw_session_run@HEAPWALK_0.1 does not build: $(head -n 5 "$T/old.err")"
for form in text json; do
	old_args=(summary) tool_opts=()
	if [ $form = json ]; then old_args+=(json) tool_opts=(--json); fi
	LD_LIBRARY_PATH=$prefix/lib "$T/old" "$T/leaks1/core" "${old_args[@]}" >"$T/old.$form" 2>&1 ||
		fail "hw_session_run@HEAPWALK_0.1 ($form) fails: $(head -n 3 "$T/old.$form")"
	HEAPWALK_CACHE_DIR= "$prefix/bin/heapwalk" "${tool_opts[@]}" "$T/leaks1/core" summary \
		>"$T/new.$form" 2>&1 || fail "the installed heapwalk ${tool_opts[*]} summary fails"
	cmp -s "$T/old.$form" "$T/new.$form" ||
		fail "hw_session_run@HEAPWALK_0.1 ($form) reports otherwise than the tool: $(diff "$T/old.$form" "$T/new.$form" | head -n 6)"
done
say "hw_session_run@HEAPWALK_0.1 (the old struct hw_output) reports as the tool does, text and JSON"
# Into a file first: the loader writes ldd's lines one by one, and a
# grep -q that stops at the first match could leave it a broken pipe
# (pipefail: a failure, now and then, on a loaded machine).
LD_LIBRARY_PATH=$prefix/lib ldd "$T/triage" >"$T/ldd.out" 2>&1 || true
grep -q "libheapwalk.so.0 => $prefix/lib/libheapwalk.so.0" "$T/ldd.out" ||
	fail "triage is not linked to the installed libheapwalk.so.0: $(grep heapwalk "$T/ldd.out")"
want=$(awk '$1 == "block" && $4 == "definite" { n++ } $1 == "block" && $4 == "cycle" { c++ } END { print n + c / 2 }' "$T/leaks1/truth.txt")
got=$(awk '$1 == "leaked" { print $2 }' "$T/t.out")
[ "$got" = "$want" ] || fail "triage says $got definite leaks; leaks1 recorded $want: $(cat "$T/t.out")"
nblocks=$(grep -c '^block ' "$T/leaks1/truth.txt")
used=$(awk '$1 == "used" { print $2 }' "$T/t.out")
[ "${used:-0}" -ge "$nblocks" ] || fail "triage counts $used blocks in use; leaks1 alone made $nblocks"
grep -q '^allocator ptmalloc ' "$T/t.out" || fail "triage: $(head -n 1 "$T/t.out")"
# The arenas add up to the total; size classes are ordered ranges.
[ "$(awk '$1 == "used" { print $2, $3 }' "$T/t.out")" = "$(awk '$1 == "arena" { n += $3; b += $4 } END { print n, b }' "$T/t.out")" ] ||
	fail "triage's arenas do not add up to its total: $(grep -E '^(used|arena)' "$T/t.out" | tr '\n' ' ')"
awk '$1 == "class" { if ($2 > $3) bad = 1 } END { exit bad }' "$T/t.out" ||
	fail "triage's size classes are not ranges: $(grep '^class' "$T/t.out")"

if command -v gdb >/dev/null; then
	timeout 120 gdb -nx -batch -ex "source $prefix/share/heapwalk/heapwalk.gdb" \
		-ex heap "$T/leaks1/prog" "$T/leaks1/core" >"$T/gdb.out" 2>&1
	grep -q '^allocator: *ptmalloc' "$T/gdb.out" ||
		fail "gdb with the installed plugin: no summary: $(tail -n 5 "$T/gdb.out")"
fi

# (d)
run_make uninstall PREFIX="$prefix"
left=$(find "$prefix" -type f | sed -n 1,5p)
[ -z "$left" ] || fail "make uninstall left: $left"
say "staged and installed: files in place, only heapwalk.h's $(wc -l <"$T/want") symbols exported; the installed tool, plugin and the pkg-config example ($got definite leaks, as recorded) work; uninstall removes everything"
