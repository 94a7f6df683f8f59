#!/bin/bash
# Compressed cores are read directly (libheapwalk/target/unpack*.c).
#  - A ptmalloc core (bins1) and a jemalloc one (jemalloc 5.3 basic1),
#    compressed by the zstd, xz, gzip and lz4 tools (lz4's frame format
#    and its legacy one, lz4 -l): `summary`, `chunks`
#    and `--json summary` print exactly what they print for the plain
#    core, except the text summary's target line, which names the
#    compressed file and says it was unpacked ("(zstd, unpacked 2.7 MiB)").
#  - Several frames / members / streams one after the other (the core
#    compressed in two pieces, concatenated) read as the whole core
#    (its --json summary).
#  - A .zst, .lz4 or legacy .lz4 that starts with skippable frames
#    (metadata some tools put first: magic 0x184D2A5?, a length, bytes)
#    reads as the core it holds; a legacy .lz4 cut in the middle of a
#    block exits 3 with one line saying it is truncated.
#  - Without memfd_create (a preloaded stand-in that fails), the core is
#    unpacked into an unlinked file in $TMPDIR, which is left empty.
#  - Bad input exits 3 with one line naming the file: a truncated .zst,
#    a corrupted .gz, a gzip of something that is not an ELF file, a core
#    followed by more than its ELF headers describe (the decompression
#    bomb guard); a zero bomb whose headers claim 64 GiB, refused once
#    it passes the 2 GiB a small file may unpack to, or --unpack-max
#    (512M); a frame whose header claims 1 TiB, refused before it is
#    decoded; a .bz2 still says to unpack it with `bzip2 -d`; at
#    once, before unpacking the rest: "\x7fELF" and 2 MiB of junk, a
#    core whose class byte says 32-bit, one whose e_phoff points past its
#    first MiB; a core whose last PT_LOAD claims 96 MiB of random bytes
#    after it, read with --cache-max 32M: refused once its data passes
#    what --cache-max lets it keep in memory; one whose 320 MiB of one
#    byte pack into under 2 MiB: refused once its data passes 256 MiB
#    (256 times the file's size, at least that), read with --unpack-max.
#  - Robustness: FUZZ_N (default 60) randomly damaged .gz and .zst
#    versions of bins1 (a few bytes overwritten, or cut short) never
#    crash, hang or trip a sanitizer, and an exit 3 is one line.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd timeout zstd xz gzip lz4 bzip2 perl

cores=(bins1)
mkdir -p "$T/bins1"
corpus_copy "$(corpus_core bins1)" "$T/bins1"
if jdir=$(variant_core jemalloc-5.3.0-amd64 basic1); then
	cores+=(basic1)
	mkdir -p "$T/basic1"
	corpus_copy "$jdir" "$T/basic1"
else
	rc=$?
	[ $rc = 77 ] || fail "cannot make the jemalloc 5.3 core (exit $rc)"
	say "no jemalloc 5.3 core here: ptmalloc only"
fi

# The command that makes each kind, and the name heapwalk gives it.
declare -A pack=([zst]="zstd -q -c" [xz]="xz -c -0" [gz]="gzip -c -1"
	[lz4]="lz4 -q -c" [lz4l]="lz4 -q -l -c")
declare -A kind=([zst]=zstd [xz]=xz [gz]=gzip [lz4]=lz4 [lz4l]=lz4)

# Options per core: the jemalloc one is read as the jemalloc tests read
# it, without debug info (half the time under ASan; bins1 keeps it).
declare -A opts=([bins1]="" [basic1]="--no-debuginfo")

# run_all CORE OUT [OPTION...]: summary, chunks and --json summary of
# CORE into OUT.summary, OUT.chunks, OUT.json (the summary without its
# target line into OUT.summary-body).
run_all() {
	local core=$1 out=$2
	shift 2
	hw "$out.summary" "$out.err" "$@" "$core" summary
	expect_rc 0
	grep -v '^target:' "$out.summary" >"$out.summary-body"
	hw "$out.chunks" "$out.err" "$@" "$core" chunks
	expect_rc 0
	hw "$out.json" "$out.err" "$@" --json "$core" summary
	expect_rc 0
}

# same_as_plain CORE OUT PLAIN: OUT's outputs are PLAIN's.
same_as_plain() {
	local core=$1 out=$2 plain=$3 f
	for f in summary-body chunks json; do
		cmp -s "$plain.$f" "$out.$f" || {
			diff "$plain.$f" "$out.$f" | sed -n 1,20p >&2
			fail "$(basename "$core"): $f differs from the plain core's"
		}
	done
}

