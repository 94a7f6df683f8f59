/* prof1 - gperftools tcmalloc's sampled heap profile, with the profile
 * tcmalloc itself writes at the moment of the core.
 *
 * Linked with the full library (-ltcmalloc: the minimal one is built
 * without sampling) and run with TCMALLOC_SAMPLE_PARAMETER=4096
 * (prof1.env): tcmalloc samples
 * an allocation about every 4 KiB requested, keeps the caller's stack
 * for it (a StackTrace beside the object's own span) and writes them all
 * on request, MallocExtension::GetHeapSample, as the legacy heap profile
 * `pprof` reads ("heap profile: ... @ heap_v2/4096").  The program
 * allocates from a few site functions (each calls the allocator itself,
 * so the return address in the sample lies in that function), frees
 * some, then has tcmalloc write
 * its profile to DIR/prof.heap (the truth's directory) and abort()s.
 *
 * The profile goes into a string reserved beforehand: GetHeapSample then
 * allocates nothing that outlives it (its table of traces is freed, the
 * string does not grow), so the core's samples are the profile's.
 * tcmalloc made the main thread's cache before it read its options, and
 * that cache never samples: the sites run in two threads made later.
 *
 * Truth (write(2), no malloc after the profile):
 *   prog prof1
 *   # tcmalloc VERSION
 *   sample_parameter N            TCMALLOC_SAMPLE_PARAMETER as read
 *   site NAME 0xSTART 0xEND OBJS BYTES
 *        the function's code [START, END) (up to a marker function
 *        defined after it; -O0 keeps the order, checked), the objects it
 *        allocated still live and their requested bytes (all of them;
 *        the profile holds only the sampled ones)
 *   obj 0xPTR REQUEST USABLE SITE every live object, in allocation order,
 *                                 and its tc_malloc_size (for a sampled
 *                                 one, its request's class: not its span)
 *   dump PATH                     the profile tcmalloc wrote
 *   end
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include <gperftools/malloc_extension.h>
#include <gperftools/tcmalloc.h>
#ifdef PROF1_HEAP_PROFILER
#include <gperftools/heap-profiler.h>
#endif

#include "../common/out.h"

#define MAX_SITES 8
#define MAX_RECS 8192

struct site {
	const char *name;
	uintptr_t start, end;
};

struct rec {
	void *p;
	size_t req, usable;
	unsigned char site, live;
};

static struct site sites[MAX_SITES];
static int nsites;
static struct rec recs[MAX_RECS];
static int nrecs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int add_site(const char *name, void (*start)(void), void (*end)(void))
{
	uintptr_t s = (uintptr_t)start, e = (uintptr_t)end;
	if (nsites == MAX_SITES)
		die("too many sites");
	if (!(s < e && e - s < 65536))
		die("a site's end marker does not follow it");
	sites[nsites] = (struct site){ name, s, e };
	return nsites++;
}

static __attribute__((noinline)) void *noted(int site, void *p, size_t req)
{
	if (!p)
		die("allocation failed");
	pthread_mutex_lock(&mu);
	if (nrecs == MAX_RECS)
		die("too many records");
	recs[nrecs++] = (struct rec){ p, req, tc_malloc_size(p),
				      (unsigned char)site, 1 };
	pthread_mutex_unlock(&mu);
	return p;
}

static void drop(int i)
{
	pthread_mutex_lock(&mu);
	if (!recs[i].live)
		die("a record freed twice");
	recs[i].live = 0;
	void *p = recs[i].p;
	pthread_mutex_unlock(&mu);
	free(p);
}

static int S_small, S_medium, S_large, S_calloc, S_inner, S_new, S_thread;

/* Each site function allocates and returns; its end marker follows.  */
extern "C" {
__attribute__((noinline)) void site_small(size_t n)
{
	noted(S_small, malloc(n), n);
}
__attribute__((noinline)) void site_small_end(void) {}

__attribute__((noinline)) void site_medium(size_t n)
{
	noted(S_medium, malloc(n), n);
}
__attribute__((noinline)) void site_medium_end(void) {}

__attribute__((noinline)) void site_large(size_t n)
{
	noted(S_large, malloc(n), n);
}
__attribute__((noinline)) void site_large_end(void) {}

__attribute__((noinline)) void site_calloc(size_t n)
{
	noted(S_calloc, calloc(n, 4), n * 4);
}
__attribute__((noinline)) void site_calloc_end(void) {}

/* The far end of a call chain: main -> chain_outer -> chain_middle ->
   chain_inner.  */
__attribute__((noinline)) void chain_inner(size_t n)
{
	noted(S_inner, malloc(n), n);
}
__attribute__((noinline)) void chain_inner_end(void) {}
__attribute__((noinline)) void chain_middle(size_t n)
{
	chain_inner(n);
}
__attribute__((noinline)) void chain_outer(size_t n)
{
	chain_middle(n + 8);
}

__attribute__((noinline)) void site_new(size_t n)
{
	noted(S_new, operator new[](n), n);
}
__attribute__((noinline)) void site_new_end(void) {}

__attribute__((noinline)) void thread_site(size_t n)
{
	noted(S_thread, malloc(n), n);
}
__attribute__((noinline)) void thread_site_end(void) {}
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 300; i++)
		thread_site(200 + (size_t)i * 13);
	return NULL;
}

