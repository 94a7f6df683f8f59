/* types.c - struct member offsets from DWARF.
 *
 * A type is looked for among the top-level DIEs of a compile unit (and of
 * the partial units it imports, for dwz-compressed debug info): a
 * DW_TAG_structure_type named `tag` that is not a declaration, or a
 * DW_TAG_typedef named `tag` that leads, through typedefs and qualifiers,
 * to such a struct.  Which unit: the one that defines the variable at
 * near_addr when given (found through .debug_aranges when near_addr is
 * code, else by looking for a top-level variable at that address), else
 * the first unit that has the type.  For a data address, the unit is
 * first guessed from .symtab (a function listed after the same STT_FILE
 * symbol as the variable, looked up in .debug_aranges) and checked to
 * hold the variable; only then are all units walked.
 */
#include <dwarf.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "sym-private.h"

/* Work left for one search; every DIE looked at costs one.  */
struct budget {
	unsigned long dies;
	unsigned long units;
};

static bool spend(struct budget *b)
{
	if (b->dies == 0)
		return false;
	b->dies--;
	return true;
}

static bool is_declaration(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	bool flag = false;
	if (dwarf_attr(die, DW_AT_declaration, &a) == NULL)
		return false;
	return dwarf_formflag(&a, &flag) == 0 && flag;
}

static bool name_is(Dwarf_Die *die, const char *name)
{
	const char *n = dwarf_diename(die);
	return n != NULL && strcmp(n, name) == 0;
}

/* Follow typedefs and qualifiers from a typedef DIE to a struct or union
   definition.  */
static bool typedef_target(Dwarf_Die *td, Dwarf_Die *out)
{
	Dwarf_Die cur = *td;
	for (int hop = 0; hop < HW_SYM_MAX_TYPE_HOPS; hop++) {
		Dwarf_Attribute a;
		Dwarf_Die next;
		if (dwarf_attr_integrate(&cur, DW_AT_type, &a) == NULL ||
		    dwarf_formref_die(&a, &next) == NULL)
			return false;
		switch (dwarf_tag(&next)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type:
			cur = next;
			continue;
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (is_declaration(&next))
				return false;
			*out = next;
			return true;
		default:
			return false;
		}
	}
	return false;
}

/* Look through the top-level DIEs of `unit` (a CU or partial unit DIE)
   for the type.  */
