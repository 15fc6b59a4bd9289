/* Reading back what programs left in device memory: ring records and map entries (gpu_abi.h). */
#ifndef GRT_GPUBPF_BPF_DEVICE_H
#define GRT_GPUBPF_BPF_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Pure functions over copies of device memory (no libbpf, no driver): the
 * injected library and the recorder both use them, and the tests feed them
 * the reference interpreter's memory.
 */

struct gpubpf_map_shape {
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	/* ARRAY/GPU_ARRAY kept as one copy per SM (laid out as PERCPU_ARRAY), read as the
	 * sum of the copies in words of this many bytes (4 or 8); 0: one copy */
	uint32_t stripe_width;
};

/* RINGBUF, PERF_EVENT_ARRAY and GPU_RINGBUF: maps whose values are events to the host. */
bool gpubpf_map_is_ring(uint32_t type);

/* Bytes of device memory a map takes (rings: their header and ring_bytes of records). */
size_t gpubpf_map_bytes(const struct gpubpf_map_shape *m, uint32_t thread_capacity,
			size_t ring_bytes);

struct gpubpf_ring_record {
	uint16_t prog;
	uint16_t smid;
	uint64_t gpu_ns;
	const uint8_t *data;
	uint32_t len;
	bool discarded;
};

/* Records that did not fit in a ring: its header's count and every drop slot (head_image:
 * GRT_BPF_RING_HEAD_SIZE bytes). */
uint64_t gpubpf_ring_dropped(const uint8_t *head_image);

/*
 * Walks the committed records of a ring image (its grt_bpf_ring header
 * first), stopping at the first record not yet committed (len 0) or that
 * would not fit. fn returning non-zero stops the walk. Returns the records
 * walked; *dropped (may be NULL) gets the count of records that did not fit
 * (gpubpf_ring_dropped).
 */
size_t gpubpf_ring_walk(const uint8_t *image, size_t len,
			int (*fn)(void *arg, const struct gpubpf_ring_record *rec), void *arg,
			uint64_t *dropped);

/*
 * Bytes of the whole committed records at the start of a ring's data
 * (records: the data area, no header), at most limit: where a reader that
 * sends records in pieces may cut.
 */
size_t gpubpf_ring_committed(const uint8_t *records, size_t len, size_t limit);

/*
 * Calls fn for every entry of a map image: the non-zero values of arrays
 * (sub = thread for per-thread arrays, SM for per-SM ones, else 0; key = the
 * index as 4 little-endian bytes, zero-padded to 8) and every present key of
 * a hash (its bytes padded to 8, as stored). Returns
 * the entries walked, or -1 when the image is too short for the map.
 */
long gpubpf_map_walk(const struct gpubpf_map_shape *m, const uint8_t *image, size_t len,
		     uint32_t thread_capacity,
		     int (*fn)(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value),
		     void *arg);

#endif
