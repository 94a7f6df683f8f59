#!/bin/bash
# mimalloc-layouts.sh [--variant V] SRC [TAG]
#
# Prints the numbers of one mimalloc v2 release that heapwalk's
# struct mi_layout holds (libheapwalk/alloc/mimalloc/layout.h), as C
# initialisers to paste into a row of layout.c: field offsets by
# offsetof, constants by the release's own macros, the page-start rule
# by running the release's own _mi_segment_page_start_from_slice (copied
# out of its src/segment.c at run time into a scratch file) against the
# models the walker implements.  Nothing of mimalloc is kept in this tree.
#
# SRC is a mimalloc source tree (the directory holding include/ and src/)
# or a git repository (a bare mirror such as
# /work/.mirror/microsoft+mimalloc/repo, or a clone); with a repository
# TAG names the release (v2.1.9) and is extracted with git archive into
# a temporary directory.  SRC may also be a CPython source tree (3.13
# and later: Include/internal/mimalloc/ and Objects/mimalloc/, the copy
# of mimalloc built into libpython), or a CPython repository and TAG.
# Works offline.
#
# --variant release   -DNDEBUG: the build every distribution ships
#           secure    -DNDEBUG -DMI_SECURE=4: cmake -DMI_SECURE=ON, the
#                     encoded free lists
#           debug     -DMI_DEBUG=2, no NDEBUG: a cmake Debug build (2.3+
#                     also MI_GUARDED)
#           padding   -DNDEBUG -DMI_PADDING=1: cmake -DMI_PADDING=ON
#           all       (default) each of the four, one block each
# and for a CPython tree (pycore_mimalloc.h's settings; CPython never sets
# MI_SECURE):
#           ft        -DPy_GIL_DISABLED, MI_DEBUG 0: free-threaded CPython
#           ft-debug  -DPy_GIL_DISABLED, MI_DEBUG 2: its --with-pydebug
#           gil       MI_DEBUG 0: the default build, used with
#                     PYTHONMALLOC=mimalloc
#           all       (default) the three
#
# Each block starts with a comment naming the release and variant, then
# one ".field = value," line per struct mi_layout field, then "/* info */"
# lines with what the doc cites but the table does not hold (sizes of the
# structures, mi_thread_data_t's tld offset, padding).  A field the release
# does not have is MI_NO_FIELD.  A page-start rule none of the walker's
# models reproduces is printed as "MI_START_UNKNOWN" with a warning on
# stderr: read the release's _mi_segment_page_start_from_slice and teach
# the walker (and the model below) the new rule.
#
# Exit status: 0 done, 1 failure (a message on stderr), 2 usage, 3 the
# tree is not mimalloc v2 (v1 or v3: no mi_segment_t with slices).
#
# Needs gcc (any version; LP64 host: x86_64 or aarch64 give the same
# numbers) and, for a repository, git and tar.

set -euo pipefail
me=mimalloc-layouts.sh
die() { echo "$me: $*" >&2; exit 1; }
usage() { echo "usage: $me [--variant V] SRC [TAG]" >&2; exit 2; }

variant=all
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--variant) [ $# -ge 2 ] || usage; variant=$2; shift 2 ;;
	--variant=*) variant=${1#*=}; shift ;;
	-h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) usage ;;
	*) args+=("$1"); shift ;;
	esac
