/* The `gpu` source's GPU eBPF half: the programs handed to the library, what comes back decoded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/clock.h"
#include "gpubpf/bpf_session.h"
#include "gpubpf/bpf_trace.h"
#include "gpubpf/gpubpf.h"
#include "inject/inject_proto.h"
#include "sources/gpu_bpf.h"
#include "sources/session.h"
#include "trace/records_bpf.h"
#include "trace/records_core.h"

#define DEFAULT_THREADS (1u << 20)
#define DEFAULT_RING_MB 16

/* A map image being put together from its chunks. */
struct image {
	uint8_t *buf;
	uint64_t total, filled;
	uint32_t snapshot;
};

struct gpu_bpf {
	struct grt_session *session;
	struct gpubpf_bundle bundles[GPUBPF_MAX_OBJECTS]; /* loaded at attach, freed with gb */
	size_t nr;
	struct gpubpf_out out;
	struct image img[GRT_BPF_MAX_MAPS];
};

static int session_append(void *ctx, uint16_t type, const struct grt_event_origin *at,
			  const void *payload, uint32_t len)
{
	return grt_session_emit(ctx, type, at, payload, len);
}

static uint32_t session_intern(void *ctx, const char *text)
{
	return grt_session_intern(ctx, text);
}

static int session_drop(void *ctx, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	(void)ts_ns;
	grt_session_count_drop(ctx, (enum grt_source_id)source, count);
	return 0;
}

static uint64_t env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return def;
	n = strtoull(v, &end, 10);
	return *end || n < min || n > max ? def : n;
}

/* Loads, verifies and translates the objects: 0, or the session failed with the refusal's line. */
static int load_bundles(struct grt_session *s, struct gpu_bpf *gb, const char *const *paths,
			unsigned nr, uint64_t *load_ns)
{
	uint64_t t0 = grt_monotonic_ns();
	char err[512];

	if (nr > GPUBPF_MAX_OBJECTS)
		return grt_session_fail(s, -E2BIG,
					"more than %d --bpf objects; combine programs into fewer objects",
					GPUBPF_MAX_OBJECTS);
	if (gpubpf_bundles_load(paths, nr, gb->bundles, err, sizeof(err)))
		return grt_session_fail(s, -EINVAL, "%s", err);
	gb->nr = nr;
	*load_ns = grt_monotonic_ns() - t0;
	return 0;
}

int gpu_bpf_new(struct grt_session *s, const char *const *paths, unsigned nr,
		struct gpu_bpf **out, void **blob, size_t *blob_len)
{
	struct gpu_bpf *gb = calloc(1, sizeof(*gb));
	struct grt_event_origin at = {.ts_ns = grt_monotonic_ns()};
	uint32_t threads = (uint32_t)env_u64("GRTRACE_GPU_BPF_THREADS", DEFAULT_THREADS, 32,
					     1u << 28);
	/* KB: small rings for tests of losses */
	uint64_t ring = env_u64("GRTRACE_GPU_BPF_RING_KB", DEFAULT_RING_MB << 10, 4, 1 << 20) << 10;
	uint64_t load_ns = 0;
	size_t progs = 0;
	int err;

	if (!gb)
		return grt_session_fail(s, -ENOMEM, "out of memory");
	err = load_bundles(s, gb, paths, nr, &load_ns);
	if (err) {
		free(gb);
		return err;
	}
	gb->session = s;
	gb->out = (struct gpubpf_out){s, session_append, session_intern, session_drop};
	for (size_t i = 0; !err && i < gb->nr; i++) {
		err = gpubpf_trace_bundle(&gb->out, &gb->bundles[i], (uint32_t)i, &at);
		progs += gb->bundles[i].nr_progs;
	}
	if (!err) {
		char line[160];
		struct grt_source_status_rec st = {.source = GRT_SRC_GPU};

		snprintf(line, sizeof(line),
			 "GPU eBPF: %zu objects, %zu programs verified and translated in %.2f ms",
			 gb->nr, progs, load_ns / 1e6);
		st.message_str = grt_session_intern(s, line);
		err = grt_session_emit(s, GRT_REC_SOURCE_STATUS, &at, &st, sizeof(st));
	}
	*blob = err ? NULL : gpubpf_session_pack(gb->bundles, gb->nr, threads, ring, blob_len);
	if (!*blob) {
		gpu_bpf_free(gb);
		return grt_session_fail(s, err ? err : -E2BIG,
					"source gpu: cannot hand the GPU eBPF programs over: %s",
					err ? strerror(-err) : "too many programs or maps");
	}
	*out = gb;
	return 0;
}

