/* modules.c - the libdwfl session: callbacks, debug directories, sysroot,
 * module enumeration.
 *
 * libdwfl (elfutils 0.188) does the reporting and the finding; what is
 * added here:
 *  - Dwfl_Callbacks.debuginfo_path is built per session: the caller's
 *    debug dirs first, then SYSROOT/usr/lib/debug, /usr/lib/debug, then
 *    the main file's own directory and its .debug subdirectory.
 *  - find_elf: with a sysroot, SYSROOT + the module's file name is tried
 *    first and accepted only when its build-id matches the one the core
 *    recorded; then dwfl_build_id_find_elf (which also handles the
 *    executable given to dwfl_core_file_report, .build-id links under the
 *    debug dirs and debuginfod).
 *  - find_debuginfo: dwfl_standard_find_debuginfo, or nothing at all when
 *    separate debug info is disabled.
 *
 * The callbacks reach the session through each module's userdata slot,
 * which is set right after dwfl_report_end (libdwfl 0.188 does not call
 * find_elf or find_debuginfo while a core is being reported).
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath, strdup, O_CLOEXEC, PATH_MAX */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "../target/target.h"
#include "sym-private.h"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (err == NULL || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Growable string, for the debuginfo path.  */
struct strbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void sb_add(struct strbuf *b, const char *str, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 128;
		while (cap < b->len + n + 1) {
			if (cap > SIZE_MAX / 2) {
				b->failed = true;
				return;
			}
			cap *= 2;
		}
		char *np = realloc(b->p, cap);
		if (np == NULL) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, str, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_adds(struct strbuf *b, const char *str)
{
	sb_add(b, str, strlen(str));
}

/* Absolute form of a directory name given by the user; relative entries
   mean something else to libdwfl (a subdirectory of the main file's
   directory).  Returns a malloc'ed string or NULL.  */
static char *absolute_dir(const char *dir)
{
	if (dir[0] == '/')
		return strdup(dir);
	char *real = realpath(dir, NULL);
	if (real != NULL)
		return real;
	/* Does not exist (yet): anchor it at the working directory. */
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof cwd) == NULL)
		return NULL;
	size_t n = strlen(cwd) + 1 + strlen(dir) + 1;
	char *r = malloc(n);
	if (r != NULL)
		snprintf(r, n, "%s/%s", cwd, dir);
	return r;
}

/* "/extra1:/extra2:SYSROOT/usr/lib/debug:/usr/lib/debug::.debug".
   No leading '+' or '-': libdwfl then checks .gnu_debuglink CRCs.  */
