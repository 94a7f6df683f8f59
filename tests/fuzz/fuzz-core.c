/* fuzz-core - libFuzzer harness for the ELF core reader: the input is a
 * whole core file.
 *
 * The library opens cores by path, so the input is written to a memfd
 * and opened as /proc/self/fd/N (the library gains nothing for fuzzing).
 * Each input runs `summary` (which needs the headers, program headers,
 * every note, the modules NT_FILE names and the allocator's roots),
 * `maps` (every region by what holds it), `leaks` (the root scan over
 * every region the core claims, and the marking) and `map` (the SVG), as
 * JSON when the last byte of e_ident (padding no reader looks at) is
 * odd, so that both renderers are exercised, reproducibly, and the JSON
 * is checked by the tests' strict parser.
 *
 * Seeds are slim cores (tests/tools/coreslim.c) of about a megabyte,
 * while what this harness is about -- the ELF header, the program
 * headers, the notes -- lies in their first pages.  libFuzzer mutates
 * anywhere in the input, so the custom mutator below aims its mutations
 * at the head: three in eight are structured (coremut.h: one field of a
 * program header or a note set to a hostile value, p_memsz 2^46, a
 * PT_LOAD aliasing another, an NT_FILE of 2^40 entries), three in eight
 * libFuzzer's own on the head (HEAD bytes) alone, the rest libFuzzer's
 * on the whole input.  The tail is kept as it was: the memory after the
 * notes still matches the program headers often enough for the walks
 * behind them to run.
 *
 * Run through tests/fuzz/run.sh (seeds, dictionary, -max_len).
 */
#include "coremut.h"
#include "fuzz.h"

#define HEAD (64u << 10)

/* Replace the memfd's whole content.  Successive inputs mostly differ
   in a few bytes of a megabyte: only the span between the first and the
   last difference from what the memfd holds (kept in fuzz_cur) is
   written.  */
static uint8_t *fuzz_cur;
static size_t fuzz_cur_len;

static void fuzz_set_core(const uint8_t *data, size_t size)
{
	size_t common = size < fuzz_cur_len ? size : fuzz_cur_len;
	size_t lo = 0, hi = common;
	while (lo < common && data[lo] == fuzz_cur[lo])
		lo++;
	while (hi > lo && data[hi - 1] == fuzz_cur[hi - 1])
		hi--;
	if (size != fuzz_cur_len) {
		uint8_t *nb = realloc(fuzz_cur, size ? size : 1);
		if (!nb)
			fuzz_die("out of memory", NULL);
		fuzz_cur = nb;
		if (ftruncate(fuzz_fd, (off_t)size) != 0)
			fuzz_die("ftruncate failed", strerror(errno));
		hi = size; /* the new tail too */
	}
	if (hi > lo) {
		fuzz_pwrite(data + lo, hi - lo, lo);
		memcpy(fuzz_cur + lo, data + lo, hi - lo);
	}
	fuzz_cur_len = size;
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_memfd();
	return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	unsigned int how = seed % 8;
	if (how >= 5 && cm_mutate(data, size, seed / 8))
		return size;
	if (size <= HEAD || how < 2)
		return LLVMFuzzerMutate(data, size, max_size);
	/* Mutate [0, HEAD) with the room the input has left to grow, then
	   put the saved tail back behind the head's new end.  The buffer is
	   kept: a fresh megabyte per mutation costs more page faults than
	   the run itself.  */
	static uint8_t *saved;
	static size_t saved_cap;
	size_t tail = size - HEAD;
	if (tail > saved_cap) {
		uint8_t *nb = realloc(saved, tail);
		if (!nb)
			return LLVMFuzzerMutate(data, size, max_size);
		saved = nb;
		saved_cap = tail;
	}
	memcpy(saved, data + HEAD, tail);
	size_t head = LLVMFuzzerMutate(data, HEAD, max_size - tail);
	memcpy(data + head, saved, tail);
	return head + tail;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cmds[] = { "summary", "maps", "leaks", "map" };
	fuzz_set_core(data, size);
	fuzz_run(cmds, sizeof cmds / sizeof cmds[0], size > 15 && data[15] & 1);
	return 0;
}
