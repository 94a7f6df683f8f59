/* arch.c - the per-architecture tables.  */
#include <elf.h>

#include "arch.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#define NT_ARM_TLS_TYPE 0x401

/* struct user_regs_struct, in the order the kernel stores it.  */
static const char *const x86_64_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9",
	"r8", "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs",
	"eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

/* struct user_pt_regs: x0..x30, sp, pc, pstate.  */
static const char *const aarch64_regs[] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
	"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20",
	"x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30",
	"sp", "pc", "pstate",
};

static const struct hw_arch arches[] = {
	{
		.name = "x86_64", .e_machine = EM_X86_64, .ptr_size = 8,
		.prstatus_size = 336, .pr_reg_off = 112, .nregs = 27,
		.sp_reg = 19, .pc_reg = 16, .tp_reg = 21, .tp_note = 0,
		.dtv_off = 8, .red_zone = 128,
		.ptr_mask = ~(uint64_t)0, .reg_names = x86_64_regs,
	},
	{
		.name = "aarch64", .e_machine = EM_AARCH64, .ptr_size = 8,
		.prstatus_size = 392, .pr_reg_off = 112, .nregs = 34,
		.sp_reg = 31, .pc_reg = 32, .tp_reg = -1,
		.tp_note = NT_ARM_TLS_TYPE,
		/* Top-byte-ignore: MTE and HWASan tags live in bits 56-63.  */
		.ptr_mask = ((uint64_t)1 << 56) - 1, .reg_names = aarch64_regs,
	},
};

const struct hw_arch *hw_arch_by_machine(uint16_t e_machine)
{
	for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
		if (arches[i].e_machine == e_machine)
			return &arches[i];
	return NULL;
}
