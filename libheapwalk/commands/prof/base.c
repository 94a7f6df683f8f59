/* base.c - the base of `prof --base OLD`: an older snapshot's heap
 * profile, from another core of the program or from a heap_v2 file
 * (jemalloc's own prof.dump, or heapwalk's), whose stacks are subtracted
 * from the newer one's, as `jeprof --base` does.
 *
 * Stacks are matched by what they call, not by address: two runs of a
 * program load it at other addresses.  A core's stacks are symbolized
 * with that core's own modules.  A heap_v2 file's addresses are first
 * moved into the newer snapshot's address space through the file's own
 * MAPPED_LIBRARIES (the module and offset each one lies in), then
 * symbolized with the newer snapshot's modules.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../alloc/alloc.h"
#include "../../target/target.h"
#include "prof.h"

#define BT_MAX 128
#define LINE_MAX_LEN 8192

struct old_map {
	uint64_t start, end, offset;
	char *path;
	/* relocate(): the target's mapping of the same file that held the
	   last offset looked up here (an index into t->files), -1 when none
	   yet, -2 when the target maps no file of that name.  */
	long last;
};

/* A file's stacks are stored one after another, each as long as it is
   (a stack of 128 frames is rare; a file of short ones must not cost
   128 each); the sites point into pcs once it stops moving.  */
struct v2_file {
	struct hw_profile p;
	struct hw_prof_site *sites;
	size_t *first;            /* each site's first pc in pcs */
	uint64_t *pcs;
	size_t nsites, cap, npcs, pcap;
	struct old_map *maps;     /* sorted by start once read */
	size_t nmaps, mcap;
};

static void v2_free(struct v2_file *f)
{
	free(f->sites);
	free(f->first);
	free(f->pcs);
	for (size_t i = 0; i < f->nmaps; i++)
		free(f->maps[i].path);
	free(f->maps);
}

/* Counts past this are no heap's (2^50 bytes is a petabyte): a file
   with more is refused.  */
#define MAX_COUNT (1ull << 50)

/* "  t*: A: B [C: D]" -> counts; false when malformed.  */
static bool parse_counts(const char *l, struct hw_prof_counts *c)
{
	unsigned long long a, b, x, y;
	int n = 0;
	if (sscanf(l, " t*: %llu: %llu [%llu: %llu]%n", &a, &b, &x, &y, &n) != 4 ||
	    a > MAX_COUNT || b > MAX_COUNT || x > MAX_COUNT || y > MAX_COUNT)
		return false;
	*c = (struct hw_prof_counts){ a, b, x, y };
	return true;
}

/* jeprof's scaling: a record of c objects and s bytes stands for
   c / (1 - exp(-(s/c) / period)) objects (and bytes the same).  */
static uint64_t scaled(double v)
{
	double r = round(v);
	return r < (double)MAX_COUNT ? (r > 0 ? (uint64_t)r : 0) : MAX_COUNT;
}

static void scale(uint64_t period, struct hw_prof_counts *c)
{
	if (period <= 1 || !c->curobjs || !c->curbytes)
		return;
	double ratio = (double)c->curbytes / (double)c->curobjs /
		       (double)period;
	double k = 1.0 / (1.0 - exp(-ratio));
	c->curobjs = scaled((double)c->curobjs * k);
	c->curbytes = scaled((double)c->curbytes * k);
}

