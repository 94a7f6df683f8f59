/* external.c - a target read by a front end: gdb's memory, for the plugin.
 *
 * The front end says what it knows (struct hw_memory in heapwalk.h: the
 * mappings, the threads, the auxiliary vector) and reads memory for us.
 * Every readable mapping becomes a lazy region of the target's cache, so
 * memory is asked for in large blocks and each block once per session,
 * as for a live process; nothing is copied up front (the debugger holds
 * the process still, or it is a core).  A mapping whose bytes the front
 * end already holds (a span: a core's segment it mapped from the file)
 * is read in place instead, as the core backend reads a core.
 *
 * Mapped files come from the mappings' paths when the debugger names them
 * (its "info proc mappings"), else from the dynamic linker's link_map
 * through the auxiliary vector, as for a qemu-user core.
 */
#include <elf.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../arch/arch.h"
#include "cache.h"
#include "external.h"
#include "linkmap.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

struct ext_priv {
	size_t (*read)(void *cookie, uint64_t addr, void *buf, size_t len);
	void *cookie;
	char **paths;       /* owned strings: files, exe, the name */
	size_t npaths;
	uint8_t *auxv;
	uint8_t *siginfo;   /* the front end's, copied */
	char name[64];
};

/* The cache takes at most len of what this says was read.  */
static size_t ext_read(struct hw_target *t, uint64_t addr, void *buf,
		       size_t len)
{
	struct ext_priv *p = t->priv;
	return p->read(p->cookie, addr, buf, len);
}

static void ext_close(struct hw_target *t)
{
	struct ext_priv *p = t->priv;
	if (p) {
		for (size_t i = 0; i < p->npaths; i++)
			free(p->paths[i]);
		free(p->paths);
		free(p->auxv);
		free(p->siginfo);
		free(p);
	}
	free(t->regions);
	free(t->threads);
	free(t->files);
	free(t);
}

static const struct hw_target_ops external_ops = {
	.name = "external",
	.read = ext_read,
	.close = ext_close,
};

/* A copy of s that the target owns, or NULL.  */
static const char *keep(struct ext_priv *p, const char *s)
{
	char **np = realloc(p->paths, (p->npaths + 1) * sizeof *np);
	if (!np)
		return NULL;
	p->paths = np;
	char *copy = strdup(s);
	if (copy)
		p->paths[p->npaths++] = copy;
	return copy;
}

