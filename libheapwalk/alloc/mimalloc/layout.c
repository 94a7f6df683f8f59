/* layout.c - mimalloc's layouts, one row per run of releases that share
 * one (layout.h says what each field is; doc/design/mimalloc.md where
 * each row was read and checked).
 *
 * Every number below is printed by scripts/mimalloc-layouts.sh from the
 * release's own headers (offsetof, LP64): its release build (-DNDEBUG,
 * the `false` rows) and its secure build (-DMI_SECURE=4, the `true`
 * rows, whose free lists are encoded).  Tags that print the same
 * numbers share a macro; a new release is one more run of the script.
 * CPython's copy of mimalloc comes last (the script run on a CPython
 * source tree: its free-threaded and its debug free-threaded build).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

/* 2.3.0 to 2.4.1: as 2.2, and the heap gains pages_full_size (8 bytes
   before the page queues).  A debug build (MI_DEBUG, hence MI_GUARDED)
   moves the heap's queues by 32 more bytes: not a row here.  */
#define MI_V2_3(enc) \
	.version = "2.4.1", .releases = "2.3.0 to 2.4.1", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_ALIGNED16, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 65536, \
	.huge_block_size = 0, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 120, .seg_decommit_mask = 56, \
	.seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = MI_NO_FIELD, .seg_abandoned = 200, \
	.seg_used = 216, .seg_cookie = 224, .seg_segment_slices = 248, \
	.seg_info_slices = 256, .seg_kind = 264, \
	.seg_slice_entries = 272, .seg_thread_id = 280, \
	.seg_slices = 288, .page_size = (enc) ? 112 : 96, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 32, .page_used_width = 2, \
	.page_block_size = 40, .page_block_size_width = 8, \
	.page_local_free = 24, .page_keys = (enc) ? 56 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 72 : 56, \
	.page_xheap = (enc) ? 80 : 64, .page_next = (enc) ? 88 : 72, \
	.page_prev = (enc) ? 96 : 80, .page_page_start = 48, \
	.page_heap_tag = 35, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 8, .heap_size = (enc) ? 3096 : 3088, \
	.heap_tld = 0, .heap_pages = (enc) ? 1296 : 1288, \
	.heap_thread_delayed_free = 8, .heap_thread_id = 16, \
	.heap_cookie = 32, .heap_keys = 40, .heap_page_count = 192, \
	.heap_next = 240, .heap_tag = 249, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.2.2 to 2.2.7: MI_MEDIUM_OBJ_SIZE_MAX halved to 64 KiB, and with it
   the largest size the page start aligns to; the heap gains two
   counters before its page queues.  */
#define MI_V2_2(enc) \
	.version = "2.2.7", .releases = "2.2.2 to 2.2.7", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_ALIGNED16, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 65536, \
	.huge_block_size = 0, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 120, .seg_decommit_mask = 56, \
	.seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = MI_NO_FIELD, .seg_abandoned = 200, \
	.seg_used = 216, .seg_cookie = 224, .seg_segment_slices = 248, \
	.seg_info_slices = 256, .seg_kind = 264, \
	.seg_slice_entries = 272, .seg_thread_id = 280, \
	.seg_slices = 288, .page_size = (enc) ? 112 : 96, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 32, .page_used_width = 2, \
	.page_block_size = 40, .page_block_size_width = 8, \
	.page_local_free = 24, .page_keys = (enc) ? 56 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 72 : 56, \
	.page_xheap = (enc) ? 80 : 64, .page_next = (enc) ? 88 : 72, \
	.page_prev = (enc) ? 96 : 80, .page_page_start = 48, \
	.page_heap_tag = 35, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 8, .heap_size = (enc) ? 3088 : 3080, \
	.heap_tld = 0, .heap_pages = (enc) ? 1288 : 1280, \
	.heap_thread_delayed_free = 8, .heap_thread_id = 16, \
	.heap_cookie = 32, .heap_keys = 40, .heap_page_count = 192, \
	.heap_next = 232, .heap_tag = 241, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.1.8 to 2.1.9: the segment gains subproc (before the masks) and
   abandoned_os_next/prev (before segment_slices); the page start is
   rounded up to 16.  */
