/* The cuda source's user-space half: each BPF event becomes a records_cuda.h record. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/u64_map.h"
#include "sources/cuda_api.h"
#include "sources/cuda_events.h"
#include "sources/proc_maps.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

/* CUmemorytype, as CUDA_MEMCPY2D/3D carry it */
enum {
	CU_MEMORYTYPE_HOST = 1,
	CU_MEMORYTYPE_DEVICE = 2,
	CU_MEMORYTYPE_ARRAY = 3,
	CU_MEMORYTYPE_UNIFIED = 4,
};

struct exec_range {
	uint64_t start;
	uint64_t end;
};

/* What the decoder knows about one traced process. */
struct cuda_proc {
	bool mapped;		       /* its mappings were read once */
	struct u64_map names;	       /* CUfunction/CUkernel handle -> string id */
	uint64_t last_handle;	       /* the last handle looked up in names, 0 for none */
	uint32_t last_name;	       /* and its string id */
	struct u64_map stacks_checked; /* stack ids whose frames its mappings cover */
	struct exec_range *ranges;     /* executable mappings already written */
	size_t nranges;
	size_t ranges_cap;
};

struct cuda_decoder {
	struct grt_session *session;
	cuda_stack_lookup_fn lookup;
	void *lookup_ctx;
	struct u64_map procs;	       /* pid -> struct cuda_proc * */
	struct u64_map stacks_written; /* stack ids with a stack record */
	uint64_t malformed;
	uint64_t own_calls;	       /* calls of grtrace's own threads in the target, flagged own */
	/*
	 * The last comm seen, as the kernel sent it, and what it decoded to:
	 * a storm's events come from a few threads, and comparing 16 bytes is
	 * cheaper than interning the name for each.
	 */
	char last_comm[CUDA_COMM_LEN];
	uint32_t last_comm_str;
	bool last_comm_own;
	bool have_last_comm;
	/* the last event's process */
	uint32_t last_pid;
	struct cuda_proc *last_proc;
	bool is_launch[GRT_CUDA_API_COUNT]; /* per api, looked up once: the hot path's test */
};

/* One event being decoded. */
struct decode {
	struct cuda_decoder *d;
	const struct cuda_event *ev;
	struct cuda_proc *proc;
	enum cuda_probe_class cls;
	struct grt_cuda_call call;
	struct grt_event_origin origin;
	const char *text; /* NUL-terminated, NULL when the event has none */
};

/* Which record a class makes, and the class's fixed kind (or memset element size). */
struct class_info {
	uint16_t record;
	uint8_t kind;
	bool is_async;
};

