/* coreslim - a small copy of an ELF core with the same structure, for
 * fuzzing seeds (tests/fuzz/run.sh, fuzz-core).
 *
 *   coreslim CORE OUT [MAXDATA]
 *
 * OUT has CORE's ELF header, program headers and notes unchanged, and
 * of each PT_LOAD's file data only the start: up to MAXDATA bytes
 * (default 131072) of a writable segment, one page of the others (the
 * ELF header page a kernel keeps of a mapped file, with its build-id).
 * The rest of a segment becomes p_memsz beyond p_filesz, as a kernel
 * writes pages it skips.  Addresses do not move, so the heap's start,
 * libc's data and the stacks read as before; what lies past the cut is
 * missing.  Data is laid out page-aligned in program-header order.  Of
 * a CORE cut short (a truncated seed) only what it still holds is kept.
 * Exit 0, 1 on a non-core, a PN_XNUM core (not needed for seeds) or I/O
 * errors, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#define TOOL_NAME "coreslim"
#include "coreelf.h"

#define PAGE 4096u

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Copy len bytes of in at off to out at its current end, zero-padding
   what in does not hold (a truncated core).  */
static void copy(FILE *in, uint64_t fsize, uint64_t off, uint64_t len,
		 FILE *out, const char *path)
{
	static char buf[1 << 16];
	uint64_t have = off < fsize ? min64(len, fsize - off) : 0;
	if (have && fseeko(in, (off_t)off, SEEK_SET))
		die(path, strerror(errno));
	for (uint64_t done = 0; done < len;) {
		size_t n = (size_t)min64(sizeof buf, len - done);
		if (done < have) {
			n = (size_t)min64(n, have - done);
			if (fread(buf, 1, n, in) != n)
				die(path, "short read");
		} else {
			memset(buf, 0, n);
		}
		if (fwrite(buf, 1, n, out) != n)
			die("OUT", strerror(errno));
		done += n;
	}
}

static void pad_to(FILE *out, uint64_t off)
{
	long pos = ftell(out);
	if (pos < 0)
		die("OUT", strerror(errno));
	for (uint64_t p = (uint64_t)pos; p < off; p++)
		if (fputc(0, out) == EOF)
			die("OUT", strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: coreslim CORE OUT [MAXDATA]\n");
		return 2;
	}
	uint64_t maxdata = argc == 4 ? strtoull(argv[3], NULL, 0) : 131072;
	FILE *in;
	Elf64_Ehdr eh;
	uint64_t fsize;
	Elf64_Phdr *ph = core_open(argv[1], "rb", &in, &eh, &fsize);
	if (eh.e_phnum == PN_XNUM)
		die(argv[1], "PN_XNUM cores are not handled");
	FILE *out = fopen(argv[2], "wb");
	if (!out)
		die(argv[2], strerror(errno));

	/* The new layout: header, program headers, notes, then loads.  */
	Elf64_Phdr *np = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof *np);
	if (!np)
		die(argv[1], "out of memory");
	uint64_t off = sizeof eh + (uint64_t)eh.e_phnum * sizeof *ph;
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr *p = &np[i];
			if (pass == 0)
				*p = ph[i];
			if ((pass == 0) != (ph[i].p_type == PT_NOTE))
				continue;
			if (ph[i].p_type == PT_LOAD) {
				uint64_t cap = (ph[i].p_flags & PF_W) ? maxdata : PAGE;
				uint64_t held = ph[i].p_offset < fsize ?
						fsize - ph[i].p_offset : 0;
				p->p_filesz = min64(min64(ph[i].p_filesz, cap), held);
				off = (off + PAGE - 1) & ~(uint64_t)(PAGE - 1);
			}
			p->p_offset = off;
			off += p->p_filesz;
		}
	}
	Elf64_Ehdr neh = eh;
	neh.e_phoff = sizeof eh;
	neh.e_shoff = 0;
	neh.e_shnum = 0;
	neh.e_shstrndx = 0;
	if (fwrite(&neh, sizeof neh, 1, out) != 1 ||
	    (eh.e_phnum && fwrite(np, sizeof *np, eh.e_phnum, out) != eh.e_phnum))
		die(argv[2], strerror(errno));
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			if ((pass == 0) != (ph[i].p_type == PT_NOTE) ||
			    (pass == 1 && ph[i].p_type != PT_LOAD))
				continue;
			pad_to(out, np[i].p_offset);
			copy(in, fsize, ph[i].p_offset, np[i].p_filesz, out, argv[1]);
		}
	}
	if (fclose(out) != 0)
		die(argv[2], strerror(errno));
	fclose(in);
	free(ph);
	free(np);
	return 0;
}
