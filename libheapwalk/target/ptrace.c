/* ptrace.c - stop, read and release a live process's threads (ptrace.h).
 *
 * Never harm the target:
 *  - PTRACE_SEIZE + PTRACE_INTERRUPT, never PTRACE_ATTACH: no SIGSTOP is
 *    sent, so nothing can be lost or seen by the program.
 *  - A thread that reports a signal-delivery stop instead of the
 *    interrupt gets that signal back at detach (PTRACE_DETACH's data); a
 *    thread in a group stop stays in it (the kernel re-arms it at detach).
 *  - /proc/PID/task is re-read until a pass finds no new thread: a thread
 *    created while the others were being stopped is stopped too.
 *  - Every path ends in detach_all, and the tracer thread's exit releases
 *    whatever could not be detached.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "process.h"
#include "ptrace.h"

#ifndef NT_PRSTATUS
#define NT_PRSTATUS 1
#endif

enum task_state { TASK_SEIZED, TASK_STOPPED, TASK_GONE, TASK_LOST };

struct task {
	int tid;
	enum task_state state;
	int inject;            /* signal to give back at detach */
};

struct tracer {
	struct hw_target *t;
	const struct hw_ptrace_opts *opts;
	bool (*while_stopped)(struct hw_target *, void *, char *, size_t);
	void *arg;
	struct task *tasks;
	size_t ntasks, cap;
	bool execed, exited;
	enum hw_status st;
	char *err;
	size_t errlen;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool cancelled(const struct tracer *tr)
{
	return tr->opts->cancel && *tr->opts->cancel;
}

/* One line of /proc/PID[/task/TID]/status: the value after "key:\t".  */
static bool status_field(int pid, int tid, const char *key, char *val,
			 size_t len)
{
	char path[64], buf[4096];
	if (tid)
		snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t klen = strlen(key);
	bool found = false;
	while (!found && fgets(buf, sizeof buf, f)) {
		if (strncmp(buf, key, klen) || buf[klen] != ':')
			continue;
		const char *v = buf + klen + 1;
		v += strspn(v, " \t");
		snprintf(val, len, "%.*s", (int)strcspn(v, "\n"), v);
		found = true;
	}
	fclose(f);
	return found;
}

static bool have_cap_sys_ptrace(void)
{
	char v[64];
	if (!status_field(getpid(), 0, "CapEff", v, sizeof v))
		return geteuid() == 0;
	return strtoull(v, NULL, 16) >> 19 & 1;   /* CAP_SYS_PTRACE */
}

/* Why PTRACE_SEIZE said EPERM, and what to do about it.  */
static void explain_eperm(int pid, char *err, size_t len)
{
	char v[128];
	if (status_field(pid, 0, "TracerPid", v, sizeof v) && atoi(v) != 0) {
		char comm[64] = "?";
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/comm", atoi(v));
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(err, len, "pid %d is already traced by pid %d (%s): "
			 "only one tracer at a time; detach that debugger "
			 "first, or run 'heap' inside it", pid, atoi(v), comm);
		return;
	}
	bool cap = have_cap_sys_ptrace();
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope == 3) {
		snprintf(err, len, "pid %d: ptrace is disabled on this system "
			 "(kernel.yama.ptrace_scope = 3, until reboot); make a "
			 "core instead (gcore, or kill -ABRT)", pid);
		return;
	}
	if (!cap && scope == 2) {
		snprintf(err, len, "pid %d: kernel.yama.ptrace_scope = 2 lets "
			 "only CAP_SYS_PTRACE trace; run heapwalk as root", pid);
		return;
	}
	if (!cap && scope == 1) {
		snprintf(err, len, "pid %d: kernel.yama.ptrace_scope = 1 lets "
			 "a process trace only its own descendants; run "
			 "heapwalk as root (or with CAP_SYS_PTRACE), or set "
			 "'sysctl kernel.yama.ptrace_scope=0'", pid);
		return;
	}
	if (status_field(pid, 0, "Uid", v, sizeof v) && !cap &&
	    (uid_t)atoi(v) != geteuid()) {
		snprintf(err, len, "pid %d belongs to uid %d: run heapwalk as "
			 "that user or as root", pid, atoi(v));
		return;
	}
	if (cap) {
		/* Root (or CAP_SYS_PTRACE) and still refused: not a
		   question of users.  /proc/PID/exe, which the kernel guards
		   with the same ptrace check, tells whether it is this
		   process alone or all access.  */
		char path[64], target[16];
		snprintf(path, sizeof path, "/proc/%d/exe", pid);
		bool proc_too = readlink(path, target, sizeof target) < 0 &&
				errno == EACCES;
		snprintf(err, len, "pid %d: the kernel refuses to let it be "
			 "traced although heapwalk has CAP_SYS_PTRACE%s: a "
			 "security module (AppArmor, SELinux, Landlock), a "
			 "seccomp sandbox around heapwalk, or a protected "
			 "process (an init outside this container's reach); "
			 "make a core of it where it runs (gcore PID)", pid,
			 proc_too ? " (its /proc/PID/exe is refused too)" : "");
		return;
	}
	snprintf(err, len, "pid %d: not permitted to trace it (a setuid or "
		 "otherwise non-dumpable process?); run heapwalk as root", pid);
}

