/* lists.c - every free small object, from the lists that hold them: each
 * in-use span's own list, the central lists' transfer slots and every
 * thread cache's list per class.  All are singly linked through the
 * object's first word, which is the program's memory: a use after free
 * can point a list anywhere.  So every link must land on an object of
 * the list's class (a slot of an in-use span of that class), a list is
 * never followed further than its span, slot or length says, and what
 * breaks is a finding at the address of the last good object.
 */
#include <stdlib.h>
#include <string.h>

#include "tcmalloc.h"

#define CENTRAL_COUNTER 0x78
#define CENTRAL_NUM_SPANS 0x70
#define CENTRAL_SLOTS 0x80
#define CENTRAL_USED_SLOTS 0x480
#define CACHE_SIZE 0x1000

struct collect {
	struct tc_state *tc;
	size_t cap;
	bool oom;
};

static void add_free(struct collect *c, uint64_t addr, enum tc_holder h,
		     uint32_t cache)
{
	struct tc_state *tc = c->tc;
	if (c->oom)
		return;
	if (tc->nfree == c->cap) {
		size_t n = c->cap ? 2 * c->cap : 4096;
		struct tc_free *v = realloc(tc->free, n * sizeof *v);
		if (!v) {
			c->oom = true;
			return;
		}
		tc->free = v;
		c->cap = n;
	}
	tc->free[tc->nfree++] = (struct tc_free){ addr, cache, (uint8_t)h };
}

/* Is addr an object of class cls: a slot of an in-use span of it?  */
static bool object_of(const struct tc_state *tc, uint64_t addr, unsigned cls)
{
	const struct tc_span *sp = tc_span_of(tc, addr);
	return sp && sp->cls == cls && sp->objsize &&
	       (addr - sp->addr) % sp->objsize == 0 &&
	       (addr - sp->addr) / sp->objsize < sp->bytes / sp->objsize;
}

/* Follow a list of class cls from head for at most max objects (stopping
   at NULL).  Returns how many were taken; a link that leaves the class
   is a finding named by `what`.  */
static uint64_t follow(struct collect *c, uint64_t head, unsigned cls,
		       uint64_t max, enum tc_holder h, uint32_t cache,
		       const char *what, uint64_t where)
{
	struct tc_state *tc = c->tc;
	uint64_t n = 0, at = head, prev = where;
	/* A list never holds more objects than its class has.  */
	if (max > tc->class_slots[cls])
		max = tc->class_slots[cls];
	while (at && n < max) {
		if (!object_of(tc, at, cls)) {
			hw_finding(tc->s, prev, "tcmalloc: %s of class %u (%u "
				   "bytes) links to 0x%llx, which is not an "
				   "object of that class", what, cls,
				   tc->class_size[cls], (unsigned long long)at);
			return n;
		}
		add_free(c, at, h, cache);
		n++;
		prev = at;
		if (!hw_read_u64(tc->t, at, &at)) {
			hw_finding(tc->s, prev, "tcmalloc: %s of class %u: the "
				   "free object at 0x%llx is not in the %s",
				   what, cls, (unsigned long long)prev,
				   hw_target_noun(tc->t));
			return n;
		}
	}
	if (at && n == max)
		hw_finding(tc->s, prev, "tcmalloc: %s of class %u is longer "
			   "than its %llu objects (a cycle?)", what, cls,
			   (unsigned long long)max);
	return n;
}

static void span_lists(struct collect *c)
{
	struct tc_state *tc = c->tc;
	for (size_t i = 0; i < tc->nspans && !c->oom; i++) {
		const struct tc_span *sp = &tc->spans[i];
		uint64_t head;
		if (!sp->objsize || !hw_read_u64(tc->t, sp->desc + 0x20, &head))
			continue;
		uint64_t slots = sp->bytes / sp->objsize;
		uint64_t n = follow(c, head, sp->cls, slots, TC_IN_SPAN, 0,
				    "a span's free list", sp->desc);
		tc->central_objects[sp->cls] += n;
		if (n + sp->refcount != slots && !c->oom)
			hw_finding(tc->s, sp->desc, "tcmalloc: the span at 0x%llx "
				   "(class %u) has %llu objects, %u handed out "
				   "and %llu on its free list",
				   (unsigned long long)sp->addr, sp->cls,
				   (unsigned long long)slots, sp->refcount,
				   (unsigned long long)n);
	}
}

/* The transfer slots, and MallocExtension's central and transfer bytes
   (tcmalloc.cc's ExtractStats).  */
