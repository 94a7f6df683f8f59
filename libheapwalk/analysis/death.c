/* death.c - how the process of a core died (death.h).
 *
 * The signal: a kernel core's NT_SIGINFO is the siginfo_t the fatal
 * signal was delivered with (the same layout on x86_64 and aarch64:
 * si_signo, si_errno, si_code as ints at 0, 4, 8; from 16 the union:
 * si_addr for a fault, si_pid and si_uid for kill/tgkill/sigqueue); it
 * follows the NT_PRSTATUS of the thread the signal hit, which the kernel
 * writes first.  gdb writes one after each thread's; qemu-user none (its
 * cores say the signal only in pr_cursig).
 *
 * The block involved, where it can really be told:
 *  - glibc's tcache double-free check ("free(): double free detected in
 *    tcache 2", 2.29-2.44) aborts from inside free() with the chunk
 *    already in a tcache list (the check found it there).  Which one is
 *    not in the message; free()'s own frames and the registers the
 *    functions below it saved hold the pointer being freed, so the
 *    chunks in a tcache whose address (user or header) is a word of
 *    those frames are named: one, or the few that could be it.
 *  - glibc up to 2.26 printed the block's address in the message.
 *  - A fault names the block holding the faulting address, if any.
 */
#include <stdlib.h>
#include <string.h>

#include "../arch/arch.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "abortmsg.h"
#include "death.h"
#include "stack.h"

/* Tcache entries collected for the double-free search, at most.  */
#define TCACHE_MAX (1u << 20)
/* Stack bytes searched for the freed pointer when the unwinder gave no
   free() frame to bound it.  */
#define FALLBACK_SPAN 16384
/* A frame span longer than this is not a few frames of free().  */
#define SPAN_MAX (256u << 10)

static const char *const signal_names[32] = {
	[1] = "SIGHUP", [2] = "SIGINT", [3] = "SIGQUIT", [4] = "SIGILL",
	[5] = "SIGTRAP", [6] = "SIGABRT", [7] = "SIGBUS", [8] = "SIGFPE",
	[9] = "SIGKILL", [10] = "SIGUSR1", [11] = "SIGSEGV", [12] = "SIGUSR2",
	[13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM",
	[16] = "SIGSTKFLT", [17] = "SIGCHLD", [18] = "SIGCONT",
	[19] = "SIGSTOP", [20] = "SIGTSTP", [21] = "SIGTTIN", [22] = "SIGTTOU",
	[23] = "SIGURG", [24] = "SIGXCPU", [25] = "SIGXFSZ",
	[26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO",
	[30] = "SIGPWR", [31] = "SIGSYS",
};

const char *hw_signal_name(int signo)
{
	return signo > 0 && signo < 32 ? signal_names[signo] : NULL;
}

bool hw_signal_dumps_core(int signo)
{
	switch (signo) {
	case 3: case 4: case 5: case 6: case 7: case 8: case 11: case 24:
	case 25: case 31:
		return true;
	default:
		return false;
	}
}

struct code_name {
	int code;
	const char *name, *why;
};

/* si_code values any signal may carry (<= 0: sent by a process).  */
static const struct code_name any_codes[] = {
	{ 0, "SI_USER", "sent by kill()" },
	{ 0x80, "SI_KERNEL", "sent by the kernel" },
	{ -1, "SI_QUEUE", "sent by sigqueue()" },
	{ -2, "SI_TIMER", "a POSIX timer expired" },
	{ -3, "SI_MESGQ", "a message queue" },
	{ -4, "SI_ASYNCIO", "asynchronous I/O completed" },
	{ -5, "SI_SIGIO", "queued SIGIO" },
	{ -6, "SI_TKILL", "sent by tgkill() (as raise() and abort() do)" },
};
static const struct code_name segv_codes[] = {
	{ 1, "SEGV_MAPERR", "address not mapped" },
	{ 2, "SEGV_ACCERR", "no permission for that access" },
	{ 3, "SEGV_BNDERR", "failed address bound checks" },
	{ 4, "SEGV_PKUERR", "protection key check failed" },
	{ 8, "SEGV_MTEAERR", "asynchronous memory tag check fault" },
	{ 9, "SEGV_MTESERR", "memory tag check fault" },
};
static const struct code_name bus_codes[] = {
	{ 1, "BUS_ADRALN", "misaligned address" },
	{ 2, "BUS_ADRERR", "no such physical address (past the end of a "
			   "mapped file?)" },
	{ 3, "BUS_OBJERR", "object-specific hardware error" },
	{ 4, "BUS_MCEERR_AR", "hardware memory error on access" },
	{ 5, "BUS_MCEERR_AO", "hardware memory error" },
};
static const struct code_name ill_codes[] = {
	{ 1, "ILL_ILLOPC", "illegal opcode" },
	{ 2, "ILL_ILLOPN", "illegal operand" },
	{ 3, "ILL_ILLADR", "illegal addressing mode" },
	{ 4, "ILL_ILLTRP", "illegal trap" },
	{ 5, "ILL_PRVOPC", "privileged opcode" },
	{ 6, "ILL_PRVREG", "privileged register" },
	{ 7, "ILL_COPROC", "coprocessor error" },
	{ 8, "ILL_BADSTK", "internal stack error" },
};
static const struct code_name fpe_codes[] = {
	{ 1, "FPE_INTDIV", "integer divide by zero" },
	{ 2, "FPE_INTOVF", "integer overflow" },
	{ 3, "FPE_FLTDIV", "floating-point divide by zero" },
	{ 4, "FPE_FLTOVF", "floating-point overflow" },
	{ 5, "FPE_FLTUND", "floating-point underflow" },
	{ 6, "FPE_FLTRES", "floating-point inexact result" },
	{ 7, "FPE_FLTINV", "floating-point invalid operation" },
	{ 8, "FPE_FLTSUB", "subscript out of range" },
};
static const struct code_name trap_codes[] = {
	{ 1, "TRAP_BRKPT", "breakpoint" },
	{ 2, "TRAP_TRACE", "trace trap" },
};

static const struct code_name *find_code(const struct code_name *v, size_t n,
					 int code)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].code == code)
			return &v[i];
	return NULL;
}

