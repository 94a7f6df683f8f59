#!/bin/bash
# diff BASE: corpora/ptmalloc/grow1.c writes a core of its heap as it was
# (a fork()ed child's, in base/), grows by a known amount in two arenas
# (blocks allocated, some of the base's freed, three mmapped) and records
# that growth per usable size and arena before its own core.  On the two
# cores of the host's glibc, glibc 2.31 and jemalloc 5.3 and 5.2 (the
# same program; a variant this machine cannot build is skipped; arm64
# under qemu-user is not here: make-core.sh runs it in a scratch directory
# it deletes, base/ and the child's core with it):
#  - `diff --json` gives every size class the growth in use (count and
#    bytes) the program recorded for the sizes in it, and every arena
#    (main by index 0, the thread arena by its address) its own; classes
#    and arenas with no recorded growth are not listed as grown; the
#    totals are the sums;
#  - a saved `sizes --json` (and `sizes --exact --json`) of the base, with
#    its `sizes --by=type --json`, gives the same answer as the base core;
#  - a core diffed against itself shows no change; --no-debuginfo gives
#    the same answer; text says the same totals;
#  - a base that is not a sizes document is refused with one error line,
#    and so is one sizes document given twice (70 arenas: more rows than
#    the first array held).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk

# rows FILE KEY: the objects of the JSON array KEY of FILE, one a line.
rows() {
	sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p" "$1" | grep -o '{[^{}]*}' || true
}

# field: the number (or quoted string, unquoted; null as "null") of KEY
# in the one-line object on stdin.
field() {
	sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"
}

# check_growth TRUTH DIFF_JSON WHAT: the diff is the recorded growth.
check_growth() {
	local truth=$1 diff=$2 what=$3 line addr
	: >"$T/classes" && : >"$T/arenas"
	while read -r line; do
		printf '%s %s %s %s\n' "$(field min <<<"$line")" "$(field size <<<"$line")" \
			"$(field used_delta <<<"$line")" "$(field used_bytes_delta <<<"$line")"
	done < <(rows "$diff" classes) >"$T/classes"
	while read -r line; do
		addr=$(field addr <<<"$line")
		printf '%s %s %s %s\n' "$(field arena <<<"$line")" "${addr:--}" \
			"$(field used_delta <<<"$line")" "$(field used_bytes_delta <<<"$line")"
	done < <(rows "$diff" arenas) >"$T/arenas"
	[ -s "$T/classes" ] || fail "$what: diff lists no class: $(head -c 300 "$diff")"
	awk -v what="$what" '
		FILENAME == ARGV[1] && $1 == "grow" {
			n++; u[n] = $2; a[n] = $3; c[n] = $4
			next
		}
		FILENAME == ARGV[2] {
			k++; lo[k] = $1; hi[k] = $2; dn[k] = $3; db[k] = $4
			next
		}
		FILENAME == ARGV[3] {
			m++; an[m] = $1; ad[m] = $2; adn[m] = $3; adb[m] = $4
			next
		}
		END {
			bad = 0
			for (i = 1; i <= n; i++) {
				hit = 0
				for (j = 1; j <= k; j++)
					if (u[i] >= lo[j] && u[i] <= hi[j]) {
						wn[j] += c[i]; wb[j] += c[i] * u[i]; hit = 1
					}
				if (!hit) {
					printf "%s: no class row holds usable size %s (grown %s)\n", what, u[i], c[i]
					bad = 1
				}
				key = a[i]
				tn[key] += c[i]; tb[key] += c[i] * u[i]
				sn += c[i]; sb += c[i] * u[i]
			}
			for (j = 1; j <= k; j++)
				if (wn[j] != dn[j] || wb[j] != db[j]) {
					printf "%s: class %s-%s: diff says %+d blocks %+d bytes, the program %+d %+d\n", what, lo[j], hi[j], dn[j], db[j], wn[j], wb[j]
					bad = 1
				}
			for (j = 1; j <= m; j++) {
				# ptmalloc: main by index, thread arenas by
				# address; jemalloc: by index.
				key = ad[j] == "-" ? an[j] : an[j] == "0" ? "main" : ad[j]
				seen[key] = 1
				if (tn[key] != adn[j] || tb[key] != adb[j]) {
					printf "%s: arena %s (%s): diff says %+d blocks %+d bytes, the program %+d %+d\n", what, an[j], ad[j], adn[j], adb[j], tn[key], tb[key]
					bad = 1
				}
			}
			for (key in tn)
				if (!(key in seen) && (tn[key] || tb[key])) {
					printf "%s: arena %s grew %+d blocks but diff does not list it\n", what, key, tn[key]
					bad = 1
				}
			printf "%d %d\n", sn, sb > "/dev/stderr"
			exit bad
		}' "$truth" "$T/classes" "$T/arenas" 2>"$T/sums" ||
		fail "$what: diff disagrees with the recorded growth (see above)"
	local sums want_n want_b
	sums=$(tail -n1 "$T/sums")
	read -r want_n want_b <<<"$sums"
	if [ "$(json_num "$diff" used_delta)" != "$want_n" ] ||
		[ "$(json_num "$diff" used_bytes_delta)" != "$want_b" ]; then
		fail "$what: totals say $(json_num "$diff" used_delta) blocks $(json_num "$diff" used_bytes_delta) bytes, the program $want_n $want_b"
	fi
	say "$what: $want_n blocks, $want_b bytes of growth in $(wc -l <"$T/classes") classes, $(wc -l <"$T/arenas") arenas: as recorded"
}

