/* jemalloc.h - jemalloc 5.x as seen from outside the process.
 *
 * Every page jemalloc hands out belongs to an extent (extent_t up to 5.2,
 * edata_t from 5.3), and every extent is registered in one global radix
 * tree keyed by page address (extents_rtree / arena_emap_global).  For
 * automatic arenas that tree is the only place where full slabs and large
 * allocations are linked at all, so the walk starts there:
 *
 *   rtree root (jemalloc's .bss) -> [interior nodes] -> leaves
 *     leaf element = edata pointer | szind << LG_VADDR | state | slab
 *   edata: e_bits (arena, slab, state, szind, nfree), e_addr, e_size
 *   slab:  regions of sz_index2size(szind) bytes, a bitmap at edata+64
 *          (bit set = region free)
 *
 * Regions the bitmap calls allocated may still be free: parked in a
 * thread's tcache (cache bins in the thread's TSD).  Those are found by
 * their shape (runs of cache bins whose stacks are contiguous) and checked
 * against the extents, so none of this needs a symbol or a struct layout
 * beyond the three edata words, which have not moved since 5.0.
 */
#ifndef HW_JEMALLOC_H
#define HW_JEMALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "../../sym/sym.h"
#include "../../target/target.h"
#include "../alloc.h"
#include "../module.h"

#define JE_MAX_SIZES 256          /* szind fits in 8 bits */
#define JE_MAX_ARENAS 4096        /* MALLOCX_ARENA_BITS 12 */
#define JE_EDATA_BITMAP 64        /* e_slab_data.bitmap, 5.0 to 5.3 */

/* How e_bits, leaves and cache bins are encoded.  */
enum je_era {
	JE_ERA_52,      /* 5.0-5.2: extent_t; state 2 bits at 16; leaf edata & ~1 */
	JE_ERA_53,      /* 5.3+: edata_t; state 3 bits at 17; leaf edata & ~127 */
};

enum je_ext_state {
	JE_ACTIVE, JE_DIRTY, JE_MUZZY, JE_RETAINED, JE_TRANSITION, JE_MERGING
};

/* Build parameters learned from the core.  */
struct je_params {
	int lg_vaddr, lg_page, lg_quantum;
	int height;                       /* rtree levels, 1-3 */
	int bits[3];                      /* key bits per level, root first */
};

struct je_extent {
	uint64_t edata;
	uint64_t base, size;              /* page-aligned start, bytes */
	uint64_t addr;                    /* e_addr: the pointer for large */
	uint32_t arena;
	uint32_t nregs, reg_size;         /* slabs */
	uint32_t used;                    /* regions the bitmap allocates */
	uint32_t ncached;                 /* of those, parked in a tcache */
	uint16_t szind;
	uint8_t state;                    /* enum je_ext_state */
	bool slab;
};

struct je_tcache {
	uint64_t addr;                    /* its first cache bin */
	int tid;                          /* owning thread, 0 if unknown */
	uint32_t nbins;
	uint64_t cached, bytes;
	uint64_t stacks;                  /* usable size of the allocation
					     holding its stacks (internal) */
	uint64_t stack_word;              /* a word of that allocation (the
					     last of bin 0's stack), or 0 */
	int32_t arena;                    /* its tsd's arena binding, -1 if
					     not found */
};

/* One base allocator (base_t): jemalloc's metadata blocks and its own
   counters of them.  */
struct je_base {
	uint64_t addr;                    /* the base_t */
	uint64_t blocks_mapped;           /* sum of its blocks' sizes */
	uint64_t allocated, resident, mapped;  /* its counters, if found */
};

/* jemalloc's stats.* figures (ctl.c's ctl_refresh), from the heap.  A
   figure that is not exact has the true value within [value - below,
   value + above].  */
struct je_figure {
	uint64_t value, below, above;
	bool known, exact;
	const char *from;                 /* what it was computed from */
};

struct je_figures {
	struct je_figure allocated, active, metadata, resident, mapped,
		retained;
	uint64_t dirty, muzzy;
	/* Sampled small objects (prof:true) promoted to large extents, their
	   usable sizes, and the bytes in use as the program sees them (each
	   sampled object at its own size, not its extent's class).  */
	uint64_t sampled, sampled_bytes, program;
};

#define JE_MAX_RANGES 16

