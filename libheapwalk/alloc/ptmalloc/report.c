/* report.c - ptmalloc's own part of the reports: `summary`'s lines
 * (the heaps, mallinfo2 as glibc would compute it, how each root and the
 * version were found) and `arenas` (a row per arena, its threads and
 * heaps).  Its structures one at a time (`mp`, `tcache`, `arena N`) are
 * params.c's, the bins bins.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "../../sym/sym.h"
#include "ptmalloc.h"

struct mallinfo_sum {
	uint64_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks,
		 uordblks, fordblks, keepcost;
};

/* What glibc's mallinfo2() would say, computed the way int_mallinfo()
   does it, from the lists this walker read.  */
static void compute_mallinfo(const struct pm_state *p, struct mallinfo_sum *m)
{
	memset(m, 0, sizeof *m);
	for (size_t i = 0; i < p->narenas; i++) {
		const struct pm_arena *ar = &p->arenas[i];
		uint64_t avail = ar->top_size, nblocks = 1, fast = 0, nfast = 0;
		for (int b = 0; b < PM_NFASTBINS; b++) {
			nfast += ar->fast[b].count + ar->fast_orphans[b].count;
			fast += ar->fast[b].bytes + ar->fast_orphans[b].bytes;
		}
		avail += fast;
		/* Summed bins were not walked; only a lookup's might be.
		   Summed with the unsorted bin, none counts.  */
		bool summed = (p->bins_summed && !p->lists_done) ||
			      ar->free_summed;
		int last = ar->free_summed ? 1 : summed ? 2 : PM_NBINS;
		for (int b = 1; b < last; b++) {
			nblocks += ar->bins[b].count;
			avail += ar->bins[b].bytes;
		}
		if (summed) {
			nblocks += ar->sums.binned;
			avail += ar->sums.binned_bytes;
		}
		m->smblks += nfast;
		m->ordblks += nblocks;
		m->fordblks += avail;
		m->uordblks += ar->system_mem - avail;
		m->arena += ar->system_mem;
		m->fsmblks += fast;
		if (i == 0)
			m->keepcost = ar->top_size;
	}
	/* glibc reports mp_'s own counters.  They can drift from the
	   mappings: 2.43 and 2.44 add 16 bytes too many to mmapped_mem at
	   each mremap of a chunk.  pm_find_mmapped notes any difference.  */
	if (p->mp) {
		m->hblks = p->n_mmaps;
		m->hblkhd = p->mmapped_mem;
		return;
	}
	m->hblks = p->nmmapped;
	for (size_t i = 0; i < p->nmmapped; i++)
		m->hblkhd += p->mmapped[i].size + p->mmapped[i].tail;
}

/* summary's ptmalloc part, indented under it.  */
static const struct em_section PM_SUMMARY = { .indent = 2, .label_width = 22 };
static const struct em_field F_HEAPS = {
	.key = "heaps", .label = "layout:", .noun = "heap" };
static const struct em_field F_MMAPPED = {
	.key = "mmapped_chunks", .join = ", ", .noun = "mmapped chunk" };
static const struct em_field F_TCACHES = {
	.key = "tcaches", .join = ", ", .noun = "thread cache" };

/* How each root was found.  Text shows these lines before mallinfo2,
   JSON after it.  */
static const struct em_section S_ROOTS = { .key = "roots" };
static const struct em_field F_MAIN_ARENA = {
	.key = "main_arena", .label = "main_arena:" };
static const struct em_field F_MAIN_ARENA_FROM = {
	.key = "main_arena_from", .join = " (", .post = ")" };
static const struct em_field F_MP = { .key = "mp_", .label = "mp_:", .none = "0x0" };
static const struct em_field F_MP_FROM = {
	.key = "mp_from", .join = " (", .post = ")" };
static const struct em_field F_TCACHE_FROM = {
	.key = "tcache_from", .label = "tcaches:" };
static const struct em_field F_LAYOUT = {
	.key = "layout", .label = "struct layouts:" };
static const struct em_field F_LAYOUT_CACHE = {
	.key = "layout_cache_note", .only = EM_JSON_ONLY };
