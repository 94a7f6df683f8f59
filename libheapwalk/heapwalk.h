/* heapwalk.h - the public interface of libheapwalk.
 *
 * libheapwalk answers "where did the memory go?" for a process it does not
 * control: it reads an ELF core file, a live process or a debugger's view
 * of one, finds the allocator's own metadata (glibc's ptmalloc, jemalloc,
 * gperftools' tcmalloc, musl's mallocng) and walks it.
 *
 * This is the only header the command-line tool and the gdb plugin include.
 * Everything hangs off one opaque session; the library keeps no global
 * mutable state and prints nothing by itself: output goes through the
 * write callback the caller hands to hw_session_run().
 *
 * The contract, for every call below:
 *
 * Memory.  What a call is given is read during the call unless said
 *   otherwise.  hw_session_open() copies every string and array of
 *   struct hw_open_opts and of struct hw_memory (paths, debug
 *   directories, the allocator's name, the cache directory, regions,
 *   threads, auxv, siginfo): the caller may free them once it returns.
 *   Not copied, and to stay valid until hw_session_close(): the
 *   callbacks and their cookies (hw_open_opts.progress and
 *   progress_cookie, hw_memory.read and cookie), hw_open_opts.cancel
 *   and hw_memory.spans.  Strings the library returns
 *   (hw_session_errmsg(), hw_session_work_fallbacks()) belong to the
 *   session: valid until the next call on it that can fail, or its
 *   close.  hw_command_*() strings are static.  Strings handed to a
 *   callback live until it returns.
 * Errors.  Every call that can fail returns an enum hw_status, the tool's
 *   exit statuses; hw_session_errmsg() says why in one line.  A session
 *   whose open failed can still be asked why, and must be closed.
 * Threads.  A session is used by one thread at a time; sessions are
 *   independent, any number may be open in as many threads.  A call may
 *   start threads of its own (hw_open_opts.threads) and joins them before
 *   it returns.  The callbacks of hw_blocks() and the other data calls,
 *   and hw_write_fn, run in the calling thread; hw_memory.read in the
 *   calling thread too, unless hw_memory says otherwise (threads > 1).
 *   hw_open_opts.progress runs in the thread that opens or runs.
 *   Signals: the library installs no handler and leaves the calling
 *   thread's mask as it found it; to stop an attach, set *cancel.
 * Versions.  The shared library exports these functions and nothing else,
 *   each in the version node of the release that added it
 *   (libheapwalk.map); a call whose arguments change gets a new node and
 *   the old one stays.  Structs that may grow start with `sz`: set it to
 *   sizeof (the *_INIT macros do), and fields added later read as zero.
 */
#ifndef HEAPWALK_H
#define HEAPWALK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAPWALK_VERSION "0.1.0"

/* One analysis session: a target, its modules and symbols, the allocator
   walkers that matched it.  */
typedef struct hw_session hw_session;

/* Exit statuses, as documented in doc/heapwalk.md.  Library calls that fail
   return one of these too, so a front end can pass them straight on.  */
enum hw_status {
	HW_OK = 0,
	HW_CORRUPT = 1,      /* `check` found corruption */
	HW_USAGE = 2,        /* bad command line or command arguments */
	HW_BAD_TARGET = 3,   /* missing, truncated, not a core, no permission */
	HW_NO_ALLOCATOR = 4, /* no supported allocator found */
};

/* A target read by a front end for the library: what a debugger (the gdb
   plugin) knows of the process it debugs.  The library reads its memory
   through read(), or in place where the front end gives spans.  With
   threads = 1, read() is called only from the thread that calls
   hw_session_open() and hw_session_run(): a debugger's memory interface
   is seldom thread-safe.  With more, any of the session's threads may
   call it: a front end that gives spans for all the memory the walks
   read (the gdb plugin on a core) refuses reads off its own thread and
   runs the command again with threads = 1 if one was refused.
   Everything but the spans is copied at open; the caller may free it
   afterwards.  */
enum hw_memory_prot { HW_MEM_R = 1, HW_MEM_W = 2, HW_MEM_X = 4 };

struct hw_memory_region {
	uint64_t start, end;     /* [start, end) */
	unsigned prot;           /* HW_MEM_*; 0 = unknown (read as rw) */
	const char *path;        /* the file mapped there, or NULL */
	uint64_t offset;         /* of the mapping in that file */
};

#define HW_MEMORY_MAX_REGS 40

