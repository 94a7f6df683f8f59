/* coreelf.h - opening an ELF core for the core-editing test tools
 * (corefuzz.c, coreloads.c): check that it is a 64-bit little-endian
 * core and read its program headers.  Header only; a tool defines
 * TOOL_NAME, the prefix of its error lines, before including it.
 */
#ifndef HW_TOOLS_COREELF_H
#define HW_TOOLS_COREELF_H

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifndef TOOL_NAME
#error "define TOOL_NAME before including coreelf.h"
#endif

static void die(const char *path, const char *what)
{
	fprintf(stderr, TOOL_NAME ": %s: %s\n", path, what);
	exit(1);
}

/* Open the core at path with fopen mode `mode`; its header goes to *eh,
   its size to *fsize, and its program headers (e_phnum of them, to be
   freed) are returned.  Dies on any failure.  */
static Elf64_Phdr *core_open(const char *path, const char *mode, FILE **fp,
			     Elf64_Ehdr *eh, uint64_t *fsize)
{
	FILE *f = fopen(path, mode);
	struct stat st;
	if (!f || fstat(fileno(f), &st))
		die(path, strerror(errno));
	if (fread(eh, sizeof *eh, 1, f) != 1 ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_type != ET_CORE ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		die(path, "not a 64-bit little-endian ELF core");
	Elf64_Phdr *ph = calloc(eh->e_phnum ? eh->e_phnum : 1, sizeof *ph);
	if (!ph)
		die(path, "out of memory");
	if (fseeko(f, (off_t)eh->e_phoff, SEEK_SET) ||
	    fread(ph, sizeof *ph, eh->e_phnum, f) != eh->e_phnum)
		die(path, "cannot read the program headers");
	*fp = f;
	*fsize = (uint64_t)st.st_size;
	return ph;
}

#endif /* HW_TOOLS_COREELF_H */
