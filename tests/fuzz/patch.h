/* patch.h - the patched-core harnesses (fuzz-ptmalloc, fuzz-jemalloc):
 * one valid corpus core, and each input a list of byte patches to apply
 * inside chosen parts of it (the allocator's memory), so that the search
 * spends its time in the walkers rather than being refused at the ELF
 * header.
 *
 * Set-up (tests/fuzz/run.sh writes both next to the binary):
 *   NAME.core    the core (or the file $HW_FUZZ_CORE names)
 *   NAME.ranges  (or $HW_FUZZ_RANGES) where patches may go, one range a
 *                line: "FILEOFF LEN" in hex (0x...), then a comment (what
 *                the range holds); at most MAX_RANGES.  A range whose
 *                comment is the word "phdrs" is the core's program
 *                header table: a patch there starts on an 8-byte
 *                boundary, so that it lands on a field (p_offset,
 *                p_vaddr, p_filesz, p_memsz, ...: all 8-aligned in an
 *                ELF64 table of 56-byte entries) rather than across two
 *                of them
 *
 * Input format (anything decodes; what is short is cut):
 *   byte 0       flags: bit 0 = JSON output
 *   then patches, each
 *     1 byte     which range (modulo the number of ranges)
 *     4 bytes    offset in it, little-endian (modulo its length)
 *     1 byte     length - 1 (low 6 bits: 1..64 bytes)
 *     LEN bytes  the new bytes (cut at the range's end)
 * Choosing the range by index gives the small ranges (libc's data, where
 * main_arena and mp_ are) the same weight as a megabyte of heap.
 *
 * Patching the memory alone never reaches what the walkers trust the
 * program headers for: how far a segment goes.  The hangs of round 3
 * (mallocng's context scan over a p_memsz of 64 TiB, tcmalloc's .bss of
 * 1 TiB) were found by hand; the "phdrs" range lets the search make
 * their like, a p_memsz of 2^40 being one dictionary word.
 */
#ifndef HW_FUZZ_PATCH_H
#define HW_FUZZ_PATCH_H

#include <inttypes.h>
#include <limits.h>

#include "fuzz.h"

#define MAX_RANGES 64
#define MAX_PATCHES 64

/* A whole file into memory (the pristine core, the ranges).  */
static uint8_t *fuzz_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fuzz_die("cannot open", path);
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap + 1);
	for (;;) {
		if (!buf)
			fuzz_die("out of memory reading", path);
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		buf = realloc(buf, cap + 1);
	}
	if (ferror(f))
		fuzz_die("cannot read", path);
	fclose(f);
	buf[n] = 0; /* text files read as strings */
	*len = n;
	return buf;
}

struct patch_range {
	uint64_t off, len;
	bool fields;    /* the program headers: patches 8-byte aligned */
};

static uint8_t *pristine;    /* the core as set up */
static size_t pristine_len;
static struct patch_range ranges[MAX_RANGES];
static unsigned nranges;

/* Load the core into the memfd and read the ranges; called from
   LLVMFuzzerInitialize.  */
static void patch_setup(void)
{
	const char *core = fuzz_setup_path("HW_FUZZ_CORE", ".core");
	pristine = fuzz_slurp(core, &pristine_len);
	fuzz_memfd();
	fuzz_pwrite(pristine, pristine_len, 0);

	const char *rpath = fuzz_setup_path("HW_FUZZ_RANGES", ".ranges");
	size_t tlen;
	char *text = (char *)fuzz_slurp(rpath, &tlen);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t off, len;
		char what[16] = "";
		if (line[0] == '#' ||
		    sscanf(line, "%" SCNx64 " %" SCNx64 " %15s", &off, &len,
			   what) < 2)
			continue;
		if (len == 0 || off > pristine_len || len > pristine_len - off)
			fuzz_die("a range lies outside the core", line);
		if (nranges == MAX_RANGES)
			fuzz_die("too many ranges in", rpath);
		ranges[nranges].off = off;
		ranges[nranges].len = len;
		ranges[nranges].fields = !strcmp(what, "phdrs");
		nranges++;
	}
	free(text);
	if (!nranges)
		fuzz_die("no ranges in", rpath);
}

struct patch {
	uint64_t off;
	size_t len;
};

/* Apply the input's patches to the memfd; fill done[] with where they
   went (to be undone); return how many; *json from the flags.  */
