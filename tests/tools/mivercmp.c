/* mivercmp - heapwalk's reports of a committed mimalloc 2.x core
 * (corpora/mimalloc/cores/, tests/t0494-mimalloc-versions.sh) held to
 * the truth its program recorded (corpora/mimalloc/miversions.c).
 *
 *   mivercmp [--encoded] TRUTH CHUNKS SUMMARY
 *       TRUTH      truth.txt (its format: miversions.c's head)
 *       CHUNKS     `heapwalk --json CORE chunks`   (JSON Lines)
 *       SUMMARY    `heapwalk --json CORE summary`
 *       --encoded  the release was built with MI_SECURE=4: its free
 *                  lists are encoded (without: they are plain)
 *
 * The truth alone: prog, version and end lines (release, the tag, when
 * given); USABLE >= REQ; blocks in use (alloc, libc) do not overlap.
 * heapwalk against it (a line's extent is chunk/chunk_size when given,
 * else addr/size):
 *  - the chunk lines come in address order and do not overlap;
 *  - every alloc block lies in a line in use (where "page" or "huge"):
 *    at its address, of size USABLE; or, for an aligned pointer mimalloc
 *    handed out inside its block, a line that starts before it and ends
 *    where the block ends (addr + size == USER + USABLE: mi_usable_size
 *    counts from the pointer, heapwalk from the block);
 *  - every libc block (the C library's, as mimalloc's visit gave it) is
 *    a line in use at its address of size USABLE;
 *  - the lines in use are exactly those: no other;
 *  - every freed block lies in a free line; one freed before the visits
 *    (phase 1 or 2) is on no list the visits collect from: not
 *    "local-free", and if its owner freed it not "thread-free" either
 *    (another thread's free may wait on the heap's delayed list, which
 *    no visit collects); one freed after them (phase 3) is not
 *    "page-free": it waits on "local-free" or "thread-free", unless its
 *    page was freed (a span: "dirty", "retained");
 *  - summary: allocator "mimalloc", findings 0, its blocks in use the
 *    number of lines in use, its version (the layout row's releases:
 *    "A to B", "A and B" or "A") includes the truth's release (its tag;
 *    without one, mi_version()'s: 209 is 2.0.9, 20401 is 2.4.1),
 *    encoded_free_lists as --encoded says.
 *
 * Prints each mismatch (the first 20, then how many more), then
 * "mivercmp: <what was compared>, M mismatches"; exits 0 when M is 0,
 * 1 when not, 2 on unusable input.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#define CMP_NAME "mivercmp"
#include "cmp.h"

typedef unsigned long long u64;

enum kind { K_ALLOC, K_FREED, K_LIBC };

struct tblock {
	u64 user, req, usable;
	int thread, by, phase;
	enum kind kind;
	unsigned long line;
};

static struct tblock *tb;
/* What the comparison met: aligned pointers inside their block, freed
   blocks by their place.  */
static u64 n_inside, n_page_free, n_local_free, n_thread_free, n_span;
static size_t ntb, captb;
static unsigned long version;     /* mi_version() */
static char release[32];          /* the tag, as "v2.1.7" */
static bool have_prog, have_end;

static const char *kind_name(enum kind k)
{
	return k == K_ALLOC ? "alloc" : k == K_FREED ? "freed" : "libc";
}

