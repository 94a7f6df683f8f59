/* session.h - the session handle and what every part of the library shares.
 *
 * A session owns the target, the symbol layer and the allocator walker
 * that matched; findings and the last error hang off it too, so the
 * library has no global mutable state.
 */
#ifndef HW_SESSION_H
#define HW_SESSION_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <gelf.h>

#include "../heapwalk.h"

struct hw_target;
struct hw_syms;
struct hw_allocator_ops;
struct hw_arch;
/* The analyses' cached results (hw_session.slots).  */
enum hw_slot_id {
	HW_SLOT_REACH,      /* leaks' marks (analysis/reach.h) */
	HW_SLOT_VTYPES,     /* vtable word -> C++ class (analysis/vtype.h) */
	HW_NSLOTS
};

/* One problem found in the heap: where, and what is wrong, in the words
   glibc itself would use where it has them.  */
struct hw_finding {
	uint64_t addr;
	bool note;          /* worth saying, but not corruption */
	char problem[256];
};

/* Findings are kept up to this many; past it they are only counted.  */
#define HW_MAX_FINDINGS 10000

/* Parts of the heap no walk could cover (damage, missing pages): every
   total is then partial.  The first place and reason are kept.  */
struct hw_partial {
	uint64_t places;
	uint64_t addr;
	char why[256];
};

/* The findings (and partial marks) one instance's open() made, kept
   aside until the session knows which instance it walks.  */
struct hw_findings_stash {
	struct hw_finding *items;
	size_t n;
	uint64_t total;
	struct hw_partial partial;   /* places: only those of this open() */
};

/* One allocator instance found in the target (summary lists them all;
   --allocator N picks one, numbered from 1 in this order).  */
struct hw_instance {
	const struct hw_allocator_ops *ops;
	void *state;                      /* open until one is chosen */
	char version[64];
	char module[256];
	const struct hw_arch *arch;
	uint64_t held;
	struct hw_findings_stash stash;
};

#define HW_MAX_INSTANCES 16

/* How the session may use the machine (hw_open_opts, resolved).  */
struct hw_policy {
	unsigned threads;       /* >= 1: walk threads, the caller's included */
	bool prefault;
	uint64_t cache_max;
};

struct hw_session {
	struct hw_open_opts opts;
	/* The caller's strings, copied at open (opts points at these).  */
	char *core_path;
	char *exe;
	char *sysroot;
	char **debug_dirs;
	char *allocator;
	char *cache_dir;
	struct hw_target *target;
	Elf *core_elf;
	struct hw_syms *syms;
	const struct hw_allocator_ops *alloc;
	void *alloc_state;
	size_t opening;                   /* instance of the walker whose
					     open() runs: 0..count()-1 */
	struct hw_instance instances[HW_MAX_INSTANCES];
	size_t ninstances;
	size_t selected;                  /* index of the walked instance */
	const struct hw_arch *arch;       /* the walked instance's: may
					     differ from the core's (an
					     emulated guest) */
	bool alloc_present;               /* set by an open() that found its
					     allocator, even if it fails */
	pthread_mutex_t findings_lock;    /* walkers may run in threads */
	struct hw_finding *findings;
	size_t nfindings, findings_cap;
	uint64_t findings_total;
	/* Hashes of the findings recorded (addr and text): a place two walks
	   cover (a lookup's, then a report's) is reported once.  */
	struct hw_seen {
		uint64_t *slots;
		size_t cap, n;
	} seen;
	struct hw_partial partial;
	bool budget_said;                 /* partial has the cache budget */
	struct hw_policy policy;
	/* What analyses keep for the session's later questions, each
	   made on first use and freed by its own function at close (see
	   hw_slot_get): the session knows none of them.  */
	struct hw_slot {
		void *data;
		void (*release)(void *data);
	} slots[HW_NSLOTS];
	atomic_bool oom;                  /* a walk ran out of memory: its
					     results are not to be trusted */
	/* What was done (struct hw_work), counted by the walk wrappers of
	   alloc.h and the walkers; atomic: list walks run in threads.  */
	struct {
		_Atomic uint64_t walks, around, list_entries, guessed, summed,
			sums_failed;
		/* Heaps whose walk was cut among threads, and their pieces
		   (hw_work_heap_cut).  */
		_Atomic uint64_t heaps_cut, cut_pieces;
		/* Which sums disagreed, "; "-joined (hw_work_fallback):
		   written by the thread that settles a walk, after it.  */
		char fallbacks[1024];
		size_t fallbacks_len;     /* of its items that fit */
		unsigned fallbacks_more;  /* items that did not */
	} work;
	struct timespec opened_at;        /* CLOCK_MONOTONIC at the open's
					     start: a triage record's time */
	char err[512];
};

