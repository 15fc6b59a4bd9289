/* Reading a whole trace for its integrity alone (for commands whose reader is elsewhere). */
#include <stdio.h>
#include "trace/grt_reader.h"
#include "trace/trace_verify.h"

int grt_trace_verify(const char *path, char *msg, size_t len)
{
	struct grt_reader *r = grt_reader_open(path, NULL, 0);
	struct grt_record rec;
	int damaged;

	if (!r)
		return 0;
	while (grt_reader_next(r, &rec) == GRT_READ_OK)
		;
	damaged = grt_reader_damage(r) != NULL;
	if (damaged)
		snprintf(msg, len, "%s", grt_reader_damage(r));
	grt_reader_close(r);
	return damaged;
}
