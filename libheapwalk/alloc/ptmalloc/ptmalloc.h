/* ptmalloc.h - glibc malloc as seen from outside the process.
 *
 * A chunk, as glibc lays it out (LP64, SIZE_SZ 8, MALLOC_ALIGNMENT 16):
 *
 *     chunk -> +------------------------------+
 *              | prev_size (if prev is free)  |  also user data of prev
 *              | size | A | M | P             |  A non-main arena, M mmapped,
 *     user  -> +------------------------------+  P previous chunk in use
 *              | fd   (free: next in list)    |  safe-linked in tcache and
 *              | bk   (free: prev in list)    |  fastbins from 2.32
 *              | fd_nextsize, bk_nextsize     |  large bins only
 *              | ...                          |
 *     next  -> +------------------------------+
 *
 * A chunk is free by its header when the next chunk's P bit is clear;
 * chunks parked in a tcache or a fastbin keep P set and are free only by
 * membership of those lists, which is why the walker reads the lists
 * before it walks the heaps (a walk that only counts checks the small
 * and large bins and the fastbins by sums instead: linksums.c).
 *
 * Layouts differ across glibc 2.17-2.44; every offset used here lives in
 * struct pm_layout, filled from DWARF when libc's debug info is found and
 * from the built-in era tables otherwise, each part of which the heap's
 * own data then confirms or overrides (era.c).
 */
#ifndef HW_PTMALLOC_H
#define HW_PTMALLOC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../sym/sym.h"
#include "../../target/target.h"
#include "../alloc.h"

/* A value of a report (emit/emit.h): report.c, params.c and bins.c
   share some.  */
struct em_val;

#define PM_SIZE_SZ 8
#define PM_ALIGN 16
#define PM_MINSIZE 32
#define PM_HDR 16
#define PM_NBINS 128
#define PM_NFASTBINS 10
#define PM_TCACHE_SMALL_BINS 64      /* chunk sizes 0x20 + 16 i */
#define PM_TCACHE_MAX_BINS 76        /* 2.42+: 12 large bins after them */
#define PM_PREV_INUSE 1u
#define PM_IS_MMAPPED 2u
#define PM_NON_MAIN_ARENA 4u
#define PM_SIZE_BITS 7u
#define PM_MAX_ARENAS 1024
#define PM_MAX_HEAPS_PER_ARENA 65536
/* The newest glibc whose layouts are known: 2.PM_NEWEST_MINOR.  */
#define PM_NEWEST_MINOR 44
#define PM_NEWEST_STR "44"

/* The layout eras of malloc_state (2.23 adds attached_threads, 2.27
   have_fastchunks, 2.43 drops it and the fastbins) and malloc_par (2.24
   drops max_total_mem, 2.35 adds the huge-page fields, 2.43 thp_mode
   before them; 2.44 drops tcache_unsorted_limit, at its end).  */
enum pm_ms_era { PM_MS_217, PM_MS_223, PM_MS_227, PM_MS_243 };
enum pm_mp_era { PM_MP_217, PM_MP_224, PM_MP_235, PM_MP_243 };

/* Offsets (bytes) of the fields the walker reads; -1 = not in this
   version.  */
struct pm_layout {
	enum pm_ms_era ms_era;            /* built-in layouts only */
	enum pm_mp_era mp_era;
	int ver_major, ver_minor;         /* 0.0 when unknown */
	const char *source;               /* "DWARF" or "built-in 2.27-2.34" */
	/* struct malloc_state */
	int64_t ms_mutex, ms_flags, ms_have_fastchunks, ms_fastbins, ms_top,
		ms_last_remainder, ms_bins, ms_binmap, ms_next, ms_next_free,
		ms_attached_threads, ms_system_mem, ms_max_system_mem;
	uint64_t ms_sizeof;
	/* struct malloc_par */
	int64_t mp_trim_threshold, mp_mmap_threshold, mp_n_mmaps,
		mp_mmapped_mem, mp_sbrk_base, mp_tcache_bins,
		mp_tcache_max_bytes, mp_tcache_count;
	uint64_t mp_sizeof;
	/* Its other members, shown by `mp` only (their offsets follow from
	   the ones above in every glibc; DWARF gives them when it can).  */
	int64_t mp_top_pad, mp_arena_test, mp_arena_max, mp_thp_mode,
		mp_thp_pagesize, mp_hp_pagesize, mp_hp_flags, mp_n_mmaps_max,
		mp_max_n_mmaps, mp_no_dyn_threshold, mp_max_mmapped_mem,
		mp_max_total_mem, mp_tcache_unsorted_limit;
	/* heap_info */
	int64_t hi_ar_ptr, hi_prev, hi_size;
	uint64_t hi_sizeof;
	/* tcache_perthread_struct */
	bool has_tcache;
	int64_t tc_counts, tc_entries;
	unsigned tc_count_width;          /* 1 (char) or 2 (uint16_t) */
	unsigned tc_nbins;                /* 64, or 76 (2.42+) */
	bool tc_slots;                    /* 2.42+: the counts are the free
					     slots left (num_slots), not
					     the entries */
	uint64_t tc_sizeof;
	bool safe_linking;                /* 2.32+ */
	uint64_t heap_max;                /* HEAP_MAX_SIZE: heap alignment */
	uint64_t usable_slack;            /* chunk size - usable: 8, or 16
					     with memory tagging */
};

/* Fill `l` for glibc major.minor from the built-in tables; false if the
   version is outside 2.17-2.PM_NEWEST_MINOR.  */