# without_base JSON: the diff document less the members naming the base.
without_base() {
	sed 's/"base":"[^"]*","base_kind":"[^"]*",//' "$1"
}

check_variant() {
	local variant=$1 dir opt=() out=$T/$1 base
	mkdir -p "$out"
	# A variant this machine cannot make is skipped, not the test.
	local rc=0
	if [ "$variant" = host ]; then
		dir=$(corpus_core grow1) || rc=$?
	else
		dir=$(variant_core "$variant" grow1) || rc=$?
	fi
	case $rc in
	0) ;;
	77) say "$variant: skipped (no core)" && return 0 ;;
	*) exit "$rc" ;;
	esac
	base=$(find "$dir/base" -maxdepth 1 -type f -name 'core*' | sed -n 1,1p)
	if [ -z "$base" ] || ! grep -qx 'base-core yes' "$dir/truth.txt"; then
		say "$variant: skipped: no base core in $dir/base (core_pattern '$(cat /proc/sys/kernel/core_pattern)' puts the forked child's core elsewhere)"
		return 0
	fi
	corpus_copy "$dir" "$out"
	if command -v flock >/dev/null 2>&1; then
		flock "$dir/.lock" cp "$base" "$out/base.core"
	else
		cp "$base" "$out/base.core"
	fi
	case $variant in
	*-arm64) opt=(--sysroot "$(readlink -f "$dir/sysroot")") ;;
	esac

	hw "$out/diff.json" "$out/diff.err" "${opt[@]}" --json "$out/core" diff "$out/base.core"
	expect_rc 0
	check_growth "$out/truth.txt" "$out/diff.json" "$variant"

	# A saved sizes --json of the base stands for it, with its sizes
	# --by=type --json for the (here empty) per-class section.
	local exact
	hw "$out/base.types" "$out/base.types.err" "${opt[@]}" --json "$out/base.core" sizes --by=type
	expect_rc 0
	for exact in "" --exact; do
		hw "$out/base.sizes" "$out/base.sizes.err" "${opt[@]}" --json "$out/base.core" sizes $exact
		expect_rc 0
		hw "$out/diff-saved.json" "$out/diff-saved.err" "${opt[@]}" --json "$out/core" diff "$out/base.sizes" "$out/base.types"
		expect_rc 0
		grep -q '"base_kind":"sizes-json+types-json"' "$out/diff-saved.json" ||
			fail "$variant: a saved sizes${exact:+ $exact} --json is not taken as one"
		cmp -s <(without_base "$out/diff.json") <(without_base "$out/diff-saved.json") ||
			fail "$variant: diff against the base's sizes${exact:+ $exact} --json differs from diff against its core"
	done

	# The options the session was opened with open the base too.
	hw "$out/nodebug.json" "$out/nodebug.err" "${opt[@]}" --no-debuginfo --json "$out/core" diff "$out/base.core"
	expect_rc 0
	cmp -s "$out/diff.json" "$out/nodebug.json" ||
		fail "$variant: diff --no-debuginfo differs"

	# Against itself: nothing changed.
	hw "$out/self.json" "$out/self.err" "${opt[@]}" --json "$out/core" diff "$out/core"
	expect_rc 0
	if ! grep -q '"classes":\[\],"unchanged_classes":[1-9]' "$out/self.json" ||
		! grep -q '"arenas":\[\],"unchanged_arenas":[1-9]' "$out/self.json" ||
		[ "$(json_num "$out/self.json" used_delta)" != 0 ] ||
		[ "$(json_num "$out/self.json" free_bytes_delta)" != 0 ]; then
		fail "$variant: a core diffed against itself shows changes: $(head -c 400 "$out/self.json")"
	fi

	# Text: the same totals, the grown rows, the count of unchanged ones.
	hw "$out/diff.txt" "$out/diff.txt.err" "${opt[@]}" "$out/core" diff "$out/base.core"
	expect_rc 0
	local n
	n=$(json_num "$out/diff.json" used_delta)
	grep -qE "^in use: +\+$n (chunk|block)s, " "$out/diff.txt" ||
		{ cat "$out/diff.txt"; fail "$variant: text does not say +$n in use"; }
	[ "$(grep -cE '^ +[0-9]+(-[0-9]+)? +[-+0-9]' "$out/diff.txt")" -ge "$(rows "$out/diff.json" classes | wc -l)" ] ||
		{ cat "$out/diff.txt"; fail "$variant: text lists fewer classes than JSON"; }
	n=$(json_num "$out/diff.json" unchanged_classes)
	if [ "$n" -gt 0 ]; then
		grep -q "($n size class" "$out/diff.txt" ||
			{ cat "$out/diff.txt"; fail "$variant: text does not say $n classes are unchanged"; }
	fi
	hw "$out/self.txt" "$out/self.txt.err" "${opt[@]}" "$out/core" diff "$out/core"
	expect_rc 0
	grep -q '^(no size class changed)' "$out/self.txt" ||
		{ cat "$out/self.txt"; fail "$variant: text of a core against itself"; }

	# Not a sizes document: one error line, usage status.
	hw "$out/sum.json" "$out/sum.err" "${opt[@]}" --json "$out/base.core" summary
	expect_rc 0
	hw "$out/bad.out" "$out/bad.err" "${opt[@]}" "$out/core" diff "$out/sum.json"
	expect_rc 2
	one_error_line "$out/bad.err" "diff against a summary --json"
	printf '{"classes":[{"size":24,' >"$out/cut.json"
	hw "$out/cut.out" "$out/cut.err" "${opt[@]}" "$out/core" diff "$out/cut.json"
	expect_rc 2
	one_error_line "$out/cut.err" "diff against a cut sizes --json"
	# The same file twice, of more arenas than a first allocation holds
	# (fuzz-diffjson: the second file's rows were added past the end
	# of the first's array).
	{
		printf '{"classes":[],"arenas":['
		for ((i = 0; i < 70; i++)); do
			[ $i = 0 ] || printf ','
			printf '{"arena":%d,"used":1,"used_bytes":16,"free":0,"free_bytes":0}' $i
		done
		printf ']}'
	} >"$out/a70.json"
	hw "$out/two.out" "$out/two.err" "${opt[@]}" "$out/core" diff "$out/a70.json" "$out/a70.json"
	expect_rc 2
	one_error_line "$out/two.err" "diff against one sizes --json twice"
	ran=$((ran + 1))
}