#define FIND(v, code) find_code(v, sizeof v / sizeof v[0], code)

/* Signals whose kernel-made si_code says a fault at si_addr.  */
static bool is_fault(int signo)
{
	return signo == 4 || signo == 5 || signo == 7 || signo == 8 ||
	       signo == 11;
}

const char *hw_sigcode_name(int signo, int code, const char **why)
{
	const struct code_name *c = NULL;
	if (code > 0 && code != 0x80) {
		switch (signo) {
		case 11: c = FIND(segv_codes, code); break;
		case 7: c = FIND(bus_codes, code); break;
		case 4: c = FIND(ill_codes, code); break;
		case 8: c = FIND(fpe_codes, code); break;
		case 5: c = FIND(trap_codes, code); break;
		default: break;
		}
	} else {
		c = FIND(any_codes, code);
	}
	*why = c ? c->why : NULL;
	return c ? c->name : NULL;
}

/* ---- the signal -------------------------------------------------------- */

static int32_t i32_at(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void read_siginfo(const struct hw_target *t, struct hw_death *d)
{
	const uint8_t *si = t->siginfo;
	if (!si || t->siginfo_len < 24 || i32_at(si) <= 0)
		return;
	d->has_siginfo = true;
	d->signo = i32_at(si);
	d->code = i32_at(si + 8);
	if (is_fault(d->signo) && d->code > 0 && d->code != 0x80) {
		memcpy(&d->addr, si + 16, 8);
		d->has_addr = true;
	} else if (d->code == 0 || d->code == -1 || d->code == -6) {
		d->sender_pid = i32_at(si + 16);
		d->sender_uid = i32_at(si + 20);
		d->has_sender = true;
	}
}

/* ---- the stack --------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path;
}

static void name_frame(struct hw_session *s, struct hw_death_frame *f,
		       const struct hw_frame *fr)
{
	uint64_t look = hw_frame_lookup(fr);
	struct hw_symbol_at sa = { 0 };
	struct hw_module m;
	f->pc = fr->pc;
	if (hw_syms_symbol_at(s->syms, look, &sa)) {
		hw_syms_demangle(sa.name, f->function, sizeof f->function);
		/* "__libc_start_main@@GLIBC_2.34": the version is no part
		   of the function's name.  */
		f->function[strcspn(f->function, "@")] = '\0';
		f->offset = sa.offset + (fr->pc - look);
	}
	if (hw_syms_module_at(s->syms, look, &m)) {
		f->module = base_name(m.name);
		f->module_offset = fr->pc - m.low;
	}
}

