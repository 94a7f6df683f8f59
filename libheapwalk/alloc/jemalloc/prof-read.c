/* prof-read.c - reading jemalloc's prof records out of the target: the
 * layout per version, the bounded rb-tree walk, a gctx with its tctxs, a
 * tdata with its name.  Every read is checked and every walk bounded
 * (depth, and one node budget for all trees).
 */
#include <stdlib.h>
#include <string.h>

#include "prof-reader.h"


bool jp_pick_layout(const struct je_state *j, struct layout *l)
{
	memset(l, 0, sizeof *l);
	if (j->era == JE_ERA_52) {
		*l = (struct layout){
			.ncnt = 4, .tctx_cnts = 24, .tctx_gctx = 56,
			.tctx_uid = 64, .tctx_link = 72, .tctx_state = 92,
			.tctx_size = 96, .gctx_bt = 72, .tdata_link = 40,
			.tdata_name = 24, .tdata_attached = 32,
			.tdata_expired = 33, .tdata_size = 64,
			.edata_tctx = 72 };
		return true;
	}
	*l = (struct layout){
		.ncnt = 8, .tctx_cnts = 32, .tctx_gctx = 96, .tctx_uid = 104,
		.tctx_link = 112, .tctx_state = 132, .tctx_size = 136,
		.gctx_bt = 104, .tdata_link = 40, .tdata_name = 24,
		.tdata_attached = 32, .tdata_expired = 33, .tdata_size = 64,
		.edata_tctx = 80, .edata_recent = 88 };
	/* 5.3.1 keeps the name inline after bt2tctx and moved the flags.  */
	int bugfix = 0;
	const char *v = strchr(j->version, '.');
	v = v ? strchr(v + 1, '.') : NULL;
	if (v)
		bugfix = atoi(v + 1);
	if (j->major > 5 || j->minor > 3 || (j->minor == 3 && bugfix >= 1)) {
		l->tdata_link = 24;
		l->tdata_name = 96;
		l->name_inline = true;
		l->tdata_attached = 117;
		l->tdata_expired = 118;
		l->tdata_size = 120;
	}
	return true;
}

bool jp_reserve(void **p, size_t *cap, size_t need, size_t each, bool *oom)
{
	if (need <= *cap)
		return true;
	size_t nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * each);
	if (!q) {
		*oom = true;
		return false;
	}
	*p = q;
	*cap = nc;
	return true;
}

bool jp_grow(void **p, size_t *cap, size_t n, size_t each, bool *oom)
{
	return jp_reserve(p, cap, n + 1, each, oom);
}

bool jp_rd64(struct reader *r, uint64_t a, uint64_t *v)
{
	return hw_read_u64(r->j->t, a, v);
}

/* A gctx is a heap object whose bt.vec points at its own vector.  */
bool jp_gctx_ok(struct reader *r, uint64_t g, unsigned *len)
{
	uint64_t vec, lenw;
	if (!g || (g & 7) || !jp_rd64(r, g + r->l.gctx_bt, &vec) ||
	    !jp_rd64(r, g + r->l.gctx_bt + 8, &lenw))
		return false;
	*len = (unsigned)lenw;
	return vec == g + r->l.gctx_bt + 16 && *len >= 1 && *len <= BT_MAX;
}

int jp_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* In-order walk of a jemalloc rb-tree (rb.h, RB_COMPACT: node = {left,
   right | red}) rooted at root, whose nodes keep their link at link_off;
   fn gets each node's address.  Bounded in depth and in nodes.  */
typedef bool node_fn(struct reader *r, uint64_t node, void *cookie);

bool jp_walk_tree(struct reader *r, uint64_t root, unsigned link_off,
		      node_fn *fn, void *cookie)
{
	uint64_t stack[TREE_DEPTH];
	unsigned depth = 0;
	uint64_t n = root;
	for (;;) {
		while (n) {
			if ((n & 7) || depth == TREE_DEPTH ||
			    ++r->nodes > MAX_NODES)
				return false;
			stack[depth++] = n;
			uint64_t left;
			if (!jp_rd64(r, n + link_off, &left))
				return false;
			n = left;
		}
		if (!depth)
			return true;
		n = stack[--depth];
		if (!fn(r, n, cookie))
			return false;
		uint64_t right;
		if (!jp_rd64(r, n + link_off + 8, &right))
			return false;
		n = right & ~(uint64_t)1;
	}
}

