/* args.h - the words after a command's name, as every command checks
 * them (report/args.c).
 */
#ifndef HW_REPORT_ARGS_H
#define HW_REPORT_ARGS_H

#include "../session/session.h"

/* HW_OK when argv (argv[0] the command's name) has at most max words
   after the name; else a usage error naming the first extra word and,
   when what is not NULL, what the command does take.  */
enum hw_status hw_args_at_most(struct hw_session *s, int argc,
			       char *const argv[], int max, const char *what);

/* The one operand of a command that takes an address (chunk, refs,
   why), as people paste it from gdb, /proc/PID/maps or heapwalk's own
   output: hexadecimal, with or without 0x; never decimal or octal.
   HW_OK with *addr set, else a usage error naming the command.  */
enum hw_status hw_args_address(struct hw_session *s, int argc,
			       char *const argv[], uint64_t *addr);

/* One address as hw_args_address takes it (hex, 0x optional).  */
bool hw_args_addr(const char *a, uint64_t *out);

/* The value of option `name` at argv[*i], given as "--name V" (then *i
   moves to V) or "--name=V": NULL when argv[*i] is not that option, ""
   when its value is missing.  */
const char *hw_args_value(int argc, char *const argv[], int *i,
			  const char *name);

/* "a,b,c": each word one of names[0..n) (NULL entries match nothing),
   or'ed into *bits as bit i for names[i].  False at the first word that
   is none, *bad and *badlen then naming it.  */
bool hw_args_names(const char *v, const char *const *names, size_t n,
		   uint32_t *bits, const char **bad, size_t *badlen);

/* A size or count as people write one: decimal, or hex with 0x, with an
   optional K, M or G (powers of 1024).  */
bool hw_args_size(const char *v, uint64_t *out);

#endif /* HW_REPORT_ARGS_H */
