/* ptrace.h - stop a live process's threads briefly, and let them go.
 *
 * The whole attach runs in a thread of its own (the "tracer"): ptrace
 * ties tracees to the tracing thread, and when that thread ends the
 * kernel releases every tracee it still holds, even one that never got
 * to stop (a thread in uninterruptible sleep cannot be detached until it
 * stops).  So whatever happens, nothing stays traced after hw_ptrace_run
 * returns.
 */
#ifndef HW_TARGET_PTRACE_H
#define HW_TARGET_PTRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "../heapwalk.h"
#include "target.h"

struct hw_ptrace_opts {
	bool no_stop;        /* stop one thread at a time, for its registers
				only; memory is read while the process runs */
	int stop_wait_ms;    /* how long a thread may take to stop */
	const volatile sig_atomic_t *cancel;   /* non-zero: give up now */
};

/* Stop every thread of t->live->pid (threads created meanwhile too), read
   their registers and thread pointers into t->threads, call
   while_stopped(t, arg) (the snapshot: false = failed, with err set),
   and detach every thread with its pending signal.  Fills t->live's
   stopped_ms and unstoppable.  On failure err holds one line.  */
enum hw_status hw_ptrace_run(struct hw_target *t,
			     const struct hw_ptrace_opts *opts,
			     bool (*while_stopped)(struct hw_target *t,
						   void *arg, char *err,
						   size_t errlen),
			     void *arg, char *err, size_t errlen);

#endif /* HW_TARGET_PTRACE_H */