static int cmp_region(const void *a, const void *b)
{
	const struct hw_region *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The span of the front end's (hw_memory in heapwalk.h) that covers
   [start, end) whole, or NULL: the region is then read through the
   cache.  A caller built before spans existed has none (sz).  */
static const struct hw_memory_span *span_of(const struct hw_memory *m,
					    uint64_t start, uint64_t end)
{
	if (m->sz < offsetof(struct hw_memory, nspans) + sizeof m->nspans ||
	    !m->spans)
		return NULL;
	/* The last span starting at or below start (they are sorted by
	   start; unsorted ones are merely missed, and read through the
	   cache).  */
	size_t lo = 0, n = m->nspans;
	while (lo < n) {
		size_t mid = lo + (n - lo) / 2;
		if (m->spans[mid].start <= start)
			lo = mid + 1;
		else
			n = mid;
	}
	if (!lo)
		return NULL;
	const struct hw_memory_span *sp = &m->spans[lo - 1];
	return end - sp->start > sp->len ? NULL : sp;
}

static bool add_regions(struct hw_target *t, struct ext_priv *p,
			const struct hw_memory *m)
{
	t->regions = calloc(m->nregions ? m->nregions : 1, sizeof *t->regions);
	t->files = calloc(m->nregions ? m->nregions : 1, sizeof *t->files);
	if (!t->regions || !t->files)
		return false;
	for (size_t i = 0; i < m->nregions; i++) {
		const struct hw_memory_region *mr = &m->regions[i];
		if (mr->end <= mr->start || hw_kernel_mapping(mr->path))
			continue;
		struct hw_region *r = &t->regions[t->nregions++];
		r->start = mr->start;
		r->end = mr->end;
		r->prot = mr->prot ? mr->prot : HW_PROT_R | HW_PROT_W;
		r->file = -1;
	}
	qsort(t->regions, t->nregions, sizeof *t->regions, cmp_region);
	/* Overlaps would break the binary search: keep the first.  */
	size_t n = 0;
	for (size_t i = 0; i < t->nregions; i++)
		if (!n || t->regions[i].start >= t->regions[n - 1].end)
			t->regions[n++] = t->regions[i];
	t->nregions = n;
	for (size_t i = 0; i < m->nregions; i++) {
		const struct hw_memory_region *mr = &m->regions[i];
		if (!mr->path || mr->path[0] != '/' || mr->end <= mr->start)
			continue;
		const char *path = keep(p, mr->path);
		if (!path)
			return false;
		t->files[t->nfiles++] = (struct hw_mapped_file){
			.start = mr->start, .end = mr->end,
			.offset = mr->offset, .path = path, .verified = true,
		};
	}
	for (size_t i = 0; i < t->nregions; i++) {
		struct hw_region *r = &t->regions[i];
		r->avail = r->end - r->start;
		if (!(r->prot & HW_PROT_R))
			continue;
		const struct hw_memory_span *sp = span_of(m, r->start, r->end);
		if (sp && !sp->data) {
			r->avail = 0;     /* a hole: no bytes, never read */
			continue;
		}
		if (sp) {
			r->data = (const uint8_t *)sp->data +
				  (r->start - sp->start);
			continue;
		}
		if (!hw_cache_add_region(t->cache, r))
			return false;
	}
	return true;
}

/* Each region's file: the mapping that holds its start.  */
static void name_regions(struct hw_target *t)
{
	for (size_t r = 0; r < t->nregions; r++)
		for (size_t i = 0; i < t->nfiles; i++)
			if (t->regions[r].start >= t->files[i].start &&
			    t->regions[r].start < t->files[i].end) {
				t->regions[r].file = (int32_t)i;
				break;
			}
}

static bool add_threads(struct hw_target *t, const struct hw_memory *m)
{
	t->threads = calloc(m->nthreads ? m->nthreads : 1, sizeof *t->threads);
	if (!t->threads)
		return false;
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct hw_memory_thread *mt = &m->threads[i];
		struct hw_thread *th = &t->threads[t->nthreads++];
		th->tid = mt->tid;
		if (mt->nregs && t->arch)
			hw_thread_set_regs(th, t->arch, mt->regs,
					   mt->nregs < HW_MAX_REGS ? mt->nregs
								   : HW_MAX_REGS);
		/* What the debugger named sp, pc and tp wins.  */
		th->sp = mt->sp;
		th->pc = mt->pc;
		th->tp = mt->tp;
		th->has_tp = mt->has_tp;
	}
	return true;
}

/* A core's death as the front end read it (hw_memory's death_*,
   siginfo), set where a core's own notes would have put it: the signal
   as the hit thread's pending one (pr_cursig), the siginfo as the
   core's NT_SIGINFO following that thread's NT_PRSTATUS; analysis/
   death.c then reads them alike.  Only for a core (a process has not
   died) and a caller that knows the fields.  False when out of
   memory.  */
static bool add_death(struct hw_target *t, struct ext_priv *p,
		      const struct hw_memory *m)
{
	if (!m->core || m->sz < offsetof(struct hw_memory, siginfo_len) +
				 sizeof m->siginfo_len ||
	    m->death_thread >= t->nthreads)
		return true;
	struct hw_thread *th = &t->threads[m->death_thread];
	th->signo = m->death_signo;
	if (!m->siginfo || !m->siginfo_len)
		return true;
	p->siginfo = malloc(m->siginfo_len);
	if (!p->siginfo)
		return false;
	memcpy(p->siginfo, m->siginfo, m->siginfo_len);
	t->siginfo = p->siginfo;
	t->siginfo_len = m->siginfo_len;
	t->siginfo_tid = th->tid;
	return true;
}

