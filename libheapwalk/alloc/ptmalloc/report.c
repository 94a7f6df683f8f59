/* report.c - the ptmalloc-specific reports: summary members, arenas, bins.  */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "../listrows.h"
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
	em_kv(e, &F_LAYOUT, ev_str(p->l.source));
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

/* The tids of the threads whose thread_arena is `arena` (an index or a
   PM_TA_* value), into tids (room for every thread).  */
static struct em_val thread_tids(const struct pm_state *p, int32_t arena,
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

/* Arena i's heaps, a row each (`arenas` and `arena N`).  */
static void heap_rows(struct hw_emitter *e, const struct pm_state *p,
		      size_t i)
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
		[AC_THREADS] = p->thread_arenas ? thread_tids(p, (int32_t)i, tids)
						: ev_null(),
		[AC_MUTEX] = ev_u64(ar->mutex),
		[AC_FLAGS] = ev_u64(ar->flags),
		[AC_NHEAPS] = ev_u64(ar->nheaps),
		[AC_USED] = ev_u64(tot->used),
		[AC_USED_BYTES] = ev_u64(tot->used_bytes),
		[AC_FREE] = ev_u64(tot->free),
		[AC_FREE_BYTES] = ev_u64(tot->free_bytes),
	};
	em_row_open(e, v);
	heap_rows(e, p, i);
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
		em_kv(e, &F_NO_ARENA_JSON, thread_tids(p, PM_TA_NONE, tids));
		em_kv(e, &F_NOT_AN_ARENA_JSON, thread_tids(p, PM_TA_OTHER, tids));
		em_kv(e, &F_UNREADABLE_JSON, thread_tids(p, PM_TA_UNREAD, tids));
	}
	em_table_begin(e, &ARENA_TABLE);
	for (size_t i = 0; i < p->narenas; i++)
		arena_row(e, p, i, &tot[i], tids);
	em_table_end(e);
	/* Threads the table does not show, and where the rest came from.  */
	em_kv(e, &F_NO_ARENA_TEXT, thread_tids(p, PM_TA_NONE, tids));
	em_kv(e, &F_NOT_AN_ARENA_TEXT, thread_tids(p, PM_TA_OTHER, tids));
	em_kv(e, &F_UNREADABLE_TEXT, thread_tids(p, PM_TA_UNREAD, tids));
	em_kv(e, &F_THREADS_FROM_TEXT, ev_str(p->how_thread_arena));
	em_doc_end(e);
	free(tids);
	return HW_OK;
}

/* ---- one arena ---------------------------------------------------------- */

/* `arena N`: malloc_state's fields read afresh, with what they point at
   (the top chunk's size, the next arena's number), its threads and heaps.
   glibc's flag bits: FASTCHUNKS_BIT (1, up to 2.26) and
   NONCONTIGUOUS_BIT (2: not one contiguous sbrk heap, every thread
   arena).  */
static const struct em_section S_ARENA = { .label_width = 19, .indent = 2 };
static const struct em_field F_A_INDEX = { .key = "arena", .label = "arena" };
static const struct em_field F_A_ADDR = { .key = "addr", .join = " at " };
static const struct em_field F_A_KIND = {
	.key = "kind", .join = " (", .post = " arena)" };
static const struct em_field F_A_MUTEX = { .key = "mutex", .label = "mutex:" };
static const struct em_field F_A_MUTEX_SAYS = {
	.join = " ", .only = EM_TEXT_ONLY };
static const struct em_field F_A_FLAGS = {
	.key = "flags", .label = "flags:", .form = EM_T_HEX };
static const struct em_field F_A_FLAGS_SAYS = {
	.join = " ", .only = EM_TEXT_ONLY };
static const struct em_field F_A_NONCONTIG = {
	.key = "noncontiguous", .only = EM_JSON_ONLY };
static const struct em_field F_A_FASTCHUNKS = {
	.key = "have_fastchunks", .label = "have_fastchunks:" };
static const struct em_field F_A_TOP = { .key = "top", .label = "top:" };
static const struct em_field F_A_TOP_SIZE = {
	.key = "top_size", .join = " (", .post = ")", .form = EM_T_HUMAN };
