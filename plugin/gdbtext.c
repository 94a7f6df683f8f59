/* gdbtext.c - read what the gdb script wrote and what gdb printed.  */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdbtext.h"

/* A capture larger than this is not gdb's map of one process.  */
#define MAX_FILE (64u << 20)
#define MAX_REGIONS (1u << 20)
#define MAX_THREADS (1u << 20)

/* The whole of file `name` in dir, NUL-terminated, without the NUL bytes
   `dump binary value` writes after each string; NULL when it is
   missing.  */
static char *slurp(int dir, const char *name, size_t *len)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		if (n == cap) {
			char *b = cap < MAX_FILE ? realloc(buf, 2 * cap + 1) : NULL;
			if (!b)
				break;
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
	if (!buf)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i] != '\0')
			buf[k++] = buf[i];
	buf[k] = '\0';
	*len = k;
	return buf;
}

/* MI wraps console output as ~"escaped text" records, one per write;
   join them back into plain text, in place.  Plain text is left as is.  */
static void unwrap_mi(char *text)
{
	if (strncmp(text, "~\"", 2) != 0 && strncmp(text, "=", 1) != 0 &&
	    strncmp(text, "^", 1) != 0 && strncmp(text, "&\"", 2) != 0)
		return;
	char *out = text;
	for (char *line = text; *line; ) {
		char *nl = strchr(line, '\n');
		char *end = nl ? nl : line + strlen(line);
		if (line[0] == '~' && line[1] == '"') {
			for (char *c = line + 2; c < end && *c != '"'; c++) {
				if (*c != '\\' || c + 1 >= end) {
					*out++ = *c;
					continue;
				}
				c++;
				switch (*c) {
				case 'n': *out++ = '\n'; break;
				case 't': *out++ = '\t'; break;
				case '\\': *out++ = '\\'; break;
				case '"': *out++ = '"'; break;
				default:
					if (*c >= '0' && *c <= '7') {
						int v = 0, k = 0;
						while (k < 3 && c < end &&
						       *c >= '0' && *c <= '7') {
							v = v * 8 + (*c++ - '0');
							k++;
						}
						c--;
						*out++ = (char)(v ? v : ' ');
					} else {
						*out++ = *c;
					}
				}
			}
		}
		line = nl ? nl + 1 : end;
	}
	*out = '\0';
}

static const char *own(struct gdb_view *v, const char *s, size_t n)
{
	char **no = realloc(v->owned, (v->nowned + 1) * sizeof *no);
	char *copy = no ? strndup(s, n) : NULL;
	if (no)
		v->owned = no;
	if (!copy) {
		v->oom = true;
		return NULL;
	}
	v->owned[v->nowned++] = copy;
	return copy;
}

struct hw_memory_region *gdb_view_new_region(struct gdb_view *v)
{
	if (v->nregions == v->cap_regions) {
		size_t cap = v->cap_regions ? 2 * v->cap_regions : 256;
		struct hw_memory_region *r = cap <= MAX_REGIONS
			? realloc(v->regions, cap * sizeof *r) : NULL;
		if (!r) {
			v->oom = true;
			return NULL;
		}
		v->regions = r;
		v->cap_regions = cap;
	}
	struct hw_memory_region *r = &v->regions[v->nregions++];
	memset(r, 0, sizeof *r);
	return r;
}

static struct hw_memory_thread *thread_numbered(struct gdb_view *v, int num,
						int **nums)
{
	for (size_t i = 0; i < v->nthreads; i++)
		if ((*nums)[i] == num)
			return &v->threads[i];
	if (v->nthreads == v->cap_threads) {
		size_t cap = v->cap_threads ? 2 * v->cap_threads : 64;
		struct hw_memory_thread *t = cap <= MAX_THREADS
			? realloc(v->threads, cap * sizeof *t) : NULL;
		if (t)
			v->threads = t;
		int *n = t ? realloc(*nums, cap * sizeof *n) : NULL;
		if (!n) {
			v->oom = true;
			return NULL;
		}
		*nums = n;
		v->cap_threads = cap;
	}
	(*nums)[v->nthreads] = num;
	struct hw_memory_thread *t = &v->threads[v->nthreads++];
	memset(t, 0, sizeof *t);
	return t;
}

