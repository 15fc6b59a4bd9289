/* The live sink: what `record` writes to a file, handed to a printer instead. */
#include <errno.h>
#include <string.h>
#include "cli/live_sink.h"
#include "trace/records_core.h"

static struct grt_live_sink *live_of(struct grt_sink *sink)
{
	return (struct grt_live_sink *)sink;
}

static uint64_t text_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static uint32_t live_intern(struct grt_sink *sink, const char *text)
{
	struct grt_live_sink *ls = live_of(sink);
	uint64_t h, id;

	if (!text || !text[0])
		return 0;
	for (h = text_hash(text); u64_map_get(&ls->ids_by_hash, h, &id); h++)
		if (!strcmp(grt_strings_get(ls->strings, (uint32_t)id), text))
			return (uint32_t)id;
	id = ls->next_id;
	if (grt_strings_set(ls->strings, (uint32_t)id, text) ||
	    u64_map_put(&ls->ids_by_hash, h, id))
		return 0;
	ls->next_id++;
	return (uint32_t)id;
}

static int live_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *origin,
		       const void *payload, uint32_t len)
{
	struct grt_live_sink *ls = live_of(sink);
	struct grt_record rec = {
	    .hdr =
		{
		    .magic = GRT_RECORD_MAGIC,
		    .version = GRT_RECORD_VERSION,
		    .type = type,
		    .payload_len = len,
		    .cpu = origin->cpu,
		    .pid = origin->pid,
		    .tid = origin->tid,
		    .seq = ls->seq++,
		    .ts_ns = origin->ts_ns,
		},
	    .payload = payload,
	};

	ls->on_record(ls->ctx, &rec, ls->strings);
	return 0;
}

static int live_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	struct grt_drop_rec drop = {.source = source, .count = count};
	struct grt_event_origin origin = {.ts_ns = ts_ns};

	return live_append(sink, GRT_REC_DROP, &origin, &drop, sizeof(drop));
}

int grt_live_sink_init(struct grt_live_sink *ls, grt_live_record_fn on_record, void *ctx)
{
	memset(ls, 0, sizeof(*ls));
	ls->strings = grt_strings_new();
	if (!ls->strings)
		return -ENOMEM;
	u64_map_init(&ls->ids_by_hash);
	ls->next_id = 1;
	ls->on_record = on_record;
	ls->ctx = ctx;
	ls->sink.append = live_append;
	ls->sink.intern = live_intern;
	ls->sink.drop = live_drop;
	return 0;
}

void grt_live_sink_destroy(struct grt_live_sink *ls)
{
	grt_strings_free(ls->strings);
	u64_map_destroy(&ls->ids_by_hash);
}
