/* Peer copies tallied per (source, destination) device pair; devices come from the contexts the calls name. */
#include <inttypes.h>
#include <stdlib.h>
#include "analysis/alloc_devices.h"
#include "analysis/device_map.h"
#include "analysis/gpu_links.h"
#include "analysis/peer_copies.h"
#include "analysis/report_util.h"
#include "trace/records_cuda.h"

#define PEER_PAIRS 64		/* pairs kept; more are summed in the last row */

struct peer_pair {
	int32_t src;		/* DEVICE_UNKNOWN when its context was never created or retained */
	int32_t dst;
	uint64_t calls;
	uint64_t dtod_calls;	/* of calls: cuMemcpyDtoD* / cuMemcpy between allocations of the two */
	uint64_t errors;
	uint64_t bytes;
	uint64_t sync_calls;
	uint64_t async_calls;
	uint64_t timed_bytes;	/* synchronous calls that returned */
	uint64_t timed_ns;
};

struct peer_copies {
	struct device_map *devices;
	struct gpu_links *links;	/* the pcie source's topology, when recorded */
	struct alloc_devices *allocs;	/* the device of each live device allocation */
	struct peer_pair pairs[PEER_PAIRS];
	uint32_t n_pairs;
};

struct peer_copies *peer_copies_new(void)
{
	struct peer_copies *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->devices = device_map_new();
	p->links = gpu_links_new();
	p->allocs = alloc_devices_new();
	if (!p->devices || !p->links || !p->allocs) {
		peer_copies_free(p);
		return NULL;
	}
	return p;
}

void peer_copies_free(struct peer_copies *p)
{
	if (!p)
		return;
	device_map_free(p->devices);
	gpu_links_free(p->links);
	alloc_devices_free(p->allocs);
	free(p);
}

static struct peer_pair *pair_of(struct peer_copies *p, int32_t src, int32_t dst)
{
	for (uint32_t i = 0; i < p->n_pairs; i++)
		if (p->pairs[i].src == src && p->pairs[i].dst == dst)
			return &p->pairs[i];
	if (p->n_pairs == PEER_PAIRS) /* the last row takes what does not fit */
		return &p->pairs[PEER_PAIRS - 1];
	p->pairs[p->n_pairs] = (struct peer_pair){ .src = src, .dst = dst };
	return &p->pairs[p->n_pairs++];
}

/*
 * A device-to-device copy (cuMemcpyDtoD*, or cuMemcpy with unified
 * addresses) whose two pointers lie in allocations made on two different
 * devices is a peer copy too: the source and destination devices, else false.
 */
static bool across_devices(const struct peer_copies *p, const struct grt_record *rec, int32_t *src,
			   int32_t *dst)
{
	const struct grt_cuda_memcpy_rec *m = rec->payload;

	if (m->kind != GRT_COPY_DTOD && m->kind != GRT_COPY_DEFAULT)
		return false;
	*src = alloc_devices_of(p->allocs, rec->hdr.pid, m->src);
	*dst = alloc_devices_of(p->allocs, rec->hdr.pid, m->dst);
	return *src != DEVICE_UNKNOWN && *dst != DEVICE_UNKNOWN && *src != *dst;
}

static void count_copy(struct peer_copies *p, const struct grt_record *rec)
{
	const struct grt_cuda_memcpy_rec *m = rec->payload;
	struct peer_pair *pair;
	int32_t src, dst;
	bool dtod = false;
	uint64_t ns;

	if (m->call.flags & GRT_CUDA_F_OWN)
		return;
	if (m->kind == GRT_COPY_PEER) {
		src = device_map_of_ctx(p->devices, rec->hdr.pid, m->src_ctx);
		dst = device_map_of_ctx(p->devices, rec->hdr.pid, m->dst_ctx);
	} else if (!(dtod = across_devices(p, rec, &src, &dst))) {
		return;
	}
	pair = pair_of(p, src, dst);
	pair->calls++;
	pair->dtod_calls += dtod;
	if (report_call_failed(&m->call)) {
		pair->errors++;
		return;
	}
	pair->bytes += m->bytes;
	if (m->is_async) {
		pair->async_calls++;
		return;
	}
	pair->sync_calls++;
	if (report_call_ns(rec, &m->call, &ns)) {
		pair->timed_bytes += m->bytes;
		pair->timed_ns += ns;
	}
}

