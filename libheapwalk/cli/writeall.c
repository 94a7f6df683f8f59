/* writeall.c - every byte to a file descriptor, or why not.  */
#include <errno.h>
#include <unistd.h>

#include "writeall.h"

int hw_write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}
