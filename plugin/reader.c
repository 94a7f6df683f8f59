/* reader.c - heapwalk inside gdb, through gdb's JIT reader interface.
 *
 * gdb has no C plugin API for commands, but it loads a "JIT debug info
 * reader" (jit-reader-load) and calls its `unwind` callback with a way to
 * read the inferior's memory (target_read), whatever gdb debugs: a core,
 * a live process, gdbserver, qemu's gdbstub.  The `heap` commands are
 * defined in a gdb script (heapwalk.gdb, made by gen-script.c).  For each
 * command the script
 *   1. writes the command's words (`cmd`), what it knows of the target
 *      (`ctx`) and gdb's own listings (`captures`: sections, mappings,
 *      auxv, threads, libraries) into this plugin's private directory, which it
 *      names /proc/self/fd/873/ (the directory is open on fd 873 of gdb
 *      itself, so no other process or user can reach it);
 *   2. writes the request, `req` ("run END\n"), last, in one command;
 *   3. makes gdb unwind frame 0 afresh (a register-cache flush inside
 *      `thread apply -s`, which keeps the user's frame and thread), so gdb
 *      calls unwind() below, which serves the request: it opens a
 *      session over gdb's memory, runs the command and writes the report
 *      as `out.gdb`, a file of echo commands;
 *   4. sources out.gdb, so the report goes through gdb's own output.
 * unwind() never unwinds anything: it always returns GDB_FAIL, so gdb's
 * own unwinders do all the work and backtraces are unchanged.  Without a
 * request waiting it costs one fstatat().
 *
 * Ctrl-C in gdb during a long read makes target_read throw a C++
 * exception; guard.cc catches it (see guard.h), the walk then ends fast
 * on failing reads, and the answer says "interrupted".  The plugin is
 * also built with -fexceptions, so that anything else gdb throws through
 * our frames still runs the request's cleanup handler.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gdb/jit-reader.h>

#include "coremap.h"
#include "ctrlc.h"
#include "echo.h"
#include "gdbtext.h"
#include "guard.h"
#include "probe.h"
#include "reask.h"
#include "heapwalk.h"

GDB_DECLARE_GPL_COMPATIBLE_READER

/* The fd the script reaches the directory by (/proc/self/fd/873/).  */
#define CHANNEL_FD 873
#define MAX_WORDS 64
#define MAX_DEBUG_DIRS 16
/* $_heapwalk_status of a command Ctrl-C stopped (as a shell's).  */
#define STATUS_INTERRUPTED 130
/* Commands slower than this say how long they took.  */
#define SAY_TIME_AFTER 1.0

/* Every file the script and the plugin make in the directory.  */
static const char *const channel_files[] = {
	"req", "cmd", "ctx", "captures", "out.gdb", "out.tmp",
};

struct plugin {
	struct gdb_reader_funcs funcs;
	int dir;                   /* CHANNEL_FD, or -1 */
	char path[PATH_MAX];       /* the directory, for its removal */
	struct probe_memo memo;    /* the last memory map probed */
};

/* The reader gdb loaded, for the destructor: gdb never calls destroy()
   when it exits, but the shared object's destructor does run.  */
static struct plugin *loaded;

/* ---- the private directory ---------------------------------------------- */

static void empty_dir(int dir)
{
	for (size_t i = 0; i < sizeof channel_files / sizeof *channel_files; i++)
		unlinkat(dir, channel_files[i], 0);
}

static void remove_channel(struct plugin *p)
{
	if (p->dir < 0)
		return;
	empty_dir(p->dir);
	close(p->dir);
	p->dir = -1;
	rmdir(p->path);
}

__attribute__((destructor)) static void unload(void)
{
	if (loaded)
		remove_channel(loaded);
}

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' ? t : "/tmp";
}

/* Directories a gdb that was killed left behind: ours (same uid), named
   after a pid that no longer runs.  */