for c in "${cores[@]}"; do
	plain=$T/$c/core
	# shellcheck disable=SC2086 # the options are words
	run_all "$plain" "$T/$c/plain" ${opts[$c]}
	[ -s "$T/$c/plain.chunks" ] || fail "$c: the plain core lists no chunks"
	for ext in zst xz gz lz4 lz4l; do
		packed=$T/$c/core.$ext
		${pack[$ext]} "$plain" >"$packed"
		# shellcheck disable=SC2086
		run_all "$packed" "$T/$c/$ext" ${opts[$c]}
		same_as_plain "$packed" "$T/$c/$ext" "$T/$c/plain"
		grep -qE "^target: +$packed \(${kind[$ext]}, unpacked [0-9.]+ [KMG]?i?B\)" \
			"$T/$c/$ext.summary" ||
			fail "$c.$ext: the target line does not say it was unpacked: $(grep '^target:' "$T/$c/$ext.summary")"
	done
done

# --- several frames, members or streams one after the other -------------
plain=$T/bins1/core
size=$(stat -c %s "$plain")
head -c $((size / 2)) "$plain" >"$T/first"
tail -c +$((size / 2 + 1)) "$plain" >"$T/second"
for ext in zst xz gz lz4 lz4l; do
	multi=$T/multi.$ext
	{ ${pack[$ext]} "$T/first"; ${pack[$ext]} "$T/second"; } >"$multi"
	hw "$T/multi-$ext" "$T/err" --json "$multi" summary
	expect_rc 0
	cmp -s "$T/bins1/plain.json" "$T/multi-$ext" ||
		fail "multi.$ext: summary differs from the plain core's"
done

# --- skippable frames first ----------------------------------------------
# Two of them (magic 0x184D2A53 and 0x184D2A5F, lengths 11 and 0).
skip() { perl -e 'print pack("VV", 0x184D2A53, 11), "hello world", pack("VV", 0x184D2A5F, 0)'; }
for ext in zst lz4 lz4l; do
	{ skip; ${pack[$ext]} "$plain"; } >"$T/skip.$ext"
	hw "$T/skip-$ext" "$T/err" --json "$T/skip.$ext" summary
	expect_rc 0
	cmp -s "$T/bins1/plain.json" "$T/skip-$ext" ||
		fail "skip.$ext: summary differs from the plain core's"
done
lz4 -q -l -c "$plain" >"$T/whole.lz4"
head -c $(($(wc -c <"$T/whole.lz4") / 2)) "$T/whole.lz4" >"$T/cut.lz4"
hw "$T/cut.out" "$T/cut.err" "$T/cut.lz4" summary
expect_rc 3
one_error_line "$T/cut.err" "a legacy .lz4 cut short"
grep -q "truncated" "$T/cut.err" || fail "a legacy .lz4 cut short: $(cat "$T/cut.err")"
say "skippable frames first (zst, lz4, legacy lz4), legacy lz4 cut short: read / refused"

# --- no memfd_create: an unlinked file in $TMPDIR ------------------------
if command -v "${CC:-cc}" >/dev/null 2>&1; then
	# Fails as a kernel without memfd would, and leaves a mark.
	cat >"$T/nomemfd.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
int memfd_create(const char *name, unsigned flags);
int memfd_create(const char *name, unsigned flags)
{
	const char *mark = getenv("NOMEMFD_MARK");
	(void)name;
	(void)flags;
	if (mark)
		close(open(mark, O_WRONLY | O_CREAT, 0600));
	errno = ENOSYS;
	return -1;
}
EOF
	"${CC:-cc}" -shared -fPIC -o "$T/nomemfd.so" "$T/nomemfd.c" ||
		fail "cannot build the memfd_create stand-in"
	mkdir -p "$T/tmp"
	# ASan wants its runtime first; the stand-in only replaces one call.
	(
		export ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0
		export LD_PRELOAD=$T/nomemfd.so TMPDIR=$T/tmp
		export NOMEMFD_MARK=$T/memfd-refused
		hw "$T/tmpfile" "$T/err" --json "$T/bins1/core.zst" summary
		expect_rc 0
	)
	[ -e "$T/memfd-refused" ] || fail "the memfd_create stand-in was not called"
	cmp -s "$T/bins1/plain.json" "$T/tmpfile" ||
		fail "unpacked into a temporary file: summary differs from the plain core's"
	[ -z "$(ls -A "$T/tmp")" ] || fail "files left in TMPDIR: $(ls -A "$T/tmp")"
else
	say "no C compiler: the temporary-file fallback is not tried"
fi

