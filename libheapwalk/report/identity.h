/* identity.h - which core this is, for a record that stands among
 * thousands (triage): the file, the process (NT_PRPSINFO), its program
 * and build-id, and what systemd-coredump said of it in the file's name
 * and extended attributes (report/identity.c).
 */
#ifndef HW_REPORT_IDENTITY_H
#define HW_REPORT_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "../session/session.h"

struct hw_identity {
	/* The file.  */
	bool has_stat;
	uint64_t size;
	int64_t mtime_usec;
	/* NT_PRPSINFO: the process as the kernel (or gdb, or qemu) saw
	   it.  */
	bool has_psinfo;
	bool has_pid;             /* NT_PRPSINFO's, or a live process's */
	int32_t pid, ppid;
	uint32_t uid, gid;
	char fname[17];           /* the command name (comm), 15 bytes */
	char args[81];            /* its first 80 bytes of arguments */
	/* The executable: its path as the core names it, its build-id.  */
	const char *exe;
	char exe_build_id[129];   /* lower-case hex, "" when unknown */
	/* systemd-coredump: core.COMM.UID.BOOTID.PID.USEC[.zst|.xz|.lz4]
	   and the user.coredump.* attributes it sets.  */
	bool coredump_name;
	char cd_comm[64];
	uint32_t cd_uid;
	char cd_boot_id[33];
	int32_t cd_pid;
	int64_t cd_usec;
	char cd_hostname[256];    /* "" when the attribute is not there */
	char cd_exe[512];
	/* When the process died, as well as the core tells it: the file
	   name's or attribute's time, else the file's mtime.  */
	int64_t time_usec;
	const char *time_from;    /* "systemd-coredump", "file mtime", or
				     NULL when neither is known */
};

/* Fill id for s's target; `path` is the core file as given (NULL for a
   process: then only the process's parts are filled).  */
void hw_identity_get(struct hw_session *s, const char *path,
		     struct hw_identity *id);

/* The build-id of the module mapped from file `path` in s's target, as
   lower-case hex in buf (>= 129 bytes); "" when unknown.  */
const char *hw_build_id_of(struct hw_session *s, const char *path, char *buf);

/* usec since the epoch as "2026-11-29T12:00:00.123456Z" (buf >= 32).  */
const char *hw_iso_time(int64_t usec, char *buf, size_t len);

#endif /* HW_REPORT_IDENTITY_H */
