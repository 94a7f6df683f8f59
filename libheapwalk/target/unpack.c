/* unpack.c - unpack a compressed core into a private, sparse file.
 *
 * The core reader wants the core mapped.  So the decoded stream goes into
 * a memfd (or, without memfd_create, an unlinked temporary file), whose
 * mapping core.c then reads exactly as it reads a plain core's.  Most of
 * a core is zeros (untouched heap, stack reserve, bss), and a compressed
 * core holds them as a few bytes: the decoded bytes are looked at a page
 * at a time, and a page of zeros is not written at all, only the file's
 * final length is set: a 20 GiB core holding 200 MiB of data is
 * unpacked into 200 MiB.  The long runs of zeros are mapped from the zero
 * page (unpack-holes.h), so that a walker reading them does not fill
 * memory either.
 *
 * The compressed file is untrusted.  A stream that is corrupt or cut
 * short fails with the decoder's reason; one that unpacks to more than
 * the core's own ELF headers say it spans, or to more than a bound set
 * by its own size (512 times it, at least 2 GiB: --unpack-max), is
 * refused as a decompression bomb, since zero pages cost nothing to store
 * but still take time to decode (zstd turns 33 KB into a GiB of zeros,
 * which take 0.2 s: a 13 MB file, over a minute); one whose first
 * MiB is no core header heapwalk reads (no ELF, 32-bit, big-endian, not a
 * core, program headers past that MiB) is refused at once rather than
 * unpacked to the end; and the data it stores (its pages that are not
 * zeros: memory, outside heapwalk's own) may not pass --cache-max, nor
 * (unless --unpack-max is given) 256 times the file's size or 256 MiB,
 * whichever is more, so that no input makes the machine run out of
 * memory, and no small one takes much of it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compressed.h"
#include "core.h"
#include "unpack-codec.h"
#include "unpack-holes.h"
#include "unpack.h"

#define STAGE (1u << 20)          /* decoded bytes stored at once */
#define IN_CHUNK (1u << 20)       /* compressed bytes read at once */
#define PAGE 4096u                /* holes are made a page at a time */
/* Progress is reported each 16 MiB read, and each 256 MiB unpacked (a
   core of zeros compresses a thousandfold).  */
#define PROGRESS_IN (16u << 20)
#define PROGRESS_OUT (256u << 20)
/* The default bound on what a file unpacks to: cores of data compress
   3 to 20 times, and a kernel core's holes (pages never present) only
   make up large parts of it where a process touched a little of a large
   mapping; zeros decode at 0.25 (gzip) to 5 GB/s (zstd).  */
#define UNPACK_RATIO 512
#define UNPACK_FLOOR (2ull << 30)
#define MAX_UNPACKED (1ull << 40) /* no header field is believed past it */
/* The data (pages not all zeros) a file may unpack to, unless
   --unpack-max says more: data kept in the memfd is memory, and a
   pattern repeated (a few KB of zstd per 128 MiB) costs a bomb nothing.
   Cores' data compresses 3 to 80 times; a ratio of 256, and 256 MiB
   whatever the file's size, leaves room for memory filled with one
   value.  */
#define DATA_RATIO 256
#define DATA_FLOOR (256ull << 20)
/* What a core may hold past the end its headers give (section header
   string tables and the like, which no header places): room enough for
   any writer's, and nothing next to a bomb.  */
#define HEADER_SLACK (1ull << 20)

static void say_progress(const struct hw_core_open_opts *o,
			 const char *phase, uint64_t done, uint64_t total)
{
	if (o->progress)
		o->progress(o->progress_cookie, phase, done, total);
}

