#!/bin/bash
# heapwalk CORE prof on gperftools tcmalloc's sampled profile: Debian's
# full library (libtcmalloc.so.4, stripped; the minimal one is built
# without sampling), corpora/tcmalloc/prof1.cc run with
# TCMALLOC_SAMPLE_PARAMETER=4096 (prof1.env).  The program allocates from
# site functions in two threads, frees a third of it, has tcmalloc write
# its own heap sample (MallocExtension::GetHeapSample -> prof.heap) and
# records every live object (address, request, tc_malloc_size, site) and
# each site's code range.  With --no-debuginfo, as without, the checks:
#  (a) `prof -o FILE` (gperftools' format is -o's default on tcmalloc) is
#      tcmalloc's own file byte for byte up to MAPPED_LIBRARIES, and
#      every executable mapping tcmalloc listed there is in ours (same
#      range, offset and path);
#  (b) `prof --collapsed`: for each site, the lines whose last frame is
#      the site function sum to what pprof makes of tcmalloc's own file:
#      each entry of B bytes scaled by 1 / (1 - exp(-B / 4096)), summed
#      over the entries whose stack passes through the site's code
#      (within a byte per entry, rounding); chain_inner's stack passes
#      chain_outer and chain_middle;
#  (c) `prof` (text) names every site function;
#  (d) `chunks`: every live object of the truth is a block in use at its
#      address, of its tc_malloc_size (a sampled small object has a span
#      of its own, but its usable size is its request's class);
#  (e) `leaks --reachable`: as many blocks are "allocated at" each site
#      as tcmalloc's file has entries from it;
#  (f) `prof --format=pprof` is a gzip file; --base with a file format is
#      a usage error (exit 2);
#  (g) the minimal library (t0460's basic1 core): `prof` exits 4 and says
#      the library is built without sampling;
#  (h) heapprof1.cc: prof1 with gperftools' heap profiler on instead
#      (HeapProfilerStart: every allocation recorded), which writes the
#      profiler's own GetHeapProfile to prof.heap: `prof -o` is that file
#      byte for byte up to MAPPED_LIBRARIES (with --no-debuginfo too: the
#      table is found by its shape), each site function's text row is the
#      truth's live bytes exactly, and `leaks --reachable` names every
#      live object of the truth with its own site.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd awk gzip
[ -f /usr/include/gperftools/tcmalloc.h ] ||
	skip "gperftools is not installed (make deps: libgoogle-perftools-dev)"

dir=$(variant_core tcmalloc-full-amd64 prof1)
own=$dir/prof.heap
[ -s "$own" ] || fail "prof1 left no profile of tcmalloc's own"
period=$(sed -n 's/^sample_parameter //p' "$dir/truth.txt")
head -n1 "$own" | has "@ heap_v2/$period\$" ||
	fail "tcmalloc's own profile is not sampled every $period bytes: $(head -n1 "$own")"

# awk: hex() of "0x..." as a number (48-bit addresses are exact).
AWK_HEX='function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
	return v }'

# The entries of a gperftools file passing through each site: "NAME
# ENTRIES SCALED_BYTES".
site_sums() {
	awk -v period="$period" "$AWK_HEX"'
	FNR == NR { if ($1 == "site") { n++; name[n] = $2; lo[n] = hex($3); hi[n] = hex($4) } next }
	/^MAPPED_LIBRARIES:/ { exit }
	FNR > 1 && /@/ {
		split($0, half, "@"); split(half[1], c, /[: \[\]]+/)
		bytes = c[3] + 0
		np = split(half[2], pc, " ")
		for (k = 1; k <= n; k++)
			for (j = 1; j <= np; j++) {
				a = hex(pc[j])
				if (a >= lo[k] && a < hi[k]) {
					cnt[k]++
					sc[k] += bytes / (1 - exp(-bytes / period))
					break
				}
			}
	}
	END { for (k = 1; k <= n; k++) printf "%s %d %.0f\n", name[k], cnt[k], sc[k] }
	' "$dir/truth.txt" "$1"
}
site_sums "$own" >"$T/own.sums"
while read -r name n _; do
	[ "$n" -gt 0 ] || fail "tcmalloc sampled nothing from $name: the corpus proves nothing there"
