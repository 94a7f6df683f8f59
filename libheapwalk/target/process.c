/* process.c - the live-process backend: /proc and ptrace.
 *
 * Mappings come from /proc/PID/maps, auxv from /proc/PID/auxv, memory
 * from process_vm_readv (one system call per block, no stop needed),
 * falling back to /proc/PID/mem.  Every readable mapping is a lazy region
 * of the target's cache.
 *
 * The default view is a consistent one: while ptrace.c holds every thread
 * stopped, every writable mapping is copied into the cache (untouched
 * anonymous pages skipped through /proc/PID/pagemap), then the threads go
 * and those regions are frozen, so nothing read later can mix with what
 * the program wrote since.  Read-only mappings (code, .rodata) do not
 * change and are read on demand.  Writable memory is all of the heap, and
 * also all that the leak analysis will scan for roots.
 *
 * With no_stop nothing is frozen: every read sees the process as it is at
 * that moment, and the walk must (and does) survive what it sees.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "cache.h"
#include "process.h"
#include "ptrace.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

struct proc_priv {
	int mem_fd;              /* /proc/PID/mem, or -1 */
	int pagemap_fd;          /* /proc/PID/pagemap, or -1 */
	bool no_vm_readv;        /* process_vm_readv refused: use mem_fd */
	uint64_t page;           /* its page size (pagemap's unit) */
	char **paths;            /* one per file, owned */
	uint8_t *auxv;
	char *exe;
	char name[32];           /* "pid N", for messages */
	struct hw_live live;
	const volatile sig_atomic_t *cancel;
};

static size_t proc_read(struct hw_target *t, uint64_t addr, void *buf,
			size_t len)
{
	struct proc_priv *p = t->priv;
	if (!p->no_vm_readv) {
		struct iovec local = { buf, len };
		struct iovec remote = { (void *)(uintptr_t)addr, len };
		ssize_t n = process_vm_readv(p->live.proc_pid, &local, 1, &remote,
					     1, 0);
		if (n >= 0)
			return (size_t)n;
		/* ESRCH: the thread read through (proc_pid) has ended, but
		   /proc/PID/mem, opened before, reads the memory for as long
		   as any thread of the process lives.  */
		if (errno != ENOSYS && errno != EPERM && errno != ESRCH)
			return 0;
		p->no_vm_readv = true;
	}
	size_t done = 0;
	while (p->mem_fd >= 0 && done < len) {
		ssize_t n = pread(p->mem_fd, (uint8_t *)buf + done, len - done,
				  (off_t)(addr + done));
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done;
}

/* Bits 63 (present) and 62 (swapped) of each /proc/PID/pagemap entry.  */
static bool proc_present(struct hw_target *t, uint64_t addr, size_t npages,
			 uint8_t *present)
{
	struct proc_priv *p = t->priv;
	uint64_t ent[64];
	if (p->pagemap_fd < 0 || npages > 64)
		return false;
	off_t off = (off_t)(addr / p->page * 8);
	if (pread(p->pagemap_fd, ent, npages * 8, off) != (ssize_t)(npages * 8))
		return false;
	for (size_t i = 0; i < npages; i++)
		present[i] = (ent[i] >> 62 & 3) != 0;
	return true;
}

static void proc_close(struct hw_target *t)
{
	struct proc_priv *p = t->priv;
	if (p) {
		if (p->mem_fd >= 0)
			close(p->mem_fd);
		if (p->pagemap_fd >= 0)
			close(p->pagemap_fd);
		for (size_t i = 0; p->paths && i < t->nfiles; i++)
			free(p->paths[i]);
		free(p->paths);
		free(p->auxv);
		free(p->exe);
		free(p);
	}
	free(t->regions);
	free(t->threads);
	free(t->files);
	free(t);
}

static const struct hw_target_ops process_ops = {
	.name = "process",
	.read = proc_read,
	.present = proc_present,
	.close = proc_close,
};

static uint16_t host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#else
	return 0;
#endif
}

/* The whole of a /proc file (they have no size), or NULL.  */
static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			uint8_t *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

static bool add_file(struct hw_target *t, struct proc_priv *p, size_t *cap,
		     uint64_t start, uint64_t end, uint64_t offset,
		     const char *path)
{
	if (t->nfiles == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct hw_mapped_file *f = realloc(t->files, ncap * sizeof *f);
		char **ps = realloc(p->paths, ncap * sizeof *ps);
		if (f)
			t->files = f;
		if (ps)
			p->paths = ps;
		if (!f || !ps)
			return false;
		*cap = ncap;
	}
	char *copy = strdup(path);
	if (!copy)
		return false;
	p->paths[t->nfiles] = copy;
	t->files[t->nfiles++] = (struct hw_mapped_file){
		.start = start, .end = end, .offset = offset, .path = copy,
		.verified = true,   /* the very file that runs */
	};
	return true;
}

