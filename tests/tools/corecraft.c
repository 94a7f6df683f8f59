/* corecraft - write a hostile variant of a real ELF core.
 *
 *   corecraft MODE IN OUT [N]
 *
 * Reads the core IN (64-bit little-endian) and writes OUT, a copy with one
 * hostile change.  Each mode reproduces a kind of input found by fuzzing
 * (the hostile-input rounds); what it changes comes from the core's own
 * structure, never from heapwalk's output:
 *
 *   huge-memsz     the writable PT_LOAD holding the most file bytes gets
 *                  p_memsz = 0x10000000000 (1 TiB, almost none of it in
 *                  the file); N, if given, picks the N-th PT_LOAD instead
 *   vast-memsz     the same with p_memsz = 0x400000000000 (64 TiB)
 *   escape-names   every NT_FILE path long enough gets, in place of the
 *                  first bytes of its file name, a terminal escape (ESC ]
 *                  0;...BEL: a window title; ESC [31m: red), a backspace,
 *                  a newline and two bytes of no valid UTF-8 (0xff, a
 *                  lone 0x80)
 *   junk-regs      every general register of every NT_PRSTATUS is set to
 *                  a junk address (0x4141414141410000 plus a little)
 *   many-threads   N more NT_PRSTATUS notes (copies of the first with
 *                  distinct pids); the note segment is rewritten at the
 *                  end of the file
 *   many-files     N more NT_FILE entries, each a distinct name
 *                  (/nonexistent/corecraft/fNNNNNNN) on a page of its own
 *                  where the core has no segment
 *   xnum           N program headers in all (65535 or more: e_phnum =
 *                  PN_XNUM, the count in section header 0's sh_info), the
 *                  added ones PT_NOTEs aliasing the core's note segment
 *   xnum-distinct  the same count, the added PT_NOTEs each naming a
 *                  different single byte of the file (none aliases
 *                  another; none holds a whole note)
 *   rtree-alias    jemalloc (x86_64, LG_VADDR 48, 4 KiB pages): every slot
 *                  of the radix tree's root points at the tree's first
 *                  real leaf
 *   rtree-alias-late  the root stays valid for a reader that checks its
 *                  first 64 non-zero slots (63 slots just below the first
 *                  real one point at a 2 MiB all-zero array, then the real
 *                  slot) and every empty slot after it aliases its leaf;
 *                  the real slots keep their leaves, so every extent is
 *                  still in the tree
 *
 * The root is found from the data as jemalloc builds it: a 2^18-slot array
 * in writable memory whose non-zero slot i points at a 2^18-element leaf
 * whose element k decodes (5.3: low 7 bits and bits 48+ masked; 5.2: bit
 * 0) to an extent whose [addr, addr + size) covers page (i << 30) | (k << 12).
 *
 * Prints one line saying what it changed.  OUT is written sparse (runs of
 * zeros become holes).  Exit 0, 1 on failure, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#define TOOL_NAME "corecraft"
#include "coreelf.h"

#include <fcntl.h>
#include <unistd.h>

#define PR_PID_OFF 32
#define PR_REG_OFF 112
#define PR_NREGS 27         /* x86_64 user_regs_struct; aarch64 has 34 */

static uint8_t *img;        /* the whole output image */
static uint64_t img_len, img_cap;
static Elf64_Ehdr *eh;

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die("corecraft", "out of memory");
	return q;
}

/* Reserve n more bytes at the end of the image (8-aligned); returns their
   offset.  */
static uint64_t img_append(uint64_t n)
{
	uint64_t off = (img_len + 7) & ~(uint64_t)7;
	if (off + n > img_cap) {
		img_cap = (off + n) * 2;
		img = xrealloc(img, img_cap);
		eh = (Elf64_Ehdr *)img;
	}
	memset(img + img_len, 0, off + n - img_len);
	img_len = off + n;
	return off;
}

static Elf64_Phdr *phdrs(void)
{
	return (Elf64_Phdr *)(img + eh->e_phoff);
}