/* JSON has the version at the top of summary.  */
static const struct em_field F_GLIBC_VERSION = {
	.label = "glibc version:", .only = EM_TEXT_ONLY };
static const struct em_field F_VERSION_FROM = {
	.key = "version_from", .join = " (", .post = ")" };
static const struct em_field F_DATA_SAYS = {
	.key = "data_says", .label = "the heap's data:", .pre = "glibc " };
static const struct em_field F_TEXT_TAIL = { .join = "", .only = EM_TEXT_ONLY };
static const struct em_field F_DATA_EVIDENCE = {
	.key = "data_evidence", .join = ": " };
static const struct em_field F_VERSION_AGREES = {
	.key = "version_agrees", .only = EM_JSON_ONLY };
static const struct em_field F_NO_EVIDENCE = {
	.label = "the heap's data:", .only = EM_TEXT_ONLY };

/* glibc's mallinfo2 members: JSON has them all, before the roots; text
   after them, without usmblks (always 0), arena also in human units.  */
static const struct em_section S_MALLINFO_JSON = {
	.key = "mallinfo", .only = EM_JSON_ONLY };
static const struct em_section S_MALLINFO_TEXT = {
	.title = "mallinfo2 (as glibc would report it):", .indent = 4,
	.label_width = 10, .only = EM_TEXT_ONLY };
static const struct em_field F_ARENA_HUMAN = {
	.join = "  (", .post = ")", .form = EM_T_HUMAN };

static void emit_mallinfo(struct hw_emitter *e, const struct em_section *sect,
			  const struct mallinfo_sum *m)
{
	const struct { const char *name; uint64_t v; bool text; } mi[] = {
		{ "arena", m->arena, true }, { "ordblks", m->ordblks, true },
		{ "smblks", m->smblks, true }, { "hblks", m->hblks, true },
		{ "hblkhd", m->hblkhd, true }, { "usmblks", m->usmblks, false },
		{ "fsmblks", m->fsmblks, true },
		{ "uordblks", m->uordblks, true },
		{ "fordblks", m->fordblks, true },
		{ "keepcost", m->keepcost, true },
	};
	em_section_begin(e, sect);
	for (size_t i = 0; i < sizeof mi / sizeof mi[0]; i++) {
		const struct em_field f = {
			.key = mi[i].name, .label = mi[i].name, .width = 14,
			.only = mi[i].text ? EM_BOTH : EM_JSON_ONLY };
		em_kv(e, &f, ev_u64(mi[i].v));
		if (i == 0)
			em_kv(e, &F_ARENA_HUMAN, ev_only(ev_u64(mi[i].v),
							 EM_TEXT_ONLY));
	}
	em_section_end(e);
}

/* Where the layouts came from, and (text) what the layout cache had to
   do with it: layouts kept from an earlier run (the file they came from
   was checked by size, time and inode, not read), answers found wrong
   and replaced, a cache directory not used and why.  JSON says the last
   two in layout_cache.  */
static void emit_layout_source(struct pm_state *p, struct hw_emitter *e)
{
	const char *refused = hw_syms_layout_cache_refused(p->s->syms);
	bool dwarf = !strcmp(p->l.source, "DWARF");
	char text[4608];
	if (dwarf && p->layout_cache_wrong)
		snprintf(text, sizeof text, "DWARF (the layout cache's "
			 "answers disagreed with the debug file: replaced)");
	else if (dwarf && hw_syms_layouts_cached(p->s->syms))
		snprintf(text, sizeof text, "DWARF (kept in the layout cache "
			 "from an earlier run; --no-cache reads the debug "
			 "file)");
	else if (dwarf && refused)
		snprintf(text, sizeof text, "DWARF (the layout cache is not "
			 "used: %s)", refused);
	else
		text[0] = '\0';
	em_kv(e, &F_LAYOUT, text[0] ? ev_text(ev_str(p->l.source), text)
				    : ev_str(p->l.source));
	if (p->layout_cache_wrong)
		em_kv(e, &F_LAYOUT_CACHE,
		      ev_str("wrong answers replaced from the debug file"));
	else if (refused)
		em_kv(e, &F_LAYOUT_CACHE, ev_str(refused));
}

