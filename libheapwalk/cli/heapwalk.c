/* heapwalk.c - the command-line front end: options in, one command out.
 *
 * Everything the tool reports comes from the library's command table, so
 * `heapwalk bins` and gdb's `heap bins` print the same.  This file only
 * parses options, opens the session and maps failures to the exit
 * statuses of doc/heapwalk.md, with one "heapwalk: " line on stderr.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../heapwalk.h"
#include "memwatch.h"
#include "revision.h"
#include "triage.h"
#include "writeall.h"

#define MAX_DEBUG_DIRS 32

/* Print `text` from column `col` (the cursor is there), broken between
   words before column 79, continuation lines indented to `indent`.  */
static void wrapped(FILE *f, const char *text, int col, int indent)
{
	while (*text) {
		int len = (int)strcspn(text, " ");
		if (col > indent && col + 1 + len > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, (size_t)len, f);
		col += len;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fputs("usage: heapwalk [OPTIONS] CORE [COMMAND [ARGS...]]\n"
	      "       heapwalk [OPTIONS] --pid PID [COMMAND [ARGS...]]\n"
	      "       heapwalk [OPTIONS] triage [-j N] CORE... | -\n"
	      "\n"
	      "options:\n"
	      "  --pid PID         a live process: stop it, copy its heap, let it go\n"
	      "  --no-stop         with --pid: never stop the process (the view\n"
	      "                    may be torn; reports say so)\n"
	      "  --exe FILE        the executable (default: from the core); with\n"
	      "                    --pid, an unstripped copy of the running one\n"
	      "                    (used when its build-id is the same)\n"
	      "  --sysroot DIR     look up the target's files under DIR\n"
	      "  --debug-dir DIR   extra separate-debug-info directory (repeatable)\n"
	      "  --no-debuginfo    ignore separate debug info\n"
	      "  --no-cache        keep nothing for later runs (default: the\n"
	      "                    struct layouts read from a debug file, in\n"
	      "                    $HEAPWALK_CACHE_DIR or ~/.cache/heapwalk)\n"
	      "  --allocator A     auto (default) | ptmalloc | jemalloc | tcmalloc |\n"
	      "                    mallocng | mimalloc | N (instance N as summary\n"
	      "                    lists them)\n"
	      "  --json            machine-readable output\n"
	      "  --threads N       worker threads (default: one per CPU)\n"
	      "  --cache-max SIZE  memory for a live process's copy (e.g. 4G;\n"
	      "                    default: half of this machine's memory)\n"
	      "  --unpack-max SIZE the most a compressed core may unpack to,\n"
	      "                    zeros included (default: 512 times its size,\n"
	      "                    at least 2G)\n"
	      "  --color=WHEN      auto (default: on a terminal, unless NO_COLOR\n"
	      "                    is set) | always | never\n"
	      "  -q, --quiet       no progress on stderr (shown on a terminal for\n"
	      "                    phases longer than a second)\n"
	      "  --stats           after the command, say on stderr what it took:\n"
	      "                    time, peak memory, walks and list entries read\n"
	      "  -h, --help        this help;  --version  the version\n"
	      "\n"
	      "heapwalk help COMMAND: what COMMAND does and takes, with an "
	      "example.\n"
	      "commands (default: summary):\n", f);
	for (size_t i = 0; hw_command_name(i); i++) {
		const char *args = hw_command_usage(i);
		char line[512];
		snprintf(line, sizeof line, "%s%s%s", args,
			 args[0] ? ": " : "", hw_command_help(i));
		fprintf(f, "  %-11s", hw_command_name(i));
		wrapped(f, line, 13, 13);
	}
}

/* The command table's index of `name`, or -1.  */
static long command_index(const char *name)
{
	for (size_t i = 0; hw_command_name(i); i++)
		if (!strcmp(hw_command_name(i), name))
			return (long)i;
	return -1;
}

static bool is_command(const char *name)
{
	return command_index(name) >= 0;
}

/* How to open the manual page: `man heapwalk` once installed; from a
   build tree (build/heapwalk or build/asan/heapwalk, doc/ beside
   build/), the page in the tree.  */
static void man_command(char *buf, size_t len)
{
	static const char *const up[] = { "/../doc/heapwalk.1",
					   "/../../doc/heapwalk.1" };
	char exe[PATH_MAX], page[PATH_MAX + 32], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	snprintf(buf, len, "man heapwalk");
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	for (size_t k = 0; k < sizeof up / sizeof *up; k++) {
		snprintf(page, sizeof page, "%s%s", exe, up[k]);
		if (access(page, R_OK) == 0 && realpath(page, real)) {
			snprintf(buf, len, "man -l %s", real);
			return;
		}
	}
}

/* `heapwalk help [COMMAND]`: the usage, every option and an example, as
   `git help` gives them.  */
static int help(const char *name)
{
	if (!name) {
		usage(stdout);
		return 0;
	}
	long found = command_index(name);
	if (found >= 0) {
		size_t i = (size_t)found;
		const char *args = hw_command_usage(i), *what;
		/* triage's cores are its words; one core may come first, or
		   a live process be the one (the record's own options
		   only).  */
		if (!strcmp(name, "triage"))
			printf("usage: heapwalk [OPTIONS] triage %s\n"
			       "       heapwalk [OPTIONS] CORE triage [-j N] "
			       "[--timeout SECS] [--no-leaks] [--top N] "
			       "[CORE...]\n"
			       "       heapwalk [OPTIONS] --pid PID triage "
			       "[--no-leaks] [--top N]\n\n", args);
		else
			printf("usage: heapwalk [OPTIONS] CORE %s%s%s\n"
			       "       heapwalk [OPTIONS] --pid PID %s%s%s\n\n",
			       name, args[0] ? " " : "", args, name,
			       args[0] ? " " : "", args);
		char line[512];
		snprintf(line, sizeof line, "%s.", hw_command_help(i));
		wrapped(stdout, line, 0, 0);
		const char *opt = hw_command_option(i, 0, &what);
		if (opt)
			printf("\n%s:\n", opt[0] == '-' ? "options" :
			       "arguments and options");
		for (size_t k = 0; (opt = hw_command_option(i, k, &what));
		     k++) {
			printf("  %-17s", opt);
			wrapped(stdout, what, 19, 19);
		}
		char man[PATH_MAX + 16];
		man_command(man, sizeof man);
		printf("\nexample:\n  heapwalk %s\n\n"
		       "The options before the target (--json, --sysroot, ...): "
		       "heapwalk --help.\nThe output, field by field: %s\n",
		       hw_command_example(i), man);
		return 0;
	}
	fprintf(stderr, "heapwalk: help: unknown command '%s' (try "
		"'heapwalk --help')\n", name);
	return HW_USAGE;
}

/* One error line on stderr, "heapwalk: " first.  Its words may be a
   core's (a file name from NT_FILE): a control character there, C0, DEL
   or C1 (U+0080 to U+009F, two bytes in UTF-8), could set the terminal's
   title or colours, so each is written as \xNN.  */
static int fail(int status, const char *fmt, const char *arg)
{
	char line[4096];
	snprintf(line, sizeof line, fmt, arg);
	fputs("heapwalk: ", stderr);
	for (const unsigned char *c = (const unsigned char *)line; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			fprintf(stderr, "\\x%02x", *c);
		else if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
			fprintf(stderr, "\\x%02x\\x%02x", c[0], c[1]), c++;
		else
			fputc(*c, stderr);
	}
	fputc('\n', stderr);
	return status;
}

/* The library's output, straight to fd 1 (the library buffers).  The
   first write error is kept: EPIPE means the reader went away.  */
struct progress;
struct stdout_sink {
	int err;
	struct progress *progress;    /* cleared before the first output */
};

static void end_progress(struct progress *p);

static bool write_stdout(void *cookie, const char *data, size_t len)
{
	struct stdout_sink *sink = cookie;
	if (sink->progress)
		end_progress(sink->progress);
	if (!sink->err)
		sink->err = hw_write_all(STDOUT_FILENO, data, len);
	return !sink->err;
}

/* "123", "64K", "512M", "4G", "1T" (powers of 1024).  */
static bool parse_size(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (end == v || errno || v[0] == '-')
		return false;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: return false;
	}
	if (*end && end[1] && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B"))
		return false;
	if (shift && n > (~0ull >> shift))
		return false;
	*out = (uint64_t)n << shift;
	return true;
}

/* Progress on stderr, for a terminal only: nothing in the run's first
   second (most runs end before), then at most ten updates a second, on
   one line that is cleared before any output and at the end.  */
struct progress {
	struct timespec run_start;    /* the gate */
	struct timespec start, last;  /* of the phase: its rate */
	uint64_t start_done;
	char phase[128];
	bool shown;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static const char *human(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	unsigned u = 0;
	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", d, unit[u]);
	return buf;
}

static void show_progress(void *cookie, const char *phase, uint64_t done,
			  uint64_t total)
{
	struct progress *p = cookie;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (strncmp(p->phase, phase, sizeof p->phase - 1) ||
	    done < p->start_done) {
		snprintf(p->phase, sizeof p->phase, "%s", phase);
		p->start = now;
		p->start_done = done;
	}
	if (since(&p->run_start, &now) < 1.0 ||
	    (p->shown && since(&p->last, &now) < 0.1))
		return;
	p->last = now;
	p->shown = true;
	char a[32], b[32], c[32];
	double secs = since(&p->start, &now);
	uint64_t rate = secs > 0.05 ?
		(uint64_t)((double)(done - p->start_done) / secs) : 0;
	const char *r = rate ? human(rate, c, sizeof c) : "?";
	if (total)
		fprintf(stderr, "\r\033[K%s: %3.0f%% (%s of %s, %s/s)", phase,
			100.0 * (double)done / (double)total,
			human(done, a, sizeof a), human(total, b, sizeof b), r);
	else
		fprintf(stderr, "\r\033[K%s: %s (%s/s)", phase,
			human(done, a, sizeof a), r);
}

static void end_progress(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

/* Set by SIGINT, SIGTERM and SIGHUP while a live process may be stopped:
   the library then lets it go and returns; the signal is raised again
   afterwards, so heapwalk still dies of it as the sender meant.  */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void catch_stop_signals(bool on)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on ? on_stop_signal : SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Is argv[i] a global option?  Consumes its value too.  */
static int global_option(int argc, char **argv, int *i,
			 struct hw_open_opts *o, const char **dirs,
			 bool *json, const char **pid, int *color,
			 bool *quiet, bool *stats)
{
	const char *a = argv[*i];
	uint64_t num;
	static const char *const with_value[] = {
		"--pid", "--exe", "--sysroot", "--debug-dir", "--allocator",
		"--threads", "--cache-max", "--unpack-max",
	};
	for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++) {
		size_t n = strlen(with_value[k]);
		if (strncmp(a, with_value[k], n) != 0 ||
		    (a[n] != '\0' && a[n] != '='))
			continue;
		const char *v = a[n] == '=' ? a + n + 1 : NULL;
		if (!v) {
			if (*i + 1 >= argc)
				return fail(HW_USAGE, "option '%s' needs a "
					    "value", with_value[k]);
			v = argv[++*i];
		}
		switch (k) {
		case 0: *pid = v; break;
		case 1: o->exe = v; break;
		case 2: o->sysroot = v; break;
		case 3:
			if (o->n_debug_dirs == MAX_DEBUG_DIRS)
				return fail(HW_USAGE, "too many %s options",
					    "--debug-dir");
			dirs[o->n_debug_dirs++] = v;
			break;
		case 4: o->allocator = v; break;
		case 5:
			if (!parse_size(v, &num) || num == 0 || num > 1024)
				return fail(HW_USAGE, "--threads: '%s' is not "
					    "a number from 1 to 1024", v);
			o->threads = (unsigned)num;
			break;
		case 6:
			if (!parse_size(v, &o->cache_max) || !o->cache_max)
				return fail(HW_USAGE, "--cache-max: '%s' is not "
					    "a size (e.g. 512M, 4G)", v);
			break;
		case 7:
			if (!parse_size(v, &o->unpack_max) || !o->unpack_max)
				return fail(HW_USAGE, "--unpack-max: '%s' is "
					    "not a size (e.g. 64G, 2T)", v);
			break;
		}
		return 0;
	}
	if (!strncmp(a, "--color", 7) && (a[7] == '\0' || a[7] == '=')) {
		const char *v = a[7] ? a + 8 : "always";
		if (!strcmp(v, "auto"))
			*color = -1;
		else if (!strcmp(v, "always"))
			*color = 1;
		else if (!strcmp(v, "never"))
			*color = 0;
		else
			return fail(HW_USAGE, "--color: '%s' is not auto, "
				    "always or never", v);
		return 0;
	}
	if (!strcmp(a, "--json"))
		*json = true;
	else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
		*quiet = true;
	else if (!strcmp(a, "--stats"))
		*stats = true;
	else if (!strcmp(a, "--no-stop"))
		o->no_stop = true;
	else if (!strcmp(a, "--no-debuginfo"))
		o->no_debuginfo = true;
	else if (!strcmp(a, "--no-cache"))
		o->cache_dir = NULL;
	else
		return -1;
	return 0;
}

static double seconds_between(const struct timespec *a,
			      const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* --stats: what the run took, one line on stderr (after the report, so
   that it never mixes with it).  */
static void print_stats(const hw_session *s, const struct timespec *start,
			const struct timespec *opened, struct memwatch *mem)
{
	memwatch_stop(mem);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct hw_work w;
	hw_session_work(s, &w);
	fprintf(stderr, "heapwalk: stats: open %.3f s, command %.3f s, "
		"peak RSS %.1f MiB, of which heapwalk's own (anonymous, "
		"sampled) %.1f MiB, the core's pages %.1f MiB; walks %llu, "
		"around %llu, list entries %llu, guessed %llu, summed %llu, "
		"sums failed %llu",
		seconds_between(start, opened), seconds_between(opened, &now),
		(double)ru.ru_maxrss / 1024, (double)mem->anon_kib / 1024,
		(double)(mem->file_kib + mem->shmem_kib) / 1024,
		(unsigned long long)w.walks, (unsigned long long)w.around,
		(unsigned long long)w.list_entries,
		(unsigned long long)w.guessed, (unsigned long long)w.summed,
		(unsigned long long)w.sums_failed);
	/* (Before the DWARF count: scripts read the line's end.)  */
	uint64_t pieces, cut = hw_session_heaps_cut(s, &pieces);
	if (cut)
		fprintf(stderr, ", %llu heap walk%s cut into %llu pieces "
			"for threads", (unsigned long long)cut,
			cut == 1 ? "" : "s", (unsigned long long)pieces);
	fprintf(stderr, "; DWARF of %llu modules",
		(unsigned long long)hw_session_dwarf_modules(s));
	uint64_t cached = hw_session_layouts_cached(s);
	if (cached)
		fprintf(stderr, ", %llu struct layouts from the cache",
			(unsigned long long)cached);
	fputc('\n', stderr);
	const char *fallbacks = hw_session_work_fallbacks(s);
	if (*fallbacks)
		fprintf(stderr, "heapwalk: stats: sums that disagreed, their "
			"lists walked instead: %s\n", fallbacks);
}

int main(int argc, char **argv)
{
	/* A reader that goes away (`heapwalk core chunks | head`) ends the
	   run quietly and successfully, as with git: the write fails with
	   EPIPE instead of the signal killing us mid-line.  */
	signal(SIGPIPE, SIG_IGN);
	/* A debuginfod server that takes a connection and never answers
	   would hold every file libdwfl asks it for 90 s (the client's
	   default): 5 s a file unless the user says otherwise.  */
	if (getenv("DEBUGINFOD_URLS") && !getenv("DEBUGINFOD_TIMEOUT"))
		setenv("DEBUGINFOD_TIMEOUT", "5", 0);
	struct hw_open_opts o = HW_OPEN_OPTS_INIT;
	const char *dirs[MAX_DEBUG_DIRS];
	const char *pid = NULL;
	bool json = false, quiet = false, stats = false;
	int color = -1;               /* auto */
	char **cmd = calloc((size_t)argc + 1, sizeof *cmd);
	int ncmd = 0;
	if (!cmd)
		return fail(HW_BAD_TARGET, "%s", "out of memory");
	o.debug_dirs = dirs;
	char cache_dir[PATH_MAX];
	o.cache_dir = hw_default_cache_dir(cache_dir, sizeof cache_dir);
	bool target_done = false, dashdash = false, triage = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			usage(stdout);
			free(cmd);
			return 0;
		}
		if (!dashdash && !strcmp(a, "--version")) {
			printf("heapwalk %s (git %s)\n", HEAPWALK_VERSION,
			       HEAPWALK_REVISION);
			free(cmd);
			return 0;
		}
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		if (!dashdash && a[0] == '-' && a[1]) {
			int r = global_option(argc, argv, &i, &o, dirs, &json,
					      &pid, &color, &quiet, &stats);
			if (r > 0) {
				free(cmd);
				return r;
			}
			if (r == 0)
				continue;
			/* Not ours: an option of the command, if there is
			   one already.  */
			if (ncmd == 0) {
				free(cmd);
				return fail(HW_USAGE, "unknown option '%s' (try "
					    "'heapwalk --help')", a);
			}
			cmd[ncmd++] = argv[i];
			continue;
		}
		if (!target_done && !pid && !strcmp(a, "help") && ncmd == 0) {
			int r = help(i + 1 < argc ? argv[i + 1] : NULL);
			free(cmd);
			return r;
		}
		/* `heapwalk triage CORE...`: the cores are its words (a
		   file named "triage" here is a core, as for any command's
		   name).  */
		if (!target_done && !pid && ncmd == 0 && !dashdash &&
		    !strcmp(a, "triage") && access(a, F_OK) != 0) {
			triage = true;
			target_done = true;
			cmd[ncmd++] = argv[i];
			continue;
		}
		if (!target_done && !pid) {
			o.core = a;
			target_done = true;
			continue;
		}
		cmd[ncmd++] = argv[i];
	}
	if (triage || (o.core && !pid && ncmd > 0 &&
		       !strcmp(cmd[0], "triage"))) {
		int r = hw_cli_triage(&o, json, triage ? NULL : o.core, ncmd,
				      cmd);
		free(cmd);
		return r;
	}
	if (pid) {
		char *end;
		long v = strtol(pid, &end, 10);
		if (!*pid || *end || v <= 0 || v > 0x7fffffff) {
			free(cmd);
			return fail(HW_USAGE, "--pid: '%s' is not a process id",
				    pid);
		}
		o.pid = (int)v;
	}
	if (!o.core && !o.pid) {
		free(cmd);
		return fail(HW_USAGE, "%s", "no core file or --pid given "
			    "(try 'heapwalk --help')");
	}
	/* `heapwalk summary core`: the command where the target goes.  A
	   file of that name in the current directory is a core after
	   all.  */
	if (o.core && is_command(o.core) && access(o.core, F_OK) != 0) {
		char msg[512];
		if (ncmd > 0)
			snprintf(msg, sizeof msg, "the target comes first: "
				 "heapwalk %s %s (or heapwalk --pid PID %s)",
				 cmd[0], o.core, o.core);
		else
			snprintf(msg, sizeof msg, "'%s' is a command: give the "
				 "core before it: heapwalk CORE %s (or --pid "
				 "PID)", o.core, o.core);
		int st = fail(HW_USAGE, "%s", msg);
		free(cmd);
		return st;
	}
	/* Check the command before the (possibly slow) open.  */
	if (ncmd > 0) {
		if (!is_command(cmd[0])) {
			/* Two cores: the user most likely wants them compared.  */
			struct stat st_cmd;
			char msg[PATH_MAX * 3];
			if (o.core && stat(cmd[0], &st_cmd) == 0)
				snprintf(msg, sizeof msg, "'%s' is a file, not a "
					 "command: to compare two cores, heapwalk "
					 "%s diff %s (what changed since %s)",
					 cmd[0], cmd[0], o.core, o.core);
			else
				snprintf(msg, sizeof msg, "unknown command '%s' "
					 "(try 'heapwalk --help')", cmd[0]);
			int st = fail(HW_USAGE, "%s", msg);
			free(cmd);
			return st;
		}
	}
	/* One command per run: the session does only what it needs.  */
	o.needs = hw_command_needs(ncmd > 0 ? cmd[0] : "summary");
	hw_session *s;
	/* A live process is stopped only inside hw_session_open: a signal
	   there must not kill heapwalk before the process is let go.  */
	o.cancel = &stop_signal;
	struct progress prog = { 0 };
	clock_gettime(CLOCK_MONOTONIC, &prog.run_start);
	struct memwatch mem = { 0 };
	if (stats)
		memwatch_start(&mem);
	if (!quiet && !json && isatty(STDERR_FILENO)) {
		o.progress = show_progress;
		o.progress_cookie = &prog;
	}
	if (o.pid)
		catch_stop_signals(true);
	enum hw_status st = hw_session_open(&o, &s);
	if (o.pid) {
		catch_stop_signals(false);
		if (stop_signal) {
			hw_session_close(s);
			free(cmd);
			raise(stop_signal);
			return 128 + stop_signal;
		}
	}
	end_progress(&prog);
	struct timespec opened;
	clock_gettime(CLOCK_MONOTONIC, &opened);
	struct stdout_sink sink = { .progress = &prog };
	if (color < 0) {
		const char *nc = getenv("NO_COLOR");
		color = isatty(STDOUT_FILENO) && !(nc && *nc);
	}
	if (st == HW_OK) {
		struct hw_output out = HW_OUTPUT_INIT;
		out.write = write_stdout;
		out.cookie = &sink;
		out.form = json ? HW_FORM_JSON : HW_FORM_TEXT;
		out.color = color && !json;
		out.terminal = isatty(STDOUT_FILENO);
		st = hw_session_run(s, ncmd, cmd, &out);
		end_progress(&prog);
	}
	if (sink.err == EPIPE) {
		st = HW_OK;
	} else if (sink.err) {
		st = fail(HW_BAD_TARGET, "write error on standard output: %s",
			  strerror(sink.err));
	} else if (st != HW_OK && st != HW_CORRUPT && hw_session_errmsg(s)[0]) {
		fail(st, "%s", hw_session_errmsg(s));
	}
	if (stats)
		print_stats(s, &prog.run_start, &opened, &mem);
	hw_session_close(s);
	free(cmd);
	return st;
}
