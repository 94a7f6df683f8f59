/* sizes.h - the parts of the sizes command (commands/sizes.c).  */
#ifndef HW_COMMANDS_SIZES_H
#define HW_COMMANDS_SIZES_H

#include "command.h"

/* sizes --by=type (commands/sizes-types.c).  */
enum hw_status sizes_by_type(struct hw_session *s, struct hw_emitter *e);

#endif /* HW_COMMANDS_SIZES_H */
