/* The device map: context records replayed per thread, so every host call learns its device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/device_map.h"
#include "analysis/jobs/pid_key_map.h"
#include "common/pci_addr.h"
#include "common/u64_map.h"
#include "trace/records_cuda.h"

#define CTX_STACK_DEPTH 16	/* deeper pushes are counted, not kept */

struct thread_ctx {
	uint32_t depth;		/* may exceed CTX_STACK_DEPTH: the part beyond is unknown */
	uint64_t stack[CTX_STACK_DEPTH];
	uint32_t pid;
};

struct device_map {
	struct pid_key_map contexts;	/* (pid, ctx) -> device + 1 */
	struct u64_map threads;		/* tid -> struct thread_ctx * */
	struct device_desc devices[DEVICE_MAP_MAX];
	uint32_t n_devices;
	bool out_of_memory;
};

struct device_map *device_map_new(void)
{
	struct device_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pid_key_map_init(&m->contexts);
	u64_map_init(&m->threads);
	return m;
}

void device_map_free(struct device_map *m)
{
	uint64_t v;

	if (!m)
		return;
	for (size_t i = 0; u64_map_iter(&m->threads, &i, NULL, &v);)
		free((void *)(uintptr_t)v);
	u64_map_destroy(&m->threads);
	pid_key_map_destroy(&m->contexts);
	free(m);
}

static struct device_desc *desc_get(struct device_map *m, int32_t device)
{
	uint32_t at = 0;

	if (device < 0)
		return NULL;
	while (at < m->n_devices && m->devices[at].device < device)
		at++;
	if (at < m->n_devices && m->devices[at].device == device)
		return &m->devices[at];
	if (m->n_devices == DEVICE_MAP_MAX)
		return NULL;
	memmove(&m->devices[at + 1], &m->devices[at], (m->n_devices - at) * sizeof(m->devices[0]));
	m->n_devices++;
	m->devices[at] = (struct device_desc){ .device = device };
	return &m->devices[at];
}

void device_map_note(struct device_map *m, int32_t device)
{
	desc_get(m, device);
}

static struct thread_ctx *thread_get(struct device_map *m, uint32_t tid, uint32_t pid)
{
	struct thread_ctx *t;
	uint64_t v;

	if (u64_map_get(&m->threads, tid, &v)) {
		t = (struct thread_ctx *)(uintptr_t)v;
		if (t->pid != pid) /* a recycled tid of another process starts empty */
			*t = (struct thread_ctx){ .pid = pid };
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t || u64_map_put(&m->threads, tid, (uintptr_t)t)) {
		free(t);
		m->out_of_memory = true;
		return NULL;
	}
	t->pid = pid;
	return t;
}

static void push(struct thread_ctx *t, uint64_t ctx)
{
	if (t->depth < CTX_STACK_DEPTH)
		t->stack[t->depth] = ctx;
	t->depth++;
}

static void on_context(struct device_map *m, const struct grt_record *rec)
{
	const struct grt_cuda_context_rec *c = rec->payload;
	struct thread_ctx *t;

	/* a call that failed or never returned changed nothing we can know */
	if (!grt_cuda_call_returned(&c->call) || c->call.ret)
		return;
	if ((c->op == GRT_CTX_CREATE || c->op == GRT_CTX_RETAIN) && c->ctx && c->device >= 0) {
		if (pid_key_map_put(&m->contexts, rec->hdr.pid, c->ctx,
				    (void *)(uintptr_t)((uint64_t)c->device + 1)))
			m->out_of_memory = true;
		desc_get(m, c->device);
	}
	if (c->op == GRT_CTX_RETAIN)
		return;
	t = thread_get(m, rec->hdr.tid, rec->hdr.pid);
	if (!t)
		return;
	switch (c->op) {
	case GRT_CTX_CREATE:
	case GRT_CTX_PUSH:
		push(t, c->ctx);
		break;
	case GRT_CTX_SET:
		if (!c->ctx) {
			t->depth -= t->depth > 0;
			break;
		}
		if (!t->depth)
			t->depth = 1;
		if (t->depth <= CTX_STACK_DEPTH)
			t->stack[t->depth - 1] = c->ctx;
		break;
	case GRT_CTX_POP:
		t->depth -= t->depth > 0;
		break;
	}
}

static void on_device(struct device_map *m, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	const char *bus_id;
	const struct grt_cuda_device_rec *d = rec->payload;
	struct device_desc *desc;

	if (!grt_cuda_call_returned(&d->call) || d->call.ret)
		return;
	desc = desc_get(m, d->device);
	if (!desc)
		return;
	bus_id = grt_strings_get(strings, d->pci_bus_id_str);
	if (bus_id && bus_id[0])
		snprintf(desc->pci_bus_id, sizeof(desc->pci_bus_id), "%s", bus_id);
	if (d->has_uuid) {
		memcpy(desc->uuid, d->uuid, sizeof(desc->uuid));
		desc->has_uuid = true;
	}
}

void device_map_record(struct device_map *m, const struct grt_record *rec,
		       const struct grt_strings *strings)
{
	if (rec->hdr.type == GRT_REC_CUDA_CONTEXT &&
	    rec->hdr.payload_len >= sizeof(struct grt_cuda_context_rec))
		on_context(m, rec);
	else if (rec->hdr.type == GRT_REC_CUDA_DEVICE &&
		 rec->hdr.payload_len >= sizeof(struct grt_cuda_device_rec))
		on_device(m, rec, strings);
}

int32_t device_map_of_ctx(const struct device_map *m, uint32_t pid, uint64_t ctx)
{
	void *v = ctx ? pid_key_map_get(&m->contexts, pid, ctx) : NULL;

	return v ? (int32_t)((uintptr_t)v - 1) : DEVICE_UNKNOWN;
}

int32_t device_map_of_thread(const struct device_map *m, uint32_t tid)
{
	const struct thread_ctx *t;
	uint64_t v;

	if (!u64_map_get(&m->threads, tid, &v))
		return DEVICE_UNKNOWN;
	t = (const struct thread_ctx *)(uintptr_t)v;
	if (!t->depth || t->depth > CTX_STACK_DEPTH)
		return DEVICE_UNKNOWN;
	return device_map_of_ctx(m, t->pid, t->stack[t->depth - 1]);
}

uint32_t device_map_pci(const struct device_map *m, int32_t device)
{
	for (uint32_t i = 0; i < m->n_devices; i++)
		if (m->devices[i].device == device)
			return m->devices[i].pci_bus_id[0] ? grt_pci_parse(m->devices[i].pci_bus_id) : 0;
	return 0;
}

uint32_t device_map_count(const struct device_map *m)
{
	return m->n_devices;
}

const struct device_desc *device_map_at(const struct device_map *m, uint32_t i)
{
	return i < m->n_devices ? &m->devices[i] : NULL;
}

bool device_map_incomplete(const struct device_map *m)
{
	return m->out_of_memory;
}
