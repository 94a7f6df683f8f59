/* tcmalloc.h - gperftools tcmalloc 2.x as seen from outside the process.
 *
 * All of tcmalloc's state is static in its library (2.6 on): the page
 * heap with the root of its page map, one central free list per size
 * class, the size map, and the list of thread caches.  The page map
 * (a two-level radix tree over page numbers) names the span of every
 * page the allocator took from the system; the walk starts there:
 *
 *   page heap (.bss) -> pagemap root -> leaves -> Span (48 bytes:
 *     start page, length, links, objects, refcount | class | location)
 *   span in use, class > 0: objects of class_to_size[class] bytes, the
 *     free ones on the span's own list, in a central class's transfer
 *     slots or in a thread cache's list of that class
 *   span in use, class 0: one large (or sampled) block
 *   span free: in the page heap, committed or returned to the system
 *
 * An object is in use unless one of those lists holds it.  Debian's
 * libraries are stripped: the size map, central lists and page heap are
 * found by their shape in the library's writable memory (detect.c), and
 * only layouts Debian's 2.10 and 2.16 builds were seen to have are
 * trusted (8 KiB pages).
 */
#ifndef HW_TCMALLOC_H
#define HW_TCMALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "../../sym/sym.h"
#include "../../target/target.h"
#include "../alloc.h"
#include "../module.h"
#include "../profile.h"

#define TC_MAX_CLASSES 128        /* kClassSizesMax */
#define TC_PAGE_SHIFT 13          /* 8 KiB pages: Debian's builds */
#define TC_MAX_PAGES 128          /* kMaxPages = 1 << (20 - 13) */
#define TC_MAX_RANGES 16
#define TC_MAX_THREAD_CACHES 4096
/* One central free list (CentralFreeListPadded) per class, in an array:
   every 2.6-2.16 build's size.  */
#define TC_CENTRAL_STRIDE 0x4c0
/* Offsets the walk and the views read at, in every 2.6-2.16 build:  */
#define TC_CENTRAL_SLOTS 0x80        /* CentralFreeList::tc_slots_ */
#define TC_CENTRAL_USED_SLOTS 0x480  /* CentralFreeList::used_slots_ */
#define TC_TRANSFER_SLOTS 64         /* kMaxNumTransferEntries */
#define TC_SPAN_OBJECTS 0x20         /* Span::objects, its free list */
#define TC_FREELIST_STRIDE 32        /* ThreadCache::FreeList, 64-bit */

/* The layouts that differ between versions (tcmalloc.md of the
   research; offsets in bytes).  */
struct tc_layout {
	uint64_t sizemap_n;       /* SizeMap::num_size_classes */
	uint64_t heap_to_free;    /* PageHeap::free_ from the PageHeap */
	uint64_t cache_next, cache_prev;  /* ThreadCache::next_, prev_ */
	int64_t cache_tid;        /* ThreadCache::tid_, -1: none (2.16) */
};

/* Where an object is: in use, or on which free list.  Two bits per
   object in the holder map.  */
enum tc_holder {
	TC_IN_USE,
	TC_IN_SPAN,               /* its span's own free list */
	TC_IN_TRANSFER,           /* a central class's transfer slot */
	TC_IN_THREAD,             /* a thread cache's list */
};

/* One span of the page map.  */
struct tc_span {
	uint64_t addr;            /* its first byte */
	uint64_t desc;            /* the Span descriptor */
	uint64_t bytes;           /* length << page shift */
	uint32_t objsize;         /* class size; 0: one block */
	/* A sampled object's usable size when under a page (tcmalloc
	   reports its request's class, not its span); 0 otherwise.  */
	uint32_t sampled_usable;
	uint16_t refcount;
	uint8_t cls;
	uint8_t location;         /* 0 in use, 1 free, 2 returned */
	bool sample;
	uint64_t slot;            /* objsize: its first object's index in
				     the state's holder map */
};