struct hw_memory_span {
	uint64_t start;          /* the target's address of data[0] */
	const void *data;        /* NULL: a hole, see hw_memory.spans */
	uint64_t len;
};

struct hw_memory_thread {
	int tid;                 /* the kernel's thread id, 0 if unknown */
	uint64_t sp, pc;
	uint64_t tp;             /* thread pointer (fs_base, TPIDR_EL0) */
	bool has_tp;
	/* The general registers in the kernel's elf_gregset_t order (as in
	   a core's NT_PRSTATUS), for `leaks`' roots; nregs 0 when the
	   debugger gave none.  */
	uint32_t nregs;
	uint64_t regs[HW_MEMORY_MAX_REGS];
};

struct hw_memory {
	size_t sz;                 /* sizeof (struct hw_memory) */
	const char *name;          /* "gdb": said in messages */
	const char *machine;       /* "x86_64" or "aarch64" */
	/* Copy up to len bytes at addr into buf; return how many bytes
	   were readable from addr on (0: addr itself is not).  */
	size_t (*read)(void *cookie, uint64_t addr, void *buf, size_t len);
	void *cookie;
	const struct hw_memory_region *regions;  /* any order */
	size_t nregions;
	const struct hw_memory_thread *threads;  /* a core's in its own
						   order (NT_PRSTATUS), a
						   process's the selected
						   first */
	size_t nthreads;
	const uint8_t *auxv;       /* the auxiliary vector, or NULL */
	size_t auxv_len;
	const char *exe;           /* the executable, or NULL */
	const char *core;          /* the core file the debugger reads (for
				      the reports only: never opened), or
				      NULL */
	int pid;                   /* the live process, or 0 */
	const char *limit;         /* what this view cannot give, said in
				      the reports' target limits (e.g. a
				      memory map found by probing), or
				      NULL */
	/* How the process of a core died, as the debugger knows it (gdb:
	   $_exitsignal, the core's first pr_cursig; $_siginfo), so that
	   summary and check say it as they do for the core itself.  All
	   ignored when core is NULL: a process has not died (see
	   doc/heapwalk.md).  death_signo: the fatal signal, 0 if none is
	   known.  death_thread: the thread it hit, an index into threads.
	   siginfo: the siginfo_t it came with, siginfo_len bytes of the
	   kernel's layout (as a core's NT_SIGINFO: si_signo, si_errno,
	   si_code as ints at 0, 4 and 8, the union from 16: si_addr, or
	   si_pid and si_uid), or NULL; when given, its si_signo wins.
	   Callers built before these fields exist leave them out (sz).  */
	int death_signo;
	size_t death_thread;
	const uint8_t *siginfo;
	size_t siginfo_len;
	/* Bytes the front end holds in this process already, exactly as the
	   debugger would read them (the plugin maps the segments of the core
	   gdb opened from the core file itself, once it checked the file is
	   the one gdb reads): a region that one span covers from its start
	   to its end is read in place, by any thread, never through read().
	   A span whose data is NULL is a hole: the target holds no bytes
	   there (a core's segment without contents: the zeros a PT_LOAD's
	   p_memsz claims past its p_filesz), and a region it covers is
	   never read at all, as a core read directly has no bytes there.
	   Sorted by start.  Each stays valid until the session is closed
	   (not copied at open).  NULL: none.  */
	const struct hw_memory_span *spans;
	size_t nspans;
};

/* What to open and how.  Zero-fill it (HW_OPEN_OPTS_INIT) and set `sz`
   to sizeof, so fields can be added later without breaking callers.  */
