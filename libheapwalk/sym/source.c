/* source.c - a pc's function, inline frames and source line.
 *
 * With DWARF: the compile unit holding pc comes from libdwfl
 * (.debug_aranges or the units' ranges); the function holding pc from
 * the unit's index of its subprograms' ranges (srccache.c, made on the
 * unit's first pc).  Inside the function, the DIEs whose ranges hold pc
 * are followed down one level at a time (lexical blocks, inlined
 * subroutines), keeping every DW_TAG_inlined_subroutine met on the way.
 * That chain, read innermost first, is the inline call stack.  The
 * innermost frame's line is the line table's for pc; each outer frame's
 * is the call site recorded on the inlined subroutine one level in
 * (DW_AT_call_file/line/column).
 *
 * libdw's dwarf_getscopes is not used: for an inlined pc it returns the
 * abstract definition's lexical scopes, not the functions it was inlined
 * into, and getting those (dwarf_getscopes_die per level, as
 * eu-addr2line -i does) walks the unit again for every level.
 *
 * Without DWARF for pc (no debug info, or code from assembly, a PLT):
 * the symbol table's name, and the line table's line when there is one.
 *
 * DWARF is untrusted input here like the core: every walk is bounded
 * (depth, DIEs looked at, frames), and libdw's own readers check their
 * bounds.
 */
#include <dwarf.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "sym-private.h"

#define SRC_MAX_DEPTH 256           /* nesting of scopes followed down */
#define SRC_MAX_DIES 200000         /* DIEs looked at for one pc */
#define SRC_MAX_CHAIN 64            /* inline levels kept */
#define SRC_NAME_MAX 4096           /* longest name shown (demangled) */

struct chain {
	Dwarf_Die die[SRC_MAX_CHAIN]; /* outermost first */
	size_t n;
	unsigned long budget;
};

/* Tags of the DIEs inside a function that have code ranges and may
   hold further scopes.  Not DW_TAG_subprogram: a nested one (GNU C
   nested functions) has its own code, outside its parent's ranges.  */
static bool is_code_scope(int tag)
{
	switch (tag) {
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
	default:
		return false;
	}
}

/* The child of parent (a function or a block in it) whose ranges hold
   pc; false when none, or the budget ran out.  */
