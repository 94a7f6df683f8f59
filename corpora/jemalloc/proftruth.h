/* proftruth.h - ground truth for the jemalloc heap-profile corpus
 * (prof1.c: every allocation sampled; prof2.c: the default sample rate).
 *
 * A program defines jemalloc's `malloc_conf` to turn profiling on,
 * allocates from a few "site" functions (each calls malloc itself, so
 * the return address jemalloc records for the sample lies inside that
 * function), records every allocation here (pointer, usable size, site)
 * and every free, then asks jemalloc to write its own profile
 * (mallctl "prof.dump") next to the truth file, writes the truth and
 * abort()s for a core.  heapwalk's `prof` must rebuild that profile from
 * the core.
 *
 * Like truth.h: nothing here calls malloc (static storage, write(2),
 * out.h's number formatter), so the program's own allocations are exactly
 * the recorded ones.  A broken rule is a plan error: exit 2, no core.
 *
 * Truth format (one record per line):
 *   # ...                         comments
 *   prog NAME
 *   version V                     mallctl "version"
 *   lg_prof_sample N              mallctl "opt.lg_prof_sample" (period 2^N)
 *   prof_unbias 0|1               mallctl "opt.prof_unbias", where jemalloc
 *                                 has that name (neither 5.2.1 nor 5.3.0
 *                                 does, though 5.3.0 unbiases its dumps)
 *   thread NAME                   a thread named with "thread.prof.name"
 *   site NAME 0xSTART 0xEND OBJS BYTES
 *        NAME: the function that called malloc (for an always_inline site,
 *        the inlined function's name; [START, END) is then the range of
 *        the noinline function it was inlined into, which holds nothing
 *        else).  [START, END): from the function's address to a marker
 *        function defined right after it (-O0 keeps source order; the
 *        program checks the order).  OBJS/BYTES: live objects made there
 *        and the sum of their malloc_usable_size (jemalloc's profile
 *        counts usable sizes too).  These are the TRUE live figures, not
 *        sampled ones: with lg_prof_sample 0 the profile must match them
 *        exactly, at the default rate only as an estimate.
 *   stat allocated N              mallctl "stats.allocated" after
 *                                 "epoch", right before the core: jemalloc
 *                                 counts each sampled small object at the
 *                                 large size class it was promoted to
 *   total OBJS BYTES              the sums over the sites: the program's
 *        own allocations only.  Others allocate through jemalloc too and
 *        the profile counts them (with lg_prof_sample 0 all of them):
 *        libstdc++'s exception-handling pool at start-up (80 KiB; Debian's
 *        libjemalloc2 links libstdc++) and ld.so's DTV for each new
 *        thread (pthread_create); this total leaves them out.  jemalloc's
 *        internal metadata is never sampled.
 *   obj 0xPTR USIZE SITE          every live recorded object, in the order
 *                                 it was allocated
 *   dump PATH                     where prof.dump wrote the profile
 *   recent PATH MAX               (programs that called pt_recent_begin,
 *                                 on a jemalloc with 5.3's recent-allocation
 *                                 records) where the program had jemalloc
 *                                 dump them (mallctl
 *                                 "experimental.prof_recent.alloc_dump",
 *                                 jemalloc's compact JSON) and the
 *                                 prof_recent_alloc_max it set
 *   end
 */
#ifndef JE_PROFTRUTH_H
#define JE_PROFTRUTH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jemalloc/jemalloc.h>

#include "../common/out.h"
#include "../common/live.h"

#define PT_MAX_SITES 16
#define PT_MAX_RECS 65536

struct pt_site {
	const char *name;
	uintptr_t start, end;
};

struct pt_rec {
	void *p;
	size_t usize;
	unsigned char site, live;
};

static struct pt_site PT_site[PT_MAX_SITES];
static int PT_nsites;
static struct pt_rec PT_rec[PT_MAX_RECS];
static int PT_nrecs;
static const char *PT_thread_name[4];
static int PT_nthreads;
static char PT_dump_path[4096];
static const char *PT_version;
static size_t PT_lg_sample;
static int PT_unbias = -1;          /* -1: jemalloc has no opt.prof_unbias */
static ssize_t PT_recent_max;        /* 0: no recent-allocation records */
static char PT_recent_path[4096];

/* Records are appended by every thread, one at a time (the programs
   hand the heap from thread to thread), but a lock costs nothing.  */
static pthread_mutex_t PT_mu = PTHREAD_MUTEX_INITIALIZER;

static void pt_ctl_get(const char *name, void *v, size_t len)
{
	size_t l = len;
	if (mallctl(name, v, &l, NULL, 0) != 0 || l != len)
		die(name);
}

/* Profiling is on as the program asked (its malloc_conf; MALLOC_CONF in
   the environment could override it), with sample period 2^want_lg.  */