#define MI_V2_1_8(enc) \
	.version = "2.1.9", .releases = "2.1.8 to 2.1.9", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_ALIGNED16, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 131072, \
	.huge_block_size = 0, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 120, .seg_decommit_mask = 56, \
	.seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = MI_NO_FIELD, .seg_abandoned = 200, \
	.seg_used = 216, .seg_cookie = 224, .seg_segment_slices = 248, \
	.seg_info_slices = 256, .seg_kind = 264, \
	.seg_slice_entries = 272, .seg_thread_id = 280, \
	.seg_slices = 288, .page_size = (enc) ? 112 : 96, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 32, .page_used_width = 2, \
	.page_block_size = 40, .page_block_size_width = 8, \
	.page_local_free = 24, .page_keys = (enc) ? 56 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 72 : 56, \
	.page_xheap = (enc) ? 80 : 64, .page_next = (enc) ? 88 : 72, \
	.page_prev = (enc) ? 96 : 80, .page_page_start = 48, \
	.page_heap_tag = 35, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 8, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1272 : 1264, \
	.heap_thread_delayed_free = 8, .heap_thread_id = 16, \
	.heap_cookie = 32, .heap_keys = 40, .heap_page_count = 192, \
	.heap_next = 216, .heap_tag = 225, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.1.7, 2.1.7a: the page and the heap gain their heap tag.  */
#define MI_V2_1_7(enc) \
	.version = "2.1.7", .releases = "2.1.7 and 2.1.7a", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_ALIGNED, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 131072, \
	.huge_block_size = 0, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 112, .seg_decommit_mask = 48, \
	.seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = MI_NO_FIELD, .seg_abandoned = 192, \
	.seg_used = 208, .seg_cookie = 216, .seg_segment_slices = 224, \
	.seg_info_slices = 232, .seg_kind = 240, \
	.seg_slice_entries = 248, .seg_thread_id = 256, \
	.seg_slices = 264, .page_size = (enc) ? 112 : 96, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 32, .page_used_width = 2, \
	.page_block_size = 40, .page_block_size_width = 8, \
	.page_local_free = 24, .page_keys = (enc) ? 56 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 72 : 56, \
	.page_xheap = (enc) ? 80 : 64, .page_next = (enc) ? 88 : 72, \
	.page_prev = (enc) ? 96 : 80, .page_page_start = 48, \
	.page_heap_tag = 35, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 8, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1272 : 1264, \
	.heap_thread_delayed_free = 8, .heap_thread_id = 16, \
	.heap_cookie = 32, .heap_keys = 40, .heap_page_count = 192, \
	.heap_next = 216, .heap_tag = 225, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.1.5 to 2.1.6: blocks up to 128 KiB start on a multiple of their
   size where the page allows it.  */
#define MI_V2_1_5(enc) \
	.version = "2.1.6", .releases = "2.1.5 to 2.1.6", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_ALIGNED, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 131072, \
	.huge_block_size = 0, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 112, .seg_decommit_mask = 48, \
	.seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = MI_NO_FIELD, .seg_abandoned = 192, \
	.seg_used = 208, .seg_cookie = 216, .seg_segment_slices = 224, \
	.seg_info_slices = 232, .seg_kind = 240, \
	.seg_slice_entries = 248, .seg_thread_id = 256, \
	.seg_slices = 264, .page_size = (enc) ? 112 : 96, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 32, .page_used_width = 2, \
	.page_block_size = 40, .page_block_size_width = 8, \
	.page_local_free = 24, .page_keys = (enc) ? 56 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 72 : 56, \
	.page_xheap = (enc) ? 80 : 64, .page_next = (enc) ? 88 : 72, \
	.page_prev = (enc) ? 96 : 80, .page_page_start = 48, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1272 : 1264, \
	.heap_thread_delayed_free = 8, .heap_thread_id = 16, \
	.heap_cookie = 32, .heap_keys = 40, .heap_page_count = 192, \
	.heap_next = 216, .heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.1.4: the page gets a 64-bit block_size (no huge sentinel), a 16-bit
   `used` and page_start; the heap's thread_delayed_free, cookie and
   keys move before its page queues; abandoned segments leave the global
   list (abandoned_next) for their arena's bitmap.  2.1.3 has no tag.  */
