/* report.c - the jemalloc-specific reports: summary members, arenas and
 * bins, in the terms of jemalloc's own malloc_stats_print (curregs,
 * curslabs, curlextents, utilisation, dirty/muzzy/retained).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../arch/arch.h"
#include "../../report/emit.h"
#include "jemalloc.h"

/* What a set of extents (one arena's, or all) holds.  */
struct je_usage {
	uint64_t slabs, regs_used, small_bytes, large, large_bytes;
	uint64_t active, dirty, muzzy, retained, cached;
	bool any;
};

static void add_extent(const struct je_state *j, struct je_usage *u,
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
		add_extent(j, &t->u, x);
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

static void emit_figure_json(struct hw_emitter *e, const char *name,
			     const struct je_figure *f)
{
	if (f->known)
		em_u64(e, name, f->value);
	else
		em_null(e, name);
}

/* "approximate": {name: {below, above, from}} for the figures that are
   not exact: the true value is within [value - below, value + above]. */
static void emit_approx_json(struct hw_emitter *e, const struct je_figures *f)
{
	const struct je_figure *v[] = { &f->allocated, &f->active, &f->metadata,
					&f->resident, &f->mapped, &f->retained };
	static const char *const names[] = { "allocated", "active", "metadata",
					     "resident", "mapped", "retained" };
	em_obj_begin(e, "approximate");
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		if (v[i]->exact)
			continue;
		em_obj_begin(e, names[i]);
		if (v[i]->known) {
			em_u64(e, "below", v[i]->below);
			em_u64(e, "above", v[i]->above);
		}
		em_str(e, "from", v[i]->from ? v[i]->from :
			   "not found (no base_t: the arena array was not found)");
		em_obj_end(e);
	}
	em_obj_end(e);
}

static void summary_json(const struct je_state *j, struct hw_emitter *e,
			 const struct je_totals *t, const struct je_figures *f)
{
	em_str(e, "module", j->module);
	em_str(e, "build", j->git[0] ? j->git : "unknown");
	em_u64(e, "page", (uint64_t)1 << j->p.lg_page);
	em_u64(e, "quantum", (uint64_t)1 << j->p.lg_quantum);
	em_u64(e, "lg_vaddr", (uint64_t)j->p.lg_vaddr);
	em_u64(e, "nbins", j->nbins);
	em_u64(e, "extents", j->next);
	em_u64(e, "slabs", t->u.slabs);
	em_u64(e, "large", t->u.large);
	em_u64(e, "tcaches", j->ntcaches);
	em_obj_begin(e, "stats");
	emit_figure_json(e, "allocated", &f->allocated);
	emit_figure_json(e, "active", &f->active);
	emit_figure_json(e, "metadata", &f->metadata);
	emit_figure_json(e, "resident", &f->resident);
	emit_figure_json(e, "mapped", &f->mapped);
	emit_figure_json(e, "retained", &f->retained);
	em_u64(e, "dirty", f->dirty);
	em_u64(e, "muzzy", f->muzzy);
	em_u64(e, "tcache_bytes", t->cached_bytes);
	emit_approx_json(e, f);
	em_obj_end(e);
	em_obj_begin(e, "roots");
	em_str(e, "module_from", j->how_module);
	em_hex(e, "rtree_root", j->rtree_root);
	em_str(e, "rtree_from", j->how_rtree);
	em_hex_or_null(e, "size_classes", j->size_table);
	em_str(e, "size_classes_from", j->how_sizes);
	em_hex_or_null(e, "bin_infos", j->bin_infos);
	em_str(e, "bin_infos_from", j->how_bins);
	em_hex_or_null(e, "arenas", j->arenas_array);
	em_str(e, "arenas_from", j->how_arenas);
	em_str(e, "tcaches_from", j->how_tcache);
	em_str(e, "bases_from", j->how_bases);
	em_str(e, "internal_from", j->how_internal);
	em_obj_end(e);
}

