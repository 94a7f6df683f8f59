#!/bin/bash
# heapwalk on jemalloc 5.3.0 cores: Debian bookworm's arm64 libjemalloc2
# 5.3.0-1 (64 KiB pages, no prof) and libc6, programs cross-built -no-pie
# and run under qemu-aarch64 (cores without NT_FILE, read with --sysroot).
# basic1 and threads8 (corpora/jemalloc) match their own truth: chunks,
# bins, sizes and summary (tests/tools/jetruthcmp), with --no-debuginfo
# (Debian's libjemalloc.so.2 is stripped).
# shellcheck source=tests/jemalloc-lib.sh
if [ -f "$(dirname "$0")/jemalloc-lib.sh" ]; then
	. "$(dirname "$0")/jemalloc-lib.sh"
else
	. "$(dirname "$0")/../jemalloc-lib.sh"
fi
need_heapwalk
jemalloc_check jemalloc-5.3.0-arm64 5.3.0 aarch64 basic1 threads8