static const struct class_info classes[CUDA_CLASS_COUNT] = {
    [CUDA_CLASS_LAUNCH] = {GRT_REC_CUDA_LAUNCH},
    [CUDA_CLASS_LAUNCH_EX] = {GRT_REC_CUDA_LAUNCH},
    [CUDA_CLASS_GRAPH_LAUNCH] = {GRT_REC_CUDA_GRAPH_LAUNCH},
    [CUDA_CLASS_MEM_ALLOC] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_DEVICE},
    [CUDA_CLASS_MEM_ALLOC_ASYNC] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_ASYNC, true},
    [CUDA_CLASS_MEM_ALLOC_MANAGED] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_MANAGED},
    [CUDA_CLASS_MEM_ALLOC_HOST] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_HOST},
    [CUDA_CLASS_MEM_HOST_ALLOC] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_HOST_ALLOC},
    [CUDA_CLASS_MEM_ALLOC_PITCH] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_PITCH},
    [CUDA_CLASS_MEM_ALLOC_FROM_POOL_ASYNC] = {GRT_REC_CUDA_ALLOC, GRT_ALLOC_POOL_ASYNC, true},
    [CUDA_CLASS_MEM_FREE] = {GRT_REC_CUDA_FREE, GRT_ALLOC_DEVICE},
    [CUDA_CLASS_MEM_FREE_ASYNC] = {GRT_REC_CUDA_FREE, GRT_ALLOC_ASYNC, true},
    [CUDA_CLASS_MEM_FREE_HOST] = {GRT_REC_CUDA_FREE, GRT_ALLOC_HOST},
    [CUDA_CLASS_MEMCPY] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_DEFAULT},
    [CUDA_CLASS_MEMCPY_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_DEFAULT, true},
    [CUDA_CLASS_MEMCPY_HTOD] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_HTOD},
    [CUDA_CLASS_MEMCPY_DTOH] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_DTOH},
    [CUDA_CLASS_MEMCPY_DTOD] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_DTOD},
    [CUDA_CLASS_MEMCPY_HTOD_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_HTOD, true},
    [CUDA_CLASS_MEMCPY_DTOH_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_DTOH, true},
    [CUDA_CLASS_MEMCPY_DTOD_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_DTOD, true},
    [CUDA_CLASS_MEMCPY_PEER] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_PEER},
    [CUDA_CLASS_MEMCPY_PEER_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_PEER, true},
    /* 2D/3D copies: the kind comes from the memory types in the descriptor */
    [CUDA_CLASS_MEMCPY_2D] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_UNKNOWN},
    [CUDA_CLASS_MEMCPY_2D_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_UNKNOWN, true},
    [CUDA_CLASS_MEMCPY_3D] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_UNKNOWN},
    [CUDA_CLASS_MEMCPY_3D_ASYNC] = {GRT_REC_CUDA_MEMCPY, GRT_COPY_UNKNOWN, true},
    [CUDA_CLASS_MEMSET_D8] = {GRT_REC_CUDA_MEMSET, 1},
    [CUDA_CLASS_MEMSET_D16] = {GRT_REC_CUDA_MEMSET, 2},
    [CUDA_CLASS_MEMSET_D32] = {GRT_REC_CUDA_MEMSET, 4},
    [CUDA_CLASS_MEMSET_D8_ASYNC] = {GRT_REC_CUDA_MEMSET, 1, true},
    [CUDA_CLASS_MEMSET_D16_ASYNC] = {GRT_REC_CUDA_MEMSET, 2, true},
    [CUDA_CLASS_MEMSET_D32_ASYNC] = {GRT_REC_CUDA_MEMSET, 4, true},
    [CUDA_CLASS_CTX_SYNCHRONIZE] = {GRT_REC_CUDA_SYNC, GRT_SYNC_CTX},
    [CUDA_CLASS_STREAM_SYNCHRONIZE] = {GRT_REC_CUDA_SYNC, GRT_SYNC_STREAM},
    [CUDA_CLASS_EVENT_SYNCHRONIZE] = {GRT_REC_CUDA_SYNC, GRT_SYNC_EVENT},
    [CUDA_CLASS_STREAM_WAIT_EVENT] = {GRT_REC_CUDA_SYNC, GRT_SYNC_STREAM_WAIT_EVENT},
    [CUDA_CLASS_EVENT_RECORD] = {GRT_REC_CUDA_SYNC, GRT_SYNC_EVENT_RECORD},
    [CUDA_CLASS_EVENT_QUERY] = {GRT_REC_CUDA_SYNC, GRT_SYNC_EVENT_QUERY},
    [CUDA_CLASS_STREAM_QUERY] = {GRT_REC_CUDA_SYNC, GRT_SYNC_STREAM_QUERY},
    [CUDA_CLASS_MODULE_LOAD] = {GRT_REC_CUDA_MODULE_LOAD, GRT_MODULE_LOAD_FILE},
    [CUDA_CLASS_MODULE_LOAD_DATA] = {GRT_REC_CUDA_MODULE_LOAD, GRT_MODULE_LOAD_DATA},
    [CUDA_CLASS_MODULE_LOAD_FAT_BINARY] = {GRT_REC_CUDA_MODULE_LOAD, GRT_MODULE_LOAD_FATBIN},
    [CUDA_CLASS_MODULE_UNLOAD] = {GRT_REC_CUDA_MODULE_LOAD, GRT_MODULE_UNLOAD},
    [CUDA_CLASS_LIBRARY_LOAD_DATA] = {GRT_REC_CUDA_MODULE_LOAD, GRT_LIBRARY_LOAD_DATA},
    [CUDA_CLASS_LIBRARY_LOAD_FROM_FILE] = {GRT_REC_CUDA_MODULE_LOAD, GRT_LIBRARY_LOAD_FILE},
    [CUDA_CLASS_LIBRARY_UNLOAD] = {GRT_REC_CUDA_MODULE_LOAD, GRT_LIBRARY_UNLOAD},
    [CUDA_CLASS_MODULE_GET_FUNCTION] = {GRT_REC_CUDA_FUNC_NAME},
    [CUDA_CLASS_LIBRARY_GET_KERNEL] = {GRT_REC_CUDA_FUNC_NAME},
    [CUDA_CLASS_KERNEL_GET_FUNCTION] = {GRT_REC_CUDA_FUNC_NAME},
    [CUDA_CLASS_FUNC_GET_NAME] = {GRT_REC_CUDA_FUNC_NAME},
    [CUDA_CLASS_CTX_CREATE] = {GRT_REC_CUDA_CONTEXT, GRT_CTX_CREATE},
    [CUDA_CLASS_CTX_CREATE_V4] = {GRT_REC_CUDA_CONTEXT, GRT_CTX_CREATE},
    [CUDA_CLASS_CTX_RETAIN] = {GRT_REC_CUDA_CONTEXT, GRT_CTX_RETAIN},
    [CUDA_CLASS_CTX_SET_CURRENT] = {GRT_REC_CUDA_CONTEXT, GRT_CTX_SET},
    [CUDA_CLASS_CTX_PUSH_CURRENT] = {GRT_REC_CUDA_CONTEXT, GRT_CTX_PUSH},
    [CUDA_CLASS_CTX_POP_CURRENT] = {GRT_REC_CUDA_CONTEXT, GRT_CTX_POP},
    [CUDA_CLASS_DEVICE_PCI_BUS_ID] = {GRT_REC_CUDA_DEVICE},
    [CUDA_CLASS_DEVICE_UUID] = {GRT_REC_CUDA_DEVICE},
};

