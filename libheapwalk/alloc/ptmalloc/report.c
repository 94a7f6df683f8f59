/* report.c - the ptmalloc-specific reports: summary members, arenas, bins.  */
#include <stdio.h>
#include <string.h>

#include "../../report/emit.h"
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
			nfast += ar->fast[b].count;
			fast += ar->fast[b].bytes;
		}
		avail += fast;
		for (int b = 1; b < PM_NBINS; b++) {
			nblocks += ar->bins[b].count;
			avail += ar->bins[b].bytes;
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
	m->hblks = p->nmmapped;
	for (size_t i = 0; i < p->nmmapped; i++)
		m->hblkhd += p->mmapped[i].size;
}

void pm_report_summary(void *state, struct hw_emitter *e)
{
	struct pm_state *p = state;
	struct mallinfo_sum m;
	compute_mallinfo(p, &m);
	if (e->json) {
		em_u64(e, "heaps", p->nheaps);
		em_u64(e, "mmapped_chunks", p->nmmapped);
		em_u64(e, "tcaches", p->ntcaches);
		em_obj_begin(e, "mallinfo");
		em_u64(e, "arena", m.arena);
		em_u64(e, "ordblks", m.ordblks);
		em_u64(e, "smblks", m.smblks);
		em_u64(e, "hblks", m.hblks);
		em_u64(e, "hblkhd", m.hblkhd);
		em_u64(e, "usmblks", m.usmblks);
		em_u64(e, "fsmblks", m.fsmblks);
		em_u64(e, "uordblks", m.uordblks);
		em_u64(e, "fordblks", m.fordblks);
		em_u64(e, "keepcost", m.keepcost);
		em_obj_end(e);
		em_obj_begin(e, "roots");
		em_hex(e, "main_arena", p->main_arena);
		em_str(e, "main_arena_from", p->how_arena);
		em_hex_or_null(e, "mp_", p->mp);
		em_str(e, "mp_from", p->how_mp);
		em_str(e, "tcache_from", p->how_tcache ? p->how_tcache
						       : "no tcache in this glibc");
		em_str(e, "layout", p->l.source);
		em_str(e, "version_from", p->how_version);
		if (p->era.observed) {
			char range[32];
			snprintf(range, sizeof range, "2.%d-2.%d", p->era.lo,
				 p->era.hi);
			em_str(e, "data_says", range);
			em_str(e, "data_evidence", p->era.seen);
			em_bool(e, "version_agrees", !p->era.disagrees);
		}
		em_obj_end(e);
		return;
	}
	char b1[32];
	em_printf(e, "  %-22s %zu heap%s, %zu mmapped chunk%s, %zu thread "
		  "cache%s\n", "layout:", p->nheaps, p->nheaps == 1 ? "" : "s",
		  p->nmmapped, p->nmmapped == 1 ? "" : "s", p->ntcaches,
		  p->ntcaches == 1 ? "" : "s");
	em_printf(e, "  %-22s 0x%llx (%s)\n", "main_arena:",
		  (unsigned long long)p->main_arena, p->how_arena);
	em_printf(e, "  %-22s 0x%llx (%s)\n", "mp_:",
		  (unsigned long long)p->mp, p->how_mp);
	em_printf(e, "  %-22s %s\n", "tcaches:",
		  p->how_tcache ? p->how_tcache : "no tcache in this glibc");
	em_printf(e, "  %-22s %s\n", "struct layouts:", p->l.source);
	em_printf(e, "  %-22s %s (%s)\n", "glibc version:", p->version,
		  p->how_version);
	if (p->era.observed)
		em_printf(e, "  %-22s glibc 2.%d-2.%d%s: %s\n", "the heap's data:",
			  p->era.lo, p->era.hi,
			  p->era.disagrees ? " (NOT the version string's)"
			  : p->l.ver_major ? " (agrees)" : "", p->era.seen);
	else
		em_printf(e, "  %-22s %s\n", "the heap's data:",
			  "no layout evidence (empty heap?)");
	em_printf(e, "  mallinfo2 (as glibc would report it):\n");
	em_printf(e, "    %-10s %14llu  (%s)\n", "arena",
		  (unsigned long long)m.arena, hw_human(b1, sizeof b1, m.arena));
	em_printf(e, "    %-10s %14llu\n", "ordblks", (unsigned long long)m.ordblks);
	em_printf(e, "    %-10s %14llu\n", "smblks", (unsigned long long)m.smblks);
	em_printf(e, "    %-10s %14llu\n", "hblks", (unsigned long long)m.hblks);
	em_printf(e, "    %-10s %14llu\n", "hblkhd", (unsigned long long)m.hblkhd);
	em_printf(e, "    %-10s %14llu\n", "fsmblks", (unsigned long long)m.fsmblks);
	em_printf(e, "    %-10s %14llu\n", "uordblks", (unsigned long long)m.uordblks);
	em_printf(e, "    %-10s %14llu\n", "fordblks", (unsigned long long)m.fordblks);
	em_printf(e, "    %-10s %14llu\n", "keepcost", (unsigned long long)m.keepcost);
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
   PM_TA_* value) as a JSON array.  */
