/* linkmap.c - the mapped files of a core that has no NT_FILE note.
 *
 * qemu-user cores (and some other dumpers) carry no NT_FILE.  The dynamic
 * linker's own list says the same: the executable's DT_DEBUG entry points
 * at r_debug, whose r_map starts the chain of link_maps, each with its
 * load bias and file name.  Each file's PT_LOADs then give the mappings.
 * Such a file can only be trusted if what the core holds of it agrees:
 * its .dynamic, which these cores do dump, must equal the file's (but for
 * DT_DEBUG, which ld.so fills in).
 */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linkmap.h"

#define LM_MAX_OBJECTS 4096
#define LM_MAX_DYN 1024
#define AT_PHDR_TYPE 3
#define AT_PHNUM_TYPE 5
#define LM_MAX_PHDRS 4096
#define AT_EXECFN_TYPE 31

struct lm_files {
	struct hw_mapped_file *files;
	size_t n, cap;
	char **paths;
	size_t npaths;
};

static bool add_file(struct lm_files *f, uint64_t start, uint64_t end,
		     uint64_t offset, const char *path, bool verified,
		     bool absent)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 32;
		struct hw_mapped_file *n = realloc(f->files, cap * sizeof *n);
		if (!n)
			return false;
		f->files = n;
		f->cap = cap;
	}
	f->files[f->n++] = (struct hw_mapped_file){
		.start = start, .end = end, .offset = offset, .path = path,
		.verified = verified,
		.absent = absent,
	};
	return true;
}

static int open_in(const char *sysroot, const char *path)
{
	char full[PATH_MAX];
	if (sysroot && path[0] == '/' &&
	    snprintf(full, sizeof full, "%s%s", sysroot, path) < (int)sizeof full) {
		int fd = hw_open_regular(full);
		if (fd >= 0)
			return fd;
	}
	return hw_open_regular(path);
}

/* Open the executable `exe` names, into `found` as an absolute path
   (libdwfl reports absolute paths only).  A relative AT_EXECFN ("./prog")
   is the process's own working directory's, which is most often where
   its core was written: the core's directory first, then the current
   one, then the sysroot's top.  A relative name the user `given` is the
   current directory's first.  -1 when none has it.  */
static int open_exe(const struct hw_target *t, const char *sysroot,
		    const char *exe, bool given, char *found, size_t len)
{
	int fd = -1;
	char in_core[PATH_MAX], in_root[PATH_MAX];
	if (exe[0] == '/') {
		/* The target's own name, which the sysroot is put before
		   wherever a file is opened.  */
		fd = open_in(sysroot, exe);
		if (fd >= 0)
			snprintf(found, len, "%s", exe);
		return fd;
	}
	const char *slash = t->path ? strrchr(t->path, '/') : NULL;
	/* A name the user gave is the current directory's first.  */
	const char *tries[3] = { NULL, NULL, NULL };
	tries[given ? 0 : 1] = exe;
	if (t->path &&
	    snprintf(in_core, sizeof in_core, "%.*s/%s",
		     slash ? (int)(slash - t->path) : 1,
		     slash ? t->path : ".", exe) < (int)sizeof in_core)
		tries[given ? 1 : 0] = in_core;
	if (sysroot &&
	    snprintf(in_root, sizeof in_root, "%s/%s", sysroot, exe) <
		    (int)sizeof in_root)
		tries[2] = in_root;
	for (int i = 0; i < 3 && fd < 0; i++)
		if (tries[i] && (fd = hw_open_regular(tries[i])) >= 0)
			exe = tries[i];
	if (fd >= 0 && !realpath(exe, found))
		snprintf(found, len, "%s", exe);
	return fd;
}

/* Read a NUL-terminated string of the target into buf.  */
static bool read_string(struct hw_target *t, uint64_t addr, char *buf,
			size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (!hw_read(t, addr + i, &buf[i], 1))
			return false;
		if (!buf[i])
			return true;
	}
	buf[len - 1] = '\0';
	return false;
}

/* Does the target's .dynamic at `ld` equal the file's?  ld.so fills in
   DT_DEBUG, and relocates the address entries in place (by the load bias)
   on architectures whose .dynamic is writable.  */
