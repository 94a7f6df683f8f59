/* coremap.h - the core gdb opened, mapped: its segments read in place.
 *
 * On a core, everything the heap walk reads is in the core file, which
 * gdb copies out with read() into whatever buffer it is given.  For the
 * plugin's cache that meant fresh pages for the whole heap, each zeroed
 * by the kernel before gdb's copy overwrote it: two thirds of a
 * `heap bins` on a 1.6 GiB heap.  So the plugin maps the core file
 * itself, as the tool does, and hands the library the segments gdb
 * reads from the file as spans (struct hw_memory_span): read in place,
 * no copy, page cache only.
 *
 * Only the file gdb reads (its own open descriptor, even when the path
 * now names another file), an ELF core whose program headers put each
 * of gdb's segments at the file offset gdb says, and whose first and
 * last bytes of every segment equal what gdb reads there.  Anything else
 * (a damaged or unreadable core, a segment gdb reads from elsewhere)
 * leaves those segments to gdb's reads, as before.
 */
#ifndef HW_PLUGIN_COREMAP_H
#define HW_PLUGIN_COREMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbtext.h"

struct core_map {
	void *base;                  /* the whole file, or NULL */
	size_t size;
	struct hw_memory_span *spans;
	size_t nspans;
	size_t checked;              /* segments compared with gdb's reads */
};

/* Map v's core and set v->mem.spans; read(cookie, addr, buf, len) is
   gdb's read, all or nothing.  False (nothing set, nothing held) when
   the core cannot be read in place.  */
bool core_map_open(struct core_map *cm, struct gdb_view *v,
		   bool (*read)(void *cookie, uint64_t addr, void *buf,
				size_t len),
		   void *cookie);

/* Add v's core holes (gdb_view_holes: writable segments without
   contents) to the spans as holes (data NULL: never read), whether or
   not the core could be mapped, and set v->mem.spans again.  False when
   out of memory (the holes are then read through gdb, as zeros).  */
bool core_map_add_holes(struct core_map *cm, struct gdb_view *v);

/* Is every writable segment of v read in place (or a hole)?  Then the
   heap walks read nothing through gdb, and may run in threads
   (reader.c).  */
bool core_map_whole(const struct core_map *cm, const struct gdb_view *v);

/* Unmap; after the session that used the spans is closed.  */
void core_map_close(struct core_map *cm);

#endif /* HW_PLUGIN_COREMAP_H */
