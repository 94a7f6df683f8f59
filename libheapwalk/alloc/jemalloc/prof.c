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
 * Layouts are fixed per version (only pointer-size members, no mutex
 * inside, no build option moves them; --enable-debug would, and is not
 * handled).
 */
#include <elf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jemalloc.h"
#include "prof.h"

/* A backtrace is at most PROF_BT_MAX (128) frames; a thread name of ours
   at most this long.  */
#define BT_MAX 128
#define NAME_MAX_LEN 256
#define TREE_DEPTH 128            /* rb-tree depth bound (2 log2 n) */
#define MAX_NODES (1u << 24)      /* nodes of all trees together */
#define LG_MAX_CELLS 26           /* bt2gctx cells we are willing to read */
#define MAX_CELLS_READ (1ull << 27)  /* cells of every table tried */
#define LG_TINY_MIN 3             /* SC_LG_TINY_MIN: shifted counts */

struct layout {
	unsigned ncnt;                /* words of prof_cnt_t: 4 or 8 */
	unsigned tctx_cnts, tctx_gctx, tctx_uid, tctx_link, tctx_state,
		tctx_size;
	unsigned gctx_bt;             /* bt {vec, len}; vec[] follows */
	unsigned tdata_link, tdata_name, tdata_attached, tdata_expired,
		tdata_size;
	bool name_inline;             /* 5.3.1: char thread_name[16] */
	unsigned edata_tctx;          /* e_prof_tctx in the extent */
};

static bool pick_layout(const struct je_state *j, struct layout *l)
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
		.edata_tctx = 80 };
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

/* ---- what was read ---------------------------------------------------- */

enum tctx_state { TCTX_INIT, TCTX_NOMINAL, TCTX_DUMPING, TCTX_PURGATORY };

struct tctx {
	uint64_t addr, tdata, uid, discrim, tctx_uid;
	uint64_t cnt[8];              /* as the version lays them out */
	uint32_t state;
};

struct gctx {
	uint64_t addr;
	unsigned npcs;
	uint64_t pcs[BT_MAX];
	size_t first, n;              /* its tctxs in rd.tctxs, tree order */
};

struct tdata {
	uint64_t addr, uid, discrim;
	bool expired;
	size_t hdr;                   /* its line in the header */
	char name[NAME_MAX_LEN];
	bool has_name;
};

struct reader {
	struct je_state *j;
	struct layout l;
	struct gctx *gctxs;
	size_t ngctxs, gcap;
	struct tctx *tctxs;
	size_t ntctxs, tcap;
	struct tdata *tdatas;
	size_t ntdatas, dcap;
	size_t nodes;                 /* tree nodes visited, all trees */
	uint64_t cells;               /* ckh cells looked at, all tries */
	bool oom;
};

static bool grow(void **p, size_t *cap, size_t n, size_t each, bool *oom)
{
	if (n < *cap)
		return true;
	size_t nc = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, nc * each);
	if (!q) {
		*oom = true;
		return false;
	}
	*p = q;
	*cap = nc;
	return true;
}

static bool rd64(struct reader *r, uint64_t a, uint64_t *v)
{
	return hw_read_u64(r->j->t, a, v);
}

