#!/bin/bash
# leaks: corpora/ptmalloc/leaks1.c (and the same program on jemalloc
# and on gperftools tcmalloc, whose library up to 2.13 loses one block
# of its own: the truth's "libleak", which must be definite; and on
# tcmalloc under its heap profiler, leaksprof1)
# records the reachability of each of its blocks by construction: held
# from a global, main's stack, another thread's stack, each thread's TLS,
# the program's own mapping, the heap; through interior pointers only;
# dropped; held only by lost blocks; a lost cycle; pointed to only from
# freed memory.  On each glibc and jemalloc the corpus has (x86_64 and
# aarch64 under qemu-user):
#  - leakscan checks the truth itself, without heapwalk (ptmalloc: no
#    word of the core points into a lost block except from lost or freed
#    memory);
#  - `leaks --reachable --json` gives every block its recorded kind, and
#    calls no other block definite or indirect (leakcmp);
#  - `leaks --json` lists no reachable block; text totals agree with it;
#    on jemalloc and tcmalloc it walks every block once (the map's
#    fill) and around each lost one, nothing more (--stats);
#  - --no-debuginfo gives the same answer (but for how allocation sites
#    are named), and so do --threads 1 and 4
#    (the marking runs in the walk's threads);
#  - summary --leaks counts what leaks lists; summary alone says null;
#  - the block held only from a callee-saved register of a thread parked
#    in a system call (the truth's reg:NAME; leakscan: no word of memory
#    points to it) is reachable, `refs` names that thread's register and
#    `why` is the one step from it.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
leakcmp=$(tool leakcmp)
leakscan=$(tool leakscan)

