/* jsoncheck - is each FILE valid UTF-8 JSON, strictly (strictjson.h)?
 *
 *   jsoncheck [--lines] FILE...
 *
 * Each FILE is one JSON text, or with --lines JSON Lines (every non-empty
 * line one JSON text; heapwalk's `chunks --json` and `leaks --json`).  An
 * empty file is one JSON text only with --lines.  Exit 0 when all are,
 * 1 (with the file, line and byte offset of the first fault) when one is
 * not, 2 on usage or I/O errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>

#include "strictjson.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);
	if (!f || !b)
		return NULL;
	for (;;) {
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (n < cap)
			break;
		cap *= 2;
		if (!(b = realloc(b, cap)))
			return NULL;
	}
	fclose(f);
	*len = n;
	return b;
}

int main(int argc, char **argv)
{
	int i = 1, bad = 0;
	bool lines = argc > 1 && strcmp(argv[1], "--lines") == 0;
	if (lines)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: jsoncheck [--lines] FILE...\n");
		return 2;
	}
	for (; i < argc; i++) {
		size_t len, err_at;
		const char *err;
		char *b = slurp(argv[i], &len);
		if (!b) {
			fprintf(stderr, "jsoncheck: cannot read %s\n", argv[i]);
			return 2;
		}
		if (!lines) {
			if (!jparse(b, len, &err, &err_at)) {
				fprintf(stderr, "jsoncheck: %s: byte %zu: %s\n",
					argv[i], err_at, err);
				bad = 1;
			}
			continue;
		}
		size_t start = 0, lineno = 0;
		while (start < len) {
			const char *nl = memchr(b + start, '\n', len - start);
			size_t end = nl ? (size_t)(nl - b) : len;
			lineno++;
			if (end > start &&
			    !jparse(b + start, end - start, &err, &err_at)) {
				fprintf(stderr, "jsoncheck: %s:%zu: byte %zu: %s\n",
					argv[i], lineno, err_at, err);
				bad = 1;
				break;
			}
			start = end + 1;
		}
	}
	return bad;
}
