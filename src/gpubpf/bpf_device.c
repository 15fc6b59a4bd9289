/* Reading back what programs left in device memory: ring records and map entries (gpu_abi.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_device.h"
#include "gpubpf/gpu_abi.h"

#define MAP_HASH 1
#define MAP_PERF_EVENT_ARRAY 4
#define MAP_PERCPU_ARRAY 6
#define MAP_RINGBUF 27

bool gpubpf_map_is_ring(uint32_t type)
{
	return type == MAP_RINGBUF || type == MAP_PERF_EVENT_ARRAY ||
	       type == GRT_BPF_MAP_GPU_RINGBUF;
}

size_t gpubpf_map_bytes(const struct gpubpf_map_shape *m, uint32_t thread_capacity,
			size_t ring_bytes)
{
	uint64_t stride = grt_bpf_stride(m->value_size);

	if (gpubpf_map_is_ring(m->type))
		return GRT_BPF_RING_HEAD_SIZE + ring_bytes;
	if (m->stripe_width)
		return (size_t)m->max_entries * GRT_BPF_SM_SLOTS * grt_bpf_stripe_stride(m->value_size);
	switch (m->type) {
	case MAP_HASH:
		return grt_bpf_hash_capacity(m->max_entries) *
		       (GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(m->key_size) + stride);
	case MAP_PERCPU_ARRAY:
		return (size_t)m->max_entries * GRT_BPF_SM_SLOTS * stride;
	case GRT_BPF_MAP_PERGPUTD_ARRAY:
		return (size_t)m->max_entries * thread_capacity * stride;
	default:
		return (size_t)m->max_entries * stride;
	}
}

uint64_t gpubpf_ring_dropped(const uint8_t *head_image)
{
	uint64_t total, slot;

	memcpy(&total, head_image + offsetof(struct grt_bpf_ring, dropped), sizeof(total));
	for (uint32_t sm = 0; sm < GRT_BPF_RING_DROP_SLOTS; sm++) {
		memcpy(&slot, head_image + grt_bpf_ring_drop_slot(sm), sizeof(slot));
		total += slot;
	}
	return total;
}

size_t gpubpf_ring_walk(const uint8_t *image, size_t len,
			int (*fn)(void *arg, const struct gpubpf_ring_record *rec), void *arg,
			uint64_t *dropped)
{
	struct grt_bpf_ring head;
	size_t at = 0, n = 0, end;

	if (dropped)
		*dropped = 0;
	if (len < GRT_BPF_RING_HEAD_SIZE)
		return 0;
	memcpy(&head, image, sizeof(head));
	if (dropped)
		*dropped = gpubpf_ring_dropped(image);
	end = len - GRT_BPF_RING_HEAD_SIZE;
	if (head.capacity < end)
		end = (size_t)head.capacity;
	if (head.head < end)
		end = (size_t)head.head;
	image += GRT_BPF_RING_HEAD_SIZE;
	while (at + GRT_BPF_RING_REC_SIZE <= end) {
		struct grt_bpf_ring_rec r;
		struct gpubpf_ring_record out;
		uint32_t data_len;

		memcpy(&r, image + at, sizeof(r));
		data_len = r.len & GRT_BPF_RING_LEN_MASK;
		if (!r.len || data_len > end - at - GRT_BPF_RING_REC_SIZE)
			break;
		out = (struct gpubpf_ring_record){.prog = r.prog,
						  .smid = r.smid,
						  .gpu_ns = r.gpu_ns,
						  .data = image + at + GRT_BPF_RING_REC_SIZE,
						  .len = data_len,
						  .discarded = r.len & GRT_BPF_RING_DISCARDED};
		n++;
		if (fn && fn(arg, &out))
			break;
		at += GRT_BPF_RING_REC_SIZE + grt_bpf_stride(data_len);
	}
	return n;
}

size_t gpubpf_ring_committed(const uint8_t *records, size_t len, size_t limit)
{
	size_t at = 0;

	if (limit < len)
		len = limit;
	while (at + GRT_BPF_RING_REC_SIZE <= len) {
		struct grt_bpf_ring_rec r;
		uint32_t data_len;

		memcpy(&r, records + at, sizeof(r));
		data_len = r.len & GRT_BPF_RING_LEN_MASK;
		if (!r.len || grt_bpf_stride(data_len) > len - at - GRT_BPF_RING_REC_SIZE)
			break;
		at += GRT_BPF_RING_REC_SIZE + grt_bpf_stride(data_len);
	}
	return at;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* An array's key k as the walk hands it out: the 4-byte index, little-endian. */
