/* triage.c - `heapwalk triage CORE... | -`: a record per core, many
 * cores at once.
 *
 * Each core is analysed in a child process of its own (fork, then the
 * library's hw_triage()), at most -j at a time.  A core is untrusted
 * input: if an analysis ever died (a bug heapwalk has not met yet) or
 * ran past --timeout, only that core's record says so, as an error
 * record; the others go on.  A process also gives each analysis the
 * whole machine's memory back when it ends, which a thread would not.
 * The records are written in the order of the inputs, each whole, so
 * that the output of one run is the same whatever finished first.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "triage.h"
#include "writeall.h"

struct buf {
	char *data;
	size_t len, cap;
	bool oom;
};

static bool buf_write(void *cookie, const char *data, size_t len)
{
	struct buf *b = cookie;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d) {
			b->oom = true;
			return false;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return true;
}

/* A child's sink: its end of the pipe.  */
static bool fd_write(void *cookie, const char *data, size_t len)
{
	return hw_write_all(*(int *)cookie, data, len) == 0;
}

struct job {
	const char *core;
	pid_t pid;               /* running: > 0 */
	int fd;                  /* the pipe's read end, or -1 */
	struct buf out;          /* the record as it came */
	struct timespec deadline;
	bool timed_out;
	bool finished;
	bool error;              /* its record is an error record */
};

/* What the run is given.  */
struct run {
	struct hw_open_opts o;
	bool json;
	unsigned jobs;
	unsigned timeout;        /* seconds; 0: none */
	int rargc;               /* the records' words: "triage" [opts] */
	char *rargv[5];
	struct job *job;
	size_t n;
};