bool pm_layout_builtin(struct pm_layout *l, int major, int minor);
/* Set one part of `l` to an era's built-in layout.  */
void pm_layout_ms(struct pm_layout *l, enum pm_ms_era era);
void pm_layout_mp(struct pm_layout *l, enum pm_mp_era era, bool tcache);
/* The members of malloc_par only `mp` shows, from those the walker
   reads (pm_layout_mp and DWARF set them).  */
void pm_layout_mp_rest(struct pm_layout *l, enum pm_mp_era era);
/* The tcache struct of an era: 1 = byte counts (2.26-2.29), 2 = 16-bit
   counts (2.30-2.41), 3 = 76 bins counting free slots (2.42+).  */
void pm_layout_tcache(struct pm_layout *l, unsigned kind);

/* What a walk that checks lists by sums (linksums.c) adds up, per heap
   (written only by the thread that walks it), then per arena.  */
struct pm_sums {
	/* Free chunks that no walked list holds, by the bin of their size
	   (each bin is proven or walked on its own): their links hashed
	   each way, how many, their bytes; bit b of link_broken, a link
	   unreadable or to itself in bin b.  */
	uint64_t link_fwd[PM_NBINS], link_bwd[PM_NBINS];
	uint64_t bin_count[PM_NBINS], bin_bytes[PM_NBINS];
	uint64_t link_broken[2];
	/* An arena's: the chunks and bytes of all its bins (add_up_sums).  */
	uint64_t binned, binned_bytes;
	/* In-use chunks that may be fastbin entries, the guesses, fastbin
	   by fastbin (each is proven or taken back on its own): the hashes
	   of their addresses and of their fd pointers, how many end a
	   list, and how many there are.  */
	uint64_t guess_nodes[PM_NFASTBINS], guess_links[PM_NFASTBINS];
	uint64_t guess_tails[PM_NFASTBINS], guessed[PM_NFASTBINS];
};

/* A heap: a contiguous run of chunks.  */
struct pm_heap {
	uint64_t start;       /* first chunk */
	uint64_t end;         /* end of the chunk area */
	uint64_t info;        /* heap_info address (thread heaps) or 0 */
	int32_t arena;
	uint8_t *tags;        /* 2 bits per 16 bytes: enum pm_tag */
	size_t tags_len;      /* bytes mapped for tags */
	struct pm_sums sums;
	/* pieces.c: for each PM_PIECE_BYTES of the heap, the first chunk a
	   walk from its start met there (0: none started there).  */
	uint64_t *marks;
};

/* The heap bytes of a piece: a walk from a mark to the next one lists
   some 2,000 small chunks, a few hundred KiB of `chunks` report that a
   thread holds until its turn to write it.  */
#ifndef PM_PIECE_BYTES
#define PM_PIECE_BYTES (256u << 10)
#endif

/* Note the walk at chunk c (a marking walk met it first in its span);
   returns where the next span starts.  */
static inline uint64_t pm_piece_mark(struct pm_heap *h, uint64_t c)
{
	uint64_t k = (c - h->start) / PM_PIECE_BYTES;
	h->marks[k] = c;
	return h->start + (k + 1) * PM_PIECE_BYTES;
}

/* A piece of the walk in address order: chunks [from, until) of heap
   `unit`, or (unit >= nheaps) mmapped chunk unit - nheaps.  */
struct pm_piece {
	size_t unit;
	uint64_t from, until;
};

enum pm_tag { PM_TAG_NONE, PM_TAG_FAST, PM_TAG_UNSORTED, PM_TAG_BINNED };

/* A chunk in a tcache is marked in the tag of its second granule (its
   user pointer's), which no chunk starts at: the chunk walk then needs no
   set lookup per chunk.  */
static inline void pm_mark_tcached(struct pm_heap *h, uint64_t user)
{
	uint64_t g = (user - h->start) >> 4;
	h->tags[g >> 2] |= (uint8_t)(PM_TAG_FAST << ((g & 3) * 2));
}

static inline bool pm_is_tcached(const struct pm_heap *h, uint64_t user)
{
	uint64_t g = (user - h->start) >> 4;
	return (h->tags[g >> 2] >> ((g & 3) * 2)) & 3;
}

static inline enum pm_tag pm_tag_get(const struct pm_heap *h, uint64_t chunk)
{
	uint64_t g = (chunk - h->start) >> 4;
	return (enum pm_tag)((h->tags[g >> 2] >> ((g & 3) * 2)) & 3);
}

struct pm_bin_stat {
	uint64_t count, bytes;
};