/* An analysis's cached result in s, or NULL before it made one.  */
static inline void *hw_slot_get(const struct hw_session *s,
				enum hw_slot_id id)
{
	return s->slots[id].data;
}

/* Keep data in slot id until the session closes, when release(data)
   frees it.  */
static inline void hw_slot_set(struct hw_session *s, enum hw_slot_id id,
			       void *data, void (*release)(void *data))
{
	s->slots[id] = (struct hw_slot){ data, release };
}

/* Tell the front end how far a long phase is (hw_open_opts.progress);
   nothing when it asked for no progress.  */
void hw_progress(const struct hw_session *s, const char *phase, uint64_t done,
		 uint64_t total);

/* Open another core with the options s was opened with (--exe,
   --sysroot, debug dirs, --allocator, threads, cache): `diff`'s base, a
   snapshot of the same program.  As hw_session_open(): close *out in
   every case.  */
enum hw_status hw_session_open_like(const struct hw_session *s,
				    const char *core, struct hw_session **out);

/* hw_session_run() itself (commands/table.c), which link/ exports under
   the public name, as each kind of link needs it.  */
enum hw_status hw_command_run(hw_session *s, int argc, char *const argv[],
			      const struct hw_output *out);

/* Record an error for hw_session_errmsg() and return st.  */
enum hw_status hw_error(struct hw_session *s, enum hw_status st,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record a finding at addr.  Identical findings at one address are kept
   once.  */
void hw_finding(struct hw_session *s, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like hw_finding, for a state that is suspicious but not corruption
   (an arena locked mid-update, a count that heuristics could not match).  */
void hw_note(struct hw_session *s, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Every finding so far becomes a note, `why` appended ("(in flight:
   ...)"): what a thread inside the allocator had half done when a live
   process was stopped is no corruption.  */
void hw_findings_in_flight(struct hw_session *s, const char *why);

/* A walk could not get memory: the command fails with "out of memory"
   (never a heap finding).  Thread-safe.  */
void hw_oom(struct hw_session *s);
/* A proof by sums that did not hold (what, where), for --stats: counted
   in work.sums_failed and named in work.fallbacks.  From the thread that
   settles a walk only.  */
void hw_work_fallback(struct hw_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The findings so far, and dropping every one made since: a walker
   that opens twice keeps only the second open's.  */
struct hw_findings_mark {
	size_t n;
	uint64_t total, partial_places;
};
struct hw_findings_mark hw_findings_mark(const struct hw_session *s);
void hw_findings_drop(struct hw_session *s, struct hw_findings_mark m);

/* Threads a walk may use, the caller's included (>= 1).  */
unsigned hw_threads(const struct hw_session *s);

/* Parts a job may run in at once (hw_run_parts); past it, parts run in
   the caller's thread.  */
#define HW_MAX_PARTS 64
/* fn(part) for each of the n parts at jobs (an array of n parts of size
   bytes each): part 0 in the caller's thread, the others in threads of
   their own (or, when one cannot be made, in the caller's thread after
   part 0); returns when every part is done.  */
void hw_run_parts(void *jobs, size_t size, unsigned n, void *(*fn)(void *));
/* Cut the units [0, nunits) of a walk into nparts runs of about equal
   weight (weight(ctx, u): unit u's bytes or blocks), in order: part k
   takes [bounds[k], bounds[k + 1]), the last part the rest.  bounds has
   nparts + 1 entries.  */
void hw_split_parts(size_t nunits, uint64_t (*weight)(const void *ctx,
						      size_t u),
		    const void *ctx, unsigned nparts, size_t bounds[]);
/* Cut the units [0, nunits) of a walk into pieces (hw_allocator_ops.
   pieces) of at least `per_piece` weight each (the last may have less),
   in order: piece i starts at unit (*starts)[i] (a malloc'd array) and
   ends where the next starts, the last at nunits.  Returns how many, 0
   when out of memory or when there is no unit.  */
size_t hw_cut_pieces(size_t nunits, uint64_t (*weight)(const void *ctx,
						       size_t u),
		     const void *ctx, uint64_t per_piece, size_t **starts);

/* Check that the files and directories named in s->opts exist and are
   of the right kind: HW_OK, or HW_USAGE with the error recorded.  */
enum hw_status hw_check_open_opts(struct hw_session *s);

/* Like hw_finding, for damage or missing memory that made a walk skip
   part of the heap: the finding is recorded and every total the reports
   print is marked partial, with the first such reason.  */
void hw_partial(struct hw_session *s, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* HW_SESSION_H */