static size_t patch_apply(const uint8_t *data, size_t size,
			  struct patch done[MAX_PATCHES], bool *json)
{
	size_t n = 0, i = 1;
	*json = size > 0 && (data[0] & 1);
	while (n < MAX_PATCHES && size > i && size - i >= 7) {
		const struct patch_range *r = &ranges[data[i] % nranges];
		uint32_t off32 = (uint32_t)data[i + 1] | (uint32_t)data[i + 2] << 8 |
				 (uint32_t)data[i + 3] << 16 |
				 (uint32_t)data[i + 4] << 24;
		uint64_t off = off32 % r->len;
		if (r->fields)
			off &= ~(uint64_t)7;
		size_t len = (size_t)(data[i + 5] & 63) + 1;
		i += 6;
		if (len > size - i)
			len = size - i;
		if (len > r->len - off)
			len = (size_t)(r->len - off);
		fuzz_pwrite(data + i, len, r->off + off);
		done[n].off = r->off + off;
		done[n].len = len;
		n++;
		i += len;
	}
	return n;
}

/* Put the pristine bytes back where patches went.  */
static void patch_undo(const struct patch *done, size_t n)
{
	for (size_t k = 0; k < n; k++)
		fuzz_pwrite(pristine + done[k].off, done[k].len, done[k].off);
}

/* HW_FUZZ_SAVE=FILE: write the patched core to FILE, a reproducer that
   needs neither this harness nor the set-up core (tests/fuzz/regress/
   keeps findings so: run.sh replays them as the harness's core).  */
static void patch_save(const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		fuzz_die("cannot create", path);
	uint8_t *buf = malloc(pristine_len ? pristine_len : 1);
	if (!buf || pread(fuzz_fd, buf, pristine_len, 0) != (ssize_t)pristine_len ||
	    fwrite(buf, 1, pristine_len, f) != pristine_len || fclose(f) != 0)
		fuzz_die("cannot write", path);
	free(buf);
	fprintf(stderr, "fuzz harness: patched core saved as %s\n", path);
}

/* The address '@' stands for in a command (chunk @, view @ 8, chunks
   --around @ 5: the walks around one address): a block the truth knows
   in the middle of its list (`alloc` or `obj` lines: a user address),
   "" when there is no truth beside the harness (then those commands are
   left out).  */
static char patch_addr[32];

/* Is this truth line a block, and its user address?  */
static bool patch_truth_block(const char *line, char a[32])
{
	char kw[8];
	return sscanf(line, "%7s %31s", kw, a) == 2 &&
	       (!strcmp(kw, "alloc") || !strcmp(kw, "obj")) &&
	       !strncmp(a, "0x", 2);
}

static void patch_find_addr(void)
{
	const char *path = fuzz_setup_path("HW_FUZZ_TRUTH", ".truth");
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512], a[32];
	size_t n = 0, k = 0;
	while (fgets(line, sizeof line, f))
		n += patch_truth_block(line, a);
	rewind(f);
	while (n && fgets(line, sizeof line, f))
		if (patch_truth_block(line, a) && k++ == n / 2) {
			memcpy(patch_addr, a, sizeof patch_addr);
			break;
		}
	fclose(f);
	if (patch_addr[0])
		fprintf(stderr, "fuzz harness: '@' in a command is %s (the "
			"truth's block %zu of %zu)\n", patch_addr, n / 2 + 1, n);
}

/* cmd with '@' replaced by patch_addr into buf; NULL when it needs an
   address there is none of.  */
static const char *patch_cmd(const char *cmd, char *buf, size_t len)
{
	const char *at = strchr(cmd, '@');
	if (!at)
		return cmd;
	if (!patch_addr[0])
		return NULL;
	snprintf(buf, len, "%.*s%s%s", (int)(at - cmd), cmd, patch_addr,
		 at + 1);
	return buf;
}

/* One input: patch, run the commands, restore.  */
static void patch_run(const uint8_t *data, size_t size,
		      const char *const *cmds, size_t ncmds)
{
	struct patch done[MAX_PATCHES];
	bool json;
	size_t n = patch_apply(data, size, done, &json);
	const char *save = getenv("HW_FUZZ_SAVE");
	if (save && *save)
		patch_save(save);
	const char *run[32];
	char bufs[32][128];
	size_t nrun = 0;
	for (size_t i = 0; i < ncmds && nrun < 32; i++)
		if ((run[nrun] = patch_cmd(cmds[i], bufs[nrun],
					   sizeof bufs[nrun])))
			nrun++;
	fuzz_run(run, nrun, json);
	patch_undo(done, n);
}

/* A patch harness's two entry points: set up once, then run the
   commands given (the strings of a command line) on every input.  */
#define PATCH_FUZZER(...)						\
	int LLVMFuzzerInitialize(int *argc, char ***argv)		\
	{								\
		(void)argc;						\
		(void)argv;						\
		patch_setup();						\
		patch_find_addr();					\
		return 0;						\
	}								\
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)	\
	{								\
		static const char *const cmds[] = { __VA_ARGS__ };	\
		patch_run(data, size, cmds, sizeof cmds / sizeof cmds[0]); \
		return 0;						\
	}

#endif /* HW_FUZZ_PATCH_H */
