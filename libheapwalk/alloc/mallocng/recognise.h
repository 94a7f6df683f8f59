/* recognise.h - musl libc's allocators told apart from glibc's, and
 * why one cannot be walked.  */
#ifndef HW_MALLOCNG_RECOGNISE_H
#define HW_MALLOCNG_RECOGNISE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../internal.h"

/* Is path a file of musl libc (its libc.so, which is also its dynamic
   linker)?  glibc's detection leaves those alone.  */
bool hw_musl_path(const char *path);

/* Does module m have symbols only musl has (a static musl program)?  */
struct hw_syms;
struct hw_module;
bool hw_musl_symbols(const struct hw_syms *syms, const struct hw_module *m);

/* When no allocator opened: is the target a musl program?  If so, why
   heapwalk cannot walk it (bump allocator, context not set up, older
   musl, unreadable meta areas), in why (the session's error).  */
bool hw_mallocng_recognise(struct hw_session *s, char *why, size_t len);

#endif /* HW_MALLOCNG_RECOGNISE_H */
