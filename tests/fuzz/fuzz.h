/* fuzz.h - what the libFuzzer harnesses (tests/fuzz/fuzz-*.c) share: a
 * core held in a memfd that the library opens by path, and running
 * commands through the public API into a sink that checks the output.
 *
 * Header only, included by one harness per binary.  The harness's own
 * state is static here on purpose: libFuzzer calls one function per
 * input, and the memfd must outlive the calls.  The library under test
 * gets none of it: every input opens a fresh session.
 */
#ifndef HW_FUZZ_H
#define HW_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../libheapwalk/heapwalk.h"
/* The tests' own strict JSON reader, independent of the library's.  */
#include "../tools/strictjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Harness set-up errors are not findings: say so and stop the run.  */
static void fuzz_die(const char *what, const char *arg)
{
	fprintf(stderr, "fuzz harness: %s%s%s\n", what, arg ? ": " : "",
		arg ? arg : "");
	exit(2);
}

/* A set-up file: $ENV, else the binary's own path + suffix (tests/fuzz/
   run.sh leaves build/fuzz/fuzz-ptmalloc.core beside fuzz-ptmalloc).
   The buffer is the function's own: a second call overwrites it.  */
static inline const char *fuzz_setup_path(const char *env,
					  const char *suffix)
{
	static char buf[PATH_MAX + 32];
	const char *e = getenv(env);
	if (e && *e)
		return e;
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
	if (n <= 0)
		fuzz_die("cannot find the harness's own path", NULL);
	snprintf(buf + n, sizeof buf - (size_t)n, "%s", suffix);
	return buf;
}

/* The core lives in a memfd: a regular file (hw_open_regular accepts
   it), named /proc/self/fd/N, that never touches the disk.  */
static int fuzz_fd = -1;
static char fuzz_path[64];

static inline void fuzz_memfd(void)
{
	fuzz_fd = memfd_create("heapwalk-fuzz-core", MFD_CLOEXEC);
	if (fuzz_fd < 0)
		fuzz_die("memfd_create failed", strerror(errno));
	snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
}

static inline void fuzz_pwrite(const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = pwrite(fuzz_fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fuzz_die("writing the memfd failed", strerror(errno));
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
}

/* The output sink.  Reports are thrown away, but JSON must be valid
   UTF-8 whatever the core holds: checked once complete, since a
   character may be split between two writes.  */
struct fuzz_sink {
	char *buf;
	size_t len, cap;
};

static bool fuzz_write(void *cookie, const char *data, size_t len)
{
	struct fuzz_sink *s = cookie;
	if (len > s->cap - s->len) {
		size_t cap = s->cap ? s->cap : 1 << 16;
		while (len > cap - s->len)
			cap *= 2;
		char *nb = realloc(s->buf, cap);
		if (!nb)
			return false; /* as a closed pipe: the command stops */
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, len);
	s->len += len;
	return true;
}

/* A finding of the harness's own: stop like a sanitizer would, so that
   libFuzzer saves the input.  The JSON a command writes must be valid
   by the tests' strict parser (tests/tools/strictjson.h: RFC 8259 and
   UTF-8): one document, or JSON Lines (one per line), whatever the core
   holds.  */
static void fuzz_check_json(const struct fuzz_sink *s, const char *cmd)
{
	if (!s->buf)           /* (nothing written) */
		return;
	const char *p = s->buf, *end = s->buf + s->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		if (stop > p) {
			const char *err = NULL;
			size_t at = 0;
			struct jv *v = jparse_any(p, (size_t)(stop - p), &err,
						  &at);
			if (!v) {
				fprintf(stderr, "fuzz harness: %s --json wrote "
					"invalid JSON at output byte %zu: %s\n",
					cmd, (size_t)(p - s->buf) + at,
					err ? err : "?");
				abort();
			}
			jfree(v);
		}
		p = nl ? nl + 1 : end;
	}
}

/* Run one command line on an open session into sink; words are split at
   spaces ("prof --format=heap_v2"), at most 15.  */
static inline void fuzz_run_into(hw_session *s, const char *cmd, bool json,
				 struct fuzz_sink *sink)
{
	char line[256];
	char *argv[16];
	int argc = 0;
	snprintf(line, sizeof line, "%s", cmd);
	for (char *w = strtok(line, " "); w && argc < 15; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	struct hw_output out = HW_OUTPUT_INIT;
	out.write = fuzz_write;
	out.cookie = sink;
	out.form = json ? HW_FORM_JSON : HW_FORM_TEXT;
	hw_session_run(s, argc, argv, &out);
}

/* The same into a sink that is checked, then dropped.  */
static void fuzz_run_one(hw_session *s, const char *cmd, bool json)
{
	struct fuzz_sink sink = { 0 };
	fuzz_run_into(s, cmd, json, &sink);
	if (json)
		fuzz_check_json(&sink, cmd);
	free(sink.buf);
}

/* The options every harness opens the core at PATH with (o from
   HW_OPEN_OPTS_INIT); a harness about debug info (fuzz-layoutcache)
   changes what it is about and keeps the rest.  */
static inline void fuzz_opts(struct hw_open_opts *o, const char *path)
{
	o->core = path;
	/* HW_FUZZ_SYSROOT: where the seeds' files are (the aarch64 kernel
	   cores' libc); a core naming host paths still finds them, as
	   SYSROOT + path falls back to the path itself.  */
	const char *sysroot = getenv("HW_FUZZ_SYSROOT");
	if (sysroot && *sysroot)
		o->sysroot = sysroot;
	/* Debug info comes from the host's files, not from the input, and
	   costs ten times the walk: the heuristics are what is fuzzed.  */
	o->no_debuginfo = true;
	o->threads = 1; /* reproducible: one input, one path */
	/* A compressed input keeps its data in a memfd, which libFuzzer's
	   RSS limit does not see: bounded here instead, and its zeros to a
	   quarter of the 2 GiB a small file may unpack to, so that a zero
	   bomb costs a fuzz run no more than a second.  */
	o->cache_max = 256u << 20;
	o->unpack_max = 512u << 20;
	/* No command promised to need the lists themselves: ptmalloc then
	   proves them by sums where it can (linksums.c), and walks them
	   only for the commands that show them (bins, check) or where the
	   sums disagree; both paths are fuzzed.  */
	o->needs = HW_NEED_CHUNKS | HW_NEED_AROUND | HW_NEED_PROFILE;
}

/* A session opened with o; NULL when the library refuses it (a broken
   core may well be refused).  */
static inline hw_session *fuzz_open_opts(const struct hw_open_opts *o)
{
	hw_session *s = NULL;
	if (hw_session_open(o, &s) != HW_OK) {
		hw_session_close(s);
		return NULL;
	}
	return s;
}

/* A session on the core at PATH, opened as every harness does.  */
static hw_session *fuzz_open(const char *path)
{
	struct hw_open_opts o = HW_OPEN_OPTS_INIT;
	fuzz_opts(&o, path);
	return fuzz_open_opts(&o);
}

/* Open the memfd's core and run each command on the one session (as
   the gdb plugin does), JSON or text.  Only crashes, sanitizer reports,
   hangs, leaks and invalid UTF-8 are findings.  Inline: a harness
   that opens its session otherwise (fuzz-heapv2) has no use for it.  */
static inline void fuzz_run(const char *const *cmds, size_t ncmds, bool json)
{
	hw_session *s = fuzz_open(fuzz_path);
	if (s)
		for (size_t i = 0; i < ncmds; i++)
			fuzz_run_one(s, cmds[i], json);
	hw_session_close(s);
}

#endif /* HW_FUZZ_H */
