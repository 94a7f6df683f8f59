/* triage.c - what a crash-triage service asks of a core, through
 * libheapwalk's data interface (heapwalk.h): the heap's totals, its
 * largest size classes, corruption, and what leaked.
 *
 *   cc -o triage triage.c $(pkg-config --cflags --libs heapwalk)
 *   ./triage CORE [SYSROOT]
 *   ./triage --record CORE [SYSROOT]
 *
 * With --record, the core's triage record as hw_triage() makes it: one
 * line of JSON, what `heapwalk --json triage CORE` prints (the schema is
 * heapwalk's doc/triage.schema.json), for a service that collects them.
 *
 * Prints one "key value..." line per fact, easy to parse or to read:
 *   allocator ptmalloc 2.36
 *   used BLOCKS BYTES
 *   free BLOCKS BYTES
 *   class MIN MAX USED_BLOCKS USED_BYTES   (the 5 largest by bytes used)
 *   arena N USED_BLOCKS USED_BYTES
 *   problem 0xADDR TEXT
 *   leaked BLOCKS BYTES (definite)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <heapwalk/heapwalk.h>

#define TOP 5

struct top_classes {
	struct hw_class_totals v[TOP];
	size_t n;
};

/* Keep the TOP classes with the most bytes in use.  */
static int take_class(void *arg, const struct hw_class_totals *c)
{
	struct top_classes *t = arg;
	size_t i = t->n < TOP ? t->n++ : TOP - 1;
	if (i == TOP - 1 && t->n == TOP && c->used_bytes <= t->v[i].used_bytes)
		return 0;
	t->v[i] = *c;
	while (i > 0 && t->v[i].used_bytes > t->v[i - 1].used_bytes) {
		struct hw_class_totals x = t->v[i];
		t->v[i] = t->v[i - 1];
		t->v[i - 1] = x;
		i--;
	}
	return 0;
}

static int print_arena(void *arg, const struct hw_arena_totals *a)
{
	(void)arg;
	printf("arena %" PRId32 " %" PRIu64 " %" PRIu64 "\n", a->arena,
	       a->used_blocks, a->used_bytes);
	return 0;
}

static int print_problem(void *arg, const struct hw_problem *p)
{
	unsigned *n = arg;
	if (!p->note && (*n)++ < 10)
		printf("problem 0x%" PRIx64 " %s\n", p->addr, p->text);
	return 0;
}

struct leak_sum {
	uint64_t blocks, bytes;
};

static int sum_leak(void *arg, const struct hw_leak *l)
{
	struct leak_sum *s = arg;
	if (!strcmp(l->kind, "definite")) {
		s->blocks++;
		s->bytes += l->size;
	}
	return 0;
}

static bool to_stdout(void *cookie, const char *data, size_t len)
{
	(void)cookie;
	return fwrite(data, 1, len, stdout) == len;
}

/* The record alone: hw_triage() opens, writes and closes.  A core that
   cannot be read gets an error record; its status is returned.  */
static int record(const struct hw_open_opts *o)
{
	struct hw_output out = HW_OUTPUT_INIT;
	out.write = to_stdout;
	out.form = HW_FORM_JSON;
	enum hw_status st = hw_triage(o, 0, NULL, &out);
	return st == HW_CORRUPT ? HW_OK : st;
}

int main(int argc, char **argv)
{
	bool want_record = argc > 1 && !strcmp(argv[1], "--record");
	if (want_record) {
		argc--;
		argv++;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: triage [--record] CORE [SYSROOT]\n");
		return 2;
	}
	struct hw_open_opts o = HW_OPEN_OPTS_INIT;
	o.core = argv[1];
	o.sysroot = argc > 2 ? argv[2] : NULL;
	if (want_record)
		return record(&o);
	hw_session *s;
	enum hw_status st = hw_session_open(&o, &s);
	if (st != HW_OK) {
		fprintf(stderr, "triage: %s\n", hw_session_errmsg(s));
		hw_session_close(s);
		return st;
	}
	struct hw_heap_totals t = { .sz = sizeof t };
	struct top_classes top = { .n = 0 };
	unsigned problems = 0;
	struct leak_sum leaked = { 0, 0 };
	if ((st = hw_heap_totals(s, &t)) != HW_OK ||
	    (st = hw_size_classes(s, take_class, &top)) != HW_OK ||
	    (st = hw_arena_totals(s, print_arena, NULL)) != HW_OK)
		goto out;
	printf("allocator %s %s\n", t.allocator, t.version);
	printf("used %" PRIu64 " %" PRIu64 "\n", t.used_blocks, t.used_bytes);
	printf("free %" PRIu64 " %" PRIu64 "\n", t.free_blocks, t.free_bytes);
	for (size_t i = 0; i < top.n; i++)
		printf("class %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		       top.v[i].min, top.v[i].max, top.v[i].used_blocks,
		       top.v[i].used_bytes);
	st = hw_problems(s, print_problem, &problems);
	if (st != HW_OK && st != HW_CORRUPT)
		goto out;
	if ((st = hw_leaks(s, sum_leak, &leaked)) != HW_OK)
		goto out;
	printf("leaked %" PRIu64 " %" PRIu64 " (definite)\n", leaked.blocks,
	       leaked.bytes);
out:
	if (st != HW_OK)
		fprintf(stderr, "triage: %s\n", hw_session_errmsg(s));
	hw_session_close(s);
	return st;
}
