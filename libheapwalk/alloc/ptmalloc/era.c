/* era.c - which glibc the heap's own data says it is.
 *
 * The version string in libc picks the first guess at the layouts, but a
 * device's libc may be patched (distributions backport the tcache key,
 * the wider tcache counts, safe-linking) and the string may be missing
 * altogether (libc's read-only pages are not in a kernel core, and the
 * device's libc may not be at hand).  So every layout fact that can be
 * seen in the data is taken from the data, and each such observation
 * narrows the range of glibc releases the heap is consistent with:
 *
 *   malloc_state:   where the self-linked bins sit relative to the ring
 *                   (2.17-2.22, 2.23-2.26, 2.27-2.42, 2.43+ without
 *                   fastbins)
 *   malloc_par:     which reading of the words before sbrk_base is sane
 *                   (2.26-2.34, 2.35-2.42 with the huge-page fields, 2.43+
 *                   with thp_mode before them)
 *   heap_info:      how far a thread arena sits into its heap (0x20 before
 *                   2.35, 0x30 after)
 *   tcache struct:  its chunk size (0x250: byte counts, 2.26-2.29; 0x290:
 *                   uint16_t counts, 2.30-2.41; 0x300 (2.43 also 0x310):
 *                   76 bins counting free slots, 2.42+)
 *   mmapped chunks: whether a spare header ends the mapping (2.43+)
 *   safe-linking:   whether tcache and fastbin links decode plainly or
 *                   only after the pointer mangling of 2.32+
 *   tcache key:     an entry's second word: the tcache itself (2.29-2.33)
 *                   or one random value shared by all entries (2.34+)
 *
 * The summary reports the range, the observations, and whether the
 * version string agrees.
 */
#include <stdio.h>
#include <string.h>

#include "ptmalloc.h"

void pm_era_init(struct pm_era *e)
{
	memset(e, 0, sizeof *e);
	e->lo = 17;
	e->hi = PM_NEWEST_MINOR;
}

/* The data says glibc 2.lo-2.hi because of `what`.  */
void pm_era_observe(struct pm_state *p, int lo, int hi, const char *what)
{
	struct pm_era *e = &p->era;
	size_t n = strlen(e->seen);
	snprintf(e->seen + n, sizeof e->seen - n, "%s%s", n ? "; " : "", what);
	if (lo > e->hi || hi < e->lo) {
		/* Two observations that cannot both hold: damage, or a
		   build with an unusual mix of patches.  Keep the first.  */
		hw_note(p->s, p->main_arena, "glibc layout: '%s' (2.%d-2.%d) "
			"contradicts the other evidence (2.%d-2.%d)", what, lo,
			hi, e->lo, e->hi);
		e->conflict = true;
		return;
	}
	if (lo > e->lo)
		e->lo = lo;
	if (hi < e->hi)
		e->hi = hi;
	e->observed = true;
}

/* ---- malloc_par -------------------------------------------------------- */

static bool page_size_or_zero(uint64_t v)
{
	return v == 0 || (v >= 4096 && !(v & (v - 1)));
}

/* Does malloc_par at mp read sanely with era's layout?  */
static bool mp_sane(struct pm_state *p, uint64_t mp, enum pm_mp_era era)
{
	struct pm_layout l = p->l;
	pm_layout_mp(&l, era, true);
	uint64_t w[12];
	if (!hw_read(p->t, mp, w, sizeof w))
		return false;
	uint64_t mmap_threshold = w[2];
	/* n_mmaps, n_mmaps_max, max_n_mmaps, no_dyn_threshold: four ints.  */
	int32_t ints[4];
	if (!hw_read(p->t, mp + (uint64_t)l.mp_n_mmaps, ints, sizeof ints))
		return false;
	uint64_t mm[2];
	if (!hw_read(p->t, mp + (uint64_t)l.mp_mmapped_mem, mm, sizeof mm))
		return false;
	if (mmap_threshold > (32u << 20) || ints[0] < 0 || ints[1] < 0 ||
	    ints[0] > ints[2] || (ints[3] != 0 && ints[3] != 1) ||
	    mm[0] > mm[1] || (mm[0] & 4095))
		return false;
	/* thp_pagesize and hp_pagesize: 0 or a page size; 2.43's thp_mode
	   before them, an enum (0-4) and its padding.  */
	if (era == PM_MP_235 && (!page_size_or_zero(w[5]) ||
				 !page_size_or_zero(w[6])))
		return false;
	if (era == PM_MP_243 && (w[5] > 4 || !page_size_or_zero(w[6]) ||
				 !page_size_or_zero(w[7])))
		return false;
	return true;
}

