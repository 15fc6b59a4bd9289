/* Forwards a session's records, strings and drops to the .grt writer. */
#include "sources/writer_sink.h"

static struct grt_writer *writer_of(struct grt_sink *sink)
{
	return ((struct writer_sink *)sink)->writer;
}

static int sink_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *origin,
		       const void *payload, uint32_t len)
{
	return grt_writer_append(writer_of(sink), type, origin, payload, len);
}

static uint32_t sink_intern(struct grt_sink *sink, const char *text)
{
	return grt_writer_intern(writer_of(sink), text);
}

static int sink_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	return grt_writer_drop(writer_of(sink), source, count, ts_ns);
}

void writer_sink_init(struct writer_sink *ws, struct grt_writer *writer)
{
	ws->sink = (struct grt_sink){ .append = sink_append, .intern = sink_intern, .drop = sink_drop };
	ws->writer = writer;
}
