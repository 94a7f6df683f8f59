/* prof.c - `prof`: the heap profile the allocator kept, from the target.
 *
 *   prof [--format=text|heap_v2|gperftools|collapsed|pprof] [-o FILE] [--objects]
 *        [--lines] [--top=N] [--base OLD]
 *   prof --recent [-o FILE]
 *
 * text       the allocation sites by function, as `jeprof --text` ranks
 *            them: flat (allocated by the function itself), cum (by it
 *            and everything it called), by bytes or --objects; --lines
 *            ranks source lines instead of functions.
 * heap_v2    what the process's own prof.dump would have written
 *            (jeprof, pprof read it); -o's default on jemalloc.
 * gperftools what tcmalloc's MallocExtension::GetHeapSample would have
 *            written (the legacy heap profile pprof reads); -o's default
 *            on tcmalloc.
 * collapsed  one line per stack, "outer;...;inner COUNT", the input of
 *            flame graph tools (flamegraph.pl, inferno).
 * pprof      pprof's profile.proto, gzipped, symbolized (pprof.c):
 *            for `go tool pprof` and its web UI.  Binary: written as it
 *            is to stdout too, where --json would make it a JSON string
 *            (of no use to pprof), so it is meant for -o.
 *
 * --recent   jemalloc 5.3's records of its last sampled allocations and
 *            their frees (recent.c); with -o, the JSON that
 *            experimental.prof_recent.alloc_dump writes.
 *
 * Counts are the allocator's estimate of the whole heap (sampled counts
 * scaled by the sampling), so the text and collapsed forms add up to
 * what jeprof would report; heap_v2 carries the raw records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../alloc/alloc.h"
#include "../../emit/emit.h"
#include "../command.h"
#include "prof.h"

enum prof_format { PF_TEXT, PF_HEAP_V2, PF_GPERFTOOLS, PF_COLLAPSED, PF_PPROF };

struct prof_opts {
	enum prof_format format;
	bool format_given, objects, lines, recent;
	const char *output;
	const char *base;             /* --base OLD */
	uint64_t top;                 /* 0: every row */
};

static enum hw_status parse(struct hw_session *s, int argc, char *const argv[],
			    struct prof_opts *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strncmp(a, "--format=", 9)) {
			const char *f = a + 9;
			o->format_given = true;
			if (!strcmp(f, "text"))
				o->format = PF_TEXT;
			else if (!strcmp(f, "heap_v2") || !strcmp(f, "raw"))
				o->format = PF_HEAP_V2;
			else if (!strcmp(f, "gperftools"))
				o->format = PF_GPERFTOOLS;
			else if (!strcmp(f, "collapsed"))
				o->format = PF_COLLAPSED;
			else if (!strcmp(f, "pprof"))
				o->format = PF_PPROF;
			else
				return hw_error(s, HW_USAGE, "prof: unknown "
						"format '%s' (text, heap_v2, "
						"gperftools, collapsed, "
						"pprof)", f);
		} else if (!strcmp(a, "--collapsed")) {
			o->format = PF_COLLAPSED;
			o->format_given = true;
		} else if (!strcmp(a, "--recent")) {
			o->recent = true;
		} else if (!strcmp(a, "--objects")) {
			o->objects = true;
		} else if (!strcmp(a, "--lines")) {
			o->lines = true;
		} else if (!strncmp(a, "--top=", 6)) {
			char *end;
			o->top = strtoull(a + 6, &end, 10);
			if (*end || a[6] == '\0')
				return hw_error(s, HW_USAGE, "prof: --top "
						"takes a number");
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i == argc)
				return hw_error(s, HW_USAGE, "prof: %s needs "
						"a file name", a);
			o->output = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			o->output = a + 9;
		} else if (!strcmp(a, "--base")) {
			if (++i == argc)
				return hw_error(s, HW_USAGE, "prof: --base needs "
						"a core or heap_v2 file");
			o->base = argv[i];
		} else if (!strncmp(a, "--base=", 7)) {
			o->base = a + 7;
		} else {
			return hw_error(s, HW_USAGE, "prof: unknown argument "
					"'%s'", a);
		}
	}
	if (o->recent && (o->format_given || o->base || o->objects ||
			  o->lines || o->top))
		return hw_error(s, HW_USAGE, "prof: --recent lists records "
				"and takes only -o");
	return HW_OK;
}

