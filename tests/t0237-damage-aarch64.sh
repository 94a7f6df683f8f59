#!/bin/bash
# t0230's targeted damage on an aarch64 core (glibc 2.36 under qemu-user,
# analysed here): the same damage must give the same findings as on
# x86_64 - in particular a tcache next pointer overwritten after free,
# in a core without thread pointers (the tcache is found as its heap's
# first chunk).
DAMAGE_VARIANT=glibc-2.36-arm64 exec bash "$(dirname "$0")/t0230-damage.sh"
