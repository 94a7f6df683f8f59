/* limits.c - what the target cannot tell: missing files, notes the core
 * lacks, an emulated guest, debug info debuginfod did not give.  Said
 * once in a report rather than guessed around silently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/module.h"
#include "../arch/arch.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "limits.h"

/* With DEBUGINFOD_URLS set, the walked allocator's module still with no
   symbol table of its own or a debug file's: neither this machine nor
   the servers gave its debug info (a server that does not answer costs
   DEBUGINFOD_TIMEOUT a file: the command line sets 5 s when it is
   unset).  NULL when that is not so.  */
static const char *debuginfod_lack(const struct hw_session *s, char *buf,
				   size_t len)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	uint64_t lo, hi;
	struct hw_module m;
	if (!urls || !*urls || !s->syms || s->opts.no_debuginfo ||
	    s->selected >= s->ninstances)
		return NULL;
	const char *file = s->instances[s->selected].module;
	if (!file[0] || !hw_file_range(s->target, file, &lo, &hi) ||
	    !hw_syms_module_at(s->syms, lo, &m) || hw_syms_module_symtab(&m))
		return NULL;
	snprintf(buf, len, "no debug info for %s: not on this machine (see "
		 "--debug-dir), not from debuginfod at %s (it has none, or did "
		 "not answer): its symbols are its dynamic table's", file, urls);
	return buf;
}

/* What this target cannot tell, and what that costs the analysis: said
   once in the summary rather than guessed around silently.  */
static size_t collect(const struct hw_session *s, const char *out[],
			    size_t max, char *missing, size_t missing_len,
			    char *nodebug, size_t nodebug_len)
{
	const struct hw_target *t = s->target;
	size_t n = 0, nmissing = 0, used = 0;
	bool any_tp = false;
	for (size_t i = 0; i < t->nthreads; i++)
		any_tp |= t->threads[i].has_tp;
	/* Name the missing files (each once: a file has several mappings).
	   Only the first four names are printed, so only they are compared
	   with: a core naming 100,000 files costs 4 comparisons a file.  */
	const char *named[4];
	for (size_t i = 0; i < t->nfiles && nmissing < 5; i++) {
		const struct hw_mapped_file *f = &t->files[i];
		bool seen = false;
		if (!f->absent && !f->unavailable)
			continue;
		for (size_t j = 0; j < nmissing && j < 4 && !seen; j++)
			seen = strcmp(named[j], f->path) == 0;
		if (seen)
			continue;
		if (nmissing < 4)
			named[nmissing] = f->path;
		if (nmissing++ == 0)
			used = (size_t)snprintf(missing, missing_len,
						"missing or different files "
						"(see --sysroot; what the core "
						"does not hold of them is "
						"unknown): %s", f->path);
		else if (nmissing <= 4 && used < missing_len)
			used += (size_t)snprintf(missing + used,
						 missing_len - used, ", %s",
						 f->path);
		else if (nmissing == 5 && used < missing_len)
			used += (size_t)snprintf(missing + used,
						 missing_len - used, ", ...");
	}
	/* A process (through a debugger) has a memory map, not NT_FILE.  */
	if (!t->files_from && n < max)
		out[n++] = t->is_process
			   ? "no file names in the memory map and no readable "
			     "link_map: mapped files unknown"
			   : "no NT_FILE and no readable link_map: mapped files "
			     "unknown (give --exe or --sysroot)";
	else if (strcmp(t->files_from, "executable") == 0 && n < max)
		out[n++] = t->is_process
			   ? "no file names in the memory map and no link_map "
			     "(a static program?): the executable's mappings "
			     "taken from its program headers"
			   : "no NT_FILE and no link_map (a static program?): "
			     "the executable's mappings taken from its "
			     "program headers";
	else if (strcmp(t->files_from, "link_map") == 0 && n < max)
		out[n++] = t->is_process
			   ? "no file names in the memory map: mapped files "
			     "taken from the dynamic linker's link_map"
			   : "no NT_FILE: mapped files taken from the dynamic "
			     "linker's link_map";
	if (t->files_note[0] && n < max)
		out[n++] = t->files_note;
	if (t->exe_note[0] && n < max)
		out[n++] = t->exe_note;
	if (hw_syms_exe_note(s->syms) && n < max)
		out[n++] = hw_syms_exe_note(s->syms);
	if (nmissing > 0 && n < max)
		out[n++] = missing;
	if (s->arch && s->arch != t->arch && n < max)
		out[n++] = "the walked heap is an emulated guest's (its libc is "
			   "not of the core's architecture): the core's threads "
			   "and thread pointers are the emulator's, so per-"
			   "thread caches cannot be given their threads, and "
			   "the page size is the emulator's";
	else if (!any_tp && n < max)
		out[n++] = strcmp(t->arch->name, "aarch64") == 0 &&
			   !t->is_process
			   ? "no NT_ARM_TLS: thread pointers unknown, so "
			     "per-thread caches cannot be given their threads"
			   : t->debugger && t->is_process
			   ? "no thread pointer register from the debugger "
			     "(fs_base, tpidr): per-thread caches cannot be "
			     "given their threads"
			   : "no thread pointers: per-thread caches cannot be "
			     "given their threads";
	if (!t->auxv_len && n < max)
		out[n++] = t->is_process
			   ? "no auxiliary vector: page size assumed 4 KiB"
			   : "no NT_AUXV: page size assumed 4 KiB";
	if (t->limit[0] && n < max)
		out[n++] = t->limit;
	if (n < max && debuginfod_lack(s, nodebug, nodebug_len))
		out[n++] = nodebug;
	return n;
}

void hw_target_limits(const struct hw_session *s, struct hw_limits *l)
{
	l->n = collect(s, l->v, HW_LIMITS_MAX, l->missing, sizeof l->missing,
		       l->nodebug, sizeof l->nodebug);
}