static bool unwind(struct hw_session *s, struct hw_death *d,
		   struct hw_frame *raw)
{
	struct hw_target *t = s->target;
	const struct hw_thread *th = &t->threads[d->thread];
	if (!s->syms || !th->nregs)
		return true;
	size_t n = hw_thread_frames(s, th, raw, HW_DEATH_FRAMES);
	d->unwound = true;
	if (!n)
		return true;
	d->frames = calloc(n, sizeof *d->frames);
	if (!d->frames)
		return false;
	for (size_t i = 0; i < n; i++)
		name_frame(s, &d->frames[i], &raw[i]);
	d->nframes = n;
	return true;
}

/* ---- the block involved ------------------------------------------------ */

struct tcache_set {
	struct hw_chunk *v;
	size_t n, cap;
	bool oom;
};

static bool collect_tcache(void *cookie, const struct hw_chunk *c)
{
	struct tcache_set *ts = cookie;
	if (!(hw_place(c->where)->flags & HW_PLACE_CACHED))
		return true;
	if (ts->n == ts->cap) {
		if (ts->cap >= TCACHE_MAX)
			return false;
		size_t cap = ts->cap ? 2 * ts->cap : 64;
		struct hw_chunk *v = realloc(ts->v, cap * sizeof *v);
		if (!v) {
			ts->oom = true;
			return false;
		}
		ts->v = v;
		ts->cap = cap;
	}
	ts->v[ts->n++] = *c;
	return true;
}