static void thread_tids_json(struct hw_emitter *e, const char *key,
			     const struct pm_state *p, int32_t arena)
{
	em_arr_begin(e, key);
	for (size_t i = 0; i < p->nthread_arenas; i++)
		if (p->thread_arenas[i].arena == arena)
			em_i64(e, NULL, p->thread_arenas[i].tid);
	em_arr_end(e);
}

/* The same as a text line "LABEL 2187,2190", wrapped to stay within
   100 columns; nothing when no thread has it.  */
static void thread_tids_text(struct hw_emitter *e, const char *label,
			     const struct pm_state *p, int32_t arena)
{
	int indent = 9 + (int)strlen(label) + 1, col = 0;
	for (size_t i = 0; i < p->nthread_arenas; i++) {
		if (p->thread_arenas[i].arena != arena)
			continue;
		char tid[16];
		int n = snprintf(tid, sizeof tid, "%d",
				 p->thread_arenas[i].tid);
		if (col == 0) {
			em_printf(e, "%9s%s %s", "", label, tid);
			col = indent + n;
		} else if (col + 1 + n > 99) {
			em_printf(e, ",\n%*s%s", indent, "", tid);
			col = indent + n;
		} else {
			em_printf(e, ",%s", tid);
			col += 1 + n;
		}
	}
	if (col)
		em_printf(e, "\n");
}

static void arena_json(struct hw_emitter *e, const struct pm_state *p,
		       size_t i, const struct arena_tot *tot)
{
	const struct pm_arena *ar = &p->arenas[i];
	em_obj_begin(e, NULL);
	em_u64(e, "arena", i);
	em_hex(e, "addr", ar->addr);
	em_str(e, "kind", i == 0 ? "main" : "thread");
	em_hex(e, "top", ar->top);
	em_u64(e, "top_size", ar->top_size);
	em_u64(e, "system_mem", ar->system_mem);
	em_u64(e, "max_system_mem", ar->max_system_mem);
	em_u64(e, "attached_threads", ar->attached_threads);
	if (p->thread_arenas)
		thread_tids_json(e, "threads", p, (int32_t)i);
	else
		em_null(e, "threads");
	em_u64(e, "mutex", ar->mutex);
	em_u64(e, "flags", ar->flags);
	em_u64(e, "used", tot->used);
	em_u64(e, "used_bytes", tot->used_bytes);
	em_u64(e, "free", tot->free);
	em_u64(e, "free_bytes", tot->free_bytes);
	em_arr_begin(e, "heaps");
	for (size_t h = 0; h < p->nheaps; h++) {
		if (p->heaps[h].arena != (int32_t)i)
			continue;
		em_obj_begin(e, NULL);
		em_hex(e, "start", p->heaps[h].start);
		em_hex(e, "end", p->heaps[h].end);
		if (p->heaps[h].info)
			em_hex(e, "heap_info", p->heaps[h].info);
		em_obj_end(e);
	}
	em_arr_end(e);
	em_obj_end(e);
}

/* One row of the table (99 columns), then its threads and heaps.  */
static void arena_text(struct hw_emitter *e, const struct pm_state *p,
		       size_t i, const struct arena_tot *tot)
{
	const struct pm_arena *ar = &p->arenas[i];
	char a[32], b[32], c[32], d[32];
	em_printf(e, "%5zu  0x%012llx %-6s %5zu %10s %10s %3llu %8llu %10s "
		  "%7llu %10s\n", i, (unsigned long long)ar->addr,
		  i == 0 ? "main" : "thread", ar->nheaps,
		  hw_human(a, sizeof a, ar->system_mem),
		  hw_human(b, sizeof b, ar->top_size),
		  (unsigned long long)ar->attached_threads,
		  (unsigned long long)tot->used,
		  hw_human(c, sizeof c, tot->used_bytes),
		  (unsigned long long)tot->free,
		  hw_human(d, sizeof d, tot->free_bytes));
	thread_tids_text(e, "threads", p, (int32_t)i);
	for (size_t h = 0; h < p->nheaps; h++)
		if (p->heaps[h].arena == (int32_t)i)
			em_printf(e, "         heap 0x%llx-0x%llx (%s)\n",
				  (unsigned long long)p->heaps[h].start,
				  (unsigned long long)p->heaps[h].end,
				  hw_human(a, sizeof a, p->heaps[h].end -
					   p->heaps[h].start));
}

