#!/bin/sh
# tests/fuzz/have-libfuzzer.sh - exit 0 when $FUZZ_CC (default clang)
# links a libFuzzer harness with ASan and UBSan, else say why on stderr
# and exit 1.  The Makefile (check, fuzz) and t0222 ask it.
cc=${FUZZ_CC:-clang}
command -v "$cc" >/dev/null 2>&1 || {
	echo "$cc is not installed (Debian: apt-get install clang libclang-rt-dev)" >&2
	exit 1
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/have-libfuzzer.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$dir/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined -o "$dir/probe" "$dir/probe.c" \
	>"$dir/log" 2>&1 || {
	echo "$cc cannot link a libFuzzer harness (Debian: apt-get install libclang-rt-dev): $(head -n 1 "$dir/log")" >&2
	exit 1
}
