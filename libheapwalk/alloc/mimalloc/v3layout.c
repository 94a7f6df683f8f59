/* v3layout.c - the mimalloc 3.x layouts v3.c knows, newest first.
 *
 * Each row but 3.6.0's is its releases' own structures
 * (include/mimalloc/types.h, and arena.c for 3.0 and 3.1's mi_arena_t)
 * as gcc lays them out on LP64 (offsetof, every tag of the mirror from
 * v3.0.1 to v3.4.3: the releases of a row have the same offsets),
 * release (-DNDEBUG) and secure (MI_SECURE=4: the page's two keys, an
 * 8-byte mi_padding_t at every block's end).  A page map of 47 virtual
 * address bits (x86_64's canonical half; _mi_page_map_init clamps to it)
 * is 2^18 sub-map pointers, 2 MiB; each sub-map 8192 pointers of 64 KiB
 * slices.  Sizes of mi_page_t and of the heap are the walker's read
 * sizes.
 */
#include "v3layout.h"

#define NO MI_NO_FIELD

/* The shared part: what report.c, params.c and walk.c read of a row
   (a segment here stands for an arena, 1 GiB by default).  */
#define BASE(ver, rels, enc, pgsize, hpsize)                               \
	{ .version = ver, .releases = rels, .encoded = enc,                \
	  .segment_shift = 30, .slice_shift = 16,                          \
	  .slices_per_segment = 16384, .page_size = pgsize,                \
	  .heap_size = hpsize, .padding = (enc) ? 8 : 0,                   \
	  .page_page_start = NO, .page_heap_tag = NO, .heap_tag = NO,      \
	  .page_keys = NO }

/* What 3.0 to 3.4 share: one page map found by its root, memid kinds
   with MI_MEM_META, the arena struct at its memory's start, the first
   fields of mi_page_t and of mi_memid_t.  */
#define ROOTED                                                              \
	.map = MI_V3_MAP_ROOT, .map_size = 2u << 20, .sub_count = 8192,     \
	.kind_os = 4, .kind_os_last = 6, .kind_arena = 7,                  \
	.ar_start = NO, .tid_reserved = 0, .thread_flag_bits = 3,          \
	.pg_thread_id = 0, .pg_free = 8, .pg_used = 16,                    \
	.pg_capacity = 18, .pg_reserved = 20, .pg_local_free = 24,         \
	.pg_xthread_free = 32, .pg_block_size = 40, .pg_start = 48,        \
	.mem_arena = 0, .mem_slice_index = 8, .mem_slice_count = 12,       \
	.mem_os_base = 0, .mem_os_size = 8, .mem_kind = 16,                \
	.bitmap_bits = 128, .tld_thread_id = 0

/* 3.0 and 3.1: the page struct opens its own first slice; page_start
   is a pointer; heaps are per thread (mi_heap_t), keys before heap; the
   arena's `pages` bitmap names the pages in use.  3.1 adds the arena's
   commit function and grows the heap.  */
#define V30(ver, rels, enc, k, hp_size, committed, pages, cookie, count,   \
	    next, tag, backing)                                             \
	{ .base = BASE(ver, rels, enc, 120 + (k), hp_size + (k) / 2),      \
	  ROOTED, .start_kind = MI_V3_START_PTR, .pg_tag = 56,             \
	  .pg_keys = (enc) ? 64 : NO, .pg_heap = 64 + (k),                 \
	  .pg_shared_heap = NO, .pg_memid = 96 + (k),                      \
	  .ar_slice_count = 32, .ar_info_slices = 40,                      \
	  .ar_committed = committed, .ar_pages = pages, .ar_index = NO,    \
	  .hp_arena_pages = NO, .hp_tld = 0, .hp_cookie = cookie,          \
	  .hp_page_count = count, .hp_next = next, .hp_tag = tag,          \
	  .hp_shared = NO, .tld_heap_backing = backing,                    \
	  .tld_heaps = (backing) + 8, .stats_version = 0 }

/* 3.2 to 3.4: a page's owner is a thread's theap (the "heap" here) of a
   shared mi_heap_t; tlds keep no backing heap; the pages bitmaps are
   per heap (mi_heap_t.arena_pages[arena index], the main heap's in the
   arena).  3.4 moves the page structs apart from their blocks (the
   arena's pages_meta) and counts the first block in words from its
   struct.  */
#define V32(ver, rels, enc, k, pg_size, start, memid, hp_size, committed,  \
	    cookie, count, next)                                            \
	{ .base = BASE(ver, rels, enc, pg_size + (k), hp_size + (k) / 2),  \
	  ROOTED, .start_kind = start, .pg_tag = NO,                       \
	  .pg_keys = (enc) ? 56 : NO, .pg_heap = 56 + (k),                 \
	  .pg_shared_heap = 64 + (k), .pg_memid = (memid) + (k),           \
	  .ar_slice_count = 40, .ar_info_slices = 48,                      \
	  .ar_committed = committed, .ar_pages = NO, .ar_index = 32,       \
	  .hp_arena_pages = 752, .hp_tld = 0, .hp_cookie = cookie,         \
	  .hp_page_count = count, .hp_next = next, .hp_tag = NO,           \
	  .hp_shared = 8, .tld_heap_backing = NO, .tld_heaps = 32,         \
	  .stats_version = 0 }