static void array_key(uint64_t k, uint8_t key[8])
{
	memset(key, 0, 8);
	for (int i = 0; i < 4; i++)
		key[i] = (uint8_t)(k >> (8 * i));
}

/* A counter kept per SM: each key's copies added up word by word, as one value. */
static long walk_striped(const struct gpubpf_map_shape *m, const uint8_t *image,
			 int (*fn)(void *arg, uint32_t sub, const uint8_t *key,
				   const uint8_t *value),
			 void *arg)
{
	uint64_t stride = grt_bpf_stride(m->value_size), copy = grt_bpf_stripe_stride(m->value_size);
	uint8_t *sum = malloc(stride);
	long n = 0;

	if (!sum)
		return -1;
	for (uint64_t k = 0; k < m->max_entries; k++) {
		uint8_t key[8];

		array_key(k, key);
		memset(sum, 0, stride);
		for (uint64_t s = 0; s < GRT_BPF_SM_SLOTS; s++) {
			const uint8_t *v = image + (k * GRT_BPF_SM_SLOTS + s) * copy;

			for (uint64_t w = 0; w + m->stripe_width <= stride; w += m->stripe_width) {
				uint64_t a = 0, b = 0;

				memcpy(&a, sum + w, m->stripe_width);
				memcpy(&b, v + w, m->stripe_width);
				a += b;
				memcpy(sum + w, &a, m->stripe_width); /* little-endian: the low bytes */
			}
		}
		if (all_zero(sum, m->value_size))
			continue;
		n++;
		if (fn && fn(arg, 0, key, sum))
			break;
	}
	free(sum);
	return n;
}

long gpubpf_map_walk(const struct gpubpf_map_shape *m, const uint8_t *image, size_t len,
		     uint32_t thread_capacity,
		     int (*fn)(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value),
		     void *arg)
{
	uint64_t stride = grt_bpf_stride(m->value_size), subs = 1;
	long n = 0;

	if (gpubpf_map_is_ring(m->type) || len < gpubpf_map_bytes(m, thread_capacity, 0))
		return -1;
	if (m->type == MAP_HASH) {
		uint64_t cap = grt_bpf_hash_capacity(m->max_entries);
		uint64_t slot = GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(m->key_size) + stride;

		for (uint64_t i = 0; i < cap; i++) {
			const uint8_t *s = image + i * slot;
			uint32_t state;

			memcpy(&state, s, 4);
			if (state != GRT_BPF_HASH_FULL)
				continue;
			n++;
			if (fn && fn(arg, 0, s + GRT_BPF_HASH_SLOT_HEAD,
				     s + GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(m->key_size)))
				break;
		}
		return n;
	}
	if (m->stripe_width)
		return walk_striped(m, image, fn, arg);
	if (m->type == MAP_PERCPU_ARRAY)
		subs = GRT_BPF_SM_SLOTS;
	else if (m->type == GRT_BPF_MAP_PERGPUTD_ARRAY)
		subs = thread_capacity;
	for (uint64_t k = 0; k < m->max_entries; k++)
		for (uint64_t s = 0; s < subs; s++) {
			const uint8_t *v = image + (k * subs + s) * stride;
			uint8_t key[8];

			if (all_zero(v, m->value_size))
				continue;
			array_key(k, key);
			n++;
			if (fn && fn(arg, (uint32_t)s, key, v))
				return n;
		}
	return n;
}
