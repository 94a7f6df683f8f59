/* leaks.c - the leaks command: blocks in use that the process cannot
 * reach any more (analysis/reach.h), as Valgrind memcheck names them.
 *
 * JSON: one line per block (JSON Lines, streamable), with its C++ class
 * where its vtable pointer names one (analysis/vtype.h).  Text: the
 * totals per kind, then "loss records", the blocks grouped by kind, size
 * and class, the largest first, numbered as Valgrind numbers them ("3 of
 * 12"), each with the first block's address and bytes: enough to
 * recognise what leaked without listing every block; a screenful of them
 * unless --top says otherwise.
 *
 * Selections, as chap's and Valgrind's users make them: --kind (which
 * kinds are listed), --min-size (blocks of at least that size), both for
 * the blocks (JSON) and the records; --min-bytes and --top for the
 * records.  The totals always count every block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../analysis/reach.h"
#include "../analysis/vtype.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/loss.h"
#include "../report/partial.h"
#include "../report/pipe.h"
#include "../report/stacks.h"
#include "../target/target.h"
#include "command.h"

static const char *const kind_names[] = {
	[BM_UNREACHED] = "definite", [BM_REACHABLE] = "reachable",
	[BM_POSSIBLE] = "possible", [BM_INDIRECT] = "indirect",
	[HW_KIND_UNKNOWN] = "unknown",
};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

/* Loss records shown in text without --top: a screenful.  */
#define DEFAULT_TOP 20

/* What is listed: kinds (bit k: enum bm_mark k), sizes, records.  */
struct leaks_select {
	uint32_t kinds;
	uint64_t min_size;      /* a block's usable bytes */
	uint64_t min_bytes;     /* a record's bytes */
	uint64_t top;           /* records shown; 0: all */
};

/* One loss record: the blocks of one kind, one size and one class.  */
struct record {
	uint64_t size, count, first;
	const char *type;       /* interned class name, or NULL */
	const struct hw_prof_site *site;   /* where it was allocated, or
					      NULL (not sampled) */
	uint8_t kind;           /* enum bm_mark */
	bool used;              /* slot taken */
};

struct leaks_walk {
	struct hw_session *s;
	const struct hw_reach *r;
	struct hw_emitter *e;
	struct leaks_select sel;
	bool reachable;         /* reachable blocks are listed */
	struct record *recs;    /* open addressing on (size, kind, type) */
	size_t cap, n;
	bool oom;
	uint64_t count[NKINDS], bytes[NKINDS];
	uint64_t unmarked;      /* in use but not in the map */
	struct prof_sites sites;           /* allocation sites, if sampled */
	bool any_site;
	const struct hw_region *head_region;   /* hw_peek_near's hint */
	const struct bm_run *map_hint;         /* hw_reach_mark_near's */
};

static size_t record_hash(uint64_t size, unsigned kind, const char *type,
			  const struct hw_prof_site *site, size_t cap)
{
	uint64_t k = (size * 4 + kind) ^ (uint64_t)(uintptr_t)type ^
		     ((uint64_t)(uintptr_t)site << 7);
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
}

static struct record *record_of(struct leaks_walk *w, uint64_t size,
				unsigned kind, const char *type,
				const struct hw_prof_site *site)
{
	if ((w->n + 1) * 2 > w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct record *v = calloc(cap, sizeof *v);
		if (!v) {
			w->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < w->cap; i++) {
			if (!w->recs[i].used)
				continue;
			size_t j = record_hash(w->recs[i].size,
					       w->recs[i].kind,
					       w->recs[i].type,
					       w->recs[i].site, cap);
			while (v[j].used)
				j = (j + 1) & (cap - 1);
			v[j] = w->recs[i];
		}
		free(w->recs);
		w->recs = v;
		w->cap = cap;
	}
	size_t j = record_hash(size, kind, type, site, w->cap);
	while (w->recs[j].used &&
	       (w->recs[j].size != size || w->recs[j].kind != kind ||
		w->recs[j].type != type || w->recs[j].site != site))
		j = (j + 1) & (w->cap - 1);
	if (!w->recs[j].used) {
		w->recs[j] = (struct record){ .size = size, .kind = (uint8_t)kind,
					      .type = type, .site = site,
					      .used = true };
		w->n++;
	}
	return &w->recs[j];
}

