/* map.c - the map command: a picture of the heap, as SVG (map.h says
 * what it shows).
 *
 *   map [-o FILE]
 *
 * Two walks, so that memory stays that of the strips, not of the blocks:
 * the first finds the strips (contiguous runs of blocks, in walk order)
 * and counts what frag counts; the layout then sorts the strips by arena
 * and address and gives each a scale and a place; the second walk draws
 * each strip's blocks as they come, a row at a time (svg.c).  Both
 * walks deliver the same blocks in the same order, so a strip of the
 * second walk is a strip of the first; a block that is not (the target
 * changed under a --no-stop read) is counted as not drawn, never drawn in
 * the wrong place.
 *
 * With -o the SVG goes to FILE and the report says what was drawn;
 * without, the SVG is the report (with --json, the member "svg" of the
 * document, next to the same figures).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "../../report/fragrows.h"
#include "../../report/partial.h"
#include "../../report/pipe.h"
#include "../../target/target.h"
#include "../command.h"
#include "map.h"

/* Rows for the whole picture (each strip gets one at least).  */
#define MAP_MAX_ROWS 256
/* Past this many strips (a heap cut into millions of runs by damage),
   the rest are not drawn; the report says how many bytes.  */
#define MAP_MAX_STRIPS (1u << 20)

#define ARENA_GAP 12          /* above an arena's heading */
#define ARENA_HEAD 30         /* the heading's two lines */
#define STRIP_LABEL 14        /* a strip's label, above its rows */
#define STRIP_GAP 6           /* under a strip's rows */

static unsigned state_of(const struct hw_chunk *c)
{
	return c->where < HW_WHERE_COUNT ? c->where : MAP_UNKNOWN;
}

/* ---- the first walk: strips and figures ------------------------------- */

struct scan {
	struct hw_frag_row *frag;          /* [HW_FRAG_MAX_ARENAS] */
	struct map_strip *strips;
	size_t n, cap;
	uint64_t state_bytes[MAP_NSTATES]; /* what the strips hold */
	bool oom;
};

/* A block extends the last strip when it starts where that ends, in the
   same arena and of the same kind; otherwise it starts a strip.  */
static bool scan_chunk(void *cookie, const struct hw_chunk *c)
{
	struct scan *sc = cookie;
	hw_frag_add(sc->frag, c);
	uint64_t end = c->chunk + c->chunk_size;
	if (!c->chunk_size || end < c->chunk)
		return true;
	const struct hw_place *p = hw_place(c->where);
	bool mm = p->flags & HW_PLACE_MMAPPED;
	/* Address space with no memory behind it is drawn collapsed.  */
	bool ret = p->reserve == HW_RESERVE_RETAINED;
	struct map_strip *last = sc->n ? &sc->strips[sc->n - 1] : NULL;
	if (last && last->end == c->chunk && last->arena == c->arena &&
	    last->mmapped == mm && last->collapsed == ret) {
		last->end = end;
		last->nchunks++;
		sc->state_bytes[state_of(c)] += c->chunk_size;
		return true;
	}
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? 2 * sc->cap : 64;
		struct map_strip *v = cap <= MAP_MAX_STRIPS ?
			realloc(sc->strips, cap * sizeof *v) : NULL;
		if (!v) {      /* past the limit: the drawing counts it */
			sc->oom |= cap <= MAP_MAX_STRIPS;
			return true;
		}
		sc->strips = v;
		sc->cap = cap;
	}
	sc->strips[sc->n++] = (struct map_strip){
		.start = c->chunk, .end = end, .nchunks = 1,
		.arena = c->arena, .mmapped = mm, .collapsed = ret };
	sc->state_bytes[state_of(c)] += c->chunk_size;
	return true;
}

/* ---- the layout --------------------------------------------------------- */

