/* lists.c - which of its page's lists holds each free mimalloc block,
 * two bits a block, read once when the allocator is opened.
 *
 * A page's free, local_free and xthread_free lists run through its own
 * blocks; the blocks other threads freed into a full page wait on the
 * owning heap's thread_delayed_free list instead.  In a build that
 * encodes its free lists (MI_SECURE >= 3, or a debug build) each next
 * word is ((p ^ k1) <<< k0) + k0 with the page's keys (the heap's for
 * the delayed list), and a list ends at the page's (heap's) own address
 * rather than NULL; the heads are plain.
 *
 * Every entry must be a block of its page below its capacity that no
 * list holds yet; a list ends where one is not (a finding at the block
 * that points there), so a damaged list costs only its tail.
 */
#include <stdlib.h>
#include <string.h>

#include "mimalloc.h"

static uint64_t rotr(uint64_t x, uint64_t n)
{
	n &= 63;
	return n ? x >> n | x << (64 - n) : x;
}

uint64_t mi_decode_next(const struct mi_state *mi, uint64_t word,
			uint64_t null, const uint64_t keys[2])
{
	if (!mi->L->encoded)
		return word;
	uint64_t p = rotr(word - keys[0], keys[0]) ^ keys[1];
	return p == null ? 0 : p;
}

static void set_list(struct mi_state *mi, uint64_t index, enum mi_list l)
{
	unsigned sh = (unsigned)(index & 3) * 2;
	mi->lists[index >> 2] = (uint8_t)((mi->lists[index >> 2] &
					   ~(3u << sh)) | (unsigned)l << sh);
}

static const char *const list_names[] = {
	[MI_ON_FREE] = "free", [MI_ON_LOCAL] = "local_free",
	[MI_ON_THREAD] = "xthread_free",
};

/* The index of block b of page pg, or false when b is none of its
   blocks below its capacity.  */
static bool block_index(const struct mi_page *pg, uint64_t b, uint64_t *i)
{
	if (b < pg->start || (b - pg->start) % pg->block_size)
		return false;
	*i = (b - pg->start) / pg->block_size;
	return *i < pg->capacity;
}

/* The first word of block b of page pg (mem: its blocks in the core in
   one piece, or NULL), or false when the core lacks it.  A page's list
   is read where the core maps it: no search of the core's segments per
   block (5.5 million free blocks on the bench's heap).  */
static bool first_word(struct mi_state *mi, const struct mi_page *pg,
		       const uint8_t *mem, uint64_t b, uint64_t *w)
{
	if (mem) {
		memcpy(w, mem + (b - pg->start), 8);
		return true;
	}
	return hw_read_u64(mi->t, b, w);
}

/* Page pg's blocks below its capacity, where the core holds them in
   one piece; NULL otherwise.  */
static const uint8_t *page_blocks(struct mi_state *mi, const struct mi_page *pg)
{
	const uint8_t *mem;
	uint64_t need = (uint64_t)pg->capacity * pg->block_size;
	return need && hw_readable_run(mi->t, pg->start, &mem) >= need ? mem
									: NULL;
}

/* One list being followed: its page, where it is, what it counted.  */
struct cursor {
	struct mi_page *pg;
	const uint8_t *mem;       /* page_blocks(pg) */
	uint64_t b, from;         /* the next entry; what pointed at it */
	uint32_t *count;          /* the page's count of this list */
	enum mi_list l;
};

/* One step of cursor k: mark its block and move to the next; false at
   the list's end (or where damage ends it: a finding at the block that
   points astray).  */
