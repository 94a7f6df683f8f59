#!/bin/bash
# tests/fuzz/run.sh [-t SECONDS] [-c CORPUSDIR] NAME FUZZDIR - set up and
# run the libFuzzer harness FUZZDIR/NAME (built by `make fuzzers` from
# tests/fuzz/NAME.c).
#
#   -t SECONDS   how long to fuzz (default 60; 0: only replay the seeds)
#   -c DIR       the corpus libFuzzer grows (default FUZZDIR/corpus-NAME);
#                the seeds stay apart in FUZZDIR/seeds-NAME
#
# Set-up, redone on every run (cheap once the corpus cores exist; they are
# made by scripts/corpus/make-core.sh under $CORPUS, default build/corpus):
#   fuzz-core      seeds: slim copies (tests/tools/coreslim.c: headers and
#                  notes whole, each segment's data cut to 128 KiB) of the
#                  committed aarch64 kernel cores (corpora/aarch64-kernel/,
#                  read with their committed libc as HW_FUZZ_SYSROOT) and of
#                  the corpus cores bins1 (made here) and jemalloc basic1
#                  (when made); inputs up to 1 MiB
#   fuzz-ptmalloc  FUZZDIR/fuzz-ptmalloc.core: a copy of bins1's core;
#                  .ranges: its writable PT_LOADs that are anonymous
#                  (heaps, mmapped chunks, TLS) or libc's (main_arena, mp_)
#   fuzz-jemalloc  the same from jemalloc-5.3.0-amd64 basic1, libjemalloc's
#                  data instead of libc's
#   fuzz-jeprof    the same from jemalloc-5.3.0-amd64 prof1 (profiling on,
#                  every allocation sampled), but only the pages holding
#                  anything (see nzranges) of libjemalloc's data and .bss
#                  and of the anonymous memory no other module or thread
#                  stack owns: where the profile's objects can be
#   fuzz-tcmalloc  the same from tcmalloc-full-amd64 prof1 (gperftools
#                  2.10, sampling on): libtcmalloc's data and .bss and
#                  the non-zero pages of the anonymous memory
#   fuzz-tcheapprof the same from tcmalloc-full-amd64 heapprof1 (the heap
#                  profiler's table in the anonymous memory)
#   fuzz-mallocng  the same from corpora/musl/ngtruth1.c, built here static
#                  with musl-gcc and run to its abort under gdb (8 threads;
#                  gcore writes FUZZDIR/ngtruth1.d/core): the program's
#                  data and .bss (mallocng's context) and the non-zero
#                  pages of the anonymous memory (meta areas, groups)
#                  Every patch harness's .ranges ends with the core's
#                  program header table ("phdrs": patches there are
#                  aligned on fields, patch.h), and its dictionary with
#                  field values no corpus core has (2^40, 2^46, -4096)
#   fuzz-mimalloc  the same from corpora/mimalloc/mitruth1.c, built here
#                  against Debian's libmimalloc (2 threads and the one that
#                  exits; gcore writes FUZZDIR/mitruth1.d/core): the
#                  library's data (the main heap) and the non-zero pages of
#                  the anonymous memory (segments, pages, thread heaps)
#   fuzz-mimalloc3 the same against Debian sid's libmimalloc 3.6.0
#                  (scripts/corpus/mimalloc-libs.sh, into build/mimalloc):
#                  the chunk maps, the arenas (32 MiB: MIMALLOC_ARENA_RESERVE),
#                  page structs and theaps
#   fuzz-diffjson  FUZZDIR/fuzz-diffjson.core: cxxgrow1's core, the
#                  session `diff FILE...` runs on; seeds: what heapwalk
#                  saves from cxxgrow1's base core (sizes --json, sizes
#                  --by=type --json, leaks --json, and the three in one
#                  input cut by NULs); inputs up to 64 KiB
#   fuzz-unpack    seeds: the slim bins1 core (as fuzz-core's) packed by
#                  gzip, xz, zstd and lz4 (frame and legacy) without
#                  their checksums, zstd with and without the content
#                  size, and gzip, xz and zstd as two frames end to end;
#                  inputs up to 1 MiB; -timeout 30 (FUZZ_TIMEOUT)
#   fuzz-layoutcache FUZZDIR/fuzz-layoutcache.core: bins1's core, read
#                  with the host libc's separate debug info (libc6-dbg);
#                  the input is the struct layout cache's file for that
#                  libc (sym/layoutcache.c), a line "debug @" standing for
#                  this machine's debug line; seeds: the file heapwalk
#                  keeps (the harness writes it) and variants of it (no
#                  answers, offsets moved, sizes at and past the bound,
#                  lines twice, cut, another debug file); inputs up to
#                  64 KiB; skipped without libc6-dbg
#   fuzz-heapv2    FUZZDIR/fuzz-heapv2.core: prof1's core, the session
#                  `prof --base INPUT` runs on; seeds: the profile prof1
#                  dumped itself (its prof.heap) and variants of it (sample
#                  period 2^19, no MAPPED_LIBRARIES, half its records, every
#                  address moved); inputs up to 64 KiB
# Dictionary: tests/fuzz/NAME.dict, plus for the patch harnesses the
# core's own addresses (ranges, the truth's chunks) as 8-byte words.
#
# First every file of tests/fuzz/regress/NAME/ (xz-compressed or not) is
# replayed: fuzz-core's are cores, fuzz-unpack's compressed cores (an
# xz-compressed one kept as NAME.xz.xz), fuzz-heapv2's and
# fuzz-diffjson's base files, fuzz-layoutcache's cache files (inputs as
# they are); the patch harnesses' are whole patched
# cores (*.core[.xz]), replayed as that harness's core with no patches
# (HW_FUZZ_SAVE=FILE makes the harness save the core it patched).  Then
# libFuzzer runs with -timeout=$FUZZ_TIMEOUT (default 10): a crash, a
# sanitizer report, a leak, an input slower than that many seconds, or
# invalid JSON stops it and leaves the input in FUZZDIR/artifacts-NAME/.
# The timeout is wall-clock time: t0222, which may run beside a heavy
# job, gives 60 (a 0.3 s input once took 12 s on a loaded machine).
# Exit 0 clean, 1 finding (or a broken harness), 77 when the set-up cannot
# be made here (no core for the case), 2 usage.  The last line says
# "NAME: N runs in S s (E exec/s), corpus C inputs".
set -euo pipefail

