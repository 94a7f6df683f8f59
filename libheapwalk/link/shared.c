/* shared.c - every version of the calls whose arguments changed, as
 * libheapwalk.so exports them (libheapwalk.map): a program linked
 * against HEAPWALK_0.1 calls hw_session_run@HEAPWALK_0.1 for ever.
 * Linked into the shared library alone (static.c is the static link's).
 */
#include "../session/session.h"

/* HEAPWALK_0.6: struct hw_output with its size and form.  */
__asm__(".symver hw_session_run_0_6, hw_session_run@@HEAPWALK_0.6");
enum hw_status hw_session_run_0_6(hw_session *s, int argc,
				  char *const argv[],
				  const struct hw_output *out);

enum hw_status hw_session_run_0_6(hw_session *s, int argc,
				  char *const argv[],
				  const struct hw_output *out)
{
	return hw_command_run(s, argc, argv, out);
}

/* HEAPWALK_0.1: struct hw_output had no size and a bool for JSON.  */
struct hw_output_0_1 {
	hw_write_fn *write;
	void *cookie;
	bool json;
	bool color;
};

__asm__(".symver hw_session_run_0_1, hw_session_run@HEAPWALK_0.1");
enum hw_status hw_session_run_0_1(hw_session *s, int argc,
				  char *const argv[],
				  const struct hw_output_0_1 *old);

enum hw_status hw_session_run_0_1(hw_session *s, int argc,
				  char *const argv[],
				  const struct hw_output_0_1 *old)
{
	struct hw_output out = HW_OUTPUT_INIT;
	if (old) {
		out.write = old->write;
		out.cookie = old->cookie;
		out.form = old->json ? HW_FORM_JSON : HW_FORM_TEXT;
		out.color = old->color;
	}
	return hw_command_run(s, argc, argv, &out);
}
