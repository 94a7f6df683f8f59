/* ctrlc.c - see ctrlc.h.  A signal handler has only globals to reach:
 * these are the plugin's (one gdb, one request at a time), never the
 * library's.
 */
#include <string.h>

#include "ctrlc.h"

static volatile sig_atomic_t seen;
static volatile sig_atomic_t pass_to_gdb;
static struct sigaction gdbs;      /* gdb's handler, while ours stands */
static bool watching;

static void on_sigint(int sig, siginfo_t *info, void *uc)
{
	seen = 1;
	if (!pass_to_gdb)
		return;
	if (gdbs.sa_flags & SA_SIGINFO) {
		if (gdbs.sa_sigaction)
			gdbs.sa_sigaction(sig, info, uc);
	} else if (gdbs.sa_handler != SIG_IGN && gdbs.sa_handler != SIG_DFL &&
		   gdbs.sa_handler) {
		gdbs.sa_handler(sig);
	}
}

const volatile sig_atomic_t *ctrlc_watch(bool pass_on)
{
	seen = 0;
	pass_to_gdb = pass_on;
	/* gdb ignoring SIGINT (not a terminal's) stays so.  */
	if (!watching && sigaction(SIGINT, NULL, &gdbs) == 0 &&
	    (gdbs.sa_flags & SA_SIGINFO || gdbs.sa_handler != SIG_IGN)) {
		/* gdb's flags and mask, so that its system calls are
		   interrupted or restarted as it set them to be.  */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigint;
		sa.sa_flags = (gdbs.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
		sa.sa_mask = gdbs.sa_mask;
		if (sigaction(SIGINT, &sa, NULL) == 0)
			watching = true;
	}
	return &seen;
}

bool ctrlc_unwatch(void)
{
	if (watching) {
		/* Unless gdb put a handler of its own in meanwhile.  */
		struct sigaction now;
		if (sigaction(SIGINT, NULL, &now) == 0 &&
		    (now.sa_flags & SA_SIGINFO) &&
		    now.sa_sigaction == on_sigint)
			sigaction(SIGINT, &gdbs, NULL);
		watching = false;
	}
	return seen != 0;
}