/* By arena (jemalloc's -1, blocks of no arena, last), then address.  */
static int strip_cmp(const void *a, const void *b)
{
	const struct map_strip *x = *(const struct map_strip *const *)a;
	const struct map_strip *y = *(const struct map_strip *const *)b;
	uint32_t ax = (uint32_t)x->arena, ay = (uint32_t)y->arena;
	if (ax != ay)
		return ax < ay ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static uint32_t rows_at(const struct map_strip *st, unsigned shift)
{
	return (uint32_t)(((st->end - st->start - 1) >> shift) / MAP_WIDTH + 1);
}

/* The finest power-of-two scale that fits the strip in maxrows rows.  */
static void scale(struct map_strip *st, uint32_t maxrows)
{
	unsigned shift = MAP_MIN_SHIFT;
	while (shift < 63 && ((st->end - st->start - 1) >> shift) / MAP_WIDTH
			     >= maxrows)
		shift++;
	st->shift = (uint8_t)shift;
	st->rows = rows_at(st, shift);
}

/* One scale for the whole picture, so that a strip's height says its
   size: the finest power of two bytes a pixel at which every strip fits
   in the row budget, or at which each strip takes one row when there
   are more strips than rows.  A collapsed strip (retained address
   space) takes one row at a scale of its own.  Returns the picture's
   scale.  */
static unsigned scale_all(struct map_strip *strips, size_t n)
{
	unsigned shift = MAP_MIN_SHIFT;
	for (;; shift++) {
		uint64_t total = 0;
		for (size_t i = 0; i < n; i++)
			total += strips[i].collapsed
				 ? 1 : rows_at(&strips[i], shift);
		/* More strips than rows: once each takes one row, a coarser
		   scale shrinks nothing (it would only misstate it).  */
		if (total <= MAP_MAX_ROWS || total == n || shift == 63)
			break;
	}
	for (size_t i = 0; i < n; i++) {
		if (strips[i].collapsed) {
			scale(&strips[i], 1);
		} else {
			strips[i].shift = (uint8_t)shift;
			strips[i].rows = rows_at(&strips[i], shift);
		}
	}
	return shift;
}

/* frag's figures of one arena or all: what is used and free ("used
   1.2 MiB, free 300 KiB in 12 blocks, ...").  */
static void frag_free_line(char *buf, size_t len, const char *lead,
			   const struct hw_frag_row *r)
{
	char u[32], f[32], l[32], c[32], cached[64] = "";
	if (r->cached)
		snprintf(cached, sizeof cached, " (%s in thread caches)",
			 hw_human(c, sizeof c, r->cached));
	snprintf(buf, len, "%sused %s, free %s in %" PRIu64 " block%s%s, "
		 "largest free %s%s, free%% %.1f%%, frag %.1f%%", lead,
		 hw_human(u, sizeof u, r->used), hw_human(f, sizeof f, r->free),
		 r->nfree, r->nfree == 1 ? "" : "s", cached,
		 hw_human(l, sizeof l, r->largest),
		 r->cached ? " outside them" : "",
		 100 * hw_frag_free_ratio(r), 100 * hw_frag_scatter(r));
}

/* Append to buf (len bytes, *at used), cutting what does not fit.  */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	if (*at >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

/* The page-level reserves the allocator keeps (reserve_places), each by
   its place's name and counted in its column (ptmalloc's top;
   jemalloc's unused extents; tcmalloc's free spans), and, for an
   allocator that carves pages into slots (hw_allocator_ops.slabs:
   jemalloc's slabs, tcmalloc's spans), how full they are.  false (buf
   empty) when there is nothing to say (mallocng).  */
static bool frag_reserve_line(char *buf, size_t len, const char *lead,
			      const struct hw_frag_row *r,
			      const struct hw_allocator_ops *a)
{
	size_t at = 0;
	const char *sep = lead;
	char h[32];
	buf[0] = '\0';
	for (unsigned w = 0; w < HW_WHERE_COUNT; w++) {
		if (!(a->reserve_places & HW_PLACE_BIT(w)))
			continue;
		const struct hw_place *p = hw_place(w);
		append(buf, len, &at, "%s%s %s", sep, p->name,
		       hw_human(h, sizeof h, r->reserve[p->reserve]));
		sep = ", ";
	}
	if (a->slabs)
		append(buf, len, &at, "%sslabs %.1f%% used", sep,
		       100 * hw_frag_slab_util(r));
	return at > 0;
}

/* The target as summary names it.  */
static void target_name(const struct hw_session *s, char *buf, size_t len)
{
	const struct hw_target *t = s->target;
	const char *exe = s->exe ? s->exe : t->exe;
	if (t->live)
		snprintf(buf, len, "pid %d (%s)", t->live->pid, exe ? exe : "?");
	else if (t->is_process)
		snprintf(buf, len, "%s (%s)", t->path ? t->path : "?",
			 exe ? exe : "?");
	else
		snprintf(buf, len, "%s%s%s%s",
			 s->core_path ? s->core_path : t->path ? t->path : "?",
			 exe ? " (core of " : "", exe ? exe : "",
			 exe ? ")" : "");
}

struct layout {
	struct map_strip **order;   /* strips by arena and address */
	uint32_t height;
	unsigned scale;             /* log2 of the picture's bytes a pixel
				       (collapsed strips aside) */
	bool collapsed;             /* some strip is */
	uint64_t rows;
};

/* Place every strip under its arena's heading; returns false when out
   of memory.  */
static bool lay_out(struct scan *sc, unsigned nstates, struct layout *lo)
{
	memset(lo, 0, sizeof *lo);
	lo->order = malloc((sc->n ? sc->n : 1) * sizeof *lo->order);
	if (!lo->order)
		return false;
	for (size_t i = 0; i < sc->n; i++)
		lo->order[i] = &sc->strips[i];
	qsort(lo->order, sc->n, sizeof *lo->order, strip_cmp);
	lo->scale = scale_all(sc->strips, sc->n);
	uint64_t y = map_svg_head_height(nstates);
	for (size_t i = 0; i < sc->n; i++) {
		struct map_strip *st = lo->order[i];
		if (i == 0 || st->arena != lo->order[i - 1]->arena)
			y += ARENA_GAP + ARENA_HEAD;
		y += STRIP_LABEL;
		/* A picture taller than this is not drawn by anyone; its
		   rows are still in bounds of the numbers written.  */
		st->y = y < UINT32_MAX / 2 ? (uint32_t)y : UINT32_MAX / 2;
		y += (uint64_t)st->rows * MAP_ROW_PITCH + STRIP_GAP;
		lo->rows += st->rows;
		lo->collapsed |= st->collapsed;
	}
	y += 8;
	lo->height = y < UINT32_MAX / 2 ? (uint32_t)y : UINT32_MAX / 2;
	return true;
}

/* ---- the second walk: drawing ------------------------------------------- */

struct draw {
	struct map_svg *w;
	struct map_strip *strips;
	size_t n;
	size_t next;         /* the strip to open next, in walk order */
	bool open;           /* strips[next - 1] is being drawn */
	uint32_t row;        /* its row in w */
	const char *kind;    /* what a strip is, unless mmapped */
	uint64_t undrawn;    /* bytes of blocks that fit no strip */
};

static void close_strip(struct draw *d)
{
	if (!d->open)
		return;
	map_svg_row(d->w, &d->strips[d->next - 1], d->row);
	map_svg_strip_end(d->w);
	d->open = false;
}

static bool fits(const struct map_strip *st, uint64_t a, uint64_t b)
{
	return a >= st->start && b <= st->end;
}

static bool draw_chunk(void *cookie, const struct hw_chunk *c)
{
	struct draw *d = cookie;
	uint64_t a = c->chunk, b = c->chunk + c->chunk_size;
	if (!c->chunk_size || b < a)
		return true;
	if (!d->open || !fits(&d->strips[d->next - 1], a, b)) {
		if (d->next == d->n || !fits(&d->strips[d->next], a, b)) {
			d->undrawn += c->chunk_size;
			return true;
		}
		close_strip(d);
		const struct map_strip *st = &d->strips[d->next++];
		map_svg_strip_begin(d->w, st, st->mmapped ? "mmapped"
					      : st->collapsed ? "retained"
					      : d->kind);
		d->open = true;
		d->row = 0;
	}
	const struct map_strip *st = &d->strips[d->next - 1];
	unsigned state = state_of(c);
	uint64_t bpp = (uint64_t)1 << st->shift;
	uint64_t p = (a - st->start) >> st->shift;
	uint64_t last = (b - 1 - st->start) >> st->shift;
	for (bool first = true; p <= last; p++, first = false) {
		/* The block's bytes in pixel p.  */
		uint64_t lo = st->start + (p << st->shift);
		uint64_t from = a > lo ? a : lo;
		uint64_t to = b - lo > bpp ? lo + bpp : b;
		uint32_t row = (uint32_t)(p / MAP_WIDTH);
		if (row < d->row) {      /* a row already written */
			d->undrawn += to - from;
			continue;
		}
		if (row > d->row) {
			map_svg_row(d->w, st, d->row);
			d->row = row;
		}
		map_svg_add(d->w, (uint32_t)(p % MAP_WIDTH), state, to - from,
			    first);
	}
	return !em_failed(d->w->out);
}

/* ---- the command ---------------------------------------------------------- */

static enum hw_status parse(struct hw_session *s, int argc, char *const argv[],
			    const char **output)
{
	*output = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i == argc)
				return hw_error(s, HW_USAGE, "map: %s needs a "
						"file name", a);
			*output = argv[i];
		} else if (!strncmp(a, "--output=", 9) && a[9]) {
			*output = a + 9;
		} else {
			return hw_error(s, HW_USAGE, "map: unknown argument "
					"'%s' (-o FILE writes the SVG there)", a);
		}
	}
	return HW_OK;
}

