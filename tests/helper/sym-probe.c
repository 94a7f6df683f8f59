/* sym-probe - print what libheapwalk/sym finds in a core file.
 *
 * sym-probe [--exe F] [--sysroot D] [--debug-dir D]... [--no-debuginfo]
 *           [--module PREFIX] [--near0 | --near-sym SYM] [--time]
 *           [--layout TAG:MEMBER,MEMBER...]... CORE [SYMBOL...]
 *
 * Without --layout, the layouts of glibc malloc's types are printed.
 *
 * Layouts are asked with near_addr = the address of SYM (one of the
 * symbols looked up; default main_arena), or 0 with --near0.
 *
 * Prints one line per module, then for the module matching PREFIX
 * (default "libc.so") one line per symbol and one per struct layout:
 *   module NAME low=0x.. high=0x.. bias=0x.. file=F debug=D build_id=H
 *          dwarf=yes   (one line)
 *   found libc.so NAME
 *   sym main_arena 0x7f.. size=2200
 *   sym tcache tls+0x48 size=8
 *   nosym main_arena
 *   layout malloc_state top=96 bins=112 ... sizeof=2200
 *   nolayout malloc_state
 * Absent members print as NAME=-1.  With --time, timings go to stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libelf.h>

#include "sym/sym.h"

struct layout_req {
	const char *tag;
	const char *members[24];
};

static const struct layout_req layouts[] = {
	{ "malloc_state",
	  { "mutex", "flags", "have_fastchunks", "fastbinsY", "top",
	    "last_remainder", "bins", "binmap", "next", "next_free",
	    "attached_threads", "system_mem", "max_system_mem", NULL } },
	{ "malloc_par",
	  { "trim_threshold", "top_pad", "mmap_threshold", "arena_test",
	    "arena_max", "thp_pagesize", "hp_pagesize", "hp_flags", "n_mmaps",
	    "n_mmaps_max", "max_n_mmaps", "no_dyn_threshold", "mmapped_mem",
	    "max_mmapped_mem", "sbrk_base", "tcache_bins",
	    "tcache_max_bytes", "tcache_count", "tcache_unsorted_limit",
	    NULL } },
	{ "malloc_chunk",
	  { "mchunk_prev_size", "mchunk_size", "fd", "bk", "fd_nextsize",
	    "bk_nextsize", NULL } },
	{ "heap_info",
	  { "ar_ptr", "prev", "size", "mprotect_size", "pagesize", "pad",
	    NULL } },
	{ "tcache_perthread_struct", { "counts", "entries", NULL } },
	{ "tcache_entry", { "next", "key", NULL } },
};

static const char *const default_syms[] = { "main_arena", "mp_", "tcache",
					    "malloc", NULL };

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void print_module(struct hw_module *m)
{
	hw_syms_module_dwarf(m);
	printf("module %s low=0x%" PRIx64 " high=0x%" PRIx64
	       " bias=0x%" PRIx64 " file=%s debug=%s build_id=",
	       m->name ? m->name : "?", m->low, m->high, m->bias,
	       m->file ? m->file : "-", m->debug_file ? m->debug_file : "-");
	if (m->build_id_len <= 0)
		printf("-");
	for (int i = 0; i < m->build_id_len; i++)
		printf("%02x", m->build_id[i]);
	printf(" dwarf=%s\n", m->has_dwarf ? "yes" : "no");
}

/* "TAG:m1,m2,..." (modifies the argument string in place).  */
static bool parse_layout(char *arg, struct layout_req *r)
{
	memset(r, 0, sizeof *r);
	char *colon = strchr(arg, ':');
	if (colon == NULL || colon == arg)
		return false;
	*colon = '\0';
	r->tag = arg;
	size_t n = 0;
	for (char *p = colon + 1; p != NULL && *p != '\0' && n < 23;) {
		char *comma = strchr(p, ',');
		if (comma != NULL)
			*comma = '\0';
		r->members[n++] = p;
		p = comma != NULL ? comma + 1 : NULL;
	}
	r->members[n] = NULL;
	return true;
}

