/* cmp.h - what the truth comparators (truthcmp.c, jetruthcmp.c) share:
 * mismatch reports (the first MAX_SHOWN printed, all counted), fatal
 * errors (exit 2), memory and whole-file reads, and heapwalk's chunk
 * lines.  Header only; a tool defines CMP_NAME, the prefix of every line
 * it prints, before including it.
 */
#ifndef HW_TOOLS_CMP_H
#define HW_TOOLS_CMP_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CMP_NAME
#error "define CMP_NAME before including cmp.h"
#endif

#include "json.h"

#define MAX_SHOWN 20

static unsigned long mismatches;

static void mismatch(const char *fmt, ...)
{
	va_list ap;
	if (mismatches++ >= MAX_SHOWN)
		return;
	va_start(ap, fmt);
	fputs(CMP_NAME ": ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static void fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(CMP_NAME ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fatal("out of memory");
	return p;
}

/* The whole file, NUL-terminated; its length in *len if len.  */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fatal("%s: %s", path, strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *buf = xrealloc(NULL, cap);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f))
		fatal("%s: read error", path);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* The closing lines every comparator prints: how many more mismatches
   than shown, then "CMP_NAME: <what>, M mismatches".  Returns the exit
   status: 0 when none, 1 when some.  */
static int cmp_finish(const char *what)
{
	if (mismatches > MAX_SHOWN)
		printf(CMP_NAME ": ... and %lu more\n", mismatches - MAX_SHOWN);
	printf(CMP_NAME ": %s, %lu mismatches\n", what, mismatches);
	return mismatches ? 1 : 0;
}

/* ---- heapwalk's chunks (JSON Lines) ------------------------------- */

/* One line of `heapwalk --json CORE chunks`; chunk and chunk_size are 0
   when the line has none (jemalloc's have extent and szind instead).  */
struct chunk {
	unsigned long long addr, size, chunk, chunk_size;
	long long arena;   /* -1: not given */
	bool used;
	char where[16];
	unsigned long line;
};

static struct chunk *chunks;   /* sorted by addr, then line */
static size_t nchunks;

static int chunk_by_addr(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Read every chunk line of path; a malformed line is a mismatch.  */
__attribute__((unused)) static void read_chunks(const char *path)
{
	size_t len, cap = 1024;
	char *buf = slurp(path, &len);
	char *end = buf + len;
	unsigned long lineno = 0;
	chunks = xrealloc(NULL, cap * sizeof *chunks);
	for (char *line = buf; line && line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t llen = nl ? (size_t)(nl - line) : (size_t)(end - line);
		if (nl)
			*nl = 0;
		lineno++;
		struct chunk c = { .arena = -1, .line = lineno };
		char state[16];
		unsigned long long a;
		if (strlen(line) != llen) {
			mismatch("%s:%lu: NUL byte at column %zu", path, lineno,
				 strlen(line) + 1);
		} else if (!*jws(line)) {
			/* blank line */
		} else if (!jvalid(line) || *jws(line) != '{') {
			mismatch("%s:%lu: not a JSON object", path, lineno);
		} else if (!jhex(jget(line, "addr"), &c.addr) ||
			   !jnum(jget(line, "size"), &c.size) ||
			   !jstr(jget(line, "state"), state, sizeof state) ||
			   !jstr(jget(line, "where"), c.where, sizeof c.where)) {
			mismatch("%s:%lu: addr/size/state/where missing or "
				 "malformed", path, lineno);
		} else {
			if (!strcmp(state, "used"))
				c.used = true;
			else if (strcmp(state, "free"))
				mismatch("%s:%lu: state \"%s\"", path, lineno,
					 state);
			if (jnum(jget(line, "arena"), &a))
				c.arena = (long long)a;
			jhex(jget(line, "chunk"), &c.chunk);
			jnum(jget(line, "chunk_size"), &c.chunk_size);
			if (nchunks == cap) {
				cap *= 2;
				chunks = xrealloc(chunks, cap * sizeof *chunks);
			}
			chunks[nchunks++] = c;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	qsort(chunks, nchunks, sizeof *chunks, chunk_by_addr);
}

/* The first chunk line with that addr, or NULL.  */
__attribute__((unused)) static struct chunk *find_chunk(unsigned long long addr)
{
	size_t lo = 0, hi = nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (chunks[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nchunks && chunks[lo].addr == addr ? &chunks[lo] : NULL;
}

#endif /* HW_TOOLS_CMP_H */
