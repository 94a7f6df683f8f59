/* coremap.c - the core gdb opened, mapped (coremap.h says why).
 *
 * Everything here is checked as untrusted input: the core file is the
 * user's, and may be damaged, truncated or replaced; a check that fails
 * costs only the speed (gdb reads those segments as before).
 */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coremap.h"

/* Segments compared with gdb's reads: all of them up to this many, an
   even spread beyond (each costs two small reads through gdb).  */
#define CHECK_MAX 1024
#define CHECK_BYTES 64

struct load {
	uint64_t vaddr, offset, filesz;
};

static int by_vaddr(const void *a, const void *b)
{
	const struct load *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int by_start(const void *a, const void *b)
{
	const struct hw_memory_span *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The core's PT_LOAD headers sorted by address (*n of them), or NULL:
   not a 64-bit little-endian ELF core, or headers outside the file.  */
static struct load *core_loads(const uint8_t *f, size_t size, size_t *n)
{
	Elf64_Ehdr eh;
	if (size < sizeof eh)
		return NULL;
	memcpy(&eh, f, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_CORE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	uint64_t phnum = eh.e_phnum;
	if (phnum == PN_XNUM) {
		/* More than 65534: the count is section 0's sh_info.  */
		Elf64_Shdr sh;
		if (eh.e_shoff > size || size - eh.e_shoff < sizeof sh)
			return NULL;
		memcpy(&sh, f + eh.e_shoff, sizeof sh);
		phnum = sh.sh_info;
	}
	if (!phnum || eh.e_phoff > size ||
	    (size - eh.e_phoff) / sizeof(Elf64_Phdr) < phnum)
		return NULL;
	struct load *l = malloc(phnum * sizeof *l);
	if (!l)
		return NULL;
	size_t k = 0;
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, f + eh.e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_LOAD && ph.p_filesz)
			l[k++] = (struct load){ ph.p_vaddr, ph.p_offset,
						ph.p_filesz };
	}
	qsort(l, k, sizeof *l, by_vaddr);
	*n = k;
	return l;
}

/* Where gdb's segment [lo, hi) at file offset `at` lies in the file, if
   a PT_LOAD puts it there, whole, inside the file: else NULL.  */
static const uint8_t *segment_bytes(const struct core_map *cm,
				    const struct load *l, size_t n,
				    const struct core_segment *s)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l[mid].vaddr <= s->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct load *p = &l[lo - 1];
	uint64_t len = s->hi - s->lo, into = s->lo - p->vaddr;
	if (into >= p->filesz || p->filesz - into < len ||
	    s->at != p->offset + into || s->at > cm->size ||
	    cm->size - s->at < len)
		return NULL;
	return (const uint8_t *)cm->base + s->at;
}

/* Does gdb read what the file holds at sp's two ends?  */
static bool same_as_gdb(const struct hw_memory_span *sp,
			bool (*read)(void *, uint64_t, void *, size_t),
			void *cookie)
{
	uint8_t buf[CHECK_BYTES];
	size_t n = sp->len < CHECK_BYTES ? (size_t)sp->len : CHECK_BYTES;
	const uint8_t *d = sp->data;
	return read(cookie, sp->start, buf, n) && memcmp(buf, d, n) == 0 &&
	       read(cookie, sp->start + sp->len - n, buf, n) &&
	       memcmp(buf, d + sp->len - n, n) == 0;
}

/* The core file as gdb reads it.  gdb (BFD) keeps it open: the plugin
   runs inside gdb, so that descriptor is in /proc/self/fd, linked to
   the path, or to "PATH (deleted)" when the file was replaced since gdb
   opened it; reopened through /proc, it is gdb's very file.  When BFD
   has closed it (its cache of open files is small), BFD reopens the
   path by name, so the path is what gdb reads.  */
