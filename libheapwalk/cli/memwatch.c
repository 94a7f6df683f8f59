/* memwatch.c - sample heapwalk's own memory while a command runs
 * (memwatch.h says why).  Every 5 ms: short phases between samples can
 * hide a peak, so the figure is a floor, which --stats says.
 */
#include "memwatch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MEMWATCH_PERIOD_NS (5 * 1000 * 1000)

static void sample(struct memwatch *w)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	char line[128];
	long anon = 0, file = 0, shmem = 0;
	while (fgets(line, sizeof line, f)) {
		long v;
		if (sscanf(line, "RssAnon: %ld", &v) == 1)
			anon = v;
		else if (sscanf(line, "RssFile: %ld", &v) == 1)
			file = v;
		else if (sscanf(line, "RssShmem: %ld", &v) == 1)
			shmem = v;
	}
	fclose(f);
	pthread_mutex_lock(&w->lock);
	if (anon > w->anon_kib)
		w->anon_kib = anon;
	if (file > w->file_kib)
		w->file_kib = file;
	if (shmem > w->shmem_kib)
		w->shmem_kib = shmem;
	w->samples++;
	pthread_mutex_unlock(&w->lock);
}

static void *watch(void *arg)
{
	struct memwatch *w = arg;
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		pthread_mutex_unlock(&w->lock);
		sample(w);
		pthread_mutex_lock(&w->lock);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += MEMWATCH_PERIOD_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		/* Woken early by memwatch_stop.  */
		while (!w->stop &&
		       pthread_cond_timedwait(&w->stop_cond, &w->lock,
					      &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

bool memwatch_start(struct memwatch *w)
{
	memset(w, 0, sizeof *w);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->stop_cond, NULL);
	sample(w);
	/* Signals stay the main thread's: a stop signal must interrupt
	   what it waits in (heapwalk.c: a live target is let go).  */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w->running = pthread_create(&w->thread, NULL, watch, w) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return w->running;
}

void memwatch_stop(struct memwatch *w)
{
	if (w->running) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->stop_cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		w->running = false;
	}
	sample(w);
}
