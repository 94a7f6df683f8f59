/* detect.c - find jemalloc in the target, its version and size classes.
 *
 * jemalloc is a shared libjemalloc*, or linked into the executable (then
 * recognised by an exported "*mallctl" symbol, whatever the prefix).  Its
 * version is the string mallctl("version") returns, compiled into the
 * library ("5.3.0-0-g54eaed1d8b56...").  The size classes are read from
 * sz_index2size_tab (by symbol, or found by its value pattern in the
 * module's data) and, when neither works, computed the way sc.c does from
 * the quantum and the page size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../module.h"
#include "jemalloc.h"

static bool is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Parse "MAJ.MIN.PATCH-N-g<40 hex>" ending at the "-g" at data[at].  */
static bool version_at(struct je_state *j, const uint8_t *data, size_t len,
		       size_t at)
{
	if (at + 2 + 40 > len)
		return false;
	for (size_t k = 0; k < 40; k++)
		if (!is_hex(data[at + 2 + k]))
			return false;
	/* Back over "-N" and "MAJ.MIN.PATCH".  */
	size_t b = at;
	while (b > 0 && is_digit(data[b - 1]))
		b--;
	if (b == at || b == 0 || data[b - 1] != '-')
		return false;
	size_t v = --b;
	int dots = 0;
	while (v > 0 && (is_digit(data[v - 1]) || data[v - 1] == '.')) {
		dots += data[v - 1] == '.';
		v--;
	}
	if (dots != 2 || !is_digit(data[v]))
		return false;
	size_t n = at + 42 - v;
	if (n >= sizeof j->git || b - v >= sizeof j->version)
		return false;
	memcpy(j->git, data + v, n);
	j->git[n] = '\0';
	memcpy(j->version, data + v, b - v);
	j->version[b - v] = '\0';
	return true;
}

/* Any version string in [data, data + len), into the state cookie is
   (a search of alloc/module.h: the target's copy of the module, or its
   file on disk for cores that lack its read-only pages, qemu-user's).  */
static bool version_in(void *cookie, const uint8_t *data, size_t len)
{
	struct je_state *j = cookie;
	const uint8_t *p = data, *end = data + len;
	while (p && p < end) {
		p = memmem(p, (size_t)(end - p), "-g", 2);
		if (!p)
			break;
		if (version_at(j, data, len, (size_t)(p - data)))
			return true;
		p += 2;
	}
	return false;
}

enum hw_status je_find_module(struct je_state *j)
{
	struct hw_session *s = j->s;
	struct hw_target *t = j->t;
	uint64_t lo = 0, hi = 0;
	const char *path = NULL;
	for (size_t i = 0; i < t->nfiles && !path; i++)
		if (strstr(hw_base_name(t->files[i].path), "jemalloc"))
			path = t->files[i].path;
	struct hw_module *m = &j->mod;
	if (path) {
		hw_file_range(t, path, &lo, &hi);
		snprintf(j->module, sizeof j->module, "%s", path);
		j->how_module = "mapped file named *jemalloc*";
	} else if (s->syms && t->exe &&
		   hw_syms_find_module(s->syms, hw_base_name(t->exe), m)) {
		/* Linked in: the executable exports (prefixed) mallctl.  */
		char name[96];
		if (hw_syms_lookup_suffix(s->syms, m, "mallctl", name,
					  sizeof name, NULL, NULL)) {
			size_t n = strlen(name) - strlen("mallctl");
			if (n < sizeof j->prefix) {
				memcpy(j->prefix, name, n);
				j->prefix[n] = '\0';
			}
			lo = m->low;
			hi = m->high;
			snprintf(j->module, sizeof j->module, "%s", t->exe);
			j->how_module = "exported symbol *mallctl in the "
					"executable";
		}
	}
	if (!j->module[0] && t->exe && hw_file_range(t, t->exe, &lo, &hi) &&
	    hw_module_search(t, lo, hi, version_in, j)) {
		/* Linked in and stripped: its version string gives it away.  */
		snprintf(j->module, sizeof j->module, "%s", t->exe);
		j->how_module = "jemalloc version string in the executable";
	}
	if (!j->module[0])
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': no jemalloc in the "
				"target", t->path ? t->path : "target");
	s->alloc_present = true;
	j->have_mod = s->syms && hw_syms_find_module(s->syms,
					hw_base_name(j->module), m);
	if (j->have_mod && (!lo || !hi)) {
		lo = m->low;
		hi = m->high;
	}
	j->ndata = hw_module_data(t, lo, hi, j->data, JE_MAX_RANGES);
	if (!hw_module_search(t, lo, hi, version_in, j) &&
	    !(j->have_mod && m->file &&
	      hw_file_search(m->file, (uint64_t)1 << 32, version_in, j))) {
		/* Not a jemalloc 5 we can name; the data decide below.  */
		snprintf(j->version, sizeof j->version, "unknown");
	}
	if (sscanf(j->version, "%d.%d", &j->major, &j->minor) != 2) {
		j->major = 5;
		j->minor = 3;
	}
	if (j->major != 5)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': jemalloc %s is not "
				"supported (5.x only)", j->module, j->version);
	j->era = j->minor >= 3 ? JE_ERA_53 : JE_ERA_52;
	if (!j->ndata)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': jemalloc %s found, "
				"but none of its data is in the %s",
				j->module, j->version, hw_target_noun(j->t));
	return HW_OK;
}

