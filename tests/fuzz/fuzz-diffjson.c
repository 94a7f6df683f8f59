/* fuzz-diffjson - libFuzzer harness for the reader of saved JSON that
 * `diff BASE...` takes as its base (commands/diff/json.c): `sizes --json`,
 * `sizes --by=type --json` and `leaks --json` files, which a fleet keeps
 * instead of cores and which reach heapwalk from anywhere.
 *
 * The input is up to three such files, cut at NUL bytes (no JSON file
 * holds one); each goes into a memfd of its own, opened by its
 * /proc/self/fd path like any user-given file.  The newer snapshot is a
 * valid core (the corpus's cxxgrow1: C++ classes, leaks; tests/fuzz/
 * run.sh leaves it as fuzz-diffjson.core, or $HW_FUZZ_CORE names it),
 * read once: one session runs every input's `diff` and `diff --leaks`,
 * the text report, and the JSON one too when the input's length is odd.
 *
 * The seeds are what heapwalk saves from cxxgrow1's base core: with
 * HW_FUZZ_WRITE_SEEDS=DIR and HW_FUZZ_BASE=CORE, the harness writes
 * DIR/sizes, DIR/types, DIR/leaks and DIR/all (the three cut by NULs)
 * and exits, before any fuzzing.
 */
#include <limits.h>

#include "fuzz.h"

#define NFILES 3

static hw_session *session;
static int file_fd[NFILES];
static char file_path[NFILES][64];

/* Run cmd on s, JSON, into the file path (a seed).  */
static void save_output(hw_session *s, const char *cmd, const char *path,
			FILE *all, bool first)
{
	struct fuzz_sink sink = { 0 };
	fuzz_run_into(s, cmd, true, &sink);
	FILE *f = fopen(path, "we");
	if (!f || fwrite(sink.buf, 1, sink.len, f) != sink.len || fclose(f))
		fuzz_die("cannot write a seed", path);
	if (!first)
		fputc('\0', all);
	fwrite(sink.buf, 1, sink.len, all);
	free(sink.buf);
}

/* HW_FUZZ_WRITE_SEEDS: the seeds from the base core, then exit.  */
static void write_seeds(const char *dir)
{
	const char *base = getenv("HW_FUZZ_BASE");
	if (!base || !*base)
		fuzz_die("HW_FUZZ_WRITE_SEEDS needs HW_FUZZ_BASE", NULL);
	hw_session *s = fuzz_open(base);
	if (!s)
		fuzz_die("cannot open the base core", base);
	static const char *const cmds[NFILES][2] = {
		{ "sizes", "sizes" }, { "sizes --by=type", "types" },
		{ "leaks", "leaks" },
	};
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/all", dir);
	FILE *all = fopen(path, "we");
	if (!all)
		fuzz_die("cannot write a seed", path);
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, cmds[i][1]);
		save_output(s, cmds[i][0], path, all, i == 0);
	}
	if (fclose(all))
		fuzz_die("cannot write a seed", "all");
	hw_session_close(s);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *seeds = getenv("HW_FUZZ_WRITE_SEEDS");
	if (seeds && *seeds)
		write_seeds(seeds);
	const char *path = fuzz_setup_path("HW_FUZZ_CORE", ".core");
	session = fuzz_open(path);
	if (!session)
		fuzz_die("cannot open the set-up core", path);
	for (int i = 0; i < NFILES; i++) {
		file_fd[i] = memfd_create("heapwalk-fuzz-base", MFD_CLOEXEC);
		if (file_fd[i] < 0)
			fuzz_die("memfd_create failed", strerror(errno));
		snprintf(file_path[i], sizeof file_path[i], "/proc/self/fd/%d",
			 file_fd[i]);
	}
	/* The new side's sizes, types and leaks are read once, here, so
	   that the first input does not look as though it leaked them.  */
	fuzz_run_one(session, "sizes", false);
	fuzz_run_one(session, "leaks", false);
	return 0;
}

static void fill(int fd, const uint8_t *data, size_t len)
{
	if (ftruncate(fd, 0) != 0)
		fuzz_die("ftruncate failed", strerror(errno));
	size_t off = 0;
	while (off < len) {
		ssize_t n = pwrite(fd, data + off, len - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fuzz_die("writing a memfd failed", strerror(errno));
		off += (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The files: the input cut at its first NFILES - 1 NULs.  */
	size_t nfiles = 0, at = 0;
	while (nfiles < NFILES) {
		const uint8_t *nul = nfiles + 1 < NFILES
				     ? memchr(data + at, 0, size - at) : NULL;
		size_t end = nul ? (size_t)(nul - data) : size;
		fill(file_fd[nfiles++], data + at, end - at);
		if (!nul)
			break;
		at = end + 1;
	}
	char cmd[256];
	int n = snprintf(cmd, sizeof cmd, "diff");
	for (size_t i = 0; i < nfiles; i++)
		n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s",
			      file_path[i]);
	fuzz_run_one(session, cmd, false);
	if (size & 1)
		fuzz_run_one(session, cmd, true);
	snprintf(cmd + n, sizeof cmd - (size_t)n, " --leaks");
	fuzz_run_one(session, cmd, size & 1);
	return 0;
}