void pm_report_summary(void *state, struct hw_emitter *e)
{
	struct pm_state *p = state;
	struct mallinfo_sum m;
	compute_mallinfo(p, &m);
	em_section_begin(e, &PM_SUMMARY);
	em_kv(e, &F_HEAPS, ev_u64(p->nheaps));
	em_kv(e, &F_MMAPPED, ev_u64(p->nmmapped));
	em_kv(e, &F_TCACHES, ev_u64(p->ntcaches));
	emit_mallinfo(e, &S_MALLINFO_JSON, &m);
	em_section_begin(e, &S_ROOTS);
	em_kv(e, &F_MAIN_ARENA, ev_addr(p->main_arena));
	em_kv(e, &F_MAIN_ARENA_FROM, ev_str(p->how_arena));
	em_kv(e, &F_MP, ev_addr_or_null(p->mp));
	em_kv(e, &F_MP_FROM, ev_str(p->how_mp));
	em_kv(e, &F_TCACHE_FROM, ev_str(p->how_tcache ? p->how_tcache
					 : "no tcache in this glibc"));
	emit_layout_source(p, e);
	em_kv(e, &F_GLIBC_VERSION, ev_str(p->version));
	em_kv(e, &F_VERSION_FROM, ev_str(p->how_version));
	if (p->era.observed) {
		char range[32];
		snprintf(range, sizeof range, "2.%d-2.%d", p->era.lo, p->era.hi);
		em_kv(e, &F_DATA_SAYS, ev_str(range));
		em_kv(e, &F_TEXT_TAIL, ev_str(p->era.disagrees ?
			" (NOT the version string's)" :
			p->l.ver_major ? " (agrees)" : ""));
		em_kv(e, &F_DATA_EVIDENCE, ev_str(p->era.seen));
		em_kv(e, &F_VERSION_AGREES, ev_bool(!p->era.disagrees));
	} else {
		em_kv(e, &F_NO_EVIDENCE,
		      ev_str("no layout evidence (empty heap?)"));
	}
	em_section_end(e);
	emit_mallinfo(e, &S_MALLINFO_TEXT, &m);
	em_section_end(e);
}

/* ---- arenas ------------------------------------------------------------ */

struct arena_tot {
	uint64_t used, used_bytes, free, free_bytes;
};

struct arena_walk {
	struct arena_tot *tot;
	size_t n;
};

static bool add_arena_chunk(void *cookie, const struct hw_chunk *c)
{
	struct arena_walk *w = cookie;
	if (c->arena < 0 || (size_t)c->arena >= w->n)
		return true;
	struct arena_tot *t = &w->tot[c->arena];
	if (c->used) {
		t->used++;
		t->used_bytes += c->size;
	} else {
		t->free++;
		t->free_bytes += c->size;
	}
	return true;
}

struct em_val pm_thread_tids(const struct pm_state *p, int32_t arena,
			     int32_t *tids)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nthread_arenas; i++)
		if (p->thread_arenas[i].arena == arena)
			tids[n++] = p->thread_arenas[i].tid;
	return ev_ids(tids, n);
}

/* Text: a line "LABEL 2187,2190" under the table, wrapped to stay within
   100 columns; nothing when no thread has it.  JSON: arrays before it.  */
#define TIDS_PRE "         "
static const struct em_field F_NO_ARENA_JSON = {
	.key = "no_arena", .only = EM_JSON_ONLY };
static const struct em_field F_NOT_AN_ARENA_JSON = {
	.key = "not_an_arena", .only = EM_JSON_ONLY };
static const struct em_field F_UNREADABLE_JSON = {
	.key = "unreadable", .only = EM_JSON_ONLY };
static const struct em_field F_NO_ARENA_TEXT = {
	.label = "no arena (thread_arena NULL: no malloc yet):", .pre = TIDS_PRE,
	.form = EM_T_IDLINE, .only = EM_TEXT_ONLY };
static const struct em_field F_NOT_AN_ARENA_TEXT = {
	.label = "thread_arena not an arena:", .pre = TIDS_PRE,
	.form = EM_T_IDLINE, .only = EM_TEXT_ONLY };
