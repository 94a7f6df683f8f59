/* vtype.h - the C++ class of a block, from the vtable pointer it starts
 * with.
 *
 * A C++ object of a class with virtual functions (or virtual bases)
 * starts with a pointer to its class's vtable (Itanium C++ ABI, which
 * GCC and Clang follow on Linux): not to the start of the vtable symbol
 * `_ZTV<type>`, but to its "address point", just after the
 * offset-to-top and typeinfo words (and after the vcall and vbase
 * offsets that come before them when the class has virtual bases).  A
 * class with several polymorphic bases has one vtable per base part,
 * all inside the same `_ZTV` symbol; the parts at a non-zero offset
 * point at the secondary ones.
 *
 * A block's type is named when its first word W:
 *   - lies in a file-backed mapping of the target (anonymous memory,
 *     the heap included, is rejected without asking the symbol layer),
 *   - falls inside a `_ZTV...` symbol at least two words after its start,
 *   - is an address point of a complete object: the offset-to-top word
 *     at W - 2 words is 0 (the secondary vtables have the negated offset
 *     of their base part there, so a block that starts at a secondary
 *     vtable is not a complete object: no type),
 *   - and the typeinfo word at W - 1 word is 0 (-fno-rtti) or points at
 *     the start of the `_ZTI` symbol of the same type.
 * The name is the type's mangling (what follows `_ZTV`) demangled by the
 * C++ runtime's __cxa_demangle: "Circle", "ns::Conn", "Box<int>",
 * "(anonymous namespace)::Local": the same text as typeid(*p).name()
 * demangled.  A type that does not demangle keeps its mangled name.
 *
 * The symbols come from each module's symbol table: a program's own
 * vtables are in the .symtab of its executable (.dynsym holds only the
 * exported ones), so a stripped executable whose debug file is not at
 * hand names none of its own classes; a shared library's exported
 * vtables stay in its .dynsym.
 *
 * A block that is not a C++ object but starts with a pointer to a
 * vtable (a struct whose first member is a polymorphic object, an
 * array of them in a std::vector's buffer) is named after that object's
 * class: what the memory says, not what the program allocated.  A
 * block caught during construction or destruction has the vtable of
 * the base being built then.
 *
 * Results are cached on the session per vtable word, positive and
 * negative (millions of blocks share a few hundred vtables); the cache
 * is bounded (negative results are dropped when it is full).  Not
 * thread-safe: one report's thread at a time (the walks' consumer).
 */
#ifndef HW_VTYPE_H
#define HW_VTYPE_H

#include <stdint.h>

#include "../session/session.h"

struct hw_vtypes;

/* The class of the block of `size` usable bytes at addr, or NULL.  The
   name stays valid until the session is closed, and one class always
   comes back as the same pointer (names are interned), so callers may
   group by pointer.  NULL also when out of memory (nothing cached).  */
const char *hw_vtype_of(struct hw_session *s, uint64_t addr, uint64_t size);

/* Free the session's cache (hw_session_close).  */
void hw_vtypes_free(struct hw_vtypes *v);

#endif /* HW_VTYPE_H */
