/* layout.c - built-in ptmalloc layouts for glibc 2.17-2.44 on LP64.
 *
 * Read from malloc.c and arena.c at each release tag (x86_64 and aarch64
 * lay these structs out identically).  The eras:
 *   malloc_state: 2.23 adds attached_threads, 2.27 adds have_fastchunks,
 *                 2.43 removes it and the fastbins (top moves to +8);
 *   malloc_par:   2.24 drops max_total_mem, 2.26 adds the tcache fields,
 *                 2.35 adds the huge-page fields before n_mmaps, 2.43
 *                 thp_mode before those (+8 from there on), 2.44 drops
 *                 tcache_unsorted_limit (its last field);
 *   heap_info:    2.35 adds pagesize and padding (0x20 -> 0x30);
 *   tcache:       2.26 char counts, 2.30 uint16_t counts, 2.42 twelve
 *                 large bins (76 in all) whose counters count the free
 *                 slots left (num_slots) instead of the entries;
 *   safe-linking: 2.32;
 *   mmapped chunks: 2.43 ends the mapping with a spare 16-byte header
 *                 after the chunk (size = mapping - 16).
 * Distributions backport (tcache key, count width), so the walker checks
 * what it reads against these tables rather than trusting the version.
 */
#include "ptmalloc.h"

static bool at_least(int major, int minor, int m2)
{
	return major > 2 || (major == 2 && minor >= m2);
}

void pm_layout_ms(struct pm_layout *l, enum pm_ms_era era)
{
	l->ms_era = era;
	l->ms_mutex = 0;
	l->ms_flags = 4;
	if (era >= PM_MS_243) {
		l->ms_have_fastchunks = -1;
		l->ms_fastbins = -1;
	} else if (era >= PM_MS_227) {
		l->ms_have_fastchunks = 8;
		l->ms_fastbins = 0x10;
	} else {
		l->ms_have_fastchunks = -1;
		l->ms_fastbins = 0x08;
	}
	l->ms_top = era >= PM_MS_243 ? 8 : l->ms_fastbins + 8 * PM_NFASTBINS;
	l->ms_last_remainder = l->ms_top + 8;
	l->ms_bins = l->ms_last_remainder + 8;
	l->ms_binmap = l->ms_bins + 8 * (2 * PM_NBINS - 2);
	l->ms_next = l->ms_binmap + 16;
	l->ms_next_free = l->ms_next + 8;
	if (era >= PM_MS_223) {
		l->ms_attached_threads = l->ms_next_free + 8;
		l->ms_system_mem = l->ms_attached_threads + 8;
	} else {
		l->ms_attached_threads = -1;
		l->ms_system_mem = l->ms_next_free + 8;
	}
	l->ms_max_system_mem = l->ms_system_mem + 8;
	l->ms_sizeof = (uint64_t)l->ms_max_system_mem + 8;
}

void pm_layout_mp(struct pm_layout *l, enum pm_mp_era era, bool tcache)
{
	l->mp_era = era;
	l->mp_trim_threshold = 0;
	l->mp_mmap_threshold = 0x10;
	bool hp = era >= PM_MP_235;
	/* 2.43's thp_mode (an int, padded) comes before the huge-page
	   fields.  */
	int thp = era >= PM_MP_243 ? 8 : 0;
	l->mp_n_mmaps = hp ? 0x3c + thp : 0x28;
	l->mp_mmapped_mem = hp ? 0x50 + thp : 0x38;
	l->mp_sbrk_base = hp ? 0x60 + thp : era == PM_MP_224 ? 0x48 : 0x50;
	l->has_tcache = tcache;
	if (tcache) {
		l->mp_tcache_bins = l->mp_sbrk_base + 8;
		l->mp_tcache_max_bytes = l->mp_sbrk_base + 16;
		l->mp_tcache_count = l->mp_sbrk_base + 24;
		l->mp_sizeof = (uint64_t)l->mp_sbrk_base + 40;
	} else {
		l->mp_tcache_bins = l->mp_tcache_max_bytes =
			l->mp_tcache_count = -1;
		l->mp_sizeof = (uint64_t)l->mp_sbrk_base + 8;
	}
	pm_layout_mp_rest(l, era);
}