struct tc_thread_cache {
	uint64_t addr;
	uint64_t tid_word;        /* its tid_ (pthread_self), 0 if none */
	int tid;                  /* the thread's id, 0 if unknown */
	uint64_t size;            /* size_: bytes it holds */
	uint64_t objects;         /* objects on its lists */
};

struct tc_state {
	struct hw_session *s;
	struct hw_target *t;
	char module[128];
	char version[48];         /* "2.10", "2.8.1" */
	int major, minor;
	struct hw_module mod;
	bool have_mod;
	struct tc_layout lay;
	struct hw_addr_range data[TC_MAX_RANGES];  /* .data, .bss */
	size_t ndata;
	const char *how_module, *how_sizemap, *how_central, *how_heap,
		*how_caches, *how_owners;
	char owners_buf[96];
	/* Roots.  */
	uint64_t sizemap, central, pageheap, free_lists, stats, root;
	uint64_t thread_heaps;    /* &ThreadCache::thread_heaps_, 0 if none */
	/* The size map.  */
	unsigned nclasses;
	uint32_t class_size[TC_MAX_CLASSES];
	uint32_t class_pages[TC_MAX_CLASSES];
	uint32_t class_move[TC_MAX_CLASSES];
	/* The page heap's own statistics.  */
	uint64_t system_bytes, free_bytes, unmapped_bytes, committed_bytes;
	/* What the lists hold, as MallocExtension counts it.  */
	uint64_t central_bytes, transfer_bytes, thread_bytes;
	uint64_t transfer_objects[TC_MAX_CLASSES];
	uint64_t central_objects[TC_MAX_CLASSES];
	uint64_t thread_objects[TC_MAX_CLASSES];
	/* Objects all spans of a class hold: no list of it is longer.  */
	uint64_t class_slots[TC_MAX_CLASSES];
	/* The walk's material, read once at open.  */
	struct tc_span *spans;    /* by address */
	size_t nspans;
	/* spans.c's index: bucket b (2^bucket_shift bytes from
	   bucket_base on) first meets spans[bucket_first[b]].  */
	uint32_t *bucket_first;   /* nbuckets + 1 entries */
	size_t nbuckets;
	unsigned bucket_shift;
	uint64_t bucket_base;
	size_t *piece_start;      /* walk.c: the walk in pieces of spans */
	size_t npieces;
	/* Every small object's holder (enum tc_holder), two bits each,
	   the objects of spans[i] from spans[i].slot on.  */
	uint8_t *holders;
	uint64_t nslots;
	struct tc_thread_cache *caches;
	size_t ncaches;
	/* Free objects that lists ending early (a broken link) lost, by
	   class, as their holders count them (a thread cache's length, a
	   span's refcount); which objects read as in use may be those
	   (lost.c: a bit per slot, NULL when no list lost any).  */
	uint64_t lost[TC_MAX_CLASSES];
	uint8_t *maybe_free;
	/* The sampled allocations (prof.c), read on first use.  */
	struct tc_prof *prof;
	const char *prof_why;
	bool prof_read;
};

/* detect.c */
enum hw_status tc_find_module(struct tc_state *tc);
enum hw_status tc_find_roots(struct tc_state *tc);
/* spans.c */
enum hw_status tc_read_spans(struct tc_state *tc);
bool tc_index_spans(struct tc_state *tc);
const struct tc_span *tc_span_of(const struct tc_state *tc, uint64_t addr);
/* lists.c */
enum hw_status tc_read_lists(struct tc_state *tc);
/* A thread cache's list of one class: ThreadCache::FreeList.  */
struct tc_freelist {
	uint64_t head;
	uint32_t length, lowater, max_length;
};
/* lost.c: after the lists, the objects in use by the holder map that
   may be free ones the broken lists lost (tc_state.maybe_free).  */
void tc_mark_lost(struct tc_state *tc);
static inline bool tc_maybe_free(const struct tc_state *tc, uint64_t slot)
{
	return tc->maybe_free && (tc->maybe_free[slot >> 3] >> (slot & 7) & 1);
}
/* Cache c's list of class cls, read afresh from the target: false when
   the target does not hold it.  */
