#!/bin/bash
# `map -o FILE`: the heap as an SVG picture, checked against the corpus
# programs' own truth, never against heapwalk's other reports:
#  - the file is well-formed XML (xmllint) and renders (rsvg-convert makes
#    a PNG of the picture's size);
#  - each strip (a <g class="strip"> with data-start/data-end) is tiled
#    exactly by its rectangles (data-addr, data-bytes, in address order,
#    no gap, no overlap), and a rectangle's data-mix (bytes per state,
#    when it covers several) adds up to its data-bytes;
#  - glibc bins1 (one arena): the heap strips hold mallinfo2's arena bytes
#    (main_arena's system_mem), the mmapped ones hblkhd in hblks chunks;
#    bytes per state: heap + tcache + tcache-struct = uordblks (a tcache
#    chunk is in use to mallinfo), fastbin + the bins + top = fordblks,
#    fastbin = fsmblks,
#    top = keepcost; every recorded allocation lies in a strip of its kind;
#  - jemalloc 5.3 basic1: per arena, the slab, slab-free, tcache and large
#    bytes are the truth's slabs (CURSLABS x slab size) and large extents
#    (CURLEXTENTS x (size + a page: jemalloc's cache-oblivious pad)),
#    adding up to stats.active; slab-free per arena = the free regions of
#    those slabs; retained = stats.retained; dirty + muzzy <= stats.mapped
#    - stats.active;
#  - the SVG stays small: at most 1024 rectangles a row; its head names
#    the allocator and gives frag's figures and the scale;
#  - without -o the SVG is the report itself, byte for byte the file's;
#    --json with -o describes what was drawn; bad arguments exit 2.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
need_heapwalk
need_cmd xmllint rsvg-convert file

# rects SVG: one line per rectangle of a strip: "arena kind state bytes
# addr chunks mix y" (mix "-" when it covers one state), and one per strip:
# "strip arena kind start end"; attributes are read by name.  The writer
# puts each element on a line of its own.
rects() {
	awk '
	function attr(s, name,   m) {
		if (match(s, " " name "=\"[^\"]*\"")) {
			m = substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
			return m
		}
		return ""
	}
	/<g class="strip"/ {
		arena = attr($0, "data-arena"); kind = attr($0, "data-kind")
		print "strip", arena, kind, attr($0, "data-start"), attr($0, "data-end")
		next
	}
	/<rect / && / data-bytes="/ {
		mix = attr($0, "data-mix"); gsub(/ /, ",", mix)
		print arena, kind, attr($0, "data-state"), attr($0, "data-bytes"),
			attr($0, "data-addr"), attr($0, "data-chunks"),
			(mix == "" ? "-" : mix), attr($0, "y")
	}' "$1"
}

# tiles RECTS: every strip is covered exactly by its rectangles, and each
# mix adds up to its rectangle's bytes.
tiles() {
	awk '
	function hex(s,   i, v, c) {
		v = 0
		s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	function done() {
		if (have && at != end) { print "strip " s ": rectangles end at " at ", the strip at " end; bad = 1 }
	}
	$1 == "strip" { done(); s = $4 "-" $5; at = hex($4); end = hex($5); have = 1; next }
	{
		a = hex($5)
		if (a != at) { print "strip " s ": rectangle at " $5 ", expected " at; bad = 1 }
		at = a + $4
		if ($7 != "-") {
			n = split($7, kv, ","); sum = 0
			for (i = 1; i <= n; i++) { split(kv[i], p, ":"); sum += p[2] }
			if (sum != $4) { print "rectangle " $5 ": mix " $7 " is not " $4 " bytes"; bad = 1 }
		}
	}
	END { done(); exit bad }' "$1"
}

# per RECTS: "arena kind state bytes" summed, each mix split by state.
per() {
	awk '$1 != "strip" {
		if ($7 == "-") { b[$1 " " $2 " " $3] += $4; next }
		n = split($7, kv, ",")
		for (i = 1; i <= n; i++) { split(kv[i], p, ":"); b[$1 " " $2 " " p[1]] += p[2] }
	} END { for (k in b) print k, b[k] }' "$1"
}

# sum PER [ARENA|*] [KIND|*] STATE...: bytes of those states.
sum() {
	local f=$1 a=$2 k=$3
	shift 3
	awk -v a="$a" -v k="$k" -v states=" $* " '
		(a == "*" || $1 == a) && (k == "*" || $2 == k) &&
		index(states, " " $3 " ") { s += $4 }
		END { printf "%d\n", s }' "$f"
}

