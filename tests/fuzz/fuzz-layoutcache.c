/* fuzz-layoutcache - libFuzzer harness for the reader of the struct
 * layout cache (libheapwalk/sym/layoutcache.c): the input is the file
 * DIR/layouts/BUILD-ID, for the build-id of the core's libc, and the
 * core a valid one of the host's glibc (the corpus's bins1; tests/fuzz/
 * run.sh leaves it as fuzz-layoutcache.core, or $HW_FUZZ_CORE names it)
 * read with libc's separate debug info (libc6-dbg), as a user's is.
 *
 * The file is the one input no core carries: it is written by heapwalk,
 * but sits in a directory a user shares between runs, builds and tools,
 * so whatever it holds must not crash, hang or leak, and what it claims
 * (offsets, sizes) is believed only once checked.  Its answers become
 * the walker's struct layouts (malloc_state, malloc_par, malloc_chunk,
 * the tcache): a wrong but well-formed offset sends the walk through
 * main_arena from the wrong place, which is what `summary`, `chunks`,
 * `bins` and `mp` then show.
 *
 * A cache line is believed only under a debug line naming the debug file
 * as it is now (path, size, time, inode), which differs from machine to
 * machine: in an input, a line that is exactly "debug @" stands for this
 * machine's debug line, so that seeds and kept findings reach the
 * answers anywhere.  With HW_FUZZ_WRITE_SEEDS=DIR the harness writes the
 * file heapwalk itself keeps for the core, that line so replaced, as
 * DIR/real, and exits (run.sh makes the variants).  Exit 77 when no
 * file is kept (no libc6-dbg here).
 *
 * The cache directory is the harness's own, made 0700 in $TMPDIR (the
 * file 0600): the library trusts only a directory and file of its user
 * that no one else may write.  It is removed at exit.
 */
#include <dirent.h>

#include "fuzz.h"

static char dir[PATH_MAX];        /* the cache directory */
static char layouts[PATH_MAX];    /* dir/layouts */
static char file[PATH_MAX];       /* dir/layouts/BUILD-ID */
static const char *core;
static char *debug_line;          /* "debug FILE SIZE MTIME INODE\n" */
static size_t debug_len;

/* Everything in layouts/, then it and dir (atexit).  */
static void remove_dir(void)
{
	DIR *d = opendir(layouts);
	if (d) {
		struct dirent *e;
		char path[PATH_MAX + 256];
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof path, "%s/%s", layouts,
					 e->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(layouts);
	rmdir(dir);
}

/* A session on the core with libc's debug info and the cache.  */
static hw_session *open_cached(void)
{
	struct hw_open_opts o = HW_OPEN_OPTS_INIT;
	fuzz_opts(&o, core);
	o.no_debuginfo = false;
	o.cache_dir = dir;
	return fuzz_open_opts(&o);
}

/* The one file a first run keeps, by its build-id name; its whole text
   (NUL-terminated) returned.  Exits 77 when there is none.  */
static char *first_file(size_t *len)
{
	hw_session *s = open_cached();
	if (!s)
		fuzz_die("cannot open the set-up core", core);
	fuzz_run_one(s, "summary", false);
	hw_session_close(s);
	DIR *d = opendir(layouts);
	struct dirent *e = NULL;
	while (d && (e = readdir(d)) && e->d_name[0] == '.')
		;
	if (!e) {
		fprintf(stderr, "fuzz harness: no struct layouts kept for %s "
			"(no separate debug info for its libc: libc6-dbg)\n",
			core);
		exit(77);
	}
	snprintf(file, sizeof file, "%s/%s", layouts, e->d_name);
	closedir(d);
	FILE *f = fopen(file, "rb");
	if (!f)
		fuzz_die("cannot read", file);
	char *text = malloc(1 << 16);
	if (!text)
		fuzz_die("out of memory", NULL);
	*len = fread(text, 1, (1 << 16) - 1, f);
	text[*len] = '\0';
	fclose(f);
	return text;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	core = fuzz_setup_path("HW_FUZZ_CORE", ".core");
	core = strdup(core);   /* (fuzz_setup_path's buffer is reused) */
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/heapwalk-fuzz-cache.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!core || !mkdtemp(dir)) /* (mkdtemp makes it 0700) */
		fuzz_die("cannot make a cache directory", dir);
	atexit(remove_dir);
	snprintf(layouts, sizeof layouts, "%s/layouts", dir);
	if (mkdir(layouts, 0700) != 0)
		fuzz_die("cannot make", layouts);

	size_t len;
	char *text = first_file(&len);
	char *dl = strstr(text, "\ndebug ");
	char *nl = dl ? strchr(dl + 1, '\n') : NULL;
	if (!nl)
		fuzz_die("no debug line in", file);
	debug_len = (size_t)(nl - dl);
	debug_line = malloc(debug_len + 1);
	if (!debug_line)
		fuzz_die("out of memory", NULL);
	memcpy(debug_line, dl + 1, debug_len); /* with its newline */
	debug_line[debug_len] = '\0';

	const char *seeds = getenv("HW_FUZZ_WRITE_SEEDS");
	if (seeds && *seeds) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/real", seeds);
		FILE *f = fopen(path, "we");
		if (!f || fwrite(text, 1, (size_t)(dl + 1 - text), f) !=
				  (size_t)(dl + 1 - text) ||
		    fputs("debug @", f) == EOF ||
		    fputs(nl, f) == EOF || fclose(f) != 0)
			fuzz_die("cannot write a seed", path);
		exit(0);
	}
	free(text);
	fprintf(stderr, "fuzz harness: the input is %s; \"debug @\" stands "
		"for %s", file, debug_line);
	return 0;
}

/* The input as the cache file, each line "debug @" this machine's.  */
static void write_file(const uint8_t *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
			    O_NOFOLLOW, 0600);
	if (fd < 0 || fchmod(fd, 0600) != 0)
		fuzz_die("cannot write", file);
	static const char at[] = "debug @\n";
	size_t i = 0;
	while (i < size) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - data) + 1 : size;
		const void *p = data + i;
		size_t n = end - i;
		if (n == sizeof at - 1 && !memcmp(p, at, n)) {
			p = debug_line;
			n = debug_len;
		}
		if (write(fd, p, n) != (ssize_t)n)
			fuzz_die("cannot write", file);
		i = end;
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cmds[] = { "summary", "chunks", "bins", "mp" };
	write_file(data, size);
	hw_session *s = open_cached();
	/* JSON when the length is odd: both renderers, reproducibly.  */
	if (s)
		for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
			fuzz_run_one(s, cmds[i], size & 1);
	hw_session_close(s);
	return 0;
}
