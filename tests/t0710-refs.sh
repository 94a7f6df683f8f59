#!/bin/bash
# refs ADDR and why ADDR: corpora/ptmalloc/leaks1.c (and the same program
# on jemalloc) records for each block what holds it (the truth's HOLDER:
# a global's name, the function whose frame holds it, the __thread
# variable, the heap block and the pointer's offset in it, a word of its
# own mapping).  For every block the program recorded:
#  - `refs ADDR --json` (ADDR the block's start, and for some a byte
#    inside it) resolves to the block and lists the recorded holder among
#    its referrers: a data symbol of that name; main's / thread_main's
#    stack frame in the main / the other thread; TLS of the main / the
#    other thread; the holding block with the pointer at the recorded
#    offset; the recorded word; the recorded register of a thread other
#    than main (a block held only from a register of a thread parked in
#    a system call: the core's NT_PRSTATUS);
#  - `why ADDR --json` for a block still held: the chain ends at the
#    block, and follows the recorded holders back to the recorded root
#    (for the live chain reachable only through the heap: g_keep, then
#    its blocks); through an interior pointer for the `possible` ones;
#  - for a lost block, why says it is lost (definite or indirect, as the
#    truth has it), and for an indirect one refs names the lost block
#    that holds it;
#  - an address in no block in use is an answer (status 0) that says so;
#    text output names the resolved block.
# On the host's glibc, jemalloc 5.3 and glibc 2.36 on aarch64 (qemu-user:
# its cores have no thread pointers, so TLS reads as the memory it is in).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk

# The truth's lines as "addr size kind how holder".
truth_blocks() {
	sed -n 's/^block \(0x[0-9a-f]*\) \([0-9]*\) \([a-z]*\) \([a-z-]*\) \([^ ]*\)$/\1 \2 \3 \4 \5/p' "$1"
}

# The referrer objects of a refs / why document, one per line.
ref_objects() {
	grep -o '{"kind":"[^}]*}' "$1"
}

# holder_matches OBJECTS HOW HOLDER: one of the referrer lines in the
# file OBJECTS is the recorded holder.
holder_matches() {
	local objs=$1 how=$2 holder=$3
	case $holder in
	main) grep '"kind":"stack"' "$objs" | grep '"thread":1,' | has '"function":"main"' ;;
	thread_main) grep '"kind":"stack"' "$objs" | grep -v '"thread":1,' | has '"function":"thread_main"' ;;
	tls_keep)
		if [ -n "$no_tp" ]; then
			# qemu-user cores have no thread pointers: the TLS
			# cannot be told from the memory around it.
			grep -q '"kind":"\(stack\|memory\|data\)"' "$objs"
		elif [ "$how" = tls ]; then
			grep '"kind":"tls"' "$objs" | has '"thread":1,'
		else
			grep '"kind":"tls"' "$objs" | has -v '"thread":1,'
		fi
		;;
	memory:*) grep -q "\"at\":\"${holder#memory:}\"" "$objs" ;;
	reg:*)
		grep '"kind":"register"' "$objs" | grep -v '"thread":1,' |
			grep -q "\"register\":\"${holder#reg:}\""
		;;
	0x*)
		grep '"kind":"block"' "$objs" | grep "\"block\":\"${holder%+*}\"" |
			has "\"offset\":${holder#*+},"
		;;
	*) grep '"kind":"data"' "$objs" | has "\"symbol\":\"$holder\"" ;;
	esac
}

