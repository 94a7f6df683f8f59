/* layoutcache.c - struct layouts read from a separate debug file, kept on
 * disk so that the next run on the same library does not read its DWARF.
 *
 * libdw inflates every compressed debug section of a file when its DWARF
 * is first asked for: 70-80 ms for Debian's libc6-dbg, a fifth of a
 * `summary` of a 1.6 GiB core, spent for four struct layouts.  A user
 * analyses many cores of one build (one device firmware, one server
 * release), so the answers are kept, as gdb's index-cache keeps its
 * indexes, in one small text file per debug file:
 *
 *   DIR/layouts/BUILD-ID        (the module's build-id, in hex)
 *
 *   heapwalk struct layouts 1
 *   debug FILE SIZE MTIME.NS INODE
 *   TAG NEAR MEMBER,MEMBER,... = SIZEOF OFFSET OFFSET ...
 *   TAG NEAR MEMBER,... = none
 *
 * NEAR is the request's address in the file (the bias taken off), which
 * picks the compile unit.  The debug line names the file the answers
 * came from as it was then: a file replaced since (another size, time or
 * inode) voids them all.  Only answers DWARF gave are kept (found or
 * not); none is kept when the module has no separate debug file or no
 * build-id.  Whatever the file holds is checked before it is believed
 * (the line's request word for word, sizes and offsets in bounds); a
 * file that does not parse is as good as none and is written anew.
 * Writes go to a temporary file renamed over the old one, so a reader
 * never sees half of one; a directory that cannot be written leaves
 * every run reading DWARF, as without a cache.
 *
 * What parses may still be wrong.  The directory must be one no other
 * user could have written (cachetrust.c), and each file ours; and the
 * callers weigh the answers against what else they know (ptmalloc's
 * pm_settle against the built-in layout of the version) and, when they
 * disagree, make the module's answers be read again from DWARF
 * (hw_syms_layout_cache_forget).
 */
#define _XOPEN_SOURCE 700 /* strdup, O_CLOEXEC, PATH_MAX, st_mtim */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym-private.h"

#define CACHE_MAGIC "heapwalk struct layouts 1\n"
#define CACHE_MAX_BYTES (64u << 10)   /* a file past it is not read */
#define CACHE_MAX_SIZEOF (1u << 20)   /* no allocator struct is larger */
#define MAX_MEMBERS 64                /* members asked for in one request */

struct hw_layout_cache {
	Dwfl_Module *mod;
	char *path;       /* DIR/layouts/BUILD-ID */
	char *text;       /* the file's lines, the debug line first */
	size_t len;
};

/* The line naming mod's debug file as it is now; false when mod has no
   separate debug file (or it cannot be looked at).  */
