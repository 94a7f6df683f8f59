/* report.c - jemalloc's own part of the reports: `summary`'s lines and
 * `arenas`, in the terms of jemalloc's own malloc_stats_print (curregs,
 * curslabs, curlextents, utilisation, dirty/muzzy/retained), from the
 * figures stats.c recomputes.  The bins are bins.c's; `mp`, `tcache` and
 * `arena N` params.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../arch/arch.h"
#include "../../emit/emit.h"
#include "jemalloc.h"

void je_add_extent(const struct je_state *j, struct je_usage *u,
		   const struct je_extent *x)
{
	u->any = true;
	switch (x->state) {
	case JE_ACTIVE:
		u->active += x->size;
		u->cached += x->ncached;
		if (x->slab) {
			u->slabs++;
			u->regs_used += x->used;
			u->small_bytes += (uint64_t)x->used * x->reg_size;
		} else {
			u->large++;
			u->large_bytes += j->sizes[x->szind];
		}
		break;
	case JE_DIRTY: u->dirty += x->size; break;
	case JE_MUZZY: u->muzzy += x->size; break;
	case JE_RETAINED: u->retained += x->size; break;
	default: break;
	}
}

struct je_totals {
	struct je_usage u;                /* allocated = small + large bytes */
	uint64_t cached, cached_bytes;    /* as the tcaches hold them */
	unsigned narenas;
};

static void totals(const struct je_state *j, struct je_totals *t)
{
	memset(t, 0, sizeof *t);
	bool seen[JE_MAX_ARENAS] = { false };
	for (size_t i = 0; i < j->next; i++) {
		const struct je_extent *x = &j->ext[i];
		if (x->arena < JE_MAX_ARENAS && !seen[x->arena]) {
			seen[x->arena] = true;
			t->narenas++;
		}
		je_add_extent(j, &t->u, x);
	}
	for (size_t i = 0; i < j->ntcaches; i++) {
		t->cached += j->tcaches[i].cached;
		t->cached_bytes += j->tcaches[i].bytes;
	}
}

size_t je_count_arenas(const struct je_state *j)
{
	struct je_totals t;
	totals(j, &t);
	return t.narenas;
}

/* summary's jemalloc part, indented under it.  */
static const struct em_section JE_SUMMARY = { .indent = 2, .label_width = 22 };
static const struct em_field F_MODULE = { .key = "module", .label = "module:" };
/* "build: 5.3.0-0-g54eaed1d; page 4096, quantum 16, 48-bit addresses" */
static const struct em_field F_BUILD = { .key = "build", .label = "build:" };
static const struct em_field F_PAGE = { .key = "page", .join = "; page " };
static const struct em_field F_QUANTUM = {
	.key = "quantum", .join = ", quantum " };
static const struct em_field F_LG_VADDR = {
	.key = "lg_vaddr", .join = ", ", .post = "-bit addresses" };
/* Counts JSON gives here and text after the stats.  */
static const struct em_field F_NBINS = { .key = "nbins", .only = EM_JSON_ONLY };
static const struct em_field F_EXTENTS_JSON = {
	.key = "extents", .only = EM_JSON_ONLY };
static const struct em_field F_SLABS_JSON = { .key = "slabs", .only = EM_JSON_ONLY };
static const struct em_field F_LARGE_JSON = { .key = "large", .only = EM_JSON_ONLY };
static const struct em_field F_TCACHES_JSON = {
	.key = "tcaches", .only = EM_JSON_ONLY };

/* jemalloc's stats.* figures, each with where it came from.  */
static const struct em_section S_STATS = {
	.key = "stats", .title = "stats (jemalloc's stats.*, from the heap):",
	.indent = 4, .label_width = 10 };
static const struct em_field F_DIRTY_JSON = { .key = "dirty", .only = EM_JSON_ONLY };
static const struct em_field F_MUZZY_JSON = { .key = "muzzy", .only = EM_JSON_ONLY };
static const struct em_field F_TCACHE_BYTES_JSON = {
	.key = "tcache_bytes", .only = EM_JSON_ONLY };