static void *sites_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++)
		site_small(16 + (size_t)(i % 7) * 8);
	for (int i = 0; i < 400; i++)
		site_medium(1000 + (size_t)i * 5);
	for (int i = 0; i < 40; i++)
		site_large(40000 + (size_t)i * 4096);
	for (int i = 0; i < 300; i++)
		site_calloc(100 + (size_t)i);
	for (int i = 0; i < 200; i++)
		chain_outer(600 + (size_t)i * 3);
	for (int i = 0; i < 200; i++)
		site_new(2048 + (size_t)i);
	return NULL;
}

/* Run fn in a thread of its own, to its end.  */
static void run_thread(void *(*fn)(void *))
{
	pthread_t th;
	if (pthread_create(&th, NULL, fn, NULL) != 0)
		die("pthread_create failed");
	if (pthread_join(th, NULL) != 0)
		die("pthread_join failed");
}

static void write_truth(const char *path, const char *dump, long period)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	out_str("prog prof1\n# tcmalloc ");
	out_str(TC_VERSION_STRING + 11); /* "gperftools 2.10" */
	out_str("\nsample_parameter ");
	out_num((unsigned long long)period, 10);
	out_str("\n");
	for (int s = 0; s < nsites; s++) {
		unsigned long long objs = 0, bytes = 0;
		for (int i = 0; i < nrecs; i++)
			if (recs[i].live && recs[i].site == s) {
				objs++;
				bytes += recs[i].req;
			}
		out_str("site ");
		out_str(sites[s].name);
		out_str(" ");
		out_num(sites[s].start, 16);
		out_str(" ");
		out_num(sites[s].end, 16);
		out_str(" ");
		out_num(objs, 10);
		out_str(" ");
		out_num(bytes, 10);
		out_str("\n");
	}
	for (int i = 0; i < nrecs; i++) {
		if (!recs[i].live)
			continue;
		out_str("obj ");
		out_num((uintptr_t)recs[i].p, 16);
		out_str(" ");
		out_num(recs[i].req, 10);
		out_str(" ");
		out_num(recs[i].usable, 10);
		out_str(" ");
		out_str(sites[recs[i].site].name);
		out_str("\n");
	}
	out_str("dump ");
	out_str(dump);
	out_str("\nend\n");
	out_flush();
	close(out_fd);
}

static char dump_path[4096];

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: prof1 TRUTHFILE");
	const char *env = getenv("TCMALLOC_SAMPLE_PARAMETER");
	long period = env ? strtol(env, NULL, 10) : 0;
	const char *slash = strrchr(argv[1], '/');
	size_t dl = slash ? (size_t)(slash - argv[1]) + 1 : 0;
	if (dl + sizeof "prof.heap" > sizeof dump_path)
		die("truth path too long");
	memcpy(dump_path, argv[1], dl);
	memcpy(dump_path + dl, "prof.heap", sizeof "prof.heap");
#ifdef PROF1_HEAP_PROFILER
	/* Every allocation from here on, in the profiler's table; it
	   writes files only at its dumps (after 1 GiB: never here).  */
	memcpy(dump_path + dl, "hp", sizeof "hp");
	HeapProfilerStart(dump_path);
	memcpy(dump_path + dl, "prof.heap", sizeof "prof.heap");
#else
	if (period <= 0)
		die("TCMALLOC_SAMPLE_PARAMETER is not set (prof1.env)");
#endif

	S_small = add_site("site_small", (void (*)(void))site_small, site_small_end);
	S_medium = add_site("site_medium", (void (*)(void))site_medium, site_medium_end);
	S_large = add_site("site_large", (void (*)(void))site_large, site_large_end);
	S_calloc = add_site("site_calloc", (void (*)(void))site_calloc, site_calloc_end);
	S_inner = add_site("chain_inner", (void (*)(void))chain_inner, chain_inner_end);
	S_new = add_site("site_new", (void (*)(void))site_new, site_new_end);
	S_thread = add_site("thread_site", (void (*)(void))thread_site, thread_site_end);

	/* The main thread's cache was made before tcmalloc read its
	   options (during the program's own start-up) and never samples:
	   the sites run in threads of their own, one after the other.  */
	run_thread(sites_main);
	run_thread(thread_main);
	/* Free every third object: sampled ones leave the profile.  */
	for (int i = 0; i < nrecs; i += 3)
		drop(i);

#ifdef PROF1_HEAP_PROFILER
	/* The heap profiler's table as it writes it.  Its 1 MiB buffer is
	   an allocation of its own, made (and recorded) before the table
	   is written into it, and kept: freeing it would count a free.  */
	const char *text = GetHeapProfile();
	size_t len = text ? strlen(text) : 0;
	if (len < 32 || strncmp(text, "heap profile:", 13) != 0 ||
	    !strstr(text, "@ heapprofile"))
		die("GetHeapProfile wrote no profile (link -ltcmalloc)");
#else
	/* tcmalloc's own profile.  The string is reserved first: the
	   profile fits, it never grows, and it is in the profile.  */
	std::string *prof = new std::string;
	prof->reserve(4u << 20);
	MallocExtension::instance()->GetHeapSample(prof);
	if (prof->size() < 32 || prof->compare(0, 13, "heap profile:") != 0)
		die("GetHeapSample wrote no sampled profile (the minimal "
		    "library is built without sampling: link -ltcmalloc)");
	const char *text = prof->data();
	size_t len = prof->size();
#endif
	int fd = open(dump_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0)
		die("cannot write the profile");
	write_truth(argv[1], dump_path, period);
	abort();
}