/* What was drawn: the report with -o; without, JSON's members next to
   "svg" (text has only the SVG then).  */
static const struct em_section S_MAP = { .label_width = 8 };
static const struct em_field F_WROTE = { .key = "written", .label = "wrote:" };
static const struct em_field F_STRIPS = {
	.key = "strips", .label = "drawn:", .noun = "strip" };
static const struct em_field F_ROWS = {
	.key = "rows", .join = ", ", .noun = "row" };
static const struct em_field F_RECTS = {
	.key = "rects", .join = ", ", .noun = "rectangle" };
static const struct em_field F_BYTES = {
	.key = "bytes", .join = ", ", .form = EM_T_HUMAN };
/* One scale for the picture (collapsed strips aside): text says it once,
   JSON keeps both ends.  */
static const struct em_field F_MIN_BPP = {
	.key = "min_bytes_per_pixel", .label = "scale:", .form = EM_T_HUMAN,
	.post = " a pixel" };
static const struct em_field F_MAX_BPP = {
	.key = "max_bytes_per_pixel", .only = EM_JSON_ONLY };
static const struct em_field F_UNDRAWN = {
	.key = "undrawn_bytes", .label = "not drawn:", .form = EM_T_HUMAN,
	.post = " (blocks outside the strips the first walk found)" };