done <"$T/own.sums"

for mode in debug nodebug; do
	opt=()
	[ $mode = debug ] || opt=(--no-debuginfo)
	o=$T/$mode
	# (a)
	hw "$o.out" "$o.err" "${opt[@]}" "$dir/core" prof -o "$o.heap"
	expect_rc 0
	sed '/^MAPPED_LIBRARIES:/,$d' "$own" >"$o.own.head"
	sed '/^MAPPED_LIBRARIES:/,$d' "$o.heap" >"$o.head"
	cmp -s "$o.own.head" "$o.head" ||
		{ diff "$o.own.head" "$o.head" | sed -n 1,20p; fail "$mode: prof -o differs from tcmalloc's own GetHeapSample"; }
	sed '1,/^MAPPED_LIBRARIES:/d' "$own" | awk '$2 ~ /x/ && $6 != "" { print $1, $3, $6 }' >"$o.own.maps"
	sed '1,/^MAPPED_LIBRARIES:/d' "$o.heap" | awk '{ print $1, $3, $6 }' >"$o.maps"
	[ -s "$o.own.maps" ] || fail "tcmalloc's own profile lists no executable mapping"
	while read -r range off path; do
		grep -qxF "$range $off $path" "$o.maps" ||
			fail "$mode: MAPPED_LIBRARIES lacks $range $off $path"
	done <"$o.own.maps"
	# (b)
	hw "$o.col" "$o.col.err" "${opt[@]}" "$dir/core" prof --collapsed
	expect_rc 0
	while read -r name n want; do
		got=$(awk -v s="$name" '{ k = split($1, f, ";"); if (f[k] == s) b += $2 } END { print b + 0 }' "$o.col")
		awk -v g="$got" -v w="$want" -v n="$n" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= n) }' ||
			fail "$mode: collapsed gives $name $got bytes, pprof's scaling of tcmalloc's file $want"
	done <"$T/own.sums"
	grep -q '^\(.*;\)\?chain_outer;chain_middle;chain_inner ' "$o.col" ||
		fail "$mode: chain_inner's stack does not pass chain_outer, chain_middle"
	# (c)
	hw "$o.text" "$o.text.err" "${opt[@]}" "$dir/core" prof
	expect_rc 0
	while read -r name _; do
		grep -q " $name " "$o.text" || fail "$mode: prof's text does not name $name"
	done <"$T/own.sums"
	grep -q "^sampling: *one sample every $period bytes" "$o.text" ||
		fail "$mode: prof does not say the period: $(head -3 "$o.text")"
done
say "prof -o is tcmalloc's own GetHeapSample ($(grep -c '@ 0x' "$own") samples); collapsed sums are pprof's scaling of it for $(wc -l <"$T/own.sums") sites; with and without debug info"

# (d)
hw "$T/chunks" "$T/chunks.err" --json "$dir/core" chunks
expect_rc 0
awk "$AWK_HEX"'
FNR == NR { if (match($0, /"addr":"0x[0-9a-f]*"/)) { a = substr($0, RSTART + 8, RLENGTH - 9)
	if (match($0, /"size":[0-9]*/)) sz[a] = substr($0, RSTART + 7, RLENGTH - 7)
	st[a] = ($0 ~ /"state":"used"/) }
	next }
$1 == "obj" { n++; if (!($2 in sz) || sz[$2] != $4 || !st[$2]) { bad++; if (bad < 5) print "object " $2 " (" $4 " usable): " (($2 in sz) ? sz[$2] : "no block") > "/dev/stderr" } }
END { print n, bad + 0; exit bad > 0 }' "$T/chunks" "$dir/truth.txt" >"$T/objs" ||
	fail "chunks disagrees with the truth's objects"