/* Each line of text in turn, NUL-terminated in place.  */
#define FOR_EACH_LINE(line, text) \
	for (char *line = (text), *line##_nl; line && *line; \
	     line = line##_nl ? line##_nl + 1 : NULL) \
		if ((line##_nl = strchr(line, '\n')) ? (*line##_nl = '\0', 1) : 1)

static char *skip_space(char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "siginfo NUM SIGNO ERRNO CODE WORD": thread NUM's siginfo, the
   union's first word (si_addr; si_pid and si_uid on little-endian) as
   one number.  The lowest-numbered thread's is kept: on a core it is
   the first NT_SIGINFO, the one the tool reads.  */
static void read_siginfo(struct gdb_view *v, const char *rest)
{
	int num, signo, err, code;
	uint64_t word;
	if (sscanf(rest, "%d %d %d %d %" SCNx64, &num, &signo, &err, &code,
		   &word) != 5 || num <= 0 || (v->sig_num && num > v->sig_num))
		return;
	int32_t head[3] = { signo, err, code };
	memset(v->siginfo, 0, sizeof v->siginfo);
	memcpy(v->siginfo, head, sizeof head);
	memcpy(v->siginfo + 16, &word, sizeof word);   /* little-endian */
	v->sig_num = num;
}

/* ctx: the script's own lines.  */
static void read_ctx(struct gdb_view *v, char *text, int **nums)
{
	FOR_EACH_LINE(line, text) {
		char word[16];
		int at = 0, num;
		if (sscanf(line, "%15s %n", word, &at) != 1)
			continue;
		char *rest = line + at;
		size_t n = strlen(rest);
		while (n && (rest[n - 1] == ' ' || rest[n - 1] == '\r'))
			rest[--n] = '\0';
		if (!strcmp(word, "arch"))
			v->mem.machine = own(v, rest, n);
		else if (!strcmp(word, "ptrsize"))
			v->ptr_size = (unsigned)strtoul(rest, NULL, 0);
		else if (!strcmp(word, "current"))
			v->current = atoi(rest);
		else if (!strcmp(word, "exitsignal"))
			v->exit_signal = atoi(rest);
		else if (!strcmp(word, "siginfo"))
			read_siginfo(v, rest);
		else if (!strcmp(word, "sysroot"))
			v->sysroot = own(v, rest, n);
		else if (!strcmp(word, "debugdir"))
			v->debugdir = own(v, rest, n);
		else if (!strcmp(word, "thread") &&
			 sscanf(rest, "%d", &num) == 1) {
			struct hw_memory_thread *t = thread_numbered(v, num, nums);
			uint64_t sp, pc, tp;
			char *p;
			if (!t)
				continue;
			if ((p = strstr(rest, " sp ")) &&
			    sscanf(p + 4, "%" SCNx64, &sp) == 1)
				t->sp = sp;
			if ((p = strstr(rest, " pc ")) &&
			    sscanf(p + 4, "%" SCNx64, &pc) == 1)
				t->pc = pc;
			if ((p = strstr(rest, " tp ")) &&
			    sscanf(p + 4, "%" SCNx64, &tp) == 1) {
				t->tp = tp;
				t->has_tp = true;
			}
		} else if (!strcmp(word, "regs") &&
			   sscanf(rest, "%d %n", &num, &at) == 1) {
			/* "regs N v0 v1 ...": thread N's general registers,
			   in the kernel's gregset order.  */
			struct hw_memory_thread *t = thread_numbered(v, num, nums);
			const char *p = rest + at;
			int used;
			uint64_t val;
			while (t && t->nregs < HW_MEMORY_MAX_REGS &&
			       sscanf(p, "%" SCNx64 "%n", &val, &used) == 1) {
				t->regs[t->nregs++] = val;
				p += used;
			}
		}
	}
}

/* "Exec file: `PATH', file type ..." -> PATH.  */
static const char *quoted_path(struct gdb_view *v, char *line)
{
	char *open = strchr(line, '`');
	char *close = open ? strstr(open, "', file type") : NULL;
	return close ? own(v, open + 1, (size_t)(close - open - 1)) : NULL;
}

/* A core's "[N] 0x0->0x110 at 0xd04: .reg/32102 HAS_CONTENTS": where
   thread 32102's registers are in the file.  */
static void read_reg_note(struct gdb_view *v, char *p)
{
	uint64_t at;
	int tid, end = 0;
	if (*p != '[' || !(p = strchr(p, ']')) ||
	    sscanf(p + 1, " %*x->%*x at %" SCNx64 ": .reg/%d%n", &at, &tid,
		   &end) != 2 || !end || (p[1 + end] != ' ' && p[1 + end]) ||
	    tid <= 0)
		return;
	if (v->nreg_notes == v->cap_reg_notes) {
		size_t cap = v->cap_reg_notes ? 2 * v->cap_reg_notes : 64;
		struct reg_note *r = cap <= MAX_THREADS
			? realloc(v->reg_notes, cap * sizeof *r) : NULL;
		if (!r)
			return;   /* only a fallback's: not worth failing */
		v->reg_notes = r;
		v->cap_reg_notes = cap;
	}
	v->reg_notes[v->nreg_notes++] = (struct reg_note){ tid, at };
}

/* Append {lo, hi, at} to a list of a core's segments (*v, *n of *cap).
   Not worth failing for: without memory the segment is left out.  */
static void add_segment(struct core_segment **v, size_t *n, size_t *cap,
			uint64_t lo, uint64_t hi, uint64_t at)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct core_segment *c = ncap <= MAX_REGIONS
			? realloc(*v, ncap * sizeof *c) : NULL;
		if (!c)
			return;
		*v = c;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct core_segment){ lo, hi, at };
}

/* maintenance info sections: the executable's name; a core's name and
   its segments (loadN), writable unless READONLY.  */
static void read_sections(struct gdb_view *v, char *text)
{
	bool in_core = false;
	FOR_EACH_LINE(line, text) {
		if (!strncmp(line, "Exec file: ", 11)) {
			v->mem.exe = quoted_path(v, line);
			in_core = false;
			continue;
		}
		if (!strncmp(line, "Core file: ", 11)) {
			v->mem.core = quoted_path(v, line);
			in_core = true;
			continue;
		}
		uint64_t lo, hi, off;
		int at = 0;
		char *p = skip_space(line);
		if (in_core)
			read_reg_note(v, p);
		if (!in_core || *p != '[' || !(p = strchr(p, ']')) ||
		    sscanf(p + 1, " %" SCNx64 "->%" SCNx64 " at %" SCNx64
			   ": %n", &lo, &hi, &off, &at) < 3 || !at ||
		    strncmp(p + 1 + at, "load", 4))
			continue;
		struct hw_memory_region *r = gdb_view_new_region(v);
		if (!r)
			return;
		r->start = lo;
		r->end = hi;
		r->prot = HW_MEM_R | (strstr(p, " READONLY") ? 0 : HW_MEM_W) |
			  (strstr(p, " CODE") ? HW_MEM_X : 0);
		/* With contents: gdb reads them from the core file at
		   `off` (coremap.c maps them); writable without: a hole.  */
		if (strstr(p, " HAS_CONTENTS") && hi > lo)
			add_segment(&v->core_segs, &v->ncore_segs,
				    &v->cap_core_segs, lo, hi, off);
		else if (!strstr(p, " READONLY") && hi > lo)
			add_segment(&v->core_holes, &v->ncore_holes,
				    &v->cap_core_holes, lo, hi, 0);
	}
}

/* A core's file mapping [lo, hi) at file offset off: the parts of it
   that no segment of the core holds (of a read-only mapping a kernel
   core keeps the first page at most, gdb's gcore none) become regions
   of their own, read-only and named, which gdb reads from the file it
   loaded (libc's version string is there).  Only among the first ncore
   regions (the core's own), and never over a hole of the core (a
   writable mapping it left out: the file's bytes are not the
   process's).  */
static void add_file_gaps(struct gdb_view *v, size_t ncore, uint64_t lo,
			  uint64_t hi, uint64_t off, const char *path)
{
	for (size_t i = 0; i < v->ncore_holes; i++)
		if (v->core_holes[i].lo < hi && v->core_holes[i].hi > lo)
			return;
	uint64_t x = lo;
	while (x < hi) {
		/* The core's segment in [x, hi) that starts first.  */
		const struct hw_memory_region *next = NULL;
		for (size_t i = 0; i < ncore; i++) {
			const struct hw_memory_region *r = &v->regions[i];
			if (r->end > x && r->start < hi &&
			    (!next || r->start < next->start))
				next = r;
		}
		uint64_t stop = next && next->start < hi ? next->start : hi;
		if (stop > x) {
			struct hw_memory_region *g = gdb_view_new_region(v);
			if (!g)
				return;
			*g = (struct hw_memory_region){ x, stop, HW_MEM_R, path,
							off + (x - lo) };
		}
		if (!next)
			break;
		x = next->end > stop ? next->end : stop;
	}
}

/* info proc mappings: "process N", then rows "START END SIZE OFFSET
   [PERMS] [PATH]".  A live process's rows are its whole map (with
   permissions); a core's are its NT_FILE (files only, no permissions).
   The pid counts only when rows follow: a remote stub without /proc
   (qemu's) gets "process 1" and then a warning.  */
static void read_mappings(struct gdb_view *v, char *text)
{
	bool have_core = v->nregions > 0;
	size_t ncore = v->nregions;
	int pid = 0;
	FOR_EACH_LINE(line, text) {
		if (sscanf(line, "process %d", &pid) == 1)
			continue;
		uint64_t lo, hi, size, off;
		int at = 0;
		if (sscanf(line, " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
			   " %n", &lo, &hi, &size, &off, &at) < 4 || !at ||
		    hi <= lo)
			continue;
		if (pid > 0)
			v->mem.pid = pid;
		char *p = line + at;
		unsigned prot = 0;
		bool perms = strlen(p) >= 4 && strchr("r-", p[0]) &&
			     strchr("w-", p[1]) && strchr("x-", p[2]) &&
			     strchr("ps", p[3]) && (p[4] == ' ' || !p[4]);
		if (perms) {
			prot = (p[0] == 'r' ? HW_MEM_R : 0) |
			       (p[1] == 'w' ? HW_MEM_W : 0) |
			       (p[2] == 'x' ? HW_MEM_X : 0);
			p = skip_space(p + 4);
		}
		size_t n = strlen(p);
		while (n && p[n - 1] == ' ')
			p[--n] = '\0';
		const char *path = n ? own(v, p, n) : NULL;
		if (have_core) {
			/* Name the core's segments that this file covers.  */
			for (size_t i = 0; i < v->nregions; i++) {
				struct hw_memory_region *r = &v->regions[i];
				if (r->start >= lo && r->start < hi && !r->path) {
					r->path = path;
					r->offset = off + (r->start - lo);
				}
			}
			if (path)
				add_file_gaps(v, ncore, lo, hi, off, path);
			continue;
		}
		if (perms && !(prot & HW_MEM_R))
			continue;   /* guard pages, reservations: nothing to read */
		struct hw_memory_region *r = gdb_view_new_region(v);
		if (!r)
			return;
		*r = (struct hw_memory_region){ lo, hi, prot, path, off };
	}
}

/* info auxv: "TYPE  AT_NAME  Description  VALUE [\"string\"]".  */
static void read_auxv(struct gdb_view *v, char *text)
{
	size_t cap = 0, n = 0;
	uint64_t *av = NULL;
	FOR_EACH_LINE(line, text) {
		uint64_t type, val;
		char *end;
		char *p = skip_space(line);
		if (*p < '0' || *p > '9')
			continue;
		type = strtoull(p, &end, 10);
		if (end == p || (*end != ' ' && *end != '\t'))
			continue;
		char *q = strchr(end, '"');
		if (q)
			*q = '\0';
		size_t len = strlen(end);
		while (len && (end[len - 1] == ' ' || end[len - 1] == '\t'))
			end[--len] = '\0';
		char *last = strrchr(end, ' ');
		char *tab = strrchr(end, '\t');
		if (tab > last)
			last = tab;
		if (!last)
			continue;
		val = strtoull(last + 1, &q, 0);
		if (q == last + 1 || *q)
			continue;
		if (n + 4 > cap) {
			cap = cap ? 2 * cap : 64;
			uint64_t *a = cap < 4096 ? realloc(av, cap * sizeof *a)
						 : NULL;
			if (!a)
				break;
			av = a;
		}
		av[n++] = type;
		av[n++] = val;
	}
	if (!av)
		return;
	av[n++] = 0;
	av[n++] = 0;
	v->auxv = (uint8_t *)av;
	v->auxv_len = n * sizeof *av;
}

/* info threads: "[*] NUM  Thread 0x... (LWP TID) ...", "NUM  LWP TID",
   "NUM  Thread PID.TID" (remote), "NUM  process TID".  */
static void read_threads(struct gdb_view *v, char *text, int *nums)
{
	FOR_EACH_LINE(line, text) {
		char *p = skip_space(line);
		if (*p == '*')
			p = skip_space(p + 1);
		char *end;
		long num = strtol(p, &end, 10);
		if (end == p || *end != ' ')
			continue;
		int tid = 0, a, b;
		char *q;
		p = skip_space(end);
		if ((q = strstr(p, "(LWP ")) && sscanf(q + 5, "%d", &tid) == 1)
			;
		else if (sscanf(p, "LWP %d", &tid) == 1)
			;
		else if (sscanf(p, "Thread %d.%d", &a, &b) == 2)
			tid = b;
		else if (sscanf(p, "process %d", &a) == 1)
			tid = a;
		for (size_t i = 0; i < v->nthreads && tid > 0; i++)
			if (nums[i] == (int)num)
				v->threads[i].tid = tid;
	}
}

/* info sharedlibrary: rows "FROM TO SYMS PATH": each library's text, an
   address known to be mapped.  */
static void read_libs(struct gdb_view *v, char *text)
{
	FOR_EACH_LINE(line, text) {
		uint64_t from, to;
		if (sscanf(line, " 0x%" SCNx64 " 0x%" SCNx64, &from, &to) != 2 ||
		    to <= from)
			continue;
		if (v->nlib_addrs == v->cap_lib_addrs) {
			size_t cap = v->cap_lib_addrs ? 2 * v->cap_lib_addrs : 64;
			uint64_t *a = cap <= MAX_REGIONS
				? realloc(v->lib_addrs, cap * sizeof *a) : NULL;
			if (!a) {
				v->oom = true;
				return;
			}
			v->lib_addrs = a;
			v->cap_lib_addrs = cap;
		}
		v->lib_addrs[v->nlib_addrs++] = from;
	}
}

/* The listing after the line "@@heapwalk NAME" in captures, up to the
   next such line, as a copy (the readers cut it into lines in place);
   NULL when it is not there (or out of memory: v->oom).  */
static char *listing(struct gdb_view *v, const char *captures,
		     const char *name)
{
	static const char mark[] = "@@heapwalk ";
	size_t nlen = strlen(name);
	for (const char *line = captures; line; ) {
		const char *nl = strchr(line, '\n');
		if (!strncmp(line, mark, sizeof mark - 1) &&
		    !strncmp(line + sizeof mark - 1, name, nlen) &&
		    (line[sizeof mark - 1 + nlen] == '\n' ||
		     line[sizeof mark - 1 + nlen] == '\0')) {
			const char *start = nl ? nl + 1 : line + strlen(line);
			const char *end = start;
			while (*end && strncmp(end, mark, sizeof mark - 1)) {
				const char *e = strchr(end, '\n');
				end = e ? e + 1 : end + strlen(end);
			}
			char *copy = strndup(start, (size_t)(end - start));
			if (!copy)
				v->oom = true;
			return copy;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* A process: the selected thread first (`thread apply all` lists them
   from the highest number down).  */
static void selected_first(struct gdb_view *v, int *nums)
{
	for (size_t i = 1; i < v->nthreads; i++)
		if (nums[i] == v->current) {
			struct hw_memory_thread t = v->threads[i];
			memmove(&v->threads[1], &v->threads[0], i * sizeof t);
			v->threads[0] = t;
			break;
		}
}

struct numbered {
	int num;
	size_t i;
};

static int by_num(const void *a, const void *b)
{
	const struct numbered *x = a, *y = b;
	return x->num < y->num ? -1 : x->num > y->num;
}

/* A core: its threads in gdb's numbers' order, which is the core's own
   (NT_PRSTATUS) order, and the thread its death hit: the one whose
   siginfo was kept, else the first (a kernel core's crashing thread,
   where gdb's $_exitsignal, the first pr_cursig, comes from).  False
   when out of memory.  */
static bool order_core_threads(struct gdb_view *v, int *nums)
{
	size_t n = v->nthreads;
	struct numbered *ord = malloc((n ? n : 1) * sizeof *ord);
	struct hw_memory_thread *t = malloc((n ? n : 1) * sizeof *t);
	if (!ord || !t) {
		free(ord);
		free(t);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = (struct numbered){ nums[i], i };
	qsort(ord, n, sizeof *ord, by_num);
	bool found = false;
	v->death_thread = 0;
	for (size_t k = 0; k < n; k++) {
		t[k] = v->threads[ord[k].i];
		if (v->sig_num && ord[k].num == v->sig_num) {
			v->death_thread = k;
			found = true;
		}
	}
	if (!found)
		v->sig_num = 0;   /* a thread gdb gave no registers of */
	free(ord);
	free(v->threads);
	v->threads = t;
	v->cap_threads = n;
	return true;
}

/* The kernel's 64-bit elf_prstatus (x86_64 and aarch64 alike): pr_cursig
   at 12, pr_pid at 32, pr_reg at 112 (where gdb's ".reg" points).  */
#define PRSTATUS_CURSIG 12
#define PRSTATUS_PID 32
#define PRSTATUS_REG 112

static int by_tid(const void *a, const void *b)
{
	const struct reg_note *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* When gdb knows no signal for a core: no $_siginfo, no $_exitsignal.
   That is a core without NT_SIGINFO (qemu-user's) whose signal gdb's
   BFD lost: on aarch64 it takes the last NT_PRSTATUS's pr_cursig, 0 but
   for the thread that crashed.  The tool then names the first thread
   with a pending signal (pr_cursig); so does this, reading each
   thread's pr_cursig in the core gdb opened, where gdb's sections list
   say its registers are (a note whose pr_pid is not the thread's is
   not used).  The file is opened as any the core names: regular files
   only, never blocking.  */
static void core_cursig(struct gdb_view *v)
{
	if (!v->nreg_notes)
		return;
	int fd = open(v->mem.core, O_RDONLY | O_NONBLOCK | O_NOCTTY |
		      O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	qsort(v->reg_notes, v->nreg_notes, sizeof *v->reg_notes, by_tid);
	for (size_t k = 0; k < v->nthreads; k++) {
		struct reg_note key = { .tid = v->threads[k].tid };
		const struct reg_note *r = key.tid > 0
			? bsearch(&key, v->reg_notes, v->nreg_notes,
				  sizeof key, by_tid) : NULL;
		uint8_t pr[PRSTATUS_REG];
		int16_t cursig;
		int32_t pid;
		if (!r || r->at < PRSTATUS_REG ||
		    pread(fd, pr, sizeof pr, (off_t)(r->at - PRSTATUS_REG)) !=
		    (ssize_t)sizeof pr)
			continue;
		memcpy(&cursig, pr + PRSTATUS_CURSIG, sizeof cursig);
		memcpy(&pid, pr + PRSTATUS_PID, sizeof pid);
		if (pid == key.tid && cursig > 0) {
			v->exit_signal = cursig;
			v->death_thread = k;
			break;
		}
	}
	close(fd);
}

bool gdb_view_read(struct gdb_view *v, int dir, char *why, size_t whylen)
{
	memset(v, 0, sizeof *v);
	int *nums = NULL;
	size_t len;
	char *text;
	if ((text = slurp(dir, "ctx", &len))) {
		/* (read_ctx cuts the text up: the memo keeps it whole.)  */
		if ((v->ctx = malloc(len + 1))) {
			memcpy(v->ctx, text, len + 1);
			v->ctx_len = len;
		}
		read_ctx(v, text, &nums);
		free(text);
	}
	/* In this order: mappings name the segments sections found.  */
	static const struct {
		const char *name;
		void (*read)(struct gdb_view *, char *);
	} listings[] = {
		{ "sections", read_sections }, { "mappings", read_mappings },
		{ "auxv", read_auxv }, { "libs", read_libs },
	};
	if ((text = slurp(dir, "captures", &len))) {
		unwrap_mi(text);
		for (size_t i = 0; i < sizeof listings / sizeof *listings; i++) {
			char *part = listing(v, text, listings[i].name);
			if (part) {
				listings[i].read(v, part);
				free(part);
			}
		}
		char *part = nums ? listing(v, text, "threads") : NULL;
		if (part) {
			read_threads(v, part, nums);
			free(part);
		}
	}
	free(text);
	if (v->mem.core && !order_core_threads(v, nums))
		v->oom = true;
	else if (!v->mem.core)
		selected_first(v, nums);
	else if (!v->sig_num && !v->exit_signal)
		core_cursig(v);
	free(nums);
	if (v->oom) {
		snprintf(why, whylen, "out of memory");
		return false;
	}
	if (!v->nthreads) {
		snprintf(why, whylen, "gdb gave no thread registers "
			 "(is the program running?)");
		return false;
	}
	gdb_view_seal(v);
	return true;
}

void gdb_view_seal(struct gdb_view *v)
{
	v->mem.sz = sizeof v->mem;
	v->mem.name = "gdb";
	v->mem.regions = v->regions;
	v->mem.nregions = v->nregions;
	v->mem.threads = v->threads;
	v->mem.nthreads = v->nthreads;
	v->mem.auxv = v->auxv;
	v->mem.auxv_len = v->auxv_len;
	if (v->mem.core) {
		v->mem.pid = 0;
		v->mem.death_signo = v->exit_signal;
		v->mem.death_thread = v->death_thread;
		v->mem.siginfo = v->sig_num ? v->siginfo : NULL;
		v->mem.siginfo_len = v->sig_num ? sizeof v->siginfo : 0;
	}
}

static int hole_cmp(const void *a, const void *b)
{
	const struct core_segment *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t gdb_view_holes(struct gdb_view *v)
{
	if (v->ncore_holes)
		qsort(v->core_holes, v->ncore_holes, sizeof *v->core_holes,
		      hole_cmp);
	return v->ncore_holes;
}

void gdb_view_free(struct gdb_view *v)
{
	for (size_t i = 0; i < v->nowned; i++)
		free(v->owned[i]);
	free(v->owned);
	free(v->regions);
	free(v->threads);
	free(v->auxv);
	free(v->lib_addrs);
	free(v->reg_notes);
	free(v->core_segs);
	free(v->core_holes);
	free(v->ctx);
	memset(v, 0, sizeof *v);
}