static const struct em_section S_STATES = {
	.key = "states", .only = EM_JSON_ONLY };

static void report(struct hw_session *s, struct hw_emitter *e, bool json_only,
		   const char *output, const struct scan *sc,
		   const struct layout *lo, const struct draw *d)
{
	enum em_only only = json_only ? EM_JSON_ONLY : EM_BOTH;
	uint64_t bytes = 0;
	for (unsigned k = 0; k < MAP_NSTATES; k++)
		bytes += sc->state_bytes[k];
	em_section_begin(e, &S_MAP);
	if (output)
		em_kv(e, &F_WROTE, ev_str(output));
	em_kv(e, &F_STRIPS, ev_only(ev_u64(sc->n), only));
	em_kv(e, &F_ROWS, ev_only(ev_u64(lo->rows), only));
	em_kv(e, &F_RECTS, ev_only(ev_u64(d->w->rects), only));
	em_kv(e, &F_BYTES, ev_only(ev_u64(bytes), only));
	em_kv(e, &F_MIN_BPP, ev_only(ev_u64((uint64_t)1 << lo->scale), only));
	em_kv(e, &F_MAX_BPP, ev_only(ev_u64((uint64_t)1 << lo->scale), only));
	em_kv(e, &F_UNDRAWN, ev_only(ev_u64(d->undrawn),
				     d->undrawn ? only : EM_JSON_ONLY));
	em_section_end(e);
	em_section_begin(e, &S_STATES);
	for (unsigned k = 0; k < MAP_NSTATES; k++) {
		if (!sc->state_bytes[k])
			continue;
		const struct em_field f = { .key = map_state_name(k) };
		em_kv(e, &f, ev_u64(sc->state_bytes[k]));
	}
	em_section_end(e);
	if (json_only)
		hw_emit_partial_members(s, e);
	else
		hw_emit_partial(s, e);
}

