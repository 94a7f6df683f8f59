#!/bin/bash
# Random damage to the allocator's own memory: 40 seeded, reproducible
# copies of the bins1 core, each with 1-64 bytes changed inside the main
# heap (the part the program's chunks span, plus a page) and libc's
# writable data (main_arena, mp_, tcache pointers' neighbours).  summary,
# chunks, bins and check must never crash, trip a sanitizer or hang (30 s),
# must exit 0, 1 (check only), 3 or 4, and an exit of 3 or 4 comes with
# exactly one "heapwalk: " stderr line.
#
#   FUZZ_SEED=N     first seed (default 1); iteration i uses seed N + i
#   FUZZ_ITERS=N    iterations (default 40)
# A failure names its seed: tools/corefuzz CORE SEED RANGES... redoes it.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd timeout
corefuzz=$(tool corefuzz)
coreloads=$(tool coreloads)
dir=$(corpus_core bins1)

corpus_copy "$dir" "$T"
"$coreloads" "$T/core" >"$T/loads" || fail "coreloads cannot read bins1's core"

# The main heap: from the PT_LOAD holding the main thread's lowest live
# or free heap chunk (the truth's) up to a page past its highest one.
addrs=$(awk '$1 == "alloc" && $6 == "0" && $5 != "mmapped" &&
	$5 != "merged" { print $2 }' "$T/truth.txt")
lo='' hi=''
for a in $addrs; do
	if [ -z "$lo" ] || ((a < lo)); then lo=$a; fi
	if [ -z "$hi" ] || ((a > hi)); then hi=$a; fi
done
[ -n "$lo" ] || fail "no main-arena heap allocations in bins1's truth"
heap=
while read -r va _ _ fsz _ _; do
	if ((va <= lo && lo < va + fsz)); then
		end=$((hi + 4096 < va + fsz ? hi + 4096 : va + fsz))
		heap=$(printf '0x%x:0x%x' "$va" "$end")
	fi
done <"$T/loads"
[ -n "$heap" ] || fail "no PT_LOAD with file data holds heap address $lo"

# libc's writable data: the rw PT_LOADs NT_FILE says map libc.
ranges=("$heap")
while read -r va _ _ fsz flags name; do
	case ${name##*/} in
	libc.so.6 | libc-2.*.so) ;;
	*) continue ;;
	esac
	if [ "$flags" != rw- ] || ((fsz == 0)); then continue; fi
	ranges+=("$(printf '0x%x:0x%x' "$va" $((va + fsz)))")
done <"$T/loads"
if [ ${#ranges[@]} = 1 ]; then
	say "note: no NT_FILE mapping of libc's data found; damaging the heap only"
fi
say "ranges: ${ranges[*]}"

seed0=${FUZZ_SEED:-1}
iters=${FUZZ_ITERS:-40}
start=$SECONDS
declare -A seen_rc=()
for ((i = 0; i < iters; i++)); do
	seed=$((seed0 + i))
	core=$T/fuzz.core
	cp "$T/core" "$core"
	"$corefuzz" "$core" "$seed" "${ranges[@]}" >"$T/patches" ||
		fail "corefuzz seed $seed failed"
	if cmp -s "$T/core" "$core"; then
		continue # every change happened to write the old bytes back
	fi
	for cmd in summary chunks bins check; do
		rc=0
		timeout -k 5 30 "$HEAPWALK" --json "$core" $cmd >"$T/out" 2>"$T/err" || rc=$?
		bad=
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			bad="hung (killed after 30 s)"
		elif [ $rc -ge 128 ] || [ $rc = 98 ] || [ $rc = 99 ] ||
			grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$T/err"; then
			bad="crashed or tripped a sanitizer (exit $rc)"
		else
			case $rc:$cmd in
			0:* | 1:check | 3:* | 4:*) ;;
			*) bad="exited $rc" ;;
			esac
			if [ -z "$bad" ] && { [ $rc = 3 ] || [ $rc = 4 ]; }; then
				n=$(wc -l <"$T/err")
				if [ "$n" != 1 ] || ! grep -q '^heapwalk: ' "$T/err"; then
					bad="exited $rc with $n stderr lines, not one 'heapwalk: ' line"
				fi
			fi
		fi
		seen_rc[$cmd:$rc]=$((${seen_rc[$cmd:$rc]:-0} + 1))
		if [ -n "$bad" ]; then
			echo "--- changes made by corefuzz seed $seed:"
			cat "$T/patches"
			echo "--- stderr:"
			tail -n 30 "$T/err"
			mkdir -p "$TOP/build/tests"
			cp "$core" "$TOP/build/tests/t0220-seed$seed.core"
			fail "seed $seed: heapwalk --json CORE $cmd $bad (core kept as build/tests/t0220-seed$seed.core)"
		fi
	done
done
summary=
for k in $(printf '%s\n' "${!seen_rc[@]}" | sort); do
	summary+=" $k=${seen_rc[$k]}"
done
say "$iters iterations in $((SECONDS - start)) s; command:exit counts:$summary"