bool tc_read_freelist(struct tc_state *tc, const struct tc_thread_cache *c,
		      unsigned cls, struct tc_freelist *fl);

/* Is addr the start of one of span sp's objects?  */
static inline bool tc_is_object(const struct tc_span *sp, uint64_t addr)
{
	uint64_t off = addr - sp->addr;
	return sp->objsize && addr >= sp->addr && off < sp->bytes &&
	       off % sp->objsize == 0 &&
	       off / sp->objsize < sp->bytes / sp->objsize;
}

static inline enum tc_holder tc_holder_of(const struct tc_state *tc,
					  uint64_t slot)
{
	return (enum tc_holder)((tc->holders[slot >> 2] >> ((slot & 3) * 2)) & 3);
}
/* threads.c: the thread whose pthread_self() is self (a cache's tid_):
   the one whose thread pointer is self or, nearest, just past its struct
   pthread; 0 when none is.  */
int tc_thread_of(const struct hw_target *t, uint64_t self);
/* threads.c: 2.16's caches (no tid_) given their threads by the TLS
   pointer to them; how_owners says how, when they were.  */
void tc_tls_owners(struct tc_state *tc);
/* walk.c */
bool tc_walk(struct tc_state *tc, hw_chunk_fn *fn, void *cookie);
/* The same blocks, split over nparts threads (cookies[k] in part k's).  */
bool tc_walk_parallel(struct tc_state *tc, unsigned nparts, hw_chunk_fn *fn,
		      void *const cookies[]);
/* The walk in pieces (alloc.h: hw_allocator_ops.pieces): how many, 0
   when out of memory; piece i's blocks to fn.  */
size_t tc_pieces(struct tc_state *tc);
/* The blocks span i gives a walk (its objects, or one): what the walk's
   parts and pieces, and the passes over the free lists, are cut by.  */
uint64_t tc_span_blocks(const void *tc, size_t i);
bool tc_walk_piece(const struct tc_state *tc, size_t i, hw_chunk_fn *fn,
		   void *cookie);
/* The span holding addr and its neighbours, from `before` blocks before
   it; with `after`, on to the last span while fn wants more (alloc.h:
   chunks_around).  */
bool tc_walk_around(struct tc_state *tc, uint64_t addr, size_t before,
		    size_t after, hw_chunk_fn *fn, void *cookie);
/* prof.c */
struct tc_prof;
enum hw_status tc_read_profile(struct tc_state *tc, struct tc_prof **out,
			       const char **why);
const struct hw_profile *tc_prof_profile(const struct tc_prof *tp);
const struct hw_prof_site *tc_prof_site_of(const struct tc_prof *tp,
					   uint64_t addr);
void tc_prof_free(struct tc_prof *tp);
/* The profile's own memory in the target (the heap profiler's).  */
void tc_prof_internal(const struct tc_prof *tp, hw_range_fn *fn, void *cookie);
/* report.c: summary's tcmalloc lines, and `arenas`.  */
void tc_report_summary(void *state, struct hw_emitter *e);
enum hw_status tc_report_arenas(void *state, struct hw_emitter *e);
/* report.c: generic.current_allocated_bytes as tcmalloc computes it.  */
uint64_t tc_current_allocated(const struct tc_state *tc);
/* bins.c: `bins` (per class), and `bins --list` (every list followed).  */
enum hw_status tc_report_bins(void *state, struct hw_emitter *e,
			      const char *kind);
enum hw_status tc_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind);
/* params.c: `mp`, `arena 0` (the page heap) and `tcache [TID]` (tid < 0:
   every cache).  */
enum hw_status tc_report_params(void *state, struct hw_emitter *e);
enum hw_status tc_report_arena(void *state, struct hw_emitter *e, size_t n);
enum hw_status tc_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid);
/* anatomy.c: `chunk ADDR`'s fields.  */
void tc_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e);

#endif /* HW_TCMALLOC_H */
