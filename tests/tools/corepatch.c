/* corepatch - change (or read) the bytes of an ELF core at a virtual address.
 *
 *   corepatch CORE ADDR HEXBYTES    overwrite memory at ADDR with HEXBYTES
 *   corepatch -r CORE ADDR [N]      print N (default 1) 64-bit little-endian
 *                                   words read at ADDR, "0x%016x" a line
 *   corepatch -s CORE LO HI VALUE   print the address ("0x%x" a line) of
 *                                   every 8-aligned 64-bit word in [LO, HI)
 *                                   that equals VALUE (LO..HI must be in
 *                                   the file data of one PT_LOAD)
 *
 * ADDR is a number (0x... for hex).  HEXBYTES are the new bytes in memory
 * order, two hex digits each ("4141414141414141"; blanks, ':' and '_' are
 * ignored).  The PT_LOAD whose file-backed part ([p_vaddr, p_vaddr +
 * p_filesz)) holds every byte of the range is found, and the bytes at file
 * offset p_offset + (ADDR - p_vaddr) are replaced in place.  A range that
 * is not wholly in the file (not mapped, or only in p_memsz, or cut off by
 * a truncated core) is refused with exit 1 and nothing is written.
 * A patch prints one line: ADDR, the file offset, old and new bytes.
 * Exit 0 done, 1 refused or I/O error, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define MAX_BYTES 4096

static void usage(void)
{
	fprintf(stderr, "usage: corepatch CORE ADDR HEXBYTES\n"
			"       corepatch -r CORE ADDR [NWORDS]\n"
			"       corepatch -s CORE LO HI VALUE\n");
	exit(2);
}

static void die(const char *path, const char *what)
{
	fprintf(stderr, "corepatch: %s: %s\n", path, what);
	exit(1);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return 0;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The file offset of [addr, addr + len), or -1 when some byte of it is
   not in the file.  */
static off_t locate(FILE *f, const char *path, uint64_t addr, uint64_t len)
{
	Elf64_Ehdr eh;
	struct stat st;
	if (fstat(fileno(f), &st))
		die(path, strerror(errno));
	if (fread(&eh, sizeof eh, 1, f) != 1 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_CORE)
		die(path, "not a 64-bit little-endian ELF core");
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		die(path, "odd e_phentsize");
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (fseeko(f, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph),
			   SEEK_SET) || fread(&ph, sizeof ph, 1, f) != 1)
			die(path, "cannot read a program header");
		if (ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz ||
		    len > ph.p_filesz - (addr - ph.p_vaddr))
			continue;
		uint64_t off = ph.p_offset + (addr - ph.p_vaddr);
		if (off + len > (uint64_t)st.st_size)
			return -1; /* truncated core */
		return (off_t)off;
	}
	return -1;
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t w = 0;
	for (int k = 7; k >= 0; k--)
		w = w << 8 | p[k];
	return w;
}

/* corepatch -s CORE LO HI VALUE */
static int search(char **argv)
{
	uint64_t lo, hi, value;
	if (!parse_u64(argv[3], &lo) || !parse_u64(argv[4], &hi) ||
	    !parse_u64(argv[5], &value) || hi <= lo)
		usage();
	lo = (lo + 7) & ~7ull;
	if (hi <= lo)
		return 0;
	const char *path = argv[2];
	FILE *f = fopen(path, "rb");
	if (!f)
		die(path, strerror(errno));
	off_t off = locate(f, path, lo, hi - lo);
	if (off < 0) {
		fprintf(stderr, "corepatch: %s: 0x%llx..0x%llx is not in the file "
			"data of one PT_LOAD\n", path, (unsigned long long)lo,
			(unsigned long long)hi);
		return 1;
	}
	if (fseeko(f, off, SEEK_SET))
		die(path, "seek error");
	unsigned char w[8];
	for (uint64_t a = lo; a + 8 <= hi; a += 8) {
		if (fread(w, 1, 8, f) != 8)
			die(path, "read error");
		if (le64(w) == value)
			printf("0x%llx\n", (unsigned long long)a);
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-s")) {
		if (argc != 6)
			usage();
		return search(argv);
	}
	int readmode = argc > 1 && !strcmp(argv[1], "-r");
	uint64_t addr, nwords = 1;
	unsigned char buf[MAX_BYTES], old[MAX_BYTES];
	size_t len = 0;

	if (readmode) {
		if (argc != 4 && argc != 5)
			usage();
		argv++;
		argc--;
		if (argc == 4 && (!parse_u64(argv[3], &nwords) || !nwords ||
				  nwords > MAX_BYTES / 8))
			usage();
		len = (size_t)nwords * 8;
	} else {
		if (argc != 4)
			usage();
		for (const char *p = argv[3]; *p;) {
			if (*p == ' ' || *p == ':' || *p == '_') {
				p++;
				continue;
			}
			int hi = hexval(p[0]), lo = hi < 0 ? -1 : hexval(p[1]);
			if (lo < 0 || len == MAX_BYTES)
				usage();
			buf[len++] = (unsigned char)(hi << 4 | lo);
			p += 2;
		}
		if (!len)
			usage();
	}
	if (!parse_u64(argv[2], &addr))
		usage();

	const char *path = argv[1];
	FILE *f = fopen(path, readmode ? "rb" : "r+b");
	if (!f)
		die(path, strerror(errno));
	off_t off = locate(f, path, addr, len);
	if (off < 0) {
		fprintf(stderr, "corepatch: %s: 0x%llx..+%zu is not in the file "
			"data of one PT_LOAD\n", path, (unsigned long long)addr,
			len);
		return 1;
	}
	if (fseeko(f, off, SEEK_SET) || fread(old, 1, len, f) != len)
		die(path, "read error at the target");
	if (readmode) {
		for (size_t i = 0; i < len; i += 8)
			printf("0x%016llx\n", (unsigned long long)le64(old + i));
		return fclose(f) ? 1 : 0;
	}
	if (fseeko(f, off, SEEK_SET) || fwrite(buf, 1, len, f) != len ||
	    fclose(f))
		die(path, "write error");
	printf("corepatch: 0x%llx (file offset 0x%llx): ",
	       (unsigned long long)addr, (unsigned long long)off);
	for (size_t i = 0; i < len; i++)
		printf("%02x", old[i]);
	printf(" -> ");
	for (size_t i = 0; i < len; i++)
		printf("%02x", buf[i]);
	putchar('\n');
	return 0;
}
