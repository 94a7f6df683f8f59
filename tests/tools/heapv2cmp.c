/* heapv2cmp - are two jemalloc heap profiles (heap_v2, what mallctl
 * "prof.dump" writes and jeprof/pprof read) the same profile?
 *
 *   heapv2cmp EXPECTED ACTUAL
 *
 * EXPECTED is usually the profile a corpus program dumped itself
 * (corpora/jemalloc/prof1.c), ACTUAL heapwalk's from the core.  Compared:
 *  - the first line, heap_v2/PERIOD;
 *  - the header's totals line "  t*: CUROBJS: CURBYTES [ACCUMOBJS:
 *    ACCUMBYTES]";
 *  - the header's per-thread lines "  tUID: COUNTS[ NAME]", as a set;
 *  - the records, as a set keyed by backtrace: an "@ 0xPC 0xPC ..." line,
 *    its "  t*: COUNTS" line and its "  tUID: COUNTS" lines (as a set);
 *    the order of the records does not matter (jemalloc's follows its
 *    hash table);
 *  - MAPPED_LIBRARIES (after one blank line): every EXPECTED line of
 *    /proc/self/maps whose path is a file (starts with '/') and whose
 *    permissions have x must be in ACTUAL: the same start-end, the same
 *    r/w/x letters, the same offset and the same path.  Device and inode
 *    are not compared (a core does not hold them), nor the p/s letter,
 *    nor the other lines (anonymous or data mappings: a profile reader
 *    only needs to place the code).
 * Parsing is strict: a line that is not one of these forms where it
 * stands is a difference.  Numbers are compared as numbers.
 *
 * Prints each difference (the first 20, then a count) and a closing
 * line; exit 0 when the profiles are the same, 1 when they differ, 2 on
 * usage or an unreadable file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define CMP_NAME "heapv2cmp"
#include "cmp.h"

#include <ctype.h>
#include <stdint.h>

struct counts {
	unsigned long long v[4]; /* curobjs, curbytes, accumobjs, accumbytes */
};

struct tline {
	unsigned long long uid;
	struct counts c;
	const char *name;        /* NULL: no name; may be "" */
};

struct rec {
	size_t pc0, npcs;        /* in prof.pcs */
	struct counts all;
	size_t t0, nt;           /* in prof.rt */
	unsigned long line;
};

struct map {
	unsigned long long lo, hi, off;
	char perm[5];
	const char *path;        /* "" when none */
	unsigned long line;
};

struct prof {
	const char *file;
	unsigned long long period;
	struct counts all;
	struct tline *ht;        /* header thread lines */
	size_t nht;
	unsigned long long *pcs;
	size_t npcs;
	struct tline *rt;        /* record thread lines, grouped per record */
	size_t nrt;
	struct rec *r;
	size_t nr;
	struct map *m;
	size_t nm;
	bool maps_seen;
	bool ok;                 /* parsed without a malformed line */
	char *buf;               /* the file; names and paths point into it */
};

/* Room for element n of arr, which holds n: capacities are powers of 2.  */
#define GROW(arr, n)                                                       \
	do {                                                                \
		if (((n) & ((n) - 1)) == 0)                                 \
			(arr) = xrealloc((arr), ((n) ? 2 * (n) : 1) *       \
						 sizeof *(arr));            \
	} while (0)

/* ---- parsing ------------------------------------------------------ */

/* Decimal digits at *p into *v (no sign, no overflow).  */
static bool p_dec(const char **p, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (unsigned)(*s - '0');
	}
	*v = x;
	*p = s;
	return true;
}

/* Hex digits at *p (0x prefix if `prefix`).  */
static bool p_hex(const char **p, unsigned long long *v, bool prefix)
{
	const char *s = *p;
	unsigned long long x = 0;
	if (prefix) {
		if (s[0] != '0' || s[1] != 'x')
			return false;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s))
		return false;
	for (; isxdigit((unsigned char)*s); s++) {
		if (x >> 60)
			return false;
		int d = isdigit((unsigned char)*s) ? *s - '0'
						    : tolower((unsigned char)*s) - 'a' + 10;
		x = x * 16 + (unsigned)d;
	}
	*v = x;
	*p = s;
	return true;
}

static bool p_lit(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n))
		return false;
	*p += n;
	return true;
}

/* "A: B [C: D]" */
static bool p_counts(const char **p, struct counts *c)
{
	return p_dec(p, &c->v[0]) && p_lit(p, ": ") && p_dec(p, &c->v[1]) &&
	       p_lit(p, " [") && p_dec(p, &c->v[2]) && p_lit(p, ": ") &&
	       p_dec(p, &c->v[3]) && p_lit(p, "]");
}

