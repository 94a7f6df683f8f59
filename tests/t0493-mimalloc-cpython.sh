#!/bin/bash
# mimalloc in free-threaded CPython 3.13 (its own copy of mimalloc 2.1.2:
# the CPython row of libheapwalk/alloc/mimalloc/layout.c), against what
# CPython says of its own heap (issue #56).  The interpreter is Debian
# trixie's python3.13 source configured --disable-gil, built by
# scripts/corpus/cpython-ft.sh into build/cpython-ft ($CPYFT) the first
# time (23 MB from the Debian mirror, then about two minutes of make;
# reused after): skipped only where the source cannot be had.
# scripts/corpus/cpyft-truth.py builds a heap in five threads and a
# sixth that exits (dicts, lists, str, bytes, ints, tuples, instances,
# a third of each freed, half the exited thread's freed by the main
# thread, cycles of the workers freed by gc.collect() in the main thread)
# and records, with nothing left allocated after it but what it says:
#   - sys.getallocatedblocks(), which in a free-threaded build stops the
#     world and adds up `used` of every page of every thread state's four
#     heaps and of the interpreter's abandoned pool, after processing each
#     heap's delayed frees and collecting each page's thread-free list
#     (Objects/obmalloc.c get_mimalloc_allocated_blocks, Objects/mimalloc/
#     heap.c _mi_heap_area_init): the exact count of blocks in use;
#   - every object it holds: id(), the block it is in (less the two-word
#     pre-header for instances), the tag of the heap it belongs in, sizes;
#   - every object gc.get_objects() gives, with its heap's tag;
#   - sys._debugmallocstats(), whose mimalloc figures are of mimalloc's
#     default heap (_mi_heap_main) alone, which CPython never allocates
#     from: 0 blocks.
# Three targets: a core of the program's abort (the kernel's, else gdb's
# gcore under gdb), and one process waiting alive, read with --pid and
# with a gcore of it; the process then counts again (OK: heapwalk left
# every block as it was) and exits 0, untraced meanwhile.
# Held, in each:
#   - summary: mimalloc of the CPython layout walked, its main heap
#     (_mi_heap_main, which no page names) found in python's data, and
#     python named as its module; glibc's ptmalloc
#     (the raw domain's malloc) listed as a second instance; no findings;
#     `check` clean, and ptmalloc's own `check` with --allocator ptmalloc;
#   - exactly: blocks in use (summary's count and the chunks in use) =
#     getallocatedblocks + the blocks the program keeps after it;
#   - the heaps: four for each live thread (_PyThreadStateImpl's
#     mimalloc.heaps[4], sizeof(mi_heap_t) 3064 bytes apart; the first the
#     thread's backing heap), of that thread and no other heap with pages
#     (mimalloc's _mi_heap_main has none, as _debugmallocstats says); a
#     heap's place in its four is its tag;
#   - every object held: a block in use starting at its block, in a heap
#     of its tag of the thread that made it (the exited thread's in any
#     heap of its tag: a thread that allocates reclaims its pages, or
#     still abandoned); its block no smaller than its type's basic size,
#     and for str, bytes, int and tuple exactly mimalloc's size class of
#     sys.getsizeof;
#   - every object gc.get_objects() gives: in use, in a heap of its tag;
#     the gc heaps with pre-header (tag 3) hold exactly those; the plain
#     gc heaps (tag 2) at least those (they also hold gc objects the
#     collector untracked, tuples and dicts of atomic values, and the
#     free lists' objects, which gc.get_objects() does not give);
#   - leaks (cores): no object held is definitely or indirectly lost, and
#     each block definitely lost is an immortal object (ob_tid 0,
#     ob_ref_local 0xffffffff, read from the core): 3.13 immortalizes
#     every object with deferred reference counting when the first thread
#     starts (gh-117783, Python/gc_free_threading.c
#     _PyGC_ImmortalizeDeferredObjects), and such an object that was
#     already garbage is never freed.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_heapwalk
CPYFT=${CPYFT:-$TOP/build/cpython-ft}
py=$CPYFT/python
script=$TOP/scripts/corpus/cpyft-truth.py
if [ ! -x "$py" ]; then
	rc=0
	"$TOP/scripts/corpus/cpython-ft.sh" "$CPYFT" >"$T/cpython-ft.out" 2>&1 || rc=$?
	[ "$rc" = 77 ] &&
		skip "free-threaded CPython cannot be built here: $(tail -n 1 "$T/cpython-ft.out")"
	[ "$rc" = 0 ] && [ -x "$py" ] || {
		tail -n 20 "$T/cpython-ft.out" >&2
		fail "scripts/corpus/cpython-ft.sh $CPYFT failed (exit $rc)"
	}