static void pt_check_prof(size_t want_lg)
{
	bool prof = false, active = false;
	pt_ctl_get("version", &PT_version, sizeof PT_version);
	pt_ctl_get("opt.prof", &prof, sizeof prof);
	if (!prof)
		die("opt.prof is false: this jemalloc has no profiling or malloc_conf was not read");
	pt_ctl_get("prof.active", &active, sizeof active);
	if (!active)
		die("prof.active is false");
	pt_ctl_get("opt.lg_prof_sample", &PT_lg_sample, sizeof PT_lg_sample);
	if (PT_lg_sample != want_lg)
		die("opt.lg_prof_sample is not what malloc_conf asked for");
	bool unbias;
	size_t l = sizeof unbias;
	if (mallctl("opt.prof_unbias", &unbias, &l, NULL, 0) == 0 &&
	    l == sizeof unbias)
		PT_unbias = unbias;
}

/* A site: NAME's code is [start, end).  */
static int pt_site(const char *name, void (*start)(void), void (*end)(void))
{
	uintptr_t s = (uintptr_t)start, e = (uintptr_t)end;
	if (PT_nsites == PT_MAX_SITES)
		die("too many sites");
	if (!(s < e && e - s < 65536))
		die("a site's end marker does not follow it (compiled with reordering?)");
	for (int i = 0; i < PT_nsites; i++)
		if (s < PT_site[i].end && PT_site[i].start < e)
			die("two sites overlap");
	PT_site[PT_nsites] = (struct pt_site){ name, s, e };
	return PT_nsites++;
}

/* Called right after the site's own malloc.  Not inlined: it allocates
   nothing, so where it sits does not matter to the profile.  */
static __attribute__((noinline)) void *pt_alloc(int site, void *p, size_t req)
{
	if (!p)
		die("malloc failed");
	size_t us = malloc_usable_size(p);
	if (us < req)
		die("malloc_usable_size below the request");
	pthread_mutex_lock(&PT_mu);
	if (PT_nrecs == PT_MAX_RECS)
		die("too many records");
	PT_rec[PT_nrecs++] = (struct pt_rec){ p, us, (unsigned char)site, 1 };
	pthread_mutex_unlock(&PT_mu);
	return p;
}

/* Free the object of record i (its index: PT_nrecs - 1 right after its
   pt_alloc).  */
static void pt_free_rec(int i)
{
	pthread_mutex_lock(&PT_mu);
	if (i < 0 || i >= PT_nrecs || !PT_rec[i].live)
		die("free of an unrecorded or freed record");
	PT_rec[i].live = 0;
	void *p = PT_rec[i].p;
	pthread_mutex_unlock(&PT_mu);
	free(p);
}

/* The calling thread's profile name (jemalloc's "thread.prof.name").  */
static void pt_name_thread(const char *name)
{
	if (mallctl("thread.prof.name", NULL, NULL, &name, sizeof name) != 0)
		die("thread.prof.name failed");
	if (PT_nthreads < 4)
		PT_thread_name[PT_nthreads++] = name;
}

/* "DIR/prof.heap" for a truth file "DIR/NAME" ("prof.heap" alone for
   a bare NAME: the cwd).  */
static void pt_dump_path(const char *truth)
{
	const char *slash = strrchr(truth, '/');
	size_t dl = slash ? (size_t)(slash - truth) + 1 : 0;
	if (dl + sizeof "prof.heap" > sizeof PT_dump_path)
		die("truth path too long");
	memcpy(PT_dump_path, truth, dl);
	memcpy(PT_dump_path + dl, "prof.heap", sizeof "prof.heap");
}

/* Ask jemalloc (5.3) to keep its last `max` sampled allocations and
   their frees, with stacks (prof_recent).  Without that mallctl (5.2)
   nothing happens and the truth has no `recent` line.  */
__attribute__((unused)) static void pt_recent_begin(ssize_t max)
{
	if (mallctl("experimental.prof_recent.alloc_max", NULL, NULL, &max,
		    sizeof max) == 0)
		PT_recent_max = max;
}

static void pt_recent_out(void *cookie, const char *s)
{
	int fd = *(int *)cookie;
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			die("cannot write the recent-allocation dump");
		s += w;
		n -= (size_t)w;
	}
}

/* jemalloc's own dump of the recent-allocation records (it allocates
   its buffer as internal metadata, which is never sampled), next to
   prof.heap.  */
static void pt_recent_dump(void)
{
	if (!PT_recent_max)
		return;
	size_t dl = strlen(PT_dump_path) - strlen("prof.heap");
	memcpy(PT_recent_path, PT_dump_path, dl);
	memcpy(PT_recent_path + dl, "prof.recent.json", sizeof "prof.recent.json");
	int fd = open(PT_recent_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0644);
	if (fd < 0)
		die("cannot open the recent-allocation dump");
	struct {
		void (*cb)(void *, const char *);
		void *cookie;
	} packet = { pt_recent_out, &fd };
	if (mallctl("experimental.prof_recent.alloc_dump", NULL, NULL, &packet,
		    sizeof packet) != 0)
		die("mallctl experimental.prof_recent.alloc_dump failed");
	close(fd);
}

