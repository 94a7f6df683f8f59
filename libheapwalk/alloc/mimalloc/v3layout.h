/* v3layout.h - where mimalloc 3.x keeps what its walker reads: the
 * offsets of its page, arena, heap and thread-local fields, release by
 * release.
 *
 * 3.x has no segments: pages come from arenas (or straight from the
 * OS) and a two-level page map names the page of every 64 KiB slice.
 * A stripped library says neither its release nor whether it encodes
 * its free lists (MI_SECURE >= 3 adds the page's keys), so v3.c tries
 * each row on the pages the map names and keeps the one they agree
 * with.  Every row was read from the release's own headers (offsetof
 * on LP64); doc/design/mimalloc.md section 12 says where each was
 * checked.
 */
#ifndef HW_MI_V3LAYOUT_H
#define HW_MI_V3LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"

/* mi_memkind_t: memory from the OS (a page too large for an arena) or
   from an arena.  */
#define MI_V3_MEM_OS 4
#define MI_V3_MEM_OS_REMAP 6
#define MI_V3_MEM_ARENA 7

struct mi_v3_layout {
	/* What the shared reports read (releases, encoded, padding, the
	   slice size, mi_page_t's and mi_heap_t's sizes); its segment
	   fields are unused.  */
	struct mi_layout base;
	/* The page map: its table of sub-map pointers is map_size bytes,
	   the first sub-map right after it (the root's word 0 points
	   there); a sub-map holds sub_count page pointers, one a slice.  */
	uint32_t map_size, sub_count;
	/* mi_page_t.  page_start is the first block's address (3.0.1) or,
	   when start_words, a u32 count of words from the page's first
	   slice (3.4.3's page_woffset).  */
	uint16_t pg_thread_id, pg_free, pg_used, pg_capacity, pg_reserved;
	uint16_t pg_local_free, pg_xthread_free, pg_block_size, pg_start;
	bool start_words;
	uint16_t pg_tag, pg_keys, pg_heap, pg_memid;
	/* mi_memid_t, from its start: arena and slice index, count (u32);
	   or the OS base and size; the kind (u32).  */
	uint16_t mem_arena, mem_slice_index, mem_slice_count;
	uint16_t mem_os_base, mem_os_size, mem_kind;
	/* mi_arena_t: its slices, the header's, the committed bitmap
	   (a mi_bitmap_t: its bits, one a slice, from bitmap_bits on).  */
	uint16_t ar_slice_count, ar_info_slices, ar_committed;
	uint16_t bitmap_bits;
	/* mi_arena_t.pages: a bitmap whose set bits are the first slices
	   of the pages in use, or MI_NO_FIELD.  3.0.1's page map keeps a
	   freed page's entries (its _mi_page_map_unregister sets the range
	   to the page again, not to NULL), so an entry is a page only if
	   this bit says so; a stale entry is not damage.  */
	uint16_t ar_pages;
	/* mi_heap_t (3.4.3: the thread's mi_theap_t) and mi_tld_t.  */
	uint16_t hp_tld, hp_cookie, hp_page_count, hp_next, hp_tag;
	uint16_t tld_thread_id, tld_heap_backing, tld_heaps;
	/* The owner thread id is xthread_id less these low flag bits
	   (in-full-queue 1, has-aligned 2, abandoned-mapped 4).  */
	uint8_t thread_flag_bits;
};

/* Every 3.x layout known, newest first; n set to their count.  */
const struct mi_v3_layout *mi_v3_layouts(unsigned *n);

#endif /* HW_MI_V3LAYOUT_H */
