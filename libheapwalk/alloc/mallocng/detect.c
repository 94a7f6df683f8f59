/* detect.c - musl libc's allocator (mallocng, musl 1.2.1+) told apart
 * from glibc's, so that a musl program is named as one and not taken for
 * a glibc whose arena could not be found.
 *
 * This finds mallocng's context (`__malloc_context`), the structure its
 * walker (mallocng.c) starts from: by symbol where the file has one,
 * else by its shape.  The context begins with a secret that musl copies
 * from the bytes AT_RANDOM points at (8 to 15) and that every meta area
 * repeats in its first word; then init_done (1), ...; at 56 the first
 * meta area, 4 KiB-aligned, whose slot count is 101.
 */
#include <stdio.h>
#include <string.h>

#include "../../sym/sym.h"
#include "../libc.h"
#include "../module.h"
#include "mallocng.h"
#include "detect.h"

#define AT_RANDOM 25
#define MAX_RANGES 16

/* The secret the core's auxv gives (0: none).  */
static uint64_t secret_of(struct hw_target *t)
{
	uint64_t at, s;
	if (!hw_auxv_get(t, AT_RANDOM, &at) || !hw_read_u64(t, at + 8, &s))
		return 0;
	return s;
}

/* Is there a mallocng context at c?  Its secret (`secret`, or without
   one its own first word), init_done, and a first and last meta area,
   and unless `named` (the symbol says where it is) the first carries
   the secret and 101 slots: what tells a context by its shape alone.
   (A named one whose first area is overwritten is walked, and the
   damage reported.)  */
static bool ctx_at(struct hw_target *t, uint64_t c, uint64_t secret,
		   bool named)
{
	uint64_t s, head, tail, check;
	uint32_t init, nslots;
	if (!hw_read_u64(t, c, &s) || !s || (secret && s != secret))
		return false;
	if (!hw_read_u32(t, c + NG_CTX_INIT_DONE, &init) || init != 1 ||
	    !hw_read_u64(t, c + NG_CTX_AREA_HEAD, &head) || !head ||
	    (head & 4095) || !hw_read_u64(t, c + NG_CTX_AREA_TAIL, &tail) ||
	    !tail || (tail & 4095))
		return false;
	return named || (hw_read_u64(t, head, &check) && check == s &&
			 hw_read_u32(t, head + NG_AREA_NSLOTS, &nslots) &&
			 nslots == NG_AREA_SLOTS);
}

/* Call fn(cookie, a, bytes at a) for each 8-aligned word a of the
   writable data of the file mapped at [lo, hi) that has `in_run` bytes
   from a in the core in one piece and `in_range` bytes from a in that
   data, in address order, until fn returns false.  Each run of bytes the
   core holds is read in place; a page not in it is passed over.  */
static void scan_words(struct hw_target *t, uint64_t lo, uint64_t hi,
		       uint64_t in_run, uint64_t in_range,
		       bool (*fn)(void *cookie, uint64_t a, const uint8_t *at),
		       void *cookie)
{
	struct hw_addr_range r[MAX_RANGES];
	size_t n = hw_module_data(t, lo, hi, r, MAX_RANGES);
	uint64_t need = in_run > in_range ? in_run : in_range;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = (r[i].start + 7) & ~7ull, end = r[i].end;
		while (a + need <= end) {
			const uint8_t *data;
			uint64_t run = hw_readable_run(t, a, &data);
			if (!run) {     /* not in the core: what is next */
				a = (hw_next_readable(t, a, end) + 7) & ~7ull;
				continue;
			}
			uint64_t from = a, stop = a + run < end ? a + run : end;
			for (; a + in_run <= stop && a + in_range <= end; a += 8)
				if (!fn(cookie, a, data + (a - from)))
					return;
			/* (A word across two runs is read by neither.)  */
			a = (stop + 7) & ~7ull;
		}
	}
}

struct ctx_scan {
	struct hw_target *t;
	uint64_t secret, found;
};

static bool ctx_word(void *cookie, uint64_t a, const uint8_t *at)
{
	struct ctx_scan *cs = cookie;
	uint64_t w;
	memcpy(&w, at, 8);
	if (w && (!cs->secret || w == cs->secret) &&
	    ctx_at(cs->t, a, cs->secret, false))
		cs->found = a;
	return !cs->found;
}

