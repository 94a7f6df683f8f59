/* diff.c - the diff command (diff BASE): what grew since an earlier snapshot
 * of the same program, jeprof --base in spirit.
 *
 * Both sides are what `sizes` counts (report/sizeprofile.h): the
 * blocks in use and free per size class of the allocator and per arena;
 * then per C++ class (types.c) and, asked for with --leaks, the new
 * leaks (leaks.c).  The base is another core, opened with this
 * session's options, or up to three files saved from one (json.c):
 * `sizes --json`, `sizes --by=type --json`, `leaks --json`.  The first
 * byte tells them apart ('{', or nothing at all: a leaks --json that
 * found no leak, is JSON; anything else is given to the core reader,
 * which also knows compressed cores).  Each part of the report is there
 * when the base has its half.
 *
 * Rows are sorted by the growth of the bytes in use, the largest first,
 * shrinkage last; rows where nothing changed are left out of both forms
 * and counted.  Arenas are matched by address when both sides are one
 * process (ptmalloc numbers its arenas newest first, so an index names
 * another arena once a thread made one), by age when the addresses are
 * another process's (main with main, thread arenas in the order they
 * were made), by index where there are no addresses (jemalloc); the
 * report says which.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../alloc/alloc.h"
#include "../../emit/emit.h"
#include "../../report/partial.h"
#include "../../target/target.h"
#include "diff.h"

/* A saved `sizes --json` is small (a few hundred classes and arenas);
   a `leaks --json` is some 130 bytes a leak: 1 GiB is 8M leaks.  */
#define MAX_JSON_BYTES ((size_t)1 << 30)

/* One row of the report: a class or an arena, before and after.  */
struct drow {
	uint64_t min, max;           /* classes */
	int64_t arena, base_arena;   /* arenas: index in NEW / BASE, -2 none */
	uint64_t addr;
	uint64_t b_used, b_used_bytes, b_free, b_free_bytes;
	uint64_t a_used, a_used_bytes, a_free, a_free_bytes;
};

#define NO_ARENA (-2)

static bool unchanged(const struct drow *r)
{
	return r->b_used == r->a_used && r->b_used_bytes == r->a_used_bytes &&
	       r->b_free == r->a_free && r->b_free_bytes == r->a_free_bytes;
}

/* By growth of the bytes in use, the largest first; then of the free
   bytes; then by size (or arena) for a stable order.  */
static int drow_cmp(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	int c = diff_growth_cmp(x->b_used_bytes, x->a_used_bytes,
				y->b_used_bytes, y->a_used_bytes);
	if (!c)
		c = diff_growth_cmp(x->b_free_bytes, x->a_free_bytes,
				    y->b_free_bytes, y->a_free_bytes);
	if (c)
		return c;
	if (x->max != y->max)
		return x->max < y->max ? -1 : 1;
	int64_t ax = x->arena != NO_ARENA ? x->arena : x->base_arena;
	int64_t ay = y->arena != NO_ARENA ? y->arena : y->base_arena;
	return ax < ay ? -1 : ax > ay;
}

/* ---- reading the base -------------------------------------------------- */

/* The first byte that is not white space; -2 when there is none (a
   `leaks --json` that found no leak); -1 unreadable (the core reader
   then says why).  */
static int first_byte(const char *path)
{
	/* A regular file only: a FIFO would block (and /dev/null read as
	   an empty report); the core reader names what else it is.  */
	int fd = hw_open_regular(path);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int c;
	do
		c = fgetc(f);
	while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
	bool err = ferror(f);
	fclose(f);
	return err ? -1 : c == EOF ? -2 : c;
}

