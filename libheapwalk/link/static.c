/* static.c - hw_session_run() as a static link, and the gdb plugin,
 * take it: one version, the header's.
 *
 * The shared library exports every version of it instead (shared.c) and
 * is linked without this file: a versioned symbol in libheapwalk.a
 * would need the library's version nodes in every program and plugin
 * linking it.
 */
#include "../session/session.h"

enum hw_status hw_session_run(hw_session *s, int argc, char *const argv[],
			      const struct hw_output *out)
{
	return hw_command_run(s, argc, argv, out);
}