me=run.sh
tmo=${FUZZ_TIMEOUT:-10}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$TOP/build/corpus}

secs=60 corpus=
while getopts t:c: o; do
	case $o in
	t) secs=$OPTARG ;;
	c) corpus=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $me [-t SECONDS] [-c CORPUSDIR] NAME FUZZDIR" >&2; exit 2; }
name=$1
fdir=$(mkdir -p "$2" && cd "$2" && pwd)
bin=$fdir/$name
corpus=${corpus:-$fdir/corpus-$name}
[ -x "$bin" ] || { echo "$me: no harness $bin (make fuzzers)" >&2; exit 2; }

say() { echo "$name: $*" >&2; }
skip() { say "skip: $*"; exit 77; }

# core_of CASE DIR [VARIANT]: make-core.sh's core of CASE in DIR (77 on
# "cannot be made here").
core_of() {
	local rc=0
	"$TOP/scripts/corpus/make-core.sh" "$@" >&2 || rc=$?
	case $rc in
	0) ;;
	77) skip "cannot produce a core for $1 here" ;;
	*) echo "$me: make-core.sh $* failed" >&2; exit 1 ;;
	esac
}

# copy_core DIR DEST: DIR's core, under its lock (another make-core.sh
# may be rebuilding it).
copy_core() {
	# A new file renamed over the old one: a harness still running on
	# the old one keeps it (cp would truncate a file that harness has
	# mapped, and its next read would be a SIGBUS).
	if command -v flock >/dev/null 2>&1; then
		flock "$1/.lock" cp "$1/core" "$2.new.$$"
	else
		cp "$1/core" "$2.new.$$"
	fi
	mv -f "$2.new.$$" "$2"
}

