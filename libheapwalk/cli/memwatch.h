/* memwatch.h - heapwalk's own memory, apart from the core's pages.
 *
 * getrusage's peak RSS counts the pages of the core that heapwalk maps
 * and reads (file-backed, or shared for a compressed core unpacked into
 * memory) beside what it allocates: on a 1.6 GB core it reads 1.5 GiB
 * whatever the analysis keeps.  --stats needs the part that is
 * heapwalk's own (RssAnon), which the kernel reports only as a current
 * value: a thread samples it while the command runs.
 */
#ifndef HW_CLI_MEMWATCH_H
#define HW_CLI_MEMWATCH_H

#include <pthread.h>
#include <stdbool.h>

struct memwatch {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t stop_cond;
	bool running, stop;
	/* Peaks of /proc/self/status's RssAnon, RssFile and RssShmem, KiB. */
	long anon_kib, file_kib, shmem_kib;
	unsigned samples;
};

/* Start sampling (false: it cannot; the figures then stay 0).  */
bool memwatch_start(struct memwatch *w);
/* Stop, with one last sample.  */
void memwatch_stop(struct memwatch *w);

#endif