/* One line of the stats block: name, "=" or "≈", the figure, its source. */
static void figure_line(struct hw_emitter *e, const char *name,
			const struct je_figure *f)
{
	char a[32], b[32];
	if (!f->known) {
		em_printf(e, "    %-10s %14s  %s\n", name, "unknown",
			  f->from ? f->from : "no base_t found");
		return;
	}
	if (f->exact) {
		em_printf(e, "    %-10s   %12s  %s\n", name,
			  hw_human(a, sizeof a, f->value), f->from);
		return;
	}
	em_printf(e, "    %-10s \u2248 %12s  %s (true value up to %s more)\n",
		  name, hw_human(a, sizeof a, f->value), f->from,
		  hw_human(b, sizeof b, f->above));
}

void je_report_summary(void *state, struct hw_emitter *e)
{
	struct je_state *j = state;
	struct je_totals t;
	struct je_figures f;
	totals(j, &t);
	je_figures(j, &f);
	if (e->json) {
		summary_json(j, e, &t, &f);
		return;
	}
	char a[32], b[32];
	em_printf(e, "  %-22s %s\n", "module:", j->module);
	em_printf(e, "  %-22s %s; page %llu, quantum %llu, %d-bit addresses\n",
		  "build:", j->git[0] ? j->git : "unknown version",
		  (unsigned long long)1 << j->p.lg_page,
		  (unsigned long long)1 << j->p.lg_quantum, j->p.lg_vaddr);
	em_printf(e, "  stats (jemalloc's stats.*, from the heap):\n");
	figure_line(e, "allocated", &f.allocated);
	figure_line(e, "active", &f.active);
	figure_line(e, "metadata", &f.metadata);
	figure_line(e, "resident", &f.resident);
	figure_line(e, "mapped", &f.mapped);
	figure_line(e, "retained", &f.retained);
	em_printf(e, "  %-22s %s dirty, %s muzzy (whole free pages, not in "
		  "'free' above)\n", "unused extents:",
		  hw_human(a, sizeof a, f.dirty), hw_human(b, sizeof b, f.muzzy));
	em_printf(e, "  %-22s %zu extents: %llu slabs, %llu large\n",
		  "extents:", j->next, (unsigned long long)t.u.slabs,
		  (unsigned long long)t.u.large);
	em_printf(e, "  %-22s %zu, holding %llu regions (%s)\n",
		  "thread caches:", j->ntcaches, (unsigned long long)t.cached,
		  hw_human(a, sizeof a, t.cached_bytes));
	em_printf(e, "  roots:\n");
	em_printf(e, "    %-20s %s\n", "module", j->how_module);
	em_printf(e, "    %-20s 0x%llx, %s\n", "radix tree",
		  (unsigned long long)j->rtree_root, j->how_rtree);
	em_printf(e, "    %-20s %s\n", "size classes", j->how_sizes);
	em_printf(e, "    %-20s %s\n", "bin infos", j->how_bins);
	em_printf(e, "    %-20s %s\n", "arenas", j->how_arenas);
	em_printf(e, "    %-20s %s\n", "thread caches", j->how_tcache);
	em_printf(e, "    %-20s %s\n", "bases", j->how_bases);
	em_printf(e, "    %-20s %s\n", "stats.internal", j->how_internal);
}

/* ---- per arena --------------------------------------------------------- */

/* Are any thread pointers known?  Without them no tcache has an owner,
   and bindings are found without their threads.  */
static bool have_thread_pointers(const struct je_state *j)
{
	for (size_t i = 0; i < j->t->nthreads; i++)
		if (j->t->threads[i].has_tp)
			return true;
	return false;
}

/* jemalloc's own count of threads bound to the arena (arena_t starts
   with nthreads[2], application then internal), or -1.  */
static int64_t arena_nthreads(const struct je_state *j, unsigned a)
{
	uint32_t n;
	if (!j->arena_addr[a] || !hw_read_u32(j->t, j->arena_addr[a], &n) ||
	    n > (1u << 22))
		return -1;
	return n;
}

