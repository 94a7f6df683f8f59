/* v3layout.c - the mimalloc 3.x layouts v3.c knows, newest first.
 *
 * Each row is the release's own structures (include/mimalloc/types.h,
 * and arena.c for 3.0.1's mi_arena_t) as gcc lays them out on LP64,
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
#define BASE(ver, enc, pgsize, hpsize)                                     \
	{ .version = ver, .releases = ver, .encoded = enc,                 \
	  .segment_shift = 30, .slice_shift = 16,                          \
	  .slices_per_segment = 16384, .page_size = pgsize,                \
	  .heap_size = hpsize, .padding = (enc) ? 8 : 0,                   \
	  .page_page_start = NO, .page_heap_tag = NO, .heap_tag = NO,      \
	  .page_keys = NO }

/* What 3.0.1 and 3.4.3 share: one page map found by its root, memid
   kinds with MI_MEM_META, the arena struct at its memory's start.  */
#define ROOTED                                                              \
	.map = MI_V3_MAP_ROOT, .map_size = 2u << 20, .sub_count = 8192,     \
	.kind_os = 4, .kind_os_last = 6, .kind_arena = 7,                  \
	.ar_start = NO, .ar_index = NO, .hp_arena_pages = NO,              \
	.tid_reserved = 0

/* 3.0.1: the page struct opens its own first slice; page_start is a
   pointer; heaps are per thread (mi_heap_t), keys before heap.  */
#define V301(enc, k)                                                        \
	{ .base = BASE("3.0.1", enc, 120 + (k), 3072 + (k) / 2), ROOTED,   \
	  .pg_thread_id = 0, .pg_free = 8, .pg_used = 16,                  \
	  .pg_capacity = 18, .pg_reserved = 20, .pg_local_free = 24,       \
	  .pg_xthread_free = 32, .pg_block_size = 40, .pg_start = 48,      \
	  .start_kind = MI_V3_START_PTR, .pg_tag = 56,                     \
	  .pg_keys = (enc) ? 64 : NO, .pg_heap = 64 + (k),                 \
	  .pg_shared_heap = NO, .pg_memid = 96 + (k),                      \
	  .mem_arena = 0, .mem_slice_index = 8, .mem_slice_count = 12,     \
	  .mem_os_base = 0, .mem_os_size = 8, .mem_kind = 16,              \
	  .ar_slice_count = 32, .ar_info_slices = 40, .ar_committed = 72,  \
	  .bitmap_bits = 128, .ar_pages = 96,                              \
	  .hp_tld = 0, .hp_cookie = 16, .hp_page_count = 160,              \
	  .hp_next = 192, .hp_tag = 210, .hp_shared = NO,                  \
	  .tld_thread_id = 0, .tld_heap_backing = 24, .tld_heaps = 32,     \
	  .thread_flag_bits = 7 }

/* 3.4.3: page structs apart from their blocks (the arena's pages_meta),
   the first block page_woffset words from the struct; a page's owner
   is a thread's theap (the "heap" here), mi_heap_t being shared; tlds
   keep no backing heap.  */
#define V343(enc, k)                                                        \
	{ .base = BASE("3.4.3", enc, 112 + (k), 8104 + (k) / 2), ROOTED,   \
	  .pg_thread_id = 0, .pg_free = 8, .pg_used = 16,                  \
	  .pg_capacity = 18, .pg_reserved = 20, .pg_local_free = 24,       \
	  .pg_xthread_free = 32, .pg_block_size = 40, .pg_start = 48,      \
	  .start_kind = MI_V3_START_WORDS, .pg_tag = NO,                   \
	  .pg_keys = (enc) ? 56 : NO, .pg_heap = 56 + (k),                 \
	  .pg_shared_heap = 64 + (k), .pg_memid = 88 + (k),                \
	  .mem_arena = 0, .mem_slice_index = 8, .mem_slice_count = 12,     \
	  .mem_os_base = 0, .mem_os_size = 8, .mem_kind = 16,              \
	  .ar_slice_count = 40, .ar_info_slices = 48, .ar_committed = 112, \
	  .bitmap_bits = 128, .ar_pages = NO,                              \
	  .hp_tld = 0, .hp_cookie = 40, .hp_page_count = 184,              \
	  .hp_next = 232, .hp_tag = NO, .hp_shared = 8,                    \
	  .tld_thread_id = 0, .tld_heap_backing = NO, .tld_heaps = 32,     \
	  .thread_flag_bits = 3 }

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
	{ .base = BASE("3.6.0", false, 128, 0x22c8),                       \
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
	  .thread_flag_bits = 3, .tid_reserved = 8 }

static const struct mi_v3_layout layouts[] = {
	V360,
	V343(false, 0),
	V343(true, 16),
	V301(false, 0),
	V301(true, 16),
};

const struct mi_v3_layout *mi_v3_layouts(unsigned *n)
{
	*n = sizeof layouts / sizeof layouts[0];
	return layouts;
}

