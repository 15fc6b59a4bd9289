/* A session sink for live views (snoop, top): strings interned in memory, each record to a
 * callback. */
#ifndef GRT_LIVE_SINK_H
#define GRT_LIVE_SINK_H

#include <stdint.h>
#include "common/u64_map.h"
#include "sources/session.h"
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

/* Called for every record a source emits, drops included (as GRT_REC_DROP records). */
typedef void (*grt_live_record_fn)(void *ctx, const struct grt_record *rec,
				   const struct grt_strings *strings);

struct grt_live_sink {
	struct grt_sink sink; /* what the session sees; first member */
	struct grt_strings *strings;
	struct u64_map ids_by_hash; /* fnv1a(text) -> id, collisions at hash+1, +2, ... */
	uint32_t next_id;
	uint32_t seq;
	grt_live_record_fn on_record;
	void *ctx;
};

/* Returns 0 or -ENOMEM. */
int grt_live_sink_init(struct grt_live_sink *ls, grt_live_record_fn on_record, void *ctx);
void grt_live_sink_destroy(struct grt_live_sink *ls);

#endif
