/* cachetrust.c - may the layout cache's directory be believed?
 *
 * The layout cache (layoutcache.c) is read as the truth about a debug
 * file: a wrong line makes every command walk a wrong layout.  Its
 * directory comes from the environment (HEAPWALK_CACHE_DIR,
 * XDG_CACHE_HOME, HOME), which sudo and su may carry over from another
 * user; root following that user's directory, or a symlink the user
 * planted, would read what the user wrote and write where the user
 * chose.  So the directory is held to what OpenSSH asks of ~/.ssh: the
 * cache directory and its layouts/ are ours and writable by us alone,
 * and nobody but us or root could rename anything on the way to them.
 *
 * The way is checked on the directory's real path (symlinks resolved:
 * a link is as safe as what it leads to, since every directory it
 * passes through is checked), from "/" down.  A directory others may
 * write is allowed on the way only with the sticky bit and root as its
 * owner (/tmp): there, others cannot rename or remove what is ours.
 * Whatever fails, the cache is not used, and why is said.
 */
#define _XOPEN_SOURCE 700 /* realpath, lstat, PATH_MAX */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym-private.h"

/* Could someone other than uid or root change what st names?  */
static bool others_may_change(const struct stat *st, uid_t uid)
{
	if (st->st_uid != uid && st->st_uid != 0)
		return true;
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return false;
	/* Sticky and root's: others add their own names, never ours.  */
	return !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) &&
		 st->st_uid == 0);
}

/* Every directory from "/" down to real (a real path) itself, when
   upto_self, or to its parent: none that others may change.  */
static bool way_is_safe(const char *real, bool upto_self, uid_t uid,
			char *why, size_t n)
{
	char path[PATH_MAX];
	size_t len = strlen(real);
	if (len == 0 || len >= sizeof path) {
		snprintf(why, n, "a cache directory path too long");
		return false;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i < len ? real[i] != '/' : !upto_self)
			continue;
		size_t plen = i ? i : 1;      /* "/" itself first */
		memcpy(path, real, plen);
		path[plen] = '\0';
		struct stat st;
		if (lstat(path, &st) != 0) {
			snprintf(why, n, "%s: %s", path, strerror(errno));
			return false;
		}
		if (others_may_change(&st, uid)) {
			if (st.st_uid != uid && st.st_uid != 0)
				snprintf(why, n, "%s is uid %ju's, who could "
					 "change what lies below it", path,
					 (uintmax_t)st.st_uid);
			else
				snprintf(why, n, "%s may be written by others "
					 "(mode %03o)", path,
					 (unsigned)(st.st_mode & 0777));
			return false;
		}
	}
	return true;
}

/* Is dir itself a directory ours alone to write?  follow: dir may be a
   symbolic link to one (its way was checked on its real path).  */
static bool dir_is_ours(const char *dir, uid_t uid, bool follow, char *why,
			size_t n)
{
	struct stat st;
	if ((follow ? stat(dir, &st) : lstat(dir, &st)) != 0) {
		snprintf(why, n, "%s: %s", dir, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, n, "%s is %s", dir, S_ISLNK(st.st_mode)
			 ? "a symbolic link" : "not a directory");
		return false;
	}
	if (st.st_uid != uid) {
		snprintf(why, n, "%s is owned by uid %ju, not by this user "
			 "(uid %ju)", dir, (uintmax_t)st.st_uid,
			 (uintmax_t)uid);
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, n, "%s may be written by others (mode %03o)",
			 dir, (unsigned)(st.st_mode & 0777));
		return false;
	}
	return true;
}

/* Make what is missing of dir (0700 each, as the XDG base directory
   rules ask of ~/.cache), but only below a directory already there that
   nobody else may change: never a directory of ours in another's.  */
static bool make_missing(const char *dir, uid_t uid, char *why, size_t n)
{
	char path[PATH_MAX], real[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path) {
		snprintf(why, n, "a cache directory path too long");
		return false;
	}
	/* The longest part of dir that is there.  */
	size_t have = strlen(path);
	while (realpath(path, real) == NULL) {
		char *slash = strrchr(path, '/');
		if (errno != ENOENT || slash == NULL || slash == path) {
			snprintf(why, n, "%s: %s", path, strerror(errno));
			return false;
		}
		*slash = '\0';
	}
	have = strlen(path);
	if (dir[have] == '\0')
		return true;
	if (!way_is_safe(real, true, uid, why, n))
		return false;
	snprintf(path, sizeof path, "%s", dir);
	for (char *slash = strchr(path + have + 1, '/');;
	     slash = strchr(slash + 1, '/')) {
		if (slash)
			*slash = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			snprintf(why, n, "%s: %s", path, strerror(errno));
			return false;
		}
		if (!slash)
			return true;
		*slash = '/';
	}
}

bool hw_cache_dir_trusted(const char *dir, char *why, size_t n)
{
	uid_t uid = geteuid();
	char layouts[PATH_MAX], real[PATH_MAX], cwd[PATH_MAX];
	/* A relative directory is taken from where the user stands.  */
	if (dir[0] != '/' && getcwd(cwd, sizeof cwd) == NULL) {
		snprintf(why, n, "%s: %s", dir, strerror(errno));
		return false;
	}
	if ((size_t)snprintf(layouts, sizeof layouts, "%s%s%s/layouts",
			     dir[0] == '/' ? "" : cwd,
			     dir[0] == '/' ? "" : "/", dir) >=
	    sizeof layouts) {
		snprintf(why, n, "a cache directory path too long");
		return false;
	}
	if (!make_missing(layouts, uid, why, n))
		return false;
	if (realpath(dir, real) == NULL) {
		snprintf(why, n, "%s: %s", dir, strerror(errno));
		return false;
	}
	/* layouts/ is taken as it is, never through a link.  */
	if ((size_t)snprintf(layouts, sizeof layouts, "%s/layouts", real) >=
	    sizeof layouts) {
		snprintf(why, n, "a cache directory path too long");
		return false;
	}
	return way_is_safe(real, false, uid, why, n) &&
	       dir_is_ours(real, uid, true, why, n) &&
	       dir_is_ours(layouts, uid, false, why, n);
}

bool hw_cache_file_trusted(const struct stat *st, char *why, size_t n)
{
	uid_t uid = geteuid();
	if (!S_ISREG(st->st_mode))
		snprintf(why, n, "not a regular file");
	else if (st->st_uid != uid)
		snprintf(why, n, "owned by uid %ju, not by this user (uid "
			 "%ju)", (uintmax_t)st->st_uid, (uintmax_t)uid);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, n, "may be written by others (mode %03o)",
			 (unsigned)(st->st_mode & 0777));
	else
		return true;
	return false;
}
