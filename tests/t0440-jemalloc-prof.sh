#!/bin/bash
# heapwalk CORE prof: jemalloc heap profiles out of a core, on Debian's
# amd64 libjemalloc2 (built --enable-prof) 5.3.0 and 5.2.1.
#
# The corpus: corpora/jemalloc/prof1.c turns profiling on with every
# allocation sampled (prof:true,lg_prof_sample:0), allocates from a few
# site functions (a call chain, an inlined site, calloc, realloc, a named
# second thread), has jemalloc write its own profile (prof.dump ->
# OUTDIR/prof.heap) and records the true live objects and usable bytes
# per site; prof2.c does the same at the default sample rate (2^19).
# Format of their truth: corpora/jemalloc/proftruth.h.
#
# First, without heapwalk: each program's own profile agrees with its
# truth (the records attributed to a site by the address ranges the truth
# gives sum to its OBJS/BYTES: exactly for prof1; for prof2 within the
# bound below), and tests/tools/heapv2cmp tells the profile from altered
# copies of it (and not from a reordered one).  Then heapwalk, for prof1
# on 5.3.0 and 5.2.1:
#  summary's allocated on prof1 equals jemalloc's stats.allocated (each
#  sampled object at the class it was promoted to), the program's own
#  bytes beside it (tests/prof-lib.sh check_stat_allocated);
#  (a) `prof --format=heap_v2 -o OUT` equals the program's own prof.heap
#      record for record (heapv2cmp);
#  (b) `prof -o OUT` is the same file (heap_v2 is -o's default);
#  (c) `prof --collapsed` (flame-graph input: frames outermost first,
#      ';'-separated, a space, the bytes; `--objects`: the object count):
#      for every truth site, the lines whose last frame is the site's
#      function sum to its BYTES (OBJS): frames are the program's own
#      function names (DWARF/symtab, the inlined site as its own frame
#      under prof_inline_host), allocator frames left out; prof_inner's
#      stack passes main, prof_outer, prof_middle in that order;
#  (d) `prof` (text, like jeprof --text) names every site function;
#  (e) 5.3.0: with the debug file of scripts/jemalloc-symbols.sh
#      (--debug-dir; that part is left out when it cannot be made here)
#      the heap_v2 is the same;
#  (f) prof2 on 5.3.0: heap_v2 equals its own prof.heap, and the
#      collapsed bytes per site are within 15% of the true live bytes.
#      Why 15%: jemalloc samples an object of usable size s with
#      probability p = 1 - exp(-s/R) and counts a sample as s/p bytes, so
#      the estimate of B live bytes has a standard deviation of at most
#      sqrt(R*B) (B/R samples, each carrying relative noise): with
#      R = 512 KiB and B ~ 485 MiB per site (prof2.c) that is <= 3.3%, and
#      15% is 4.5 standard deviations (checked below from the truth);
#  (h) jeprof (libjemalloc-dev's, from the sysroot; perl) reads heapwalk's
#      heap_v2 as it reads the program's own: `jeprof --text` prints the
#      same report for both;
#  (i) `leaks --reachable` on prof1 names each site function in its
#      "allocated at" column (the sampled blocks' stacks);
#  (j) `prof --base` with the program's own prof.heap (a heap_v2 file,
#      addresses moved through its MAPPED_LIBRARIES) and with the core
#      itself as base: nothing changed, no rows; --base with heap_v2
#      output is a usage error; four million empty sites (no counts, or
#      zeros) in the base change nothing and cost no memory each;
#  (k) `diff`: prof2's core against prof1's as its base has a `sites`
#      section: every prof1 site is gone (its before = the truth's OBJS
#      and BYTES, after 0), prof2's sites are new; prof1 against itself:
#      no site changed;
#  (l) `prof --recent` (jemalloc 5.3's last sampled allocations, which
#      prof1 turns on): the -o file equals the program's own
#      experimental.prof_recent.alloc_dump byte for byte, without and
#      with the debug file; the table's live records are the truth's
#      objects (tests/prof-lib.sh check_recent); 5.2.1 and prof2 (none
#      kept) say why there are no records;
#  (m) a core whose mapped files' names hold a newline and terminal
#      escapes (corecraft escape-names): heap_v2's MAPPED_LIBRARIES
#      writes the newline as \012, as the kernel does, so every line
#      there is a mapping;
#  (g) a core without profiling (jemalloc 5.3.0 basic1; glibc bins1):
#      `prof` exits 4 with one error line that says so and points to
#      `leaks` and `sizes`.
# Network on the first run (Debian's packages); skips when it cannot.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
# shellcheck source=tests/prof-lib.sh
. "$(dirname "$0")/prof-lib.sh"
need_cmd awk