struct hw_unpack {
	struct hw_unpack_io io;
	const struct hw_core_open_opts *o;
	char phase[128];             /* "unpacking core.zst" */
	int in_fd;
	uint64_t in_size, in_off;
	uint64_t next_in, next_out;  /* when progress is reported next */
	uint8_t *in_buf;
	int out_fd;
	uint8_t *stage;              /* STAGE bytes, page-aligned */
	uint64_t out_off;            /* where stage[0] goes in out_fd */
	struct hw_holes holes;       /* the runs of zeros passed */
	uint64_t limit;              /* the most the core may unpack to */
	bool limit_from_headers;
	bool limit_given;            /* --unpack-max set the bound */
	uint64_t stored, store_max;  /* bytes of data written; the cap */
	bool store_from_size;        /* the cap is DATA_RATIO's, not
					--cache-max's */
	const char *unpack_cmd;      /* "zstd -d" */
	bool failed;
	char why[256];               /* the first failure */
};

bool hw_unpack_fail(struct hw_unpack *u, const char *why)
{
	if (!u->failed) {
		u->failed = true;
		snprintf(u->why, sizeof u->why, "%s", why);
	}
	return false;
}

static bool fail_errno(struct hw_unpack *u, const char *doing)
{
	char why[sizeof u->why];
	snprintf(why, sizeof why, "%s: %s", doing, strerror(errno));
	return hw_unpack_fail(u, why);
}

/* Tell the front end how much of the compressed file was read, now
   and then.  */
static void progress(struct hw_unpack *u)
{
	if (u->in_off < u->next_in && u->out_off < u->next_out)
		return;
	say_progress(u->o, u->phase, u->in_off, u->in_size);
	u->next_in = u->in_off + PROGRESS_IN;
	u->next_out = u->out_off + PROGRESS_OUT;
}

bool hw_unpack_read(struct hw_unpack *u)
{
	ssize_t n;
	do
		n = pread(u->in_fd, u->in_buf, IN_CHUNK, (off_t)u->in_off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail_errno(u, "reading the compressed file");
	if (n == 0)
		return false;
	u->in_off += (uint64_t)n;
	u->io.in = u->in_buf;
	u->io.in_len = (size_t)n;
	progress(u);
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	for (; end - p >= 64; p += 64) {
		uint64_t w[8];
		memcpy(w, p, sizeof w);
		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			return false;
	}
	for (; p < end; p++)
		if (*p)
			return false;
	return true;
}

static bool write_at(struct hw_unpack *u, const uint8_t *p, size_t n,
		     uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(u->out_fd, p, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail_errno(u, "storing the unpacked core");
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return true;
}

/* The first bytes decoded (n of them, at stage[0]): an ELF file, or
   nothing worth unpacking further.  When they hold its program headers,
   the end of the last thing those (and the section headers) place in
   the file narrows the limit.  A header that is not a 64-bit
   little-endian one is left to the core reader to name.  */
static bool check_head(struct hw_unpack *u, size_t n)
{
	const uint8_t *h = u->stage;
	if (n >= SELFMAG && memcmp(h, ELFMAG, SELFMAG) != 0)
		return hw_unpack_fail(u, "what it unpacks to is not an ELF "
				      "file (not a core)");
	Elf64_Ehdr eh;
	if (n < sizeof eh)
		return true;
	memcpy(&eh, h, sizeof eh);
	/* A header the core reader would refuse is refused now, not after
	   unpacking what it cannot bound.  (A whole file shorter than the
	   stage is the core reader's to name.)  */
	bool whole = n == STAGE;
	const char *no = eh.e_ident[EI_CLASS] != ELFCLASS64
			 ? "a 32-bit ELF file (heapwalk reads 64-bit cores)"
			 : eh.e_ident[EI_DATA] != ELFDATA2LSB
			 ? "a big-endian ELF file (heapwalk reads little-endian "
			   "cores)"
			 : eh.e_type != ET_CORE
			 ? "an ELF file, but not a core (e_type is not ET_CORE)"
			 : eh.e_phentsize != sizeof(Elf64_Phdr)
			 ? "an ELF core whose program headers are not 64-bit ones"
			 : whole && eh.e_phnum != PN_XNUM &&
			   (eh.e_phoff > n ||
			    eh.e_phnum > (n - eh.e_phoff) / sizeof(Elf64_Phdr))
			 ? "an ELF core whose program headers are not in its "
			   "first MiB (no core writer puts them elsewhere)"
			 : NULL;
	if (no) {
		char why[sizeof u->why];
		snprintf(why, sizeof why, "what it unpacks to is %s", no);
		return hw_unpack_fail(u, why);
	}
	if (eh.e_phnum == PN_XNUM || eh.e_phoff > n ||
	    eh.e_phnum > (n - eh.e_phoff) / sizeof(Elf64_Phdr))
		return true;
	uint64_t span = eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr);
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, h + eh.e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_offset > MAX_UNPACKED || ph.p_filesz > MAX_UNPACKED)
			return true;
		if (ph.p_offset + ph.p_filesz > span)
			span = ph.p_offset + ph.p_filesz;
	}
	if (eh.e_shoff) {
		uint64_t end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
		if (eh.e_shoff > MAX_UNPACKED)
			return true;
		if (end > span)
			span = end;
	}
	if (span + HEADER_SLACK < u->limit) {
		u->limit = span + HEADER_SLACK;
		u->limit_from_headers = true;
	}
	return true;
}