struct pm_arena {
	uint64_t addr;
	uint64_t top, top_size;
	uint64_t system_mem, max_system_mem;
	uint64_t attached_threads;
	uint32_t mutex, flags;
	bool uninit;                      /* main_arena as linked: malloc was
					     never called (no top, no bins) */
	size_t nheaps;                    /* of pm_state.heaps */
	unsigned part;                    /* list-walk thread */
	struct pm_bin_stat fast[PM_NFASTBINS];
	struct pm_bin_stat bins[PM_NBINS]; /* 1 unsorted, 2..63 small, 64.. large */
	/* Which lists were walked (each is walked once: a lookup walks only
	   the lists its chunks could be on, a later report the others).  */
	bool fast_done[PM_NFASTBINS];
	uint16_t fast_broken;             /* bit i: fastbin i's walk broke */
	/* The entries of broken fastbins that no list reaches
	   (pm_fast_orphan), counted once (pm_count_fast_orphans): free as
	   glibc's own mallinfo counted them before the damage.  */
	struct pm_bin_stat fast_orphans[PM_NFASTBINS];
	uint16_t fast_orphans_done;       /* bit i: fastbin i's counted */
	/* For a walk that guesses the fastbin entries: bit i, fastbin i
	   is not empty; the span of the arena's heaps.  */
	uint16_t fast_heads;
	uint64_t fast_head[PM_NFASTBINS];
	/* bit i: fastbin i's guesses did not add up (a stale fd in a chunk
	   malloc took back, or program data that decodes into the arena):
	   they were taken back and its list walked instead.  */
	uint16_t fast_guess_failed;
	uint64_t span_lo, span_hi;
	bool bins_done[PM_NBINS];
	/* bit b: bin b's count and bytes are its link sums' (proven without
	   walking it), its chunks untagged: a free chunk of its size on no
	   other list is in it.  Set only when some other bin's sums failed
	   (else pm_state.bins_summed says it of every bin).  */
	uint64_t bins_summed[2];
	/* Its bins, the unsorted one too, were settled by one sum of all
	   their links (pm_state.free_summed); cleared when they are walked.  */
	bool free_summed;
	/* Left out of a walk of the lists (a fallback for other arenas).  */
	bool lists_skip;
	/* Some of its bins were walked after their sums failed, or a
	   fastbin's walk broke: the heaps of this arena get a walk for the
	   findings that need the lists (pm_walk_arena_findings).  */
	bool lists_findings;
	/* Its heaps' sums, added up when they are settled; binned and
	   binned_bytes are the small and large bins' chunks and bytes when
	   pm_state.bins_summed.  */
	struct pm_sums sums;
};

/* One thread's tcache.  */
struct pm_tcache {
	int tid;
	uint64_t addr;        /* tcache_perthread_struct (user pointer) */
	int32_t arena;        /* arena whose heap holds it, or -1 */
	uint16_t counts[PM_TCACHE_MAX_BINS];  /* entries, by the counters */
	bool counts_known;    /* false: 2.42+ without mp_.tcache_count */
	uint16_t walked[PM_TCACHE_MAX_BINS];
	uint64_t bytes[PM_TCACHE_MAX_BINS];   /* of the walked entries */
	bool done[PM_TCACHE_MAX_BINS];    /* bin walked (see pm_arena) */
};

/* One thread's thread_arena (threads.c).  */
struct pm_thread_arena {
	int tid;
	int32_t arena;        /* index into pm_state.arenas, or PM_TA_* */
	uint64_t value;       /* the pointer as read */
};

#define PM_TA_NONE (-1)       /* NULL: the thread never called malloc */
#define PM_TA_OTHER (-2)      /* not the address of any arena */
#define PM_TA_UNREAD (-3)     /* no thread pointer, or its TLS not dumped */

/* Set of tcache'd user pointers (open addressing, 0 = empty).  */
struct pm_addrset {
	uint64_t *slots;
	size_t cap, n;
};

struct pm_mmapped {
	uint64_t chunk, size;     /* the chunk and its size field */
	uint64_t tail;            /* 16 (2.43+: a spare header after the
				     chunk ends its mapping) or 0 */
};

/* The glibc releases the heap's data is consistent with (era.c).  */
struct pm_era {
	int lo, hi;                       /* 2.lo - 2.hi */
	bool observed;                    /* anything seen at all */
	bool conflict;                    /* two observations disagreed */
	bool disagrees;                   /* the version string is outside */
	char seen[384];                   /* the observations, "; "-joined */
};

