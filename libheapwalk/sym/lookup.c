/* lookup.c - symbol lookup by name in one module.
 *
 * dwfl_module_getsymtab picks the table: the main file's .symtab if it has
 * one, else the separate debug file's .symtab (asking find_debuginfo, so
 * never when separate debug info is disabled), else .dynsym (plus
 * .gnu_debugdata from the main file when present).  Locals are included.
 */
#include <string.h>

#include "sym-private.h"

bool hw_syms_lookup(const struct hw_syms *s, const struct hw_module *m,
		    const char *name, uint64_t *addr, uint64_t *size,
		    bool *is_tls)
{
	if (s == NULL || m == NULL || m->handle == NULL || name == NULL ||
	    name[0] == '\0')
		return false;
	Dwfl_Module *mod = m->handle;
	int n = dwfl_module_getsymtab(mod);
	if (n <= 0)
		return false;

	size_t nlen = strlen(name);
	int versioned = -1; /* first "name@VERSION" seen, if no exact match */
	GElf_Sym vsym;
	GElf_Addr vaddr = 0;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a = 0;
		GElf_Word shndx;
		const char *sname = dwfl_module_getsym_info(mod, i, &sym, &a,
							    &shndx, NULL,
							    NULL);
		if (sname == NULL || sym.st_shndx == SHN_UNDEF)
			continue;
		if (strncmp(sname, name, nlen) != 0)
			continue;
		if (sname[nlen] == '\0') {
			vsym = sym;
			vaddr = a;
			versioned = i;
			break;
		}
		if (sname[nlen] == '@' && versioned < 0) {
			vsym = sym;
			vaddr = a;
			versioned = i;
		}
	}
	if (versioned < 0)
		return false;

	bool tls = GELF_ST_TYPE(vsym.st_info) == STT_TLS;
	if (addr != NULL)
		/* libdwfl adds the load bias to TLS values too (they sit in an
		   SHF_ALLOC section); the offset in the block is st_value.  */
		*addr = tls ? vsym.st_value : vaddr;
	if (size != NULL)
		*size = vsym.st_size;
	if (is_tls != NULL)
		*is_tls = tls;
	return true;
}

bool hw_syms_lookup_suffix(const struct hw_syms *s, const struct hw_module *m,
			   const char *suffix, char *name, size_t namelen,
			   uint64_t *addr, uint64_t *size)
{
	if (s == NULL || m == NULL || m->handle == NULL || suffix == NULL ||
	    suffix[0] == '\0')
		return false;
	Dwfl_Module *mod = m->handle;
	int n = dwfl_module_getsymtab(mod);
	size_t slen = strlen(suffix);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a = 0;
		GElf_Word shndx;
		const char *sname = dwfl_module_getsym_info(mod, i, &sym, &a,
							    &shndx, NULL,
							    NULL);
		if (sname == NULL || sym.st_shndx == SHN_UNDEF)
			continue;
		size_t len = strcspn(sname, "@");
		if (len < slen || memcmp(sname + len - slen, suffix, slen) != 0)
			continue;
		/* Only whole words: "je_arenas" must not match "xje_arenas".  */
		if (len > slen && sname[len - slen - 1] != '_')
			continue;
		if (name != NULL && namelen > 0) {
			size_t k = len < namelen - 1 ? len : namelen - 1;
			memcpy(name, sname, k);
			name[k] = '\0';
		}
		if (addr != NULL)
			*addr = a;
		if (size != NULL)
			*size = sym.st_size;
		return true;
	}
	return false;
}
