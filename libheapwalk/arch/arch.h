/* arch.h - what heapwalk needs to know about a CPU architecture.
 *
 * Facts only, as const tables: pointer size, where the kernel's
 * elf_prstatus keeps the general registers, which of them are the stack
 * pointer, the program counter and the thread pointer.  Adding an
 * architecture means adding one table in one file.
 */
#ifndef HW_ARCH_H
#define HW_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct hw_arch {
	const char *name;        /* "x86_64", "aarch64" */
	uint16_t e_machine;
	unsigned ptr_size;
	size_t prstatus_size;    /* sizeof(struct elf_prstatus) */
	size_t pr_reg_off;       /* offset of pr_reg in it */
	unsigned nregs;          /* u64 words in pr_reg */
	int sp_reg, pc_reg;      /* indexes into pr_reg */
	int tp_reg;              /* index of the thread pointer, -1 if it
				    lives in its own note (tp_note) */
	uint32_t tp_note;        /* note type carrying the thread pointer */
	unsigned dtv_off;        /* glibc's TCB: where the thread pointer
				    keeps its DTV pointer */
	unsigned red_zone;       /* bytes below the stack pointer a leaf
				    function may use (the ABI's red zone) */
	uint64_t ptr_mask;       /* bits of a pointer that address memory
				    (aarch64 top-byte tags are stripped) */
	const char *const *reg_names;
};

const struct hw_arch *hw_arch_by_machine(uint16_t e_machine);

#endif /* HW_ARCH_H */