static const struct em_field BLOCK_COLS[] = {
	{ .key = "addr" }, { .key = "size" }, { .key = "kind" },
	{ .key = "head" }, { .key = "type" }, { .key = "site" },
};
static const struct em_table BLOCKS = {
	.cols = BLOCK_COLS, .ncols = 6, .flags = EM_TB_LINES,
	.only = EM_JSON_ONLY };

/* A block's first bytes in hex (fewer for a smaller block): what `diff`
   matches a saved leak by.  Read in place where the target holds them in
   one piece (nearly always: blocks follow one another in a region, which
   the hint keeps), copied where they straddle two.  False when the block
   is empty or its bytes are not all in the target.  */
#define HEAD_BYTES 16
static bool head_of(struct leaks_walk *w, const struct hw_chunk *c,
		    char *head)
{
	size_t n = c->size < HEAD_BYTES ? (size_t)c->size : HEAD_BYTES;
	if (!n)
		return false;
	uint8_t copy[HEAD_BYTES];
	const uint8_t *b = hw_peek_near(w->s->target, &w->head_region,
					c->addr, n);
	if (!b && hw_read(w->s->target, c->addr, copy, n))
		b = copy;
	if (b)
		hw_hex_bytes(b, n, head);
	return b != NULL;
}

static bool leak_one(void *cookie, const struct hw_chunk *c)
{
	struct leaks_walk *w = cookie;
	if (!hw_program_block(c))
		return true;
	enum bm_mark m;
	if (!hw_reach_mark_near(w->r, &w->map_hint, c->addr, &m)) {
		w->unmarked++;
		return true;
	}
	unsigned mark = hw_loss_kind(m, c);
	w->count[mark]++;
	w->bytes[mark] += c->size;
	if (!(w->sel.kinds >> mark & 1) || c->size < w->sel.min_size)
		return true;
	const char *type = hw_vtype_of(w->s, c->addr, c->size);
	const struct hw_prof_site *site = prof_sites_of(&w->sites, c);
	const char *site_name = site ? prof_sites_name(&w->sites, site) : NULL;
	w->any_site |= site != NULL;
	struct record *rec = record_of(w, c->size, mark, type, site);
	if (rec && !rec->count++)
		rec->first = c->addr;
	if (!em_rows_shown(w->e))
		return !w->oom;   /* (text: the records say it all) */
	char head[2 * HEAD_BYTES + 1];
	bool have_head = head_of(w, c, head);
	const struct em_val v[] = { ev_addr(c->addr), ev_u64(c->size),
				    ev_str(kind_names[mark]),
				    have_head ? ev_str(head) : ev_absent(),
				    type ? ev_str(type) : ev_absent(),
				    site_name ? ev_str(site_name) : ev_absent() };
	em_row(w->e, v);
	return !em_failed(w->e) && !w->oom;
}

/* ---- a few lost blocks, from the map ---------------------------------- */

/* At most this many lost blocks are listed by a walk around each: a
   walk around one is a slab or a span or two, so beyond a few thousand
   one walk of every block is cheaper.  */
#define FEW_LOST 1024

struct lost_list {
	uint64_t addr[FEW_LOST];
	size_t n;
	bool many;
};

static bool collect_lost(void *cookie, const struct bm_ref *ref)
{
	struct lost_list *l = cookie;
	if (bm_mark_of(ref) == BM_REACHABLE)
		return true;
	if (l->n == FEW_LOST) {
		l->many = true;
		return false;
	}
	l->addr[l->n++] = ref->addr;
	return true;
}

struct pick {
	uint64_t want;
	struct hw_chunk c;
	bool found;
};

static bool pick_block(void *cookie, const struct hw_chunk *c)
{
	struct pick *p = cookie;
	if (c->addr != p->want || !c->used)
		return true;
	p->c = *c;
	p->found = true;
	return false;
}

/* List the blocks that are not reachable as a walk of every block would
   (when the allocator walks in address order, the map's order) and
   count the rest from the map: true when done so, false when there are
   too many to pick one by one, or one was not found again (then nothing
   was listed).  */
