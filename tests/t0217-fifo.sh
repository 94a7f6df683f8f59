#!/bin/bash
# A FIFO where heapwalk expects a file never makes it wait (a plain
# open() of a FIFO blocks until a writer comes): given as the core, as
# --exe, or standing (under --sysroot) where the core's NT_FILE names
# libc.  The first two are one error line; the third is no file at all,
# so libc is read from its own path and the walk goes on.  And a FIFO
# (or a device) named in the core's link_map, which libdwfl's core reader
# opens itself on this machine, and one named in NT_FILE (the
# executable's, which libdwfl opens too): the name is passed by, the
# walk goes on.
# And `diff BASE` with a FIFO or /dev/null as BASE: one error line each
# (a FIFO blocked it; /dev/null read as an empty leaks report).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd mkfifo
dir=$(corpus_core bins1)
mkfifo "$T/fifo"
hw "$T/out" "$T/err" "$T/fifo" summary
expect_rc 2 3
grep -q "^heapwalk: .*fifo" "$T/err" || fail "a FIFO as the core: no error line: $(cat "$T/err")"
hw "$T/out" "$T/err" --exe "$T/fifo" "$dir/core" summary
expect_rc 1 2 3
grep -q "^heapwalk: .*fifo" "$T/err" || fail "a FIFO as --exe: no error line: $(cat "$T/err")"
# The core's name for libc, as a FIFO under a sysroot.
libc=$(grep -o '"module":"/[^"]*libc\.so[^"]*"' <("$HEAPWALK" --json "$dir/core" summary) |
	sed -n '1s/"module":"\(.*\)"/\1/p')
[ -n "$libc" ] || fail "summary names no libc file"
mkdir -p "$T/root$(dirname "$libc")"
mkfifo "$T/root$libc"
hw "$T/out" "$T/err" --sysroot "$T/root" "$dir/core" summary
expect_rc 0
grep -q "ptmalloc" "$T/out" || fail "with libc's name a FIFO, the walk did not go on: $(head -c 300 "$T/out")"
say "FIFOs as the core, as --exe and as the core's libc: no wait"

# The core's link_map names libc by the path ld.so found it at: that
# string in the process's memory (past the notes, which hold NT_FILE's
# copy) is made to name a FIFO of the same length.
fifo=$(mktemp -u /tmp/hw-lmfifo.XXXXXXXXXXXXXXXX)
mkfifo "$fifo"
n=$(perl -e '
	my ($in, $out, $from, $to) = @ARGV;
	open my $f, "<", $in or die; binmode $f; local $/; my $c = <$f>;
	my ($phoff) = unpack("Q<", substr($c, 32, 8));
	my ($phnum) = unpack("v", substr($c, 56, 2));
	my $notes_end = 0;
	for my $i (0 .. $phnum - 1) {
		my ($type, undef, $off, undef, undef, $fs) =
			unpack("V V Q< Q< Q< Q<", substr($c, $phoff + 56 * $i, 40));
		$notes_end = $off + $fs if $type == 4 && $off + $fs > $notes_end;
	}
	length($from) == length($to) or die "lengths differ";
	my $n = 0;
	my $at = $notes_end;
	while (($at = index($c, "$from\0", $at)) >= 0) {
		substr($c, $at, length $to) = $to;
		$n++;
	}
	open my $o, ">", $out or die; binmode $o; print $o $c; print $n;' \
	"$dir/core" "$T/lm.core" /lib/x86_64-linux-gnu/libc.so.6 "$fifo")
if [ "${n:-0}" -ge 1 ]; then
	hw "$T/out" "$T/err" "$T/lm.core" summary
	expect_rc 0
	grep -q "ptmalloc" "$T/out" || { rm -f "$fifo"; fail "link_map naming a FIFO: $(head -c 300 "$T/out" "$T/err")"; }
	say "a FIFO named in the core's link_map: passed by, no wait"
else
	say "a FIFO named in the core's link_map: not checked (no link_map name /lib/x86_64-linux-gnu/libc.so.6 in the core)"
fi
rm -f "$fifo" "$T/lm.core"

# The executable's path, everywhere the core holds it (NT_FILE, the
# auxv's AT_EXECFN string), made to name a FIFO of the same length:
# libdwfl's core reader opens NT_FILE's names itself too.
exe=$(readlink -f "$dir/prog")
fifo=$(mktemp -u "/tmp/hw-xf.$(printf '%*s' $((${#exe} - 11)) '' | tr ' ' X)")
if [ ${#fifo} = ${#exe} ]; then
	mkfifo "$fifo"
	perl -0777 -pe 'BEGIN { ($from, $to) = splice @ARGV, 1, 2 } s/\Q$from\E\0/$to\0/g' \
		"$dir/core" "$exe" "$fifo" >"$T/xf.core"
	cmp -s "$dir/core" "$T/xf.core" && { rm -f "$fifo"; fail "the executable's path is not in the core: $exe"; }
	hw "$T/out" "$T/err" "$T/xf.core" summary
	rm -f "$fifo"
	expect_rc 0
	grep -q "ptmalloc" "$T/out" || fail "the executable named a FIFO: $(head -c 300 "$T/out" "$T/err")"
	say "a FIFO named as the executable in NT_FILE: passed by, no wait"
else
	say "a FIFO as the executable: not checked (its path $exe is too short)"
fi
rm -f "$T/xf.core"

# diff's base: a FIFO, a device.
hw "$T/out" "$T/err" "$dir/core" diff "$T/fifo"
expect_rc 3
grep -q "^heapwalk: diff: base '.*fifo': a pipe" "$T/err" || fail "diff FIFO: $(cat "$T/err")"
hw "$T/out" "$T/err" "$dir/core" diff /dev/null
expect_rc 3
grep -q "^heapwalk: diff: base '/dev/null': a character device" "$T/err" || fail "diff /dev/null: $(cat "$T/err")"
say "diff with a FIFO or /dev/null as its base: one error line, no wait"