# check_common SVG NAME: well-formed, renders, bounded, tiled.
check_common() {
	local svg=$1 name=$2 w h rows nrect
	xmllint --noout "$svg" || fail "$name: the SVG is not well-formed XML"
	rsvg-convert -o "$T/$name.png" "$svg" || fail "$name: rsvg-convert cannot render it"
	[ -s "$T/$name.png" ] || fail "$name: rsvg-convert made an empty PNG"
	w=$(sed -n 's/^<svg [^>]* width="\([0-9]*\)".*/\1/p' "$svg")
	h=$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$svg")
	file "$T/$name.png" | has "PNG image data, $w x $h," ||
		fail "$name: the PNG is not the picture's ${w}x$h: $(file "$T/$name.png")"
	rects "$svg" >"$T/$name.rects"
	tiles "$T/$name.rects" || fail "$name: rectangles do not tile the strips"
	nrect=$(grep -vc '^strip' "$T/$name.rects")
	rows=$(awk '$1 == "strip" { s = $4; next } { r[s " " $8] = 1 }
		END { print length(r) }' "$T/$name.rects")
	[ "$nrect" -gt 0 ] || fail "$name: no rectangles"
	[ "$nrect" -le $((1024 * rows)) ] ||
		fail "$name: $nrect rectangles in $rows rows: more than 1024 a row"
	grep -q 'frag [0-9.]*%' "$svg" || fail "$name: no fragmentation figure in the head"
	grep -q 'a pixel' "$svg" || fail "$name: the scale is not said"
	per "$T/$name.rects" >"$T/$name.per"
}

truth_val() { # FILE KEY...: the value of the truth line "KEY... VALUE"
	local f=$1
	shift
	awk -v k="$*" '{ v = $NF; $NF = ""; sub(/ $/, "") } $0 == k { print v; f = 1 }
		END { if (!f) print "missing" }' "$f"
}

want() { # WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: the picture has $2, the truth $3"
}

# ---- glibc: bins1 -----------------------------------------------------------
dir=$(corpus_core bins1)
corpus_copy "$dir" "$T"
tr=$T/truth.txt
hw "$T/pm.out" "$T/pm.err" "$T/core" map -o "$T/pm.svg"
expect_rc 0
grep -q "^wrote: *$T/pm.svg" "$T/pm.out" || fail "bins1: no 'wrote:' line: $(cat "$T/pm.out")"
check_common "$T/pm.svg" pm
grep -q '>ptmalloc ' "$T/pm.svg" || fail "bins1: the head does not name ptmalloc"
p=$T/pm.per
all=(heap mmapped tcache fastbin unsorted smallbin largebin top unbinned tcache-struct unknown)
want "heap strips" "$(sum "$p" '*' heap "${all[@]}")" "$(truth_val "$tr" mallinfo2 arena)"
want "mmapped strips" "$(sum "$p" '*' mmapped "${all[@]}")" "$(truth_val "$tr" mallinfo2 hblkhd)"
want "mmapped bytes" "$(sum "$p" '*' '*' mmapped)" "$(truth_val "$tr" mallinfo2 hblkhd)"
want "heap + tcache bytes" "$(sum "$p" '*' '*' heap tcache tcache-struct)" "$(truth_val "$tr" mallinfo2 uordblks)"
want "free bytes" "$(sum "$p" '*' '*' fastbin unsorted smallbin largebin top unbinned)" \
	"$(truth_val "$tr" mallinfo2 fordblks)"
want "fastbin bytes" "$(sum "$p" '*' '*' fastbin)" "$(truth_val "$tr" mallinfo2 fsmblks)"
want "top bytes" "$(sum "$p" '*' '*' top)" "$(truth_val "$tr" mallinfo2 keepcost)"
want "mmapped chunks" "$(awk '$2 == "mmapped" { n += $6 } END { print n + 0 }' "$T/pm.rects")" \
	"$(truth_val "$tr" mallinfo2 hblks)"
want "arenas" "$(awk '$1 == "strip" { a[$2] = 1 } END { print length(a) }' "$T/pm.rects")" 1
# Every recorded allocation (its header, 16 bytes before the pointer) is in
# a strip of its kind.
awk '$1 == "strip" { print $3, $4, $5 }' "$T/pm.rects" >"$T/pm.strips"
awk '$1 == "alloc" && $5 != "merged" { print ($5 == "mmapped" ? "mmapped" : "heap"), $2 }' "$tr" |
	awk 'function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	NR == FNR { k[NR] = $1; lo[NR] = hex($2); hi[NR] = hex($3); n = NR; next }
	{ a = hex($2) - 16; ok = 0
	  for (i = 1; i <= n; i++) if (k[i] == $1 && a >= lo[i] && a < hi[i]) ok = 1
	  if (!ok) { print "allocation " $2 " (" $1 ") is in no " $1 " strip"; bad = 1 } }
	END { exit bad }' "$T/pm.strips" - || fail "bins1: allocations outside the picture"
say "bins1: $(grep -vc '^strip' "$T/pm.rects") rectangles agree with mallinfo2"

# Without -o the SVG is the report; --json describes what -o drew.
hw "$T/pm.stdout" "$T/pm.err" "$T/core" map
expect_rc 0
cmp -s "$T/pm.stdout" "$T/pm.svg" || fail "bins1: map without -o differs from the file -o wrote"
hw "$T/pm.json" "$T/pm.err" --json "$T/core" map -o "$T/pm2.svg"
expect_rc 0
grep -q "^{\"written\":\"$T/pm2.svg\",\"strips\":[0-9]*," "$T/pm.json" ||
	fail "bins1: --json map -o: $(head -c 300 "$T/pm.json")"
grep -q '"states":{.*"top":'"$(truth_val "$tr" mallinfo2 keepcost)" "$T/pm.json" ||
	fail "bins1: --json map: states lack top = keepcost: $(cat "$T/pm.json")"
hw "$T/pm.json2" "$T/pm.err" --json "$T/core" map
expect_rc 0
grep -q '^{"svg":"<?xml' "$T/pm.json2" || fail "bins1: --json map without -o: $(head -c 100 "$T/pm.json2")"
for bad in "-o" "--bogus" "-o $T/no/such/dir/x.svg"; do
	# shellcheck disable=SC2086 # bad holds the words
	hw "$T/bad.out" "$T/bad.err" "$T/core" map $bad
	case $bad in
	*/no/such/dir/*) expect_rc 3 ;; # output that cannot be written
	*) expect_rc 2 ;;
	esac
	grep -q '^heapwalk: map: ' "$T/bad.err" || fail "map $bad: $(cat "$T/bad.err")"
done

# ---- jemalloc 5.3: basic1 ---------------------------------------------------
dir=$(jemalloc_truth jemalloc-5.3.0-amd64 basic1)
tr=$dir/truth.txt
hw "$T/je.out" "$T/je.err" --no-debuginfo "$dir/core" map -o "$T/je.svg"
expect_rc 0
check_common "$T/je.svg" je
grep -q '>jemalloc 5\.3\.0' "$T/je.svg" || fail "basic1: the head does not name jemalloc 5.3.0"
p=$T/je.per
page=$(truth_val "$tr" config arenas.page)
# Per arena from the truth: slab bytes, free slab bytes, large extents.
awk -v page="$page" '
	$1 == "binfo" { ss[$2] = $5; nr[$2] = $4 }
	$1 == "bin" { slab[$2] += $6 * ss[$3]; fr[$2] += ($6 * nr[$3] - $5) * $4; a[$2] = 1 }
	$1 == "large" { lg[$2] += $5 * ($4 + page); a[$2] = 1 }
	END { for (k in a) printf "%s %d %d\n", k, slab[k] + lg[k], fr[k] }' "$tr" |
	sort -n >"$T/je.truth"
[ -s "$T/je.truth" ] || fail "basic1: no bin or large lines in the truth"
active=0
while read -r arena act slabfree; do
	want "arena $arena active bytes" "$(sum "$p" "$arena" '*' slab slab-free tcache large)" "$act"
	want "arena $arena free slab bytes" "$(sum "$p" "$arena" '*' slab-free)" "$slabfree"
	active=$((active + act))
done <"$T/je.truth"
want "active bytes" "$(sum "$p" '*' '*' slab slab-free tcache large)" "$(truth_val "$tr" stat active)"
want "active bytes (the truth's own arenas)" "$active" "$(truth_val "$tr" stat active)"
want "retained bytes" "$(sum "$p" '*' '*' retained)" "$(truth_val "$tr" stat retained)"
dm=$(sum "$p" '*' '*' dirty muzzy)
[ "$dm" -le $(($(truth_val "$tr" stat mapped) - $(truth_val "$tr" stat active))) ] ||
	fail "basic1: dirty + muzzy $dm is more than stats.mapped - stats.active"
say "basic1: $(grep -vc '^strip' "$T/je.rects") rectangles agree with jemalloc's stats"