/* The file bytes of virtual address va (len of them), or NULL.  */
static uint8_t *at_va(uint64_t va, uint64_t len)
{
	Elf64_Phdr *ph = phdrs();
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || va < ph[i].p_vaddr ||
		    va - ph[i].p_vaddr >= ph[i].p_filesz ||
		    len > ph[i].p_filesz - (va - ph[i].p_vaddr) ||
		    ph[i].p_offset + ph[i].p_filesz > img_len)
			continue;
		return img + ph[i].p_offset + (va - ph[i].p_vaddr);
	}
	return NULL;
}

static Elf64_Phdr *first_note(void)
{
	Elf64_Phdr *ph = phdrs();
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_NOTE && ph[i].p_offset + ph[i].p_filesz <= img_len)
			return &ph[i];
	die("corecraft", "the core has no PT_NOTE");
	return NULL;
}

/* ---- notes ------------------------------------------------------------- */

struct blob {
	uint8_t *p;
	size_t n, cap;
};

static void blob_put(struct blob *b, const void *src, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void blob_pad(struct blob *b)
{
	static const uint8_t zero[4];
	blob_put(b, zero, (4 - b->n % 4) % 4);
}

static void put_note(struct blob *b, const char *name, uint32_t type,
		     const void *desc, size_t descsz)
{
	uint32_t h[3] = { (uint32_t)strlen(name) + 1, (uint32_t)descsz, type };
	blob_put(b, h, sizeof h);
	blob_put(b, name, h[0]);
	blob_pad(b);
	blob_put(b, desc, descsz);
	blob_pad(b);
}

/* Walk the notes of the first PT_NOTE: calls fn for each.  */
typedef void note_fn(const char *name, uint32_t type, const uint8_t *desc,
		     uint32_t descsz, void *cookie);

static void each_note(note_fn *fn, void *cookie)
{
	Elf64_Phdr *ph = first_note();
	const uint8_t *p = img + ph->p_offset, *end = p + ph->p_filesz;
	while (end - p >= 12) {
		uint32_t h[3];
		memcpy(h, p, sizeof h);
		uint64_t nsz = (h[0] + 3) & ~3u, dsz = (h[1] + 3) & ~3ull;
		if ((uint64_t)(end - p) - 12 < nsz + dsz)
			break;
		fn((const char *)p + 12, h[2], p + 12 + nsz, h[1], cookie);
		p += 12 + nsz + dsz;
	}
}

/* escape-names: the hostile bytes over the start of each NT_FILE file
   name that has room for them (the note keeps its size).  */
static const char hostile_name[] = "\x1b]0;pwn\x07\x1b[31m\b\n\xff\x80";

static void escape_names_note(const char *name, uint32_t type,
			      const uint8_t *desc, uint32_t descsz,
			      void *cookie)
{
	unsigned *changed = cookie;
	if (type != 0x46494c45 /* NT_FILE */ || strcmp(name, "CORE") ||
	    descsz < 16)
		return;
	uint64_t count;
	memcpy(&count, desc, 8);
	if (count > (descsz - 16) / 24)
		die("corecraft", "NT_FILE count does not fit its note");
	char *p = (char *)desc + 16 + 24 * count, *end = (char *)desc + descsz;
	size_t k = sizeof hostile_name - 1;
	for (uint64_t i = 0; i < count && p < end; i++) {
		size_t len = strnlen(p, (size_t)(end - p));
		char *base = p;
		for (size_t c = 0; c < len; c++)
			if (p[c] == '/')
				base = p + c + 1;
		if ((size_t)(p + len - base) >= k) {
			memcpy(base, hostile_name, k);
			(*changed)++;
		}
		p += len + 1;
	}
}

static void escape_names(void)
{
	unsigned changed = 0;
	each_note(escape_names_note, &changed);
	if (!changed)
		die("corecraft", "no NT_FILE name long enough to change");
	printf("escape-names: %u NT_FILE names changed\n", changed);
}

/* Point the first PT_NOTE at a rewritten note segment.  */
static void replace_notes(const struct blob *b)
{
	uint64_t off = img_append(b->n);
	memcpy(img + off, b->p, b->n);
	Elf64_Phdr *ph = first_note();
	ph->p_offset = off;
	ph->p_filesz = b->n;
}

struct rebuild {
	struct blob out;
	const uint8_t *prstatus;   /* the first NT_PRSTATUS's desc */
	uint32_t prstatus_sz;
	uint64_t nfiles;           /* many-files: entries to add */
	uint64_t count_in_file;    /* NT_FILE entries seen */
};

static void copy_note(const char *name, uint32_t type, const uint8_t *desc,
		      uint32_t descsz, void *cookie)
{
	struct rebuild *r = cookie;
	if (type == NT_PRSTATUS && !strcmp(name, "CORE") && !r->prstatus) {
		r->prstatus = desc;
		r->prstatus_sz = descsz;
	}
	if (type == 0x46494c45 /* NT_FILE */ && !strcmp(name, "CORE") &&
	    r->nfiles && descsz >= 16) {
		uint64_t count, page;
		memcpy(&count, desc, 8);
		memcpy(&page, desc + 8, 8);
		if (count > (descsz - 16) / 24)
			die("corecraft", "NT_FILE count does not fit its note");
		r->count_in_file = count;
		struct blob d = { 0 };
		uint64_t total = count + r->nfiles;
		blob_put(&d, &total, 8);
		blob_put(&d, &page, 8);
		blob_put(&d, desc + 16, count * 24);
		/* Pages far from anything a process maps on x86_64 or
		   aarch64, one in two so that no two are adjacent.  */
		for (uint64_t i = 0; i < r->nfiles; i++) {
			uint64_t e[3] = { 0x100000000000ull + i * 0x2000,
					  0x100000000000ull + i * 0x2000 + 0x1000, 0 };
			blob_put(&d, e, sizeof e);
		}
		blob_put(&d, desc + 16 + count * 24, descsz - 16 - count * 24);
		for (uint64_t i = 0; i < r->nfiles; i++) {
			char name_buf[64];
			int n = snprintf(name_buf, sizeof name_buf,
					 "/nonexistent/corecraft/f%07llu",
					 (unsigned long long)i);
			blob_put(&d, name_buf, (size_t)n + 1);
		}
		put_note(&r->out, name, type, d.p, d.n);
		free(d.p);
		return;
	}
	put_note(&r->out, name, type, desc, descsz);
}

static void many_threads(uint64_t n)
{
	struct rebuild r = { 0 };
	each_note(copy_note, &r);
	if (!r.prstatus || r.prstatus_sz < PR_PID_OFF + 4)
		die("corecraft", "no NT_PRSTATUS to copy");
	uint8_t *desc = xrealloc(NULL, r.prstatus_sz);
	memcpy(desc, r.prstatus, r.prstatus_sz);
	for (uint64_t i = 0; i < n; i++) {
		int32_t pid = (int32_t)(1000000 + i);
		memcpy(desc + PR_PID_OFF, &pid, 4);
		put_note(&r.out, "CORE", NT_PRSTATUS, desc, r.prstatus_sz);
	}
	free(desc);
	replace_notes(&r.out);
	free(r.out.p);
	printf("many-threads: %llu NT_PRSTATUS notes added\n",
	       (unsigned long long)n);
}

static void many_files(uint64_t n)
{
	struct rebuild r = { .nfiles = n };
	each_note(copy_note, &r);
	if (!r.count_in_file)
		die("corecraft", "the core has no NT_FILE note");
	replace_notes(&r.out);
	free(r.out.p);
	printf("many-files: %llu NT_FILE entries added to %llu\n",
	       (unsigned long long)n, (unsigned long long)r.count_in_file);
}

struct junk {
	unsigned notes;
};

static void junk_one(const char *name, uint32_t type, const uint8_t *desc,
		     uint32_t descsz, void *cookie)
{
	struct junk *j = cookie;
	if (type != NT_PRSTATUS || strcmp(name, "CORE"))
		return;
	uint8_t *d = (uint8_t *)desc;  /* inside img */
	for (unsigned k = 0; PR_REG_OFF + 8 * (k + 1) <= descsz; k++) {
		uint64_t v = 0x4141414141410000ull + 8 * k;
		memcpy(d + PR_REG_OFF + 8 * k, &v, 8);
	}
	j->notes++;
}

static void junk_regs(void)
{
	struct junk j = { 0 };
	each_note(junk_one, &j);
	if (!j.notes)
		die("corecraft", "no NT_PRSTATUS note");
	printf("junk-regs: registers of %u threads set to junk\n", j.notes);
}

/* ---- program headers --------------------------------------------------- */

static void huge_memsz(int pick, uint64_t memsz)
{
	Elf64_Phdr *ph = phdrs(), *best = NULL;
	int k = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (pick >= 0 ? k++ == pick :
		    (ph[i].p_flags & PF_W) &&
		    (!best || ph[i].p_filesz > best->p_filesz))
			best = &ph[i];
	}
	if (!best)
		die("corecraft", "no such PT_LOAD");
	best->p_memsz = memsz;
	printf("huge-memsz: PT_LOAD at 0x%llx (0x%llx bytes in the file): "
	       "p_memsz = 0x%llx\n", (unsigned long long)best->p_vaddr,
	       (unsigned long long)best->p_filesz, (unsigned long long)memsz);
}

