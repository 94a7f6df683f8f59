/* prof.c - jemalloc's heap profile (prof:true), read out of the target.
 *
 * jemalloc keeps one prof_gctx_t per distinct backtrace, in the static
 * cuckoo hash bt2gctx (prof_data.c), and under each gctx a red-black tree
 * of prof_tctx_t: that stack's counters per allocating thread.  Threads
 * are prof_tdata_t in the static red-black tree tdatas.  prof.dump sums
 * the tctxs of the threads not expired into their gctxs and prints them;
 * prof_data.c's prof_dump_impl is the model followed here, order included
 * (threads by uid, stacks by their raw bytes, a stack's threads by uid).
 *
 * The statics have no dynamic symbol, so without .symtab they are found
 * from the data: every live sampled object is a large extent whose
 * e_prof_tctx points at its tctx; a tctx leads to its gctx and thread,
 * and those are checked against each other (a gctx's bt.vec points at
 * its own inline vector, a tctx's thr_uid is its thread's).  Knowing some
 * gctxs, bt2gctx is the ckh_t in jemalloc's data whose table holds them
 * and nothing that is not a gctx; tdatas is the tree root there that
 * reaches every thread seen.  Without either, the stacks the extents
 * reach are still every stack with live samples.
 *
 * The parts: prof-read.c reads the records, prof-find.c finds the
 * statics without symbols, prof-conf.c the options, prof-recent.c 5.3's
 * recent allocations; this file sums the records as prof.dump does and
 * answers which stack a block was sampled from.
 *
 * Layouts are fixed per version (only pointer-size members, no mutex
 * inside, no build option moves them; --enable-debug would, and is not
 * handled).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof-reader.h"

/* ---- building the profile --------------------------------------------------- */

/* What prof.dump prints for counters c (prof_dump_print_cnts).  */
static void dump_counts(const struct hw_profile *p, const struct layout *l,
			const uint64_t *c, struct hw_prof_counts *out)
{
	if (l->ncnt == 4) {
		*out = (struct hw_prof_counts){ c[0], c[1], c[2], c[3] };
		return;
	}
	if (!p->unbias) {
		*out = (struct hw_prof_counts){ c[0], c[2], c[4], c[6] };
		return;
	}
	/* prof_do_unbias: the (count, bytes) that jeprof's scaling turns
	   into the unbiased figures jemalloc kept.  */
	double rate = (double)p->period;
	for (int k = 0; k < 2; k++) {
		uint64_t cs = c[k * 4 + 1], s = c[k * 4 + 3], cin = 0, sin = 0;
		if (cs && s) {
			double cout = (double)cs / (double)(1u << LG_TINY_MIN);
			double x = (double)s / cout;
			double y = (double)s * (1.0 - exp(-x / rate));
			cin = jp_to_u64(y / x);
			sin = jp_to_u64(y);
		}
		if (k == 0) {
			out->curobjs = cin;
			out->curbytes = sin;
		} else {
			out->accumobjs = cin;
			out->accumbytes = sin;
		}
	}
}

/* The true heap's estimate: jemalloc's unbiased counters, or jeprof's
   scaling of the sampled ones.  */
static void est_counts(const struct hw_profile *p, const struct layout *l,
		       const uint64_t *c, struct hw_prof_counts *out)
{
	if (l->ncnt == 8) {
		out->curobjs = c[1] >> LG_TINY_MIN;
		out->curbytes = c[3];
		out->accumobjs = c[5] >> LG_TINY_MIN;
		out->accumbytes = c[7];
		return;
	}
	struct hw_prof_counts d = { c[0], c[1], c[2], c[3] };
	uint64_t objs[2] = { d.curobjs, d.accumobjs };
	uint64_t bytes[2] = { d.curbytes, d.accumbytes };
	for (int k = 0; k < 2; k++) {
		if (objs[k] && bytes[k]) {
			double ratio = (double)bytes[k] / (double)objs[k] /
				       (double)p->period;
			double scale = 1.0 / (1.0 - exp(-ratio));
			objs[k] = jp_to_u64((double)objs[k] * scale);
			bytes[k] = jp_to_u64((double)bytes[k] * scale);
		}
	}
	*out = (struct hw_prof_counts){ objs[0], bytes[0], objs[1], bytes[1] };
}

static void add_counts(struct hw_prof_counts *a, const struct hw_prof_counts *b)
{
	a->curobjs += b->curobjs;
	a->curbytes += b->curbytes;
	a->accumobjs += b->accumobjs;
	a->accumbytes += b->accumbytes;
}