static bool debug_line(Dwfl_Module *mod, char *line, size_t n)
{
	const char *debugfile = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	struct stat st;
	if (debugfile == NULL || debugfile[0] != '/' ||
	    strpbrk(debugfile, " \n") != NULL || stat(debugfile, &st) != 0)
		return false;
	int w = snprintf(line, n, "debug %s %jd %jd.%09ld %ju\n", debugfile,
			 (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
			 (long)st.st_mtim.tv_nsec, (uintmax_t)st.st_ino);
	return w > 0 && (size_t)w < n;
}

/* The whole file at path when it is small enough and begins with magic,
   NUL-terminated; NULL otherwise.  */
static char *read_cache_file(const char *path, size_t *len)
{
	/* O_NONBLOCK and a regular file only: a FIFO or a device put
	   there (by another user, or by mistake) must not block every
	   command.  */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	/* Nor is a file another user could have written read (root's,
	   left by a run under sudo, is made anew: the directory is ours).  */
	struct stat st;
	char why[160];
	if (fstat(fd, &st) != 0 || !hw_cache_file_trusted(&st, why,
							   sizeof why)) {
		close(fd);
		return NULL;
	}
	char *buf = malloc(CACHE_MAX_BYTES + 1);
	size_t got = 0;
	ssize_t r = 0;
	while (buf && got < CACHE_MAX_BYTES &&
	       (r = read(fd, buf + got, CACHE_MAX_BYTES - got)) > 0)
		got += (size_t)r;
	close(fd);
	if (!buf || r < 0 || got >= CACHE_MAX_BYTES ||
	    got < sizeof CACHE_MAGIC - 1 ||
	    memcmp(buf, CACHE_MAGIC, sizeof CACHE_MAGIC - 1) != 0) {
		free(buf);
		return NULL;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* Parse the values after a key: "none\n", or SIZEOF and nmembers offsets,
   each -1 or below SIZEOF.  */
static bool parse_answer(const char *p, size_t nmembers, bool *found,
			 int64_t *offsets, uint64_t *size)
{
	if (strncmp(p, "none\n", 5) == 0) {
		*found = false;
		return true;
	}
	char *end;
	errno = 0;
	unsigned long long sz = strtoull(p, &end, 10);
	if (errno || end == p || *end != ' ' || sz > CACHE_MAX_SIZEOF)
		return false;
	p = end;
	for (size_t i = 0; i < nmembers; i++) {
		if (*p++ != ' ')
			return false;
		long long off = strtoll(p, &end, 10);
		if (end == p || off < -1 || off >= (long long)sz)
			return false;
		offsets[i] = off;
		p = end;
	}
	if (*p != '\n')
		return false;
	*size = sz;
	*found = true;
	return true;
}

/* Every line after the debug line is a request and an answer that
   parses: "TAG NEAR M1,...,Mn = " and none or SIZEOF and n offsets.  */
static bool all_lines_parse(const char *text)
{
	int64_t offsets[MAX_MEMBERS];
	for (const char *p = strchr(text, '\n'); p && p[1];
	     p = strchr(p + 1, '\n')) {
		const char *line = p + 1, *eq = strstr(line, " = ");
		const char *nl = strchr(line, '\n');
		if (!eq || !nl || eq > nl)
			return false;
		/* Three words before " = ": the members' commas count them. */
		size_t words = 0, commas = 0;
		for (const char *c = line; c < eq; c++) {
			words += *c == ' ';
			commas += *c == ',';
		}
		bool found;
		uint64_t size;
		if (words != 2 || commas >= MAX_MEMBERS ||
		    !parse_answer(eq + 3, commas + 1, &found, offsets, &size))
			return false;
	}
	return true;
}

/* mod's cache, loaded on first use; NULL when there is none to be had
   (no directory, no build-id, no separate debug file).  */
static struct hw_layout_cache *cache_of(struct hw_syms *s, Dwfl_Module *mod)
{
	for (size_t i = 0; i < s->nlcaches; i++)
		if (s->lcaches[i].mod == mod)
			return s->lcaches[i].path ? &s->lcaches[i] : NULL;
	struct hw_layout_cache *grown =
		realloc(s->lcaches, (s->nlcaches + 1) * sizeof *grown);
	if (grown == NULL)
		return NULL;
	s->lcaches = grown;
	struct hw_layout_cache *c = &s->lcaches[s->nlcaches++];
	*c = (struct hw_layout_cache){ .mod = mod };

	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int idlen = dwfl_module_build_id(mod, &id, &vaddr);
	char line[PATH_MAX + 128];
	if (s->layout_cache == NULL || idlen <= 0 || idlen > 64 ||
	    !debug_line(mod, line, sizeof line))
		return NULL;
	if (s->layout_cache_trust == 0)
		s->layout_cache_trust =
			hw_cache_dir_trusted(s->layout_cache,
					     s->layout_cache_refused,
					     sizeof s->layout_cache_refused)
			? 1 : -1;
	if (s->layout_cache_trust < 0)
		return NULL;
	char hex[129];
	for (int i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	size_t plen = strlen(s->layout_cache) + sizeof "/layouts/" + 2 * idlen;
	if ((c->path = malloc(plen)) == NULL)
		return NULL;
	snprintf(c->path, plen, "%s/layouts/%s", s->layout_cache, hex);

	size_t len = 0;
	char *text = read_cache_file(c->path, &len);
	const char *rest = text ? text + sizeof CACHE_MAGIC - 1 : NULL;
	size_t llen = strlen(line);
	if (rest && strncmp(rest, line, llen) == 0 && all_lines_parse(rest)) {
		/* Keep the lines after the magic: the debug line first.  */
		c->len = len - (size_t)(rest - text);
		memmove(text, rest, c->len + 1);
		c->text = text;
	} else {
		free(text);    /* another file now, or none: start anew */
		c->text = strdup(line);
		c->len = llen;
		if (c->text == NULL) {
			free(c->path);
			c->path = NULL;
			return NULL;
		}
	}
	return c;
}

/* A name that fits in a line: no blank, comma or newline, which would
   make a line that reads back as another request.  */
static bool plain_name(const char *name)
{
	return name[0] && strcspn(name, " ,\n") == strlen(name);
}

/* The request as its line begins: "TAG NEAR M1,M2,... = ".  */
static bool request_key(char *key, size_t n, const char *tag, uint64_t near,
			const char *const *members, size_t nmembers)
{
	if (!plain_name(tag) || nmembers > MAX_MEMBERS)
		return false;
	for (size_t i = 0; i < nmembers; i++)
		if (members[i] && !plain_name(members[i]))
			return false;
	int w = snprintf(key, n, "%s %" PRIx64 " ", tag, near);
	size_t at = w > 0 ? (size_t)w : n;
	for (size_t i = 0; at < n && i < nmembers; i++) {
		w = snprintf(key + at, n - at, "%s%s", i ? "," : "",
			     members[i] ? members[i] : "-");
		at = w >= 0 ? at + (size_t)w : n;
	}
	w = at < n ? snprintf(key + at, n - at, " = ") : -1;
	return w > 0 && at + (size_t)w < n;
}

bool hw_layout_cache_get(struct hw_syms *s, Dwfl_Module *mod, uint64_t near,
			 const char *tag, const char *const *members,
			 size_t nmembers, bool *found, int64_t *offsets,
			 uint64_t *size)
{
	char key[1024];
	struct hw_layout_cache *c = cache_of(s, mod);
	if (c == NULL ||
	    !request_key(key, sizeof key, tag, near, members, nmembers))
		return false;
	size_t klen = strlen(key);
	int64_t got[MAX_MEMBERS];
	/* Each line begins after a newline; the first is the debug line.  */
	for (const char *p = strchr(c->text, '\n'); p && p[1];
	     p = strchr(p + 1, '\n')) {
		if (strncmp(p + 1, key, klen) != 0)
			continue;
		/* (offsets are left alone unless the whole line parses.)  */
		if (!parse_answer(p + 1 + klen, nmembers, found, got, size))
			return false;
		if (*found && nmembers)
			memcpy(offsets, got, nmembers * sizeof *got);
		return true;
	}
	return false;
}

/* Write c's lines to its file: a temporary one renamed over it (the
   directory is there: cachetrust.c made it, and found it ours).  */
static void write_cache(const struct hw_layout_cache *c)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.%ld.tmp", c->path,
			     (long)getpid()) >= sizeof tmp)
		return;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
			   O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	bool ok = write(fd, CACHE_MAGIC, sizeof CACHE_MAGIC - 1) ==
			  (ssize_t)(sizeof CACHE_MAGIC - 1) &&
		  write(fd, c->text, c->len) == (ssize_t)c->len;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, c->path) != 0)
		(void)unlink(tmp);
}