check_variant() {
	local variant=$1 dir opt=() out=$T/$1
	mkdir -p "$out"
	if [ "$variant" = host ]; then
		dir=$(corpus_core leaks1)
	else
		dir=$(variant_core "$variant" leaks1)
	fi
	no_tp=
	case $variant in
	*-arm64) opt=(--sysroot "$(readlink -f "$dir/sysroot")") no_tp=1 ;;
	esac
	corpus_copy "$dir" "$out"
	[ "$(truth_blocks "$out/truth.txt" | wc -l)" -gt 20 ] ||
		fail "$variant: leaks1's truth records no holders"
	local addr kind how holder checked=0 chains=0
	declare -A holder_of=()
	while read -r addr _ kind how holder; do
		holder_of[$addr]=$holder
	done < <(truth_blocks "$out/truth.txt")
	while read -r addr _ kind how holder; do
		[ "$kind" = freed ] && continue
		local q=$addr
		# An interior address resolves to the same block.
		case $how in interior-*) q=$(printf '0x%x' $((addr + 8))) ;; esac
		hw "$out/refs.json" "$out/refs.err" "${opt[@]}" --json "$out/core" refs "$q"
		expect_rc 0
		grep -q "\"block\":{\"addr\":\"$addr\"" "$out/refs.json" ||
			fail "$variant: refs $q does not resolve to the block at $addr: $(cat "$out/refs.json")"
		ref_objects "$out/refs.json" >"$out/refs.objs" || true
		if [ "$holder" != - ]; then
			holder_matches "$out/refs.objs" "$how" "$holder" ||
				{ cat "$out/refs.objs"; fail "$variant: refs $q (a $kind block held by $how) does not name its holder $holder"; }
		fi
		hw "$out/why.json" "$out/why.err" "${opt[@]}" --json "$out/core" why "$addr"
		expect_rc 0
		case $kind in
		definite | indirect | cycle)
			grep -q '"lost":true' "$out/why.json" ||
				fail "$variant: why $addr does not say a $kind block is lost: $(cat "$out/why.json")"
			case $kind in
			definite | indirect)
				grep -q "\"kind\":\"$kind\"}" "$out/why.json" ||
					fail "$variant: why $addr does not call it $kind: $(cat "$out/why.json")"
				;;
			esac
			;;
		reachable | possible)
			grep -q '"lost":false' "$out/why.json" ||
				fail "$variant: why $addr says a $kind block is lost"
			ref_objects "$out/why.json" >"$out/why.objs" || true
			[ -s "$out/why.objs" ] || fail "$variant: why $addr gives no chain"
			tail -n1 "$out/why.objs" | has "\"to\":\"$addr\"" ||
				fail "$variant: why $addr: the chain does not end at the block"
			head -n1 "$out/why.objs" | has '"kind":"block"' &&
				fail "$variant: why $addr: the chain does not start at a root"
			if [ "$kind" = possible ]; then
				grep -q '"interior":true' "$out/why.json" ||
					fail "$variant: why $addr: a possible block's chain does not say it goes through an interior pointer"
			fi
			# Follow the recorded holders back to the root: the chain
			# is those steps, in that order.
			local want=() h=$holder n=0
			while :; do
				want=("$h" "${want[@]}")
				case $h in 0x*) h=${holder_of[${h%+*}]:-?} ;; *) break ;; esac
				n=$((n + 1))
				[ $n -lt 10 ] || fail "$variant: the truth's holders of $addr loop"
			done
			[ "$(wc -l <"$out/why.objs")" = "${#want[@]}" ] ||
				{ cat "$out/why.objs"; fail "$variant: why $addr: ${#want[@]} steps expected (${want[*]})"; }
			local i=0 step steps=()
			mapfile -t steps <"$out/why.objs"
			for step in "${steps[@]}"; do
				echo "$step" >"$out/step"
				# A register may hold a stale copy of the root's
				# pointer (aarch64 under qemu does): the chain may
				# start there as rightly.
				holder_matches "$out/step" "$how" "${want[$i]}" ||
					{ [ $i = 0 ] && [ "${want[0]#reg:}" = "${want[0]}" ] &&
						grep -q '"kind":"register"' "$out/step"; } ||
					{ printf '%s\n' "${steps[@]}"; fail "$variant: why $addr: step $((i + 1)) is not ${want[$i]}"; }
				i=$((i + 1))
			done
			[ ${#want[@]} -gt 1 ] && chains=$((chains + 1))
			;;
		esac
		checked=$((checked + 1))
	done < <(truth_blocks "$out/truth.txt")
	[ "$chains" -ge 3 ] || fail "$variant: only $chains chains through the heap checked"
	say "$variant: $checked blocks: refs names each recorded holder, why each chain ($chains through the heap)"

	# Text: the resolved block, and the holder named.
	read -r addr _ kind how holder < <(truth_blocks "$out/truth.txt" | grep ' global g_keep$')
	hw "$out/text" "$out/text.err" "${opt[@]}" "$out/core" refs "$(printf '%x' $((addr + 4)))"
	expect_rc 0
	if ! grep -q "is 4 bytes into the block in use at $addr" "$out/text" ||
		! grep -q "g_keep+0x0" "$out/text"; then
		cat "$out/text"
		fail "$variant: refs text does not name the block and g_keep"
	fi
	# The register-held block: its text names the thread's register.
	read -r addr _ kind how holder < <(truth_blocks "$out/truth.txt" | grep ' register reg:') || true
	[ -n "$addr" ] || fail "$variant: leaks1's truth has no register-held block"
	hw "$out/regtext" "$out/regtext.err" "${opt[@]}" "$out/core" refs "$addr"
	expect_rc 0
	grep -Eq "thread [1-9][0-9]* .*register ${holder#reg:}\b" "$out/regtext" ||
		{ cat "$out/regtext"; fail "$variant: refs text does not name register ${holder#reg:} of a thread"; }
	hw "$out/none" "$out/none.err" "${opt[@]}" "$out/core" refs 0x10
	expect_rc 0
	grep -q "^0x10 is in no block in use" "$out/none" ||
		fail "$variant: refs of an address in no block: $(cat "$out/none" "$out/none.err")"
}

for v in host jemalloc-5.3.0-amd64 glibc-2.36-arm64; do
	check_variant "$v"
done