/* ---- tctxs under a gctx ------------------------------------------------ */

static bool take_tctx(struct reader *r, uint64_t a, void *cookie)
{
	uint64_t g = *(uint64_t *)cookie;
	const struct layout *l = &r->l;
	uint8_t buf[160];
	if (l->tctx_size > sizeof buf || !hw_read(r->j->t, a, buf, l->tctx_size))
		return false;
	uint64_t w[20];
	memcpy(w, buf, sizeof w);
	if (w[l->tctx_gctx / 8] != g)
		return false;             /* not a tctx of this gctx */
	if (!jp_grow((void **)&r->tctxs, &r->tcap, r->ntctxs, sizeof *r->tctxs,
		  &r->oom))
		return false;
	struct tctx *t = &r->tctxs[r->ntctxs++];
	t->addr = a;
	t->tdata = w[0];
	t->uid = w[1];
	t->discrim = w[2];
	t->tctx_uid = w[l->tctx_uid / 8];
	memcpy(t->cnt, buf + l->tctx_cnts, l->ncnt * 8);
	memcpy(&t->state, buf + l->tctx_state, 4);
	return true;
}

bool jp_add_gctx(struct reader *r, uint64_t g, unsigned len)
{
	if (!jp_grow((void **)&r->gctxs, &r->gcap, r->ngctxs, sizeof *r->gctxs,
		  &r->oom))
		return false;
	struct gctx *c = &r->gctxs[r->ngctxs];
	c->addr = g;
	c->npcs = len;
	if (!hw_read(r->j->t, g + r->l.gctx_bt + 16, c->pcs, len * 8ull))
		return true;              /* unreadable stack: left out */
	c->first = r->ntctxs;
	uint64_t root;
	if (!jp_rd64(r, g + 16, &root))
		return true;
	if (!jp_walk_tree(r, root, r->l.tctx_link, take_tctx, &g)) {
		/* A half-read tree: keep what was read, say so below.  */
		r->j->prof_broken++;
	}
	c->n = r->ntctxs - c->first;
	r->ngctxs++;
	return true;
}

bool jp_take_tdata(struct reader *r, uint64_t a, void *cookie)
{
	(void)cookie;
	const struct layout *l = &r->l;
	uint8_t buf[128];
	if (!hw_read(r->j->t, a, buf, l->tdata_size))
		return false;
	if (!jp_grow((void **)&r->tdatas, &r->dcap, r->ntdatas, sizeof *r->tdatas,
		  &r->oom))
		return false;
	struct tdata *d = &r->tdatas[r->ntdatas++];
	memset(d, 0, sizeof *d);
	d->addr = a;
	memcpy(&d->uid, buf + 8, 8);
	memcpy(&d->discrim, buf + 16, 8);
	d->expired = buf[l->tdata_expired] != 0;
	if (buf[l->tdata_attached] > 1 || buf[l->tdata_expired] > 1)
		return false;
	d->has_name = jp_thread_name(r, a, d->name, sizeof d->name);
	return true;
}

bool jp_thread_name(struct reader *r, uint64_t tdata, char *buf, size_t len)
{
	struct je_state *j = r->j;
	const struct layout *l = &r->l;
	buf[0] = '\0';
	if (len < 17)
		return false;
	if (l->name_inline) {
		if (!hw_read(j->t, tdata + l->tdata_name, buf, 16))
			return false;
		buf[16] = '\0';
		return buf[0] != '\0';
	}
	uint64_t p;
	if (!hw_read_u64(j->t, tdata + l->tdata_name, &p) || !p)
		return false;
	/* Read up to the NUL, byte by byte as it lies across pages.  */
	size_t n = 0;
	while (n + 1 < len && hw_read(j->t, p + n, buf + n, 1) && buf[n])
		n++;
	buf[n] = '\0';
	return true;
}
