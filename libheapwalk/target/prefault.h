/* prefault.h - fault a mapped core's memory in from a helper thread,
 * and drop it in threads when done.
 *
 * Usage: zero the struct, hw_prefault_add the ranges a walk will read,
 * hw_prefault_start, and hw_prefault_stop before the mapping goes away.
 */
#ifndef HW_TARGET_PREFAULT_H
#define HW_TARGET_PREFAULT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "target.h"

/* Ranges beyond this many are left to the walk's own page faults.  */
#define HW_PREFAULT_MAX 256

struct hw_prefault {
	struct {
		const uint8_t *data;
		uint64_t len;
	} ranges[HW_PREFAULT_MAX];
	size_t nranges;
	atomic_bool stop;
	bool started;
	pthread_t tid;
};

/* Queue the core bytes at [data, data + len) (the region's mapped data;
   it must stay mapped until hw_prefault_stop); false when full.  */
bool hw_prefault_add(struct hw_prefault *pf, const uint8_t *data, uint64_t len);

/* Start the helper on what was queued.  Not starting is harmless.  */
void hw_prefault_start(struct hw_prefault *pf);

/* Stop and join the helper; it notices within a few milliseconds.  */
void hw_prefault_stop(struct hw_prefault *pf);

/* munmap(map, size), its pages dropped by up to nthreads threads first
   (a big mapping whose pages a walk faulted in).  */
void hw_unmap_parallel(void *map, size_t size, unsigned nthreads);

#endif /* HW_TARGET_PREFAULT_H */