/* /proc/PID/maps into regions and files.  */
static bool read_maps(struct hw_target *t, struct proc_priv *p, char *err,
		      size_t errlen)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", p->live.proc_pid);
	size_t len = 0;
	char *text = (char *)slurp(path, &len);
	if (!text) {
		snprintf(err, errlen, "pid %d: cannot read %s: %s",
			 p->live.pid, path, strerror(errno));
		return false;
	}
	size_t cap = 0, fcap = 0;
	bool ok = true;
	for (char *line = text; ok && line < text + len; ) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		if (!nl)
			break;
		*nl = '\0';
		uint64_t lo, hi, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
			   " %*x:%*x %*u %n", &lo, &hi, perms, &off,
			   &name_at) < 4 || hi <= lo || strlen(perms) < 4) {
			line = nl + 1;
			continue;
		}
		const char *name = name_at ? line + name_at : "";
		line = nl + 1;
		if (hw_kernel_mapping(name))
			continue;
		if (t->nregions == cap) {
			cap = cap ? 2 * cap : 256;
			struct hw_region *r = realloc(t->regions,
						      cap * sizeof *r);
			if (!r) {
				ok = false;
				break;
			}
			t->regions = r;
		}
		struct hw_region *r = &t->regions[t->nregions];
		memset(r, 0, sizeof *r);
		r->start = lo;
		r->end = hi;
		r->prot = (perms[0] == 'r' ? HW_PROT_R : 0) |
			  (perms[1] == 'w' ? HW_PROT_W : 0) |
			  (perms[2] == 'x' ? HW_PROT_X : 0);
		r->shared = perms[3] == 's';
		r->file = -1;
		if (name[0] == '/') {
			char file[4096];
			snprintf(file, sizeof file, "%s", name);
			char *del = strstr(file, " (deleted)");
			if (del && del[10] == '\0')
				*del = '\0';
			r->file = (int32_t)t->nfiles;
			ok = add_file(t, p, &fcap, lo, hi, off, file);
		}
		t->nregions++;
		if (ok && (r->prot & HW_PROT_R))
			ok = hw_cache_add_region(t->cache, r);
	}
	free(text);
	if (!ok)
		snprintf(err, errlen, "out of memory");
	return ok;
}

/* The executable's ELF header: its architecture, and whether heapwalk
   can read this process at all.  */
static bool check_exe(struct hw_target *t, struct proc_priv *p, char *err,
		      size_t errlen)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/exe", p->live.proc_pid);
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = '\0';
		char *del = strstr(buf, " (deleted)");
		if (del && del[10] == '\0')
			*del = '\0';
		p->exe = strdup(buf);
		t->exe = p->exe;
	}
	unsigned char eh[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool have = fd >= 0 && pread(fd, eh, sizeof eh, 0) == (ssize_t)sizeof eh;
	if (fd >= 0)
		close(fd);
	t->arch = hw_arch_by_machine(host_machine());
	if (!have || memcmp(eh, ELFMAG, SELFMAG) != 0)
		return t->arch != NULL;   /* ptrace will say if it is ours */
	uint16_t machine;
	memcpy(&machine, eh + 18, 2);
	if (eh[EI_CLASS] != ELFCLASS64) {
		snprintf(err, errlen, "pid %d: 32-bit processes are not "
			 "supported", p->live.pid);
		return false;
	}
	if (machine != host_machine() || !t->arch) {
		snprintf(err, errlen, "pid %d: its executable is for another "
			 "architecture (e_machine %u)", p->live.pid, machine);
		return false;
	}
	const char *base = p->exe ? strrchr(p->exe, '/') : NULL;
	if (base && strncmp(base + 1, "qemu-", 5) == 0)
		snprintf(t->limit, sizeof t->limit, "pid %d is the emulator "
			 "%s: ptrace sees qemu's threads, not its guest's, so "
			 "the guest's per-thread caches have no threads (run "
			 "the guest under gdb: qemu -g PORT)", p->live.pid,
			 base + 1);
	return true;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23     /* Linux 5.14 */
#endif

/* Make [p, p + len) present in our memory, zeroed.  */
static void populate(uint8_t *p, size_t len)
{
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return;
	for (size_t off = 0; off < len; off += 4096)   /* an older kernel */
		((volatile uint8_t *)p)[off] = 0;
}

/* Before the stop: for every writable private mapping the process has
   now, a reservation with the pages it has present (pagemap) made
   present in ours, at most `budget` bytes in all.  Getting fresh pages
   is most of what a snapshot costs while the process is stopped (the
   kernel zeroing them, and on a VM the host backing them first: 82% of
   a 4 s stop of a 1.6 GiB heap); done here, the process still runs.
   Only reads /proc/PID/maps and pagemap: the process is not touched.  */
static void prepare_snapshot(struct hw_target *t, struct proc_priv *p,
			     uint64_t budget)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", p->live.proc_pid);
	FILE *f = p->pagemap_fd >= 0 ? fopen(path, "re") : NULL;
	uint64_t ent[512];
	while (f && budget && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 ||
		    hi <= lo || strcmp(perms, "rw-p") != 0 ||
		    (lo | hi) % p->page)
			continue;
		uint8_t *base = hw_cache_prepare(t->cache, lo, hi - lo);
		uint64_t npages = (hi - lo) / p->page;
		for (uint64_t i = 0; base && i < npages && budget; ) {
			size_t n = npages - i < 512 ? (size_t)(npages - i) : 512;
			off_t off = (off_t)((lo / p->page + i) * 8);
			if (pread(p->pagemap_fd, ent, n * 8, off) !=
			    (ssize_t)(n * 8))
				break;
			for (size_t k = 0; k < n && budget; ) {
				size_t j = k;
				while (j < n && (ent[j] >> 62 & 3))
					j++;
				uint64_t bytes = (j - k) * p->page;
				if (bytes > budget)
					bytes = budget / p->page * p->page;
				if (bytes) {
					populate(base + (i + k) * p->page,
						 (size_t)bytes);
					budget -= bytes;
				}
				k = j < n ? j + 1 : j;
			}
			i += n;
		}
	}
	if (f)
		fclose(f);
}

