/* triage.h - `heapwalk triage CORE...`: many cores, one record each
 * (cli/triage.c).
 */
#ifndef HW_CLI_TRIAGE_H
#define HW_CLI_TRIAGE_H

#include <stdbool.h>

#include "../heapwalk.h"

/* Run the triage of the cores words[1..n) name (words[0] is "triage";
   options of the triage command among them; "-": paths on standard
   input), `first` before them when not NULL (`heapwalk CORE triage`),
   each opened with o.  Records go to standard output in the order of
   the inputs.  Returns the exit status: 0 when every input has its
   record, 3 when some have an error record, 2 for a usage error.  */
int hw_cli_triage(const struct hw_open_opts *o, bool json, const char *first,
		  int n, char **words);

#endif /* HW_CLI_TRIAGE_H */