heapv2cmp=$(tool heapv2cmp)

# ---- the corpus and its own profiles (no heapwalk) ------------------------

for v in jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64; do
	dir=$(variant_core "$v" prof1)
	check_own_exact "$dir"
	say "$v prof1: jemalloc's own profile matches the truth: $(awk '$1 == "total" { print $2 " objects, " $3 " bytes" }' "$dir/truth.txt")"
done
d53=$CORPUS/jemalloc-5.3.0-amd64/prof1
check_stat_allocated "$d53" "jemalloc 5.3.0 prof1 (every object sampled)" "$d53/core"

# prof2's own estimate: within 15% of the true bytes, and the corpus big
# enough for that bound to be 4.5 standard deviations away.
d2=$(variant_core jemalloc-5.3.0-amd64 prof2)
[ -s "$d2/prof.heap" ] || fail "$d2: the program dumped no prof.heap"
grep -qx 'lg_prof_sample 19' "$d2/truth.txt" || fail "prof2: not at the default sample rate"
own_sites "$d2/truth.txt" "$d2/prof.heap" >"$T/own2"
# within EST TRUE: |EST - TRUE| <= 15% of TRUE.
within() {
	awk -v e="$1" -v t="$2" 'BEGIN { d = e - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.15 * t) }'
}
while read -r name _ _ est; do
	true_b=$(awk -v n="$name" '$1 == "site" && $2 == n { print $6 }' "$d2/truth.txt")
	awk -v b="$true_b" 'BEGIN { exit !(4.5 * sqrt(524288 * b) <= 0.15 * b) }' ||
		fail "prof2 $name: $true_b live bytes are too few for a 15% bound at 4.5 sigma (corpus bug)"
	within "$est" "$true_b" ||
		fail "prof2 $name: jemalloc's own estimate $est is not within 15% of the true $true_b (a 4.5-sigma event, or a corpus bug)"
	say "prof2 $name: jemalloc's own estimate $est bytes, true $true_b"
done <"$T/own2"

