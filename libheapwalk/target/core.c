/* core.c - the ELF core file backend.
 *
 * The core is mmapped once; regions point straight into the mapping, so a
 * walk copies nothing.  What the kernel did not dump (read-only pages of
 * file mappings: code, .rodata) is served from the file on disk, but only
 * after the bytes the core does hold of that file were compared with it:
 * a library updated since the crash must not be read as if it were the one
 * that ran.
 *
 * A compressed core (systemd-coredump's .zst, .xz, .lz4; a .gz) is first
 * unpacked into private memory mapped as the file would be (unpack.h),
 * and read the same way: every check below runs on the unpacked bytes.
 *
 * Everything in the file is untrusted: each header, note and offset is
 * checked against the file size before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "compressed.h"
#include "core.h"
#include "linkmap.h"
#include "prefault.h"
#include "unpack.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

/* An on-disk file that backs some mappings.  */
struct backing_file {
	const char *path;     /* as named by the core (not the sysroot one) */
	const uint8_t *map;
	size_t size;
	int state;            /* BACKING_*: usable, missing or different,
				 or not comparable (the core lost its
				 header) */
};

struct core_priv {
	uint8_t *map;
	size_t size;
	Elf *elf;
	char *strings;        /* NT_FILE path copies, one block */
	char **paths;         /* or link_map paths, one each */
	size_t npaths;
	struct backing_file *backing;
	size_t nbacking;
	unsigned threads;     /* the session's: to drop the mapping with */
};

/* Would an open() of path, as libdwfl's core reader makes one, find
   something there that is no regular file (a FIFO, a device, a
   directory)?  See below.  */
