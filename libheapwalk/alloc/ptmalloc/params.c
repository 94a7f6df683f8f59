/* params.c - glibc malloc's own structures, member by member, as the
 * core holds them: `mp` (malloc_par, mp_), `tcache [TID]` (each
 * thread's tcache_perthread_struct) and `arena N` (one malloc_state).
 *
 * Each is read afresh from the target at the offsets of the layout the
 * walker settled on (only a tcache bin's count of listed entries is the
 * lists' walk's): these views show the structure itself, damaged or
 * not, where the reports (report.c, bins.c) show what the walk made of
 * it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "ptmalloc.h"

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
			pm_bin_size_vals(v + 1, sizes, sizeof sizes, lo, hi);
			em_row(e, v);
		}
		em_table_end(e);
		em_row_close(e);
	}
	em_table_end(e);
	em_doc_end(e);
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
	      ? pm_thread_tids(p, (int32_t)n, tids) : ev_null());
	em_section_end(e);
	pm_heap_rows(e, p, n);
	em_doc_end(e);
	free(tids);
	return HW_OK;
}