static const struct em_field F_BELOW = { .key = "below" };
static const struct em_field F_ABOVE = { .key = "above" };
static const struct em_field F_FROM = { .key = "from" };

/* The same counts, in text under the stats.  */
static const struct em_field F_UNUSED_DIRTY = {
	.label = "unused extents:", .post = " dirty", .form = EM_T_HUMAN,
	.only = EM_TEXT_ONLY };
static const struct em_field F_UNUSED_MUZZY = {
	.join = ", ", .post = " muzzy (whole free pages, not in 'free' above)",
	.form = EM_T_HUMAN, .only = EM_TEXT_ONLY };
static const struct em_field F_EXTENTS_TEXT = {
	.label = "extents:", .post = " extents", .only = EM_TEXT_ONLY };
static const struct em_field F_SLABS_TEXT = {
	.join = ": ", .post = " slabs", .only = EM_TEXT_ONLY };
static const struct em_field F_LARGE_TEXT = {
	.join = ", ", .post = " large", .only = EM_TEXT_ONLY };
static const struct em_field F_TCACHES_TEXT = {
	.label = "thread caches:", .only = EM_TEXT_ONLY };
static const struct em_field F_TCACHED_TEXT = {
	.join = ", holding ", .post = " regions", .only = EM_TEXT_ONLY };
static const struct em_field F_TCACHED_BYTES_TEXT = {
	.join = " (", .post = ")", .form = EM_T_HUMAN, .only = EM_TEXT_ONLY };

/* How each root was found.  */
static const struct em_section S_ROOTS = {
	.key = "roots", .title = "roots:", .indent = 4, .label_width = 20 };
static const struct em_field F_MODULE_FROM = {
	.key = "module_from", .label = "module" };
static const struct em_field F_RTREE_ROOT = {
	.key = "rtree_root", .label = "radix tree" };
static const struct em_field F_RTREE_FROM = { .key = "rtree_from", .join = ", " };
static const struct em_field F_SIZE_CLASSES = {
	.key = "size_classes", .only = EM_JSON_ONLY };
static const struct em_field F_SIZE_CLASSES_FROM = {
	.key = "size_classes_from", .label = "size classes" };
static const struct em_field F_BIN_INFOS = {
	.key = "bin_infos", .only = EM_JSON_ONLY };
static const struct em_field F_BIN_INFOS_FROM = {
	.key = "bin_infos_from", .label = "bin infos" };
static const struct em_field F_ARENAS = { .key = "arenas", .only = EM_JSON_ONLY };
static const struct em_field F_ARENAS_FROM = {
	.key = "arenas_from", .label = "arenas" };
static const struct em_field F_TCACHES_FROM = {
	.key = "tcaches_from", .label = "thread caches" };
static const struct em_field F_BASES_FROM = {
	.key = "bases_from", .label = "bases" };
static const struct em_field F_INTERNAL_FROM = {
	.key = "internal_from", .label = "stats.internal" };

/* One figure: JSON its value (null when unknown); text the value with
   "=" implied or "≈", and its source.  */
static void figure(struct hw_emitter *e, const char *name,
		   const struct je_figure *f)
{
	char text[512], a[32], b[32];
	if (!f->known)
		snprintf(text, sizeof text, "%14s  %s", "unknown",
			 f->from ? f->from : "not found");
	else if (f->exact)
		snprintf(text, sizeof text, "  %12s  %s",
			 hw_human(a, sizeof a, f->value), f->from);
	else
		snprintf(text, sizeof text, "\u2248 %12s  %s (true value up to "
			 "%s more)", hw_human(a, sizeof a, f->value), f->from,
			 hw_human(b, sizeof b, f->above));
	const struct em_field field = { .key = name, .label = name };
	em_kv(e, &field, ev_text(f->known ? ev_u64(f->value) : ev_null(), text));
}

/* With sampled objects the program's own bytes differ from jemalloc's
   stats.allocated: said beside it, labelled as the program's.  */