static void say(const char *fmt, const char *arg)
{
	fputs("heapwalk: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

static struct hw_output output(const struct run *r, hw_write_fn *fn,
			       void *cookie)
{
	struct hw_output out = HW_OUTPUT_INIT;
	out.write = fn;
	out.cookie = cookie;
	out.form = r->json ? HW_FORM_JSON : HW_FORM_TEXT;
	return out;
}

/* The error record of job j, made here: its analysis gave none.  */
static void error_record(const struct run *r, struct job *j, const char *why)
{
	free(j->out.data);
	j->out = (struct buf){ 0 };
	struct hw_output out = output(r, buf_write, &j->out);
	hw_triage_error(j->core, HW_BAD_TARGET, why, &out);
	j->error = true;
}

static void child(const struct run *r, const struct job *j, int fd)
{
	struct hw_open_opts o = r->o;
	o.core = j->core;
	struct hw_output out = output(r, fd_write, &fd);
	_exit(hw_triage(&o, r->rargc, r->rargv, &out));
}

static bool start(struct run *r, struct job *j)
{
	int p[2];
	if (pipe(p) != 0)
		return false;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return false;
	}
	if (pid == 0) {
		close(p[0]);
		/* The other children's pipes are the parent's business.  */
		for (size_t i = 0; i < r->n; i++)
			if (r->job[i].fd >= 0)
				close(r->job[i].fd);
		child(r, j, p[1]);
	}
	close(p[1]);
	j->pid = pid;
	j->fd = p[0];
	clock_gettime(CLOCK_MONOTONIC, &j->deadline);
	j->deadline.tv_sec += r->timeout;
	return true;
}

/* Job j's pipe is closed: collect its process and judge its record.  */
static void finish(const struct run *r, struct job *j)
{
	int status = 0;
	while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	j->pid = 0;
	j->finished = true;
	char why[256];
	if (j->timed_out) {
		snprintf(why, sizeof why, "its analysis took longer than "
			 "--timeout %u s and was stopped", r->timeout);
		error_record(r, j, why);
	} else if (WIFSIGNALED(status)) {
		snprintf(why, sizeof why, "heapwalk's analysis of it died of "
			 "signal %d (%s): a bug in heapwalk; please report it "
			 "with the core", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		error_record(r, j, why);
	} else if (j->out.oom) {
		error_record(r, j, "out of memory keeping its record");
	} else if (!j->out.len || j->out.data[j->out.len - 1] != '\n') {
		snprintf(why, sizeof why, "its analysis ended (status %d) "
			 "without a whole record", WEXITSTATUS(status));
		error_record(r, j, why);
	} else {
		int st = WEXITSTATUS(status);
		j->error = st != HW_OK && st != HW_CORRUPT;
	}
}

static double until(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(t->tv_sec - now.tv_sec) +
	       (double)(t->tv_nsec - now.tv_nsec) / 1e9;
}

/* Write what the reader may have: false when standard output failed
   (EPIPE: the reader went away).  */
static bool put_out(const char *data, size_t len, int *err)
{
	*err = hw_write_all(STDOUT_FILENO, data, len);
	return !*err;
}

static void stop_all(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct job *j = &r->job[i];
		if (j->pid > 0) {
			kill(j->pid, SIGKILL);
			while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		if (j->fd >= 0)
			close(j->fd);
		free(j->out.data);
	}
}

static int run_jobs(struct run *r)
{
	size_t next = 0, written = 0, running = 0;
	bool any_error = false;
	int err = 0;
	struct pollfd *pfd = calloc(r->jobs, sizeof *pfd);
	size_t *which = calloc(r->jobs, sizeof *which);
	if (!pfd || !which) {
		free(pfd);
		free(which);
		say("%s", "out of memory");
		return HW_BAD_TARGET;
	}
	while (written < r->n) {
		while (running < r->jobs && next < r->n) {
			struct job *j = &r->job[next];
			if (start(r, j)) {
				running++;
			} else if (running == 0) {
				char why[200];
				snprintf(why, sizeof why, "no process could be "
					 "started for it: %s", strerror(errno));
				error_record(r, j, why);
				j->finished = true;
			} else {
				break;   /* wait for one to end */
			}
			next++;
		}
		nfds_t np = 0;
		double soonest = -1;
		for (size_t i = 0; i < next; i++) {
			struct job *j = &r->job[i];
			if (j->fd < 0)
				continue;
			pfd[np] = (struct pollfd){ .fd = j->fd, .events = POLLIN };
			which[np++] = i;
			double left = until(&j->deadline);
			if (r->timeout && (soonest < 0 || left < soonest))
				soonest = left > 0 ? left : 0;
		}
		if (np > 0) {
			int ms = soonest < 0 ? -1 : (int)(soonest * 1000) + 1;
			int ready = poll(pfd, np, ms);
			if (ready < 0 && errno != EINTR)
				break;
			for (nfds_t k = 0; ready > 0 && k < np; k++) {
				struct job *j = &r->job[which[k]];
				if (!pfd[k].revents)
					continue;
				char chunk[65536];
				ssize_t got = read(j->fd, chunk, sizeof chunk);
				if (got < 0 && errno == EINTR)
					continue;
				if (got > 0) {
					if (!j->out.oom)
						buf_write(&j->out, chunk,
							  (size_t)got);
					continue;
				}
				close(j->fd);
				j->fd = -1;
				finish(r, j);
				running--;
			}
			for (nfds_t k = 0; r->timeout && k < np; k++) {
				struct job *j = &r->job[which[k]];
				if (j->pid > 0 && !j->timed_out &&
				    until(&j->deadline) <= 0) {
					j->timed_out = true;
					kill(j->pid, SIGKILL);
				}
			}
		}
		while (written < r->n && r->job[written].finished) {
			struct job *j = &r->job[written++];
			any_error |= j->error;
			bool ok = put_out(j->out.data, j->out.len, &err);
			free(j->out.data);
			j->out = (struct buf){ 0 };
			if (!ok)
				break;
		}
		if (err)
			break;
	}
	free(pfd);
	free(which);
	stop_all(r);
	if (err == EPIPE)
		return HW_OK;
	if (err) {
		say("write error on standard output: %s", strerror(err));
		return HW_BAD_TARGET;
	}
	return any_error ? HW_BAD_TARGET : HW_OK;
}

/* Paths on standard input, one per line (empty lines skipped).  */
static bool read_paths(char ***v, size_t *n, size_t *cap)
{
	char *line = NULL;
	size_t len = 0;
	ssize_t got;
	while ((got = getline(&line, &len, stdin)) >= 0) {
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		if (!got)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			char **nv = realloc(*v, c * sizeof **v);
			if (!nv)
				break;
			*v = nv;
			*cap = c;
		}
		if (!((*v)[(*n)++] = strdup(line)))
			break;
	}
	free(line);
	return !ferror(stdin);
}

/* A count from lo to hi.  */
static bool count(const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-' || n < lo || n > hi)
		return false;
	*out = (unsigned)n;
	return true;
}

int hw_cli_triage(const struct hw_open_opts *o, bool json, const char *first,
		  int n, char **words)
{
	struct run r = { .o = *o, .json = json, .rargc = 1 };
	r.rargv[0] = (char *)"triage";
	char **cores = NULL, **owned = NULL;
	size_t ncores = 0, nowned = 0, owned_cap = 0;
	bool from_stdin = false, dashdash = false, no_leaks = false;
	const char *top = NULL;
	int st = HW_USAGE;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	r.jobs = cpus > 0 ? (unsigned)cpus : 1;
	cores = calloc((size_t)n + 2, sizeof *cores);
	if (!cores) {
		say("%s", "out of memory");
		return HW_BAD_TARGET;
	}
	if (first)
		cores[ncores++] = (char *)first;
	for (int i = 1; i < n; i++) {
		const char *a = words[i];
		const char *v = NULL;
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
		} else if (!dashdash && !strcmp(a, "-")) {
			from_stdin = true;
		} else if (!dashdash && (!strncmp(a, "-j", 2) ||
					 !strncmp(a, "--jobs", 6))) {
			size_t k = a[1] == 'j' ? 2 : 6;
			v = a[k] == '=' ? a + k + 1 : a[k] ? a + k
			    : i + 1 < n ? words[++i] : "";
			if ((a[1] == '-' && a[k] && a[k] != '=') ||
			    !count(v, 1, 4096, &r.jobs)) {
				say("triage: -j: '%s' is not a count from 1 to "
				    "4096", v);
				goto out;
			}
		} else if (!dashdash && (!strcmp(a, "--timeout") ||
					 !strncmp(a, "--timeout=", 10))) {
			v = a[9] == '=' ? a + 10 : i + 1 < n ? words[++i] : "";
			if (!count(v, 1, 7 * 86400, &r.timeout)) {
				say("triage: --timeout: '%s' is not a number of "
				    "seconds", v);
				goto out;
			}
		} else if (!dashdash && !strcmp(a, "--no-leaks")) {
			no_leaks = true;
		} else if (!dashdash && (!strcmp(a, "--top") ||
					 !strncmp(a, "--top=", 6))) {
			v = a[5] == '=' ? a + 6 : i + 1 < n ? words[++i] : "";
			unsigned t;
			if (!count(v, 1, 1000, &t)) {
				say("triage: --top: '%s' is not a count from 1 "
				    "to 1000", v);
				goto out;
			}
			top = v;
		} else if (!dashdash && a[0] == '-' && a[1]) {
			say("triage: unknown option '%s' (try 'heapwalk help "
			    "triage')", a);
			goto out;
		} else {
			cores[ncores++] = (char *)a;
		}
	}
	if (from_stdin) {
		if (!read_paths(&owned, &nowned, &owned_cap)) {
			say("%s", "triage: error reading the paths on standard "
			    "input");
			st = HW_BAD_TARGET;
			goto out;
		}
		char **all = realloc(cores, (ncores + nowned + 1) *
					    sizeof *cores);
		if (!all) {
			say("%s", "out of memory");
			st = HW_BAD_TARGET;
			goto out;
		}
		cores = all;
		for (size_t i = 0; i < nowned; i++)
			cores[ncores++] = owned[i];
	}
	if (!ncores && !from_stdin) {
		say("%s", "triage: no core given (heapwalk triage CORE... | -)");
		goto out;
	}
	if (no_leaks)
		r.rargv[r.rargc++] = (char *)"--no-leaks";
	if (top) {
		r.rargv[r.rargc++] = (char *)"--top";
		r.rargv[r.rargc++] = (char *)top;
	}
	r.n = ncores;
	r.job = calloc(ncores ? ncores : 1, sizeof *r.job);
	if (!r.job) {
		say("%s", "out of memory");
		st = HW_BAD_TARGET;
		goto out;
	}
	for (size_t i = 0; i < ncores; i++)
		r.job[i] = (struct job){ .core = cores[i], .fd = -1 };
	if (r.jobs > ncores && ncores)
		r.jobs = (unsigned)ncores;
	/* The machine's CPUs shared among the cores analysed at once.  */
	if (!r.o.threads) {
		unsigned c = cpus > 0 ? (unsigned)cpus : 1;
		r.o.threads = c / r.jobs ? c / r.jobs : 1;
	}
	/* Each record is made in a child that no one watches: no progress
	   line, and nothing asks a terminal.  */
	r.o.progress = NULL;
	fflush(stdout);
	st = ncores ? run_jobs(&r) : HW_OK;
out:
	free(r.job);
	free(cores);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	return st;
}