struct hw_open_opts {
	size_t sz;
	const char *core;              /* ELF core file; exclusive with pid */
	int pid;                       /* live process; exclusive with core */
	const char *exe;               /* executable, NULL = from the core */
	const char *sysroot;           /* prefix for the target's files */
	const char *const *debug_dirs; /* extra separate-debug-info dirs */
	size_t n_debug_dirs;
	bool no_debuginfo;             /* ignore all separate debug info */
	const char *allocator;         /* "auto" (NULL), an allocator's
					  name as summary prints it (the
					  first instance of that kind:
					  "ptmalloc", "tcmalloc", ...) or
					  "N" (instance N as summary lists
					  them) */
	/* Live processes.  */
	bool no_stop;                  /* never stop all threads at once:
					  read while the process runs (the
					  view may be torn; reports say so) */
	int stop_wait_ms;              /* how long a thread may take to
					  stop before it is left running
					  and named (0 = 1000) */
	/* Execution policy.  */
	unsigned threads;              /* worker threads a walk may use
					  (0 = one per online CPU; 1 = none
					  started, e.g. inside gdb) */
	bool no_prefault;              /* do not fault a core's heap pages
					  in ahead of the walk */
	uint64_t cache_max;            /* bytes the cache of a slow target
					  (a process, gdb) may hold; 0 =
					  half of the machine's memory */
	/* Set non-zero (e.g. from a SIGINT handler) to make a running
	   attach give up and release the process at once.  */
	const volatile sig_atomic_t *cancel;
	/* What the commands to come need (HW_NEED_*, or'ed; 0 = anything,
	   e.g. an interactive front end): the session does no eager work
	   beyond it.  A command that needs more later still gets it.  */
	unsigned needs;
	/* A front end's target (e.g. gdb's); exclusive with core and pid.  */
	const struct hw_memory *memory;
	/* Progress of the long phases (unpacking a compressed core, walking
	   the heap), for a front end that shows it: `phase` says what is
	   being done ("unpacking core.zst"), `done` of `total` in bytes or
	   blocks (total 0: not known).  Called often, from the thread that
	   opens or runs: the front end decides what to show and when.
	   NULL: no progress is reported.  */
	void (*progress)(void *cookie, const char *phase, uint64_t done,
			 uint64_t total);
	void *progress_cookie;
	/* The most a compressed core may unpack to, zeros included (they
	   cost no memory, but time to decode): past it the core is refused
	   as a decompression bomb.  0 = 512 times the compressed file's
	   size, at least 2 GiB (and never more than its ELF headers
	   describe).  Appended last: a caller built before it passes a
	   smaller sz, which leaves it 0.  */
	uint64_t unpack_max;
	/* A directory for what may be kept between runs: the struct
	   layouts read from a separate debug file's DWARF, per build-id
	   (DIR/layouts/; a run on the same library then reads no DWARF
	   for them).  NULL: nothing kept (hw_default_cache_dir gives the
	   usual one).  Appended last, as unpack_max.  */
	const char *cache_dir;
};
#define HW_OPEN_OPTS_INIT { .sz = sizeof(struct hw_open_opts) }

/* What a command needs of the target: the session opens in stages
   (target and symbols; the allocator's roots, heaps and arenas; then the
   free lists; then every chunk) and takes only those a command needs.  */
enum hw_need {
	HW_NEED_LISTS = 1 << 0,   /* every free list (bins, tcaches) */
	HW_NEED_CHUNKS = 1 << 1,  /* every chunk of every heap */
	HW_NEED_AROUND = 1 << 2,  /* the blocks around one address only */
	HW_NEED_PROFILE = 1 << 3, /* the allocator's heap profile: its own
				     records, no walk of the blocks */
};

/* Where output goes: `len` bytes at `data`.  Returns false when the sink
   failed (e.g. EPIPE); the command then stops early.  Called from the
   thread that called hw_session_run() only, in order.  */
typedef bool hw_write_fn(void *cookie, const char *data, size_t len);

/* The forms of a report.  */
enum hw_form {
	HW_FORM_TEXT = 0,   /* for people: aligned, as the tool prints */
	HW_FORM_JSON = 1,   /* one JSON document (JSON Lines for the
			       commands that list blocks: doc/heapwalk.md) */
};

/* Where a command's report goes and in what form.  Start from
   HW_OUTPUT_INIT (it sets `sz`): fields added later are zero for a
   caller built before them.  Read during hw_session_run() only; not
   kept.  */
struct hw_output {
	size_t sz;           /* sizeof (struct hw_output) */
	hw_write_fn *write;
	void *cookie;        /* handed to write() as it is */
	enum hw_form form;
	bool color;          /* text: labels and table headers in bold
				(ANSI escapes), for a terminal */
	bool terminal;       /* a person reads it on a terminal: `map`
				refuses to write its SVG there (-o FILE) */
};
#define HW_OUTPUT_INIT { .sz = sizeof(struct hw_output) }

/* Open a session.  Returns HW_OK and sets *out, or a failing status with
   *out still set (when memory allowed) so hw_session_errmsg() can say why;
   call hw_session_close() in both cases.  */
enum hw_status hw_session_open(const struct hw_open_opts *opts,
			       hw_session **out);

/* The last error of this session, one line without "heapwalk: ", or "".  */
const char *hw_session_errmsg(const hw_session *s);

