/* bins.c - ptmalloc's `bins`: a row per bin that holds chunks (tcache,
 * fast, unsorted, small, large) with its count and bytes from the lists
 * the walker read; with --list each list's entries in its own order
 * (followed by chains.c) and how it ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "../listrows.h"
#include "ptmalloc.h"

void pm_bin_size_vals(struct em_val *v, char *buf, size_t len, uint64_t lo,
		      uint64_t hi)
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
	pm_bin_size_vals(v + 5, sizes, sizeof sizes, lo, hi);
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