/* After the default format is known.  */
static enum hw_status check_base(struct hw_session *s,
				 const struct prof_opts *o)
{
	if (o->base && (o->format == PF_HEAP_V2 || o->format == PF_PPROF ||
			o->format == PF_GPERFTOOLS))
		return hw_error(s, HW_USAGE, "prof: --base compares two "
				"snapshots; heap_v2, gperftools and pprof "
				"files hold one (give both to jeprof --base "
				"or pprof -diff_base)");
	return HW_OK;
}

/* ---- the stacks a report ranks --------------------------------------- */

/* One stack and what it holds: the newer snapshot's sites, and with
   --base the older one's subtracted (matched by their frames' names).  */
struct prof_entry {
	const struct prof_stacks *st;
	const struct hw_prof_site *site;
	int64_t objs, bytes;
	char *key;                    /* --base: the frames' names */
};

struct prof_entries {
	struct prof_entry *v;
	size_t n;
};

/* Counts as the signed values a comparison needs.  A core's counters
   are whatever its bytes say: past INT64_MAX they are held there, and
   sums saturate instead of wrapping.  */
static int64_t as_i64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int entry_key_cmp(const void *a, const void *b)
{
	const struct prof_entry *x = a, *y = b;
	return strcmp(x->key, y->key);
}

static void entries_free(struct prof_entries *es)
{
	for (size_t i = 0; i < es->n; i++)
		free(es->v[i].key);
	free(es->v);
	es->v = NULL;
	es->n = 0;
}

static bool entries_make(const struct prof_stacks *st,
			 const struct prof_base *b, struct prof_entries *es)
{
	size_t n = st->p->nsites + (b ? b->p->nsites : 0);
	es->v = calloc(n + 1, sizeof *es->v);
	es->n = 0;
	if (!es->v)
		return false;
	for (size_t i = 0; i < st->p->nsites; i++) {
		const struct hw_prof_site *site = &st->p->sites[i];
		es->v[es->n++] = (struct prof_entry){
			st, site, as_i64(site->est.curobjs),
			as_i64(site->est.curbytes), NULL };
	}
	if (!b)
		return true;
	for (size_t i = 0; i < b->p->nsites; i++) {
		const struct hw_prof_site *site = &b->p->sites[i];
		es->v[es->n++] = (struct prof_entry){
			&b->st, site, -as_i64(site->est.curobjs),
			-as_i64(site->est.curbytes), NULL };
	}
	struct prof_frame_ref *fr = malloc(PROF_MAX_FRAMES * sizeof *fr);
	if (!fr)
		return false;
	for (size_t i = 0; i < es->n; i++)
		if (!(es->v[i].key = prof_stack_key(es->v[i].st, es->v[i].site, fr))) {
			free(fr);
			return false;
		}
	free(fr);
	qsort(es->v, es->n, sizeof *es->v, entry_key_cmp);
	/* One entry per stack: the first keeps the sum (a newer snapshot's
	   site sorts anywhere among its equals; any of them names it).  */
	size_t k = 0;
	for (size_t i = 0; i < es->n;) {
		size_t j = i + 1;
		while (j < es->n && !strcmp(es->v[j].key, es->v[i].key)) {
			es->v[i].objs = sat_add(es->v[i].objs, es->v[j].objs);
			es->v[i].bytes = sat_add(es->v[i].bytes,
						 es->v[j].bytes);
			free(es->v[j].key);
			j++;
		}
		if (es->v[i].objs || es->v[i].bytes)
			es->v[k++] = es->v[i];
		else
			free(es->v[i].key);
		i = j;
	}
	es->n = k;
	return true;
}

/* ---- collapsed --------------------------------------------------------- */

