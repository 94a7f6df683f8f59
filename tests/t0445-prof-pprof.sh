#!/bin/bash
# heapwalk CORE prof --format=pprof: the heap profile as pprof's gzipped
# profile.proto, already symbolized, on Debian's amd64 libjemalloc2
# 5.3.0 and 5.2.1 (built --enable-prof).
#
# The corpus is t0440's: corpora/jemalloc/prof1.c samples every
# allocation (lg_prof_sample:0), so the counts are exact; it has jemalloc
# write its own profile (prof.heap, heap_v2) just before it crashes and
# records its allocation sites (truth.txt).  Checked against those:
#  (a) the file is gzip, and `protoc --decode` with the schema
#      (libheapwalk/commands/prof/pprof.proto) parses it; `protoc --decode_raw`
#      (no schema) finds pprof's field numbers: strings in field 6,
#      period in 12, locations in 4 with their address in 3;
#  (b) sample types inuse_objects/count and inuse_space/bytes, period
#      type space/bytes, period 1;
#  (c) record for record: each sample is one of prof.heap's `@` records,
#      its locations' addresses the record's return addresses less the
#      leading ones inside libjemalloc's code (as jeprof drops them), its
#      values the record's `t*:` objects and bytes; so the values sum to
#      prof.heap's `t*:` totals;
#  (d) every truth site's function is a Function, named by a location
#      in the program's mapping with its source file and a line; the
#      inlined site is the first line of a location whose next line is
#      prof_inline_host (inline frames innermost first);
#  (e) every location lies inside its mapping; mapping 1 is the program
#      and says it has functions; a build id is given for it;
#  (t) each sample has one label `thread` per thread line of its record
#      (the thread's name, else tUID): as many labels as prof.heap has
#      tN: lines under its counting records, and prof1-worker's among
#      them;
#  (f) without -o the same bytes go to stdout;
#  (g) `go tool pprof -raw` reads it and names the sites, when go is
#      installed (else said and left out).
# Network on the first run (Debian's packages); skips when it cannot.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
# shellcheck source=tests/prof-lib.sh
. "$(dirname "$0")/prof-lib.sh"   # AWK_HEX
need_heapwalk
need_cmd awk gzip protoc

schema_dir=$TOP/libheapwalk/commands/prof

# flat DECODED: protoc's text form of a Profile as lines (numbers in
# decimal, strings resolved):
#   type NAME UNIT | period_type NAME UNIT | period N
#   sample V1 V2 ... : ADDR ADDR ...        (innermost first)
#   location ADDR MAPPING_ID [FUNCTION@FILE:LINE ...]
#   function NAME FILE
#   mapping ID START LIMIT BUILD_ID HAS_FUNCTIONS FILE
flat() {
	awk '
	function str(i) { return (i in s) ? s[i] : "?" i }
	/^[a-z_]+ \{$/ { top = $1; depth = 1; nv = nl = 0; delete f; next }
	/^  [a-z_]+ \{$/ { depth = 2; if (top == "location") nline++; next }
	/^  \}$/ { depth = 1; next }
	/^\}$/ {
		if (top == "sample") { ns++; sv[ns] = vals; sl[ns] = locs; vals = locs = "" }
		if (top == "location") {
			la[f["id"]] = f["address"]; lm[f["id"]] = f["mapping_id"] + 0
			lines = ""
			for (k = 1; k <= nline; k++)
				lines = lines " " lf[k] "@" ll[k]
			lfun[f["id"]] = lines; nline = 0; delete lf; delete ll
		}
		if (top == "function") { nf++; fid[nf] = f["id"]; fn[nf] = f["name"] + 0; ff[nf] = f["filename"] + 0 }
		if (top == "mapping") { nm++; mrow[nm] = f["id"] " " f["memory_start"] " " f["memory_limit"] " " (f["build_id"] + 0) " " (f["has_functions"] == "true") " " (f["filename"] + 0) }
		if (top == "sample_type") { nt++; tt[nt] = f["type"] + 0; tu[nt] = f["unit"] + 0 }
		if (top == "period_type") { pt = f["type"] + 0; pu = f["unit"] + 0 }
		top = ""; delete f; next
	}
	/^string_table: / { v = substr($0, 15); gsub(/^"|"$/, "", v); s[nstr++] = v; next }
	/^period: / { period = $2; next }
	depth == 1 && top == "sample" && /^  value: / { vals = vals " " $2; next }
	depth == 1 && top == "sample" && /^  location_id: / { locs = locs " " $2; next }
	depth == 2 && top == "location" && /^    function_id: / { lf[nline] = $2; next }
	depth == 2 && top == "location" && /^    line: / { ll[nline] = $2; next }
	depth == 1 && /^  [a-z_]+: / { k = $1; sub(/:$/, "", k); f[k] = $2; next }
	END {
		for (i = 1; i <= nf; i++) { fname[fid[i]] = str(fn[i]); ffile[fid[i]] = str(ff[i]) }
		for (i = 1; i <= nt; i++) print "type", str(tt[i]), str(tu[i])
		print "period_type", str(pt), str(pu)
		print "period", period + 0
		for (i = 1; i <= ns; i++) {
			n = split(sl[i], ids, " "); a = ""
			for (k = 1; k <= n; k++) a = a " " ((ids[k] in la) ? la[ids[k]] : "missing" ids[k])
			print "sample" sv[i] " :" a
		}
		for (id in la) {
			n = split(lfun[id], parts, " "); line = ""
			for (k = 1; k <= n; k++) {
				split(parts[k], q, "@")
				line = line " " fname[q[1]] "@" ffile[q[1]] ":" (q[2] + 0)
			}
			print "location", la[id], lm[id] line
		}
		for (i = 1; i <= nf; i++) print "function", str(fn[i]), str(ff[i])
		for (i = 1; i <= nm; i++) {
			split(mrow[i], m, " ")
			print "mapping", m[1], m[2], m[3], (m[4] ? str(m[4]) : "-"), m[5], str(m[6])
		}
	}' "$1"
}

