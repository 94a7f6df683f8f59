/* srcat - print what hw_syms_source_at says of addresses in a core.
 *
 * srcat [--exe F] [--sysroot D] [--debug-dir D]... [--no-debuginfo]
 *       [--file PATH@BASE]... CORE [ra:|pc:]ADDR...
 * srcat [options] --bench MODULE-PREFIX N CORE
 *
 * Built by the tests that use it (t0145) from the .c files of libheapwalk/sym, as
 * t0050 builds sym-probe: the Makefile's tests/tools rule links no
 * library.
 *
 * ADDR (hex, 0x optional) is looked up as a return address ("ra:", the
 * default) or as the pc where a thread stopped ("pc:").  One line per
 * frame, fields separated by tabs ("-" for unknown):
 *   ADDR  INDEX  FUNCTION  FILE  LINE  COLUMN  inlined|real  MODULE  +OFFSET
 * and "ADDR none" when no module holds the address.
 *
 * --file PATH@BASE reports a file mapped at BASE that the core does not
 * name (qemu-user cores have no NT_FILE), as heapwalk's target does from
 * the link_map.
 *
 * --bench: N distinct pcs inside the function symbols of the first
 * module whose name starts with MODULE-PREFIX (its DWARF loaded first,
 * not timed), each looked up once as a return address; prints
 * "bench N pcs: X us/pc, Y with a line, Z with inline frames" and the
 * time the first lookup (loading the DWARF) took.  When the module has
 * no DWARF, each name is also compared with libdwfl's own choice
 * (dwfl_module_addrinfo) and the differences counted.  --print-pcs
 * prints each pc ("pc 0x...").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <libelf.h>

#include "sym/sym.h"

#define MAX_FRAMES 32

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *or_dash(const char *s)
{
	return s != NULL ? s : "-";
}

static void print_frames(struct hw_syms *s, const char *arg)
{
	bool ra = true;
	const char *hex = arg;
	if (strncmp(hex, "ra:", 3) == 0)
		hex += 3;
	else if (strncmp(hex, "pc:", 3) == 0)
		hex += 3, ra = false;
	char *end;
	uint64_t addr = strtoull(hex, &end, 16);
	if (*hex == '\0' || *end != '\0') {
		fprintf(stderr, "srcat: bad address %s\n", arg);
		exit(2);
	}
	struct hw_source_frame f[MAX_FRAMES];
	size_t n = hw_syms_source_at(s, addr, ra, f, MAX_FRAMES);
	if (n == 0)
		printf("0x%" PRIx64 "\tnone\n", addr);
	for (size_t i = 0; i < n; i++)
		printf("0x%" PRIx64 "\t%zu\t%s\t%s\t%u\t%u\t%s\t%s\t+0x%" PRIx64
		       "\n", addr, i, or_dash(f[i].function),
		       or_dash(f[i].file), f[i].line, f[i].column,
		       f[i].inlined ? "inlined" : "real", f[i].module,
		       f[i].module_offset);
}

static int bench(struct hw_syms *s, const char *prefix, long want,
		 bool print_pcs)
{
	struct hw_module m;
	if (!hw_syms_find_module(s, prefix, &m)) {
		fprintf(stderr, "srcat: no module %s\n", prefix);
		return 1;
	}
	hw_syms_module_dwarf(&m);
	Dwfl_Module *mod = m.handle;
	int nsym = dwfl_module_getsymtab(mod);
	uint64_t *start = calloc(nsym > 0 ? (size_t)nsym : 1, sizeof *start);
	uint64_t *size = calloc(nsym > 0 ? (size_t)nsym : 1, sizeof *size);
	size_t nf = 0;
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		GElf_Word shndx;
		if (dwfl_module_getsym_info(mod, i, &sym, &a, &shndx, NULL,
					    NULL) == NULL ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size < 2)
			continue;
		start[nf] = a;
		size[nf++] = sym.st_size;
	}
	if (nf == 0) {
		fprintf(stderr, "srcat: %s has no function symbols\n", prefix);
		return 1;
	}
	struct hw_source_frame f[MAX_FRAMES];
	double t0 = now_ms();
	(void)hw_syms_source_at(s, start[0] + 1, true, f, MAX_FRAMES);
	double first = now_ms() - t0;

	long lines = 0, inl = 0, differ = 0;
	t0 = now_ms();
	for (long k = 0; k < want; k++) {
		size_t i = (size_t)k % nf;
		uint64_t round = (uint64_t)k / nf;
		/* Distinct pcs: a different offset in each round.  */
		uint64_t off = 1 + (size[i] / 2 + round * 37) % (size[i] - 1);
		size_t n = hw_syms_source_at(s, start[i] + off, true, f,
					     MAX_FRAMES);
		if (n > 0 && f[0].line > 0)
			lines++;
		if (n > 1)
			inl++;
		if (print_pcs)
			printf("pc 0x%" PRIx64 "\n", start[i] + off);
	}
	double dt = now_ms() - t0;
	/* Without DWARF the names must be libdwfl's own choice
	   (dwfl_module_addrinfo, through hw_syms_symbol_at): not timed.  */
	for (long k = 0; !m.has_dwarf && k < want; k++) {
		size_t i = (size_t)k % nf;
		uint64_t round = (uint64_t)k / nf;
		uint64_t off = 1 + (size[i] / 2 + round * 37) % (size[i] - 1);
		uint64_t pc = start[i] + off;
		size_t n = hw_syms_source_at(s, pc, true, f, MAX_FRAMES);
		struct hw_symbol_at at;
		char want_name[1024] = "";
		if (hw_syms_symbol_at(s, pc - 1, &at)) {
			char plain[1024];
			snprintf(plain, sizeof plain, "%.*s",
				 (int)strcspn(at.name, "@"), at.name);
			hw_syms_demangle(plain, want_name, sizeof want_name);
		}
		const char *got = n > 0 && f[0].function ? f[0].function : "";
		if (strcmp(got, want_name) != 0 && differ++ < 5)
			fprintf(stderr, "srcat: 0x%" PRIx64 ": %s, libdwfl "
				"says %s\n", pc, got, want_name);
	}
	printf("bench %s %ld pcs (%zu functions, dwarf=%s): %.2f us/pc, "
	       "%ld with a line, %ld with inline frames; first lookup "
	       "%.1f ms; %ld differ from libdwfl's symbol\n", prefix, want, nf,
	       m.has_dwarf ? "yes" : "no",
	       want > 0 ? dt * 1e3 / (double)want : 0.0, lines, inl, first,
	       differ);
	free(start);
	free(size);
	return 0;
}