static void remove_stale(const char *tmp)
{
	DIR *d = opendir(tmp);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		int pid;
		char tail[8];
		struct stat st;
		if (sscanf(de->d_name, "heapwalk-%d-%6s", &pid, tail) != 2 ||
		    pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode) || st.st_uid != getuid())
			continue;
		int fd = openat(dirfd(d), de->d_name,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		empty_dir(fd);
		close(fd);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

static bool make_channel(struct plugin *p)
{
	const char *tmp = tmp_dir();
	remove_stale(tmp);
	if (fcntl(CHANNEL_FD, F_GETFD) != -1 || errno != EBADF) {
		fprintf(stderr, "heapwalk: fd %d is taken in this gdb; the "
			"plugin cannot open its channel\n", CHANNEL_FD);
		return false;
	}
	int n = snprintf(p->path, sizeof p->path, "%s/heapwalk-%d-XXXXXX",
			 tmp, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof p->path || !mkdtemp(p->path)) {
		fprintf(stderr, "heapwalk: cannot make a private directory "
			"in %s: %s\n", tmp, strerror(errno));
		return false;
	}
	int fd = open(p->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || dup3(fd, CHANNEL_FD, O_CLOEXEC) != CHANNEL_FD) {
		fprintf(stderr, "heapwalk: cannot open %s as fd %d: %s\n",
			p->path, CHANNEL_FD, strerror(errno));
		if (fd >= 0)
			close(fd);
		rmdir(p->path);
		return false;
	}
	close(fd);
	p->dir = CHANNEL_FD;
	return true;
}

/* ---- one request ----------------------------------------------------- */

/* What a request holds while it runs; released by request_end whether it
   returns or is unwound by gdb's Ctrl-C.  */
struct request {
	struct plugin *p;
	struct guarded_reader reader;  /* gdb's target_read, Ctrl-C caught */
	hw_session *session;
	struct gdb_view view;
	struct core_map cmap;  /* a core's segments, read in place */
	FILE *out;             /* out.tmp, the echo commands */
	FILE *file;            /* -o FILE */
	char *cmd;
	bool one_thread;       /* a walk in threads needed gdb: not again */
	bool reasked;          /* answered with gdb lines that run the
				  command again (reask.h) */
	unsigned threads;      /* hw_open_opts.threads of the last run */
};

/* Everything but the answer: before a request runs again.  */
static void request_reset(struct request *rq)
{
	(void)ctrlc_unwatch();
	if (rq->session)
		hw_session_close(rq->session);
	rq->session = NULL;
	core_map_close(&rq->cmap);
	gdb_view_free(&rq->view);
	if (rq->file)
		fclose(rq->file);
	rq->file = NULL;
	free(rq->cmd);
	rq->cmd = NULL;
}

static void request_end(struct request *rq)
{
	request_reset(rq);
	if (rq->out)
		fclose(rq->out);
	rq->out = NULL;
}

/* Drop what was answered so far.  */
static void answer_reset(struct request *rq, struct echo_file *ans)
{
	fflush(rq->out);
	if (ftruncate(fileno(rq->out), 0) == 0)
		rewind(rq->out);
	*ans = (struct echo_file){ .f = rq->out };
}

/* gdb's target_read for the library: how many bytes from addr on could
   be read.  gdb answers all or nothing, so a failed read is narrowed down
   to the readable pages before the first hole.  */
/* How much of [addr, addr + len) lies before the first core hole at or
   after addr (gdb_view_holes): 0 when addr is in one.  */
static size_t before_hole(const struct gdb_view *v, uint64_t addr, size_t len)
{
	size_t lo = 0, hi = v->ncore_holes;
	while (lo < hi) {     /* the first hole ending after addr */
		size_t mid = lo + (hi - lo) / 2;
		if (v->core_holes[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == v->ncore_holes)
		return len;
	const struct core_segment *h = &v->core_holes[lo];
	if (h->lo <= addr)
		return 0;
	return h->lo - addr < len ? (size_t)(h->lo - addr) : len;
}

static size_t gdb_read(void *cookie, uint64_t addr, void *buf, size_t len)
{
	struct request *rq = cookie;
	struct guarded_reader *g = &rq->reader;
	if (!pthread_equal(pthread_self(), g->owner)) {
		__atomic_fetch_add(&g->refused, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (len > (1u << 30))
		len = 1u << 30;
	/* What the core does not hold is not read, whatever gdb would
	   make of it.  */
	len = before_hole(&rq->view, addr, len);
	if (!len)
		return 0;
	if (guarded_read(g, addr, buf, (int)len))
		return len;
	const uint64_t page = 4096;
	size_t lo = 0, hi = len;   /* lo bytes read; reading hi bytes fails */
	while (hi - lo > 1) {
		/* Holes are whole pages: past a page boundary, a page that
		   fails is where the readable part ends.  */
		if ((addr + lo) % page == 0 && hi - lo <= page)
			break;
		size_t mid = lo + (hi - lo) / 2;
		uint64_t b = (addr + mid) & ~(page - 1);
		if (b > addr + lo && b < addr + hi)
			mid = (size_t)(b - addr);
		if (guarded_read(g, addr + lo, (char *)buf + lo,
				 (int)(mid - lo)))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* HEAPWALK_GDB_DEBUG=FILE: one more line of what the plugin did.  */
static void debug_note(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void debug_note(const char *fmt, ...)
{
	const char *path = getenv("HEAPWALK_GDB_DEBUG");
	FILE *f = path && path[0] == '/' ? fopen(path, "a") : NULL;
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* HEAPWALK_GDB_DEBUG=FILE: what the plugin made of gdb's view, for bug
   reports (the plugin has no other way to show its inputs).  */
static void dump_view(const struct gdb_view *v, const struct core_map *cm)
{
	const char *path = getenv("HEAPWALK_GDB_DEBUG");
	FILE *f = path && path[0] == '/' ? fopen(path, "a") : NULL;
	if (!f)
		return;
	const struct hw_memory *m = &v->mem;
	fprintf(f, "machine %s exe %s core %s pid %d sysroot %s\n",
		m->machine ? m->machine : "?", m->exe ? m->exe : "-",
		m->core ? m->core : "-", m->pid,
		v->sysroot ? v->sysroot : "-");
	for (size_t i = 0; i < m->nregions; i++)
		fprintf(f, "region %#" PRIx64 "-%#" PRIx64 " prot %u %s %#"
			PRIx64 "\n", m->regions[i].start, m->regions[i].end,
			m->regions[i].prot, m->regions[i].path ?
			m->regions[i].path : "-", m->regions[i].offset);
	for (size_t i = 0; i < m->nthreads; i++)
		fprintf(f, "thread tid %d sp %#" PRIx64 " pc %#" PRIx64
			" tp %#" PRIx64 "%s\n", m->threads[i].tid,
			m->threads[i].sp, m->threads[i].pc, m->threads[i].tp,
			m->threads[i].has_tp ? "" : " (none)");
	for (size_t i = 0; i + 16 <= m->auxv_len; i += 16) {
		uint64_t w[2];
		memcpy(w, m->auxv + i, 16);
		fprintf(f, "auxv %" PRIu64 " %#" PRIx64 "\n", w[0], w[1]);
	}
	if (m->core) {
		fprintf(f, "death signal %d thread %zu siginfo", m->death_signo,
			m->death_thread);
		for (size_t i = 0; m->siginfo && i < m->siginfo_len; i++)
			fprintf(f, " %02x", m->siginfo[i]);
		fprintf(f, "%s\n", m->siginfo ? "" : " none");
		size_t mapped = 0;   /* (the holes are spans too) */
		for (size_t i = 0; i < cm->nspans; i++)
			mapped += cm->spans[i].data != NULL;
		fprintf(f, "core mapped: %zu of %zu segments in place, %zu "
			"checked against gdb\n", mapped, v->ncore_segs,
			cm->checked);
	}
	fclose(f);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The command's words; NUL bytes (from `dump binary value` of a string)
   and newlines end it.  */
static char *read_cmd(int dir)
{
	int fd = openat(dir, "cmd", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = malloc(4096);
	ssize_t n = buf ? read(fd, buf, 4095) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Options the plugin takes itself (the rest are the command's).  */
struct plugin_opts {
	bool json, no_debuginfo, no_cache;
	bool cmd_takes_o;      /* the command has -o FILE of its own (map,
				  prof): its -o is passed on, so that it
				  writes what the tool's would */
	const char *allocator, *out_file;
	const char *debug_dirs[MAX_DEBUG_DIRS];
	size_t n_debug_dirs;
};

/* Does command `name` take -o FILE itself?  */
static bool takes_output(const char *name)
{
	for (size_t i = 0; hw_command_name(i); i++) {
		if (strcmp(hw_command_name(i), name) != 0)
			continue;
		const char *opt;
		for (size_t k = 0; (opt = hw_command_option(i, k, NULL)); k++)
			if (!strncmp(opt, "-o ", 3))
				return true;
	}
	return false;
}

static bool take_option(struct plugin_opts *o, char **w, int n, int *i)
{
	const char *a = w[*i];
	const char *val = *i + 1 < n ? w[*i + 1] : NULL;
	if (!strcmp(a, "--json")) {
		o->json = true;
	} else if (!strcmp(a, "--no-debuginfo")) {
		o->no_debuginfo = true;
	} else if (!strcmp(a, "--no-cache")) {
		o->no_cache = true;
	} else if (!strncmp(a, "--allocator=", 12)) {
		o->allocator = a + 12;
	} else if ((!strcmp(a, "--allocator") ||
		    (!strcmp(a, "-o") && !o->cmd_takes_o) ||
		    !strcmp(a, "--debug-dir")) && val) {
		if (a[1] == 'o')
			o->out_file = val;
		else if (a[2] == 'a')
			o->allocator = val;
		else if (o->n_debug_dirs < MAX_DEBUG_DIRS)
			o->debug_dirs[o->n_debug_dirs++] = val;
		(*i)++;
	} else {
		return false;
	}
	return true;
}

/* gdb's "debug-file-directory" (colon-separated) after the user's own:
   only directories that exist (the library refuses a missing one).  */
static void add_gdb_debug_dirs(struct plugin_opts *o, char *list)
{
	for (char *d = strtok(list, ":"); d; d = strtok(NULL, ":")) {
		struct stat st;
		if (o->n_debug_dirs < MAX_DEBUG_DIRS && d[0] == '/' &&
		    stat(d, &st) == 0 && S_ISDIR(st.st_mode))
			o->debug_dirs[o->n_debug_dirs++] = d;
	}
}

/* gdb's sysroot as a directory of this machine, or NULL: "" and
   "target:" mean the target's own files, which (gdbserver on this
   machine, a core of it) are this machine's.  */
static const char *host_sysroot(const char *s)
{
	if (!s)
		return NULL;
	if (!strncmp(s, "target:", 7))
		s += 7;
	return s[0] && strcmp(s, "/") ? s : NULL;
}

/* Open out.tmp for the answer, fresh (never through a link).  */
static FILE *open_answer(int dir)
{
	unlinkat(dir, "out.tmp", 0);
	int fd = openat(dir, "out.tmp", O_WRONLY | O_CREAT | O_EXCL |
			O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* One line of the plugin's own (an error, the time) into the answer.  */
static void say(struct echo_file *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct echo_file *e, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0)
		echo_write(e, line, (size_t)n < sizeof line ? (size_t)n
							     : sizeof line - 1);
}

static bool read_all(void *cookie, uint64_t addr, void *buf, size_t len)
{
	return guarded_read(cookie, addr, buf, (int)len);
}

/* A test's hook (tests/t0615): with HEAPWALK_GDB_TEST_STALL set in
   gdb's environment, the next request reads a byte at the selected
   thread's stack pointer over and over, for at most 5 minutes, until gdb
   throws its Ctrl-C: the test then interrupts a request it knows to be
   reading from gdb, however fast or busy the machine is.  Once: the
   variable is taken out of gdb's environment.  */
static void test_stall(struct request *rq)
{
	if (!getenv("HEAPWALK_GDB_TEST_STALL") || !rq->view.nthreads)
		return;
	unsetenv("HEAPWALK_GDB_TEST_STALL");
	double end = now() + 300;
	char byte;
	while (!rq->reader.interrupted && now() < end)
		(void)guarded_read(&rq->reader, rq->view.threads[0].sp, &byte,
				   1);
}

/* A test's hook (tests/t0616): with HEAPWALK_GDB_TEST_STALL_IN_PLACE
   set in gdb's environment, the next request walked in place waits,
   once the plugin's SIGINT handler stands (ctrlc.h) and the file
   "stalled" in the plugin's directory says so, until a SIGINT comes (at
   most 5 minutes); the walk then starts with Ctrl-C already seen.  Once:
   the variable is taken out of gdb's environment.  */
static void test_stall_in_place(struct request *rq, bool in_place,
				const volatile sig_atomic_t *ctrl_c)
{
	if (!in_place || !getenv("HEAPWALK_GDB_TEST_STALL_IN_PLACE"))
		return;
	unsetenv("HEAPWALK_GDB_TEST_STALL_IN_PLACE");
	int fd = openat(rq->p->dir, "stalled",
			O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	static const struct timespec ms = { 0, 1000000 };
	double end = now() + 300;
	while (!*ctrl_c && now() < end)
		nanosleep(&ms, NULL);
	unlinkat(rq->p->dir, "stalled", 0);
}

/* A test's hook (tests/t0601): with HEAPWALK_GDB_TEST_HOLE set, every
   segment of a core mapped in place is left to gdb's reads (the holes
   stay holes), yet the walk runs in threads: whatever a thread other
   than gdb's reads is refused (each thread's first heap is fixed: the
   walk's second part surely reads one), and the request must run again
   on gdb's thread and answer as the tool does.  */
static bool test_hole(struct request *rq)
{
	struct core_map *cm = &rq->cmap;
	if (rq->one_thread || !getenv("HEAPWALK_GDB_TEST_HOLE") ||
	    !cm->nspans)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < cm->nspans; i++)
		if (!cm->spans[i].data)
			cm->spans[n++] = cm->spans[i];
	cm->nspans = n;
	rq->view.mem.spans = n ? cm->spans : NULL;
	rq->view.mem.nspans = n;
	return true;
}

/* gdb gave no memory map (qemu-user's gdbstub, embedded stubs): find one
   by reading -- or take the last one, when the program has not moved
   since -- and say so in a text report.  */
static bool probe_view(struct plugin *p, struct gdb_view *v,
		       struct guarded_reader *g, struct echo_file *ans,
		       bool json)
{
	struct probe_stats st = { 0 };
	size_t first = v->nregions;
	bool oom, again = probe_memo_take(&p->memo, v->ctx, v->ctx_len, v,
					  &oom);
	if (!again && !oom &&
	    !probe_map(v, v->lib_addrs, v->nlib_addrs, read_all, g, &st))
		oom = true;
	if (oom) {
		say(ans, "heapwalk: out of memory\n");
		return false;
	}
	if (!again)
		probe_memo_keep(&p->memo, v->ctx, v->ctx_len, v, first,
				st.probes);
	gdb_view_seal(v);
	if (!v->nregions) {
		say(ans, "heapwalk: gdb gave no memory map (neither "
		    "'maintenance info sections' nor 'info proc mappings' "
		    "lists this target's memory) and nothing was readable "
		    "around its %zu known addresses\n", st.anchors);
		return false;
	}
	uint64_t bytes = 0;
	for (size_t i = 0; i < v->nregions; i++)
		bytes += v->regions[i].end - v->regions[i].start;
	snprintf(v->limit, sizeof v->limit, "no memory map from gdb: %zu "
		 "regions (%.1f MiB) found by reading around the stacks and "
		 "libraries every %u KiB; memory farther than %llu MiB from "
		 "them is not seen", v->nregions, (double)bytes / (1 << 20),
		 PROBE_STEP >> 10, PROBE_MARGIN >> 20);
	v->mem.limit = v->limit;
	if (!json && again)
		say(ans, "heapwalk: memory map probed (gdb gave none): %zu "
		    "regions, %.1f MiB, as for the last command (the program "
		    "has not run since)\n", v->nregions,
		    (double)bytes / (1 << 20));
	else if (!json)
		say(ans, "heapwalk: memory map probed (gdb gave none): %zu "
		    "regions, %.1f MiB, %zu reads\n", v->nregions,
		    (double)bytes / (1 << 20), st.probes);
	return true;
}

static enum hw_status run_request(struct request *rq,
				  struct echo_file *ans, bool *json)
{
	char *words[MAX_WORDS];
	int nwords = 0;
	rq->cmd = read_cmd(rq->p->dir);
	if (!rq->cmd) {
		say(ans, "heapwalk: the script gave no command\n");
		return HW_USAGE;
	}
	for (char *w = strtok(rq->cmd, " \t"); w && nwords < MAX_WORDS;
	     w = strtok(NULL, " \t"))
		words[nwords++] = w;
	int expr = reask_expr_at(words, nwords);
	if (expr >= 0) {
		if (reask_write(rq->out, CHANNEL_FD, words, nwords, expr)) {
			rq->reasked = true;
			return HW_OK;
		}
		say(ans, "heapwalk: '%s': an address expression cannot go "
		    "with '\"', '\\' or '%%' in the command\n", words[expr]);
		return HW_USAGE;
	}
	struct plugin_opts po = { 0 };
	char *argv[MAX_WORDS + 1];
	int argc = 0;
	po.cmd_takes_o = nwords > 0 && takes_output(words[0]);
	for (int i = 0; i < nwords; i++)
		if (!take_option(&po, words, nwords, &i))
			argv[argc++] = words[i];
	if (!argc)
		argv[argc++] = "summary";
	argv[argc] = NULL;
	*json = po.json;

	char why[256];
	if (!gdb_view_read(&rq->view, rq->p->dir, why, sizeof why)) {
		say(ans, "heapwalk: %s\n", why);
		return HW_BAD_TARGET;
	}
	if (!rq->view.nregions &&
	    !probe_view(rq->p, &rq->view, &rq->reader, ans, po.json))
		return HW_BAD_TARGET;
	test_stall(rq);
	/* On a core, the segments gdb reads from the file are mapped from
	   it, not copied through gdb (coremap.h).  */
	if (!getenv("HEAPWALK_GDB_NO_COREMAP"))   /* tests compare both */
		(void)core_map_open(&rq->cmap, &rq->view, read_all,
				    &rq->reader);
	size_t holes = gdb_view_holes(&rq->view);
	if (holes && core_map_add_holes(&rq->cmap, &rq->view))
		debug_note("core: %zu writable segments without contents "
			   "(not read)\n", holes);
	dump_view(&rq->view, &rq->cmap);
	rq->view.mem.read = gdb_read;
	rq->view.mem.cookie = rq;
	if (rq->view.debugdir)
		add_gdb_debug_dirs(&po, (char *)rq->view.debugdir);

	struct hw_open_opts oo = HW_OPEN_OPTS_INIT;
	oo.memory = &rq->view.mem;
	oo.sysroot = host_sysroot(rq->view.sysroot);
	oo.debug_dirs = po.debug_dirs;
	oo.n_debug_dirs = po.n_debug_dirs;
	oo.no_debuginfo = po.no_debuginfo;
	char cache_dir[PATH_MAX];
	oo.cache_dir = po.no_cache ? NULL
			: hw_default_cache_dir(cache_dir, sizeof cache_dir);
	oo.allocator = po.allocator;
	/* gdb's memory is read from gdb's thread only; a core mapped in
	   place with every writable segment (all the heap walks read) is
	   walked in threads like the tool's, reads of anything else from
	   them refused and said (serve).  */
	bool whole = core_map_whole(&rq->cmap, &rq->view);
	oo.threads = !rq->one_thread && (test_hole(rq) || whole) ? 0 : 1;
	rq->threads = oo.threads;
	oo.needs = hw_command_needs(argv[0]);
	/* A walk in place reads nothing through gdb: Ctrl-C is caught
	   here, or it would be seen only when the report is done.  */
	oo.cancel = ctrlc_watch(!whole);
	test_stall_in_place(rq, whole, oo.cancel);
	enum hw_status st = hw_session_open(&oo, &rq->session);
	if (st != HW_OK) {
		say(ans, "heapwalk: %s\n", hw_session_errmsg(rq->session));
		return st;
	}
	struct echo_file to_file = { 0 };
	struct echo_file *sink = ans;
	if (po.out_file) {
		rq->file = fopen(po.out_file, "w");
		if (!rq->file) {
			say(ans, "heapwalk: -o %s: %s\n", po.out_file,
			    strerror(errno));
			return HW_USAGE;
		}
		to_file = (struct echo_file){ .f = rq->file, .raw = true };
		sink = &to_file;
	}
	struct hw_output out = HW_OUTPUT_INIT;
	out.write = echo_write;
	out.cookie = sink;
	out.form = po.json ? HW_FORM_JSON : HW_FORM_TEXT;
	/* Without -o the report goes to gdb's console.  */
	out.terminal = !po.out_file;
	st = hw_session_run(rq->session, argc, argv, &out);
	if (st != HW_OK && st != HW_CORRUPT)
		say(ans, "heapwalk: %s\n", hw_session_errmsg(rq->session));
	if (po.out_file) {
		long size = ftell(rq->file);
		if (fclose(rq->file) != 0 || to_file.failed)
			say(ans, "heapwalk: -o %s: write error\n", po.out_file);
		else
			say(ans, "%ld bytes written to %s\n", size,
			    po.out_file);
		rq->file = NULL;
	}
	return st;
}

/* run_request, and whether a Ctrl-C came while it ran (ctrlc.h).  */
static int run_watched(struct request *rq, struct echo_file *ans, bool *json)
{
	int st = (int)run_request(rq, ans, json);
	if (ctrlc_unwatch())
		rq->reader.interrupted = true;
	return st;
}

/* Serve the request now waiting: the answer becomes out.gdb.  */
static void serve(struct plugin *p, struct gdb_unwind_callbacks *cb)
{
	__attribute__((cleanup(request_end))) struct request rq = {
		.p = p, .reader = { .cb = cb } };
	rq.out = open_answer(p->dir);
	if (!rq.out)
		return;   /* the script's default answer stays */
	struct echo_file ans = { .f = rq.out };
	double t0 = now();
	bool json = false;
	rq.reader.owner = pthread_self();
	int st = run_watched(&rq, &ans, &json);
	if (rq.reader.refused && !rq.reader.interrupted) {
		/* A walk thread needed memory only gdb can read (outside
		   the core's mapped segments): its report may lack it.
		   Drop it and run again on gdb's thread alone.  */
		answer_reset(&rq, &ans);
		request_reset(&rq);
		rq.one_thread = true;
		st = run_watched(&rq, &ans, &json);
	}
	double took = now() - t0;
	debug_note("served in %.3f s, threads %u%s, %lu reads refused off "
		   "gdb's thread\n", took, rq.threads,
		   rq.one_thread ? " (ran again)" : "", rq.reader.refused);
	if (rq.reader.interrupted) {
		/* What the walk made of reads that failed after Ctrl-C is
		   not a report: drop it, say what happened.  */
		answer_reset(&rq, &ans);
		say(&ans, "heapwalk: interrupted after %.2f s (Ctrl-C, or gdb "
		    "lost the target): no report\n", took);
		st = STATUS_INTERRUPTED;
	} else if (took >= SAY_TIME_AFTER && !json) {
		/* JSON stays JSON: the time is for people.  */
		say(&ans, "(heapwalk: %.2f s)\n", took);
	}
	echo_finish(&ans);
	/* (A command asked again sets its own status.)  */
	if (!rq.reasked)
		fprintf(rq.out, "set $_heapwalk_status = %d\n", st);
	if (fclose(rq.out) == 0)
		renameat(p->dir, "out.tmp", p->dir, "out.gdb");
	rq.out = NULL;
}

/* ---- gdb's callbacks ------------------------------------------------- */

static enum gdb_status reader_read(struct gdb_reader_funcs *self,
				   struct gdb_symbol_callbacks *cb,
				   void *memory, long memory_sz)
{
	(void)self, (void)cb, (void)memory, (void)memory_sz;
	return GDB_FAIL;   /* a real JIT's objects are gdb's own business */
}

/* Is a whole request waiting?  It ends with "END\n": a request the script
   is still writing is left alone (gdb may unwind in between).  */
static bool request_waiting(int dir)
{
	struct stat st;
	if (fstatat(dir, "req", &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(st.st_mode) || st.st_size < 4)
		return false;
	int fd = openat(dir, "req", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	return n >= 4 && memcmp(buf + n - 4, "END\n", 4) == 0;
}

static enum gdb_status reader_unwind(struct gdb_reader_funcs *self,
				     struct gdb_unwind_callbacks *cb)
{
	struct plugin *p = self->priv_data;
	if (p->dir < 0 || !request_waiting(p->dir))
		return GDB_FAIL;
	/* Consumed before the work: an interrupted request is not served
	   again at some later unwind.  */
	unlinkat(p->dir, "req", 0);
	serve(p, cb);
	return GDB_FAIL;
}

static struct gdb_frame_id reader_frame_id(struct gdb_reader_funcs *self,
					   struct gdb_unwind_callbacks *cb)
{
	(void)self, (void)cb;
	return (struct gdb_frame_id){ 0, 0 };
}

static void reader_destroy(struct gdb_reader_funcs *self)
{
	struct plugin *p = self->priv_data;
	remove_channel(p);
	probe_memo_free(&p->memo);
	if (loaded == p)
		loaded = NULL;
	free(p);
}

struct gdb_reader_funcs *gdb_init_reader(void)
{
	if (loaded) {
		fprintf(stderr, "heapwalk: the reader is loaded already\n");
		return NULL;
	}
	struct plugin *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->dir = -1;
	if (!make_channel(p)) {
		free(p);
		return NULL;
	}
	p->funcs = (struct gdb_reader_funcs){
		.reader_version = GDB_READER_INTERFACE_VERSION,
		.priv_data = p,
		.read = reader_read,
		.unwind = reader_unwind,
		.get_frame_id = reader_frame_id,
		.destroy = reader_destroy,
	};
	loaded = p;
	return &p->funcs;
}