/* The core unpacks to more than u->limit: say which bound that is.  */
static bool past_limit(struct hw_unpack *u)
{
	char why[sizeof u->why];
	if (u->limit_from_headers)
		snprintf(why, sizeof why, "unpacks to more than the "
			 "%" PRIu64 " bytes its ELF headers describe "
			 "(corrupt, or a decompression bomb)",
			 (uint64_t)(u->limit - HEADER_SLACK));
	else if (u->limit_given)
		snprintf(why, sizeof why, "unpacks to more than "
			 "--unpack-max (%" PRIu64 " MiB)", u->limit >> 20);
	else
		snprintf(why, sizeof why, "unpacks to more than "
			 "%" PRIu64 " MiB, the most a file of %" PRIu64
			 " MiB may unpack to unless --unpack-max says "
			 "more (a decompression bomb, or a core of "
			 "mostly untouched memory: unpack it into a "
			 "file first, %s)",
			 u->limit >> 20, (u->in_size + (1u << 20) - 1) >> 20,
			 u->unpack_cmd);
	return hw_unpack_fail(u, why);
}

bool hw_unpack_promised(struct hw_unpack *u, uint64_t more)
{
	uint64_t have = u->out_off + (STAGE - u->io.out_len);
	return (have <= u->limit && more <= u->limit - have) ||
	       past_limit(u);
}

/* Store the first n bytes of the stage at out_off: each run of pages
   that are not all zeros with one write, the rest left as holes.  */
static bool store(struct hw_unpack *u, size_t n)
{
	if (u->out_off == 0 && !check_head(u, n))
		return false;
	if (n > u->limit - u->out_off)
		return past_limit(u);
	size_t run = SIZE_MAX;   /* where the pending run of data starts */
	for (size_t b = 0; b < n; b += PAGE) {
		size_t len = n - b < PAGE ? n - b : PAGE;
		bool zero = all_zero(u->stage + b, len);
		hw_holes_block(&u->holes, u->out_off + b, zero);
		if (!zero) {
			if (len > u->store_max - u->stored) {
				char why[sizeof u->why];
				if (u->store_from_size)
					snprintf(why, sizeof why, "holds more "
						 "than %" PRIu64 " MiB of data, "
						 "the most a file of its size "
						 "may hold unless --unpack-max "
						 "says more (a decompression "
						 "bomb, or memory filled with "
						 "one value: unpack it into a "
						 "file first, %s)",
						 u->store_max >> 20,
						 u->unpack_cmd);
				else
					snprintf(why, sizeof why, "holds more "
						 "than %" PRIu64 " MiB of data, "
						 "what --cache-max lets it take "
						 "in memory: unpack it into a "
						 "file first (%s), or give a "
						 "larger --cache-max",
						 u->store_max >> 20,
						 u->unpack_cmd);
				return hw_unpack_fail(u, why);
			}
			u->stored += len;
			if (run == SIZE_MAX)
				run = b;
			continue;
		}
		if (run != SIZE_MAX &&
		    !write_at(u, u->stage + run, b - run, u->out_off + run))
			return false;
		run = SIZE_MAX;
	}
	return run == SIZE_MAX ||
	       write_at(u, u->stage + run, n - run, u->out_off + run);
}