/* A gctx is a heap object whose bt.vec points at its own vector.  */
static bool gctx_ok(struct reader *r, uint64_t g, unsigned *len)
{
	uint64_t vec, lenw;
	if (!g || (g & 7) || !rd64(r, g + r->l.gctx_bt, &vec) ||
	    !rd64(r, g + r->l.gctx_bt + 8, &lenw))
		return false;
	*len = (unsigned)lenw;
	return vec == g + r->l.gctx_bt + 16 && *len >= 1 && *len <= BT_MAX;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* In-order walk of a jemalloc rb-tree (rb.h, RB_COMPACT: node = {left,
   right | red}) rooted at root, whose nodes keep their link at link_off;
   fn gets each node's address.  Bounded in depth and in nodes.  */
typedef bool node_fn(struct reader *r, uint64_t node, void *cookie);

static bool walk_tree(struct reader *r, uint64_t root, unsigned link_off,
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
			if (!rd64(r, n + link_off, &left))
				return false;
			n = left;
		}
		if (!depth)
			return true;
		n = stack[--depth];
		if (!fn(r, n, cookie))
			return false;
		uint64_t right;
		if (!rd64(r, n + link_off + 8, &right))
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
	if (!grow((void **)&r->tctxs, &r->tcap, r->ntctxs, sizeof *r->tctxs,
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

static bool add_gctx(struct reader *r, uint64_t g, unsigned len)
{
	if (!grow((void **)&r->gctxs, &r->gcap, r->ngctxs, sizeof *r->gctxs,
		  &r->oom))
		return false;
	struct gctx *c = &r->gctxs[r->ngctxs];
	c->addr = g;
	c->npcs = len;
	if (!hw_read(r->j->t, g + r->l.gctx_bt + 16, c->pcs, len * 8ull))
		return true;              /* unreadable stack: left out */
	c->first = r->ntctxs;
	uint64_t root;
	if (!rd64(r, g + 16, &root))
		return true;
	if (!walk_tree(r, root, r->l.tctx_link, take_tctx, &g)) {
		/* A half-read tree: keep what was read, say so below.  */
		r->j->prof_broken++;
	}
	c->n = r->ntctxs - c->first;
	r->ngctxs++;
	return true;
}

/* ---- finding bt2gctx ---------------------------------------------------- */

/* Is `at` a ckh_t (prng_state, count, lg_minbuckets, lg_curbuckets, hash,
   keycomp, tab) whose table holds `count` cells, each {&gctx->bt, gctx}
   with gctx a gctx, and holds want (0: any)?  */
struct ckh_probe {
	struct reader *r;
	uint64_t want;
	uint64_t tab;
	unsigned lg_cells;
};

static bool ckh_at(struct reader *r, uint64_t at, uint64_t want,
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
		if (cell[0] != cell[1] + r->l.gctx_bt || !gctx_ok(r, cell[1], &len))
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

static bool ckh_match(struct je_state *j, uint64_t at, uint64_t w,
		      void *cookie)
{
	struct ckh_probe *p = cookie;
	(void)j;
	/* The table pointer is the sixth word: test at its place first.  */
	if (!w || (w & 7) || at < 40 || !hw_read_u64(j->t, at, &w))
		return false;
	return ckh_at(p->r, at - 40, p->want, &p->tab, &p->lg_cells);
}

/* ---- finding tdatas ------------------------------------------------------ */

static bool take_tdata(struct reader *r, uint64_t a, void *cookie)
{
	(void)cookie;
	const struct layout *l = &r->l;
	uint8_t buf[128];
	if (!hw_read(r->j->t, a, buf, l->tdata_size))
		return false;
	if (!grow((void **)&r->tdatas, &r->dcap, r->ntdatas, sizeof *r->tdatas,
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
	struct je_prof_links links = { .tdata_name = l->tdata_name,
				       .name_inline = l->name_inline };
	d->has_name = je_prof_thread_name(r->j, &links, a, d->name,
					  sizeof d->name);
	return true;
}

bool je_prof_thread_name(struct je_state *j, const struct je_prof_links *l,
			 uint64_t tdata, char *buf, size_t len)
{
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

struct root_probe {
	struct reader *r;
	const uint64_t *want;         /* sorted tdata addresses to reach */
	size_t nwant;
};

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

static bool tdatas_match(struct je_state *j, uint64_t at, uint64_t w,
			 void *cookie)
{
	struct root_probe *p = cookie;
	struct reader *r = p->r;
	(void)j;
	(void)at;
	/* The root is a thread with samples, or one shaped like a thread
	   (a thread that allocated nothing sampled can be the root).  */
	if (!w || (w & 7) ||
	    (!bsearch(&w, p->want, p->nwant, sizeof *p->want, u64_cmp) &&
	     !tdata_shape(r, w)))
		return false;
	/* Failed tries keep their nodes counted: the budget bounds all of
	   them together, however many words of the data look like roots.  */
	size_t keep = r->ntdatas;
	bool ok = walk_tree(r, w, r->l.tdata_link, take_tdata, NULL);
	size_t hit = 0;
	for (size_t i = keep; ok && i < r->ntdatas; i++)
		if (bsearch(&r->tdatas[i].addr, p->want, p->nwant,
			    sizeof *p->want, u64_cmp))
			hit++;
	if (ok && hit == p->nwant)
		return true;
	r->ntdatas = keep;
	return false;
}

/* ---- the options ---------------------------------------------------------- */

/* The value of key in a malloc_conf string ("k:v,k:v"), the last one.  */
static bool conf_value(const char *conf, const char *key, char *out,
		       size_t len)
{
	bool found = false;
	size_t klen = strlen(key);
	for (const char *p = conf; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > klen && !strncmp(p, key, klen) && p[klen] == ':') {
			size_t vn = n - klen - 1;
			if (vn >= len)
				vn = len - 1;
			memcpy(out, p + klen + 1, vn);
			out[vn] = '\0';
			found = true;
		}
		p = end ? end + 1 : NULL;
	}
	return found;
}

/* The configuration strings jemalloc read at start-up, in its order (a
   later one wins): the program's malloc_conf, then the environment's
   MALLOC_CONF (only what the core still holds of either).  */
static void read_conf(struct je_state *j, char *out, size_t len)
{
	out[0] = '\0';
	size_t used = 0;
	uint64_t sym = 0, size, p = 0;
	char name[64];
	snprintf(name, sizeof name, "%smalloc_conf", j->prefix);
	size_t nmod = hw_syms_nmodules(j->s->syms);
	for (size_t i = 0; j->s->syms && i < nmod && !sym; i++) {
		struct hw_module m;
		if (hw_syms_module(j->s->syms, i, &m) &&
		    !(j->have_mod && m.low == j->mod.low))
			hw_syms_lookup(j->s->syms, &m, name, &sym, &size, NULL);
	}
	if (sym && hw_read_u64(j->t, sym, &p) && p) {
		while (used + 1 < len && hw_read(j->t, p + used, out + used, 1) &&
		       out[used])
			used++;
		out[used] = '\0';
	}
	/* The environment strings lie just below AT_EXECFN's string at the
	   top of the main thread's stack.  */
	uint64_t execfn;
	if (!hw_auxv_get(j->t, AT_EXECFN, &execfn) || !execfn)
		return;
	enum { SPAN = 64 << 10 };
	/* Copied, not peeked: a live target's pages are not in one place.  */
	char *env = malloc(SPAN);
	if (!env)
		return;
	uint64_t lo = execfn > SPAN ? execfn - SPAN : 0;
	while (lo < execfn && !hw_read(j->t, lo, env, execfn - lo))
		lo += 4096 - (lo & 4095);
	size_t n = lo < execfn ? execfn - lo : 0;
	char var[32];
	snprintf(var, sizeof var, "%sMALLOC_CONF=", j->prefix[0] ? "JE_" : "");
	if (!j->prefix[0] || !strcmp(j->prefix, "je_"))
		snprintf(var, sizeof var, "%sMALLOC_CONF=",
			 j->prefix[0] ? "JE_" : "");
	size_t vl = strlen(var);
	for (size_t i = 0; i + vl < n; i++)
		if ((i == 0 || env[i - 1] == '\0') && !memcmp(env + i, var, vl)) {
			const char *v = env + i + vl;
			size_t m = strnlen(v, n - i - vl);
			if (used && used + 1 < len)
				out[used++] = ',';
			if (m > len - used - 1)
				m = len - used - 1;
			memcpy(out + used, v, m);
			used += m;
			out[used] = '\0';
		}
	free(env);
}

static bool conf_bool(const char *conf, const char *key, bool dflt)
{
	char v[16];
	if (!conf_value(conf, key, v, sizeof v))
		return dflt;
	return !strcmp(v, "true");
}

/* 5.3's prof_unbiased_sz[i] = round(sz / (1 - exp(-sz / R))): find the
   table in the data and the R it was made for.  */
static uint64_t to_u64(double d);

static uint64_t unbiased_sz(uint64_t sz, unsigned lg)
{
	/* exp(-s/R) rounds to 1 for a small s and a large R: the quotient
	   is then infinite, and jemalloc's table saturates like to_u64.  */
	double s = (double)sz, rate = (double)((uint64_t)1 << lg);
	return to_u64(s / (1.0 - exp(-s / rate)));
}

struct period_probe {
	unsigned lg;
	uint64_t first[63];           /* the table's first entry per lg */
};

static bool unbias_table_match(struct je_state *j, uint64_t at, uint64_t w,
			       void *cookie)
{
	struct period_probe *p = cookie;
	if (w < 8 || j->nsizes < 8)
		return false;
	for (unsigned lg = 0; lg < 63; lg++) {
		if (p->first[lg] != w)
			continue;
		unsigned n = j->nsizes, i;
		for (i = 1; i < n; i++) {
			uint64_t v;
			if (!hw_read_u64(j->t, at + 8ull * i, &v) ||
			    v != unbiased_sz(j->sizes[i], lg))
				break;
		}
		/* With R = 1 or 2 the table is the size table itself, which
		   the data holds too (sz_index2size_tab): no proof of R.  */
		if (i == n && lg > 1) {
			p->lg = lg;
			return true;
		}
	}
	return false;
}

static void period_first(const struct je_state *j, struct period_probe *p)
{
	for (unsigned lg = 0; lg < 63; lg++)
		p->first[lg] = unbiased_sz(j->sizes[0], lg);
}

/* ---- building the profile --------------------------------------------------- */

/* A double as a count: rounded, saturated at UINT64_MAX (NaN and
   infinity included), as jemalloc's prof_double_uint64_cast does.  */
static uint64_t to_u64(double d)
{
	double r = round(d);
	if (!(r < (double)UINT64_MAX))
		return UINT64_MAX;
	return r > 0 ? (uint64_t)r : 0;
}

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
			cin = to_u64(y / x);
			sin = to_u64(y);
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
			objs[k] = to_u64((double)objs[k] * scale);
			bytes[k] = to_u64((double)bytes[k] * scale);
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
	    !hw_read_u64(j->t, edata + jp->links.edata_tctx, &tctx) ||
	    tctx <= 1 || (tctx & 7) ||
	    !hw_read_u64(j->t, tctx + jp->links.tctx_gctx, &gctx))
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

/* Every tctx a live sampled extent points to, its gctx checked: the
   stacks with live samples, found without any symbol.  */
static void gctxs_from_extents(struct reader *r, uint64_t **out, size_t *n)
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
		if (!rd64(r, e->edata + r->l.edata_tctx, &tctx) || tctx <= 1 ||
		    (tctx & 7))
			continue;
		if (tctx == last_tctx)
			continue;
		last_tctx = tctx;
		if (!rd64(r, tctx + r->l.tctx_gctx, &gc) || !gctx_ok(r, gc, &len))
			continue;
		if (ng && g[ng - 1] == gc)
			continue;
		if (!grow((void **)&g, &cap, ng, sizeof *g, &r->oom))
			break;
		g[ng++] = gc;
	}
	if (g)
		qsort(g, ng, sizeof *g, u64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < ng; i++)
		if (!u || g[u - 1] != g[i])
			g[u++] = g[i];
	*out = g;
	*n = u;
}

static bool read_opt_bool(struct je_state *j, const char *suffix, bool *v)
{
	uint64_t a, size;
	uint8_t b;
	if (!je_lookup(j, suffix, &a, &size) || !hw_read(j->t, a, &b, 1))
		return false;
	*v = b != 0;
	return true;
}

static bool read_static(struct je_state *j, const char *name, uint64_t *a)
{
	uint64_t size;
	return j->have_mod && j->s->syms &&
	       hw_syms_lookup(j->s->syms, &j->mod, name, a, &size, NULL);
}

enum hw_status je_read_profile(struct je_state *j, struct je_prof **out,
			       const char **why)
{
	*out = NULL;
	*why = NULL;
	struct reader r = { .j = j };
	pick_layout(j, &r.l);
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

	/* The options: from the symbols, else from the configuration the
	   process was started with.  */
	char conf[1024];
	read_conf(j, conf, sizeof conf);
	bool opt_prof = false, have_opt = read_opt_bool(j, "je_opt_prof", &opt_prof);
	if (!read_opt_bool(j, "je_opt_prof_accum", &p->accum))
		p->accum = conf_bool(conf, "prof_accum", false);
	if (j->era == JE_ERA_52)
		p->unbias = false;
	else if (!read_opt_bool(j, "je_opt_prof_unbias", &p->unbias))
		p->unbias = conf_bool(conf, "prof_unbias", true);
	if (!read_opt_bool(j, "je_prof_active_state", &p->active) &&
	    !read_opt_bool(j, "je_prof_active", &p->active))
		p->active = conf_bool(conf, "prof_active", true);
	uint64_t a, size, lg = 0;
	char v[32];
	struct period_probe pp = { 0 };
	if (je_lookup(j, "je_lg_prof_sample", &a, &size) &&
	    hw_read_u64(j->t, a, &lg) && lg < 63) {
		p->period_known = true;
		p->period_from = "lg_prof_sample";
	} else if (j->era == JE_ERA_53 && j->nsizes >= 8 &&
		   (period_first(j, &pp), je_data_find(j, unbias_table_match,
						      &pp))) {
		lg = pp.lg;
		p->period_known = true;
		p->period_from = "prof_unbiased_sz";
	} else if (conf_value(conf, "lg_prof_sample", v, sizeof v) &&
		   strtoull(v, NULL, 10) <= 62) {
		lg = strtoull(v, NULL, 10);
		p->period_known = true;
		p->period_from = "malloc_conf";
	} else {
		lg = 19;
		p->period_from = "assumed: jemalloc's default";
	}
	p->lg_sample = (unsigned)lg;
	p->period = (uint64_t)1 << lg;

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
	if (read_static(j, "bt2gctx", &sym) &&
	    ckh_at(&r, sym, 0, &tab, &lg_cells))
		p->found_by = "bt2gctx (symbol)";
	uint64_t *known = NULL;
	size_t nknown = 0;
	if (!tab) {
		gctxs_from_extents(&r, &known, &nknown);
		if (nknown) {
			struct ckh_probe cp = { .r = &r, .want = known[0] };
			if (je_data_find(j, ckh_match, &cp)) {
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
			    !cell[0] || !gctx_ok(&r, cell[1], &len))
				continue;
			add_gctx(&r, cell[1], len);
		}
	} else {
		for (size_t i = 0; i < nknown && !r.oom; i++) {
			unsigned len;
			if (gctx_ok(&r, known[i], &len))
				add_gctx(&r, known[i], len);
		}
		if (nknown)
			p->found_by = "the sampled extents (bt2gctx not found)";
	}
	free(known);

	/* The threads: tdatas by its symbol, or the root in the data that
	   reaches every thread the tctxs name.  */
	if (read_static(j, "tdatas", &sym) && hw_read_u64(j->t, sym, &a)) {
		if (!walk_tree(&r, a, r.l.tdata_link, take_tdata, NULL))
			j->prof_broken++;
	} else if (r.ntctxs) {
		uint64_t *want = malloc(r.ntctxs * sizeof *want);
		size_t nw = 0;
		for (size_t i = 0; want && i < r.ntctxs; i++)
			want[nw++] = r.tctxs[i].tdata;
		if (want) {
			qsort(want, nw, sizeof *want, u64_cmp);
			size_t u = 0;
			for (size_t i = 0; i < nw; i++)
				if (!u || want[u - 1] != want[i])
					want[u++] = want[i];
			struct root_probe rp = { &r, want, u };
			je_data_find(j, tdatas_match, &rp);
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
	jp->links = (struct je_prof_links){
		.edata_tctx = r.l.edata_tctx, .edata_recent = r.l.edata_tctx + 8,
		.tctx_gctx = r.l.tctx_gctx, .gctx_bt = r.l.gctx_bt,
		.tdata_name = r.l.tdata_name, .name_inline = r.l.name_inline };
	bool ok = build(&r, jp) && index_sites(jp) &&
		  je_read_prof_recent(j, jp);
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