struct pm_state {
	struct hw_session *s;
	struct hw_target *t;
	struct pm_layout l;
	/* The built-in layout of a known version was taken at open, and
	   libc's DWARF (inflating it is most of an open) is read only if
	   this instance is walked (pm_settle).  dwarf_now: read at open.  */
	bool dwarf_later, dwarf_now;
	/* The layout cache's answers disagreed with the debug file's and
	   were replaced (pm_settle; summary says so).  */
	bool layout_cache_wrong;
	size_t opening;                   /* the session's, at open */
	char version[32];
	const char *how_version;          /* where version came from */
	struct pm_era era;
	const char *how_arena;            /* "symbol main_arena" / "scan" */
	const char *how_mp;
	const char *how_tcache;
	uint64_t libc_base;
	const char *libc_path;            /* as the target names it */
	/* libdwfl's module of this glibc (a libc copy, or the executable
	   of a static program), for later symbol look-ups.  */
	struct hw_module libc_mod;
	bool have_libc_mod;
	int libc_file;                    /* its first mapping in t->files,
					     or -1 */
	/* libc's ELF machine.  When it is not the core's, this heap is an
	   emulated guest's (qemu-user): the core's threads and thread
	   pointers are the emulator's, not the guest's.  */
	const struct hw_arch *arch;
	bool guest;
	uint64_t main_arena, mp;
	uint64_t pagesize;
	uint64_t sbrk_base, n_mmaps, mmapped_mem, tcache_bins, tcache_count;
	uint64_t global_max_fast;
	struct pm_arena *arenas;
	size_t narenas;
	struct pm_heap *heaps;
	size_t nheaps, heaps_cap;
	struct pm_tcache *tcaches;
	size_t ntcaches;
	/* What a tcache entry's key word holds (2.29+; era.c): its tcache,
	   or glibc's random tcache_key; PM_KEY_NONE when not seen.  */
	enum { PM_KEY_NONE, PM_KEY_SELF, PM_KEY_RANDOM } tcache_key_mode;
	uint64_t tcache_key;
	/* Tcaches read although their chunk header is broken (lists.c).  */
	uint64_t tc_broken_home[4];
	unsigned ntc_broken_home;
	int64_t tcache_tp_off;            /* &tcache - thread pointer */
	bool tcache_tp_known;
	/* Each target thread's arena, in target thread order; NULL when
	   thread_arena was not found (how_thread_arena says why).  */
	struct pm_thread_arena *thread_arenas;
	size_t nthread_arenas;
	int64_t arena_tp_off;             /* &thread_arena - thread pointer */
	char how_thread_arena[160];
	struct pm_addrset tcached;
	uint64_t tcache_max_chunk;        /* largest chunk in any tcache */
	uint64_t tc_struct_chunk;         /* chunk size of a
					     tcache_perthread_struct; 0:
					     no tcaches */
	/* Tcache lists that end before their counters say (a broken next
	   pointer, or a damaged head): the small bins concerned, and for
	   2.29-2.33 (whose entries' key is their own tcache) those
	   tcaches.  The chunk walk takes an in-use chunk of such a bin
	   whose key word holds the key for an orphaned entry.  */
	struct pm_orphans {
		uint64_t bins;            /* bit i: small bin i */
		uint64_t self_keys[8];    /* PM_KEY_SELF: broken tcaches */
		unsigned nself;
		bool any;
		/* The same, seen before the key was known (no list reached
		   an entry holding it): kept until keyscan.c learns it from
		   the heap, once.  */
		uint64_t unkeyed_bins;
		uint64_t unkeyed_tc[8];
		unsigned nunkeyed;
		bool key_scanned;
	} orphans;
	struct pm_mmapped *mmapped;
	size_t nmmapped;
	uint64_t list_limit;              /* bound on any list walk */
	bool walked;                      /* findings of the chunk walk taken */
	bool lists_reported;              /* ... and those needing every list */
	bool lists_done;                  /* every list walked */
	bool fast_lists_done;             /* every tcache and fastbin walked */
	bool tcaches_done;                /* every tcache walked */
	bool mmapped_done;                /* mmapped chunks looked for */
	/* The small and large bins were not walked: a chunk walk hashed
	   their chunks' links and the sums agreed (linksums.c), so each
	   arena's sums.binned/binned_bytes are theirs.  */
	bool bins_summed;
	/* A walk for counting settled the free chunks of every arena's
	   bins without walking even the unsorted bin: an arena whose
	   pm_arena.free_summed is set has sums.binned/binned_bytes as the
	   chunks and bytes of all its bins, unsorted included, and which
	   bin holds each is not known (the others' lists were walked).  */
	bool free_summed;
	/* A whole walk's progress: bytes of heap walked by every part (each
	   adds at checkpoints), of progress_total; the caller's own part
	   tells the front end (hw_progress).  */
	_Atomic uint64_t progress_done;
	uint64_t progress_total;
	/* pieces.c: the walk in address order cut where a walk of every
	   heap marked it.  */
	struct {
		bool want;        /* the next walk of every heap marks */
		bool marked;      /* one did, to the end */
		struct pm_piece *v;
		size_t n;
	} pieces;
};

/* detect.c */
/* Offsets from libc's DWARF over those in p->l, where it has them.  */
void pm_layout_from_dwarf(struct pm_state *p, const struct hw_module *m);
enum hw_status pm_find_roots(struct pm_state *p);
/* Does libc's writable data hold `value` (its symbol tcache_key, or a
   scan of its data and .bss)?  *at is where.  */
bool pm_libc_data_holds(struct pm_state *p, uint64_t value, uint64_t *at);
/* Each word of libc's writable data (its .data and .bss, and the
   anonymous tail after them: where main_arena, mp_ and tcache_key live),
   with its address, to fn until fn says stop (false: then false).  */
typedef bool pm_word_fn(void *cookie, uint64_t at, uint64_t value);
bool pm_libc_data_words(struct pm_state *p, pm_word_fn *fn, void *cookie);
/* Is t->files[i] the first mapping of a libc copy?  */
bool pm_libc_copy_at(const struct hw_target *t, size_t i);
/* How many libc copies the target maps (at least 1).  */
size_t pm_count_libcs(struct hw_session *s);
/* ptmalloc.c: note the libc being opened, its path and architecture.  */
void pm_instance_arch(struct pm_state *p, const char *libc_path);
/* Is the mmapped chunk at addr this instance's rather than another libc
   copy's?  */
bool pm_mmapped_ours(const struct pm_state *p, uint64_t addr);
/* era.c */
void pm_era_init(struct pm_era *e);
void pm_era_observe(struct pm_state *p, int lo, int hi, const char *what);
/* malloc_par from the address of its sbrk_base, choosing the era whose
   reading is sane (and setting it in p->l); 0 if none is.  */
uint64_t pm_era_mp(struct pm_state *p, uint64_t sbrk_slot);
/* The same for malloc_par known to be at mp (a symbol without DWARF):
   mp, or 0 if no era reads it sanely.  */
uint64_t pm_era_mp_at(struct pm_state *p, uint64_t mp);
void pm_era_ms(struct pm_state *p);
void pm_era_heap_info(struct pm_state *p, bool apply);
void pm_era_links(struct pm_state *p);
/* The verdict: notes where the version string and the data disagree;
   false (with the session's error) for a glibc newer than the known
   layouts that neither debug info nor the data vouch for.  */
