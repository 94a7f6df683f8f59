/* tctruthcmp - compare heapwalk's view of a tcmalloc core with the corpus
 * program's ground truth.
 *
 *   tctruthcmp TRUTH CHUNKS SUMMARY BINS [ARENAS]
 *       TRUTH    truth.txt written by a corpora/tcmalloc program
 *       CHUNKS   `heapwalk --json CORE chunks`  (JSON Lines)
 *       SUMMARY  `heapwalk --json CORE summary` (one JSON object)
 *       BINS     `heapwalk --json CORE bins`
 *       ARENAS   `heapwalk --json CORE arenas` (a core with thread
 *                pointers)
 *
 * Prints each mismatch (the first 20, then how many more), then
 * "tctruthcmp: N allocations, M mismatches"; exits 0 when M is 0, 1 when
 * not, 2 on unusable input.
 *
 * Truth format: corpora/tcmalloc/truth.h.  Checks:
 *  - every `used` allocation is a chunk line with that addr, state used
 *    and size == USIZE (its where "span" up to 256 KiB, "large" above);
 *  - no `freed` allocation is a chunk line in use (a free line, or none:
 *    a large block freed into a span of the page heap, is fine);
 *  - no two chunk lines overlap;
 *  - summary: allocator "tcmalloc", version the truth's (and maybe a
 *    patch level), and each of
 *    MallocExtension's properties the truth recorded equals the figure
 *    heapwalk gives under tcmalloc's "stats";
 *  - bins: per class, the free objects (thread + transfer + central)
 *    equal the stats' "by size class" free objects (freeclass records),
 *    and no class the stats call empty has free objects;
 *  - arenas: every thread of the truth has a thread cache naming its
 *    thread id (each made one at its first malloc).
 */
#define CMP_NAME "tctruthcmp"
#include <inttypes.h>
#include <stdint.h>

#include "cmp.h"

#define MAX_LINE 512
#define MAX_PROPS 16
#define MAX_CLASSES 256

#define MAX_THREADS 64

struct alloc {
	unsigned long long addr, req, usize;
	bool used;
};

static struct {
	struct alloc *v;
	size_t n;
	char version[16];
	char prop[MAX_PROPS][64];
	unsigned long long prop_v[MAX_PROPS];
	size_t nprops;
	unsigned long long free_size[MAX_CLASSES], free_objs[MAX_CLASSES];
	bool have_class[MAX_CLASSES];
	unsigned long long tid[MAX_THREADS];
	size_t nthreads;
} TR;

static void read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[MAX_LINE];
	size_t cap = 0;
	bool end = false;
	if (!f)
		fatal("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, f)) {
		char w[16], name[64];
		unsigned long long a, b, c;
		unsigned cls;
		if (sscanf(line, "alloc %llx %llu %llu %15s", &a, &b, &c, w) == 4) {
			if (TR.n == cap) {
				cap = cap ? 2 * cap : 1024;
				TR.v = xrealloc(TR.v, cap * sizeof *TR.v);
			}
			TR.v[TR.n++] = (struct alloc){ a, b, c, !strcmp(w, "used") };
			if (strcmp(w, "used") && strcmp(w, "freed"))
				fatal("%s: where '%s'", path, w);
		} else if (sscanf(line, "thread %u %llu", &cls, &a) == 2) {
			if (TR.nthreads == MAX_THREADS)
				fatal("%s: too many threads", path);
			TR.tid[TR.nthreads++] = a;
		} else if (sscanf(line, "config version %15s", TR.version) == 1) {
		} else if (sscanf(line, "prop %63s %llu", name, &a) == 2) {
			if (TR.nprops == MAX_PROPS)
				fatal("%s: too many props", path);
			snprintf(TR.prop[TR.nprops], sizeof TR.prop[0], "%s", name);
			TR.prop_v[TR.nprops++] = a;
		} else if (sscanf(line, "freeclass %u %llu %llu", &cls, &a, &b) == 3) {
			if (cls >= MAX_CLASSES)
				fatal("%s: class %u", path, cls);
			TR.have_class[cls] = true;
			TR.free_size[cls] = a;
			TR.free_objs[cls] = b;
		} else if (!strncmp(line, "end", 3)) {
			end = true;
		}
	}
	fclose(f);
	if (!end || !TR.version[0] || !TR.nprops)
		fatal("%s: incomplete truth (no end, version or props)", path);
}

