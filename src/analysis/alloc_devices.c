/* Live device allocations of each process, sorted by address, with the device each was made on. */
#include <stdlib.h>
#include <string.h>
#include "analysis/alloc_devices.h"
#include "common/grow_array.h"
#include "trace/records_cuda.h"

struct alloc_range {
	uint32_t pid;
	int32_t device;
	uint64_t addr;
	uint64_t end;		/* one past the last byte */
};

struct alloc_devices {
	struct alloc_range *ranges;	/* by (pid, addr) */
	uint32_t n, cap;
	bool out_of_memory;
};

struct alloc_devices *alloc_devices_new(void)
{
	return calloc(1, sizeof(struct alloc_devices));
}

void alloc_devices_free(struct alloc_devices *a)
{
	if (!a)
		return;
	free(a->ranges);
	free(a);
}

static bool before(const struct alloc_range *r, uint32_t pid, uint64_t addr)
{
	return r->pid < pid || (r->pid == pid && r->addr < addr);
}

/* The first range not before (pid, addr). */
static size_t lower_bound(const struct alloc_devices *a, uint32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (before(&a->ranges[mid], pid, addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void add(struct alloc_devices *a, uint32_t pid, int32_t device, uint64_t addr, uint64_t bytes)
{
	size_t at = lower_bound(a, pid, addr);

	if (at < a->n && a->ranges[at].pid == pid && a->ranges[at].addr == addr) {
		/* its free was not seen (or not recorded): the new allocation replaces it */
		a->ranges[at] = (struct alloc_range){ pid, device, addr, addr + bytes };
		return;
	}
	if (grt_grow_array((void **)&a->ranges, &a->cap, sizeof(*a->ranges), a->n + 1)) {
		a->out_of_memory = true;
		return;
	}
	memmove(&a->ranges[at + 1], &a->ranges[at], (a->n - at) * sizeof(a->ranges[0]));
	a->ranges[at] = (struct alloc_range){ pid, device, addr, addr + bytes };
	a->n++;
}

static void drop(struct alloc_devices *a, uint32_t pid, uint64_t addr)
{
	size_t at = lower_bound(a, pid, addr);

	if (at < a->n && a->ranges[at].pid == pid && a->ranges[at].addr == addr) {
		memmove(&a->ranges[at], &a->ranges[at + 1], (a->n - at - 1) * sizeof(a->ranges[0]));
		a->n--;
	}
}

static bool on_one_device(uint32_t kind)
{
	return kind == GRT_ALLOC_DEVICE || kind == GRT_ALLOC_ASYNC || kind == GRT_ALLOC_PITCH ||
	       kind == GRT_ALLOC_POOL_ASYNC;
}

void alloc_devices_record(struct alloc_devices *a, const struct grt_record *rec,
			  const struct device_map *m)
{
	if (rec->hdr.type == GRT_REC_CUDA_ALLOC && rec->hdr.payload_len >= sizeof(struct grt_cuda_alloc_rec)) {
		const struct grt_cuda_alloc_rec *al = rec->payload;
		int32_t device = device_map_of_thread(m, rec->hdr.tid);

		if (grt_cuda_call_returned(&al->call) && !al->call.ret && al->addr && al->bytes &&
		    on_one_device(al->kind) && device != DEVICE_UNKNOWN)
			add(a, rec->hdr.pid, device, al->addr, al->bytes);
	} else if (rec->hdr.type == GRT_REC_CUDA_FREE &&
		   rec->hdr.payload_len >= sizeof(struct grt_cuda_free_rec)) {
		const struct grt_cuda_free_rec *f = rec->payload;

		if (!f->call.ret)
			drop(a, rec->hdr.pid, f->addr);
	}
}

int32_t alloc_devices_of(const struct alloc_devices *a, uint32_t pid, uint64_t addr)
{
	size_t at = addr == UINT64_MAX ? 0 : lower_bound(a, pid, addr + 1); /* the first range after addr */
	const struct alloc_range *r;

	if (!at || addr == UINT64_MAX)
		return DEVICE_UNKNOWN;
	r = &a->ranges[at - 1];
	return r->pid == pid && addr >= r->addr && addr < r->end ? r->device : DEVICE_UNKNOWN;
}

bool alloc_devices_incomplete(const struct alloc_devices *a)
{
	return a->out_of_memory;
}
