/* heapv2.c - a profile as jemalloc's prof.dump writes it (heap_v2),
 * which jeprof and pprof read.
 *
 *   heap_v2/PERIOD
 *     t*: CUROBJS: CURBYTES [ACCUMOBJS: ACCUMBYTES]      all threads
 *     tUID: ... [NAME]                                  each thread
 *   @ PC PC ...                                         each stack
 *     t*: ...                                           its totals
 *     tUID: ...                                         per thread
 *
 *   MAPPED_LIBRARIES:
 *   /proc/self/maps
 *
 * The process's /proc/self/maps is gone with it; its lines are made from
 * the core's segments (addresses, permissions) and mapped files (path,
 * offset).  A core does not say which device or inode a file was, nor
 * whether a mapping was shared: those read 00:00 0 and private.  jeprof
 * needs only the executable mappings' addresses, offsets and paths.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../arch/arch.h"
#include "../../emit/emit.h"
#include "../../target/target.h"
#include "prof.h"

/* Lines are short except a stack's: "@" and 128 pcs of 19 bytes.  */
#define LINE_MAX_LEN 4096

static void put(struct hw_emitter *e, const char *s)
{
	em_verbatim(e, s, strlen(s));
}

static void counts(char *buf, size_t len, const char *who,
		   const struct hw_prof_counts *c)
{
	snprintf(buf, len, "  %s: %" PRIu64 ": %" PRIu64 " [%" PRIu64 ": %"
		 PRIu64 "]", who, c->curobjs, c->curbytes, c->accumobjs,
		 c->accumbytes);
}

/* One line of /proc/self/maps.  */
struct map_line {
	uint64_t start, end, off;
	uint32_t prot;
	bool shared;
	const char *name;
};

static void put_map_line(struct hw_emitter *e, const struct map_line *m)
{
	char line[LINE_MAX_LEN];
	int n = snprintf(line, sizeof line,
			 "%08" PRIx64 "-%08" PRIx64 " %c%c%c%c %08" PRIx64
			 " 00:00 0 ", m->start, m->end,
			 m->prot & HW_PROT_R ? 'r' : '-',
			 m->prot & HW_PROT_W ? 'w' : '-',
			 m->prot & HW_PROT_X ? 'x' : '-',
			 m->shared ? 's' : 'p', m->off);
	if (n < 0 || (size_t)n >= sizeof line)
		return;
	if (m->name) {
		/* The kernel starts the path at column 73, and writes a
		   newline in it as \012 (seq_file's mangle_path): a path
		   from the core must not start a line of its own.  */
		size_t at = (size_t)n;
		while (at < 73)
			line[at++] = ' ';
		for (const char *c = m->name; *c && at + 5 < sizeof line; c++) {
			if (*c == '\n') {
				memcpy(line + at, "\\012", 4);
				at += 4;
			} else {
				line[at++] = *c;
			}
		}
		line[at] = '\0';
	}
	put(e, line);
	put(e, "\n");
}

/* Does b go on where a ends, as one mapping of the kernel's (a core may
   split one: the part whose data it kept, and the rest)?  */
static bool continues(const struct map_line *a, const struct map_line *b)
{
	bool same_name = a->name == b->name ||
			 (a->name && b->name && !strcmp(a->name, b->name));
	return a->end == b->start && a->prot == b->prot &&
	       a->shared == b->shared && same_name &&
	       (!a->name || b->off == a->off + (a->end - a->start));
}

void prof_write_maps(struct hw_session *s, struct hw_emitter *e)
{
	struct hw_target *t = s->target;
	uint64_t vdso = 0, execfn = 0;
	hw_auxv_get(t, AT_SYSINFO_EHDR, &vdso);
	hw_auxv_get(t, AT_EXECFN, &execfn);
	struct map_line cur = { 0 };
	bool have = false;
	for (size_t i = 0; i < t->nregions && !em_failed(e); i++) {
		const struct hw_region *r = &t->regions[i];
		const struct hw_mapped_file *f =
			r->file >= 0 && (size_t)r->file < t->nfiles ?
			&t->files[r->file] : NULL;
		struct map_line m = { .start = r->start, .end = r->end,
				      .prot = r->prot, .shared = r->shared };
		if (f && f->path) {
			m.name = f->path;
			if (!f->absent && r->start >= f->start)
				m.off = f->offset + (r->start - f->start);
		} else if (vdso && r->start == vdso) {
			m.name = "[vdso]";
		} else if (execfn >= r->start && execfn < r->end) {
			m.name = "[stack]";
		} else if (r->start == 0xffffffffff600000ull &&
			   t->arch && t->arch->e_machine == EM_X86_64) {
			m.name = "[vsyscall]";
		}
		if (have && continues(&cur, &m)) {
			cur.end = m.end;
			continue;
		}
		if (have)
			put_map_line(e, &cur);
		cur = m;
		have = true;
	}
	if (have)
		put_map_line(e, &cur);
}

void prof_write_heap_v2(struct hw_session *s, const struct hw_profile *p,
			struct hw_emitter *e)
{
	char line[LINE_MAX_LEN], who[32];
	em_verbatim_begin(e, "heap_v2");
	snprintf(line, sizeof line, "heap_v2/%" PRIu64 "\n", p->period);
	put(e, line);
	counts(line, sizeof line, "t*", &p->dump);
	put(e, line);
	put(e, "\n");
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct hw_prof_thread *th = &p->threads[i];
		snprintf(who, sizeof who, "t%" PRIu64, th->uid);
		counts(line, sizeof line, who, &th->dump);
		put(e, line);
		if (th->name) {
			put(e, " ");
			/* A name is the thread's own bytes; a newline in it
			   would start a record of its own.  */
			char name[256];
			snprintf(name, sizeof name, "%s", th->name);
			for (char *c = name; *c; c++)
				if (*c == '\n' || *c == '\r')
					*c = ' ';
			put(e, name);
		}
		put(e, "\n");
	}
	for (size_t i = 0; i < p->nsites && !em_failed(e); i++) {
		const struct hw_prof_site *site = &p->sites[i];
		size_t at = 0;
		line[at++] = '@';
		for (unsigned k = 0; k < site->npcs; k++)
			at += (size_t)snprintf(line + at, sizeof line - at,
					       " 0x%" PRIx64, site->pcs[k]);
		line[at++] = '\n';
		em_verbatim(e, line, at);
		counts(line, sizeof line, "t*", &site->dump);
		put(e, line);
		put(e, "\n");
		for (size_t k = 0; k < site->nthreads; k++) {
			snprintf(who, sizeof who, "t%" PRIu64,
				 site->threads[k].uid);
			counts(line, sizeof line, who, &site->threads[k].dump);
			put(e, line);
			put(e, "\n");
		}
	}
	put(e, "\nMAPPED_LIBRARIES:\n");
	prof_write_maps(s, e);
	em_verbatim_end(e);
}
