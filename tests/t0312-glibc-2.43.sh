#!/bin/bash
# heapwalk on glibc 2.43 x86_64 cores (Debian sid's libc6, from the host's
# mirror; programs built against its libc6-dev, run with its ld.so):
# bins1 and threads8 match their truth with sid's libc6-dbg, with
# --no-debuginfo and without libc's file, and the chunk lists are
# identical.  2.43 has no fastbins, and its tcache counts free slots
# (num_slots) in 76 bins, the last 12 for large chunks.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.43-amd64 2.43 x86_64 bins1 threads8