static void program_bytes(struct hw_emitter *e, const struct je_figures *f)
{
	char text[256], a[32], b[32];
	snprintf(text, sizeof text, "  %12s  the program's own: %llu sampled "
		 "objects at their usable sizes (%s), not at their extents'",
		 hw_human(a, sizeof a, f->program),
		 (unsigned long long)f->sampled,
		 hw_human(b, sizeof b, f->sampled_bytes));
	const struct em_field field = { .key = "program_allocated",
					.label = "in use" };
	em_kv(e, &field, ev_text(ev_u64(f->program), text));
}

/* "approximate": {name: {below, above, from}} for the figures that are
   not exact: the true value is within [value - below, value + above]. */
static void approximate(struct hw_emitter *e, const struct je_figures *f)
{
	const struct je_figure *v[] = { &f->allocated, &f->active, &f->metadata,
					&f->resident, &f->mapped, &f->retained };
	static const char *const names[] = { "allocated", "active", "metadata",
					     "resident", "mapped", "retained" };
	static const struct em_section all = {
		.key = "approximate", .only = EM_JSON_ONLY };
	em_section_begin(e, &all);
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		if (v[i]->exact)
			continue;
		const struct em_section one = { .key = names[i] };
		em_section_begin(e, &one);
		if (v[i]->known) {
			em_kv(e, &F_BELOW, ev_u64(v[i]->below));
			em_kv(e, &F_ABOVE, ev_u64(v[i]->above));
		}
		em_kv(e, &F_FROM, ev_str(v[i]->from ? v[i]->from :
					 "not found"));
		em_section_end(e);
	}
	em_section_end(e);
}

void je_report_summary(void *state, struct hw_emitter *e)
{
	struct je_state *j = state;
	struct je_totals t;
	struct je_figures f;
	totals(j, &t);
	je_figures(j, &f);
	em_section_begin(e, &JE_SUMMARY);
	em_kv(e, &F_MODULE, ev_str(j->module));
	em_kv(e, &F_BUILD, ev_text(ev_str(j->git[0] ? j->git : "unknown"),
				   j->git[0] ? NULL : "unknown version"));
	em_kv(e, &F_PAGE, ev_u64((uint64_t)1 << j->p.lg_page));
	em_kv(e, &F_QUANTUM, ev_u64((uint64_t)1 << j->p.lg_quantum));
	em_kv(e, &F_LG_VADDR, ev_u64((uint64_t)j->p.lg_vaddr));
	em_kv(e, &F_NBINS, ev_u64(j->nbins));
	em_kv(e, &F_EXTENTS_JSON, ev_u64(j->next));
	em_kv(e, &F_SLABS_JSON, ev_u64(t.u.slabs));
	em_kv(e, &F_LARGE_JSON, ev_u64(t.u.large));
	em_kv(e, &F_TCACHES_JSON, ev_u64(j->ntcaches));

	em_section_begin(e, &S_STATS);
	figure(e, "allocated", &f.allocated);
	if (f.sampled)
		program_bytes(e, &f);
	figure(e, "active", &f.active);
	figure(e, "metadata", &f.metadata);
	figure(e, "resident", &f.resident);
	figure(e, "mapped", &f.mapped);
	figure(e, "retained", &f.retained);
	em_kv(e, &F_DIRTY_JSON, ev_u64(f.dirty));
	em_kv(e, &F_MUZZY_JSON, ev_u64(f.muzzy));
	em_kv(e, &F_TCACHE_BYTES_JSON, ev_u64(t.cached_bytes));
	approximate(e, &f);
	em_section_end(e);

	em_kv(e, &F_UNUSED_DIRTY, ev_u64(f.dirty));
	em_kv(e, &F_UNUSED_MUZZY, ev_u64(f.muzzy));
	em_kv(e, &F_EXTENTS_TEXT, ev_u64(j->next));
	em_kv(e, &F_SLABS_TEXT, ev_u64(t.u.slabs));
	em_kv(e, &F_LARGE_TEXT, ev_u64(t.u.large));
	em_kv(e, &F_TCACHES_TEXT, ev_u64(j->ntcaches));
	em_kv(e, &F_TCACHED_TEXT, ev_u64(t.cached));
	em_kv(e, &F_TCACHED_BYTES_TEXT, ev_u64(t.cached_bytes));

	em_section_begin(e, &S_ROOTS);
	em_kv(e, &F_MODULE_FROM, ev_str(j->how_module));
	em_kv(e, &F_RTREE_ROOT, ev_addr(j->rtree_root));
	em_kv(e, &F_RTREE_FROM, ev_str(j->how_rtree));
	em_kv(e, &F_SIZE_CLASSES, ev_addr_or_null(j->size_table));
	em_kv(e, &F_SIZE_CLASSES_FROM, ev_str(j->how_sizes));
	em_kv(e, &F_BIN_INFOS, ev_addr_or_null(j->bin_infos));
	em_kv(e, &F_BIN_INFOS_FROM, ev_str(j->how_bins));
	em_kv(e, &F_ARENAS, ev_addr_or_null(j->arenas_array));
	em_kv(e, &F_ARENAS_FROM, ev_str(j->how_arenas));
	em_kv(e, &F_TCACHES_FROM, ev_str(j->how_tcache));
	em_kv(e, &F_BASES_FROM, ev_str(j->how_bases));
	em_kv(e, &F_INTERNAL_FROM, ev_str(j->how_internal));
	em_section_end(e);
	em_section_end(e);
}

