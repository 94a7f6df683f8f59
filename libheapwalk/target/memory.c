/* memory.c - bounds-checked reads over a target's regions.
 *
 * Every walker read goes through here.  There is deliberately no "last
 * region" cache: walkers read from several threads, and a shared cache
 * line written by both costs more than the binary search it saves (hot
 * loops take a pointer to a whole readable run instead).
 */
#include <string.h>

#include "../arch/arch.h"
#include "target.h"

const struct hw_region *hw_region_of(const struct hw_target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nregions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < t->regions[mid].start)
			hi = mid;
		else if (addr >= t->regions[mid].end)
			lo = mid + 1;
		else
			return &t->regions[mid];
	}
	return NULL;
}

uint64_t hw_readable_run(struct hw_target *t, uint64_t addr,
			 const uint8_t **p)
{
	const struct hw_region *r = hw_region_of(t, addr);
	if (!r)
		return 0;
	uint64_t off = addr - r->start;
	if (off < r->avail) {
		*p = r->data + off;
		return r->avail - off;
	}
	if (r->backing && off < r->backing_len) {
		*p = r->backing + off;
		return r->backing_len - off;
	}
	return 0;
}

const uint8_t *hw_peek(struct hw_target *t, uint64_t addr, size_t len)
{
	const uint8_t *p = NULL;
	uint64_t run = hw_readable_run(t, addr, &p);
	return run >= len ? p : NULL;
}

const uint8_t *hw_peek_near(struct hw_target *t, const struct hw_region **hint,
			    uint64_t addr, size_t len)
{
	const struct hw_region *r = *hint;
	if (!r || addr < r->start || addr >= r->end) {
		r = hw_region_of(t, addr);
		*hint = r;
		if (!r)
			return NULL;
	}
	uint64_t off = addr - r->start;
	if (off < r->avail)
		return r->avail - off >= len ? r->data + off : NULL;
	if (r->backing && off < r->backing_len)
		return r->backing_len - off >= len ? r->backing + off : NULL;
	return NULL;
}

bool hw_read(struct hw_target *t, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len > 0) {
		const uint8_t *p = NULL;
		uint64_t run = hw_readable_run(t, addr, &p);
		if (run == 0)
			return false;
		size_t n = run < len ? (size_t)run : len;
		memcpy(out, p, n);
		out += n;
		len -= n;
		if (addr + n < addr)
			return len == 0;
		addr += n;
	}
	return true;
}

bool hw_read_u64(struct hw_target *t, uint64_t addr, uint64_t *v)
{
	const uint8_t *p = hw_peek(t, addr, 8);
	if (p) {
		memcpy(v, p, 8);
		return true;
	}
	return hw_read(t, addr, v, 8);
}

bool hw_read_u32(struct hw_target *t, uint64_t addr, uint32_t *v)
{
	return hw_read(t, addr, v, 4);
}

bool hw_auxv_get(const struct hw_target *t, uint64_t type, uint64_t *val)
{
	for (size_t off = 0; off + 16 <= t->auxv_len; off += 16) {
		uint64_t k, v;
		memcpy(&k, t->auxv + off, 8);
		memcpy(&v, t->auxv + off + 8, 8);
		if (k == 0)
			break;
		if (k == type) {
			*val = v;
			return true;
		}
	}
	return false;
}

const struct hw_arch *hw_elf_arch_at(struct hw_target *t, uint64_t addr)
{
	uint8_t eh[20];
	uint16_t machine;
	if (!hw_read(t, addr, eh, sizeof eh) || memcmp(eh, "\177ELF", 4) != 0)
		return NULL;
	memcpy(&machine, eh + 18, 2);   /* e_machine; little-endian only */
	return hw_arch_by_machine(machine);
}

void hw_target_close(struct hw_target *t)
{
	if (t && t->ops)
		t->ops->close(t);
}
