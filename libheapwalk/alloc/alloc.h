/* alloc.h - the interface every allocator walker implements.
 *
 * Analyses and reports (summary, chunks, sizes, lookup, check, and later
 * leaks and diff) are written once against this interface: a walker
 * delivers every block in address order within each heap, with its state
 * and where it sits, and renders its own allocator-specific reports
 * (arenas, bins).
 */
#ifndef HW_ALLOC_H
#define HW_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "../session/session.h"

struct hw_emitter;
struct hw_profile;
struct hw_prof_site;

/* Where a block sits.  The names are the "where" strings of doc/heapwalk.md.  */
enum hw_where {
	HW_WHERE_HEAP,      /* used, in an arena heap */
	HW_WHERE_MMAPPED,   /* used, mmapped on its own */
	HW_WHERE_TCACHE,
	HW_WHERE_FASTBIN,
	HW_WHERE_UNSORTED,
	HW_WHERE_SMALLBIN,
	HW_WHERE_LARGEBIN,
	HW_WHERE_TOP,
	HW_WHERE_UNBINNED,  /* free by its header, but in no free list */
	/* jemalloc */
	HW_WHERE_SLAB,      /* used small region */
	HW_WHERE_LARGE,     /* used large extent */
	HW_WHERE_SLAB_FREE, /* free region of a slab */
	HW_WHERE_DIRTY,     /* free extents, by decay state */
	HW_WHERE_MUZZY,
	HW_WHERE_RETAINED,
	/* tcmalloc */
	HW_WHERE_SPAN,      /* used small object of a span */
	HW_WHERE_CENTRAL,   /* free, on its span's list (central cache) */
	HW_WHERE_TRANSFER,  /* free, in a central list's transfer slot */
	HW_WHERE_PAGEHEAP,  /* free span in the page heap, committed */
	HW_WHERE_RETURNED,  /* free span given back to the system */
	/* ptmalloc: in use by glibc itself, a thread's
	   tcache_perthread_struct (no program block: leaks leaves it out,
	   as Valgrind never sees it) */
	HW_WHERE_TCACHE_STRUCT,
	/* musl's mallocng */
	HW_WHERE_GROUP,     /* used slot of a group */
	HW_WHERE_AVAIL,     /* free slot, ready to be handed out */
	HW_WHERE_FREED,     /* free slot, freed (or never used) */
	/* mimalloc */
	HW_WHERE_MI_PAGE,   /* used block of a page */
	HW_WHERE_MI_HUGE,   /* used, a huge segment's one block */
	HW_WHERE_MI_FREE,   /* free, on its page's free list */
	HW_WHERE_MI_LOCAL,  /* free, on its page's local_free list */
	HW_WHERE_MI_THREAD, /* free, freed by another thread (xthread_free,
			       or its heap's delayed list) */
	HW_WHERE_MI_RESERVED, /* a page's memory not yet made blocks */
	HW_WHERE_COUNT
};

/* The name of a place.  Each name is stored in HW_WHERE_NAME_ROOM
   bytes, NUL-padded, which may all be read (a renderer copies a name as
   one block: the words of a packed column, emit.h).  */
#define HW_WHERE_NAME_ROOM 16
const char *hw_where_name(enum hw_where w);
/* All of them, indexed by place (HW_WHERE_COUNT's is "?").  */
extern const char hw_where_names[HW_WHERE_COUNT + 1][HW_WHERE_NAME_ROOM];

/* A set of places, one bit each (hw_allocator_ops.reserve_places).  */
#define HW_PLACE_BIT(w) (1u << (w))
_Static_assert(HW_WHERE_COUNT <= 32, "a set of places is a uint32_t");

/* What a place is, in the terms reports count by.  A block's own `used`
   says whether it is in use; this says of what kind the place is.  */
enum hw_place_state {
	HW_PLACE_IN_USE,
	HW_PLACE_FREE,       /* a block free for reuse */
	/* Pages the allocator keeps but hands out no block from as they
	   are (top, unused extents, free spans): not free blocks.  */
	HW_PLACE_RESERVE,
	HW_PLACE_UNKNOWN,    /* HW_WHERE_COUNT: the walk did not say */
};