# heapv2cmp: equal to itself and to a reordered copy; every alteration
# is a difference, named.
p=$d53/prof.heap
same() {
	"$heapv2cmp" "$p" "$1" >"$T/cmp.out" 2>&1 ||
		{ cat "$T/cmp.out" >&2; fail "heapv2cmp: $2 differs"; }
}
differs() {
	local rc=0
	"$heapv2cmp" "$p" "$1" >"$T/cmp.out" 2>&1 || rc=$?
	[ $rc = 1 ] || { cat "$T/cmp.out" >&2; fail "heapv2cmp: $2: exit $rc, expected 1"; }
	grep -q -- "$3" "$T/cmp.out" || { cat "$T/cmp.out" >&2; fail "heapv2cmp: $2: no '$3' in its report"; }
}
same "$p" "the profile itself"
# Records in reverse order, header thread lines swapped, maps with other
# dev/inode and without the anonymous and non-executable lines.
awk '
	NR <= 2 { print; next }
	!m && /^  t[0-9]/ && !rec { ht[++nh] = $0; next }
	/^@/ { rec++ }
	rec && !m && $0 != "" { r[rec] = r[rec] $0 "\n"; next }
	$0 == "" && !m { for (i = nh; i >= 1; i--) print ht[i]; for (i = rec; i >= 1; i--) printf "%s", r[i]; print; m = 1; next }
	m && /^[0-9a-f]+-/ { if ($6 !~ /^\// || $2 !~ /x/) next; $4 = "ff:ff"; $5 = 4242; print; next }
	{ print }' "$p" >"$T/reordered"
[ "$(grep -c '^@' "$T/reordered")" = "$(grep -c '^@' "$p")" ] || fail "reordering lost records"
same "$T/reordered" "a reordered copy"
sed '1s/.*/heap_v2\/2/' "$p" >"$T/alt"
differs "$T/alt" "another sample period" "sample period"
sed '2s/: \([0-9]*\) \[/: 1\1 [/' "$p" >"$T/alt"
differs "$T/alt" "other totals" "totals"
sed 's/ prof1-worker$/ prof1-other/' "$p" >"$T/alt"
differs "$T/alt" "another thread name" "header thread line"
awk '/^@/ && !done { getline; getline; while ($0 ~ /^  t[0-9]/) getline; done = 1 } { print }' "$p" >"$T/alt"
differs "$T/alt" "a record left out" "only in EXPECTED"
awk '/^@/ && !done { $2 = "0x1234"; done = 1 } { print }' "$p" >"$T/alt"
differs "$T/alt" "a changed PC" "only in ACTUAL"
awk '/^@/ { r++ } r == 1 && /^  t\*: / { sub(/: [0-9]+ \[/, ": 7 [") } { print }' "$p" >"$T/alt"
differs "$T/alt" "a record's other bytes" "t\*: expected"
awk '/^@/ { r++ } r == 1 && /^  t[0-9]+: / && !done { done = 1; next } { print }' "$p" >"$T/alt"
differs "$T/alt" "a record's thread line left out" "only in EXPECTED"
awk '/^MAPPED/ { m = 1 } m && $2 ~ /x/ && $6 ~ /^\// && !done { $3 = "00abc000"; done = 1 } { print }' "$p" >"$T/alt"
differs "$T/alt" "another offset" "mapping"
awk '/^MAPPED/ { m = 1 } m && $2 ~ /x/ && $6 ~ /^\// && !done { done = 1; next } { print }' "$p" >"$T/alt"
differs "$T/alt" "a code mapping left out" "not in ACTUAL"
awk 'NR == 4 { print "  t9: oops" } { print }' "$p" >"$T/alt"
differs "$T/alt" "a malformed line" "malformed"
sed '/^MAPPED_LIBRARIES:/,$d' "$p" >"$T/alt"
differs "$T/alt" "no MAPPED_LIBRARIES" "MAPPED_LIBRARIES"
rc=0
"$heapv2cmp" "$p" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "heapv2cmp with one argument: exit $rc, expected 2"
rc=0
"$heapv2cmp" "$p" "$T/no-such-file" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "heapv2cmp on a missing file: exit $rc, expected 2"
say "heapv2cmp: equal to itself and a reordered copy, 11 alterations found"

# ---- heapwalk -------------------------------------------------------------

need_heapwalk

for v in jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64; do
	dir=$CORPUS/$v/prof1
	core=$dir/core
	# (a) heap_v2 asked for by name, (b) by -o alone.
	hw "$T/a.out" "$T/a.err" "$core" prof --format=heap_v2 -o "$T/a.heap"
	expect_rc 0
	"$heapv2cmp" "$dir/prof.heap" "$T/a.heap" ||
		fail "$v prof1: heapwalk's heap_v2 differs from the program's own prof.heap (core in $dir)"
	hw "$T/b.out" "$T/b.err" "$core" prof -o "$T/b.heap"
	expect_rc 0
	cmp -s "$T/a.heap" "$T/b.heap" ||
		fail "$v prof1: 'prof -o' does not write the same heap_v2 as '--format=heap_v2 -o'"
	# (c) collapsed stacks, bytes and objects.
	hw "$T/c.out" "$T/c.err" "$core" prof --collapsed
	expect_rc 0
	check_sites "$dir" "$T/c.out" "$v prof1 --collapsed" 6
	grep -qE '(^|;)main;(.*;)?prof_outer;prof_middle;prof_inner [0-9]+$' "$T/c.out" ||
		fail "$v prof1: no stack main;...;prof_outer;prof_middle;prof_inner: $(grep prof_inner "$T/c.out" | sed -n 1,2p)"
	grep -qE ';prof_inline_host;prof_site_inline [0-9]+$' "$T/c.out" ||
		fail "$v prof1: the inlined site is not a frame of its own under prof_inline_host: $(grep prof_site_inline "$T/c.out" | sed -n 1,2p)"
	grep -qE ';prof_worker;prof_site_thread [0-9]+$' "$T/c.out" ||
		fail "$v prof1: no stack ...;prof_worker;prof_site_thread: $(grep prof_site_thread "$T/c.out" | sed -n 1,2p)"
	hw "$T/co.out" "$T/co.err" "$core" prof --collapsed --objects
	expect_rc 0
	check_sites "$dir" "$T/co.out" "$v prof1 --collapsed --objects" 5
	# (d) text names every site.
	hw "$T/d.out" "$T/d.err" "$core" prof
	expect_rc 0
	while read -r name; do
		grep -qw -- "$name" "$T/d.out" ||
			fail "$v prof1: the text profile does not name $name: $(head -n 12 "$T/d.out")"
	done < <(awk '$1 == "site" { print $2 }' "$dir/truth.txt")
	say "$v prof1: heap_v2 equals prof.heap; collapsed bytes and objects per site and text agree with the truth"
done

# (e) 5.3.0 with the rebuilt symbol file of libjemalloc.
so=$(readlink -f "$d53/sysroot/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
rc=0
debugfile=$("$TOP/scripts/jemalloc-symbols.sh" "$so" "$CORPUS/jemalloc-symbols" 2>"$T/sym.err") || rc=$?
if [ $rc = 0 ] && [ -f "$debugfile" ]; then
	hw "$T/e.out" "$T/e.err" --debug-dir "$CORPUS/jemalloc-symbols" "$d53/core" prof --format=heap_v2 -o "$T/e.heap"
	expect_rc 0
	"$heapv2cmp" "$d53/prof.heap" "$T/e.heap" ||
		fail "jemalloc 5.3.0 prof1 with --debug-dir: heapwalk's heap_v2 differs from prof.heap"
	say "jemalloc 5.3.0 prof1 with libjemalloc's debug file: heap_v2 equals prof.heap"
	check_recent "$d53" "jemalloc 5.3.0 prof1 --recent with --debug-dir" --debug-dir "$CORPUS/jemalloc-symbols" "$d53/core"
	grep -q '"found_by":"prof_recent_alloc_list (symbol)"' "$T/rj.out" ||
		fail "jemalloc 5.3.0 prof1 --recent with --debug-dir: the list was not read by its symbol: $(head -c 300 "$T/rj.out")"
	say "jemalloc 5.3.0 prof1 with libjemalloc's debug file: prof --recent equals the program's own dump"
else
	say "jemalloc 5.3.0 prof1 with --debug-dir left out: jemalloc-symbols.sh cannot make the debug file here (exit $rc: $(tail -n 1 "$T/sym.err"))"
fi

# (l) the recent-allocation records, found without symbols.
check_recent "$d53" "jemalloc 5.3.0 prof1 --recent" "$d53/core"
read -r live matched freed <"$T/rc.check"
say "jemalloc 5.3.0 prof1: prof --recent -o equals the program's own alloc_dump; $live live records ($matched of them the truth's objects, address, size and site), $freed freed"
for c in "$CORPUS/jemalloc-5.2.1-amd64/prof1:before 5.3" "$CORPUS/jemalloc-5.3.0-amd64/prof2:prof_recent_alloc_max is 0"; do
	hw "$T/l.out" "$T/l.err" "${c%%:*}/core" prof --recent
	expect_rc 0
	grep -q "^recent: *0 records" "$T/l.out" && grep -q "^note: .*${c#*:}" "$T/l.out" ||
		fail "${c%%:*}: prof --recent does not say why there are no records: $(head -n 4 "$T/l.out")"
done

# (f) prof2: the profile itself, then the estimate per site.
hw "$T/f.out" "$T/f.err" "$d2/core" prof --format=heap_v2 -o "$T/f.heap"
expect_rc 0
"$heapv2cmp" "$d2/prof.heap" "$T/f.heap" ||
	fail "jemalloc 5.3.0 prof2: heapwalk's heap_v2 differs from the program's own prof.heap (core in $d2)"
hw "$T/f2.out" "$T/f2.err" "$d2/core" prof --collapsed
expect_rc 0
collapsed_sums "$T/f2.out" >"$T/sums2" || fail "prof2: malformed --collapsed lines"
while read -r name true_b; do
	got=$(awk -v n="$name" '$1 == n { print $2 }' "$T/sums2")
	within "${got:-0}" "$true_b" ||
		fail "prof2 $name: heapwalk estimates ${got:-nothing} bytes, the true live bytes are $true_b (more than 15% off)"
	say "prof2 $name: heapwalk estimates $got bytes, true $true_b"
done < <(awk '$1 == "site" { print $2, $6 }' "$d2/truth.txt")
hw "$T/f3.out" "$T/f3.err" "$d2/core" prof
expect_rc 0
for name in prof2_site_main prof2_site_worker; do
	grep -qw "$name" "$T/f3.out" || fail "prof2: the text profile does not name $name"
done

# (h) jeprof reads heapwalk's file as it reads jemalloc's own.
jeprof=$d53/sysroot/usr/bin/jeprof
if [ -x "$jeprof" ] && command -v perl >/dev/null 2>&1; then
	hw "$T/h.out" "$T/h.err" "$d53/core" prof -o "$T/h.heap"
	expect_rc 0
	(cd "$d53" && "$jeprof" --text ./prog prof.heap) >"$T/h.own" 2>/dev/null ||
		fail "jeprof --text on the program's own prof.heap failed"
	(cd "$d53" && "$jeprof" --text ./prog "$T/h.heap") >"$T/h.ours" 2>/dev/null ||
		fail "jeprof --text on heapwalk's heap_v2 failed"
	grep -q 'Total:' "$T/h.own" || fail "jeprof printed no total: $(head -n 3 "$T/h.own")"
	diff <(grep -v '^Using local file' "$T/h.own") <(grep -v '^Using local file' "$T/h.ours") >&2 ||
		fail "jeprof --text reads heapwalk's heap_v2 differently from the program's own"
	say "jeprof --text: the same report from heapwalk's heap_v2 as from jemalloc's"
	# gdb's gcore leaves code out of its cores (no PT_LOAD for a
	# read-only file mapping): the same core with its code segments
	# made PT_NULL.  MAPPED_LIBRARIES must still give the program's code
	# as r-xp (from its own program headers), or jeprof finds no
	# function at any address.
	edit_loads "$d53/core" "$T/h.gcore.core" '$type = 0 if $flags & 1' ||
		fail "could not make the code-less copy of prof1's core"
	hw "$T/h.g.out" "$T/h.g.err" "$T/h.gcore.core" prof -o "$T/h.g.heap"
	expect_rc 0
	grep -qE "^[0-9a-f]+-[0-9a-f]+ r-xp [0-9a-f]+ 00:00 0 +$d53/prog\$" "$T/h.g.heap" ||
		fail "MAPPED_LIBRARIES of a code-less core has no r-xp line for the program: $(sed -n '/MAPPED/,+4p' "$T/h.g.heap")"
	(cd "$d53" && "$jeprof" --text ./prog "$T/h.g.heap") >"$T/h.g.ours" 2>/dev/null ||
		fail "jeprof --text on heapwalk's heap_v2 of a code-less core failed"
	diff <(grep -v '^Using local file' "$T/h.own") <(grep -v '^Using local file' "$T/h.g.ours") >&2 ||
		fail "jeprof --text reads the heap_v2 of a code-less (gcore-like) core differently"
	say "a core without its code segments (as gcore writes them): MAPPED_LIBRARIES says r-xp, jeprof --text the same"
else
	say "jeprof check left out: no jeprof in the sysroot or no perl"
fi

# (i) leaks: the sampled blocks' allocation sites.
hw "$T/i.out" "$T/i.err" "$d53/core" leaks --reachable
expect_rc 0
for name in prof_site_small prof_site_huge prof_inner prof_site_thread; do
	grep -qE "  $name( |$)" "$T/i.out" ||
		fail "leaks --reachable does not name the site $name: $(grep -m 3 prof_ "$T/i.out")"
done
say "leaks --reachable names the allocation sites of the sampled blocks"

# (j) --base: the same snapshot as base, as a heap_v2 file and as a core.
for base in "$d53/prof.heap" "$d53/core"; do
	hw "$T/j.out" "$T/j.err" "$d53/core" prof --base "$base"
	expect_rc 0
	grep -qE '^change: +0 B$' "$T/j.out" ||
		fail "prof --base $base: the change is not 0: $(grep -m 1 change "$T/j.out")"
	[ "$(sed -n '/ flat /,$p' "$T/j.out" | wc -l)" -le 1 ] ||
		fail "prof --base $base: rows listed where nothing changed: $(sed -n '/ flat /,$p' "$T/j.out" | sed -n 1,3p)"
done
hw "$T/j.out" "$T/j.err" "$d53/core" prof --base "$d53/prof.heap" -o "$T/j.heap"
expect_rc 2
# The same base with four million empty sites after its header (half of
# them "@" lines with no counts, half with counts of zero: 12 MB) takes
# nothing away and costs no memory per site (it took 870 MB).
perl -e 'my $n = 0; while (<>) { print; if (!$n++) { print "\@\n" x 2097152; print "\@ 1 2\n  t*: 0: 0 [0: 0]\n" x 2097152; } }' \
	"$d53/prof.heap" >"$T/j.empty.heap"
hw "$T/j.out" "$T/j.err" --stats "$d53/core" prof --base "$T/j.empty.heap"
expect_rc 0
grep -qE '^change: +0 B$' "$T/j.out" ||
	fail "prof --base with empty sites: the change is not 0: $(grep -m 1 change "$T/j.out")"
own=$(sed -n "s/.*heapwalk's own (anonymous, sampled) \([0-9.]*\) MiB.*/\1/p" "$T/j.err")
[ -n "$own" ] && awk -v m="$own" 'BEGIN { exit !(m < 200) }' ||
	fail "prof --base with four million empty sites: heapwalk's own memory ${own:-?} MiB: $(tail -n 1 "$T/j.err")"
rm -f "$T/j.empty.heap"
say "prof --base: the snapshot against itself (heap_v2 file, core) changed nothing; four million empty sites in the base: $own MiB"

# (m) A mapped file's name holding a newline (and terminal escapes) in
# the core: heap_v2's MAPPED_LIBRARIES writes it as the kernel does
# (\012), so that no line of it is forged; every line there is a mapping.
"$(tool corecraft)" escape-names "$d53/core" "$T/k.core" >/dev/null ||
	fail "corecraft escape-names failed on $d53/core"
hw "$T/k.heap" "$T/k.err" "$T/k.core" prof --format=heap_v2
expect_rc 0
sed -n '/^MAPPED_LIBRARIES:/,$p' "$T/k.heap" | sed 1d >"$T/k.maps"
[ -s "$T/k.maps" ] || fail "heap_v2 of the escape-names core has no MAPPED_LIBRARIES"
! grep -aqvE '^[0-9a-f]+-[0-9a-f]+ [-r][-w][-x][ps] ' "$T/k.maps" ||
	fail "heap_v2: a MAPPED_LIBRARIES line is no mapping: $(grep -a -m1 -vE '^[0-9a-f]+-[0-9a-f]+ ' "$T/k.maps" | od -c | sed -n 1,2p)"
grep -aqF '\012' "$T/k.maps" || fail "heap_v2: no path shows its newline as \\012"
rm -f "$T/k.core"
say "prof heap_v2: a newline in a mapped file's name written as \\012"

# (k) diff per allocation site.
hw "$T/k.out" "$T/k.err" --json "$d2/core" diff "$d53/core"
expect_rc 0
while read -r name objs bytes; do
	row=$(grep -o "{[^{}]*\"stack\":\"[^\"]*;$name\"}" "$T/k.out" | sed -n 1,1p)
	[ -n "$row" ] || fail "diff: no site row for $name: $(head -c 300 "$T/k.out")"
	case $row in
	*"\"objects_before\":$objs,"*"\"objects_after\":0,"*"\"bytes_before\":$bytes,"*"\"bytes_after\":0,"*) ;;
	*) fail "diff: $name's row is not $objs objects / $bytes bytes before and none after: $row" ;;
	esac
done < <(awk '$1 == "site" { print $2, $5, $6 }' "$d53/truth.txt")
grep -q '"stack":"[^"]*;prof2_site_main"' "$T/k.out" || fail "diff: prof2's site prof2_site_main is not a row"
hw "$T/k2.out" "$T/k2.err" "$d53/core" diff "$d53/core"
expect_rc 0
grep -q '(no allocation site changed)' "$T/k2.out" ||
	fail "diff of a core against itself: allocation sites changed: $(tail -n 5 "$T/k2.out")"
say "diff: allocation sites compared (prof1's gone with their recorded counts, prof2's new; none against itself)"

# (g) no profile: one line, exit 4, pointing to leaks and sizes.
no_profile() {
	local core=$1 what=$2
	hw "$T/g.out" "$T/g.err" "$core" prof
	expect_rc 4
	one_error_line "$T/g.err" "$what"
	if ! grep -q 'prof' "$T/g.err" || ! grep -qw 'leaks' "$T/g.err" ||
		! grep -qw 'sizes' "$T/g.err"; then
		fail "$what: the error line does not say prof and point to leaks and sizes: $(cat "$T/g.err")"
	fi
	[ ! -s "$T/g.out" ] || fail "$what: prof printed something on stdout without a profile"
}
dir=$(jemalloc_truth jemalloc-5.3.0-amd64 basic1)
no_profile "$dir/core" "jemalloc 5.3.0 basic1 (no prof)"
dir=$(corpus_core bins1)
no_profile "$dir/core" "glibc bins1"
say "cores without a profile: exit 4 and one line pointing to leaks and sizes"
