#!/bin/bash
# Unreadable targets exit 3 with one "heapwalk: " line naming the file;
# a core cut in half and a core with garbage in its heap never crash or
# hang; `check` finds the garbage (exit 1).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd readelf dd truncate timeout
prng=$(tool prng)
dir=$(corpus_core bins1)

# --- not a core at all: exit 3, one line naming the file --------------
: >"$T/empty"
"$prng" 200 1048576 >"$T/random"
missing=$T/does-not-exist
for target in "$T/empty" "$T/random" /bin/true "$missing"; do
	for form in plain chunks summary; do
		case $form in
		plain) set -- "$target" ;;
		*) set -- --json "$target" $form ;;
		esac
		hw "$T/out" "$T/err" "$@"
		expect_rc 3
		one_error_line "$T/err" "heapwalk $*"
		grep -qF "$target" "$T/err" ||
			fail "heapwalk $*: the error line does not name the file: $(cat "$T/err")"
	done
done

# --- the core cut in half: 0 or 3, never a crash -------------------------
cut=$T/cut.core
cp "$dir/core" "$cut"
truncate -s $(($(stat -c %s "$cut") / 2)) "$cut"
for cmd in summary chunks check; do
	hw "$T/out" "$T/err" --json "$cut" $cmd
	if [ $cmd = check ]; then expect_rc 0 1 3; else expect_rc 0 3; fi
	[ "$HW_RC" != 3 ] || one_error_line "$T/err" "heapwalk --json cut.core $cmd"
done

# --- garbage in the middle of the main heap ------------------------------
# The range the program's main-arena chunks span, and the PT_LOAD that
# holds its middle.
addrs=$(awk '$1 == "alloc" && $6 == "0" && $5 != "mmapped" &&
	$5 != "merged" { print $2 }' "$dir/truth.txt" | sort)
lo=$(head -n1 <<<"$addrs")
hi=$(tail -n1 <<<"$addrs")
if [ -z "$lo" ] || [ -z "$hi" ]; then fail "no main-arena allocations in the truth"; fi
mid=$(((lo + hi) / 2 & ~15))
off=
while read -r type poff va _ fsz _; do
	[ "$type" = LOAD ] || continue
	if ((va <= mid - 2048 && mid + 2048 <= va + fsz)); then
		off=$((poff + mid - 2048 - va))
	fi
done < <(readelf -lW "$dir/core")
[ -n "$off" ] || fail "no PT_LOAD with file data holds heap address $(printf 0x%x $mid)"
bad=$T/garbage.core
cp "$dir/core" "$bad"
"$prng" 201 4096 | dd of="$bad" bs=4096 seek="$off" oflag=seek_bytes \
	conv=notrunc status=none
cmp -s "$dir/core" "$bad" && fail "the garbage did not change the core"
say "garbage at $(printf 0x%x $((mid - 2048)))..+4096 (file offset $off)"

hw "$T/out" "$T/err" --json "$bad" check
expect_rc 1
hw "$T/out" "$T/err" "$bad" check
expect_rc 1
for cmd in summary arenas bins chunks sizes frag leaks; do
	for json in "" --json; do
		hw "$T/out" "$T/err" $json "$bad" $cmd
		if [ "$HW_RC" = 2 ] && grep -qiE 'unknown command|not (yet )?implemented' "$T/err"; then
			say "note: $cmd is not implemented yet: $(head -n1 "$T/err")"
			continue
		fi
		expect_rc 0 1
	done
done
