#!/bin/bash
# Hostile input, round 3 (issue #55), each a one-field change or a file
# put in heapwalk's way:
#  - tcmalloc: libtcmalloc's .bss segment (the PT_LOAD right after its
#    last mapping) declaring p_memsz 1 TiB: the roots' search reads what
#    the core holds, not what a header declares (it read the terabyte
#    word by word before: a hang);
#  - the layout cache: the cache file of the core's libc replaced by a
#    FIFO: it is passed over (it blocked every command before);
#  - stderr: an error line that quotes a name holding ESC ] 0 ; ... BEL
#    and ESC [ 31 m (a terminal's title and colours) writes them as \xNN.
# Each run must end (hw's 60 s), exit as it should and trip no sanitizer.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd eu-readelf perl

# ---- tcmalloc: a .bss declared 1 TiB -------------------------------------
dir=
[ ! -f /usr/include/gperftools/tcmalloc.h ] ||
	dir=$(variant_core tcmalloc-2.16-amd64 basic1)
if [ -n "$dir" ] && [ -f "$dir/core" ]; then
	end=$(eu-readelf -n "$dir/core" | awk '/libtcmalloc/ { split($1, r, "-"); e = r[2] } END { print e }')
	[ -n "$end" ] || fail "no libtcmalloc mapping in basic1's NT_FILE"
	edit_loads "$dir/core" "$T/tcbss.core" \
		"\$memsz = 1 << 40 if sprintf('%x', \$vaddr) eq '${end#0}'" ||
		fail "basic1's core has no segment at libtcmalloc's end (0x$end)"
	hw "$T/tc.out" "$T/tc.err" "$T/tcbss.core" summary
	expect_rc 0 3 4
	say "tcmalloc: libtcmalloc's .bss declared 1 TiB: summary ends (exit $HW_RC)"
else
	say "gperftools is not installed (make deps): the tcmalloc case is left out"
fi

# ---- the layout cache: a FIFO for libc's file -----------------------------
core=$(corpus_core bins1)/core
export HEAPWALK_CACHE_DIR=$T/cache
hw "$T/first" "$T/err" "$core" summary
expect_rc 0
n=0
if [ -d "$T/cache/layouts" ]; then
	for f in "$T/cache/layouts"/*; do
		[ -f "$f" ] || continue
		rm -f "$f"
		mkfifo "$f"
		n=$((n + 1))
	done
fi
if [ "$n" -gt 0 ]; then
	hw "$T/second" "$T/err" "$core" summary
	expect_rc 0
	cmp -s <(grep -v '^target:' "$T/first") <(grep -v '^target:' "$T/second") ||
		say "(the summary differs without its cache: $(diff "$T/first" "$T/second" | head -n 4 | tr '\n' ' '))"
	say "the layout cache: $n cache file(s) made FIFOs are passed over"
else
	say "no layout was cached here (no libc debug file): the FIFO case is left out"
fi
unset HEAPWALK_CACHE_DIR

# ---- stderr: control characters of a name ----------------------------------
bad=$(printf 'x\033]0;pwned\007y\033[31mz')
hw "$T/out" "$T/err" "$T/$bad"
expect_rc 3
one_error_line "$T/err" "heapwalk NAME-WITH-ESCAPES"
grep -q "$(printf '\033')" "$T/err" && fail "an error line wrote ESC to the terminal: $(cat -v "$T/err")"
grep -q "$(printf '\007')" "$T/err" && fail "an error line wrote BEL to the terminal: $(cat -v "$T/err")"
has -F '\x1b]0;pwned\x07y\x1b[31mz' <"$T/err" || fail "the name's control characters are not \\xNN: $(cat -v "$T/err")"
say "an error line quoting a name with ESC and BEL writes them as \\xNN"