#define MI_V2_1_4(enc) \
	.version = "2.1.4", .releases = "2.1.4", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_SMALL, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 0, \
	.huge_block_size = 0, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 112, .seg_decommit_mask = 48, \
	.seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = MI_NO_FIELD, .seg_abandoned = 192, \
	.seg_used = 208, .seg_cookie = 216, .seg_segment_slices = 224, \
	.seg_info_slices = 232, .seg_kind = 240, \
	.seg_slice_entries = 248, .seg_thread_id = 256, \
	.seg_slices = 264, .page_size = (enc) ? 112 : 96, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 32, .page_used_width = 2, \
	.page_block_size = 40, .page_block_size_width = 8, \
	.page_local_free = 24, .page_keys = (enc) ? 56 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 72 : 56, \
	.page_xheap = (enc) ? 80 : 64, .page_next = (enc) ? 88 : 72, \
	.page_prev = (enc) ? 96 : 80, .page_page_start = 48, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1272 : 1264, \
	.heap_thread_delayed_free = 8, .heap_thread_id = 16, \
	.heap_cookie = 32, .heap_keys = 40, .heap_page_count = 192, \
	.heap_next = 216, .heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.1.2: the segment's memid becomes a struct (mi_memid_t, 24 bytes:
   memkind at 20) with the same size as the old fields it replaces, so
   only the tld (not in the table) moved.  */
#define MI_V2_1_2(enc) \
	.version = "2.1.2", .releases = "2.1.2", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_SMALL, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 0, \
	.huge_block_size = 1ull << 31, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 112, .seg_decommit_mask = 48, \
	.seg_commit_mask_bytes = 64, .seg_abandoned_next = 176, \
	.seg_abandoned = 192, .seg_used = 208, .seg_cookie = 216, \
	.seg_segment_slices = 224, .seg_info_slices = 232, \
	.seg_kind = 240, .seg_slice_entries = 248, \
	.seg_thread_id = 256, .seg_slices = 264, \
	.page_size = (enc) ? 96 : 80, .page_slice_count = 0, \
	.page_slice_offset = 4, .page_capacity = 10, \
	.page_reserved = 12, .page_flags = 14, .page_free = 16, \
	.page_used = 24, .page_used_width = 4, .page_block_size = 28, \
	.page_block_size_width = 4, .page_local_free = 32, \
	.page_keys = (enc) ? 40 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1048 : 1040, \
	.heap_thread_delayed_free = (enc) ? 2848 : 2840, \
	.heap_thread_id = (enc) ? 2856 : 2848, \
	.heap_cookie = (enc) ? 2872 : 2864, \
	.heap_keys = (enc) ? 2880 : 2872, \
	.heap_page_count = (enc) ? 3032 : 3024, \
	.heap_next = (enc) ? 3056 : 3048, .heap_tag = MI_NO_FIELD, \
	.queue_size = 24, .tld_heap_backing = 16, .tld_heaps = 24

/* 2.1.0 to 2.1.1: 2.0.9's structures; small blocks start 3 or 1 block
   sizes in; secure builds add 8 bytes of padding to every block, and
   with it one pages_free_direct entry (the heap's fields past it move
   by 8).  */