static struct task *find_task(struct tracer *tr, int tid)
{
	for (size_t i = 0; i < tr->ntasks; i++)
		if (tr->tasks[i].tid == tid)
			return &tr->tasks[i];
	return NULL;
}

/* Seize (and, if `interrupt`, stop) every thread not seized yet; returns
   how many were new, or -1 with err set.  */
static int seize_new(struct tracer *tr, bool interrupt)
{
	int pid = tr->t->live->pid;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d) {
		tr->exited = true;
		snprintf(tr->err, tr->errlen, "pid %d exited during the "
			 "attach", pid);
		return -1;
	}
	int added = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid <= 0 || find_task(tr, tid))
			continue;
		if (tr->ntasks == tr->cap) {
			size_t cap = tr->cap ? 2 * tr->cap : 16;
			struct task *n = realloc(tr->tasks, cap * sizeof *n);
			if (!n) {
				closedir(d);
				snprintf(tr->err, tr->errlen, "out of memory");
				return -1;
			}
			tr->tasks = n;
			tr->cap = cap;
		}
		if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACEEXEC) != 0) {
			int e = errno;
			if (e == ESRCH)
				continue;       /* exited meanwhile */
			/* A thread that has exited but is not reaped yet
			   refuses with EPERM: the threads of a process being
			   killed, a leader that ended with pthread_exit.
			   Nothing to stop there; not a question of rights.  */
			if (e == EPERM && hw_task_ended(pid, tid))
				continue;
			closedir(d);
			if (e == EPERM)
				explain_eperm(pid, tr->err, tr->errlen);
			else
				snprintf(tr->err, tr->errlen, "pid %d: "
					 "PTRACE_SEIZE of thread %d: %s", pid,
					 tid, strerror(e));
			return -1;
		}
		tr->tasks[tr->ntasks++] = (struct task){ tid, TASK_SEIZED, 0 };
		added++;
		if (interrupt && ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0 &&
		    errno == ESRCH)
			tr->tasks[tr->ntasks - 1].state = TASK_GONE;
	}
	closedir(d);
	return added;
}

/* Take one wait status of task k.  */
static void took_status(struct tracer *tr, struct task *k, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		k->state = TASK_GONE;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int event = status >> 16;
	int sig = WSTOPSIG(status);
	if (event == PTRACE_EVENT_EXEC)
		tr->execed = true;
	else if (event == 0)
		k->inject = sig;   /* a signal on its way in: give it back */
	k->state = TASK_STOPPED;
}

/* Take task k's stop if it has one to report (never blocks).  */
static void poll_stop(struct tracer *tr, struct task *k)
{
	int status;
	pid_t r = waitpid(k->tid, &status, __WALL | WNOHANG);
	if (r == k->tid)
		took_status(tr, k, status);
	else if (r < 0 && errno == ECHILD)
		k->state = TASK_GONE;
}

static void nap_us(long us)
{
	struct timespec nap = { 0, us * 1000 };
	nanosleep(&nap, NULL);
}

