/* openfile.c - open a file a user or a core names, never blocking.
 *
 * Every path heapwalk opens comes from outside: the command line, a
 * core's NT_FILE notes, a dynamic linker's link_map, a sysroot.  A FIFO
 * or a device there would make a plain open() wait for a writer, or a
 * read never end; only regular files are ever wanted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* O_CLOEXEC when built on its own (t0050) */
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target.h"

int hw_open_regular(const char *path)
{
	/* O_NONBLOCK: opening a FIFO for reading returns at once instead of
	   waiting for a writer (for a regular file it changes nothing).  */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

const char *hw_open_regular_why(const char *path, int err)
{
	struct stat st;
	if (err != EINVAL || stat(path, &st) != 0)
		return strerror(err);
	if (S_ISCHR(st.st_mode))
		return "a character device, not a file";
	if (S_ISBLK(st.st_mode))
		return "a block device, not a file";
	/* heapwalk maps the core: a stream must be saved first.  */
	if (S_ISFIFO(st.st_mode))
		return "a pipe, not a file (heapwalk maps the file: save the "
		       "stream to a file first)";
	if (S_ISSOCK(st.st_mode))
		return "a socket, not a file";
	return "not a regular file";
}
