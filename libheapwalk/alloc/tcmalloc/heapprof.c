/* heapprof.c - gperftools' heap profiler (HEAPPROFILE=prefix, or
 * HeapProfilerStart): its table of every allocation, read out of the
 * target.
 *
 * heap-profiler.cc keeps one HeapProfileTable (static heap_profile, not
 * exported) while the profiler runs, and so does heap-checker.cc while
 * the leak checker runs (HEAPCHECK=normal; a static of the same name and
 * class): whichever is found is read.
 *
 *   HeapProfileTable: alloc_, dealloc_ (the profiler's own allocator,
 *     code of the library), total_ (a Bucket), profile_mmap_,
 *     bucket_table_ (179999 chains of Buckets), num_buckets_,
 *     address_map_
 *   Bucket: allocs, frees (int32), alloc_size, free_size (int64), hash,
 *     depth, stack (up to 32 return addresses), next
 *   AddressMap: hashtable_ of 4096 chains of Clusters (1 MiB of address
 *     space each: 8192 lists of 128-byte blocks), Entry: next, key (the
 *     object), bytes, bucket | live | ignore
 *
 * Without symbols (Debian's library is stripped) the table is the word
 * of the library's data that points at that shape: two pointers into
 * the library's code, a total Bucket with no stack, counts that add up.
 * The profile is the buckets, ordered as GetHeapProfile orders them
 * (the most bytes in use first); each recorded block's bucket names its
 * allocation site.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

#define HP_ALLOC 0
#define HP_DEALLOC 8
#define HP_TOTAL 16
#define HP_BUCKETS 80
#define HP_NBUCKETS 88
#define HP_MAP 96
#define HP_SIZE 104
#define BUCKET_SIZE 56
#define BUCKET_DEPTH 32               /* HeapProfileBucket::kMaxStackDepth */
#define BUCKET_TABLE_LEN 179999       /* kHashTableSize */
#define MAP_HASH_LEN 4096             /* AddressMap: 1 << kHashBits */
#define CLUSTER_BLOCKS 8192           /* 1 << kClusterBits */
#define ENTRY_SIZE 32
/* More buckets or clusters than this is damage.  */
#define MAX_BUCKETS (1u << 24)
#define MAX_CLUSTERS (1u << 22)

struct bucket {
	int32_t allocs, frees;
	int64_t alloc_size, free_size;
	uint64_t hash;
	int32_t depth, pad;
	uint64_t stack, next;
};

static bool in_code(const struct tc_state *tc, uint64_t a)
{
	return tc->have_mod && a >= tc->mod.low && a < tc->mod.high;
}

static bool counts_sane(const struct bucket *b)
{
	return b->frees >= 0 && b->allocs >= b->frees && b->free_size >= 0 &&
	       b->alloc_size >= b->free_size;
}

/* Is there a HeapProfileTable at a?  */
static bool table_at(struct tc_state *tc, uint64_t a)
{
	uint64_t w[HP_SIZE / 8];
	struct bucket total;
	if (!a || a & 7 || !hw_read(tc->t, a, w, sizeof w))
		return false;
	memcpy(&total, (const uint8_t *)w + HP_TOTAL, sizeof total);
	int32_t nb;
	memcpy(&nb, (const uint8_t *)w + HP_NBUCKETS, 4);
	return in_code(tc, w[HP_ALLOC / 8]) && in_code(tc, w[HP_DEALLOC / 8]) &&
	       w[HP_ALLOC / 8] != w[HP_DEALLOC / 8] && counts_sane(&total) &&
	       !total.depth && !total.stack && !total.next &&
	       nb >= 0 && (uint32_t)nb <= MAX_BUCKETS &&
	       w[HP_BUCKETS / 8] && !(w[HP_BUCKETS / 8] & 7) &&
	       w[HP_MAP / 8] && !(w[HP_MAP / 8] & 7);
}

uint64_t tc_find_heap_profile(struct tc_state *tc, const char **how)
{
	uint64_t a, p;
	if (tc->have_mod &&
	    hw_syms_lookup(tc->s->syms, &tc->mod, "_ZL12heap_profile", &a,
			   NULL, NULL)) {
		*how = "symbol heap_profile";
		return hw_read_u64(tc->t, a, &p) && table_at(tc, p) ? p : 0;
	}
	/* The static pointer is in the library's data; the table itself in
	   the profiler's arena.  */
	for (size_t i = 0; i < tc->ndata; i++)
		for (a = tc->data[i].start; a + 8 <= tc->data[i].end; a += 8)
			if (hw_read_u64(tc->t, a, &p) && p && table_at(tc, p)) {
				*how = "a pointer in the library's data to its "
				       "shape";
				return p;
			}
	return 0;
}

/* [a, a + len) is the profiler's own memory.  Consecutive pieces (an
   address map's entries come 64 to an allocation) make one range.  */
