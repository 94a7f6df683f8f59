/* keyscan.c - glibc's tcache key learnt from the heap's chunks, when no
 * tcache list reaches an entry that still holds it.
 *
 * era.c learns the key (2.29+: what tcache_put writes into an entry's
 * second word) from the entries the lists reach.  A write after free
 * that breaks the head of the only non-empty list destroys the one key a
 * list could reach too, and the entries behind it, which still hold the
 * key, would read as chunks in use.  They are the evidence then: chunks
 * of tcache sizes, in use by their headers, whose second word holds one
 * value that is also what glibc itself holds:
 *
 *   2.29-2.33  the key is the address of the entry's tcache struct: a
 *              value no program is given (malloc hands out no pointer
 *              to it), so one chunk holding a known tcache's address is
 *              enough;
 *   2.34+      the key is a random word in libc's .bss (tcache_key): a
 *              candidate must be that symbol's value or, without
 *              symbols, a word of libc's writable data, must look random
 *              (no address in the target, no small or sign-extended
 *              number, no sparse bit pattern such as a double's), and at
 *              least two chunks must hold it, clearly more than hold any
 *              other such word.
 *
 * Why this makes no false frees: the key learnt here only arms the
 * per-chunk test of lists.c (pm_tcache_orphan), which is applied only
 * to the bins whose lists are shorter than their tcache's own counter
 * (glibc says entries of that size are missing), and only calls free a
 * chunk whose second word is that very key.  tcache_get clears the key
 * of every entry it hands out, so a chunk in use holds it only if the
 * program copied glibc's secret random value, or its private tcache
 * pointer, into that word; a wrong key learnt here could only be a word
 * that libc itself holds, that is no pointer and looks random, and that
 * several chunks of tcache sizes hold at offset 8: such a word found in
 * the program's data and in libc's by chance is not a practical case.
 * When the evidence falls short the key stays unknown and the chunks
 * keep the state their headers give, as before.
 */
#include <stdlib.h>

#include "ptmalloc.h"

/* libc's words that can be the random key, with the chunks holding each
   (an open-addressed table: libc's writable data holds a few thousand
   words at most, most of them pointers or small numbers).  */
#define KEY_SLOTS 4096
#define KEY_MAX_CAND (KEY_SLOTS / 2)

struct key_cand {
	uint64_t value;
	uint32_t hits;
	bool used;
};

struct key_scan {
	struct pm_state *p;
	struct key_cand *cand;
	size_t ncand;
	uint32_t self_hits;       /* chunks holding a known tcache's address */
};

/* Could v be glibc's random tcache_key?  Random 64-bit values have 32
   bits set give or take a few (fewer than 12 or more than 52: about one
   key in 10^7 is refused, and then it stays unknown).  */
static bool random_looking(struct pm_state *p, uint64_t v)
{
	int bits = __builtin_popcountll(v);
	uint32_t hi = (uint32_t)(v >> 32);
	return bits >= 12 && bits <= 52 && hi != 0 && hi != 0xffffffffu &&
	       !hw_region_of(p->t, v);
}

static struct key_cand *cand_slot(struct key_scan *k, uint64_t v)
{
	size_t j = (size_t)((v * 0x9e3779b97f4a7c15ull) >> 52) &
		   (KEY_SLOTS - 1);
	while (k->cand[j].used && k->cand[j].value != v)
		j = (j + 1) & (KEY_SLOTS - 1);
	return &k->cand[j];
}

static bool add_cand(struct key_scan *k, uint64_t v)
{
	if (!random_looking(k->p, v) || k->ncand == KEY_MAX_CAND)
		return k->ncand < KEY_MAX_CAND;
	struct key_cand *c = cand_slot(k, v);
	if (!c->used) {
		*c = (struct key_cand){ .value = v, .used = true };
		k->ncand++;
	}
	return true;
}

static bool libc_word(void *cookie, uint64_t at, uint64_t value)
{
	(void)at;
	return add_cand(cookie, value);
}

static bool known_tcache(const struct pm_state *p, uint64_t v)
{
	for (size_t i = 0; i < p->ntcaches; i++)
		if (p->tcaches[i].addr == v)
			return true;
	return false;
}

/* Chunks of tcache sizes in use by their headers (a tcache entry's next
   chunk keeps its P bit), on no list: what their second word holds.  A
   damaged size ends the heap's scan (the evidence needs no more).  */
static void scan_heap(struct key_scan *k, const struct pm_heap *h)
{
	struct pm_state *p = k->p;
	uint64_t max = PM_MINSIZE + 16 * (PM_TCACHE_SMALL_BINS - 1);
	uint64_t c = h->start, field, next, key;
	uint64_t limit = p->list_limit;
	while (c + PM_HDR + 16 <= h->end && limit--) {
		if (!hw_read_u64(p->t, c + 8, &field))
			return;
		uint64_t sz = field & ~(uint64_t)PM_SIZE_BITS;
		if (sz < PM_MINSIZE || (sz & 15) || sz > h->end - c)
			return;
		if (sz <= max && c + sz + 16 <= h->end &&
		    !pm_is_tcached(h, c + PM_HDR) &&
		    pm_tag_get(h, c) == PM_TAG_NONE &&
		    hw_read_u64(p->t, c + sz + 8, &next) &&
		    (next & PM_PREV_INUSE) &&
		    hw_read_u64(p->t, c + PM_HDR + 8, &key) && key) {
			if (known_tcache(p, key))
				k->self_hits++;
			else if (k->ncand) {
				struct key_cand *e = cand_slot(k, key);
				if (e->used)
					e->hits++;
			}
		}
		c += sz;
	}
}

/* The candidates: the symbol's value when libc has it (its word is the
   key, whatever else the data holds), else every random-looking word of
   libc's writable data.  */
static void gather(struct key_scan *k)
{
	struct pm_state *p = k->p;
	uint64_t addr, size, v;
	if (p->have_libc_mod &&
	    hw_syms_lookup(p->s->syms, &p->libc_mod, "tcache_key", &addr,
			   &size, NULL)) {
		if (hw_read_u64(p->t, addr, &v))
			add_cand(k, v);
		return;
	}
	pm_libc_data_words(p, libc_word, k);
}

bool pm_learn_tcache_key(struct pm_state *p)
{
	/* 2.26-2.28 entries hold no key.  */
	if (p->era.hi < 29)
		return false;
	struct key_scan k = { .p = p };
	bool random_era = p->era.hi >= 34;
	if (random_era) {
		k.cand = calloc(KEY_SLOTS, sizeof *k.cand);
		if (!k.cand) {
			hw_oom(p->s);
			return false;
		}
		gather(&k);
	}
	for (size_t i = 0; i < p->nheaps; i++)
		scan_heap(&k, &p->heaps[i]);
	uint32_t best = 0, second = 0;
	uint64_t key = 0;
	for (size_t j = 0; k.ncand && j < KEY_SLOTS; j++) {
		uint32_t n = k.cand[j].hits;
		if (n > best) {
			second = best;
			best = n;
			key = k.cand[j].value;
		} else if (n > second)
			second = n;
	}
	free(k.cand);
	if (k.self_hits && p->era.lo <= 33 && !best) {
		p->tcache_key_mode = PM_KEY_SELF;
		return true;
	}
	if (best >= 2 && best > 2 * second && !k.self_hits) {
		p->tcache_key_mode = PM_KEY_RANDOM;
		p->tcache_key = key;
		return true;
	}
	return false;
}
