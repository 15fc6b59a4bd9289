/* Peer copies (cuMemcpyPeer*, device-to-device copies across devices) by device pair, link and sync bandwidth. */
#ifndef GRT_PEER_COPIES_H
#define GRT_PEER_COPIES_H

#include <stdbool.h>
#include <stdio.h>
#include "common/json_writer.h"
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

struct peer_copies;

struct peer_copies *peer_copies_new(void);
void peer_copies_free(struct peer_copies *p);
/* Every record in trace order: context records name the devices, memcpy records are counted. */
void peer_copies_record(struct peer_copies *p, const struct grt_record *rec,
			const struct grt_strings *strings);
/* Whether any peer copy was seen. */
bool peer_copies_any(const struct peer_copies *p);
/* "peer copies (source device -> destination device):" and one row per pair; nothing when none. */
void peer_copies_print_text(const struct peer_copies *p, FILE *out);
/* An array, one object per pair (src/dst null when the context's device is unknown). */
void peer_copies_print_json(const struct peer_copies *p, struct json_writer *w);
/* Memory ran out: some contexts are unknown. */
bool peer_copies_incomplete(const struct peer_copies *p);

#endif