/* Run one command (`argv[0]` is its name: "summary", "chunks", ...) and
   write its report to `out`.  Returns the exit status for it (HW_USAGE
   when out->sz is not set or the form is not one of enum hw_form).
   argv is read during the call only.  */
enum hw_status hw_session_run(hw_session *s, int argc, char *const argv[],
			      const struct hw_output *out);

void hw_session_close(hw_session *s);

/* ---- The heap as data --------------------------------------------------
 *
 * For programs that look at many cores (a crash-triage service, a CI
 * check): the same walk the commands report, delivered as plain structs
 * through callbacks, in the manner of libdwfl's iterators.  A callback
 * returns 0 to go on; anything else stops the walk, and the call then
 * returns HW_OK.  Strings handed to a callback live until it returns.
 * Each call walks what it needs; the session keeps the allocator's state
 * between calls, so later calls on one session are cheaper.
 */

/* One block of the heap, in use or free.  */
struct hw_block {
	uint64_t addr;            /* the pointer malloc returned */
	uint64_t size;            /* usable bytes */
	uint64_t chunk;           /* where the allocator's block starts
				     (header included) */
	uint64_t chunk_size;      /* bytes the block takes */
	int32_t arena;            /* arena index as `arenas` numbers them;
				     -1: none */
	bool used;
	const char *where;        /* "heap", "mmapped", "tcache", "fastbin",
				     "smallbin", "slab", "large", "dirty",
				     ... (doc/heapwalk.md, `chunks`) */
};
typedef int hw_block_cb(void *arg, const struct hw_block *b);

/* Every block, in address order within each heap.  */
enum hw_status hw_blocks(hw_session *s, hw_block_cb *cb, void *arg);

/* The whole heap in figures.  Set sz to sizeof before the call.  */
struct hw_heap_totals {
	size_t sz;
	const char *allocator;    /* its name, as summary prints it:
				     "ptmalloc", "jemalloc", "tcmalloc",
				     "mallocng" */
	const char *version;      /* "2.36", "5.3.0", ..., or "unknown" */
	size_t arenas;
	uint64_t used_blocks, used_bytes;    /* usable bytes */
	uint64_t free_blocks, free_bytes;
	uint64_t problems;        /* corruption the walk met (hw_problems
				     lists them) */
	bool partial;             /* part of the heap could not be read:
				     every figure is a lower bound */
};
enum hw_status hw_heap_totals(hw_session *s, struct hw_heap_totals *t);

/* One size class (the allocator's own: the range of usable sizes of a
   ptmalloc bin, a jemalloc or tcmalloc size class, a mallocng class),
   or one arena.  */
struct hw_class_totals {
	uint64_t min, max;        /* usable sizes it holds, inclusive */
	uint64_t used_blocks, used_bytes, free_blocks, free_bytes;
};
typedef int hw_class_cb(void *arg, const struct hw_class_totals *c);
/* In ascending order of size; classes with no block are left out.  */
enum hw_status hw_size_classes(hw_session *s, hw_class_cb *cb, void *arg);

struct hw_arena_totals {
	int32_t arena;            /* -1: blocks of no arena */
	uint64_t used_blocks, used_bytes, free_blocks, free_bytes;
};
typedef int hw_arena_cb(void *arg, const struct hw_arena_totals *a);
enum hw_status hw_arena_totals(hw_session *s, hw_arena_cb *cb, void *arg);

/* A problem `check` reports: corruption (note false) or something worth
   saying that is not (note true), at addr.  */
struct hw_problem {
	uint64_t addr;
	bool note;
	const char *text;
};
typedef int hw_problem_cb(void *arg, const struct hw_problem *p);
/* Runs the checks (a full walk), then lists what they found, by address.
   Returns HW_CORRUPT when there is corruption, as `check` exits.  */
enum hw_status hw_problems(hw_session *s, hw_problem_cb *cb, void *arg);

/* A block in use that the process can no longer reach (`leaks`).  */
struct hw_leak {
	uint64_t addr, size;
	const char *kind;         /* "definite", "indirect", "possible", or
				     "unknown": unreachable, but the heap's
				     damage cost a free list blocks like it,
				     so it may be free */
	const char *site;         /* where it was allocated ("f <- g"), when
				     the allocator sampled it; else NULL */
};
typedef int hw_leak_cb(void *arg, const struct hw_leak *l);
/* Every lost block, in address order (the reachability scan runs once
   per session).  */