void hw_layout_cache_put(struct hw_syms *s, Dwfl_Module *mod, uint64_t near,
			 const char *tag, const char *const *members,
			 size_t nmembers, bool found, const int64_t *offsets,
			 uint64_t size)
{
	char key[1024], line[1024 + 24 * MAX_MEMBERS];
	struct hw_layout_cache *c = cache_of(s, mod);
	if (c == NULL || size > CACHE_MAX_SIZEOF ||
	    !request_key(key, sizeof key, tag, near, members, nmembers))
		return;
	size_t at = (size_t)snprintf(line, sizeof line, "%s%s", key,
				     found ? "" : "none\n");
	if (found) {
		at += (size_t)snprintf(line + at, sizeof line - at, "%" PRIu64,
				       size);
		for (size_t i = 0; i < nmembers; i++)
			at += (size_t)snprintf(line + at, sizeof line - at,
					       " %" PRId64, offsets[i]);
		at += (size_t)snprintf(line + at, sizeof line - at, "\n");
	}
	if (at >= sizeof line || c->len + at >= CACHE_MAX_BYTES / 2)
		return;
	char *grown = realloc(c->text, c->len + at + 1);
	if (grown == NULL)
		return;
	memcpy(grown + c->len, line, at + 1);
	c->text = grown;
	c->len += at;
	write_cache(c);
}

void hw_syms_layout_cache_forget(struct hw_syms *s, const struct hw_module *m)
{
	struct hw_layout_cache *c = s && m ? cache_of(s, m->handle) : NULL;
	if (c == NULL)
		return;
	/* Keep the debug line only: the requests asked next read DWARF,
	   and their answers replace the file's.  */
	char *nl = strchr(c->text, '\n');
	if (nl) {
		c->len = (size_t)(nl + 1 - c->text);
		c->text[c->len] = '\0';
	}
}

const char *hw_syms_layout_cache_refused(const struct hw_syms *s)
{
	return s && s->layout_cache_trust < 0 ? s->layout_cache_refused
					      : NULL;
}

void hw_layout_cache_free(struct hw_syms *s)
{
	for (size_t i = 0; i < s->nlcaches; i++) {
		free(s->lcaches[i].path);
		free(s->lcaches[i].text);
	}
	free(s->lcaches);
}
