#!/bin/bash
# heapwalk on glibc 2.41 x86_64 cores (Debian trixie's libc6, from the
# host's mirror; programs built against its libc6-dev, run with its ld.so):
# bins1 and threads8 match their truth with trixie's libc6-dbg and with
# --no-debuginfo, and both chunk lists are identical.  In 2.41 free()
# puts small chunks straight into their small bin.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.41-amd64 2.41 x86_64 bins1 threads8
