/* signature.c - the signature of a core's problem, as crash pipelines
 * bucket crashes (Socorro's signatures, ABRT's "crash function + 2"),
 * with the heap's damage added: they never look at the heap.
 *
 * The frames: the crashing thread's, innermost first, from where the
 * signal struck (past a signal handler's frames, when one raised it
 * again: a crash reporter's).  A run of frames
 * of the system's is one frame, the run's outermost: the call the
 * program made into it.  The system's are those in a system library
 * (libc, the dynamic linker, libstdc++, libgcc) or the walked
 * allocator's own file, and, wherever they are linked (a static
 * program), the allocator's functions and the abort path's.  So raise < abort < __libc_message
 * < malloc_printerr < _int_free < free is "free", whatever each glibc
 * release calls its helpers and inlines (and glibc's internal names of
 * malloc's entry points are the entry's: __libc_free, or _int_free where
 * free tail-calls it, is "free"; __strlen_evex, chosen for this CPU, is
 * "strlen").  The frames stop at the
 * process's and threads' entry points, and after main.  A frame with
 * no symbol is MODULE+0xOFFSET (stable within one build only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/module.h"
#include "../analysis/inflight.h"
#include "../sym/sym.h"
#include "signature.h"

/* Files whose frames are the system's, not the program's.  */
static bool system_module(const struct hw_session *s, const char *module)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-2.", "libc.musl-", "ld-linux", "ld-musl-",
		"ld64.so", "ld-2.", "libpthread", "libstdc++", "libgcc_s",
		"libm.so", "libdl.so", "librt.so", "libasan", "libubsan",
	};
	if (!module)
		return false;
	for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
		if (!strncmp(module, prefixes[i], strlen(prefixes[i])))
			return true;
	for (size_t i = 0; i < s->ninstances; i++) {
		const char *m = s->instances[i].module;
		/* The allocator in the executable: its frames are the
		   program's too, so they stay.  */
		if (m[0] && !(s->target->exe && !strcmp(m, s->target->exe)) &&
		    !strcmp(hw_base_name(m), module))
			return true;
	}
	return false;
}

/* The name of function fn without a compiler's clone suffix
   (".constprop.0", ".isra.0", ".part.0", ".cold"): its length.  */
static size_t base_len(const char *fn)
{
	return strcspn(fn, ".");
}

/* Where a thread's own frames end.  */
static bool entry_point(const char *fn)
{
	static const char *const names[] = {
		"_start", "__libc_start_main", "__libc_start_call_main",
		"__libc_start_main_impl", "start_thread", "clone", "clone3",
		"__clone", "__clone3", "thread_start", "__start", NULL,
	};
	return hw_syms_name_in(names, fn);
}

/* A signal handler's return to the kernel: the frames inside it are the
   handler's (a crash reporter's that raised the signal again), the
   frame after it where the signal struck.  */
static bool trampoline(const char *fn)
{
	static const char *const names[] = {
		"__restore_rt", "__kernel_rt_sigreturn", "__restore", NULL,
	};
	return hw_syms_name_in(names, fn);
}

/* How a process kills itself: the C library's abort and assertion
   paths, wherever they are linked (a static program has them in its
   executable).  */
static bool machinery(const char *fn)
{
	static const char *const names[] = {
		"raise", "gsignal", "abort", "pthread_kill", "__pthread_kill",
		"__pthread_kill_implementation", "__pthread_kill_internal",
		"__libc_message", "__libc_message_impl", "__libc_fatal",
		"__fortify_fail", "__chk_fail", "__stack_chk_fail",
		"__assert_fail", "__assert_fail_base", "__assert_perror_fail",
		"__malloc_assert", "a_crash", NULL,
	};
	return hw_syms_name_in(names, fn);
}

/* A frame of the system's, not the program's: in a system library, in
   the allocator's library, or one of the allocator's or the abort
   path's functions linked into the program, or a signal's return (a
   second signal's, past the first: pick_frames).  */
static bool system_frame(const struct hw_session *s,
			 const struct hw_death_frame *f)
{
	return system_module(s, f->module) || machinery(f->function) ||
	       trampoline(f->function) || hw_alloc_function(s, f->function);
}

/* glibc's own names of malloc's entry points, and the internal
   function one of them ends in when the entry tail-calls it (2.31's
   free is a jump to _int_free: its frame is gone): as the outermost
   frame of a run, each is the call the program made.  */
static const char *entry_of(const char *fn)
{
	static const char *const map[][2] = {
		{ "__libc_free", "free" }, { "_int_free", "free" },
		{ "_int_free_chunk", "free" }, { "_int_free_merge_chunk", "free" },
		{ "__libc_malloc", "malloc" }, { "_int_malloc", "malloc" },
		{ "__libc_calloc", "calloc" }, { "__libc_realloc", "realloc" },
		{ "_int_realloc", "realloc" }, { "__libc_memalign", "memalign" },
		{ "_int_memalign", "memalign" }, { "_mid_memalign", "memalign" },
	};
	size_t len = base_len(fn);
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (strlen(map[i][0]) == len && !strncmp(fn, map[i][0], len))
			return map[i][1];
	return NULL;
}