bool je_lookup(const struct je_state *j, const char *suffix, uint64_t *addr,
	       uint64_t *size)
{
	return j->have_mod && hw_syms_lookup_suffix(j->s->syms, &j->mod,
						    suffix, NULL, 0, addr, size);
}

/* ---- size classes ------------------------------------------------------ */

/* sc.c's classes: tiny ones from 8 up to the quantum, then four per
   doubling.  */
static unsigned compute_sizes(uint64_t *out, unsigned max, int lg_quantum)
{
	unsigned n = 0;
	int lg_tiny_min = 3, ngroup = 4;
	for (int lg = lg_tiny_min; lg < lg_quantum && n < max; lg++)
		out[n++] = (uint64_t)1 << lg;
	/* The first group counts up from the quantum in quantum steps.  */
	for (int k = 0; k < ngroup && n < max; k++)
		out[n++] = ((uint64_t)1 << lg_quantum) * (uint64_t)(k + 1);
	for (int lg_base = lg_quantum + 2; lg_base < 62; lg_base++)
		for (int k = 1; k <= ngroup && n < max; k++)
			out[n++] = ((uint64_t)1 << lg_base) +
				   ((uint64_t)k << (lg_base - 2));
	return n;
}

/* The table at addr (u64 entries) as far as it ascends like size classes.  */
static unsigned read_size_table(struct je_state *j, uint64_t addr,
				uint64_t *out)
{
	unsigned n = 0;
	uint64_t prev = 0, v;
	while (n < JE_MAX_SIZES && hw_read_u64(j->t, addr + 8ull * n, &v) &&
	       v > prev && (n < 2 || v <= 2 * prev)) {
		out[n++] = v;
		prev = v;
	}
	return n;
}

uint64_t je_data_find(struct je_state *j, je_match_fn *match, void *cookie)
{
	for (size_t i = 0; i < j->ndata; i++) {
		const uint8_t *d;
		uint64_t len;
		for (uint64_t run = j->data[i].start; run < j->data[i].end;
		     run = len ? run + len :
			   hw_next_readable(j->t, run, j->data[i].end)) {
			len = hw_readable_run(j->t, run, &d);
			if (len > j->data[i].end - run)
				len = j->data[i].end - run;
			for (uint64_t off = 0; off + 8 <= len; off += 8) {
				uint64_t w;
				memcpy(&w, d + off, 8);
				if (match(j, run + off, w, cookie))
					return run + off;
			}
		}
	}
	return 0;
}

static bool size_table_at(struct je_state *j, uint64_t at, uint64_t w,
			  void *cookie)
{
	const uint64_t *want = cookie;
	uint64_t have[8];
	return w == want[0] && hw_read(j->t, at, have, sizeof have) &&
	       !memcmp(have, want, sizeof have);
}

