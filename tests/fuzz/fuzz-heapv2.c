/* fuzz-heapv2 - libFuzzer harness for the heap_v2 reader of
 * `prof --base FILE` (commands/prof/base.c): the input is the base file,
 * the newer snapshot a valid jemalloc 5.3 core with profiling on (the
 * corpus's prof1; tests/fuzz/run.sh leaves it as fuzz-heapv2.core, or
 * $HW_FUZZ_CORE names it).
 *
 * The base file's addresses are moved into the core's address space
 * through its MAPPED_LIBRARIES and symbolized with the core's modules,
 * its counts scaled by its sample period, and its stacks subtracted from
 * the core's: the text report and the collapsed stacks are asked for,
 * the text one also as JSON when the input's length is odd (the
 * renderers' handling of negative growth).
 *
 * The core is read once: one session, opened at start-up, runs every
 * input's commands (as the gdb plugin's session would run one command
 * after the other); only the base changes.  The base is not written to
 * disk but to a memfd, a regular file the library opens by its
 * /proc/self/fd path like any user-given one, which vanishes with the
 * process whatever way it ends (nothing left in a temp dir after a
 * crash, nothing shared between two fuzzers running at once).
 */

#include "fuzz.h"

static hw_session *session;
static char cmd_text[128], cmd_collapsed[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *path = fuzz_setup_path("HW_FUZZ_CORE", ".core");
	session = fuzz_open(path);
	if (!session)
		fuzz_die("cannot open the set-up core", path);
	fuzz_memfd();
	snprintf(cmd_text, sizeof cmd_text, "prof --base %s", fuzz_path);
	snprintf(cmd_collapsed, sizeof cmd_collapsed,
		 "prof --collapsed --base %s", fuzz_path);
	/* The profile and the symbols are read once, here, so that the
	   first input does not look as though it leaked them.  */
	fuzz_run_one(session, "prof", false);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ftruncate(fuzz_fd, 0) != 0)
		fuzz_die("ftruncate failed", strerror(errno));
	fuzz_pwrite(data, size, 0);
	fuzz_run_one(session, cmd_text, false);
	fuzz_run_one(session, cmd_collapsed, false);
	if (size & 1)
		fuzz_run_one(session, cmd_text, true);
	return 0;
}
