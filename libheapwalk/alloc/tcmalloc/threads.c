/* threads.c - which thread cache each thread uses.
 *
 * Up to 2.15 a ThreadCache holds its thread's pthread_self() (tid_), and
 * a thread's struct pthread lies just before its thread pointer (x86_64:
 * at it), so the thread is the one whose thread pointer is nearest past
 * that word.  2.16 dropped tid_: a thread reaches its cache through
 * ThreadCachePtr::tls_data_ in the library's static TLS block, at one
 * distance from every thread pointer, so the distance is taken from the
 * threads themselves (tc_tls_owners says how).  Without thread pointers
 * the caches are still found (lists.c), not whose they are.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tcmalloc.h"

/* Most struct pthread a thread pointer lies past: glibc's aarch64 TCB is
   right after it (x86_64's thread pointer is the struct itself).  */
#define PTHREAD_SPAN 0x1000

int tc_thread_of(const struct hw_target *t, uint64_t self)
{
	int tid = 0;
	uint64_t best = PTHREAD_SPAN;
	for (size_t k = 0; k < t->nthreads && self; k++) {
		const struct hw_thread *th = &t->threads[k];
		if (th->has_tp && th->tp >= self && th->tp - self < best) {
			best = th->tp - self;
			tid = th->tid;
		}
	}
	return tid;
}

/* How far on either side of a thread pointer 2.16's TLS pointer to the
   thread's cache is looked for: static TLS of a few libraries.  */
#define TLS_SPAN 0x2000

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* 2.16's caches have no tid_: a thread reaches its cache through the
   TLS variable ThreadCachePtr::tls_data_ (in the library's static TLS
   block) and its pthread key (in glibc's struct pthread), both at one
   distance from every thread pointer.  The distance is
   the one at which the most threads hold a cache of the list; each of
   those threads owns that cache.  Threads without a cache hold 0 there
   and vote for nothing.  */
void tc_tls_owners(struct tc_state *tc)
{
	struct hw_target *t = tc->t;
	size_t nwords = 2 * TLS_SPAN / 8;
	uint64_t *addrs = malloc(tc->ncaches * sizeof *addrs);
	uint32_t *votes = calloc(nwords, sizeof *votes);
	uint64_t *win = malloc(2 * TLS_SPAN);
	if (!addrs || !votes || !win)
		goto out;
	for (size_t i = 0; i < tc->ncaches; i++)
		addrs[i] = tc->caches[i].addr;
	qsort(addrs, tc->ncaches, sizeof *addrs, u64_cmp);
	for (size_t k = 0; k < t->nthreads; k++) {
		const struct hw_thread *th = &t->threads[k];
		const struct hw_region *r;
		if (!th->has_tp || th->tp < TLS_SPAN || th->tp & 7 ||
		    !(r = hw_region_of(t, th->tp)))
			continue;
		/* The window, cut to the thread pointer's mapping: the
		   main thread's TLS block sits in a small one.  */
		uint64_t lo = th->tp - TLS_SPAN, hi = th->tp + TLS_SPAN;
		if (lo < r->start)
			lo = (r->start + 7) & ~7ull;
		if (hi > r->end)
			hi = r->end & ~7ull;
		if (hi <= lo || !hw_read(t, lo, win, hi - lo))
			continue;
		size_t first = (size_t)(lo - (th->tp - TLS_SPAN)) / 8;
		for (size_t w = 0; w < (hi - lo) / 8; w++)
			if (win[w] && bsearch(&win[w], addrs, tc->ncaches,
					      sizeof *addrs, u64_cmp))
				votes[first + w]++;
	}
	size_t best = 0;
	for (size_t w = 1; w < nwords; w++)
		if (votes[w] > votes[best])
			best = w;
	if (!votes[best])
		goto out;
	int64_t off = (int64_t)best * 8 - TLS_SPAN;
	/* Both pointers are found, at two distances with the same votes:
	   any other distance as good must name the same cache in every
	   thread, or the owners are not known.  */
	for (size_t w = best + 1; w < nwords; w++) {
		if (votes[w] != votes[best])
			continue;
		int64_t o2 = (int64_t)w * 8 - TLS_SPAN;
		for (size_t k = 0; k < t->nthreads; k++) {
			const struct hw_thread *th = &t->threads[k];
			uint64_t a = 0, b = 0;
			if (!th->has_tp)
				continue;
			hw_read_u64(t, th->tp + (uint64_t)off, &a);
			hw_read_u64(t, th->tp + (uint64_t)o2, &b);
			if (a != b)
				goto out;
		}
	}
	unsigned named = 0;
	for (size_t k = 0; k < t->nthreads; k++) {
		const struct hw_thread *th = &t->threads[k];
		uint64_t cache;
		if (!th->has_tp || !hw_read_u64(t, th->tp + (uint64_t)off, &cache))
			continue;
		for (size_t i = 0; i < tc->ncaches && cache; i++)
			if (tc->caches[i].addr == cache && !tc->caches[i].tid) {
				tc->caches[i].tid = th->tid;
				named++;
			}
	}
	snprintf(tc->owners_buf, sizeof tc->owners_buf, "a TLS pointer at "
		 "thread pointer %s 0x%llx (%u threads)", off < 0 ? "-" : "+",
		 (unsigned long long)(off < 0 ? -off : off), named);
	tc->how_owners = tc->owners_buf;
out:
	free(addrs);
	free(votes);
	free(win);
}
