/* The part every ring-buffer BPF source shares: loading its skeleton, event delivery, drops, failure text. */
#ifndef GRT_BPF_SOURCE_H
#define GRT_BPF_SOURCE_H

#include <bpf/libbpf.h>
#include "sources/session.h"

struct grt_bpf_source {
	struct grt_session *session;
	enum grt_source_id id;
	struct ring_buffer *ring;
	int drops_fd;			/* the program's dropped_events map */
	unsigned long long drops_seen;
};

/*
 * Starts delivering events: ring_map's records go to on_event(ctx) from the
 * session loop; drops is the program's `dropped_events` map.
 */
int grt_bpf_source_start(struct grt_bpf_source *b, struct grt_session *s, enum grt_source_id id,
			 struct bpf_map *ring_map, struct bpf_map *drops, ring_buffer_sample_fn on_event,
			 void *ctx);
/* Consumes what is left in the ring buffer (call after detaching the programs). */
void grt_bpf_source_flush(struct grt_bpf_source *b);
/*
 * A tick's work: consumes what the ring holds (a source that suppresses
 * wakeups is only read here) and reports drops.
 */
void grt_bpf_source_drain(struct grt_bpf_source *b);
/* Reports drops since the last call to the session. */
void grt_bpf_source_count_drops(struct grt_bpf_source *b);
void grt_bpf_source_stop(struct grt_bpf_source *b);
/*
 * Loads and attaches a source's skeleton (what every NAME_bpf__load() and __attach() do), then
 * starts delivering its events as grt_bpf_source_start() does.
 */
int grt_bpf_source_load_start(struct grt_bpf_source *b, struct grt_session *s,
			      struct bpf_object_skeleton *skel, enum grt_source_id id,
			      struct bpf_map *ring_map, struct bpf_map *drops,
			      ring_buffer_sample_fn on_event, void *ctx);
/*
 * Detaches the skeleton's programs (skel may be NULL: never opened), delivers what the ring
 * buffer still holds, then stops delivering; the caller destroys the skeleton.
 */
void grt_bpf_source_detach(struct grt_bpf_source *b, struct bpf_object_skeleton *skel);
/* Records "NAME: <libbpf's last message or strerror>" as the session's error; returns err. */
int grt_bpf_source_fail(struct grt_session *s, const char *name, int err);

#endif
