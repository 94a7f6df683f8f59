/* libc.h - which C library a module is, for the walkers whose allocator
 * lives in one (glibc's ptmalloc, musl's mallocng): each must leave the
 * other's libc alone, and neither walker asks the other.
 */
#ifndef HW_ALLOC_LIBC_H
#define HW_ALLOC_LIBC_H

#include <stdbool.h>

struct hw_syms;
struct hw_module;

/* Is path a file of musl libc (its libc.so, which is also its dynamic
   linker)?  glibc's detection leaves those alone.  */
bool hw_libc_is_musl_path(const char *path);

/* Does module m have symbols only musl has (a static musl program)?  */
bool hw_libc_has_musl_symbols(const struct hw_syms *syms,
			      const struct hw_module *m);

#endif /* HW_ALLOC_LIBC_H */
