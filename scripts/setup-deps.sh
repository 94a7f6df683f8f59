#!/usr/bin/env bash
# Make a Debian 12 (bookworm) machine ready to build, test and benchmark heapwalk.
# Installs only the Debian packages that are missing; prints nothing when all are present.
set -euo pipefail

die() { printf 'setup-deps: %s\n' "$*" >&2; exit 1; }

# Packages heapwalk needs. build-essential is satisfied by gcc + make + libc6-dev as well.
# clang and libclang-rt-dev (libFuzzer and the sanitizer runtimes, only a
# Recommends of clang, so --no-install-recommends needs it named) build the
# fuzz harnesses (make fuzz; make check runs them briefly).
# libprotobuf-c-dev, protobuf-c-compiler (protoc-c generates the C code at
# build time) and zlib1g-dev write pprof profiles (prof --format=pprof);
# protobuf-compiler's protoc decodes them in the tests.
# libzstd-dev, liblzma-dev and liblz4-dev (with zlib1g-dev) read compressed
# cores; zstd, xz-utils and lz4 make them in the tests.
# groff-base (groff and its man macros), mandoc (-T lint) and man-db
# (man -l) check the manual pages in the tests (tests/t0030-docs.sh).
# libxml2-utils (xmllint) and librsvg2-bin (rsvg-convert) check that
# `map`'s SVG is well-formed and renders (tests/t0160-map-svg.sh).
# libbz2-dev: a static link against libdw (pkg-config --static names
# -lbz2 beside the libraries above; tests/t0035 links examples/triage.c so).
# libgoogle-perftools-dev: gperftools' tcmalloc (its minimal and full
# libraries and headers), which the tcmalloc corpus links (corpora/tcmalloc).
# musl-tools (musl-gcc, with musl and musl-dev): the musl programs of
# corpora/musl (tests/t0480-musl-recognised.sh).
# libmimalloc-dev (mimalloc.h and libmimalloc.so, with libmimalloc2.0:
# bookworm's mimalloc 2.0.9): the mimalloc corpus links it
# (corpora/mimalloc, tests/t0490-mimalloc-walk.sh).
# debuginfod (elfutils' server) and curl: tests/t0810-debuginfod.sh serves
# a device libc's debug file to heapwalk from a local server.
# parallel (GNU parallel), sqlite3 and python3-jsonschema: the fleet recipe
# of doc/triage.md, its queries (scripts/triage-sql.sh) and the check of
# every triage record against doc/triage.schema.json (tests/t0820).
needed=(groff-base mandoc man-db libxml2-utils librsvg2-bin
    pkg-config g++ libelf-dev libdw-dev elfutils gdb gdbserver gdb-multiarch libc6-dbg binutils file time
    clang libclang-rt-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev protobuf-compiler
    libzstd-dev liblzma-dev liblz4-dev zstd xz-utils lz4 libbz2-dev
    libgoogle-perftools-dev musl-tools libmimalloc-dev debuginfod curl
    parallel sqlite3 python3-jsonschema)

# Elsewhere nothing is installed: say what the build and the tests need,
# and go on when the libraries are there.
if ! command -v dpkg-query >/dev/null 2>&1; then
    pkg-config --exists libdw libelf libprotobuf-c zlib libzstd liblzma liblz4 2>/dev/null ||
        die "not a Debian system and libdw/libelf (elfutils), libprotobuf-c, zlib, libzstd, liblzma or liblz4 not found by pkg-config: install them (and protoc-c) with your package manager"
    echo "setup-deps: not a Debian system; installing nothing (the tests also want gdb, binutils, file, GNU time and clang with libFuzzer)" >&2
    exit 0
fi

# is_installed PKG: true when dpkg records PKG as installed (status "ii").
is_installed() {
    local st
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) || return 1
    [[ $st == ii* ]]
}

missing=()
if ! is_installed build-essential; then
    if ! { is_installed gcc && is_installed make && is_installed libc6-dev; }; then
        missing+=(build-essential)
    fi
fi
for p in "${needed[@]}"; do
    is_installed "$p" || missing+=("$p")
done

((${#missing[@]} == 0)) && exit 0

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 ||
        die "not root and sudo is not available; install as root: ${missing[*]}"
    sudo_cmd=(sudo)
fi
command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: ${missing[*]}"

echo "setup-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
    die "apt-get update failed"
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install failed for: ${missing[*]}"

# Verify: a package that apt could not provide (e.g. libc6-dbg without the main
# component, or a held package) must not pass silently.
still=()
for p in "${missing[@]}"; do
    is_installed "$p" || still+=("$p")
done
((${#still[@]} == 0)) || die "still missing after apt-get install: ${still[*]}"