bool hw_unpack_flush(struct hw_unpack *u)
{
	if (!store(u, STAGE))
		return false;
	u->out_off += STAGE;
	u->io.out = u->stage;
	u->io.out_len = STAGE;
	progress(u);
	return true;
}

/* A file of our own that no name reaches.  */
static int private_file(void)
{
	int fd = memfd_create("heapwalk-unpacked", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	const char *dir = getenv("TMPDIR");
	if (!dir || !dir[0])
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* A file system without O_TMPFILE: named for as long as it takes
	   to unlink it.  */
	char name[PATH_MAX];
	if (snprintf(name, sizeof name, "%s/heapwalk-unpacked-XXXXXX", dir) >=
	    (int)sizeof name) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(name, O_CLOEXEC);
	if (fd >= 0)
		unlink(name);
	return fd;
}

enum hw_status hw_unpack(const struct hw_compression *c, int fd,
			 const char *path, const struct hw_core_open_opts *o,
			 uint8_t **map, uint64_t *size, char *err,
			 size_t errlen)
{
	struct hw_unpack u = {
		.o = o,
		.in_fd = fd,
		.out_fd = -1,
		.limit = MAX_UNPACKED,
		.store_max = o->store_max ? o->store_max : MAX_UNPACKED,
		.unpack_cmd = c->unpack,
	};
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		u.in_size = (uint64_t)st.st_size;
	if (o->unpack_max) {
		u.limit = o->unpack_max;
		u.limit_given = true;
	} else if (u.in_size < MAX_UNPACKED / UNPACK_RATIO) {
		u.limit = u.in_size * UNPACK_RATIO;
		if (u.limit < UNPACK_FLOOR)
			u.limit = UNPACK_FLOOR;
	}
	uint64_t data_max = u.in_size < MAX_UNPACKED / DATA_RATIO
			    ? u.in_size * DATA_RATIO : MAX_UNPACKED;
	if (data_max < DATA_FLOOR)
		data_max = DATA_FLOOR;
	if (!o->unpack_max && data_max < u.store_max) {
		u.store_max = data_max;
		u.store_from_size = true;
	}
	const char *base = strrchr(path, '/');
	snprintf(u.phase, sizeof u.phase, "unpacking %s", base ? base + 1 : path);
	u.in_buf = malloc(IN_CHUNK);
	u.stage = aligned_alloc(PAGE, STAGE);
	bool ok = false;
	uint64_t total = 0;
	*map = NULL;
	if (!hw_holes_init(&u.holes) || !u.in_buf || !u.stage) {
		hw_unpack_fail(&u, "out of memory");
	} else if ((u.out_fd = private_file()) < 0) {
		fail_errno(&u, "no memory file or temporary file to unpack "
			   "into");
	} else {
		u.io.out = u.stage;
		u.io.out_len = STAGE;
		say_progress(o, u.phase, 0, u.in_size);
		ok = c->decode(&u, &u.io);
		size_t last = STAGE - u.io.out_len;
		ok = ok && !u.failed && store(&u, last);
		total = u.out_off + last;
		/* The zero pages at the end were never written.  */
		if (ok && ftruncate(u.out_fd, (off_t)total) != 0)
			ok = fail_errno(&u, "sizing the unpacked core");
		if (ok && total &&
		    !(*map = hw_holes_map(&u.holes, u.out_fd, total)))
			ok = fail_errno(&u, "mapping the unpacked core");
		if (ok)
			say_progress(o, u.phase, u.in_off, u.in_size);
	}
	free(u.in_buf);
	free(u.stage);
	hw_holes_free(&u.holes);
	/* The mapping keeps the file.  */
	if (u.out_fd >= 0)
		close(u.out_fd);
	if (!ok) {
		snprintf(err, errlen, "'%s': %s: %s", path, c->name,
			 u.failed ? u.why : "cannot unpack");
		return HW_BAD_TARGET;
	}
	*size = total;
	return HW_OK;
}