static bool unopenable(const char *path)
{
	struct stat st;
	return path[0] && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* libdwfl's core reader (dwfl_core_file_report) opens each name in the
   core's link_map on this machine itself, with a plain blocking open():
   a FIFO named there stops every command for good, and a device may
   answer an open.  Such a file is no module anyway, so before libdwfl
   reads the core, a name that is there but not a regular file is
   blanked (its first byte) in the private copy of the core; libdwfl
   then passes the entry by.  (A file swapped for a FIFO between this
   stat and libdwfl's open is not caught: nothing outside libdwfl can.)  */
struct name_blanking {
	struct hw_target *t;
	struct core_priv *p;
};

static void blank_unopenable(void *arg, uint64_t addr, const char *name)
{
	struct name_blanking *b = arg;
	const uint8_t *at;
	if (!unopenable(name) || !hw_readable_run(b->t, addr, &at))
		return;
	/* Only the core's own bytes: a page served from a file on disk
	   is that file's, and read-only.  */
	if (at >= b->p->map && at < b->p->map + b->p->size)
		b->p->map[at - b->p->map] = '\0';
}

static void core_close(struct hw_target *t)
{
	struct core_priv *p = t->priv;
	if (p) {
		if (p->elf)
			elf_end(p->elf);
		for (size_t i = 0; i < p->nbacking; i++)
			if (p->backing[i].map)
				munmap((void *)p->backing[i].map,
				       p->backing[i].size);
		free(p->backing);
		free(p->strings);
		for (size_t i = 0; i < p->npaths; i++)
			free(p->paths[i]);
		free(p->paths);
		if (p->map)
			hw_unmap_parallel(p->map, p->size, p->threads);
		free(p);
	}
	free(t->regions);
	free(t->threads);
	free(t->files);
	free(t);
}

static const struct hw_target_ops core_ops = {
	.name = "core",
	.close = core_close,
};

static enum hw_status fail(char *err, size_t errlen, enum hw_status st,
			   const char *fmt, const char *path, const char *why)
{
	snprintf(err, errlen, fmt, path, why);
	return st;
}

static int region_cmp(const void *a, const void *b)
{
	const struct hw_region *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Collect PT_LOAD segments into sorted, disjoint regions.  */
static bool load_regions(struct hw_target *t, struct core_priv *p,
			 size_t phnum)
{
	t->regions = calloc(phnum ? phnum : 1, sizeof *t->regions);
	if (!t->regions)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(p->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_memsz == 0 || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue;
		struct hw_region *r = &t->regions[n++];
		r->start = ph.p_vaddr;
		r->end = ph.p_vaddr + ph.p_memsz;
		r->prot = (ph.p_flags & PF_R ? HW_PROT_R : 0) |
			  (ph.p_flags & PF_W ? HW_PROT_W : 0) |
			  (ph.p_flags & PF_X ? HW_PROT_X : 0);
		r->file = -1;
		uint64_t filesz = ph.p_filesz < ph.p_memsz ? ph.p_filesz
							   : ph.p_memsz;
		r->dumped = filesz;
		if (ph.p_offset >= p->size) {
			if (filesz)
				t->truncated = true;
			filesz = 0;
		} else if (filesz > p->size - ph.p_offset) {
			filesz = p->size - ph.p_offset;
			t->truncated = true;
		}
		r->data = filesz ? p->map + ph.p_offset : NULL;
		r->avail = filesz;
	}
	qsort(t->regions, n, sizeof *t->regions, region_cmp);
	/* A malformed core may overlap segments; keep the first claim.  */
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		struct hw_region r = t->regions[i];
		if (out && r.start < t->regions[out - 1].end) {
			uint64_t cut = t->regions[out - 1].end - r.start;
			if (cut >= r.end - r.start)
				continue;
			r.start += cut;
			r.data = r.avail > cut ? r.data + cut : NULL;
			r.avail = r.avail > cut ? r.avail - cut : 0;
			r.dumped = r.dumped > cut ? r.dumped - cut : 0;
		}
		t->regions[out++] = r;
	}
	t->nregions = out;
	return true;
}

static bool add_thread(struct hw_target *t, size_t *cap)
{
	if (t->nthreads == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct hw_thread *nt = realloc(t->threads, ncap * sizeof *nt);
		if (!nt)
			return false;
		t->threads = nt;
		*cap = ncap;
	}
	memset(&t->threads[t->nthreads++], 0, sizeof(struct hw_thread));
	return true;
}

static void read_prstatus(struct hw_target *t, const uint8_t *desc,
			  size_t len)
{
	const struct hw_arch *a = t->arch;
	struct hw_thread *th = &t->threads[t->nthreads - 1];
	int32_t pid;
	int16_t cursig;
	if (len < 36)
		return;
	memcpy(&cursig, desc + 12, 2);
	memcpy(&pid, desc + 32, 4);
	th->tid = pid;
	th->signo = cursig;
	size_t avail = len > a->pr_reg_off ? (len - a->pr_reg_off) / 8 : 0;
	uint64_t regs[HW_MAX_REGS];
	if (avail > HW_MAX_REGS)
		avail = HW_MAX_REGS;
	memcpy(regs, desc + a->pr_reg_off, avail * 8);
	hw_thread_set_regs(th, a, regs, avail);
}

/* NT_FILE: count, page size, count x {start, end, page offset}, names.
   desc_at: where desc is in the core.  libdwfl opens the names itself
   (dwfl_core_file_report, a module its build-id did not find): a name of
   something that is no regular file is blanked in the core, as the
   link_map's are (blank_unopenable); heapwalk keeps its copy.  */
static bool read_nt_file(struct hw_target *t, struct core_priv *p,
			 const uint8_t *desc, size_t len, uint64_t desc_at)
{
	uint64_t count, pagesz;
	if (len < 16 || t->files)
		return true;
	memcpy(&count, desc, 8);
	memcpy(&pagesz, desc + 8, 8);
	if (count > (len - 16) / 24)
		return true;
	const char *names = (const char *)desc + 16 + count * 24;
	size_t names_len = len - 16 - count * 24;
	p->strings = malloc(names_len + 1);
	t->files = calloc(count ? count : 1, sizeof *t->files);
	t->files_from = "NT_FILE";
	if (!p->strings || !t->files)
		return false;
	memcpy(p->strings, names, names_len);
	p->strings[names_len] = '\0';
	size_t pos = 0;
	for (uint64_t i = 0; i < count && pos < names_len; i++) {
		struct hw_mapped_file *f = &t->files[t->nfiles++];
		memcpy(&f->start, desc + 16 + i * 24, 8);
		memcpy(&f->end, desc + 16 + i * 24 + 8, 8);
		memcpy(&f->offset, desc + 16 + i * 24 + 16, 8);
		f->offset *= pagesz;
		f->path = p->strings + pos;
		uint64_t name_at = desc_at + 16 + count * 24 + pos;
		if (unopenable(f->path) && name_at < p->size)
			p->map[name_at] = '\0';
		pos += strlen(p->strings + pos) + 1;
	}
	return true;
}

static bool read_notes(struct hw_target *t, struct core_priv *p,
		       size_t phnum)
{
	size_t cap = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(p->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset >= p->size)
			continue;
		size_t sz = ph.p_filesz;
		if (sz > p->size - ph.p_offset)
			sz = p->size - ph.p_offset;
		Elf_Data *d = elf_getdata_rawchunk(p->elf, (int64_t)ph.p_offset,
						   sz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off))
		       > 0) {
			const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
			const char *name = (const char *)d->d_buf + name_off;
			size_t len = nh.n_descsz;
			bool core_name = nh.n_namesz == 5 &&
					 memcmp(name, "CORE", 5) == 0;
			if (nh.n_type == NT_PRSTATUS && core_name) {
				if (!add_thread(t, &cap))
					return false;
				read_prstatus(t, desc, len);
			} else if (nh.n_type == NT_PRPSINFO && core_name &&
				   !t->psinfo) {
				t->psinfo = desc;
				t->psinfo_len = len;
			} else if (nh.n_type == NT_AUXV && core_name) {
				t->auxv = desc;
				t->auxv_len = len;
			} else if (nh.n_type == NT_SIGINFO && core_name &&
				   !t->siginfo) {
				t->siginfo = desc;
				t->siginfo_len = len;
				t->siginfo_tid = t->nthreads
					? t->threads[t->nthreads - 1].tid : 0;
			} else if (nh.n_type == NT_FILE && core_name) {
				if (!read_nt_file(t, p, desc, len,
						  ph.p_offset + desc_off))
					return false;
			} else if (t->arch->tp_note &&
				   nh.n_type == t->arch->tp_note &&
				   t->nthreads > 0 && len >= 8) {
				struct hw_thread *th =
					&t->threads[t->nthreads - 1];
				memcpy(&th->tp, desc, 8);
				th->has_tp = true;
			}
		}
	}
	return true;
}

