/* turns.h - the corpus programs' threads take turns on the heap: thread
 * t may touch it while turn == t, so a truth file needs no locking and
 * every heap operation has a known order.  No sleep, no timing: a thread
 * waits on a condition variable until its turn is passed to it.
 * Included by corpora/jemalloc/truth.h and corpora/tcmalloc/truth.h.
 */
#ifndef CORPUS_TURNS_H
#define CORPUS_TURNS_H

#include <pthread.h>

static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn;

static void turn_wait(int t)
{
	pthread_mutex_lock(&turn_mu);
	while (turn != t)
		pthread_cond_wait(&turn_cv, &turn_mu);
	pthread_mutex_unlock(&turn_mu);
}

static void turn_pass(int next)
{
	pthread_mutex_lock(&turn_mu);
	turn = next;
	pthread_cond_broadcast(&turn_cv);
	pthread_mutex_unlock(&turn_mu);
}

/* Block for good (the thread is alive and parked at abort time).  */
static void park_forever(void)
{
	turn_wait(-1000);
}

#endif /* CORPUS_TURNS_H */
