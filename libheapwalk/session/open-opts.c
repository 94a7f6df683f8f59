/* open-opts.c - check the files and directories an open names, before
 * anything is opened.
 *
 * A misspelt --sysroot or --debug-dir would otherwise be searched in
 * vain, and the analysis would quietly run without the device's libraries
 * or debug info: a different and poorer result, with exit 0.  Naming the
 * bad path at once is what every user of such options expects.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "session.h"

static enum hw_status bad_path(struct hw_session *s, const char *opt,
			       const char *path, const char *why)
{
	return hw_error(s, HW_USAGE, "%s '%s': %s", opt, path, why);
}

/* path must exist and be a directory (want_dir) or a regular file.  */
static enum hw_status check_path(struct hw_session *s, const char *opt,
				 const char *path, bool want_dir)
{
	struct stat st;
	if (!path)
		return HW_OK;
	if (!*path)
		return bad_path(s, opt, path, "empty path");
	if (stat(path, &st) != 0)
		return bad_path(s, opt, path, strerror(errno));
	if (want_dir && !S_ISDIR(st.st_mode))
		return bad_path(s, opt, path, "not a directory");
	if (!want_dir && !S_ISREG(st.st_mode))
		return bad_path(s, opt, path, "not a regular file");
	return HW_OK;
}

enum hw_status hw_check_open_opts(struct hw_session *s)
{
	const struct hw_open_opts *o = &s->opts;
	enum hw_status st = check_path(s, "--exe", o->exe, false);
	if (st == HW_OK)
		st = check_path(s, "--sysroot", o->sysroot, true);
	for (size_t i = 0; st == HW_OK && i < o->n_debug_dirs; i++)
		st = check_path(s, "--debug-dir", o->debug_dirs[i], true);
	return st;
}