/* malloc_par's address under era's layout, from its sbrk_base's.  */
static uint64_t mp_from_sbrk(const struct pm_state *p, uint64_t sbrk_slot,
			     enum pm_mp_era era)
{
	struct pm_layout l = p->l;
	pm_layout_mp(&l, era, true);
	return sbrk_slot - (uint64_t)l.mp_sbrk_base;
}

/* malloc_par's address under era's layout: `at` itself when it is
   malloc_par's (a symbol's), else from its sbrk_base slot's.  */
static uint64_t mp_at(const struct pm_state *p, uint64_t at, bool is_mp,
		      enum pm_mp_era era)
{
	return is_mp ? at : mp_from_sbrk(p, at, era);
}

static uint64_t era_mp(struct pm_state *p, uint64_t at, bool is_mp)
{
	/* The version's guess first: when several readings are sane (an
	   idle malloc_par is mostly zeros), it stands and proves nothing.  */
	static const struct {
		enum pm_mp_era era;
		int lo, hi;
		const char *what;
	} eras[] = {
		{ PM_MP_243, 43, PM_NEWEST_MINOR,
		  "malloc_par has thp_mode before the huge-page fields" },
		{ PM_MP_235, 35, 42, "malloc_par has the huge-page fields" },
		{ PM_MP_224, 26, 34, "malloc_par has no huge-page fields" },
	};
	size_t n = sizeof eras / sizeof eras[0], first = n, nsane = 0;
	bool sane[sizeof eras / sizeof eras[0]];
	int rank = -1;
	for (size_t i = 0; i < n; i++) {
		sane[i] = mp_sane(p, mp_at(p, at, is_mp, eras[i].era),
				  eras[i].era);
		nsane += sane[i];
		if (!sane[i])
			continue;
		/* Among sane readings: one the releases seen so far allow
		   (malloc_state's era is known by now), the version's guess
		   first.  */
		bool fits = eras[i].lo <= p->era.hi && eras[i].hi >= p->era.lo;
		int r = 2 * fits + (eras[i].era == p->l.mp_era);
		if (r > rank) {
			rank = r;
			first = i;
		}
	}
	if (first == n)
		return 0;
	uint64_t mp = mp_at(p, at, is_mp, eras[first].era);
	uint64_t sizeof_mp = p->l.mp_sizeof;
	enum pm_mp_era was = p->l.mp_era;
	pm_layout_mp(&p->l, eras[first].era, true);
	/* Keep 2.44's shorter struct when the version chose this era.  */
	if (was == eras[first].era)
		p->l.mp_sizeof = sizeof_mp;
	if (nsane == 1)
		pm_era_observe(p, eras[first].lo, eras[first].hi,
			       eras[first].what);
	return mp;
}

uint64_t pm_era_mp(struct pm_state *p, uint64_t sbrk_slot)
{
	return era_mp(p, sbrk_slot, false);
}

uint64_t pm_era_mp_at(struct pm_state *p, uint64_t mp)
{
	return era_mp(p, mp, true);
}

/* ---- malloc_state and heap_info ---------------------------------------- */

void pm_era_ms(struct pm_state *p)
{
	static const char *const what[] = {
		[PM_MS_217] = "malloc_state without attached_threads",
		[PM_MS_223] = "malloc_state with attached_threads, "
			      "without have_fastchunks",
		[PM_MS_227] = "malloc_state with have_fastchunks",
		[PM_MS_243] = "malloc_state without fastbins",
	};
	static const int lo[] = { 17, 23, 27, 43 },
			 hi[] = { 22, 26, 42, PM_NEWEST_MINOR };
	pm_era_observe(p, lo[p->l.ms_era], hi[p->l.ms_era],
		       what[p->l.ms_era]);
}