# own_samples PROFILE: prof.heap's records as flat's sample lines: the
# record's t*: objects and bytes, its pcs in decimal less the leading
# ones inside libjemalloc's executable mappings; records counting
# nothing left out.
own_samples() {
	awk "$AWK_HEX"'
	/^MAPPED_LIBRARIES:/ { maps = 1; next }
	maps && $2 ~ /x/ && $NF ~ /libjemalloc\.so/ {
		split($1, r, "-"); nj++; jlo[nj] = hex(r[1]); jhi[nj] = hex(r[2]); next
	}
	/^@/ { nr++; pcs[nr] = $0; want = 1; next }
	want && /^  t\*: / { want = 0; o[nr] = $2 + 0; b[nr] = $3 + 0 }
	END {
		for (i = 1; i <= nr; i++) {
			if (!o[i] && !b[i]) continue
			n = split(pcs[i], pc, " "); top = 1; a = ""
			for (k = 2; k <= n; k++) {
				v = hex(pc[k]); inj = 0
				for (j = 1; j <= nj; j++) if (v >= jlo[j] && v < jhi[j]) inj = 1
				if (top && inj) continue
				top = 0; a = a sprintf(" %.0f", v)
			}
			printf "sample %d %d :%s\n", o[i], b[i], a
		}
	}' "$1"
}