enum { BACKING_UNCHECKED, BACKING_OK, BACKING_BAD, BACKING_UNKNOWN };

/* An NT_FILE entry by its path: sorted by path and then index, the
   entries of one file lie side by side, in the core's order.  */
struct file_ref {
	const char *path;
	size_t i;
};

static int file_ref_cmp(const void *a, const void *b)
{
	const struct file_ref *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Open the file that stands for `path` (a name the core gives): the
   user's --exe for the core's executable, as given; else, as the module
   loader does, SYSROOT + path (absolute names only) and then path itself
   (a relative one from the current directory).  */
static int open_backing(const char *path, const char *exe_path,
			const char *exe, const char *sysroot)
{
	char full[PATH_MAX];
	if (exe && exe_path && strcmp(path, exe_path) == 0)
		return hw_open_regular(exe);
	if (sysroot && sysroot[0] && path[0] == '/' &&
	    snprintf(full, sizeof full, "%s%s", sysroot, path) < (int)sizeof full) {
		int fd = hw_open_regular(full);
		if (fd >= 0)
			return fd;
	}
	return hw_open_regular(path);
}

static void map_backing(struct backing_file *b, int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			       fd, 0);
		if (m != MAP_FAILED) {
			b->map = m;
			b->size = (size_t)st.st_size;
		}
	}
	close(fd);
}

/* Do the n >= 64 bytes the core holds of a file's first page equal the
   file's?  In a 64-bit ELF header the section header fields (e_shoff,
   e_shnum, e_shstrndx) are left out: they are not loaded, and `strip`
   changes only them there, so the stripped copy of the program that ran
   (what devices ship) serves its pages as well as the original.  */
static bool same_first_page(const uint8_t *core, const uint8_t *file,
			    uint64_t n)
{
	bool elf64 = memcmp(core, ELFMAG, SELFMAG) == 0 &&
		     core[EI_CLASS] == ELFCLASS64;
	if (!elf64)
		return memcmp(core, file, n) == 0;
	size_t shoff = offsetof(Elf64_Ehdr, e_shoff);
	size_t flags = offsetof(Elf64_Ehdr, e_flags);
	size_t shnum = offsetof(Elf64_Ehdr, e_shnum);
	size_t end = sizeof(Elf64_Ehdr);
	return memcmp(core, file, shoff) == 0 &&
	       memcmp(core + flags, file + flags, shnum - flags) == 0 &&
	       memcmp(core + end, file + end, n - end) == 0;
}

