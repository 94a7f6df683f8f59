/* params.c - `mp` for jemalloc: the build's parameters as the heap shows
 * them, under the names mallctl gives them (arenas.page, arenas.quantum,
 * arenas.nbins, arenas.nlextents, arenas.narenas, the largest small and
 * large classes), the radix tree's shape, and where heapwalk found each
 * of jemalloc's roots.
 */
#include "../../emit/emit.h"
#include "jemalloc.h"

static const struct em_field F_VERSION = {
	.key = "version", .label = "version:" };
static const struct em_section S_PARAMS = {
	.key = "params", .indent = 2, .label_width = 18 };
static const struct em_field F_PAGE = {
	.key = "page", .label = "arenas.page:" };
static const struct em_field F_QUANTUM = {
	.key = "quantum", .label = "arenas.quantum:" };
static const struct em_field F_NBINS = {
	.key = "nbins", .label = "arenas.nbins:",
	.post = " small size classes" };
static const struct em_field F_NLEXTENTS = {
	.key = "nlextents", .label = "arenas.nlextents:",
	.post = " large size classes" };
static const struct em_field F_SMALL_MAX = {
	.key = "small_max", .label = "small max:", .form = EM_T_HUMAN };
static const struct em_field F_LARGE_MAX = {
	.key = "large_max", .label = "large max:", .form = EM_T_HUMAN };
static const struct em_field F_NARENAS = {
	.key = "narenas", .label = "arenas.narenas:", .none = "?" };
static const struct em_field F_LG_VADDR = {
	.key = "lg_vaddr", .label = "lg_vaddr:",
	.post = " (bits of a virtual address)" };
static const struct em_field F_LEVELS = {
	.key = "rtree_levels", .label = "radix tree:", .post = " levels" };
static const struct em_field F_TCACHES = {
	.key = "tcaches", .label = "tcaches:", .post = " found" };
static const struct em_section S_ROOTS = {
	.key = "roots", .title = "found:", .indent = 2, .label_width = 18 };
static const struct em_field F_ROOT[] = {
	{ .key = "rtree_root", .label = "radix tree:", .none = "-" },
	{ .key = "size_table", .label = "size classes:", .none = "-" },
	{ .key = "bin_infos", .label = "bin infos:", .none = "-" },
	{ .key = "arenas", .label = "arenas array:", .none = "-" },
};
static const struct em_field F_ROOT_FROM[] = {
	{ .key = "rtree_from", .join = "  " }, { .key = "sizes_from", .join = "  " },
	{ .key = "bins_from", .join = "  " }, { .key = "arenas_from", .join = "  " },
};

static const struct em_field F_SLABCUR_FROM = {
	.key = "slabcur_from", .label = "current slabs:" };

enum hw_status je_report_params(void *state, struct hw_emitter *e)
{
	struct je_state *j = state;
	em_doc_begin(e);
	em_kv(e, &F_VERSION, ev_str(j->git[0] ? j->git : j->version));
	em_section_begin(e, &S_PARAMS);
	em_kv(e, &F_PAGE, ev_u64((uint64_t)1 << j->p.lg_page));
	em_kv(e, &F_QUANTUM, ev_u64((uint64_t)1 << j->p.lg_quantum));
	em_kv(e, &F_NBINS, ev_u64(j->nbins));
	em_kv(e, &F_NLEXTENTS, ev_u64(j->nsizes - j->nbins));
	em_kv(e, &F_SMALL_MAX, j->nbins ? ev_u64(j->sizes[j->nbins - 1])
				       : ev_null());
	em_kv(e, &F_LARGE_MAX, j->nsizes ? ev_u64(j->sizes[j->nsizes - 1])
					 : ev_null());
	em_kv(e, &F_NARENAS, j->arenas_array ? ev_u64(j->narena_slots)
					     : ev_null());
	em_kv(e, &F_LG_VADDR, ev_u64((uint64_t)j->p.lg_vaddr));
	em_kv(e, &F_LEVELS, ev_u64((uint64_t)j->p.height));
	em_kv(e, &F_TCACHES, ev_u64(j->ntcaches));
	em_section_end(e);
	em_section_begin(e, &S_ROOTS);
	const uint64_t at[] = { j->rtree_root, j->size_table, j->bin_infos,
				j->arenas_array };
	const char *from[] = { j->how_rtree, j->how_sizes, j->how_bins,
			       j->how_arenas };
	for (unsigned k = 0; k < sizeof at / sizeof *at; k++) {
		em_kv(e, &F_ROOT[k], ev_addr_or_null(at[k]));
		em_kv(e, &F_ROOT_FROM[k], from[k] ? ev_str(from[k]) : ev_null());
	}
	const struct je_slabcur *sc = je_slabcurs(j);
	em_kv(e, &F_SLABCUR_FROM, ev_str(sc ? sc->how : "out of memory"));
	em_section_end(e);
	em_doc_end(e);
	return HW_OK;
}