static void central_lists(struct collect *c)
{
	struct tc_state *tc = c->tc;
	for (unsigned cls = 1; cls < tc->nclasses && !c->oom; cls++) {
		uint64_t e = tc->central + (uint64_t)cls * 0x4c0;
		uint64_t counter, nspans;
		uint32_t used;
		uint64_t size = tc->class_size[cls];
		if (!hw_read_u64(tc->t, e + CENTRAL_COUNTER, &counter) ||
		    !hw_read_u64(tc->t, e + CENTRAL_NUM_SPANS, &nspans) ||
		    !hw_read_u32(tc->t, e + CENTRAL_USED_SLOTS, &used))
			continue;
		uint64_t waste = ((uint64_t)tc->class_pages[cls] << TC_PAGE_SHIFT)
				 % size;
		tc->central_bytes += size * counter + nspans * waste;
		if (used > 64) {
			hw_finding(tc->s, e, "tcmalloc: central list of class %u "
				   "says %u transfer slots are used (at most 64)",
				   cls, used);
			continue;
		}
		tc->transfer_bytes += size * used * tc->class_move[cls];
		/* counter_: the free objects on the class's spans' lists.  */
		if (counter != tc->central_objects[cls])
			hw_finding(tc->s, e, "tcmalloc: central list of class %u "
				   "counts %llu free objects on its spans; their "
				   "lists hold %llu", cls,
				   (unsigned long long)counter,
				   (unsigned long long)tc->central_objects[cls]);
		for (uint32_t k = 0; k < used; k++) {
			uint64_t head;
			if (!hw_read_u64(tc->t, e + CENTRAL_SLOTS + 16 * k, &head))
				break;
			tc->transfer_objects[cls] +=
				follow(c, head, cls, tc->class_move[cls],
				       TC_IN_TRANSFER, 0, "a transfer slot",
				       e + CENTRAL_SLOTS + 16 * k);
		}
	}
}

/* Most struct pthread a thread pointer lies past: glibc's aarch64 TCB is
   right after it (x86_64's thread pointer is the struct itself).  */
#define PTHREAD_SPAN 0x1000

/* The thread whose pthread_self() is self (a cache's tid_): the one
   whose thread pointer is self or, nearest, just past its struct
   pthread; 0 when none is.  */
static int thread_of(const struct hw_target *t, uint64_t self)
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

static void thread_lists(struct collect *c)
{
	struct tc_state *tc = c->tc;
	uint64_t at;
	if (!tc->thread_heaps || !hw_read_u64(tc->t, tc->thread_heaps, &at))
		return;
	size_t cap = 0;
	while (at && !c->oom) {
		if (tc->ncaches == TC_MAX_THREAD_CACHES) {
			hw_finding(tc->s, at, "tcmalloc: more than %d thread "
				   "caches on the list (a cycle?)",
				   TC_MAX_THREAD_CACHES);
			break;
		}
		if (tc->ncaches == cap) {
			size_t n = cap ? 2 * cap : 16;
			struct tc_thread_cache *v =
				realloc(tc->caches, n * sizeof *v);
			if (!v) {
				c->oom = true;
				break;
			}
			tc->caches = v;
			cap = n;
		}
		struct tc_thread_cache *tcache = &tc->caches[tc->ncaches];
		memset(tcache, 0, sizeof *tcache);
		tcache->addr = at;
		uint32_t size = 0;
		hw_read_u32(tc->t, at + CACHE_SIZE, &size);
		tcache->size = size;
		if (tc->lay.cache_tid >= 0)
			hw_read_u64(tc->t, at + (uint64_t)tc->lay.cache_tid,
				    &tcache->tid_word);
		tcache->tid = thread_of(tc->t, tcache->tid_word);
		for (unsigned cls = 1; cls < tc->nclasses; cls++) {
			uint64_t fl[2];
			if (!hw_read(tc->t, at + 32 * (uint64_t)cls, fl, sizeof fl))
				break;
			uint32_t len = (uint32_t)fl[1];
			uint64_t n = follow(c, fl[0], cls, len, TC_IN_THREAD,
					    (uint32_t)tc->ncaches,
					    "a thread cache's list",
					    at + 32 * (uint64_t)cls);
			if (n < len && !c->oom)
				hw_finding(tc->s, at + 32 * (uint64_t)cls,
					   "tcmalloc: the thread cache at 0x%llx "
					   "says its list of class %u holds %u "
					   "objects; %llu were found",
					   (unsigned long long)at, cls, len,
					   (unsigned long long)n);
			tcache->objects += n;
			tc->thread_objects[cls] += n;
		}
		tc->thread_bytes += tcache->size;
		tc->ncaches++;
		if (!hw_read_u64(tc->t, at + tc->lay.cache_next, &at))
			break;
	}
}

static int free_cmp(const void *a, const void *b)
{
	const struct tc_free *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

enum hw_status tc_read_lists(struct tc_state *tc)
{
	struct collect c = { .tc = tc };
	span_lists(&c);
	central_lists(&c);
	thread_lists(&c);
	if (c.oom)
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	if (tc->nfree)
		qsort(tc->free, tc->nfree, sizeof *tc->free, free_cmp);
	/* An object on two lists was freed twice; it stays once.  */
	size_t n = 0;
	for (size_t i = 0; i < tc->nfree; i++) {
		if (n && tc->free[n - 1].addr == tc->free[i].addr) {
			hw_finding(tc->s, tc->free[i].addr, "tcmalloc: the object "
				   "is on two free lists (freed twice?)");
			continue;
		}
		tc->free[n++] = tc->free[i];
	}
	tc->nfree = n;
	/* Each span's free objects, in address order.  */
	size_t f = 0;
	for (size_t i = 0; i < tc->nspans; i++) {
		struct tc_span *sp = &tc->spans[i];
		while (f < tc->nfree && tc->free[f].addr < sp->addr)
			f++;
		sp->first_free = (uint32_t)f;
		while (f < tc->nfree && tc->free[f].addr - sp->addr < sp->bytes)
			f++;
		sp->nfree = (uint32_t)(f - sp->first_free);
	}
	return HW_OK;
}