static int tdata_order(const void *a, const void *b)
{
	const struct tdata *x = a, *y = b;
	if (x->uid != y->uid)
		return (x->uid > y->uid) - (x->uid < y->uid);
	return (x->discrim > y->discrim) - (x->discrim < y->discrim);
}

static int tdata_addr_order(const void *a, const void *b)
{
	const struct tdata *const *x = a, *const *y = b;
	return ((*x)->addr > (*y)->addr) - ((*x)->addr < (*y)->addr);
}

/* prof_gctx_comp: memcmp of the raw vectors, then the shorter first.  */
static int gctx_order(const void *a, const void *b)
{
	const struct gctx *x = a, *y = b;
	unsigned n = x->npcs < y->npcs ? x->npcs : y->npcs;
	int c = memcmp(x->pcs, y->pcs, n * 8ull);
	if (c)
		return c;
	return (x->npcs > y->npcs) - (x->npcs < y->npcs);
}

static bool included(const struct tctx *t)
{
	return t->state != TCTX_INIT && t->state <= TCTX_PURGATORY;
}

/* Sum the counters the way prof_dump_prep does: only tctxs of threads
   that are not expired count, in their thread's line and their stack's.  */
static bool build(struct reader *r, struct je_prof *out)
{
	struct hw_profile *p = &out->p;
	const struct layout *l = &r->l;
	/* qsort's array may not be NULL, even empty.  */
	if (r->ntdatas)
		qsort(r->tdatas, r->ntdatas, sizeof *r->tdatas, tdata_order);
	/* Threads by address, to find a tctx's.  */
	const struct tdata **byaddr = calloc(r->ntdatas + 1, sizeof *byaddr);
	struct hw_prof_thread *threads = calloc(r->ntdatas + 1, sizeof *threads);
	uint64_t *thread_raw = calloc((r->ntdatas + 1) * 8, sizeof *thread_raw);
	struct hw_prof_site *sites = calloc(r->ngctxs + 1, sizeof *sites);
	struct hw_prof_site_thread *st = calloc(r->ntctxs + 1, sizeof *st);
	uint64_t *pcs = calloc(r->ngctxs * BT_MAX + 1, sizeof *pcs);
	char *names = calloc(r->ntdatas + 1, NAME_MAX_LEN);
	if (!byaddr || !threads || !thread_raw || !sites || !st || !pcs ||
	    !names) {
		free(byaddr);
		free(threads);
		free(thread_raw);
		free(sites);
		free(st);
		free(pcs);
		free(names);
		return false;
	}
	for (size_t i = 0; i < r->ntdatas; i++)
		byaddr[i] = &r->tdatas[i];
	qsort(byaddr, r->ntdatas, sizeof *byaddr, tdata_addr_order);
	/* Which threads the header lists: not expired.  */
	size_t nth = 0;
	for (size_t i = 0; i < r->ntdatas; i++) {
		if (r->tdatas[i].expired)
			continue;
		r->tdatas[i].hdr = nth;
		struct hw_prof_thread *t = &threads[nth++];
		t->uid = r->tdatas[i].uid;
		if (r->tdatas[i].has_name) {
			char *n = names + i * NAME_MAX_LEN;
			memcpy(n, r->tdatas[i].name, NAME_MAX_LEN);
			t->name = n;
		}
	}
	if (r->ngctxs)
		qsort(r->gctxs, r->ngctxs, sizeof *r->gctxs, gctx_order);
	size_t nsites = 0, nst = 0;
	for (size_t g = 0; g < r->ngctxs; g++) {
		const struct gctx *c = &r->gctxs[g];
		uint64_t raw[8] = { 0 };
		size_t first = nst;
		for (size_t k = c->first; k < c->first + c->n; k++) {
			const struct tctx *t = &r->tctxs[k];
			if (!included(t))
				continue;
			struct tdata key = { .addr = t->tdata };
			const struct tdata *kp = &key, **found = NULL;
			if (r->ntdatas)
				found = bsearch(&kp, byaddr, r->ntdatas,
						sizeof *byaddr, tdata_addr_order);
			/* A thread not found (no tree read) is taken as
			   live: its samples are still in the heap.  */
			if (found && (*found)->expired)
				continue;
			if (found)
				for (unsigned w = 0; w < l->ncnt; w++)
					thread_raw[(*found)->hdr * 8 + w] +=
						t->cnt[w];
			struct hw_prof_site_thread *s = &st[nst++];
			s->uid = t->uid;
			dump_counts(p, l, t->cnt, &s->dump);
			est_counts(p, l, t->cnt, &s->est);
			for (unsigned w = 0; w < l->ncnt; w++)
				raw[w] += t->cnt[w];
		}
		/* Without prof_accum, accumulated counts are not summed.  */
		if (!p->accum)
			for (unsigned w = l->ncnt / 2; w < l->ncnt; w++)
				raw[w] = 0;
		if (!p->accum)
			for (size_t k = first; k < nst; k++) {
				st[k].dump.accumobjs = st[k].dump.accumbytes = 0;
				st[k].est.accumobjs = st[k].est.accumbytes = 0;
			}
		bool keep = p->accum ? raw[l->ncnt / 2] != 0 : raw[0] != 0;
		if (!keep) {
			nst = first;
			continue;
		}
		struct hw_prof_site *s = &sites[nsites];
		uint64_t *v = pcs + nsites * BT_MAX;
		memcpy(v, c->pcs, c->npcs * 8ull);
		s->addr = c->addr;
		s->sampled_objs = raw[0];
		s->sampled_bytes = raw[l->ncnt == 4 ? 1 : 2];
		p->sampled_objs += s->sampled_objs;
		p->sampled_bytes += s->sampled_bytes;
		s->pcs = v;
		s->npcs = c->npcs;
		dump_counts(p, l, raw, &s->dump);
		est_counts(p, l, raw, &s->est);
		s->threads = st + first;
		s->nthreads = nst - first;
		nsites++;
	}
	/* The header's threads and totals, from the same tctxs.  */
	uint64_t all[8] = { 0 };
	for (size_t i = 0; i < nth; i++) {
		uint64_t *raw = thread_raw + i * 8;
		if (!p->accum)
			for (unsigned w = l->ncnt / 2; w < l->ncnt; w++)
				raw[w] = 0;
		dump_counts(p, l, raw, &threads[i].dump);
		est_counts(p, l, raw, &threads[i].est);
		for (unsigned w = 0; w < l->ncnt; w++)
			all[w] += raw[w];
	}
	dump_counts(p, l, all, &p->dump);
	est_counts(p, l, all, &p->est);
	if (!r->ntdatas) {
		/* No thread tree: the totals are the stacks'.  */
		memset(&p->dump, 0, sizeof p->dump);
		memset(&p->est, 0, sizeof p->est);
		for (size_t g = 0; g < nsites; g++) {
			add_counts(&p->dump, &sites[g].dump);
			add_counts(&p->est, &sites[g].est);
		}
	}
	free(byaddr);
	p->threads = threads;
	p->nthreads = nth;
	p->sites = sites;
	p->nsites = nsites;
	out->threads = threads;
	out->thread_raw = thread_raw;
	out->sites = sites;
	out->site_threads = st;
	out->pcs = pcs;
	out->names = names;
	return true;
}