ran=0
for v in host glibc-2.31-amd64 jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64; do
	check_variant "$v"
done
[ $ran -gt 0 ] || skip "no variant could make grow1's two cores here"

# Two processes of one program (ASLR: no arena keeps its address):
# threads8's core and a second run's.  Main pairs with main, each thread
# arena with the one made at the same point (9 arenas on each side, all
# paired: no row is new or gone), and the report says how.  A core
# against itself pairs by address.
one=$(corpus_core threads8)
"$TOP/scripts/corpus/make-core.sh" threads8 "$T/threads8-2" >/dev/null 2>&1 ||
	fail "a second threads8 core could not be made"
hw "$T/pair.json" "$T/pair.err" --json "$T/threads8-2/core" diff "$one/core"
expect_rc 0
grep -q '"arena_pairing":"age"' "$T/pair.json" ||
	fail "two processes' arenas: not paired by age: $(grep -o '"arena_pairing":"[a-z]*"' "$T/pair.json")"
! grep -Eq '"arena":null|"base_arena":null' "$T/pair.json" ||
	fail "two processes' arenas: an arena is new or gone: $(grep -o '"arenas":\[[^]]*' "$T/pair.json" | head -c 400)"
hw "$T/pair.txt" "$T/pair.err" "$T/threads8-2/core" diff "$one/core"
expect_rc 0
grep -q '^(arenas paired by age' "$T/pair.txt" || fail "the text does not say how the arenas were paired"
hw "$T/self.json" "$T/self.err" --json "$one/core" diff "$one/core"
expect_rc 0
grep -q '"arena_pairing":"address"' "$T/self.json" ||
	fail "a core against itself: not paired by address"
say "threads8, two processes: every arena paired by age (main with main), and said; a core against itself by address"

# Cores of two allocators: refused, the base's allocator named (it was
# said after the base had been freed: "the base is a  heap").
if je=$(variant_core jemalloc-5.3.0-amd64 grow1 2>/dev/null) && [ -f "$je/core" ]; then
	hw "$T/mix.out" "$T/mix.err" "$one/core" diff "$je/core"
	expect_rc 2
	one_error_line "$T/mix.err" "diff of a glibc core against a jemalloc core"
	grep -q "the base is a jemalloc heap, this one ptmalloc" "$T/mix.err" ||
		fail "diff across allocators: $(cat "$T/mix.err")"
	say "allocators: $(cat "$T/mix.err")"
fi