static bool child_holding(Dwarf_Die *parent, Dwarf_Addr pc, struct chain *c,
			  Dwarf_Die *out)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return false;
	do {
		if (c->budget == 0)
			return false;
		c->budget--;
		if (is_code_scope(dwarf_tag(&child)) &&
		    dwarf_haspc(&child, pc) > 0) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The function DIEs holding pc in the unit, outermost first: the real
   function (from the unit's index), then the inlined subroutines, each
   inside the previous one.  */
static void function_chain(struct hw_syms *s, Dwfl_Module *mod,
			   Dwarf_Die *cudie, Dwarf_Addr pc, struct chain *c)
{
	c->n = 0;
	c->budget = SRC_MAX_DIES;
	Dwarf_Die cur;
	if (!hw_srccache_unit_function(s, mod, cudie, pc, &cur))
		return;
	c->die[c->n++] = cur;
	for (unsigned depth = 0; depth < SRC_MAX_DEPTH; depth++) {
		Dwarf_Die next;
		if (!child_holding(&cur, pc, c, &next))
			break;
		if (dwarf_tag(&next) == DW_TAG_inlined_subroutine)
			/* Past SRC_MAX_CHAIN levels the innermost slot is
			   overwritten: the deepest frame stays exact.  */
			c->die[c->n < SRC_MAX_CHAIN ? c->n++ : c->n - 1] = next;
		cur = next;
	}
}

/* name without its "@VERSION" / "@@VERSION" tail, demangled when it is
   a C++ name, in s's pool.  */
static const char *pool_name(struct hw_syms *s, const char *name)
{
	if (name == NULL || name[0] == '\0')
		return NULL;
	size_t len = strcspn(name, "@");
	if (len >= SRC_NAME_MAX)
		len = SRC_NAME_MAX - 1;
	char plain[SRC_NAME_MAX];
	memcpy(plain, name, len);
	plain[len] = '\0';
	if (plain[0] == '_' && plain[1] == 'Z') {
		char shown[SRC_NAME_MAX];
		hw_syms_demangle(plain, shown, sizeof shown);
		return hw_strpool_add(s, shown, strlen(shown));
	}
	return hw_strpool_add(s, plain, len);
}

static const char *pool_str(struct hw_syms *s, const char *str)
{
	if (str == NULL || str[0] == '\0')
		return NULL;
	/* libdw hands out only strings it found terminated.  */
	size_t len = strlen(str);
	return hw_strpool_add(s, str, len < SRC_NAME_MAX ? len : SRC_NAME_MAX);
}

static const char *string_attr(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

/* A function DIE's name as people read it: its linkage name demangled
   (C++: "ns::Class::method(int)"), else its DW_AT_name; both looked for
   through DW_AT_abstract_origin and DW_AT_specification.  */
static const char *die_function(struct hw_syms *s, Dwarf_Die *die)
{
	const char *link = string_attr(die, DW_AT_linkage_name);
	if (link == NULL)
		link = string_attr(die, DW_AT_MIPS_linkage_name);
	if (link != NULL && link[0] == '_' && link[1] == 'Z')
		return pool_name(s, link);
	const char *name = dwarf_diename(die);
	return pool_name(s, name != NULL ? name : link);
}

static unsigned udata_attr(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0;
	if (dwarf_formudata(dwarf_attr(die, name, &a), &v) != 0 ||
	    v > UINT32_MAX)
		return 0;
	return (unsigned)v;
}

/* The call site an inlined subroutine DIE records.  */
static void call_site(struct hw_syms *s, Dwarf_Die *inl,
		      struct hw_source_frame *f)
{
	f->line = udata_attr(inl, DW_AT_call_line);
	f->column = udata_attr(inl, DW_AT_call_column);
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) != 0 ||
	    dwarf_diecu(inl, &cu, NULL, NULL) == NULL ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || idx >= nfiles)
		return;
	f->file = pool_str(s, dwarf_filesrc(files, idx, NULL, NULL));
}

/* The line table's row for pc (an address in the module's DWARF).  */
static void table_line(struct hw_syms *s, Dwarf_Die *cudie, Dwarf_Addr pc,
		       struct hw_source_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(cudie, pc);
	int lineno = 0, col = 0;
	if (line == NULL || dwarf_lineno(line, &lineno) != 0 || lineno <= 0)
		return; /* line 0: code no source line stands for */
	f->line = (unsigned)lineno;
	if (dwarf_linecol(line, &col) == 0 && col > 0)
		f->column = (unsigned)col;
	f->file = pool_str(s, dwarf_linesrc(line, NULL, NULL));
}

size_t hw_syms_source_at(struct hw_syms *s, uint64_t pc, bool return_address,
			 struct hw_source_frame *out, size_t max)
{
	if (s == NULL || s->dwfl == NULL || out == NULL || max == 0)
		return 0;
	uint64_t addr = return_address && pc > 0 ? pc - 1 : pc;
	Dwfl_Module *mod = hw_syms_addrmodule(s, addr);
	if (mod == NULL)
		return 0;

	Dwarf_Addr low = 0;
	const char *modname = dwfl_module_info(mod, NULL, &low, NULL, NULL,
					       NULL, NULL, NULL);
	const struct hw_source_frame base = {
		.module = modname != NULL ? modname : "?",
		.module_offset = pc - low,
	};

	Dwarf_Addr bias = 0;
	if (dwfl_module_getdwarf(mod, &bias) != NULL)
		hw_syms_dwarf_read(s, mod);
	Dwarf_Die *cudie = dwfl_module_addrdie(mod, addr, &bias);
	struct chain c;
	c.n = 0;
	if (cudie != NULL)
		function_chain(s, mod, cudie, addr - bias, &c);

	if (c.n == 0) {
		/* No DWARF function here: the symbol table's name.  */
		out[0] = base;
		out[0].function = pool_name(s, hw_srccache_symbol(s, mod, addr));
		if (cudie != NULL)
			table_line(s, cudie, addr - bias, &out[0]);
		return 1;
	}

	/* Innermost first; past max, the innermost max - 1 and the real
	   function.  */
	size_t n = c.n <= max ? c.n : max;
	for (size_t i = 0; i < n; i++) {
		size_t level = i + 1 < n ? c.n - 1 - i : 0;
		struct hw_source_frame *f = &out[i];
		*f = base;
		f->inlined = level > 0;
		f->function = die_function(s, &c.die[level]);
		if (level == c.n - 1)
			table_line(s, cudie, addr - bias, f);
		else
			call_site(s, &c.die[level + 1], f);
	}
	/* A real function DWARF leaves unnamed, or one of an assembly
	   file, which the assembler names after any label at its start
	   (glibc's "__GI_fchmod"): the symbol table's choice, which
	   prefers the global name.  */
	if (out[n - 1].function == NULL ||
	    dwarf_srclang(cudie) == DW_LANG_Mips_Assembler) {
		const char *sym = pool_name(s, hw_srccache_symbol(s, mod, addr));
		if (sym != NULL)
			out[n - 1].function = sym;
	}
	return n;
}