/* Wait until every seized thread stopped or the time is up.  */
static void wait_stops(struct tracer *tr, double deadline)
{
	for (;;) {
		bool pending = false;
		for (size_t i = 0; i < tr->ntasks; i++) {
			struct task *k = &tr->tasks[i];
			if (k->state != TASK_SEIZED)
				continue;
			poll_stop(tr, k);
			if (k->state == TASK_SEIZED)
				pending = true;
		}
		if (!pending || tr->execed || cancelled(tr) ||
		    now_ms() >= deadline)
			return;
		nap_us(200);
	}
}

static void read_regs(struct tracer *tr, struct task *k)
{
	struct hw_target *t = tr->t;
	const struct hw_arch *a = t->arch;
	if (t->nthreads >= tr->ntasks)
		return;
	struct hw_thread *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof *th);
	th->tid = k->tid;
	th->signo = k->inject;
	uint64_t regs[HW_MAX_REGS];
	struct iovec io = { regs, sizeof regs };
	if (ptrace(PTRACE_GETREGSET, k->tid, (void *)NT_PRSTATUS, &io) == 0)
		hw_thread_set_regs(th, a, regs, io.iov_len / 8);
	if (a->tp_reg < 0 && a->tp_note) {
		uint64_t tp = 0;
		struct iovec tio = { &tp, sizeof tp };
		if (ptrace(PTRACE_GETREGSET, k->tid, (void *)(uintptr_t)a->tp_note,
			   &tio) == 0 && tio.iov_len == sizeof tp) {
			th->tp = tp;
			th->has_tp = true;
		}
	}
}

static void detach_one(struct task *k)
{
	if (k->state == TASK_STOPPED &&
	    ptrace(PTRACE_DETACH, k->tid, 0, (void *)(intptr_t)k->inject) == 0)
		k->state = TASK_GONE;
	else if (k->state == TASK_SEIZED)
		k->state = TASK_LOST;   /* released when the tracer ends */
}

static void detach_all(struct tracer *tr)
{
	for (size_t i = 0; i < tr->ntasks; i++)
		detach_one(&tr->tasks[i]);
}

/* Threads still not stopped: named in t->limit, counted in t->live.  */
static void name_unstoppable(struct tracer *tr)
{
	struct hw_target *t = tr->t;
	size_t used = 0;
	for (size_t i = 0; i < tr->ntasks; i++) {
		struct task *k = &tr->tasks[i];
		if (k->state != TASK_SEIZED && k->state != TASK_LOST)
			continue;
		char st[64] = "?";
		status_field(t->live->pid, k->tid, "State", st, sizeof st);
		if (t->live->unstoppable++ == 0)
			used = (size_t)snprintf(t->limit, sizeof t->limit,
						"thread(s) that did not stop "
						"within %d ms, registers "
						"unknown: %d (%s)",
						tr->opts->stop_wait_ms, k->tid,
						st);
		else if (used < sizeof t->limit)
			used += (size_t)snprintf(t->limit + used,
						 sizeof t->limit - used,
						 ", %d (%s)", k->tid, st);
	}
}

static bool stop_all(struct tracer *tr)
{
	double deadline = now_ms() + tr->opts->stop_wait_ms;
	/* Stopped threads cannot make new ones, so this ends; the bound
	   is for a process that keeps outrunning us.  */
	for (int pass = 0; pass < 1000; pass++) {
		int added = seize_new(tr, true);
		if (added < 0)
			return false;
		wait_stops(tr, deadline);
		if (tr->execed || cancelled(tr))
			return false;
		if (added == 0)
			break;
	}
	if (!find_task(tr, tr->t->live->pid) && tr->ntasks == 0) {
		snprintf(tr->err, tr->errlen, "pid %d exited during the "
			 "attach", tr->t->live->pid);
		tr->exited = true;
		return false;
	}
	return true;
}

static void collect_threads(struct tracer *tr)
{
	struct hw_target *t = tr->t;
	t->threads = calloc(tr->ntasks ? tr->ntasks : 1, sizeof *t->threads);
	if (!t->threads)
		return;
	t->nthreads = 0;
	/* The main thread first, as a core lists the crashing one first.  */
	struct task *main_task = find_task(tr, t->live->pid);
	if (main_task && main_task->state == TASK_STOPPED)
		read_regs(tr, main_task);
	for (size_t i = 0; i < tr->ntasks; i++)
		if (&tr->tasks[i] != main_task &&
		    tr->tasks[i].state == TASK_STOPPED)
			read_regs(tr, &tr->tasks[i]);
}

