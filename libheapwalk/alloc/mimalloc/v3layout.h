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

/* How a release's pages are found.  */
enum mi_v3_map {
	/* 3.0 to 3.4: one page map, _mi_page_map, a table of sub-map
	   pointers; the root is found in mimalloc's data (v3.c).  */
	MI_V3_MAP_ROOT,
	/* 3.6: no global map.  Every 2^chunk_shift bytes of mimalloc's
	   memory (an arena's, or an OS allocation's) begin with their own
	   map, a slot of slot_size bytes a slice, the slot's first word the
	   page the slice is in; a page of more than one slice keeps its
	   struct in its first slice's slot (its first word then names
	   itself).  mi_free finds a block's page so: (p & ~(chunk - 1)) +
	   slice * slot_size.  */
	MI_V3_MAP_CHUNKS,
};

/* Where mi_page_t keeps its first block.  */
enum mi_v3_start {
	MI_V3_START_PTR,          /* 3.0.1: its address */
	MI_V3_START_WORDS,        /* 3.4.3: a u32 count of words from the struct */
	MI_V3_START_BYTES,        /* 3.6: a u64 count of bytes from the struct */
};

struct mi_v3_layout {
	/* What the shared reports read (releases, encoded, padding, the
	   slice size, mi_page_t's and mi_heap_t's sizes); its segment
	   fields are unused.  */
	struct mi_layout base;
	enum mi_v3_map map;
	/* MI_V3_MAP_ROOT: the table of sub-map pointers is map_size bytes,
	   the first sub-map right after it (the root's word 0 points
	   there); a sub-map holds sub_count page pointers, one a slice.  */
	uint32_t map_size, sub_count;
	/* MI_V3_MAP_CHUNKS: a chunk's size (log2) and a slot's.  */
	uint8_t chunk_shift;
	uint16_t slot_size;
	/* mi_page_t.  pg_heap is its owner (3.4+: a thread's theap), and
	   pg_shared_heap, where there is one, the mi_heap_t that theap is
	   of.  */
	uint16_t pg_thread_id, pg_free, pg_used, pg_capacity, pg_reserved;
	uint16_t pg_local_free, pg_xthread_free, pg_block_size, pg_start;
	enum mi_v3_start start_kind;
	uint16_t pg_tag, pg_keys, pg_heap, pg_shared_heap, pg_memid;
	/* mi_memid_t, from its start: arena and slice index, count (u32);
	   or the OS base and size; the kind (u32), whose values (enum
	   mi_memkind_e) moved when 3.6 dropped MI_MEM_META: the OS kinds
	   run from kind_os to kind_os_last.  */
	uint16_t mem_arena, mem_slice_index, mem_slice_count;
	uint16_t mem_os_base, mem_os_size, mem_kind;
	uint8_t kind_os, kind_os_last, kind_arena;
	/* mi_arena_t: its slices, the header's, the committed bitmap
	   (a mi_bitmap_t: its bits, one a slice, from bitmap_bits on).
	   ar_start: a pointer to its memory's start (3.6 puts the struct
	   after its chunk map), or MI_NO_FIELD: the struct is there.  */
	uint16_t ar_slice_count, ar_info_slices, ar_committed;
	uint16_t bitmap_bits, ar_start;
	/* The bitmap whose set bits are the first slices of the pages in
	   use: at ar_pages in the arena (3.0.1), or (3.6) the first word
	   of the arena's mi_arena_pages_t that the page's shared heap
	   names at hp_arena_pages + 8 * the arena's index (at ar_index);
	   MI_NO_FIELD for neither.  A freed page's map entries stay (3.0.1's
	   _mi_page_map_unregister sets the range to the page again; 3.6
	   leaves its slots), so an entry is a page only if this bit says
	   so; a stale entry is not damage.  */
	uint16_t ar_pages, ar_index, hp_arena_pages;
	/* mi_heap_t (3.4+: the thread's mi_theap_t, of the mi_heap_t at
	   hp_shared) and mi_tld_t.  */
	uint16_t hp_tld, hp_cookie, hp_page_count, hp_next, hp_tag, hp_shared;
	uint16_t tld_thread_id, tld_heap_backing, tld_heaps;
	/* mimalloc's own counters (mimalloc-stats.h's mi_stats_t, its
	   size and version first): the stats version, or 0 when heapwalk
	   reads none; where the subprocess's and each mi_heap_t's copy
	   is.  */
	uint8_t stats_version;
	uint16_t sp_stats, hp_stats;
	/* The owner thread id is xthread_id less these low flag bits
	   (in-full-queue 1, has-aligned 2, abandoned-mapped 4).  */
	uint8_t thread_flag_bits;
	/* A tld's thread id at most this is none of a thread's (3.6: 8,
	   its own allocations' theap), or 0.  */
	uint8_t tid_reserved;
};

/* mi_stats_t of one MI_STAT_VERSION: its size, and where its counts
   (mi_stat_count_t: total, peak, current) and counters (total) are;
   MI_NO_FIELD where that version has none.  */
struct mi_v3_stats {
	uint8_t version;
	uint32_t size;
	uint16_t pages, reserved, committed, abandoned, threads, allocated;
	uint16_t arenas;
};

/* The mi_stats_t of stats version v, or NULL.  */
const struct mi_v3_stats *mi_v3_stats_layout(unsigned v);

/* Every 3.x layout known, newest first; n set to their count.  */
const struct mi_v3_layout *mi_v3_layouts(unsigned *n);

#endif /* HW_MI_V3LAYOUT_H */