static void read_truth(const char *path)
{
	char *buf = slurp(path, NULL);
	unsigned long lineno = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		struct tblock b = { .line = ++lineno };
		char word[16];
		int n = 0;
		if (sscanf(line, "%15s%n", word, &n) != 1)
			continue;
		if (!strcmp(word, "prog")) {
			have_prog = !strcmp(line, "prog miversions");
		} else if (!strcmp(word, "release")) {
			if (sscanf(line + n, "%31s", release) != 1)
				fatal("%s:%lu: bad release line", path, lineno);
		} else if (!strcmp(word, "version")) {
			if (sscanf(line + n, "%lu", &version) != 1)
				fatal("%s:%lu: bad version line", path, lineno);
		} else if (!strcmp(word, "end")) {
			have_end = true;
		} else if (!strcmp(word, "thread")) {
			/* informative only */
		} else if (!strcmp(word, "alloc")) {
			b.kind = K_ALLOC;
			if (sscanf(line + n, "%llx %llu %llu %d", &b.user, &b.req,
				   &b.usable, &b.thread) != 4)
				fatal("%s:%lu: bad alloc line", path, lineno);
		} else if (!strcmp(word, "freed")) {
			b.kind = K_FREED;
			if (sscanf(line + n, "%llx %llu %d %d %d", &b.user,
				   &b.req, &b.thread, &b.by, &b.phase) != 5)
				fatal("%s:%lu: bad freed line", path, lineno);
		} else if (!strcmp(word, "libc")) {
			b.kind = K_LIBC;
			if (sscanf(line + n, "%llx %llu %d", &b.user, &b.usable,
				   &b.thread) != 3)
				fatal("%s:%lu: bad libc line", path, lineno);
		} else {
			fatal("%s:%lu: unknown record \"%s\"", path, lineno, word);
		}
		if (!strcmp(word, "alloc") || !strcmp(word, "freed") ||
		    !strcmp(word, "libc")) {
			if (ntb == captb) {
				captb = captb ? 2 * captb : 256;
				tb = xrealloc(tb, captb * sizeof *tb);
			}
			tb[ntb++] = b;
		}
	}
	free(buf);
	if (!have_prog || !version || !have_end)
		fatal("%s: not a whole miversions truth (prog, version, end)",
		      path);
}

static int by_user(const void *a, const void *b)
{
	const struct tblock *x = a, *y = b;
	return x->user < y->user ? -1 : x->user > y->user;
}

static void check_truth(void)
{
	const struct tblock *prev = NULL;
	for (size_t i = 0; i < ntb; i++)
		if (tb[i].kind == K_ALLOC && tb[i].usable < tb[i].req)
			mismatch("truth line %lu: usable %llu below the request "
				 "%llu", tb[i].line, tb[i].usable, tb[i].req);
	qsort(tb, ntb, sizeof *tb, by_user);
	for (size_t i = 0; i < ntb; i++) {
		if (tb[i].kind == K_FREED)
			continue;
		if (prev && prev->user + prev->usable > tb[i].user)
			mismatch("truth lines %lu and %lu: blocks in use overlap "
				 "(a corpus bug)", prev->line, tb[i].line);
		prev = &tb[i];
	}
}

static u64 ext_start(const struct chunk *c)
{
	return c->chunk_size ? c->chunk : c->addr;
}

static u64 ext_end(const struct chunk *c)
{
	return c->chunk_size ? c->chunk + c->chunk_size : c->addr + c->size;
}

