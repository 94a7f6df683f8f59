/* lookup.c - symbol lookup by name in one module.
 *
 * dwfl_module_getsymtab picks the table: the main file's .symtab if it has
 * one, else the separate debug file's .symtab (asking find_debuginfo, so
 * never when separate debug info is disabled), else .dynsym (plus
 * .gnu_debugdata from the main file when present).  Locals are included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym-private.h"

/* Name of symbol i of mod, or NULL when it is undefined there.  */
static const char *defined_symbol(Dwfl_Module *mod, int i, GElf_Sym *sym,
				  GElf_Addr *a)
{
	GElf_Word shndx;
	*a = 0;
	const char *name = dwfl_module_getsym_info(mod, i, sym, a, &shndx,
						   NULL, NULL);
	return name != NULL && sym->st_shndx != SHN_UNDEF ? name : NULL;
}

static void put_symbol(const GElf_Sym *sym, GElf_Addr a, uint64_t *addr,
		       uint64_t *size, bool *is_tls)
{
	bool tls = GELF_ST_TYPE(sym->st_info) == STT_TLS;
	if (addr != NULL)
		/* libdwfl adds the load bias to TLS values too (they sit in an
		   SHF_ALLOC section); the offset in the block is st_value.  */
		*addr = tls ? sym->st_value : a;
	if (size != NULL)
		*size = sym->st_size;
	if (is_tls != NULL)
		*is_tls = tls;
}

bool hw_syms_lookup(const struct hw_syms *s, const struct hw_module *m,
		    const char *name, uint64_t *addr, uint64_t *size,
		    bool *is_tls)
{
	if (s == NULL || m == NULL || m->handle == NULL || name == NULL ||
	    name[0] == '\0')
		return false;
	Dwfl_Module *mod = m->handle;
	int n = dwfl_module_getsymtab(mod);
	size_t nlen = strlen(name);
	bool found = false; /* exact, or the first "name@VERSION" */
	GElf_Sym vsym;
	GElf_Addr vaddr = 0;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *sname = defined_symbol(mod, i, &sym, &a);
		if (sname == NULL || strncmp(sname, name, nlen) != 0)
			continue;
		bool exact = sname[nlen] == '\0';
		if (exact || (sname[nlen] == '@' && !found)) {
			vsym = sym;
			vaddr = a;
			found = true;
		}
		if (exact)
			break;
	}
	if (found)
		put_symbol(&vsym, vaddr, addr, size, is_tls);
	return found;
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
		GElf_Addr a;
		const char *sname = defined_symbol(mod, i, &sym, &a);
		if (sname == NULL)
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
		put_symbol(&sym, a, addr, size, NULL);
		return true;
	}
	return false;
}

/* The C++ runtime's demangler (libstdc++, libc++abi); its result is
   malloc'd.  */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
		     int *status);

/* Mangled names longer than this are shown as they are: the
   demangler's work grows with its input, which a core dictates.  */
#define DEMANGLE_MAX 1024

char *hw_syms_demangle_any(const char *mangled)
{
	if (mangled == NULL || strlen(mangled) > DEMANGLE_MAX)
		return NULL;
	int status = -1;
	char *d = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

bool hw_syms_name_in(const char *const *names, const char *name)
{
	size_t len = strcspn(name, "@.");
	for (; *names; names++) {
		size_t n = strlen(*names);
		if (n && (*names)[n - 1] == '*') {
			if (len >= n - 1 && !strncmp(name, *names, n - 1))
				return true;
		} else if (n == len && !strncmp(name, *names, len)) {
			return true;
		}
	}
	return false;
}

const char *hw_syms_demangle(const char *name, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	char *d = name != NULL && name[0] == '_' && name[1] == 'Z'
		  ? hw_syms_demangle_any(name) : NULL;
	snprintf(buf, len, "%s", d != NULL ? d : name != NULL ? name : "");
	free(d);
	return buf;
}

bool hw_syms_symbol_at(const struct hw_syms *s, uint64_t addr,
		       struct hw_symbol_at *out)
{
	if (s == NULL || s->dwfl == NULL || out == NULL)
		return false;
	Dwfl_Module *mod = hw_syms_addrmodule(s, addr);
	if (mod == NULL)
		return false;
	GElf_Off off = 0;
	GElf_Sym sym;
	/* dwfl_module_addrinfo prefers global symbols and ignores sizes of
	   zero only where nothing better covers addr: what a backtrace
	   shows.  */
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL,
						NULL, NULL);
	const char *modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL,
					       NULL, NULL, NULL);
	*out = (struct hw_symbol_at){
		.name = name, .offset = name != NULL ? off : 0,
		.size = name != NULL ? sym.st_size : 0,
		.module = modname != NULL ? modname : "?",
	};
	return name != NULL;
}
