/* prof-recent.c - jemalloc 5.3's last sampled allocations (prof_recent).
 *
 * With opt.prof_recent_alloc_max (or its mallctl) not 0, jemalloc keeps
 * a record of each of the last N sampled allocations: request and usable
 * size, allocation time and tctx (so its stack and thread), and when the
 * object is freed, the free's time and a tctx of the freeing stack.  The
 * records are a ring (ql, qr.h: {next, prev} in each node) whose head,
 * prof_recent_alloc_list, points at the oldest; a live object's extent
 * points at its record (e_prof_recent_alloc) and the record back at the
 * extent (alloc_edata, NULL once freed).  This is what
 * experimental.prof_recent.alloc_dump prints, and for a use-after-free
 * or a double free it names who freed the memory last, and where.
 *
 * The head has no dynamic symbol.  Without .symtab it is the word in
 * jemalloc's data that points at a record whose ring closes and whose
 * every node is shaped like one (sizes that fit, tctxs that lead to a
 * gctx); the ring is walked once per candidate, within one node budget.
 */
#include <stdlib.h>
#include <string.h>

#include "prof-reader.h"

/* prof_recent_t on 64-bit, 5.3.0 and 5.3.1 alike (no debug build).  */
enum {
	RC_ALLOC_TIME = 0, RC_DALLOC_TIME = 8, RC_NEXT = 16, RC_PREV = 24,
	RC_SIZE = 32, RC_USIZE = 40, RC_EDATA = 48, RC_ALLOC_TCTX = 56,
	RC_DALLOC_TCTX = 64, RC_BYTES = 72,
};
#define RECENT_MAX_NODES (1u << 20)   /* records read, all tries */
#define TCTX_UID 8                    /* tctx: tdata, thr_uid, ... */
#define EDATA_ADDR 8                  /* edata: e_bits, e_addr */
#define NAME_LEN 256

struct ring_probe {
	struct reader *r;
	uint64_t budget;              /* nodes left to read, all tries */
	uint64_t first;               /* the head's target */
	uint64_t n;                   /* records in the ring */
};

/* A tctx leads to a gctx (prof-read.c's check); its address and
   backtrace length in *g and *len.  */
static bool tctx_ok(struct reader *r, uint64_t tctx, uint64_t *g,
		    unsigned *len)
{
	return tctx && !(tctx & 7) &&
	       jp_rd64(r, tctx + r->l.tctx_gctx, g) && jp_gctx_ok(r, *g, len);
}

/* Does the ring from `first` close, every node a record?  Counts them.  */
static bool ring_closes(struct je_state *j, struct ring_probe *p,
			uint64_t first)
{
	uint64_t g;
	unsigned len;
	uint64_t n = first, prev = 0, count = 0;
	uint64_t w[RC_BYTES / 8];
	hw_read_u64(j->t, first + RC_PREV, &prev);
	do {
		if (!p->budget || (n & 7) || !hw_read(j->t, n, w, sizeof w))
			return false;
		p->budget--;
		if (w[RC_PREV / 8] != prev || w[RC_USIZE / 8] < w[RC_SIZE / 8] ||
		    (w[RC_EDATA / 8] & 7) ||
		    !tctx_ok(p->r, w[RC_ALLOC_TCTX / 8], &g, &len) ||
		    (w[RC_DALLOC_TCTX / 8] &&
		     !tctx_ok(p->r, w[RC_DALLOC_TCTX / 8], &g, &len)))
			return false;
		prev = n;
		n = w[RC_NEXT / 8];
		count++;
	} while (n != first);
	p->n = count;
	return true;
}

static bool head_match(struct je_state *j, uint64_t at, uint64_t w,
		       void *cookie)
{
	(void)at;
	struct ring_probe *p = cookie;
	if (!w || (w & 7) || !p->budget || !ring_closes(j, p, w))
		return false;
	p->first = w;
	return true;
}

/* Storage grown as records are read; pointers are fixed up at the end. */
struct recent_out {
	struct hw_prof_recent *v;
	size_t n, cap;
	uint64_t *pcs;
	size_t npcs, pcap;
	char *names;
	size_t nnames, ncap;
	bool oom;
};

/* One end of a record from its tctx; pcs and name as offsets into the
   storage until the fix-up (pointers cast from offsets + 1).  */
static void event_of(struct reader *r, uint64_t tctx, uint64_t time,
		     struct recent_out *o, struct hw_prof_event *ev,
		     size_t *pcs_at, size_t *name_at)
{
	struct je_state *j = r->j;
	memset(ev, 0, sizeof *ev);
	*pcs_at = *name_at = 0;
	ev->time_ns = time;
	uint64_t tdata = 0, g;
	unsigned len;
	jp_rd64(r, tctx, &tdata);
	jp_rd64(r, tctx + TCTX_UID, &ev->thread);
	if (tctx_ok(r, tctx, &g, &len) &&
	    jp_reserve((void **)&o->pcs, &o->pcap, o->npcs + len,
		       sizeof *o->pcs, &o->oom) &&
	    hw_read(j->t, g + r->l.gctx_bt + 16, o->pcs + o->npcs, len * 8ull)) {
		*pcs_at = o->npcs + 1;
		ev->npcs = len;
		o->npcs += len;
	}
	char name[NAME_LEN];
	if (tdata && jp_thread_name(r, tdata, name, sizeof name)) {
		size_t nl = strlen(name) + 1;
		if (jp_reserve((void **)&o->names, &o->ncap, o->nnames + nl, 1,
			       &o->oom)) {
			memcpy(o->names + o->nnames, name, nl);
			*name_at = o->nnames + 1;
			o->nnames += nl;
		}
	}
}