static void meta_add(struct tc_prof *tp, uint64_t a, uint64_t len)
{
	if (!a || !len || a + len < a)
		return;
	if (tp->nmeta && tp->meta[tp->nmeta - 1].end == a) {
		tp->meta[tp->nmeta - 1].end = a + len;
		return;
	}
	if (tp->nmeta == tp->capmeta) {
		size_t n = tp->capmeta ? 2 * tp->capmeta : 256;
		struct hw_addr_range *v = realloc(tp->meta, n * sizeof *v);
		if (!v)
			return;
		tp->meta = v;
		tp->capmeta = n;
	}
	tp->meta[tp->nmeta++] = (struct hw_addr_range){ a, a + len };
}

struct site_key {
	uint64_t bucket;              /* the Bucket's address */
	size_t site;
};

static int key_cmp(const void *a, const void *b)
{
	const struct site_key *x = a, *y = b;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* GetHeapProfile's order: the most bytes in use first (ties: the hash
   table's order, which is what was read).  */
static int site_cmp(const void *a, const void *b)
{
	const struct hw_prof_site *x = a, *y = b;
	if (x->dump.curbytes != y->dump.curbytes)
		return x->dump.curbytes > y->dump.curbytes ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every bucket, as sites (their addr: the read order, for the sort).  */
static enum hw_status read_buckets(struct tc_state *tc, struct tc_prof *tp,
				   uint64_t table_addr, uint32_t nb,
				   struct site_key **keys_out)
{
	uint64_t *table = malloc(BUCKET_TABLE_LEN * sizeof *table);
	size_t cap = nb ? nb : 1;
	tp->sites = calloc(cap, sizeof *tp->sites);
	tp->stacks = calloc(cap * BUCKET_DEPTH, sizeof *tp->stacks);
	struct site_key *keys = calloc(cap, sizeof *keys);
	if (!table || !tp->sites || !tp->stacks || !keys) {
		free(table);
		free(keys);
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	}
	size_t n = 0;
	meta_add(tp, table_addr, BUCKET_TABLE_LEN * sizeof *table);
	if (!hw_read(tc->t, table_addr, table, BUCKET_TABLE_LEN * sizeof *table))
		hw_partial(tc->s, table_addr, "tcmalloc: the heap profiler's "
			   "bucket table at 0x%llx is not in the %s",
			   (unsigned long long)table_addr, hw_target_noun(tc->t));
	else
		for (size_t i = 0; i < BUCKET_TABLE_LEN; i++) {
			uint64_t at = table[i], prev = table_addr + 8 * i;
			while (at) {
				struct bucket b;
				if (n == cap) {
					hw_finding(tc->s, prev, "tcmalloc: the heap "
						   "profiler's buckets are more "
						   "than its count, %u", nb);
					goto done;
				}
				if (!hw_read(tc->t, at, &b, sizeof b) ||
				    !counts_sane(&b) || b.depth < 0 ||
				    b.depth > BUCKET_DEPTH ||
				    (b.depth && !hw_read(tc->t, b.stack,
							 tp->stacks + n * BUCKET_DEPTH,
							 (size_t)b.depth * 8))) {
					hw_finding(tc->s, prev, "tcmalloc: the heap "
						   "profiler's bucket at 0x%llx "
						   "is not readable or not a "
						   "bucket", (unsigned long long)at);
					break;
				}
				meta_add(tp, at, BUCKET_SIZE);
				meta_add(tp, b.stack, (uint64_t)b.depth * 8);
				struct hw_prof_site *st = &tp->sites[n];
				st->addr = n;
				st->pcs = tp->stacks + n * BUCKET_DEPTH;
				st->npcs = (unsigned)b.depth;
				st->dump.curobjs = (uint64_t)(b.allocs - b.frees);
				st->dump.curbytes = (uint64_t)(b.alloc_size - b.free_size);
				st->dump.accumobjs = (uint64_t)b.allocs;
				st->dump.accumbytes = (uint64_t)b.alloc_size;
				st->est = st->dump;
				st->sampled_objs = st->dump.curobjs;
				st->sampled_bytes = st->dump.curbytes;
				keys[n].bucket = at;
				n++;
				prev = at;
				at = b.next;
			}
		}
done:
	free(table);
	if (n != nb)
		hw_finding(tc->s, table_addr, "tcmalloc: the heap profiler counts "
			   "%u buckets; %zu were read", nb, n);
	qsort(tp->sites, n, sizeof *tp->sites, site_cmp);
	/* keys[r].site: where the bucket read r-th went; that site's addr,
	   its read index until now, becomes the bucket's address.  */
	for (size_t k = 0; k < n; k++)
		keys[tp->sites[k].addr].site = k;
	for (size_t r = 0; r < n; r++)
		tp->sites[keys[r].site].addr = keys[r].bucket;
	qsort(keys, n, sizeof *keys, key_cmp);
	tp->p.sites = tp->sites;
	tp->p.nsites = n;
	*keys_out = keys;
	return HW_OK;
}

static const struct hw_prof_site *site_of_bucket(const struct tc_prof *tp,
						 const struct site_key *keys,
						 uint64_t bucket)
{
	size_t lo = 0, hi = tp->p.nsites;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keys[mid].bucket == bucket)
			return &tp->sites[keys[mid].site];
		if (keys[mid].bucket < bucket)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Every block the address map holds, with its site.  */
static enum hw_status read_objects(struct tc_state *tc, struct tc_prof *tp,
				   uint64_t map, const struct site_key *keys,
				   uint64_t live)
{
	uint64_t hashtable;
	uint64_t *heads = malloc(MAP_HASH_LEN * sizeof *heads);
	uint64_t *blocks = malloc(CLUSTER_BLOCKS * sizeof *blocks);
	/* No more entries than the live objects the total counts, and
	   some slack for damage to show.  */
	size_t cap = live + 16, max = live + 1024;
	tp->objs = malloc(cap * sizeof *tp->objs);
	if (!heads || !blocks || !tp->objs) {
		free(heads);
		free(blocks);
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	}
	size_t n = 0, clusters = 0;
	/* AddressMap: hashtable_, free_, alloc_, dealloc_, allocated_.  */
	meta_add(tp, map, 40);
	if (!hw_read_u64(tc->t, map, &hashtable) ||
	    !hw_read(tc->t, hashtable, heads, MAP_HASH_LEN * sizeof *heads)) {
		hw_partial(tc->s, map, "tcmalloc: the heap profiler's address "
			   "map at 0x%llx is not in the %s: blocks are not "
			   "named by their sites", (unsigned long long)map,
			   hw_target_noun(tc->t));
		goto out;
	}
	meta_add(tp, hashtable, MAP_HASH_LEN * sizeof *heads);
	for (size_t h = 0; h < MAP_HASH_LEN; h++) {
		for (uint64_t c = heads[h]; c; clusters++) {
			uint64_t next;
			if (clusters == MAX_CLUSTERS ||
			    !hw_read_u64(tc->t, c, &next) ||
			    !hw_read(tc->t, c + 16, blocks,
				     CLUSTER_BLOCKS * sizeof *blocks)) {
				hw_finding(tc->s, c, "tcmalloc: the heap profiler's "
					   "address map has a bad cluster "
					   "at 0x%llx", (unsigned long long)c);
				break;
			}
			meta_add(tp, c, 16 + CLUSTER_BLOCKS * sizeof *blocks);
			for (size_t k = 0; k < CLUSTER_BLOCKS; k++)
				for (uint64_t e = blocks[k]; e;) {
					uint64_t w[ENTRY_SIZE / 8];
					if (n == max ||
					    !hw_read(tc->t, e, w, sizeof w)) {
						hw_finding(tc->s, e, "tcmalloc: "
							   "the heap profiler's "
							   "address map breaks "
							   "at 0x%llx (or holds "
							   "more than its %llu "
							   "live blocks)",
							   (unsigned long long)e,
							   (unsigned long long)live);
						goto out;
					}
					if (n == cap) {
						size_t nc = cap * 2;
						struct tc_prof_obj *v = realloc(
							tp->objs, nc * sizeof *v);
						if (!v)
							goto out;
						tp->objs = v;
						cap = nc;
					}
					meta_add(tp, e, ENTRY_SIZE);
					const struct hw_prof_site *st =
						site_of_bucket(tp, keys,
							       w[3] & ~3ull);
					if (st)
						tp->objs[n++] = (struct tc_prof_obj){
							w[1], st };
					e = w[0];
				}
			c = next;
		}
	}
out:
	free(heads);
	free(blocks);
	tc_prof_index_objs(tp, n);
	return HW_OK;
}

enum hw_status tc_read_heap_profile(struct tc_state *tc, struct tc_prof *tp,
				    uint64_t table, const char *how)
{
	struct hw_profile *p = &tp->p;
	uint64_t w[HP_SIZE / 8];
	struct bucket total;
	if (!hw_read(tc->t, table, w, sizeof w))
		return hw_error(tc->s, HW_BAD_TARGET, "tcmalloc: the heap profile "
				"table at 0x%llx is not in the %s",
				(unsigned long long)table, hw_target_noun(tc->t));
	meta_add(tp, table, HP_SIZE);
	memcpy(&total, (const uint8_t *)w + HP_TOTAL, sizeof total);
	uint32_t nb;
	memcpy(&nb, (const uint8_t *)w + HP_NBUCKETS, 4);
	struct site_key *keys = NULL;
	enum hw_status st = read_buckets(tc, tp, w[HP_BUCKETS / 8], nb, &keys);
	if (st == HW_OK)
		st = read_objects(tc, tp, w[HP_MAP / 8], keys,
				  (uint64_t)(total.allocs - total.frees));
	free(keys);
	if (st != HW_OK)
		return st;
	p->all_allocations = true;
	p->accum = true;
	p->active = true;
	p->period = 1;
	p->period_known = true;
	p->dump = (struct hw_prof_counts){
		(uint64_t)(total.allocs - total.frees),
		(uint64_t)(total.alloc_size - total.free_size),
		(uint64_t)total.allocs, (uint64_t)total.alloc_size };
	p->est = p->dump;
	p->sampled_objs = p->dump.curobjs;
	p->sampled_bytes = p->dump.curbytes;
	snprintf(tp->found, sizeof tp->found, "the heap profile table at "
		 "0x%llx (%s)", (unsigned long long)table, how);
	p->found_by = tp->found;
	return HW_OK;
}
