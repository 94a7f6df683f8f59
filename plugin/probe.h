/* probe.h - a memory map found by reading, for a target whose gdb gives
 * none.
 *
 * qemu-user's gdbstub (before qemu 8.1) and many embedded stubs answer
 * memory reads but have no /proc to list mappings, so neither `info proc
 * mappings` nor `maintenance info sections` describes the memory.  The
 * map is then probed: around every address known to be mapped (the
 * threads' stack pointers, the auxiliary vector's pointers, the shared
 * libraries gdb lists), one byte is read every PROBE_STEP bytes, up and
 * down, until PROBE_MARGIN bytes in a row were unreadable; the ends of
 * each readable run are then found to the page.  Runs are split where a
 * loaded ELF object starts, so that each library is a region of its own
 * (the one its file names), and where it ends (its program headers, read
 * from memory), so that the anonymous memory after a library's .bss -
 * mmapped chunks, a brk heap - is not taken for the library's.  Inside
 * each loaded object, and one step past its end, every page no run holds
 * is read too: a library's data segment is often smaller than a step
 * (ld.so's, which holds the link_map, is 4 pages between the holes of its
 * 64 KiB alignment).  Elsewhere a mapping smaller than the step that lies
 * between two probes, or farther than the margin from all others, is
 * missed: the plugin says the map was probed.
 */
#ifndef HW_PLUGIN_PROBE_H
#define HW_PLUGIN_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbtext.h"

#define PROBE_STEP (64u << 10)
#define PROBE_MARGIN (256ull << 20)

/* Copy len bytes at addr into buf; false when they are not all
   readable.  */
typedef bool probe_fn(void *cookie, uint64_t addr, void *buf, size_t len);

struct probe_stats {
	size_t probes;     /* reads made */
	size_t anchors;    /* addresses it started from */
};

/* Add the readable runs around v's anchors (and `extra`, n_extra more
   addresses: where gdb's shared libraries are) to v's regions (R|W, no
   path).  False when out of memory.  */
bool probe_map(struct gdb_view *v, const uint64_t *extra, size_t n_extra,
	       probe_fn *readable, void *cookie, struct probe_stats *st);

/* The last map probed, and the target as it was then: the context the
   script wrote (heapwalk-context: every thread's registers, gdb's
   selected thread, the signal).  A command run while the program has not
   moved finds the same context and takes the map again, instead of
   probing anew (some 9,000 reads through a gdbstub).  A program that
   ran has other registers.  */
struct probe_memo {
	char *ctx;
	size_t ctx_len;
	struct probe_run { uint64_t start, end; } *runs;
	size_t nruns;
	size_t probes;     /* the reads the probe took */
};

/* Add m's runs to v when ctx (len bytes) is the one they were probed
   with; false when it is not, or out of memory (*oom).  */
bool probe_memo_take(const struct probe_memo *m, const char *ctx,
		     size_t len, struct gdb_view *v, bool *oom);
/* Keep v's regions from index `first` on (the probe's) with ctx.  */
void probe_memo_keep(struct probe_memo *m, const char *ctx, size_t len,
		     const struct gdb_view *v, size_t first, size_t probes);
void probe_memo_free(struct probe_memo *m);

#endif /* HW_PLUGIN_PROBE_H */