struct je_state {
	struct hw_session *s;
	struct hw_target *t;
	char version[64];                 /* "5.3.0" */
	char git[96];                     /* "5.3.0-0-g54eaed1d..." */
	char module[128];                 /* file the allocator lives in */
	char prefix[32];                  /* symbol prefix: "", "je_", "_rjem_" */
	struct hw_module mod;             /* libdwfl's view of that file */
	bool have_mod;
	int major, minor;
	enum je_era era;
	struct je_params p;
	struct hw_addr_range data[JE_MAX_RANGES];  /* .data, .bss */
	size_t ndata;
	const char *how_module, *how_rtree, *how_sizes, *how_bins,
		*how_arenas, *how_tcache;
	uint64_t rtree_root;
	uint64_t sizes[JE_MAX_SIZES];     /* sz_index2size */
	unsigned nsizes, nbins;
	uint64_t size_table;              /* where sz_index2size_tab was read */
	uint64_t bin_infos;               /* je_bin_infos, 0 if not found */
	unsigned bin_info_stride;
	uint32_t bin_nregs[JE_MAX_SIZES]; /* from bin_infos, 0 = unknown */
	uint64_t arenas_array;            /* je_arenas, 0 if not found */
	uint64_t arena_addr[JE_MAX_ARENAS];
	uint64_t scratch[JE_MAX_ARENAS];  /* arenas.c's candidate array */
	unsigned narena_slots;            /* highest used arena index + 1 */
	uint64_t arena_base_off;          /* offsetof(arena_t, base), 0 = ? */
	struct je_base *bases;            /* one per arena found */
	size_t nbases;
	bool base_counters;               /* every base's counters found */
	uint64_t base_blocks_off;         /* offsetof(base_t, blocks), 0 = ? */
	uint64_t internal;                /* sum of arena stats.internal */
	bool have_internal;
	const char *how_bases, *how_internal;
	struct je_extent *ext;            /* sorted by base, disjoint */
	size_t next;
	uint64_t *cached;                 /* every tcache item, sorted */
	size_t ncached;
	/* Size classes whose tcache bins lost items (a slot holding no
	   region of the class, a stack not in the core): the regions of
	   such a class that read as in use may be the lost ones, free in a
	   cache (hw_chunk.maybe_free), and leaks calls none of them lost.  */
	bool class_lost[JE_MAX_SIZES];
	struct je_tcache *tcaches;
	size_t ntcaches;
	bool walked;                      /* findings of the walk taken */
	/* walk.c: the walk cut into pieces, each a run of extents from
	   piece_start[i] to the next one's start (or next).  */
	size_t *piece_start;
	size_t npieces;
	bool pieces_report;               /* the pieces' walks take findings */
	struct je_prof *prof;             /* prof.c's, once read */
	const char *prof_why;             /* why there is none */
	bool prof_read;
	uint64_t prof_broken;             /* trees that could not be read */
	struct je_slabcur *slabcur;       /* slabcur.c's, once asked */
};

/* detect.c */
enum hw_status je_find_module(struct je_state *j);
/* Address and size of jemalloc's symbol ending in `suffix` (any symbol
   prefix), when symbols for its module are at hand.  */
bool je_lookup(const struct je_state *j, const char *suffix, uint64_t *addr,
	       uint64_t *size);
/* The first 8-aligned address in the module's data where match() holds
   (w: the word there), or 0.  */
typedef bool je_match_fn(struct je_state *j, uint64_t at, uint64_t w,
			 void *cookie);
uint64_t je_data_find(struct je_state *j, je_match_fn *match, void *cookie);
void je_find_size_classes(struct je_state *j);
/* rtree.c */
enum hw_status je_find_rtree(struct je_state *j);
enum hw_status je_read_extents(struct je_state *j);
const struct je_extent *je_extent_of(const struct je_state *j, uint64_t addr);
/* tcache.c */
void je_find_tcaches(struct je_state *j);
/* One cache bin of a tcache, decoded afresh from the target.  */
struct je_cache_bin {
	uint64_t at;            /* the cache_bin_t */
	uint64_t items;         /* its first item: the next malloc takes */
	uint32_t n;             /* items cached */
	uint32_t max;           /* its stack's room (ncached_max), 0 if
				   unknown (5.0-5.2's bin 0) */
	int32_t low_water;      /* fewest items since the last GC pass */
	uint64_t nrequests;     /* its stats (0 when built without) */
};
/* Tcache tc's bins, bin k for size class k, into out[JE_MAX_SIZES]:
   how many (0 when its array is no longer readable as the scan read
   it).  */
unsigned je_tcache_bins(struct je_state *j, const struct je_tcache *tc,
			struct je_cache_bin *out);
/* Where a cached item sits: which tcache (j->tcaches), its bin, its
   place in the stack (0: the next malloc takes).  */
struct je_cached_place {
	size_t tcache;
	struct je_cache_bin bin;
	uint32_t pos;
};
/* Is p on a stack of a tcache bin for size class szind?  */
bool je_cached_at(struct je_state *j, uint64_t p, uint16_t szind,
		  struct je_cached_place *where);
/* walk.c */
bool je_walk(struct je_state *j, hw_chunk_fn *fn, void *cookie);
/* The extent that holds addr and its neighbours, from `before` blocks
   before it; with `after`, on to the last extent while fn wants more
   (alloc.h: chunks_around).  */
bool je_walk_around(struct je_state *j, uint64_t addr, size_t before,
		    size_t after, hw_chunk_fn *fn, void *cookie);
bool je_walk_parallel(struct je_state *j, unsigned nparts, hw_chunk_fn *fn,
		      void *const cookies[]);