/* The column of frag and map a reserve counts in.  Each allocator's own
   reserves take the column of the same meaning (tcmalloc's committed
   page heap as dirty, its returned spans as retained).  */
enum hw_reserve {
	HW_RESERVE_NONE,     /* not a reserve */
	HW_RESERVE_TOP,      /* memory at a heap's end, a block of it */
	HW_RESERVE_DIRTY,    /* unused pages, still mapped and touched */
	HW_RESERVE_MUZZY,    /* unused pages, lazily purged */
	HW_RESERVE_RETAINED, /* address space only: no memory behind it */
	HW_RESERVES
};

/* Facts about a place (hw_place.flags).  */
enum {
	/* A small object of a slab, span or group (jemalloc's region,
	   tcmalloc's object, mallocng's slot): `chunk` names it by the
	   allocator's small_noun.  A cached block (HW_PLACE_CACHED) is
	   one unless its fields say it is a large block kept whole
	   (report/fragrows.c).  */
	HW_PLACE_SLOT = 1u << 0,
	/* Free in a thread's cache (summary's and sizes' "cached").  */
	HW_PLACE_CACHED = 1u << 1,
	/* In use, mapped on its own: no neighbours, a mapping of its
	   own in `maps` and `map`.  */
	HW_PLACE_MMAPPED = 1u << 2,
};

/* One place: where.c's table holds every fact shared code needs about
   it, so that a report asks the table, not the place's name or its
   allocator's.  */
struct hw_place {
	const char *name;            /* hw_where_name's */
	enum hw_place_state state;
	enum hw_reserve reserve;     /* HW_RESERVE_NONE unless a reserve */
	unsigned flags;              /* HW_PLACE_SLOT, ... */
	const char *colour;          /* `map`'s fill, "#rrggbb" */
	const char *what;            /* `map`'s legend: what the place is */
};

/* Indexed by place; HW_WHERE_COUNT's row is a place not known.  */
extern const struct hw_place hw_places[HW_WHERE_COUNT + 1];

/* The facts of place w (any value: past the places, the unknown row's).
   Inline: reports ask once per block of a walk of millions.  */
static inline const struct hw_place *hw_place(unsigned w)
{
	return &hw_places[w < HW_WHERE_COUNT ? w : HW_WHERE_COUNT];
}

/* Is place w pages outside the heap's blocks: a reserve other than a
   heap's top chunk?  `maps` counts them as the allocator's unused
   memory and summary leaves them out of free; top is a chunk of its
   heap, counted with it (free, as malloc_info counts it).  */
static inline bool hw_place_unused_pages(unsigned w)
{
	const struct hw_place *p = hw_place(w);
	return p->state == HW_PLACE_RESERVE && p->reserve != HW_RESERVE_TOP;
}

struct hw_chunk {
	uint64_t addr;        /* what malloc returned (user pointer) */
	uint64_t size;        /* usable bytes */
	uint64_t chunk;       /* start of the allocator's block (header) */
	uint64_t chunk_size;  /* bytes the block takes, header included */
	uint64_t extent;      /* jemalloc: its extent_t/edata_t; 0 otherwise */
	int32_t arena;
	uint16_t szind;       /* jemalloc: size index */
	uint8_t where;        /* enum hw_where */
	bool used;
	bool orphan;          /* free in a list that no longer reaches it */
	/* In use as far as the allocator's structures can be read, but
	   damage cost a list some free blocks that cannot be told from
	   blocks in use, and this one could be one of them: leaks calls it
	   "unknown", never lost.  */
	bool maybe_free;
};

/* Does block c hold address a (its header included)?  */
static inline bool hw_block_holds(const struct hw_chunk *c, uint64_t a)
{
	return a >= c->chunk && a - c->chunk < c->chunk_size;
}

/* Is c a block the program holds, as Valgrind would count it: in use,
   and not the allocator's own (glibc's tcache structs)?  `leaks` and its
   block map count only these.  */