static bool search_unit(Dwarf_Die *unit, const char *tag, Dwarf_Die *out,
			struct budget *b, int depth)
{
	Dwarf_Die die;
	if (depth > 4 || dwarf_child(unit, &die) != 0)
		return false;
	do {
		if (!spend(b))
			return false;
		switch (dwarf_tag(&die)) {
		case DW_TAG_structure_type:
			if (name_is(&die, tag) && !is_declaration(&die)) {
				*out = die;
				return true;
			}
			break;
		case DW_TAG_typedef:
			if (name_is(&die, tag) && typedef_target(&die, out))
				return true;
			break;
		case DW_TAG_imported_unit: {
			Dwarf_Attribute a;
			Dwarf_Die pu;
			if (dwarf_attr(&die, DW_AT_import, &a) != NULL &&
			    dwarf_formref_die(&a, &pu) != NULL &&
			    search_unit(&pu, tag, out, b, depth + 1))
				return true;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
	return false;
}

/* Does `unit` define a top-level variable at `addr` (as in the DWARF,
   i.e. without the load bias)?  */
static bool unit_has_variable_at(Dwarf_Die *unit, Dwarf_Addr addr,
				 struct budget *b)
{
	Dwarf_Die die;
	if (dwarf_child(unit, &die) != 0)
		return false;
	do {
		if (!spend(b))
			return false;
		if (dwarf_tag(&die) != DW_TAG_variable)
			continue;
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t nops;
		if (dwarf_attr(&die, DW_AT_location, &a) == NULL ||
		    dwarf_getlocation(&a, &ops, &nops) != 0)
			continue;
		if (nops == 1 && ops[0].atom == DW_OP_addr &&
		    ops[0].number == addr)
			return true;
	} while (dwarf_siblingof(&die, &die) == 0);
	return false;
}

/* Offset of a data member; 0 when the DWARF gives none (unions, and the
   DWARF 5 rule for a member at the start).  -1 when it is not a form we
   understand.  */
static int64_t member_offset(Dwarf_Die *member)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	if (dwarf_attr_integrate(member, DW_AT_data_member_location, &a)) {
		switch (dwarf_whatform(&a)) {
		case DW_FORM_data1:
		case DW_FORM_data2:
		case DW_FORM_data4:
		case DW_FORM_data8:
		case DW_FORM_udata:
		case DW_FORM_sdata:
		case DW_FORM_implicit_const:
			if (dwarf_formudata(&a, &v) != 0 || v > INT64_MAX)
				return -1;
			return (int64_t)v;
		default: {
			/* DWARF 2 style: a block holding DW_OP_plus_uconst. */
			Dwarf_Op *ops;
			size_t nops;
			if (dwarf_getlocation(&a, &ops, &nops) == 0 &&
			    nops == 1 && ops[0].atom == DW_OP_plus_uconst &&
			    ops[0].number <= INT64_MAX)
				return (int64_t)ops[0].number;
			return -1;
		}
		}
	}
	if (dwarf_attr_integrate(member, DW_AT_data_bit_offset, &a)) {
		if (dwarf_formudata(&a, &v) != 0 || v / 8 > INT64_MAX)
			return -1;
		return (int64_t)(v / 8);
	}
	return 0;
}

static void read_members(Dwarf_Die *st, const char *const *members,
			 size_t nmembers, int64_t *offsets, struct budget *b)
{
	Dwarf_Die die;
	if (dwarf_child(st, &die) != 0)
		return;
	do {
		if (!spend(b))
			return;
		if (dwarf_tag(&die) != DW_TAG_member)
			continue;
		const char *name = dwarf_diename(&die);
		if (name == NULL)
			continue;
		for (size_t i = 0; i < nmembers; i++)
			if (offsets[i] == -1 && members[i] != NULL &&
			    strcmp(members[i], name) == 0)
				offsets[i] = member_offset(&die);
	} while (dwarf_siblingof(&die, &die) == 0);
}

/* A function from the same object file as the local data symbol at
   data_addr: .symtab lists each file's locals after an STT_FILE symbol.
   Code addresses are in .debug_aranges, data addresses are not.  */
static bool code_in_same_file(Dwfl_Module *mod, GElf_Addr data_addr,
			      GElf_Addr *code_addr)
{
	int n = dwfl_module_getsymtab(mod);
	int file = -1, hit = -1;
	for (int i = 1; i < n && hit < 0; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		if (dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL,
					    NULL) == NULL)
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE)
			file = i;
		else if (GELF_ST_BIND(sym.st_info) == STB_LOCAL &&
			 GELF_ST_TYPE(sym.st_info) == STT_OBJECT &&
			 sym.st_shndx != SHN_UNDEF && a <= data_addr &&
			 (data_addr < a + sym.st_size || data_addr == a))
			hit = i;
	}
	if (hit < 0 || file < 0)
		return false;
	for (int i = file + 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		if (dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL,
					    NULL) == NULL)
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE ||
		    GELF_ST_BIND(sym.st_info) != STB_LOCAL)
			break;
		if (GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
		    sym.st_shndx != SHN_UNDEF && a != 0) {
			*code_addr = a;
			return true;
		}
	}
	return false;
}

/* One pass over the units: the unit holding the variable at var_addr wins;
   else the first unit that has the type.  */