# --- bad input: exit 3, one line naming the file -------------------------
# bad_input FILE WORDS: heapwalk FILE summary exits 3 with one line that
# names FILE and holds WORDS.
bad_input() {
	local file=$1 words=$2
	hw "$T/out" "$T/err" "$file" summary
	expect_rc 3
	one_error_line "$T/err" "heapwalk $(basename "$file")"
	grep -qF "'$file'" "$T/err" || fail "$(basename "$file"): the error does not name the file: $(cat "$T/err")"
	grep -qF "$words" "$T/err" || fail "$(basename "$file"): the error does not say '$words': $(cat "$T/err")"
}

zst=$T/bins1/core.zst
head -c $(($(stat -c %s "$zst") / 2)) "$zst" >"$T/cut.zst"
bad_input "$T/cut.zst" "zstd: truncated"

# Four bytes overwritten in the middle of the deflate data.
gz=$T/bins1/core.gz
cp "$gz" "$T/damaged.gz"
printf '\377\377\377\377' | dd of="$T/damaged.gz" bs=1 \
	seek=$(($(stat -c %s "$gz") / 2)) conv=notrunc status=none
bad_input "$T/damaged.gz" "gzip: "

"$(tool prng)" 155 1048576 | gzip -c -1 >"$T/random.gz"
bad_input "$T/random.gz" "not an ELF file"