static const struct em_field F_UNREADABLE_TEXT = {
	.label = "TLS not in the core:", .pre = TIDS_PRE,
	.form = EM_T_IDLINE, .only = EM_TEXT_ONLY };
static const struct em_field F_THREADS_FROM_JSON = {
	.key = "threads_from", .only = EM_JSON_ONLY };
static const struct em_field F_THREADS_FROM_TEXT = {
	.label = "threads:", .only = EM_TEXT_ONLY };

/* One row per arena (99 columns), its threads and heaps under it.  */
enum {
	AC_ARENA, AC_ADDR, AC_KIND, AC_TOP, AC_TOP_SIZE, AC_SYSTEM_MEM,
	AC_MAX_SYSTEM_MEM, AC_ATTACHED, AC_THREADS, AC_MUTEX, AC_FLAGS,
	AC_NHEAPS, AC_USED, AC_USED_BYTES, AC_FREE, AC_FREE_BYTES, AC_COUNT
};
static const struct em_field ARENA_COLS[AC_COUNT] = {
	[AC_ARENA] = { .key = "arena", .label = "arena", .width = 5 },
	[AC_ADDR] = { .key = "addr", .label = "address", .join = "  ",
		      .width = -14, .form = EM_T_HEX0, .digits = 12 },
	[AC_KIND] = { .key = "kind", .label = "kind", .width = -6 },
	[AC_TOP] = { .key = "top", .only = EM_JSON_ONLY },
	[AC_TOP_SIZE] = { .key = "top_size", .label = "top size", .width = 10,
			  .form = EM_T_HUMAN },
	[AC_SYSTEM_MEM] = { .key = "system_mem", .label = "system_mem",
			    .width = 10, .form = EM_T_HUMAN },
	[AC_MAX_SYSTEM_MEM] = { .key = "max_system_mem", .only = EM_JSON_ONLY },
	[AC_ATTACHED] = { .key = "attached_threads", .label = "thr", .width = 3 },
	[AC_THREADS] = { .key = "threads", .label = "threads", .pre = TIDS_PRE,
			 .form = EM_T_IDLINE },
	[AC_MUTEX] = { .key = "mutex", .only = EM_JSON_ONLY },
	[AC_FLAGS] = { .key = "flags", .only = EM_JSON_ONLY },
	[AC_NHEAPS] = { .label = "heaps", .width = 5, .only = EM_TEXT_ONLY },
	[AC_USED] = { .key = "used", .label = "used", .width = 8 },
	[AC_USED_BYTES] = { .key = "used_bytes", .label = "used bytes",
			    .width = 10, .form = EM_T_HUMAN },
	[AC_FREE] = { .key = "free", .label = "free", .width = 7 },
	[AC_FREE_BYTES] = { .key = "free_bytes", .label = "free bytes",
			    .width = 10, .form = EM_T_HUMAN },
};
static const uint8_t ARENA_TEXT_ORDER[] = {
	AC_ARENA, AC_ADDR, AC_KIND, AC_NHEAPS, AC_SYSTEM_MEM, AC_TOP_SIZE,
	AC_ATTACHED, AC_USED, AC_USED_BYTES, AC_FREE, AC_FREE_BYTES,
};
static const struct em_table ARENA_TABLE = {
	.key = "arenas", .cols = ARENA_COLS, .ncols = AC_COUNT,
	.text_order = ARENA_TEXT_ORDER, .ntext = sizeof ARENA_TEXT_ORDER };

/* "         heap 0x...-0x... (132.0 KiB)".  */
static const struct em_field HEAP_COLS[] = {
	{ .key = "start", .join = TIDS_PRE "heap " },
	{ .key = "end", .join = "-" },
	{ .join = " (", .post = ")", .form = EM_T_HUMAN, .only = EM_TEXT_ONLY },
	{ .key = "heap_info", .only = EM_JSON_ONLY },
};
static const struct em_table HEAP_TABLE = {
	.key = "heaps", .cols = HEAP_COLS, .ncols = 4,
	.flags = EM_TB_NO_HEADER };