bool pm_era_conclude(struct pm_state *p);
/* prefault.c: start faulting in the likely heaps (before the roots).  */
void pm_prefault_start(struct pm_state *p);
/* heaps.c */
enum hw_status pm_find_heaps(struct pm_state *p);
/* List [start, end) as a heap of arena `arena` (info: its heap_info or
   0); false when it could not be (a partial mark says so).  */
bool pm_add_heap(struct pm_state *p, uint64_t start, uint64_t end,
		 uint64_t info, int32_t arena);
/* segments.c: the pieces of a non-contiguous main arena, as heaps.  */
void pm_main_segments(struct pm_state *p, struct pm_arena *ar);
struct pm_heap *pm_heap_of(struct pm_state *p, uint64_t addr);
/* pm_heap_of, trying *hint (the caller's last answer) first.  */
struct pm_heap *pm_heap_near(struct pm_state *p, struct pm_heap **hint,
			     uint64_t addr);
/* lists.c: every free list (tcache, fastbins, bins), once; each op that
   shows or classifies free chunks calls it first.  */
void pm_walk_lists(struct pm_state *p);
/* Only the lists of chunks whose headers say "in use" (tcaches and
   fastbins): enough to tell every chunk's state.  */
void pm_walk_fast_lists(struct pm_state *p);
/* The fastbins not walked yet nor settled by guesses (after a walk
   whose guesses did not add up in some of them).  */
void pm_walk_fastbins_left(struct pm_state *p);
/* The small and large bins not walked yet (after a walk whose link
   sums failed in them; the others are marked walked by then).  */
void pm_walk_bins_left(struct pm_state *p);
/* Every tcache list (before a light walk: see pm_states_parallel).  */
void pm_walk_tcaches(struct pm_state *p);
/* The tcaches, fastbins and unsorted bins: every list but the small and
   large bins (before a walk with link sums).  */
void pm_walk_lists_but_sorted(struct pm_state *p);
/* The tcaches and unsorted bins (before a walk with link sums that
   guesses the fastbin entries).  */
void pm_walk_tcaches_unsorted(struct pm_state *p);
/* Only the lists that chunks of these sizes (chunk sizes, headers
   included) in arena `arena` could be on: their tcache bins in every
   tcache, their fastbin, the unsorted bin and their bins.  For a lookup,
   which classifies three chunks.  */
void pm_walk_lists_for(struct pm_state *p, int arena, const uint64_t *sizes,
		       size_t nsizes);
void pm_find_tcaches(struct pm_state *p);
/* Is the chunk at user pointer `user` in a tcache?  (A set look-up: for
   the few chunks outside heaps, mmapped ones in 2.43+'s large bins.)  */
bool pm_tcached_at(const struct pm_state *p, uint64_t user);

/* keyscan.c: glibc's tcache key learnt from the chunks that hold it,
   when no list reached one (tcache_key_mode and tcache_key set); false
   when the heap's evidence is not enough to name it.  */
bool pm_learn_tcache_key(struct pm_state *p);

/* Is the in-use chunk c (as delivered by the walk) an orphaned tcache
   entry (lists.c)?  */
bool pm_tcache_orphan(struct pm_state *p, const struct hw_chunk *c);
/* Could the in-use chunk c of heap h be an entry of a broken fastbin
   that its list no longer reaches (lists.c)?  PM_FAST_ORPHAN: its
   safe-linked fd says it is; PM_FAST_MAYBE: its plain fd could be, or the
   program's own link.  */
enum pm_fast_verdict { PM_FAST_NO, PM_FAST_ORPHAN, PM_FAST_MAYBE };
enum pm_fast_verdict pm_fast_orphan(struct pm_state *p,
				    const struct pm_heap *h,
				    const struct hw_chunk *c);

/* After a damaged header in heap h: the first position at or after
   `from` (16-byte steps) from which the size chain is consistent to the
   heap's end, or for a long run of chunks when there is more damage
   (resync.c);
   false when there is none.  */
bool pm_resync(struct pm_state *p, const struct pm_heap *h, uint64_t from,
	       uint64_t *resume);
/* threads.c: every thread's thread_arena (after pm_find_tcaches).  */
void pm_find_thread_arenas(struct pm_state *p);
/* walk.c: look for the mmapped chunks (once; every page start of the
   anonymous writable memory outside the heaps is read, so only walks of
   everything do it).  */
void pm_find_mmapped(struct pm_state *p);
bool pm_walk_chunks(struct pm_state *p, hw_chunk_fn *fn, void *cookie);
/* Only the heap (or the mmapped chunk) that holds addr, from up to
   `before` chunks before addr's; its chunks' states are exact up to
   `after` chunks after it (alloc.h: chunks_around).  */
bool pm_walk_around(struct pm_state *p, uint64_t addr, size_t before,
		    size_t after, hw_chunk_fn *fn, void *cookie);
#define PM_MAX_PARTS 16

