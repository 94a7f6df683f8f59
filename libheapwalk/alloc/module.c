/* module.c - an allocator's file: its name, mapping, writable memory and
 * bytes, for the walkers that find their roots in it (jemalloc,
 * tcmalloc).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module.h"

const char *hw_base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

bool hw_file_range(const struct hw_target *t, const char *path, uint64_t *lo,
		   uint64_t *hi)
{
	bool any = false;
	for (size_t i = 0; i < t->nfiles; i++) {
		if (strcmp(t->files[i].path, path) != 0)
			continue;
		if (!any || t->files[i].start < *lo)
			*lo = t->files[i].start;
		if (!any || t->files[i].end > *hi)
			*hi = t->files[i].end;
		any = true;
	}
	return any;
}

size_t hw_module_data(const struct hw_target *t, uint64_t lo, uint64_t hi,
		      struct hw_addr_range *out, size_t max)
{
	size_t n = 0;
	uint64_t last_end = 0;
	for (size_t i = 0; i < t->nregions && n < max; i++) {
		const struct hw_region *r = &t->regions[i];
		bool inside = r->start < hi && r->end > lo;
		bool bss = r->file < 0 && last_end && r->start == last_end;
		if (!(r->prot & HW_PROT_W) || !(inside || bss))
			continue;
		last_end = inside ? r->end : 0;
		uint64_t end = r->start + hw_region_held(r);
		if (end == r->start)
			continue;
		/* .data and the .bss after it are one range.  */
		if (n && out[n - 1].end == r->start) {
			out[n - 1].end = end;
			continue;
		}
		out[n].start = r->start;
		out[n].end = end;
		n++;
	}
	return n;
}

bool hw_module_search(struct hw_target *t, uint64_t lo, uint64_t hi,
		      bool (*fn)(void *cookie, const uint8_t *data, size_t len),
		      void *cookie)
{
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (r->end <= lo || r->start >= hi || (r->prot & HW_PROT_X))
			continue;
		const uint8_t *data;
		uint64_t len = hw_readable_run(t, r->start, &data);
		if (len && fn(cookie, data, len))
			return true;
	}
	return false;
}

bool hw_file_search(const char *path, uint64_t max_bytes,
		    bool (*fn)(void *cookie, const uint8_t *data, size_t len),
		    void *cookie)
{
	int fd = hw_open_regular(path);
	if (fd < 0)
		return false;
	struct stat st;
	bool found = false;
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (uint64_t)st.st_size < max_bytes) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			       fd, 0);
		if (m != MAP_FAILED) {
			found = fn(cookie, m, (size_t)st.st_size);
			munmap(m, (size_t)st.st_size);
		}
	}
	close(fd);
	return found;
}
