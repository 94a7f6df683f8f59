/* refs.h - who points into a block, and the shortest chain from a root:
 * the `refs` and `why` queries.
 *
 * Both look at memory exactly as `leaks` does (reach.h): the same block
 * map, the same roots (hw_roots_each with the same exclusions: the
 * allocator's memory and free blocks are never referrers), the same
 * pointer mask, and the allocator's own blocks are not scanned.  Naming a
 * place for people (a symbol, a stack frame) is the report's job
 * (commands/refs.c); this layer says only what kind of place it is.
 */
#ifndef HW_REFS_H
#define HW_REFS_H

#include <stdbool.h>
#include <stdint.h>

#include "reach.h"

enum hw_ref_kind {
	HW_REF_BLOCK,      /* a word of a block in use */
	HW_REF_REGISTER,   /* a thread's register */
	HW_REF_DTV,        /* a thread's TCB, through its DTV pointer */
	HW_REF_STACK,      /* a word of a thread's stack (or of its TLS:
			      static TLS sits in the stack's mapping) */
	HW_REF_MEMORY,     /* a word of other scanned memory */
};

/* One place holding a pointer into a block.  */
struct hw_ref {
	enum hw_ref_kind kind;
	int thread;        /* register, DTV, stack: index in the target's
			      threads; else -1 */
	int reg;           /* register: its index; else -1 */
	uint64_t slot;     /* memory: the word's address; register: 0 */
	uint64_t value;    /* the pointer, masked */
	uint64_t holder;   /* block: the holder's start; else 0 */
	uint64_t holder_end;  /* block: its extent's end */
};

/* Every place pointing into [start, end) (a block's extent): roots in
   hw_roots_each's order, then blocks in use in address order.  fn
   returns false to stop.  */
typedef bool hw_ref_fn(void *cookie, const struct hw_ref *ref);
void hw_refs_each(struct hw_session *s, const struct hw_reach *r,
		  uint64_t start, uint64_t end, hw_ref_fn *fn, void *cookie);

/* Whether the block [start, end) is the allocator's own (alloc.h's
   `internal`): `leaks` counts it reachable and never scans it.  */
bool hw_refs_internal(const struct hw_reach *r, uint64_t start, uint64_t end);

/* One step of a chain: `ref` holds a pointer into the block at `to`.  */
struct hw_why_step {
	struct hw_ref ref;
	uint64_t to, to_end;      /* the block pointed into (its extent) */
	bool interior;            /* the pointer is not to its start */
};

/* The shortest chain from a root to the block starting at `target`,
   breadth first: start pointers only, then, if that does not reach it,
   any pointer (*interior_pass set).  On success *steps (malloc'd, the
   caller frees it) runs from the root to the step into target.
   HW_OK and *n = 0: nothing reaches it.  An error when it would take
   more memory than the bound (the session's error says so).  */
enum hw_status hw_why_chain(struct hw_session *s, const struct hw_reach *r,
			    uint64_t target, struct hw_why_step **steps,
			    size_t *n, bool *interior_pass);

#endif /* HW_REFS_H */