/* A thread arena's malloc_state follows its first heap's heap_info.  */
void pm_era_heap_info(struct pm_state *p, bool apply)
{
	uint64_t seen = 0;
	for (size_t i = 1; i < p->narenas; i++) {
		uint64_t off = p->arenas[i].addr & (p->l.heap_max - 1);
		if (off != 0x20 && off != 0x30)
			continue;
		if (seen && off != seen) {
			hw_note(p->s, p->arenas[i].addr, "thread arenas sit at "
				"different offsets into their heaps (0x%llx, "
				"0x%llx)", (unsigned long long)seen,
				(unsigned long long)off);
			return;
		}
		seen = off;
	}
	if (!seen)
		return;
	if (apply)
		p->l.hi_sizeof = seen;
	pm_era_observe(p, seen == 0x30 ? 35 : 17,
		       seen == 0x30 ? PM_NEWEST_MINOR : 34,
		       seen == 0x30 ? "heap_info is 0x30 bytes"
				    : "heap_info is 0x20 bytes");
}

/* ---- the links of tcache and fastbin entries ---------------------------- */

/* Is v a plausible chunk user pointer (16-aligned, in some heap)?  */
static bool user_ptr(struct pm_state *p, uint64_t v)
{
	return v && !(v & 15) && pm_heap_of(p, v - PM_HDR);
}

struct link_votes {
	unsigned plain, mangled;
};

/* `slot` holds a link that is either NULL-terminating or points to the
   user pointer of the next entry.  */
static void vote_link(struct pm_state *p, uint64_t slot, uint64_t stored,
		      bool last, struct link_votes *v)
{
	uint64_t revealed = (slot >> 12) ^ stored;
	if (last) {
		if (stored == 0)
			v->plain++;
		else if (revealed == 0)
			v->mangled++;
		return;
	}
	bool plain = user_ptr(p, stored), mangled = user_ptr(p, revealed);
	if (plain != mangled) {
		if (plain)
			v->plain++;
		else
			v->mangled++;
	}
}

/* The most frequent non-zero value among an entry's second words that
   is not its own tcache: glibc 2.34+'s random tcache_key.  */
struct key_tally {
	uint64_t value[8];
	unsigned count[8];
	unsigned n;
};

static void tally_key(struct key_tally *k, uint64_t v)
{
	for (unsigned i = 0; i < k->n; i++)
		if (k->value[i] == v) {
			k->count[i]++;
			return;
		}
	if (k->n < 8) {
		k->value[k->n] = v;
		k->count[k->n++] = 1;
	}
}