/* Map the file behind b if its first bytes equal what the core holds of
   the mapping at file offset 0.  A core that holds none of those bytes
   cannot tell (a cut core; gcore and the kernel leave out the first page
   of a data file such as a locale archive): the file is then neither used
   nor blamed.  `same` lists the NT_FILE entries naming b's path, in
   their order.  */
static void check_backing(struct hw_target *t, struct backing_file *b,
			  const struct file_ref *same, size_t nsame,
			  const char *exe_path, const char *exe,
			  const char *sysroot)
{
	b->state = BACKING_BAD;
	int fd = open_backing(b->path, exe_path, exe, sysroot);
	if (fd < 0)
		return;
	map_backing(b, fd);
	if (!b->map)
		return;
	for (size_t k = 0; k < nsame; k++)
		if (t->files[same[k].i].verified) {
			b->state = BACKING_OK;
			return;
		}
	/* Find the dumped header page of this file in the core.  */
	for (size_t k = 0; k < nsame; k++) {
		const struct hw_mapped_file *f = &t->files[same[k].i];
		if (f->offset != 0)
			continue;
		const uint8_t *core_bytes;
		uint64_t run = hw_readable_run(t, f->start, &core_bytes);
		uint64_t n = run < 4096 ? run : 4096;
		if (n > b->size)
			n = b->size;
		if (n == 0 || (n < 64 && t->truncated)) {
			b->state = BACKING_UNKNOWN;
			return;
		}
		if (n >= 64 && same_first_page(core_bytes, b->map, n)) {
			b->state = BACKING_OK;
			return;
		}
	}
}

/* The path the core gives its executable: the file mapped at AT_PHDR
   (its program headers), or NULL.  */
static const char *core_exe_path(const struct hw_target *t)
{
	uint64_t phdr;
	if (!hw_auxv_get(t, 3 /* AT_PHDR */, &phdr))
		return NULL;
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].start <= phdr && phdr < t->files[i].end)
			return t->files[i].path;
	return NULL;
}

struct span {
	uint64_t start, end;
};

/* An NT_FILE entry's start (+1) or end (-1).  */
struct edge {
	uint64_t at;
	int delta;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* What the NT_FILE entries cover, cut at every entry's start and end:
   sorted, disjoint spans (*n of them), none of which straddles the edge of
   an entry, so that a gap made of one belongs to one file.  NULL when out
   of memory.  */
static struct span *file_spans(const struct hw_target *t, size_t *n)
{
	size_t ne = 0;
	struct edge *e = malloc((2 * t->nfiles + 1) * sizeof *e);
	struct span *v = malloc((2 * t->nfiles + 1) * sizeof *v);
	if (!e || !v) {
		free(e);
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].start < t->files[i].end) {
			e[ne++] = (struct edge){ t->files[i].start, 1 };
			e[ne++] = (struct edge){ t->files[i].end, -1 };
		}
	qsort(e, ne, sizeof *e, edge_cmp);
	size_t out = 0;
	long depth = 0;
	for (size_t k = 0; k < ne; ) {
		uint64_t at = e[k].at;
		if (depth > 0 && out < 2 * t->nfiles + 1 &&
		    (!k || e[k - 1].at < at))
			v[out++] = (struct span){ e[k - 1].at, at };
		for (; k < ne && e[k].at == at; k++)
			depth += e[k].delta;
	}
	free(e);
	*n = out;
	return v;
}

/* gdb's gcore leaves out the file mappings it did not dump (no PT_LOAD at
   all, where the kernel writes one with p_filesz 0).  Give each uncovered
   part of an NT_FILE mapping a region with nothing dumped, so that it can
   be served from the file like the kernel's empty segments.  The gaps are
   looked for in the entries' spans (file_spans): a core may name one range
   many times, and each region is then passed once per span, not once per
   entry.  */