#define MI_V2_1_0(enc) \
	.version = "2.1.1", .releases = "2.1.0 to 2.1.1", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_SMALL, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 0, \
	.huge_block_size = 1ull << 31, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 112, .seg_decommit_mask = 48, \
	.seg_commit_mask_bytes = 64, .seg_abandoned_next = 176, \
	.seg_abandoned = 192, .seg_used = 208, .seg_cookie = 216, \
	.seg_segment_slices = 224, .seg_info_slices = 232, \
	.seg_kind = 240, .seg_slice_entries = 248, \
	.seg_thread_id = 256, .seg_slices = 264, \
	.page_size = (enc) ? 96 : 80, .page_slice_count = 0, \
	.page_slice_offset = 4, .page_capacity = 10, \
	.page_reserved = 12, .page_flags = 14, .page_free = 16, \
	.page_used = 24, .page_used_width = 4, .page_block_size = 28, \
	.page_block_size_width = 4, .page_local_free = 32, \
	.page_keys = (enc) ? 40 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1048 : 1040, \
	.heap_thread_delayed_free = (enc) ? 2848 : 2840, \
	.heap_thread_id = (enc) ? 2856 : 2848, \
	.heap_cookie = (enc) ? 2872 : 2864, \
	.heap_keys = (enc) ? 2880 : 2872, \
	.heap_page_count = (enc) ? 3032 : 3024, \
	.heap_next = (enc) ? 3056 : 3048, .heap_tag = MI_NO_FIELD, \
	.queue_size = 24, .tld_heap_backing = 16, .tld_heaps = 24

/* 2.0.9: 32 MiB segments of 64 KiB slices; a page's block size is 32
   bits (2 GiB and past: a huge page's own size); `used` 32 bits.  The
   encoded build adds keys[2] after local_free (before 2.0.9: after
   free), moving what follows by 16 bytes and the slices' stride from 80
   to 96.  Blocks of 8 to 1024 bytes start 384 bytes into their page.  */
#define MI_V2_0_9(enc) \
	.version = "2.0.9", .releases = "2.0.9", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_FIXED, \
	.start_offset = 384, .start_offset_min = 8, \
	.start_offset_max = 1024, .start_align_max = 0, \
	.huge_block_size = 1ull << 31, .bin_huge = 73, .padding = 0, \
	.seg_memid = 0, .seg_commit_mask = 112, \
	.seg_decommit_mask = 48, .seg_commit_mask_bytes = 64, \
	.seg_abandoned_next = 176, .seg_abandoned = 192, \
	.seg_used = 208, .seg_cookie = 216, .seg_segment_slices = 224, \
	.seg_info_slices = 232, .seg_kind = 240, \
	.seg_slice_entries = 248, .seg_thread_id = 256, \
	.seg_slices = 264, .page_size = (enc) ? 96 : 80, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = 24, .page_used_width = 4, \
	.page_block_size = 28, .page_block_size_width = 4, \
	.page_local_free = 32, .page_keys = (enc) ? 40 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = 3064, .heap_tld = 0, \
	.heap_pages = 1040, .heap_thread_delayed_free = 2840, \
	.heap_thread_id = 2848, .heap_cookie = 2864, \
	.heap_keys = 2872, .heap_page_count = 3024, .heap_next = 3048, \
	.heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.0.7: as 2.0.6, and the heap gains arena_id (cookie and what follows
   move by 8).  */
#define MI_V2_0_7(enc) \
	.version = "2.0.7", .releases = "2.0.7", .encoded = enc, \
	.segment_shift = 26, .slice_shift = 16, \
	.slices_per_segment = 1024, .start_rule = MI_START_FIXED, \
	.start_offset = 128, .start_offset_min = 8, \
	.start_offset_max = 1024, .start_align_max = 0, \
	.huge_block_size = 1ull << 31, .bin_huge = 73, .padding = 0, \
	.seg_memid = 0, .seg_commit_mask = 152, \
	.seg_decommit_mask = 24, .seg_commit_mask_bytes = 128, \
	.seg_abandoned_next = 280, .seg_abandoned = 296, \
	.seg_used = 312, .seg_cookie = 320, .seg_segment_slices = 328, \
	.seg_info_slices = 336, .seg_kind = 344, \
	.seg_slice_entries = 360, .seg_thread_id = 352, \
	.seg_slices = 368, .page_size = (enc) ? 96 : 80, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = (enc) ? 40 : 24, \
	.page_used_width = 4, .page_block_size = (enc) ? 44 : 28, \
	.page_block_size_width = 4, \
	.page_local_free = (enc) ? 48 : 32, \
	.page_keys = (enc) ? 24 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = 3064, .heap_tld = 0, \
	.heap_pages = 1040, .heap_thread_delayed_free = 2840, \
	.heap_thread_id = 2848, .heap_cookie = 2864, \
	.heap_keys = 2872, .heap_page_count = 3024, .heap_next = 3048, \
	.heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.0.6: as 2.0.3, with a 2 GiB huge sentinel; the tld (not in the
   table) loses its segment cache.  */