/* The bundle holding map slot, and the map's index in it; NULL when no map has the slot. */
static const struct gpubpf_bundle *slot_map(const struct gpu_bpf *gb, uint32_t slot, size_t *map)
{
	for (size_t i = 0; i < gb->nr; i++) {
		const struct gpubpf_bundle *b = &gb->bundles[i];

		if (slot >= b->map_slot_base && slot < b->map_slot_base + b->obj.nr_maps) {
			*map = slot - b->map_slot_base;
			return b;
		}
	}
	return NULL;
}

/* A chunk of a map image: the whole image, once complete, becomes one snapshot of dumps. */
static int on_map(struct gpu_bpf *gb, const struct inj_bpf_data *m,
		  const struct grt_event_origin *at)
{
	struct image *im = &gb->img[m->slot];
	size_t map;
	const struct gpubpf_bundle *b = slot_map(gb, m->slot, &map);
	int err;

	if (!b || b->obj.maps[map].rodata || gpubpf_map_is_ring(b->obj.maps[map].type) ||
	    !m->total || m->total > (1ull << 34) || m->offset > m->total ||
	    m->len > m->total - m->offset)
		return -EINVAL;
	if (m->offset == 0) {
		free(im->buf);
		*im = (struct image){.buf = malloc(m->total), .total = m->total,
				     .snapshot = m->snapshot};
		if (!im->buf)
			return -ENOMEM;
	}
	/* a chunk lost in between: this snapshot of the map is incomplete, so it is left out */
	if (!im->buf || m->offset != im->filled || m->total != im->total ||
	    m->snapshot != im->snapshot) {
		free(im->buf);
		memset(im, 0, sizeof(*im));
		grt_session_count_drop(gb->session, GRT_SRC_GPU, 1);
		return 0;
	}
	memcpy(im->buf + im->filled, m->data, m->len);
	im->filled += m->len;
	if (im->filled < im->total)
		return 0;
	err = gpubpf_trace_map(&gb->out, b, map, im->buf, im->total, m->thread_capacity,
			       m->snapshot, m->flags & INJ_BPF_FINAL, at);
	free(im->buf);
	memset(im, 0, sizeof(*im));
	return err == -EINVAL ? -EINVAL : 0;
}

/* Records of a ring, behind a header saying how many bytes they take and how many were lost. */
static int on_ring(struct gpu_bpf *gb, const struct inj_bpf_data *m,
		   const struct grt_event_origin *at)
{
	struct gpubpf_clock clk = {m->clock_gpu_ref, m->clock_mono_ref, m->clock_mult};
	struct grt_bpf_ring head = {.head = m->len, .dropped = m->dropped, .capacity = m->len};
	uint8_t *img = calloc(1, GRT_BPF_RING_HEAD_SIZE + (size_t)m->len); /* drop slots 0 */
	const struct gpubpf_bundle *b = NULL;
	size_t map = 0;
	int err;

	if (!img)
		return -ENOMEM;
	if (m->kind == INJ_BPF_RING &&
	    (!(b = slot_map(gb, m->slot, &map)) || !gpubpf_map_is_ring(b->obj.maps[map].type))) {
		free(img);
		return -EINVAL;
	}
	memcpy(img, &head, sizeof(head));
	memcpy(img + GRT_BPF_RING_HEAD_SIZE, m->data, m->len);
	err = b ? gpubpf_trace_ring(&gb->out, b, map, img, GRT_BPF_RING_HEAD_SIZE + m->len, &clk,
				    at)
		: gpubpf_trace_printk(&gb->out, img, GRT_BPF_RING_HEAD_SIZE + m->len, &clk, at);
	free(img);
	return err == -EINVAL ? -EINVAL : 0;
}

int gpu_bpf_on_data(struct gpu_bpf *gb, const void *payload, uint32_t len)
{
	const struct inj_bpf_data *m = payload;
	struct grt_event_origin at;

	if (!gb || len < sizeof(*m) || m->len != len - sizeof(*m) || m->slot >= GRT_BPF_MAX_MAPS + 1)
		return -EINVAL;
	at = (struct grt_event_origin){
	    .ts_ns = m->head.ts_ns, .cpu = m->head.cpu, .pid = m->head.pid, .tid = m->head.tid};
	switch (m->kind) {
	case INJ_BPF_MAP:
		return m->slot < GRT_BPF_MAX_MAPS ? on_map(gb, m, &at) : -EINVAL;
	case INJ_BPF_RING:
	case INJ_BPF_PRINTK:
		return on_ring(gb, m, &at);
	default:
		return -EINVAL;
	}
}

void gpu_bpf_free(struct gpu_bpf *gb)
{
	if (!gb)
		return;
	for (unsigned i = 0; i < GRT_BPF_MAX_MAPS; i++)
		free(gb->img[i].buf);
	gpubpf_bundles_free(gb->bundles, gb->nr);
	free(gb);
}