/* The chunk line whose extent holds addr, or NULL.  */
static struct chunk *holding(u64 addr)
{
	size_t lo = 0, hi = nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ext_start(&chunks[mid]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct chunk *c = &chunks[lo - 1];
	return addr < ext_end(c) ? c : NULL;
}

static bool is_span(const char *where)
{
	return !strcmp(where, "dirty") || !strcmp(where, "retained");
}

static void check_chunks(bool *matched)
{
	for (size_t i = 1; i < nchunks; i++)
		if (ext_start(&chunks[i]) < ext_end(&chunks[i - 1]))
			mismatch("chunks lines %lu and %lu overlap or are out of "
				 "order (0x%llx after 0x%llx)",
				 chunks[i - 1].line, chunks[i].line,
				 ext_start(&chunks[i]), ext_start(&chunks[i - 1]));
	for (size_t i = 0; i < ntb; i++) {
		const struct tblock *b = &tb[i];
		struct chunk *c = holding(b->user);
		if (!c) {
			mismatch("%s 0x%llx (truth line %lu, thread %d): in no "
				 "chunks line", kind_name(b->kind), b->user,
				 b->line, b->thread);
			continue;
		}
		if (b->kind == K_FREED) {
			if (c->used) {
				mismatch("freed 0x%llx (truth line %lu, thread %d, "
					 "by %d in phase %d): in a line in use "
					 "(line %lu at 0x%llx)", b->user, b->line,
					 b->thread, b->by, b->phase, c->line,
					 c->addr);
				continue;
			}
			const char *why = NULL;
			if (!strcmp(c->where, "page-free"))
				n_page_free++;
			else if (!strcmp(c->where, "local-free"))
				n_local_free++;
			else if (!strcmp(c->where, "thread-free"))
				n_thread_free++;
			else if (is_span(c->where))
				n_span++;
			if (b->phase < 3 && !strcmp(c->where, "local-free"))
				why = "freed before the visits collected it";
			else if (b->phase < 3 && b->by == b->thread &&
				 !strcmp(c->where, "thread-free"))
				why = "its owner's free, collected by the visit";
			else if (b->phase == 3 && !strcmp(c->where, "page-free"))
				why = "freed after the visits, nothing collected it";
			else if (strcmp(c->where, "page-free") &&
				 strcmp(c->where, "local-free") &&
				 strcmp(c->where, "thread-free") &&
				 !is_span(c->where))
				why = "not a free block's place";
			if (why)
				mismatch("freed 0x%llx (truth line %lu, thread %d, "
					 "by %d in phase %d): on \"%s\" (line %lu): "
					 "%s", b->user, b->line, b->thread, b->by,
					 b->phase, c->where, c->line, why);
			continue;
		}
		if (!c->used || (strcmp(c->where, "page") &&
				 strcmp(c->where, "huge"))) {
			mismatch("%s 0x%llx (truth line %lu, thread %d): in a "
				 "%s line on \"%s\" (line %lu at 0x%llx)",
				 kind_name(b->kind), b->user, b->line, b->thread,
				 c->used ? "used" : "free", c->where, c->line,
				 c->addr);
			continue;
		}
		if (matched[c - chunks])
			mismatch("%s 0x%llx (truth line %lu): its line %lu holds "
				 "another recorded block too",
				 kind_name(b->kind), b->user, b->line, c->line);
		matched[c - chunks] = true;
		if (c->addr == b->user) {
			if (c->size != b->usable)
				mismatch("%s 0x%llx (truth line %lu, thread %d): "
					 "size %llu, mi_usable_size %llu",
					 kind_name(b->kind), b->user, b->line,
					 b->thread, c->size, b->usable);
		} else if (b->kind == K_LIBC || c->addr > b->user) {
			mismatch("%s 0x%llx (truth line %lu, thread %d): the "
				 "line in use holding it starts at 0x%llx",
				 kind_name(b->kind), b->user, b->line, b->thread,
				 c->addr);
		} else if (n_inside++, c->addr + c->size != b->user + b->usable) {
			mismatch("alloc 0x%llx (truth line %lu, thread %d), "
				 "aligned inside the block at 0x%llx: the block "
				 "ends at 0x%llx, the pointer's usable size at "
				 "0x%llx", b->user, b->line, b->thread, c->addr,
				 c->addr + c->size, b->user + b->usable);
		}
	}
}

/* "2.1.7a" as 2, 1, 7; false when not a release number.  */
static bool parse_release(const char *s, unsigned v[3])
{
	char *end;
	for (int i = 0; i < 3; i++) {
		if (*s < '0' || *s > '9')
			return false;
		v[i] = (unsigned)strtoul(s, &end, 10);
		s = end;
		if (i < 2 && *s++ != '.')
			return false;
	}
	return true;
}

static int release_cmp(const unsigned a[3], const unsigned b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* Does the row's releases ("A to B", "A and B", "A") include rel?  */
static bool row_includes(const char *row, const unsigned rel[3])
{
	unsigned a[3], b[3];
	const char *to = strstr(row, " to "), *and = strstr(row, " and ");
	if (to) {
		return parse_release(row, a) && parse_release(to + 4, b) &&
		       release_cmp(a, rel) <= 0 && release_cmp(rel, b) <= 0;
	}
	if (and) {
		return (parse_release(row, a) && !release_cmp(a, rel)) ||
		       (parse_release(and + 5, b) && !release_cmp(b, rel));
	}
	return parse_release(row, a) && !release_cmp(a, rel);
}

static void check_summary(const char *path, bool encoded, u64 used_lines)
{
	char *sum = slurp(path, NULL);
	char alloc[32], row[96];
	u64 findings = 0, used = 0;
	unsigned rel[3];
	const char *enc;
	/* The release: the tag the program was given; else mi_version():
	   major * 100 + minor * 10 + patch to 2.2.7, then major * 10000 +
	   minor * 100 + patch (2.0.2's says 201).  */
	if (release[0] == 'v' && parse_release(release + 1, rel))
		;
	else if (version >= 10000)
		rel[0] = (unsigned)(version / 10000),
		rel[1] = (unsigned)(version / 100 % 100),
		rel[2] = (unsigned)(version % 100);
	else
		rel[0] = (unsigned)(version / 100),
		rel[1] = (unsigned)(version / 10 % 10),
		rel[2] = (unsigned)(version % 10);
	if (!jvalid(sum)) {
		mismatch("%s: not one JSON document", path);
		free(sum);
		return;
	}
	if (!jstr(jget(sum, "allocator"), alloc, sizeof alloc) ||
	    strcmp(alloc, "mimalloc"))
		mismatch("summary: allocator is not mimalloc");
	if (!jstr(jget(sum, "version"), row, sizeof row))
		mismatch("summary: no version");
	else if (!row_includes(row, rel))
		mismatch("summary: the layout row \"%s\" does not include "
			 "%u.%u.%u (release %s, mi_version() %lu)", row, rel[0],
			 rel[1], rel[2], release[0] ? release : "unknown",
			 version);
	enc = jget(sum, "encoded_free_lists");
	if (!enc || strncmp(jws(enc), encoded ? "true" : "false",
			    encoded ? 4 : 5))
		mismatch("summary: encoded_free_lists is not %s (a %s build)",
			 encoded ? "true" : "false",
			 encoded ? "MI_SECURE=4" : "release");
	if (!jnum(jget(sum, "findings"), &findings) || findings)
		mismatch("summary: %llu findings on an undamaged heap",
			 findings);
	if (!jnum(jpath(sum, "used.count"), &used) || used != used_lines)
		mismatch("summary: %llu blocks in use, chunks %llu", used,
			 used_lines);
	free(sum);
}

int main(int argc, char **argv)
{
	bool encoded = false;
	int a = 1;
	if (a < argc && !strcmp(argv[a], "--encoded"))
		encoded = true, a++;
	if (argc - a != 3) {
		fprintf(stderr, "usage: mivercmp [--encoded] TRUTH CHUNKS "
				"SUMMARY\n");
		return 2;
	}
	read_truth(argv[a]);
	check_truth();
	read_chunks(argv[a + 1]);
	bool *matched = xrealloc(NULL, (nchunks ? nchunks : 1) * sizeof *matched);
	memset(matched, 0, (nchunks ? nchunks : 1) * sizeof *matched);
	check_chunks(matched);
	u64 nused = 0, nalloc = 0, nlibc = 0, nfreed = 0;
	for (size_t i = 0; i < nchunks; i++) {
		if (!chunks[i].used)
			continue;
		nused++;
		if (!matched[i])
			mismatch("chunks line %lu: 0x%llx (%llu bytes, \"%s\") "
				 "in use, no block of the truth",
				 chunks[i].line, chunks[i].addr, chunks[i].size,
				 chunks[i].where);
	}
	for (size_t i = 0; i < ntb; i++) {
		if (tb[i].kind == K_ALLOC)
			nalloc++;
		else if (tb[i].kind == K_LIBC)
			nlibc++;
		else
			nfreed++;
	}
	check_summary(argv[a + 2], encoded, nused);
	char what[320];
	snprintf(what, sizeof what,
		 "%llu in use (%llu the C library's, %llu aligned inside their "
		 "block), %llu freed (page-free %llu, local-free %llu, "
		 "thread-free %llu, in freed pages %llu), %llu lines in use",
		 nalloc + nlibc, nlibc, n_inside, nfreed, n_page_free,
		 n_local_free, n_thread_free, n_span, nused);
	free(matched);
	return cmp_finish(what);
}
