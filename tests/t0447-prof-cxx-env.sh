#!/bin/bash
# heapwalk --pid PID prof on a C++ program that says nothing about
# profiling itself: corpora/jemalloc/profcxx.cc runs with Debian's amd64
# libjemalloc2 5.3.0 preloaded and MALLOC_CONF=prof:true,lg_prof_sample:0
# in its environment (the way people profile a program they did not
# write).  Checked against its truth (the string objects make_strings(int)
# allocated through operator new, their usable sizes):
#  (a) the sampling period is read from the environment's MALLOC_CONF
#      (the program has no malloc_conf, 5.3's unbiasing table cannot tell
#      periods below 4, and Debian's library has no symbols): the header
#      says lg_prof_sample 0 from malloc_conf;
#  (b) operator new is no frame of any stack, in --collapsed and in the
#      pprof file (not a function there): like jemalloc's own frames, it
#      is the allocator's entry, not the caller; the stacks ending in
#      make_strings(int) sum to the truth's bytes, exactly (every
#      allocation sampled);
#  (c) the process comes out untraced and says OK.
# Network on the first run (Debian's packages, via t0440's corpus build);
# skips when it cannot.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/prof-lib.sh
. "$(dirname "$0")/prof-lib.sh"
need_live
need_cmd g++ awk gzip protoc

dir=$(live_prog jemalloc-5.3.0-amd64 prof1)
je=$(readlink -f "$dir/sysroot")/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -f "$je" ] || fail "no libjemalloc.so.2 in $dir/sysroot"
g++ -O1 -g -o "$T/profcxx" "$TOP/corpora/jemalloc/profcxx.cc" 2>"$T/cc.err" ||
	fail "profcxx does not build: $(head -n 3 "$T/cc.err")"

live_start cxx env LD_PRELOAD="$je" MALLOC_CONF=prof:true,lg_prof_sample:0 \
	"$T/profcxx" "$T/truth.txt"
pid=${LIVE_PID[cxx]}
read -r objs bytes < <(awk '$1 == "site" && $2 == "make_strings(int)" { print $3, $4 }' "$T/truth.txt")
[ "${objs:-0}" = 100 ] || fail "profcxx's truth: $(cat "$T/truth.txt")"

# (a)
hw_live cxx "$T/a.out" "$T/a.err" prof
expect_rc 0
grep -q '^sampling: .*(lg_prof_sample 0, from malloc_conf)' "$T/a.out" ||
	fail "the period is not MALLOC_CONF's: $(sed -n 2p "$T/a.out")"

# (b)
hw_live cxx "$T/b.out" "$T/b.err" prof --collapsed
expect_rc 0
if grep -n 'operator new' "$T/b.out" >"$T/new.txt"; then
	fail "operator new is a frame in --collapsed: $(head -c 300 "$T/new.txt")"
fi
got=$(collapsed_sums "$T/b.out" | awk '$1 == "make_strings(int)" { print $2 }')
[ "${got:-0}" = "$bytes" ] ||
	fail "the stacks ending in make_strings(int) sum to ${got:-nothing} bytes; the truth says $bytes"
hw_live cxx "$T/c.out" "$T/c.err" prof --format=pprof -o "$T/p.pb.gz"
expect_rc 0
gzip -dc "$T/p.pb.gz" | protoc --proto_path="$TOP/libheapwalk/commands/prof" \
	--decode=perftools.profiles.Profile pprof.proto >"$T/p.txt" 2>"$T/protoc.err" ||
	fail "protoc cannot decode the pprof file: $(head -n 3 "$T/protoc.err")"
grep -q '^string_table: "make_strings(int)"' "$T/p.txt" ||
	fail "the pprof file does not name make_strings(int)"
if grep -q '^string_table: "operator new' "$T/p.txt"; then
	fail "the pprof file has an operator new function"
fi

# (c)
live_untraced cxx "heapwalk --pid $pid prof"
live_finish cxx
say "C++ under preloaded jemalloc: period from MALLOC_CONF; make_strings(int) holds $got bytes in $objs objects, as the program counted; no operator new frame in collapsed or pprof; the process says OK"