static void xnum(uint64_t n, int distinct)
{
	unsigned old = eh->e_phnum;
	if (old == PN_XNUM)
		die("corecraft", "the core uses PN_XNUM already");
	if (n < PN_XNUM || n > 0xffffffffu || n < old)
		die("corecraft", "xnum wants N from 65535 to 2^32-1");
	Elf64_Phdr note = *first_note();
	uint64_t off = img_append(n * sizeof(Elf64_Phdr));
	memcpy(img + off, phdrs(), old * sizeof(Elf64_Phdr));
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + off);
	for (uint64_t i = old; i < n; i++) {
		ph[i] = note;
		if (distinct) {
			ph[i].p_offset = i % img_len;
			ph[i].p_filesz = 1;
		}
	}
	uint64_t sh = img_append(sizeof(Elf64_Shdr));
	Elf64_Shdr s0 = { .sh_info = (uint32_t)n };
	memcpy(img + sh, &s0, sizeof s0);
	eh->e_phoff = off;
	eh->e_phnum = PN_XNUM;
	eh->e_shoff = sh;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 1;
	eh->e_shstrndx = SHN_UNDEF;
	printf("xnum: %llu program headers, %llu of them PT_NOTEs %s the "
	       "note segment at 0x%llx\n", (unsigned long long)n,
	       (unsigned long long)(n - old + 1),
	       distinct ? "besides (one byte each, all different), and"
			: "aliasing",
	       (unsigned long long)note.p_offset);
}