#define MI_V2_0_6(enc) \
	.version = "2.0.6", .releases = "2.0.6", .encoded = enc, \
	.segment_shift = 26, .slice_shift = 16, \
	.slices_per_segment = 1024, .start_rule = MI_START_FIXED, \
	.start_offset = 128, .start_offset_min = 8, \
	.start_offset_max = 1024, .start_align_max = 0, \
	.huge_block_size = 1ull << 31, .bin_huge = 73, .padding = 0, \
	.seg_memid = 0, .seg_commit_mask = 152, \
	.seg_decommit_mask = 24, .seg_commit_mask_bytes = 128, \
	.seg_abandoned_next = 280, .seg_abandoned = 296, \
	.seg_used = 312, .seg_cookie = 320, .seg_segment_slices = 328, \
	.seg_info_slices = 336, .seg_kind = 344, \
	.seg_slice_entries = 360, .seg_thread_id = 352, \
	.seg_slices = 368, .page_size = (enc) ? 96 : 80, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = (enc) ? 40 : 24, \
	.page_used_width = 4, .page_block_size = (enc) ? 44 : 28, \
	.page_block_size_width = 4, \
	.page_local_free = (enc) ? 48 : 32, \
	.page_keys = (enc) ? 24 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = 3056, .heap_tld = 0, \
	.heap_pages = 1040, .heap_thread_delayed_free = 2840, \
	.heap_thread_id = 2848, .heap_cookie = 2856, \
	.heap_keys = 2864, .heap_page_count = 3016, .heap_next = 3040, \
	.heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.0.3 to 2.0.5: 64 MiB segments of 1024 slices, a 128-byte commit
   mask; blocks of 8 to 1024 bytes start 128 bytes into their page; the
   huge sentinel is 1 GiB.  */
#define MI_V2_0_3(enc) \
	.version = "2.0.5", .releases = "2.0.3 to 2.0.5", .encoded = enc, \
	.segment_shift = 26, .slice_shift = 16, \
	.slices_per_segment = 1024, .start_rule = MI_START_FIXED, \
	.start_offset = 128, .start_offset_min = 8, \
	.start_offset_max = 1024, .start_align_max = 0, \
	.huge_block_size = 1ull << 30, .bin_huge = 73, .padding = 0, \
	.seg_memid = 0, .seg_commit_mask = 152, \
	.seg_decommit_mask = 24, .seg_commit_mask_bytes = 128, \
	.seg_abandoned_next = 280, .seg_abandoned = 296, \
	.seg_used = 312, .seg_cookie = 320, .seg_segment_slices = 328, \
	.seg_info_slices = 336, .seg_kind = 344, \
	.seg_slice_entries = 360, .seg_thread_id = 352, \
	.seg_slices = 368, .page_size = (enc) ? 96 : 80, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = (enc) ? 40 : 24, \
	.page_used_width = 4, .page_block_size = (enc) ? 44 : 28, \
	.page_block_size_width = 4, \
	.page_local_free = (enc) ? 48 : 32, \
	.page_keys = (enc) ? 24 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = 3056, .heap_tld = 0, \
	.heap_pages = 1040, .heap_thread_delayed_free = 2840, \
	.heap_thread_id = 2848, .heap_cookie = 2856, \
	.heap_keys = 2864, .heap_page_count = 3016, .heap_next = 3040, \
	.heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* 2.0.0 to 2.0.2: 8 MiB segments of 128 slices, one word of commit
   mask (a bit per 128 KiB); blocks start at the page; the huge sentinel
   is 128 MiB; the encoded build's keys come right after `free`.  */
