#!/bin/bash
# heapwalk on glibc 2.36 aarch64 cores with 64 KiB pages (Debian bookworm's
# arm64 libc6 under qemu-aarch64 -p 65536, so AT_PAGESZ is 65536 and
# mmapped chunks sit on 64 KiB boundaries, as on a 64 KiB page kernel):
# bins1 and threads8 match their truth with libc6-dbg, with --no-debuginfo
# and without libc's file, with identical chunk lists.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.36-arm64-64k 2.36 aarch64 bins1 threads8