/* Copy every writable mapping while the threads are stopped.  */
static bool snapshot(struct hw_target *t, void *arg, char *err,
		     size_t errlen)
{
	struct proc_priv *p = arg;
	/* The map is read now, with every thread stopped: read before, it
	   could miss a heap that grew or a mapping made meanwhile.  */
	if (!read_maps(t, p, err, errlen))
		return false;
	for (size_t i = 0; i < t->nregions; i++) {
		struct hw_region *r = &t->regions[i];
		if (!r->lazy || !(r->prot & HW_PROT_W))
			continue;
		if (!hw_cache_fill(t, r, p->cancel)) {
			snprintf(err, errlen, "interrupted; pid %d was "
				 "released", p->live.pid);
			return false;
		}
	}
	return true;
}

/* --no-stop: the map as it is now; everything is read live later.  */
static bool maps_only(struct hw_target *t, void *arg, char *err,
		      size_t errlen)
{
	return read_maps(t, arg, err, errlen);
}

/* The state letter and flags of /proc/PID[/task/TID]/stat, and its
   command name (made printable) when comm is not NULL; 0 when it cannot
   be read (gone).  */
static char stat_state(int pid, int tid, unsigned long *flags, char *comm,
		       size_t commlen)
{
	char path[64], buf[1024];
	if (tid)
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp session tty tpgid flags ...": comm
	   may hold anything, ')' too; the fields follow the last one.  */
	char *close_paren = strrchr(buf, ')'), *open_paren = strchr(buf, '(');
	if (!close_paren || !open_paren || open_paren > close_paren)
		return 0;
	char state = 0;
	if (sscanf(close_paren + 1, " %c %*d %*d %*d %*d %*d %lu", &state,
		   flags) != 2)
		return 0;
	if (comm) {
		size_t clen = (size_t)(close_paren - open_paren - 1);
		snprintf(comm, commlen, "%.*s",
			 (int)(clen < commlen - 1 ? clen : commlen - 1),
			 open_paren + 1);
		for (char *c = comm; *c; c++)
			if ((unsigned char)*c < 0x20 ||
			    (unsigned char)*c >= 0x7f)
				*c = '?';
	}
	return state;
}

bool hw_task_ended(int pid, int tid)
{
	unsigned long flags;
	char st = stat_state(pid, tid, &flags, NULL, 0);
	return !st || st == 'Z' || st == 'X';
}

/* A thread of pid that has not ended, or 0.  */
static int running_thread(int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int found = 0;
	struct dirent *de;
	/* (Bounded: a process has as many threads as the kernel lets it.)  */
	while (!found && (de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid > 0 && !hw_task_ended(pid, tid))
			found = tid;
	}
	closedir(d);
	return found;
}

/* Is a SIGKILL pending for the whole process (/proc/PID/status's
   ShdPnd)?  kill(2) of a process puts it there, and it stays until the
   last thread is gone, while the threads tear down one by one: the
   main thread may have dropped its memory (its maps read empty) before
   another has begun to exit.  SIGKILL cannot be blocked or ignored, so
   pending means dying.  */
static bool kill_pending(int pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *line = strstr(buf, "\nShdPnd:");
	unsigned long long mask;
	if (!line || sscanf(line + 8, " %llx", &mask) != 1)
		return false;
	return mask & (1ull << (SIGKILL - 1));
}

bool hw_process_gone(int pid)
{
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	return kill_pending(pid) || running_thread(pid) == 0;
}