void pm_report_arenas(void *state, struct hw_emitter *e)
{
	struct pm_state *p = state;
	struct arena_tot tot[PM_MAX_ARENAS];
	memset(tot, 0, sizeof tot);
	struct arena_walk w = { tot, p->narenas };
	pm_walk_chunks(p, add_arena_chunk, &w);
	if (e->json) {
		em_obj_begin(e, NULL);
		em_str(e, "threads_from", p->how_thread_arena);
		if (p->thread_arenas) {
			thread_tids_json(e, "no_arena", p, PM_TA_NONE);
			thread_tids_json(e, "not_an_arena", p, PM_TA_OTHER);
			thread_tids_json(e, "unreadable", p, PM_TA_UNREAD);
		}
		em_arr_begin(e, "arenas");
		for (size_t i = 0; i < p->narenas; i++)
			arena_json(e, p, i, &tot[i]);
		em_arr_end(e);
		em_obj_end(e);
		em_jsonl_end(e);
		return;
	}
	em_printf(e, "%5s  %-14s %-6s %5s %10s %10s %3s %8s %10s %7s %10s\n",
		  "arena", "address", "kind", "heaps", "system_mem",
		  "top size", "thr", "used", "used bytes", "free",
		  "free bytes");
	for (size_t i = 0; i < p->narenas; i++)
		arena_text(e, p, i, &tot[i]);
	/* Threads the table does not show, and where the rest came from.  */
	thread_tids_text(e, "no arena (thread_arena NULL: no malloc yet):", p,
			 PM_TA_NONE);
	thread_tids_text(e, "thread_arena not an arena:", p, PM_TA_OTHER);
	thread_tids_text(e, "TLS not in the core:", p, PM_TA_UNREAD);
	em_printf(e, "threads: %s\n", p->how_thread_arena);
}

/* ---- bins -------------------------------------------------------------- */

enum { K_TCACHE = 1, K_FAST = 2, K_UNSORTED = 4, K_SMALL = 8, K_LARGE = 16 };

static void bin_row(struct hw_emitter *e, const char *kind, int arena,
		    int tid, int index, uint64_t chunk_size, uint64_t count,
		    uint64_t bytes)
{
	if (e->json) {
		em_obj_begin(e, NULL);
		em_str(e, "kind", kind);
		if (arena >= 0)
			em_i64(e, "arena", arena);
		if (tid >= 0)
			em_i64(e, "thread", tid);
		em_i64(e, "index", index);
		if (chunk_size)
			em_u64(e, "chunk_size", chunk_size);
		em_u64(e, "count", count);
		em_u64(e, "bytes", bytes);
		em_obj_end(e);
		return;
	}
	char b[32], where[32];
	if (tid == -1 && strcmp(kind, "tcache") == 0)
		snprintf(where, sizeof where, "thread ?");
	else if (tid >= 0)
		snprintf(where, sizeof where, "thread %d", tid);
	else
		snprintf(where, sizeof where, "arena %d", arena);
	if (chunk_size)
		em_printf(e, "%-9s %-14s %5d %#12llx %8llu %12s\n", kind, where,
			  index, (unsigned long long)chunk_size,
			  (unsigned long long)count, hw_human(b, sizeof b, bytes));
	else
		em_printf(e, "%-9s %-14s %5d %12s %8llu %12s\n", kind, where,
			  index, "-", (unsigned long long)count,
			  hw_human(b, sizeof b, bytes));
}

enum hw_status pm_report_bins(void *state, struct hw_emitter *e,
			      const char *kind)
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
	if (e->json) {
		em_obj_begin(e, NULL);
		em_arr_begin(e, "bins");
	} else {
		em_printf(e, "%-9s %-14s %5s %12s %8s %12s\n", "kind", "owner",
			  "index", "chunk size", "count", "bytes");
	}
	if (want & K_TCACHE)
		for (size_t i = 0; i < p->ntcaches; i++) {
			const struct pm_tcache *tc = &p->tcaches[i];
			for (int b = 0; b < PM_TCACHE_MAX_BINS; b++)
				if (tc->walked[b] || tc->counts[b]) {
					uint64_t cs = (uint64_t)b * 16 + PM_MINSIZE;
					bin_row(e, "tcache", tc->arena, tc->tid, b,
						cs, tc->walked[b],
						tc->walked[b] * cs);
				}
		}
	for (size_t i = 0; i < p->narenas; i++) {
		const struct pm_arena *ar = &p->arenas[i];
		if (want & K_FAST)
			for (int b = 0; b < PM_NFASTBINS; b++)
				if (ar->fast[b].count)
					bin_row(e, "fast", (int)i, -1, b,
						(uint64_t)(b + 2) * 16,
						ar->fast[b].count,
						ar->fast[b].bytes);
		for (int b = 1; b < PM_NBINS; b++) {
			if (!ar->bins[b].count)
				continue;
			unsigned k = b == 1 ? K_UNSORTED : b < 64 ? K_SMALL : K_LARGE;
			if (!(want & k))
				continue;
			bin_row(e, k == K_UNSORTED ? "unsorted"
				 : k == K_SMALL ? "small" : "large", (int)i, -1,
				b, k == K_SMALL ? (uint64_t)b * 16 : 0,
				ar->bins[b].count, ar->bins[b].bytes);
		}
	}
	if (e->json) {
		em_arr_end(e);
		em_obj_end(e);
		em_jsonl_end(e);
	}
	return HW_OK;
}