static bool list_few_lost(struct leaks_walk *w)
{
	struct hw_session *s = w->s;
	if (!s->alloc->walk_sorted || !s->alloc->chunks_around)
		return false;
	struct lost_list *l = calloc(1, sizeof *l);
	struct hw_chunk *got = l ? calloc(FEW_LOST, sizeof *got) : NULL;
	bool ok = got != NULL;
	if (ok) {
		bm_each(&w->r->map, collect_lost, l);
		ok = !l->many;
	}
	for (size_t i = 0; ok && i < l->n; i++) {
		struct pick p = { .want = l->addr[i] };
		hw_walk_around(s, p.want, 0, 0, pick_block, &p);
		got[i] = p.c;
		ok = p.found;
	}
	uint64_t lost_bytes = 0;
	for (size_t i = 0; ok && i < l->n; i++) {
		lost_bytes += got[i].size;
		if (!leak_one(w, &got[i]))
			break;
	}
	if (ok) {
		w->count[BM_REACHABLE] = w->r->blocks - l->n;
		w->bytes[BM_REACHABLE] = w->r->bytes - lost_bytes;
		w->unmarked = w->r->unplaced;
	}
	free(got);
	free(l);
	return ok;
}

/* Records that tie in hw_loss_order (of one size, kind and class, but
   other allocation sites) go by their first block's address: qsort's
   order of equals would follow the hash table's, which follows where
   this run's strings were interned.  */
static int record_cmp(const void *a, const void *b)
{
	const struct record *x = a, *y = b;
	int o = hw_loss_order(
		&(struct hw_loss_key){ x->size, x->count, x->kind, x->type },
		&(struct hw_loss_key){ y->size, y->count, y->kind, y->type });
	return o ? o : x->first < y->first ? -1 : x->first > y->first;
}

static const struct em_section TOTALS = {
	.label_width = 17, .only = EM_TEXT_ONLY };
static const struct em_field F_DEFINITE = {
	.label = "definitely lost:", .width = 16 };
static const struct em_field F_INDIRECT = {
	.label = "indirectly lost:", .width = 16 };
static const struct em_field F_POSSIBLE = {
	.label = "possibly lost:", .width = 16 };
static const struct em_field F_REACHABLE = {
	.label = "still reachable:", .width = 16 };
static const struct em_field F_UNKNOWN = {
	.label = "lost or free:", .width = 16 };
static const struct em_field F_BYTES = {
	.join = "  ", .width = 11, .form = EM_T_HUMAN };
static const struct em_field F_TAIL = { .join = "" };

static const struct em_field RECORD_COLS[] = {
	{ .label = "record", .width = 11 },
	{ .label = "bytes", .width = 12 },
	{ .label = "blocks", .width = 8 },
	{ .label = "size", .width = 10 },
	{ .label = "kind", .join = "  ", .width = -9 },
	{ .label = "first at", .width = -18, .form = EM_T_HEX0, .digits = 16 },
	{ .label = "its first bytes", .join = "  " },
	{ .label = "type", .join = "  ", .none = "-" },
	{ .label = "allocated at", .join = "  ", .none = "-" },
};
/* The type column only when some record has a class (a C program's
   records have none), the site column only when the allocator sampled
   some block (jemalloc's prof:true).  */
static const struct em_table RECORDS = {
	.cols = RECORD_COLS, .ncols = 7, .only = EM_TEXT_ONLY };
static const struct em_table TYPED_RECORDS = {
	.cols = RECORD_COLS, .ncols = 8, .only = EM_TEXT_ONLY };
static const struct em_table SITED_RECORDS = {
	.cols = RECORD_COLS, .ncols = 9, .only = EM_TEXT_ONLY };

/* Up to 16 bytes of the block as hw_first_bytes_text() shows them.  */
static void first_bytes(struct hw_target *t, uint64_t addr, uint64_t size,
			char *out, size_t len)
{
	uint8_t b[16];
	size_t n = size < sizeof b ? (size_t)size : sizeof b;
	if (!n || !hw_read(t, addr, b, n)) {
		snprintf(out, len, "%s", n ? "(not in the target)" : "");
		return;
	}
	hw_first_bytes_text(b, n, out, len);
}