/* jemalloc's own profile, then the truth, then abort() (or, in live
   mode, wait for the tracer: live.h's live_park).  Nothing may
   allocate between the last recorded operation and the core.  */
static void pt_dump_write_and_abort(const char *prog, const char *truth)
{
	static unsigned long long objs[PT_MAX_SITES], bytes[PT_MAX_SITES];
	unsigned long long tobjs = 0, tbytes = 0;

	for (int i = 0; i < PT_nrecs; i++)
		if (PT_rec[i].live) {
			objs[PT_rec[i].site]++;
			bytes[PT_rec[i].site] += PT_rec[i].usize;
		}
	for (int s = 0; s < PT_nsites; s++) {
		if (objs[s] == 0)
			die("plan error: a site has no live object (its record would vanish)");
		tobjs += objs[s];
		tbytes += bytes[s];
	}

	pt_dump_path(truth);
	const char *path = PT_dump_path;
	if (mallctl("prof.dump", NULL, NULL, &path, sizeof path) != 0)
		die("mallctl prof.dump failed");
	pt_recent_dump();
	/* The statistics as they are now (epoch refreshes them; neither
	   call allocates).  */
	uint64_t epoch = 1;
	size_t elen = sizeof epoch, allocated = 0, alen = sizeof allocated;
	if (mallctl("epoch", &epoch, &elen, &epoch, sizeof epoch) != 0 ||
	    mallctl("stats.allocated", &allocated, &alen, NULL, 0) != 0)
		die("mallctl stats.allocated failed");

	out_fd = open(truth, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	out_str("# heapwalk jemalloc prof corpus ground truth, format in corpora/jemalloc/proftruth.h\n");
	out_str("prog ");
	out_str(prog);
	out_str("\nversion ");
	out_str(PT_version);
	out_str("\nlg_prof_sample ");
	out_num(PT_lg_sample, 10);
	out_str("\n");
	if (PT_unbias >= 0) {
		out_str("prof_unbias ");
		out_num((unsigned)PT_unbias, 10);
		out_str("\n");
	}
	for (int t = 0; t < PT_nthreads; t++) {
		out_str("thread ");
		out_str(PT_thread_name[t]);
		out_str("\n");
	}
	for (int s = 0; s < PT_nsites; s++) {
		out_str("site ");
		out_str(PT_site[s].name);
		out_str(" ");
		out_num(PT_site[s].start, 16);
		out_str(" ");
		out_num(PT_site[s].end, 16);
		out_str(" ");
		out_num(objs[s], 10);
		out_str(" ");
		out_num(bytes[s], 10);
		out_str("\n");
	}
	out_str("stat allocated ");
	out_num(allocated, 10);
	out_str("\n");
	out_str("total ");
	out_num(tobjs, 10);
	out_str(" ");
	out_num(tbytes, 10);
	out_str("\n");
	for (int i = 0; i < PT_nrecs; i++)
		if (PT_rec[i].live) {
			out_str("obj ");
			out_num((uintptr_t)PT_rec[i].p, 16);
			out_str(" ");
			out_num(PT_rec[i].usize, 10);
			out_str(" ");
			out_str(PT_site[PT_rec[i].site].name);
			out_str("\n");
		}
	out_str("dump ");
	out_str(PT_dump_path);
	if (PT_recent_max) {
		out_str("\nrecent ");
		out_str(PT_recent_path);
		out_str(" ");
		out_num((unsigned long long)PT_recent_max, 10);
	}
	out_str("\nend\n");
	out_flush();
	close(out_fd);
	/* CORPUS_LIVE=1: stay alive for `heapwalk --pid` (live.h).  */
	if (live_mode())
		live_park(NULL);
	abort();
}

/* A thread that stays alive, blocked, until the core is taken.  */
static pthread_mutex_t PT_park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t PT_park_cv = PTHREAD_COND_INITIALIZER;
static int PT_parked;

__attribute__((unused)) static void pt_park_forever(void)
{
	pthread_mutex_lock(&PT_park_mu);
	PT_parked++;
	pthread_cond_broadcast(&PT_park_cv);
	for (;;)
		pthread_cond_wait(&PT_park_cv, &PT_park_mu);
}

/* Wait until n threads are parked.  */
__attribute__((unused)) static void pt_wait_parked(int n)
{
	pthread_mutex_lock(&PT_park_mu);
	while (PT_parked < n)
		pthread_cond_wait(&PT_park_cv, &PT_park_mu);
	pthread_mutex_unlock(&PT_park_mu);
}

#endif
