/* cmp.h - what the truth comparators (truthcmp.c, jetruthcmp.c) share:
 * mismatch reports (the first MAX_SHOWN printed, all counted), fatal
 * errors (exit 2), memory and whole-file reads.  Header only; a tool
 * defines CMP_NAME, the prefix of every line it prints, before including
 * it.
 */
#ifndef HW_TOOLS_CMP_H
#define HW_TOOLS_CMP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CMP_NAME
#error "define CMP_NAME before including cmp.h"
#endif

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

#endif /* HW_TOOLS_CMP_H */
