/* unwind.c - a thread's stack frames through libdwfl's unwinder.
 *
 * libdwfl unwinds from a thread state it asks for through callbacks:
 * the initial registers and a memory reader.  heapwalk's targets (a core,
 * a live process's snapshot, gdb's memory) all have both, so the
 * callbacks serve whichever thread the caller hands over (the request
 * in struct hw_syms), and the same code unwinds every target; libdwfl's
 * own core and ptrace attachers would each serve only one kind.
 */
#include <elf.h>
#include <string.h>

#include "sym-private.h"

#define UNWIND_MAX_REGS 33

/* DWARF register numbers of the x86_64 psABI (0 rax, 1 rdx, 2 rcx,
   3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip) taken from
   elf_gregset_t's order (r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx
   rdx rsi rdi orig_rax rip cs eflags rsp ...).  */
static const int8_t x86_64_greg_of_dwarf[17] = {
	10, 12, 11, 5, 13, 14, 4, 19, 9, 8, 7, 6, 3, 2, 1, 0, 16,
};

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	(void)dwfl;
	const struct hw_syms *s = arg;
	if (s->unwind_req == NULL || s->unwind_req->tid != tid)
		return false;
	*thread_arg = (void *)s->unwind_req;
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	(void)arg;
	(void)thread_arg;
	return 0;    /* threads are only asked for by tid */
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	(void)dwfl;
	const struct hw_syms *s = arg;
	uint64_t v;
	if (s->unwind_req == NULL ||
	    !s->unwind_req->read(s->unwind_req->cookie, addr, &v))
		return false;
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct hw_unwind_thread *th = thread_arg;
	Dwarf_Word regs[UNWIND_MAX_REGS];
	if (th->machine == EM_X86_64) {
		if (th->nregs <= 19)
			return false;
		for (unsigned i = 0; i < 17; i++)
			regs[i] = th->regs[x86_64_greg_of_dwarf[i]];
		return dwfl_thread_state_registers(thread, 0, 17, regs);
	}
	if (th->machine == EM_AARCH64) {
		/* x0-x30 and sp are DWARF 0-31, as in the gregset; then pc.  */
		if (th->nregs < 33)
			return false;
		for (unsigned i = 0; i < 32; i++)
			regs[i] = th->regs[i];
		if (!dwfl_thread_state_registers(thread, 0, 32, regs))
			return false;
		dwfl_thread_state_register_pc(thread, th->regs[32]);
		return true;
	}
	return false;
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct collect {
	Dwfl *dwfl;
	struct hw_frame *out;
	size_t n, max;
	unsigned sp_reg;
};

static int one_frame(Dwfl_Frame *frame, void *arg)
{
	struct collect *c = arg;
	Dwarf_Addr pc;
	bool activation = false;
	Dwarf_Word sp = 0;
	if (c->n >= c->max || !dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (dwfl_frame_reg(frame, c->sp_reg, &sp) != 0)
		sp = 0;
	/* A stack that does not grow towards the caller is a loop or
	   garbage: stop there; so is the same frame twice.  */
	if (c->n && sp && c->out[c->n - 1].sp && sp < c->out[c->n - 1].sp)
		return DWARF_CB_ABORT;
	if (c->n && pc == c->out[c->n - 1].pc && sp == c->out[c->n - 1].sp)
		return DWARF_CB_ABORT;
	/* A caller's pc in no loaded file is data read as a return address
	   (text such as "NTRWITEB" from a smashed frame), not a frame: the
	   unwinding ends before it.  The first frame is where the thread
	   was, whatever it holds (a jump into garbage is worth seeing).  */
	if (c->n && dwfl_addrmodule(c->dwfl, activation ? pc : pc - 1) == NULL)
		return DWARF_CB_ABORT;
	c->out[c->n++] = (struct hw_frame){ .pc = pc, .sp = sp,
					    .activation = activation };
	return DWARF_CB_OK;
}

size_t hw_syms_unwind(struct hw_syms *s, const struct hw_unwind_thread *th,
		      struct hw_frame *out, size_t max)
{
	if (s == NULL || s->dwfl == NULL || th == NULL || th->tid <= 0 ||
	    s->unwind_failed || max == 0)
		return 0;
	if (!s->unwind_attached) {
		/* The core says which machine; without one (a process, gdb)
		   libdwfl takes it from a module.  */
		if (!dwfl_attach_state(s->dwfl, s->core, th->tid, &callbacks, s)) {
			s->unwind_failed = true;
			return 0;
		}
		s->unwind_attached = true;
	}
	struct collect c = { .dwfl = s->dwfl, .out = out, .max = max,
			     .sp_reg = th->machine == EM_AARCH64 ? 31 : 7 };
	s->unwind_req = th;
	(void)dwfl_getthread_frames(s->dwfl, th->tid, one_frame, &c);
	s->unwind_req = NULL;
	return c.n;
}