for v in jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64; do
	dir=$(variant_core "$v" prof1)
	[ -s "$dir/prof.heap" ] || fail "$dir: the program dumped no prof.heap"
	grep -qx 'lg_prof_sample 0' "$dir/truth.txt" || fail "$dir: not every allocation was sampled"
	out=$T/$v.pb.gz
	hw "$T/run.out" "$T/run.err" "$dir/core" prof --format=pprof -o "$out"
	expect_rc 0
	grep -qE "^wrote: +$out\$" "$T/run.out" || fail "$v: prof does not say it wrote $out: $(head -n 3 "$T/run.out")"

	# (a) gzip, the schema parses it, pprof's field numbers.
	[ "$(head -c 2 "$out" | od -An -tx1 | tr -d ' \n')" = 1f8b ] ||
		fail "$v: $out is not gzip"
	gzip -dc "$out" >"$T/$v.pb" || fail "$v: $out does not gunzip"
	protoc --proto_path="$schema_dir" --decode=perftools.profiles.Profile \
		pprof.proto <"$T/$v.pb" >"$T/$v.txt" 2>"$T/protoc.err" ||
		fail "$v: protoc cannot decode the profile: $(head -n 3 "$T/protoc.err")"
	protoc --decode_raw <"$T/$v.pb" >"$T/$v.raw" || fail "$v: protoc --decode_raw fails"
	grep -qx '6: "inuse_space"' "$T/$v.raw" || fail "$v: no inuse_space in field 6 (string_table)"
	grep -qx '12: 1' "$T/$v.raw" || fail "$v: no period 1 in field 12"
	awk '/^4 \{$/ { loc = 1; next } loc && /^  3: [0-9]+$/ { n++ } /^\}$/ { loc = 0 } END { exit !(n > 0) }' \
		"$T/$v.raw" || fail "$v: no location (field 4) has an address (its field 3)"
	flat "$T/$v.txt" >"$T/$v.flat"

	# (b) what the values count.
	[ "$(grep -E '^(type|period_type|period) ' "$T/$v.flat" | tr '\n' '|')" = \
		"type inuse_objects count|type inuse_space bytes|period_type space bytes|period 1|" ] ||
		fail "$v: sample types or period: $(grep -E '^(type|period)' "$T/$v.flat" | tr '\n' '|')"

	# (c) record for record, and the totals.
	own_samples "$dir/prof.heap" | sort >"$T/want"
	grep '^sample ' "$T/$v.flat" | sort >"$T/got"
	[ -s "$T/want" ] || fail "$v: prof.heap has no record"
	if ! diff "$T/want" "$T/got" >"$T/diff"; then
		head -n 10 "$T/diff" >&2
		fail "$v: the samples are not prof.heap's records (< prof.heap, > pprof)"
	fi
	read -r to tb < <(sed -n '2s/^  t\*: \([0-9]*\): \([0-9]*\) .*/\1 \2/p' "$dir/prof.heap")
	read -r so sb < <(awk '{ o += $2; b += $3 } END { printf "%.0f %.0f\n", o, b }' "$T/got")
	[ "$to $tb" = "$so $sb" ] ||
		fail "$v: the samples sum to $so objects, $sb bytes; prof.heap's t*: says $to, $tb"

	# (d) the sites' functions, symbolized, with their source; inline.
	prog_map=$(awk '$1 == "mapping" && $NF ~ /\/prog$/ { print $2; exit }' "$T/$v.flat")
	[ -n "$prog_map" ] || fail "$v: no mapping of the program: $(grep '^mapping' "$T/$v.flat" | sed -n 1,3p)"
	while read -r name; do
		grep -qE "^function $name .*/prof1\.c$" "$T/$v.flat" ||
			fail "$v: no Function $name with file prof1.c: $(grep '^function' "$T/$v.flat" | sed -n 1,5p)"
		awk -v n="$name" -v m="$prog_map" '$1 == "location" && $3 == m {
			for (i = 4; i <= NF; i++) if ($i ~ "^" n "@.*prof1\\.c:[1-9][0-9]*$") found = 1
		} END { exit !found }' "$T/$v.flat" ||
			fail "$v: no location in the program names $name with a source line"
	done < <(awk '$1 == "site" { print $2 }' "$dir/truth.txt")
	grep -qE '^location [0-9]+ [0-9]+ prof_site_inline@[^ ]*:[0-9]+ prof_inline_host@' "$T/$v.flat" ||
		fail "$v: no location with the inlined prof_site_inline first and prof_inline_host next: $(grep prof_site_inline "$T/$v.flat" | sed -n 1,2p)"

	# (e) locations inside their mappings; mapping 1 the program.
	awk '$1 == "mapping" { lo[$2] = $3; hi[$2] = $4 }
	     $1 == "location" { a[NR] = $2; m[NR] = $3 }
	     END { for (i in a) if (!(m[i] in lo) || a[i] < lo[m[i]] || a[i] >= hi[m[i]]) { print a[i], m[i]; bad = 1 } exit bad }' \
		"$T/$v.flat" >"$T/outside" ||
		fail "$v: locations outside their mapping: $(head -n 3 "$T/outside")"
	read -r _ id _ _ bid hasfn file < <(grep -m1 '^mapping ' "$T/$v.flat")
	if [ "$id" != 1 ] || [ "$hasfn" != 1 ] || [[ $file != */prog ]]; then
		fail "$v: mapping 1 is not the program with functions: $(grep -m1 '^mapping' "$T/$v.flat")"
	fi
	[[ $bid =~ ^[0-9a-f]{16,}$ ]] || fail "$v: the program's mapping has no build id ($bid)"

	# (t) thread labels.
	want_labels=$(awk '/^@/ { rec = 1; keep = 0; next } rec && /^  t\*: / { keep = ($2 + 0 || $3 + 0); next }
		keep && /^  t[0-9]+: / { n++ } END { print n + 0 }' "$dir/prof.heap")
	read -r got_labels worker < <(awk '/^string_table: / { v = substr($0, 15); gsub(/^"|"$/, "", v); s[ns++] = v; next }
		/^sample \{$/ { smp = 1; next } /^\}$/ { smp = 0; next }
		smp && /^  label \{$/ { lab = 1; next } lab && /^  \}$/ { lab = 0; next }
		lab && /^    key: / { k[++nl] = $2 } lab && /^    str: / { st[nl] = $2 }
		END { for (i = 1; i <= nl; i++) { if (s[k[i]] != "thread") bad = 1; if (s[st[i]] == "prof1-worker") w++ }
		      print (bad ? -1 : nl), w + 0 }' "$T/$v.txt")
	[ "$got_labels" = "$want_labels" ] && [ "$worker" -ge 1 ] ||
		fail "$v: $got_labels thread labels ($worker prof1-worker), prof.heap has $want_labels thread lines"

	# (f) stdout.
	hw "$T/stdout.pb.gz" "$T/stdout.err" "$dir/core" prof --format=pprof
	expect_rc 0
	cmp -s "$out" "$T/stdout.pb.gz" || fail "$v: --format=pprof on stdout differs from -o's file"

	# (g) pprof itself.
	if command -v go >/dev/null 2>&1; then
		go tool pprof -raw "$out" >"$T/raw.txt" 2>"$T/raw.err" ||
			fail "$v: go tool pprof -raw cannot read it: $(head -n 3 "$T/raw.err")"
		while read -r name; do
			grep -qw -- "$name" "$T/raw.txt" || fail "$v: go tool pprof -raw does not name $name"
		done < <(awk '$1 == "site" { print $2 }' "$dir/truth.txt")
		pprof_said="go tool pprof -raw reads it"
	else
		pprof_said="go tool pprof left out (no go here)"
	fi
	say "$v prof1: $(grep -c '^sample ' "$T/$v.flat") samples = prof.heap's records ($to objects, $tb bytes), $(grep -c '^location ' "$T/$v.flat") locations, $(grep -c '^function ' "$T/$v.flat") functions, $got_labels thread labels; $pprof_said"
done