#define MI_V2_0_0(enc) \
	.version = "2.0.2", .releases = "2.0.0 to 2.0.2", .encoded = enc, \
	.segment_shift = 23, .slice_shift = 16, \
	.slices_per_segment = 128, .start_rule = MI_START_FIXED, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 0, \
	.huge_block_size = 1ull << 27, .bin_huge = 73, .padding = 0, \
	.seg_memid = 0, .seg_commit_mask = 32, \
	.seg_decommit_mask = 24, .seg_commit_mask_bytes = 8, \
	.seg_abandoned_next = 40, .seg_abandoned = 56, .seg_used = 72, \
	.seg_cookie = 80, .seg_segment_slices = 88, \
	.seg_info_slices = 96, .seg_kind = 104, \
	.seg_slice_entries = 120, .seg_thread_id = 112, \
	.seg_slices = 128, .page_size = (enc) ? 96 : 80, \
	.page_slice_count = 0, .page_slice_offset = 4, \
	.page_capacity = 10, .page_reserved = 12, .page_flags = 14, \
	.page_free = 16, .page_used = (enc) ? 40 : 24, \
	.page_used_width = 4, .page_block_size = (enc) ? 44 : 28, \
	.page_block_size_width = 4, \
	.page_local_free = (enc) ? 48 : 32, \
	.page_keys = (enc) ? 24 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = MI_NO_FIELD, .page_heap_tag_shift = 0, \
	.page_heap_tag_bits = 0, .heap_size = 3056, .heap_tld = 0, \
	.heap_pages = 1040, .heap_thread_delayed_free = 2840, \
	.heap_thread_id = 2848, .heap_cookie = 2856, \
	.heap_keys = 2864, .heap_page_count = 3016, .heap_next = 3040, \
	.heap_tag = MI_NO_FIELD, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

/* CPython 3.13's copy of 2.1.2, free-threaded (Py_GIL_DISABLED): the
   page has a 4-bit heap tag and a debug_offset byte beside its flags,
   and a QSBR list node and goal where 2.1.2 has a padding word; the
   heap ends with tag, debug_offset and page_use_qsbr.  `true` is a
   --with-pydebug build (MI_DEBUG 2: encoded, padded).  CPython never
   sets MI_SECURE.  The default (GIL) build's copy, used under
   PYTHONMALLOC=mimalloc, has 2.1.2's offsets (its row) with the same
   tags.  */
#define MI_CPYTHON_3_13(enc) \
	.version = "2.1.2", .releases = "CPython 3.13 free-threaded", .encoded = enc, \
	.segment_shift = 25, .slice_shift = 16, \
	.slices_per_segment = 512, .start_rule = MI_START_SMALL, \
	.start_offset = 0, .start_offset_min = 0, \
	.start_offset_max = 0, .start_align_max = 0, \
	.huge_block_size = 1ull << 31, .bin_huge = 73, \
	.padding = (enc) ? 8 : 0, .seg_memid = 0, \
	.seg_commit_mask = 112, .seg_decommit_mask = 48, \
	.seg_commit_mask_bytes = 64, .seg_abandoned_next = 176, \
	.seg_abandoned = 192, .seg_used = 208, .seg_cookie = 216, \
	.seg_segment_slices = 224, .seg_info_slices = 232, \
	.seg_kind = 240, .seg_slice_entries = 248, \
	.seg_thread_id = 256, .seg_slices = 264, \
	.page_size = (enc) ? 112 : 96, .page_slice_count = 0, \
	.page_slice_offset = 4, .page_capacity = 10, \
	.page_reserved = 12, .page_flags = 14, .page_free = 16, \
	.page_used = 24, .page_used_width = 4, .page_block_size = 28, \
	.page_block_size_width = 4, .page_local_free = 32, \
	.page_keys = (enc) ? 40 : MI_NO_FIELD, \
	.page_xthread_free = (enc) ? 56 : 40, \
	.page_xheap = (enc) ? 64 : 48, .page_next = (enc) ? 72 : 56, \
	.page_prev = (enc) ? 80 : 64, .page_page_start = MI_NO_FIELD, \
	.page_heap_tag = 8, .page_heap_tag_shift = 3, \
	.page_heap_tag_bits = 4, .heap_size = (enc) ? 3072 : 3064, \
	.heap_tld = 0, .heap_pages = (enc) ? 1048 : 1040, \
	.heap_thread_delayed_free = (enc) ? 2848 : 2840, \
	.heap_thread_id = (enc) ? 2856 : 2848, \
	.heap_cookie = (enc) ? 2872 : 2864, \
	.heap_keys = (enc) ? 2880 : 2872, \
	.heap_page_count = (enc) ? 3032 : 3024, \
	.heap_next = (enc) ? 3056 : 3048, \
	.heap_tag = (enc) ? 3065 : 3057, .queue_size = 24, \
	.tld_heap_backing = 16, .tld_heaps = 24