# mitruth_core DIR [VAR=VALUE...] -- CC-ARGS...: corpora/mimalloc/mitruth1.c
# built with CC-ARGS into DIR, run under gdb to its abort (two workers)
# with VAR=VALUE in its environment, and DIR/core written by gcore; kept
# while newer than the program's source.
mitruth_core() {
	local dir=$1 src=$TOP/corpora/mimalloc/mitruth1.c vars=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	[ -s "$dir/core" ] && ! [ "$src" -nt "$dir/core" ] && return 0
	rm -rf "$dir"
	mkdir -p "$dir"
	${CC:-cc} -std=c11 -O1 -g -pthread -DMI_HAVE_HEADER \
		-o "$dir/mitruth1" "$src" "$@" ||
		{ echo "$me: cc failed on mitruth1.c" >&2; exit 1; }
	(cd "$dir" && env "${vars[@]}" gdb -batch -nx -ex run \
		-ex "gcore $dir/core.tmp" --args "$dir/mitruth1" 2 abort) \
		>"$dir/gdb.log" 2>&1 || true
	[ -s "$dir/core.tmp" ] ||
		{ echo "$me: gdb wrote no core of mitruth1 ($dir)" >&2; exit 1; }
	mv "$dir/core.tmp" "$dir/core"
}

# tool NAME: tests/tools/NAME.c built into FUZZDIR, as the tests' tool()
# would; prints its path.
tool() {
	local bin=$fdir/$1 src=$TOP/tests/tools/$1.c
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] ||
		[ "$TOP/tests/tools/coreelf.h" -nt "$bin" ]; then
		${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$bin.tmp$$" "$src"
		mv -f "$bin.tmp$$" "$bin"
	fi
	echo "$bin"
}
coreloads=$(tool coreloads)

# seed OUT SRC [MAXDATA]: OUT, a slim copy of core SRC (tests/tools/
# coreslim.c: same headers and notes, each segment's data cut to MAXDATA),
# unless OUT is newer than SRC already.
seed() {
	[ "$1" -nt "$2" ] && return 0
	"$(tool coreslim)" "$2" "$1.tmp" ${3:+"$3"}
	mv -f "$1.tmp" "$1"
}

# words: each address of stdin (0x...) as a dictionary entry, 8 bytes
# little-endian (one perl for them all: a start each costs a smoke run
# seconds on a loaded machine).
words() {
	perl -ne 'next unless /(0x[0-9a-fA-F]+)/;
		print "\"", join("", map { sprintf "\\x%02x", $_ }
			unpack("C8", pack("Q<", hex $1))), "\"\n"'
}