static bool step(struct mi_state *mi, struct cursor *k)
{
	struct mi_page *pg = k->pg;
	uint64_t b = k->b, i, w;
	if (!b)
		return false;
	if (!block_index(pg, b, &i)) {
		hw_finding(mi->s, k->from, "mimalloc page 0x%llx: its %s list "
			   "leaves the page: 0x%llx is none of its %u blocks of "
			   "%llu bytes", (unsigned long long)pg->area,
			   list_names[k->l], (unsigned long long)b, pg->capacity,
			   (unsigned long long)pg->block_size);
		pg->lists_bad = true;
		return false;
	}
	if (mi_block_list(mi, pg->states + i) != MI_IN_USE) {
		hw_finding(mi->s, k->from, "mimalloc page 0x%llx: its %s list "
			   "comes back to block 0x%llx, already on its %s list "
			   "(a cycle, or a block freed twice)",
			   (unsigned long long)pg->area, list_names[k->l],
			   (unsigned long long)b,
			   list_names[mi_block_list(mi, pg->states + i)]);
		pg->lists_bad = true;
		return false;
	}
	set_list(mi, pg->states + i, k->l);
	++*k->count;
	if (!first_word(mi, pg, k->mem, b, &w)) {
		hw_partial(mi->s, b, "mimalloc page 0x%llx: block 0x%llx of its "
			   "%s list is not in the core",
			   (unsigned long long)pg->area, (unsigned long long)b,
			   list_names[k->l]);
		pg->lists_bad = true;
		return false;
	}
	k->from = b;
	k->b = mi_decode_next(mi, w, pg->meta, pg->keys);
	return k->b != 0;
}

/* Heap h's delayed list: blocks of its pages that other threads freed.  */
static void follow_delayed(struct mi_state *mi, struct mi_heap *h)
{
	uint64_t b = h->delayed, from = h->addr, i;
	while (b) {
		uint32_t pi = mi_page_of(mi, b);
		struct mi_page *pg = pi == MI_NONE ? NULL : &mi->pages[pi];
		if (!pg || pg->heap != h->addr || !block_index(pg, b, &i) ||
		    mi_block_list(mi, pg->states + i) != MI_IN_USE) {
			hw_finding(mi->s, from, "mimalloc heap 0x%llx: its "
				   "delayed-free list reaches 0x%llx, %s",
				   (unsigned long long)h->addr,
				   (unsigned long long)b,
				   !pg ? "in no page"
				   : pg->heap != h->addr ? "a block of another "
							  "heap's page"
				   : !block_index(pg, b, &i)
					   ? "none of its page's blocks"
					   : "a block already on a list");
			break;
		}
		set_list(mi, pg->states + i, MI_ON_THREAD);
		pg->nthread++;
		h->ndelayed++;
		uint64_t w;
		if (!hw_read_u64(mi->t, b, &w)) {
			hw_partial(mi->s, b, "mimalloc heap 0x%llx: block 0x%llx "
				   "of its delayed-free list is not in the "
				   "core", (unsigned long long)h->addr,
				   (unsigned long long)b);
			break;
		}
		from = b;
		b = mi_decode_next(mi, w, h->addr, h->keys);
	}
}

/* Does the first word of block i of page pg (in use by the lists) make
   it one of the free blocks a broken list lost: each next word a block
   of the page no list holds, reaching the list's end within `lost`
   steps?  (The tail cut off a list runs so; a block in use may too,
   when it holds zeros or such a pointer: then it is only `maybe`.)  */
static bool lost_chain(const struct mi_state *mi, const struct mi_page *pg,
		       uint64_t i)
{
	uint64_t b = pg->start + i * pg->block_size, k;
	for (uint32_t n = 0; n <= pg->lost; n++) {
		uint64_t w;
		if (!hw_read_u64(mi->t, b, &w))
			return false;
		b = mi_decode_next(mi, w, pg->meta, pg->keys);
		if (!b)
			return true;
		if (!block_index(pg, b, &k) ||
		    mi_block_list(mi, pg->states + k) != MI_IN_USE)
			return false;
	}
	return false;
}

/* Pages whose lists hold fewer free blocks than their own count says
   (a list cut by damage): how many they lost, and which blocks in use
   may be those.  */
static enum hw_status mark_lost(struct mi_state *mi)
{
	for (uint32_t p = 0; p < mi->npages; p++) {
		struct mi_page *pg = &mi->pages[p];
		uint64_t listed = (uint64_t)pg->nfree + pg->nlocal;
		if (!pg->block_size || !pg->lists_bad || pg->used > pg->capacity ||
		    listed >= pg->capacity - pg->used)
			continue;
		pg->lost = (uint32_t)(pg->capacity - pg->used - listed);
		if (!mi->maybe && !(mi->maybe = calloc(mi->nblocks / 8 + 1, 1)))
			return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
		for (uint64_t i = 0; i < pg->capacity; i++) {
			uint64_t x = pg->states + i;
			if (mi_block_list(mi, x) == MI_IN_USE &&
			    lost_chain(mi, pg, i))
				mi->maybe[x >> 3] |= (uint8_t)(1u << (x & 7));
		}
	}
	return HW_OK;
}

