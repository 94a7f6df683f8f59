/* leaks1 on gperftools tcmalloc: the same program as
 * corpora/ptmalloc/leaks1.c (its comment says what it builds and
 * records), linked with -ltcmalloc_minimal.  The blocks freed with a
 * pointer left in them go to the thread's cache; the "mmapped" ones are
 * large spans.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

#include <gperftools/tcmalloc.h>

#include "../common/out.h"

/* gperftools up to 2.13 leaks one block itself: MallocExtension's module
   initializer news a plain MallocExtension (8 bytes, its vtable
   pointer), and tcmalloc's Register() then replaces the only pointer to
   it with its own implementation.  A scan must call it definitely lost,
   as valgrind does.  The truth names it by its first word (the vtable's
   address point, 16 bytes into _ZTV15MallocExtension), which the
   program looks up before the heap takes its shape: its address is
   tcmalloc's to choose.  */
static uintptr_t malloc_extension_vptr;

#ifdef LEAKS1_HEAP_PROFILER
#include <gperftools/heap-profiler.h>
#endif

static void tc_library_setup(void)
{
#ifdef LEAKS1_HEAP_PROFILER
	/* Every allocation from here on is in the profiler's table, whose
	   address map points at each block: memory that must not be taken
	   for a root.  It writes files only at its dumps: never here.  */
	HeapProfilerStart("leaksprof1-hp");
#endif
	/* 2.14 and later make their instances in static storage.  */
	int major = 0, minor = 0;
	tc_version(&major, &minor, NULL);
	if (major > 2 || (major == 2 && minor >= 14))
		return;
	void *vtable = dlsym(RTLD_DEFAULT, "_ZTV15MallocExtension");
	malloc_extension_vptr = vtable ? (uintptr_t)vtable + 16 : 0;
}

static void tc_library_leaks(void)
{
	if (!malloc_extension_vptr)
		return;
	out_str("libleak ");
	out_num(malloc_extension_vptr, 16);
	out_str(" 8 MallocExtension\n");
}

#define LEAKS1_LIBRARY_SETUP tc_library_setup
#define LEAKS1_LIBRARY_LEAKS tc_library_leaks
#include "../ptmalloc/leaks1.c"
