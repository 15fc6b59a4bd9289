/* Which device a device pointer belongs to: live allocations per process, each on its caller's device. */
#ifndef GRT_ALLOC_DEVICES_H
#define GRT_ALLOC_DEVICES_H

#include <stdbool.h>
#include <stdint.h>
#include "analysis/device_map.h"
#include "trace/grt_reader.h"

/*
 * cuMemAlloc* allocates on the device of the calling thread's current
 * context; with unified addressing a pointer then names that device in any
 * copy. Managed and host allocations belong to no one device and are not
 * kept.
 */
struct alloc_devices;

struct alloc_devices *alloc_devices_new(void);
void alloc_devices_free(struct alloc_devices *a);
/* Feeds one record in trace order (alloc and free; others ignored); m gives the caller's device. */
void alloc_devices_record(struct alloc_devices *a, const struct grt_record *rec,
			  const struct device_map *m);
/* The device of the live allocation of pid holding addr, DEVICE_UNKNOWN when none. */
int32_t alloc_devices_of(const struct alloc_devices *a, uint32_t pid, uint64_t addr);
/* Memory ran out: some allocations are unknown. */
bool alloc_devices_incomplete(const struct alloc_devices *a);

#endif
