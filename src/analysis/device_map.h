/* Which device each host call goes to: contexts, each thread's current-context stack, device descriptions. */
#ifndef GRT_DEVICE_MAP_H
#define GRT_DEVICE_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/grt_reader.h"
#include "trace/grt_strings.h"

/*
 * The driver sends a thread's calls to the device of the context on top of
 * that thread's context stack (cuCtxCreate, cuCtxSetCurrent, push and pop);
 * context records name each context's device when it is created or
 * retained. Fed the trace's records in order, the map answers "which device
 * does this thread's call go to now". A thread whose context is unknown
 * (no context record before its calls) gets DEVICE_UNKNOWN: nothing is
 * guessed.
 */
#define DEVICE_UNKNOWN (-1)
#define DEVICE_MAP_MAX 64	/* devices described; ordinals beyond are still answered */

struct device_desc {
	int32_t device;		/* the ordinal */
	char pci_bus_id[32];	/* as the driver wrote it, "" when never asked */
	uint8_t uuid[16];
	bool has_uuid;
};

struct device_map;

struct device_map *device_map_new(void);
void device_map_free(struct device_map *m);
/* Feeds one record: context and device records change the map, others are ignored. */
void device_map_record(struct device_map *m, const struct grt_record *rec,
		       const struct grt_strings *strings);
/* The device of the context on top of tid's stack, DEVICE_UNKNOWN when none is known. */
int32_t device_map_of_thread(const struct device_map *m, uint32_t tid);
/* The device of pid's context ctx, DEVICE_UNKNOWN when it was never created or retained. */
int32_t device_map_of_ctx(const struct device_map *m, uint32_t pid, uint64_t ctx);
/* The device's PCI address (grt_pci_pack()) from its bus id, 0 when never asked or unparsable. */
uint32_t device_map_pci(const struct device_map *m, int32_t device);
/* Devices seen (described, or named by a context), by ordinal. */
uint32_t device_map_count(const struct device_map *m);
const struct device_desc *device_map_at(const struct device_map *m, uint32_t i);
/* Notes a device named elsewhere (a device record of the gpu source). */
void device_map_note(struct device_map *m, int32_t device);
/* Memory ran out: some contexts or threads are unknown. */
bool device_map_incomplete(const struct device_map *m);

#endif