check_variant() {
	local variant=$1 case=${2:-leaks1} dir opt=() out=$T/$1-${2:-leaks1}
	mkdir -p "$out"
	if [ "$variant" = host ]; then
		dir=$(corpus_core leaks1)
	else
		dir=$(variant_core "$variant" "$case")
	fi
	case $variant in
	*-arm64) opt=(--sysroot "$(readlink -f "$dir/sysroot")") ;;
	esac
	corpus_copy "$dir" "$out"
	# leakscan's rule (no word outside lost or freed memory points into
	# a lost block) does not hold where a heap profiler keeps every
	# block's address (leaksprof1), nor is it written for jemalloc.
	case $variant-$case in
	jemalloc-* | *-leaksprof1) ;;
	*) "$leakscan" "$out/core" "$out/truth.txt" >"$out/scan" ||
		{ cat "$out/scan"; fail "$variant: the leaks1 core contradicts its own truth"; } ;;
	esac
	hw "$out/all.jsonl" "$out/all.err" "${opt[@]}" --json "$out/core" leaks --reachable
	expect_rc 0
	"$leakcmp" "$out/truth.txt" "$out/all.jsonl" >"$out/cmp" ||
		{ cat "$out/cmp"; fail "$variant: leaks disagrees with leaks1's truth (core in $dir)"; }
	say "$variant $case: $(tail -n1 "$out/cmp")"
	local raddr rholder
	read -r raddr rholder < <(sed -n 's/^block \(0x[0-9a-f]*\) [0-9]* reachable register reg:\([a-z0-9]*\)$/\1 \2/p' "$out/truth.txt") || true
	[ -n "$raddr" ] || fail "$variant: leaks1's truth has no register-held block"
	hw "$out/reg.json" "$out/reg.err" "${opt[@]}" --json "$out/core" refs "$raddr"
	expect_rc 0
	grep -o '{"kind":"[^}]*}' "$out/reg.json" | grep '"kind":"register"' |
		grep -v '"thread":1,' | has "\"register\":\"$rholder\"" ||
		fail "$variant: refs $raddr does not name register $rholder of the parked thread: $(cat "$out/reg.json")"
	hw "$out/regwhy.json" "$out/regwhy.err" "${opt[@]}" --json "$out/core" why "$raddr"
	expect_rc 0
	# One step from a root: the register, unless another root holds the
	# address too (jemalloc's rtree cache in the TLS keeps leaf keys,
	# which equal a block's address when it begins a leaf's range: then
	# why may name that word; refs above has shown the register).
	local chain
	chain=$(grep -o '"chain":\[[^]]*\]' "$out/regwhy.json")
	case $chain in
	*"},{"*) fail "$variant: why $raddr is not one step from a root: $(cat "$out/regwhy.json")" ;;
	*"\"to\":\"$raddr\""*) ;;
	*) fail "$variant: why $raddr does not end at it: $(cat "$out/regwhy.json")" ;;
	esac
	grep -q "\"chain\":\[{\"kind\":\"register\"[^]]*\"register\":\"$rholder\",\"to\":\"$raddr\"[^]]*}\]" "$out/regwhy.json" ||
		say "$variant: why $raddr names another root than register $rholder: $(echo "$chain" | grep -o '"where":"[^"]*"')"
	hw "$out/lost.jsonl" "$out/lost.err" "${opt[@]}" --json "$out/core" leaks
	expect_rc 0
	if grep -q '"kind":"reachable"' "$out/lost.jsonl"; then
		fail "$variant: leaks without --reachable lists reachable blocks"
	fi
	grep -v '"kind":"reachable"' "$out/all.jsonl" >"$out/lost.want"
	cmp -s "$out/lost.want" "$out/lost.jsonl" ||
		fail "$variant: leaks lists other blocks than leaks --reachable's lost ones"
	# jemalloc and tcmalloc walk in address order: their few lost blocks
	# are listed from the map by a walk around each (and the cmp above
	# says the list is the full walk's), not by a second walk of all.
	case $variant in
	jemalloc-* | tcmalloc-*)
		local nlost
		nlost=$(grep -c '"kind":"' "$out/lost.jsonl" || true)
		hw "$out/few.jsonl" "$out/few.err" "${opt[@]}" --stats --json "$out/core" leaks
		expect_rc 0
		grep -q "stats: .* walks 1, around $nlost," "$out/few.err" ||
			fail "$variant: leaks did not list its $nlost lost blocks by a walk around each: $(cat "$out/few.err")"
		;;
	esac
	# Marking in several threads (the default uses the machine's cores)
	# and in one must agree block for block.
	local nt
	for nt in 1 4; do
		hw "$out/t$nt.jsonl" "$out/t$nt.err" "${opt[@]}" --threads $nt --json "$out/core" leaks --reachable
		expect_rc 0
		cmp -s "$out/all.jsonl" "$out/t$nt.jsonl" ||
			fail "$variant: leaks with --threads $nt differs"
	done
	hw "$out/nodebug.jsonl" "$out/nodebug.err" "${opt[@]}" --no-debuginfo --json "$out/core" leaks --reachable
	expect_rc 0
	# The blocks' allocation sites (leaksprof1: every block's) are named
	# from debug info where there is some: all but them must be equal.
	sed 's/,"site":"[^"]*"//' "$out/all.jsonl" >"$out/all.nosite"
	sed 's/,"site":"[^"]*"//' "$out/nodebug.jsonl" >"$out/nodebug.nosite"
	cmp -s "$out/all.nosite" "$out/nodebug.nosite" ||
		fail "$variant: leaks --no-debuginfo differs"
	hw "$out/sum.json" "$out/sum.err" "${opt[@]}" --json "$out/core" summary --leaks
	expect_rc 0
	local want got
	want=$(grep -cE '"kind":"(definite|indirect)"' "$out/lost.jsonl" || true)
	got=$(grep -o '"leaks":{"count":[0-9]*' "$out/sum.json" | grep -o '[0-9]*$')
	[ "$got" = "$want" ] ||
		fail "$variant: summary --leaks counts ${got:-nothing}, leaks lists $want"
	hw "$out/sum0.json" "$out/sum0.err" "${opt[@]}" --json "$out/core" summary
	expect_rc 0
	grep -q '"leaks":null' "$out/sum0.json" ||
		fail "$variant: summary without --leaks does not say \"leaks\":null"
	hw "$out/text" "$out/text.err" "${opt[@]}" "$out/core" leaks
	expect_rc 0
	local kind label n
	for kind in definite indirect possible; do
		case $kind in
		definite) label="definitely lost:" ;;
		indirect) label="indirectly lost:" ;;
		possible) label="possibly lost:" ;;
		esac
		n=$(grep -c "\"kind\":\"$kind\"" "$out/lost.jsonl" || true)
		grep -qE "^$label +$n (chunk|block)s?( |$)" "$out/text" ||
			{ cat "$out/text"; fail "$variant: text says other than $n $kind"; }
	done
}

for v in host glibc-2.31-amd64 glibc-2.41-amd64 glibc-2.36-arm64 \
	jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64 jemalloc-5.3.0-arm64 \
	tcmalloc-minimal-amd64 tcmalloc-full-amd64 tcmalloc-2.10-arm64 \
	tcmalloc-2.16-amd64 tcmalloc-2.8-amd64; do
	check_variant "$v"
done
# Under gperftools' heap profiler, whose table points at every block from
# memory of its own (the allocator's `internal` ranges: not roots).
check_variant tcmalloc-full-amd64 leaksprof1

# A core cut short: what could not be scanned is said (a leak found then
# may be a false one), roots included.
dir=$(corpus_core leaks1)
size=$(stat -c %s "$dir/core")
head -c $((size * 6 / 10)) "$dir/core" >"$T/cut.core"
hw "$T/cut.out" "$T/cut.err" "$T/cut.core" leaks
expect_rc 0 4
if [ "$HW_RC" = 0 ]; then
	grep -q 'of memory to scan is not in the target' "$T/cut.out" ||
		{ cat "$T/cut.out"; fail "leaks on a cut core does not say what it could not scan"; }
fi
say "a cut core: leaks says what it could not scan"