static int usage(void)
{
	fprintf(stderr, "usage: sym-probe [--exe F] [--sysroot D] "
			"[--debug-dir D]... [--no-debuginfo] [--module P] "
			"[--near0 | --near-sym S] [--layout TAG:M1,M2]... [--time] "
			"CORE [SYMBOL...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct hw_syms_opts opts = { 0 };
	const char *dirs[16];
	size_t ndirs = 0;
	const char *prefix = "libc.so";
	int near0 = 0, timing = 0;
	const char *near_sym = "main_arena";
	struct layout_req user[8];
	size_t nuser = 0;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--exe") == 0 && v) {
			opts.exe = v;
			i++;
		} else if (strcmp(a, "--sysroot") == 0 && v) {
			opts.sysroot = v;
			i++;
		} else if (strcmp(a, "--debug-dir") == 0 && v && ndirs < 16) {
			dirs[ndirs++] = v;
			i++;
		} else if (strcmp(a, "--module") == 0 && v) {
			prefix = v;
			i++;
		} else if (strcmp(a, "--no-debuginfo") == 0) {
			opts.no_debuginfo = true;
		} else if (strcmp(a, "--near0") == 0) {
			near0 = 1;
		} else if (strcmp(a, "--layout") == 0 && v && nuser < 8) {
			if (!parse_layout(argv[i + 1], &user[nuser++]))
				return usage();
			i++;
		} else if (strcmp(a, "--near-sym") == 0 && v) {
			near_sym = v;
			i++;
		} else if (strcmp(a, "--time") == 0) {
			timing = 1;
		} else {
			return usage();
		}
	}
	if (i >= argc)
		return usage();
	opts.debug_dirs = dirs;
	opts.n_debug_dirs = ndirs;
	const char *core_path = argv[i++];

	elf_version(EV_CURRENT);
	int fd = open(core_path, O_RDONLY);
	if (fd < 0) {
		perror(core_path);
		return 3;
	}
	Elf *core = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (core == NULL) {
		fprintf(stderr, "sym-probe: %s: %s\n", core_path,
			elf_errmsg(-1));
		close(fd);
		return 3;
	}

	double t0 = now_ms();
	char err[256];
	struct hw_syms *s = hw_syms_open_core(core, &opts, err, sizeof err);
	if (s == NULL) {
		fprintf(stderr, "sym-probe: %s\n", err);
		elf_end(core);
		close(fd);
		return 3;
	}
	double t1 = now_ms();

	size_t n = hw_syms_nmodules(s);
	printf("modules %zu\n", n);
	for (size_t k = 0; k < n; k++) {
		struct hw_module m;
		if (hw_syms_module(s, k, &m))
			print_module(&m);
	}
	double t2 = now_ms();

	struct hw_syms *s2 = s;
	int rc = 0;
	struct hw_module lm;
	/* A fresh session, so the timing covers finding libc's files. */
	double t3 = 0, t4 = 0, t5 = 0;
	hw_syms_close(s);
	s2 = hw_syms_open_core(core, &opts, err, sizeof err);
	if (s2 == NULL) {
		fprintf(stderr, "sym-probe: %s\n", err);
		rc = 3;
		goto out;
	}
	t3 = now_ms();
	if (!hw_syms_find_module(s2, prefix, &lm)) {
		printf("nomodule %s\n", prefix);
		goto out;
	}
	t4 = now_ms();
	printf("found %s %s\n", prefix, lm.name);

	uint64_t near = 0;
	const char *const *syms = i < argc ? (const char *const *)&argv[i]
					    : default_syms;
	for (size_t k = 0; syms[k] != NULL; k++) {
		uint64_t addr = 0, size = 0;
		bool tls = false;
		if (!hw_syms_lookup(s2, &lm, syms[k], &addr, &size, &tls)) {
			printf("nosym %s\n", syms[k]);
			continue;
		}
		if (tls)
			printf("sym %s tls+0x%" PRIx64 " size=%" PRIu64 "\n",
			       syms[k], addr, size);
		else
			printf("sym %s 0x%" PRIx64 " size=%" PRIu64 "\n",
			       syms[k], addr, size);
		if (strcmp(syms[k], near_sym) == 0)
			near = addr;
	}
	if (near0)
		near = 0;
	double t5a = now_ms();
	const struct layout_req *lreq = nuser ? user : layouts;
	size_t nlreq = nuser ? nuser : sizeof layouts / sizeof layouts[0];
	for (size_t k = 0; k < nlreq; k++) {
		const struct layout_req *r = &lreq[k];
		size_t nm = 0;
		while (r->members[nm] != NULL)
			nm++;
		int64_t off[24];
		uint64_t sz = 0;
		if (!hw_syms_struct_layout(s2, &lm, near, r->tag, r->members,
					   nm, off, &sz)) {
			printf("nolayout %s\n", r->tag);
			continue;
		}
		printf("layout %s", r->tag);
		for (size_t j = 0; j < nm; j++)
			printf(" %s=%" PRId64, r->members[j], off[j]);
		printf(" sizeof=%" PRIu64 "\n", sz);
	}
	t5 = now_ms();
	fflush(stdout);
	if (timing)
		fprintf(stderr,
			"time open=%.1fms all-modules=%.1fms "
			"find-libc=%.1fms symbols=%.1fms layouts=%.1fms\n",
			t1 - t0, t2 - t1, t4 - t3, t5a - t4, t5 - t5a);
out:
	hw_syms_close(s2);
	elf_end(core);
	close(fd);
	return rc;
}