static bool dynamic_matches(struct hw_target *t, Elf *elf, uint64_t ld,
			    uint64_t bias)
{
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
						   ph.p_filesz, ELF_T_BYTE);
		if (!d || d->d_size < 16)
			return false;
		size_t n = d->d_size / 16;
		for (size_t k = 0; k < n && k < LM_MAX_DYN; k++) {
			uint64_t fw[2], mw[2];
			memcpy(fw, (const uint8_t *)d->d_buf + 16 * k, 16);
			if (!hw_read(t, ld + 16 * k, mw, 16))
				return false;
			if (fw[0] != mw[0])
				return false;
			if (fw[0] == DT_NULL)
				return true;
			if (fw[0] != DT_DEBUG && fw[1] != mw[1] &&
			    fw[1] + bias != mw[1])
				return false;
		}
		return true;
	}
	return false;
}

/* A copy of `path` owned by f (and later by the target); NULL when out
   of memory.  */
static const char *keep_path(struct lm_files *f, const char *path)
{
	char *copy = strdup(path);
	char **np = copy ? realloc(f->paths, (f->npaths + 1) * sizeof *np)
			 : NULL;
	if (!np) {
		free(copy);
		return NULL;
	}
	f->paths = np;
	f->paths[f->npaths++] = copy;
	return copy;
}

/* `path` is not at hand (no sysroot, or not in it): still name the
   region that holds its .dynamic and the writable regions right after
   it (.dynamic is in the RELRO part of the data segment, made read-only
   after relocation; .data and .bss follow).  That is where an
   allocator's globals live, and the core holds all of it.  */
static bool add_absent(struct hw_target *t, struct lm_files *f,
		       const char *path, uint64_t ld)
{
	const struct hw_region *r = ld ? hw_region_of(t, ld) : NULL;
	if (!r)
		return true;
	uint64_t start = r->start, end = r->end;
	for (int n = 0; n < 2; n++) {
		const struct hw_region *next = hw_region_of(t, end);
		if (!next || next->start != end || !(next->prot & HW_PROT_W))
			break;
		end = next->end;
	}
	if (end == r->end && !(r->prot & HW_PROT_W))
		return true;
	const char *copy = keep_path(f, path);
	return copy && add_file(f, start, end, 0, copy, false, true);
}

/* Add the PT_LOAD mappings of `path`, loaded with bias `bias`.  */
static bool add_object(struct hw_target *t, struct lm_files *f,
		       const char *sysroot, const char *path, uint64_t bias,
		       uint64_t ld, uint64_t pagesz, Elf **exe_elf)
{
	int fd = open_in(sysroot, path);
	if (fd < 0)
		return add_absent(t, f, path, ld);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool ok = true;
	size_t phnum;
	if (elf && elf_kind(elf) == ELF_K_ELF &&
	    elf_getphdrnum(elf, &phnum) == 0) {
		const char *copy = keep_path(f, path);
		bool verified = copy && ld && dynamic_matches(t, elf, ld, bias);
		ok = copy != NULL;
		for (size_t i = 0; i < phnum && ok; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) ||
			    ph.p_type != PT_LOAD)
				continue;
			uint64_t start = (bias + ph.p_vaddr) & ~(pagesz - 1);
			uint64_t end = (bias + ph.p_vaddr + ph.p_memsz +
					pagesz - 1) & ~(pagesz - 1);
			ok = add_file(f, start, end, ph.p_offset & ~(pagesz - 1),
				      copy, verified, false);
		}
	}
	if (exe_elf && elf) {
		*exe_elf = elf;   /* the caller reads the exe's phdrs next */
		return ok;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

/* Is the executable in `elf`, loaded with `bias`, the one that runs?
   The way a static executable, which has no .dynamic to compare, is
   checked: its program headers at `phdr` must be the file's.  A core
   without the read-only pages (qemu-user's) cannot show them: then the
   file's writable PT_LOAD must start in a region of the target, and the
   answer is only "plausible" (*verified false).  */
static bool exe_matches(struct hw_target *t, Elf *elf, uint64_t phdr,
			uint64_t bias, bool *verified)
{
	size_t phnum;
	*verified = false;
	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    gelf_getclass(elf) != ELFCLASS64 ||
	    elf_getphdrnum(elf, &phnum) != 0 || phnum == 0 ||
	    phnum > LM_MAX_DYN)
		return false;
	bool readable = true, data_mapped = false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr fp;
		uint32_t type;
		uint64_t vaddr, memsz;
		/* Elf64_Phdr: p_type at 0, p_vaddr at 16, p_memsz at 40.  */
		uint64_t at = phdr + i * 56;
		if (!gelf_getphdr(elf, (int)i, &fp))
			return false;
		if (fp.p_type == PT_LOAD && (fp.p_flags & PF_W) &&
		    hw_region_of(t, bias + fp.p_vaddr))
			data_mapped = true;
		if (!readable || !hw_read_u32(t, at, &type) ||
		    !hw_read_u64(t, at + 16, &vaddr) ||
		    !hw_read_u64(t, at + 40, &memsz)) {
			readable = false;
			continue;
		}
		if (type != fp.p_type || vaddr != fp.p_vaddr ||
		    memsz != fp.p_memsz)
			return false;
	}
	*verified = readable;
	return readable || data_mapped;
}