done
if [ ${#args[@]} -lt 1 ] || [ ${#args[@]} -gt 2 ]; then usage; fi
case $variant in release|secure|debug|padding|ft|ft-debug|gil|all) ;;
*) usage ;;
esac
src=${args[0]} tag=${args[1]:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/mi-layouts.XXXXXX")
trap 'rm -rf "$work"' EXIT

# mimalloc's own tree has include/ and src/; CPython's copy lives in
# Include/internal/mimalloc/ (headers) and Objects/mimalloc/ (sources).
py_inc=Include/internal/mimalloc py_src=Objects/mimalloc
if [ -d "$src/include" ] && [ -d "$src/src" ]; then
	[ -z "$tag" ] || die "$src is a source tree; a TAG is only for a repository"
	tree=$src
	name="source tree $src"
elif [ -d "$src/$py_inc" ] && [ -d "$src/$py_src" ]; then
	[ -z "$tag" ] || die "$src is a source tree; a TAG is only for a repository"
	tree=$src
	name="CPython tree $src"
elif git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	[ -n "$tag" ] || die "$src is a repository: name the release (TAG, e.g. v2.1.9)"
	git -C "$src" rev-parse -q --verify "$tag^{commit}" >/dev/null ||
		die "$src has no $tag"
	tree=$work/tree
	mkdir "$tree"
	if git -C "$src" cat-file -e "$tag:$py_inc" 2>/dev/null; then
		paths=("$py_inc" "$py_src") name="CPython $tag"
	else
		paths=(include src) name=$tag
	fi
	git -C "$src" archive "$tag" "${paths[@]}" | tar x -C "$tree" ||
		die "git archive $tag failed"
else
	die "$src is neither a mimalloc source tree nor a git repository"
fi

# The headers: 2.0.x has include/mimalloc-internal.h and
# mimalloc-types.h; 2.1 and later include/mimalloc/internal.h, types.h
# (in CPython under Include/internal/mimalloc/).
cpython=false
if [ -f "$tree/include/mimalloc/internal.h" ]; then
	inc=$tree/include srcdir=$tree/src
	internal='mimalloc/internal.h' types=$inc/mimalloc/types.h
elif [ -f "$tree/include/mimalloc-internal.h" ]; then
	inc=$tree/include srcdir=$tree/src
	internal='mimalloc-internal.h' types=$inc/mimalloc-types.h
elif [ -f "$tree/$py_inc/mimalloc/internal.h" ]; then
	inc=$tree/$py_inc srcdir=$tree/$py_src cpython=true
	internal='mimalloc/internal.h' types=$inc/mimalloc/types.h
else
	echo "$me: $name has no mimalloc internal header" >&2; exit 3
fi
version=$(sed -n 's/^#define MI_MALLOC_VERSION *\([0-9]*\).*/\1/p' "$inc/mimalloc.h")
name="$name (MI_MALLOC_VERSION $version)"
if ! grep -q 'typedef struct mi_segment_s' "$types" ||
   ! grep -q 'slices\[' "$types"; then
	echo "$me: $name is not mimalloc v2 (no segment of slices)" >&2; exit 3
fi
segc=$srcdir/segment.c
[ -f "$segc" ] || die "$name has no segment.c"
if $cpython; then
	case $variant in
	release|secure|debug|padding) die "$name is CPython's: variants ft, ft-debug, gil" ;;
	esac
else
	case $variant in
	ft|ft-debug|gil) die "$name is not CPython's: variants release, secure, debug, padding" ;;
	esac
fi

# One structure's body, comments gone, from its opening line to its
# closing one.
body() {	# FILE OPEN-REGEX CLOSE-REGEX
	awk -v o="$2" -v c="$3" '$0 ~ o {on=1} on {print} on && $0 ~ c {exit}' "$1" |
		sed 's://.*$::'
}
page_body=$(body "$types" '^typedef struct mi_page_s' '^} mi_page_t;')
seg_body=$(body "$types" '^typedef struct mi_segment_s' '^} mi_segment_t;')
heap_body=$(body "$types" '^struct mi_heap_s' '^};')
tld_body=$(body "$types" '^struct mi_tld_s' '^};')
if [ -z "$page_body" ] || [ -z "$seg_body" ] || [ -z "$heap_body" ] ||
   [ -z "$tld_body" ]; then
	die "$name: a structure was not found in $types"