void pm_era_links(struct pm_state *p)
{
	struct link_votes v = { 0, 0 };
	unsigned key_self = 0, key_other = 0;
	struct key_tally keys = { .n = 0 };
	for (size_t t = 0; t < p->ntcaches; t++) {
		const struct pm_tcache *tc = &p->tcaches[t];
		for (unsigned i = 0; i < p->l.tc_nbins; i++) {
			uint64_t e, w[2];
			if (!tc->counts[i] ||
			    !hw_read_u64(p->t, tc->addr + (uint64_t)p->l.tc_entries +
					 8 * (uint64_t)i, &e) ||
			    !user_ptr(p, e) || !hw_read(p->t, e, w, sizeof w))
				continue;
			vote_link(p, e, w[0], tc->counts[i] == 1, &v);
			if (w[1] == tc->addr)
				key_self++;
			else if (w[1])
				tally_key(&keys, w[1]);
			else
				key_other++;
		}
	}
	for (size_t a = 0; p->l.ms_fastbins >= 0 && a < p->narenas; a++)
		for (int i = 0; i < PM_NFASTBINS; i++) {
			uint64_t c, fd;
			if (!hw_read_u64(p->t, p->arenas[a].addr +
					 (uint64_t)p->l.ms_fastbins + 8 * (uint64_t)i,
					 &c) || !c ||
			    !hw_read_u64(p->t, c + PM_HDR, &fd))
				continue;
			/* Only the head is looked at: a NULL (plain or
			   mangled) says it is also the last.  */
			uint64_t slot = c + PM_HDR;
			vote_link(p, slot, fd, fd == 0 || (slot >> 12) == fd,
				  &v);
		}
	if (v.plain || v.mangled) {
		bool sl = v.mangled > v.plain;
		p->l.safe_linking = sl;
		bool fast = p->l.ms_fastbins >= 0;
		pm_era_observe(p, sl ? 32 : 17, sl ? PM_NEWEST_MINOR : 31,
			       sl ? (fast ? "tcache/fastbin links are safe-linked"
					  : "tcache links are safe-linked")
				  : "tcache/fastbin links are plain");
	}
	/* A few entries written after free must not hide the key: go by
	   the clear majority.  */
	unsigned best = 0, nkeys = 0;
	for (unsigned i = 0; i < keys.n; i++) {
		nkeys += keys.count[i];
		if (keys.count[i] > keys.count[best])
			best = i;
	}
	unsigned total = key_self + nkeys + key_other;
	uint64_t at;
	if (key_self > 0 && 2 * key_self > total) {
		pm_era_observe(p, 29, 33, "tcache key is the tcache");
		p->tcache_key_mode = PM_KEY_SELF;
	} else if (keys.n && keys.count[best] >= 2 &&
		   2 * keys.count[best] > total) {
		pm_era_observe(p, 34, PM_NEWEST_MINOR,
			       "tcache key is a shared random value");
		p->tcache_key_mode = PM_KEY_RANDOM;
		p->tcache_key = keys.value[best];
	} else if (keys.n == 1 && keys.count[0] == 1 && total == 1 &&
		   pm_libc_data_holds(p, keys.value[0], &at)) {
		/* One entry reached (a process that freed little, or lists
		   broken right at their heads): its second word is the key
		   when glibc's own tcache_key holds it too.  A random 64-bit
		   value found in libc's data is no coincidence.  */
		pm_era_observe(p, 34, PM_NEWEST_MINOR,
			       "tcache key is a shared random value");
		p->tcache_key_mode = PM_KEY_RANDOM;
		p->tcache_key = keys.value[0];
	}
}

/* ---- the verdict --------------------------------------------------------- */

bool pm_era_conclude(struct pm_state *p)
{
	struct pm_era *e = &p->era;
	int minor = p->l.ver_minor, major = 0, newer = 0;
	/* A release newer than the built-in layouts: its debug info gives
	   the layouts, or the heap's data must show the newest known ones
	   (a change the data cannot show would go unseen: say so).  */
	if (sscanf(p->version, "%d.%d", &major, &newer) == 2 && major == 2 &&
	    newer > PM_NEWEST_MINOR) {
		bool dwarf = p->l.source && !strcmp(p->l.source, "DWARF");
		if (!dwarf && (!e->observed || e->conflict ||
			       e->hi < PM_NEWEST_MINOR)) {
			hw_error(p->s, HW_NO_ALLOCATOR, "glibc %s: this glibc's "
				 "heap layout is not known yet (heapwalk knows "
				 "2.17-2.%d), its heap's data does not show "
				 "2.%d's, and no debug info for libc gives it "
				 "(install its libc6-dbg or point --debug-dir "
				 "at it)", p->version, PM_NEWEST_MINOR,
				 PM_NEWEST_MINOR);
			return false;
		}
		hw_note(p->s, p->main_arena, "glibc %s is newer than the "
			"layouts heapwalk knows (2.17-2.%d): %s", p->version,
			PM_NEWEST_MINOR, dwarf
			? "its layouts come from libc's debug info"
			: "read with 2." PM_NEWEST_STR "'s, which its heap's "
			  "data shows");
	}
	if (!e->observed)
		return true;
	if (p->l.ver_major == 2 && (minor < e->lo || minor > e->hi)) {
		e->disagrees = true;
		hw_note(p->s, p->main_arena, "libc says glibc %s, but its heap "
			"is laid out as in glibc 2.%d-2.%d (%s): walked as the "
			"data says", p->version, e->lo, e->hi, e->seen);
	}
	return true;
}