enum hw_status hw_external_open(const struct hw_memory *m,
				const struct hw_external_opts *opts,
				struct hw_target **out, char *err,
				size_t errlen)
{
	*out = NULL;
	uint16_t machine = 0;
	if (m->machine && strcmp(m->machine, "x86_64") == 0)
		machine = EM_X86_64;
	else if (m->machine && strcmp(m->machine, "aarch64") == 0)
		machine = EM_AARCH64;
	const char *who = m->name ? m->name : "the front end";
	if (!m->read || (!machine && m->machine)) {
		snprintf(err, errlen, "%s: %s", who, !m->read ? "no way to "
			 "read memory" : "architecture not supported");
		return !m->read ? HW_USAGE : HW_BAD_TARGET;
	}
	struct hw_target *t = calloc(1, sizeof *t);
	struct ext_priv *p = calloc(1, sizeof *p);
	if (!t || !p) {
		free(t);
		free(p);
		snprintf(err, errlen, "out of memory");
		return HW_BAD_TARGET;
	}
	t->ops = &external_ops;
	t->priv = p;
	p->read = m->read;
	p->cookie = m->cookie;
	t->arch = hw_arch_by_machine(machine ? machine : EM_X86_64);
	if (m->auxv && m->auxv_len) {
		p->auxv = malloc(m->auxv_len);
		if (!p->auxv)
			goto nomem;
		memcpy(p->auxv, m->auxv, m->auxv_len);
		t->auxv = p->auxv;
		t->auxv_len = m->auxv_len;
	}
	uint64_t page = 4096;
	if (hw_auxv_get(t, AT_PAGESZ, &page) &&
	    (page < 4096 || page > HW_CACHE_BLOCK || (page & (page - 1))))
		page = 4096;
	t->cache = hw_cache_new(opts->cache_max, page);
	if (!t->cache || !add_regions(t, p, m) || !add_threads(t, m) ||
	    !add_death(t, p, m))
		goto nomem;
	/* Without a core the debugger holds something running: a process,
	   whose pid a remote stub may not give (qemu's says "process 1").  */
	if (m->core)
		t->path = keep(p, m->core);
	else if (m->pid)
		snprintf(p->name, sizeof p->name, "pid %d", m->pid);
	else
		snprintf(p->name, sizeof p->name, "a process through %s "
			 "(pid unknown)", who);
	t->is_process = !m->core;
	t->debugger = m->name ? keep(p, m->name) : NULL;
	if (!t->path)
		t->path = p->name;
	if (m->exe)
		t->exe = keep(p, m->exe);
	/* Fields after pid exist only for callers built with them.  */
	if (m->sz >= offsetof(struct hw_memory, limit) + sizeof m->limit &&
	    m->limit)
		snprintf(t->limit, sizeof t->limit, "%s", m->limit);
	t->files_from = t->nfiles ? who : NULL;
	if (!t->nfiles) {
		char **paths = NULL;
		size_t npaths = 0;
		free(t->files);
		t->files = NULL;
		if (!hw_link_map_files(t, t->exe, opts->sysroot, &paths,
				       &npaths))
			goto nomem;
		for (size_t i = 0; i < npaths; i++) {
			char **np = realloc(p->paths,
					    (p->npaths + 1) * sizeof *np);
			if (!np) {
				for (size_t k = i; k < npaths; k++)
					free(paths[k]);
				free(paths);
				goto nomem;
			}
			p->paths = np;
			p->paths[p->npaths++] = paths[i];
		}
		free(paths);
	}
	if (!t->exe && t->nfiles)
		t->exe = t->files[0].path;
	name_regions(t);
	if (t->nthreads == 0) {
		snprintf(err, errlen, "%s: no threads (no process or core?)",
			 who);
		hw_target_close(t);
		return HW_BAD_TARGET;
	}
	*out = t;
	return HW_OK;
nomem:
	hw_target_close(t);
	snprintf(err, errlen, "out of memory");
	return HW_BAD_TARGET;
}