/* ---- jemalloc's radix tree ----------------------------------------------- */

#define RT_BITS 18
#define RT_SLOTS ((uint64_t)1 << RT_BITS)
#define VA_MASK (((uint64_t)1 << 48) - 1)

/* The root index i for which leaf element v, at index k of its leaf,
   decodes to an extent covering page (i << 30) | (k << 12), or -1.  An
   extent may cross a 1 GiB line: both ends' indexes are tried.  */
static int64_t element_index(uint64_t v, uint64_t k)
{
	static const uint64_t masks[2] = { ~(uint64_t)127, ~(uint64_t)1 };
	for (int m = 0; m < 2; m++) {
		uint64_t e = v & VA_MASK & masks[m];
		const uint8_t *h = e && !(e & 7) ? at_va(e, 24) : NULL;
		uint64_t addr, size;
		if (!h)
			continue;
		memcpy(&addr, h + 8, 8);
		memcpy(&size, h + 16, 8);
		addr &= ~(uint64_t)0xfff;
		size &= ~(uint64_t)0xfff;
		if (!size || addr + size < addr)
			continue;
		uint64_t tries[2] = { addr >> 30, (addr + size - 1) >> 30 };
		for (int t = 0; t < 2; t++) {
			uint64_t key = (tries[t] << 30) | (k << 12);
			if (tries[t] < RT_SLOTS && addr <= key && key - addr < size)
				return (int64_t)tries[t];
		}
	}
	return -1;
}