fi
# Whether a structure's body declares FIELD (a member, array or bitfield).
has() { grep -Eq "[^A-Za-z0-9_]$2[[:space:]]*(\[|;|:)" <<<"$1"; }
# The preprocessor condition FIELD's declaration is under in a body, as
# one C expression ("" when it is always there): page keys are under
# MI_ENCODE_FREELIST, for one.
cond() {	# BODY FIELD
	awk -v f="$2" '
	function join(   i, s) {
		s = ""
		for (i = 1; i <= n; i++)
			s = s (s == "" ? "" : " && ") "(" c[i] ")"
		return s
	}
	/^[ \t]*#[ \t]*ifdef/ { c[++n] = "defined(" $2 ")"; next }
	/^[ \t]*#[ \t]*ifndef/ { c[++n] = "!defined(" $2 ")"; next }
	/^[ \t]*#[ \t]*if/ { sub(/^[ \t]*#[ \t]*if[ \t]*/, ""); c[++n] = $0; next }
	/^[ \t]*#[ \t]*elif/ { sub(/^[ \t]*#[ \t]*elif[ \t]*/, "");
		c[n] = "!(" c[n] ") && (" $0 ")"; next }
	/^[ \t]*#[ \t]*else/ { c[n] = "!(" c[n] ")"; next }
	/^[ \t]*#[ \t]*endif/ { n--; next }
	$0 ~ "[^A-Za-z0-9_]" f "[ \t]*(\\[|;|:)" { print join(); exit }
	' <<<"$1"
}
# OFF for a field, or NO when the build at hand has it not.
emit() {	# LAYOUT-NAME TYPE FIELD BODY
	local c
	c=$(cond "$4" "$3")
	if [ -n "$c" ]; then
		printf '#if %s\n\tOFF("%s", %s, %s);\n#else\n\tNO("%s");\n#endif\n' \
			"$c" "$1" "$2" "$3" "$1"
	else
		printf '\tOFF("%s", %s, %s);\n' "$1" "$2" "$3"
	fi
}