/* A C library function's name without the CPU its variant was chosen
   for (ifunc): __strlen_evex, __strlen_avx2 and __strlen_sse2 are the
   program's strlen on three machines.  Into out; false when fn is no
   such variant.  */
static bool variant_base(const char *fn, char *out, size_t len)
{
	static const char *const cpu[] = {
		"sse2", "ssse3", "sse4", "sse4_1", "sse4_2", "sse42", "avx",
		"avx2", "avx512", "avx512f", "avx512bw", "avx512vl", "evex",
		"evex512", "erms", "rtm", "unaligned", "aligned", "vzeroupper",
		"generic", "asimd", "sve", "mops", "thunderx", "thunderx2",
		"falkor", "a64fx", "kunpeng", "oryon1", "zva64", "nocache",
		"noneon", "neon", "simd",
	};
	size_t n = base_len(fn);
	bool cut = false;
	if (strncmp(fn, "__", 2) != 0 || n >= len)
		return false;
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < sizeof cpu / sizeof *cpu; i++) {
			size_t k = strlen(cpu[i]);
			if (n > k + 3 && fn[n - k - 1] == '_' &&
			    !strncmp(fn + n - k, cpu[i], k)) {
				n -= k + 1;
				cut = again = true;
				break;
			}
		}
	}
	if (!cut)
		return false;
	snprintf(out, len, "%.*s", (int)(n - 2), fn + 2);
	return true;
}

static void frame_text(const struct hw_death_frame *f, bool run, char *out,
		       size_t len)
{
	const char *entry = run ? entry_of(f->function) : NULL;
	if (entry)
		snprintf(out, len, "%s", entry);
	else if (run && variant_base(f->function, out, len))
		return;
	else if (f->function[0])
		snprintf(out, len, "%s", f->function);
	else if (f->module)
		snprintf(out, len, "%s+0x%llx", f->module,
			 (unsigned long long)f->module_offset);
	else
		snprintf(out, len, "?");
}

static void pick_frames(const struct hw_session *s, const struct hw_death *d,
			struct hw_signature *sig)
{
	size_t first = 0;
	for (size_t i = 0; i < d->nframes; i++)
		if (trampoline(d->frames[i].function)) {
			first = i + 1;
			break;
		}
	for (size_t i = first; i < d->nframes && sig->nframes < HW_SIG_FRAMES;
	     i++) {
		const struct hw_death_frame *f = &d->frames[i];
		if (entry_point(f->function))
			break;
		bool run = system_frame(s, f);
		if (run) {
			/* The run's outermost frame, unless it is an entry
			   point (a thread that crashed in libc with no frame
			   of the program's on its stack).  */
			size_t j = i;
			while (j + 1 < d->nframes &&
			       system_frame(s, &d->frames[j + 1]) &&
			       !entry_point(d->frames[j + 1].function))
				j++;
			f = &d->frames[j];
			i = j;
		}
		frame_text(f, run, sig->frames[sig->nframes++],
			   sizeof sig->frames[0]);
		/* What called main is the C library's start, whichever
		   release or build: never the program's problem.  */
		if (!strcmp(f->function, "main"))
			break;
	}
}

static void add(char *text, size_t len, size_t *used, const char *sep,
		const char *part)
{
	if (*used >= len)
		return;
	int n = snprintf(text + *used, len - *used, "%s%s",
			 *used ? sep : "", part);
	*used += n > 0 ? (size_t)n : 0;
	if (*used >= len)
		*used = len;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void hw_signature_make(const struct hw_session *s, const struct hw_death *d,
		       const struct hw_kinds *k, struct hw_signature *sig)
{
	memset(sig, 0, sizeof *sig);
	size_t used = 0;
	char part[400];
	if (d->died) {
		const char *name = hw_signal_name(d->signo);
		if (name)
			snprintf(part, sizeof part, "%s", name);
		else
			snprintf(part, sizeof part, "signal %d", d->signo);
		add(sig->text, sizeof sig->text, &used, "; ", part);
		if (d->abort_msg && hw_malloc_abort(d->abort_msg)) {
			hw_kind_of(d->abort_msg, part, sizeof part);
			add(sig->text, sizeof sig->text, &used, "; ", part);
		}
		pick_frames(s, d, sig);
		part[0] = '\0';
		size_t pu = 0;
		for (size_t i = 0; i < sig->nframes; i++)
			add(part, sizeof part, &pu, " < ", sig->frames[i]);
		if (pu)
			add(sig->text, sizeof sig->text, &used, "; ", part);
	} else {
		add(sig->text, sizeof sig->text, &used, "; ", "no crash");
	}
	/* The damage: its kinds in a fixed order, not by count (counts
	   differ between two cores of one bug).  */
	const char *kinds[HW_MAX_KINDS];
	size_t nk = 0;
	for (size_t i = 0; i < k->n; i++)
		if (!k->v[i].note && !k->v[i].abort)
			kinds[nk++] = k->v[i].kind;
	qsort(kinds, nk, sizeof *kinds, cmp_str);
	for (size_t i = 0; i < nk; i++)
		add(sig->text, sizeof sig->text, &used,
		    i ? " + " : "; heap: ", kinds[i]);
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *c = sig->text; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	snprintf(sig->hash, sizeof sig->hash, "%016llx", (unsigned long long)h);
}