/* ---- per arena --------------------------------------------------------- */

bool je_have_thread_pointers(const struct je_state *j)
{
	for (size_t i = 0; i < j->t->nthreads; i++)
		if (j->t->threads[i].has_tp)
			return true;
	return false;
}

int64_t je_arena_nthreads(const struct je_state *j, unsigned a)
{
	uint32_t n;
	if (!j->arena_addr[a] || !hw_read_u32(j->t, j->arena_addr[a], &n) ||
	    n > (1u << 22))
		return -1;
	return n;
}

void je_thread_list(const struct je_state *j, unsigned a, char *buf,
		    size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < j->ntcaches && n + 16 < len; i++) {
		const struct je_tcache *tc = &j->tcaches[i];
		if (tc->arena != (int32_t)a)
			continue;
		int w = tc->tid ? snprintf(buf + n, len - n, "%s%d", n ? "," : "",
					   tc->tid) :
				  snprintf(buf + n, len - n, "%s?", n ? "," : "");
		if (w > 0)
			n += (size_t)w;
	}
	if (!n)
		snprintf(buf, len, "-");
}

/* One row per arena that has extents or is known to exist.  Text names
   every binding's thread ("?" for a tsd whose thread is unknown); JSON
   lists the known tids, or null when no binding can be given a thread.  */
enum {
	JA_INDEX, JA_ADDR, JA_SLABS, JA_REGIONS_USED, JA_SMALL_BYTES, JA_LARGE,
	JA_LARGE_BYTES, JA_TCACHED, JA_ACTIVE, JA_DIRTY, JA_MUZZY,
	JA_RETAINED, JA_NTHREADS, JA_THREADS, JA_THREADS_TEXT, JA_COUNT
};
static const struct em_field ARENA_COLS[JA_COUNT] = {
	[JA_INDEX] = { .key = "index", .label = "arena", .width = 5 },
	[JA_ADDR] = { .key = "addr", .label = "address", .width = -18,
		      .none = "-" },
	[JA_SLABS] = { .key = "slabs", .label = "slabs", .width = 8 },
	[JA_REGIONS_USED] = { .key = "regions_used", .label = "small used",
			      .width = 12 },
	[JA_SMALL_BYTES] = { .key = "small_bytes", .label = "small bytes",
			     .width = 12, .form = EM_T_HUMAN },
	[JA_LARGE] = { .key = "large", .label = "large", .width = 7 },
	[JA_LARGE_BYTES] = { .key = "large_bytes", .label = "large bytes",
			     .width = 12, .form = EM_T_HUMAN },
	[JA_TCACHED] = { .key = "tcached", .only = EM_JSON_ONLY },
	[JA_ACTIVE] = { .key = "active", .label = "active", .width = 12,
			.form = EM_T_HUMAN },
	[JA_DIRTY] = { .key = "dirty", .label = "dirty", .width = 12,
		       .form = EM_T_HUMAN },
	[JA_MUZZY] = { .key = "muzzy", .only = EM_JSON_ONLY },
	[JA_RETAINED] = { .key = "retained", .label = "retained", .width = 12,
			  .form = EM_T_HUMAN },
	[JA_NTHREADS] = { .key = "nthreads", .label = "nthreads", .width = 8,
			  .none = "?" },
	[JA_THREADS] = { .key = "threads", .only = EM_JSON_ONLY },
	[JA_THREADS_TEXT] = { .label = "threads", .join = "  ",
			      .only = EM_TEXT_ONLY },
};
static const struct em_table ARENA_TABLE = {
	.key = "arenas", .cols = ARENA_COLS, .ncols = JA_COUNT };