static bool add_file_gaps(struct hw_target *t)
{
	size_t nspans = 0;
	struct span *spans = file_spans(t, &nspans);
	if (!spans)
		return false;
	size_t extra = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t n = t->nregions;
		for (size_t i = 0; i < nspans; i++) {
			uint64_t a = spans[i].start, end = spans[i].end;
			while (a < end) {
				/* first region ending after a (regions are
				   sorted and disjoint, so their ends are
				   sorted too) */
				size_t lo = 0, hi = t->nregions;
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (t->regions[mid].end > a)
						hi = mid;
					else
						lo = mid + 1;
				}
				const struct hw_region *r =
					lo < t->nregions ? &t->regions[lo] : NULL;
				uint64_t gap_end = r && r->start < end ? r->start
								       : end;
				if (r && r->start <= a) {
					a = r->end;
					continue;
				}
				if (pass == 0)
					extra++;
				else
					t->regions[n++] = (struct hw_region){
						.start = a, .end = gap_end,
						.prot = HW_PROT_R,
						.prot_guessed = true, .file = -1 };
				a = gap_end;
			}
		}
		if (pass == 0) {
			if (!extra)
				break;
			struct hw_region *nr = realloc(t->regions,
				(t->nregions + extra) * sizeof *nr);
			if (!nr) {
				free(spans);
				return false;
			}
			t->regions = nr;
		} else {
			t->nregions = n;
		}
	}
	free(spans);
	if (extra)
		qsort(t->regions, t->nregions, sizeof *t->regions, region_cmp);
	return true;
}

/* A max-heap of file indexes, for region_owners.  */
static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t k = (*n)++;
	while (k && h[(k - 1) / 2] < v) {
		h[k] = h[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	h[k] = v;
}

static void heap_pop(size_t *h, size_t *n)
{
	size_t v = h[--*n], k = 0;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[k] = h[c];
		k = c;
	}
	if (*n)
		h[k] = v;
}

struct file_start {
	uint64_t start;
	size_t i;
};