static void write_collapsed(const struct prof_entries *es, bool objects,
			    struct hw_emitter *e)
{
	struct prof_frame_ref *fr = malloc(PROF_MAX_FRAMES * sizeof *fr);
	char *line = malloc(1 << 16);
	if (!fr || !line) {
		free(fr);
		free(line);
		return;
	}
	em_verbatim_begin(e, "collapsed");
	for (size_t i = 0; i < es->n && !em_failed(e); i++) {
		const struct prof_entry *en = &es->v[i];
		int64_t v = objects ? en->objs : en->bytes;
		/* Flame graphs draw growth: what shrank has no width.  */
		if (v <= 0)
			continue;
		size_t n = prof_site_frames(en->st, en->site, fr,
					    PROF_MAX_FRAMES);
		size_t at = 0, cap = (1 << 16) - 32;
		char buf[96];
		for (size_t k = 0; k < n && at < cap; k++) {
			const char *name = prof_frame_name(fr[k].f, fr[k].pc,
							   buf, sizeof buf);
			if (k)
				line[at++] = ';';
			/* ';' and ' ' separate frames and the count.  */
			for (const char *c = name; *c && at < cap; c++)
				line[at++] = *c == ';' ? ':' :
					     *c == '\n' ? ' ' : *c;
		}
		if (!n) {
			memcpy(line, "[unknown]", 9);
			at = 9;
		}
		at += (size_t)snprintf(line + at, 32, " %" PRId64 "\n", v);
		em_verbatim(e, line, at);
	}
	em_verbatim_end(e);
	free(fr);
	free(line);
}

/* ---- text: functions (or lines) ranked -------------------------------- */

struct rank_key {
	const char *name;             /* function, or the module of code
					 without one */
	uint64_t addr;                /* no function: the module offset (or
					 the pc, no module either); else 0 */
	const char *file;             /* --lines: the source file */
	unsigned line;
	const char *module;
	uint32_t site;                /* which stack */
	bool leaf;                    /* the stack's innermost frame */
};

struct rank_row {
	const char *name, *file, *module;
	uint64_t addr;
	unsigned line;
	int64_t flat, cum;
};

/* The same row: function (or code address), and with --lines the line.  */
static int same_row(const struct rank_key *x, const struct rank_key *y)
{
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct rank_key *x = a, *y = b;
	int c = same_row(x, y);
	if (c)
		return c;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return (int)y->leaf - (int)x->leaf;
}