say "chunks: $(cut -d' ' -f1 "$T/objs") live objects at their addresses and tc_malloc_size"

# (e)
hw "$T/leaks" "$T/leaks.err" --json "$dir/core" leaks --reachable
expect_rc 0
while read -r name n _; do
	got=$(grep -c "\"site\":\"$name\\( \\|\"\\)" "$T/leaks" || true)
	[ "$got" = "$n" ] ||
		fail "leaks names $name for $got blocks, tcmalloc sampled $n there"
done <"$T/own.sums"
say "leaks: each sampled block allocated at its site"

# (f)
hw "$T/pp.out" "$T/pp.err" "$dir/core" prof --format=pprof -o "$T/pp.pb.gz"
expect_rc 0
gzip -t "$T/pp.pb.gz" || fail "prof --format=pprof is not a gzip file"
hw "$T/base.out" "$T/base.err" "$dir/core" prof -o "$T/b.heap" --base "$dir/core"
expect_rc 2

# (g)
mdir=$(variant_core tcmalloc-minimal-amd64 basic1)
hw "$T/min.out" "$T/min.err" "$mdir/core" prof
expect_rc 4
grep -q "built without sampling" "$T/min.err" ||
	fail "prof on the minimal library does not say it cannot sample: $(cat "$T/min.err")"
say "pprof output is gzip; --base with a file format refused; the minimal library says it cannot sample"

# (h)
hdir=$(variant_core tcmalloc-full-amd64 heapprof1)
grep -q '@ heapprofile$' "$hdir/prof.heap" ||
	fail "heapprof1 left no heap profiler table: $(head -n1 "$hdir/prof.heap")"
sed '/^MAPPED_LIBRARIES:/,$d' "$hdir/prof.heap" >"$T/hp.own"
for opt in "" --no-debuginfo; do
	hw "$T/hp.out" "$T/hp.err" $opt "$hdir/core" prof -o "$T/hp.heap"
	expect_rc 0
	sed '/^MAPPED_LIBRARIES:/,$d' "$T/hp.heap" >"$T/hp.ours"
	cmp -s "$T/hp.own" "$T/hp.ours" ||
		{ diff "$T/hp.own" "$T/hp.ours" | sed -n 1,10p; fail "prof -o ${opt:-(with debug info)} differs from the heap profiler's own GetHeapProfile"; }
done
hw "$T/hp.json" "$T/hp.json.err" --json "$hdir/core" prof
expect_rc 0
tr '{' '\n' <"$T/hp.json" >"$T/hp.rows"
while read -r _ name _ _ _ bytes; do
	grep -q "^\"flat\":$bytes,.*\"function\":\"$name\"" "$T/hp.rows" ||
		fail "heap profiler: prof does not give $name its $bytes live bytes exactly"
done < <(grep '^site ' "$hdir/truth.txt")
hw "$T/hp.leaks" "$T/hp.leaks.err" --json "$hdir/core" leaks --reachable
expect_rc 0
awk 'FNR == NR { if (match($0, /"addr":"0x[0-9a-f]*"/)) { a = substr($0, RSTART + 8, RLENGTH - 9); s = ""
		if (match($0, /"site":"[a-z_]*/)) s = substr($0, RSTART + 8, RLENGTH - 8); site[a] = s }
	next }
$1 == "obj" { n++; if (site[$2] != $5) { bad++; if (bad < 5) print "object " $2 " of " $5 ": " site[$2] > "/dev/stderr" } }
END { print n, bad + 0; exit bad > 0 }' "$T/hp.leaks" "$hdir/truth.txt" >"$T/hp.objs" ||
	fail "heap profiler: leaks does not name every object's site"
say "heap profiler: prof -o is GetHeapProfile's own table; every site's live bytes exact; leaks names the site of all $(cut -d' ' -f1 "$T/hp.objs") live objects"
