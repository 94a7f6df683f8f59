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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../libheapwalk/heapwalk.h"
/* The tests' own UTF-8 check (jutf8), independent of the library's.  */
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

/* The core lives in a memfd: a regular file (hw_open_regular accepts
   it), named /proc/self/fd/N, that never touches the disk.  */
static int fuzz_fd = -1;
static char fuzz_path[64];

static void fuzz_memfd(void)
{
	fuzz_fd = memfd_create("heapwalk-fuzz-core", MFD_CLOEXEC);
	if (fuzz_fd < 0)
		fuzz_die("memfd_create failed", strerror(errno));
	snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
}

static void fuzz_pwrite(const void *buf, size_t len, uint64_t off)
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
   libFuzzer saves the input.  */
static void fuzz_check_utf8(const struct fuzz_sink *s, const char *cmd)
{
	const unsigned char *p = (const unsigned char *)s->buf;
	for (size_t i = 0; i < s->len;) {
		size_t n = jutf8(p + i, p + s->len);
		if (!n) {
			fprintf(stderr, "fuzz harness: %s --json wrote invalid "
				"UTF-8 at output byte %zu\n", cmd, i);
			abort();
		}
		i += n;
	}
}

/* Open the memfd's core and run each command on the one session (as
   the gdb plugin does), JSON or text.  Open failures are fine: a
   broken core may well be refused.  Only crashes, sanitizer reports,
   hangs, leaks and invalid UTF-8 are findings.  */
static void fuzz_run(const char *const *cmds, size_t ncmds, bool json)
{
	struct hw_open_opts o = HW_OPEN_OPTS_INIT;
	o.core = fuzz_path;
	/* HW_FUZZ_SYSROOT: where the seeds' files are (the aarch64 kernel
	   cores' libc); a core naming host paths still finds them, as
	   SYSROOT + path falls back to the path itself.  */
	const char *sysroot = getenv("HW_FUZZ_SYSROOT");
	if (sysroot && *sysroot)
		o.sysroot = sysroot;
	/* Debug info comes from the host's files, not from the input, and
	   costs ten times the walk: the heuristics are what is fuzzed.  */
	o.no_debuginfo = true;
	o.threads = 1; /* reproducible: one input, one path */
	hw_session *s = NULL;
	enum hw_status st = hw_session_open(&o, &s);
	if (st == HW_OK) {
		for (size_t i = 0; i < ncmds; i++) {
			struct fuzz_sink sink = { 0 };
			struct hw_output out = { fuzz_write, &sink, json };
			char *argv[] = { (char *)cmds[i], NULL };
			hw_session_run(s, 1, argv, &out);
			if (json)
				fuzz_check_utf8(&sink, cmds[i]);
			free(sink.buf);
		}
	}
	hw_session_close(s);
}

#endif /* HW_FUZZ_H */