#define V34(enc, k)                                                         \
	V32("3.4.3", "3.4.0 to 3.4.3", enc, k, 112, MI_V3_START_WORDS, 88, \
	    8104, 112, 40, 184, 232)
#define V33(enc, k)                                                         \
	V32("3.3.2", "3.3.0 to 3.3.2", enc, k, 120, MI_V3_START_PTR, 96,   \
	    8096, 112, 32, 176, 224)
#define V32x(enc, k)                                                        \
	V32("3.2.8", "3.2.6 to 3.2.8", enc, k, 120, MI_V3_START_PTR, 96,   \
	    8048, 96, 24, 168, 208)
#define V31(enc, k)                                                         \
	V30("3.1.6", "3.0.3, 3.1.4 to 3.1.6", enc, k, 3688, 88, 112, 24,   \
	    168, 208, 226, 32)
#define V301(enc, k)                                                        \
	V30("3.0.12", "3.0.1, 3.0.7 to 3.0.12", enc, k, 3672, 72, 96, 16,  \
	    160, 192, 210, 24)

/* 3.6.0 (Debian sid's libmimalloc3 3.6.0+ds-1; its source was not at
   hand: every offset read from its library's code and checked on its
   cores, doc/design/mimalloc.md section 12).  No global page map: a
   chunk map at every 256 MiB (v3layout.h); the page struct of a page of
   one slice opens the slice, a longer page's sits in its first slot
   (128 bytes, the struct's size); the first block a byte offset from
   the struct; xthread_id moved to 8 (word 0 is the slot's own word);
   memid kinds without MI_MEM_META (OS 3-5, arena 6); the arena struct
   after its chunk map, its slices from its start pointer; the pages
   bitmaps per heap (mi_heap_t.arena_pages[arena index]); a theap opens
   with its direct page pointers, its tld at 0x408.  Only the release
   build: where a secure build keeps its keys was not seen.  */
#define V360                                                                \
	{ .base = BASE("3.6.0", "3.6.0", false, 128, 0x22c8),              \
	  .map = MI_V3_MAP_CHUNKS, .chunk_shift = 28, .slot_size = 128,    \
	  .pg_thread_id = 8, .pg_free = 16, .pg_local_free = 24,           \
	  .pg_block_size = 32, .pg_used = 40, .pg_start = 48,              \
	  .start_kind = MI_V3_START_BYTES, .pg_capacity = 56,              \
	  .pg_reserved = 58, .pg_xthread_free = 64, .pg_tag = NO,          \
	  .pg_keys = NO, .pg_heap = 72, .pg_shared_heap = 80,              \
	  .pg_memid = 104,                                                 \
	  .mem_arena = 0, .mem_slice_index = 8, .mem_slice_count = 12,     \
	  .mem_os_base = 0, .mem_os_size = 8, .mem_kind = 16,              \
	  .kind_os = 3, .kind_os_last = 5, .kind_arena = 6,                \
	  .ar_slice_count = 0x30, .ar_info_slices = 0x38,                  \
	  .ar_committed = 0x78, .bitmap_bits = 128, .ar_start = 0x28,      \
	  .ar_pages = NO, .ar_index = 0x20, .hp_arena_pages = 0x308,       \
	  .hp_tld = 0x408, .hp_cookie = NO, .hp_page_count = 0x520,     \
	  .hp_next = 0x560, .hp_tag = NO, .hp_shared = 0x410,              \
	  .tld_thread_id = 0, .tld_heap_backing = NO, .tld_heaps = 0x20,   \
	  .thread_flag_bits = 3, .tid_reserved = 8,                        \
	  .stats_version = 6, .sp_stats = 0x608, .hp_stats = 0x848 }

/* mi_stats_t of 3.6.0 (MI_STAT_VERSION 6; offsetof with the
   mimalloc-stats.h Debian's libmimalloc-dev ships).  Its subprocess's
   copy and its heaps' sum to what mi_stats_print shows (checked on
   t0491's cores).  3.2 to 3.4 keep versions 4 and 5, but spread over
   their subprocess, heaps and theaps in a way their printout does not
   sum from: not read.  */
static const struct mi_v3_stats stats_layouts[] = {
	{ .version = 6, .size = 4480, .pages = 16, .reserved = 40,
	  .committed = 64, .abandoned = 128, .threads = 152,
	  .allocated = 176, .arenas = 264 },
};

const struct mi_v3_stats *mi_v3_stats_layout(unsigned v)
{
	for (unsigned k = 0; k < sizeof stats_layouts / sizeof stats_layouts[0];
	     k++)
		if (stats_layouts[k].version == v)
			return &stats_layouts[k];
	return NULL;
}

static const struct mi_v3_layout layouts[] = {
	V360,
	V34(false, 0),
	V34(true, 16),
	V33(false, 0),
	V33(true, 16),
	V32x(false, 0),
	V32x(true, 16),
	V31(false, 0),
	V31(true, 16),
	V301(false, 0),
	V301(true, 16),
};

const struct mi_v3_layout *mi_v3_layouts(unsigned *n)
{
	*n = sizeof layouts / sizeof layouts[0];
	return layouts;
}

