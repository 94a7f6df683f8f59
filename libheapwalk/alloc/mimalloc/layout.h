/* layout.h - where mimalloc keeps what its walker reads, release by
 * release: the offsets of its segment, page and heap fields and the
 * constants that place pages in a segment.
 *
 * mimalloc's structures change between minor releases and with how the
 * library was built (MI_SECURE >= 3 or MI_DEBUG >= 1 add the two keys
 * that encode free lists to every page), and a stripped library says
 * neither its version nor its build: detect.c tries each layout on the
 * segments it finds and keeps the one they all agree with.  Every row
 * was read from that release's own headers (offsetof on LP64: x86_64
 * and aarch64 agree); doc/design/mimalloc.md lists them and where each
 * was checked.
 */
#ifndef HW_MI_LAYOUT_H
#define HW_MI_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* An offset a layout has no such field for.  */
#define MI_NO_FIELD 0xffffu

struct mi_layout {
	const char *version;       /* "2.0.9": the releases it holds for */
	const char *releases;      /* "2.0.6 to 2.0.9", for summary */
	bool encoded;              /* free lists encoded (page keys) */
	/* Segments and slices.  */
	uint8_t segment_shift;     /* segments are 1 << this, aligned so */
	uint8_t slice_shift;       /* a slice (a small page) */
	uint16_t slices_per_segment;
	/* A page's blocks start this far into it when its block size is
	   in [start_offset_min, start_offset_max] (mimalloc keeps small
	   blocks off the page's alignment).  */
	uint16_t start_offset;
	uint16_t start_offset_min, start_offset_max;
	/* A block size at or past this is a huge page's: its size is the
	   page's.  */
	uint64_t huge_block_size;
	uint16_t bin_huge;         /* MI_BIN_HUGE; queues: bin_huge + 2 */
	/* mi_segment_t.  */
	uint16_t seg_memid, seg_commit_mask, seg_decommit_mask;
	uint16_t seg_commit_mask_bytes;
	uint16_t seg_abandoned_next, seg_abandoned, seg_used, seg_cookie;
	uint16_t seg_segment_slices, seg_info_slices, seg_kind;
	uint16_t seg_slice_entries, seg_thread_id, seg_slices;
	/* mi_page_t (a slice is one); widths in bytes where they vary.  */
	uint16_t page_size;
	uint16_t page_slice_count, page_slice_offset;
	uint16_t page_capacity, page_reserved, page_flags;
	uint16_t page_free, page_used, page_used_width;
	uint16_t page_block_size, page_block_size_width;
	uint16_t page_local_free, page_keys;
	uint16_t page_xthread_free, page_xheap, page_next, page_prev;
	/* mi_heap_t.  */
	uint16_t heap_size;
	uint16_t heap_tld, heap_pages, heap_thread_delayed_free;
	uint16_t heap_thread_id, heap_cookie, heap_keys;
	uint16_t heap_page_count, heap_next;
	uint16_t queue_size;       /* mi_page_queue_t: first, last, size */
	/* mi_tld_t.  */
	uint16_t tld_heap_backing, tld_heaps;
};

/* Every layout known, newest first; n set to their count.  */
const struct mi_layout *mi_layouts(unsigned *n);

#endif /* HW_MI_LAYOUT_H */
