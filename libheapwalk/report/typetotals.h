/* typetotals.h - the blocks in use per C++ class (report/typetotals.c).
 */
#ifndef HW_REPORT_TYPETOTALS_H
#define HW_REPORT_TYPETOTALS_H

#include "../session/session.h"

/* The blocks in use per class, unsorted, their names interned on s; the
   blocks of no known type in *none (its name NULL).  Free *rows.  */
struct hw_type_total {
	const char *name;
	uint64_t count, bytes;
};
enum hw_status hw_type_totals(struct hw_session *s, struct hw_type_total **rows,
			      size_t *n, struct hw_type_total *none);

#endif /* HW_REPORT_TYPETOTALS_H */