static const struct em_field F_THREADS_UNKNOWN = {
	.key = "threads_unknown", .label = "threads unknown:" };

static void arena_row(const struct je_state *j, struct hw_emitter *e,
		      unsigned a, const struct je_usage *r, bool tps,
		      int32_t *tids)
{
	char threads[256];
	je_thread_list(j, a, threads, sizeof threads);
	size_t ntids = 0;
	for (size_t i = 0; i < j->ntcaches; i++)
		if (j->tcaches[i].arena == (int32_t)a && j->tcaches[i].tid)
			tids[ntids++] = j->tcaches[i].tid;
	int64_t nt = je_arena_nthreads(j, a);
	const struct em_val v[JA_COUNT] = {
		[JA_INDEX] = ev_u64(a),
		[JA_ADDR] = ev_addr_or_null(j->arena_addr[a]),
		[JA_SLABS] = ev_u64(r->slabs),
		[JA_REGIONS_USED] = ev_u64(r->regs_used),
		[JA_SMALL_BYTES] = ev_u64(r->small_bytes),
		[JA_LARGE] = ev_u64(r->large),
		[JA_LARGE_BYTES] = ev_u64(r->large_bytes),
		[JA_TCACHED] = ev_u64(r->cached),
		[JA_ACTIVE] = ev_u64(r->active),
		[JA_DIRTY] = ev_u64(r->dirty),
		[JA_MUZZY] = ev_u64(r->muzzy),
		[JA_RETAINED] = ev_u64(r->retained),
		[JA_NTHREADS] = nt >= 0 ? ev_u64((uint64_t)nt) : ev_null(),
		[JA_THREADS] = tps && j->arenas_array ? ev_ids(tids, ntids)
						      : ev_null(),
		[JA_THREADS_TEXT] = ev_str(threads),
	};
	em_row(e, v);
}

enum hw_status je_report_arenas(void *state, struct hw_emitter *e)
{
	struct je_state *j = state;
	struct je_usage *rows = calloc(JE_MAX_ARENAS, sizeof *rows);
	int32_t *tids = malloc((j->ntcaches + 1) * sizeof *tids);
	if (!rows || !tids) {
		free(rows);
		free(tids);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	for (size_t i = 0; i < j->next; i++)
		je_add_extent(j, &rows[j->ext[i].arena % JE_MAX_ARENAS],
			      &j->ext[i]);
	for (unsigned a = 0; a < JE_MAX_ARENAS; a++)
		if (j->arena_addr[a])
			rows[a].any = true;
	bool tps = je_have_thread_pointers(j);
	em_doc_begin(e);
	em_table_begin(e, &ARENA_TABLE);
	for (unsigned a = 0; a < JE_MAX_ARENAS; a++)
		if (rows[a].any)
			arena_row(j, e, a, &rows[a], tps, tids);
	em_table_end(e);
	char no_tp[160];
	snprintf(no_tp, sizeof no_tp, "%s, so bindings cannot be given their "
		 "threads", hw_target_no_tp(j->t));
	const char *why = !j->arenas_array ?
		"the arena array was not found, so no tsd's arena can be named" :
		tps ? NULL : no_tp;
	em_note(e, "\nnthreads: jemalloc's own count of threads bound to the "
		"arena; threads: each thread's tsd arena (\"?\": a tsd whose "
		"thread is unknown)");
	em_kv(e, &F_THREADS_UNKNOWN, why ? ev_str(why) : ev_null());
	em_doc_end(e);
	free(tids);
	free(rows);
	return HW_OK;
}
