# shellcheck shell=bash
# tests/prof-lib.sh - sourced by the heap-profile tests (after lib.sh):
# reading the jemalloc prof corpus's truth (corpora/jemalloc/proftruth.h),
# jemalloc's own heap_v2 profiles and heapwalk's --collapsed output.
# Used by tests/t0440 and t0442.
#
#   own_sites TRUTH PROFILE    "NAME OBJS BYTES ESTIMATE" per truth site,
#                              from the profile's records
#   truth_sites TRUTH          "NAME OBJS BYTES" per site
#   collapsed_sums FILE        "LASTFRAME SUM" per distinct last frame of a
#                              --collapsed output (status 1: malformed)
#   check_own_exact DIR        the program's own prof.heap attributes to
#                              each site exactly the truth's figures
#   check_sites DIR OUT WHAT COLUMN
#                              the --collapsed output OUT sums, per truth
#                              site, to the truth's column (5 OBJS, 6 BYTES)

# awk has no strtonum everywhere (mawk): hex by hand.
AWK_HEX='function hex(s,  i, c, v) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		if (c < 0) return -1
		v = v * 16 + c
	}
	return v
}'

# A record belongs to the site whose [START, END) holds its first return
# address (less one: the call itself) that is in any site; ESTIMATE is
# jeprof's scaling, bytes / (1 - exp(-(bytes/objs)/R)), summed.
own_sites() {
	awk "$AWK_HEX"'
	FNR == NR {
		if ($1 == "site") { n++; name[n] = $2; lo[n] = hex($3); hi[n] = hex($4) }
		if ($1 == "lg_prof_sample") R = 2 ^ $2
		next
	}
	/^@/ {
		cur = 0
		for (i = 2; i <= NF && !cur; i++) {
			pc = hex($i) - 1
			for (k = 1; k <= n; k++)
				if (pc >= lo[k] && pc < hi[k]) { cur = k; break }
		}
		want = 1
		next
	}
	want && /^  t\*: / {
		want = 0
		if (!cur) next
		o = $2 + 0; b = $3 + 0
		objs[cur] += o; bytes[cur] += b
		if (o > 0) est[cur] += b / (1 - exp(-(b / o) / R))
	}
	END {
		for (k = 1; k <= n; k++)
			printf "%s %d %d %.0f\n", name[k], objs[k], bytes[k], est[k]
	}' "$1" "$2"
}

truth_sites() {
	awk '$1 == "site" { print $2, $5, $6 }' "$1"
}

collapsed_sums() {
	awk '
	{
		if (!match($0, / [0-9]+$/) || RSTART == 1) { print "MALFORMED " NR ": " $0; bad = 1; next }
		stack = substr($0, 1, RSTART - 1); v = substr($0, RSTART + 1) + 0
		n = split(stack, f, ";")
		sum[f[n]] += v
	}
	END { for (k in sum) printf "%s %.0f\n", k, sum[k]; exit bad }' "$1"
}

# The totals line counts at least the truth's total (libc's and ld.so's
# own allocations are sampled too).
check_own_exact() {
	local dir=$1 name o b to tb
	[ -s "$dir/prof.heap" ] || fail "$dir: the program dumped no prof.heap"
	grep -qx 'lg_prof_sample 0' "$dir/truth.txt" || fail "$dir: not every allocation was sampled"
	own_sites "$dir/truth.txt" "$dir/prof.heap" >"$T/own"
	truth_sites "$dir/truth.txt" >"$T/want"
	[ -s "$T/want" ] || fail "$dir: the truth names no site"
	paste -d' ' "$T/want" "$T/own" >"$T/both"
	while read -r name o b _ oo ob _; do
		[ "$o $b" = "$oo $ob" ] ||
			fail "$dir: jemalloc's own profile gives $name $oo objects, $ob bytes; the truth $o, $b (corpus bug)"
	done <"$T/both"
	read -r to tb < <(awk '$1 == "total" { print $2, $3 }' "$dir/truth.txt")
	read -r o b < <(sed -n '2s/^  t\*: \([0-9]*\): \([0-9]*\) .*/\1 \2/p' "$dir/prof.heap")
	if [ "$o" -lt "$to" ] || [ "$b" -lt "$tb" ]; then
		fail "$dir: prof.heap's totals ($o, $b) are below the truth's ($to, $tb)"
	fi
}

check_sites() {
	local dir=$1 out=$2 what=$3 col=$4 name want got
	collapsed_sums "$out" >"$T/sums" || { head -n 5 "$T/sums" >&2; fail "$what: malformed --collapsed lines"; }
	while read -r name want; do
		got=$(awk -v n="$name" '$1 == n { print $2 }' "$T/sums")
		[ "${got:-0}" = "$want" ] ||
			fail "$what: the stacks ending in $name sum to ${got:-nothing}, the truth says $want (core in $dir)"
	done < <(awk -v c="$col" '$1 == "site" { print $2, $c }' "$dir/truth.txt")
}