static void total_line(struct hw_emitter *e, const struct em_field *label,
		       const struct leaks_walk *w, unsigned kind,
		       const char *noun, const char *tail)
{
	struct em_field count = *label;
	count.noun = noun;
	em_kv(e, &count, ev_u64(w->count[kind]));
	em_kv(e, &F_BYTES, ev_u64(w->bytes[kind]));
	if (tail)
		em_kv(e, &F_TAIL, ev_str(tail));
}

static void emit_records(struct hw_session *s, struct leaks_walk *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->cap; i++)
		if (w->recs[i].used)
			w->recs[n++] = w->recs[i];
	if (n)
		qsort(w->recs, n, sizeof *w->recs, record_cmp);
	/* The most bytes first: those --min-bytes keeps are the first m.  */
	size_t m = 0;
	while (m < n && w->recs[m].size * w->recs[m].count >= w->sel.min_bytes)
		m++;
	size_t shown = w->sel.top && w->sel.top < m ? (size_t)w->sel.top : m;
	if (!shown)
		return;
	bool typed = false;
	for (size_t i = 0; i < shown && !typed; i++)
		typed = w->recs[i].type != NULL;
	em_note(w->e, "");
	em_table_begin(w->e, w->any_site ? &SITED_RECORDS :
			     typed ? &TYPED_RECORDS : &RECORDS);
	for (size_t i = 0; i < shown && !em_failed(w->e); i++) {
		const struct record *rec = &w->recs[i];
		char bytes[96], number[48];
		first_bytes(s->target, rec->first, rec->size, bytes, sizeof bytes);
		snprintf(number, sizeof number, "%zu of %zu", i + 1, m);
		/* NULL (out of memory) leaves the cell empty.  */
		const char *site = rec->site ?
			prof_sites_name(&w->sites, rec->site) : NULL;
		const struct em_val v[] = {
			ev_str(number),
			ev_u64(rec->size * rec->count), ev_u64(rec->count),
			ev_u64(rec->size), ev_str(kind_names[rec->kind]),
			ev_addr(rec->first), ev_str(bytes),
			rec->type ? ev_str(rec->type) : ev_absent(),
			site ? ev_str(site) : ev_absent(),
		};
		em_row(w->e, v);
	}
	em_table_end(w->e);
	if (shown < m) {
		uint64_t blocks = 0, bytes = 0;
		char h[32];
		for (size_t i = shown; i < m; i++) {
			blocks += w->recs[i].count;
			bytes += w->recs[i].size * w->recs[i].count;
		}
		em_notef(w->e, "(%zu more loss records, %s in %llu blocks: "
			 "leaks --top 0 lists them all)", m - shown,
			 hw_human(h, sizeof h, bytes),
			 (unsigned long long)blocks);
	}
}

/* "definite,indirect": the kinds named, as the kind column spells them.  */
static bool parse_kinds(const char *v, uint32_t *kinds)
{
	const char *bad;
	size_t badlen;
	return hw_args_names(v, kind_names, NKINDS, kinds, &bad, &badlen) &&
	       *kinds != 0;
}

static enum hw_status parse(struct hw_session *s, int argc,
			    char *const argv[], struct leaks_select *sel)
{
	*sel = (struct leaks_select){ .top = DEFAULT_TOP };
	bool reachable = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		static const char *const with_value[] = {
			"--kind", "--min-size", "--min-bytes", "--top" };
		size_t k = 0;
		while (k < 4 && !(v = hw_args_value(argc, argv, &i,
						    with_value[k])))
			k++;
		bool ok = true;
		switch (k) {
		case 0: ok = parse_kinds(v, &sel->kinds); break;
		case 1: ok = hw_args_size(v, &sel->min_size); break;
		case 2: ok = hw_args_size(v, &sel->min_bytes); break;
		case 3: ok = hw_args_size(v, &sel->top); break;
		default:
			if (strcmp(a, "--reachable") != 0)
				return hw_error(s, HW_USAGE, "leaks: unknown "
						"argument '%s' (%s)", a,
						hw_cmd_leaks.args);
			reachable = true;
		}
		if (!ok)
			return hw_error(s, HW_USAGE, "leaks %s: '%s' is not %s",
					with_value[k], v,
					k == 0 ? "a kind (definite, indirect, "
						 "possible, reachable, unknown; "
						 "several separated by commas)"
					: k == 3 ? "a number of records (0: all)"
					: "a size (e.g. 4096, 0x1000, 4K)");
	}
	if (!sel->kinds)
		sel->kinds = 1u << BM_UNREACHED | 1u << BM_INDIRECT |
			     1u << BM_POSSIBLE | 1u << HW_KIND_UNKNOWN;
	if (reachable)
		sel->kinds |= 1u << BM_REACHABLE;
	return HW_OK;
}