/* The threads whose tsd binds them to arena a: "tid,tid", "?" per
   binding without a thread, "-" for none.  */
static void thread_list(const struct je_state *j, unsigned a, char *buf,
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

static void arena_json(const struct je_state *j, struct hw_emitter *e,
		       unsigned a, const struct je_usage *r, bool tps)
{
	em_obj_begin(e, NULL);
	em_u64(e, "index", a);
	em_hex_or_null(e, "addr", j->arena_addr[a]);
	em_u64(e, "slabs", r->slabs);
	em_u64(e, "regions_used", r->regs_used);
	em_u64(e, "small_bytes", r->small_bytes);
	em_u64(e, "large", r->large);
	em_u64(e, "large_bytes", r->large_bytes);
	em_u64(e, "tcached", r->cached);
	em_u64(e, "active", r->active);
	em_u64(e, "dirty", r->dirty);
	em_u64(e, "muzzy", r->muzzy);
	em_u64(e, "retained", r->retained);
	int64_t nt = arena_nthreads(j, a);
	if (nt >= 0)
		em_u64(e, "nthreads", (uint64_t)nt);
	else
		em_null(e, "nthreads");
	if (!tps || !j->arenas_array) {
		em_null(e, "threads");
	} else {
		em_arr_begin(e, "threads");
		for (size_t i = 0; i < j->ntcaches; i++)
			if (j->tcaches[i].arena == (int32_t)a && j->tcaches[i].tid)
				em_u64(e, NULL, (uint64_t)j->tcaches[i].tid);
		em_arr_end(e);
	}
	em_obj_end(e);
}

static void arena_text(const struct je_state *j, struct hw_emitter *e,
		       unsigned a, const struct je_usage *r)
{
	char addr[24] = "-", nt[24] = "?", threads[256];
	if (j->arena_addr[a])
		snprintf(addr, sizeof addr, "0x%llx",
			 (unsigned long long)j->arena_addr[a]);
	int64_t n = arena_nthreads(j, a);
	if (n >= 0)
		snprintf(nt, sizeof nt, "%lld", (long long)n);
	thread_list(j, a, threads, sizeof threads);
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	em_printf(e, "%5u %-18s %8llu %12llu %12s %7llu %12s %12s %12s %12s "
		  "%8s  %s\n", a, addr, (unsigned long long)r->slabs,
		  (unsigned long long)r->regs_used,
		  hw_human(b1, sizeof b1, r->small_bytes),
		  (unsigned long long)r->large,
		  hw_human(b2, sizeof b2, r->large_bytes),
		  hw_human(b3, sizeof b3, r->active),
		  hw_human(b4, sizeof b4, r->dirty),
		  hw_human(b5, sizeof b5, r->retained), nt, threads);
}

void je_report_arenas(void *state, struct hw_emitter *e)
{
	struct je_state *j = state;
	struct je_usage *rows = calloc(JE_MAX_ARENAS, sizeof *rows);
	if (!rows)
		return;
	for (size_t i = 0; i < j->next; i++)
		add_extent(j, &rows[j->ext[i].arena % JE_MAX_ARENAS], &j->ext[i]);
	for (unsigned a = 0; a < JE_MAX_ARENAS; a++)
		if (j->arena_addr[a])
			rows[a].any = true;
	bool tps = have_thread_pointers(j);
	if (e->json) {
		em_obj_begin(e, NULL);
		em_arr_begin(e, "arenas");
	} else {
		em_printf(e, "%5s %-18s %8s %12s %12s %7s %12s %12s %12s %12s "
			  "%8s  %s\n", "arena", "address", "slabs", "small used",
			  "small bytes", "large", "large bytes", "active",
			  "dirty", "retained", "nthreads", "threads");
	}
	for (unsigned a = 0; a < JE_MAX_ARENAS; a++) {
		if (!rows[a].any)
			continue;
		if (e->json)
			arena_json(j, e, a, &rows[a], tps);
		else
			arena_text(j, e, a, &rows[a]);
	}
	bool a64 = !strcmp(j->t->arch->name, "aarch64");
	const char *why = !j->arenas_array ?
		"the arena array was not found, so no tsd's arena can be named" :
		tps ? NULL : a64 ?
		"the core has no thread pointers (no NT_ARM_TLS), so bindings "
		"cannot be given their threads" :
		"the core has no thread pointers, so bindings cannot be given "
		"their threads";
	if (e->json) {
		em_arr_end(e);
		if (why)
			em_str(e, "threads_unknown", why);
		else
			em_null(e, "threads_unknown");
		em_obj_end(e);
		em_jsonl_end(e);
	} else {
		em_printf(e, "\nnthreads: jemalloc's own count of threads bound "
			  "to the arena; threads: each thread's tsd arena (\"?\": "
			  "a tsd whose thread is unknown)\n");
		if (why)
			em_printf(e, "threads unknown: %s\n", why);
	}
	free(rows);
}

/* ---- bins: per (arena, size class) ------------------------------------- */

struct bin_row {
	uint32_t arena, szind;
	uint64_t slabs, nregs_total, curregs, cached, large;
};

static int bin_row_cmp(const void *a, const void *b)
{
	const struct bin_row *x = a, *y = b;
	if (x->szind != y->szind)
		return x->szind < y->szind ? -1 : 1;
	return x->arena < y->arena ? -1 : x->arena > y->arena;
}

static int by_key(const void *a, const void *b)
{
	const struct bin_row *x = a, *y = b;
	if (x->arena != y->arena)
		return x->arena < y->arena ? -1 : 1;
	return x->szind < y->szind ? -1 : x->szind > y->szind;
}

/* One row per (arena, szind) with active extents, sorted by size class.  */
static struct bin_row *bin_rows(const struct je_state *j, size_t *nrows)
{
	struct bin_row *v = calloc(j->next ? j->next : 1, sizeof *v);
	if (!v)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < j->next; i++) {
		const struct je_extent *x = &j->ext[i];
		if (x->state != JE_ACTIVE)
			continue;
		struct bin_row *r = &v[n++];
		r->arena = x->arena;
		r->szind = x->szind;
		r->slabs = x->slab;
		r->nregs_total = x->slab ? x->nregs : 0;
		r->curregs = x->slab ? x->used : 0;
		r->large = !x->slab;
		r->cached = x->ncached;
	}
	if (n)
		qsort(v, n, sizeof *v, by_key);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].arena == v[i].arena &&
		    v[k - 1].szind == v[i].szind) {
			v[k - 1].slabs += v[i].slabs;
			v[k - 1].nregs_total += v[i].nregs_total;
			v[k - 1].curregs += v[i].curregs;
			v[k - 1].cached += v[i].cached;
			v[k - 1].large += v[i].large;
			continue;
		}
		v[k++] = v[i];
	}
	if (k)
		qsort(v, k, sizeof *v, bin_row_cmp);
	*nrows = k;
	return v;
}