struct cuda_decoder *cuda_decoder_new(struct grt_session *s, cuda_stack_lookup_fn lookup,
				      void *lookup_ctx)
{
	struct cuda_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->session = s;
	d->lookup = lookup;
	d->lookup_ctx = lookup_ctx;
	for (uint32_t api = 0; api < GRT_CUDA_API_COUNT; api++) {
		enum cuda_probe_class cls = cuda_api_class(api);

		d->is_launch[api] = cls == CUDA_CLASS_LAUNCH || cls == CUDA_CLASS_LAUNCH_EX;
	}
	u64_map_init(&d->procs);
	u64_map_init(&d->stacks_written);
	return d;
}

static void proc_free(struct cuda_proc *p)
{
	u64_map_destroy(&p->names);
	u64_map_destroy(&p->stacks_checked);
	free(p->ranges);
	free(p);
}

void cuda_decoder_free(struct cuda_decoder *d)
{
	uint64_t proc;

	if (!d)
		return;
	for (size_t i = 0; u64_map_iter(&d->procs, &i, NULL, &proc);)
		proc_free((struct cuda_proc *)(uintptr_t)proc);
	u64_map_destroy(&d->procs);
	u64_map_destroy(&d->stacks_written);
	free(d);
}

uint64_t cuda_decoder_own_calls(const struct cuda_decoder *d)
{
	return d->own_calls;
}

uint64_t cuda_decoder_malformed(const struct cuda_decoder *d)
{
	return d->malformed;
}

static struct cuda_proc *proc_get(struct cuda_decoder *d, uint32_t pid)
{
	struct cuda_proc *p;
	uint64_t found;

	if (d->last_proc && d->last_pid == pid)
		return d->last_proc;
	if (u64_map_get(&d->procs, pid, &found)) {
		d->last_pid = pid;
		d->last_proc = (struct cuda_proc *)(uintptr_t)found;
		return d->last_proc;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	u64_map_init(&p->names);
	u64_map_init(&p->stacks_checked);
	if (u64_map_put(&d->procs, pid, (uintptr_t)p)) {
		proc_free(p);
		return NULL;
	}
	d->last_pid = pid;
	d->last_proc = p;
	return p;
}

/* A handle's name; a storm launches the same few, so the last answer is kept. */
static uint32_t proc_name_of(struct cuda_proc *p, uint64_t handle)
{
	uint64_t name;

	if (!handle)
		return 0;
	if (handle != p->last_handle) {
		p->last_name = u64_map_get(&p->names, handle, &name) ? (uint32_t)name : 0;
		p->last_handle = handle;
	}
	return p->last_name;
}

static int emit(struct decode *x, uint16_t type, const void *payload, uint32_t len)
{
	return grt_session_emit(x->d->session, type, &x->origin, payload, len);
}

/* ---- stacks and the mappings that symbolize them ---- */

static bool proc_covers(const struct cuda_proc *p, uint64_t ip)
{
	for (size_t i = 0; i < p->nranges; i++)
		if (ip >= p->ranges[i].start && ip < p->ranges[i].end)
			return true;
	return false;
}

static bool proc_has_range(const struct cuda_proc *p, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < p->nranges; i++)
		if (p->ranges[i].start == start && p->ranges[i].end == end)
			return true;
	return false;
}

