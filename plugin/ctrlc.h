/* ctrlc.h - Ctrl-C while a walk runs without reading through gdb.
 *
 * gdb's Ctrl-C reaches the plugin as an exception thrown by the next
 * target_read (guard.h).  A core mapped in place (coremap.h) is walked
 * without any: the SIGINT would only be seen once the report is done,
 * seconds later on a big core.  While a request runs, the plugin's own
 * SIGINT handler stands before gdb's: it raises the flag the library's
 * walks poll (hw_open_opts.cancel), and passes the signal on to gdb's
 * handler only when the walk reads through gdb (which then throws out of
 * the read, as before).  A walk in place keeps the signal for itself, so
 * gdb has no quit pending when the request is over and prints the
 * plugin's "interrupted" as its answer.
 */
#ifndef HEAPWALK_PLUGIN_CTRLC_H
#define HEAPWALK_PLUGIN_CTRLC_H

#include <signal.h>
#include <stdbool.h>

/* Stand before gdb's SIGINT handler until ctrlc_unwatch; the flag is
   cleared.  pass_on: gdb's handler runs too.  Returns the flag.  */
const volatile sig_atomic_t *ctrlc_watch(bool pass_on);

/* Put gdb's handler back; whether a SIGINT came meanwhile.  */
bool ctrlc_unwatch(void);

#endif