static const struct em_field F_A_LAST_REM = {
	.key = "last_remainder", .label = "last_remainder:" };
static const struct em_field F_A_NEXT = { .key = "next", .label = "next:" };
static const struct em_field F_A_NEXT_INDEX = {
	.key = "next_arena", .join = " (arena ", .post = ")" };
static const struct em_field F_A_NEXT_FREE = {
	.key = "next_free", .label = "next_free:" };
static const struct em_field F_A_ATTACHED = {
	.key = "attached_threads", .label = "attached_threads:" };
static const struct em_field F_A_SYSTEM = {
	.key = "system_mem", .label = "system_mem:", .form = EM_T_HUMAN };
static const struct em_field F_A_MAX_SYSTEM = {
	.key = "max_system_mem", .join = " (max ", .post = ")",
	.form = EM_T_HUMAN };
static const struct em_field F_A_THREADS = {
	.key = "threads", .label = "threads:", .none = "-" };

enum hw_status pm_report_arena(void *state, struct hw_emitter *e, size_t n)
{
	struct pm_state *p = state;
	if (n >= p->narenas)
		return hw_error(p->s, HW_USAGE, "arena: no arena %zu (the "
				"arenas are 0 to %zu)", n, p->narenas - 1);
	const struct pm_arena *ar = &p->arenas[n];
	uint64_t a = ar->addr, top = 0, top_size = 0, rem = 0, next = 0;
	uint64_t next_free = 0, attached = 0, sys = 0, max_sys = 0;
	uint32_t mutex = 0, flags = 0, fast = 0;
	struct hw_target *t = p->t;
	hw_read_u32(t, a + (uint64_t)p->l.ms_mutex, &mutex);
	hw_read_u32(t, a + (uint64_t)p->l.ms_flags, &flags);
	bool have_fast = p->l.ms_have_fastchunks >= 0 &&
			 hw_read_u32(t, a + (uint64_t)p->l.ms_have_fastchunks,
				     &fast);
	hw_read_u64(t, a + (uint64_t)p->l.ms_top, &top);
	if (top)
		hw_read_u64(t, top + 8, &top_size);
	top_size &= ~(uint64_t)PM_SIZE_BITS;
	hw_read_u64(t, a + (uint64_t)p->l.ms_last_remainder, &rem);
	hw_read_u64(t, a + (uint64_t)p->l.ms_next, &next);
	bool have_next_free = p->l.ms_next_free >= 0 &&
			      hw_read_u64(t, a + (uint64_t)p->l.ms_next_free,
					  &next_free);
	bool have_attached = p->l.ms_attached_threads >= 0 &&
			     hw_read_u64(t, a + (uint64_t)p->l.ms_attached_threads,
					 &attached);
	hw_read_u64(t, a + (uint64_t)p->l.ms_system_mem, &sys);
	hw_read_u64(t, a + (uint64_t)p->l.ms_max_system_mem, &max_sys);
	int64_t next_index = -1;
	for (size_t i = 0; i < p->narenas && next_index < 0; i++)
		if (p->arenas[i].addr == next)
			next_index = (int64_t)i;
	int32_t *tids = malloc((p->nthread_arenas + 1) * sizeof *tids);
	if (!tids)
		return hw_error(p->s, HW_BAD_TARGET, "out of memory");
	char says[96];
	snprintf(says, sizeof says, "(%s%s%s)",
		 flags & 2 ? "NONCONTIGUOUS_BIT" : "contiguous",
		 flags & 1 ? ", FASTCHUNKS_BIT" : "",
		 flags & ~3u ? ", other bits set" : "");
	em_doc_begin(e);
	em_kv(e, &F_A_INDEX, ev_u64(n));
	em_kv(e, &F_A_ADDR, ev_addr(a));
	em_kv(e, &F_A_KIND, ev_str(a == p->main_arena ? "main" : "thread"));
	em_section_begin(e, &S_ARENA);
	em_kv(e, &F_A_MUTEX, ev_u64(mutex));
	em_kv(e, &F_A_MUTEX_SAYS, ev_str(mutex ? "(locked: a thread was in "
					 "malloc or free)" : "(unlocked)"));
	em_kv(e, &F_A_FLAGS, ev_u64(flags));
	em_kv(e, &F_A_FLAGS_SAYS, ev_str(says));
	em_kv(e, &F_A_NONCONTIG, ev_bool((flags & 2) != 0));
	em_kv(e, &F_A_FASTCHUNKS, have_fast ? ev_bool(fast != 0) : ev_absent());
	em_kv(e, &F_A_TOP, ev_addr(top));
	em_kv(e, &F_A_TOP_SIZE, ev_u64(top_size));
	em_kv(e, &F_A_LAST_REM, ev_addr(rem));
	em_kv(e, &F_A_NEXT, ev_addr(next));
	em_kv(e, &F_A_NEXT_INDEX, next_index >= 0 ? ev_i64(next_index)
						  : ev_absent());
	em_kv(e, &F_A_NEXT_FREE, have_next_free ? ev_addr(next_free)
						: ev_absent());
	em_kv(e, &F_A_ATTACHED, have_attached ? ev_u64(attached) : ev_absent());
	em_kv(e, &F_A_SYSTEM, ev_u64(sys));
	em_kv(e, &F_A_MAX_SYSTEM, ev_u64(max_sys));
	em_kv(e, &F_A_THREADS, p->thread_arenas
	      ? thread_tids(p, (int32_t)n, tids) : ev_null());
	em_section_end(e);
	heap_rows(e, p, n);
	em_doc_end(e);
	free(tids);
	return HW_OK;
}

