/* api.c - the heap as data (heapwalk.h's hw_blocks, hw_heap_totals,
 * hw_size_classes, hw_arena_totals, hw_problems, hw_leaks): the walks
 * the commands report, handed to a program's callbacks as plain structs.
 *
 * Each function runs the allocator walker's own chunk walk (alloc.h) and
 * converts; the totals are summed here in one pass, with no per-block
 * allocation (classes and arenas are a few hundred at most).
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../analysis/reach.h"
#include "../target/cache.h"
#include "../target/target.h"
#include "../emit/emit.h"
#include "../report/loss.h"
#include "../report/stacks.h"
#include "../report/triage.h"

static enum hw_status need_allocator(hw_session *s)
{
	if (!s)
		return HW_USAGE;
	if (!s->alloc)
		return hw_error(s, HW_NO_ALLOCATOR, "no allocator was found");
	return HW_OK;
}

/* After a walk: an allocation failure inside it makes every result
   incomplete, which the caller must hear of.  */
static enum hw_status walked(hw_session *s)
{
	if (atomic_load(&s->oom) || hw_cache_oom(s->target->cache))
		return hw_error(s, HW_BAD_TARGET, "out of memory: the walk "
				"could not keep track of the heap");
	return HW_OK;
}

static void to_block(const struct hw_chunk *c, struct hw_block *b)
{
	*b = (struct hw_block){
		.addr = c->addr, .size = c->size, .chunk = c->chunk,
		.chunk_size = c->chunk_size, .arena = c->arena,
		.used = c->used,
		.where = c->where < HW_WHERE_COUNT ?
			 hw_where_name((enum hw_where)c->where) : "free",
	};
}

/* ---- blocks ---------------------------------------------------------- */

struct block_walk {
	hw_block_cb *cb;
	void *arg;
};

static bool each_block(void *cookie, const struct hw_chunk *c)
{
	struct block_walk *w = cookie;
	struct hw_block b;
	to_block(c, &b);
	return w->cb(w->arg, &b) == 0;
}

enum hw_status hw_blocks(hw_session *s, hw_block_cb *cb, void *arg)
{
	enum hw_status st = need_allocator(s);
	if (st != HW_OK)
		return st;
	struct block_walk w = { cb, arg };
	hw_walk_blocks(s, each_block, &w);
	return walked(s);
}

/* ---- totals: the heap, its size classes, its arenas ------------------- */

struct tally {
	uint64_t used_blocks, used_bytes, free_blocks, free_bytes;
};

static void tally_add(struct tally *t, const struct hw_chunk *c)
{
	if (c->used) {
		t->used_blocks++;
		t->used_bytes += c->size;
	} else {
		t->free_blocks++;
		t->free_bytes += c->size;
	}
}

struct class_tally {
	uint64_t min, max;
	struct tally t;
};

struct totals_walk {
	hw_session *s;
	struct tally all;
	/* Size classes, kept sorted by max (few: a binary search each).  */
	struct class_tally *classes;
	size_t nclasses, cap;
	/* Arenas by index; [0] is "no arena" (-1).  */
	struct tally *arenas;
	size_t narenas;
	bool want_classes, oom;
};

static struct class_tally *class_of(struct totals_walk *w, uint64_t size)
{
	uint64_t min = size, max = size;
	if (w->s->alloc->size_class)
		max = w->s->alloc->size_class(w->s->alloc_state, size, &min);
	size_t lo = 0, hi = w->nclasses;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->classes[mid].max < max)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->nclasses && w->classes[lo].max == max)
		return &w->classes[lo];
	if (w->nclasses == w->cap) {
		size_t nc = w->cap ? 2 * w->cap : 256;
		void *q = realloc(w->classes, nc * sizeof *w->classes);
		if (!q) {
			w->oom = true;
			return NULL;
		}
		w->classes = q;
		w->cap = nc;
	}
	memmove(&w->classes[lo + 1], &w->classes[lo],
		(w->nclasses - lo) * sizeof *w->classes);
	w->nclasses++;
	w->classes[lo] = (struct class_tally){ .min = min, .max = max };
	return &w->classes[lo];
}

static bool total_one(void *cookie, const struct hw_chunk *c)
{
	struct totals_walk *w = cookie;
	tally_add(&w->all, c);
	size_t a = c->arena >= 0 && (size_t)c->arena + 1 < w->narenas ?
		   (size_t)c->arena + 1 : 0;
	if (w->arenas)
		tally_add(&w->arenas[a], c);
	if (w->want_classes) {
		struct class_tally *k = class_of(w, c->size);
		if (k)
			tally_add(&k->t, c);
	}
	return !w->oom;
}