static const struct mi_layout layouts[] = {
	{ MI_V2_3(false) },
	{ MI_V2_3(true) },
	{ MI_V2_2(false) },
	{ MI_V2_2(true) },
	{ MI_V2_1_8(false) },
	{ MI_V2_1_8(true) },
	{ MI_V2_1_7(false) },
	{ MI_V2_1_7(true) },
	{ MI_V2_1_5(false) },
	{ MI_V2_1_5(true) },
	{ MI_V2_1_4(false) },
	{ MI_V2_1_4(true) },
	{ MI_V2_1_2(false) },
	{ MI_V2_1_2(true) },
	{ MI_V2_1_0(false) },
	{ MI_V2_1_0(true) },
	{ MI_V2_0_9(false) },
	{ MI_V2_0_9(true) },
	{ MI_V2_0_7(false) },
	{ MI_V2_0_7(true) },
	{ MI_V2_0_6(false) },
	{ MI_V2_0_6(true) },
	{ MI_V2_0_3(false) },
	{ MI_V2_0_3(true) },
	{ MI_V2_0_0(false) },
	{ MI_V2_0_0(true) },
	{ MI_CPYTHON_3_13(false) },
	{ MI_CPYTHON_3_13(true) },
};

uint64_t mi_layout_page_start(const struct mi_layout *L, uint64_t pstart,
			      uint64_t psize, uint64_t bs)
{
	uint64_t off = 0;
	switch (L->start_rule) {
	case MI_START_FIXED:
		return pstart + (bs >= L->start_offset_min &&
					 bs <= L->start_offset_max
				 ? L->start_offset
				 : 0);
	case MI_START_ALIGNED:
	case MI_START_ALIGNED16:
		/* Small blocks' first one on a multiple of their size.  */
		if (bs > 0 && bs <= L->start_align_max) {
			uint64_t adjust = bs - pstart % bs;
			if (adjust < bs && psize >= bs + adjust)
				off += adjust;
		}
		break;
	default:
		break;
	}
	if (bs >= 8 && bs <= 64)
		off += 3 * bs;
	else if (bs > 64 && bs <= 512)
		off += bs;
	if (L->start_rule == MI_START_ALIGNED16)
		off = (off + 15) & ~15ull;
	return pstart + off;
}

const struct mi_layout *mi_layouts(unsigned *n)
{
	*n = sizeof layouts / sizeof layouts[0];
	return layouts;
}

void mi_releases(const struct mi_layout *rows, unsigned n, size_t stride,
		 char *buf, size_t len)
{
	const char *at = (const char *)rows;
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned k = 0; k < n && used < len; k++) {
		const char *r = ((const struct mi_layout *)(at + k * stride))->releases;
		bool seen = false;
		for (unsigned j = 0; j < k; j++)
			seen |= !strcmp(((const struct mi_layout *)(at + j * stride))
						->releases, r);
		if (!seen)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? ", " : "", r);
	}
}