static void check_chunks(void)
{
	for (size_t i = 0; i < TR.n; i++) {
		const struct alloc *a = &TR.v[i];
		const struct chunk *c = find_chunk(a->addr);
		if (a->used) {
			const char *want = a->usize > 262144 ? "large" : "span";
			if (!c)
				mismatch("0x%llx (%llu bytes, in use): no chunk line",
					 a->addr, a->usize);
			else if (!c->used || c->size != a->usize ||
				 strcmp(c->where, want))
				mismatch("0x%llx: in use, %llu bytes, where %s; "
					 "heapwalk: %s, %llu bytes, where %s",
					 a->addr, a->usize, want,
					 c->used ? "used" : "free", c->size,
					 c->where);
		} else if (c && c->used) {
			mismatch("0x%llx (%llu bytes) was freed; heapwalk says "
				 "it is in use", a->addr, a->usize);
		}
	}
	for (size_t i = 1; i < nchunks; i++)
		if (chunks[i - 1].addr + chunks[i - 1].size > chunks[i].addr)
			mismatch("chunk lines overlap: 0x%llx+%llu and 0x%llx",
				 chunks[i - 1].addr, chunks[i - 1].size,
				 chunks[i].addr);
}

static void check_summary(const char *path)
{
	char *doc = slurp(path, NULL);
	char s[64];
	if (!jvalid(doc))
		fatal("%s: not JSON", path);
	if (!jstr(jget(doc, "allocator"), s, sizeof s) || strcmp(s, "tcmalloc"))
		mismatch("summary: allocator is not tcmalloc");
	/* tc_version() gives MAJOR.MINOR; the library's string may go on
	   with a patch level ("2.8.1").  */
	size_t vl = strlen(TR.version);
	if (!jstr(jget(doc, "version"), s, sizeof s) ||
	    strncmp(s, TR.version, vl) || (s[vl] && s[vl] != '.'))
		mismatch("summary: version %s, the truth's %s", s, TR.version);
	const char *stats = jget(doc, "stats");
	if (!stats)
		fatal("%s: no tcmalloc stats", path);
	for (size_t i = 0; i < TR.nprops; i++) {
		const char *key = strchr(TR.prop[i], '.');
		unsigned long long v;
		key = key ? key + 1 : TR.prop[i];
		if (!jnum(jget(stats, key), &v))
			mismatch("summary: no %s", key);
		else if (v != TR.prop_v[i])
			mismatch("summary: %s is %llu, tcmalloc said %llu", key, v,
				 TR.prop_v[i]);
	}
	free(doc);
}

static void check_bins(const char *path)
{
	char *doc = slurp(path, NULL);
	bool seen[MAX_CLASSES] = { false };
	bool bad = false;
	if (!jvalid(doc))
		fatal("%s: not JSON", path);
	for (const char *el = jfirst(jget(doc, "classes")); el;
	     el = jnext(el, &bad)) {
		unsigned long long cls, size, t, x, c;
		if (!jnum(jget(el, "class"), &cls) || !jnum(jget(el, "size"), &size) ||
		    !jnum(jget(el, "thread"), &t) || !jnum(jget(el, "transfer"), &x) ||
		    !jnum(jget(el, "central"), &c) || cls >= MAX_CLASSES) {
			mismatch("bins: a malformed class row");
			continue;
		}
		seen[cls] = true;
		if (!TR.have_class[cls])
			mismatch("bins: class %llu (%llu bytes) has %llu free "
				 "objects; tcmalloc's stats list none", cls, size,
				 t + x + c);
		else if (TR.free_objs[cls] != t + x + c ||
			 TR.free_size[cls] != size)
			mismatch("bins: class %llu: %llu free objects of %llu "
				 "bytes; tcmalloc: %llu of %llu", cls, t + x + c,
				 size, TR.free_objs[cls], TR.free_size[cls]);
	}
	if (bad)
		mismatch("bins: malformed classes array");
	for (unsigned c = 0; c < MAX_CLASSES; c++)
		if (TR.have_class[c] && !seen[c])
			mismatch("bins: class %u missing (tcmalloc: %llu free)", c,
				 TR.free_objs[c]);
	free(doc);
}

static void check_arenas(const char *path)
{
	char *doc = slurp(path, NULL);
	bool bad = false, seen[MAX_THREADS] = { false };
	if (!jvalid(doc))
		fatal("%s: not JSON", path);
	for (const char *el = jfirst(jget(doc, "thread_caches")); el;
	     el = jnext(el, &bad)) {
		unsigned long long tid;
		if (!jnum(jget(el, "tid"), &tid))
			continue;
		for (size_t i = 0; i < TR.nthreads; i++)
			seen[i] |= TR.tid[i] == tid;
	}
	if (bad)
		mismatch("arenas: malformed thread_caches array");
	for (size_t i = 0; i < TR.nthreads; i++)
		if (!seen[i])
			mismatch("arenas: no thread cache names thread %llu",
				 TR.tid[i]);
	free(doc);
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6)
		fatal("usage: tctruthcmp TRUTH CHUNKS SUMMARY BINS [ARENAS]");
	read_truth(argv[1]);
	read_chunks(argv[2]);
	check_chunks();
	check_summary(argv[3]);
	check_bins(argv[4]);
	if (argc == 6)
		check_arenas(argv[5]);
	char what[64];
	snprintf(what, sizeof what, "%zu allocations", TR.n);
	free(TR.v);
	free(chunks);
	return cmp_finish(what);
}