/* malloc_par's members that only `mp` shows, from the ones the walker
   reads: the tunables before the mmap counters never moved; 2.35 put
   thp_pagesize, hp_pagesize and hp_flags after arena_max, 2.43
   thp_mode before them; the counters are four ints from n_mmaps,
   max_mmapped_mem follows mmapped_mem, and up to 2.23 max_total_mem
   followed it; tcache_unsorted_limit ends the tcache part (2.26-2.43).  */
void pm_layout_mp_rest(struct pm_layout *l, enum pm_mp_era era)
{
	bool hp = era >= PM_MP_235;
	int thp = era >= PM_MP_243 ? 8 : 0;
	l->mp_top_pad = 8;
	l->mp_arena_test = 24;
	l->mp_arena_max = 32;
	l->mp_thp_mode = thp ? 40 : -1;
	l->mp_thp_pagesize = hp ? 40 + thp : -1;
	l->mp_hp_pagesize = hp ? 48 + thp : -1;
	l->mp_hp_flags = hp ? 56 + thp : -1;
	l->mp_n_mmaps_max = l->mp_n_mmaps + 4;
	l->mp_max_n_mmaps = l->mp_n_mmaps + 8;
	l->mp_no_dyn_threshold = l->mp_n_mmaps + 12;
	l->mp_max_mmapped_mem = l->mp_mmapped_mem + 8;
	l->mp_max_total_mem = era == PM_MP_217 ? l->mp_mmapped_mem + 16 : -1;
	l->mp_tcache_unsorted_limit = l->has_tcache &&
				      l->mp_tcache_count >= 0
				      ? l->mp_tcache_count + 8 : -1;
}

void pm_layout_tcache(struct pm_layout *l, unsigned kind)
{
	l->tc_count_width = kind == 1 ? 1 : 2;
	l->tc_nbins = kind == 3 ? PM_TCACHE_MAX_BINS : PM_TCACHE_SMALL_BINS;
	l->tc_slots = kind == 3;
	l->tc_counts = 0;
	l->tc_entries = (int64_t)(l->tc_count_width * l->tc_nbins);
	l->tc_sizeof = (uint64_t)l->tc_entries + 8 * l->tc_nbins;
}

bool pm_layout_builtin(struct pm_layout *l, int major, int minor)
{
	if (major != 2 || minor < 17 || minor > PM_NEWEST_MINOR)
		return false;
	l->ver_major = major;
	l->ver_minor = minor;
	l->source = "built-in";
	pm_layout_ms(l, at_least(major, minor, 43) ? PM_MS_243
			: at_least(major, minor, 27) ? PM_MS_227
			: at_least(major, minor, 23) ? PM_MS_223 : PM_MS_217);
	pm_layout_mp(l, at_least(major, minor, 43) ? PM_MP_243
			: at_least(major, minor, 35) ? PM_MP_235
			: at_least(major, minor, 24) ? PM_MP_224 : PM_MP_217,
		     at_least(major, minor, 26));
	/* 2.44 ends malloc_par before tcache_unsorted_limit.  */
	if (at_least(major, minor, 44)) {
		l->mp_sizeof -= 8;
		l->mp_tcache_unsorted_limit = -1;
	}
	l->hi_ar_ptr = 0;
	l->hi_prev = 8;
	l->hi_size = 0x10;
	l->hi_sizeof = at_least(major, minor, 35) ? 0x30 : 0x20;
	pm_layout_tcache(l, at_least(major, minor, 42) ? 3
			 : at_least(major, minor, 30) ? 2 : 1);
	l->safe_linking = at_least(major, minor, 32);
	l->heap_max = 64ull << 20;
	l->usable_slack = PM_SIZE_SZ;
	return true;
}
