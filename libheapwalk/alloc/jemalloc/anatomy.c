/* anatomy.c - what jemalloc keeps for one block, as `chunk ADDR` shows
 * it: the extent that holds it (its edata_t and the e_bits word decoded:
 * arena, slab, state, size index, a slab's free count), the pages it
 * spans, and for a slab region its index, its bit in the slab's bitmap
 * and, when it is cached, the thread cache, bin and stack place that
 * hold it; for a large allocation where in its extent it starts.
 *
 * The words are read afresh from the target and set against each other
 * (the bitmap against the tcaches, nfree against the bitmap): the block
 * may be the damaged one the user is looking at.
 */
#include <stdio.h>

#include "../../emit/emit.h"
#include "jemalloc.h"

static const struct em_section S_FIELDS = {
	.key = "fields", .title = "fields:", .indent = 2, .label_width = 10 };
static const struct em_field F_EXTENT = {
	.key = "extent", .label = "extent:" };
static const struct em_field F_EXTENT_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_EBITS = {
	.key = "e_bits", .label = "e_bits:", .form = EM_T_HEX };
static const struct em_field F_EBITS_SAYS = {
	.join = "  = ", .only = EM_TEXT_ONLY };
static const struct em_field F_ARENA = { .key = "arena", .only = EM_JSON_ONLY };
static const struct em_field F_SLAB = { .key = "slab", .only = EM_JSON_ONLY };
static const struct em_field F_STATE = { .key = "state", .only = EM_JSON_ONLY };
static const struct em_field F_SZIND = { .key = "szind", .only = EM_JSON_ONLY };
static const struct em_field F_CLASS = {
	.key = "size_class", .only = EM_JSON_ONLY };
static const struct em_field F_NFREE = { .key = "nfree", .only = EM_JSON_ONLY };
static const struct em_field F_BASE = { .key = "base", .label = "pages:" };
static const struct em_field F_EXTENT_SIZE = {
	.key = "extent_size", .join = " + ", .form = EM_T_HEX };
static const struct em_field F_PAGES_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_REGION = {
	.key = "region", .label = "region:" };
static const struct em_field F_NREGS = {
	.key = "nregs", .join = " of ", .post = " regions" };
static const struct em_field F_BITMAP = {
	.key = "bitmap_word", .label = "bitmap:", .form = EM_T_HEX };
static const struct em_field F_BIT = {
	.key = "bitmap_bit", .pre = "bit ", .join = " " };
static const struct em_field F_BIT_FREE = {
	.key = "bitmap_free", .join = " = ", .yes = "1 (free in the slab)",
	.no = "0 (allocated in the slab)" };
static const struct em_field F_NFREE_SAYS = {
	.label = "nfree:", .only = EM_TEXT_ONLY };
static const struct em_field F_OFFSET = {
	.key = "offset", .label = "address:", .post = " bytes into the extent" };
static const struct em_field F_CURRENT = {
	.key = "current_slab", .label = "bin:",
	.yes = "its slab is the bin's current slab (slabcur: the bin's next "
	       "region comes from it)",
	.no = "its slab is not the bin's current slab",
	.none = "the bin's current slab is not known" };
static const struct em_field F_TC_THREAD = {
	.key = "tcache_thread", .label = "tcache:", .pre = "thread ",
	.none = "thread ?" };
static const struct em_field F_TC_ADDR = {
	.key = "tcache_addr", .join = " at " };
static const struct em_field F_TC_BIN = {
	.key = "tcache_bin", .join = ", bin " };
static const struct em_field F_TC_POS = {
	.key = "tcache_pos", .join = ", entry " };
static const struct em_field F_TC_COUNT = {
	.key = "tcache_count", .join = " of " };
static const struct em_field F_TC_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_VERDICT = {
	.key = "consistent", .only = EM_JSON_ONLY };
static const struct em_field F_VERDICT_SAYS = {
	.label = "verdict:", .only = EM_TEXT_ONLY };

static const char *state_name(unsigned st)
{
	static const char *const names[] = {
		[JE_ACTIVE] = "active", [JE_DIRTY] = "dirty",
		[JE_MUZZY] = "muzzy", [JE_RETAINED] = "retained",
		[JE_TRANSITION] = "transition", [JE_MERGING] = "merging" };
	return st < sizeof names / sizeof *names && names[st] ? names[st]
							      : "unknown";
}

/* The tcache place of a cached block, when it is cached.  */
static bool cached_fields(struct je_state *j, uint64_t addr, uint16_t szind,
			  struct hw_emitter *e)
{
	struct je_cached_place at;
	if (!je_cached_at(j, addr, szind, &at))
		return false;
	const struct je_tcache *tc = &j->tcaches[at.tcache];
	em_kv(e, &F_TC_THREAD, tc->tid ? ev_i64(tc->tid) : ev_null());
	em_kv(e, &F_TC_ADDR, ev_addr(tc->addr));
	em_kv(e, &F_TC_BIN, ev_u64(szind));
	em_kv(e, &F_TC_POS, ev_u64(at.pos + 1));
	em_kv(e, &F_TC_COUNT, ev_u64(at.bin.n));
	em_kv(e, &F_TC_SAYS, ev_str(at.pos == 0 ? "(the next malloc of its "
				    "size in that thread takes it)"
				    : "(entry 1 is taken first)"));
	return true;
}