enum hw_status je_report_bins(void *state, struct hw_emitter *e,
			      const char *kind)
{
	struct je_state *j = state;
	bool small = true, large = true, tcache = true;
	if (kind) {
		small = !strcmp(kind, "small") || !strcmp(kind, "slabs");
		large = !strcmp(kind, "large");
		tcache = !strcmp(kind, "tcache");
		if (!small && !large && !tcache)
			return hw_error(j->s, HW_USAGE, "bins: unknown kind '%s' "
					"(jemalloc: small (or slabs), large, "
					"tcache)", kind);
	}
	size_t n = 0;
	struct bin_row *rows = bin_rows(j, &n);
	if (!rows)
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	if (e->json)
		em_obj_begin(e, NULL);
	if (small) {
		if (e->json)
			em_arr_begin(e, "bins");
		else
			em_printf(e, "%5s %4s %8s %6s %9s %8s %10s %10s %10s %6s\n",
				  "arena", "bin", "size", "nregs", "slab_size",
				  "slabs", "curregs", "tcached", "free", "util");
		for (size_t i = 0; i < n; i++) {
			const struct bin_row *r = &rows[i];
			if (!r->slabs)
				continue;
			uint64_t nregs = r->nregs_total / r->slabs;
			uint64_t freeregs = r->nregs_total - r->curregs;
			double util = r->nregs_total ?
				(double)r->curregs / (double)r->nregs_total : 0;
			if (e->json) {
				em_obj_begin(e, NULL);
				em_u64(e, "arena", r->arena);
				em_u64(e, "bin", r->szind);
				em_u64(e, "size", j->sizes[r->szind]);
				em_u64(e, "nregs", nregs);
				em_u64(e, "slab_size", nregs * j->sizes[r->szind]);
				em_u64(e, "slabs", r->slabs);
				em_u64(e, "curregs", r->curregs);
				em_u64(e, "cached", r->cached);
				em_u64(e, "free", freeregs);
				em_fixed(e, "util", util, 3);
				em_obj_end(e);
			} else {
				em_printf(e, "%5u %4u %8llu %6llu %9llu %8llu %10llu "
					  "%10llu %10llu %6.3f\n", r->arena,
					  r->szind,
					  (unsigned long long)j->sizes[r->szind],
					  (unsigned long long)nregs,
					  (unsigned long long)(nregs * j->sizes[r->szind]),
					  (unsigned long long)r->slabs,
					  (unsigned long long)r->curregs,
					  (unsigned long long)r->cached,
					  (unsigned long long)freeregs, util);
			}
		}
		if (e->json)
			em_arr_end(e);
	}
	if (large) {
		if (e->json)
			em_arr_begin(e, "large");
		else
			em_printf(e, "%s%5s %6s %12s %12s %10s\n",
				  small ? "\n" : "", "arena", "szind", "size",
				  "curlextents", "tcached");
		for (size_t i = 0; i < n; i++) {
			const struct bin_row *r = &rows[i];
			if (!r->large)
				continue;
			if (e->json) {
				em_obj_begin(e, NULL);
				em_u64(e, "arena", r->arena);
				em_u64(e, "szind", r->szind);
				em_u64(e, "size", j->sizes[r->szind]);
				em_u64(e, "curlextents", r->large);
				em_u64(e, "cached", r->cached);
				em_obj_end(e);
			} else {
				em_printf(e, "%5u %6u %12llu %12llu %10llu\n",
					  r->arena, r->szind,
					  (unsigned long long)j->sizes[r->szind],
					  (unsigned long long)r->large,
					  (unsigned long long)r->cached);
			}
		}
		if (e->json)
			em_arr_end(e);
	}
	if (tcache) {
		if (e->json)
			em_arr_begin(e, "tcaches");
		else
			em_printf(e, "%s%-18s %8s %6s %10s %12s\n",
				  small || large ? "\n" : "", "tcache", "thread",
				  "bins", "cached", "bytes");
		for (size_t i = 0; i < j->ntcaches; i++) {
			const struct je_tcache *tc = &j->tcaches[i];
			if (e->json) {
				em_obj_begin(e, NULL);
				em_hex(e, "addr", tc->addr);
				if (tc->tid)
					em_u64(e, "thread", (uint64_t)tc->tid);
				else
					em_null(e, "thread");
				em_u64(e, "bins", tc->nbins);
				em_u64(e, "cached", tc->cached);
				em_u64(e, "bytes", tc->bytes);
				em_obj_end(e);
			} else {
				char b[32], tid[16] = "?";
				if (tc->tid)
					snprintf(tid, sizeof tid, "%d", tc->tid);
				em_printf(e, "0x%016llx %8s %6u %10llu %12s\n",
					  (unsigned long long)tc->addr, tid, tc->nbins,
					  (unsigned long long)tc->cached,
					  hw_human(b, sizeof b, tc->bytes));
			}
		}
		if (e->json)
			em_arr_end(e);
	}
	if (e->json) {
		em_obj_end(e);
		em_jsonl_end(e);
	}
	free(rows);
	return HW_OK;
}
