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
};

struct v2_file {
	struct hw_profile p;
	struct hw_prof_site *sites;
	uint64_t *pcs;
	size_t nsites, cap;
	struct old_map *maps;
	size_t nmaps, mcap;
};

static void v2_free(struct v2_file *f)
{
	free(f->sites);
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
			f->maps[f->nmaps++] = (struct old_map){ a, b, off, dup };
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
				void *r = q ? realloc(f->pcs, nc * BT_MAX *
						      sizeof *f->pcs) : NULL;
				if (q)
					f->sites = q;
				if (!r)
					goto oom;
				f->pcs = r;
				f->cap = nc;
			}
			struct hw_prof_site *site = &f->sites[f->nsites];
			memset(site, 0, sizeof *site);
			uint64_t *v = f->pcs + f->nsites * BT_MAX;
			unsigned n = 0;
			for (char *p = line + 1, *end; n < BT_MAX; p = end) {
				unsigned long long pc = strtoull(p, &end, 16);
				if (end == p)
					break;
				v[n++] = pc;
			}
			site->npcs = n;
			f->nsites++;
			want_counts = true;
			continue;
		}
		if (want_counts && strstr(line, "t*:")) {
			struct hw_prof_site *site = &f->sites[f->nsites - 1];
			if (!parse_counts(line, &site->dump)) {
				st = hw_error(s, HW_USAGE, "prof: base '%s' line "
					      "%u: bad counts", path, lineno);
				break;
			}
			site->est = site->dump;
			scale(period, &site->est);
			want_counts = false;
		}
	}
	if (st == HW_OK && lineno == 0)
		st = hw_error(s, HW_USAGE, "prof: base '%s' is empty", path);
	/* The pcs array moved while it grew: point the sites at it now.  */
	for (size_t i = 0; i < f->nsites; i++)
		f->sites[i].pcs = f->pcs + i * BT_MAX;
	f->p.period = period;
	f->p.sites = f->sites;
	f->p.nsites = f->nsites;
	free(line);
	return st;
oom:
	free(line);
	return hw_error(s, HW_BAD_TARGET, "out of memory");
}

/* pc in the old snapshot -> the same code in s's target: the module and
   offset it had there, at the address that module has now.  */
static uint64_t relocate(const struct v2_file *f, struct hw_target *t,
			 uint64_t pc)
{
	for (size_t i = 0; i < f->nmaps; i++) {
		const struct old_map *m = &f->maps[i];
		if (pc < m->start || pc >= m->end)
			continue;
		uint64_t foff = m->offset + (pc - m->start);
		const char *base = strrchr(m->path, '/');
		base = base ? base + 1 : m->path;
		for (size_t k = 0; k < t->nfiles; k++) {
			const struct hw_mapped_file *nf = &t->files[k];
			if (!nf->path || nf->absent)
				continue;
			const char *nb = strrchr(nf->path, '/');
			nb = nb ? nb + 1 : nf->path;
			if (strcmp(nf->path, m->path) && strcmp(nb, base))
				continue;
			if (foff >= nf->offset &&
			    foff < nf->offset + (nf->end - nf->start))
				return nf->start + (foff - nf->offset);
		}
		return pc;
	}
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
		if (st == HW_OK)
			for (size_t i = 0; i < f->nsites; i++)
				for (unsigned k = 0; k < f->sites[i].npcs; k++)
					f->pcs[i * BT_MAX + k] = relocate(
						f, s->target,
						f->pcs[i * BT_MAX + k]);
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