/* What a parallel walk of everything knows of the lists.  */
enum pm_walk_kind {
	PM_WALK_ALL,      /* every list was walked */
	/* The walk needs to know which chunks are in use, not which bin a
	   free one is in (leaks' block map): the caller walked the fast
	   lists only, free chunks' `where` is HW_WHERE_COUNT, and findings
	   that need every list are left for a full walk.  */
	PM_WALK_STATES,
	/* The same, with the unsorted bins walked too: the chunks of the
	   small and large bins are hashed for pm_link_sums_settle.  */
	PM_WALK_SUMS,
	/* A PM_WALK_SUMS walk may also guess the fastbin entries and give
	   them as free (pm_fast_guess_begin said yes): or'ed in.  */
	PM_WALK_GUESS_FAST = 8,
};
/* how: a pm_walk_kind, with PM_WALK_GUESS_FAST or'ed in or not.  */
bool pm_walk_chunks_parallel(struct pm_state *p, unsigned nparts,
			     hw_chunk_fn *fn, void *const cookies[],
			     unsigned how);
/* A walk callback that takes every chunk and keeps nothing (a walk for
   its findings or its sums alone).  */
bool pm_take_nothing(void *cookie, const struct hw_chunk *c);
/* The findings that need every list, by one more walk of the heaps
   (after pm_walk_lists, when a PM_WALK_SUMS walk's sums disagreed).  */
void pm_walk_list_findings(struct pm_state *p);
/* The same, over the heaps of the arenas marked lists_findings only
   (after some of their bins' sums failed and those bins were walked).  */
void pm_walk_arena_findings(struct pm_state *p);
/* linksums.c: can the small and large bins be checked by sums (no
   lookup walked one of them yet)?  */
bool pm_link_sums_usable(const struct pm_state *p);
/* Can the fastbins' entries be guessed by a walk and checked by sums
   (safe-linked fastbins, none walked yet, and pm_link_sums_usable)?  If
   so, read the fastbins' heads for it and say yes.  */
bool pm_fast_guess_begin(struct pm_state *p);
/* After a walk that guessed (`complete`: to the end), fastbin by
   fastbin: do the guesses' sums match the fastbin's head?  If so they
   are its entries (tagged, counted, the fastbin done).  If not, each of
   its guesses is given to restate(cookie, ...) as in use (when restate
   is not NULL) and forgotten, its list is walked, and the entries it
   holds go to restate as free (the other fastbins are not walked).  An
   incomplete walk's guesses are all forgotten (DROPPED: the caller
   walks the lists); STOPPED: restate stopped.  */
enum pm_guess_end { PM_GUESS_SETTLED, PM_GUESS_DROPPED, PM_GUESS_STOPPED };
enum pm_guess_end pm_fast_guess_settle(struct pm_state *p, bool complete,
				       hw_chunk_fn *restate, void *cookie);
/* After a PM_WALK_SUMS walk: do the hashed links match the bins' heads,
   bin by bin?  If so in every bin, the bins are summed (p->bins_summed).
   If not, the bins whose sums agree are settled by them
   (pm_arena.bins_summed), the others walked, and every list is done.
   Then the heaps of the arenas marked lists_findings (those, and any
   marked before) are walked for the findings that need the lists.  */
bool pm_link_sums_settle(struct pm_state *p);
/* A walk of everything in threads (pm_walk_chunks_parallel) that
   checks the small and large bins by sums and, when may_guess, guesses
   the fastbin entries and gives them as free (restate takes back wrong
   guesses; NULL: fn needs none taken back); the lists are walked only
   where the sums disagree.  When classify is false (a walk for
   counting, which needs no free chunk's bin) not even the unsorted bin
   is walked: its chunks are summed with the others' (free_summed).
   False if fn stopped.  */
bool pm_walk_by_sums(struct pm_state *p, unsigned nparts, hw_chunk_fn *fn,
		     void *const cookies[], hw_chunk_fn *restate,
		     bool may_guess, bool classify);
/* Before a walk in address order that shows each free chunk's bin but
   not the lists themselves (`chunks`, `frag`, `map`): a walk in threads
   that only settles the lists by sums (the fastbins guessed, the small
   and large bins summed, and a chunk's bin then its size's); the lists
   are walked only where the sums disagree.  */
void pm_settle_lists(struct pm_state *p);
/* Every chunk parked in a tcache or a fastbin (after the fast lists were
   walked), as free blocks to fn(cookie, ...): a walk made before the
   lists gave them as in use.  False if fn stopped.  */
bool pm_retract_parked(struct pm_state *p, hw_chunk_fn *fn, void *cookie);
/* tagscan.c: each chunk of heap h tagged `tag`, in address order, to
   fn(arg, h, chunk, its size field) (a chunk whose header cannot be read
   is left out); false when fn stopped.  */
typedef bool pm_tagged_fn(void *arg, struct pm_heap *h, uint64_t chunk,
			  uint64_t field);
bool pm_each_tagged(struct pm_state *p, struct pm_heap *h, enum pm_tag tag,
		    pm_tagged_fn *fn, void *arg);

/* The entries of the fastbins whose guesses were taken back
   (pm_fast_guess_settle), as free blocks to fn(cookie, ...), after
   their lists were walked.  False if fn stopped.  */
bool pm_retract_failed_guesses(struct pm_state *p, hw_chunk_fn *fn,
			       void *cookie);
/* After a walk of fastbins: count the orphans of those found broken
   into their arenas (a walk of the heaps of those arenas; once per
   bin).  */
void pm_count_fast_orphans(struct pm_state *p);
/* The orphans of the broken fastbins (pm_fast_orphan: free, in their
   fastbin by their fd chain, reached by no list) as free blocks to
   fn(cookie, ...), after the fast lists were walked: a walk made before
   that gave them in use.  False if fn stopped.  */