static uint64_t scan_size_table(struct je_state *j, int lg_quantum)
{
	uint64_t want[8];
	compute_sizes(want, 8, lg_quantum);
	return je_data_find(j, size_table_at, want);
}

/* bin_infos: records {size_t reg_size; size_t slab_size; uint32_t nregs;
   ...} of some stride, one per small class.  */
static bool bin_info_ok(struct je_state *j, uint64_t at, unsigned k)
{
	uint64_t reg, slab;
	uint32_t nregs;
	uint64_t page = (uint64_t)1 << j->p.lg_page;
	return hw_read_u64(j->t, at, &reg) && reg == j->sizes[k] &&
	       hw_read_u64(j->t, at + 8, &slab) && slab && slab % page == 0 &&
	       hw_read_u32(j->t, at + 16, &nregs) && nregs == slab / reg;
}

/* A bin info table starts here: records for classes 0, 1 and 2 at some
   stride (40 bytes up to 5.3 with 4 KiB pages, 88 with 64 KiB).  */
static bool bin_infos_at(struct je_state *j, uint64_t at, uint64_t w,
			 void *cookie)
{
	if (w != j->sizes[0] || !bin_info_ok(j, at, 0))
		return false;
	for (unsigned st = 24; st <= 256; st += 8)
		if (bin_info_ok(j, at + st, 1) && bin_info_ok(j, at + 2ull * st, 2)) {
			*(unsigned *)cookie = st;
			return true;
		}
	return false;
}

static void find_bin_infos(struct je_state *j)
{
	uint64_t addr = 0, size = 0;
	bool sym = je_lookup(j, "je_bin_infos", &addr, &size);
	if (!addr)
		addr = je_data_find(j, bin_infos_at, &j->bin_info_stride);
	if (!addr)
		return;
	if (sym) {
		for (unsigned st = 24; st <= 256; st += 8)
			if (bin_info_ok(j, addr + st, 1)) {
				j->bin_info_stride = st;
				break;
			}
	}
	if (!j->bin_info_stride)
		return;
	for (unsigned k = 0; k < j->nbins; k++) {
		uint64_t at = addr + (uint64_t)k * j->bin_info_stride;
		uint32_t nregs;
		if (!bin_info_ok(j, at, k) || !hw_read_u32(j->t, at + 16, &nregs))
			return;
		j->bin_nregs[k] = nregs;
	}
	j->bin_infos = addr;
	j->how_bins = sym ? "symbol je_bin_infos" :
			    "scan of jemalloc's data for the bin info table";
}

void je_find_size_classes(struct je_state *j)
{
	uint64_t addr = 0, size = 0;
	uint64_t table[JE_MAX_SIZES];
	unsigned n = 0;
	if (je_lookup(j, "je_sz_index2size_tab", &addr, &size) &&
	    (n = read_size_table(j, addr, table)) > 8) {
		j->how_sizes = "symbol je_sz_index2size_tab";
	} else {
		n = 0;
		for (int q = 4; q >= 3 && !n; q--) {
			addr = scan_size_table(j, q);
			if (addr && (n = read_size_table(j, addr, table)) > 8)
				j->how_sizes = "scan of jemalloc's data for "
					       "sz_index2size_tab";
			else
				n = 0;
		}
	}
	if (n) {
		memcpy(j->sizes, table, n * sizeof *table);
		j->nsizes = n;
		j->size_table = addr;
		j->p.lg_quantum = j->sizes[1] == 16 && j->sizes[2] == 32 ? 4 : 3;
	} else {
		if (!j->p.lg_quantum)
			j->p.lg_quantum = 4;
		j->nsizes = compute_sizes(j->sizes, JE_MAX_SIZES, j->p.lg_quantum);
		j->how_sizes = "computed (quantum 16, no table found)";
	}
	/* Small classes are those below 4 pages (SC_LG_NGROUP + LG_PAGE).  */
	uint64_t small_limit = (uint64_t)4 << j->p.lg_page;
	j->nbins = 0;
	while (j->nbins < j->nsizes && j->sizes[j->nbins] < small_limit)
		j->nbins++;
	find_bin_infos(j);
	if (!j->how_bins)
		j->how_bins = "not found (regions per slab from slab sizes)";
}