/* A context in the writable data of the file mapped at [lo, hi), by its
   shape; 0 when none.  */
static uint64_t scan_ctx(struct hw_target *t, uint64_t lo, uint64_t hi,
			 uint64_t secret)
{
	struct ctx_scan cs = { .t = t, .secret = secret };
	scan_words(t, lo, hi, 8, NG_CTX_AREA_TAIL + 8, ctx_word, &cs);
	return cs.found;
}

/* oldmalloc's bins (struct bin { int lock[2]; chunk *head, *tail; }, 64
   of them 8 bytes into its `mal`, 24 bytes apart): a bin used and
   emptied again points both head and tail at the chunk header that would
   hold its own head and tail as a chunk's links (the bin's address less
   8), so at bin address B the words at B + 8 and B + 16 are both B - 8.
   glibc's bins look the same but lie 16 bytes apart.  */
#define OLD_BIN 24
#define OLD_BINS_SPAN (64 * OLD_BIN)
#define MAX_OLD_HITS 256

struct old_bins {
	uint64_t hit[MAX_OLD_HITS];
	unsigned nhit;
};

static bool old_bin_word(void *cookie, uint64_t a, const uint8_t *at)
{
	struct old_bins *ob = cookie;
	uint64_t head, tail;
	memcpy(&head, at + 8, 8);
	memcpy(&tail, at + 16, 8);
	if (head == a - 8 && tail == a - 8)
		ob->hit[ob->nhit++] = a;
	return ob->nhit < MAX_OLD_HITS;
}

/* The most such bins in the writable data of the file mapped at [lo,
   hi) that one `mal` could hold: within 64 bins' span, a multiple of 24
   bytes apart, none 16 or 32 bytes from another (glibc's).  */
static unsigned scan_old_bins(struct hw_target *t, uint64_t lo, uint64_t hi)
{
	struct old_bins ob = { .nhit = 0 };
	scan_words(t, lo, hi, 24, 24, old_bin_word, &ob);
	const uint64_t *hit = ob.hit;
	unsigned nhit = ob.nhit;
	/* (The hits come in address order.)  */
	unsigned best = 0;
	for (unsigned i = 0; i < nhit; i++) {
		unsigned count = 0;
		bool glibc = false;
		for (unsigned k = i; k < nhit && hit[k] - hit[i] < OLD_BINS_SPAN;
		     k++) {
			count += (hit[k] - hit[i]) % OLD_BIN == 0;
			glibc |= k > i && (hit[k] - hit[k - 1] == 16 ||
					   hit[k] - hit[k - 1] == 32);
		}
		if (!glibc && count > best)
			best = count;
	}
	return best;
}

/* Where the context is, or why not.  */
struct ctx_search {
	const char *musl;     /* musl's libc.so, if mapped */
	const char *home;     /* the file searched: libc.so or the program */
	const char *how;
	uint64_t ctx;         /* found (0: not) */
	uint64_t sym;         /* __malloc_context's address, or 0 */
	bool mod;             /* the file's symbols are at m */
	struct hw_module m;
};

/* Does the target map glibc's libc.so?  Then its program is glibc's,
   and its data is not searched for musl's context (a pass over all of
   it, and a program's .data and .bss may be large).  */
static bool glibc_mapped(const struct hw_target *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		const char *base = hw_base_name(t->files[i].path);
		if (!strcmp(base, "libc.so.6") ||
		    (!strncmp(base, "libc-2.", 7) &&
		     strlen(base) > 10 && !strcmp(base + strlen(base) - 3, ".so")))
			return true;
	}
	return false;
}