/* "  t*: COUNTS" */
static bool p_tstar(const char *s, struct counts *c)
{
	return p_lit(&s, "  t*: ") && p_counts(&s, c) && !*s;
}

/* "  tUID: COUNTS" and, if names, "[ NAME]".  */
static bool p_tuid(const char *s, struct tline *t, bool names)
{
	t->name = NULL;
	if (!p_lit(&s, "  t") || !p_dec(&s, &t->uid) || !p_lit(&s, ": ") ||
	    !p_counts(&s, &t->c))
		return false;
	if (!*s)
		return true;
	if (!names || *s != ' ')
		return false;
	t->name = s + 1;
	return true;
}

/* "@ 0xPC 0xPC ..." (at least one PC) into p->pcs.  */
static bool p_bt(struct prof *p, const char *s, struct rec *r)
{
	if (*s++ != '@')
		return false;
	r->pc0 = p->npcs;
	r->npcs = 0;
	while (*s) {
		unsigned long long pc;
		if (*s++ != ' ' || !p_hex(&s, &pc, true))
			return false;
		GROW(p->pcs, p->npcs);
		p->pcs[p->npcs++] = pc;
		r->npcs++;
	}
	return r->npcs > 0;
}

/* "START-END PERM OFFSET MAJ:MIN INODE[ PATH]" (/proc/PID/maps).  */
static bool p_map(const char *s, struct map *m)
{
	unsigned long long dev, inode;
	if (!p_hex(&s, &m->lo, false) || !p_lit(&s, "-") ||
	    !p_hex(&s, &m->hi, false) || !p_lit(&s, " "))
		return false;
	for (int i = 0; i < 4; i++) {
		static const char *const ok[4] = { "r-", "w-", "x-", "ps" };
		if (!*s || !strchr(ok[i], *s))
			return false;
		m->perm[i] = *s++;
	}
	m->perm[4] = 0;
	if (!p_lit(&s, " ") || !p_hex(&s, &m->off, false) ||
	    !p_lit(&s, " ") || !p_hex(&s, &dev, false) || !p_lit(&s, ":") ||
	    !p_hex(&s, &dev, false) || !p_lit(&s, " ") || !p_dec(&s, &inode))
		return false;
	if (*s && *s != ' ')
		return false;
	while (*s == ' ')
		s++;
	m->path = s;
	return m->lo < m->hi;
}

static void malformed(struct prof *p, unsigned long line, const char *what)
{
	mismatch("%s:%lu: malformed: expected %s", p->file, line, what);
	p->ok = false;
}

/* Parse the whole of p->file into p.  */
static void parse(struct prof *p)
{
	size_t len;
	char *buf = p->buf = slurp(p->file, &len);
	char *end = buf + len;
	enum { S_FIRST, S_TOTAL, S_HEADER, S_REC_TOTAL, S_REC_THREADS,
	       S_MAPS_TITLE, S_MAPS } st = S_FIRST;
	unsigned long lineno = 0;

	p->ok = true;
	if (strlen(buf) != len) {
		mismatch("%s: holds a NUL byte", p->file);
		p->ok = false;
		end = buf + strlen(buf);
	}
	for (char *s = buf; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		if (nl)
			*nl = 0;
		lineno++;
		const char *q = s;
		struct tline t;
		struct rec r;
		switch (st) {
		case S_FIRST:
			if (!p_lit(&q, "heap_v2/") || !p_dec(&q, &p->period) || *q)
				malformed(p, lineno, "heap_v2/PERIOD");
			st = S_TOTAL;
			break;
		case S_TOTAL:
			if (!p_tstar(s, &p->all))
				malformed(p, lineno, "the totals line '  t*: N: N [N: N]'");
			st = S_HEADER;
			break;
		case S_HEADER:
		case S_REC_THREADS:
			if (s[0] == '@') {
				memset(&r, 0, sizeof r);
				r.line = lineno;
				r.t0 = p->nrt;
				if (!p_bt(p, s, &r)) {
					malformed(p, lineno, "'@ 0xPC ...'");
					st = S_REC_THREADS; /* resync */
					break;
				}
				GROW(p->r, p->nr);
				p->r[p->nr++] = r;
				st = S_REC_TOTAL;
			} else if (!*s) {
				st = S_MAPS_TITLE;
			} else if (p_tuid(s, &t, st == S_HEADER)) {
				if (st == S_HEADER) {
					GROW(p->ht, p->nht);
					p->ht[p->nht++] = t;
				} else if (p->nr) {
					GROW(p->rt, p->nrt);
					p->rt[p->nrt++] = t;
					p->r[p->nr - 1].nt++;
				}
			} else {
				malformed(p, lineno, st == S_HEADER ?
					  "a thread line '  tN: N: N [N: N][ NAME]', '@ ...' or a blank line" :
					  "a thread line '  tN: N: N [N: N]', '@ ...' or a blank line");
			}
			break;
		case S_REC_TOTAL:
			if (!p_tstar(s, &p->r[p->nr - 1].all))
				malformed(p, lineno, "the record's '  t*: N: N [N: N]'");
			st = S_REC_THREADS;
			break;
		case S_MAPS_TITLE:
			if (strcmp(s, "MAPPED_LIBRARIES:"))
				malformed(p, lineno, "MAPPED_LIBRARIES:");
			p->maps_seen = true;
			st = S_MAPS;
			break;
		case S_MAPS: {
			struct map m;
			if (!p_map(s, &m)) {
				malformed(p, lineno, "a /proc/PID/maps line");
				break;
			}
			m.line = lineno;
			GROW(p->m, p->nm);
			p->m[p->nm++] = m;
			break;
		}
		}
		s = nl ? nl + 1 : end;
	}
	if (st == S_FIRST || st == S_TOTAL)
		malformed(p, lineno + 1, "heap_v2/PERIOD and the totals line");
	else if (st == S_REC_TOTAL)
		malformed(p, lineno + 1, "the last record's '  t*:' line");
	else if (!p->maps_seen)
		malformed(p, lineno + 1, "a blank line and MAPPED_LIBRARIES:");
}

