/* srcline-prog - a program that knows its own inline frames and source
 * lines (tests/t0145-source-lines.sh).
 *
 * srcline-prog TRUTH-FILE: writes one line per recorded call site, then
 * aborts for a core:
 *   ADDR FUNCTION:LINE [FUNCTION:LINE]...
 * and, for the symbol-table half of the test and for cores that name no
 * files (qemu-user's), where the program and libc are loaded (as the
 * dynamic linker names them; the program's name is argv[0]) and a pc
 * inside libc's abort:
 *   module PATH BASE
 *   libc ADDR abort
 * ADDR is a return address (__builtin_return_address of record()), and
 * the FUNCTION:LINE pairs are the frames a symbolizer must give for it,
 * innermost first: the function whose code holds the call to record()
 * with that call's line, then each function it was inlined into with
 * the line of the call that inlined it (__LINE__ everywhere; each
 * recorded call sits alone on its line).  The last pair is the real,
 * out-of-line function.
 *
 * Built -O2 -g: leaf_inl and mid_inl are always_inline, so the call in
 * leaf_inl lies inside outer's code, two inline levels deep.  record()
 * and the real functions are noinline, and work follows each call, so
 * no call becomes a jump (a tail call would record another caller).
 * With -DWITH_CXX, srcline-cxx.cc's C++ frames are recorded too.
 */
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

static FILE *truth;
static volatile int sink;

/* frames: "FUNCTION:LINE ..." for the caller's return address.  */
void record(const char *frames);
NOINLINE void record(const char *frames)
{
	fprintf(truth, "%p %s\n", __builtin_return_address(0), frames);
	sink++;
}

#define STR2(x) #x
#define STR(x) STR2(x)

INLINE void leaf_inl(const char *outer_frames)
{
	char buf[512]; /* room for mid_inl's 256 and more */
	snprintf(buf, sizeof buf, "leaf_inl:%d %s", __LINE__ + 1, outer_frames);
	record(buf);
	sink++;
}

INLINE void mid_inl(const char *outer_frames)
{
	char buf[256];
	snprintf(buf, sizeof buf, "mid_inl:%d %s", __LINE__ + 1, outer_frames);
	leaf_inl(buf);
	sink++;
}

NOINLINE void outer(void);
NOINLINE void outer(void)
{
	mid_inl("outer:" STR(__LINE__));
	sink++;
	leaf_inl("outer:" STR(__LINE__));
	sink++;
}

#ifdef WITH_CXX
void cxx_entry(void); /* srcline-cxx.cc */
#endif

NOINLINE void plain(void);
NOINLINE void plain(void)
{
	record("plain:" STR(__LINE__));
	sink++;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (truth = fopen(argv[1], "w")) == NULL)
		return 2;
	Dl_info exe, libc;
	void *abort_fn = dlsym(RTLD_DEFAULT, "abort");
	if (abort_fn == NULL || !dladdr((void *)main, &exe) ||
	    !dladdr(abort_fn, &libc) || libc.dli_fname == NULL)
		return 3;
	fprintf(truth, "module %s %p\nmodule %s %p\nlibc %p abort\n",
		argv[0], exe.dli_fbase, libc.dli_fname, libc.dli_fbase,
		(void *)((char *)abort_fn + 8));
	outer();
	plain();
#ifdef WITH_CXX
	cxx_entry();
#endif
	fclose(truth);
	abort();
}
