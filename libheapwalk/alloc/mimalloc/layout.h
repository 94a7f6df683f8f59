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
#include <stddef.h>
#include <stdint.h>

/* An offset a layout has no such field for.  */
#define MI_NO_FIELD 0xffffu

/* Where a page's first block lies past the page's first slice, as the
   release's _mi_segment_page_start_from_slice (segment.c) puts it.  bs
   is the page's block size (2.0 to 2.1.2: the 32-bit field as stored, a
   huge page's sentinel included), pstart the address of the page's
   first slice (segment + index << slice_shift), psize its slice_count
   << slice_shift.  From 2.1.4 the page also stores the result
   (page_page_start), which the rule must agree with.  */
enum mi_start_rule {
	/* start_offset when start_offset_min <= bs <= start_offset_max,
	   else 0 (2.0.0 to 2.0.2: always 0; 2.0.3 to 2.0.7: 128; 2.0.9:
	   384, for 8 <= bs <= 1024).  */
	MI_START_FIXED,
	/* 3 * bs when 8 <= bs <= 64, bs when 64 < bs <= 512, else 0
	   (2.1.0 to 2.1.4, and CPython 3.13's copy of 2.1.2).  */
	MI_START_SMALL,
	/* First, when 0 < bs <= start_align_max, adj = bs - pstart % bs
	   is added if adj < bs and psize >= bs + adj (the first block
	   then lies on a multiple of bs); then MI_START_SMALL's offset is
	   added (2.1.5 to 2.1.7a).  */
	MI_START_ALIGNED,
	/* MI_START_ALIGNED's offset rounded up to 16 (2.1.8 and later).  */
	MI_START_ALIGNED16,
};

struct mi_layout {
	const char *version;       /* "2.0.9": the releases it holds for */
	const char *releases;      /* "2.0.6 to 2.0.9", for summary */
	bool encoded;              /* free lists encoded (page keys) */
	/* Segments and slices.  */
	uint8_t segment_shift;     /* segments are 1 << this, aligned so */
	uint8_t slice_shift;       /* a slice (a small page) */
	uint16_t slices_per_segment;
	/* MI_START_FIXED: a page's blocks start this far into it when
	   its block size is in [start_offset_min, start_offset_max]
	   (mimalloc keeps small blocks off the page's alignment); 0 in
	   the rows of the other rules.  */
	uint16_t start_offset;
	uint16_t start_offset_min, start_offset_max;
	/* A block size at or past this is a huge page's: its size is the
	   page's.  0: the block size field is the true size (2.1.4 and
	   later, a 64-bit field), no sentinel.  */
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

	/* Added with the rows past 2.0.9; every row sets them.  */
	/* How a page's first block is placed (enum mi_start_rule), and
	   the largest block size MI_START_ALIGNED* aligns
	   (MI_MAX_ALIGN_GUARANTEE: 128 KiB in 2.1.5 to 2.1.9, 64 KiB from
	   2.2.2; 0 for the other rules).  */
	uint8_t start_rule;
	uint32_t start_align_max;
	/* MI_PADDING_SIZE: the last `padding` bytes of every block are a
	   mi_padding_t {u32 canary; u32 delta} (0: none).  Release builds
	   have none; 2.1.0 and later secure (encoded) builds and every
	   debug build have 8.  With encoded lists too (MI_PADDING_CHECK),
	   mi_usable_size(p) = block size - padding - delta, the size
	   asked for; without, block size - padding.  */
	uint8_t padding;
	/* mi_page_t.page_start (2.1.4 and later): the first block's
	   address, what the start rule gives for a page in use.  */
	uint16_t page_page_start;
	/* The tag of the heap a page belongs to: mi_page_t.heap_tag and
	   mi_heap_t.tag, one byte each (2.1.7 and later); CPython's copy
	   of 2.1.2 has its own, the heap's a byte, the page's the 4-bit
	   field `tag` (it keeps its raw-memory, object and two GC heaps
	   apart by it).  The page's tag is (byte at page_heap_tag >>
	   page_heap_tag_shift) & ((1 << page_heap_tag_bits) - 1).  */
	uint16_t page_heap_tag, heap_tag;
	uint8_t page_heap_tag_shift, page_heap_tag_bits;
};

/* Every layout known, newest first; n set to their count.  */
const struct mi_layout *mi_layouts(unsigned *n);

/* "2.0.x, 2.1.x": the releases of n rows, each once, into buf; each
   row stride bytes after the one before, its struct mi_layout at its
   start (2.x's rows, or 3.x's, whose base it is).  */
void mi_releases(const struct mi_layout *rows, unsigned n, size_t stride,
		 char *buf, size_t len);

/* Where layout L puts the first block of a page of `bs`-byte blocks
   whose slices start at pstart and take psize bytes (bs as the page
   stores it: a huge page's sentinel included).  */
uint64_t mi_layout_page_start(const struct mi_layout *L, uint64_t pstart,
			      uint64_t psize, uint64_t bs);

#endif /* HW_MI_LAYOUT_H */