enum hw_status hw_leaks(hw_session *s, hw_leak_cb *cb, void *arg);

/* The work a session did so far: how it reads the heap.  Each command
   declares what it needs (hw_command_needs), and these counts show what
   it took (`heapwalk --stats`; tests check that a command starts no walk
   it does not need).  */
struct hw_work {
	uint64_t walks;          /* walks of every block */
	uint64_t around;         /* walks of the blocks around one address */
	uint64_t list_entries;   /* free-list entries followed one by one
				    (each a read somewhere in the heap) */
	uint64_t guessed;        /* ptmalloc: fastbin entries found by the
				    heap walk, checked by sums */
	uint64_t summed;         /* ptmalloc: small and large bin chunks
				    checked by sums of their links */
	uint64_t sums_failed;    /* ... times those sums disagreed, and the
				    lists were walked after all */
};
void hw_session_work(const hw_session *s, struct hw_work *out);
/* Which of those sums disagreed and what was walked instead ("arena 2
   fastbin 0x40: ..."; "; "-joined, "" when none): owned by the session,
   valid until it is closed.  */
const char *hw_session_work_fallbacks(const hw_session *s);
/* How many walks of a heap were cut into pieces for several threads (a
   heap holding more than a thread's share of all heaps' bytes, as in a
   program of one arena), and into how many pieces in all (*pieces, when
   not NULL).  */
uint64_t hw_session_heaps_cut(const hw_session *s, uint64_t *pieces);
/* How many modules' DWARF the session read so far (struct layouts,
   source lines): inflating a big debug file is most of an open, and a
   command should read none it does not need.  (Not in struct hw_work:
   its size is part of the ABI.)  */
uint64_t hw_session_dwarf_modules(const hw_session *s);
/* How many struct layouts came from hw_open_opts.cache_dir, not DWARF.  */
uint64_t hw_session_layouts_cached(const hw_session *s);
/* The cache directory a front end should pass as hw_open_opts.cache_dir:
   $HEAPWALK_CACHE_DIR if set (empty: none), else
   $XDG_CACHE_HOME/heapwalk, else $HOME/.cache/heapwalk; written to buf,
   which is returned; NULL when there is none.  */
const char *hw_default_cache_dir(char *buf, size_t len);

/* ---- Triage: one record per core ----------------------------------------
 *
 * For a fleet of cores: each core's record, one line (JSON with
 * HW_FORM_JSON, described member by member in doc/triage.schema.json,
 * whose version is the record's "schema"), the same `heapwalk --json
 * triage CORE` prints.  A program triaging many cores calls hw_triage()
 * once per core, in as many threads or processes as it likes.
 */

/* Open the core opts->core names, write its record to out, close it.
   argv holds the triage command's words (argv[0] "triage", then
   "--no-leaks", "--top N"), or argc is 0.  A core that cannot be read
   gets an error record ({"schema":N,"core":...,"error":...}) instead,
   and so does one whose analysis failed.  Returns what `heapwalk CORE
   check` would exit with (HW_CORRUPT: the heap is damaged), the open's
   failure for an error record, or HW_USAGE for bad words or a bad out
   (nothing written).  */
enum hw_status hw_triage(const struct hw_open_opts *opts, int argc,
			 char *const argv[], const struct hw_output *out);

/* The error record of an input that no record could be made for (a
   front end that ran the analysis elsewhere and lost it: it timed out,
   its process died): `core` as given, the status and why.  Returns st,
   or HW_USAGE for a bad out.  */
enum hw_status hw_triage_error(const char *core, enum hw_status st,
			       const char *why, const struct hw_output *out);

/* The command table, for help texts and front ends: the i-th command's
   name and one-line description, or NULL past the end.  */
const char *hw_command_name(size_t i);
const char *hw_command_help(size_t i);
/* Its operands and options as a usage line shows them ("[--used|--free]",
   "" when it takes none), its k-th option or operand ("-o FILE", "ADDR";
   NULL past the last; *help, if help is not NULL, says what it does),
   and an example of its use (the words after "heapwalk ").  */
const char *hw_command_usage(size_t i);
const char *hw_command_option(size_t i, size_t k, const char **help);
const char *hw_command_example(size_t i);
/* What command `name` needs (HW_NEED_*), for hw_open_opts.needs; 0 for
   an unknown command.  */
unsigned hw_command_needs(const char *name);

#endif /* HEAPWALK_H */