void pm_heap_rows(struct hw_emitter *e, const struct pm_state *p, size_t i)
{
	em_table_begin(e, &HEAP_TABLE);
	for (size_t h = 0; h < p->nheaps; h++) {
		const struct pm_heap *hp = &p->heaps[h];
		if (hp->arena != (int32_t)i)
			continue;
		const struct em_val hv[] = {
			ev_addr(hp->start), ev_addr(hp->end),
			ev_u64(hp->end - hp->start),
			hp->info ? ev_addr(hp->info) : ev_absent(),
		};
		em_row(e, hv);
	}
	em_table_end(e);
}

static void arena_row(struct hw_emitter *e, const struct pm_state *p,
		      size_t i, const struct arena_tot *tot, int32_t *tids)
{
	const struct pm_arena *ar = &p->arenas[i];
	struct em_val v[AC_COUNT] = {
		[AC_ARENA] = ev_u64(i),
		[AC_ADDR] = ev_addr(ar->addr),
		[AC_KIND] = ev_str(i == 0 ? "main" : "thread"),
		[AC_TOP] = ev_addr(ar->top),
		[AC_TOP_SIZE] = ev_u64(ar->top_size),
		[AC_SYSTEM_MEM] = ev_u64(ar->system_mem),
		[AC_MAX_SYSTEM_MEM] = ev_u64(ar->max_system_mem),
		[AC_ATTACHED] = ev_u64(ar->attached_threads),
		[AC_THREADS] = p->thread_arenas
			       ? pm_thread_tids(p, (int32_t)i, tids) : ev_null(),
		[AC_MUTEX] = ev_u64(ar->mutex),
		[AC_FLAGS] = ev_u64(ar->flags),
		[AC_NHEAPS] = ev_u64(ar->nheaps),
		[AC_USED] = ev_u64(tot->used),
		[AC_USED_BYTES] = ev_u64(tot->used_bytes),
		[AC_FREE] = ev_u64(tot->free),
		[AC_FREE_BYTES] = ev_u64(tot->free_bytes),
	};
	em_row_open(e, v);
	pm_heap_rows(e, p, i);
	em_row_close(e);
}

enum hw_status pm_report_arenas(void *state, struct hw_emitter *e)
{
	struct pm_state *p = state;
	struct arena_tot tot[PM_MAX_ARENAS];
	memset(tot, 0, sizeof tot);
	int32_t *tids = malloc((p->nthread_arenas + 1) * sizeof *tids);
	if (!tids)
		return hw_error(p->s, HW_BAD_TARGET, "out of memory");
	struct arena_walk w = { tot, p->narenas };
	pm_walk_chunks(p, add_arena_chunk, &w);
	em_doc_begin(e);
	em_kv(e, &F_THREADS_FROM_JSON, ev_str(p->how_thread_arena));
	if (p->thread_arenas) {
		em_kv(e, &F_NO_ARENA_JSON,
		      pm_thread_tids(p, PM_TA_NONE, tids));
		em_kv(e, &F_NOT_AN_ARENA_JSON,
		      pm_thread_tids(p, PM_TA_OTHER, tids));
		em_kv(e, &F_UNREADABLE_JSON,
		      pm_thread_tids(p, PM_TA_UNREAD, tids));
	}
	em_table_begin(e, &ARENA_TABLE);
	for (size_t i = 0; i < p->narenas; i++)
		arena_row(e, p, i, &tot[i], tids);
	em_table_end(e);
	/* Threads the table does not show, and where the rest came from.  */
	em_kv(e, &F_NO_ARENA_TEXT, pm_thread_tids(p, PM_TA_NONE, tids));
	em_kv(e, &F_NOT_AN_ARENA_TEXT,
	      pm_thread_tids(p, PM_TA_OTHER, tids));
	em_kv(e, &F_UNREADABLE_TEXT, pm_thread_tids(p, PM_TA_UNREAD, tids));
	em_kv(e, &F_THREADS_FROM_TEXT, ev_str(p->how_thread_arena));
	em_doc_end(e);
	free(tids);
	return HW_OK;
}
