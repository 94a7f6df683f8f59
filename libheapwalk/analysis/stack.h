/* stack.h - a thread's frames, as libdwfl's unwinder reads them from
 * the target (stack.c), and the address a frame's function is named by:
 * what death.c's backtrace and inflight.c's search both read.
 */
#ifndef HW_STACK_H
#define HW_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "../session/session.h"
#include "../sym/sym.h"
#include "../target/target.h"

/* At most max frames of th, the innermost first; how many (0 without
   symbols, registers or an unwinder for the architecture).  */
size_t hw_thread_frames(struct hw_session *s, const struct hw_thread *th,
			struct hw_frame *out, size_t max);

/* Where f's function is looked up: its pc where the thread stopped
   (frame 0, a signal frame), else the byte before the return address,
   the call (which may be its function's last instruction).  */
static inline uint64_t hw_frame_lookup(const struct hw_frame *f)
{
	return f->activation ? f->pc : f->pc - 1;
}

#endif /* HW_STACK_H */