void peer_copies_record(struct peer_copies *p, const struct grt_record *rec,
			const struct grt_strings *strings)
{
	if (rec->hdr.type == GRT_REC_CUDA_CONTEXT || rec->hdr.type == GRT_REC_CUDA_DEVICE)
		device_map_record(p->devices, rec, strings);
	else if (rec->hdr.type == GRT_REC_CUDA_MEMCPY)
		count_copy(p, rec);
	else if (rec->hdr.type == GRT_REC_GPU_LINK)
		gpu_links_record(p->links, rec);
	else if (rec->hdr.type == GRT_REC_CUDA_ALLOC || rec->hdr.type == GRT_REC_CUDA_FREE)
		alloc_devices_record(p->allocs, rec, p->devices);
}

bool peer_copies_any(const struct peer_copies *p)
{
	return p->n_pairs > 0;
}

bool peer_copies_incomplete(const struct peer_copies *p)
{
	return device_map_incomplete(p->devices) || alloc_devices_incomplete(p->allocs);
}

static const char *device_text(int32_t d, char *buf, size_t len)
{
	if (d < 0)
		return "?";
	snprintf(buf, len, "%d", d);
	return buf;
}

void peer_copies_print_text(const struct peer_copies *p, FILE *out)
{
	char s[16], d[16], gbps[16];

	if (!p->n_pairs)
		return;
	fprintf(out, "peer copies (cuMemcpyPeer*, and device-to-device copies between allocations of two "
		     "devices; source device -> destination device; ? = context not seen; link: "
		     "what P2P between the two uses, none = staged through the host, ? = no topology "
		     "recorded for them):\n");
	fprintf(out, "  %-10s %-6s %8s %12s %8s %9s %8s %7s\n", "devices", "link", "calls", "bytes",
		"sync", "sync_GB/s", "async", "errors");
	for (uint32_t i = 0; i < p->n_pairs; i++) {
		const struct peer_pair *pr = &p->pairs[i];
		char pair[40];

		snprintf(pair, sizeof(pair), "%s -> %s", device_text(pr->src, s, sizeof(s)),
			 device_text(pr->dst, d, sizeof(d)));
		snprintf(gbps, sizeof(gbps), "-");
		if (pr->timed_ns)
			snprintf(gbps, sizeof(gbps), "%.3f", (double)pr->timed_bytes / (double)pr->timed_ns);
		/* bytes as a number, as in the copies table: the title names the unit */
		fprintf(out, "  %-10s %-6s %8" PRIu64 " %12" PRIu64 " %8" PRIu64 " %9s %8" PRIu64
			     " %7" PRIu64 "\n",
			pair, peer_link_name(gpu_links_of_devices(p->links, p->devices, pr->src, pr->dst)),
			pr->calls, pr->bytes, pr->sync_calls, gbps, pr->async_calls, pr->errors);
	}
}

static void json_device(struct json_writer *w, const char *key, int32_t d)
{
	jw_key(w, key);
	if (d < 0)
		jw_null(w);
	else
		jw_u64(w, (uint64_t)d);
}

void peer_copies_print_json(const struct peer_copies *p, struct json_writer *w)
{
	jw_begin_array(w);
	for (uint32_t i = 0; i < p->n_pairs; i++) {
		const struct peer_pair *pr = &p->pairs[i];
		enum peer_link link;

		jw_begin_object(w);
		json_device(w, "src_device", pr->src);
		json_device(w, "dst_device", pr->dst);
		link = gpu_links_of_devices(p->links, p->devices, pr->src, pr->dst);
		jw_key(w, "link"); /* null: unknown */
		if (link == PEER_LINK_UNKNOWN)
			jw_null(w);
		else
			jw_string(w, peer_link_name(link));
		jw_field_u64(w, "calls", pr->calls);
		jw_field_u64(w, "dtod_calls", pr->dtod_calls);
		jw_field_u64(w, "errors", pr->errors);
		jw_field_u64(w, "bytes", pr->bytes);
		jw_field_u64(w, "sync_calls", pr->sync_calls);
		jw_field_u64(w, "async_calls", pr->async_calls);
		jw_field_u64(w, "timed_bytes", pr->timed_bytes);
		jw_key(w, "sync_gbytes_per_s");
		if (pr->timed_ns)
			jw_f64(w, (double)pr->timed_bytes / (double)pr->timed_ns);
		else
			jw_null(w);
		jw_end_object(w);
	}
	jw_end_array(w);
}