static void search_ctx(struct hw_session *s, struct ctx_search *cs)
{
	struct hw_target *t = s->target;
	uint64_t secret = secret_of(t);
	*cs = (struct ctx_search){ .how = "symbol __malloc_context" };
	for (size_t i = 0; i < t->nfiles && !cs->musl; i++)
		if (hw_libc_is_musl_path(t->files[i].path))
			cs->musl = t->files[i].path;
	/* Dynamic: musl's libc.so (the dynamic linker too) holds the
	   context; static: the executable.  By its symbol where the file
	   has one, else by its shape.  */
	cs->home = cs->musl ? cs->musl : glibc_mapped(t) ? NULL : t->exe;
	uint64_t lo = 0, hi = 0, size;
	bool have = cs->home && hw_file_range(t, cs->home, &lo, &hi);
	cs->mod = have && s->syms && hw_syms_module_at(s->syms, lo, &cs->m);
	if (cs->mod && !hw_syms_lookup(s->syms, &cs->m, "__malloc_context",
				       &cs->sym, &size, NULL))
		cs->sym = 0;
	/* A static glibc program says so by its symbols: its data (maybe
	   large) is not searched either.  */
	uint64_t arena;
	if (!cs->musl && !cs->sym && cs->mod &&
	    hw_syms_lookup(s->syms, &cs->m, "main_arena", &arena, &size, NULL))
		have = false;
	if (cs->sym && ctx_at(t, cs->sym, secret, true))
		cs->ctx = cs->sym;
	else if (have && (cs->ctx = scan_ctx(t, lo, hi, secret)))
		cs->how = secret ? "the secret from AT_RANDOM, checked against "
				   "its first meta area"
				 : "its shape (its first meta area repeats its "
				   "secret)";
}

bool ng_find_context(struct ng_state *ng)
{
	struct ctx_search cs;
	search_ctx(ng->s, &cs);
	if (!cs.ctx)
		return false;
	ng->ctx = cs.ctx;
	ng->home = cs.home;
	ng->how = cs.how;
	return true;
}

bool hw_mallocng_recognise(struct hw_session *s, char *why, size_t len)
{
	struct hw_target *t = s->target;
	const char *core = t->path ? t->path : "target";
	struct ctx_search cs;
	search_ctx(s, &cs);
	/* (Found, the walker opened it, or said why it could not.)  */
	if (cs.ctx) {
		snprintf(why, len, "'%s': musl libc's malloc (mallocng, musl "
			 "1.2.1 or later) found in %s: its context at 0x%llx "
			 "(by %s), but its meta areas cannot be read", core,
			 cs.home, (unsigned long long)cs.ctx, cs.how);
		return true;
	}
	if (cs.sym) {
		snprintf(why, len, "'%s': musl libc's malloc (mallocng) found "
			 "in %s, but its context at 0x%llx (symbol "
			 "__malloc_context) is not set up: the program had not "
			 "allocated yet, or the context is overwritten", core,
			 cs.home, (unsigned long long)cs.sym);
		return true;
	}
	uint64_t addr, size, lo, hi;
	/* oldmalloc: by its symbols, or (stripped) by its emptied bins.  */
	bool old_sym = cs.mod && hw_syms_lookup(s->syms, &cs.m, "__bin_chunk",
						&addr, &size, NULL);
	unsigned old_bins = 0;
	if (!old_sym && cs.home && hw_file_range(t, cs.home, &lo, &hi))
		old_bins = scan_old_bins(t, lo, hi);
	if (old_sym || old_bins >= 3) {
		char how[64];
		if (old_sym)
			snprintf(how, sizeof how, "symbol __bin_chunk");
		else
			snprintf(how, sizeof how, "%u of its bins, emptied",
				 old_bins);
		snprintf(why, len, "'%s': musl libc's oldmalloc (musl before "
			 "1.2.1, or built --with-malloc=oldmalloc) found in %s "
			 "(by %s): heapwalk walks musl's mallocng, not "
			 "oldmalloc", core, cs.home, how);
		return true;
	}
	if (cs.mod && hw_syms_lookup(s->syms, &cs.m, "__simple_malloc", &addr,
				     &size, NULL)) {
		snprintf(why, len, "'%s': musl libc's bump allocator found in "
			 "%s (a static program that never frees gets it "
			 "instead of mallocng): it keeps no record of its "
			 "blocks, so there is no heap to walk", core, cs.home);
		return true;
	}
	if (cs.musl) {
		snprintf(why, len, "'%s': musl libc found (%s), but not "
			 "mallocng's context: the program has not allocated "
			 "yet, or its musl is older than 1.2.1 or built with "
			 "oldmalloc.  heapwalk walks neither of these", core,
			 cs.musl);
		return true;
	}
	return false;
}