/* A bin's chunk sizes as four values, for the columns chunk_size,
   min_chunk_size, max_chunk_size (JSON) and "chunk size" (text): one
   size, a range lo..hi (hi 0: no end), or lo 0 for any size (the
   unsorted bin); the text goes into buf.  */
static void bin_size_vals(struct em_val v[4], char *buf, size_t len,
			  uint64_t lo, uint64_t hi)
{
	if (!lo)
		snprintf(buf, len, "-");
	else if (lo == hi)
		snprintf(buf, len, "0x%llx", (unsigned long long)lo);
	else if (hi)
		snprintf(buf, len, "0x%llx-0x%llx", (unsigned long long)lo,
			 (unsigned long long)hi);
	else
		snprintf(buf, len, "0x%llx-", (unsigned long long)lo);
	v[0] = lo && lo == hi ? ev_u64(lo) : ev_absent();
	v[1] = lo != hi ? ev_u64(lo) : ev_absent();
	v[2] = lo != hi && hi ? ev_u64(hi) : ev_absent();
	v[3] = ev_str(buf);
}

/* ---- tcaches -------------------------------------------------------------- */

/* `tcache [TID]`: each thread's tcache_perthread_struct as glibc keeps
   it: where it is, and per bin that holds anything its counter (counts[],
   or 2.42+'s free slots turned into entries), the entries its list has
   (the walk's), and the head as entries[] stores it (never safe-linked).  */
static const struct em_field TC_COLS[] = {
	{ .key = "index", .label = "index", .width = 5 },
	{ .key = "chunk_size", .only = EM_JSON_ONLY },
	{ .key = "min_chunk_size", .only = EM_JSON_ONLY },
	{ .key = "max_chunk_size", .only = EM_JSON_ONLY },
	{ .label = "chunk size", .width = 17, .only = EM_TEXT_ONLY },
	{ .key = "count", .label = "counts[]", .width = 8, .none = "?" },
	{ .key = "listed", .label = "listed", .width = 7 },
	{ .key = "head", .label = "entries[] (head)", .join = "  " },
};
static const struct em_table TC_BINS = {
	.key = "bins", .cols = TC_COLS, .ncols = 8 };
static const struct em_field TC_THREAD_COLS[] = {
	{ .key = "thread", .pre = "tcache of thread ", .none = "?" },
	{ .key = "addr", .join = " at " },
	{ .key = "arena", .join = " (in arena ", .post = ")" },
};
static const struct em_table TC_TABLE = {
	.key = "tcaches", .cols = TC_THREAD_COLS, .ncols = 3,
	.flags = EM_TB_NO_HEADER };

