/* session.c - open a target, report its modules, find its allocator.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../arch/arch.h"
#include "../sym/sym.h"
#include "../target/cache.h"
#include "../target/core.h"
#include "../target/external.h"
#include "../target/process.h"
#include "session.h"
#include <errno.h>
#include <signal.h>
#include <unistd.h>

enum hw_status hw_error(struct hw_session *s, enum hw_status st,
			const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	return st;
}

/* A new slot at the end of the findings, or NULL when the list is full
   (or memory is short).  Called with findings_lock held.  */
static struct hw_finding *new_finding(struct hw_session *s)
{
	if (s->nfindings >= HW_MAX_FINDINGS)
		return NULL;
	if (s->nfindings == s->findings_cap) {
		size_t cap = s->findings_cap ? 2 * s->findings_cap : 64;
		struct hw_finding *n = realloc(s->findings, cap * sizeof *n);
		if (!n)
			return NULL;
		s->findings = n;
		s->findings_cap = cap;
	}
	return &s->findings[s->nfindings++];
}

/* Add key to the set; false when it was there.  Out of memory, findings
   are no longer told apart (a duplicate beats a lost finding).  */
static bool seen_add(struct hw_seen *set, uint64_t key)
{
	if (2 * (set->n + 1) > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 256;
		uint64_t *slots = calloc(cap, sizeof *slots);
		if (!slots)
			return true;
		for (size_t i = 0; i < set->cap; i++) {
			uint64_t k = set->slots[i];
			if (!k)
				continue;
			size_t j = k & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = k;
		}
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	size_t j = key & (set->cap - 1);
	while (set->slots[j]) {
		if (set->slots[j] == key)
			return false;
		j = (j + 1) & (set->cap - 1);
	}
	set->slots[j] = key;
	set->n++;
	return true;
}

/* FNV-1a over the text, mixed with the address; never 0 (the set's
   empty slot).  */
static uint64_t finding_key(uint64_t addr, const char *text)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (addr * 0x9e3779b97f4a7c15ull);
	for (const char *c = text; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	return h ? h : 1;
}

/* Record one finding (a partial mark too when `partial`), unless the
   same text at the same address was recorded before.  */
static void add_finding(struct hw_session *s, uint64_t addr, bool note,
			bool partial, const char *fmt, va_list ap)
{
	char text[sizeof s->findings->problem];
	vsnprintf(text, sizeof text, fmt, ap);
	uint64_t key = finding_key(addr, text);
	pthread_mutex_lock(&s->findings_lock);
	if (!seen_add(&s->seen, key)) {
		pthread_mutex_unlock(&s->findings_lock);
		return;
	}
	/* The first place that made the totals partial is the one shown.  */
	if (partial && s->partial.places++ == 0) {
		s->partial.addr = addr;
		snprintf(s->partial.why, sizeof s->partial.why, "%s", text);
	}
	if (!note)
		s->findings_total++;
	struct hw_finding *f = new_finding(s);
	if (f) {
		f->addr = addr;
		f->note = note;
		memcpy(f->problem, text, sizeof f->problem);
	}
	pthread_mutex_unlock(&s->findings_lock);
}

void hw_finding(struct hw_session *s, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_finding(s, addr, false, false, fmt, ap);
	va_end(ap);
}

void hw_note(struct hw_session *s, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_finding(s, addr, true, false, fmt, ap);
	va_end(ap);
}

void hw_findings_in_flight(struct hw_session *s, const char *why)
{
	pthread_mutex_lock(&s->findings_lock);
	for (size_t i = 0; i < s->nfindings; i++) {
		struct hw_finding *f = &s->findings[i];
		if (f->note)
			continue;
		f->note = true;
		size_t n = strlen(f->problem);
		snprintf(f->problem + n, sizeof f->problem - n, " %s", why);
	}
	s->findings_total = 0;
	pthread_mutex_unlock(&s->findings_lock);
}

void hw_partial(struct hw_session *s, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_finding(s, addr, false, true, fmt, ap);
	va_end(ap);
}

void hw_work_fallback(struct hw_session *s, const char *fmt, ...)
{
	atomic_fetch_add(&s->work.sums_failed, 1);
	char *buf = s->work.fallbacks;
	/* The items that fit whole, then "; and N more" in the space kept
	   for it at the end.  */
	size_t cap = sizeof s->work.fallbacks - 32;
	size_t len = s->work.fallbacks_len;
	char item[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(item, sizeof item, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t need = (len ? 2 : 0) + strlen(item);
	if (s->work.fallbacks_more == 0 && len + need < cap) {
		snprintf(buf + len, cap - len, "%s%s", len ? "; " : "", item);
		s->work.fallbacks_len = len + need;
		return;
	}
	s->work.fallbacks_more++;
	snprintf(buf + len, sizeof s->work.fallbacks - len, "; and %u more",
		 s->work.fallbacks_more);
}

void hw_oom(struct hw_session *s)
{
	atomic_store(&s->oom, true);
}

unsigned hw_threads(const struct hw_session *s)
{
	return s->policy.threads ? s->policy.threads : 1;
}

/* The options' policy, with the defaults filled in.  */
static void resolve_policy(struct hw_session *s)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	s->policy.threads = s->opts.threads ? s->opts.threads
			    : cpus > 0 ? (unsigned)cpus : 1;
	if (s->policy.threads > 64)
		s->policy.threads = 64;
	/* Faulting the whole heap in pays only for a walk of all of it.  */
	unsigned walk = HW_NEED_LISTS | HW_NEED_CHUNKS;
	s->policy.prefault = !s->opts.no_prefault &&
			     (!s->opts.needs || (s->opts.needs & walk));
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	s->policy.cache_max = s->opts.cache_max ? s->opts.cache_max
			      : pages > 0 && psz > 0
			      ? (uint64_t)pages * (uint64_t)psz / 2
			      : (uint64_t)1 << 30;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* ---- findings of the instances not (yet) chosen ------------------------ */

struct hw_findings_mark hw_findings_mark(const struct hw_session *s)
{
	return (struct hw_findings_mark){ s->nfindings, s->findings_total,
				       s->partial.places };
}

/* Move what was found since m into st (NULL: drop it), leaving the
   session's findings as they were at m: every instance is opened, but
   only the walked one's findings are reported.  */
static void findings_stash(struct hw_session *s, struct hw_findings_mark m,
			   struct hw_findings_stash *st)
{
	pthread_mutex_lock(&s->findings_lock);
	if (st) {
		size_t n = s->nfindings - m.n;
		st->items = n ? malloc(n * sizeof *st->items) : NULL;
		st->n = st->items ? n : 0;
		if (st->items)
			memcpy(st->items, s->findings + m.n, n * sizeof *st->items);
		st->total = s->findings_total - m.total;
		st->partial = s->partial;
		st->partial.places = s->partial.places - m.partial_places;
	}
	s->nfindings = m.n;
	s->findings_total = m.total;
	s->partial.places = m.partial_places;
	pthread_mutex_unlock(&s->findings_lock);
}

void hw_findings_drop(struct hw_session *s, struct hw_findings_mark m)
{
	findings_stash(s, m, NULL);
}

/* Give the walked instance its findings back.  */
static void findings_unstash(struct hw_session *s,
			     const struct hw_findings_stash *st)
{
	pthread_mutex_lock(&s->findings_lock);
	for (size_t i = 0; i < st->n; i++) {
		struct hw_finding *f = new_finding(s);
		if (!f)
			break;
		*f = st->items[i];
	}
	s->findings_total += st->total;
	if (!s->partial.places && st->partial.places)
		s->partial = st->partial;
	else
		s->partial.places += st->partial.places;
	/* The other instances' findings were dropped: only the walked
	   one's count as seen.  */
	if (s->seen.slots)
		memset(s->seen.slots, 0, s->seen.cap * sizeof *s->seen.slots);
	s->seen.n = 0;
	for (size_t i = 0; i < s->nfindings; i++)
		seen_add(&s->seen, finding_key(s->findings[i].addr,
					       s->findings[i].problem));
	pthread_mutex_unlock(&s->findings_lock);
}

/* ---- allocator instances ----------------------------------------------- */

/* The walkers --allocator may name, in listing order.  jemalloc first: on
   a tie it is the one the program uses (a process that links it has
   glibc's malloc too, mostly idle).  */
static const struct hw_allocator_ops *const allocators[] = {
	&hw_jemalloc_ops,
	&hw_tcmalloc_ops,
	&hw_ptmalloc_ops,
	&hw_mallocng_ops,
	&hw_mimalloc_ops,
};
#define NALLOCATORS (sizeof allocators / sizeof allocators[0])

/* Why the first instance of one allocator that is there (or that failed
   hard) could not be opened.  */
struct open_failure {
	enum hw_status st;
	char why[sizeof ((struct hw_session *)0)->err];
};

/* Close every instance still open and free the stashes.  */
static void drop_instances(struct hw_session *s)
{
	for (size_t i = 0; i < s->ninstances; i++) {
		struct hw_instance *in = &s->instances[i];
		if (in->state)
			in->ops->close(in->state);
		in->state = NULL;
		free(in->stash.items);
		in->stash.items = NULL;
		in->stash.n = 0;
	}
}

/* The new entry, or NULL (state closed) when the list is full.  */
static struct hw_instance *add_instance(struct hw_session *s,
					const struct hw_allocator_ops *ops,
					void *state)
{
	if (s->ninstances == HW_MAX_INSTANCES) {
		ops->close(state);
		return NULL;
	}
	struct hw_instance *in = &s->instances[s->ninstances++];
	struct hw_instance_info info = { .module = "" };
	ops->describe(state, &info);
	in->ops = ops;
	in->state = state;
	snprintf(in->version, sizeof in->version, "%s", ops->version(state));
	snprintf(in->module, sizeof in->module, "%s",
		 info.module ? info.module : "");
	in->arch = info.arch ? info.arch : s->target->arch;
	in->held = info.held;
	return in;
}

/* Open instance k of ops; an instance that opens joins s->instances with
   its findings stashed, one that does not may leave its reason in f.  */
static void open_instance(struct hw_session *s,
			  const struct hw_allocator_ops *ops, size_t k,
			  struct open_failure *f)
{
	struct hw_findings_mark m = hw_findings_mark(s);
	void *state = NULL;
	s->opening = k;
	s->alloc_present = false;
	s->err[0] = '\0';
	enum hw_status st = ops->open(s, &state);
	if (st != HW_OK) {
		findings_stash(s, m, NULL);
		bool worth = s->alloc_present || st != HW_NO_ALLOCATOR;
		if (worth && f->st == HW_OK) {
			f->st = st;
			snprintf(f->why, sizeof f->why, "%s", s->err);
		}
		if (f->st == HW_OK)
			snprintf(f->why, sizeof f->why, "%s", s->err);
		return;
	}
	struct hw_instance *in = add_instance(s, ops, state);
	findings_stash(s, m, in ? &in->stash : NULL);
}

/* Is a to be walked rather than b by default?  An instance whose libc is
   of another architecture than the core is an emulated guest: qemu-user
   runs the program the user cares about, and the emulator's own heap
   holds its translation state.  Otherwise the instance holding the most
   memory from the system is the one the program uses; on a tie, the
   earlier in the listing.  */
static bool preferred(const struct hw_session *s, const struct hw_instance *a,
		      const struct hw_instance *b)
{
	bool guest_a = a->arch != s->target->arch;
	bool guest_b = b->arch != s->target->arch;
	if (guest_a != guest_b)
		return guest_a;
	return a->held > b->held;
}

static size_t default_instance(const struct hw_session *s)
{
	size_t best = 0;
	for (size_t i = 1; i < s->ninstances; i++)
		if (preferred(s, &s->instances[i], &s->instances[best]))
			best = i;
	return best;
}

static void select_instance(struct hw_session *s, size_t i)
{
	struct hw_instance *in = &s->instances[i];
	if (in->ops->settle) {
		struct hw_findings_mark m = hw_findings_mark(s);
		struct hw_findings_stash fresh = { 0 };
		bool anew = in->ops->settle(s, &in->state);
		/* Settling without opening anew finds nothing worth telling
		   (a failed second open's findings are void).  */
		findings_stash(s, m, anew ? &fresh : NULL);
		if (anew) {
			free(in->stash.items);
			in->stash = fresh;
			struct hw_instance_info info = { .module = "" };
			in->ops->describe(in->state, &info);
			in->held = info.held;
		}
	}
	s->selected = i;
	s->alloc = in->ops;
	s->alloc_state = in->state;
	s->arch = in->arch;
	in->state = NULL;
	findings_unstash(s, &in->stash);
	drop_instances(s);
}

/* --allocator N names instance N (from 1); 0 when want is not a number.  */
static size_t instance_number(const char *want)
{
	size_t n = 0;
	if (!want[0] || strspn(want, "0123456789") != strlen(want))
		return 0;
	for (const char *c = want; *c && n <= HW_MAX_INSTANCES; c++)
		n = n * 10 + (size_t)(*c - '0');
	return n ? n : (size_t)-1;
}

/* "auto, ptmalloc, jemalloc, ...": what --allocator takes by name.  */
static const char *allocator_names(char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "auto");
	for (size_t i = 0; i < NALLOCATORS && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, ", %s",
					 allocators[i]->name);
	return buf;
}

static enum hw_status no_such_instance(struct hw_session *s, const char *want)
{
	char list[384] = "";
	size_t used = 0;
	for (size_t i = 0; i < s->ninstances && used < sizeof list; i++)
		used += (size_t)snprintf(list + used, sizeof list - used,
					 "%s%zu (%s %s, %s)", i ? ", " : "",
					 i + 1, s->instances[i].ops->name,
					 s->instances[i].version,
					 s->instances[i].arch->name);
	char names[128];
	enum hw_status st = hw_error(s, HW_USAGE, "--allocator %s: no such "
				     "allocator instance; this target has %s, "
				     "or %s", want, list,
				     allocator_names(names, sizeof names));
	drop_instances(s);
	return st;
}

/* Nothing opened (of the kind wanted, `kind`; NULL: any): the most
   useful reason.  */
static enum hw_status no_allocator(struct hw_session *s,
				   const struct open_failure *f, size_t nf,
				   const char *kind)
{
	enum hw_status st = HW_NO_ALLOCATOR;
	const char *why = "";
	for (size_t i = 0; i < nf; i++) {
		if (f[i].st != HW_OK) {
			st = f[i].st;
			why = f[i].why;
			break;
		}
		if (f[i].why[0])
			why = f[i].why;
	}
	/* A musl program is one, not a glibc without its arena: an
	   allocator that knows the target for its own says why.  */
	char absent[sizeof s->err];
	bool known = false;
	for (size_t i = 0; st == HW_NO_ALLOCATOR && !known &&
			   i < sizeof allocators / sizeof allocators[0]; i++)
		known = allocators[i]->why_absent &&
			allocators[i]->why_absent(s, absent, sizeof absent);
	if (known)
		snprintf(s->err, sizeof s->err, "%s", absent);
	else if (why[0])
		snprintf(s->err, sizeof s->err, "%s", why);
	else if (kind)
		hw_error(s, HW_NO_ALLOCATOR, "'%s': no %s in the target",
			 s->target->path ? s->target->path : "target", kind);
	else
		hw_error(s, HW_NO_ALLOCATOR, "'%s': no supported allocator found",
			 s->target->path ? s->target->path : "target");
	/* What is missing may be exactly what a cut core lost.  */
	if (st == HW_NO_ALLOCATOR && s->target->truncated) {
		char cut[sizeof s->err];
		snprintf(cut, sizeof cut, "%s", s->err);
		return hw_error(s, HW_BAD_TARGET, "'%s': core file is truncated; "
				"%s", s->core_path, cut);
	}
	return st;
}

/* Every instance opened holds nothing (a glibc whose malloc the
   program never called), and an allocator that was not opened knows
   the target for one of its own programs (a mimalloc of a release not
   known): walking the idle one would answer "0 B in use", which is
   wrong; the session says why the real one cannot be walked instead
   (in s->err; instances dropped).  */
static bool idle_beside_unwalkable(struct hw_session *s)
{
	for (size_t i = 0; i < s->ninstances; i++)
		if (s->instances[i].held)
			return false;
	char why[sizeof s->err];
	for (size_t i = 0; i < NALLOCATORS; i++) {
		bool opened = false;
		for (size_t k = 0; k < s->ninstances; k++)
			opened |= s->instances[k].ops == allocators[i];
		if (opened || !allocators[i]->why_absent ||
		    !allocators[i]->why_absent(s, why, sizeof why))
			continue;
		drop_instances(s);
		snprintf(s->err, sizeof s->err, "%s", why);
		return true;
	}
	return false;
}

static enum hw_status find_allocator(struct hw_session *s)
{
	hw_target_order_threads(s->target);
	const char *want = s->opts.allocator;
	bool any = !want || !strcmp(want, "auto");
	size_t number = any ? 0 : instance_number(want);
	int kind = -1;
	for (size_t i = 0; i < NALLOCATORS && !any && !number; i++)
		if (!strcmp(want, allocators[i]->name))
			kind = (int)i;
	char names[128];
	if (!any && !number && kind < 0)
		return hw_error(s, HW_USAGE, "unknown allocator '%s' (%s, or "
				"an instance number as summary lists them)",
				want, allocator_names(names, sizeof names));
	struct open_failure failed[NALLOCATORS];
	memset(failed, 0, sizeof failed);
	for (size_t i = 0; i < NALLOCATORS; i++) {
		size_t n = allocators[i]->count ? allocators[i]->count(s) : 1;
		for (size_t k = 0; k < n; k++)
			open_instance(s, allocators[i], k, &failed[i]);
	}
	s->err[0] = '\0';
	if (kind >= 0) {
		for (size_t i = 0; i < s->ninstances; i++)
			if (s->instances[i].ops == allocators[kind]) {
				select_instance(s, i);
				return HW_OK;
			}
		drop_instances(s);
		return no_allocator(s, &failed[kind], 1,
				    allocators[kind]->name);
	}
	if (!s->ninstances)
		return no_allocator(s, failed, NALLOCATORS, NULL);
	if (!number && idle_beside_unwalkable(s))
		return HW_NO_ALLOCATOR;
	if (number > s->ninstances)
		return no_such_instance(s, want);
	select_instance(s, number ? number - 1 : default_instance(s));
	return HW_OK;
}

/* What every target's symbols are opened with: the debug info asked
   for and where layouts are kept; each target adds its files.  */
static struct hw_syms_opts syms_opts(const struct hw_session *s)
{
	return (struct hw_syms_opts){
		.debug_dirs = s->opts.debug_dirs,
		.n_debug_dirs = s->opts.n_debug_dirs,
		.no_debuginfo = s->opts.no_debuginfo,
		.layout_cache = s->opts.cache_dir,
	};
}

/* A live process: stopped, copied and let go inside hw_process_open;
   from here on it is a target like a core.  */
static enum hw_status open_process(struct hw_session *s)
{
	if (s->sysroot)
		return hw_error(s, HW_USAGE, "--sysroot is for cores; a live "
				"process's own files are used");
	struct hw_process_opts po = {
		.no_stop = s->opts.no_stop,
		.cache_max = s->policy.cache_max,
		.stop_wait_ms = s->opts.stop_wait_ms,
		.cancel = s->opts.cancel,
	};
	enum hw_status st = hw_process_open(s->opts.pid, &po, &s->target,
					    s->err, sizeof s->err);
	if (st != HW_OK)
		return st;
	struct hw_syms_opts so = syms_opts(s);
	so.exe = s->exe;   /* a copy of the running file, unstripped */
	char err[256] = "";
	/* Without libdwfl's view the walkers fall back on heuristics.  (A
	   thread's /proc/N when the main thread has ended: libdwfl reads
	   its maps.)  */
	int proc_pid = s->target->live->proc_pid;
	s->syms = hw_syms_open_pid(proc_pid, &so, err, sizeof err);
	if (hw_cache_over_budget(s->target->cache)) {
		hw_partial(s, 0, "the process's writable memory is more than "
			   "the cache may hold (%llu MiB): pages past it are "
			   "unknown", (unsigned long long)(s->policy.cache_max >> 20));
		s->budget_said = true;
	}
	st = find_allocator(s);
	/* A process killed meanwhile has no memory left to read: say that,
	   not that its allocator is unknown.  */
	if (st != HW_OK && st != HW_USAGE && hw_process_gone(s->opts.pid))
		return hw_error(s, HW_BAD_TARGET, "pid %d exited during the "
				"analysis", s->opts.pid);
	return st;
}

/* Every file's offset-0 mapping, for libdwfl (cores without NT_FILE, a
   front end's target); NULL when out of memory.  */
static struct hw_syms_file *offset0_files(const struct hw_target *t,
					  size_t *n)
{
	struct hw_syms_file *files = calloc(t->nfiles + 1, sizeof *files);
	*n = 0;
	for (size_t i = 0; files && i < t->nfiles; i++)
		if (t->files[i].offset == 0 && !t->files[i].absent)
			files[(*n)++] = (struct hw_syms_file){
				t->files[i].path, t->files[i].start };
	return files;
}

/* A target a front end reads for us (gdb's): its mappings and threads as
   it gave them, its modules from the files they map.  */
static enum hw_status open_external(struct hw_session *s)
{
	struct hw_external_opts eo = {
		.cache_max = s->policy.cache_max,
		.sysroot = s->sysroot,
	};
	enum hw_status st = hw_external_open(s->opts.memory, &eo, &s->target,
					     s->err, sizeof s->err);
	s->opts.memory = NULL;   /* copied: the caller's may go now */
	if (st != HW_OK)
		return st;
	struct hw_syms_opts so = syms_opts(s);
	so.exe = s->exe ? s->exe : s->target->exe;
	so.sysroot = s->sysroot;
	so.files = offset0_files(s->target, &so.nfiles);
	char err[256] = "";
	s->syms = hw_syms_open_files(&so, err, sizeof err);
	free((void *)so.files);
	return find_allocator(s);
}

enum hw_status hw_session_open(const struct hw_open_opts *opts,
			       hw_session **out)
{
	struct hw_session *s = calloc(1, sizeof *s);
	*out = s;
	if (!s)
		return HW_BAD_TARGET;
	clock_gettime(CLOCK_MONOTONIC, &s->opened_at);
	pthread_mutex_init(&s->findings_lock, NULL);
	/* Copy only the fields this caller's struct has.  */
	size_t sz = opts->sz < sizeof s->opts ? opts->sz : sizeof s->opts;
	memcpy(&s->opts, opts, sz);
	s->core_path = dup_or_null(s->opts.core);
	s->exe = dup_or_null(s->opts.exe);
	s->sysroot = dup_or_null(s->opts.sysroot);
	s->allocator = dup_or_null(s->opts.allocator);
	s->cache_dir = dup_or_null(s->opts.cache_dir);
	if (s->opts.n_debug_dirs) {
		s->debug_dirs = calloc(s->opts.n_debug_dirs, sizeof(char *));
		if (!s->debug_dirs)
			return hw_error(s, HW_BAD_TARGET, "out of memory");
		for (size_t i = 0; i < s->opts.n_debug_dirs; i++)
			s->debug_dirs[i] = dup_or_null(s->opts.debug_dirs[i]);
	}
	s->opts.core = s->core_path;
	s->opts.exe = s->exe;
	s->opts.sysroot = s->sysroot;
	s->opts.allocator = s->allocator;
	s->opts.cache_dir = s->cache_dir;
	s->opts.debug_dirs = (const char *const *)s->debug_dirs;
	resolve_policy(s);
	if (!!s->opts.pid + !!s->core_path + !!s->opts.memory > 1)
		return hw_error(s, HW_USAGE, "give a core or --pid, not both");
	if (!s->core_path && !s->opts.pid && !s->opts.memory)
		return hw_error(s, HW_USAGE, "no target given");
	enum hw_status checked = hw_check_open_opts(s);
	if (checked != HW_OK)
		return checked;
	elf_version(EV_CURRENT);
	if (s->opts.pid)
		return open_process(s);
	if (s->opts.memory)
		return open_external(s);
	const struct hw_core_open_opts co = {
		.exe = s->exe, .sysroot = s->sysroot,
		.threads = hw_threads(s), .store_max = s->policy.cache_max,
		.unpack_max = s->opts.unpack_max,
		.progress = s->opts.progress,
		.progress_cookie = s->opts.progress_cookie,
	};
	enum hw_status st = hw_core_open(s->core_path, &co, &s->target,
					 &s->core_elf, s->err, sizeof s->err);
	if (st != HW_OK)
		return st;
	/* An --exe that is not the core's program is not used at all
	   (target.h's exe_note says why).  */
	if (s->target->exe_note[0]) {
		free(s->exe);
		s->exe = NULL;
		s->opts.exe = NULL;
	}
	struct hw_syms_opts so = syms_opts(s);
	so.exe = s->exe;
	so.sysroot = s->sysroot;
	struct hw_syms_file *files = offset0_files(s->target, &so.nfiles);
	so.files = files;
	char err[256] = "";
	/* Without libdwfl's view the walkers fall back on heuristics.  */
	s->syms = hw_syms_open_core(s->core_elf, &so, err, sizeof err);
	free(files);
	return find_allocator(s);
}

enum hw_status hw_session_open_like(const struct hw_session *s,
				    const char *core, struct hw_session **out)
{
	struct hw_open_opts o = s->opts;
	o.core = core;
	o.pid = 0;
	o.memory = NULL;
	o.needs = HW_NEED_LISTS | HW_NEED_CHUNKS;
	/* A live process's own files were used: a core of it needs them
	   found the same way, from the core.  */
	if (s->opts.pid)
		o.exe = o.sysroot = NULL;
	return hw_session_open(&o, out);
}

void hw_session_work(const hw_session *s, struct hw_work *out)
{
	memset(out, 0, sizeof *out);
	if (!s)
		return;
	out->walks = atomic_load(&s->work.walks);
	out->around = atomic_load(&s->work.around);
	out->list_entries = atomic_load(&s->work.list_entries);
	out->guessed = atomic_load(&s->work.guessed);
	out->summed = atomic_load(&s->work.summed);
	out->sums_failed = atomic_load(&s->work.sums_failed);
}

const char *hw_session_work_fallbacks(const hw_session *s)
{
	return s ? s->work.fallbacks : "";
}

uint64_t hw_session_heaps_cut(const hw_session *s, uint64_t *pieces)
{
	if (pieces)
		*pieces = s ? atomic_load(&s->work.cut_pieces) : 0;
	return s ? atomic_load(&s->work.heaps_cut) : 0;
}

uint64_t hw_session_dwarf_modules(const hw_session *s)
{
	return s ? hw_syms_dwarf_modules(s->syms) : 0;
}

uint64_t hw_session_layouts_cached(const hw_session *s)
{
	return s ? hw_syms_layouts_cached(s->syms) : 0;
}

const char *hw_default_cache_dir(char *buf, size_t len)
{
	const char *dir = getenv("HEAPWALK_CACHE_DIR");
	const char *base = NULL, *sub = "";
	if (dir != NULL) {
		base = dir;
	} else if ((dir = getenv("XDG_CACHE_HOME")) && dir[0] == '/') {
		base = dir;
		sub = "/heapwalk";
	} else if ((dir = getenv("HOME")) && dir[0] == '/') {
		base = dir;
		sub = "/.cache/heapwalk";
	}
	if (base == NULL || base[0] == '\0' || buf == NULL ||
	    (size_t)snprintf(buf, len, "%s%s", base, sub) >= len)
		return NULL;
	return buf;
}

const char *hw_session_errmsg(const hw_session *s)
{
	return s ? s->err : "out of memory";
}

void hw_session_close(hw_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < HW_NSLOTS; i++)
		if (s->slots[i].release)
			s->slots[i].release(s->slots[i].data);
	if (s->alloc)
		s->alloc->close(s->alloc_state);
	drop_instances(s);
	if (s->syms)
		hw_syms_close(s->syms);
	hw_target_close(s->target);
	for (size_t i = 0; i < s->opts.n_debug_dirs && s->debug_dirs; i++)
		free(s->debug_dirs[i]);
	free(s->debug_dirs);
	free(s->core_path);
	free(s->exe);
	free(s->sysroot);
	free(s->allocator);
	free(s->cache_dir);
	free(s->findings);
	free(s->seen.slots);
	pthread_mutex_destroy(&s->findings_lock);
	free(s);
}

void hw_progress(const struct hw_session *s, const char *phase, uint64_t done,
		 uint64_t total)
{
	if (s && s->opts.progress)
		s->opts.progress(s->opts.progress_cookie, phase, done, total);
}