static enum hw_status parse_v2(struct hw_session *s, const char *path,
			       FILE *in, struct v2_file *f)
{
	char *line = malloc(LINE_MAX_LEN);
	if (!line)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	enum hw_status st = HW_OK;
	unsigned long long period = 0;
	bool maps = false, want_counts = false;
	unsigned lineno = 0;
	while (fgets(line, LINE_MAX_LEN, in)) {
		lineno++;
		if (lineno == 1) {
			if (sscanf(line, "heap_v2/%llu", &period) != 1 || !period ||
			    period > MAX_COUNT) {
				st = hw_error(s, HW_USAGE, "prof: base '%s': not a "
					      "heap_v2 profile", path);
				break;
			}
			continue;
		}
		if (maps) {
			unsigned long long a, b, off;
			char perms[8];
			int pos = 0;
			if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b,
				   perms, &off, &pos) < 4 || !pos ||
			    !strchr(perms, 'x'))
				continue;
			char *p = line + pos;
			p[strcspn(p, "\n")] = '\0';
			if (*p != '/')
				continue;
			if (f->nmaps == f->mcap) {
				size_t nc = f->mcap ? 2 * f->mcap : 32;
				void *q = realloc(f->maps, nc * sizeof *f->maps);
				if (!q)
					goto oom;
				f->maps = q;
				f->mcap = nc;
			}
			char *dup = strdup(p);
			if (!dup)
				goto oom;
			f->maps[f->nmaps++] = (struct old_map){ a, b, off, dup,
								-1 };
			continue;
		}
		if (!strncmp(line, "MAPPED_LIBRARIES:", 17)) {
			maps = true;
			continue;
		}
		if (line[0] == '@') {
			if (f->nsites == f->cap) {
				size_t nc = f->cap ? 2 * f->cap : 256;
				void *q = realloc(f->sites, nc * sizeof *f->sites);
				if (q)
					f->sites = q;
				void *r = q ? realloc(f->first, nc *
						      sizeof *f->first) : NULL;
				if (!r)
					goto oom;
				f->first = r;
				f->cap = nc;
			}
			if (f->pcap - f->npcs < BT_MAX) {
				size_t nc = f->pcap ? 2 * f->pcap : 4096;
				void *q = realloc(f->pcs, nc * sizeof *f->pcs);
				if (!q)
					goto oom;
				f->pcs = q;
				f->pcap = nc;
			}
			/* The site is taken (nsites, npcs moved on) only once
			   its counts say it holds something: one with none,
			   or all zeros, takes nothing away from the newer
			   profile, and a file of a million "@" lines must not
			   cost a million sites.  */
			struct hw_prof_site *site = &f->sites[f->nsites];
			memset(site, 0, sizeof *site);
			uint64_t *v = f->pcs + f->npcs;
			unsigned n = 0;
			for (char *p = line + 1, *end; n < BT_MAX; p = end) {
				unsigned long long pc = strtoull(p, &end, 16);
				if (end == p)
					break;
				v[n++] = pc;
			}
			site->npcs = n;
			want_counts = true;
			continue;
		}
		if (want_counts && strstr(line, "t*:")) {
			struct hw_prof_site *site = &f->sites[f->nsites];
			if (!parse_counts(line, &site->dump)) {
				st = hw_error(s, HW_USAGE, "prof: base '%s' line "
					      "%u: bad counts", path, lineno);
				break;
			}
			want_counts = false;
			const struct hw_prof_counts *c = &site->dump;
			if (!c->curobjs && !c->curbytes && !c->accumobjs &&
			    !c->accumbytes)
				continue;
			site->est = site->dump;
			scale(period, &site->est);
			f->first[f->nsites++] = f->npcs;
			f->npcs += site->npcs;
		}
	}
	if (st == HW_OK && lineno == 0)
		st = hw_error(s, HW_USAGE, "prof: base '%s' is empty", path);
	/* The pcs array moved while it grew: point the sites at it now.  */
	for (size_t i = 0; i < f->nsites; i++)
		f->sites[i].pcs = f->pcs + f->first[i];
	f->p.period = period;
	f->p.sites = f->sites;
	f->p.nsites = f->nsites;
	free(line);
	return st;
oom:
	free(line);
	return hw_error(s, HW_BAD_TARGET, "out of memory");
}

