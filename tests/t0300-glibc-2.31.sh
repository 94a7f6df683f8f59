#!/bin/bash
# heapwalk on glibc 2.31 x86_64 cores (Debian bullseye's libc6, from the
# host's mirror; programs built against its libc6-dev, run with its ld.so):
# bins1 and threads8 match their truth with bullseye's libc6-dbg and with
# --no-debuginfo, and both chunk lists are identical.  2.31 has no
# safe-linking and no mallinfo2 (the truth has mallinfo()'s int values).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.31-amd64 2.31 x86_64 bins1 threads8