bool pm_retract_fast_orphans(struct pm_state *p, hw_chunk_fn *fn,
			     void *cookie);
/* pieces.c: before a walk of every heap from its start in threads
   (pm_walk_chunks_parallel): should it mark the pieces (made ready if
   so)?  After it, whether it went to the end.  */
bool pm_pieces_mark_begin(struct pm_state *p);
void pm_pieces_mark_end(struct pm_state *p, bool complete);
/* The pieces, in the order pm_walk_chunks gives the chunks, from the
   marks (p->pieces.marked): how many, 0 when out of memory.  */
size_t pm_pieces_build(struct pm_state *p);
void pm_pieces_free(struct pm_state *p);
/* linksums.c: add a heap's (or a part's) sums to another's: every bin's
   and fastbin's, link_broken or'ed (binned is an arena's, left alone).  */
void pm_sums_add(struct pm_sums *to, const struct pm_sums *from);

/* split.c: the biggest heap of a walk in threads cut into pieces as one
   thread follows its chain of sizes (pm_split_follow), the pieces walked
   by every thread (pm_split_take) with a copy of the heap whose sums are
   the part's own (shadow[part]), added to the heap's by pm_split_end.  */
struct pm_split {
	bool active;
	size_t unit;              /* the heap split */
	struct pm_state *p;
	struct pm_heap *h;
	const uint8_t *base;      /* the heap's bytes, in place */
	unsigned nparts;
	bool mark;                /* the follower marks h's pieces too */
	struct pm_heap *shadow;   /* one per part */
	uint64_t *bounds;         /* chunks the walk meets, a piece apart */
	size_t published;         /* bounds known to the walkers */
	size_t next;              /* the next piece to take */
	bool finished;            /* the follower is done: the tail is due */
	pthread_mutex_t lock;
	pthread_cond_t more;
};
/* Should heap `unit` be split among nparts threads (total_bytes: every
   heap's)?  When so, sp is made ready (active).  */
bool pm_split_begin(struct pm_split *sp, struct pm_state *p, size_t unit,
		    unsigned nparts, uint64_t total_bytes, bool mark);
/* Follow the heap's chain, publishing bounds, until its tail or *stop.  */
void pm_split_follow(struct pm_split *sp, _Atomic bool *stop);
/* The next piece, waiting for the follower if need be: chunks from
   *from to the first at or past *until; *tail when it is the heap's
   last (walked with findings and marks).  False when none is left.  */
bool pm_split_take(struct pm_split *sp, _Atomic bool *stop, uint64_t *from,
		   uint64_t *until, bool *tail);
/* Wake the parts waiting for pieces (after *stop was set).  */
void pm_split_wake(struct pm_split *sp);
/* The parts' sums added to the heap's; everything freed.  */
void pm_split_end(struct pm_split *sp);
/* walk.c: piece i's chunks to fn, as pm_walk_chunks gives them
   (findings were taken by the walk that marked); safe to run for
   several pieces at once.  */
bool pm_walk_piece(struct pm_state *p, size_t i, hw_chunk_fn *fn,
		   void *cookie);
/* classes.c: the bin (or, past the last bin, power of two) of a usable
   size, as a range of request sizes.  */
uint64_t pm_size_class(void *state, uint64_t usable, uint64_t *min);
/* report.c: summary's ptmalloc lines, and `arenas`.  */
void pm_report_summary(void *state, struct hw_emitter *e);
enum hw_status pm_report_arenas(void *state, struct hw_emitter *e);
/* The tids of the threads whose thread_arena is `arena` (an index or a
   PM_TA_* value), into tids (room for every thread).  */
struct em_val pm_thread_tids(const struct pm_state *p, int32_t arena,
			     int32_t *tids);
/* Arena i's heaps, a row each (`arenas` and `arena N`).  */
void pm_heap_rows(struct hw_emitter *e, const struct pm_state *p, size_t i);
/* One free list in its own order (chains.c, `bins --list`): the user
   addresses of its entries, and how the list ends -- at its end, or
   where a step failed (bad: the pointer that did).  */
enum pm_chain_end {
	PM_CHAIN_END, PM_CHAIN_MISALIGNED, PM_CHAIN_UNREADABLE,
	PM_CHAIN_WRONG_SIZE, PM_CHAIN_BK, PM_CHAIN_CYCLE, PM_CHAIN_LIMIT,
	PM_CHAIN_OOM,
};
struct pm_chain {
	uint64_t *entries;
	size_t n, cap;
	enum pm_chain_end end;
	uint64_t bad;
};
void pm_chain_tcache(struct pm_state *p, const struct pm_tcache *tc,
		     unsigned bin, struct pm_chain *ch);
void pm_chain_fast(struct pm_state *p, size_t arena, unsigned bin,
		   struct pm_chain *ch);
void pm_chain_bin(struct pm_state *p, size_t arena, unsigned bin,
		  struct pm_chain *ch);
const char *pm_chain_end_name(enum pm_chain_end end);
/* The chunk sizes tcache bin i holds: one, or a range (2.42+'s large
   bins).  */
void pm_tcache_bin_sizes(unsigned i, uint64_t *lo, uint64_t *hi);

/* Is user address `user` one of the tcaches found?  */
static inline bool pm_is_tcache_struct(const struct pm_state *p,
				       uint64_t user)
{
	for (size_t i = 0; i < p->ntcaches; i++)
		if (p->tcaches[i].addr == user)
			return true;
	return false;
}