static inline bool hw_program_block(const struct hw_chunk *c)
{
	return c->used && c->where != HW_WHERE_TCACHE_STRUCT;
}

/* What `summary` lists of one allocator instance, and what the session
   weighs to pick the one walked by default.  */
struct hw_instance_info {
	const char *module;            /* file the allocator lives in, or "" */
	const struct hw_arch *arch;    /* that file's ELF machine */
	uint64_t held;                 /* bytes it holds from the system */
	/* The code of a module that is the allocator alone (libjemalloc.so,
	   libtcmalloc.so), [own_low, own_high): a thread stopped anywhere in
	   it is inside the allocator, named or not (a stripped library's
	   internal functions have no symbol).  0, 0: the allocator shares
	   its module (libc, the program).  */
	uint64_t own_low, own_high;
};

/* Called for each block; return false to stop the walk.  */
typedef bool hw_chunk_fn(void *cookie, const struct hw_chunk *c);

/* Called for each range [start, end) of an allocator's own memory.  */
typedef void hw_range_fn(void *cookie, uint64_t start, uint64_t end);

/* Called for each slab of an allocator (hw_allocator_ops.slabs).
   interior: a pointer anywhere into a slot is as good as its start
   (mimalloc's pages of aligned blocks: malloc handed out addresses
   inside their blocks, and free takes any of them).  */
typedef bool hw_slab_fn(void *cookie, uint64_t lo, uint64_t hi,
			uint64_t base, uint64_t slot, uint32_t nslots,
			bool interior);

/* How `maps` (and `map`) name the memory an allocator holds.  */
struct hw_maps_nouns {
	const char *in_use;      /* its blocks' memory ("malloc heap") */
	const char *main_arena;  /* arena 0's own name; NULL: like the others
				    ("IN_USE, arena 0") */
	bool one_heap;           /* no arenas: IN_USE whatever the id */
	const char *mmapped;     /* blocks mapped on their own */
	const char *unused;      /* its page reserve, not blocks */
	const char *strip;       /* `map`: a contiguous run of its blocks
				    ("extents"); NULL: "heap" */
};