static int open_gdbs_core(const char *path)
{
	int fl = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	size_t plen = strlen(path);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;
	while (d && fd < 0 && (e = readdir(d))) {
		char link[300], target[PATH_MAX + 16];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n < (ssize_t)plen || memcmp(target, path, plen) != 0)
			continue;
		target[n] = '\0';
		if (target[plen] == '\0' ||
		    strcmp(target + plen, " (deleted)") == 0)
			fd = open(link, fl);
	}
	if (d)
		closedir(d);
	return fd >= 0 ? fd : open(path, fl);
}

void core_map_close(struct core_map *cm)
{
	if (cm->base)
		munmap(cm->base, cm->size);
	free(cm->spans);
	memset(cm, 0, sizeof *cm);
}

bool core_map_open(struct core_map *cm, struct gdb_view *v,
		   bool (*read)(void *cookie, uint64_t addr, void *buf,
				size_t len),
		   void *cookie)
{
	memset(cm, 0, sizeof *cm);
	if (!v->mem.core || !v->ncore_segs)
		return false;
	int fd = open_gdbs_core(v->mem.core);
	struct stat st;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return false;
	}
	cm->size = (size_t)st.st_size;
	cm->base = mmap(NULL, cm->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (cm->base == MAP_FAILED) {
		cm->base = NULL;
		return false;
	}
	size_t nloads = 0;
	struct load *loads = core_loads(cm->base, cm->size, &nloads);
	cm->spans = calloc(v->ncore_segs, sizeof *cm->spans);
	if (!loads || !cm->spans)
		goto fail;
	for (size_t i = 0; i < v->ncore_segs; i++) {
		const struct core_segment *s = &v->core_segs[i];
		const uint8_t *d = segment_bytes(cm, loads, nloads, s);
		if (d)
			cm->spans[cm->nspans++] = (struct hw_memory_span){
				.start = s->lo, .data = d, .len = s->hi - s->lo };
	}
	free(loads);
	loads = NULL;
	if (!cm->nspans)
		goto fail;
	qsort(cm->spans, cm->nspans, sizeof *cm->spans, by_start);
	size_t step = cm->nspans > CHECK_MAX ? cm->nspans / CHECK_MAX : 1;
	for (size_t i = 0; i < cm->nspans; i += step, cm->checked++)
		if (!same_as_gdb(&cm->spans[i], read, cookie))
			goto fail;
	v->mem.spans = cm->spans;
	v->mem.nspans = cm->nspans;
	return true;
fail:
	free(loads);
	core_map_close(cm);
	return false;
}

bool core_map_add_holes(struct core_map *cm, struct gdb_view *v)
{
	if (!v->ncore_holes)
		return true;
	struct hw_memory_span *s = realloc(cm->spans, (cm->nspans +
						       v->ncore_holes) *
						      sizeof *s);
	if (!s)
		return false;
	cm->spans = s;
	for (size_t i = 0; i < v->ncore_holes; i++)
		cm->spans[cm->nspans++] = (struct hw_memory_span){
			.start = v->core_holes[i].lo, .data = NULL,
			.len = v->core_holes[i].hi - v->core_holes[i].lo };
	qsort(cm->spans, cm->nspans, sizeof *cm->spans, by_start);
	v->mem.spans = cm->spans;
	v->mem.nspans = cm->nspans;
	return true;
}

bool core_map_whole(const struct core_map *cm, const struct gdb_view *v)
{
	if (!cm->nspans)
		return false;
	for (size_t i = 0; i < v->nregions; i++) {
		const struct hw_memory_region *r = &v->regions[i];
		if (!(r->prot & HW_MEM_W) || r->end <= r->start)
			continue;
		size_t lo = 0, n = cm->nspans;
		while (lo < n) {
			size_t mid = lo + (n - lo) / 2;
			if (cm->spans[mid].start <= r->start)
				lo = mid + 1;
			else
				n = mid;
		}
		if (!lo || r->end - cm->spans[lo - 1].start >
			   cm->spans[lo - 1].len)
			return false;
	}
	return true;
}
