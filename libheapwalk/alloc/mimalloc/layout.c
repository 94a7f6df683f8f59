/* layout.c - mimalloc's layouts, one row per run of releases that share
 * one (layout.h says what each field is; doc/design/mimalloc.md where
 * each row was read and checked).
 */
#include <stddef.h>

#include "layout.h"

/* 2.0.x: 32 MiB segments of 64 KiB slices; a page's block size is 32
   bits (2 GiB and past: a huge page's own size); `used` 32 bits.  The
   encoded build adds keys[2] after local_free, moving what follows by
   16 bytes and the slices' stride from 80 to 96.  */
#define MI_V2_0(enc) \
	.version = "2.0.9", .releases = "2.0.x", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, .slices_per_segment = 512, \
	.start_offset = 384, .start_offset_min = 8, \
	.start_offset_max = 1024, .huge_block_size = 1ull << 31, \
	.bin_huge = 73, \
	.seg_memid = 0, .seg_decommit_mask = 48, .seg_commit_mask = 112, \
	.seg_commit_mask_bytes = 64, .seg_abandoned_next = 176, \
	.seg_abandoned = 192, .seg_used = 208, .seg_cookie = 216, \
	.seg_segment_slices = 224, .seg_info_slices = 232, .seg_kind = 240, \
	.seg_slice_entries = 248, .seg_thread_id = 256, .seg_slices = 264, \
	.page_size = (enc) ? 96 : 80, \
	.page_slice_count = 0, .page_slice_offset = 4, .page_capacity = 10, \
	.page_reserved = 12, .page_flags = 14, .page_free = 16, \
	.page_used = 24, .page_used_width = 4, .page_block_size = 28, \
	.page_block_size_width = 4, .page_local_free = 32, \
	.page_keys = (enc) ? 40 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, .page_xheap = (enc) ? 64 : 48, \
	.page_next = (enc) ? 72 : 56, .page_prev = (enc) ? 80 : 64, \
	.heap_size = 3064, .heap_tld = 0, .heap_pages = 1040, \
	.heap_thread_delayed_free = 2840, .heap_thread_id = 2848, \
	.heap_cookie = 2864, .heap_keys = 2872, .heap_page_count = 3024, \
	.heap_next = 3048, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

static const struct mi_layout layouts[] = {
	{ MI_V2_0(false) },
	{ MI_V2_0(true) },
};

const struct mi_layout *mi_layouts(unsigned *n)
{
	*n = sizeof layouts / sizeof layouts[0];
	return layouts;
}