static enum hw_status leaks_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	int argc = c->argc;
	char *const *argv = c->argv;
	struct leaks_walk w = { .s = s, .e = e };
	enum hw_status st = parse(s, argc, argv, &w.sel);
	if (st != HW_OK)
		return st;
	w.reachable = w.sel.kinds >> BM_REACHABLE & 1;
	w.r = hw_reach_get(s);
	if (!w.r)
		return HW_BAD_TARGET;
	enum hw_status pst = prof_sites_open(s, &w.sites);
	if (pst != HW_OK)
		return pst;
	em_table_begin(e, &BLOCKS);
	if (w.r->all_reachable && !w.reachable) {
		/* Nothing to list: the totals are the map's.  */
		w.count[BM_REACHABLE] = w.r->blocks;
		w.bytes[BM_REACHABLE] = w.r->bytes;
		w.unmarked = w.r->unplaced;
	} else if (w.reachable || !list_few_lost(&w))
		hw_walk_chunks_piped(s, leak_one, &w);
	em_table_end(e);
	if (w.oom) {
		free(w.recs);
		prof_sites_close(&w.sites);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	const char *noun = s->alloc->block_noun ? "block" : "chunk";
	char roots[200];
	char h[32];
	snprintf(roots, sizeof roots, "roots: %llu registers, %s of stacks "
		 "and writable memory in %llu ranges",
		 (unsigned long long)w.r->registers,
		 hw_human(h, sizeof h, w.r->root_bytes),
		 (unsigned long long)w.r->root_ranges);
	em_note(e, roots);
	em_section_begin(e, &TOTALS);
	total_line(e, &F_DEFINITE, &w, BM_UNREACHED, noun, NULL);
	total_line(e, &F_INDIRECT, &w, BM_INDIRECT, noun, NULL);
	total_line(e, &F_POSSIBLE, &w, BM_POSSIBLE, noun, NULL);
	total_line(e, &F_REACHABLE, &w, BM_REACHABLE, noun,
		   w.reachable ? NULL : "  (leaks --reachable lists them)");
	if (w.count[HW_KIND_UNKNOWN])
		total_line(e, &F_UNKNOWN, &w, HW_KIND_UNKNOWN, noun,
			   "  (kind unknown: unreachable, but a damaged free "
			   "list lost blocks like them; see 'heapwalk check')");
	em_section_end(e);
	emit_records(s, &w);
	if (w.unmarked)
		em_notef(e, "\n%llu %ss in use are not classified: the first "
			 "at 0x%llx is not aligned to the allocator's granule "
			 "or not in a mapping", (unsigned long long)w.unmarked,
			 noun, (unsigned long long)w.r->unplaced_addr);
	if (w.r->unreadable)
		em_notef(e, "%s of memory to scan is not in the target: what "
			 "it held is unknown (a leak may be a false one)",
			 hw_human(h, sizeof h, w.r->unreadable));
	hw_emit_partial_line(s, e);
	free(w.recs);
	prof_sites_close(&w.sites);
	return HW_OK;
}

static const struct hw_command_opt leaks_opts[] = {
	{ "--reachable", "list the still reachable blocks too" },
	{ "--kind K[,K...]", "list only these kinds: definite, indirect, "
			     "possible, reachable, unknown" },
	{ "--min-size SIZE", "list only blocks of at least SIZE usable bytes "
			     "(4096, 0x1000, 4K)" },
	{ "--min-bytes SIZE", "text: only loss records of at least SIZE "
			      "bytes in all" },
	{ "--top N", "text: the N largest loss records (default 20; 0: all)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_leaks = {
	.name = "leaks", .run = leaks_run,
	.args = "[--reachable] [--kind K,...] [--min-size SIZE] "
		"[--min-bytes SIZE] [--top N]",
	.summary = "blocks in use that nothing reachable points to",
	.opts = leaks_opts, .example = "--pid 1234 leaks",
	.needs = HW_NEED_WALK,
};
