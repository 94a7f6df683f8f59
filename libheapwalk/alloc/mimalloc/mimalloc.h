/* mimalloc.h - Microsoft's mimalloc 2.x (segments) behind the allocator
 * interface (doc/design/mimalloc.md has every layout and where it was
 * read).
 *
 * mimalloc takes memory from the system in segments aligned to their
 * size (32 MiB in 2.x); a segment begins with its header, then an array
 * of slice entries, one per 64 KiB slice.  A run of slices is either a
 * page (its first entry is the page's mi_page_t: block size, capacity,
 * three free lists) or a free span.  Every block of a page is in use
 * unless one of its lists holds it:
 *
 *   free        blocks malloc hands out next
 *   local_free  blocks the owning thread freed
 *   xthread_free (low 2 bits are flags)  blocks other threads freed
 *   the owning heap's thread_delayed_free  the same, for a full page
 *
 * Opening finds every segment by its shape (detect.c: aligned, its
 * cookie the main heap's cookie XOR its address), reads its pages once
 * (segments.c) and every block's list into two bits a block (lists.c);
 * a walk then gives the blocks page by page, in address order (walk.c).
 */
#ifndef HW_MIMALLOC_H
#define HW_MIMALLOC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../target/target.h"
#include "../alloc.h"
#include "layout.h"

#define MI_NONE UINT32_MAX
/* mi_segment_kind_t.  */
#define MI_SEGMENT_NORMAL 0
#define MI_SEGMENT_HUGE 1

/* Where a block of a page is: two bits a block in mi_state.lists.  */
enum mi_list {
	MI_IN_USE,
	MI_ON_FREE,               /* the page's free list */
	MI_ON_LOCAL,              /* its local_free list */
	MI_ON_THREAD,             /* xthread_free, or its heap's delayed list */
};

/* One page (a run of slices with blocks), or a free span of slices
   (block_size 0: no blocks, no heap).  */
struct mi_page {
	uint64_t meta;            /* its mi_page_t: the run's first slice */
	uint64_t area;            /* its slices' memory: [area, end) */
	uint64_t start;           /* its first block */
	uint64_t end;
	uint64_t block_size;
	uint64_t heap;            /* xheap: its heap, 0 when abandoned */
	uint64_t free, local_free, thread_free;  /* list heads, decoded */
	uint64_t keys[2];         /* encoded builds: the page's keys */
	uint64_t states;          /* its first block's index in lists[] */
	uint32_t capacity, reserved, used;
	uint32_t segment;         /* index in mi_state.segments */
	int32_t heap_index;       /* in mi_state.heaps; -1: none (abandoned) */
	uint16_t bin;             /* its size class */
	uint8_t flags;            /* in_full (1), has_aligned (2) */
	uint8_t delayed;          /* xthread_free's low two bits */
	uint8_t tag;              /* its heap's tag (2.1.7+, CPython) */
	uint32_t nfree, nlocal, nthread;  /* blocks on each list */
	uint32_t lost;            /* free blocks its lists lost to damage */
	bool lists_bad;           /* a list of it was damaged */
};

/* One segment.  */
struct mi_segment {
	uint64_t addr, size;      /* [addr, addr + size) */
	uint64_t info_size;       /* its header and slice array */
	uint64_t thread_id;       /* its owner's; 0: abandoned */
	int32_t heap_index;       /* its owner's backing heap, or -1 */
	/* Its pages and free spans: mi_state.pages from first_page on;
	   npages of them pages.  */
	uint32_t first_page, npages;
	uint32_t used, abandoned; /* its own counts of pages */
	uint8_t kind;
	/* Free spans: slices of no page, and how many are committed
	   (by the commit mask).  */
	uint32_t free_slices;
	uint64_t commit[8];       /* the commit mask: a bit a slice */
	/* 3.x: its mi_arena_t (0: a page's own OS memory).  */
	uint64_t arena;
	/* 3.x, an arena: its own committed bitmap, a bit a slice (NULL:
	   2.x, or not in the core: every slice committed).  */
	uint64_t *commit_bits;
};