static int proc_add_range(struct cuda_proc *p, uint64_t start, uint64_t end)
{
	if (p->nranges == p->ranges_cap) {
		size_t cap = p->ranges_cap ? 2 * p->ranges_cap : 32;
		struct exec_range *bigger = realloc(p->ranges, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		p->ranges = bigger;
		p->ranges_cap = cap;
	}
	p->ranges[p->nranges++] = (struct exec_range){start, end};
	return 0;
}

/* proc_maps_foreach callback: writes each executable mapping not written yet. */
static int write_new_mapping(const struct proc_mapping *m, void *ctx)
{
	struct decode *x = ctx;
	struct grt_mapping_rec rec = {
	    .start = m->start, .end = m->end, .file_offset = m->file_offset};
	int err;

	if (!m->executable || proc_has_range(x->proc, m->start, m->end))
		return 0;
	rec.path_str = m->path[0] ? grt_session_intern(x->d->session, m->path) : 0;
	err = emit(x, GRT_REC_MAPPING, &rec, sizeof(rec));
	return err ? err : proc_add_range(x->proc, m->start, m->end);
}

static int write_stack(struct decode *x, uint32_t id, const uint64_t *ips)
{
	struct {
		struct grt_stack_rec head;
		uint64_t ips[CUDA_STACK_DEPTH];
	} rec = {.head.stack_id = id};

	while (rec.head.depth < CUDA_STACK_DEPTH && ips[rec.head.depth]) {
		rec.ips[rec.head.depth] = ips[rec.head.depth];
		rec.head.depth++;
	}
	return emit(x, GRT_REC_STACK, &rec,
		    (uint32_t)(sizeof(rec.head) + rec.head.depth * sizeof(uint64_t)));
}

/* Writes the executable mappings of the event's process not written yet. */
static int write_mappings(struct decode *x)
{
	int err = proc_maps_foreach((pid_t)x->ev->pid, write_new_mapping, x);

	/* a vanished process has no maps left to read: nothing more to say */
	return err == -ENOENT || err == -ESRCH || err == -EACCES ? 0 : err;
}

/*
 * A stack id is written once per trace. A process's executable mappings are
 * written when its first event is decoded (it may exit soon after), and read
 * again when one of its stacks has a frame they do not cover: a library
 * loaded since.
 */
static int note_stack(struct decode *x)
{
	uint64_t ips[CUDA_STACK_DEPTH];
	uint32_t id = (uint32_t)x->ev->stack_id;
	bool written, checked;
	int err = 0;

	if (x->ev->stack_id < 0 || !x->d->lookup)
		return 0;
	/* zeroed only here: most calls carry no stack, and this is every call's path */
	memset(ips, 0, sizeof(ips));
	written = u64_map_get(&x->d->stacks_written, id, NULL);
	checked = u64_map_get(&x->proc->stacks_checked, id, NULL);
	if (written && checked)
		return 0;
	if (x->d->lookup(x->d->lookup_ctx, id, ips))
		return 0; /* evicted or never stored: the record keeps the bare id */
	if (!written) {
		err = write_stack(x, id, ips);
		if (err || u64_map_put(&x->d->stacks_written, id, 1))
			return err ? err : -ENOMEM;
	}
	if (checked)
		return 0;
	for (int i = 0; i < CUDA_STACK_DEPTH && ips[i] && !err; i++)
		if (!proc_covers(x->proc, ips[i]))
			err = write_mappings(x);
	if (!err && u64_map_put(&x->proc->stacks_checked, id, 1))
		err = -ENOMEM;
	return err;
}

static int32_t stack_id_of(const struct cuda_event *ev)
{
	if (ev->stack_id >= 0)
		return ev->stack_id;
	return ev->flags & CUDA_EVENT_STACK_LOST ? GRT_STACK_LOST : GRT_STACK_NONE;
}

/* ---- one builder per record type ---- */

static uint64_t low32(uint64_t v)
{
	return v & 0xffffffffu;
}

/* A launch's record from its event; call and kernel name as the caller found them. */
static inline __attribute__((always_inline)) void fill_launch(struct grt_cuda_launch_rec *rec, const struct cuda_event *ev,
			const struct grt_cuda_call *call, uint32_t kernel_str)
{
	const struct cuda_launch_args *a = &ev->args.launch;
	uint32_t words = a->arg_words < GRT_LAUNCH_ARG_WORDS ? a->arg_words : GRT_LAUNCH_ARG_WORDS;

	_Static_assert(CUDA_LAUNCH_ARG_WORDS == GRT_LAUNCH_ARG_WORDS, "argument words");
	_Static_assert(sizeof(*rec) == sizeof(rec->call) + 88, "every field set below");
	rec->call = *call;
	rec->function = a->function;
	rec->stream = a->stream;
	rec->kernel_str = kernel_str;
	rec->shared_mem = a->shared_mem;
	memcpy(rec->grid, a->grid, sizeof(rec->grid));
	memcpy(rec->block, a->block, sizeof(rec->block));
	rec->user_stack_id = stack_id_of(ev);
	rec->arg_words = words;
	/* the words past arg_words are 0 in the record whatever the event holds (no branch) */
	for (uint32_t i = 0; i < GRT_LAUNCH_ARG_WORDS; i++)
		rec->args[i] = a->args[i] & -(uint64_t)(i < words);
}

static int emit_launch(struct decode *x)
{
	struct grt_cuda_launch_rec rec;

	fill_launch(&rec, x->ev, &x->call,
		    proc_name_of(x->proc, x->ev->args.launch.function));
	return emit(x, GRT_REC_CUDA_LAUNCH, &rec, sizeof(rec));
}

static int emit_graph_launch(struct decode *x)
{
	struct grt_cuda_graph_launch_rec rec = {
	    .call = x->call,
	    .graph_exec = x->ev->args.graph.graph_exec,
	    .stream = x->ev->args.graph.stream,
	    .user_stack_id = stack_id_of(x->ev),
	};

	return emit(x, GRT_REC_CUDA_GRAPH_LAUNCH, &rec, sizeof(rec));
}

static int emit_alloc(struct decode *x)
{
	const struct cuda_alloc_args *a = &x->ev->args.alloc;
	struct grt_cuda_alloc_rec rec = {
	    .call = x->call,
	    .addr = a->addr,
	    .bytes = a->bytes,
	    .stream = a->stream,
	    .kind = classes[x->cls].kind,
	    .user_stack_id = stack_id_of(x->ev),
	};
	uint64_t pitch = a->pitch;

	if (x->ev->flags & CUDA_EVENT_LEGACY32) {
		/* v1 cuMemAllocHost returns a full host pointer; only its size is 32-bit */
		if (x->cls != CUDA_CLASS_MEM_ALLOC_HOST)
			rec.addr = low32(rec.addr);
		rec.bytes = low32(rec.bytes);
		pitch = low32(pitch);
	}
	if (x->cls == CUDA_CLASS_MEM_ALLOC_PITCH)
		rec.bytes *= pitch; /* bytes held the Height */
	/* a failed call leaves *dptr untouched: whatever was there is no allocation */
	if (x->call.ret || !grt_cuda_call_returned(&x->call))
		rec.addr = 0;
	return emit(x, GRT_REC_CUDA_ALLOC, &rec, sizeof(rec));
}

static int emit_free(struct decode *x)
{
	struct grt_cuda_free_rec rec = {
	    .call = x->call,
	    .addr = x->ev->args.free.addr,
	    .stream = x->ev->args.free.stream,
	    .kind = classes[x->cls].kind,
	};

	if (x->ev->flags & CUDA_EVENT_LEGACY32)
		rec.addr = low32(rec.addr);
	return emit(x, GRT_REC_CUDA_FREE, &rec, sizeof(rec));
}

/* 2D/3D copies: the direction the descriptor's memory types give. */
static uint32_t copy_kind_of_types(uint8_t dst_type, uint8_t src_type)
{
	bool dst_host = dst_type == CU_MEMORYTYPE_HOST, src_host = src_type == CU_MEMORYTYPE_HOST;

	if (!dst_type || !src_type)
		return GRT_COPY_UNKNOWN; /* descriptor not read (pre-3.2 layout, bad pointer) */
	if (dst_type == CU_MEMORYTYPE_UNIFIED || src_type == CU_MEMORYTYPE_UNIFIED)
		return GRT_COPY_DEFAULT;
	if (dst_host && src_host)
		return GRT_COPY_HTOH;
	if (src_host)
		return GRT_COPY_HTOD;
	return dst_host ? GRT_COPY_DTOH : GRT_COPY_DTOD;
}

/* v1 copies: device pointers and the byte count were 32-bit; host pointers were not. */
static void copy_fix_legacy(enum cuda_probe_class cls, struct grt_cuda_memcpy_rec *rec)
{
	bool dst_device = cls != CUDA_CLASS_MEMCPY_DTOH && cls != CUDA_CLASS_MEMCPY_DTOH_ASYNC;
	bool src_device = cls != CUDA_CLASS_MEMCPY_HTOD && cls != CUDA_CLASS_MEMCPY_HTOD_ASYNC;

	if (rec->dims != 1)
		return; /* 2D/3D descriptors were not decoded at all */
	if (dst_device)
		rec->dst = low32(rec->dst);
	if (src_device)
		rec->src = low32(rec->src);
	rec->bytes = low32(rec->bytes);
}

static int emit_memcpy(struct decode *x)
{
	const struct cuda_copy_args *a = &x->ev->args.copy;
	struct grt_cuda_memcpy_rec rec = {
	    .call = x->call,
	    .dst = a->dst,
	    .src = a->src,
	    .bytes = a->bytes,
	    .stream = a->stream,
	    .kind = classes[x->cls].kind,
	    .is_async = classes[x->cls].is_async,
	    .dims = a->dims ? a->dims : 1,
	    .dst_ctx = a->dst_ctx,
	    .src_ctx = a->src_ctx,
	};

	if (rec.dims > 1)
		rec.kind = copy_kind_of_types(a->dst_type, a->src_type);
	if (x->ev->flags & CUDA_EVENT_LEGACY32)
		copy_fix_legacy(x->cls, &rec);
	return emit(x, GRT_REC_CUDA_MEMCPY, &rec, sizeof(rec));
}

static int emit_memset(struct decode *x)
{
	const struct cuda_memset_args *a = &x->ev->args.memset;
	uint8_t elem = classes[x->cls].kind;
	uint64_t count = a->count;
	struct grt_cuda_memset_rec rec = {
	    .call = x->call,
	    .dst = a->dst,
	    .stream = a->stream,
	    /* the value travels in a register wider than its type */
	    .value = elem == 4 ? a->value : a->value & ((1u << (8 * elem)) - 1),
	    .elem_size = elem,
	    .is_async = classes[x->cls].is_async,
	};

	if (x->ev->flags & CUDA_EVENT_LEGACY32) {
		rec.dst = low32(rec.dst);
		count = low32(count);
	}
	rec.bytes = count * elem;
	return emit(x, GRT_REC_CUDA_MEMSET, &rec, sizeof(rec));
}

static int emit_sync(struct decode *x)
{
	struct grt_cuda_sync_rec rec = {
	    .call = x->call,
	    .stream = x->ev->args.sync.stream,
	    .event = x->ev->args.sync.event,
	    .kind = classes[x->cls].kind,
	};

	return emit(x, GRT_REC_CUDA_SYNC, &rec, sizeof(rec));
}

static int emit_module(struct decode *x)
{
	const struct cuda_module_args *a = &x->ev->args.module;
	struct grt_cuda_module_rec rec = {
	    .call = x->call,
	    .module = a->module,
	    .image = a->image,
	    .kind = classes[x->cls].kind,
	    .path_str = x->text ? grt_session_intern(x->d->session, x->text) : 0,
	};
	bool is_load = a->out != 0;

	if (is_load && (x->call.ret || !grt_cuda_call_returned(&x->call)))
		rec.module = 0;
	return emit(x, GRT_REC_CUDA_MODULE_LOAD, &rec, sizeof(rec));
}

/*
 * Handle -> name. The per-process map learns from every successful call, so
 * a later launch of that handle (a CUfunction, or a CUkernel passed in its
 * place) carries the name.
 */
static int emit_func_name(struct decode *x)
{
	const struct cuda_name_args *a = &x->ev->args.name;
	bool ok = !x->call.ret && grt_cuda_call_returned(&x->call);
	struct grt_cuda_func_name_rec rec = {
	    .call = x->call,
	    .handle = ok || x->cls == CUDA_CLASS_FUNC_GET_NAME ? a->handle : 0,
	    .module = a->module,
	};

	if (x->cls == CUDA_CLASS_KERNEL_GET_FUNCTION)
		rec.name_str = proc_name_of(x->proc, a->module); /* the CUkernel's name */
	else if (ok && x->text && x->text[0])
		rec.name_str = grt_session_intern(x->d->session, x->text);
	if (ok && rec.handle && rec.name_str) {
		x->proc->last_handle = 0; /* the kept answer may be this handle's old one */
		if (u64_map_put(&x->proc->names, rec.handle, rec.name_str))
			return -ENOMEM;
	}
	return emit(x, GRT_REC_CUDA_FUNC_NAME, &rec, sizeof(rec));
}

/* A context call; a create or retain that failed wrote no context. */
static int emit_context(struct decode *x)
{
	const struct cuda_ctx_args *a = &x->ev->args.context;
	bool ok = !x->call.ret && grt_cuda_call_returned(&x->call);
	struct grt_cuda_context_rec rec = {
	    .call = x->call,
	    .ctx = a->ctx,
	    .device = a->device,
	    .op = classes[x->cls].kind,
	};

	if (a->out && !ok)
		rec.ctx = 0;
	return emit(x, GRT_REC_CUDA_CONTEXT, &rec, sizeof(rec));
}

static int emit_device(struct decode *x)
{
	const struct cuda_device_args *a = &x->ev->args.device;
	struct grt_cuda_device_rec rec = {
	    .call = x->call,
	    .device = a->device,
	    .has_uuid = a->has_uuid,
	};

	if (a->has_uuid)
		memcpy(rec.uuid, a->uuid, sizeof(rec.uuid));
	if (x->text && x->text[0])
		rec.pci_bus_id_str = grt_session_intern(x->d->session, x->text);
	return emit(x, GRT_REC_CUDA_DEVICE, &rec, sizeof(rec));
}

/* ---- the entry point ---- */

/* The event's string, copied NUL-terminated into buf; NULL when it has none. */
static const char *event_text(const struct cuda_event *ev, size_t len, char *buf)
{
	const struct cuda_text_event *t = (const void *)ev;
	size_t n = ev->text_len;

	if (!n || len < sizeof(*ev) + n || n > CUDA_TEXT_LEN)
		return NULL;
	memcpy(buf, t->text, n);
	buf[n - 1] = 0;
	return buf;
}

/*
 * The event's comm as a string id, and whether it names one of grtrace's own
 * threads in the target (GRT_OWN_THREAD_PREFIX).
 */
static uint32_t comm_of(struct cuda_decoder *d, const char raw[CUDA_COMM_LEN], bool *own)
{
	char comm[CUDA_COMM_LEN + 1];

	if (!d->have_last_comm || memcmp(raw, d->last_comm, CUDA_COMM_LEN)) {
		memcpy(comm, raw, CUDA_COMM_LEN);
		comm[CUDA_COMM_LEN] = 0;
		d->last_comm_own = grt_is_own_thread_name(comm);
		d->last_comm_str = grt_session_intern(d->session, comm);
		memcpy(d->last_comm, raw, CUDA_COMM_LEN);
		d->have_last_comm = true;
	}
	*own = d->last_comm_own;
	return d->last_comm_str;
}

/* The call part every record starts with. */
static void call_of(const struct cuda_event *ev, uint32_t comm_str, bool own,
		    struct grt_cuda_call *call)
{
	uint16_t flags = (ev->flags & CUDA_EVENT_NO_RETURN ? GRT_CUDA_F_NO_RETURN : 0) |
			 (ev->flags & CUDA_EVENT_RETURN_UNSAMPLED ? GRT_CUDA_F_RETURN_UNSAMPLED : 0) |
			 (own ? GRT_CUDA_F_OWN : 0);

	*call = (struct grt_cuda_call){
	    .api = ev->api,
	    .flags = flags,
	    .ppid = ev->ppid,
	    .comm_str = comm_str,
	};
	if (grt_cuda_call_returned(call)) {
		call->return_ns = ev->return_ns;
		call->ret = ev->ret;
	}
}

static void fill_call(struct decode *x, uint32_t comm_str, bool own)
{
	const struct cuda_event *ev = x->ev;

	call_of(ev, comm_str, own, &x->call);
	x->origin = (struct grt_event_origin){
	    .ts_ns = ev->entry_ns,
	    .cpu = ev->cpu,
	    .pid = ev->pid,
	    .tid = ev->tid,
	};
}

/*
 * The hot case, kept short: a launch without a stack, of the process and
 * thread name of the event before, whose mappings are written. Everything
 * the general path would look up is then known, and the record is the one
 * it would give. False: not that case, nothing done.
 */
static bool launch_fast(struct cuda_decoder *d, const struct cuda_event *ev, int *err)
{
	struct grt_event_origin origin;
	struct grt_cuda_launch_rec rec;
	struct grt_cuda_call call;

	if (ev->api >= GRT_CUDA_API_COUNT || !d->is_launch[ev->api] || ev->stack_id >= 0 ||
	    !d->last_proc || d->last_pid != ev->pid || (!d->last_proc->mapped && d->lookup) ||
	    !d->have_last_comm || memcmp(ev->comm, d->last_comm, CUDA_COMM_LEN))
		return false;
	d->own_calls += d->last_comm_own;
	call_of(ev, d->last_comm_str, d->last_comm_own, &call);
	fill_launch(&rec, ev, &call, proc_name_of(d->last_proc, ev->args.launch.function));
	origin = (struct grt_event_origin){
	    .ts_ns = ev->entry_ns, .cpu = ev->cpu, .pid = ev->pid, .tid = ev->tid};
	*err = grt_session_emit(d->session, GRT_REC_CUDA_LAUNCH, &origin, &rec, sizeof(rec));
	return true;
}

/* Every event but launch_fast()'s: its own frame, which the hot path does not set up. */
static __attribute__((noinline)) int decode_event(struct cuda_decoder *d,
						  const struct cuda_event *ev, size_t len)
{
	char text[CUDA_TEXT_LEN];
	struct decode x = {.d = d, .ev = ev};
	uint32_t comm_str;
	bool own;
	int err;

	if (len < sizeof(*ev) || (x.cls = cuda_api_class(ev->api)) == CUDA_CLASS_COUNT) {
		d->malformed++;
		return 0;
	}
	/*
	 * The gpu source's library runs threads inside the target that call the
	 * driver (calibration, collecting probe buffers, flushing CUPTI); they
	 * name themselves GRT_OWN_THREAD_PREFIX. Their calls stay in the trace,
	 * flagged as grtrace's own: the analysis leaves them out of what users
	 * see, and their device work still matches them.
	 */
	comm_str = comm_of(d, ev->comm, &own);
	d->own_calls += own;
	x.proc = proc_get(d, ev->pid);
	if (!x.proc)
		return -ENOMEM;
	x.text = event_text(ev, len, text);
	fill_call(&x, comm_str, own);
	if (!x.proc->mapped && d->lookup) {
		x.proc->mapped = true;
		err = write_mappings(&x);
		if (err)
			return err;
	}
	err = note_stack(&x);
	if (err)
		return err;
	switch (classes[x.cls].record) {
	case GRT_REC_CUDA_LAUNCH:
		return emit_launch(&x);
	case GRT_REC_CUDA_GRAPH_LAUNCH:
		return emit_graph_launch(&x);
	case GRT_REC_CUDA_ALLOC:
		return emit_alloc(&x);
	case GRT_REC_CUDA_FREE:
		return emit_free(&x);
	case GRT_REC_CUDA_MEMCPY:
		return emit_memcpy(&x);
	case GRT_REC_CUDA_MEMSET:
		return emit_memset(&x);
	case GRT_REC_CUDA_SYNC:
		return emit_sync(&x);
	case GRT_REC_CUDA_MODULE_LOAD:
		return emit_module(&x);
	case GRT_REC_CUDA_FUNC_NAME:
		return emit_func_name(&x);
	case GRT_REC_CUDA_CONTEXT:
		return emit_context(&x);
	case GRT_REC_CUDA_DEVICE:
		return emit_device(&x);
	}
	d->malformed++;
	return 0;
}

int cuda_decoder_event(struct cuda_decoder *d, const struct cuda_event *ev, size_t len)
{
	int err;

	if (len >= sizeof(*ev) && launch_fast(d, ev, &err))
		return err;
	return decode_event(d, ev, len);
}
