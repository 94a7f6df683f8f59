/* deathcmp - does summary's (or check's) "death" agree with what a
 * crashing corpus program recorded (corpora/ptmalloc/doublefree1.c,
 * overflow1.c, segv1.c: "# crash ..." comment lines in its truth file)?
 *
 *   deathcmp TRUTH REPORT.json [--skip NAME]... [--candidates]
 *            [--no-siginfo]
 *
 *   # crash signal N          death.signal is N (and signal_name its name)
 *   # crash message TEXT      death.abort_message is TEXT
 *   # crash addr 0xA          death.addr is A (--no-siginfo: null, as in
 *                             a qemu-user core, which has no NT_SIGINFO)
 *   # crash frames F...       the backtrace passes through F... in that
 *                             order ("free" also matches glibc's own names
 *                             of it: __libc_free, _int_free, which a free()
 *                             that tail-calls leaves), except the names
 *                             given with --skip (frames the mode cannot
 *                             name: libc's without its symbols)
 *   # crash freed_twice 0xP   chunks_role "freed_twice" and the only
 *                             chunk named is P (--candidates: one of them)
 *   # crash being_freed 0xP   chunks_role "being_freed", the same way
 * and the crashing thread is the program's thread 0 (the "thread 0 TID"
 * line).  Exit 0 on agreement, 1 with every disagreement listed, 2 on
 * usage or unreadable input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdio.h>

#include "strictjson.h"

static int bad;

static void mismatch(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "deathcmp: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	bad = 1;
}

static const char *str_of(const struct jv *v)
{
	return v && v->t == J_STR ? v->s : v && v->t == J_NULL ? "null"
	       : v && v->t == J_NUM ? v->s : "(absent)";
}

static bool frame_is(const char *fn, const char *want)
{
	if (strcmp(fn, want) == 0)
		return true;
	return strcmp(want, "free") == 0 &&
	       (!strcmp(fn, "__libc_free") || !strcmp(fn, "_int_free") ||
		!strcmp(fn, "cfree") || !strcmp(fn, "__GI___libc_free"));
}

int main(int argc, char **argv)
{
	const char *skip[8];
	int nskip = 0;
	bool candidates = false, no_siginfo = false;
	if (argc < 3)
		goto usage;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--skip") && i + 1 < argc && nskip < 8)
			skip[nskip++] = argv[++i];
		else if (!strcmp(argv[i], "--candidates"))
			candidates = true;
		else if (!strcmp(argv[i], "--no-siginfo"))
			no_siginfo = true;
		else
			goto usage;
	}
	FILE *f = fopen(argv[2], "rb");
	static char doc[1 << 22];
	size_t len = f ? fread(doc, 1, sizeof doc, f) : 0;
	if (!f || len == sizeof doc) {
		fprintf(stderr, "deathcmp: cannot read %s\n", argv[2]);
		return 2;
	}
	fclose(f);
	const char *err;
	size_t err_at;
	struct jv *root = jparse(doc, len, &err, &err_at);
	if (!root) {
		fprintf(stderr, "deathcmp: %s: byte %zu: %s\n", argv[2], err_at,
			err);
		return 1;
	}
	struct jv *d = jget(root, "death");
	if (!d || d->t != J_OBJ) {
		fprintf(stderr, "deathcmp: %s: no \"death\" object\n", argv[2]);
		return 1;
	}
	FILE *t = fopen(argv[1], "r");
	if (!t) {
		fprintf(stderr, "deathcmp: cannot read %s\n", argv[1]);
		return 2;
	}
	char line[1024];
	int seen = 0;
	while (fgets(line, sizeof line, t)) {
		line[strcspn(line, "\n")] = '\0';
		char tid[32];
		if (sscanf(line, "thread 0 %31s", tid) == 1) {
			if (strcmp(str_of(jget(d, "tid")), tid))
				mismatch("crashing tid %s, the program's thread "
					 "0 is %s", str_of(jget(d, "tid")), tid);
			continue;
		}
		if (strncmp(line, "# crash ", 8) != 0)
			continue;
		seen++;
		char *key = line + 8, *val = strchr(key, ' ');
		if (!val)
			continue;
		*val++ = '\0';
		if (!strcmp(key, "signal")) {
			if (strcmp(str_of(jget(d, "signal")), val))
				mismatch("signal %s, expected %s",
					 str_of(jget(d, "signal")), val);
			const char *name = !strcmp(val, "6") ? "SIGABRT"
					   : !strcmp(val, "11") ? "SIGSEGV" : NULL;
			if (name && strcmp(str_of(jget(d, "signal_name")), name))
				mismatch("signal_name %s, expected %s",
					 str_of(jget(d, "signal_name")), name);
		} else if (!strcmp(key, "message")) {
			if (strcmp(str_of(jget(d, "abort_message")), val))
				mismatch("abort_message \"%s\", expected \"%s\"",
					 str_of(jget(d, "abort_message")), val);
		} else if (!strcmp(key, "addr")) {
			const char *got = str_of(jget(d, "addr"));
			if (no_siginfo ? strcmp(got, "null")
				       : strtoull(got, NULL, 16) !=
						 strtoull(val, NULL, 16) ||
					 !strcmp(got, "null"))
				mismatch("addr %s, expected %s", got,
					 no_siginfo ? "null (no NT_SIGINFO)" : val);
		} else if (!strcmp(key, "frames")) {
			struct jv *bt = jget(d, "backtrace");
			size_t k = 0;
			for (char *w = strtok(val, " "); w; w = strtok(NULL, " ")) {
				bool skipped = false;
				for (int i = 0; i < nskip; i++)
					skipped |= !strcmp(skip[i], w);
				if (skipped)
					continue;
				while (bt && bt->t == J_ARR && k < bt->n &&
				       !frame_is(str_of(jget(bt->v[k], "function")), w))
					k++;
				if (!bt || bt->t != J_ARR || k >= bt->n) {
					mismatch("the backtrace does not pass "
						 "through %s%s (in the truth's "
						 "order)", w, "");
					break;
				}
				k++;
			}
		} else if (!strcmp(key, "freed_twice") ||
			   !strcmp(key, "being_freed")) {
			struct jv *ch = jget(d, "chunks");
			bool found = false;
			if (strcmp(str_of(jget(d, "chunks_role")), key))
				mismatch("chunks_role %s, expected %s",
					 str_of(jget(d, "chunks_role")), key);
			for (size_t i = 0; ch && ch->t == J_ARR && i < ch->n; i++)
				found |= strtoull(str_of(jget(ch->v[i], "addr")),
						  NULL, 16) ==
					 strtoull(val, NULL, 16);
			if (!found)
				mismatch("the chunk %s (%s) is not named", key,
					 val);
			else if (!candidates && ch->n != 1)
				mismatch("other chunks named besides the chunk "
					 "%s (%s)", key, val);
		}
	}
	fclose(t);
	if (!seen) {
		fprintf(stderr, "deathcmp: %s has no \"# crash\" lines\n",
			argv[1]);
		return 2;
	}
	return bad;
usage:
	fprintf(stderr, "usage: deathcmp TRUTH REPORT.json [--skip NAME]... "
		"[--candidates] [--no-siginfo]\n");
	return 2;
}
