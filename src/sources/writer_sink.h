/* A session sink that writes records into a .grt file. */
#ifndef GRT_WRITER_SINK_H
#define GRT_WRITER_SINK_H

#include "sources/session.h"
#include "trace/grt_writer.h"

struct writer_sink {
	struct grt_sink sink;	/* first: the session sees only this */
	struct grt_writer *writer;
};

void writer_sink_init(struct writer_sink *ws, struct grt_writer *writer);

#endif
