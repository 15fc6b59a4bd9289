/* Ring-buffer delivery, drop accounting and failure messages shared by the BPF sources. */
#include <errno.h>
#include <string.h>
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"

int grt_bpf_source_start(struct grt_bpf_source *b, struct grt_session *s, enum grt_source_id id,
			 struct bpf_map *ring_map, struct bpf_map *drops, ring_buffer_sample_fn on_event,
			 void *ctx)
{
	b->session = s;
	b->id = id;
	b->drops_fd = bpf_map__fd(drops);
	b->drops_seen = 0;
	b->ring = grt_bpf_watch_ringbuf(s, bpf_map__fd(ring_map), on_event, ctx);
	if (!b->ring)
		return errno ? -errno : -ENOMEM;
	return 0;
}

void grt_bpf_source_flush(struct grt_bpf_source *b)
{
	if (b->ring)
		ring_buffer__consume(b->ring);
}

void grt_bpf_source_drain(struct grt_bpf_source *b)
{
	/* wakeups come in batches (ringbuf_wakeup.bpf.h): each tick takes what the last left */
	grt_bpf_source_flush(b);
	grt_bpf_source_count_drops(b);
}

void grt_bpf_source_count_drops(struct grt_bpf_source *b)
{
	if (b->session && b->drops_fd >= 0)
		grt_session_count_drop(b->session, b->id, grt_bpf_new_drops(b->drops_fd, &b->drops_seen));
}

void grt_bpf_source_stop(struct grt_bpf_source *b)
{
	ring_buffer__free(b->ring);
	b->ring = NULL;
}

int grt_bpf_source_load_start(struct grt_bpf_source *b, struct grt_session *s,
			      struct bpf_object_skeleton *skel, enum grt_source_id id,
			      struct bpf_map *ring_map, struct bpf_map *drops,
			      ring_buffer_sample_fn on_event, void *ctx)
{
	int err = bpf_object__load_skeleton(skel);

	if (!err)
		err = bpf_object__attach_skeleton(skel);
	if (!err)
		err = grt_bpf_source_start(b, s, id, ring_map, drops, on_event, ctx);
	return err;
}

void grt_bpf_source_detach(struct grt_bpf_source *b, struct bpf_object_skeleton *skel)
{
	if (skel) {
		bpf_object__detach_skeleton(skel);
		grt_bpf_source_flush(b);
	}
	grt_bpf_source_stop(b);
}

int grt_bpf_source_fail(struct grt_session *s, const char *name, int err)
{
	const char *why = grt_bpf_last_message();

	return grt_session_fail(s, err, "%s: %s", name, why[0] ? why : strerror(-err));
}