# The program: OFF prints an offset, NO a field this release lacks.
prog=$work/lay.c
{
cat <<EOF
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef Py_GIL_DISABLED
/* CPython's struct llist_node (pycore_llist.h), which its mi_page_t
   embeds in free-threaded builds.  */
struct llist_node {
	struct llist_node *next, *prev;
};
#endif
#include "mimalloc.h"
#include "$internal"

#define OFF(name, T, f) printf("\t.%s = %zu,\n", name, offsetof(T, f))
#define VAL(name, v) printf("\t.%s = %llu,\n", name, (unsigned long long)(v))
#define NO(name) printf("\t.%s = MI_NO_FIELD,\n", name)
#define WIDTH(T, f) sizeof(((T *)0)->f)
#if MI_DEBUG
/* The library's; a debug build's inline helpers call it.  The probe
   below tries block sizes on page sizes the library never pairs (a 64
   KiB page of 60 KiB blocks), which its asserts refuse: ignored.  */
void _mi_assert_fail(const char *a, const char *f, unsigned int l,
		     const char *fn)
{
	(void)a, (void)f, (void)l, (void)fn;
}
#endif
EOF
# mi_thread_data_t, as init.c declares it (heap, then tld): where a
# thread's tld lies from its heap.
body "$srcdir/init.c" '^typedef struct mi_thread_data_s' 'mi_thread_data_t;'
# The release's own page-start function, renamed so it cannot clash.
awk '/^static uint8_t\* _mi_segment_page_start_from_slice\(/,/^}/' "$segc" |
	sed 's/_mi_segment_page_start_from_slice/probe_page_start/'
cat <<'EOF'

/* The walker's models of the page-start rule (layout.h, enum
   mi_start_rule); each returns the offset of a page's first block from
   its first slice.  */
static size_t model(int rule, size_t c, size_t lo, size_t hi,
		    size_t amax, uintptr_t pstart, size_t psize, size_t bs)
{
	size_t off = 0;
	if (rule == 0)
		return (bs >= lo && bs <= hi) ? c : 0;
	if (rule >= 2 && bs > 0 && bs <= amax) {
		size_t adjust = bs - (pstart % bs);
		if (adjust < bs && psize >= bs + adjust)
			off += adjust;
	}
	if (bs >= sizeof(void *)) {
		if (bs <= 64)
			off += 3 * bs;
		else if (bs <= 512)
			off += bs;
	}
	if (rule == 3)
		off = (off + 15) & ~(size_t)15;
	return off;
}

static mi_segment_t *seg;

static size_t probe(size_t idx, size_t count, size_t bs)
{
	mi_slice_t *slice = &seg->slices[idx];
	slice->slice_count = (uint32_t)count;
	slice->slice_offset = 0;
EOF
if grep -q '^static uint8_t\* _mi_segment_page_start_from_slice([^)]*block_size\|^static uint8_t\* _mi_segment_page_start_from_slice([^)]*xblock_size' "$segc"; then
	echo '	uint8_t *p = probe_page_start(seg, slice, bs, NULL);'
else
	echo '	(void)bs; uint8_t *p = probe_page_start(seg, slice, NULL);'
fi
cat <<'EOF'
	return (size_t)(p - ((uint8_t *)seg + idx * MI_SEGMENT_SLICE_SIZE));
}

/* Every block size 1 .. 1 MiB and a few huge ones, on small, medium and
   large pages at several slices.  */
static bool fits(int rule, size_t c, size_t lo, size_t hi, size_t amax)
{
	static const size_t idx[] = { 1, 2, 3, 7, 8, 100, 255 };
	static const size_t cnt[] = { 1, 8, 64 };
	for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++)
		for (size_t j = 0; j < sizeof cnt / sizeof cnt[0]; j++) {
			if (idx[i] + cnt[j] > MI_SLICES_PER_SEGMENT)
				continue;
			uintptr_t ps = (uintptr_t)seg +
				idx[i] * MI_SEGMENT_SLICE_SIZE;
			size_t psize = cnt[j] * MI_SEGMENT_SLICE_SIZE;
			for (size_t bs = 0; bs <= ((size_t)1 << 20) + 64;
			     bs += (bs < 4096 ? 1 : 8))
				if (probe(idx[i], cnt[j], bs) !=
				    model(rule, c, lo, hi, amax, ps, psize, bs))
					return false;
			for (size_t bs = (size_t)1 << 21;
			     bs < ((size_t)1 << 40); bs <<= 1)
				if (probe(idx[i], cnt[j], bs) !=
				    model(rule, c, lo, hi, amax, ps, psize, bs))
					return false;
		}
	return true;
}

