// guard.cc - the plugin's one C++ function (see guard.h): gdb throws
// its Ctrl-C through target_read, and only C++ can catch it before it
// reaches gdb's frame sniffer.
#include <gdb/jit-reader.h>

#include "guard.h"

bool guarded_read(struct guarded_reader *g, uint64_t addr, void *buf,
		  int len)
{
	if (g->interrupted)
		return false;
	try {
		return g->cb->target_read(addr, buf, len) == GDB_SUCCESS;
	} catch (...) {
		// A quit, or any other gdb error thrown mid-read: the quit
		// flag is cleared by the throw, gdb's remote protocol is
		// between packets.  Nothing more is read this request.
		g->interrupted = true;
		return false;
	}
}
