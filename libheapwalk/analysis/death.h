/* death.h - how the process of a core died: the signal and its cause
 * (NT_SIGINFO, else the crashing thread's pr_cursig), the thread it hit,
 * glibc's own abort message (abortmsg.h), that thread's stack through
 * libdwfl's unwinder, and, where that much can really be told, the heap
 * blocks involved.  A process (live, or a debugger's) has not died:
 * nothing is said of it.
 */
#ifndef HW_DEATH_H
#define HW_DEATH_H

#include <stdbool.h>
#include <stdint.h>

#include "../alloc/alloc.h"
#include "../session/session.h"

#define HW_DEATH_FRAMES 64
#define HW_DEATH_CHUNKS 8

struct hw_death_frame {
	uint64_t pc;
	char function[256];     /* demangled; "" when no symbol covers pc */
	uint64_t offset;        /* pc - the symbol's address */
	const char *module;     /* the module's name (base name), or NULL */
	uint64_t module_offset; /* pc - the module's first address */
};

/* Why the blocks in hw_death.chunks are named.  */
enum hw_death_role {
	HW_DEATH_NONE,
	HW_DEATH_FREED_TWICE,   /* in a tcache, and its address is in the
				   frames of the free() that aborted */
	HW_DEATH_NAMED,         /* the message gives its address (glibc up
				   to 2.26) */
	HW_DEATH_FAULT,         /* holds the faulting address */
	HW_DEATH_BEING_FREED,   /* malloc aborted inside free(): its header
				   (else its address) is in free()'s frames */
};

struct hw_death {
	bool died;              /* false: nothing to say (the rest is 0) */
	int signo;
	bool has_siginfo;       /* NT_SIGINFO was read: code and what
				   follows are known */
	int code;               /* si_code */
	bool has_addr;          /* a fault: addr is the faulting address */
	uint64_t addr;
	bool has_sender;        /* sent by kill/tgkill/sigqueue */
	int sender_pid, sender_uid;
	size_t thread;          /* index into the target's threads */
	int tid;
	char *abort_msg;        /* glibc's message, or NULL */
	uint64_t abort_msg_at;  /* its abort_msg_s */
	const char *abort_msg_found;   /* "symbol" / "scan", or NULL */
	struct hw_death_frame *frames;
	size_t nframes;
	bool unwound;           /* the unwinder ran (it may give 0 frames) */
	enum hw_death_role role;
	struct hw_chunk chunks[HW_DEATH_CHUNKS];
	size_t nchunks;
	bool more_chunks;       /* more matched than are kept */
};

/* Fill d for s's target.  False only when out of memory (the error is
   recorded); then d holds nothing to free.  */
bool hw_death_get(struct hw_session *s, struct hw_death *d);
void hw_death_free(struct hw_death *d);

/* "SIGSEGV" for 11, NULL for a number with no name.  */
const char *hw_signal_name(int signo);
/* What si_code says for that signal ("SEGV_MAPERR", "SI_TKILL"), NULL
   when it has no name; *why gets its meaning in words.  */
const char *hw_sigcode_name(int signo, int code, const char **why);
/* A signal whose default action writes a core (what a crash is); a
   core that names another (SIGSTOP: gdb's gcore of a running process)
   is a snapshot, not a death.  */
bool hw_signal_dumps_core(int signo);

/* Is msg one of glibc malloc's own aborts (malloc_printerr, or before
   2.26 its "*** Error in `prog': ..." form)?  */
bool hw_malloc_abort(const char *msg);

#endif /* HW_DEATH_H */