int main(void)
{
	seg = aligned_alloc(MI_SEGMENT_SIZE,
		(sizeof(mi_segment_t) + MI_SEGMENT_SIZE - 1) &
		~(MI_SEGMENT_SIZE - 1));
	if (seg == NULL)
		return 1;
	memset(seg, 0, sizeof *seg);
EOF
# Segments, slices, the page-start rule.
cat <<'EOF'
	VAL("segment_shift", MI_SEGMENT_SHIFT);
	VAL("slice_shift", MI_SEGMENT_SLICE_SHIFT);
	VAL("slices_per_segment", MI_SLICES_PER_SEGMENT);
	{
		/* Rule 0 (fixed): the offset at 8 .. 1024 or none.  */
		size_t c = probe(1, 1, 8), lo = 0, hi = 0;
		if (c != 0) {
			lo = 1;
			while (probe(1, 1, lo) != c) lo++;
			hi = lo;
			while (probe(1, 1, hi + 1) == c) hi++;
		}
#ifdef MI_MAX_ALIGN_GUARANTEE
		size_t amax = MI_MAX_ALIGN_GUARANTEE;
#else
		size_t amax = 0;
#endif
		const char *rule = "MI_START_UNKNOWN";
		if (fits(0, c, lo, hi, 0))
			rule = "MI_START_FIXED";
		else if (fits(1, 0, 0, 0, 0))
			rule = "MI_START_SMALL", c = lo = hi = 0;
		else if (fits(2, 0, 0, 0, amax))
			rule = "MI_START_ALIGNED", c = lo = hi = 0;
		else if (fits(3, 0, 0, 0, amax))
			rule = "MI_START_ALIGNED16", c = lo = hi = 0;
		else
			fprintf(stderr, "mimalloc-layouts.sh: the page-start "
				"rule is none the walker knows\n");
		printf("\t.start_rule = %s,\n", rule);
		VAL("start_offset", c);
		VAL("start_offset_min", lo);
		VAL("start_offset_max", hi);
		VAL("start_align_max",
		    strncmp(rule, "MI_START_ALIGNED", 16) ? 0 : amax);
	}
#ifdef MI_HUGE_BLOCK_SIZE
	VAL("huge_block_size", MI_HUGE_BLOCK_SIZE);
#else
	VAL("huge_block_size", 0);
#endif
	VAL("bin_huge", MI_BIN_HUGE);
#ifdef MI_ENCODE_FREELIST
	printf("\t.encoded = true,\n");
#else
	printf("\t.encoded = false,\n");
#endif
	VAL("padding", MI_PADDING_SIZE);
EOF
# mi_segment_t.
seg_field() {	# LAYOUT-NAME CANDIDATE...
	local n=$1 f; shift
	for f; do
		if has "$seg_body" "$f"; then
			emit "$n" mi_segment_t "$f" "$seg_body"; return
		fi
	done
	echo "	NO(\"$n\");"
}
seg_field seg_memid memid
seg_field seg_commit_mask commit_mask
seg_field seg_decommit_mask decommit_mask purge_mask
echo '	VAL("seg_commit_mask_bytes", sizeof(mi_commit_mask_t));'
seg_field seg_abandoned_next abandoned_next
seg_field seg_abandoned abandoned
seg_field seg_used used
seg_field seg_cookie cookie
seg_field seg_segment_slices segment_slices
seg_field seg_info_slices segment_info_slices
seg_field seg_kind kind
seg_field seg_slice_entries slice_entries
seg_field seg_thread_id thread_id
seg_field seg_slices slices
# mi_page_t.
page_field() {
	local n=$1 f; shift
	for f; do
		if has "$page_body" "$f"; then
			emit "$n" mi_page_t "$f" "$page_body"; return
		fi
	done
	echo "	NO(\"$n\");"
}
echo '	VAL("page_size", sizeof(mi_page_t));'
page_field page_slice_count slice_count
page_field page_slice_offset slice_offset
page_field page_capacity capacity
page_field page_reserved reserved
page_field page_flags flags
page_field page_free free
page_field page_used used
echo '	VAL("page_used_width", WIDTH(mi_page_t, used));'
if has "$page_body" block_size; then
	page_field page_block_size block_size
	echo '	VAL("page_block_size_width", WIDTH(mi_page_t, block_size));'
else
	page_field page_block_size xblock_size
	echo '	VAL("page_block_size_width", WIDTH(mi_page_t, xblock_size));'
fi
page_field page_local_free local_free
page_field page_keys keys
page_field page_xthread_free xthread_free
page_field page_xheap xheap
page_field page_next next
page_field page_prev prev
page_field page_page_start page_start
# The page's heap tag: a byte (heap_tag, 2.1.7 and later) or CPython's
# 4-bit `tag`; where it lies and which bits, found by setting it in a
# zeroed page.
for f in heap_tag tag; do
	has "$page_body" $f || continue
	cat <<EOF
	{
		mi_page_t pg;
		unsigned char *b = (unsigned char *)&pg;
		size_t i;
		memset(&pg, 0, sizeof pg);
		pg.$f = (uint8_t)~0u;
		for (i = 0; i < sizeof pg && b[i] == 0; i++)
			;
		VAL("page_heap_tag", i);
		VAL("page_heap_tag_shift", __builtin_ctz(b[i]));
		VAL("page_heap_tag_bits", __builtin_popcount(b[i]));
	}
EOF
	break
done
if ! has "$page_body" heap_tag && ! has "$page_body" tag; then
	echo '	NO("page_heap_tag");'
	echo '	VAL("page_heap_tag_shift", 0);'
	echo '	VAL("page_heap_tag_bits", 0);'
fi
# mi_heap_t and mi_tld_t.
heap_field() {
	local n=$1 f; shift
	for f; do
		if has "$heap_body" "$f"; then
			emit "$n" mi_heap_t "$f" "$heap_body"; return
		fi
	done
	echo "	NO(\"$n\");"
}
echo '	VAL("heap_size", sizeof(mi_heap_t));'
heap_field heap_tld tld
heap_field heap_pages pages
heap_field heap_thread_delayed_free thread_delayed_free
heap_field heap_thread_id thread_id
heap_field heap_cookie cookie
heap_field heap_keys keys
heap_field heap_page_count page_count
heap_field heap_next next
heap_field heap_tag tag
echo '	VAL("queue_size", sizeof(mi_page_queue_t));'
for f in heap_backing heaps; do
	if has "$tld_body" $f; then
		emit "tld_$f" mi_tld_t "$f" "$tld_body"
	else
		echo "	NO(\"tld_$f\");"
	fi
done
# What the doc cites beside the table.
cat <<'EOF'
	printf("\t/* info: sizeof mi_segment_t %zu, mi_heap_t %zu, mi_tld_t %zu,"
	       " mi_stats_t %zu; pages_free_direct at %zu, %zu entries;"
	       " tld in mi_thread_data_t at %zu; MI_ENCODE_FREELIST %d */\n",
	       sizeof(mi_segment_t), sizeof(mi_heap_t), sizeof(mi_tld_t),
	       sizeof(mi_stats_t), offsetof(mi_heap_t, pages_free_direct),
	       (size_t)MI_PAGES_DIRECT, offsetof(mi_thread_data_t, tld),
#ifdef MI_ENCODE_FREELIST
	       1
#else
	       0
#endif
	       );
EOF
# 2.1.2 made the memid a struct: where its kind (MI_MEM_ARENA, MI_MEM_OS..)
# and, for an arena's segment, its arena id lie.
if has "$seg_body" memid && grep -q 'mi_memkind_t *memkind' "$types"; then
	cat <<'EOF'
	printf("\t/* info: segment memid.memkind at %zu,"
	       " memid.mem.arena.id at %zu */\n",
	       offsetof(mi_segment_t, memid.memkind),
	       offsetof(mi_segment_t, memid.mem.arena.id));
EOF
fi
if has "$tld_body" stats; then
	cat <<'EOF'
	printf("\t/* info: tld stats at %zu */\n", offsetof(mi_tld_t, stats));
EOF
fi
echo '	return 0;'
echo '}'
} >"$prog"

