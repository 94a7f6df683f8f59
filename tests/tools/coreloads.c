/* coreloads - list the PT_LOAD segments of a 64-bit ELF core.
 *
 *   coreloads CORE
 *
 * One line per PT_LOAD, in program-header order:
 *   VADDR MEMSZ OFFSET FILESZ FLAGS NAME
 * VADDR, MEMSZ, OFFSET and FILESZ in hex (0x...), FLAGS as "rwx" with '-'
 * for a missing permission, NAME the file mapped at VADDR according to the
 * core's NT_FILE note ("-" for anonymous memory or when the core has no
 * NT_FILE).  FILESZ is cut down to what the file really holds when the core
 * is truncated.  Exit 0, 1 on an unreadable or non-core file, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#define TOOL_NAME "coreloads"
#include "coreelf.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

static unsigned char *note;       /* the NT_FILE descriptor, or NULL */
static uint64_t note_len;

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Look for NT_FILE in the PT_NOTE segment at [off, off + len).  */
static void read_notes(FILE *f, uint64_t off, uint64_t len, uint64_t fsize)
{
	if (note || off > fsize || len > fsize - off || len > (1u << 26))
		return;
	unsigned char *buf = malloc(len ? len : 1);
	if (!buf || fseeko(f, (off_t)off, SEEK_SET) ||
	    fread(buf, 1, len, f) != len) {
		free(buf);
		return;
	}
	uint64_t p = 0;
	while (len - p >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, buf + p, 4);
		memcpy(&descsz, buf + p + 4, 4);
		memcpy(&type, buf + p + 8, 4);
		uint64_t name = p + 12;
		uint64_t desc = name + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc + (((uint64_t)descsz + 3) & ~3ull);
		if (desc > len || next > len || descsz > len - desc)
			break;
		if (type == NT_FILE && namesz == 5 && !memcmp(buf + name, "CORE", 5)) {
			note = malloc(descsz + 1u);
			if (note) {
				memcpy(note, buf + desc, descsz);
				note[descsz] = 0; /* the names end NUL-terminated */
				note_len = descsz;
			}
			break;
		}
		p = next;
	}
	free(buf);
}

/* The NT_FILE name of the mapping holding addr, or "-".  NT_FILE:
   count, page_size, then count * (start, end, file_ofs), then the names.  */
static const char *name_of(uint64_t addr)
{
	if (!note || note_len < 16)
		return "-";
	uint64_t count = get64(note);
	if (count > (note_len - 16) / 24)
		return "-";
	const char *names = (const char *)note + 16 + count * 24;
	const char *end = (const char *)note + note_len;
	for (uint64_t i = 0; i < count && names < end; i++) {
		uint64_t start = get64(note + 16 + i * 24);
		uint64_t stop = get64(note + 24 + i * 24);
		if (start <= addr && addr < stop)
			return *names ? names : "-";
		names += strlen(names) + 1;
	}
	return "-";
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: coreloads CORE\n");
		return 2;
	}
	const char *path = argv[1];
	FILE *f;
	Elf64_Ehdr eh;
	uint64_t fsize;
	Elf64_Phdr *ph = core_open(path, "rb", &f, &eh, &fsize);
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_NOTE)
			read_notes(f, ph[i].p_offset, ph[i].p_filesz, fsize);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD)
			continue;
		uint64_t filesz = p->p_filesz;
		if (p->p_offset >= fsize)
			filesz = 0;
		else if (filesz > fsize - p->p_offset)
			filesz = fsize - p->p_offset;
		printf("0x%llx 0x%llx 0x%llx 0x%llx %c%c%c %s\n",
		       (unsigned long long)p->p_vaddr,
		       (unsigned long long)p->p_memsz,
		       (unsigned long long)p->p_offset,
		       (unsigned long long)filesz,
		       p->p_flags & PF_R ? 'r' : '-',
		       p->p_flags & PF_W ? 'w' : '-',
		       p->p_flags & PF_X ? 'x' : '-', name_of(p->p_vaddr));
	}
	free(ph);
	free(note);
	fclose(f);
	return 0;
}