/* A slab region: its index, its bitmap bit, its tcache place.  */
static void region_fields(struct je_state *j, const struct je_extent *x,
			  uint64_t addr, uint64_t ebits, struct hw_emitter *e)
{
	uint64_t idx = (addr - x->base) / x->reg_size;
	em_kv(e, &F_REGION, ev_u64(idx));
	em_kv(e, &F_NREGS, ev_u64(x->nregs));
	uint64_t word_at = x->edata + JE_EDATA_BITMAP + 8 * (idx / 64), word;
	bool have_bit = hw_read_u64(j->t, word_at, &word);
	bool bit_free = have_bit && (word >> (idx % 64) & 1);
	em_kv(e, &F_BITMAP, ev_addr(word_at));
	em_kv(e, &F_BIT, ev_u64(idx % 64));
	em_kv(e, &F_BIT_FREE, have_bit ? ev_bool(bit_free) : ev_null());
	unsigned nfree = je_ebits_nfree(j, ebits);
	char says[128];
	snprintf(says, sizeof says, "%u free regions by e_bits, %u by the "
		 "bitmap%s", nfree, x->nregs - x->used,
		 nfree == x->nregs - x->used ? "" : " (they DISAGREE)");
	em_kv(e, &F_NFREE_SAYS, ev_str(says));
	int cur = je_is_slabcur(j, x);
	em_kv(e, &F_CURRENT, cur < 0 ? ev_null() : ev_bool(cur == 1));

	bool cached = cached_fields(j, addr, x->szind, e);
	const char *verdict;
	bool ok = true;
	if (!have_bit)
		verdict = "the bitmap is not in the target";
	else if (cached && bit_free) {
		verdict = "free in the slab AND cached in a tcache: freed twice";
		ok = false;
	} else if (cached)
		verdict = "allocated in the slab, parked in a tcache: free to "
			  "the program";
	else if (bit_free)
		verdict = "free in the slab";
	else
		verdict = "allocated in the slab, in no tcache: in use";
	em_kv(e, &F_VERDICT, ev_bool(ok));
	em_kv(e, &F_VERDICT_SAYS, ev_str(verdict));
}

void je_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e)
{
	struct je_state *j = state;
	const struct je_extent *x = je_extent_of(j, c->chunk);
	uint64_t ebits;
	em_section_begin(e, &S_FIELDS);
	if (!x || !hw_read_u64(j->t, x->edata, &ebits)) {
		em_kv(e, &F_EXTENT, x ? ev_addr(x->edata) : ev_null());
		em_kv(e, &F_EXTENT_SAYS, ev_str("(its extent is not in the "
						"target)"));
		em_section_end(e);
		return;
	}
	unsigned st = je_ebits_state(j, ebits), szind = je_ebits_szind(j, ebits);
	bool slab = ebits >> 12 & 1;
	em_kv(e, &F_EXTENT, ev_addr(x->edata));
	em_kv(e, &F_EXTENT_SAYS, ev_str(j->era == JE_ERA_53
		? "(its edata_t, as the radix tree maps its pages)"
		: "(its extent_t, as the radix tree maps its pages)"));
	char bits[160];
	int n = snprintf(bits, sizeof bits, "arena %u | %s | %s | szind %u",
			 (unsigned)(ebits & 0xfff), slab ? "slab" : "not slab",
			 state_name(st), szind);
	if (szind < j->nsizes)
		n += snprintf(bits + n, sizeof bits - (size_t)n, " (%llu B)",
			      (unsigned long long)j->sizes[szind]);
	if (slab && st == JE_ACTIVE)
		snprintf(bits + n, sizeof bits - (size_t)n, " | nfree %u",
			 je_ebits_nfree(j, ebits));
	em_kv(e, &F_EBITS, ev_u64(ebits));
	em_kv(e, &F_EBITS_SAYS, ev_str(bits));
	em_kv(e, &F_ARENA, ev_u64(ebits & 0xfff));
	em_kv(e, &F_SLAB, ev_bool(slab));
	em_kv(e, &F_STATE, ev_str(state_name(st)));
	em_kv(e, &F_SZIND, ev_u64(szind));
	em_kv(e, &F_CLASS, szind < j->nsizes ? ev_u64(j->sizes[szind])
					     : ev_null());
	em_kv(e, &F_NFREE, slab && st == JE_ACTIVE
			   ? ev_u64(je_ebits_nfree(j, ebits)) : ev_absent());
	uint64_t page = (uint64_t)1 << j->p.lg_page;
	char pages[64];
	snprintf(pages, sizeof pages, "(%llu page%s)",
		 (unsigned long long)(x->size / page),
		 x->size / page == 1 ? "" : "s");
	em_kv(e, &F_BASE, ev_addr(x->base));
	em_kv(e, &F_EXTENT_SIZE, ev_u64(x->size));
	em_kv(e, &F_PAGES_SAYS, ev_str(pages));
	if (x->state == JE_ACTIVE && x->slab && x->reg_size &&
	    c->addr >= x->base && c->addr < x->base + x->size)
		region_fields(j, x, c->addr, ebits, e);
	else if (x->state == JE_ACTIVE && !x->slab) {
		em_kv(e, &F_OFFSET, ev_u64(x->addr - x->base));
		bool cached = cached_fields(j, x->addr, x->szind, e);
		em_kv(e, &F_VERDICT, ev_bool(true));
		em_kv(e, &F_VERDICT_SAYS, ev_str(cached
			? "an active large extent parked in a tcache: free to "
			  "the program"
			: "an active large extent in no tcache: in use"));
	}
	em_section_end(e);
}
