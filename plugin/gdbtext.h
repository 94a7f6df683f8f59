/* gdbtext.h - what the gdb script hands the plugin, read into a target
 * description.
 *
 * The script writes two kinds of files into the plugin's private
 * directory before each request:
 *  - `ctx`: lines the script formats itself with eval ("arch x86_64",
 *    "thread 2 sp 0x... pc 0x... tp 0x...", "sysroot ..."), and
 *  - `captures`, gdb's own text output, made with `set logging`: one
 *    listing after each line "@@heapwalk NAME": `sections` (maintenance
 *    info sections: a core's segments, the executable's and the core's
 *    names), `mappings` (info proc mappings: a process's mappings, a
 *    core's NT_FILE), `auxv` (info auxv), `threads` (info threads: gdb's
 *    thread numbers to LWP ids) and `libs` (info sharedlibrary: where the
 *    libraries are, for probe.c).
 * A core's threads keep the core's own order (gdb numbers them in the
 * order of their NT_PRSTATUS notes), so that reports name a thread by
 * the index the tool gives it; a process's have the selected first.  On
 * a core, how the process died ($_exitsignal, $_siginfo) is passed on
 * as the core's notes would have said it.
 * Under MI the captures are MI console records (~"text\n"); both forms
 * are read.  Everything here is untrusted text: unparsable lines are
 * skipped, never guessed at.
 */
#ifndef HW_PLUGIN_GDBTEXT_H
#define HW_PLUGIN_GDBTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapwalk.h"

/* Where a core's NT_PRSTATUS of thread tid has its registers (gdb's
   ".reg/TID" section, `at` its file offset).  */
struct reg_note {
	int tid;
	uint64_t at;
};

/* A core's segment as gdb's sections list gives it: [lo, hi) is read
   from the core file at offset `at` (HAS_CONTENTS).  */
struct core_segment {
	uint64_t lo, hi, at;
};

/* What the script said and gdb printed, as the library wants it.  */
struct gdb_view {
	struct hw_memory mem;                /* points into the arrays below */
	struct hw_memory_region *regions;
	size_t nregions, cap_regions;
	struct hw_memory_thread *threads;
	size_t nthreads, cap_threads;
	uint8_t *auxv;
	size_t auxv_len;
	uint64_t *lib_addrs;                 /* where gdb's shared libraries */
	size_t nlib_addrs, cap_lib_addrs;    /* start (info sharedlibrary) */
	char **owned;                        /* every string above */
	size_t nowned;
	const char *sysroot, *debugdir;      /* as gdb has them, or NULL */
	int current;                         /* gdb's selected thread */
	/* How a core's process died (ctx "exitsignal", "siginfo" lines;
	   see heapwalk.gdb's heapwalk-siginfo): the fatal signal, and the
	   first bytes of the siginfo of the lowest-numbered thread that
	   has one (sig_num), in the kernel's layout.  */
	int exit_signal;
	int sig_num;                         /* 0: no thread had one */
	uint8_t siginfo[24];
	size_t death_thread;                 /* index into threads */
	struct reg_note *reg_notes;          /* a core's ".reg/TID" */
	size_t nreg_notes, cap_reg_notes;
	struct core_segment *core_segs;      /* a core's loadN with contents */
	size_t ncore_segs, cap_core_segs;
	/* A core's writable loadN without contents (at unused): memory the
	   core does not hold -- the zeros a PT_LOAD's p_memsz claims past
	   its p_filesz, a mapping the kernel did not dump.  gdb reads them
	   as zeros; the CLI has no bytes there, nor should the plugin
	   (gdb_view_holes), or a header claiming a terabyte has the plugin
	   read a terabyte of zeros through gdb.  */
	struct core_segment *core_holes;
	size_t ncore_holes, cap_core_holes;
	unsigned ptr_size;
	char *ctx;                           /* the ctx file as read (its
						NUL bytes dropped), or NULL:
						the target as it was, for
						probe.h's memo */
	size_t ctx_len;
	char limit[256];                     /* mem.limit, when set */
	bool oom;
};

/* Read the files of directory fd `dir` into v.  False (with why) only
   when what is there cannot describe a target at all.  v may have no
   regions: gdb gave no memory map (see probe.h).  */
bool gdb_view_read(struct gdb_view *v, int dir, char *why, size_t whylen);

/* Point v->mem at v's arrays again, after regions were added.  */
void gdb_view_seal(struct gdb_view *v);

void gdb_view_free(struct gdb_view *v);

/* v's core holes, sorted by address; returns how many.  */
size_t gdb_view_holes(struct gdb_view *v);

/* One more region, zeroed; NULL (v->oom) when out of memory.  */
struct hw_memory_region *gdb_view_new_region(struct gdb_view *v);

#endif /* HW_PLUGIN_GDBTEXT_H */
