/* buffer.c - the emitter's output buffer: what a renderer writes goes
 * into it, and it is handed to the sink when full and at the end.  Apart
 * from emit.c, which picks the renderer, so that the renderers use the
 * buffer without depending on the code that chooses them.
 */
#include <string.h>

#include "render.h"

void em_flush(struct hw_emitter *e)
{
	if (e->len && !e->failed && !e->out.write(e->out.cookie, e->buf, e->len))
		e->failed = true;
	e->len = 0;
}

void em_put_long(struct hw_emitter *e, const char *s, size_t n)
{
	while (n > 0) {
		size_t room = EM_BUF_SIZE - e->len;
		if (room == 0) {
			em_flush(e);
			room = EM_BUF_SIZE;
		}
		size_t k = n < room ? n : room;
		memcpy(e->buf + e->len, s, k);
		e->len += k;
		s += k;
		n -= k;
	}
}

void em_put_spaces(struct hw_emitter *e, size_t n)
{
	static const char spaces[64] = "                                "
				       "                                ";
	while (n > 0) {
		size_t k = n < sizeof spaces ? n : sizeof spaces;
		em_put(e, spaces, k);
		n -= k;
	}
}
