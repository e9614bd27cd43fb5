/* Printing a trace as text (maya trace dump). */
#ifndef MAYA_TRACE_DUMP_H
#define MAYA_TRACE_DUMP_H

#include <stdio.h>

/* One line per record with every decoded field. A damaged trace prints what
 * came before the damage, then fails with a message naming file and offset. */
int maya_trace_dump(const char *path, FILE *out, int allow_truncated);

#endif