static int file_start_cmp(const void *a, const void *b)
{
	const struct file_start *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* owner[r]: the NT_FILE entry region r belongs to, the last one (in the
   core's order) whose range holds the region's start, or SIZE_MAX: what
   setting each entry's regions in turn would leave.  One sweep over the
   regions and the entries sorted by start, with the entries begun so far
   in a heap by index, so that a core naming one range many times costs
   no more than one naming it once.  NULL when out of memory.  */
static size_t *region_owners(const struct hw_target *t)
{
	size_t nf = t->nfiles ? t->nfiles : 1;
	size_t *owner = malloc((t->nregions ? t->nregions : 1) * sizeof *owner);
	size_t *heap = malloc(nf * sizeof *heap);
	struct file_start *by_start = malloc(nf * sizeof *by_start);
	if (!owner || !heap || !by_start) {
		free(owner);
		free(heap);
		free(by_start);
		return NULL;
	}
	for (size_t i = 0; i < t->nfiles; i++)
		by_start[i] = (struct file_start){ t->files[i].start, i };
	qsort(by_start, t->nfiles, sizeof *by_start, file_start_cmp);
	size_t next = 0, nheap = 0;
	for (size_t r = 0; r < t->nregions; r++) {
		uint64_t at = t->regions[r].start;
		while (next < t->nfiles && by_start[next].start <= at)
			heap_push(heap, &nheap, by_start[next++].i);
		/* An entry ended before this region's start ends before every
		   later one's too: region starts only grow.  */
		while (nheap && t->files[heap[0]].end <= at)
			heap_pop(heap, &nheap);
		owner[r] = nheap ? heap[0] : SIZE_MAX;
	}
	free(heap);
	free(by_start);
	return owner;
}

/* A --exe whose first page is not what the core holds of its
   executable's is another program or another build: it would relabel
   the core and serve wrong bytes.  Say so (t->exe_note), forget the
   file, and have the caller check the core's own path instead.  */
static bool reject_exe(struct hw_target *t, struct backing_file *b,
		       const char *exe, const char *exe_path)
{
	if (!exe || !exe_path || b->state != BACKING_BAD || !b->map ||
	    strcmp(b->path, exe_path) != 0)
		return false;
	snprintf(t->exe_note, sizeof t->exe_note, "--exe %s: not used: it "
		 "is not the program of this core (its first page differs "
		 "from the core's copy of %s's: another program or build; "
		 "for files moved since the crash, --sysroot DIR)", exe,
		 exe_path);
	munmap((void *)b->map, b->size);
	b->map = NULL;
	b->size = 0;
	b->state = BACKING_UNCHECKED;
	return true;
}

/* The permissions of the loaded segment of an ELF file (map, size
   bytes) that holds file offset `off`, as its PT_LOAD says; 0 when the
   file is no 64-bit little-endian ELF or no segment holds it.  A
   mapping starts at a page below the segment's p_offset.  */
static uint32_t elf_prot_at(const uint8_t *map, size_t size, uint64_t off)
{
	Elf64_Ehdr eh;
	if (size < sizeof eh)
		return 0;
	memcpy(&eh, map, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
	    eh.e_phnum > (size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, map + eh.e_phoff + i * sizeof ph, sizeof ph);
		uint64_t lo = ph.p_offset & ~(uint64_t)4095;
		if (ph.p_type != PT_LOAD || off < lo ||
		    ph.p_offset + ph.p_filesz < ph.p_offset ||
		    off >= ph.p_offset + ph.p_filesz)
			continue;
		return (ph.p_flags & PF_R ? HW_PROT_R : 0) |
		       (ph.p_flags & PF_W ? HW_PROT_W : 0) |
		       (ph.p_flags & PF_X ? HW_PROT_X : 0);
	}
	return 0;
}

/* Give each region its NT_FILE entry and, where the core lacks some of
   its bytes, the file on disk that holds them.  Entries naming one path
   share one backing file (found by sorting the entries by path: a core
   may name 100,000 files), opened and checked when a region first needs
   it.  */
static bool attach_backing(struct hw_target *t, struct core_priv *p,
			   const char *exe, const char *sysroot)
{
	const char *exe_path = core_exe_path(t);
	if (!add_file_gaps(t))
		return false;
	size_t nf = t->nfiles ? t->nfiles : 1;
	struct file_ref *refs = malloc(nf * sizeof *refs);
	size_t *backing_of = malloc(nf * sizeof *backing_of);
	size_t *first_ref = malloc(nf * sizeof *first_ref);
	p->backing = calloc(nf, sizeof *p->backing);
	size_t *owner = region_owners(t);
	bool ok = refs && backing_of && first_ref && p->backing && owner;
	if (!ok)
		goto out;
	for (size_t i = 0; i < t->nfiles; i++)
		refs[i] = (struct file_ref){ t->files[i].path, i };
	qsort(refs, t->nfiles, sizeof *refs, file_ref_cmp);
	/* first_ref[b]: where backing file b's entries start in refs.  */
	for (size_t k = 0; k < t->nfiles; k++) {
		if (!k || strcmp(refs[k].path, refs[k - 1].path) != 0) {
			first_ref[p->nbacking] = k;
			p->backing[p->nbacking++].path = refs[k].path;
		}
		backing_of[refs[k].i] = p->nbacking - 1;
	}
	for (size_t r = 0; r < t->nregions; r++) {
		size_t i = owner[r];
		if (i == SIZE_MAX || i > INT32_MAX)
			continue;
		struct hw_region *reg = &t->regions[r];
		const struct hw_mapped_file *f = &t->files[i];
		reg->file = (int32_t)i;
		if (reg->avail >= reg->end - reg->start || f->absent)
			continue;
		size_t bi = backing_of[i];
		struct backing_file *b = &p->backing[bi];
		if (b->state == BACKING_UNCHECKED) {
			size_t k0 = first_ref[bi];
			size_t k1 = bi + 1 < p->nbacking ? first_ref[bi + 1]
							 : t->nfiles;
			check_backing(t, b, refs + k0, k1 - k0, exe_path, exe,
				      sysroot);
			if (reject_exe(t, b, exe, exe_path)) {
				exe = NULL;
				check_backing(t, b, refs + k0, k1 - k0,
					      exe_path, NULL, sysroot);
			}
		}
		if (b->state != BACKING_OK) {
			t->files[i].unavailable |= b->state == BACKING_BAD;
			continue;
		}
		uint64_t off = f->offset + (reg->start - f->start);
		if (off >= b->size)
			continue;
		if (reg->prot_guessed) {
			uint32_t prot = elf_prot_at(b->map, b->size, off);
			if (prot) {
				reg->prot = prot;
				reg->prot_guessed = false;
			}
		}
		reg->backing = b->map + off;
		reg->backing_len = b->size - off;
		if (reg->backing_len > reg->end - reg->start)
			reg->backing_len = reg->end - reg->start;
	}
out:
	free(refs);
	free(backing_of);
	free(first_ref);
	free(owner);
	return ok;
}

struct note_seg {
	uint64_t start, end;   /* file bytes [start, end) */
	size_t idx;            /* program header index */
};

static int note_seg_cmp(const void *a, const void *b)
{
	const struct note_seg *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Largest first; equal sizes in file order.  */
static int note_seg_size_cmp(const void *a, const void *b)
{
	const struct note_seg *x = a, *y = b;
	uint64_t lx = x->end - x->start, ly = y->end - y->start;
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return note_seg_cmp(a, b);
}

/* A real core has one PT_NOTE.  A hostile one may have 131,070 (PN_XNUM)
   that all name the same bytes: each would be read as new threads (13
   million from a 6 MiB core), and libdwfl's core reader takes time
   quadratic in the number of PT_NOTEs (5 minutes for 131,070 distinct
   one-byte ones).  So before anything reads them, every PT_NOTE that
   holds nothing, overlaps one earlier in the file, or comes after the
   first CORE_MAX_NOTE_SEGS is turned into PT_NULL in the private copy of
   the core, and the ELF handle is made anew: libelf, read_notes and
   libdwfl then see a few distinct note segments only, which bounds the
   threads by the file's size.  False when out of memory.  */
#define CORE_MAX_NOTE_SEGS 64
static bool drop_aliased_notes(struct core_priv *p, uint64_t phoff,
			       size_t phnum)
{
	size_t n = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(p->elf, (int)i, &ph) && ph.p_type == PT_NOTE)
			n++;
	}
	if (n < 2)
		return true;
	struct note_seg *v = malloc(n * sizeof *v);
	if (!v)
		return false;
	n = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(p->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		uint64_t start = ph.p_offset < p->size ? ph.p_offset : p->size;
		uint64_t len = ph.p_filesz < p->size - start ? ph.p_filesz
							     : p->size - start;
		v[n++] = (struct note_seg){ start, start + len, i };
	}
	qsort(v, n, sizeof *v, note_seg_cmp);
	size_t dropped = 0, kept = 0;
	uint64_t kept_end = 0;
	/* p_type is the first word of an Elf64_Phdr.  */
	uint32_t null_type = PT_NULL;
	for (size_t k = 0; k < n; k++) {
		if (v[k].start < v[k].end && v[k].start >= kept_end) {
			kept_end = v[k].end;
			v[kept++] = v[k];
			continue;
		}
		memcpy(p->map + phoff + v[k].idx * sizeof(Elf64_Phdr),
		       &null_type, sizeof null_type);
		dropped++;
	}
	/* Of many distinct ones, the largest: a real note segment holds
	   whole notes, a decoy a few bytes.  */
	if (kept > CORE_MAX_NOTE_SEGS) {
		qsort(v, kept, sizeof *v, note_seg_size_cmp);
		for (size_t k = CORE_MAX_NOTE_SEGS; k < kept; k++)
			memcpy(p->map + phoff + v[k].idx * sizeof(Elf64_Phdr),
			       &null_type, sizeof null_type);
		dropped += kept - CORE_MAX_NOTE_SEGS;
	}
	free(v);
	if (!dropped)
		return true;
	elf_end(p->elf);
	p->elf = elf_memory((char *)p->map, p->size);
	return p->elf != NULL;
}

/* Is the file at `path` an ELF core?  libdwfl, given one as the
   executable of a core, leaks what it read of it; and it is never what
   the user meant.  */
static bool is_core_file(const char *path)
{
	int fd = hw_open_regular(path);
	if (fd < 0)
		return false;
	Elf64_Ehdr eh;
	bool core = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
		    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
		    eh.e_ident[EI_DATA] == ELFDATA2LSB && eh.e_type == ET_CORE;
	close(fd);
	return core;
}

/* Map the core open at fd (`size` bytes; fd is closed): the file
   itself, or when it is compressed (packed), what it unpacks to, which
   is mapped the same way; from there on the two are read alike.  *map
   is NULL when there is too little to map (*size says how little).  */
static enum hw_status map_core(int fd, const char *path,
			       const struct hw_compression *packed,
			       const struct hw_core_open_opts *o,
			       uint8_t **map,
			       uint64_t *size, char *err, size_t errlen)
{
	*map = NULL;
	if (packed) {
		enum hw_status st = hw_unpack(packed, fd, path, o, map, size,
					      err, errlen);
		close(fd);
		return st;
	}
	if (*size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return HW_OK;
	}
	/* Private and writable so libelf may use it in place; nothing
	   writes to it, so no page is ever copied.  */
	void *m = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (m == MAP_FAILED)
		return fail(err, errlen, HW_BAD_TARGET, "'%s': mmap: %s", path,
			    strerror(e));
	*map = m;
	return HW_OK;
}

enum hw_status hw_core_open(const char *path,
			    const struct hw_core_open_opts *o,
			    struct hw_target **out, Elf **elf_out, char *err,
			    size_t errlen)
{
	const char *exe = o->exe, *sysroot = o->sysroot;
	*out = NULL;
	*elf_out = NULL;
	if (exe && is_core_file(exe))
		return fail(err, errlen, HW_USAGE, "--exe '%s': %s", exe,
			    "a core file, not an executable (the core is "
			    "the first argument)");
	int fd = hw_open_regular(path);
	if (fd < 0)
		return fail(err, errlen, HW_BAD_TARGET, "'%s': %s", path,
			    hw_open_regular_why(path, errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, HW_BAD_TARGET, "'%s': %s", path,
			    "not a regular file");
	}
	const struct hw_compression *packed = hw_compression_at(fd);
	if (packed && !packed->decode) {
		close(fd);
		snprintf(err, errlen, "'%s': %s-compressed file; unpack it "
			 "first (%s) and give heapwalk the core inside", path,
			 packed->name, packed->unpack);
		return HW_BAD_TARGET;
	}
	uint8_t *map;
	uint64_t size = (uint64_t)st.st_size;
	enum hw_status mapped = map_core(fd, path, packed, o, &map, &size, err,
					 errlen);
	if (mapped != HW_OK)
		return mapped;
	const char *why = NULL;
	struct hw_target *t = NULL;
	struct core_priv *p = NULL;
	if (size < sizeof(Elf64_Ehdr))
		why = size ? "not an ELF file" : "empty file";
	else if (!(t = calloc(1, sizeof *t)) || !(p = calloc(1, sizeof *p)))
		why = "out of memory";
	if (why) {
		if (map)
			munmap(map, size);
		free(t);
		free(p);
		return fail(err, errlen, HW_BAD_TARGET, "'%s': %s", path, why);
	}
	t->ops = &core_ops;
	t->priv = p;
	t->path = path;
	t->packed = packed ? packed->name : NULL;
	t->unpacked = packed ? size : 0;
	p->map = map;
	p->size = (size_t)size;
	p->threads = o->threads ? o->threads : 1;
	p->elf = elf_memory((char *)p->map, p->size);
	enum hw_status st_out = HW_BAD_TARGET;
	GElf_Ehdr eh;
	size_t phnum = 0;
	if (!p->elf || elf_kind(p->elf) != ELF_K_ELF)
		why = "not an ELF file";
	else if (!gelf_getehdr(p->elf, &eh))
		why = "bad ELF header";
	else if (eh.e_type != ET_CORE)
		why = "not a core file (ELF, but not ET_CORE)";
	else if (gelf_getclass(p->elf) != ELFCLASS64)
		why = "32-bit cores are not supported";
	else if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		why = "big-endian cores are not supported";
	else if (!(t->arch = hw_arch_by_machine(eh.e_machine)))
		why = "unsupported architecture (e_machine)";
	else if (elf_getphdrnum(p->elf, &phnum) != 0 ||
		 eh.e_phoff >= p->size ||
		 phnum > (p->size - eh.e_phoff) / sizeof(Elf64_Phdr))
		why = "program headers cut off or corrupt";
	else if (!drop_aliased_notes(p, eh.e_phoff, phnum) ||
		 !load_regions(t, p, phnum) || !read_notes(t, p, phnum) ||
		 (!t->files && !hw_link_map_files(t, exe, sysroot, &p->paths,
						  &p->npaths)) ||
		 !attach_backing(t, p, exe, sysroot))
		why = "out of memory";
	else if (t->nthreads == 0)
		why = "no NT_PRSTATUS note (not a process core?)";
	if (why) {
		core_close(t);
		return fail(err, errlen, st_out, "'%s': %s", path, why);
	}
	if (t->nfiles > 0)
		t->exe = t->files[0].path;
	struct name_blanking blanking = { t, p };
	hw_link_map_names(t, blank_unopenable, &blanking);
	*elf_out = p->elf;
	*out = t;
	return HW_OK;
}
