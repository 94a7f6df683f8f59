/* roots.h - where a conservative scan starts: registers and the memory
 * that is neither the allocator's nor a block's.
 */
#ifndef HW_ROOTS_H
#define HW_ROOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "../session/session.h"

/* A set of address ranges [start, end), built by appending; sorted and
   merged by hw_ranges_normalize().  */
struct hw_range {
	uint64_t start, end;
};

struct hw_ranges {
	struct hw_range *v;
	size_t n, cap;
	bool oom;
};

/* Append [start, end); a range that continues the last one extends it. */
void hw_ranges_add(struct hw_ranges *rs, uint64_t start, uint64_t end);
/* Append every range of `from`, and free it.  */
void hw_ranges_take(struct hw_ranges *rs, struct hw_ranges *from);
/* Sort by start and merge overlapping and touching ranges.  */
void hw_ranges_normalize(struct hw_ranges *rs);
void hw_ranges_free(struct hw_ranges *rs);
/* Whether a range of rs (normalized) holds addr.  */
/* Whether [start, end) overlaps a range of rs (rs normalized).  */
bool hw_ranges_overlap(const struct hw_ranges *rs, uint64_t start,
		       uint64_t end);
bool hw_ranges_has(const struct hw_ranges *rs, uint64_t addr);

/* What a root is, for a reference to name it.  */
enum hw_root_kind {
	HW_ROOT_REGISTER,    /* thread's register `reg` */
	HW_ROOT_STACK,       /* thread's stack, from its stack pointer up */
	HW_ROOT_DTV,         /* thread's DTV: `value` is the block glibc
				allocated it in (the TCB points one entry
				into it, which alone would read as an
				interior pointer) */
	HW_ROOT_MEMORY,      /* other writable memory: module data, TLS,
				the program's own mappings */
};

struct hw_root {
	enum hw_root_kind kind;
	int thread;          /* index in the target's threads (not stack /
				register: -1) */
	int reg;             /* HW_ROOT_REGISTER: index in its registers */
	uint64_t value;      /* HW_ROOT_REGISTER, HW_ROOT_DTV: the value */
	uint64_t start, end; /* memory: the range to scan */
};

typedef void hw_root_fn(void *cookie, const struct hw_root *root);

/* Every root of the session's target, once: the threads' registers, each
   thread's stack from its stack pointer (less the red zone the ABI lets
   a leaf function use below it), each thread's DTV to the end of its mapping, then every
   other readable and writable (or anonymous read-only) mapping, less
   `excluded` (normalized: the allocator's memory and the blocks).  */
void hw_roots_each(struct hw_session *s, const struct hw_ranges *excluded,
		   hw_root_fn *fn, void *cookie);

#endif /* HW_ROOTS_H */
