#!/bin/bash
# t0345-two-libcs: the host kernel's core of qemu-aarch64 running bins1
# (make-core.sh's glibc-2.36-arm64-hostcore) holds two glibc heaps:
# qemu's own (x86_64) and the guest's (aarch64, mapped 1:1).  summary
# lists both; the guest's is walked by default and matches the truth;
# qemu's, picked with --allocator 2, walks clean; a wrong index is a usage
# error naming the choices.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)
dir=$(variant_core glibc-2.36-arm64-hostcore bins1)
core=$dir/core

hw "$T/summary.json" "$T/summary.err" --json "$core" summary
expect_rc 0
inst=$(grep -o '"instances":\[[^]]*\]' "$T/summary.json")
n=$(grep -o '"allocator":"ptmalloc"' <<<"$inst" | wc -l)
[ "$n" = 2 ] || fail "summary lists $n ptmalloc instances, not 2: $inst"
[[ $inst == *'"arch":"aarch64"'* && $inst == *'"arch":"x86_64"'* ]] ||
	fail "the instances are not one aarch64 and one x86_64: $inst"
[ "$(json_str "$T/summary.json" arch)" = aarch64 ] ||
	fail "the guest's (aarch64) heap is not the one walked by default"
# Instance numbers as listed; which one is qemu's?
guest=$(grep -o '{"index":[0-9]*,[^}]*"arch":"aarch64"' <<<"$inst" | json_num /dev/stdin index)
host=$(grep -o '{"index":[0-9]*,[^}]*"arch":"x86_64"' <<<"$inst" | json_num /dev/stdin index)
[ -n "$guest" ] && [ -n "$host" ] || fail "no index for an instance: $inst"
grep -q 'emulated guest' "$T/summary.json" ||
	fail "summary does not say the walked heap is an emulated guest's"

# The guest's heap against its truth.  The core's threads are qemu's
# (2: its main and RCU threads); the guest's own are not in a host core,
# and heapwalk says so (above), so that one number is not compared.
hw "$T/chunks.jsonl" "$T/chunks.err" --json --allocator "$guest" "$core" chunks
expect_rc 0
want_threads=$(grep -c '^thread ' "$dir/truth.txt")
sed "s/\"threads\":[0-9]*/\"threads\":$want_threads/" "$T/summary.json" >"$T/summary.guest.json"
"$truthcmp" "$dir/truth.txt" "$T/chunks.jsonl" "$T/summary.guest.json" ||
	fail "the guest's heap disagrees with the truth (core in $dir)"

# qemu's own heap: walks, checks clean, has a sane amount in use.
hw "$T/host.json" "$T/host.err" --json --allocator "$host" "$core" summary
expect_rc 0
[ "$(json_str "$T/host.json" arch)" = x86_64 ] || fail "--allocator $host does not walk the x86_64 heap"
used=$(grep -o '"used":{"count":[0-9]*,"bytes":[0-9]*' "$T/host.json" | sed 's/.*"bytes"://')
[ -n "$used" ] && [ "$used" -gt 65536 ] && [ "$used" -lt $((256 << 20)) ] ||
	fail "qemu's heap has an insane amount in use: '$used' bytes"
hw "$T/check.out" "$T/check.err" --allocator "$host" "$core" check
expect_rc 0
# --allocator ptmalloc: the first instance listed.
first_arch=$(grep -o '{"index":1,[^}]*' <<<"$inst" | json_str /dev/stdin arch)
hw "$T/first.json" "$T/first.err" --json --allocator ptmalloc "$core" summary
expect_rc 0
[ "$(json_str "$T/first.json" arch)" = "$first_arch" ] ||
	fail "--allocator ptmalloc does not walk instance 1 ($first_arch)"

# A wrong index: exit 2, one line naming the valid ones.
hw "$T/bad.out" "$T/bad.err" --allocator 9 "$core" summary
expect_rc 2
one_error_line "$T/bad.err" "--allocator 9"
grep -q "1 (ptmalloc" "$T/bad.err" && grep -q "2 (ptmalloc" "$T/bad.err" ||
	fail "--allocator 9 does not name the valid instances: $(cat "$T/bad.err")"
say "guest (instance $guest, aarch64) agrees with the truth; qemu's heap (instance $host, x86_64): $used bytes in use, check clean; --allocator 9 is a usage error"