int main(int argc, char **argv)
{
	struct hw_syms_opts opts = { 0 };
	const char *dirs[16];
	struct hw_syms_file files[16];
	const char *bench_prefix = NULL;
	long bench_n = 0;
	bool print_pcs = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--no-debuginfo") == 0) {
			opts.no_debuginfo = true;
			continue;
		}
		if (strcmp(a, "--print-pcs") == 0) {
			print_pcs = true;
			continue;
		}
		if (v == NULL)
			goto usage;
		if (strcmp(a, "--exe") == 0)
			opts.exe = v;
		else if (strcmp(a, "--sysroot") == 0)
			opts.sysroot = v;
		else if (strcmp(a, "--debug-dir") == 0 && opts.n_debug_dirs < 16)
			dirs[opts.n_debug_dirs++] = v;
		else if (strcmp(a, "--file") == 0 && opts.nfiles < 16) {
			const char *at = strrchr(v, '@');
			if (at == NULL)
				goto usage;
			files[opts.nfiles].path = strndup(v, (size_t)(at - v));
			files[opts.nfiles++].base = strtoull(at + 1, NULL, 16);
		} else if (strcmp(a, "--bench") == 0 && i + 2 < argc) {
			bench_prefix = v;
			bench_n = strtol(argv[i + 2], NULL, 10);
			i++;
		} else
			goto usage;
		i++;
	}
	if (i >= argc)
		goto usage;
	opts.debug_dirs = dirs;
	opts.files = files;

	elf_version(EV_CURRENT);
	int fd = open(argv[i], O_RDONLY);
	if (fd < 0) {
		perror(argv[i]);
		return 1;
	}
	Elf *core = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	char err[256];
	struct hw_syms *s = core != NULL
				    ? hw_syms_open_core(core, &opts, err, sizeof err)
				    : NULL;
	if (s == NULL) {
		fprintf(stderr, "srcat: %s: %s\n", argv[i],
			core != NULL ? err : elf_errmsg(-1));
		return 1;
	}
	int rc = 0;
	if (bench_prefix != NULL)
		rc = bench(s, bench_prefix, bench_n, print_pcs);
	else
		for (i++; i < argc; i++)
			print_frames(s, argv[i]);
	hw_syms_close(s);
	elf_end(core);
	close(fd);
	for (size_t k = 0; k < opts.nfiles; k++)
		free((char *)files[k].path);
	return rc;

usage:
	fprintf(stderr, "usage: srcat [--exe F] [--sysroot D] [--debug-dir D]... "
		"[--no-debuginfo] [--file PATH@BASE]... [--bench PREFIX N] "
		"CORE [ra:|pc:]ADDR...\n");
	return 2;
}
