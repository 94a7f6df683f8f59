#!/bin/bash
# t0230's targeted damage on a glibc 2.43 core (Debian sid), whose heap
# has no fastbins and whose tcache counts free slots: the clobbered size,
# the tcache next and key, the broken large-bin link and the bad
# sbrk_base and top must be found as on older glibcs; the fastbin and
# smallbin cases say they do not apply.
DAMAGE_VARIANT=glibc-2.43-amd64 exec bash "$(dirname "$0")/t0230-damage.sh"
