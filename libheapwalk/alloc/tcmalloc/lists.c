/* lists.c - every free small object, from the lists that hold them: each
 * in-use span's own list, the central lists' transfer slots and every
 * thread cache's list per class.  All are singly linked through the
 * object's first word, which is the program's memory: a use after free
 * can point a list anywhere.  So every link must land on an object of
 * the list's class (a slot of an in-use span of that class), a list is
 * never followed further than its span, slot or length says, and what
 * breaks is a finding at the address of the last good object.
 *
 * What each list holds goes into the holder map, two bits per object
 * (no list of objects to sort).  The links are the program's memory,
 * one cache miss each in a large core: lists are followed several at a
 * time so that the misses overlap, and in threads (run_phase), a kind
 * of list after another so that an object two lists hold is the first
 * kind's: the spans' own, the transfer slots, the thread caches.  The
 * views that follow one list again (bins.c, params.c, anatomy.c) read a
 * thread cache's list afresh with tc_read_freelist, at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcmalloc.h"

#define CENTRAL_COUNTER 0x78
#define CENTRAL_NUM_SPANS 0x70
#define CACHE_SIZE 0x1000

struct phase;

/* One part of a pass over lists, run in a thread of its own.  */
struct collect {
	struct tc_state *tc;
	const struct phase *ph;
	const struct tc_span *last;   /* the span the last lookup found */
	size_t next, end;             /* its units: [next, end) ... */
	unsigned part, nparts;        /* ... or every nparts-th group */
	uint64_t objects[TC_MAX_CLASSES];  /* what its lists gave, by class */
};

/* The span of class cls whose object addr is, or NULL.  Consecutive
   objects of a list are often of one span: that one is tried first.  */
static const struct tc_span *object_of(struct collect *c, uint64_t addr,
				       unsigned cls)
{
	const struct tc_span *sp = c->last;
	if (!sp || addr < sp->addr || addr - sp->addr >= sp->bytes)
		sp = tc_span_of(c->tc, addr);
	if (!sp || sp->cls != cls || !sp->objsize)
		return NULL;
	c->last = sp;
	return tc_is_object(sp, addr) ? sp : NULL;
}

/* One free list being followed.  */
struct cursor {
	uint64_t at;                  /* the next object to take, 0: ended */
	uint64_t prev;                /* the last taken, or the list's home */
	uint64_t n, max;
	const struct tc_span *span;   /* a span's own list: that span */
	uint64_t home;                /* where the list's head is */
	uint64_t len;                 /* the length its home gives */
	size_t owner;                 /* a thread cache's list: its index */
	unsigned cls;
	enum tc_holder h;
	const char *what;
};

static void cursor_start(struct collect *c, struct cursor *k, uint64_t head,
			 unsigned cls, uint64_t max, enum tc_holder h,
			 const char *what, uint64_t where)
{
	/* A list never holds more objects than its class has.  */
	if (max > c->tc->class_slots[cls])
		max = c->tc->class_slots[cls];
	*k = (struct cursor){ .at = head, .prev = where, .max = max,
			      .home = where, .len = max, .cls = cls, .h = h,
			      .what = what };
}

/* Give object slot to holder h; false when a list has it already.  A
   span's own list holds only that span's objects, and the parts of the
   pass over spans' lists are cut where a byte of the holder map begins
   (run_phase), so no other thread writes its bytes.  Any other list may
   hold any object of its class, one another thread's list holds too:
   shared claims are atomic.  */