bool hw_link_map_files(struct hw_target *t, const char *exe,
		       const char *sysroot, char ***paths, size_t *npaths)
{
	char exe_buf[PATH_MAX];
	uint64_t phdr = 0, pagesz = 4096, v;
	*paths = NULL;
	*npaths = 0;
	if (hw_auxv_get(t, 6 /* AT_PAGESZ */, &v) && v >= 4096 && !(v & (v - 1)))
		pagesz = v;
	bool given = exe != NULL;
	if (!given) {
		if (!hw_auxv_get(t, AT_EXECFN_TYPE, &v) ||
		    !read_string(t, v, exe_buf, sizeof exe_buf))
			return true;
		exe = exe_buf;
	}
	if (!hw_auxv_get(t, AT_PHDR_TYPE, &phdr))
		return true;
	char found[PATH_MAX];
	int fd = open_exe(t, sysroot, exe, given, found, sizeof found);
	if (fd < 0) {
		snprintf(t->files_note, sizeof t->files_note,
			 "the executable '%s' (%s) is not at hand (%s): its "
			 "symbols and mappings are unknown; %s",
			 exe, given ? "given" : "AT_EXECFN",
			 exe[0] == '/'
			 ? (sysroot ? "not under the sysroot nor at that path"
				    : "no file at that path")
			 : "looked in the core's directory, the current "
			   "directory and the sysroot",
			 t->debugger ? "load it with gdb's `file PROG` (and "
				       "`set sysroot DIR`)"
				     : "give --exe FILE");
		return true;
	}
	exe = found;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t phnum;
	uint64_t bias = 0, dyn = 0, interp_at = 0;
	char interp[PATH_MAX] = "";
	bool have_bias = false;
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph))
				continue;
			if (ph.p_type == PT_PHDR) {
				bias = phdr - ph.p_vaddr;
				have_bias = true;
			} else if (ph.p_type == PT_DYNAMIC) {
				dyn = ph.p_vaddr;
			} else if (ph.p_type == PT_INTERP && ph.p_filesz &&
				   ph.p_filesz < sizeof interp) {
				/* ld.so's l_name points at this string in the
				   executable's read-only pages, which a qemu-user
				   core does not hold.  */
				Elf_Data *d = elf_getdata_rawchunk(
					elf, (int64_t)ph.p_offset,
					ph.p_filesz, ELF_T_BYTE);
				if (d && d->d_size == ph.p_filesz) {
					memcpy(interp, d->d_buf, d->d_size);
					interp[d->d_size] = '\0';
					interp_at = ph.p_vaddr;
				}
			}
		}
		if (!have_bias) {
			GElf_Ehdr eh;
			/* no PT_PHDR: the headers sit in the first PT_LOAD */
			for (size_t i = 0; i < phnum && gelf_getehdr(elf, &eh); i++) {
				GElf_Phdr ph;
				if (gelf_getphdr(elf, (int)i, &ph) &&
				    ph.p_type == PT_LOAD && ph.p_offset == 0) {
					bias = phdr - (ph.p_vaddr + eh.e_phoff);
					have_bias = true;
					break;
				}
			}
		}
	}
	/* A static program (no .dynamic), or one whose r_debug is not set
	   yet: the executable alone, if the target's program headers at
	   AT_PHDR are the file's.  */
	bool alone_verified = false;
	bool alone_ok = have_bias &&
			exe_matches(t, elf, phdr, bias, &alone_verified);
	if (elf)
		elf_end(elf);
	close(fd);
	if (!have_bias)
		return true;
	/* DT_DEBUG in the executable's .dynamic gives r_debug.  */
	uint64_t r_debug = 0;
	for (unsigned k = 0; dyn && k < LM_MAX_DYN; k++) {
		uint64_t w[2];
		if (!hw_read(t, bias + dyn + 16 * k, w, 16) || w[0] == DT_NULL)
			break;
		if (w[0] == DT_DEBUG)
			r_debug = w[1];
	}
	uint64_t lm = 0;
	bool have_lm = r_debug && hw_read_u64(t, r_debug + 8, &lm);
	if (!have_lm && !alone_ok)
		return true;
	struct lm_files f = { 0 };
	bool ok = add_object(t, &f, sysroot, exe, bias, dyn ? bias + dyn : 0,
			     pagesz, NULL);
	if (ok && !dyn)
		for (size_t i = 0; i < f.n; i++)
			f.files[i].verified = alone_verified;
	for (unsigned n = 0; lm && n < LM_MAX_OBJECTS && ok; n++) {
		uint64_t w[4];
		char name[PATH_MAX];
		if (!hw_read(t, lm, w, sizeof w))
			break;
		/* l_addr, l_name, l_ld, l_next; the executable's name is "" */
		bool named = w[1] && read_string(t, w[1], name, sizeof name);
		if (!named && w[1] && interp[0] && interp_at &&
		    w[1] == bias + interp_at) {
			snprintf(name, sizeof name, "%s", interp);
			named = true;
		}
		if (named && name[0])
			ok = add_object(t, &f, sysroot, name, w[0], w[2], pagesz,
					NULL);
		lm = w[3];
	}
	t->files = f.files;
	t->nfiles = f.n;
	t->files_from = !f.n ? NULL : have_lm ? "link_map" : "executable";
	*paths = f.paths;
	*npaths = f.npaths;
	return ok;
}

