/* chunks.c - the chunks command: every block, one row each, in walk
 * order (JSON Lines in JSON: a stream, not one document), or those a
 * filter keeps: a state, places (`where`), an arena, a size range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/blockrow.h"
#include "../report/pipe.h"
#include "../target/target.h"
#include "command.h"

/* What a row must be to be shown: read by every rendering thread.  */
struct chunks_filter {
	int state;              /* 0 any, 1 used, 2 free */
	uint32_t places;        /* bit w: HW_WHERE w; 0: any place */
	int64_t arena;          /* -1: any */
	uint64_t min_size, max_size;
	bool around;            /* --around: only the blocks near `addr` */
	uint64_t addr;
	unsigned near;          /* how many on each side */
	char thread[96];        /* "--thread 2 (thread 2: tid 4712)" when
				   --thread's number was taken as a thread's */
};

/* --around ADDR [N]: at most this many blocks on each side.  */
#define MAX_NEAR 1000
#define DEFAULT_NEAR 5
_Static_assert(HW_WHERE_COUNT <= 32, "a place is a bit of a uint32_t");

static bool keep(const struct chunks_filter *f, const struct hw_chunk *ch)
{
	return !((f->state == 1 && !ch->used) || (f->state == 2 && ch->used) ||
		 (f->places && !(f->places >> ch->where & 1)) ||
		 (f->arena >= 0 && ch->arena != f->arena) ||
		 ch->size < f->min_size || ch->size > f->max_size);
}

/* Does some filter leave blocks out (keep() is not always true)?  */
static bool filters(const struct chunks_filter *f)
{
	return f->state || f->places || f->arena >= 0 || f->min_size ||
	       f->max_size != UINT64_MAX;
}

/* One row; runs in several threads at once (hw_walk_rows_piped).  */
static bool print_chunk(void *cookie, struct hw_emitter *e,
			const struct hw_chunk *ch)
{
	(void)cookie;
	struct em_packed_row r;
	hw_block_pack(&r, ch);
	em_row_packed(e, &r);
	return !em_failed(e);
}

/* One row if the filters keep the block.  */
static bool print_kept_chunk(void *cookie, struct hw_emitter *e,
			     const struct hw_chunk *ch)
{
	return !keep(cookie, ch) || print_chunk(cookie, e, ch);
}

/* "--where tcache,fastbin": the places named, as `where` prints them.  */
static enum hw_status parse_places(struct hw_session *s, const char *v,
				   uint32_t *places)
{
	const char *names[HW_WHERE_COUNT], *bad;
	size_t badlen;
	for (unsigned w = 0; w < HW_WHERE_COUNT; w++)
		names[w] = hw_where_name((enum hw_where)w);
	if (!hw_args_names(v, names, HW_WHERE_COUNT, places, &bad, &badlen)) {
		char all[512];
		size_t len = 0;
		for (unsigned k = 0; k < HW_WHERE_COUNT; k++)
			len += (size_t)snprintf(all + len, sizeof all - len,
						"%s%s", k ? ", " : "", names[k]);
		return hw_error(s, HW_USAGE, "chunks --where: '%.*s' is no "
				"place a block can be in (%s)", (int)badlen,
				bad, all);
	}
	if (!*places)
		return hw_error(s, HW_USAGE, "chunks --where: which places? "
				"(e.g. --where tcache,fastbin)");
	return HW_OK;
}

/* --thread's number as a thread id: a tid of the target's is that
   thread; else 1 to the count of threads is the thread reports number
   so ("thread 2 (tid 4712)"), and `which` says which tid that is.  */
static uint64_t thread_tid(const struct hw_session *s, uint64_t v,
			   char *which, size_t len)
{
	const struct hw_target *t = s->target;
	which[0] = '\0';
	for (size_t k = 0; k < t->nthreads; k++)
		if ((uint64_t)t->threads[k].tid == v)
			return v;
	if (v >= 1 && v <= t->nthreads && t->threads[v - 1].tid > 0) {
		snprintf(which, len, " is thread %llu, tid %d",
			 (unsigned long long)v, t->threads[v - 1].tid);
		return (uint64_t)t->threads[v - 1].tid;
	}
	return v;
}