/* The SVG: head, arena headings, then the second walk.  */
static void draw(struct hw_session *s, struct map_svg *w, struct scan *sc,
		 const struct layout *lo, struct draw *d)
{
	const char *version = s->alloc->version(s->alloc_state);
	char target[1024], alloc[256], total[256], reserve[256];
	char scale_line[256], partial[400];
	target_name(s, target, sizeof target);
	struct hw_frag_row sum = { 0 };
	size_t narenas = 0;
	for (size_t a = 0; a < HW_FRAG_MAX_ARENAS; a++) {
		hw_frag_sum(&sum, &sc->frag[a]);
		narenas += sc->frag[a].any;
	}
	uint64_t nchunks = 0;
	for (size_t i = 0; i < sc->n; i++)
		nchunks += sc->strips[i].nchunks;
	snprintf(alloc, sizeof alloc, "%s %s: %zu arena%s, %" PRIu64
		 " %s%s in %zu strip%s", s->alloc->name,
		 version ? version : "", narenas, narenas == 1 ? "" : "s",
		 nchunks, w->noun, nchunks == 1 ? "" : "s", sc->n,
		 sc->n == 1 ? "" : "s");
	frag_free_line(total, sizeof total, "all arenas: ", &sum);
	bool has_reserve_line = frag_reserve_line(reserve, sizeof reserve,
						  "all arenas: ", &sum,
						  s->alloc);
	char px[32];
	snprintf(scale_line, sizeof scale_line, "rows of %d pixels, %s a pixel,"
		 " one scale for all%s", MAP_WIDTH,
		 hw_human(px, sizeof px, (uint64_t)1 << lo->scale),
		 lo->collapsed ? " but retained address space: one row a run, "
		 "not to scale" : "");
	struct map_head h = {
		.target = target, .allocator = alloc,
		.lines = { total, has_reserve_line ? reserve : NULL,
			   scale_line,
			   "a pixel shows the state of most of its bytes, "
			   "paler under 7/8 of them, palest under 5/8; hover "
			   "for the detail", NULL },
		.state_bytes = sc->state_bytes, .height = lo->height,
	};
	if (s->partial.places) {
		snprintf(partial, sizeof partial, "partial: the walk could not "
			 "cover the whole heap, first at 0x%" PRIx64 ": %s",
			 s->partial.addr, s->partial.why);
		h.lines[4] = partial;
	}
	map_svg_begin(w, &h);
	for (size_t i = 0; i < sc->n; i++) {
		const struct map_strip *st = lo->order[i];
		if (i > 0 && st->arena == lo->order[i - 1]->arena)
			continue;
		const struct hw_frag_row *r =
			&sc->frag[(uint32_t)st->arena % HW_FRAG_MAX_ARENAS];
		char head[256], detail[256], lead[64];
		if (st->arena < 0)
			snprintf(lead, sizeof lead, "no arena: ");
		else
			snprintf(lead, sizeof lead, "arena %" PRId32 ": ",
				 st->arena);
		frag_free_line(head, sizeof head, lead, r);
		frag_reserve_line(detail, sizeof detail, "", r, s->alloc);
		map_svg_heading(w, st->y - STRIP_LABEL - ARENA_HEAD + 12, head,
				detail);
	}
	const char *strip = s->alloc->maps_nouns->strip;
	*d = (struct draw){ .w = w, .strips = sc->strips, .n = sc->n,
			    .kind = strip ? strip : "heap" };
	hw_walk_chunks_piped(s, draw_chunk, d);
	close_strip(d);
	map_svg_end(w);
}

static enum hw_status map_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	int argc = c->argc;
	char *const *argv = c->argv;
	const char *output;
	enum hw_status st = parse(s, argc, argv, &output);
	if (st != HW_OK)
		return st;
	/* Tens of KB of SVG on a terminal help nobody.  */
	if (!output && c->terminal)
		return hw_error(s, HW_USAGE, "map draws an SVG picture: give "
				"-o FILE (e.g. -o heap.svg) and open it in a web "
				"browser, or redirect the output");
	struct scan sc = { 0 };
	struct layout lo = { 0 };
	struct map_svg w = { 0 };
	struct hw_emitter *out = e;
	sc.frag = calloc(HW_FRAG_MAX_ARENAS, sizeof *sc.frag);
	if (!sc.frag || !map_svg_init(&w, NULL, s->alloc->block_noun
					       ? "block" : "chunk"))
		goto oom;
	if (output) {
		int err = 0;
		out = em_open_file(output, &err);
		if (!out) {
			out = e;
			st = hw_error(s, HW_BAD_TARGET, "map: cannot write %s: %s",
				      output, strerror(err));
			goto done;
		}
	}
	w.out = out;
	hw_walk_chunks_piped(s, scan_chunk, &sc);
	unsigned nstates = 0;
	for (unsigned k = 0; k < MAP_NSTATES; k++)
		nstates += sc.state_bytes[k] != 0;
	if (sc.oom || !lay_out(&sc, nstates, &lo))
		goto oom;
	struct draw d;
	em_doc_begin(e);
	draw(s, &w, &sc, &lo, &d);
	if (out != e) {
		bool ok = em_close(out);
		out = e;
		if (!ok) {
			st = hw_error(s, HW_BAD_TARGET, "map: write error on %s",
				      output);
			em_doc_end(e);
			goto done;
		}
	}
	report(s, e, !output, output, &sc, &lo, &d);
	em_doc_end(e);
	goto done;
oom:
	st = hw_error(s, HW_BAD_TARGET, "out of memory");
done:
	if (out != e)
		em_close(out);
	map_svg_release(&w);
	free(lo.order);
	free(sc.strips);
	free(sc.frag);
	return st;
}

static const struct hw_command_opt map_opts[] = {
	{ "-o FILE", "write the SVG to FILE (default: standard output, "
		     "unless that is a terminal)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_map = {
	.name = "map", .run = map_run, .args = "[-o FILE]",
	.summary = "a picture of the heap (SVG): each arena's heaps or "
		   "extents in address order, coloured by state",
	.opts = map_opts, .example = "core map -o heap.svg",
	.needs = HW_NEED_CHUNKS,
};