fi
need_cmd od
need_live
need_cmd gdb gcore

# truth_ok DIR: the program finished its truth.
truth_ok() {
	has -x end <"$1/truth" || {
		tail -n 20 "$1/out" >&2
		fail "$1: cpyft-truth.py wrote no complete truth"
	}
}

# compare NAME DIR: DIR's heapwalk reports (summary.json, arenas.json,
# chunks.json) held to DIR/truth as the head says.
compare() {
	local name=$1 d=$2 used
	has '^{"allocator":"mimalloc","version":"CPython 3.13 free-threaded"' <"$d/summary.json" ||
		fail "$name: summary does not walk mimalloc's CPython 3.13 layout: $(head -c 300 "$d/summary.json")"
	has '"allocator":"ptmalloc"[^}]*"selected":false' <"$d/summary.json" ||
		fail "$name: summary lists no glibc ptmalloc instance beside mimalloc: $(head -c 600 "$d/summary.json")"
	has '"findings":0,' <"$d/summary.json" || fail "$name: summary has findings"
	# mimalloc's own main heap, from which CPython never allocates (no
	# page names it), found in the interpreter's data by its cookie.
	has "\"module\":\"$py\"" <"$d/summary.json" ||
		fail "$name: summary's module is not $py: $(grep -o '"module":"[^"]*"' "$d/summary.json")"
	has '"main_heap":"0x' <"$d/summary.json" ||
		fail "$name: summary has no main heap: $(grep -o '"main_heap":[^,]*' "$d/summary.json")"
	used=$(grep -o '"used":{"count":[0-9]*' "$d/summary.json" | sed 's/.*://')
	[ -n "$used" ] || fail "$name: no used count in summary --json"
	awk -v name="$name" -v sum_used="$used" '
	function num(h,    i, v) {
		h = tolower(h); sub(/^0x/, "", h); v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	# A JSON member of one flat object: its value, quotes removed.
	function field(s, k,    r) {
		if (!match(s, "\"" k "\":(\"[^\"]*\"|[-0-9]+|null)"))
			return ""
		r = substr(s, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
		gsub(/"/, "", r)
		return r
	}
	# mimalloc 2.x size classes: 1 to 8 words, then four a power of two.
	function mibin(n,    w, p) {
		w = int((n + 7) / 8)
		if (w <= 8)
			return 8 * (w < 1 ? 1 : w)
		for (p = 8; ; p *= 2) {
			if (w <= p * 5 / 4) return 8 * p * 5 / 4
			if (w <= p * 6 / 4) return 8 * p * 6 / 4
			if (w <= p * 7 / 4) return 8 * p * 7 / 4
			if (w <= 2 * p) return 16 * p
		}
	}
	function bad(msg) {
		if (++nbad <= 20)
			print name ": " msg > "/dev/stderr"
	}
	FILENAME ~ /truth$/ && $1 == "tid" { role[$3] = $2 }
	FILENAME ~ /truth$/ && $1 == "obj" {
		nobj++
		obj[$3] = $2; okind[$3] = $4; otag[$3] = $5; osize[$3] = $6
		obasic[$3] = $7; otid[$3] = $8
	}
	FILENAME ~ /truth$/ && $1 == "gcobj" { gco[$2] = $3; ngc++ }
	FILENAME ~ /truth$/ && $1 == "gc_objects_tag" { gctag[$2] = $3 }
	FILENAME ~ /truth$/ && $1 == "allocated_blocks" { allocated = $2 }
	FILENAME ~ /truth$/ && $1 == "extra_blocks" { extra = $2 }
	FILENAME ~ /truth$/ && $1 == "debugmallocstats" && $2 == "Allocated_Blocks" { dms = $3 }
	FILENAME ~ /arenas.json$/ {
		n = split($0, rec, /\},\{/)
		for (i = 1; i <= n; i++) {
			a = field(rec[i], "arena")
			if (a == "")
				continue
			heap[a] = field(rec[i], "heap")
			htid[a] = field(rec[i], "tid")
			hkind[a] = field(rec[i], "kind")
			hpages[a] = field(rec[i], "pages") + 0
			htag[a] = field(rec[i], "tag")
			narenas++
		}
	}
	FILENAME ~ /chunks.json$/ {
		if (!tagged) {
			# Each heap by the tag arenas names it by (the names
			# CPython gives its four heaps); the main heap of
			# mimalloc is none of the four of a thread state.
			tagnum["mem"] = 0; tagnum["object"] = 1
			tagnum["gc"] = 2; tagnum["gc_pre"] = 3
			for (a in heap) {
				if (heap[a] == "null" || hkind[a] == "main")
					continue
				if (!(htag[a] in tagnum))
					bad(sprintf("heap %s: tag %s is none of those CPython names", heap[a], htag[a]))
				t = htid[a]
				nh[t]++
				tagof[a] = tagnum[htag[a]]
				if (tagof[a] == 0)
					first[t] = a
			}
			tagged = 1
		}
		addr = field($0, "addr")
		if (field($0, "state") != "used")
			next
		nused++
		a = field($0, "arena")
		if (heap[a] != "null")
			used_tag[tagof[a]]++
		if (addr in obj) {
			seen++
			size = field($0, "size") + 0
			if (heap[a] == "null") {
				if (role[otid[addr]] != "exited")
					bad("object " obj[addr] " (" okind[addr] ") in an abandoned page, not made by the exited thread")
			} else {
				if (tagof[a] != otag[addr])
					bad(sprintf("object %s (%s) in heap %s, tag %d, not %d", obj[addr], okind[addr], heap[a], tagof[a], otag[addr]))
				if (role[otid[addr]] != "exited" && htid[a] != otid[addr])
					bad(sprintf("object %s (%s) in a heap of thread %s, not %s", obj[addr], okind[addr], htid[a], otid[addr]))
			}
			k = okind[addr]
			if (size < obasic[addr])
				bad(sprintf("object %s (%s) in a block of %d bytes, its basic size is %d", obj[addr], k, size, obasic[addr]))
			if ((k == "str" || k == "bytes" || k == "int" || k == "tuple") && size != mibin(osize[addr]))
				bad(sprintf("object %s (%s, %d bytes) in a block of %d, not %d", obj[addr], k, osize[addr], size, mibin(osize[addr])))
			found[addr] = 1
		}
		if (addr in gco) {
			gseen++
			if (heap[a] != "null" && tagof[a] != gco[addr])
				bad(sprintf("gc object at block %s in heap %s, tag %d, not %d", addr, heap[a], tagof[a], gco[addr]))
			gfound[addr] = 1
		}
	}
	END {
		if (nobj < 1000 || ngc < 1000 || allocated == "" || extra == "")
			bad("the truth is incomplete")
		if (nused != allocated + extra)
			bad(sprintf("%d blocks in use; CPython counted %d and kept %d more after", nused, allocated, extra))
		if (sum_used != nused)
			bad(sprintf("summary says %d blocks in use, chunks lists %d", sum_used, nused))
		if (dms != 0)
			bad("_debugmallocstats counted " dms " blocks in the default heap of mimalloc")
		for (a in obj)
			if (!(a in found))
				bad(sprintf("object %s (%s, tag %d, thread %s) is no block in use", obj[a], okind[a], otag[a], otid[a]))
		for (a in gco)
			if (!(a in gfound))
				bad(sprintf("gc object at block %s (tag %d) is no block in use", a, gco[a]))
		if (used_tag[3] != gctag[3])
			bad(sprintf("%d blocks in use in the tag-3 heaps, gc.get_objects gave %d objects with a pre-header", used_tag[3], gctag[3]))
		if (used_tag[2] < gctag[2])
			bad(sprintf("%d blocks in use in the tag-2 heaps, fewer than the %d gc objects there", used_tag[2], gctag[2]))
		for (t in role) {
			if (role[t] == "exited")
				continue
			if (nh[t] != 4) {
				bad(sprintf("thread %s (%s) has %d heaps, not 4", t, role[t], nh[t] + 0))
				continue
			}
			for (a in heap)
				if (heap[a] != "null" && hkind[a] != "main" &&
				    htid[a] == t) {
					if (num(heap[a]) != num(heap[first[t]]) + 3064 * tagof[a])
						bad(sprintf("heap %s of thread %s is not %d x 3064 bytes after %s", heap[a], t, tagof[a], heap[first[t]]))
					if (hkind[a] != (tagof[a] == 0 ? "thread" : "heap"))
						bad(sprintf("heap %s (tag %d) of thread %s is a %s heap", heap[a], tagof[a], t, hkind[a]))
				}
		}
		for (a in heap)
			if (heap[a] != "null" && !(htid[a] in role) && hpages[a] > 0)
				bad(sprintf("heap %s (thread %s) holds %d pages and is in no thread state", heap[a], htid[a], hpages[a]))
		if (nbad)
			exit 1
		printf "%s: %d blocks in use = getallocatedblocks %d + %d; %d objects and %d gc objects each in its block and heap; tag 3 %d = gc %d, tag 2 %d >= gc %d\n",
			name, nused, allocated, extra, nobj, ngc, used_tag[3], gctag[3], used_tag[2], gctag[2] > "/dev/stderr"
	}' "$d/arenas.json" "$d/truth" "$d/chunks.json" || fail "$name: heapwalk disagrees with CPython's own record (above)"
}

# reports NAME DIR HW-TARGET-ARGS...: summary, arenas and chunks as
# JSON into DIR, check clean (mimalloc's, and glibc's with --allocator
# ptmalloc), then compare.
reports() {
	local name=$1 d=$2 c
	shift 2
	for c in summary arenas chunks; do
		hw "$d/$c.json" "$d/$c.err" "$@" "$c" --json
		expect_rc 0
	done
	hw "$d/check.out" "$d/check.err" "$@" check
	expect_rc 0
	has ', 0 problems found$' <"$d/check.out" || fail "$name: check: $(tail -n 3 "$d/check.out")"
	hw "$d/check-pt.out" "$d/check-pt.err" --allocator ptmalloc "$@" check
	expect_rc 0
	compare "$name" "$d"
}

# leaks_ok NAME DIR CORE: no recorded object lost; each definite one an
# immortal object by the core's own bytes.
leaks_ok() {
	local name=$1 d=$2 core=$3 a head n=0
	hw "$d/leaks.json" "$d/leaks.err" "$core" leaks --kind definite,indirect --json
	expect_rc 0
	awk 'FILENAME ~ /truth$/ && ($1 == "obj" || $1 == "gcobj") {
		b = ($1 == "obj") ? $3 : $2; held[b] = 1; next }
	{ if (match($0, /"addr":"0x[0-9a-f]*"/)) { a = substr($0, RSTART + 8, RLENGTH - 9)
		if (a in held) { print "FAIL " a; bad = 1 } } }
	END { exit bad }' "$d/truth" "$d/leaks.json" ||
		fail "$name: leaks calls blocks the program holds lost: $(grep -m3 '"addr"' "$d/leaks.json")"
	while read -r a; do
		head=$(core_bytes "$core" "$a" 16) || fail "$name: lost block $a is not in the core"
		if [ "${head:0:16}" != 0000000000000000 ] || [ "${head:24:8}" != ffffffff ]; then
			fail "$name: block $a, definitely lost, is no immortal object (its first bytes $head)"
		fi
		n=$((n + 1))
	done < <(grep '"kind":"definite"' "$d/leaks.json" | grep -o '"addr":"0x[0-9a-f]*"' | sed 's/.*"\(0x[0-9a-f]*\)"/\1/')
	say "$name: leaks: $n definitely lost, each an immortal object; no held object lost"
}

# 1. The program's abort: the kernel's core, else gdb's gcore.
d=$T/abort
mkdir -p "$d"
if plain_core_pattern; then
	pattern=$(cat /proc/sys/kernel/core_pattern)
	( (cd "$d" && ulimit -c unlimited 2>/dev/null; exec "$py" "$script" "$d/truth" abort) \
		>"$d/out" 2>&1 || :) 2>/dev/null
	c=$(find "$d" -maxdepth 1 -type f -name "$pattern*" | sed -n 1,1p)
	if [ -n "$c" ] && [ "$c" != "$d/core" ]; then mv "$c" "$d/core"; fi
fi
if ! [ -s "$d/core" ]; then
	rm -f "$d/truth"
	(cd "$d" && gdb -batch -nx -ex run -ex "gcore $d/core" \
		--args "$py" "$script" "$d/truth" abort) >"$d/out" 2>&1 || true
fi
[ -s "$d/core" ] || fail "abort: no core ($(tail -n 3 "$d/out"))"
truth_ok "$d"
reports abort "$d" "$d/core"
leaks_ok abort "$d" "$d/core"

# 2. A process waiting: --pid, then a gcore of it, then its own count.
d=$T/live
mkdir -p "$d"
live_start py "$py" "$script" "$d/truth" wait
truth_ok "$d"
reports live "$d" --pid "${LIVE_PID[py]}"
live_untraced py "heapwalk --pid"
mkdir -p "$d/g"
cp "$d/truth" "$d/g/truth"
timeout -k 5 120 gcore -o "$d/g/core" "${LIVE_PID[py]}" >"$d/g/gcore.log" 2>&1 ||
	fail "gcore ${LIVE_PID[py]} failed: $(tail -n 3 "$d/g/gcore.log")"
reports gcore "$d/g" "$d/g/core.${LIVE_PID[py]}"
leaks_ok gcore "$d/g" "$d/g/core.${LIVE_PID[py]}"
rm -f "$d/g/core.${LIVE_PID[py]}"
live_finish py
