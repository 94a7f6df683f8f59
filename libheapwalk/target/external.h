/* external.h - a target whose memory a front end reads (gdb's).  */
#ifndef HW_TARGET_EXTERNAL_H
#define HW_TARGET_EXTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../heapwalk.h"
#include "target.h"

struct hw_external_opts {
	uint64_t cache_max;      /* bytes the cache may hold */
	const char *sysroot;     /* for link_map's files, or NULL */
};

/* A target over what the front end described in m (copied): its
   mappings become lazy regions read through m->read.  On failure err
   holds one line.  */
enum hw_status hw_external_open(const struct hw_memory *m,
				const struct hw_external_opts *opts,
				struct hw_target **out, char *err,
				size_t errlen);

#endif /* HW_TARGET_EXTERNAL_H */
