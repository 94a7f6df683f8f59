/* mallocng.c - musl libc's malloc (mallocng) behind the allocator
 * interface.
 *
 * Opening finds the context and reads the meta areas once (groups.c);
 * walks read the slots' headers (walk.c).  One heap, no arenas, no
 * thread caches: every thread allocates from the same groups.
 */
#include <stdlib.h>

#include "mallocng.h"
#include "detect.h"

static void ng_close(void *state)
{
	struct ng_state *ng = state;
	if (!ng)
		return;
	free(ng->groups);
	free(ng);
}

static enum hw_status ng_open(struct hw_session *s, void **state)
{
	struct ng_state *ng = calloc(1, sizeof *ng);
	if (!ng)
		return hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	ng->s = s;
	ng->t = s->target;
	if (!ng_find_context(ng)) {
		/* (The session says why: detect.c, once nothing opens.)  */
		ng_close(ng);
		return HW_NO_ALLOCATOR;
	}
	enum hw_status st = ng_read_groups(ng);
	if (st != HW_OK) {
		ng_close(ng);
		return st;
	}
	*state = ng;
	return HW_OK;
}

static void ng_describe(void *state, struct hw_instance_info *info)
{
	struct ng_state *ng = state;
	uint64_t lo = 0, hi = 0;
	info->module = ng->home ? ng->home : "";
	info->arch = ng->home && hw_file_range(ng->t, ng->home, &lo, &hi)
			     ? hw_elf_arch_at(ng->t, lo)
			     : NULL;
	info->held = ng->held;
}

/* 1.2.1 to 1.2.5 share every layout; the version string is in .rodata,
   which cores leave out.  */
static const char *ng_version(void *state)
{
	(void)state;
	return "1.2.1+";
}

static size_t ng_narenas(void *state)
{
	(void)state;
	return 1;
}

static bool ng_chunks(void *state, hw_chunk_fn *fn, void *cookie)
{
	return ng_walk(state, fn, cookie);
}

/* A usable size's class: the smallest whose slot holds it (a slot's
   last 4 bytes are the next one's header); past the largest, its own
   mapping.  */
static uint64_t ng_size_class(void *state, uint64_t usable, uint64_t *min)
{
	(void)state;
	uint64_t below = 0;
	for (unsigned c = 0; c < NG_NCLASSES; c++) {
		uint64_t top = (uint64_t)NG_UNIT * ng_size_classes[c] - NG_IB;
		if (usable <= top) {
			*min = below + 1;
			return top;
		}
		below = top;
	}
	*min = usable;
	return usable;
}

static const struct hw_maps_nouns ng_maps_nouns = {
	.in_use = "mallocng groups",
	.one_heap = true,
	.mmapped = "mmapped blocks",
	.unused = "unused memory",
};

/* musl's malloc entry points and mallocng's own functions.  */
static const char *const ng_functions[] = {
	"malloc", "free", "calloc", "realloc", "aligned_alloc",
	"posix_memalign", "memalign", "malloc_usable_size", "__libc_malloc",
	"__libc_malloc_impl", "__libc_free", "__libc_calloc",
	"__libc_realloc", "__malloc_alloc_meta", "alloc_slot", "alloc_group",
	"try_avail", "free_group", "get_meta", "__malloc_donate", NULL,
};

const struct hw_allocator_ops hw_mallocng_ops = {
	.name = "mallocng",
	.functions = ng_functions,
	.maps_nouns = &ng_maps_nouns,
	/* None: a group wholly free is given back to the system.  */
	.reserve_places = 0,
	.block_noun = "slots",
	/* A block's chunk is its slot (the header before it included).  */
	.container = "slot",
	.small_noun = "slot",
	.neighbourhood = "group",
	.open = ng_open,
	.why_absent = hw_mallocng_recognise,
	.describe = ng_describe,
	.close = ng_close,
	.version = ng_version,
	.narenas = ng_narenas,
	.chunks = ng_chunks,
	.summary = ng_report_summary,
	.arenas = ng_report_arenas,
	.bins = ng_report_bins,
	.bins_list = ng_report_bins_list,
	.params = ng_report_params,
	.tcaches = ng_report_tcaches,
	.anatomy = ng_anatomy,
	.check = ng_check,
	.size_class = ng_size_class,
	.block_align = NG_UNIT,
	.walk_sorted = true,        /* groups by address, nests in place */
};