struct hw_allocator_ops {
	const char *name;
	/* What the allocator calls the blocks its walk delivers, plural, for
	   reports ("regions/extents"); NULL means "chunks".  */
	const char *block_noun;
	/* What holds blocks ("extent", "span") and what a small block in
	   it is ("region", "object"), for `chunk` and `chunks`; NULL for an
	   allocator whose blocks are chunks.  */
	const char *container, *small_noun;
	/* What bounds a block's neighbours, where it is not the container
	   (mallocng: a slot's neighbours are in its group); NULL: the
	   container.  */
	const char *neighbourhood;
	/* `maps`' names for its memory; must not be NULL.  */
	const struct hw_maps_nouns *maps_nouns;
	/* The places it keeps page-level reserves in (HW_PLACE_BIT of
	   each; 0: none, as mallocng, which gives free groups back):
	   ptmalloc's top; jemalloc's dirty, muzzy and retained extents;
	   tcmalloc's page heap and returned spans.  frag picks its columns
	   and legend by it, map its reserve line, summary whether free
	   memory includes top chunks (hw_alloc_has_reserve).  */
	uint32_t reserve_places;
	/* Its functions, by the names a symbol table gives them (a trailing
	   '*' takes a prefix: "je_*"), NULL-terminated: a live thread
	   stopped with one of them among its innermost frames was inside
	   the allocator, its operation in flight (analysis/inflight.c).
	   NULL: none known.  */
	const char *const *functions;
	/* Look for the allocator in the session's target.  HW_OK with
	   *state set, HW_NO_ALLOCATOR (with the reason in the session
	   error) or another failure.  Must not be NULL.  */
	enum hw_status (*open)(struct hw_session *s, void **state);
	/* When no allocator opened: is the target one of this allocator's
	   programs that cannot be walked (a musl program whose context is
	   not set up)?  If so, why, in why: the session says that rather
	   than "no allocator found".  NULL: never.  */
	bool (*why_absent)(struct hw_session *s, char *why, size_t len);
	/* How many instances of this allocator the target may hold (one
	   glibc per libc copy: an emulator's and its guest's); open() then
	   opens the one s->opening numbers, from 0.  NULL = one.  */
	size_t (*count)(struct hw_session *s);
	/* Fill info for an opened instance.  Must not be NULL.  */
	void (*describe)(void *state, struct hw_instance_info *info);
	void (*close)(void *state);
	/* The instance is the one to walk: make final what open left
	   provisional because most instances are never walked (ptmalloc
	   reads libc's DWARF layouts only now).  Returns true when *state
	   was replaced by a state opened anew (the findings since are its
	   own; the old state's are void).  NULL: nothing is left.  */
	bool (*settle)(struct hw_session *s, void **state);
	const char *(*version)(void *state);
	size_t (*narenas)(void *state);
	/* Every block, in address order within each heap; returns false if
	   fn stopped it.  Findings go to the session as they are met.  */
	bool (*chunks)(void *state, hw_chunk_fn *fn, void *cookie);
	/* The same blocks, in no particular order, split over nparts
	   threads: fn runs concurrently, with cookies[part] in part's
	   thread.  With `restate` (NULL: none), a block's state may be
	   guessed (ptmalloc's fastbin entries, which look in use), and
	   after the walk each block given in the wrong state is given again
	   to restate(cookies[0], block), in the other state (in use or
	   free; its `where` and `size` are as a walk would give them).  May
	   be NULL (then callers use chunks).  */
	bool (*chunks_parallel)(void *state, unsigned nparts, hw_chunk_fn *fn,
				void *const cookies[], hw_chunk_fn *restate);
	/* chunks_parallel for a caller that needs only which blocks are in
	   use and where they lie (leaks' block map): a free block's `where`
	   may be HW_WHERE_COUNT (not determined), which spares walking the
	   lists that only tell a free block's bin (ptmalloc's bins: their
	   chunks say they are free in their neighbour's header); findings
	   that need those lists wait for a full walk.  With `restate`, as
	   for chunks_parallel, a block may be given in the state it seems to
	   be in and given again after the walk in the one it is in
	   (ptmalloc's fastbin chunks: their lists are read, or their
	   entries guessed, without a page fault per list entry before the
	   walk).  NULL: use chunks_parallel.  */
	bool (*states_parallel)(void *state, unsigned nparts, hw_chunk_fn *fn,
				void *const cookies[], hw_chunk_fn *restate);
	/* chunks() cut into pieces that threads can walk apart, for a report
	   of every block in order (`chunks`): pieces() makes ready what
	   chunks() would, with walks in up to nthreads threads, and says how
	   many pieces there are (0: none, use chunks()); chunks_piece()
	   gives piece i's blocks as chunks() gives them, and the pieces in
	   order give what chunks() gives.  chunks_piece() runs for several
	   pieces at once; findings are taken by pieces().  Both NULL when
	   the walker has no pieces.  */
	size_t (*pieces)(void *state, unsigned nthreads);
	bool (*chunks_piece)(void *state, size_t i, hw_chunk_fn *fn,
			     void *cookie);
	/* The blocks near addr, in the order chunks() gives them, so that
	   `chunk ADDR`, `view` and `chunks --around` need not walk the
	   whole heap: from at least `before` blocks before the one holding
	   addr (fewer where its heap, mmapped chunk or extents begin
	   there), on, as long as fn wants more.  The states are exact up to
	   `after` blocks after the one holding addr; a walk past those may
	   not know every list a block is on (ptmalloc): callers stop
	   there.  May be NULL (then callers walk everything).  */
	bool (*chunks_around)(void *state, uint64_t addr, size_t before,
			      size_t after, hw_chunk_fn *fn, void *cookie);
	/* The reports the walker writes itself, as records (emit/emit.h):
	   summary's allocator-specific members (records inside summary's
	   document), and the whole arenas and bins documents.  arenas and
	   bins return HW_OK or an error (out of memory; bins: HW_USAGE for
	   an unknown kind).  */
	void (*summary)(void *state, struct hw_emitter *e);
	enum hw_status (*arenas)(void *state, struct hw_emitter *e);
	/* One arena's own fields (`arena N`: ptmalloc's malloc_state).  May
	   be NULL (not shown yet).  */
	enum hw_status (*arena)(void *state, struct hw_emitter *e, size_t n);
	/* The allocator's parameters and counters (`mp`: glibc's
	   malloc_par).  May be NULL (not shown yet).  */
	enum hw_status (*params)(void *state, struct hw_emitter *e);
	/* The arena (hw_chunk.arena) thread tid allocates from, as the
	   allocator binds them (ptmalloc's thread_arena): >= 0, or -1 with
	   *why saying why none is known.  May be NULL (not known).  */
	int32_t (*thread_arena)(void *state, int64_t tid, const char **why);
	/* The threads' caches as the allocator keeps them (`tcache [TID]`;
	   tid < 0: all).  May be NULL (not shown yet).  */
	enum hw_status (*tcaches)(void *state, struct hw_emitter *e,
				  int64_t tid);
	/* kind NULL = all.  */
	enum hw_status (*bins)(void *state, struct hw_emitter *e,
			       const char *kind);
	/* bins, each list with its entries in the list's own order and how
	   it ends (`bins --list`).  May be NULL (not shown yet).  */
	enum hw_status (*bins_list)(void *state, struct hw_emitter *e,
				    const char *kind);
	/* The allocator's own size class of a usable size: returns the
	   class's largest usable size and sets *min to its smallest, so
	   that classes partition the sizes in ascending order (a larger
	   usable size never falls in a smaller class).  `sizes` groups its
	   rows by it.  NULL: every usable size is a class of its own.  */
	uint64_t (*size_class)(void *state, uint64_t usable, uint64_t *min);
	/* The address of arena `arena` (hw_chunk.arena), or 0: what names
	   an arena across two snapshots of one process when its index may
	   change between them (ptmalloc lists the newest thread arena
	   first).  NULL: indexes are stable (jemalloc's).  */
	uint64_t (*arena_addr)(void *state, int32_t arena);
	/* Every block's address (hw_chunk.addr) is a multiple of this: the
	   granule of `leaks`' block map.  */
	unsigned block_align;
	/* The bytes of a block's header before its address (ptmalloc's
	   prev_size and size: 16), 0 for none; a block's usable bytes
	   rounded up to block_align then end that many bytes past the next
	   header's start.  A word holding a header's address (glibc's own
	   lists and arenas point at chunks so) is no pointer into the block
	   before, whose last bytes the header overlaps: `leaks` takes it for
	   no pointer at all.  */
	unsigned header_bytes;
	/* chunks() gives the blocks in address order (jemalloc's extents,
	   tcmalloc's spans; not ptmalloc's, arena by arena): `leaks` may
	   then list a few lost blocks from its map, a walk around each,
	   in the order a walk of every block would.  */
	bool walk_sorted;
	/* The allocator's own memory outside its blocks (ptmalloc's arenas
	   and heap headers, jemalloc's base blocks), each range once: it
	   points at blocks (an edata's extent, a bin's chunk) without
	   keeping them alive, so `leaks` must not take it for a root.  The
	   blocks' own [chunk, chunk + chunk_size) need not be given.  May
	   be NULL.  */
	void (*internal)(void *state, hw_range_fn *fn, void *cookie);
	/* The allocator's slabs: page ranges [lo, hi) it carves into nslots
	   equal slots of `slot` bytes from `base` (jemalloc's slabs, a large
	   extent as one slot; tcmalloc's spans), so that `leaks`' block map
	   keeps a bit per slot there instead of bitmaps per granule
	   (analysis/blockmap.h).  Every block the walks give in use in
	   those pages must start a slot.  fn returns false to stop (out of
	   memory).  May be NULL.  */
	void (*slabs)(void *state, hw_slab_fn *fn, void *cookie);
	/* The allocator's own heap profile: the allocation sites it sampled
	   (profile.h), read once and kept with the state.  HW_OK with *out
	   set, or NULL and *why saying why there is none (profiling off);
	   an error status otherwise.  NULL: the allocator keeps none.  */
	enum hw_status (*profile)(void *state, const struct hw_profile **out,
				  const char **why);
	/* The profile's stack (profile() read it first) a block in use was
	   allocated from, when the allocator sampled that block; NULL
	   otherwise.  May be NULL.  */
	const struct hw_prof_site *(*site_of)(void *state,
					      const struct hw_chunk *c);
	/* Run the allocator's own consistency checks (findings go to the
	   session); the chunk walk has run before this.  May be NULL.  */
	void (*check)(void *state);
	/* The fields the allocator keeps in or for block c (as a walk gave
	   it), as `chunk ADDR` shows them: a section of records on e
	   (ptmalloc: the header and its bits, a free chunk's links decoded
	   and checked).  May be NULL.  */
	void (*anatomy)(void *state, const struct hw_chunk *c,
			struct hw_emitter *e);
};