/* The walk in pieces (alloc.h: hw_allocator_ops.pieces): how many, 0
   when out of memory; piece i's blocks to fn.  */
size_t je_pieces(struct je_state *j);
bool je_walk_piece(struct je_state *j, size_t i, hw_chunk_fn *fn,
		   void *cookie);
/* arenas.c */
void je_find_arenas(struct je_state *j);
/* stats.c */
void je_find_bases(struct je_state *j);
/* Is `base` a base_t whose list of blocks (its head at base +
   *blocks_off; found and stored there when 0) ends at the block holding
   the base_t and has a block holding `arena`?  */
bool je_base_holds(struct je_state *j, uint64_t base, uint64_t arena,
		   uint64_t *blocks_off);
void je_find_internal(struct je_state *j);
void je_figures(const struct je_state *j, struct je_figures *f);
/* jemalloc's own memory: every base block of every base found, and a
   word of each tcache's stack allocation (alloc.h's `internal`).  */
void je_internal(void *state, hw_range_fn *fn, void *cookie);
/* slabcur.c: each bin's current slab (bin_t.slabcur).  */
struct je_slabcur {
	uint32_t nshards;                 /* bin_t records per arena */
	uint32_t first[JE_MAX_SIZES + 1]; /* class i's first record */
	uint64_t *cur;                    /* [arena slot][record]: the
					     slab's edata, 0 for none */
	uint8_t *known;                   /* per arena slot: bins placed */
	const char *how;                  /* how found, or why not */
};
/* Found on the first call; NULL when out of memory.  */
const struct je_slabcur *je_slabcurs(struct je_state *j);
/* Is slab x its bin's current slab?  1 yes, 0 no, -1 unknown (its
   arena's bins were not found).  */
int je_is_slabcur(struct je_state *j, const struct je_extent *x);
void je_slabcur_free(struct je_slabcur *sc);
/* threads.c */
void je_find_bindings(struct je_state *j);
/* report.c: summary's jemalloc lines, and `arenas`.  */
size_t je_count_arenas(const struct je_state *j);
void je_report_summary(void *state, struct hw_emitter *e);
enum hw_status je_report_arenas(void *state, struct hw_emitter *e);
/* What a set of extents (one arena's, or all) holds.  */
struct je_usage {
	uint64_t slabs, regs_used, small_bytes, large, large_bytes;
	uint64_t active, dirty, muzzy, retained, cached;
	bool any;
};
void je_add_extent(const struct je_state *j, struct je_usage *u,
		   const struct je_extent *x);
/* Are any thread pointers known?  Without them no tcache has an owner,
   and bindings are found without their threads.  */
bool je_have_thread_pointers(const struct je_state *j);
/* jemalloc's own count of threads bound to the arena (arena_t starts
   with nthreads[2], application then internal), or -1.  */
int64_t je_arena_nthreads(const struct je_state *j, unsigned a);
/* The threads whose tsd binds them to arena a: "tid,tid", "?" per
   binding without a thread, "-" for none.  */
void je_thread_list(const struct je_state *j, unsigned a, char *buf,
		    size_t len);
/* bins.c */
enum hw_status je_report_bins(void *state, struct hw_emitter *e,
			      const char *kind);
/* bins --list: each class's slabs with free regions and large extents,
   each tcache bin's stack.  */
enum hw_status je_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind);
/* params.c: `mp`, `tcache [TID]` (tid < 0: every thread's) and
   `arena N`.  */
enum hw_status je_report_params(void *state, struct hw_emitter *e);
enum hw_status je_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid);
enum hw_status je_report_arena(void *state, struct hw_emitter *e, size_t n);
/* anatomy.c: `chunk ADDR`'s fields (alloc.h: anatomy).  */
void je_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e);

/* e_bits, the first word of an extent_t/edata_t: its arena (the low 12
   bits), slab (bit 12), state, size index and a slab's free regions.  */
static inline unsigned je_ebits_szind(const struct je_state *j,
				      uint64_t ebits)
{
	return (unsigned)(ebits >> (j->era == JE_ERA_53 ? 20 : 18)) & 0xff;
}

static inline unsigned je_ebits_state(const struct je_state *j,
				      uint64_t ebits)
{
	return j->era == JE_ERA_53 ? (unsigned)(ebits >> 17) & 7 :
				     (unsigned)(ebits >> 16) & 3;
}

static inline unsigned je_ebits_nfree(const struct je_state *j,
				      uint64_t ebits)
{
	int width = j->p.lg_page - 3 + 1;
	return (unsigned)(ebits >> (j->era == JE_ERA_53 ? 28 : 26)) &
	       ((1u << width) - 1);
}

/* Is [addr, addr+len) inside the module's writable memory?  */
static inline bool je_in_data(const struct je_state *j, uint64_t addr,
			      uint64_t len)
{
	for (size_t i = 0; i < j->ndata; i++)
		if (addr >= j->data[i].start && addr + len <= j->data[i].end &&
		    addr + len >= addr)
			return true;
	return false;
}

#endif /* HW_JEMALLOC_H */