# patch_core OUT OFFSET PERL-PACK...: the plain core with bytes replaced.
patch_core() {
	local out=$1 off=$2
	shift 2
	cp "$plain" "$out"
	perl -e 'open my $f, "+<", $ARGV[0] or die; seek $f, $ARGV[1], 0;
		print $f pack($ARGV[2], @ARGV[3..$#ARGV]);' "$out" "$off" "$@"
}
# A core followed by 64 MiB of zeros: more than its headers describe.
{ cat "$plain"; head -c $((64 << 20)) /dev/zero; } | zstd -q -c >"$T/bomb.zst"
bad_input "$T/bomb.zst" "bytes its ELF headers describe"

# A zero bomb whose headers claim it all: the core's e_shoff moved to
# 64 GiB, then 3 GiB of zeros (12 frames of 256 MiB, 8 KB each): the
# stream is refused once it passes 2 GiB (a file this small may unpack
# to no more), or what --unpack-max says.
patch_core "$T/vast" 40 'Q<' $((64 << 30))      # e_shoff
head -c $((256 << 20)) /dev/zero | zstd -q -c >"$T/zeros.zst"
{ zstd -q -c "$T/vast"; for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "$T/zeros.zst"; done; } >"$T/zerobomb.zst"
bad_input "$T/zerobomb.zst" "2048 MiB, the most a file of"
hw "$T/out" "$T/err" --unpack-max 512M "$T/zerobomb.zst" summary
expect_rc 3
one_error_line "$T/err" "zerobomb --unpack-max"
grep -qF "more than --unpack-max (512 MiB)" "$T/err" || fail "zerobomb --unpack-max 512M: $(cat "$T/err")"
hw "$T/out" "$T/err" --unpack-max 0 "$T/zerobomb.zst" summary
expect_rc 2
# A frame whose header says it holds 1 TiB (the core's own frame, its
# content size field made 8 bytes and 2^40): refused before a byte of
# it is decoded, with the same words.
zstd -q -c "$plain" | perl -e '
	binmode STDIN; binmode STDOUT; local $/; my $c = <STDIN>;
	my $fhd = ord substr($c, 4, 1);
	my ($flag, $single, $did) = ($fhd >> 6, ($fhd >> 5) & 1, $fhd & 3);
	my $at = 5 + ($single ? 0 : 1) + (0, 1, 2, 4)[$did];
	my $len = ($single ? 1 : 0, 2, 4, 8)[$flag];
	substr($c, 4, 1) = chr(($fhd & 0x3f) | 0xc0);
	substr($c, $at, $len) = pack("Q<", 1 << 40);
	print $c;' >"$T/claims.zst"
bad_input "$T/claims.zst" "2048 MiB, the most a file of"

bzip2 -c "$plain" >"$T/core.bz2"
bad_input "$T/core.bz2" "bzip2 -d"

# Refused from the first MiB: no core header heapwalk reads.
{ printf '\177ELF\002\001'; "$(tool prng)" 1551 $((2 << 20)); } | zstd -q -c >"$T/junk.zst"
bad_input "$T/junk.zst" "not a core"
patch_core "$T/c32" 4 C 1
zstd -q -c "$T/c32" >"$T/c32.zst"
bad_input "$T/c32.zst" "32-bit"
patch_core "$T/far" 32 'Q<' $((8 << 20))        # e_phoff
zstd -q -c "$T/far" >"$T/far.zst"
bad_input "$T/far.zst" "program headers are not in its first MiB"
# stretch_last_load OUT BYTES: a copy of the plain core at OUT whose last
# PT_LOAD reaches BYTES past the core's end (p_filesz = p_memsz), for
# data appended after it.
stretch_last_load() {
	cp "$plain" "$1"
	perl -e '
		open my $f, "+<", $ARGV[0] or die;
		local $/; my $c = <$f>;
		my ($phoff) = unpack("Q<", substr($c, 32, 8));
		my ($phnum) = unpack("v", substr($c, 56, 2));
		my $last;
		for my $i (0 .. $phnum - 1) {
			$last = $phoff + 56 * $i if unpack("V", substr($c, $phoff + 56 * $i, 4)) == 1;
		}
		my ($off) = unpack("Q<", substr($c, $last + 8, 8));
		my $fs = length($c) - $off + $ARGV[1];
		seek $f, $last + 32, 0;
		print $f pack("Q<Q<", $fs, $fs);' "$1" "$2"
}
# Data past --cache-max: the last PT_LOAD made to reach 96 MiB of random
# bytes appended to the core.
stretch_last_load "$T/fat" $((96 << 20))
{ cat "$T/fat"; "$(tool prng)" 1552 $((96 << 20)); } | zstd -q -1 -c >"$T/fat.zst"
rm -f "$T/fat"
hw "$T/out" "$T/err" --cache-max 32M "$T/fat.zst" summary
expect_rc 3
one_error_line "$T/err" "a core of more data than --cache-max"
grep -q "what --cache-max lets it take in memory" "$T/err" ||
	fail "fat.zst with --cache-max 32M: $(cat "$T/err")"
rm -f "$T/fat.zst"
# A small file of much data: 320 MiB of one byte after the core (its
# last PT_LOAD made to reach them) packs into well under a MiB, more
# data than 256 times its size or 256 MiB: refused before the memfd
# holds more; with --unpack-max it is read.
stretch_last_load "$T/fat" $((320 << 20))
{ cat "$T/fat"; head -c $((320 << 20)) /dev/zero | tr '\0' A; } | zstd -q -3 -c >"$T/fat.zst"
rm -f "$T/fat"
(($(stat -c %s "$T/fat.zst") < (2 << 20))) || fail "fat.zst is not small: $(stat -c %s "$T/fat.zst")"
hw "$T/out" "$T/err" "$T/fat.zst" summary
expect_rc 3
one_error_line "$T/err" "a small file of much data"
grep -q "holds more than 256 MiB of data, the most a file of its size may hold unless --unpack-max" "$T/err" ||
	fail "fat.zst: $(cat "$T/err")"
hw "$T/out" "$T/err" --unpack-max 1G "$T/fat.zst" summary
expect_rc 0
grep -q "unpacked" "$T/out" || fail "fat.zst with --unpack-max 1G: $(head -n 3 "$T/out")"
rm -f "$T/fat.zst"
say "refused early: junk after \\x7fELF, 32-bit, program headers past the first MiB; more data than --cache-max; more than 256 times its size (read with --unpack-max)"

# --- damaged streams never crash ----------------------------------------
# N/2 variants of each of bins1's .gz and .zst: one to four bytes
# overwritten at random places, or (one in eight) the stream cut short.
fuzz_n=${FUZZ_N:-60}
mkdir -p "$T/fuzz"
for ext in gz zst; do
	perl -e '
		my ($src, $dir, $ext, $n) = @ARGV;
		open(my $in, "<:raw", $src) or die "$src: $!";
		local $/;
		my $data = <$in>;
		srand(155);
		for my $i (1 .. $n) {
			my $d = $data;
			if (rand(8) < 1) {
				substr($d, int(rand(length $d))) = "";
			} else {
				for (0 .. int(rand(4))) {
					substr($d, int(rand(length $d)), 1) =
						chr(int(rand(256)));
				}
			}
			open(my $out, ">:raw", sprintf("%s/%03d.%s", $dir, $i, $ext))
				or die $!;
			print $out $d;
		}' "$T/bins1/core.$ext" "$T/fuzz" "$ext" $((fuzz_n / 2))
done
(
	# Leaks on these error paths are looked for above; here only
	# crashes and sanitizer reports (LeakSanitizer's exit scan would
	# double the loop's time).
	export ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0
	for f in "$T"/fuzz/*; do
		hw "$T/out" "$T/err" "$f" summary
		expect_rc 0 1 3 4
		[ "$HW_RC" != 3 ] || one_error_line "$T/err" "heapwalk $(basename "$f")"
	done
)
say "$fuzz_n damaged streams: no crash; ${#cores[@]} cores x 5 compressions as plain"
