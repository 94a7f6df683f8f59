/* process.h - a live process as a target.  */
#ifndef HW_TARGET_PROCESS_H
#define HW_TARGET_PROCESS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../heapwalk.h"
#include "target.h"

struct hw_process_opts {
	bool no_stop;            /* never stop all threads at once */
	uint64_t cache_max;      /* bytes the cache may hold */
	int stop_wait_ms;        /* how long a thread may take to stop */
	const volatile sig_atomic_t *cancel;
};

/* Open process `pid`: its mappings from /proc/PID/maps, its threads'
   registers (ptrace), and, unless no_stop, a snapshot of every writable
   page taken while all its threads were stopped.  The process runs again
   when this returns, whatever the outcome.  On failure err holds one line
   naming the cause (and the fix, for permissions).  */
enum hw_status hw_process_open(int pid, const struct hw_process_opts *opts,
			       struct hw_target **out, char *err,
			       size_t errlen);

/* Has process `pid` lost its memory (exited, killed, or every thread of
   it a zombie not yet reaped, or a SIGKILL on its way through its
   threads)?  A zombie still answers kill(pid, 0).  A
   process whose main thread called pthread_exit is not gone while
   another thread runs, whichever thread its memory was read through.  */
bool hw_process_gone(int pid);

/* Has thread tid of process pid ended: a zombie or dead, or gone?  */
bool hw_task_ended(int pid, int tid);

#endif /* HW_TARGET_PROCESS_H */
