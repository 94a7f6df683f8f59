/* fuzz-unpack - libFuzzer harness for the unpacking of compressed cores
 * (libheapwalk/target/unpack.c and its decoders unpack-zstd.c,
 * unpack-xz.c, unpack-gzip.c, unpack-lz4.c, unpack-lz4legacy.c; the
 * format told by magic bytes, compressed.c): the input is a compressed
 * core, opened as heapwalk opens a user's core.zst, then `summary`.
 *
 * fuzz-core has compressed seeds too, but mutates its inputs as cores:
 * its mutator aims at an ELF head that a compressed stream does not
 * have.  Here libFuzzer's own mutations work on the stream itself: frame
 * and block headers, sizes a frame claims, skippable frames, streams
 * cut short or concatenated, what they decode to.  What unpack.c must
 * hold against all of them: no crash, no read past a buffer, no leak,
 * and a bound on what it stores (the options fuzz.h opens with keep the
 * memfd to 256 MiB of data and 512 MiB in all, zeros included).
 *
 * Seeds (tests/fuzz/run.sh): the slim bins1 core packed by each packer
 * the machine has, without the checksums the tools add by default (a
 * checksum would refuse nearly every mutation at the stream's end,
 * after all the work, without the search seeing why), and as two
 * concatenated frames.  A frame that claims an unbounded size of zeros
 * is known to be refused only after seconds (unpack.c's bound is on what
 * is stored, not on the time spent decoding zeros): run.sh gives this
 * harness a timeout of 30 s rather than 10 for it.
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_memfd();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cmds[] = { "summary" };
	if (ftruncate(fuzz_fd, 0) != 0)
		fuzz_die("ftruncate failed", strerror(errno));
	fuzz_pwrite(data, size, 0);
	/* JSON when the length is odd: the unpacked core's strings reach
	   the renderer as any core's do.  */
	fuzz_run(cmds, 1, size & 1);
	return 0;
}