static enum hw_status parse(struct hw_session *s, int argc,
			    char *const argv[], struct chunks_filter *f)
{
	*f = (struct chunks_filter){ .arena = -1, .max_size = UINT64_MAX };
	bool min_given = false, max_given = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int state = !strcmp(a, "--used") ? 1 : !strcmp(a, "--free") ? 2 : 0;
		if (state) {
			if (f->state && f->state != state)
				return hw_error(s, HW_USAGE, "chunks: --used and "
						"--free exclude each other (give "
						"neither for every chunk)");
			f->state = state;
		} else if ((v = hw_args_value(argc, argv, &i, "--where"))) {
			enum hw_status st = parse_places(s, v, &f->places);
			if (st != HW_OK)
				return st;
		} else if ((v = hw_args_value(argc, argv, &i, "--around"))) {
			if (!hw_args_addr(v, &f->addr))
				return hw_error(s, HW_USAGE, "chunks --around: "
						"'%s' is not an address (hex, 0x "
						"optional)", v);
			f->around = true;
			f->near = DEFAULT_NEAR;
			uint64_t n;
			/* An optional count after the address.  */
			if (i + 1 < argc && argv[i + 1][0] >= '0' &&
			    argv[i + 1][0] <= '9' &&
			    hw_args_size(argv[i + 1], &n)) {
				if (!n || n > MAX_NEAR)
					return hw_error(s, HW_USAGE, "chunks "
							"--around: %s blocks on "
							"each side: 1 to %d",
							argv[i + 1], MAX_NEAR);
				f->near = (unsigned)n;
				i++;
			}
		} else if ((v = hw_args_value(argc, argv, &i, "--thread"))) {
			uint64_t tid;
			const char *why = "not known for this allocator";
			int32_t ta = -1;
			if (!hw_args_size(v, &tid) || tid > INT32_MAX)
				return hw_error(s, HW_USAGE, "chunks --thread: "
						"'%s' is not a thread id", v);
			char which[64];
			tid = thread_tid(s, tid, which, sizeof which);
			if (which[0])
				snprintf(f->thread, sizeof f->thread,
					 "--thread %s%s", v, which);
			if (s->alloc->thread_arena)
				ta = s->alloc->thread_arena(s->alloc_state,
							   (int64_t)tid, &why);
			if (ta < 0)
				return hw_error(s, HW_USAGE, "chunks --thread %s%s: "
						"no arena known for it (%s)", v,
						which[0] ? " (thread's number)" : "",
						why);
			if (f->arena >= 0 && f->arena != ta)
				return hw_error(s, HW_USAGE, "chunks --thread %s%s "
						"uses arena %d, not --arena's %lld",
						v, which[0] ? " (thread's number)" : "",
						ta, (long long)f->arena);
			f->arena = ta;
		} else if ((v = hw_args_value(argc, argv, &i, "--arena"))) {
			uint64_t n;
			if (!hw_args_size(v, &n) || n > INT32_MAX)
				return hw_error(s, HW_USAGE, "chunks --arena: '%s' "
						"is not an arena's number (the "
						"arena column)", v);
			size_t narenas = s->alloc->narenas ?
					 s->alloc->narenas(s->alloc_state) : 0;
			if (narenas && n >= narenas)
				return narenas == 1 ?
				       hw_error(s, HW_USAGE, "chunks --arena %s: "
						"no arena %s (the only arena is "
						"0)", v, v) :
				       hw_error(s, HW_USAGE, "chunks --arena %s: "
						"no arena %s (the arenas are 0 to "
						"%zu)", v, v, narenas - 1);
			if (f->arena >= 0 && f->arena != (int64_t)n)
				return hw_error(s, HW_USAGE, "chunks --arena %s: "
						"--thread's arena is %lld", v,
						(long long)f->arena);
			f->arena = (int64_t)n;
		} else if ((v = hw_args_value(argc, argv, &i, "--min-size"))) {
			if (!hw_args_size(v, &f->min_size))
				return hw_error(s, HW_USAGE, "chunks --min-size: "
						"'%s' is not a size (e.g. 1024, "
						"0x400, 4K)", v);
			min_given = true;
		} else if ((v = hw_args_value(argc, argv, &i, "--max-size"))) {
			if (!hw_args_size(v, &f->max_size))
				return hw_error(s, HW_USAGE, "chunks --max-size: "
						"'%s' is not a size (e.g. 1024, "
						"0x400, 4K)", v);
			max_given = true;
		} else {
			return hw_error(s, HW_USAGE, "chunks: unknown argument "
					"'%s' (%s)", a, hw_cmd_chunks.args);
		}
	}
	if (min_given && max_given && f->min_size > f->max_size)
		return hw_error(s, HW_USAGE, "chunks: --min-size %llu is more "
				"than --max-size %llu: no block is both",
				(unsigned long long)f->min_size,
				(unsigned long long)f->max_size);
	return HW_OK;
}

/* --around: the walk in order, the last `near` blocks kept in a ring
   until the block holding addr comes, then that many more; shown once
   the walk is over.  */
struct around_walk {
	const struct chunks_filter *f;
	struct hw_chunk ring[MAX_NEAR];
	size_t nring, at;       /* blocks held; where the next goes */
	bool hit;
	struct hw_chunk block;  /* the one holding addr */
	struct hw_chunk after[MAX_NEAR];
	size_t nafter;
};