static char *build_debuginfo_path(const struct hw_syms_opts *opts,
				  const char *sysroot, char *err, size_t errlen)
{
	struct strbuf b = { 0 };
	for (size_t i = 0; opts->debug_dirs != NULL && i < opts->n_debug_dirs;
	     i++) {
		const char *d = opts->debug_dirs[i];
		if (d == NULL || d[0] == '\0')
			continue;
		if (strchr(d, ':') != NULL) {
			set_err(err, errlen,
				"debug directory name contains ':': %s", d);
			free(b.p);
			return NULL;
		}
		char *abs = absolute_dir(d);
		if (abs == NULL) {
			set_err(err, errlen, "cannot use debug directory %s",
				d);
			free(b.p);
			return NULL;
		}
		sb_adds(&b, abs);
		sb_adds(&b, ":");
		free(abs);
	}
	if (sysroot != NULL) {
		sb_adds(&b, sysroot);
		sb_adds(&b, "/usr/lib/debug:");
	}
	sb_adds(&b, "/usr/lib/debug::.debug");
	if (b.failed) {
		set_err(err, errlen, "out of memory");
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* Does the ELF file carry the build-id libdwfl knows for mod (from the
   core's memory)?  True too when nothing is known to compare with.  */
static bool build_id_agrees(Dwfl_Module *mod, Elf *elf)
{
	const unsigned char *want = NULL;
	GElf_Addr vaddr;
	int wlen = dwfl_module_build_id(mod, &want, &vaddr);
	if (wlen <= 0)
		return true;
	const void *have = NULL;
	ssize_t hlen = dwelf_elf_gnu_build_id(elf, &have);
	return hlen == wlen && memcmp(have, want, (size_t)wlen) == 0;
}

/* The file `name` means inside the sysroot: like a chroot, absolute
   symbolic links met on the way (Debian's /lib64/ld-linux-x86-64.so.2 is
   one) are resolved from the sysroot, and ".." stops at it.  Returns a
   malloc'ed path, or NULL when the file is not there.  */
static char *sysroot_path(const char *sysroot, const char *name)
{
	char *rest = strdup(name); /* what is still to be resolved */
	struct strbuf out = { 0 };
	size_t root_len = strlen(sysroot);
	sb_add(&out, sysroot, root_len);
	int hops = 0;
	char *p = rest;
	while (rest != NULL && !out.failed) {
		while (*p == '/')
			p++;
		if (*p == '\0') {
			free(rest);
			return out.p;
		}
		char *end = strchr(p, '/');
		size_t clen = end != NULL ? (size_t)(end - p) : strlen(p);
		if (clen == 1 && p[0] == '.') {
			p += clen;
			continue;
		}
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(out.p, '/');
			if (slash != NULL && (size_t)(slash - out.p) >= root_len)
				out.len = (size_t)(slash - out.p);
			out.p[out.len] = '\0';
			p += clen;
			continue;
		}
		size_t before = out.len;
		sb_add(&out, "/", 1);
		sb_add(&out, p, clen);
		p += clen;
		if (out.failed)
			break;
		struct stat st;
		if (lstat(out.p, &st) != 0)
			break;
		if (!S_ISLNK(st.st_mode))
			continue;
		char target[PATH_MAX];
		ssize_t tl = readlink(out.p, target, sizeof target - 1);
		if (tl <= 0 || ++hops > 40)
			break;
		target[tl] = '\0';
		/* New rest: the link's target, then what was left.  */
		size_t n = (size_t)tl + 1 + strlen(p) + 1;
		char *nrest = malloc(n);
		if (nrest == NULL)
			break;
		snprintf(nrest, n, "%s/%s", target, p);
		free(rest);
		rest = p = nrest;
		out.len = target[0] == '/' ? root_len : before;
		out.p[out.len] = '\0';
	}
	free(rest);
	free(out.p);
	return NULL;
}

/* SYSROOT + the module's absolute file name, if that file is there and is
   the right one.  */
static int sysroot_find_elf(const struct hw_syms *s, Dwfl_Module *mod,
			    const char *modname, char **file_name, Elf **elfp)
{
	const char *name = NULL;
	if (*file_name != NULL && (*file_name)[0] == '/')
		name = *file_name;
	else if (modname != NULL && modname[0] == '/')
		name = modname;
	if (name == NULL)
		return -1;
	/* The executable the user named is taken as it is. */
	if (s->exe != NULL && strcmp(name, s->exe) == 0)
		return -1;

	char *path = sysroot_path(s->sysroot, name);
	if (path == NULL)
		return -1;

	int fd = hw_open_regular(path);
	if (fd < 0) {
		free(path);
		return -1;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF ||
	    !build_id_agrees(mod, elf)) {
		elf_end(elf);
		close(fd);
		free(path);
		return -1;
	}
	free(*file_name);
	*file_name = path;
	*elfp = elf;
	return fd;
}

static int hw_find_elf(Dwfl_Module *mod, void **userdata,
		       const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	const struct hw_syms *s = userdata != NULL ? *userdata : NULL;
	*elfp = NULL;
	if (s != NULL && s->sysroot != NULL) {
		int fd = sysroot_find_elf(s, mod, modname, file_name, elfp);
		if (fd >= 0)
			return fd;
	}
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base,
					file_name, elfp);
	if (fd < 0 && *elfp == NULL && s != NULL && s->sysroot != NULL &&
	    *file_name != NULL && (s->exe == NULL ||
				   strcmp(*file_name, s->exe) != 0)) {
		/* libdwfl would now open the primed name, a host path, and
		   check it against the build-id only when it knows one.
		   Without one, a host file is no better than nothing.  */
		const unsigned char *id;
		GElf_Addr vaddr;
		if (dwfl_module_build_id(mod, &id, &vaddr) <= 0) {
			free(*file_name);
			*file_name = NULL;
		}
	}
	/* A name left primed is opened by libdwfl itself, with a plain
	   open(): a FIFO there (a core's link_map or NT_FILE names any
	   path) would block it for good.  Only a regular file is left.  */
	struct stat st;
	if (fd < 0 && *elfp == NULL && *file_name != NULL &&
	    (stat(*file_name, &st) != 0 || !S_ISREG(st.st_mode))) {
		free(*file_name);
		*file_name = NULL;
	}
	return fd;
}

static int hw_no_debuginfo(Dwfl_Module *mod, void **userdata,
			   const char *modname, GElf_Addr base,
			   const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base;
	(void)file_name, (void)debuglink_file, (void)debuglink_crc;
	(void)debuginfo_file_name;
	errno = 0;
	return -1;
}

struct collect {
	struct hw_syms *s;
	size_t cap;
	bool failed;
};

static int collect_module(Dwfl_Module *mod, void **userdata,
			  const char *name, Dwarf_Addr start, void *arg)
{
	(void)name, (void)start;
	struct collect *c = arg;
	struct hw_syms *s = c->s;
	*userdata = s;
	if (s->nmods >= HW_SYM_MAX_MODULES)
		return DWARF_CB_ABORT;
	if (s->nmods == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		Dwfl_Module **nm = realloc(s->mods, cap * sizeof *nm);
		if (nm == NULL) {
			c->failed = true;
			return DWARF_CB_ABORT;
		}
		s->mods = nm;
		c->cap = cap;
	}
	s->mods[s->nmods++] = mod;
	return DWARF_CB_OK;
}

/* Files the core's notes left out (see hw_syms_opts.files), reported as
   ELF files loaded at their mapping: found under the sysroot first.  */
static void report_files(struct hw_syms *s, const struct hw_syms_opts *opts)
{
	for (size_t i = 0; i < opts->nfiles; i++) {
		const struct hw_syms_file *f = &opts->files[i];
		if (!f->path || f->path[0] != '/' ||
		    dwfl_addrmodule(s->dwfl, f->base) != NULL)
			continue;
		char *path = s->sysroot ? sysroot_path(s->sysroot, f->path) : NULL;
		const char *use = path ? path : f->path;
		/* libdwfl opens it with a plain open(): a regular file
		   only, or a FIFO named there would block it.  */
		struct stat st;
		if (stat(use, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(use, R_OK) == 0)
			(void)dwfl_report_elf(s->dwfl, f->path, use, -1, f->base,
					      false);
		free(path);
	}
}

/* Modules come from libdwfl sorted by address (dwfl_report_end sorts
   them); keep that order, it is stable for a given core.  */
static int cmp_module_low(const void *a, const void *b)
{
	Dwarf_Addr la = 0, lb = 0;
	dwfl_module_info(*(Dwfl_Module *const *)a, NULL, &la, NULL, NULL,
			 NULL, NULL, NULL);
	dwfl_module_info(*(Dwfl_Module *const *)b, NULL, &lb, NULL, NULL,
			 NULL, NULL, NULL);
	return la < lb ? -1 : la > lb;
}

/* The hw_syms both kinds of target start from: options taken, libdwfl
   set up with our callbacks, nothing reported yet.  */
static struct hw_syms *syms_begin(const struct hw_syms_opts *opts,
				  Dwfl_Callbacks *proto, char *err,
				  size_t errlen)
{
	static const struct hw_syms_opts no_opts;
	if (opts == NULL)
		opts = &no_opts;
	struct hw_syms *s = calloc(1, sizeof *s);
	if (s == NULL) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	s->no_debuginfo = opts->no_debuginfo;
	if (opts->layout_cache != NULL && opts->layout_cache[0] != '\0' &&
	    !opts->no_debuginfo &&
	    (s->layout_cache = strdup(opts->layout_cache)) == NULL)
		goto nomem;

	if (opts->sysroot != NULL && opts->sysroot[0] != '\0') {
		s->sysroot = absolute_dir(opts->sysroot);
		if (s->sysroot == NULL)
			goto nomem;
		size_t n = strlen(s->sysroot);
		while (n > 1 && s->sysroot[n - 1] == '/')
			s->sysroot[--n] = '\0';
		if (strcmp(s->sysroot, "/") == 0) {
			free(s->sysroot); /* "/" is no sysroot at all */
			s->sysroot = NULL;
		}
	}
	if (opts->exe != NULL) {
		s->exe = strdup(opts->exe);
		if (s->exe == NULL)
			goto nomem;
	}
	s->debuginfo_path = build_debuginfo_path(opts, s->sysroot, err,
						 errlen);
	if (s->debuginfo_path == NULL)
		goto fail;

	s->cb = *proto;
	s->cb.find_debuginfo = s->no_debuginfo ? hw_no_debuginfo
					       : dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = &s->debuginfo_path;

	s->dwfl = dwfl_begin(&s->cb);
	if (s->dwfl == NULL) {
		set_err(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		goto fail;
	}
	dwfl_report_begin(s->dwfl);
	return s;

nomem:
	set_err(err, errlen, "out of memory");
fail:
	hw_syms_close(s);
	return NULL;
}

/* Reporting done: take libdwfl's module list, in address order.  */
static struct hw_syms *syms_end(struct hw_syms *s, char *err, size_t errlen)
{
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
		set_err(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		hw_syms_close(s);
		return NULL;
	}
	struct collect c = { .s = s };
	(void)dwfl_getmodules(s->dwfl, collect_module, &c, 0);
	if (c.failed) {
		set_err(err, errlen, "out of memory");
		hw_syms_close(s);
		return NULL;
	}
	if (s->nmods > 1)
		qsort(s->mods, s->nmods, sizeof *s->mods, cmp_module_low);
	return s;
}

struct hw_syms *hw_syms_open_core(Elf *core, const struct hw_syms_opts *opts,
				  char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		err[0] = '\0';

	GElf_Ehdr ehdr;
	if (core == NULL || elf_kind(core) != ELF_K_ELF ||
	    gelf_getehdr(core, &ehdr) == NULL || ehdr.e_type != ET_CORE) {
		set_err(err, errlen, "not an ELF core file");
		return NULL;
	}
	Dwfl_Callbacks cb = {
		.find_elf = hw_find_elf,
		.section_address = dwfl_offline_section_address,
	};
	struct hw_syms *s = syms_begin(opts, &cb, err, errlen);
	if (s == NULL)
		return NULL;
	s->core = core;
	int n = dwfl_core_file_report(s->dwfl, core, s->exe);
	if (n < 0) {
		set_err(err, errlen, "libdwfl cannot read the core: %s",
			dwfl_errmsg(-1));
		hw_syms_close(s);
		return NULL;
	}
	if (opts != NULL)
		report_files(s, opts);
	return syms_end(s, err, errlen);
}

/* The GNU build-id of the ELF file at path into id (at most 64 bytes);
   its length, or 0 when it has none or cannot be read.  */
static size_t file_build_id(const char *path, unsigned char *id)
{
	int fd = hw_open_regular(path);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits = NULL;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	size_t len = n > 0 && n <= 64 ? (size_t)n : 0;
	if (len)
		memcpy(id, bits, len);
	elf_end(elf);
	close(fd);
	return len;
}

/* --exe with a live process: the user's copy (an unstripped build of
   the stripped binary that runs) is used for the executable's module
   only when its build-id is the running file's; otherwise
   s->exe_note says why it was not.  */
static void check_pid_exe(struct hw_syms *s, int pid)
{
	char link[64], target[PATH_MAX];
	unsigned char want[64], have[64];
	snprintf(link, sizeof link, "/proc/%d/exe", pid);
	ssize_t n = readlink(link, target, sizeof target - 1);
	if (n <= 0) {
		snprintf(s->exe_note, sizeof s->exe_note, "--exe %s: not used "
			 "(the process's own executable cannot be read to "
			 "compare build-ids)", s->exe);
		return;
	}
	target[n] = '\0';
	size_t wlen = file_build_id(link, want);
	size_t hlen = file_build_id(s->exe, have);
	if (!wlen || !hlen)
		snprintf(s->exe_note, sizeof s->exe_note, "--exe %s: not used "
			 "(%s has no build-id to compare)", s->exe,
			 !hlen ? "it" : "the running executable");
	else if (wlen != hlen || memcmp(want, have, wlen) != 0)
		snprintf(s->exe_note, sizeof s->exe_note, "--exe %s: not used: "
			 "its build-id is not that of the running %s (another "
			 "build)", s->exe, target);
	else
		s->proc_exe = strdup(target);
}

/* path opened as an ELF file for libdwfl's find_elf: its fd, with
   *file_name and *elfp set; -1 (nothing changed) when it cannot be.  */
static int hand_over(const char *path, char **file_name, Elf **elfp)
{
	int fd = hw_open_regular(path);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	char *name = elf ? strdup(path) : NULL;
	if (name == NULL) {
		elf_end(elf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	free(*file_name);
	*file_name = name;
	*elfp = elf;
	return fd;
}

/* libdwfl's /proc reader, but the executable's module from --exe.  */
static int pid_find_elf(Dwfl_Module *mod, void **userdata,
			const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	struct hw_syms *s = userdata != NULL ? *userdata : NULL;
	if (s != NULL && s->proc_exe != NULL && modname != NULL &&
	    strcmp(modname, s->proc_exe) == 0) {
		int fd = hand_over(s->exe, file_name, elfp);
		if (fd >= 0)
			return fd;
	}
	/* /proc/PID/maps writes a newline in a path as "\012", and libdwfl
	   takes the name as it reads it: the file is then never found.  */
	char real[PATH_MAX];
	if (modname != NULL && strstr(modname, "\\012") != NULL &&
	    strlen(modname) < sizeof real) {
		size_t n = 0;
		for (const char *c = modname; *c; c++)
			if (!strncmp(c, "\\012", 4)) {
				real[n++] = '\n';
				c += 3;
			} else {
				real[n++] = *c;
			}
		real[n] = '\0';
		int fd = hand_over(real, file_name, elfp);
		if (fd >= 0)
			return fd;
	}
	return dwfl_linux_proc_find_elf(mod, userdata, modname, base,
					file_name, elfp);
}

const char *hw_syms_exe_note(const struct hw_syms *s)
{
	return s != NULL && s->exe_note[0] ? s->exe_note : NULL;
}

struct hw_syms *hw_syms_open_pid(int pid, const struct hw_syms_opts *opts,
				 char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	/* libdwfl reads /proc/PID/maps itself and opens the files the
	   process maps (from /proc/PID/map_files or memory when a file was
	   deleted or replaced since).  */
	Dwfl_Callbacks cb = {
		.find_elf = pid_find_elf,
		.section_address = dwfl_offline_section_address,
	};
	struct hw_syms *s = syms_begin(opts, &cb, err, errlen);
	if (s == NULL)
		return NULL;
	if (s->exe != NULL)
		check_pid_exe(s, pid);
	int rc = dwfl_linux_proc_report(s->dwfl, pid);
	if (rc != 0) {
		set_err(err, errlen, "libdwfl cannot read pid %d's modules: %s",
			pid, rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
		hw_syms_close(s);
		return NULL;
	}
	return syms_end(s, err, errlen);
}

struct hw_syms *hw_syms_open_files(const struct hw_syms_opts *opts,
				   char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	Dwfl_Callbacks cb = {
		.find_elf = hw_find_elf,
		.section_address = dwfl_offline_section_address,
	};
	struct hw_syms *s = syms_begin(opts, &cb, err, errlen);
	if (s == NULL)
		return NULL;
	report_files(s, opts);
	return syms_end(s, err, errlen);
}

void hw_syms_close(struct hw_syms *s)
{
	if (s == NULL)
		return;
	dwfl_end(s->dwfl);
	hw_strpool_free(s->strings);
	hw_srccache_free(s);
	free(s->mods);
	free(s->dwarf_was_read);
	hw_layout_cache_free(s);
	free(s->layout_cache);
	free(s->debuginfo_path);
	free(s->sysroot);
	free(s->exe);
	free(s->proc_exe);
	free(s);
}

size_t hw_syms_mod_index(struct hw_syms *s, Dwfl_Module *mod)
{
	size_t i = s->mod_last;
	if (i < s->nmods && s->mods[i] == mod)
		return i;
	for (i = 0; i < s->nmods && s->mods[i] != mod; i++)
		;
	if (i < s->nmods)
		s->mod_last = i;
	return i;
}

void hw_syms_dwarf_read(struct hw_syms *s, Dwfl_Module *mod)
{
	if (!s->dwarf_was_read && s->nmods &&
	    !(s->dwarf_was_read = calloc(s->nmods, sizeof *s->dwarf_was_read)))
		return;
	size_t i = hw_syms_mod_index(s, mod);
	if (i < s->nmods && !s->dwarf_was_read[i]) {
		s->dwarf_was_read[i] = true;
		s->ndwarf_read++;
	}
}

size_t hw_syms_dwarf_modules(const struct hw_syms *s)
{
	return s != NULL ? s->ndwarf_read : 0;
}

size_t hw_syms_nmodules(const struct hw_syms *s)
{
	return s != NULL ? s->nmods : 0;
}

/* Is the file at path the one `elf` was read from, as far as build-ids
   tell?  */
static bool same_file_by_build_id(const char *path, Elf *elf)
{
	const void *id = NULL;
	ssize_t idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen <= 0)
		return false;
	int fd = hw_open_regular(path);
	if (fd < 0)
		return false;
	bool same = false;
	Elf *other = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (other != NULL && elf_kind(other) == ELF_K_ELF) {
		const void *oid = NULL;
		ssize_t olen = dwelf_elf_gnu_build_id(other, &oid);
		same = olen == idlen && memcmp(oid, id, (size_t)idlen) == 0;
	}
	elf_end(other);
	close(fd);
	return same;
}

/* Fill m for mod; this finds the module's main file, not its DWARF
   (hw_syms_module_dwarf): reading a module's DWARF costs libdw the
   inflating of every compressed debug section at once (libc's: ~45 ms,
   a sixth of a summary of a 1.6 GiB core), and most callers only want
   the module at an address.  */
static void fill_module(Dwfl_Module *mod, struct hw_module *m)
{
	memset(m, 0, sizeof *m);
	m->handle = mod;

	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (elf != NULL)
		m->bias = bias;

	Dwarf_Addr low = 0, high = 0;
	const char *mainfile = NULL, *debugfile = NULL;
	m->name = dwfl_module_info(mod, NULL, &low, &high, NULL, NULL,
				   &mainfile, &debugfile);
	m->low = low;
	m->high = high;
	m->file = elf != NULL ? mainfile : NULL;
	/* libdwfl 0.188 installs files it opened while reporting the core
	   (by the NT_FILE name, build-id checked) without recording their
	   name; the ELF may also be an image read from the core's memory.  */
	if (elf != NULL && m->file == NULL && m->name != NULL &&
	    m->name[0] == '/' && same_file_by_build_id(m->name, elf))
		m->file = m->name;
	m->debug_file = debugfile;

	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int idlen = dwfl_module_build_id(mod, &id, &vaddr);
	if (idlen > 0 && id != NULL) {
		m->build_id = id;
		m->build_id_len = idlen;
	}
}

bool hw_syms_module(const struct hw_syms *s, size_t i, struct hw_module *m)
{
	if (s == NULL || m == NULL || i >= s->nmods)
		return false;
	fill_module(s->mods[i], m);
	return true;
}

bool hw_syms_module_dwarf(struct hw_module *m)
{
	if (m == NULL || m->handle == NULL)
		return false;
	Dwfl_Module *mod = m->handle;
	Dwarf_Addr dwbias;
	m->has_dwarf = dwfl_module_getdwarf(mod, &dwbias) != NULL;
	const char *debugfile = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	m->debug_file = debugfile;
	return m->has_dwarf;
}

bool hw_syms_module_symtab(struct hw_module *m)
{
	if (m == NULL || m->handle == NULL)
		return false;
	Dwfl_Module *mod = m->handle;
	/* (Makes libdwfl look for the separate debug file's symbol table,
	   asking debuginfod last, as a symbol lookup would.)  */
	int nsym = dwfl_module_getsymtab(mod);
	const char *debugfile = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile != NULL)
		m->debug_file = debugfile;
	/* The main file's own .symtab, or more symbols than its .dynsym
	   holds (a debug file's: libdwfl 0.188 names none it had from
	   debuginfod).  */
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	uint64_t ndyn = 0;
	while (elf != NULL && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			return true;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize)
			ndyn = sh.sh_size / sh.sh_entsize;
	}
	return debugfile != NULL || (nsym > 0 && (uint64_t)nsym > ndyn);
}

/* Whether one of mod's PT_LOAD segments, at its load bias, covers addr
   (memory size: .bss included).  */
static bool segments_cover(Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t n = 0;
	if (elf == NULL || elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n && i < 4096; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_LOAD)
			continue;
		uint64_t lo = bias + ph.p_vaddr;
		if (addr >= lo && addr - lo < ph.p_memsz)
			return true;
	}
	return false;
}

/* libdwfl reports a live process's modules (dwfl_linux_proc_report)
   with the extent of their file's mappings in /proc/PID/maps, which
   leaves out the tail of .bss past the file's last page: anonymous
   memory right after it.  An address in no module's extent is the
   nearest module below's when its segments cover it.  */
Dwfl_Module *hw_syms_addrmodule(const struct hw_syms *s, uint64_t addr)
{
	if (s == NULL || s->dwfl == NULL)
		return NULL;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	if (mod != NULL)
		return mod;
	Dwfl_Module *below = NULL;
	Dwarf_Addr best = 0;
	for (size_t i = 0; i < s->nmods; i++) {
		Dwarf_Addr high = 0;
		dwfl_module_info(s->mods[i], NULL, NULL, &high, NULL, NULL,
				 NULL, NULL);
		if (high <= addr && (below == NULL || high > best)) {
			below = s->mods[i];
			best = high;
		}
	}
	return below != NULL && segments_cover(below, addr) ? below : NULL;
}

bool hw_syms_covers(const struct hw_syms *s, uint64_t addr)
{
	return s != NULL && s->dwfl != NULL &&
	       dwfl_addrmodule(s->dwfl, addr) != NULL;
}

bool hw_syms_module_at(const struct hw_syms *s, uint64_t addr,
		       struct hw_module *m)
{
	if (s == NULL || m == NULL)
		return false;
	Dwfl_Module *mod = hw_syms_addrmodule(s, addr);
	if (mod == NULL)
		return false;
	fill_module(mod, m);
	return true;
}

static const char *last_component(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash != NULL ? slash + 1 : path;
}

static bool name_matches(const char *path, const char *prefix, size_t plen)
{
	return path != NULL && strncmp(last_component(path), prefix, plen) == 0;
}

bool hw_syms_find_module(const struct hw_syms *s, const char *prefix,
			 struct hw_module *m)
{
	if (s == NULL || prefix == NULL || m == NULL)
		return false;
	size_t plen = strlen(prefix);
	/* Reported names first (cheap: nothing is opened), then the names of
	   files already found, e.g. a libc.so.6 that is a link to libc-2.x. */
	for (size_t i = 0; i < s->nmods; i++) {
		const char *name = dwfl_module_info(s->mods[i], NULL, NULL,
						    NULL, NULL, NULL, NULL,
						    NULL);
		if (name_matches(name, prefix, plen)) {
			fill_module(s->mods[i], m);
			return true;
		}
	}
	for (size_t i = 0; i < s->nmods; i++) {
		const char *mainfile = NULL;
		dwfl_module_info(s->mods[i], NULL, NULL, NULL, NULL, NULL,
				 &mainfile, NULL);
		if (mainfile == NULL)
			continue;
		char *real = realpath(mainfile, NULL);
		bool hit = name_matches(mainfile, prefix, plen) ||
			   name_matches(real, prefix, plen);
		free(real);
		if (hit) {
			fill_module(s->mods[i], m);
			return true;
		}
	}
	return false;
}
