#!/bin/bash
# The report model and its renderers on their own (tests/helper/emit-test.c,
# built here with ASan and UBSan from libheapwalk/emit/, the emitter):
# every record kind in text and JSON against hand-written output, the
# renderers' fast paths and their limits, number formatting against
# printf, output larger than the emitter's buffer, a failing sink, packed
# rows against the rows they unpack to.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_cmd cc

r=$TOP/libheapwalk/emit
# Twice: as the tool is built, and with the portable number formatting
# that machines without SSE2 use (format.h: FMT_NO_SIMD).
for simd in "" -DFMT_NO_SIMD; do
	# shellcheck disable=SC2086 # (an empty $simd is no argument)
	cc -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Wshadow \
		-fsanitize=address,undefined -fno-sanitize-recover=all $simd \
		-I"$TOP/libheapwalk" "$r"/*.c "$TOP/tests/helper/emit-test.c" \
		-o "$T/emit-test" ||
		fail "cannot build tests/helper/emit-test.c ${simd:-as built}"
	"$T/emit-test" >"$T/out" 2>"$T/err" || {
		head -n 60 "$T/err" >&2
		fail "emit-test failed ${simd:-as built}"
	}
	say "${simd:-as built}: $(cat "$T/out")"
done
