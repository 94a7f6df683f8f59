/* target.h - the memory, threads and files of the process being analysed.
 *
 * A target is a read-only view of a process: an ELF core, a live process
 * (ptrace), or gdb's memory.  Each backend fills the same struct hw_target
 * (regions sorted by address, threads with registers and thread pointer,
 * auxv, mapped files) and provides hw_target_ops; the walkers only ever
 * see this header, so a new backend never touches them.
 *
 * Memory comes two ways.  A core's regions point into the mmapped file
 * (`data`): reads copy nothing.  A slow backend (a process, gdb) marks its
 * regions `lazy` and supplies ops->read; the target's cache (cache.h)
 * reads them in large blocks on first use and keeps them, so every
 * pointer handed out stays valid until the target is closed, exactly as
 * with a core.  Walkers cannot tell the two apart.
 *
 * Reads are bounds-checked and fallible: a core is untrusted input, a
 * live process may unmap pages under us, and any address a walker
 * computes may be garbage.  Nothing ever faults.
 */
#ifndef HW_TARGET_H
#define HW_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hw_arch;

enum hw_prot { HW_PROT_R = 1, HW_PROT_W = 2, HW_PROT_X = 4 };

struct hw_lazy;
struct hw_cache;

/* One mapping of the target: [start, end).  The first `avail` bytes are
   readable: at `data` (the dumped part of a core segment), or, when
   `lazy` is set, through the target's cache from ops->read.  Past that, a
   file-backed mapping may be served from its file on disk (`backing`,
   `backing_len` bytes from `start`), once the file was checked against
   what the core holds of it.  */
struct hw_region {
	uint64_t start, end;
	const uint8_t *data;
	uint64_t avail;
	uint64_t dumped;   /* a core: the bytes its header says it holds
			      (p_filesz); those past avail were cut off and
			      are unknown: no file stands in for them */
	const uint8_t *backing;
	uint64_t backing_len;
	struct hw_lazy *lazy;   /* cache state of a lazy region, or NULL */
	uint32_t prot;
	bool prot_guessed; /* a file's mapping the core has no segment for
			      (gdb's gcore leaves code out): R until the
			      file's own program headers say */
	int32_t file;      /* index into hw_target.files, or -1 (anonymous) */
	bool shared;       /* MAP_SHARED (live processes; cores don't say) */
};

/* A file mapped into the target (NT_FILE or /proc/PID/maps).  */
struct hw_mapped_file {
	uint64_t start, end;
	uint64_t offset;   /* in bytes */
	const char *path;  /* owned by the target */
	bool verified;     /* checked against the core already */
	bool absent;       /* the file was not found: only its writable
			      mapping is known, from the core (offset 0 is
			      then meaningless) */
	bool unavailable;  /* not on disk, or not the file that ran: the
			      pages the core lacks cannot be read */
};

#define HW_MAX_REGS 40

struct hw_thread {
	int tid;
	int signo;          /* pending signal (cursig), 0 if none */
	uint64_t sp, pc;
	uint64_t tp;        /* thread pointer: fs_base, TPIDR_EL0 */
	bool has_tp;
	uint32_t nregs;
	uint64_t regs[HW_MAX_REGS]; /* general registers, arch order */
};

struct hw_target;

struct hw_target_ops {
	const char *name;  /* "core", "process", "gdb" */
	/* Copy up to len bytes at addr into buf; returns how many bytes were
	   read before the first unreadable one (0: addr itself is not
	   readable).  Called only for lazy regions, from any thread, with
	   the cache's lock held.  NULL for backends without lazy regions.  */
	size_t (*read)(struct hw_target *t, uint64_t addr, void *buf,
		       size_t len);
	/* Which of the npages pages from addr (page-aligned) hold data; a
	   page reported empty is read as zeros without asking read() (an
	   untouched anonymous page: reading it would make the target map
	   it).  Returns false when it cannot tell (then every page is
	   read).  May be NULL.  */
	bool (*present)(struct hw_target *t, uint64_t addr, size_t npages,
			uint8_t *present);
	/* Release everything the backend owns; must not be NULL.  */
	void (*close)(struct hw_target *t);
};