/* chunk ADDR's fields of one chunk (anatomy.c).  */
void pm_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e);
/* params.c: `tcache [TID]`: each thread's tcache struct, bin by bin (tid < 0:
   every thread's).  */
enum hw_status pm_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid);
/* `mp`: glibc's malloc_par, every member this glibc has.  */
enum hw_status pm_report_mp(void *state, struct hw_emitter *e);
/* `arena N`: one arena's malloc_state, its threads and heaps.  */
enum hw_status pm_report_arena(void *state, struct hw_emitter *e, size_t n);
/* bins.c: bins; with `list`, each list's entries in order (chains.c).  */
enum hw_status pm_report_bins(void *state, struct hw_emitter *e,
			      const char *kind, bool list);
/* A bin's chunk sizes as four values v[0..3], for the columns
   chunk_size, min_chunk_size, max_chunk_size (JSON) and "chunk size"
   (text): one size, a range lo..hi (hi 0: no end), or lo 0 for any size
   (the unsorted bin); the text goes into buf.  */
void pm_bin_size_vals(struct em_val *v, char *buf, size_t len, uint64_t lo,
		      uint64_t hi);

static inline uint64_t pm_bin_at(const struct pm_state *p, uint64_t arena,
				 int i)
{
	return arena + (uint64_t)p->l.ms_bins + (uint64_t)(i - 1) * 16 - 16;
}

/* The first chunk at or after `addr` whose user pointer is aligned.  */
static inline uint64_t pm_first_chunk(uint64_t addr)
{
	uint64_t mis = (addr + PM_HDR) & (PM_ALIGN - 1);
	return mis ? addr + PM_ALIGN - mis : addr;
}

static inline int pm_smallbin_index(uint64_t sz) { return (int)(sz >> 4); }

static inline int pm_largebin_index(uint64_t sz)
{
	if ((sz >> 6) <= 48) return 48 + (int)(sz >> 6);
	if ((sz >> 9) <= 20) return 91 + (int)(sz >> 9);
	if ((sz >> 12) <= 10) return 110 + (int)(sz >> 12);
	if ((sz >> 15) <= 4) return 119 + (int)(sz >> 15);
	if ((sz >> 18) <= 2) return 124 + (int)(sz >> 18);
	return 126;
}

static inline int pm_bin_index(uint64_t sz)
{
	return sz < 0x400 ? pm_smallbin_index(sz) : pm_largebin_index(sz);
}

/* Is a free chunk of size sz in arena ar, on no walked list, in the bin
   of its size by that bin's sums (pm_arena.bins_summed)?  */
static inline bool pm_bin_summed(const struct pm_arena *ar, uint64_t sz)
{
	int b = pm_bin_index(sz);
	return ar->bins_summed[b >> 6] >> (b & 63) & 1;
}

/* One link of a doubly linked bin, from chunk (or bin head) `from` to
   `to`, hashed for the link sums: each link is added once as a chunk's
   fd and once as the next one's bk, each to the sums of the bin of its
   own chunk's size (linksums.c).  */
static inline uint64_t pm_link_hash(uint64_t from, uint64_t to)
{
	uint64_t x = from * 0x9e3779b97f4a7c15ull +
		     to * 0xc2b2ae3d27d4eb4full;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	return x;
}

/* The node and link hashes of a fastbin guess (linksums.c): same form,
   so that a link to a node of its size adds what the node adds.  */
static inline uint64_t pm_fast_hash(uint64_t chunk, uint64_t size)
{
	return pm_link_hash(chunk, size ^ 0xfa57000000000000ull);
}

/* Undo safe-linking: `stored` was read from the field at `field_addr`.  */
static inline uint64_t pm_reveal(const struct pm_state *p,
				 uint64_t field_addr, uint64_t stored)
{
	return p->l.safe_linking ? (field_addr >> 12) ^ stored : stored;
}

/* Is the in-use chunk `chunk` (size sz) of heap h, whose bytes are at
   mem (or NULL), a fastbin entry, by a guess (linksums.c says how)?  If
   so it is tagged and hashed.  Inline, always: the walk asks for every
   small chunk in use.  */
static inline __attribute__((always_inline)) bool
pm_fast_guess(struct pm_state *p, struct pm_heap *h, uint64_t chunk,
	      uint64_t sz, const uint8_t *mem)
{
	const struct pm_arena *ar = &p->arenas[h->arena];
	uint64_t i = sz / 16 - 2;
	if (i >= PM_NFASTBINS || !(ar->fast_heads >> i & 1))
		return false;
	uint64_t stored;
	if (mem)
		memcpy(&stored, mem + PM_HDR, sizeof stored);
	else if (!hw_read_u64(p->t, chunk + PM_HDR, &stored))
		return false;
	uint64_t next = pm_reveal(p, chunk + PM_HDR, stored);
	if (next && ((next & 15) || next < ar->span_lo ||
		     next >= ar->span_hi || next == chunk))
		return false;
	uint64_t g = (chunk - h->start) >> 4;
	h->tags[g >> 2] |= (uint8_t)(PM_TAG_BINNED << ((g & 3) * 2));
	h->sums.guess_nodes[i] += pm_fast_hash(chunk, sz);
	if (next)
		h->sums.guess_links[i] += pm_fast_hash(next, sz);
	else
		h->sums.guess_tails[i]++;
	h->sums.guessed[i]++;
	return true;
}

#endif /* HW_PTMALLOC_H */