static enum hw_status total_walk(hw_session *s, struct totals_walk *w,
				 bool classes, bool arenas)
{
	memset(w, 0, sizeof *w);
	w->s = s;
	w->want_classes = classes;
	if (arenas) {
		w->narenas = s->alloc->narenas(s->alloc_state) + 1;
		w->arenas = calloc(w->narenas, sizeof *w->arenas);
		if (!w->arenas)
			return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	hw_walk_blocks(s, total_one, w);
	if (w->oom)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	return walked(s);
}

static void total_free(struct totals_walk *w)
{
	free(w->classes);
	free(w->arenas);
}

enum hw_status hw_heap_totals(hw_session *s, struct hw_heap_totals *t)
{
	enum hw_status st = need_allocator(s);
	if (st != HW_OK)
		return st;
	if (!t || t->sz < sizeof *t)
		return hw_error(s, HW_USAGE, "hw_heap_totals: set sz to "
				"sizeof (struct hw_heap_totals)");
	struct totals_walk w;
	st = total_walk(s, &w, false, false);
	total_free(&w);
	if (st != HW_OK)
		return st;
	const char *v = s->alloc->version ? s->alloc->version(s->alloc_state) :
					     NULL;
	size_t sz = t->sz;
	*t = (struct hw_heap_totals){
		.sz = sz, .allocator = s->alloc->name,
		.version = v && *v ? v : "unknown",
		.arenas = s->alloc->narenas(s->alloc_state),
		.used_blocks = w.all.used_blocks,
		.used_bytes = w.all.used_bytes,
		.free_blocks = w.all.free_blocks,
		.free_bytes = w.all.free_bytes,
		.problems = s->findings_total, .partial = s->partial.places > 0,
	};
	return HW_OK;
}

enum hw_status hw_size_classes(hw_session *s, hw_class_cb *cb, void *arg)
{
	enum hw_status st = need_allocator(s);
	if (st != HW_OK)
		return st;
	struct totals_walk w;
	st = total_walk(s, &w, true, false);
	for (size_t i = 0; st == HW_OK && i < w.nclasses; i++) {
		const struct class_tally *k = &w.classes[i];
		struct hw_class_totals c = {
			.min = k->min, .max = k->max,
			.used_blocks = k->t.used_blocks,
			.used_bytes = k->t.used_bytes,
			.free_blocks = k->t.free_blocks,
			.free_bytes = k->t.free_bytes,
		};
		if (cb(arg, &c))
			break;
	}
	total_free(&w);
	return st;
}

enum hw_status hw_arena_totals(hw_session *s, hw_arena_cb *cb, void *arg)
{
	enum hw_status st = need_allocator(s);
	if (st != HW_OK)
		return st;
	struct totals_walk w;
	st = total_walk(s, &w, false, true);
	/* The arenas in order, then the blocks of none, if any.  */
	for (size_t k = 1; st == HW_OK && k <= w.narenas; k++) {
		size_t i = k % w.narenas;
		const struct tally *t = &w.arenas[i];
		if (i == 0 && !t->used_blocks && !t->free_blocks)
			continue;
		struct hw_arena_totals a = {
			.arena = (int32_t)i - 1,
			.used_blocks = t->used_blocks,
			.used_bytes = t->used_bytes,
			.free_blocks = t->free_blocks,
			.free_bytes = t->free_bytes,
		};
		if (cb(arg, &a))
			break;
	}
	total_free(&w);
	return st;
}

/* ---- problems ---------------------------------------------------------- */

static bool skip_block(void *cookie, const struct hw_chunk *c)
{
	(void)cookie;
	(void)c;
	return true;
}

static int problem_order(const void *a, const void *b)
{
	const struct hw_finding *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

enum hw_status hw_problems(hw_session *s, hw_problem_cb *cb, void *arg)
{
	enum hw_status st = need_allocator(s);
	if (st != HW_OK)
		return st;
	hw_walk_blocks(s, skip_block, NULL);
	if (s->alloc->check)
		s->alloc->check(s->alloc_state);
	if ((st = walked(s)) != HW_OK)
		return st;
	if (s->nfindings)
		qsort(s->findings, s->nfindings, sizeof *s->findings,
		      problem_order);
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct hw_finding *f = &s->findings[i];
		struct hw_problem p = { f->addr, f->note, f->problem };
		if (cb(arg, &p))
			break;
	}
	/* Counted past the findings kept, notes left out: check's rule.  */
	return s->findings_total ? HW_CORRUPT : HW_OK;
}

/* ---- leaks ---------------------------------------------------------------- */

struct leak_walk {
	const struct hw_reach *r;
	struct prof_sites sites;
	hw_leak_cb *cb;
	void *arg;
};

static bool leak_one(void *cookie, const struct hw_chunk *c)
{
	static const char *const kinds[] = {
		[BM_UNREACHED] = "definite", [BM_POSSIBLE] = "possible",
		[BM_INDIRECT] = "indirect", [HW_KIND_UNKNOWN] = "unknown",
	};
	struct leak_walk *w = cookie;
	enum bm_mark mark;
	if (!c->used || !hw_reach_mark(w->r, c->addr, &mark) ||
	    mark == BM_REACHABLE || mark > BM_INDIRECT)
		return true;
	const struct hw_prof_site *site = prof_sites_of(&w->sites, c);
	struct hw_leak l = {
		.addr = c->addr, .size = c->size,
		.kind = kinds[hw_loss_kind(mark, c)],
		.site = site ? prof_sites_name(&w->sites, site) : NULL,
	};
	return w->cb(w->arg, &l) == 0;
}

enum hw_status hw_leaks(hw_session *s, hw_leak_cb *cb, void *arg)
{
	enum hw_status st = need_allocator(s);
	if (st != HW_OK)
		return st;
	struct leak_walk w = { .cb = cb, .arg = arg };
	w.r = hw_reach_get(s);
	if (!w.r)
		return HW_BAD_TARGET;
	if ((st = prof_sites_open(s, &w.sites)) != HW_OK)
		return st;
	hw_walk_blocks(s, leak_one, &w);
	prof_sites_close(&w.sites);
	return walked(s);
}

/* ---- triage ------------------------------------------------------------ */

enum hw_status hw_triage_error(const char *core, enum hw_status st,
			       const char *why, const struct hw_output *given)
{
	struct hw_output out;
	if (!em_output_of(given, &out))
		return HW_USAGE;
	struct hw_emitter *e = em_open(&out);
	if (!e)
		return HW_BAD_TARGET;
	hw_triage_emit_error(e, core ? core : "", st, why);
	return em_close(e) ? st : HW_BAD_TARGET;
}

/* The record of an open session: what the triage command does,
   without the command table (a data call uses report/ as a command
   does).  */
static enum hw_status triage_record(hw_session *s, int argc,
				    char *const argv[],
				    const struct hw_output *given)
{
	struct hw_output out;
	struct hw_triage_opts o;
	char *const dflt[] = { (char *)"triage", NULL };
	if (!em_output_of(given, &out))
		return hw_error(s, HW_USAGE, "hw_triage: struct hw_output "
				"without its size, its write function or a "
				"known form");
	enum hw_status st = hw_triage_args(s, argc > 0 ? argc : 1,
					   argc > 0 ? argv : dflt, &o);
	if (st != HW_OK)
		return st;
	struct hw_emitter *e = em_open(&out);
	if (!e)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	st = hw_triage_emit(s, &o, e);
	if (!em_close(e) && (st == HW_OK || st == HW_CORRUPT))
		st = hw_error(s, HW_BAD_TARGET, "write error on output");
	enum hw_status mem = walked(s);
	return mem != HW_OK ? mem : st;
}

enum hw_status hw_triage(const struct hw_open_opts *opts, int argc,
			 char *const argv[], const struct hw_output *out)
{
	if (!opts || !opts->core)
		return HW_USAGE;
	hw_session *s = NULL;
	enum hw_status st = hw_session_open(opts, &s);
	/* A core whose allocator is none heapwalk knows still has a
	   record: how its process died.  */
	if (s && s->target && (st == HW_OK || st == HW_NO_ALLOCATOR)) {
		st = triage_record(s, argc, argv, out);
		if (st != HW_OK && st != HW_CORRUPT && st != HW_USAGE)
			st = hw_triage_error(opts->core, st,
					     hw_session_errmsg(s), out);
	} else {
		st = hw_triage_error(opts->core, st, s ? hw_session_errmsg(s)
						       : "out of memory", out);
	}
	hw_session_close(s);
	return st;
}