/* A live process's view: how it was taken.  */
struct hw_live {
	int pid;
	int proc_pid;            /* whose /proc/N entries (maps, mem, auxv,
				    exe) to read: pid, or a thread still
				    running when the main thread has ended
				    (pthread_exit): a zombie's show nothing */
	bool no_stop;            /* read while it ran: the view may be torn */
	double stopped_ms;       /* how long its threads were stopped */
	uint64_t snapshot_bytes; /* bytes copied while they were */
	size_t unstoppable;      /* threads that would not stop in time */
};

struct hw_prefault;

struct hw_target {
	const struct hw_target_ops *ops;
	const struct hw_arch *arch;
	const char *path;              /* the core file, or NULL */
	const char *packed;            /* its compression ("zstd") when it
					  was read unpacked, or NULL */
	uint64_t unpacked;             /* with packed: its unpacked size */
	struct hw_region *regions;     /* sorted by start, disjoint */
	size_t nregions;
	struct hw_thread *threads;     /* the crashing thread first */
	size_t nthreads;
	struct hw_prefault *prefault;  /* prefault.c's helper, or NULL */
	struct hw_mapped_file *files;
	size_t nfiles;
	const uint8_t *auxv;
	size_t auxv_len;
	/* A core's first NT_SIGINFO (the kernel's siginfo_t, as written:
	   what killed the process), and the tid of the NT_PRSTATUS it
	   follows; NULL for a process (a live one has not died).  Read by
	   analysis/death.c.  */
	const uint8_t *siginfo;
	size_t siginfo_len;
	int siginfo_tid;
	/* A core's NT_PRPSINFO as written (the process's pid, uid, command
	   name and arguments: report/coreid.c reads it), or NULL.  */
	const uint8_t *psinfo;
	size_t psinfo_len;
	const char *exe;               /* from NT_FILE / the user, or NULL */
	const char *files_from;        /* "NT_FILE", "link_map",
					  "executable" (its own program
					  headers: a static program) or
					  NULL */
	bool truncated;                /* some segment is cut short */
	struct hw_cache *cache;        /* lazy regions' blocks, or NULL */
	struct hw_live *live;          /* a live process, or NULL */
	bool is_process;               /* a process (path "pid N"), not a
					  core: by ptrace or a debugger */
	const char *debugger;          /* the front end that reads for us
					  ("gdb"), or NULL */
	char files_note[PATH_MAX + 400]; /* why the mapped files are
					  incomplete (an executable not at
					  hand), or "" */
	char exe_note[2 * PATH_MAX + 200]; /* --exe was not used: it is not
					  the core's executable, or "" */
	char limit[256];               /* what this backend could not give,
					  said once in the summary, or "" */
	void *priv;                    /* backend state */
};

/* Is `name` (a mapping's name in /proc/PID/maps or a debugger's map)
   one of the kernel's pages that are neither copied nor scanned: [vvar]
   and [vvar_vclock] (reading them can fault; they hold the clock, no
   pointer of the program's) and [vsyscall]?  One list for every
   backend.  */
bool hw_kernel_mapping(const char *name);

/* What the target is, for messages: "core", "process" (live, or a
   debugger's), so that "not in the core" is said only of a core.  */
const char *hw_target_noun(const struct hw_target *t);

/* How many bytes from r's start its target can give: what a core holds
   of it, or the file behind it (a live region: all of it).  A declared
   size past that (a core's p_memsz: a fuzzed terabyte) is nothing to
   read, and no bound for a scan.  */
uint64_t hw_region_held(const struct hw_region *r);

/* The region containing addr, or NULL.  */
const struct hw_region *hw_region_of(const struct hw_target *t, uint64_t addr);

/* Open a file some outside source names (a user, a core, a sysroot) for
   reading: -1 with errno set unless it is a regular file (EINVAL for a
   FIFO, socket or device, EISDIR for a directory).  Never blocks.  */
int hw_open_regular(const char *path);

/* Why hw_open_regular(path) failed with errno `err`, in words a user
   acts on: strerror's, or for a file that is not a regular one what it
   is ("a character device, not a core file").  */