enum hw_status pm_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid)
{
	struct pm_state *p = state;
	if (!p->l.has_tcache)
		return hw_error(p->s, HW_USAGE, "tcache: this glibc (%s) has no "
				"tcache (2.26 brought it)", p->version);
	bool found = tid < 0;
	for (size_t i = 0; i < p->ntcaches && !found; i++)
		found = p->tcaches[i].tid == tid;
	if (!found)
		return hw_error(p->s, HW_USAGE, "tcache: no tcache of thread "
				"%lld (%zu tcaches found: %s)", (long long)tid,
				p->ntcaches, p->how_tcache ? p->how_tcache
							   : "none");
	em_doc_begin(e);
	em_table_begin(e, &TC_TABLE);
	for (size_t i = 0; i < p->ntcaches; i++) {
		const struct pm_tcache *tc = &p->tcaches[i];
		if (tid >= 0 && tc->tid != tid)
			continue;
		const struct em_val tv[] = {
			tc->tid > 0 ? ev_i64(tc->tid) : ev_null(),
			ev_addr(tc->addr),
			tc->arena >= 0 ? ev_i64(tc->arena) : ev_absent(),
		};
		em_row_open(e, tv);
		em_table_begin(e, &TC_BINS);
		for (unsigned b = 0; b < p->l.tc_nbins; b++) {
			uint64_t head = 0, lo, hi;
			hw_read_u64(p->t, tc->addr + (uint64_t)p->l.tc_entries +
				    8 * b, &head);
			if (!head && !tc->counts[b] && !tc->walked[b])
				continue;
			pm_tcache_bin_sizes(b, &lo, &hi);
			char sizes[48];
			struct em_val v[] = {
				ev_u64(b),
				ev_absent(), ev_absent(), ev_absent(), ev_absent(),
				tc->counts_known ? ev_u64(tc->counts[b]) : ev_null(),
				ev_u64(tc->walked[b]),
				ev_addr(head),
			};
			bin_size_vals(v + 1, sizes, sizeof sizes, lo, hi);
			em_row(e, v);
		}
		em_table_end(e);
		em_row_close(e);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}

/* ---- mp_ ---------------------------------------------------------------- */

/* `mp`: glibc's malloc_par, each member this glibc has, read afresh, in
   the struct's order.  */
struct mp_member {
	const char *name;
	size_t off;             /* offsetof(struct pm_layout, ...) */
	uint8_t size;           /* 8: size_t or a pointer; 4: int */
	uint8_t form;           /* EM_T_PLAIN, EM_T_HUMAN, EM_T_HEX */
};
#define MP(name, field, size, form) \
	{ name, offsetof(struct pm_layout, field), size, form }
static const struct mp_member MP_MEMBERS[] = {
	MP("trim_threshold", mp_trim_threshold, 8, EM_T_HUMAN),
	MP("top_pad", mp_top_pad, 8, EM_T_HUMAN),
	MP("mmap_threshold", mp_mmap_threshold, 8, EM_T_HUMAN),
	MP("arena_test", mp_arena_test, 8, EM_T_PLAIN),
	MP("arena_max", mp_arena_max, 8, EM_T_PLAIN),
	MP("thp_mode", mp_thp_mode, 4, EM_T_PLAIN),
	MP("thp_pagesize", mp_thp_pagesize, 8, EM_T_HUMAN),
	MP("hp_pagesize", mp_hp_pagesize, 8, EM_T_HUMAN),
	MP("hp_flags", mp_hp_flags, 4, EM_T_HEX),
	MP("n_mmaps", mp_n_mmaps, 4, EM_T_PLAIN),
	MP("n_mmaps_max", mp_n_mmaps_max, 4, EM_T_PLAIN),
	MP("max_n_mmaps", mp_max_n_mmaps, 4, EM_T_PLAIN),
	MP("no_dyn_threshold", mp_no_dyn_threshold, 4, EM_T_PLAIN),
	MP("mmapped_mem", mp_mmapped_mem, 8, EM_T_HUMAN),
	MP("max_mmapped_mem", mp_max_mmapped_mem, 8, EM_T_HUMAN),
	MP("max_total_mem", mp_max_total_mem, 8, EM_T_HUMAN),
	MP("sbrk_base", mp_sbrk_base, 8, EM_T_HEX),
	MP("tcache_bins", mp_tcache_bins, 8, EM_T_PLAIN),
	MP("tcache_max_bytes", mp_tcache_max_bytes, 8, EM_T_PLAIN),
	MP("tcache_count", mp_tcache_count, 8, EM_T_PLAIN),
	MP("tcache_unsorted_limit", mp_tcache_unsorted_limit, 8, EM_T_PLAIN),
};
static const struct em_field F_MP_ADDR = {
	.key = "addr", .label = "mp_ at", .join = " " };
static const struct em_field F_MP_FROM_DOC = {
	.key = "from", .join = " (", .post = ")" };
static const struct em_section S_MP = {
	.key = "members", .indent = 2, .label_width = 23 };

enum hw_status pm_report_mp(void *state, struct hw_emitter *e)
{
	struct pm_state *p = state;
	if (!p->mp)
		return hw_error(p->s, HW_BAD_TARGET, "mp: mp_ was not found "
				"(%s)", p->how_mp ? p->how_mp : "no libc");
	em_doc_begin(e);
	em_kv(e, &F_MP_ADDR, ev_addr(p->mp));
	em_kv(e, &F_MP_FROM_DOC, ev_str(p->how_mp));
	em_section_begin(e, &S_MP);
	char label[40];
	for (size_t i = 0; i < sizeof MP_MEMBERS / sizeof *MP_MEMBERS; i++) {
		const struct mp_member *m = &MP_MEMBERS[i];
		int64_t off;
		memcpy(&off, (const char *)&p->l + m->off, sizeof off);
		/* (2.44's struct ends before tcache_unsorted_limit: its
		   size says so whichever way the layout was found.)  */
		if (off < 0 || (p->l.mp_sizeof &&
				(uint64_t)off + m->size > p->l.mp_sizeof))
			continue;
		/* 2.42 calls tcache_bins tcache_small_bins.  */
		const char *name = m->off == offsetof(struct pm_layout,
						     mp_tcache_bins) &&
				   p->l.tc_slots ? "tcache_small_bins" : m->name;
		snprintf(label, sizeof label, "%s:", name);
		uint64_t v = 0;
		bool ok;
		if (m->size == 4) {
			uint32_t w;
			ok = hw_read_u32(p->t, p->mp + (uint64_t)off, &w);
			/* (the ints are signed: -1 reads as such)  */
			v = (uint64_t)(int64_t)(int32_t)w;
		} else {
			ok = hw_read_u64(p->t, p->mp + (uint64_t)off, &v);
		}
		const struct em_field f = { .key = name, .label = label,
					    .form = m->form, .none = "?" };
		em_kv(e, &f, !ok ? ev_null() : m->size == 4
			     ? ev_i64((int64_t)v) : m->form == EM_T_HEX
			     ? ev_addr(v) : ev_u64(v));
	}
	em_section_end(e);
	em_doc_end(e);
	return HW_OK;
}

/* ---- bins -------------------------------------------------------------- */

enum { K_TCACHE = 1, K_FAST = 2, K_UNSORTED = 4, K_SMALL = 8, K_LARGE = 16 };

/* A row per bin that holds chunks; JSON names the arena or the thread
   (its tid) that owns it, text says "arena N" / "tid N".  */
static const struct em_field BIN_COLS[] = {
	{ .key = "kind", .label = "kind", .width = -9 },
	{ .key = "arena", .only = EM_JSON_ONLY },
	{ .key = "thread", .only = EM_JSON_ONLY },
	{ .label = "owner", .width = -14, .only = EM_TEXT_ONLY },
	{ .key = "index", .label = "index", .width = 5 },
	/* A bin of one chunk size has chunk_size; a large bin (and 2.42+'s
	   large tcache bins) the range min_chunk_size..max_chunk_size (no
	   max for the last: any size past its start).  */
	{ .key = "chunk_size", .only = EM_JSON_ONLY },
	{ .key = "min_chunk_size", .only = EM_JSON_ONLY },
	{ .key = "max_chunk_size", .only = EM_JSON_ONLY },
	{ .label = "chunk size", .width = 17, .only = EM_TEXT_ONLY },
	{ .key = "count", .label = "count", .width = 8 },
	{ .key = "bytes", .label = "bytes", .width = 12, .form = EM_T_HUMAN },
	/* --list: how the list ends, and the pointer it breaks at.  */
	{ .key = "list_end", .only = EM_JSON_ONLY },
	{ .key = "list_broken_at", .only = EM_JSON_ONLY },
};
static const struct em_table BIN_TABLE = {
	.key = "bins", .cols = BIN_COLS, .ncols = 13 };
static const struct em_table BIN_TABLE_JSON = {
	.key = "bins", .cols = BIN_COLS, .ncols = 13, .only = EM_JSON_ONLY };

/* The chunk sizes large bin i holds, as glibc's largebin_index sorts
   them (sizes of 0x400 and up, 16 apart): the first size whose index is
   i, the last before i + 1's; hi 0 for the last bin, which takes every
   size past its start.  */
static void large_bin_sizes(int i, uint64_t *lo, uint64_t *hi)
{
	uint64_t bounds[2];
	for (int k = 0; k < 2; k++) {
		uint64_t a = 0x400 >> 4, b = (uint64_t)1 << 40;
		while (a < b) {   /* the first size (/16) of index >= i + k */
			uint64_t m = a + (b - a) / 2;
			if (pm_bin_index(m << 4) >= i + k)
				b = m;
			else
				a = m + 1;
		}
		bounds[k] = a << 4;
	}
	*lo = bounds[0];
	*hi = i + 1 < PM_NBINS && bounds[1] < (uint64_t)1 << 44
	      ? bounds[1] - 16 : 0;
}

static const char *chain_says(enum pm_chain_end end)
{
	switch (end) {
	case PM_CHAIN_END: return "";
	case PM_CHAIN_MISALIGNED: return "misaligned: the list breaks here";
	case PM_CHAIN_UNREADABLE: return "not in the target: the list breaks "
					 "here";
	case PM_CHAIN_WRONG_SIZE: return "a chunk of another size: the list "
					 "breaks here";
	case PM_CHAIN_BK: return "its bk does not point back: the list breaks "
				 "here";
	case PM_CHAIN_CYCLE: return "met before: the list is a cycle";
	case PM_CHAIN_LIMIT: return "more than any heap could hold: not "
				    "followed further";
	case PM_CHAIN_OOM: return "out of memory";
	}
	return "";
}

static void chain_rows(struct hw_emitter *e, const struct pm_chain *ch)
{
	hw_list_rows(e, ch->entries, ch->n, ch->bad,
		     ch->end == PM_CHAIN_END ? NULL : chain_says(ch->end));
}

static void bin_row(struct hw_emitter *e, const char *kind, int arena,
		    int tid, int index, uint64_t lo, uint64_t hi,
		    uint64_t count, uint64_t bytes, const struct pm_chain *ch)
{
	char owner[32], sizes[48];
	if (tid == -1 && strcmp(kind, "tcache") == 0)
		snprintf(owner, sizeof owner, "tid ?");
	else if (tid >= 0)
		snprintf(owner, sizeof owner, "tid %d", tid);
	else
		snprintf(owner, sizeof owner, "arena %d", arena);
	struct em_val v[] = {
		ev_str(kind),
		arena >= 0 ? ev_i64(arena) : ev_absent(),
		tid >= 0 ? ev_i64(tid) : ev_absent(),
		ev_str(owner),
		ev_i64(index),
		ev_absent(), ev_absent(), ev_absent(), ev_absent(),
		ev_u64(count),
		ev_u64(bytes),
		ch ? ev_str(pm_chain_end_name(ch->end)) : ev_absent(),
		ch && ch->end != PM_CHAIN_END && ch->end != PM_CHAIN_OOM
		? ev_addr(ch->bad) : ev_absent(),
	};
	bin_size_vals(v + 5, sizes, sizeof sizes, lo, hi);
	if (!ch) {
		em_row(e, v);
		return;
	}
	em_row_open(e, v);
	chain_rows(e, ch);
	em_row_close(e);
}

enum hw_status pm_report_bins(void *state, struct hw_emitter *e,
			      const char *kind, bool list)
{
	struct pm_state *p = state;
	unsigned want = K_TCACHE | K_FAST | K_UNSORTED | K_SMALL | K_LARGE;
	if (kind) {
		if (!strcmp(kind, "tcache")) want = K_TCACHE;
		else if (!strcmp(kind, "fast") || !strcmp(kind, "fastbin")) want = K_FAST;
		else if (!strcmp(kind, "unsorted")) want = K_UNSORTED;
		else if (!strcmp(kind, "small") || !strcmp(kind, "smallbin")) want = K_SMALL;
		else if (!strcmp(kind, "large") || !strcmp(kind, "largebin")) want = K_LARGE;
		else
			return hw_error(p->s, HW_USAGE, "bins: unknown kind '%s' "
					"(tcache, fast, unsorted, small, large)",
					kind);
	}
	em_doc_begin(e);
	if (want == K_FAST && p->l.ms_fastbins < 0) {
		/* Not an empty table: this glibc has no such lists (JSON
		   keeps its shape, an empty list).  */
		em_table_begin(e, &BIN_TABLE_JSON);
		em_table_end(e);
		em_note(e, "no fastbins in this glibc (2.43 removed them: a "
			"freed small chunk goes to its tcache bin, else to its "
			"small bin)");
		em_doc_end(e);
		return HW_OK;
	}
	em_table_begin(e, &BIN_TABLE);
	/* (A list that broke before its first entry still has a row.)  */
	struct pm_chain ch = { 0 };
	if (want & K_TCACHE)
		for (size_t i = 0; i < p->ntcaches; i++) {
			const struct pm_tcache *tc = &p->tcaches[i];
			for (unsigned b = 0; b < p->l.tc_nbins; b++) {
				if (!tc->walked[b] && !tc->counts[b])
					continue;
				if (list)
					pm_chain_tcache(p, tc, b, &ch);
				/* A large bin (2.42+) holds a range of
				   sizes.  */
				uint64_t lo, hi;
				pm_tcache_bin_sizes(b, &lo, &hi);
				bin_row(e, "tcache", tc->arena, tc->tid,
					(int)b, lo, hi, tc->walked[b],
					tc->bytes[b], list ? &ch : NULL);
				free(ch.entries);
				ch.entries = NULL;
			}
		}
	for (size_t i = 0; i < p->narenas; i++) {
		const struct pm_arena *ar = &p->arenas[i];
		if ((want & K_FAST) && p->l.ms_fastbins >= 0)
			for (int b = 0; b < PM_NFASTBINS; b++) {
				if (!ar->fast[b].count &&
				    !(list && ar->fast_broken >> b & 1))
					continue;
				if (list)
					pm_chain_fast(p, i, (unsigned)b, &ch);
				bin_row(e, "fast", (int)i, -1, b,
					(uint64_t)(b + 2) * 16,
					(uint64_t)(b + 2) * 16,
					ar->fast[b].count, ar->fast[b].bytes,
					list ? &ch : NULL);
				free(ch.entries);
				ch.entries = NULL;
			}
		for (int b = 1; b < PM_NBINS; b++) {
			if (!ar->bins[b].count)
				continue;
			unsigned k = b == 1 ? K_UNSORTED : b < 64 ? K_SMALL : K_LARGE;
			if (!(want & k))
				continue;
			if (list)
				pm_chain_bin(p, i, (unsigned)b, &ch);
			/* The unsorted bin takes any size: no range.  */
			uint64_t lo = k == K_SMALL ? (uint64_t)b * 16 : 0, hi = lo;
			if (k == K_LARGE)
				large_bin_sizes(b, &lo, &hi);
			bin_row(e, k == K_UNSORTED ? "unsorted"
				 : k == K_SMALL ? "small" : "large", (int)i, -1,
				b, lo, hi, ar->bins[b].count, ar->bins[b].bytes,
				list ? &ch : NULL);
			free(ch.entries);
			ch.entries = NULL;
		}
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}
