/* identity.c - which core a record is of.  A fleet's cores are told
 * apart by what they say of themselves, never by where they lie: the
 * process's pid, uid and command line (NT_PRPSINFO), its executable and
 * build-id (the module libdwfl reported from the core), and, for a core
 * systemd-coredump stored, the name it gave the file
 * (core.COMM.UID.BOOTID.PID.USEC, COMM with '.', '/' and ' ' written
 * \xNN) and the user.coredump.* attributes it set on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

#include "../alloc/module.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "identity.h"

/* NT_PRPSINFO of an LP64 process (x86_64, aarch64; the kernel's, gdb's
   and qemu-user's alike): pr_flag at 8, pr_uid, pr_gid, pr_pid, pr_ppid
   at 16 to 28, pr_fname[16] at 40, pr_psargs[80] at 56.  */
#define PSINFO_LEN 136

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* A fixed-size field of the core's as a string: up to the first NUL,
   each byte outside printable ASCII a '?' (a record is UTF-8 JSON and
   the bytes are the process's).  */
static void field(char *out, const uint8_t *in, size_t len)
{
	size_t i;
	for (i = 0; i < len && in[i]; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? (char)in[i] : '?';
	out[i] = '\0';
	while (i > 0 && out[i - 1] == ' ')
		out[--i] = '\0';
}

static void read_psinfo(const struct hw_target *t, struct hw_identity *id)
{
	const uint8_t *p = t->psinfo;
	if (!p || t->psinfo_len < PSINFO_LEN)
		return;
	id->has_psinfo = true;
	id->uid = le32(p + 16);
	id->gid = le32(p + 20);
	id->pid = (int32_t)le32(p + 24);
	id->ppid = (int32_t)le32(p + 28);
	field(id->fname, p + 40, 16);
	field(id->args, p + 56, 80);
}

const char *hw_build_id_of(struct hw_session *s, const char *path, char *buf)
{
	uint64_t lo, hi;
	struct hw_module m;
	buf[0] = '\0';
	if (!path || !s->syms || !hw_file_range(s->target, path, &lo, &hi) ||
	    !hw_syms_module_at(s->syms, lo, &m) || m.build_id_len <= 0)
		return buf;
	int n = m.build_id_len > 64 ? 64 : m.build_id_len;
	for (int i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", m.build_id[i]);
	return buf;
}

/* "core.COMM.UID.BOOTID.PID.USEC" (and a compressor's suffix): the
   fields, COMM unescaped.  False for any other name.  */
static bool parse_coredump_name(const char *path, struct hw_identity *id)
{
	const char *base = hw_base_name(path);
	char part[5][128];
	size_t n = 0;
	if (strncmp(base, "core.", 5) != 0)
		return false;
	for (const char *p = base + 5; *p && n < 5; n++) {
		size_t len = strcspn(p, ".");
		if (len >= sizeof part[0])
			return false;
		memcpy(part[n], p, len);
		part[n][len] = '\0';
		p += len;
		if (*p == '.')
			p++;
		if (n == 4) {
			if (*p && strcmp(p, "zst") && strcmp(p, "xz") &&
			    strcmp(p, "lz4") && strcmp(p, "gz"))
				return false;
			n++;
			break;
		}
	}
	if (n != 5)
		return false;
	char *end;
	unsigned long long uid = strtoull(part[1], &end, 10);
	if (!part[1][0] || *end || uid > 0xffffffffull)
		return false;
	long long pid = strtoll(part[3], &end, 10);
	if (!part[3][0] || *end || pid <= 0 || pid > 0x7fffffff)
		return false;
	long long usec = strtoll(part[4], &end, 10);
	if (!part[4][0] || *end || usec <= 0)
		return false;
	if (strlen(part[2]) != 32 || strspn(part[2], "0123456789abcdef") != 32)
		return false;
	/* COMM: \xNN back to its byte; a byte that is no printable ASCII
	   becomes '?', as in field().  */
	size_t o = 0;
	for (const char *c = part[0]; *c && o + 1 < sizeof id->cd_comm; c++) {
		unsigned v;
		if (c[0] == '\\' && c[1] == 'x' && sscanf(c + 2, "%2x", &v) == 1 &&
		    c[2] && c[3]) {
			id->cd_comm[o++] = v >= 0x20 && v < 0x7f ? (char)v : '?';
			c += 3;
		} else {
			id->cd_comm[o++] = *c;
		}
	}
	id->cd_comm[o] = '\0';
	id->cd_uid = (uint32_t)uid;
	memcpy(id->cd_boot_id, part[2], 33);
	id->cd_pid = (int32_t)pid;
	id->cd_usec = usec;
	id->coredump_name = true;
	return true;
}

/* user.coredump.NAME of path as a string (printable ASCII kept), or
   false.  */
static bool attr(const char *path, const char *name, char *out, size_t len)
{
	char key[64], raw[1024];
	snprintf(key, sizeof key, "user.coredump.%s", name);
	ssize_t n = getxattr(path, key, raw, sizeof raw - 1);
	if (n <= 0 || len == 0)
		return false;
	size_t m = (size_t)n < len - 1 ? (size_t)n : len - 1;
	field(out, (const uint8_t *)raw, m);
	return out[0] != '\0';
}

void hw_identity_get(struct hw_session *s, const char *path,
		     struct hw_identity *id)
{
	memset(id, 0, sizeof *id);
	const struct hw_target *t = s->target;
	read_psinfo(t, id);
	id->has_pid = id->has_psinfo;
	if (!id->has_pid && t->live) {   /* a live process: its own */
		id->pid = t->live->pid;
		id->has_pid = true;
	}
	id->exe = s->exe ? s->exe : t->exe;
	hw_build_id_of(s, t->exe, id->exe_build_id);
	if (!path)
		return;
	struct stat st;
	if (stat(path, &st) == 0) {
		id->has_stat = true;
		id->size = (uint64_t)st.st_size;
		id->mtime_usec = (int64_t)st.st_mtim.tv_sec * 1000000 +
				 st.st_mtim.tv_nsec / 1000;
		id->time_usec = id->mtime_usec;
		id->time_from = "file mtime";
	}
	parse_coredump_name(path, id);
	char v[64];
	char *end;
	if (attr(path, "timestamp", v, sizeof v)) {
		long long usec = strtoll(v, &end, 10);
		if (!*end && usec > 0 && !id->coredump_name)
			id->cd_usec = usec;
	}
	attr(path, "hostname", id->cd_hostname, sizeof id->cd_hostname);
	attr(path, "exe", id->cd_exe, sizeof id->cd_exe);
	if (id->cd_usec) {
		id->time_usec = id->cd_usec;
		id->time_from = "systemd-coredump";
	}
}

const char *hw_iso_time(int64_t usec, char *buf, size_t len)
{
	time_t sec = (time_t)(usec / 1000000);
	struct tm tm;
	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "?");
		return buf;
	}
	char day[40];
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06lldZ", day, (long long)(usec % 1000000));
	return buf;
}
