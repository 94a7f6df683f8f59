/* mimalloc.c - mimalloc 2.x behind the allocator interface.
 *
 * Opening finds the segments (detect.c), reads their pages and heaps
 * (segments.c) and every free block's list (lists.c); walks then need
 * no more reads (walk.c).  Arenas are mimalloc's heaps: a thread's
 * default heap and any the program made, and, last, the pages of
 * threads that exited (abandoned: no heap).
 */
#include <stdlib.h>
#include <string.h>

#include "../module.h"
#include "mimalloc.h"

/* The block size, in words, of each size class (bin) mimalloc's page
   queues keep: bins 1 to 8 a word apart, then four to each power of
   two.  Bins past 52 (128 KiB) are never used in 2.x: larger blocks
   go to the huge bin, one block a page.  */
static const uint32_t bin_words[] = {
	1, 1, 2, 3, 4, 5, 6, 7, 8,
	10, 12, 14, 16, 20, 24, 28, 32,
	40, 48, 56, 64, 80, 96, 112, 128,
	160, 192, 224, 256, 320, 384, 448, 512,
	640, 768, 896, 1024, 1280, 1536, 1792, 2048,
	2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
	10240, 12288, 14336, 16384,
};
#define NBINS (sizeof bin_words / sizeof bin_words[0])
#define BIN_HUGE 73

static unsigned bsr(uint64_t x)
{
	return 63u - (unsigned)__builtin_clzll(x);
}

unsigned mi_bin_of(uint64_t size)
{
	uint64_t w = (size + 7) / 8;
	if (w <= 1)
		return 1;
	if (w <= 8)
		return (unsigned)w;
	if (w > bin_words[NBINS - 1])
		return BIN_HUGE;
	w--;
	unsigned b = bsr(w);
	return ((b << 2) + (unsigned)((w >> (b - 2)) & 3)) - 3;
}

uint64_t mi_bin_size(unsigned bin)
{
	return bin < NBINS ? 8ull * bin_words[bin] : 0;
}

static void mi_close(void *state)
{
	struct mi_state *mi = state;
	if (!mi)
		return;
	for (uint32_t i = 0; mi->segments && i < mi->nsegments; i++)
		free(mi->segments[i].commit_bits);
	free(mi->segments);
	free(mi->pages);
	free(mi->heaps);
	free(mi->lists);
	free(mi->maybe);
	free(mi->piece_start);
	free(mi);
}

static enum hw_status mi_open(struct hw_session *s, void **state)
{
	struct mi_state *mi = calloc(1, sizeof *mi);
	if (!mi)
		return hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	mi->s = s;
	mi->t = s->target;
	/* 2.x's segments first; none: 3.x's page map.  */
	enum hw_status st = mi_find_segments(mi);
	if (st == HW_OK)
		st = mi_read_pages(mi);
	else if (st == HW_NO_ALLOCATOR)
		st = mi_v3_find(mi);
	if (st == HW_OK)
		st = mi_read_lists(mi);
	if (st != HW_OK) {
		mi_close(mi);
		return st;
	}
	*state = mi;
	return HW_OK;
}

static void mi_describe(void *state, struct hw_instance_info *info)
{
	struct mi_state *mi = state;
	uint64_t lo = 0, hi = 0;
	info->module = mi->home ? mi->home : "";
	info->arch = mi->home && hw_file_range(mi->t, mi->home, &lo, &hi)
			     ? hw_elf_arch_at(mi->t, lo)
			     : mi->t->arch;
	info->held = mi->held;
	/* Its own library (not a program it is built into): a thread
	   stopped anywhere in its code is inside the allocator.  */
	if (mi->home && lo < hi &&
	    !strncmp(hw_base_name(mi->home), "libmimalloc", 11)) {
		info->own_low = lo;
		info->own_high = hi;
	}
}

static const char *mi_version(void *state)
{
	struct mi_state *mi = state;
	return mi->L->releases;
}

/* Its heaps, and the abandoned pages after them.  */
static size_t mi_narenas(void *state)
{
	struct mi_state *mi = state;
	return mi->nheaps + 1;
}

static bool mi_chunks(void *state, hw_chunk_fn *fn, void *cookie)
{
	return mi_walk(state, fn, cookie);
}