/* A part of the pages, whose lists one thread reads.  */
struct part {
	struct mi_state *mi;
	uint32_t lo, hi;
};

/* Lists followed at once by one thread: each step of a list waits for
   the word it reads, and steps of different lists do not wait for each
   other, so the processor overlaps their reads.  */
#define MI_CURSORS 16

/* The next list of part p to follow into k, or false when none is
   left: each page's free, local_free and thread-free lists in turn.  */
static bool next_list(struct part *p, uint32_t *page, unsigned *list,
		      struct cursor *k)
{
	struct mi_state *mi = p->mi;
	while (*page < p->hi) {
		struct mi_page *pg = &mi->pages[*page];
		unsigned l = (*list)++;
		if (l == 2) {
			*list = 0;
			++*page;
		}
		static const enum mi_list kinds[3] = { MI_ON_FREE, MI_ON_LOCAL,
						       MI_ON_THREAD };
		uint64_t head = l == 0 ? pg->free
				: l == 1 ? pg->local_free
					 : pg->thread_free;
		if (!head)
			continue;
		/* (Pages' lists all found before this one's: its blocks are
		   looked up once, for its first list.)  */
		*k = (struct cursor){
			.pg = pg, .b = head, .from = pg->meta, .l = kinds[l],
			.count = l == 0 ? &pg->nfree
				 : l == 1 ? &pg->nlocal
					  : &pg->nthread,
			.mem = page_blocks(mi, pg),
		};
		return true;
	}
	return false;
}

static void *read_part(void *arg)
{
	struct part *p = arg;
	struct cursor k[MI_CURSORS];
	unsigned nk = 0, list = 0;
	uint32_t page = p->lo;
	while (nk < MI_CURSORS && next_list(p, &page, &list, &k[nk]))
		nk++;
	while (nk) {
		for (unsigned j = 0; j < nk;) {
			if (step(p->mi, &k[j])) {
				j++;
				continue;
			}
			/* That list is done: the next one in its place.  */
			if (!next_list(p, &page, &list, &k[j]))
				k[j] = k[--nk];
		}
	}
	return NULL;
}

static uint64_t page_weight(const void *ctx, size_t u)
{
	const struct mi_state *mi = ctx;
	return mi->pages[u].capacity + 1;
}

enum hw_status mi_read_lists(struct mi_state *mi)
{
	/* Each page's states start a byte (four blocks a byte), so that
	   threads reading different pages never share one.  */
	uint64_t n = 0;
	for (uint32_t i = 0; i < mi->npages; i++) {
		mi->pages[i].states = n;
		n += (mi->pages[i].capacity + 3ull) & ~3ull;
	}
	mi->nblocks = n;
	mi->lists = calloc(n / 4 + 1, 1);
	if (!mi->lists)
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	/* Following a list is a chain of dependent reads (the bench's
	   heap: 5.5 million free blocks, most of the open's time): the
	   pages' own lists are read in threads, a part of the pages each.  */
	unsigned nparts = hw_threads(mi->s);
	if (nparts > HW_MAX_PARTS)
		nparts = HW_MAX_PARTS;
	if (nparts > mi->npages / 64 + 1)
		nparts = mi->npages / 64 + 1;
	size_t bounds[HW_MAX_PARTS + 1];
	struct part parts[HW_MAX_PARTS];
	hw_split_parts(mi->npages, page_weight, mi, nparts, bounds);
	for (unsigned k = 0; k < nparts; k++)
		parts[k] = (struct part){ mi, (uint32_t)bounds[k],
					  (uint32_t)bounds[k + 1] };
	hw_run_parts(parts, sizeof *parts, nparts, read_part);
	for (uint32_t k = 0; k < mi->nheaps; k++)
		follow_delayed(mi, &mi->heaps[k]);
	return mark_lost(mi);
}