/* A pid that names no process heapwalk can read, whoever runs it: the
   kernel's own threads, a zombie, heapwalk itself.  Said plainly, before
   ptrace's refusal would make it sound like a question of rights.
   Otherwise *proc_pid is whose /proc entries show its memory: pid, or,
   when its main thread has ended and others run on, one of those.  */
static bool not_a_heap(int pid, int *proc_pid, char *err, size_t errlen)
{
	*proc_pid = pid;
	if (pid == getpid()) {
		snprintf(err, errlen, "pid %d is heapwalk itself: it cannot "
			 "stop itself to read its own heap; run it from "
			 "another process, or make a core (gcore %d)", pid,
			 pid);
		return true;
	}
	char comm[64];
	unsigned long flags = 0;
	char state = stat_state(pid, 0, &flags, comm, sizeof comm);
	if (state == 'Z' || state == 'X') {
		/* The main thread's pthread_exit leaves it a zombie while
		   the others run: their memory is the process's.  */
		int tid = running_thread(pid);
		if (tid) {
			*proc_pid = tid;
			return false;
		}
		snprintf(err, errlen, "pid %d (%s) is a zombie: it has exited "
			 "and holds no memory any more (its parent has not "
			 "reaped it yet)", pid, comm);
		return true;
	}
	if (state && (flags & 0x00200000)) {   /* PF_KTHREAD */
		snprintf(err, errlen, "pid %d (%s) is a kernel thread: it has "
			 "no user-space memory and no heap", pid, comm);
		return true;
	}
	return false;
}

enum hw_status hw_process_open(int pid, const struct hw_process_opts *opts,
			       struct hw_target **out, char *err,
			       size_t errlen)
{
	*out = NULL;
	if (pid <= 0) {
		snprintf(err, errlen, "--pid %d: not a process id", pid);
		return HW_USAGE;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		snprintf(err, errlen, "pid %d: no such process", pid);
		return HW_BAD_TARGET;
	}
	int proc_pid;
	if (not_a_heap(pid, &proc_pid, err, errlen))
		return HW_BAD_TARGET;
	struct hw_target *t = calloc(1, sizeof *t);
	struct proc_priv *p = calloc(1, sizeof *p);
	if (!t || !p) {
		free(t);
		free(p);
		snprintf(err, errlen, "out of memory");
		return HW_BAD_TARGET;
	}
	t->ops = &process_ops;
	t->priv = p;
	p->mem_fd = p->pagemap_fd = -1;
	p->live.pid = pid;
	p->live.proc_pid = proc_pid;
	p->live.no_stop = opts->no_stop;
	p->cancel = opts->cancel;
	t->live = &p->live;
	t->is_process = true;
	snprintf(p->name, sizeof p->name, "pid %d", pid);
	t->path = p->name;
	t->files_from = "maps";
	enum hw_status st = HW_BAD_TARGET;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", proc_pid);
	p->auxv = slurp(path, &t->auxv_len);
	t->auxv = p->auxv;
	p->page = (uint64_t)sysconf(_SC_PAGESIZE);
	hw_auxv_get(t, AT_PAGESZ, &p->page);
	if (p->page < 4096 || (p->page & (p->page - 1)))
		p->page = 4096;
	t->cache = hw_cache_new(opts->cache_max, p->page);
	if (!t->cache) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!check_exe(t, p, err, errlen))
		goto fail;
	snprintf(path, sizeof path, "/proc/%d/mem", proc_pid);
	p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof path, "/proc/%d/pagemap", proc_pid);
	p->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	struct hw_ptrace_opts po = {
		.no_stop = opts->no_stop,
		.stop_wait_ms = opts->stop_wait_ms > 0 ? opts->stop_wait_ms
						       : 1000,
		.cancel = opts->cancel,
	};
	if (!opts->no_stop)
		prepare_snapshot(t, p, opts->cache_max);
	st = hw_ptrace_run(t, &po, opts->no_stop ? maps_only : snapshot, p,
			   err, errlen);
	hw_cache_unprepare(t->cache);
	if (!opts->no_stop) {
		/* What was not copied while the threads were stopped must
		   not be read now: it would not fit with the rest.  */
		for (size_t i = 0; i < t->nregions; i++)
			if (t->regions[i].prot & HW_PROT_W)
				hw_cache_freeze(t->cache, &t->regions[i]);
		p->live.snapshot_bytes = hw_cache_bytes(t->cache);
	}
	if (st != HW_OK)
		goto fail;
	if (t->nthreads == 0) {
		snprintf(err, errlen, "pid %d exited during the attach", pid);
		st = HW_BAD_TARGET;
		goto fail;
	}
	*out = t;
	return HW_OK;
fail:
	hw_target_close(t);
	return st == HW_OK ? HW_BAD_TARGET : st;
}