static int map_cmp(const void *a, const void *b)
{
	const struct old_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Does the target's mapping nf hold offset foff of the file?  */
static bool holds(const struct hw_mapped_file *nf, uint64_t foff)
{
	return foff >= nf->offset && foff - nf->offset < nf->end - nf->start;
}

/* pc in the old snapshot -> the same code in s's target: the module and
   offset it had there, at the address that module has now.  The maps
   are sorted (a binary search per pc); the target's mapping a map's pcs
   went to is kept with the map, so the file names are compared once per
   map, not per pc.  */
static uint64_t relocate(struct v2_file *f, struct hw_target *t, uint64_t pc)
{
	size_t lo = 0, hi = f->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= f->maps[lo - 1].end)
		return pc;
	struct old_map *m = &f->maps[lo - 1];
	uint64_t foff = m->offset + (pc - m->start);
	if (m->last >= 0 && holds(&t->files[m->last], foff))
		return t->files[m->last].start + (foff - t->files[m->last].offset);
	if (m->last == -2)
		return pc;
	const char *base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	bool named = false;
	for (size_t k = 0; k < t->nfiles; k++) {
		const struct hw_mapped_file *nf = &t->files[k];
		if (!nf->path || nf->absent)
			continue;
		const char *nb = strrchr(nf->path, '/');
		nb = nb ? nb + 1 : nf->path;
		if (strcmp(nf->path, m->path) && strcmp(nb, base))
			continue;
		named = true;
		if (holds(nf, foff)) {
			m->last = (long)k;
			return nf->start + (foff - nf->offset);
		}
	}
	if (!named)
		m->last = -2;
	return pc;
}

enum hw_status prof_base_open(struct hw_session *s, const char *path,
			      const struct hw_profile *now, struct prof_base *b)
{
	memset(b, 0, sizeof *b);
	/* A path from the user: a FIFO must not block us.  */
	int fd = hw_open_regular(path);
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!in) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return hw_error(s, HW_USAGE, "prof: base '%s': %s", path,
				strerror(err));
	}
	char head[8] = { 0 };
	size_t got = fread(head, 1, sizeof head, in);
	if (got == sizeof head && !memcmp(head, "heap_v2/", 8)) {
		rewind(in);
		struct v2_file *f = calloc(1, sizeof *f);
		if (!f) {
			fclose(in);
			return hw_error(s, HW_BAD_TARGET, "out of memory");
		}
		enum hw_status st = parse_v2(s, path, in, f);
		fclose(in);
		/* Moved into this target, its allocator's code is where this
		   profile's is.  */
		f->p.code_low = now->code_low;
		f->p.code_high = now->code_high;
		f->p.allocator = now->allocator;
		/* (Overlapping maps, which no kernel writes, relocate by
		   whichever the search meets.)  */
		if (st == HW_OK && f->nmaps)
			qsort(f->maps, f->nmaps, sizeof *f->maps, map_cmp);
		if (st == HW_OK)
			for (size_t i = 0; i < f->npcs; i++)
				f->pcs[i] = relocate(f, s->target, f->pcs[i]);
		if (st == HW_OK && !prof_stacks_build(s, &f->p, &b->st))
			st = hw_error(s, HW_BAD_TARGET, "out of memory");
		if (st != HW_OK) {
			v2_free(f);
			free(f);
			return st;
		}
		b->file = f;
		b->p = &f->p;
		b->what = "heap_v2 file";
		return HW_OK;
	}
	fclose(in);
	enum hw_status st = hw_session_open_like(s, path, &b->session);
	const struct hw_profile *p = NULL;
	const char *why = NULL;
	if (st == HW_OK && !b->session->alloc)
		st = hw_error(b->session, HW_NO_ALLOCATOR, "no allocator");
	if (st == HW_OK && !b->session->alloc->profile)
		st = hw_error(b->session, HW_NO_ALLOCATOR, "no heap profile: "
			      "%s keeps no allocation sites",
			      b->session->alloc->name);
	if (st == HW_OK)
		st = b->session->alloc->profile(b->session->alloc_state, &p,
						&why);
	if (st == HW_OK && !p)
		st = hw_error(b->session, HW_NO_ALLOCATOR, "no heap profile: "
			      "%s", why ? why : "none found");
	if (st == HW_OK && !prof_stacks_build(b->session, p, &b->st))
		st = hw_error(b->session, HW_BAD_TARGET, "out of memory");
	if (st != HW_OK) {
		hw_error(s, st, "prof: base '%s': %s", path,
			 b->session ? hw_session_errmsg(b->session) : "");
		hw_session_close(b->session);
		b->session = NULL;
		return st;
	}
	b->p = p;
	b->what = "core";
	return HW_OK;
}

void prof_base_close(struct prof_base *b)
{
	if (b->p)
		prof_stacks_free(&b->st);
	if (b->file) {
		v2_free(b->file);
		free(b->file);
	}
	if (b->session)
		hw_session_close(b->session);
	memset(b, 0, sizeof *b);
}
