/* recognise.c - musl libc's allocator (mallocng, musl 1.2.1+) told apart
 * from glibc's, so that a musl program is named as one and not taken for
 * a glibc whose arena could not be found.
 *
 * heapwalk does not walk mallocng yet (doc/design/musl-mallocng.md says
 * what a walker needs).  This finds its context (`__malloc_context`), the
 * structure every walk starts from: by symbol where the file has one,
 * else by its shape.  The context begins with a secret that musl copies
 * from the bytes AT_RANDOM points at (8 to 15) and that every meta area
 * repeats in its first word; then init_done (1), ...; at 56 the first
 * meta area, 4 KiB-aligned, whose slot count is 101.
 */
#include <stdio.h>
#include <string.h>

#include "../../sym/sym.h"
#include "../module.h"
#include "recognise.h"

#define AT_RANDOM 25
#define CTX_INIT_DONE 8       /* int, 1 once the first meta is made */
#define CTX_AREA_HEAD 56      /* struct meta_area *meta_area_head */
#define CTX_AREA_TAIL 64
#define AREA_NSLOTS 16        /* int nslots, after check and next */
#define AREA_SLOTS 101        /* (4096 - 24) / sizeof (struct meta) */
#define MAX_RANGES 16

bool hw_musl_path(const char *path)
{
	const char *base = hw_base_name(path);
	return !strncmp(base, "ld-musl-", 8) || !strncmp(base, "libc.musl-", 10) ||
	       strstr(path, "-linux-musl/") != NULL;
}

bool hw_musl_symbols(const struct hw_syms *syms, const struct hw_module *m)
{
	/* mallocng's context; the bump allocator a static program that
	   never frees gets instead; the name musl 1.2.2+ gives its malloc
	   behind the public one.  */
	static const char *const names[] = {
		"__malloc_context", "__simple_malloc", "__libc_malloc_impl",
	};
	uint64_t addr, size;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (hw_syms_lookup(syms, m, names[i], &addr, &size, NULL))
			return true;
	return false;
}

/* The secret the core's auxv gives (0: none).  */
static uint64_t secret_of(struct hw_target *t)
{
	uint64_t at, s;
	if (!hw_auxv_get(t, AT_RANDOM, &at) || !hw_read_u64(t, at + 8, &s))
		return 0;
	return s;
}

/* Is there a mallocng context at c?  Its secret (`secret`, or without
   one its own first word), init_done, and a first and last meta area
   where the first carries the secret and 101 slots.  */
static bool ctx_at(struct hw_target *t, uint64_t c, uint64_t secret)
{
	uint64_t s, head, tail, check;
	uint32_t init, nslots;
	if (!hw_read_u64(t, c, &s) || !s || (secret && s != secret))
		return false;
	return hw_read_u32(t, c + CTX_INIT_DONE, &init) && init == 1 &&
	       hw_read_u64(t, c + CTX_AREA_HEAD, &head) && head &&
	       !(head & 4095) &&
	       hw_read_u64(t, c + CTX_AREA_TAIL, &tail) && tail &&
	       !(tail & 4095) &&
	       hw_read_u64(t, head, &check) && check == s &&
	       hw_read_u32(t, head + AREA_NSLOTS, &nslots) &&
	       nslots == AREA_SLOTS;
}

/* A context in the writable data of the file mapped at [lo, hi), by its
   shape; 0 when none.  Each run of bytes the core holds is read in
   place, word by word.  */
static uint64_t scan_ctx(struct hw_target *t, uint64_t lo, uint64_t hi,
			 uint64_t secret)
{
	struct hw_addr_range r[MAX_RANGES];
	size_t n = hw_module_data(t, lo, hi, r, MAX_RANGES);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = (r[i].start + 7) & ~7ull, end = r[i].end;
		while (a + 72 <= end) {
			const uint8_t *data;
			uint64_t run = hw_readable_run(t, a, &data);
			if (!run) {     /* not in the core: the next page */
				a = (a | 4095) + 1;
				continue;
			}
			uint64_t from = a, stop = a + run < end ? a + run : end;
			for (; a + 8 <= stop && a + 72 <= end; a += 8) {
				uint64_t w;
				memcpy(&w, data + (a - from), 8);
				if (w && (!secret || w == secret) &&
				    ctx_at(t, a, secret))
					return a;
			}
			/* (A word across two runs is no context's.)  */
			if (a < stop)
				a = (stop + 7) & ~7ull;
		}
	}
	return 0;
}

bool hw_mallocng_recognise(struct hw_session *s, char *why, size_t len)
{
	struct hw_target *t = s->target;
	const char *core = t->path ? t->path : "target";
	uint64_t secret = secret_of(t);
	const char *musl = NULL;
	for (size_t i = 0; i < t->nfiles && !musl; i++)
		if (hw_musl_path(t->files[i].path))
			musl = t->files[i].path;
	/* Dynamic: musl's libc.so (the dynamic linker too) holds the
	   context; static: the executable.  By its symbol where the file
	   has one, else by its shape.  */
	const char *home = musl ? musl : t->exe;
	uint64_t lo = 0, hi = 0, sym = 0, size, ctx = 0;
	struct hw_module m;
	bool have = home && hw_file_range(t, home, &lo, &hi);
	bool mod = have && s->syms && hw_syms_module_at(s->syms, lo, &m);
	if (mod && !hw_syms_lookup(s->syms, &m, "__malloc_context", &sym,
				   &size, NULL))
		sym = 0;
	const char *how = "symbol __malloc_context";
	if (sym && ctx_at(t, sym, secret))
		ctx = sym;
	else if (have && (ctx = scan_ctx(t, lo, hi, secret)))
		how = secret ? "the secret from AT_RANDOM, checked against its "
			       "first meta area"
			     : "its shape (its first meta area repeats its "
			       "secret)";
	if (ctx) {
		snprintf(why, len, "'%s': musl libc's malloc (mallocng, musl "
			 "1.2.1 or later) found in %s: its context at 0x%llx "
			 "(by %s).  heapwalk walks glibc's ptmalloc, jemalloc "
			 "and tcmalloc; it does not walk mallocng yet", core,
			 home, (unsigned long long)ctx, how);
		return true;
	}
	if (sym) {
		snprintf(why, len, "'%s': musl libc's malloc (mallocng) found "
			 "in %s, but its context at 0x%llx (symbol "
			 "__malloc_context) is not set up: the program had not "
			 "allocated yet, or the context is overwritten", core,
			 home, (unsigned long long)sym);
		return true;
	}
	uint64_t addr;
	if (mod && hw_syms_lookup(s->syms, &m, "__simple_malloc", &addr, &size,
				  NULL)) {
		snprintf(why, len, "'%s': musl libc's bump allocator found in "
			 "%s (a static program that never frees gets it "
			 "instead of mallocng): it keeps no record of its "
			 "blocks, so there is no heap to walk", core, home);
		return true;
	}
	if (musl) {
		snprintf(why, len, "'%s': musl libc found (%s), but not "
			 "mallocng's context: the program has not allocated "
			 "yet, or its musl is older than 1.2.1 or built with "
			 "oldmalloc.  heapwalk walks neither of musl's "
			 "allocators", core, musl);
		return true;
	}
	return false;
}
