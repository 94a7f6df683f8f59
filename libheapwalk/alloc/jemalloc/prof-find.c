/* prof-find.c - jemalloc's prof statics without symbols: bt2gctx is the
 * ckh_t in jemalloc's data whose table holds the gctxs the sampled
 * extents lead to and nothing else; tdatas is the tree root there that
 * reaches every thread those gctxs' tctxs name.  Each search reads within
 * one budget of cells and nodes, however many words look like a match.
 */
#include <stdlib.h>
#include <string.h>

#include "prof-reader.h"

/* ---- finding bt2gctx ---------------------------------------------------- */

/* Is `at` a ckh_t (prng_state, count, lg_minbuckets, lg_curbuckets, hash,
   keycomp, tab) whose table holds `count` cells, each {&gctx->bt, gctx}
   with gctx a gctx, and holds want (0: any)?  */
bool jp_ckh_at(struct reader *r, uint64_t at, uint64_t want,
		   uint64_t *tab_out, unsigned *lg_out)
{
	uint64_t w[6];
	if (!hw_read(r->j->t, at, w, sizeof w))
		return false;
	uint32_t lg_min = (uint32_t)w[2], lg_cur = (uint32_t)(w[2] >> 32);
	unsigned lg_cells = lg_cur + 2;   /* LG_CKH_BUCKET_CELLS on 64-bit */
	if (lg_min > lg_cur || lg_cells > LG_MAX_CELLS || !w[3] || !w[4] ||
	    !w[5] || (w[5] & 7) || w[1] > ((uint64_t)1 << lg_cells))
		return false;
	if (r->j->have_mod && (w[3] < r->j->mod.low || w[3] >= r->j->mod.high ||
			       w[4] < r->j->mod.low || w[4] >= r->j->mod.high))
		return false;
	uint64_t ncells = (uint64_t)1 << lg_cells, used = 0;
	bool seen = !want;
	/* The whole table where the core holds it, within what all tries
	   together may read: a hostile core cannot make this search long.  */
	if (r->cells + ncells > MAX_CELLS_READ)
		return false;
	r->cells += ncells;
	const uint8_t *tab = hw_peek(r->j->t, w[5], ncells * 16);
	if (!tab)
		return false;
	for (uint64_t i = 0; i < ncells; i++) {
		uint64_t cell[2];
		memcpy(cell, tab + i * 16, sizeof cell);
		if (!cell[0])
			continue;
		unsigned len;
		if (cell[0] != cell[1] + r->l.gctx_bt || !jp_gctx_ok(r, cell[1], &len))
			return false;
		used++;
		seen |= cell[1] == want;
	}
	if (used != w[1] || !seen)
		return false;
	*tab_out = w[5];
	*lg_out = lg_cells;
	return true;
}

bool jp_ckh_match(struct je_state *j, uint64_t at, uint64_t w,
		      void *cookie)
{
	struct ckh_probe *p = cookie;
	(void)j;
	/* The table pointer is the sixth word: test at its place first.  */
	if (!w || (w & 7) || at < 40 || !hw_read_u64(j->t, at, &w))
		return false;
	return jp_ckh_at(p->r, at - 40, p->want, &p->tab, &p->lg_cells);
}

/* ---- finding tdatas ------------------------------------------------------ */

/* Could a tdata start at a?  Its lock is a pointer, its uid a count of
   threads, its two flags bools.  */
static bool tdata_shape(struct reader *r, uint64_t a)
{
	uint8_t buf[128];
	uint64_t lock, uid;
	if (!a || (a & 7) || !hw_read(r->j->t, a, buf, r->l.tdata_size))
		return false;
	memcpy(&lock, buf, 8);
	memcpy(&uid, buf + 8, 8);
	return lock && !(lock & 7) && uid < ((uint64_t)1 << 32) &&
	       buf[r->l.tdata_attached] <= 1 && buf[r->l.tdata_expired] <= 1;
}

bool jp_tdatas_match(struct je_state *j, uint64_t at, uint64_t w,
			 void *cookie)
{
	struct root_probe *p = cookie;
	struct reader *r = p->r;
	(void)j;
	(void)at;
	/* The root is a thread with samples, or one shaped like a thread
	   (a thread that allocated nothing sampled can be the root).  */
	if (!w || (w & 7) ||
	    (!bsearch(&w, p->want, p->nwant, sizeof *p->want, jp_u64_cmp) &&
	     !tdata_shape(r, w)))
		return false;
	/* Failed tries keep their nodes counted: the budget bounds all of
	   them together, however many words of the data look like roots.  */
	size_t keep = r->ntdatas;
	bool ok = jp_walk_tree(r, w, r->l.tdata_link, jp_take_tdata, NULL);
	size_t hit = 0;
	for (size_t i = keep; ok && i < r->ntdatas; i++)
		if (bsearch(&r->tdatas[i].addr, p->want, p->nwant,
			    sizeof *p->want, jp_u64_cmp))
			hit++;
	if (ok && hit == p->nwant)
		return true;
	r->ntdatas = keep;
	return false;
}


/* Every tctx a live sampled extent points to, its gctx checked: the
   stacks with live samples, found without any symbol.  */
void jp_gctxs_from_extents(struct reader *r, uint64_t **out, size_t *n)
{
	uint64_t *g = NULL;
	size_t ng = 0, cap = 0;
	uint64_t last_tctx = 0;
	for (size_t i = 0; i < r->j->next; i++) {
		const struct je_extent *e = &r->j->ext[i];
		if (e->slab || e->state != JE_ACTIVE)
			continue;
		uint64_t tctx, gc;
		unsigned len;
		if (!jp_rd64(r, e->edata + r->l.edata_tctx, &tctx) || tctx <= 1 ||
		    (tctx & 7))
			continue;
		if (tctx == last_tctx)
			continue;
		last_tctx = tctx;
		if (!jp_rd64(r, tctx + r->l.tctx_gctx, &gc) || !jp_gctx_ok(r, gc, &len))
			continue;
		if (ng && g[ng - 1] == gc)
			continue;
		if (!jp_grow((void **)&g, &cap, ng, sizeof *g, &r->oom))
			break;
		g[ng++] = gc;
	}
	if (g)
		qsort(g, ng, sizeof *g, jp_u64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < ng; i++)
		if (!u || g[u - 1] != g[i])
			g[u++] = g[i];
	*out = g;
	*n = u;
}
