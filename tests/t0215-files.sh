#!/bin/bash
# t0215-files: the "missing or different files" check (summary's "core
# lacks" line) blames only files that really are missing or different:
#  - with --sysroot, an --exe (relative or absolute) is used as given,
#    not looked for under the sysroot;
#  - an --exe stands for the executable the core names, wherever that was;
#  - a core cut in half lost bytes, which is not the present libc's fault.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd perl truncate

missing_line() {
	grep -o '"target_limits":\[[^]]*\]' "$1" | grep -o 'missing or different files[^"]*' || true
}

# An NT_FILE core whose executable is gone: its path in the core is
# rewritten (same length) to one that does not exist.
dir=$(corpus_core bins1)
corpus_copy "$dir" "$T"
perl -0777 -pi -e 's{/bins1/prog\0}{/bins1/gone\0}g' "$T/core"
hw "$T/gone.json" "$T/gone.err" --json "$T/core" summary
expect_rc 0
[[ $(missing_line "$T/gone.json") == *"/bins1/gone"* ]] ||
	fail "an executable that is gone is not reported missing: $(missing_line "$T/gone.json")"
hw "$T/exe.json" "$T/exe.err" --json --exe "$dir/prog" "$T/core" summary
expect_rc 0
[ -z "$(missing_line "$T/exe.json")" ] ||
	fail "--exe FILE does not stand for the core's executable: $(missing_line "$T/exe.json")"

# A core cut in half: the libc it names is on disk and unchanged.
cp "$dir/core" "$T/cut"
truncate -s $(($(stat -c %s "$T/cut") / 2)) "$T/cut"
hw "$T/cut.json" "$T/cut.err" --json "$T/cut" summary
expect_rc 0 1 3 4
if [ "$HW_RC" = 0 ]; then
	grep -q '"truncated":true' "$T/cut.json" || fail "the cut core is not said to be truncated"
	[[ $(missing_line "$T/cut.json") != *libc.so* ]] ||
		fail "a cut core blames the present libc: $(missing_line "$T/cut.json")"
fi
grep -q 'libc.so' "$T/cut.err" && fail "a cut core blames libc: $(cat "$T/cut.err")"

# qemu-user core (no NT_FILE) with --sysroot and --exe, relative and not.
adir=$(variant_core glibc-2.36-arm64 bins1)
sysroot=$(readlink -f "$adir/sysroot")
(
	cd "$adir"
	hw "$T/rel.json" "$T/rel.err" --json --sysroot "$sysroot" --exe ./prog core summary
	expect_rc 0
	[ -z "$(missing_line "$T/rel.json")" ] ||
		fail "--sysroot with --exe ./prog blames: $(missing_line "$T/rel.json")"
)
hw "$T/abs.json" "$T/abs.err" --json --sysroot "$sysroot" --exe "$adir/prog" "$adir/core" summary
expect_rc 0
[ -z "$(missing_line "$T/abs.json")" ] ||
	fail "--sysroot with --exe $adir/prog blames: $(missing_line "$T/abs.json")"
say "a gone executable is reported, --exe stands for it; a cut core blames no file; --sysroot with --exe (relative, absolute) finds the executable"