void hw_link_map_names(struct hw_target *t,
		       void (*visit)(void *arg, uint64_t addr,
				     const char *name),
		       void *arg)
{
	uint64_t phdr, phnum;
	if (!hw_auxv_get(t, AT_PHDR_TYPE, &phdr) ||
	    !hw_auxv_get(t, AT_PHNUM_TYPE, &phnum) || phnum > LM_MAX_PHDRS)
		return;
	uint64_t bias = 0, dyn = 0;
	bool have_bias = false;
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;
		if (!hw_read(t, phdr + i * sizeof ph, &ph, sizeof ph))
			return;
		if (ph.p_type == PT_PHDR) {
			bias = phdr - ph.p_vaddr;
			have_bias = true;
		} else if (ph.p_type == PT_DYNAMIC) {
			dyn = ph.p_vaddr;
		}
	}
	if (!have_bias || !dyn)
		return;
	uint64_t r_debug = 0, lm = 0;
	for (unsigned k = 0; k < LM_MAX_DYN; k++) {
		uint64_t w[2];
		if (!hw_read(t, bias + dyn + 16 * k, w, 16) || w[0] == DT_NULL)
			break;
		if (w[0] == DT_DEBUG)
			r_debug = w[1];
	}
	if (!r_debug || !hw_read_u64(t, r_debug + 8, &lm))
		return;
	/* (A chain that loops ends at the count.)  */
	for (unsigned n = 0; lm && n < LM_MAX_OBJECTS; n++) {
		uint64_t w[4];
		char name[PATH_MAX];
		if (!hw_read(t, lm, w, sizeof w))
			break;
		/* l_addr, l_name, l_ld, l_next */
		if (w[1] && read_string(t, w[1], name, sizeof name) && name[0])
			visit(arg, w[1], name);
		lm = w[3];
	}
}
