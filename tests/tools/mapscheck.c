/* mapscheck - check `heapwalk --json CORE maps --mappings` against a
 * corpus program's truth and against itself.
 *
 *   mapscheck TRUTH MAPS SUMMARY
 *       TRUTH    truth.txt of a corpus program (corpora/ptmalloc/truth.h,
 *                corpora/jemalloc/truth.h)
 *       MAPS     `heapwalk --json CORE maps --mappings`
 *       SUMMARY  `heapwalk --json CORE summary`
 *
 * The breakdown adds up: the rows and the mappings each sum to the
 * writable total, the mappings are sorted and disjoint, the allocator's
 * share is the sum of its kinds (heap, mmapped, unused, metadata) in the
 * rows and in the mappings, and summary's "writable" says the same.
 * Against the truth: every thread the program recorded (by tid) has a
 * stack row; on ptmalloc, the mmapped chunks are glibc's own hblkhd
 * exactly, and glibc's own `arena` (the system memory of every arena)
 * lies between the heap bytes and heap + metadata (metadata also holds
 * main_arena and mp_, which live in libc's data, not in an arena).
 *
 * Prints each mismatch, then "mapscheck: N rows, M mismatches"; exits 0
 * when M is 0, 1 when not, 2 on unusable input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static unsigned long long mismatches;

#define bad(...) \
	(mismatches++, printf("mismatch: "), printf(__VA_ARGS__), printf("\n"))

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

static bool allocator_kind(const char *k)
{
	return !strcmp(k, "heap") || !strcmp(k, "mmapped") ||
	       !strcmp(k, "unused") || !strcmp(k, "metadata");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: mapscheck TRUTH MAPS SUMMARY\n");
		return 2;
	}
	char *maps = slurp(argv[2]), *sum = slurp(argv[3]);
	FILE *truth = fopen(argv[1], "r");
	if (!maps || !sum || !truth || !jvalid(maps) || !jvalid(sum)) {
		fprintf(stderr, "mapscheck: unusable input\n");
		return 2;
	}
	unsigned long long writable = 0, nmaps = 0, alloc = 0;
	if (!jnum(jpath(maps, "writable.bytes"), &writable) ||
	    !jnum(jpath(maps, "writable.mappings"), &nmaps) ||
	    !jnum(jget(maps, "allocator"), &alloc)) {
		fprintf(stderr, "mapscheck: no writable totals in %s\n", argv[2]);
		return 2;
	}
	unsigned long long rows_sum = 0, rows_alloc = 0, nrows = 0;
	unsigned long long heap = 0, mmapped = 0, meta = 0;
	bool err = false;
	const char *rows = jget(maps, "rows");
	for (const char *r = rows ? jfirst(rows) : NULL; r; r = jnext(r, &err)) {
		unsigned long long b = 0;
		char kind[32] = "";
		if (!jnum(jget(r, "bytes"), &b) ||
		    !jstr(jget(r, "kind"), kind, sizeof kind))
			bad("a row without bytes or kind");
		nrows++;
		rows_sum += b;
		if (allocator_kind(kind))
			rows_alloc += b;
		if (!strcmp(kind, "heap"))
			heap += b;
		else if (!strcmp(kind, "mmapped"))
			mmapped += b;
		else if (!strcmp(kind, "metadata"))
			meta += b;
	}
	unsigned long long maps_sum = 0, maps_alloc = 0, maps_n = 0, last_end = 0;
	const char *ml = jget(maps, "mappings");
	if (!ml)
		bad("%s: no mappings (run maps with --mappings)", argv[2]);
	for (const char *m = ml ? jfirst(ml) : NULL; m; m = jnext(m, &err)) {
		unsigned long long start = 0, end = 0, b = 0, a = 0;
		if (!jhex(jget(m, "start"), &start) || !jhex(jget(m, "end"), &end) ||
		    !jnum(jget(m, "bytes"), &b) || !jnum(jget(m, "allocator"), &a))
			bad("a mapping without start, end, bytes or allocator");
		if (start < last_end)
			bad("mapping at 0x%llx overlaps or is out of order "
			    "(previous end 0x%llx)", start, last_end);
		if (end - start != b || a > b)
			bad("mapping at 0x%llx: bytes %llu or allocator %llu wrong",
			    start, b, a);
		last_end = end;
		maps_sum += b;
		maps_alloc += a;
		maps_n++;
	}
	if (err) {
		fprintf(stderr, "mapscheck: bad JSON arrays\n");
		return 2;
	}
	if (rows_sum != writable)
		bad("rows sum to %llu, writable is %llu", rows_sum, writable);
	if (maps_sum != writable || maps_n != nmaps)
		bad("mappings sum to %llu bytes in %llu, writable is %llu in %llu",
		    maps_sum, maps_n, writable, nmaps);
	if (rows_alloc != alloc || maps_alloc != alloc)
		bad("the allocator's kinds sum to %llu (rows), %llu (mappings); "
		    "allocator is %llu", rows_alloc, maps_alloc, alloc);
	unsigned long long sw = 0, sm = 0, sa = 0;
	if (!jnum(jpath(sum, "writable.bytes"), &sw) ||
	    !jnum(jpath(sum, "writable.mappings"), &sm) ||
	    !jnum(jpath(sum, "writable.allocator"), &sa) ||
	    sw != writable || sm != nmaps || sa != alloc)
		bad("summary's writable %llu %llu %llu differs from maps' %llu "
		    "%llu %llu", sw, sm, sa, writable, nmaps, alloc);

	char line[512];
	unsigned long long hblkhd = ~0ull, arena = ~0ull;
	while (fgets(line, sizeof line, truth)) {
		unsigned idx, tid;
		unsigned long long v;
		if (sscanf(line, "thread %u %u", &idx, &tid) == 2) {
			char want[64];
			snprintf(want, sizeof want, "(tid %u)\"", tid);
			if (!strstr(maps, want))
				bad("thread %u (tid %u) has no stack row", idx, tid);
		} else if (sscanf(line, "mallinfo2 hblkhd %llu", &v) == 1)
			hblkhd = v;
		else if (sscanf(line, "mallinfo2 arena %llu", &v) == 1)
			arena = v;
	}
	fclose(truth);
	if (hblkhd != ~0ull && mmapped != hblkhd)
		bad("mmapped chunks %llu, glibc's hblkhd %llu", mmapped, hblkhd);
	if (arena != ~0ull && (arena < heap || arena > heap + meta))
		bad("glibc's arena %llu is not within heap %llu + metadata %llu",
		    arena, heap, meta);
	printf("mapscheck: %llu rows, %llu mismatches\n", nrows, mismatches);
	free(maps);
	free(sum);
	return mismatches ? 1 : 0;
}
