/* session.c - open a target, report its modules, find its allocator.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"
#include "internal.h"
#include "sym/sym.h"
#include "target/core.h"

enum hw_status hw_error(struct hw_session *s, enum hw_status st,
			const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	return st;
}

static void add_finding(struct hw_session *s, uint64_t addr, bool note,
			const char *fmt, va_list ap)
{
	pthread_mutex_lock(&s->findings_lock);
	if (!note)
		s->findings_total++;
	if (s->nfindings >= HW_MAX_FINDINGS) {
		pthread_mutex_unlock(&s->findings_lock);
		return;
	}
	if (s->nfindings == s->findings_cap) {
		size_t cap = s->findings_cap ? 2 * s->findings_cap : 64;
		struct hw_finding *n = realloc(s->findings, cap * sizeof *n);
		if (!n) {
			pthread_mutex_unlock(&s->findings_lock);
			return;
		}
		s->findings = n;
		s->findings_cap = cap;
	}
	struct hw_finding *f = &s->findings[s->nfindings++];
	f->addr = addr;
	f->note = note;
	vsnprintf(f->problem, sizeof f->problem, fmt, ap);
	pthread_mutex_unlock(&s->findings_lock);
}

void hw_finding(struct hw_session *s, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_finding(s, addr, false, fmt, ap);
	va_end(ap);
}

void hw_note(struct hw_session *s, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_finding(s, addr, true, fmt, ap);
	va_end(ap);
}

void hw_partial(struct hw_session *s, uint64_t addr, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&s->findings_lock);
	/* Walkers report each place once (their reporting walk).  */
	bool first = s->partial_total++ == 0;
	if (first) {
		s->partial_addr = addr;
		va_list aq;
		va_copy(aq, ap);
		vsnprintf(s->partial_why, sizeof s->partial_why, fmt, aq);
		va_end(aq);
	}
	pthread_mutex_unlock(&s->findings_lock);
	add_finding(s, addr, false, fmt, ap);
	va_end(ap);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The walkers --allocator may name, in auto-detection order.  */
/* jemalloc first: a process that links it has glibc's malloc too, mostly
   idle.  */
static const struct hw_allocator_ops *const allocators[] = {
	&hw_jemalloc_ops,
	&hw_ptmalloc_ops,
};

static enum hw_status find_allocator(struct hw_session *s)
{
	const char *want = s->opts.allocator;
	bool any = !want || !strcmp(want, "auto");
	enum hw_status st = HW_NO_ALLOCATOR;
	bool known = any;
	char first[sizeof s->err] = "";
	for (size_t i = 0; i < sizeof allocators / sizeof allocators[0]; i++) {
		if (!any && strcmp(want, allocators[i]->name) != 0)
			continue;
		known = true;
		void *state = NULL;
		s->alloc_present = false;
		st = allocators[i]->open(s, &state);
		if (st == HW_OK) {
			s->alloc = allocators[i];
			s->alloc_state = state;
			return HW_OK;
		}
		if (st != HW_NO_ALLOCATOR)
			return st;
		/* The first allocator that is there but could not be walked
		   says the most useful thing.  */
		if (s->alloc_present && !first[0])
			snprintf(first, sizeof first, "%s", s->err);
	}
	if (first[0])
		snprintf(s->err, sizeof s->err, "%s", first);
	if (!known) {
		return hw_error(s, HW_USAGE, "unknown allocator '%s' (auto, "
				"ptmalloc, jemalloc)", want);
	}
	if (!s->err[0])
		hw_error(s, HW_NO_ALLOCATOR, "'%s': no supported allocator found",
			 s->core_path ? s->core_path : "target");
	/* What is missing may be exactly what a cut core lost.  */
	if (st == HW_NO_ALLOCATOR && s->target->truncated) {
		char why[sizeof s->err];
		snprintf(why, sizeof why, "%s", s->err);
		return hw_error(s, HW_BAD_TARGET, "'%s': core file is truncated; "
				"%s", s->core_path, why);
	}
	return st;
}

enum hw_status hw_session_open(const struct hw_open_opts *opts,
			       hw_session **out)
{
	struct hw_session *s = calloc(1, sizeof *s);
	*out = s;
	if (!s)
		return HW_BAD_TARGET;
	pthread_mutex_init(&s->findings_lock, NULL);
	/* Copy only the fields this caller's struct has.  */
	size_t sz = opts->sz < sizeof s->opts ? opts->sz : sizeof s->opts;
	memcpy(&s->opts, opts, sz);
	s->core_path = dup_or_null(s->opts.core);
	s->exe = dup_or_null(s->opts.exe);
	s->sysroot = dup_or_null(s->opts.sysroot);
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
	s->opts.debug_dirs = (const char *const *)s->debug_dirs;
	if (s->opts.pid)
		return hw_error(s, HW_BAD_TARGET, "--pid: live processes are "
				"not supported yet; use gcore to make a core");
	if (!s->core_path)
		return hw_error(s, HW_USAGE, "no target given");
	enum hw_status checked = hw_check_open_opts(s);
	if (checked != HW_OK)
		return checked;
	elf_version(EV_CURRENT);
	enum hw_status st = hw_core_open(s->core_path, s->exe, s->sysroot,
					 &s->target, &s->core_elf, s->err,
					 sizeof s->err);
	if (st != HW_OK)
		return st;
	struct hw_syms_opts so = {
		.exe = s->exe,
		.sysroot = s->sysroot,
		.debug_dirs = s->opts.debug_dirs,
		.n_debug_dirs = s->opts.n_debug_dirs,
		.no_debuginfo = s->opts.no_debuginfo,
	};
	/* Every file's offset-0 mapping, for cores without NT_FILE.  */
	struct hw_syms_file *files = calloc(s->target->nfiles + 1, sizeof *files);
	size_t nfiles = 0;
	for (size_t i = 0; files && i < s->target->nfiles; i++)
		if (s->target->files[i].offset == 0 &&
		    !s->target->files[i].absent)
			files[nfiles++] = (struct hw_syms_file){
				s->target->files[i].path, s->target->files[i].start };
	so.files = files;
	so.nfiles = nfiles;
	char err[256] = "";
	/* Without libdwfl's view the walkers fall back on heuristics.  */
	s->syms = hw_syms_open_core(s->core_elf, &so, err, sizeof err);
	free(files);
	return find_allocator(s);
}

const char *hw_session_errmsg(const hw_session *s)
{
	return s ? s->err : "out of memory";
}

void hw_session_close(hw_session *s)
{
	if (!s)
		return;
	if (s->alloc)
		s->alloc->close(s->alloc_state);
	if (s->syms)
		hw_syms_close(s->syms);
	hw_target_close(s->target);
	for (size_t i = 0; i < s->opts.n_debug_dirs && s->debug_dirs; i++)
		free(s->debug_dirs[i]);
	free(s->debug_dirs);
	free(s->core_path);
	free(s->exe);
	free(s->sysroot);
	free(s->findings);
	pthread_mutex_destroy(&s->findings_lock);
	free(s);
}
