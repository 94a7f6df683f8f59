/* writeall.h - writing every byte to a file descriptor (cli/writeall.c),
 * for the tool's output and triage's pipes.
 */
#ifndef HW_CLI_WRITEALL_H
#define HW_CLI_WRITEALL_H

#include <stddef.h>

/* Write len bytes at data to fd, again after EINTR and short writes.
   0 when all were written, else the errno that stopped it (EIO for a
   write that wrote nothing).  */
int hw_write_all(int fd, const char *data, size_t len);

#endif /* HW_CLI_WRITEALL_H */
