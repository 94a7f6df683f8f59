#!/bin/bash
# t0230's targeted damage (clobbered size, tcache next = garbage, fastbin
# cycles, broken bk links, bad sbrk_base and top) on a glibc 2.31 core,
# whose tcache and fastbin links are not safe-linked.
DAMAGE_VARIANT=glibc-2.31-amd64 exec bash "$(dirname "$0")/t0230-damage.sh"
