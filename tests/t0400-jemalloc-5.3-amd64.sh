#!/bin/bash
# heapwalk on jemalloc 5.3.0 cores: Debian bookworm's libjemalloc2
# 5.3.0-1 (amd64, 4 KiB pages), linked into programs on the host's glibc.
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
jemalloc_check jemalloc-5.3.0-amd64 5.3.0 x86_64 basic1 threads8