/* Does allocator a keep a reserve that counts in column col?  */
bool hw_alloc_has_reserve(const struct hw_allocator_ops *a,
			  enum hw_reserve col);

extern const struct hw_allocator_ops hw_ptmalloc_ops;
extern const struct hw_allocator_ops hw_jemalloc_ops;
extern const struct hw_allocator_ops hw_tcmalloc_ops;
extern const struct hw_allocator_ops hw_mallocng_ops;
extern const struct hw_allocator_ops hw_mimalloc_ops;

/* The walks, as analyses and reports start them: each counts in the
   session's work (hw_session_work), so that what a command takes can be
   checked against what it needs.  */
static inline bool hw_walk_blocks(struct hw_session *s, hw_chunk_fn *fn,
				  void *cookie)
{
	atomic_fetch_add(&s->work.walks, 1);
	return s->alloc->chunks(s->alloc_state, fn, cookie);
}

static inline bool hw_walk_blocks_parallel(struct hw_session *s,
					   unsigned nparts, hw_chunk_fn *fn,
					   void *const cookies[],
					   hw_chunk_fn *restate)
{
	atomic_fetch_add(&s->work.walks, 1);
	return s->alloc->chunks_parallel(s->alloc_state, nparts, fn, cookies,
					 restate);
}

static inline bool hw_walk_states_parallel(struct hw_session *s,
					   unsigned nparts, hw_chunk_fn *fn,
					   void *const cookies[],
					   hw_chunk_fn *restate)
{
	atomic_fetch_add(&s->work.walks, 1);
	return s->alloc->states_parallel(s->alloc_state, nparts, fn, cookies,
					 restate);
}

/* The walk in pieces (chunks_piece): how many, 0 when the walker has
   none (then hw_walk_blocks).  Walking them all counts as one walk.  */
static inline size_t hw_walk_pieces_begin(struct hw_session *s,
					  unsigned nthreads)
{
	if (!s->alloc->pieces)
		return 0;
	size_t n = s->alloc->pieces(s->alloc_state, nthreads);
	if (n)
		atomic_fetch_add(&s->work.walks, 1);
	return n;
}

static inline bool hw_walk_piece(struct hw_session *s, size_t i,
				 hw_chunk_fn *fn, void *cookie)
{
	return s->alloc->chunks_piece(s->alloc_state, i, fn, cookie);
}

/* The blocks around addr (chunks_around), or, for a walker that cannot
   tell them, every block.  */
static inline bool hw_walk_around(struct hw_session *s, uint64_t addr,
				  size_t before, size_t after,
				  hw_chunk_fn *fn, void *cookie)
{
	if (!s->alloc->chunks_around)
		return hw_walk_blocks(s, fn, cookie);
	atomic_fetch_add(&s->work.around, 1);
	return s->alloc->chunks_around(s->alloc_state, addr, before, after,
				       fn, cookie);
}

#endif /* HW_ALLOC_H */