static bool scan_units(Dwarf *dw, bool want_var, Dwarf_Addr var_addr,
		       const char *tag, Dwarf_Die *out, struct budget *b)
{
	bool have_first = false;
	Dwarf_Die first;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	while (b->units > 0 &&
	       dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie,
			       &subdie) == 0) {
		b->units--;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		if (want_var && unit_has_variable_at(&cudie, var_addr, b)) {
			if (search_unit(&cudie, tag, out, b, 0))
				return true;
			/* That unit does not have it: take the first one. */
			want_var = false;
			if (have_first)
				break;
		}
		if (!have_first && search_unit(&cudie, tag, &first, b, 0)) {
			have_first = true;
			if (!want_var)
				break;
		}
		if (b->dies == 0)
			break;
	}
	if (have_first)
		*out = first;
	return have_first;
}

/* The layout from mod's DWARF itself: false when the type is not found;
   *had_dwarf says whether there was DWARF to look in.  */
static bool layout_from_dwarf(struct hw_syms *s, Dwfl_Module *mod,
			      uint64_t near_addr, const char *tag,
			      const char *const *members, size_t nmembers,
			      int64_t *offsets, uint64_t *sizeof_out,
			      bool *had_dwarf)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	*had_dwarf = dw != NULL;
	if (dw == NULL)
		return false;
	hw_syms_dwarf_read(s, mod);

	struct budget b = { .dies = HW_SYM_MAX_DIES,
			    .units = HW_SYM_MAX_UNITS };
	Dwarf_Die st;
	bool found = false;
	if (near_addr != 0) {
		Dwarf_Addr cubias;
		Dwarf_Die *cudie = dwfl_module_addrdie(mod, near_addr, &cubias);
		if (cudie != NULL) {
			Dwarf_Die copy = *cudie;
			found = search_unit(&copy, tag, &st, &b, 0);
		} else {
			/* Data: through a function of the same file, if
			   that unit really holds the variable.  */
			GElf_Addr code;
			if (code_in_same_file(mod, near_addr, &code) &&
			    (cudie = dwfl_module_addrdie(mod, code,
							 &cubias)) != NULL) {
				Dwarf_Die copy = *cudie;
				if (unit_has_variable_at(&copy,
							 near_addr - bias, &b))
					found = search_unit(&copy, tag, &st,
							    &b, 0);
			}
		}
	}
	if (!found)
		found = scan_units(dw, near_addr != 0, near_addr - bias, tag,
				   &st, &b);
	if (!found)
		return false;

	if (nmembers > 0)
		read_members(&st, members, nmembers, offsets, &b);
	int size = dwarf_bytesize(&st);
	*sizeof_out = size >= 0 ? (uint64_t)size : 0;
	return true;
}

bool hw_syms_struct_layout(struct hw_syms *s, const struct hw_module *m,
			   uint64_t near_addr, const char *tag,
			   const char *const *members, size_t nmembers,
			   int64_t *offsets, uint64_t *sizeof_out)
{
	for (size_t i = 0; offsets != NULL && i < nmembers; i++)
		offsets[i] = -1;
	if (s == NULL || m == NULL || m->handle == NULL || tag == NULL ||
	    (nmembers > 0 && (members == NULL || offsets == NULL)))
		return false;
	Dwfl_Module *mod = m->handle;
	/* The cache is keyed by the address in the file: the same request
	   wherever the library was loaded.  */
	uint64_t near = near_addr ? near_addr - m->bias : 0;
	bool found, had_dwarf;
	uint64_t size = 0;
	if (hw_layout_cache_get(s, mod, near, tag, members, nmembers, &found,
				offsets, &size)) {
		s->nlayouts_cached++;
	} else {
		found = layout_from_dwarf(s, mod, near_addr, tag, members,
					  nmembers, offsets, &size,
					  &had_dwarf);
		if (had_dwarf)
			hw_layout_cache_put(s, mod, near, tag, members,
					    nmembers, found, offsets, size);
	}
	if (found && sizeof_out != NULL)
		*sizeof_out = size;
	return found;
}

size_t hw_syms_layouts_cached(const struct hw_syms *s)
{
	return s != NULL ? s->nlayouts_cached : 0;
}