run() {	# VARIANT FLAGS...
	local v=$1; shift
	gcc -std=gnu11 -w -O0 "$@" -I"$inc" -o "$work/lay-$v" "$prog" \
		2>"$work/cc-$v.log" ||
		{ sed -n '1,20s/^/  /p' "$work/cc-$v.log" >&2
		  die "$name ($v): the offset program did not compile"; }
	echo "/* mimalloc $name, $v build ($*) */"
	"$work/lay-$v" || die "$name ($v): the offset program failed"
}

if $cpython; then variants=(ft ft-debug gil)
else variants=(release secure debug padding)
fi
for v in "${variants[@]}"; do
	[ "$variant" = all ] || [ "$variant" = "$v" ] || continue
	case $v in
	release) run release -DNDEBUG ;;
	secure) run secure -DNDEBUG -DMI_SECURE=4 ;;
	debug) run debug -UNDEBUG -DMI_DEBUG=2 ;;
	padding) run padding -DNDEBUG -DMI_PADDING=1 ;;
	ft) run ft -DNDEBUG -DPy_GIL_DISABLED -DMI_DEBUG=0 ;;
	ft-debug) run ft-debug -UNDEBUG -DPy_GIL_DISABLED -DMI_DEBUG=2 ;;
	gil) run gil -DNDEBUG -DMI_DEBUG=0 ;;
	esac
done
