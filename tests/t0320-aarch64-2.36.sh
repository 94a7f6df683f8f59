#!/bin/bash
# heapwalk on glibc 2.36 aarch64 cores (Debian bookworm's arm64 libc6, from
# the host's mirror; programs cross-built -no-pie against its libc6-dev and
# run under qemu-aarch64, whose cores have no NT_FILE and no NT_ARM_TLS),
# read with --sysroot: bins1 and threads8 match their truth with the arm64
# libc6-dbg and with --no-debuginfo, and both chunk lists are identical.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.36-arm64 2.36 aarch64 bins1 threads8