const char *hw_open_regular_why(const char *path, int err);

/* Why no thread has a thread pointer, as the target would say it ("the
   core has no thread pointers (no NT_ARM_TLS: ...)").  */
const char *hw_target_no_tp(const struct hw_target *t);

/* Copy len bytes at addr; false (and nothing promised in buf) unless every
   byte is readable.  */
bool hw_read(struct hw_target *t, uint64_t addr, void *buf, size_t len);
bool hw_read_u64(struct hw_target *t, uint64_t addr, uint64_t *v);
bool hw_read_u32(struct hw_target *t, uint64_t addr, uint32_t *v);

/* A pointer to len readable bytes at addr, without copying, or NULL when
   they are not all in one place.  Valid until the target is closed.  */
const uint8_t *hw_peek(struct hw_target *t, uint64_t addr, size_t len);

/* hw_peek for walks with locality: *hint (NULL at first) remembers the
   region of the last address, which saves the search when the next one
   is in it too.  The hint is the caller's, so threads do not share it.  */
const uint8_t *hw_peek_near(struct hw_target *t, const struct hw_region **hint,
			    uint64_t addr, size_t len);

/* Where a scan that found nothing readable at `at` goes on: the next
   address that may be readable, or hi.  Memory a core only claims (a
   PT_LOAD whose p_memsz says 1 TiB) is passed in one step, not one per
   word or page.  */
uint64_t hw_next_readable(const struct hw_target *t, uint64_t at,
			  uint64_t hi);

/* prefault.c: fault in, from a helper thread, the bytes of regions a
   walk will read soon (those mapped in place: region->data), while the
   rest of an open goes on.  Regions are queued (false when the queue is
   full, the helper runs already, or memory is short), then the helper
   is started once; it stops when the target is closed, at the latest.
   For a walker that knows where the heaps are before it can read them.  */
bool hw_target_prefault_add(struct hw_target *t, const struct hw_region *r);
void hw_target_prefault_start(struct hw_target *t);
bool hw_target_prefault_started(const struct hw_target *t);
/* Stop the helper and free it (hw_target_close does).  */
void hw_target_prefault_end(struct hw_target *t);

/* How many bytes from addr on are readable in one piece (0 if none).  */
uint64_t hw_readable_run(struct hw_target *t, uint64_t addr,
			 const uint8_t **p);
/* ... with a hint, as hw_peek_near's (a scan of block after block).  */
uint64_t hw_readable_run_near(struct hw_target *t,
			      const struct hw_region **hint, uint64_t addr,
			      const uint8_t **p);

/* Set th's general registers to the first n of regs (the kernel's
   elf_gregset_t order, as in NT_PRSTATUS and PTRACE_GETREGSET), and its
   sp, pc and thread pointer from them where the architecture keeps
   those there.  */
void hw_thread_set_regs(struct hw_thread *th, const struct hw_arch *a,
			const uint64_t *regs, size_t n);

/* Value of auxv entry `type`, or false.  */
bool hw_auxv_get(const struct hw_target *t, uint64_t type, uint64_t *val);

/* The value of environment variable `name` as the process started with
   it (environ.c: the strings at the top of its initial stack), at most
   len - 1 bytes of it, or false when it had none or the target does not
   hold them.  */
bool hw_environ_get(struct hw_target *t, const char *name, char *out,
		    size_t len);

/* The architecture of the ELF file whose header is mapped at addr (read
   from the core, or from the file on disk once it was checked), or NULL.
   A qemu-user process maps its guest's files too: their machine is not
   the core's.  */
const struct hw_arch *hw_elf_arch_at(struct hw_target *t, uint64_t addr);

/* Put the threads in the order every backend gives them: the first one
   (the one that crashed, or the debugger's selected one) first, the rest
   by thread id.  A core's notes, /proc's task list and gdb's thread
   numbers each have an order of their own; reports list per-thread
   things in this one, so the same process reads the same everywhere.  */
void hw_target_order_threads(struct hw_target *t);

void hw_target_close(struct hw_target *t);

#endif /* HW_TARGET_H */