# ranges CORE LIBRE: the .ranges of CORE: its writable PT_LOADs with data
# in the file that are anonymous or map a file whose name matches LIBRE.
ranges() {
	local va off fsz flags file
	"$coreloads" "$1" | while read -r va _ off fsz flags file; do
		if [ "$flags" != rw- ] || [ $((fsz)) -eq 0 ]; then continue; fi
		if [ "$file" = - ] || [[ ${file##*/} =~ $2 ]]; then
			printf '%s %s %s at %s\n' "$off" "$fsz" "${file##*/}" "$va"
		fi
	done
}

# nzranges CORE LIBRE: ranges() for a core whose allocator data is
# mostly empty pages (prof1's sampled objects are zero-filled extents of
# 16 KiB and more): of libjemalloc's writable mappings and the anonymous
# ones, only the runs of pages with a non-zero byte; an anonymous
# mapping right behind another module's data (its .bss, the brk heap
# behind the executable's) or behind a no-access page (a thread stack's
# guard) is left out.  The closest runs are merged until there are at
# most 60, patch.h's limit being 64.
nzranges() {
	"$coreloads" "$1" | perl -e '
		my ($core, $libre) = @ARGV;
		open(my $fh, "<:raw", $core) or die "$core: $!\n";
		my ($prev_end, $prev_file, $prev_flags) = (-1, "", "");
		my @runs;   # [file offset, length, what, va]
		while (<STDIN>) {
			my ($va, $msz, $off, $fsz, $flags, $file) = split;
			($va, $msz, $off, $fsz) = map { hex } ($va, $msz, $off, $fsz);
			my $base = $file; $base =~ s{.*/}{};
			my $behind = $va == $prev_end;
			my $keep = $flags eq "rw-" && $fsz > 0 &&
				($file eq "-" ? !($behind &&
					(($prev_file ne "-" && $prev_file !~ /$libre/) ||
					 $prev_flags eq "---"))
				 : $base =~ /$libre/);
			# an anonymous mapping behind a module: its .bss, the module
			# goes on
			$base = $prev_file if $file eq "-" && $behind && $prev_file ne "-";
			($prev_end, $prev_file, $prev_flags) = ($va + $msz, $base, $flags);
			next unless $keep;
			my $what = $base eq "-" ? "anon" : $base;
			my $start;
			for (my $p = 0; $p <= $fsz; $p += 4096) {
				my $nz = 0;
				if ($p < $fsz) {
					my $len = $fsz - $p < 4096 ? $fsz - $p : 4096;
					seek($fh, $off + $p, 0) or die;
					read($fh, my $buf, $len) == $len or die "$core: short\n";
					$nz = $buf =~ /[^\0]/;
				}
				if ($nz && !defined $start) { $start = $p; }
				if (!$nz && defined $start) {
					push @runs, [$off + $start, $p - $start, $what, $va + $start];
					undef $start;
				}
			}
		}
		while (@runs > 60) {
			my $best = 0;
			for my $i (1 .. $#runs - 1) {
				my $g = $runs[$i + 1][0] - $runs[$i][0] - $runs[$i][1];
				my $b = $runs[$best + 1][0] - $runs[$best][0] - $runs[$best][1];
				$best = $i if $g < $b;
			}
			my ($x, $y) = @runs[$best, $best + 1];
			$x->[1] = $y->[0] + $y->[1] - $x->[0];
			splice(@runs, $best + 1, 1);
		}
		printf "0x%x 0x%x %s at 0x%x\n", @$_ for @runs;
	' "$1" "$2"
}

# phdrs CORE: the .ranges line of CORE's program header table (an ELF64
# core: e_phoff at 32, e_phentsize and e_phnum at 54 and 56), for the
# patch harnesses to change how far segments go (patch.h: "phdrs").
phdrs() {
	perl -e '
		open(my $fh, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		read($fh, my $h, 64) == 64 or die "$ARGV[0]: short\n";
		my ($off, $ent, $num) = (unpack("Q<", substr($h, 32, 8)),
			unpack("v", substr($h, 54, 2)), unpack("v", substr($h, 56, 2)));
		die "$ARGV[0]: no program headers\n" unless $ent && $num;
		printf "0x%x 0x%x phdrs (%d program headers)\n",
			$off, $ent * $num, $num;
	' "$1"
}

seeds=$fdir/seeds-$name
dict=$fdir/$name.dict
mkdir -p "$seeds" "$corpus" "$fdir/artifacts-$name"
cp "$TOP/tests/fuzz/$name.dict" "$dict"
extra=()
case $name in
fuzz-core)
	max_len=$((1 << 20))
	# not rereading the corpus directory: a megabyte an input
	extra=(-reload=0)
	for xz in "$TOP"/corpora/aarch64-kernel/*/core.xz; do
		c=$(basename "$(dirname "$xz")")
		out=$seeds/aarch64-$c
		[ "$out" -nt "$xz" ] && continue
		xz -dc "$xz" >"$fdir/unpacked.core"
		# threads8: 9 threads' heaps and stacks, 32 KiB of each
		cap=131072
		if [ "$c" = threads8 ]; then cap=32768; fi
		seed "$out" "$fdir/unpacked.core" $cap
		rm -f "$fdir/unpacked.core"
	done
	# their libc and loader (every aarch64 kernel case has the same)
	sysroot=$fdir/sysroot-aarch64
	tarball=$TOP/corpora/aarch64-kernel/bins1/sysroot/sysroot.tar.xz
	if [ ! -f "$sysroot/.stamp" ] || [ "$tarball" -nt "$sysroot/.stamp" ]; then
		rm -rf "$sysroot"
		mkdir -p "$sysroot"
		tar -xJf "$tarball" -C "$sysroot"
		touch "$sysroot/.stamp"
	fi
	export HW_FUZZ_SYSROOT=$sysroot
	core_of bins1 "$CORPUS/bins1"
	copy_core "$CORPUS/bins1" "$fdir/unpacked.core"
	rm -f "$seeds/bins1"
	seed "$seeds/bins1" "$fdir/unpacked.core"
	rm -f "$fdir/unpacked.core"
	# the same core compressed, as systemd-coredump and people store
	# cores: the unpacking (target/unpack*.c) is fuzzed with the rest
	for z in gzip:gz zstd:zst xz:xz lz4:lz4; do
		packer=${z%%:*} ext=${z#*:}
		if command -v "$packer" >/dev/null && ! [ "$seeds/bins1.$ext" -nt "$seeds/bins1" ]; then
			"$packer" -c <"$seeds/bins1" >"$seeds/bins1.$ext"
		fi
	done
	je=$CORPUS/jemalloc-5.3.0-amd64/basic1
	if [ -f "$je/core" ]; then
		seed "$seeds/jemalloc-basic1" "$je/core"
	fi
	;;
fuzz-ptmalloc | fuzz-jemalloc | fuzz-jeprof | fuzz-tcmalloc | fuzz-tcheapprof | fuzz-mallocng | fuzz-mimalloc | fuzz-mimalloc3)
	max_len=4096
	# every length from the start: a patch takes 7 bytes, and libFuzzer
	# would otherwise creep up from 4-byte inputs over thousands of runs
	extra=(-len_control=0)
	case $name in
	fuzz-ptmalloc)
		dir=$CORPUS/bins1 libre='^(libc\.so\.6|libc-2\..*\.so)$'
		core_of bins1 "$dir"
		;;
	fuzz-jemalloc)
		dir=$CORPUS/jemalloc-5.3.0-amd64/basic1 libre='^libjemalloc'
		core_of basic1 "$dir" jemalloc-5.3.0-amd64
		;;
	fuzz-jeprof)
		dir=$CORPUS/jemalloc-5.3.0-amd64/prof1 libre='^libjemalloc'
		core_of prof1 "$dir" jemalloc-5.3.0-amd64
		;;
	fuzz-tcmalloc)
		[ -f /usr/include/gperftools/tcmalloc.h ] ||
			skip "gperftools is not installed (make deps)"
		dir=$CORPUS/tcmalloc-full-amd64/prof1 libre='^libtcmalloc'
		core_of prof1 "$dir" tcmalloc-full-amd64
		;;
	fuzz-tcheapprof)
		[ -f /usr/include/gperftools/tcmalloc.h ] ||
			skip "gperftools is not installed (make deps)"
		dir=$CORPUS/tcmalloc-full-amd64/heapprof1 libre='^libtcmalloc'
		core_of heapprof1 "$dir" tcmalloc-full-amd64
		;;
	fuzz-mallocng)
		command -v musl-gcc >/dev/null && command -v gdb >/dev/null ||
			skip "musl-gcc or gdb is not installed (make deps)"
		dir=$fdir/ngtruth1.d libre='^ngtruth1$'
		src=$TOP/corpora/musl/ngtruth1.c
		if ! [ -s "$dir/core" ] || [ "$src" -nt "$dir/core" ]; then
			rm -rf "$dir"
			mkdir -p "$dir"
			musl-gcc -std=c11 -O1 -g -static -DNG_STATIC \
				-o "$dir/ngtruth1" "$src" ||
				{ echo "$me: musl-gcc failed" >&2; exit 1; }
			(cd "$dir" && gdb -batch -nx -ex run -ex "gcore $dir/core.tmp" \
				--args "$dir/ngtruth1" 8 abort) >"$dir/gdb.log" 2>&1 || true
			[ -s "$dir/core.tmp" ] ||
				{ echo "$me: gdb wrote no core of ngtruth1" >&2; exit 1; }
			mv "$dir/core.tmp" "$dir/core"
		fi
		;;
	fuzz-mimalloc)
		[ -f /usr/include/mimalloc.h ] && command -v gdb >/dev/null ||
			skip "mimalloc's headers or gdb are not installed (make deps)"
		dir=$fdir/mitruth1.d libre='^libmimalloc'
		mitruth_core "$dir" -- -lmimalloc
		;;
	fuzz-mimalloc3)
		command -v gdb >/dev/null || skip "gdb is not installed (make deps)"
		mi3=${HEAPWALK_MIMALLOC:-$TOP/build/mimalloc}/mimalloc-3.6.0-amd64
		rc=0
		"$TOP/scripts/corpus/mimalloc-libs.sh" mimalloc-3.6.0-amd64 "$mi3" || rc=$?
		[ "$rc" != 77 ] || skip "cannot unpack Debian sid's libmimalloc 3.6.0 here"
		[ "$rc" = 0 ] || { echo "$me: mimalloc-libs.sh failed" >&2; exit 1; }
		milib=$mi3/usr/lib/x86_64-linux-gnu
		dir=$fdir/mitruth3.d libre='^libmimalloc'
		# (32 MiB arenas, not 1 GiB ones: a 190 MB core, not 1.1 GB,
		# held twice by the harness.)
		mitruth_core "$dir" MIMALLOC_ARENA_RESERVE=32MiB -- \
			-I "$mi3/usr/include" -L "$milib" "-Wl,-rpath=$milib" -lmimalloc
		;;
	esac
	copy_core "$dir" "$fdir/$name.core"
	cp "$dir/truth.txt" "$fdir/$name.truth"
	if [ "$name" != fuzz-ptmalloc ] && [ "$name" != fuzz-jemalloc ]; then
		nzranges "$fdir/$name.core" "$libre" >"$fdir/$name.ranges"
	else
		ranges "$fdir/$name.core" "$libre" >"$fdir/$name.ranges"
	fi
	[ -s "$fdir/$name.ranges" ] || { echo "$me: no ranges in $dir/core" >&2; exit 1; }
	phdrs "$fdir/$name.core" >>"$fdir/$name.ranges"
	{
		echo "# the core's own addresses (tests/fuzz/run.sh)"
		{
			while read -r _ _ _ _ va; do echo "$va"; done <"$fdir/$name.ranges"
			# a few chunks the truth knows (user addresses; headers 16
			# below)
			awk '$1 == "alloc" || $1 == "obj" { print $2 }' "$fdir/$name.truth" |
				awk 'NR % 16 == 1' | sed -n 1,24p |
				while read -r a; do
					echo "$a"
					printf '0x%x\n' $((a - 16))
				done
			# prof cases: the sites' code (return addresses in the
			# stacks)
			awk '$1 == "site" { print $3 }' "$fdir/$name.truth"
		} | words
	} >>"$dict"
	# values a program header field may take that the core never has
	cat >>"$dict" <<-'EOF'
	# program header fields (the phdrs range; tests/fuzz/run.sh)
	phdr_2p40="\x00\x00\x00\x00\x00\x01\x00\x00"
	phdr_2p46="\x00\x00\x00\x00\x00\x40\x00\x00"
	phdr_2p63="\x00\x00\x00\x00\x00\x00\x00\x80"
	phdr_page="\x00\x10\x00\x00\x00\x00\x00\x00"
	phdr_64k="\x00\x00\x01\x00\x00\x00\x00\x00"
	phdr_minus_page="\x00\xf0\xff\xff\xff\xff\xff\xff"
	phdr_load_rw="\x01\x00\x00\x00\x06\x00\x00\x00"
	phdr_note="\x04\x00\x00\x00\x04\x00\x00\x00"
	EOF
	printf '\0' >"$seeds/text"
	printf '\1' >"$seeds/json"
	;;
fuzz-heapv2)
	max_len=65536
	dir=$CORPUS/jemalloc-5.3.0-amd64/prof1
	core_of prof1 "$dir" jemalloc-5.3.0-amd64
	copy_core "$dir" "$fdir/$name.core"
	[ -s "$dir/prof.heap" ] || { echo "$me: no prof.heap in $dir" >&2; exit 1; }
	heap=$dir/prof.heap
	cp "$heap" "$seeds/prof1"
	sed '1s|^heap_v2/.*|heap_v2/524288|' "$heap" >"$seeds/period-2e19"
	sed '/^MAPPED_LIBRARIES:/,$d' "$heap" >"$seeds/no-maps"
	awk '/^@/ { n++ } !/^@/ && !/^  t/ && !/^heap_v2/ { n = 99 }
		n <= 3 || n == 99 { print }' "$heap" >"$seeds/half"
	# every address 256 MiB higher: the maps move the stacks back
	perl -pe 'my $m = sub { sprintf "%x", hex($_[0]) + 0x10000000 };
		if (/^@/) { s/0x([0-9a-f]+)/"0x" . $m->($1)/ge }
		elsif (/^([0-9a-f]+)-([0-9a-f]+)( .*)$/s) {
			$_ = $m->($1) . "-" . $m->($2) . $3 }' "$heap" >"$seeds/moved"
	# the names the maps give, as the dictionary's
	sed -n 's|^[0-9a-f]*-[0-9a-f]* .* \(/.*\)$|\1|p' "$heap" | sort -u |
		while read -r f; do printf '"%s"\n' "${f##*/}"; done >>"$dict"
	;;
fuzz-unpack)
	max_len=$((1 << 20))
	# a frame of zeros without a bound is refused after seconds (known:
	# unpack.c bounds what it stores, not the time decoding takes)
	tmo=${FUZZ_TIMEOUT:-30}
	core_of bins1 "$CORPUS/bins1"
	copy_core "$CORPUS/bins1" "$fdir/unpacked.core"
	rm -f "$fdir/$name.slim"
	seed "$fdir/$name.slim" "$fdir/unpacked.core"
	rm -f "$fdir/unpacked.core"
	slim=$fdir/$name.slim
	# each packer without its checksum; zstd also with the content size
	# in the frame (from a file) and without (from a pipe), and two
	# frames end to end; lz4's legacy format too
	pack() { # OUT PACKER ARGS...: stdin packed, unless the tool is missing
		local out=$1 packer=$2
		shift 2
		command -v "$packer" >/dev/null || return 0
		"$packer" "$@" >"$seeds/$out.tmp" && mv -f "$seeds/$out.tmp" "$seeds/$out"
	}
	pack bins1.gz gzip -c <"$slim"
	pack bins1.xz xz -c --check=none <"$slim"
	pack bins1.zst zstd -q -c --no-check <"$slim"
	pack bins1-size.zst zstd -q -c --no-check "$slim"
	pack bins1.lz4 lz4 -q -c --no-frame-crc <"$slim"
	pack bins1-legacy.lz4 lz4 -q -c -l <"$slim"
	head -c 65536 "$slim" >"$fdir/$name.head"
	tail -c +65537 "$slim" >"$fdir/$name.tail"
	for z in gzip:gz zstd:zst xz:xz; do
		packer=${z%%:*}
		command -v "$packer" >/dev/null || continue
		{ "$packer" -c <"$fdir/$name.head"; "$packer" -c <"$fdir/$name.tail"; } \
			>"$seeds/bins1-2frames.${z#*:}"
	done
	rm -f "$fdir/$name.head" "$fdir/$name.tail"
	;;
fuzz-layoutcache)
	# 64 KiB: the most the library reads of a cache file
	max_len=65536
	dir=$CORPUS/bins1
	core_of bins1 "$dir"
	copy_core "$dir" "$fdir/$name.core"
	# the file heapwalk keeps for bins1's libc, its debug line "debug @"
	rc=0
	HW_FUZZ_WRITE_SEEDS=$seeds "$bin" >&2 || rc=$?
	case $rc in
	0) ;;
	77) skip "no struct layouts kept for bins1's libc (libc6-dbg missing?)" ;;
	*) echo "$me: $name could not write its seeds" >&2; exit 1 ;;
	esac
	real=$seeds/real
	# every answer "not found"; every offset a word further (still
	# below its sizeof); sizes at the bound (1 MiB) and past it; the
	# answers in reverse order under the same requests; each line twice,
	# the second's offsets another struct's; the first two lines alone;
	# cut inside a line; another debug file (voids them all); the
	# requests at another address (NEAR)
	sed 's/ = .*/ = none/' "$real" >"$seeds/none"
	perl -pe 'if (/^(\S+ \S+ \S+ = )(\d+)((?: -?\d+)+)$/) {
		my ($k, $sz, @o) = ($1, $2, split " ", $3);
		$_ = $k . join(" ", $sz, map { $_ >= 0 && $_ + 8 < $sz ? $_ + 8 : $_ } @o) . "\n" }' \
		"$real" >"$seeds/shifted"
	perl -pe 's/^(\S+ \S+ \S+ = )\d+/${1}1048576/' "$real" >"$seeds/size-max"
	perl -pe 's/^(\S+ \S+ \S+ = )\d+/${1}1048577/' "$real" >"$seeds/size-past"
	perl -pe 'if (/^(\S+ \S+ \S+ = )(\d+)((?: -?\d+)+)$/) {
		my ($k, $sz, @o) = ($1, $2, split " ", $3);
		$_ = $k . join(" ", $sz, reverse @o) . "\n" }' "$real" >"$seeds/reversed"
	awk 'NR <= 2 { print; next } { print; l[NR] = $0 }
		END { for (i in l) { split(l[i], w, " = "); print w[1] " = 8 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1 0 -1" } }' \
		"$real" >"$seeds/twice"
	sed -n 1,3p "$real" >"$seeds/first"
	head -c "$(($(wc -c <"$real") * 2 / 3))" "$real" >"$seeds/cut"
	sed 's|^debug @$|debug /nonexistent/libc.so.6.debug 1 1.000000000 1|' \
		"$real" >"$seeds/other-debug"
	sed 's/^\(\S*\) [0-9a-f]* /\1 1000 /' "$real" >"$seeds/near"
	;;