/* The largest first; with --base, growth first and shrinkage last.  */
static int row_cmp(const void *a, const void *b)
{
	const struct rank_row *x = a, *y = b;
	if (x->flat != y->flat)
		return x->flat > y->flat ? -1 : 1;
	if (x->cum != y->cum)
		return x->cum > y->cum ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

/* Text shows where a function is as one cell: its source line (with
   --lines) or its module; JSON has the three apart.  */
#define RANK_WHERE_COLS \
	{ .key = "where", .join = "  ", .none = "", .only = EM_TEXT_ONLY }, \
	{ .key = "file", .only = EM_JSON_ONLY }, \
	{ .key = "line", .only = EM_JSON_ONLY }, \
	{ .key = "module", .only = EM_JSON_ONLY }
static const struct em_field RANK_COLS[] = {
	{ .key = "flat", .label = "flat", .width = 10, .form = EM_T_HUMAN },
	{ .key = "flat_pct", .label = "flat%", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
	{ .key = "sum_pct", .label = "sum%", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
	{ .key = "cum", .label = "cum", .width = 10, .form = EM_T_HUMAN },
	{ .key = "cum_pct", .label = "cum%", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
	{ .key = "function", .label = "function", .join = "  " },
	RANK_WHERE_COLS,
};
static const struct em_table RANK_TABLE = {
	.key = "functions", .cols = RANK_COLS,
	.ncols = sizeof RANK_COLS / sizeof RANK_COLS[0],
};
/* The same, counting objects: plain numbers, not sizes.  */
static const struct em_field RANK_OBJ_COLS[] = {
	{ .key = "flat", .label = "flat", .width = 10 },
	{ .key = "flat_pct", .label = "flat%", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
	{ .key = "sum_pct", .label = "sum%", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
	{ .key = "cum", .label = "cum", .width = 10 },
	{ .key = "cum_pct", .label = "cum%", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
	{ .key = "function", .label = "function", .join = "  " },
	RANK_WHERE_COLS,
};
static const struct em_table RANK_OBJ_TABLE = {
	.key = "functions", .cols = RANK_OBJ_COLS,
	.ncols = sizeof RANK_OBJ_COLS / sizeof RANK_OBJ_COLS[0],
};

static const struct em_field F_ALLOC = { .key = "allocator",
					 .label = "allocator:" };
static const struct em_field F_PERIOD = { .key = "sample_period",
					  .label = "sampling:", .pre = "one "
					  "sample every ", .post = " bytes" };
static const struct em_field F_EVERY = { .key = "every_allocation",
					 .label = "sampling:",
					 .yes = "none: every allocation was "
						"recorded (gperftools' heap "
						"profiler or heap checker)" };
static const struct em_field F_LG = { .key = "lg_prof_sample", .join = " ",
				      .pre = "(lg_prof_sample ", .post = "," };
static const struct em_field F_FROM = { .key = "period_from", .join = " ",
					.pre = "from ", .post = ")" };
/* Without lg_prof_sample before it (tcmalloc's period is any number).  */
static const struct em_field F_FROM_ALONE = { .key = "period_from",
					      .join = " ", .pre = "(from ",
					      .post = ")" };
static const struct em_field F_FOUND = { .key = "found_by",
					 .label = "read from:" };
static const struct em_field F_UNBIAS = { .key = "unbias",
					  .only = EM_JSON_ONLY };
static const struct em_field F_ACCUM = { .key = "accum",
					 .only = EM_JSON_ONLY };
static const struct em_field F_ACTIVE = { .key = "active",
					  .label = "active:" };
static const struct em_field F_STACKS = { .key = "stacks",
					  .label = "stacks:" };
static const struct em_field F_THREADS = { .key = "threads", .join = ", ",
					   .noun = "thread" };
static const struct em_field F_TOTAL_B = { .key = "bytes", .label = "total:",
					   .form = EM_T_HUMAN };
static const struct em_field F_TOTAL_O = { .key = "objects", .join = " in ",
					   .noun = "object" };
static const struct em_field F_SAMPLED_O = { .key = "sampled_objects",
					     .join = " (estimated from ",
					     .noun = "sampled object" };
static const struct em_field F_SAMPLED_B = { .key = "sampled_bytes",
					     .join = ", ", .form = EM_T_HUMAN,
					     .post = ")" };
static const struct em_field F_UNREAD = { .key = "unreadable",
					  .label = "unreadable:",
					  .post = " records could not be "
					  "read: totals are partial" };

/* The header's lines, their values in one column.  */
static const struct em_section S_HEADER = { .label_width = 11 };

static void header(const struct hw_profile *p, struct hw_emitter *e)
{
	em_section_begin(e, &S_HEADER);
	em_kv(e, &F_ALLOC, ev_str(p->allocator));
	if (p->all_allocations)
		em_kv(e, &F_EVERY, ev_bool(true));
	em_kv(e, &F_PERIOD, p->all_allocations ? ev_null() : ev_u64(p->period));
	bool lg = !p->all_allocations && p->lg_sample < 64 &&
		  p->period == (uint64_t)1 << p->lg_sample;
	em_kv(e, &F_LG, lg ? ev_u64(p->lg_sample) : ev_null());
	em_kv(e, lg ? &F_FROM : &F_FROM_ALONE,
	      p->period_from ? ev_str(p->period_from) : ev_null());
	em_kv(e, &F_FOUND, ev_str(p->found_by ? p->found_by : ""));
	em_kv(e, &F_UNBIAS, ev_bool(p->unbias));
	em_kv(e, &F_ACCUM, ev_bool(p->accum));
	em_kv(e, &F_ACTIVE, ev_bool(p->active));
	em_kv(e, &F_STACKS, ev_u64(p->nsites));
	/* gperftools keeps no thread with a sample.  */
	em_kv(e, &F_THREADS, p->native == HW_PROF_HEAP_V2 ?
		  ev_u64(p->nthreads) : ev_null());
	uint64_t objs = 0, bytes = 0;
	for (size_t i = 0; i < p->nsites; i++) {
		objs += p->sites[i].est.curobjs;
		bytes += p->sites[i].est.curbytes;
	}
	em_kv(e, &F_TOTAL_B, ev_u64(bytes));
	em_kv(e, &F_TOTAL_O, ev_u64(objs));
	/* Nothing is estimated where every allocation was recorded.  */
	em_kv(e, &F_SAMPLED_O, p->all_allocations ? ev_null()
						  : ev_u64(p->sampled_objs));
	em_kv(e, &F_SAMPLED_B, p->all_allocations ? ev_null()
						  : ev_u64(p->sampled_bytes));
	if (p->unreadable)
		em_kv(e, &F_UNREAD, ev_u64(p->unreadable));
	em_section_end(e);
}

static const struct em_field F_BASE = { .key = "base", .label = "base:" };
static const struct em_field F_BASE_WHAT = { .key = "base_kind",
					     .join = " ", .pre = "(",
					     .post = ")" };
static const struct em_field F_BASE_B = { .key = "base_bytes",
					  .join = ", ", .form = EM_T_HUMAN,
					  .post = " then" };
static const struct em_field F_CHANGE = { .key = "change_bytes",
					  .label = "change:",
					  .form = EM_T_HUMAN };

/* With --base: what was subtracted, and the change of the total.  */
static void base_lines(const struct prof_opts *o, const struct prof_base *b,
		       const struct prof_entries *es, struct hw_emitter *e)
{
	if (!o->base || !b->p)
		return;
	uint64_t then = 0;
	for (size_t i = 0; i < b->p->nsites; i++)
		then += b->p->sites[i].est.curbytes;
	int64_t change = 0;
	for (size_t i = 0; i < es->n; i++)
		change = sat_add(change, es->v[i].bytes);
	em_section_begin(e, &S_HEADER);
	em_kv(e, &F_BASE, ev_str(o->base));
	em_kv(e, &F_BASE_WHAT, ev_str(b->what));
	em_kv(e, &F_BASE_B, ev_u64(then));
	em_kv(e, &F_CHANGE, ev_i64(change));
	em_section_end(e);
}

static enum hw_status write_ranks(struct hw_session *s,
				  const struct prof_entries *es,
				  const struct prof_opts *o,
				  struct hw_emitter *e)
{
	size_t cap = 1024, nk = 0;
	struct rank_key *keys = malloc(cap * sizeof *keys);
	struct prof_frame_ref *fr = malloc(PROF_MAX_FRAMES * sizeof *fr);
	if (!keys || !fr)
		goto oom;
	int64_t total = 0;
	for (size_t i = 0; i < es->n; i++) {
		const struct prof_entry *en = &es->v[i];
		total = sat_add(total, o->objects ? en->objs : en->bytes);
		size_t n = prof_site_frames(en->st, en->site, fr,
					    PROF_MAX_FRAMES);
		for (size_t k = 0; k < n; k++) {
			const struct hw_source_frame *f = fr[k].f;
			const char *name = f ? f->function : NULL;
			uint64_t addr = 0;
			if (!name) {
				name = f && f->module ? f->module : "";
				addr = f && f->module ? f->module_offset :
							fr[k].pc;
			}
			if (nk == cap) {
				void *q = realloc(keys, 2 * cap * sizeof *keys);
				if (!q)
					goto oom;
				keys = q;
				cap *= 2;
			}
			keys[nk++] = (struct rank_key){
				.name = name, .addr = addr,
				.file = o->lines && f ? f->file : NULL,
				.line = o->lines && f ? f->line : 0,
				.module = f ? f->module : NULL,
				.site = (uint32_t)i, .leaf = k == n - 1 };
		}
	}
	qsort(keys, nk, sizeof *keys, key_cmp);
	struct rank_row *rows = calloc(nk + 1, sizeof *rows);
	if (!rows)
		goto oom;
	size_t nr = 0;
	for (size_t i = 0; i < nk;) {
		size_t j = i;
		struct rank_row *r = &rows[nr++];
		r->name = keys[i].name;
		r->addr = keys[i].addr;
		r->file = keys[i].file;
		r->line = keys[i].line;
		r->module = keys[i].module;
		uint32_t last = UINT32_MAX;
		for (; j < nk && !same_row(&keys[i], &keys[j]); j++) {
			const struct prof_entry *en = &es->v[keys[j].site];
			int64_t v = o->objects ? en->objs : en->bytes;
			/* A recursive function is counted once per stack.  */
			if (keys[j].site != last)
				r->cum = sat_add(r->cum, v);
			if (keys[j].leaf)
				r->flat = sat_add(r->flat, v);
			last = keys[j].site;
		}
		i = j;
	}
	qsort(rows, nr, sizeof *rows, row_cmp);
	em_table_begin(e, o->objects ? &RANK_OBJ_TABLE : &RANK_TABLE);
	double sum = 0;
	for (size_t i = 0; i < nr && (!o->top || i < o->top); i++) {
		const struct rank_row *r = &rows[i];
		char buf[320];
		const char *name = r->name;
		if (r->addr) {
			if (*r->name)
				snprintf(buf, sizeof buf, "%s+0x%" PRIx64,
					 base_name(r->name), r->addr);
			else
				snprintf(buf, sizeof buf, "0x%" PRIx64, r->addr);
			name = buf;
		}
		double fp = total ? (double)r->flat / (double)total : 0;
		sum += fp;
		char where[320];
		if (r->file && r->line)
			snprintf(where, sizeof where, "%s:%u", base_name(r->file),
				 r->line);
		else if (r->module)
			snprintf(where, sizeof where, "(%s)", base_name(r->module));
		else
			where[0] = '\0';
		struct em_val v[10] = {
			ev_i64(r->flat), ev_dbl(fp), ev_dbl(sum), ev_i64(r->cum),
			ev_dbl(total ? (double)r->cum / (double)total : 0),
			ev_str(name), ev_str(where),
			r->file ? ev_str(r->file) : ev_null(),
			r->line ? ev_u64(r->line) : ev_null(),
			r->module ? ev_str(r->module) : ev_null(),
		};
		em_row(e, v);
	}
	em_table_end(e);
	free(rows);
	free(keys);
	free(fr);
	return HW_OK;
oom:
	free(keys);
	free(fr);
	return hw_error(s, HW_BAD_TARGET, "out of memory");
}

/* ---- the command --------------------------------------------------------- */

static enum hw_status prof_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	int argc = c->argc;
	char *const *argv = c->argv;
	struct prof_opts o;
	enum hw_status st = parse(s, argc, argv, &o);
	if (st != HW_OK)
		return st;
	const struct hw_profile *p = NULL;
	const char *why = NULL;
	if (!s->alloc->profile)
		return hw_error(s, HW_NO_ALLOCATOR, "prof: no heap profile: "
				"%s keeps no allocation sites (`leaks` and "
				"`sizes` show what is in use)", s->alloc->name);
	st = s->alloc->profile(s->alloc_state, &p, &why);
	if (st != HW_OK)
		return st;
	if (!p)
		return hw_error(s, HW_NO_ALLOCATOR, "prof: no heap profile: "
				"%s (`leaks` and `sizes` show what is in use)",
				why ? why : "none was found");
	/* -o without --format: the file the allocator itself writes.  */
	if (o.output && !o.format_given && !o.recent)
		o.format = p->native == HW_PROF_GPERFTOOLS ? PF_GPERFTOOLS
							   : PF_HEAP_V2;
	if ((st = check_base(s, &o)) != HW_OK)
		return st;
	struct hw_emitter *out = e;
	if (o.output) {
		int err = 0;
		out = em_open_file(o.output, &err);
		if (!out)
			return hw_error(s, HW_BAD_TARGET, "prof: cannot write %s: %s",
					o.output, strerror(err));
	}
	struct prof_stacks stacks;
	struct prof_base base = { 0 };
	struct prof_entries es = { 0 };
	bool need_stacks = o.format != PF_HEAP_V2 &&
			   o.format != PF_GPERFTOOLS && !(o.recent && o.output);
	if (o.base && (st = prof_base_open(s, o.base, p, &base)) != HW_OK) {
		if (out != e)
			em_close(out);
		return st;
	}
	if (need_stacks && !prof_stacks_build(s, p, &stacks)) {
		if (out != e)
			em_close(out);
		prof_base_close(&base);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	if (need_stacks && !o.recent && !entries_make(&stacks, o.base ? &base : NULL, &es)) {
		if (out != e)
			em_close(out);
		entries_free(&es);
		prof_stacks_free(&stacks);
		prof_base_close(&base);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	em_doc_begin(e);
	if (o.recent && out != e)
		prof_write_recent_json(p, out);
	else if (o.recent)
		st = prof_write_recent(s, &stacks, e);
	else if (o.format == PF_HEAP_V2)
		prof_write_heap_v2(s, p, out);
	else if (o.format == PF_GPERFTOOLS)
		prof_write_gperftools(s, p, out);
	else if (o.format == PF_COLLAPSED)
		write_collapsed(&es, o.objects, out);
	else if (o.format == PF_PPROF) {
		if (!prof_write_pprof(s, &stacks, out))
			st = hw_error(s, HW_BAD_TARGET, "prof: out of memory "
				      "writing the pprof profile");
	}
	else if (out != e) {
		/* The text report in a file: a document of its own.  */
		em_doc_begin(out);
		header(p, out);
		base_lines(&o, &base, &es, out);
		st = write_ranks(s, &es, &o, out);
		em_doc_end(out);
	}
	if (out != e) {
		bool ok = em_close(out);
		static const struct em_field F_WROTE = {
			.key = "written", .label = "wrote:" };
		if (!ok)
			st = hw_error(s, HW_BAD_TARGET, "prof: write error on "
				      "%s", o.output);
		else {
			em_section_begin(e, &S_HEADER);
			em_kv(e, &F_WROTE, ev_str(o.output));
			em_section_end(e);
		}
		if (!o.recent) {
			header(p, e);
			base_lines(&o, &base, &es, e);
		}
	} else if (o.format == PF_TEXT && !o.recent) {
		header(p, e);
		base_lines(&o, &base, &es, e);
		st = write_ranks(s, &es, &o, e);
	}
	em_doc_end(e);
	entries_free(&es);
	if (need_stacks)
		prof_stacks_free(&stacks);
	prof_base_close(&base);
	return st;
}

static const struct hw_command_opt prof_opts[] = {
	{ "--format=FORMAT", "text (sites ranked, the default), heap_v2 (the "
			     "file prof.dump writes, for jeprof), gperftools "
			     "(the file tcmalloc's GetHeapSample writes), "
			     "collapsed (flame graphs), pprof (gzipped "
			     "profile.proto)" },
	{ "--collapsed", "the same as --format=collapsed" },
	{ "-o FILE", "write to FILE; without --format, in the allocator's own "
		     "format (jemalloc: heap_v2, tcmalloc: gperftools)" },
	{ "--top=N", "only the first N sites" },
	{ "--objects", "rank by objects instead of bytes" },
	{ "--lines", "name source lines, not just functions" },
	{ "--base OLD", "what grew since OLD (a core or a heap_v2 file)" },
	{ "--recent", "the last sampled allocations and their frees "
		      "(jemalloc 5.3's prof_recent)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_prof = {
	.name = "prof", .run = prof_run,
	.args = "[--format=FORMAT] [-o FILE] [--top=N] [--objects] [--lines] "
		"[--base OLD] [--recent]",
	.summary = "the allocator's heap profile (jemalloc's prof:true, "
		   "tcmalloc's TCMALLOC_SAMPLE_PARAMETER) from the target: "
		   "allocation sites ranked, the file the allocator writes "
		   "(heap_v2, gperftools), or pprof's; --base: what grew; "
		   "--recent: the last sampled allocations and their frees",
	.opts = prof_opts, .example = "core prof --top=20",
	.needs = HW_NEED_PROFILE,
};