/* One heap (a thread's default, or one the program made).  */
struct mi_heap {
	uint64_t addr;
	uint64_t thread_id;       /* its thread's thread pointer */
	uint64_t tld;
	uint64_t cookie;
	uint64_t keys[2];
	uint64_t delayed;         /* thread_delayed_free, decoded */
	uint64_t page_count;
	uint32_t npages, ndelayed;  /* pages of it found; delayed blocks */
	int16_t tag;              /* its tag (2.1.7+, CPython), or -1 */
	bool main;                /* _mi_heap_main (cookie == the key) */
	bool backing;             /* its tld's backing heap */
	bool own;                 /* 3.6: the theap of mimalloc's own data */
	uint64_t shared;          /* 3.4+: the mi_heap_t of this theap */
};

/* mimalloc's own counters, as its subprocess and heaps keep them (3.2
   on; v3.c): each count's total, peak and current.  */
enum { MI_ST_TOTAL, MI_ST_PEAK, MI_ST_CURRENT };
struct mi_own_stats {
	bool read;                /* false: none read (stats_why says why) */
	bool has_allocated;       /* the build counts bytes in blocks (3.6) */
	unsigned version;         /* MI_STAT_VERSION */
	uint32_t copies;          /* mi_stats_t copies summed */
	int64_t pages[3], reserved[3], committed[3], abandoned[3];
	int64_t threads[3], allocated[3];
	int64_t arenas;
};

struct mi_state {
	struct hw_session *s;
	struct hw_target *t;
	const struct mi_layout *L;
	const char *home;         /* the file mimalloc is in, or NULL */
	const char *how;          /* how the segments were found */
	bool v3;                  /* 3.x: segments are arenas (v3.c) */
	uint64_t key;             /* _mi_heap_main.cookie */
	uint64_t main_heap;       /* its address, 0 when not found */
	struct mi_segment *segments;  /* by address */
	uint32_t nsegments;
	uint32_t rejected;        /* aligned headers of another cookie */
	struct mi_page *pages;    /* by address (segments', in order) */
	uint32_t npages;
	struct mi_heap *heaps;    /* by address */
	uint32_t nheaps;
	uint8_t *lists;           /* two bits a block (enum mi_list) */
	/* A bit a block: in use by its lists, but its page's lists lost
	   blocks to damage and it may be one of them (NULL: no page
	   lost any).  */
	uint8_t *maybe;
	uint64_t nblocks;         /* blocks of every page's capacity */
	uint64_t held;            /* bytes of every segment */
	struct mi_own_stats stats;
	const char *stats_why;    /* why none were read */
	size_t *piece_start;      /* mi_pieces(): each piece's first page */
	size_t npieces;
};

/* The little-endian field of `width` bytes (1, 2, 4 or 8) at p + off:
   a copy of a structure read from the target, read as the layout
   says.  */
static inline uint64_t mi_get(const uint8_t *p, unsigned off, unsigned width)
{
	uint64_t v = 0;
	memcpy(&v, p + off, width);
	return v;
}

/* Find the segments and the layout they agree with (detect.c): HW_OK,
   HW_NO_ALLOCATOR when there is none, or an error.  */
enum hw_status mi_find_segments(struct mi_state *mi);
/* 3.x: its pages through the page map, their arenas (as segments) and
   heaps (v3.c): HW_OK, HW_NO_ALLOCATOR when there is no page map, or
   an error.  */
enum hw_status mi_v3_find(struct mi_state *mi);
/* A mapped file whose name says it is mimalloc's library, or NULL
   (detect.c).  */
const char *mi_library_file(const struct hw_target *t);
/* Is the target a mimalloc program that cannot be walked?  (detect.c)  */
bool hw_mimalloc_recognise(struct hw_session *s, char *why, size_t len);

/* The page of layout L whose mi_page_t is at p (the run of `count`
   slices from slice i of the segment at seg; huge: a huge segment's):
   pg filled in, its counts kept in range.  False, with *bad saying
   why, when its fields do not agree with each other (segments.c).  */