static bool around_one(void *cookie, const struct hw_chunk *ch)
{
	struct around_walk *w = cookie;
	if (w->hit) {
		if (!keep(w->f, ch))
			return true;
		w->after[w->nafter++] = *ch;
		return w->nafter < w->f->near;
	}
	if (hw_block_holds(ch, w->f->addr)) {
		/* The block itself whatever the filters.  */
		w->block = *ch;
		w->hit = true;
		return true;
	}
	if (!keep(w->f, ch))
		return true;
	w->ring[w->at] = *ch;
	w->at = (w->at + 1) % MAX_NEAR;
	if (w->nring < w->f->near)
		w->nring++;
	return true;
}

static void around_row(struct hw_emitter *e, const struct hw_chunk *ch)
{
	struct em_packed_row r;
	hw_block_pack(&r, ch);
	em_row_packed(e, &r);
}

/* The blocks near addr: through the allocator's walk of the blocks
   around it when no filter needs every block's state and that walk holds
   all of them; else the walk of everything.  */
static bool around_run(struct hw_session *s, struct hw_emitter *e,
		       const struct chunks_filter *f)
{
	/* (A ring of up to near blocks: `at` wraps at MAX_NEAR, and only
	   the last nring blocks before the hit are shown.)  */
	struct around_walk *w = calloc(1, sizeof *w);
	if (!w)
		return false;
	w->f = f;
	bool filtered = filters(f);
	if (!filtered)
		hw_walk_around(s, f->addr, f->near, f->near, around_one, w);
	if (filtered || !w->hit || w->nring < f->near ||
	    w->nafter < f->near) {
		*w = (struct around_walk){ .f = f };
		hw_walk_blocks(s, around_one, w);
	}
	if (w->hit) {
		size_t first = (w->at + MAX_NEAR - w->nring) % MAX_NEAR;
		for (size_t k = 0; k < w->nring && !em_failed(e); k++)
			around_row(e, &w->ring[(first + k) % MAX_NEAR]);
		around_row(e, &w->block);
		for (size_t k = 0; k < w->nafter && !em_failed(e); k++)
			around_row(e, &w->after[k]);
	}
	bool hit = w->hit;
	free(w);
	return hit;
}

static enum hw_status chunks_run(const struct hw_cmd *c)
{
	struct chunks_filter f;
	enum hw_status st = parse(c->s, c->argc, c->argv, &f);
	if (st != HW_OK)
		return st;
	/* The last two headers name what holds the block: ptmalloc's
	   chunk, jemalloc's extent (a slab of regions, or a large one),
	   tcmalloc's span.  */
	struct em_field cols[HW_NBLOCK_COLS];
	char size_label[32];
	hw_block_cols_for(c->s->alloc, cols, size_label, sizeof size_label);
	const struct em_table table = { .cols = cols, .ncols = HW_NBLOCK_COLS,
					.flags = EM_TB_LINES };
	em_table_begin(c->e, &table);
	if (f.around) {
		bool hit = around_run(c->s, c->e, &f);
		em_table_end(c->e);
		if (!hit)
			em_notef(c->e, "(0x%llx is in no block)",
				 (unsigned long long)f.addr);
		return HW_OK;
	}
	hw_walk_rows_piped(c->s, c->e,
			   filters(&f) ? print_kept_chunk : print_chunk, &f);
	em_table_end(c->e);
	if (!em_failed(c->e) && f.thread[0])
		em_notef(c->e, "(%s)", f.thread);
	/* JSON Lines has no place for a trailer; summary --json says it.  */
	if (!em_failed(c->e) && c->s->partial.places)
		em_notef(c->e, "(partial, first at 0x%llx: %s)",
			 (unsigned long long)c->s->partial.addr,
			 c->s->partial.why);
	return HW_OK;
}

static const struct hw_command_opt chunks_opts[] = {
	{ "--used", "only the chunks in use" },
	{ "--free", "only the free chunks" },
	{ "--where W[,W...]", "only the blocks in these places, as the where "
			      "column names them (e.g. tcache,fastbin)" },
	{ "--arena N", "only arena N's blocks (the arena column)" },
	{ "--thread TID", "only the blocks of the arena thread TID allocates "
			  "from (ptmalloc: its thread_arena); TID a thread id, "
			  "or a thread's number as reports show it (thread 1)" },
	{ "--min-size SIZE", "only blocks of at least SIZE usable bytes "
			     "(1024, 0x400, 4K)" },
	{ "--max-size SIZE", "only blocks of at most SIZE usable bytes" },
	{ "--around ADDR [N]", "only the block holding ADDR and the N (5) "
			       "before and after it in walk order that the "
			       "other filters keep" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_chunks = {
	.name = "chunks", .run = chunks_run,
	.args = "[--used|--free] [--where W,...] [--arena N] [--thread TID] "
		"[--min-size SIZE] [--max-size SIZE] [--around ADDR [N]]",
	.summary = "every chunk, or those of a state, place, arena or size",
	.opts = chunks_opts,
	.example = "core chunks --free --where tcache,fastbin --max-size 64 "
		   "--json",
	.needs = HW_NEED_CHUNKS,
};