void je_prof_free(struct je_prof *jp)
{
	if (!jp)
		return;
	free(jp->threads);
	free(jp->thread_raw);
	free(jp->sites);
	free(jp->site_threads);
	free(jp->pcs);
	free(jp->names);
	free(jp->by_gctx);
	free(jp->recent);
	free(jp->recent_pcs);
	free(jp->recent_names);
	free(jp);
}

struct addr_index {
	uint64_t addr;
	uint32_t i;
};

static int addr_index_order(const void *a, const void *b)
{
	const struct addr_index *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The sites by gctx address, for je_prof_site_of().  */
static bool index_sites(struct je_prof *jp)
{
	size_t n = jp->p.nsites;
	struct addr_index *v = malloc((n + 1) * sizeof *v);
	jp->by_gctx = malloc((n + 1) * sizeof *jp->by_gctx);
	if (!v || !jp->by_gctx) {
		free(v);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (struct addr_index){ jp->p.sites[i].addr, (uint32_t)i };
	qsort(v, n, sizeof *v, addr_index_order);
	for (size_t i = 0; i < n; i++)
		jp->by_gctx[i] = v[i].i;
	free(v);
	return true;
}

const struct hw_prof_site *je_prof_site_of(struct je_state *j,
					   const struct je_prof *jp,
					   uint64_t edata)
{
	uint64_t tctx, gctx;
	if (!jp || !jp->by_gctx ||
	    !hw_read_u64(j->t, edata + jp->edata_tctx, &tctx) ||
	    tctx <= 1 || (tctx & 7) ||
	    !hw_read_u64(j->t, tctx + jp->tctx_gctx, &gctx))
		return NULL;
	size_t lo = 0, hi = jp->p.nsites;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a = jp->p.sites[jp->by_gctx[mid]].addr;
		if (a < gctx)
			lo = mid + 1;
		else if (a > gctx)
			hi = mid;
		else
			return &jp->p.sites[jp->by_gctx[mid]];
	}
	return NULL;
}

enum hw_status je_read_profile(struct je_state *j, struct je_prof **out,
			       const char **why)
{
	*out = NULL;
	*why = NULL;
	struct reader r = { .j = j };
	jp_pick_layout(j, &r.l);
	struct je_prof *jp = calloc(1, sizeof *jp);
	if (!jp)
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	struct hw_profile *p = &jp->p;
	snprintf(jp->allocator, sizeof jp->allocator, "jemalloc %s", j->version);
	p->allocator = jp->allocator;
	if (j->have_mod) {
		p->code_low = j->mod.low;
		p->code_high = j->mod.high;
	}

	bool have_opt = false, opt_prof = false;
	jp_read_options(j, p, &have_opt, &opt_prof);

	if (have_opt && !opt_prof) {
		*why = "jemalloc profiling was off in this process (opt.prof "
		       "false)";
		je_prof_free(jp);
		return HW_OK;
	}

	/* The stacks: bt2gctx by its symbol, or by what it must hold.  */
	uint64_t tab = 0;
	unsigned lg_cells = 0;
	uint64_t sym;
	if (jp_read_static(j, "bt2gctx", &sym) &&
	    jp_ckh_at(&r, sym, 0, &tab, &lg_cells))
		p->found_by = "bt2gctx (symbol)";
	uint64_t *known = NULL;
	size_t nknown = 0;
	if (!tab) {
		jp_gctxs_from_extents(&r, &known, &nknown);
		if (nknown) {
			struct ckh_probe cp = { .r = &r, .want = known[0] };
			if (je_data_find(j, jp_ckh_match, &cp)) {
				tab = cp.tab;
				lg_cells = cp.lg_cells;
				p->found_by = "bt2gctx (found from the sampled "
					      "extents)";
			}
		}
	}
	if (tab) {
		uint64_t ncells = (uint64_t)1 << lg_cells;
		for (uint64_t i = 0; i < ncells && !r.oom; i++) {
			uint64_t cell[2];
			unsigned len;
			if (!hw_read(j->t, tab + i * 16, cell, sizeof cell) ||
			    !cell[0] || !jp_gctx_ok(&r, cell[1], &len))
				continue;
			jp_add_gctx(&r, cell[1], len);
		}
	} else {
		for (size_t i = 0; i < nknown && !r.oom; i++) {
			unsigned len;
			if (jp_gctx_ok(&r, known[i], &len))
				jp_add_gctx(&r, known[i], len);
		}
		if (nknown)
			p->found_by = "the sampled extents (bt2gctx not found)";
	}
	free(known);

	/* The threads: tdatas by its symbol, or the root in the data that
	   reaches every thread the tctxs name.  */
	uint64_t a;
	if (jp_read_static(j, "tdatas", &sym) && hw_read_u64(j->t, sym, &a)) {
		if (!jp_walk_tree(&r, a, r.l.tdata_link, jp_take_tdata, NULL))
			j->prof_broken++;
	} else if (r.ntctxs) {
		uint64_t *want = malloc(r.ntctxs * sizeof *want);
		size_t nw = 0;
		for (size_t i = 0; want && i < r.ntctxs; i++)
			want[nw++] = r.tctxs[i].tdata;
		if (want) {
			qsort(want, nw, sizeof *want, jp_u64_cmp);
			size_t u = 0;
			for (size_t i = 0; i < nw; i++)
				if (!u || want[u - 1] != want[i])
					want[u++] = want[i];
			struct root_probe rp = { &r, want, u };
			je_data_find(j, jp_tdatas_match, &rp);
			free(want);
		}
	}

	if (r.oom) {
		free(r.gctxs);
		free(r.tctxs);
		free(r.tdatas);
		je_prof_free(jp);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	if (!r.ngctxs && !have_opt) {
		*why = "jemalloc profiling was off in this "
		       "process, or jemalloc was built without it (no sampled "
		       "allocation was found)";
		free(r.gctxs);
		free(r.tctxs);
		free(r.tdatas);
		je_prof_free(jp);
		return HW_OK;
	}
	jp->edata_tctx = r.l.edata_tctx;
	jp->tctx_gctx = r.l.tctx_gctx;
	bool ok = build(&r, jp) && index_sites(jp) && jp_read_recent(&r, jp);
	p->unreadable = j->prof_broken;
	free(r.gctxs);
	free(r.tctxs);
	free(r.tdatas);
	if (!ok) {
		je_prof_free(jp);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	if (!p->found_by)
		p->found_by = "bt2gctx (symbol)";
	*out = jp;
	return HW_OK;
}
