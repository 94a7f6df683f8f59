/* stack.c - a thread's frames through libdwfl's unwinder (stack.h),
 * reading the target's memory a word at a time.
 */
#include "../arch/arch.h"
#include "stack.h"

static bool read_word(void *cookie, uint64_t addr, uint64_t *v)
{
	return hw_read_u64(cookie, addr, v);
}

size_t hw_thread_frames(struct hw_session *s, const struct hw_thread *th,
			struct hw_frame *out, size_t max)
{
	struct hw_target *t = s->target;
	if (!s->syms || !th->nregs)
		return 0;
	struct hw_unwind_thread req = {
		.tid = th->tid, .machine = t->arch->e_machine,
		.regs = th->regs, .nregs = th->nregs, .read = read_word,
		.cookie = t };
	return hw_syms_unwind(s->syms, &req, out, max);
}
