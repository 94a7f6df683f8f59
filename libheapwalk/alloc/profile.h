/* profile.h - an allocator's own heap profile: the allocation sites it
 * sampled, as the walker read them out of the target.
 *
 * gperftools tcmalloc run with TCMALLOC_SAMPLE_PARAMETER=N samples an
 * allocation about every N bytes and keeps each sampled object's stack
 * and request beside it, until the object is freed; there are no
 * per-thread or cumulative counters.  GetHeapSample lists the samples
 * one by one; the sites here group them by stack.
 *
 * jemalloc built with --enable-prof and run with prof:true samples one
 * allocation in about every 2^lg_prof_sample bytes, records the caller's
 * backtrace once per distinct stack (a "gctx") and counts the sampled
 * objects and bytes still live per stack and allocating thread (a "tctx").
 * prof.dump writes those counters as a heap_v2 file; the walker reads the
 * same counters from the core, so a report can write the same file, or
 * symbolize and rank the stacks itself.
 *
 * Counts come in two forms.  `dump` holds the four numbers prof.dump
 * prints for a record, which on jemalloc 5.3 with prof_unbias are already
 * transformed so that jeprof's own scaling recovers the unbiased figures.
 * `est` is the estimate of the true heap: jemalloc 5.3's unbiased
 * counters when it kept them, otherwise jeprof's scaling of the sampled
 * counts by 1 / (1 - exp(-avgsize / period)); with a period of 1 (every
 * allocation sampled) both are the sampled counts.
 */
#ifndef HW_PROFILE_H
#define HW_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One record's counters: live (cur) and, with prof_accum, cumulative.  */
struct hw_prof_counts {
	uint64_t curobjs, curbytes, accumobjs, accumbytes;
};

/* A thread as prof.dump's header lists it (tdata).  */
struct hw_prof_thread {
	uint64_t uid;                 /* jemalloc's thr_uid, not the tid */
	const char *name;             /* thread.prof.name, or NULL */
	struct hw_prof_counts dump, est;
};

/* One stack's counters from one thread (tctx).  */
struct hw_prof_site_thread {
	uint64_t uid;
	struct hw_prof_counts dump, est;
};

/* One sampled stack (gctx): the return addresses jemalloc captured,
   innermost first, exactly as prof.dump prints them.  */
struct hw_prof_site {
	uint64_t addr;                /* the gctx, for findings and links */
	const uint64_t *pcs;
	unsigned npcs;
	struct hw_prof_counts dump, est;
	uint64_t sampled_objs, sampled_bytes;       /* live, as sampled */
	const struct hw_prof_site_thread *threads;   /* prof.dump's order */
	size_t nthreads;
};

/* One end of a recent-allocation record: who, when, from where.  */
struct hw_prof_event {
	uint64_t thread;              /* thr_uid */
	const char *thread_name;      /* or NULL */
	uint64_t time_ns;             /* jemalloc's clock (prof_time_res) */
	const uint64_t *pcs;          /* innermost first, as recorded */
	unsigned npcs;
};

/* jemalloc 5.3's record of one of the last sampled allocations
   (prof_recent, kept while opt.prof_recent_alloc_max is not 0): its
   sizes, its allocating stack, and once it was freed, the freeing one.  */
struct hw_prof_recent {
	uint64_t addr;                /* the prof_recent_t */
	uint64_t size, usize;
	bool released;                /* freed (or its record evicted) */
	bool freed_known;             /* released, with the free's stack */
	uint64_t ptr;                 /* the object while live, 0 if unknown */
	struct hw_prof_event alloc, dalloc;
};

/* One sampled object, where the allocator keeps each on its own
   (gperftools tcmalloc: a StackTrace beside the object's span).  */
struct hw_prof_sample {
	uint64_t addr;                /* the object */
	uint64_t size;                /* its request, as the record says */
	const struct hw_prof_site *site;
};

/* The file the allocator itself writes its profile as.  */
enum hw_prof_native {
	HW_PROF_HEAP_V2,              /* jemalloc's prof.dump */
	HW_PROF_GPERFTOOLS,           /* gperftools' GetHeapSample */
};

struct hw_profile {
	const char *allocator;        /* "jemalloc 5.3.0" */
	enum hw_prof_native native;
	/* Every allocation was recorded, per stack (gperftools' heap
	   profiler): counts are exact, no period.  */
	bool all_allocations;
	uint64_t period;              /* 2^lg_prof_sample: heap_v2's header */
	unsigned lg_sample;           /* jemalloc's; a period that is no
					 power of two (tcmalloc's) has none */
	bool period_known;            /* false: assumed (the default, 19) */
	const char *period_from;      /* what it was read from */
	bool active;                  /* prof.active at the time */
	bool accum;                   /* opt.prof_accum */
	bool unbias;                  /* 5.3's opt.prof_unbias */
	const char *found_by;         /* how the samples were found */
	uint64_t code_low, code_high; /* the allocator's own module: its
					 frames top every stack */
	struct hw_prof_counts dump, est;           /* the t*: line */
	uint64_t sampled_objs, sampled_bytes;
	const struct hw_prof_thread *threads;       /* by uid */
	size_t nthreads;
	const struct hw_prof_site *sites;           /* prof.dump's order */
	size_t nsites;
	/* Each sampled object, in the order the allocator's own heap
	   sample lists them; NULL where only per-stack counters are kept
	   (jemalloc).  */
	const struct hw_prof_sample *samples;
	size_t nsamples;
	/* Sampled objects still live whose counters could not be read
	   (damaged or half-updated records); 0 when everything added up.  */
	uint64_t unreadable;
	/* 5.3's recent allocations, oldest first, as
	   experimental.prof_recent.alloc_dump lists them.  */
	const char *recent_from;      /* how the list was found; NULL: not */
	const char *recent_why;       /* why there is none, when not */
	int64_t recent_max;           /* its limit (-1: none) */
	bool recent_max_known;
	bool recent_broken;           /* the ring did not close: part read */
	const struct hw_prof_recent *recent;
	size_t nrecent;
};

#endif /* HW_PROFILE_H */