/* The root index the leaf at `leaf` stands for (its first element with
   an extent pointer tells), or -1.  */
static int64_t leaf_index(uint64_t leaf)
{
	const uint8_t *a = leaf && !(leaf & 63) && !(leaf >> 48) ?
			   at_va(leaf, RT_SLOTS * 8) : NULL;
	if (!a)
		return -1;
	for (uint64_t k = 0; k < RT_SLOTS; k++) {
		uint64_t v;
		memcpy(&v, a + 8 * k, 8);
		/* Cleared elements keep only their size index (bits 48+).  */
		if (v & VA_MASK & ~(uint64_t)127)
			return element_index(v, k);
	}
	return -1;
}

static uint64_t find_root(uint64_t *leaf, uint64_t *slot_index)
{
	Elf64_Phdr *ph = phdrs();
	for (unsigned p = 0; p < eh->e_phnum; p++) {
		if (ph[p].p_type != PT_LOAD || !(ph[p].p_flags & PF_W) ||
		    ph[p].p_offset + ph[p].p_filesz > img_len)
			continue;
		const uint8_t *d = img + ph[p].p_offset;
		for (uint64_t off = 0; off + 8 <= ph[p].p_filesz; off += 8) {
			uint64_t w;
			memcpy(&w, d + off, 8);
			if (!w || (w & 63) || (w >> 48))
				continue;
			int64_t i = leaf_index(w);
			if (i < 0 || (uint64_t)i * 8 > off)
				continue;
			uint64_t root = ph[p].p_vaddr + off - (uint64_t)i * 8;
			if (off - (uint64_t)i * 8 + RT_SLOTS * 8 > ph[p].p_filesz)
				continue;
			/* Every other non-zero slot agrees with its index.  */
			const uint8_t *r = d + off - (uint64_t)i * 8;
			int ok = 1;
			for (uint64_t s = 0; s < RT_SLOTS && ok; s++) {
				uint64_t v;
				memcpy(&v, r + 8 * s, 8);
				ok = !v || leaf_index(v) == (int64_t)s;
			}
			if (!ok)
				continue;
			*leaf = w;
			*slot_index = (uint64_t)i;
			return root;
		}
	}
	die("corecraft", "no jemalloc radix tree root (x86_64, 48-bit) found");
	return 0;
}

/* A 64-aligned address with RT_SLOTS * 8 zero bytes in the file, outside
   [avoid, avoid + RT_SLOTS * 8).  */
static uint64_t zero_array(uint64_t avoid)
{
	Elf64_Phdr *ph = phdrs();
	uint64_t need = RT_SLOTS * 8;
	for (unsigned p = 0; p < eh->e_phnum; p++) {
		if (ph[p].p_type != PT_LOAD || ph[p].p_offset + ph[p].p_filesz > img_len)
			continue;
		const uint8_t *d = img + ph[p].p_offset;
		uint64_t run = 0;
		for (uint64_t off = 0; off + 64 <= ph[p].p_filesz; off += 64) {
			int zero = 1;
			for (int b = 0; b < 64 && zero; b++)
				zero = !d[off + b];
			run = zero ? run + 64 : 0;
			uint64_t start = ph[p].p_vaddr + off + 64 - run;
			if (run >= need && (start + need <= avoid ||
					    start >= avoid + need))
				return start;
		}
	}
	die("corecraft", "no 2 MiB of zeros in the core");
	return 0;
}