static enum hw_status base_from_json(struct hw_session *s, const char *path,
				     struct diff_base *b, const char **what)
{
	int fd = hw_open_regular(path);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return hw_error(s, HW_USAGE, "diff: cannot read '%s': %s",
				path, hw_open_regular_why(path, err));
	}
	/* Read all of it, the buffer doubling up to the limit.  */
	char *text = NULL;
	size_t len = 0, cap = 0;
	bool more = false, oom = false;
	for (;;) {
		if (len == cap) {
			if (cap == MAX_JSON_BYTES) {
				more = fgetc(f) != EOF;
				break;
			}
			size_t ncap = cap ? 2 * cap : (size_t)64 << 10;
			char *n = realloc(text, ncap);
			if (!n) {
				oom = true;
				break;
			}
			text = n;
			cap = ncap;
		}
		size_t got = fread(text + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	bool err = ferror(f);
	fclose(f);
	if (oom) {
		free(text);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	if (err || more) {
		free(text);
		return hw_error(s, HW_USAGE, "diff: '%s': %s", path, err
				? "read error" : "larger than saved JSON "
				"diff reads (1 GiB)");
	}
	char why[160];
	bool ok = diff_parse_json(text, len, b, what, why, sizeof why);
	free(text);
	if (!ok)
		return hw_error(s, HW_USAGE, "diff: '%s' is not a saved `sizes "
				"--json`, `sizes --by=type --json` or `leaks "
				"--json`: %s", path, why);
	return HW_OK;
}

/* Everything a core can tell: sizes, classes, and (asked for: the
   scan is the expensive part) its leaks.  */
static enum hw_status base_from_core(struct hw_session *s, const char *path,
				     struct diff_base *b, bool leaks)
{
	struct hw_session *bs;
	enum hw_status st = hw_session_open_like(s, path, &bs);
	if (st == HW_OK) {
		st = hw_size_profile(bs, &b->p);
		if (st == HW_OK)
			st = diff_type_profile(bs, &b->names, &b->types,
					       &b->ntypes);
		if (st == HW_OK && leaks)
			st = diff_collect_leaks(bs, &b->names, &b->leaks);
		if (st == HW_OK)
			st = diff_site_profile(bs, &b->sites, &b->nsites,
					       &b->has_sites);
		if (st == HW_OK && atomic_load(&bs->oom))
			st = hw_error(bs, HW_BAD_TARGET, "out of memory");
		snprintf(b->allocator, sizeof b->allocator, "%s",
			 bs->alloc->name);
		b->partial = bs->partial.places > 0;
		b->has_sizes = b->has_arenas = b->has_types = true;
		b->has_leaks = b->leak_heads = leaks;
	}
	if (st != HW_OK) {
		/* Most errors name the file already: name it once.  */
		const char *why = hw_session_errmsg(bs);
		size_t n = strlen(path);
		if (why[0] == '\'' && !strncmp(why + 1, path, n) &&
		    why[n + 1] == '\'')
			hw_error(s, st, "diff: base %s", why);
		else
			hw_error(s, st, "diff: base '%s': %s", path, why);
	}
	hw_session_close(bs);
	return st;
}

/* ---- matching ---------------------------------------------------------- */

static int class_max_cmp(const void *a, const void *b)
{
	const struct hw_class_total *x = a, *y = b;
	return x->max < y->max ? -1 : x->max > y->max;
}

/* The base's rows in this allocator's classes: a base of exact sizes
   (sizes --exact) folds into them; rows of classes stay as they are.  */
static void fold_base(struct hw_session *s, struct hw_size_profile *p)
{
	if (s->alloc->size_class)
		for (size_t i = 0; i < p->nclasses; i++) {
			struct hw_class_total *c = &p->classes[i];
			uint64_t min, max = s->alloc->size_class(
				s->alloc_state, c->max, &min);
			c->max = max;
			c->min = min;
		}
	if (p->nclasses)
		qsort(p->classes, p->nclasses, sizeof *p->classes,
		      class_max_cmp);
	size_t n = 0;
	for (size_t i = 0; i < p->nclasses; i++) {
		struct hw_class_total *c = &p->classes[i];
		if (n && p->classes[n - 1].max == c->max) {
			struct hw_class_total *d = &p->classes[n - 1];
			d->used += c->used;
			d->used_bytes += c->used_bytes;
			d->free += c->free;
			d->free_bytes += c->free_bytes;
			if (c->min < d->min)
				d->min = c->min;
			continue;
		}
		p->classes[n++] = *c;
	}
	p->nclasses = n;
}

/* Classes of both sides, merged by their largest size (both ascend).  */
static struct drow *class_rows(const struct hw_size_profile *b,
			       const struct hw_size_profile *a, size_t *nrows)
{
	struct drow *rows = calloc(a->nclasses + b->nclasses + 1, sizeof *rows);
	size_t i = 0, k = 0, n = 0;
	if (!rows)
		return NULL;
	while (i < b->nclasses || k < a->nclasses) {
		const struct hw_class_total *x = i < b->nclasses
						 ? &b->classes[i] : NULL;
		const struct hw_class_total *y = k < a->nclasses
						 ? &a->classes[k] : NULL;
		if (x && y && x->max != y->max) {
			if (x->max < y->max)
				y = NULL;
			else
				x = NULL;
		}
		struct drow *r = &rows[n++];
		r->arena = r->base_arena = NO_ARENA;
		r->min = y ? y->min : x->min;
		r->max = y ? y->max : x->max;
		if (x) {
			r->b_used = x->used;
			r->b_used_bytes = x->used_bytes;
			r->b_free = x->free;
			r->b_free_bytes = x->free_bytes;
			i++;
		}
		if (y) {
			r->a_used = y->used;
			r->a_used_bytes = y->used_bytes;
			r->a_free = y->free;
			r->a_free_bytes = y->free_bytes;
			k++;
		}
	}
	*nrows = n;
	return rows;
}

/* How the arenas of the two sides were paired (said in the report).  */
enum pairing {
	PAIR_ADDRESS,   /* the same process: an arena keeps its address */
	PAIR_AGE,       /* another process (ASLR): main with main, thread
			   arenas by the order they were made */
	PAIR_INDEX,     /* no addresses (jemalloc): arena N with arena N */
};
static const char *const pairing_names[] = { "address", "age", "index" };

/* Same process: the main arenas (index 0) have one address.  */
static enum pairing choose_pairing(const struct hw_size_profile *b,
				   const struct hw_size_profile *a)
{
	uint64_t amain = 0, bmain = 0;
	for (size_t k = 0; k < a->narenas; k++)
		if (a->arenas[k].arena == 0)
			amain = a->arenas[k].addr;
	for (size_t i = 0; i < b->narenas; i++)
		if (b->arenas[i].arena == 0)
			bmain = b->arenas[i].addr;
	if (!amain || !bmain)
		return PAIR_INDEX;
	return amain == bmain ? PAIR_ADDRESS : PAIR_AGE;
}

/* An arena's age rank among its side's thread arenas: ptmalloc lists
   them newest first after the main arena (index 0), so the oldest has
   the highest index and rank 0.  The main arena and the blocks of no
   arena (-1) keep their index.  */
static int64_t age_rank(const struct hw_size_profile *p,
			const struct hw_arena_total *x)
{
	if (x->arena <= 0)
		return x->arena;
	int32_t last = 0;
	for (size_t i = 0; i < p->narenas; i++)
		if (p->arenas[i].arena > last)
			last = p->arenas[i].arena;
	return 1 + (last - x->arena);
}

static bool same_arena(enum pairing how, const struct hw_size_profile *bp,
		       const struct hw_arena_total *x,
		       const struct hw_size_profile *ap,
		       const struct hw_arena_total *y)
{
	switch (how) {
	case PAIR_ADDRESS:
		if (x->addr && y->addr)
			return x->addr == y->addr;
		return x->arena == y->arena;
	case PAIR_AGE:
		return age_rank(bp, x) == age_rank(ap, y);
	case PAIR_INDEX:
		break;
	}
	return x->arena == y->arena;
}

/* Arenas of both sides: NEW's in order, each with its match in BASE,
   then the base's arenas NEW does not have.  Quadratic in the arenas,
   which are a few hundred at most.  */
static struct drow *arena_rows(const struct hw_size_profile *b,
			       const struct hw_size_profile *a, size_t *nrows,
			       enum pairing *how)
{
	*how = choose_pairing(b, a);
	struct drow *rows = calloc(a->narenas + b->narenas + 1, sizeof *rows);
	bool *taken = calloc(b->narenas + 1, sizeof *taken);
	size_t n = 0;
	if (!rows || !taken) {
		free(rows);
		free(taken);
		return NULL;
	}
	for (size_t k = 0; k < a->narenas; k++) {
		const struct hw_arena_total *y = &a->arenas[k];
		struct drow *r = &rows[n++];
		r->arena = y->arena;
		r->base_arena = NO_ARENA;
		r->addr = y->addr;
		r->a_used = y->used;
		r->a_used_bytes = y->used_bytes;
		r->a_free = y->free;
		r->a_free_bytes = y->free_bytes;
		for (size_t i = 0; i < b->narenas; i++) {
			const struct hw_arena_total *x = &b->arenas[i];
			if (taken[i] || !same_arena(*how, b, x, a, y))
				continue;
			taken[i] = true;
			r->base_arena = x->arena;
			r->b_used = x->used;
			r->b_used_bytes = x->used_bytes;
			r->b_free = x->free;
			r->b_free_bytes = x->free_bytes;
			break;
		}
	}
	for (size_t i = 0; i < b->narenas; i++) {
		const struct hw_arena_total *x = &b->arenas[i];
		if (taken[i])
			continue;
		struct drow *r = &rows[n++];
		r->arena = NO_ARENA;
		r->base_arena = x->arena;
		r->addr = x->addr;
		r->b_used = x->used;
		r->b_used_bytes = x->used_bytes;
		r->b_free = x->free;
		r->b_free_bytes = x->free_bytes;
	}
	free(taken);
	*nrows = n;
	return rows;
}

/* ---- output ------------------------------------------------------------ */

/* The free memory's columns after DIFF_USED_COLS (change_vals()).  */
#define CHANGE_FREE_COLS \
	{ .key = "free_before", .only = EM_JSON_ONLY }, \
	{ .key = "free_after", .only = EM_JSON_ONLY }, \
	{ .key = "free_delta", .only = EM_JSON_ONLY }, \
	{ .key = "free_bytes_before", .only = EM_JSON_ONLY }, \
	{ .key = "free_bytes_after", .only = EM_JSON_ONLY }, \
	{ .key = "free_bytes_delta", .label = "+/- free bytes", .width = 15 }

static const struct em_field F_PAIRING = {
	.key = "arena_pairing", .only = EM_JSON_ONLY };

/* The class table; the arena table shares its columns after the first
   (arena, addr in place of size, min).  */
static const struct em_field CLASS_DIFF_COLS[] = {
	{ .key = "size", .label = "size (class)", .width = 23 },
	{ .key = "min", .only = EM_JSON_ONLY },
	DIFF_USED_COLS,
	CHANGE_FREE_COLS,
};
#define NDIFF_COLS (sizeof CLASS_DIFF_COLS / sizeof CLASS_DIFF_COLS[0])

static const struct em_field ARENA_DIFF_COLS[NDIFF_COLS + 1] = {
	{ .key = "arena", .label = "arena", .width = 6, .none = "-" },
	{ .key = "base_arena", .label = "(base)", .width = 6, .none = "-" },
	{ .key = "addr", .label = "address", .width = -18, .none = "",
	  .form = EM_T_HEX0, .digits = 16 },
	DIFF_USED_COLS,
	CHANGE_FREE_COLS,
};

static const struct em_table CLASS_DIFF_TABLE = {
	.key = "classes", .cols = CLASS_DIFF_COLS, .ncols = NDIFF_COLS };
static const struct em_table ARENA_DIFF_TABLE = {
	.key = "arenas", .cols = ARENA_DIFF_COLS, .ncols = NDIFF_COLS + 1 };

/* Text of the signed columns; lives until the row is emitted.  */
struct row_text {
	char used[24], bytes[40], free_bytes[40];
};

/* The values after a row's first columns (from "used_delta" on).  */
static void change_vals(struct em_val *v, const struct drow *r,
			struct row_text *t)
{
	int64_t du = diff_delta(r->b_used, r->a_used);
	int64_t db = diff_delta(r->b_used_bytes, r->a_used_bytes);
	int64_t dfb = diff_delta(r->b_free_bytes, r->a_free_bytes);
	v[0] = ev_text(ev_i64(du),
		       diff_signed_count(t->used, sizeof t->used, du));
	v[1] = ev_text(ev_i64(db),
		       diff_signed_human(t->bytes, sizeof t->bytes, db));
	v[2] = ev_u64(r->b_used);
	v[3] = ev_u64(r->a_used);
	v[4] = ev_u64(r->b_used_bytes);
	v[5] = ev_u64(r->a_used_bytes);
	v[6] = ev_u64(r->b_free);
	v[7] = ev_u64(r->a_free);
	v[8] = ev_i64(diff_delta(r->b_free, r->a_free));
	v[9] = ev_u64(r->b_free_bytes);
	v[10] = ev_u64(r->a_free_bytes);
	v[11] = ev_text(ev_i64(dfb), diff_signed_human(t->free_bytes,
						       sizeof t->free_bytes,
						       dfb));
}

/* Leave out the unchanged rows and sort the rest; returns how many were
   left out.  */
static size_t keep_changed(struct drow *rows, size_t *n)
{
	size_t k = 0, total = *n;
	for (size_t i = 0; i < total; i++)
		if (!unchanged(&rows[i]))
			rows[k++] = rows[i];
	if (k)
		qsort(rows, k, sizeof *rows, drow_cmp);
	*n = k;
	return total - k;
}

static const struct em_field F_BASE = { .key = "base", .only = EM_JSON_ONLY };
static const struct em_field F_BASE_KIND = {
	.key = "base_kind", .only = EM_JSON_ONLY };
static const struct em_field F_ALLOCATOR = {
	.key = "allocator", .only = EM_JSON_ONLY };
static const struct em_field F_BASE_PARTIAL = {
	.key = "base_partial", .only = EM_JSON_ONLY };
static const struct em_field F_UNCHANGED_CLASSES = {
	.key = "unchanged_classes", .only = EM_JSON_ONLY };
static const struct em_field F_UNCHANGED_ARENAS = {
	.key = "unchanged_arenas", .only = EM_JSON_ONLY };
static const struct em_section S_TOTALS = {
	.key = "totals", .only = EM_JSON_ONLY };
static const struct em_field TOTAL_FIELDS[12] = {
	{ .key = "used_before" }, { .key = "used_after" },
	{ .key = "used_delta" }, { .key = "used_bytes_before" },
	{ .key = "used_bytes_after" }, { .key = "used_bytes_delta" },
	{ .key = "free_before" }, { .key = "free_after" },
	{ .key = "free_delta" }, { .key = "free_bytes_before" },
	{ .key = "free_bytes_after" }, { .key = "free_bytes_delta" },
};

static void total_line(struct hw_emitter *e, const char *label,
		       uint64_t before, uint64_t after, uint64_t bbefore,
		       uint64_t bafter, const char *noun)
{
	char c[24], b[40], h1[32], h2[32];
	int64_t d = diff_delta(before, after), db = diff_delta(bbefore, bafter);
	/* "+0 chunks, +0 B": the line reads as a change even when none.  */
	em_notef(e, "%-9s %s %s%s, %s  (%" PRIu64 " -> %" PRIu64 ", %s -> %s)",
		 label, d ? diff_signed_count(c, sizeof c, d) : "+0", noun,
		 d == 1 || d == -1 ? "" : "s",
		 db ? diff_signed_human(b, sizeof b, db) : "+0 B",
		 before, after, hw_human(h1, sizeof h1, bbefore),
		 hw_human(h2, sizeof h2, bafter));
}

static void emit_totals(struct hw_emitter *e, const struct hw_size_profile *b,
			const struct hw_size_profile *a, const char *noun)
{
	em_section_begin(e, &S_TOTALS);
	const uint64_t v[4][2] = {
		{ b->used, a->used }, { b->used_bytes, a->used_bytes },
		{ b->free, a->free }, { b->free_bytes, a->free_bytes },
	};
	for (int i = 0; i < 4; i++) {
		em_kv(e, &TOTAL_FIELDS[3 * i], ev_u64(v[i][0]));
		em_kv(e, &TOTAL_FIELDS[3 * i + 1], ev_u64(v[i][1]));
		em_kv(e, &TOTAL_FIELDS[3 * i + 2],
		      ev_i64(diff_delta(v[i][0], v[i][1])));
	}
	em_section_end(e);
	total_line(e, "in use:", b->used, a->used, b->used_bytes,
		   a->used_bytes, noun);
	total_line(e, "free:", b->free, a->free, b->free_bytes,
		   a->free_bytes, noun);
}

static void emit_classes(struct hw_emitter *e, struct drow *rows, size_t n,
			 size_t left_out)
{
	struct em_table table = CLASS_DIFF_TABLE;
	em_note(e, "");
	diff_table_begin(e, &table, n);
	for (size_t i = 0; i < n && !em_failed(e); i++) {
		const struct drow *r = &rows[i];
		struct em_val v[NDIFF_COLS];
		struct row_text t;
		char label[48];
		v[0] = ev_u64(r->max);
		if (r->min != r->max) {
			snprintf(label, sizeof label, "%" PRIu64 "-%" PRIu64,
				 r->min, r->max);
			v[0] = ev_text(v[0], label);
		}
		v[1] = ev_u64(r->min);
		change_vals(v + 2, r, &t);
		em_row(e, v);
	}
	diff_table_end(e, &F_UNCHANGED_CLASSES, n, left_out, "size class",
		       "size classes", "(no size class changed)");
}

static void emit_arenas(struct hw_emitter *e, struct drow *rows, size_t n,
			size_t left_out)
{
	struct em_table table = ARENA_DIFF_TABLE;
	/* jemalloc's arenas have no address to show: no empty column.  */
	struct em_field cols[NDIFF_COLS + 1];
	memcpy(cols, ARENA_DIFF_COLS, sizeof cols);
	bool any_addr = false;
	for (size_t i = 0; i < n; i++)
		any_addr |= rows[i].addr != 0;
	if (!any_addr)
		cols[2].only = EM_JSON_ONLY;
	table.cols = cols;
	em_note(e, "");
	diff_table_begin(e, &table, n);
	for (size_t i = 0; i < n && !em_failed(e); i++) {
		const struct drow *r = &rows[i];
		struct em_val v[NDIFF_COLS + 1];
		struct row_text t;
		v[0] = r->arena != NO_ARENA ? ev_i64(r->arena) : ev_null();
		v[1] = r->base_arena != NO_ARENA ? ev_i64(r->base_arena)
						 : ev_null();
		v[2] = r->addr ? ev_addr(r->addr) : ev_absent();
		change_vals(v + 3, r, &t);
		em_row(e, v);
	}
	diff_table_end(e, &F_UNCHANGED_ARENAS, n, left_out, "arena", "arenas",
		       left_out ? "(no arena changed)" : "(no arenas)");
}

/* ---- the command ------------------------------------------------------- */

/* The bases of one diff: a core alone, or up to three saved files.  */
#define MAX_BASES 3

static enum hw_status read_bases(struct hw_session *s, const char *const *paths,
				 int n, bool leaks, struct diff_base *b,
				 char *kind, size_t kindlen)
{
	size_t at = 0;
	kind[0] = '\0';
	for (int i = 0; i < n; i++) {
		int c = first_byte(paths[i]);
		const char *what = "core";
		enum hw_status st;
		if (c == '{' || c == -2)
			st = base_from_json(s, paths[i], b, &what);
		else if (n > 1)
			return hw_error(s, HW_USAGE, "diff: '%s' is not saved "
					"JSON: a base core is given alone",
					paths[i]);
		else
			st = base_from_core(s, paths[i], b, leaks);
		if (st != HW_OK)
			return st;
		at += (size_t)snprintf(kind + at, kindlen - at, "%s%s",
				       at ? "+" : "", what);
		if (at >= kindlen)
			at = kindlen - 1;
	}
	return HW_OK;
}

static enum hw_status diff_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	int argc = c->argc;
	char *const *argv = c->argv;
	const char *paths[MAX_BASES];
	int np = 0;
	bool leaks = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--leaks"))
			leaks = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return hw_error(s, HW_USAGE, "diff: unknown option "
					"'%s' (--leaks compares the leaks too)",
					argv[i]);
		else if (np == MAX_BASES)
			return hw_error(s, HW_USAGE, "diff: at most %d saved "
					"files make one base", MAX_BASES);
		else
			paths[np++] = argv[i];
	}
	if (!np)
		return hw_error(s, HW_USAGE, "diff: expected one BASE (a core "
				"of the same program, or its saved `sizes "
				"--json`, `sizes --by=type --json`, `leaks "
				"--json`)");
	struct diff_base b;
	memset(&b, 0, sizeof b);
	char kind[64], base[256];
	enum hw_status st = read_bases(s, paths, np, leaks, &b, kind,
				       sizeof kind);
	if (st != HW_OK) {
		diff_base_free(&b);
		return st;
	}
	/* A saved leaks --json is there to be compared.  */
	leaks |= b.has_leaks;
	if (leaks && !b.has_leaks) {
		diff_base_free(&b);
		return hw_error(s, HW_USAGE, "diff --leaks: the base has no "
				"leaks: give its saved `leaks --json` too");
	}
	if (b.allocator[0] && strcmp(b.allocator, s->alloc->name) != 0) {
		/* (The message first: the name lives in the base.)  */
		st = hw_error(s, HW_USAGE, "diff: the base is a %s heap, this "
			      "one %s: not the same program (see --allocator)",
			      b.allocator, s->alloc->name);
		diff_base_free(&b);
		return st;
	}
	size_t at = 0;
	base[0] = '\0';
	for (int i = 0; i < np && at < sizeof base; i++)
		at += (size_t)snprintf(base + at, sizeof base - at, "%s%s",
				       i ? " " : "", paths[i]);
	struct hw_size_profile a = { 0 };
	struct drow *classes = NULL, *arenas = NULL;
	size_t nc = 0, na = 0, nc_same = 0, na_same = 0;
	enum pairing how = PAIR_INDEX;
	if (b.has_sizes) {
		fold_base(s, &b.p);
		st = hw_size_profile(s, &a);
		if (st != HW_OK) {
			diff_base_free(&b);
			return st;
		}
		classes = class_rows(&b.p, &a, &nc);
		arenas = b.has_arenas ? arena_rows(&b.p, &a, &na, &how)
				      : NULL;
		if (!classes || (b.has_arenas && !arenas)) {
			free(classes);
			free(arenas);
			hw_size_profile_free(&a);
			diff_base_free(&b);
			return hw_error(s, HW_BAD_TARGET, "out of memory");
		}
		nc_same = keep_changed(classes, &nc);
		na_same = arenas ? keep_changed(arenas, &na) : 0;
	}
	const char *noun = s->alloc->block_noun ? "block" : "chunk";

	em_doc_begin(e);
	em_kv(e, &F_BASE, ev_str(base));
	em_kv(e, &F_BASE_KIND, ev_str(kind));
	em_kv(e, &F_ALLOCATOR, ev_str(s->alloc->name));
	em_notef(e, "%-9s %s (%s)", "base:", base, kind);
	if (b.has_sizes) {
		emit_totals(e, &b.p, &a, noun);
		emit_classes(e, classes, nc, nc_same);
		if (arenas) {
			emit_arenas(e, arenas, na, na_same);
			em_kv(e, &F_PAIRING, ev_str(pairing_names[how]));
			em_note(e, how == PAIR_ADDRESS
				? "(arenas paired by address: the same "
				  "process)"
				: how == PAIR_AGE
				? "(arenas paired by age, the addresses being "
				  "another process's: main with main, thread "
				  "arenas oldest first)"
				: "(arenas paired by index)");
		}
		else
			em_note(e, "\n(the base has no per-arena totals: "
				"saved by an older heapwalk)");
	} else
		em_note(e, "(no saved `sizes --json` in the base: size "
			"classes and arenas not compared)");
	st = HW_OK;
	if (b.has_types)
		st = diff_emit_types(s, e, &b);
	if (st == HW_OK && b.has_sites)
		st = diff_emit_sites(s, e, &b);
	if (st == HW_OK && leaks)
		st = diff_emit_leaks(s, e, &b);
	if (st == HW_OK) {
		em_kv(e, &F_BASE_PARTIAL, ev_bool(b.partial));
		if (b.partial)
			em_note(e, "base:     its totals are partial (its walk "
				"did not cover its whole heap)");
		hw_emit_partial(s, e);
		em_doc_end(e);
	}
	free(classes);
	free(arenas);
	hw_size_profile_free(&a);
	diff_base_free(&b);
	return st;
}

static const struct hw_command_opt diff_opts[] = {
	{ "BASE", "an earlier core of the same program, or a file saved from "
		  "sizes --json, sizes --by=type --json or leaks --json" },
	{ "--leaks", "the leaks that are new since BASE" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_diff = {
	.name = "diff", .run = diff_run, .args = "BASE [--leaks]",
	.summary = "what grew since BASE (a core of the same program, or its "
		   "saved sizes, sizes --by=type, leaks --json), per size "
		   "class, arena, C++ class; new leaks",
	.opts = diff_opts, .example = "core.2 diff core.1",
	.needs = HW_NEED_WALK,
};
