/* stacks.c - a profile's stacks as functions and source lines.
 *
 * A profile repeats the same return addresses across its stacks (every
 * stack ends in main), so each distinct address is symbolized once, into
 * one array of frames; a stack is then a walk over its addresses'
 * frame runs.
 *
 * The stacks jemalloc records start inside jemalloc (prof_backtrace and
 * the allocation path that sampled), and a C++ program's pass through
 * operator new: jeprof drops those, and so does prof_site_frames(), so
 * that the innermost frame left is the code that asked for the memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

#define PC_FRAMES 64              /* inline depth kept per address */

static int pc_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

bool prof_stacks_build(struct hw_session *s, const struct hw_profile *p,
		       struct prof_stacks *st)
{
	memset(st, 0, sizeof *st);
	st->p = p;
	size_t n = 0;
	for (size_t i = 0; i < p->nsites; i++)
		n += p->sites[i].npcs;
	for (size_t i = 0; i < p->nrecent; i++)
		n += p->recent[i].alloc.npcs + p->recent[i].dalloc.npcs;
	uint64_t *all = malloc((n + 1) * sizeof *all);
	if (!all)
		return false;
	n = 0;
	for (size_t i = 0; i < p->nsites; i++)
		for (unsigned k = 0; k < p->sites[i].npcs; k++)
			all[n++] = p->sites[i].pcs[k];
	/* The recent records' stacks, a free's among them, may be no
	   site's (a stack whose objects are all gone).  */
	for (size_t i = 0; i < p->nrecent; i++) {
		const struct hw_prof_recent *r = &p->recent[i];
		for (unsigned k = 0; k < r->alloc.npcs; k++)
			all[n++] = r->alloc.pcs[k];
		for (unsigned k = 0; k < r->dalloc.npcs; k++)
			all[n++] = r->dalloc.pcs[k];
	}
	qsort(all, n, sizeof *all, pc_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || all[u - 1] != all[i])
			all[u++] = all[i];
	st->pcs = calloc(u + 1, sizeof *st->pcs);
	size_t cap = u * 2 + 16;
	st->frames = malloc(cap * sizeof *st->frames);
	if (!st->pcs || !st->frames) {
		free(all);
		prof_stacks_free(st);
		return false;
	}
	struct hw_source_frame tmp[PC_FRAMES];
	for (size_t i = 0; i < u; i++) {
		size_t k = s->syms ? hw_syms_source_at(s->syms, all[i], true,
						       tmp, PC_FRAMES) : 0;
		if (st->nframes + k > cap) {
			size_t nc = (st->nframes + k) * 2;
			void *q = realloc(st->frames, nc * sizeof *st->frames);
			if (!q) {
				free(all);
				prof_stacks_free(st);
				return false;
			}
			st->frames = q;
			cap = nc;
		}
		st->pcs[i] = (struct prof_pc){ all[i], (uint32_t)st->nframes,
					       (uint32_t)k };
		memcpy(st->frames + st->nframes, tmp, k * sizeof *tmp);
		st->nframes += k;
	}
	st->npcs = u;
	free(all);
	return true;
}

void prof_stacks_free(struct prof_stacks *st)
{
	free(st->pcs);
	free(st->frames);
	st->pcs = NULL;
	st->frames = NULL;
}

static const struct prof_pc *pc_of(const struct prof_stacks *st, uint64_t pc)
{
	size_t lo = 0, hi = st->npcs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->pcs[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->npcs && st->pcs[lo].pc == pc ? &st->pcs[lo] : NULL;
}

/* The allocation functions whose frames top a stack without being the
   caller's: entry points of the allocator (when it is linked into the
   program, not a module of its own) and C++'s operator new.  */
static bool allocation_entry(const char *f)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "free", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc", "mallocx",
		"rallocx", "xallocx", "reallocarray", "strdup", "strndup",
	};
	if (!f)
		return false;
	if (!strncmp(f, "operator new", 12))
		return true;
	/* A prefixed jemalloc's entry points: je_malloc, _rjem_mallocx.  */
	const char *base = f;
	const char *je = strstr(f, "je_");
	if (je)
		base = je + 3;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(base, names[i]) || !strcmp(f, names[i]))
			return true;
	return false;
}

bool prof_pc_is_allocation_entry(const struct prof_stacks *st, uint64_t pc)
{
	const struct prof_pc *e = pc_of(st, pc);
	if (!e || !e->n)
		return false;
	for (uint32_t i = 0; i < e->n; i++)
		if (!allocation_entry(st->frames[e->first + i].function))
			return false;
	return true;
}