static void rtree_alias(int late)
{
	uint64_t leaf, i0;
	uint64_t root = find_root(&leaf, &i0);
	uint8_t *r = at_va(root, RT_SLOTS * 8);
	uint64_t first = 0;
	if (late) {
		if (i0 < 63)
			die("corecraft", "the real slot is too low for rtree-alias-late");
		uint64_t z = zero_array(root);
		for (uint64_t s = i0 - 63; s < i0; s++)
			memcpy(r + 8 * s, &z, 8);
		first = i0 + 1;
	}
	uint64_t n = 0;
	for (uint64_t s = first; s < RT_SLOTS; s++) {
		uint64_t v;
		memcpy(&v, r + 8 * s, 8);
		/* Late: the real slots after i0 keep their leaves.  */
		if (late && v)
			continue;
		memcpy(r + 8 * s, &leaf, 8);
		n++;
	}
	printf("%s: root at 0x%llx, real leaf 0x%llx at slot %llu; %llu "
	       "slots from %llu on now alias it\n", late ? "rtree-alias-late" :
	       "rtree-alias", (unsigned long long)root,
	       (unsigned long long)leaf, (unsigned long long)i0,
	       (unsigned long long)n, (unsigned long long)first);
}

/* ---- in and out -------------------------------------------------------- */

static void load(const char *path)
{
	FILE *f;
	Elf64_Ehdr h;
	uint64_t size;
	free(core_open(path, "rb", &f, &h, &size));
	img_cap = size + 4096;
	img = xrealloc(NULL, img_cap);
	rewind(f);
	if (fread(img, 1, size, f) != size)
		die(path, "cannot read");
	fclose(f);
	img_len = size;
	eh = (Elf64_Ehdr *)img;
}

/* Write the image, leaving 4 KiB runs of zeros as holes.  */
static void save(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path, strerror(errno));
	static const uint8_t zero[4096];
	for (uint64_t off = 0; off < img_len; off += 4096) {
		uint64_t n = img_len - off < 4096 ? img_len - off : 4096;
		if (n == 4096 && !memcmp(img + off, zero, 4096)) {
			if (lseek(fd, 4096, SEEK_CUR) < 0)
				die(path, strerror(errno));
			continue;
		}
		if (write(fd, img + off, n) != (ssize_t)n)
			die(path, "short write");
	}
	if (ftruncate(fd, (off_t)img_len) || close(fd))
		die(path, strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: corecraft MODE IN OUT [N]\n");
		return 2;
	}
	const char *mode = argv[1];
	uint64_t n = 0;
	int have_n = argc == 5;
	if (have_n) {
		char *end;
		errno = 0;
		n = strtoull(argv[4], &end, 0);
		if (errno || *end || end == argv[4]) {
			fprintf(stderr, "corecraft: bad N '%s'\n", argv[4]);
			return 2;
		}
	}
	load(argv[2]);
	if (!strcmp(mode, "huge-memsz"))
		huge_memsz(have_n ? (int)n : -1, 0x10000000000ull);
	else if (!strcmp(mode, "vast-memsz"))
		huge_memsz(have_n ? (int)n : -1, 0x400000000000ull);
	else if (!strcmp(mode, "escape-names"))
		escape_names();
	else if (!strcmp(mode, "junk-regs"))
		junk_regs();
	else if (!strcmp(mode, "many-threads") && have_n)
		many_threads(n);
	else if (!strcmp(mode, "many-files") && have_n)
		many_files(n);
	else if (!strcmp(mode, "xnum") && have_n)
		xnum(n, 0);
	else if (!strcmp(mode, "xnum-distinct") && have_n)
		xnum(n, 1);
	else if (!strcmp(mode, "rtree-alias"))
		rtree_alias(0);
	else if (!strcmp(mode, "rtree-alias-late"))
		rtree_alias(1);
	else {
		fprintf(stderr, "corecraft: unknown mode '%s' (or N missing)\n",
			mode);
		return 2;
	}
	save(argv[3]);
	return 0;
}
