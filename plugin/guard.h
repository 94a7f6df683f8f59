/* guard.h - gdb's memory reads, with gdb's Ctrl-C caught.
 *
 * gdb reports Ctrl-C by throwing a C++ exception (a "quit") from the
 * next memory read.  Thrown through the JIT unwinder it leaves gdb's
 * frame machinery half-built: the next `bt` fails or crashes gdb.  So the
 * plugin's reads go through the one C++ function below, which catches
 * it: the read fails, the request is marked interrupted, every later read
 * fails at once, and the plugin answers "interrupted" like any report.
 */
#ifndef HW_PLUGIN_GUARD_H
#define HW_PLUGIN_GUARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gdb_unwind_callbacks;

struct guarded_reader {
	struct gdb_unwind_callbacks *cb;
	bool interrupted;      /* gdb threw: Ctrl-C (or gdb's own error) */
	/* gdb's thread, the only one that may call into gdb: a read the
	   library asks for from another (a walk in threads over a core
	   mapped in place, coremap.h) is refused and counted (atomic).  */
	pthread_t owner;
	unsigned long refused;
};

/* cb->target_read(addr, buf, len); false when it failed or threw.  */
bool guarded_read(struct guarded_reader *g, uint64_t addr, void *buf,
		  int len);

#ifdef __cplusplus
}
#endif

#endif /* HW_PLUGIN_GUARD_H */