static int chunk_addr_cmp(const void *a, const void *b)
{
	const struct hw_chunk *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The tcache entry whose user address or header is v, or NULL.  */
static const struct hw_chunk *tcache_entry(const struct tcache_set *ts,
					   uint64_t v)
{
	size_t lo = 0, hi = ts->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ts->v[mid].addr < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* v is the user address (lo), or the header of the next one.  */
	for (size_t k = lo; k < ts->n && k <= lo + 1; k++)
		if (ts->v[k].addr == v || ts->v[k].chunk == v)
			return &ts->v[k];
	return NULL;
}

static void add_chunk(struct hw_death *d, const struct hw_chunk *c)
{
	for (size_t i = 0; i < d->nchunks; i++)
		if (d->chunks[i].chunk == c->chunk)
			return;
	if (d->nchunks < HW_DEATH_CHUNKS)
		d->chunks[d->nchunks++] = *c;
	else
		d->more_chunks = true;
}

static bool is_free_frame(const char *name)
{
	static const char *const names[] = { "free", "__libc_free", "cfree",
					     "__free", "__GI___libc_free" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* [*lo, *hi): the stack words of the frames from the innermost to the
   free() that aborted: up to the caller of the frame named free(), else
   (no symbol names it: libc without its symbol table, or a free() that
   tail-called _int_free()) up to the first frame outside the innermost
   frame's module (libc's abort path), else a fixed span above the stack
   pointer.  The caller's own frame is left out: it may hold other
   pointers into the same tcache.  */
static void free_span(const struct hw_target *t, const struct hw_death *d,
		      const struct hw_frame *raw, uint64_t *lo, uint64_t *hi)
{
	const struct hw_thread *th = &t->threads[d->thread];
	const char *mod0 = d->nframes ? d->frames[0].module : NULL;
	size_t end = 0;
	*lo = th->sp;
	*hi = th->sp + FALLBACK_SPAN;
	for (size_t k = 0; k + 1 < d->nframes && !end; k++)
		if (is_free_frame(d->frames[k].function))
			end = k + 1;
	for (size_t k = 1; k < d->nframes && !end && mod0; k++)
		if (!d->frames[k].module || strcmp(d->frames[k].module, mod0))
			end = k;
	if (end && raw[end].sp > *lo && raw[end].sp - *lo <= SPAN_MAX)
		*hi = raw[end].sp;
}

static bool freed_twice(struct hw_session *s, struct hw_death *d,
			const struct hw_frame *raw)
{
	struct hw_target *t = s->target;
	struct tcache_set ts = { 0 };
	hw_walk_blocks(s, collect_tcache, &ts);
	if (ts.oom) {
		free(ts.v);
		return false;
	}
	if (!ts.n)
		return true;
	qsort(ts.v, ts.n, sizeof *ts.v, chunk_addr_cmp);
	const struct hw_thread *th = &t->threads[d->thread];
	uint64_t mask = t->arch->ptr_mask, lo, hi;
	for (uint32_t i = 0; i < th->nregs; i++) {
		const struct hw_chunk *c = tcache_entry(&ts, th->regs[i] & mask);
		if (c)
			add_chunk(d, c);
	}
	free_span(t, d, raw, &lo, &hi);
	for (uint64_t a = lo & ~(uint64_t)7; a + 8 <= hi; a += 8) {
		uint64_t v;
		if (!hw_read_u64(t, a, &v))
			break;
		const struct hw_chunk *c = tcache_entry(&ts, v & mask);
		if (c)
			add_chunk(d, c);
	}
	if (d->nchunks)
		d->role = HW_DEATH_FREED_TWICE;
	free(ts.v);
	return true;
}

/* Is msg one of glibc malloc's own aborts (malloc_printerr, or before
   2.26 its "*** Error in `prog': ..." form)?  */
bool hw_malloc_abort(const char *msg)
{
	static const char *const starts[] = {
		"free(): ", "malloc(): ", "realloc(): ", "calloc(): ",
		"corrupted ", "double free or corruption", "munmap_chunk(): ",
		"mremap_chunk(): ", "malloc_consolidate(): ",
		"tcache_thread_shutdown(): ", "_int_malloc(): ",
		"_int_free(): ", "_int_realloc(): ", "memalign(): ",
		"posix_memalign(): ", "aligned_alloc(): ", "pvalloc(): ",
		"sysmalloc: ", "invalid fastbin entry", "*** Error in `",
	};
	for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
		if (!strncmp(msg, starts[i], strlen(starts[i])))
			return true;
	return false;
}

/* The words of the free() that aborted, sorted, and the blocks whose
   header or address is one of them.  */
struct freeing {
	uint64_t *w;
	size_t n;
	struct hw_chunk by_header[HW_DEATH_CHUNKS], by_addr[HW_DEATH_CHUNKS];
	size_t nheader, naddr;
	bool more_header, more_addr;
};

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool among(const struct freeing *f, uint64_t v)
{
	return bsearch(&v, f->w, f->n, sizeof *f->w, u64_cmp) != NULL;
}

static void keep(struct hw_chunk *v, size_t *n, bool *more,
		 const struct hw_chunk *c)
{
	if (*n < HW_DEATH_CHUNKS)
		v[(*n)++] = *c;
	else
		*more = true;
}

static bool collect_freeing(void *cookie, const struct hw_chunk *c)
{
	struct freeing *f = cookie;
	if (c->chunk != c->addr && among(f, c->chunk))
		keep(f->by_header, &f->nheader, &f->more_header, c);
	else if (among(f, c->addr))
		keep(f->by_addr, &f->naddr, &f->more_addr, c);
	return true;
}

/* glibc's malloc aborted inside free() ("free(): invalid next size",
   "double free or corruption (!prev)", ...): the block free() was given.
   _int_free() holds the chunk's header address (mchunkptr p), which no
   caller keeps; the caller's own pointers (its saved registers) are
   user addresses.  So blocks whose header is among the words of free()'s
   frames are named first, else those whose address is.  */
static bool being_freed(struct hw_session *s, struct hw_death *d,
			const struct hw_frame *raw)
{
	struct hw_target *t = s->target;
	const struct hw_thread *th = &t->threads[d->thread];
	uint64_t mask = t->arch->ptr_mask, lo, hi;
	bool in_free = false;
	for (size_t k = 0; k < d->nframes && !in_free; k++)
		in_free = is_free_frame(d->frames[k].function);
	if (!in_free)
		return true;
	free_span(t, d, raw, &lo, &hi);
	struct freeing f = { 0 };
	f.w = malloc((th->nregs + (hi - lo) / 8 + 1) * sizeof *f.w);
	if (!f.w)
		return false;
	for (uint32_t i = 0; i < th->nregs; i++)
		f.w[f.n++] = th->regs[i] & mask;
	for (uint64_t a = lo & ~(uint64_t)7; a + 8 <= hi; a += 8) {
		uint64_t v;
		if (!hw_read_u64(t, a, &v))
			break;
		f.w[f.n++] = v & mask;
	}
	qsort(f.w, f.n, sizeof *f.w, u64_cmp);
	hw_walk_blocks(s, collect_freeing, &f);
	const struct hw_chunk *v = f.nheader ? f.by_header : f.by_addr;
	size_t n = f.nheader ? f.nheader : f.naddr;
	for (size_t i = 0; i < n; i++)
		add_chunk(d, &v[i]);
	d->more_chunks |= f.nheader ? f.more_header : f.more_addr;
	if (d->nchunks)
		d->role = HW_DEATH_BEING_FREED;
	free(f.w);
	return true;
}

struct holder {
	uint64_t addr;
	struct hw_chunk c;
	bool found;
};

static bool find_holder(void *cookie, const struct hw_chunk *c)
{
	struct holder *h = cookie;
	if (h->addr >= c->chunk && h->addr - c->chunk < c->chunk_size) {
		h->c = *c;
		h->found = true;
		return false;
	}
	return true;
}

/* The block holding addr (through the walker's neighbourhood walk when
   it has one).  */
static bool holder_of(struct hw_session *s, uint64_t addr,
		      struct hw_chunk *out)
{
	struct holder h = { .addr = addr };
	hw_walk_around(s, addr, 0, 0, find_holder, &h);
	if (h.found)
		*out = h.c;
	return h.found;
}

/* The first "0x" and 4 to 16 hex digits in text (glibc up to 2.26 ends
   malloc's messages with the block's address), or 0.  */
static uint64_t address_in(const char *text)
{
	for (const char *p = strstr(text, "0x"); p; p = strstr(p + 2, "0x")) {
		uint64_t v = 0;
		int n = 0;
		for (const char *q = p + 2; n <= 16; q++, n++) {
			int x = *q >= '0' && *q <= '9' ? *q - '0'
				: *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
				: *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;
			if (x < 0)
				break;
			v = v << 4 | (uint64_t)x;
		}
		if (n >= 4 && n <= 16 && v)
			return v;
	}
	return 0;
}

static bool involved(struct hw_session *s, struct hw_death *d,
		     const struct hw_frame *raw)
{
	struct hw_chunk c;
	const char *msg = d->abort_msg;
	if (msg && strstr(msg, "double free detected in tcache")) {
		if (!freed_twice(s, d, raw))
			return false;
		if (d->nchunks)
			return true;
	}
	uint64_t a = msg ? address_in(msg) : 0;
	if (a && holder_of(s, a, &c)) {
		add_chunk(d, &c);
		d->role = HW_DEATH_NAMED;
	} else if (d->has_addr && holder_of(s, d->addr, &c)) {
		add_chunk(d, &c);
		d->role = HW_DEATH_FAULT;
	} else if (msg && hw_malloc_abort(msg)) {
		return being_freed(s, d, raw);
	}
	return true;
}

/* ---- all of it --------------------------------------------------------- */

bool hw_death_get(struct hw_session *s, struct hw_death *d)
{
	struct hw_target *t = s->target;
	memset(d, 0, sizeof *d);
	/* A core read through a debugger (the gdb plugin) has died as the
	   core itself has: the debugger hands over the signal and siginfo
	   (target/external.c).  */
	if (t->live || t->is_process || !t->nthreads)
		return true;
	/* The thread the signal hit: the one NT_SIGINFO follows, else the
	   first with a pending signal (a kernel core gives every thread
	   the fatal one and writes the crashing thread first; qemu-user
	   gives it to that thread only), else the first.  */
	bool found = false;
	for (size_t i = 0; t->siginfo && i < t->nthreads && !found; i++)
		if (t->threads[i].tid == t->siginfo_tid) {
			d->thread = i;
			found = true;
		}
	for (size_t i = 0; !found && i < t->nthreads; i++)
		if (t->threads[i].signo) {
			d->thread = i;
			found = true;
		}
	read_siginfo(t, d);
	if (!d->has_siginfo)
		d->signo = t->threads[d->thread].signo;
	/* Only a signal whose default action dumps core is a death: gdb's
	   gcore of a running process says SIGSTOP (its attach), and that
	   process did not die.  */
	if (!hw_signal_dumps_core(d->signo)) {
		d->signo = 0;
		d->has_siginfo = d->has_addr = d->has_sender = false;
		return true;
	}
	d->died = true;
	d->tid = t->threads[d->thread].tid;
	struct hw_abort_msg m;
	struct hw_frame *raw = calloc(HW_DEATH_FRAMES, sizeof *raw);
	if (!raw || !hw_abort_msg_find(s, &m)) {
		free(raw);
		hw_error(s, HW_BAD_TARGET, "out of memory");
		return false;
	}
	d->abort_msg = m.text;
	d->abort_msg_at = m.buf;
	d->abort_msg_found = m.text ? m.found : NULL;
	bool ok = unwind(s, d, raw) && involved(s, d, raw);
	free(raw);
	if (!ok) {
		hw_death_free(d);
		hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	return ok;
}

void hw_death_free(struct hw_death *d)
{
	free(d->abort_msg);
	free(d->frames);
	memset(d, 0, sizeof *d);
}