static void fail_reason(struct tracer *tr)
{
	int pid = tr->t->live->pid;
	if (tr->execed)
		snprintf(tr->err, tr->errlen, "pid %d ran execve() during the "
			 "attach: it is another program now; try again", pid);
	else if (cancelled(tr))
		snprintf(tr->err, tr->errlen, "interrupted; pid %d was "
			 "released", pid);
	else if (!tr->err[0])
		snprintf(tr->err, tr->errlen, "pid %d: attach failed", pid);
}

/* The default: everything stopped at once, the snapshot taken, all let
   go.  */
static void run_stopped(struct tracer *tr)
{
	double t0 = now_ms();
	bool ok = stop_all(tr);
	if (ok) {
		name_unstoppable(tr);
		collect_threads(tr);
		if (!tr->t->threads) {
			snprintf(tr->err, tr->errlen, "out of memory");
			ok = false;
		}
	}
	if (ok && !tr->while_stopped(tr->t, tr->arg, tr->err, tr->errlen))
		ok = false;
	detach_all(tr);
	tr->t->live->stopped_ms = now_ms() - t0;
	if (!ok) {
		fail_reason(tr);
		tr->st = HW_BAD_TARGET;
	}
}

/* --no-stop: one thread at a time, only for its registers (its thread
   pointer never changes); the process as a whole keeps running.  */
static void run_one_by_one(struct tracer *tr)
{
	struct hw_target *t = tr->t;
	double longest = 0;
	if (seize_new(tr, false) < 0) {
		tr->st = HW_BAD_TARGET;
		return;
	}
	/* Seized threads run on; each is stopped on its own and let go at
	   once, so no two are stopped together.  */
	t->threads = calloc(tr->ntasks ? tr->ntasks : 1, sizeof *t->threads);
	for (size_t i = 0; i < tr->ntasks; i++) {
		struct task *k = &tr->tasks[i];
		double t0 = now_ms();
		if (k->state == TASK_SEIZED &&
		    ptrace(PTRACE_INTERRUPT, k->tid, 0, 0) != 0)
			k->state = TASK_GONE;
		double deadline = t0 + tr->opts->stop_wait_ms;
		while (k->state == TASK_SEIZED && now_ms() < deadline &&
		       !cancelled(tr)) {
			poll_stop(tr, k);
			if (k->state == TASK_SEIZED)
				nap_us(100);
		}
		if (k->state == TASK_STOPPED && t->threads)
			read_regs(tr, k);
		detach_one(k);
		if (now_ms() - t0 > longest)
			longest = now_ms() - t0;
	}
	name_unstoppable(tr);
	detach_all(tr);
	t->live->stopped_ms = longest;
	if (!t->threads || cancelled(tr) || tr->execed) {
		fail_reason(tr);
		tr->st = HW_BAD_TARGET;
		return;
	}
	if (!tr->while_stopped(t, tr->arg, tr->err, tr->errlen))
		tr->st = HW_BAD_TARGET;
}

static void *tracer_main(void *arg)
{
	struct tracer *tr = arg;
	if (tr->opts->no_stop)
		run_one_by_one(tr);
	else
		run_stopped(tr);
	return NULL;
}

enum hw_status hw_ptrace_run(struct hw_target *t,
			     const struct hw_ptrace_opts *opts,
			     bool (*while_stopped)(struct hw_target *t,
						   void *arg, char *err,
						   size_t errlen),
			     void *arg, char *err, size_t errlen)
{
	struct tracer tr = {
		.t = t, .opts = opts, .while_stopped = while_stopped,
		.arg = arg, .st = HW_OK, .err = err, .errlen = errlen,
	};
	err[0] = '\0';
	pthread_t tid;
	/* Its own thread, so that its end releases every tracee (ptrace.h).
	   Signals stay with the caller's threads: the tracer polls the
	   cancel flag instead.  */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&tid, NULL, tracer_main, &tr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the tracer thread: %s",
			 strerror(rc));
		return HW_BAD_TARGET;
	}
	pthread_join(tid, NULL);
	free(tr.tasks);
	return tr.st;
}