/* ---- comparing ---------------------------------------------------- */

static const struct prof *sort_prof; /* for the qsort comparators */

static int cmp_counts(const struct counts *a, const struct counts *b)
{
	for (int i = 0; i < 4; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

static int cmp_tline(const void *x, const void *y)
{
	const struct tline *a = x, *b = y;
	if (a->uid != b->uid)
		return a->uid < b->uid ? -1 : 1;
	int c = cmp_counts(&a->c, &b->c);
	if (c)
		return c;
	if (!a->name || !b->name)
		return !!a->name - !!b->name;
	return strcmp(a->name, b->name);
}

static int cmp_bt(const struct prof *pa, const struct rec *a,
		  const struct prof *pb, const struct rec *b)
{
	size_t n = a->npcs < b->npcs ? a->npcs : b->npcs;
	for (size_t i = 0; i < n; i++) {
		unsigned long long x = pa->pcs[a->pc0 + i], y = pb->pcs[b->pc0 + i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return a->npcs < b->npcs ? -1 : a->npcs > b->npcs;
}

static int cmp_rec(const void *x, const void *y)
{
	return cmp_bt(sort_prof, x, sort_prof, y);
}

static int cmp_map(const void *x, const void *y)
{
	const struct map *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static const char *show_counts(const struct counts *c, char *buf, size_t n)
{
	snprintf(buf, n, "%llu: %llu [%llu: %llu]", c->v[0], c->v[1], c->v[2],
		 c->v[3]);
	return buf;
}

static const char *show_tline(const struct tline *t, char *buf, size_t n)
{
	char cb[128];
	snprintf(buf, n, "t%llu: %s%s%s", t->uid, show_counts(&t->c, cb, sizeof cb),
		 t->name ? " " : "", t->name ? t->name : "");
	return buf;
}

/* "@ 0x.. 0x.. ..." (the first 6 PCs) of record r.  */
static const char *show_bt(const struct prof *p, const struct rec *r,
			   char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "@");
	for (size_t i = 0; i < r->npcs && k < n; i++) {
		if (i == 6) {
			snprintf(buf + k, n - k, " ... (%zu PCs)", r->npcs);
			break;
		}
		k += (size_t)snprintf(buf + k, n - k, " %#llx", p->pcs[r->pc0 + i]);
	}
	return buf;
}

/* Two sets of thread lines; `where` says whose.  */
static void cmp_tsets(struct tline *a, size_t na, struct tline *b, size_t nb,
		      const char *where, const char *ea, const char *eb)
{
	qsort(a, na, sizeof *a, cmp_tline);
	qsort(b, nb, sizeof *b, cmp_tline);
	size_t i = 0, j = 0;
	char buf[4200];
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : cmp_tline(&a[i], &b[j]);
		if (c == 0) {
			i++;
			j++;
		} else if (c < 0) {
			mismatch("%s: '%s' only in %s", where,
				 show_tline(&a[i++], buf, sizeof buf), ea);
		} else {
			mismatch("%s: '%s' only in %s", where,
				 show_tline(&b[j++], buf, sizeof buf), eb);
		}
	}
}

static void cmp_records(struct prof *e, struct prof *a)
{
	char bt[512], x[128], y[128], where[600];
	sort_prof = e;
	qsort(e->r, e->nr, sizeof *e->r, cmp_rec);
	sort_prof = a;
	qsort(a->r, a->nr, sizeof *a->r, cmp_rec);
	for (size_t i = 1; i < e->nr; i++)
		if (!cmp_bt(e, &e->r[i - 1], e, &e->r[i]))
			mismatch("%s:%lu: backtrace %s twice", e->file, e->r[i].line,
				 show_bt(e, &e->r[i], bt, sizeof bt));
	for (size_t i = 1; i < a->nr; i++)
		if (!cmp_bt(a, &a->r[i - 1], a, &a->r[i]))
			mismatch("%s:%lu: backtrace %s twice", a->file, a->r[i].line,
				 show_bt(a, &a->r[i], bt, sizeof bt));
	size_t i = 0, j = 0;
	while (i < e->nr || j < a->nr) {
		int c = i == e->nr ? 1 : j == a->nr ? -1
			: cmp_bt(e, &e->r[i], a, &a->r[j]);
		if (c < 0) {
			const struct rec *r = &e->r[i++];
			mismatch("record %s (t*: %s) only in EXPECTED (%s:%lu)",
				 show_bt(e, r, bt, sizeof bt),
				 show_counts(&r->all, x, sizeof x), e->file, r->line);
		} else if (c > 0) {
			const struct rec *r = &a->r[j++];
			mismatch("record %s (t*: %s) only in ACTUAL (%s:%lu)",
				 show_bt(a, r, bt, sizeof bt),
				 show_counts(&r->all, x, sizeof x), a->file, r->line);
		} else {
			const struct rec *r = &e->r[i++], *s = &a->r[j++];
			show_bt(e, r, bt, sizeof bt);
			if (cmp_counts(&r->all, &s->all))
				mismatch("record %s: t*: expected %s, actual %s", bt,
					 show_counts(&r->all, x, sizeof x),
					 show_counts(&s->all, y, sizeof y));
			snprintf(where, sizeof where, "record %s", bt);
			cmp_tsets(e->rt + r->t0, r->nt, a->rt + s->t0, s->nt, where,
				  "EXPECTED", "ACTUAL");
		}
	}
}

static void cmp_maps(struct prof *e, struct prof *a)
{
	qsort(a->m, a->nm, sizeof *a->m, cmp_map);
	for (size_t i = 0; i < e->nm; i++) {
		const struct map *m = &e->m[i];
		if (m->path[0] != '/' || m->perm[2] != 'x')
			continue;
		size_t lo = 0, hi = a->nm;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->m[mid].lo < m->lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct map *n = NULL;
		for (size_t k = lo; k < a->nm && a->m[k].lo == m->lo; k++)
			if (a->m[k].hi == m->hi) {
				n = &a->m[k];
				break;
			}
		if (!n) {
			mismatch("mapping %llx-%llx %s %s (%s:%lu) not in ACTUAL",
				 m->lo, m->hi, m->perm, m->path, e->file, m->line);
			continue;
		}
		if (memcmp(m->perm, n->perm, 3) || m->off != n->off ||
		    strcmp(m->path, n->path))
			mismatch("mapping %llx-%llx: expected %.3s %llx %s, actual "
				 "%.3s %llx %s (%s:%lu)", m->lo, m->hi, m->perm,
				 m->off, m->path, n->perm, n->off, n->path, a->file,
				 n->line);
	}
}

static void prof_free(struct prof *p)
{
	free(p->ht);
	free(p->pcs);
	free(p->rt);
	free(p->r);
	free(p->m);
	free(p->buf);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: heapv2cmp EXPECTED ACTUAL\n");
		return 2;
	}
	struct prof e = { .file = argv[1] }, a = { .file = argv[2] };
	char x[128], y[128];
	parse(&e);
	parse(&a);
	if (e.period != a.period)
		mismatch("sample period: expected heap_v2/%llu, actual heap_v2/%llu",
			 e.period, a.period);
	if (cmp_counts(&e.all, &a.all))
		mismatch("totals: expected t*: %s, actual t*: %s",
			 show_counts(&e.all, x, sizeof x),
			 show_counts(&a.all, y, sizeof y));
	cmp_tsets(e.ht, e.nht, a.ht, a.nht, "header thread line", "EXPECTED",
		  "ACTUAL");
	cmp_records(&e, &a);
	cmp_maps(&e, &a);
	char what[160];
	snprintf(what, sizeof what, "%zu records expected, %zu actual", e.nr, a.nr);
	prof_free(&e);
	prof_free(&a);
	return cmp_finish(what);
}