bool mi_page_decode(const struct mi_layout *L, uint64_t seg, bool huge,
		    uint64_t i, uint64_t count, const uint8_t *p,
		    struct mi_page *pg, const char **bad);

/* Called for each 8-aligned word w at address a of a mapped file's
   writable data (that file's path); true stops the scan.  */
typedef bool mi_word_fn(void *cookie, uint64_t a, uint64_t w,
			const char *file);
/* fn over the words of every mapped file's writable data (its .bss
   included), from `skip` bytes into each region on: true when fn
   stopped it (files.c).  */
bool mi_file_words(struct hw_target *t, uint64_t skip, mi_word_fn *fn,
		   void *cookie);
/* The file whose writable data (its .bss included) holds a, or NULL.  */
const char *mi_file_holding(const struct hw_target *t, uint64_t a);

/* Read each segment's pages (segments.c).  */
enum hw_status mi_read_pages(struct mi_state *mi);
/* The page holding addr, or MI_NONE.  */
uint32_t mi_page_of(const struct mi_state *mi, uint64_t addr);
/* The segment holding addr, or MI_NONE.  */
uint32_t mi_segment_of(const struct mi_state *mi, uint64_t addr);
/* Room in the array *v of n elements of `size` bytes for one more,
   *cap growing by doubling; false when out of memory (segments.c).  */
bool mi_grow(void **v, uint32_t n, uint32_t *cap, size_t size);
/* mi->heaps sorted by address, as mi_heap_index searches them.  */
void mi_sort_heaps(struct mi_state *mi);
/* The heap at addr in mi->heaps, or -1.  */
int32_t mi_heap_index(const struct mi_state *mi, uint64_t addr);

/* Every block's list (lists.c): the pages' lists and the heaps' delayed
   lists read into mi->lists; damage is a finding.  */
enum hw_status mi_read_lists(struct mi_state *mi);
/* A free list's next word at block b decoded (keys: the page's or the
   heap's; `null` the address an encoded list ends with).  */
uint64_t mi_decode_next(const struct mi_state *mi, uint64_t word,
			uint64_t null, const uint64_t keys[2]);

static inline bool mi_block_maybe_free(const struct mi_state *mi,
				       uint64_t index)
{
	return mi->maybe && (mi->maybe[index >> 3] >> (index & 7) & 1);
}

static inline enum mi_list mi_block_list(const struct mi_state *mi,
					 uint64_t index)
{
	return (enum mi_list)(mi->lists[index >> 2] >> ((index & 3) * 2) & 3);
}

/* Every block in address order (walk.c).  */
bool mi_walk(struct mi_state *mi, hw_chunk_fn *fn, void *cookie);
bool mi_walk_parallel(void *state, unsigned nparts, hw_chunk_fn *fn,
		      void *const cookies[], hw_chunk_fn *restate);
size_t mi_pieces(void *state, unsigned nthreads);
bool mi_walk_piece(void *state, size_t i, hw_chunk_fn *fn, void *cookie);
bool mi_walk_around(void *state, uint64_t addr, size_t before, size_t after,
		    hw_chunk_fn *fn, void *cookie);

/* mimalloc's size class (bin) of a block size, as its page queues
   number them, and a class's largest block size.  */
unsigned mi_bin_of(uint64_t size);
uint64_t mi_bin_size(unsigned bin);

/* The thread (tid) whose heap h is, or -1 (report.c).  */
int64_t mi_heap_tid(const struct mi_state *mi, const struct mi_heap *h);
/* The heap (arena) thread tid allocates from: its backing heap.  */
int32_t mi_thread_arena(void *state, int64_t tid, const char **why);

/* Reports (report.c, bins.c, params.c, anatomy.c, check.c).  */
void mi_report_summary(void *state, struct hw_emitter *e);
enum hw_status mi_report_arenas(void *state, struct hw_emitter *e);
enum hw_status mi_report_bins(void *state, struct hw_emitter *e,
			      const char *kind);
enum hw_status mi_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind);
enum hw_status mi_report_params(void *state, struct hw_emitter *e);
enum hw_status mi_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid);
void mi_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e);
void mi_check(void *state);

#endif /* HW_MIMALLOC_H */