/* A usable size's class: its bin's block sizes; past the bins, its own.  */
static uint64_t mi_size_class(void *state, uint64_t usable, uint64_t *min)
{
	(void)state;
	unsigned bin = mi_bin_of(usable);
	if (bin >= NBINS) {
		*min = usable;
		return usable;
	}
	*min = bin > 1 ? mi_bin_size(bin - 1) + 1 : 1;
	return mi_bin_size(bin);
}

static uint64_t mi_arena_addr(void *state, int32_t arena)
{
	struct mi_state *mi = state;
	return arena >= 0 && (uint32_t)arena < mi->nheaps
		       ? mi->heaps[arena].addr
		       : 0;
}

/* Its segments' headers and slice arrays, which name pages and blocks
   without keeping them alive; and the bytes of each page before its
   first block, where a link of the page's free list from an earlier
   life (its blocks were larger) may linger.  */
static void mi_internal(void *state, hw_range_fn *fn, void *cookie)
{
	struct mi_state *mi = state;
	for (uint32_t i = 0; i < mi->nsegments; i++)
		fn(cookie, mi->segments[i].addr,
		   mi->segments[i].addr + mi->segments[i].info_size);
	for (uint32_t i = 0; i < mi->npages; i++)
		if (mi->pages[i].start > mi->pages[i].area)
			fn(cookie, mi->pages[i].area, mi->pages[i].start);
}

/* Each page as a slab of equal blocks.  A page that has handed out
   aligned blocks (has_aligned) may have given the program an address
   inside a block: mimalloc frees a block by any address in it, so any
   such pointer holds it.  */
static void mi_slabs(void *state, hw_slab_fn *fn, void *cookie)
{
	struct mi_state *mi = state;
	for (uint32_t i = 0; i < mi->npages; i++) {
		const struct mi_page *pg = &mi->pages[i];
		/* (3.x frees a block by any address in it, from another
		   thread without looking at has_aligned (free.c, mimalloc
		   issue #865), and 3.0.1 loses the flag: seen cleared on a
		   page holding 4096-aligned blocks.)  */
		if (pg->block_size && pg->capacity &&
		    !fn(cookie, pg->area, pg->end, pg->start, pg->block_size,
			pg->capacity, (pg->flags & 2) || mi->v3))
			return;
	}
}

static const struct hw_maps_nouns mi_maps_nouns = {
	.in_use = "mimalloc pages",
	.one_heap = false,
	.mmapped = "huge segments",
	.unused = "unused slices",
	.strip = "segment",
};

/* mimalloc's entry points and the internal functions a thread stopped
   in it would be in.  */
static const char *const mi_functions[] = {
	"mi_*", "_mi_*", "mi_malloc", "mi_free", "malloc", "free", "calloc",
	"realloc", "posix_memalign", "aligned_alloc", "memalign", "valloc",
	"malloc_usable_size", NULL,
};

const struct hw_allocator_ops hw_mimalloc_ops = {
	.name = "mimalloc",
	.functions = mi_functions,
	.maps_nouns = &mi_maps_nouns,
	/* (Free slices that are committed count in the same column as
	   page-reserved: frag's "unused".)  */
	.reserve_places = HW_PLACE_BIT(HW_WHERE_MI_RESERVED) |
			  HW_PLACE_BIT(HW_WHERE_RETAINED),
	.block_noun = "blocks",
	.container = "page",
	.small_noun = "block",
	.open = mi_open,
	.why_absent = hw_mimalloc_recognise,
	.describe = mi_describe,
	.close = mi_close,
	.version = mi_version,
	.narenas = mi_narenas,
	.chunks = mi_chunks,
	.chunks_around = mi_walk_around,
	.chunks_parallel = mi_walk_parallel,
	.pieces = mi_pieces,
	.chunks_piece = mi_walk_piece,
	.summary = mi_report_summary,
	.arenas = mi_report_arenas,
	.bins = mi_report_bins,
	.bins_list = mi_report_bins_list,
	.params = mi_report_params,
	.tcaches = mi_report_tcaches,
	.anatomy = mi_anatomy,
	.check = mi_check,
	.size_class = mi_size_class,
	.arena_addr = mi_arena_addr,
	.thread_arena = mi_thread_arena,
	.internal = mi_internal,
	.slabs = mi_slabs,
	.block_align = 8,
	.walk_sorted = true,
};