size_t prof_site_frames(const struct prof_stacks *st,
			const struct hw_prof_site *site,
			struct prof_frame_ref *out, size_t max)
{
	return prof_pcs_frames(st, site->pcs, site->npcs, out, max);
}

size_t prof_pcs_frames(const struct prof_stacks *st, const uint64_t *pcs,
		       unsigned npcs, struct prof_frame_ref *out, size_t max)
{
	const struct hw_profile *p = st->p;
	/* Innermost first, then reversed.  */
	size_t n = 0;
	bool top = true;
	for (unsigned k = 0; k < npcs && n < max; k++) {
		uint64_t pc = pcs[k];
		if (top && p->code_high && pc >= p->code_low &&
		    pc < p->code_high)
			continue;
		const struct prof_pc *e = pc_of(st, pc);
		if (!e || !e->n) {
			/* Unknown code: kept as a frame of its own (no
			   function), named by its address.  */
			out[n++] = (struct prof_frame_ref){ NULL, pc };
			top = false;
			continue;
		}
		for (uint32_t i = 0; i < e->n && n < max; i++) {
			const struct hw_source_frame *f = &st->frames[e->first + i];
			if (top && allocation_entry(f->function))
				continue;
			top = false;
			out[n++] = (struct prof_frame_ref){ f, pc };
		}
	}
	for (size_t i = 0; i < n / 2; i++) {
		struct prof_frame_ref t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}

const char *prof_frame_name(const struct hw_source_frame *f, uint64_t pc,
			    char *buf, size_t len)
{
	if (f && f->function)
		return f->function;
	if (f && f->module) {
		const char *b = strrchr(f->module, '/');
		snprintf(buf, len, "%s+0x%llx", b ? b + 1 : f->module,
			 (unsigned long long)f->module_offset);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
	}
	return buf;
}

char *prof_stack_key(const struct prof_stacks *st,
		     const struct hw_prof_site *site, struct prof_frame_ref *fr)
{
	size_t n = prof_site_frames(st, site, fr, PROF_MAX_FRAMES);
	size_t len = 1, at = 0;
	char buf[96];
	for (size_t k = 0; k < n; k++)
		len += strlen(prof_frame_name(fr[k].f, fr[k].pc, buf,
					      sizeof buf)) + 1;
	char *key = malloc(len);
	if (!key)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		const char *nm = prof_frame_name(fr[k].f, fr[k].pc, buf,
						 sizeof buf);
		size_t l = strlen(nm);
		memcpy(key + at, nm, l);
		at += l;
		key[at++] = PROF_KEY_SEP;
	}
	key[at] = '\0';
	return key;
}

const char *prof_pcs_name(const struct prof_stacks *st, const uint64_t *pcs,
			  unsigned npcs, unsigned nframes, char *buf, size_t len)
{
	struct prof_frame_ref fr[PROF_MAX_FRAMES];
	size_t n = prof_pcs_frames(st, pcs, npcs, fr, PROF_MAX_FRAMES);
	size_t at = 0;
	char nb[96];
	buf[0] = '\0';
	for (size_t k = 0; k < nframes && k < n; k++) {
		const struct prof_frame_ref *f = &fr[n - 1 - k];
		const char *nm = prof_frame_name(f->f, f->pc, nb, sizeof nb);
		const char *sep = k ? " \xe2\x86\x90 " : "";
		size_t sl = strlen(sep), l = strlen(nm);
		if (at + sl + l + 1 >= len)
			break;
		memcpy(buf + at, sep, sl);
		memcpy(buf + at + sl, nm, l);
		at += sl + l;
		buf[at] = '\0';
	}
	if (!at)
		snprintf(buf, len, "(no frame)");
	return buf;
}

const char *prof_key_name(const char *key, unsigned nframes, char *buf,
			  size_t len)
{
	/* The key is outermost first: walk back from its end.  */
	size_t at = 0, kl = strlen(key);
	const char *end = key + kl;
	buf[0] = '\0';
	for (unsigned k = 0; k < nframes && end > key; k++) {
		const char *stop = end - 1;         /* the separator */
		const char *b = stop;
		while (b > key && b[-1] != PROF_KEY_SEP)
			b--;
		size_t l = (size_t)(stop - b);
		const char *sep = k ? " \xe2\x86\x90 " : "";
		size_t sl = strlen(sep);
		if (at + sl + l + 1 >= len)
			break;
		memcpy(buf + at, sep, sl);
		memcpy(buf + at + sl, b, l);
		at += sl + l;
		buf[at] = '\0';
		end = b;
	}
	if (!at)
		snprintf(buf, len, "(no frame)");
	return buf;
}