fuzz-diffjson)
	max_len=65536
	dir=$CORPUS/cxxgrow1
	core_of cxxgrow1 "$dir"
	copy_core "$dir" "$fdir/$name.core"
	[ -f "$dir/base/core" ] || { echo "$me: no base core in $dir/base" >&2; exit 1; }
	copy_core "$dir/base" "$fdir/$name.base"
	# heapwalk's own saved files of the base core, as a fleet keeps them
	HW_FUZZ_WRITE_SEEDS=$seeds HW_FUZZ_BASE=$fdir/$name.base "$bin" >&2
	rm -f "$fdir/$name.base"
	;;
*)
	echo "$me: no set-up for $name" >&2
	exit 2
	;;
esac

# Replay the kept findings.
regress=$TOP/tests/fuzz/regress/$name
if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
	rdir=$fdir/regress-$name
	rm -rf "$rdir"
	mkdir -p "$rdir"
	for f in "$regress"/*; do
		case $f in
		*.xz) xz -dc "$f" >"$rdir/$(basename "$f" .xz)" ;;
		*) cp "$f" "$rdir/" ;;
		esac
	done
	# replaying a patched core: a range for the harness to accept, unused
	case $name in
	fuzz-core | fuzz-unpack | fuzz-heapv2 | fuzz-diffjson | fuzz-layoutcache) ;;
	*) echo "0x0 0x1 (no patches)" >"$fdir/$name.ranges.whole" ;;
	esac
	# base and cache files: all in one run, the core being read once
	# (libFuzzer names each file as it runs it: the log says which one
	# failed)
	if [ "$name" = fuzz-heapv2 ] || [ "$name" = fuzz-diffjson ] ||
		[ "$name" = fuzz-layoutcache ]; then
		rc=0
		"$bin" -timeout="$tmo" "$rdir"/* >"$rdir.log" 2>&1 || rc=$?
		if [ $rc != 0 ]; then
			tail -n 40 "$rdir.log" >&2
			say "FAIL: a regression input (tests/fuzz/regress/$name) fails again (exit $rc; log $rdir.log)"
			exit 1
		fi
	else
		for f in "$rdir"/*; do
			rc=0
			if [ "$name" = fuzz-core ] || [ "$name" = fuzz-unpack ]; then
				"$bin" -timeout="$tmo" "$f" >"$f.log" 2>&1 || rc=$?
			else
				# the patched core as the core, no patches, text then
				# JSON
				HW_FUZZ_CORE=$f HW_FUZZ_RANGES=$fdir/$name.ranges.whole \
					"$bin" -timeout="$tmo" "$seeds/text" "$seeds/json" \
					>"$f.log" 2>&1 || rc=$?
			fi
			if [ $rc != 0 ]; then
				tail -n 40 "$f.log" >&2
				say "FAIL: regression input ${f##*/} (tests/fuzz/regress/$name) fails again (exit $rc)"
				exit 1
			fi
		done
	fi
	say "$(find "$regress" -type f | wc -l) regression inputs pass"
fi

[ "$secs" -gt 0 ] || exit 0
log=$fdir/$name.log
rc=0
"$bin" -timeout="$tmo" -max_len=$max_len -dict="$dict" -max_total_time="$secs" \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 ${extra[@]+"${extra[@]}"} \
	-artifact_prefix="$fdir/artifacts-$name/" "$corpus" "$seeds" \
	>"$log" 2>&1 || rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
ninputs=$(find "$corpus" -type f | wc -l)
if [ $rc != 0 ]; then
	grep -E '^(==[0-9]+==|SUMMARY|    #[0-9]|.*runtime error:|fuzz harness:|ALARM|artifact_prefix|Test unit written)' "$log" |
		head -n 60 >&2 || true
	say "FAIL: libFuzzer exit $rc after ${runs:-?} runs; input kept in $fdir/artifacts-$name/, log $log"
	exit 1
fi
say "${runs:-?} runs in $secs s (${rate:-?} exec/s), corpus $ninputs inputs"