/* Offsets of each record's pcs and names, kept beside the records.  */
struct fixup {
	size_t pcs[2], name[2];
};

static void read_ring(struct reader *r, struct je_prof *jp, uint64_t first,
		      struct recent_out *o, struct fixup **fx)
{
	struct je_state *j = r->j;
	uint64_t g;
	unsigned len;
	size_t fcap = 0;
	uint64_t n = first, prev = 0;
	hw_read_u64(j->t, first + RC_PREV, &prev);
	do {
		uint64_t w[RC_BYTES / 8];
		if (o->n >= RECENT_MAX_NODES || (n & 7) ||
		    !hw_read(j->t, n, w, sizeof w) || w[RC_PREV / 8] != prev ||
		    !tctx_ok(r, w[RC_ALLOC_TCTX / 8], &g, &len)) {
			jp->p.recent_broken = true;
			return;
		}
		if (!jp_grow((void **)&o->v, &o->cap, o->n, sizeof *o->v,
			     &o->oom) ||
		    !jp_grow((void **)fx, &fcap, o->n, sizeof **fx, &o->oom))
			return;
		struct hw_prof_recent *rec = &o->v[o->n];
		struct fixup *f = &(*fx)[o->n];
		memset(rec, 0, sizeof *rec);
		memset(f, 0, sizeof *f);
		rec->addr = n;
		rec->size = w[RC_SIZE / 8];
		rec->usize = w[RC_USIZE / 8];
		uint64_t edata = w[RC_EDATA / 8];
		rec->released = edata == 0;
		uint64_t ptr;
		/* The live object: its extent's address, if the extent
		   agrees that this is its record.  */
		uint64_t back;
		if (edata && hw_read_u64(j->t, edata + r->l.edata_recent, &back) &&
		    back == n && hw_read_u64(j->t, edata + EDATA_ADDR, &ptr))
			rec->ptr = ptr;
		event_of(r, w[RC_ALLOC_TCTX / 8], w[RC_ALLOC_TIME / 8], o,
			 &rec->alloc, &f->pcs[0], &f->name[0]);
		uint64_t dt = w[RC_DALLOC_TCTX / 8];
		if (rec->released && dt && tctx_ok(r, dt, &g, &len)) {
			rec->freed_known = true;
			event_of(r, dt, w[RC_DALLOC_TIME / 8], o, &rec->dalloc,
				 &f->pcs[1], &f->name[1]);
		}
		o->n++;
		prev = n;
		n = w[RC_NEXT / 8];
	} while (n != first && !o->oom);
}

static void fix_event(struct recent_out *o, struct hw_prof_event *ev,
		      size_t pcs_at, size_t name_at)
{
	ev->pcs = pcs_at ? o->pcs + pcs_at - 1 : NULL;
	if (!pcs_at)
		ev->npcs = 0;
	ev->thread_name = name_at ? o->names + name_at - 1 : NULL;
}

bool jp_read_recent(struct reader *r, struct je_prof *jp)
{
	struct je_state *j = r->j;
	struct hw_profile *p = &jp->p;
	if (j->era == JE_ERA_52) {
		p->recent_why = "jemalloc before 5.3 keeps no recent-allocation "
				"records";
		return true;
	}
	uint64_t a, size, v;
	if (j->have_mod && j->s->syms &&
	    hw_syms_lookup(j->s->syms, &j->mod, "prof_recent_alloc_max", &a,
			   &size, NULL) &&
	    hw_read_u64(j->t, a, &v)) {
		p->recent_max = (int64_t)v;
		p->recent_max_known = true;
	}
	uint64_t first = 0;
	struct ring_probe rp = { .r = r, .budget = RECENT_MAX_NODES };
	if (je_lookup(j, "je_prof_recent_alloc_list", &a, &size)) {
		if (!hw_read_u64(j->t, a, &first)) {
			p->recent_why = "the recent-allocation list's head is "
					"not readable";
			return true;
		}
		p->recent_from = "prof_recent_alloc_list (symbol)";
	} else if (je_data_find(j, head_match, &rp)) {
		first = rp.first;
		p->recent_from = "prof_recent_alloc_list (found from the data)";
	}
	if (!first) {
		p->recent_why = p->recent_from
			? "no recent-allocation records (prof_recent_alloc_max "
			  "is 0, jemalloc's default)"
			: "no recent-allocation records were found "
			  "(prof_recent_alloc_max is 0 by default)";
		p->recent_from = NULL;
		return true;
	}
	struct recent_out o = { 0 };
	struct fixup *fx = NULL;
	read_ring(r, jp, first, &o, &fx);
	if (o.oom) {
		free(o.v);
		free(o.pcs);
		free(o.names);
		free(fx);
		return false;
	}
	for (size_t i = 0; i < o.n; i++) {
		fix_event(&o, &o.v[i].alloc, fx[i].pcs[0], fx[i].name[0]);
		fix_event(&o, &o.v[i].dalloc, fx[i].pcs[1], fx[i].name[1]);
	}
	free(fx);
	jp->recent = o.v;
	jp->recent_pcs = o.pcs;
	jp->recent_names = o.names;
	p->recent = o.v;
	p->nrecent = o.n;
	return true;
}