static bool claim(struct tc_state *tc, uint64_t slot, enum tc_holder h,
		  bool shared)
{
	uint8_t *b = &tc->holders[slot >> 2];
	unsigned shift = (unsigned)(slot & 3) * 2;
	if (!shared) {
		if ((*b >> shift) & 3)
			return false;
		*b = (uint8_t)(*b | h << shift);
		return true;
	}
	uint8_t old = __atomic_load_n(b, __ATOMIC_RELAXED);
	do {
		if ((old >> shift) & 3)
			return false;
	} while (!__atomic_compare_exchange_n(b, &old,
					      (uint8_t)(old | h << shift),
					      true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/* Take the object at k->at and read its link; false when the list has
   ended (NULL, its length, or a link that leaves the class: a finding).
   The next object is prefetched: walks that interleave several lists
   have its line by the time they come back to this one.  */
static bool cursor_step(struct collect *c, struct cursor *k)
{
	struct tc_state *tc = c->tc;
	if (!k->at)
		return false;
	if (k->n == k->max) {
		hw_finding(tc->s, k->prev, "tcmalloc: %s of class %u is longer "
			   "than its %llu objects (a cycle?)", k->what, k->cls,
			   (unsigned long long)k->max);
		return false;
	}
	const struct tc_span *sp = k->span ? (tc_is_object(k->span, k->at) ?
					      k->span : NULL)
					   : object_of(c, k->at, k->cls);
	if (!sp) {
		hw_finding(tc->s, k->prev, "tcmalloc: %s of class %u (%u "
			   "bytes) links to 0x%llx, which is not an object of "
			   "that %s", k->what, k->cls, tc->class_size[k->cls],
			   (unsigned long long)k->at, k->span ? "span" : "class");
		return false;
	}
	uint64_t slot = sp->slot + (k->at - sp->addr) / sp->objsize;
	if (!claim(tc, slot, k->h, !k->span))
		hw_finding(tc->s, k->at, "tcmalloc: the object is on two free "
			   "lists (freed twice?)");
	k->n++;
	k->prev = k->at;
	const uint8_t *p = hw_peek(tc->t, k->at, 8);
	if (p)
		memcpy(&k->at, p, 8);
	else if (!hw_read_u64(tc->t, k->prev, &k->at)) {
		hw_finding(tc->s, k->prev, "tcmalloc: %s of class %u: the free "
			   "object at 0x%llx is not in the %s", k->what, k->cls,
			   (unsigned long long)k->prev, hw_target_noun(tc->t));
		k->at = 0;
		return false;
	}
	if (k->at && (p = hw_peek(tc->t, k->at, 8)))
		__builtin_prefetch(p);
	return k->at != 0;
}

/* A span's list ended: its count against the span's own.  */
static void span_list_done(struct collect *c, const struct cursor *k)
{
	struct tc_state *tc = c->tc;
	const struct tc_span *sp = k->span;
	uint64_t slots = sp->bytes / sp->objsize;
	c->objects[sp->cls] += k->n;
	/* Fewer on the list than the span says are free: the others are
	   past a broken link, and read as in use (a partial walk).  */
	if (k->n + sp->refcount < slots) {
		__atomic_fetch_add(&tc->lost[sp->cls],
				   slots - sp->refcount - k->n,
				   __ATOMIC_RELAXED);
		hw_partial(tc->s, sp->desc, "tcmalloc: the span at 0x%llx "
			   "(class %u) has %llu objects, %u handed out and "
			   "%llu on its free list: %llu free ones read as in use",
			   (unsigned long long)sp->addr, sp->cls,
			   (unsigned long long)slots, sp->refcount,
			   (unsigned long long)k->n,
			   (unsigned long long)(slots - sp->refcount - k->n));
	} else if (k->n + sp->refcount != slots)
		hw_finding(tc->s, sp->desc, "tcmalloc: the span at 0x%llx "
			   "(class %u) has %llu objects, %u handed out and "
			   "%llu on its free list", (unsigned long long)sp->addr,
			   sp->cls, (unsigned long long)slots, sp->refcount,
			   (unsigned long long)k->n);
}

/* Lists walked side by side: each step of one is a cache miss, and the
   misses of this many lists overlap.  */
#define LISTS_AT_ONCE 16
/* Threads a pass over lists uses at most, and the lists that make a
   second one worth starting.  */
#define MAX_PARTS 16
#define LISTS_PER_PART 256

/* A pass over lists of one kind.  Its lists are numbered (units): unit
   u's list is started by start (false: there is none), and done is told
   where it ended.  A part of the pass takes a run of units, or, where
   groups are given, the groups of group_units units whose number is
   its own modulo the parts (a thread cache's lists stay in one part).  */
struct phase {
	size_t nunits;
	size_t group_units;           /* 0: runs of units */
	bool (*start)(struct collect *c, size_t u, struct cursor *k);
	void (*done)(struct collect *c, const struct cursor *k);
	void *src;
};

/* The part's next list in *k; false when it has none left.  */
static bool next_list(struct collect *c, struct cursor *k)
{
	const struct phase *ph = c->ph;
	while (c->next < c->end) {
		size_t u = c->next++;
		if (ph->group_units &&
		    u / ph->group_units % c->nparts != c->part)
			continue;
		if (ph->start(c, u, k))
			return true;
	}
	return false;
}

/* Every list of the part to its end, LISTS_AT_ONCE at a time: the ring
   steps each in turn, so that one list's miss is under way while the
   others are stepped.  */
static void *follow_part(void *arg)
{
	struct collect *c = arg;
	struct cursor ring[LISTS_AT_ONCE];
	size_t live = 0;
	bool more = true;
	for (;;) {
		while (more && live < LISTS_AT_ONCE) {
			struct cursor *k = &ring[live];
			if (!(more = next_list(c, k)))
				break;
			const uint8_t *p = k->at ? hw_peek(c->tc->t, k->at, 8)
						 : NULL;
			if (p)
				__builtin_prefetch(p);
			live++;
		}
		if (!live)
			break;
		for (size_t i = 0; i < live;) {
			if (cursor_step(c, &ring[i])) {
				i++;
				continue;
			}
			c->ph->done(c, &ring[i]);
			ring[i] = ring[--live];
		}
	}
	return NULL;
}

/* Run a pass in parts, one thread each, and add what their lists gave
   to objects[] by class.  The spans' own lists (the pass without
   groups) are cut by their objects, each cut moved on to a span whose
   first object begins a byte of the holder map.  */
static void run_phase(struct tc_state *tc, const struct phase *ph,
		      uint64_t objects[])
{
	struct collect parts[MAX_PARTS];
	unsigned n = hw_threads(tc->s);
	if (n > MAX_PARTS)
		n = MAX_PARTS;
	if (n > ph->nunits / LISTS_PER_PART)
		n = (unsigned)(ph->nunits / LISTS_PER_PART);
	if (n == 0)
		n = 1;
	/* Groups: every part looks at every unit, and takes its own.  */
	size_t bounds[MAX_PARTS + 1] = { 0 };
	bounds[n] = ph->nunits;
	if (!ph->group_units) {
		hw_split_parts(ph->nunits, tc_span_blocks, tc, n, bounds);
		for (unsigned k = 1; k < n; k++) {
			size_t b = bounds[k] > bounds[k - 1] ? bounds[k]
							     : bounds[k - 1];
			while (b < tc->nspans && tc->spans[b].slot % 4)
				b++;
			bounds[k] = b;
		}
	}
	for (unsigned k = 0; k < n; k++)
		parts[k] = (struct collect){
			.tc = tc, .ph = ph, .part = k, .nparts = n,
			.next = bounds[k],
			.end = ph->group_units ? ph->nunits : bounds[k + 1],
		};
	hw_run_parts(parts, sizeof *parts, n, follow_part);
	for (unsigned k = 0; k < n; k++)
		for (unsigned cls = 0; cls < TC_MAX_CLASSES; cls++)
			objects[cls] += parts[k].objects[cls];
}

/* Every in-use span's own list.  */
static bool start_span_list(struct collect *c, size_t u, struct cursor *k)
{
	struct tc_state *tc = c->tc;
	const struct tc_span *sp = &tc->spans[u];
	uint64_t head;
	if (!sp->objsize ||
	    !hw_read_u64(tc->t, sp->desc + TC_SPAN_OBJECTS, &head))
		return false;
	cursor_start(c, k, head, sp->cls, sp->bytes / sp->objsize,
		     TC_IN_SPAN, "a span's free list", sp->desc);
	k->span = sp;
	return true;
}

static void span_lists(struct tc_state *tc)
{
	struct phase ph = { .nunits = tc->nspans, .start = start_span_list,
			    .done = span_list_done };
	run_phase(tc, &ph, tc->central_objects);
}

/* The central lists' transfer slots in use (unit: class * 64 + slot),
   where the count can be believed (central_lists says why not).  */

static bool start_transfer_slot(struct collect *c, size_t u,
				struct cursor *k)
{
	struct tc_state *tc = c->tc;
	const uint32_t *used = c->ph->src;
	unsigned cls = (unsigned)(u / TC_TRANSFER_SLOTS);
	uint32_t slot = (uint32_t)(u % TC_TRANSFER_SLOTS);
	uint64_t at = tc->central + (uint64_t)cls * TC_CENTRAL_STRIDE +
		      TC_CENTRAL_SLOTS + 16 * (uint64_t)slot;
	uint64_t head;
	if (slot >= used[cls] || !hw_read_u64(tc->t, at, &head))
		return false;
	cursor_start(c, k, head, cls, tc->class_move[cls], TC_IN_TRANSFER,
		     "a transfer slot", at);
	return true;
}

static void transfer_done(struct collect *c, const struct cursor *k)
{
	c->objects[k->cls] += k->n;
}

/* The transfer slots, and MallocExtension's central and transfer bytes
   (tcmalloc.cc's ExtractStats).  */
static void central_lists(struct tc_state *tc)
{
	uint32_t used_slots[TC_MAX_CLASSES] = { 0 };
	for (unsigned cls = 1; cls < tc->nclasses; cls++) {
		uint64_t e = tc->central + (uint64_t)cls * TC_CENTRAL_STRIDE;
		uint64_t counter, nspans;
		uint32_t used;
		uint64_t size = tc->class_size[cls];
		if (!hw_read_u64(tc->t, e + CENTRAL_COUNTER, &counter) ||
		    !hw_read_u64(tc->t, e + CENTRAL_NUM_SPANS, &nspans) ||
		    !hw_read_u32(tc->t, e + TC_CENTRAL_USED_SLOTS, &used))
			continue;
		uint64_t waste = ((uint64_t)tc->class_pages[cls] << TC_PAGE_SHIFT)
				 % size;
		tc->central_bytes += size * counter + nspans * waste;
		if (used > TC_TRANSFER_SLOTS) {
			hw_finding(tc->s, e, "tcmalloc: central list of class %u "
				   "says %u transfer slots are used (at most %d)",
				   cls, used, TC_TRANSFER_SLOTS);
			continue;
		}
		tc->transfer_bytes += size * used * tc->class_move[cls];
		used_slots[cls] = used;
		/* counter_: the free objects on the class's spans' lists.  */
		if (counter != tc->central_objects[cls])
			hw_finding(tc->s, e, "tcmalloc: central list of class %u "
				   "counts %llu free objects on its spans; their "
				   "lists hold %llu", cls,
				   (unsigned long long)counter,
				   (unsigned long long)tc->central_objects[cls]);
	}
	struct phase ph = { .nunits = (size_t)tc->nclasses * TC_TRANSFER_SLOTS,
			    .group_units = TC_TRANSFER_SLOTS,
			    .start = start_transfer_slot,
			    .done = transfer_done, .src = used_slots };
	run_phase(tc, &ph, tc->transfer_objects);
}

/* Every thread cache's list of every class (unit: cache * classes +
   class).  */
static bool start_cache_list(struct collect *c, size_t u, struct cursor *k)
{
	struct tc_state *tc = c->tc;
	size_t i = u / tc->nclasses;
	unsigned cls = (unsigned)(u % tc->nclasses);
	uint64_t home = tc->caches[i].addr + TC_FREELIST_STRIDE * (uint64_t)cls;
	uint64_t fl[2];
	if (!cls || !hw_read(tc->t, home, fl, sizeof fl))
		return false;
	cursor_start(c, k, fl[0], cls, (uint32_t)fl[1], TC_IN_THREAD,
		     "a thread cache's list", home);
	/* What the cache says, before cursor_start cut it to the class's
	   objects.  */
	k->len = (uint32_t)fl[1];
	k->owner = i;
	return true;
}

/* A thread cache's list ended.  Its cache is this part's alone (the
   pass groups a cache's lists).  */
static void cache_list_done(struct collect *c, const struct cursor *k)
{
	struct tc_state *tc = c->tc;
	/* The rest are past a broken link: free objects that read as in
	   use.  */
	if (k->n < k->len) {
		__atomic_fetch_add(&tc->lost[k->cls], k->len - k->n,
				   __ATOMIC_RELAXED);
		hw_partial(tc->s, k->home, "tcmalloc: the thread cache at "
			   "0x%llx says its list of class %u holds %llu "
			   "objects; %llu were found: the others read as in use",
			   (unsigned long long)tc->caches[k->owner].addr, k->cls,
			   (unsigned long long)k->len, (unsigned long long)k->n);
	}
	tc->caches[k->owner].objects += k->n;
	c->objects[k->cls] += k->n;
}

/* The thread caches, from ThreadCache::thread_heaps_ on.  */
static bool read_caches(struct tc_state *tc)
{
	uint64_t at;
	if (!tc->thread_heaps || !hw_read_u64(tc->t, tc->thread_heaps, &at))
		return true;
	size_t cap = 0;
	while (at) {
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
			if (!v)
				return false;
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
		tcache->tid = tc_thread_of(tc->t, tcache->tid_word);
		tc->thread_bytes += tcache->size;
		tc->ncaches++;
		if (!hw_read_u64(tc->t, at + tc->lay.cache_next, &at))
			break;
	}
	return true;
}

static bool thread_lists(struct tc_state *tc)
{
	if (!read_caches(tc))
		return false;
	struct phase ph = { .nunits = tc->ncaches * tc->nclasses,
			    .group_units = tc->nclasses,
			    .start = start_cache_list, .done = cache_list_done };
	run_phase(tc, &ph, tc->thread_objects);
	return true;
}

/* Number every in-use span's objects: spans[i].slot.  */
static bool number_slots(struct tc_state *tc)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tc->nspans; i++) {
		struct tc_span *sp = &tc->spans[i];
		sp->slot = n;
		if (sp->objsize)
			n += sp->bytes / sp->objsize;
	}
	tc->nslots = n;
	tc->holders = calloc(n / 4 + 1, 1);
	return tc->holders != NULL;
}

enum hw_status tc_read_lists(struct tc_state *tc)
{
	if (!number_slots(tc))
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	/* In this order: an object two lists hold is the first one's.  */
	span_lists(tc);
	central_lists(tc);
	if (!thread_lists(tc))
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	tc_mark_lost(tc);
	if (tc->lay.cache_tid < 0 && tc->ncaches)
		tc_tls_owners(tc);
	else if (tc->ncaches)
		tc->how_owners = "each cache's tid_ (its thread's pthread_self())";
	return HW_OK;
}

bool tc_read_freelist(struct tc_state *tc, const struct tc_thread_cache *c,
		      unsigned cls, struct tc_freelist *fl)
{
	uint8_t b[24];
	if (!hw_read(tc->t, c->addr + TC_FREELIST_STRIDE * (uint64_t)cls, b,
		     sizeof b))
		return false;
	memcpy(&fl->head, b, 8);
	memcpy(&fl->length, b + 8, 4);
	memcpy(&fl->lowater, b + 12, 4);
	memcpy(&fl->max_length, b + 16, 4);
	return true;
}