# check_stat_allocated DIR WHAT TARGET...: summary's "allocated" (a line
# labelled as jemalloc's stats.allocated) is what the program read from
# mallctl right before the core (DIR/truth.txt's `stat allocated`): each
# sampled small object counted at the large class it was promoted to;
# the program's own bytes are beside it, smaller.
check_stat_allocated() {
	local dir=$1 what=$2 want got prog
	shift 2
	want=$(awk '$1 == "stat" && $2 == "allocated" { print $3 }' "$dir/truth.txt")
	[ -n "$want" ] || fail "$what: the truth has no stat allocated"
	hw "$T/stat.json" "$T/stat.err" --json "$@" summary
	expect_rc 0
	got=$(grep -o '"allocated":[0-9]*' "$T/stat.json" | sed -n 1,1p | cut -d: -f2)
	[ "$got" = "$want" ] ||
		fail "$what: summary's allocated is $got, jemalloc's stats.allocated $want"
	prog=$(grep -o '"program_allocated":[0-9]*' "$T/stat.json" | cut -d: -f2)
	[ -n "$prog" ] && [ "$prog" -lt "$want" ] ||
		fail "$what: no program_allocated below stats.allocated ($prog)"
	say "$what: allocated $got as jemalloc's stats.allocated says; the program's own $prog"
}

# check_recent DIR WHAT TARGET...: jemalloc 5.3's recent-allocation
# records (prof1 keeps its last 48; the program had jemalloc dump them
# as DIR/prof.recent.json).  `prof --recent -o` of TARGET (heapwalk's
# arguments naming the core or process) writes those same bytes; in the
# table (--json), every live record has an address, which is the truth's
# object of that usable size made at that site when its innermost frame
# is a truth site and no truth object otherwise (another library's
# allocation); the worker thread's frees name it as the freeing thread.
# Leaves "LIVE MATCHED FREED" in $T/rc.check and the --json table in
# $T/rj.out.
check_recent() {
	local dir=$1 what=$2
	shift 2
	[ -s "$dir/prof.recent.json" ] || fail "$what: the program dumped no prof.recent.json"
	hw "$T/rc.out" "$T/rc.err" "$@" prof --recent -o "$T/rc.json"
	expect_rc 0
	cmp -s "$dir/prof.recent.json" "$T/rc.json" ||
		fail "$what: prof --recent -o differs from the program's own experimental.prof_recent.alloc_dump: $(cmp "$dir/prof.recent.json" "$T/rc.json" 2>&1)"
	hw "$T/rj.out" "$T/rj.err" --json "$@" prof --recent
	expect_rc 0
	sed 's/},{/}\n{/g' "$T/rj.out" | awk -v truth="$dir/truth.txt" -v what="$what" '
	BEGIN {
		while ((getline l < truth) > 0) {
			split(l, f, " ")
			if (f[1] == "obj") { us[f[2]] = f[3]; at[f[2]] = f[4] }
			if (f[1] == "site") site[f[2]] = 1
			if (f[1] == "thread") worker = f[2]
		}
	}
	function get(k,  s) {
		if (match($0, "\"" k "\":\"[^\"]*\""))
			return substr($0, RSTART + length(k) + 4, RLENGTH - length(k) - 5)
		if (match($0, "\"" k "\":[^,}]*"))
			return substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
		return "?"
	}
	function first(s,  i) { i = index(s, " \342\206\220 "); return i ? substr(s, 1, i - 1) : s }
	/"usize":/ {
		n++
		fn = first(get("allocated_at")); a = get("address")
		if (get("released") == "false") {
			live++
			if (a == "null") { print what ": live record " n " has no address"; bad = 1 }
			if (fn in site) {
				if (!(a in us) || us[a] != get("usize") || at[a] != fn) {
					print what ": record " n " (" fn ", usize " get("usize") ") at " a " is not such a truth object"
					bad = 1
				}
				matched++
			} else if (a in us) {
				print what ": record " n " from " fn " is at the truth object " a " (" at[a] ")"
				bad = 1
			}
		} else {
			freed++
			if (fn == "prof_site_thread" && get("freed_by") != worker) {
				print what ": record " n ": the worker freed it, the table says " get("freed_by")
				bad = 1
			}
		}
	}
	END {
		if (!n) { print what ": no record in the table"; bad = 1 }
		if (bad) exit 1
		print live + 0, matched + 0, freed + 0
	}' >"$T/rc.check" || { cat "$T/rc.check" >&2; fail "$what: the recent records disagree with the truth"; }
}
