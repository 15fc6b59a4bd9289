/* Unit tests of the cuda source's user-space half: api tables, ELF symbols, maps, event decoding.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include "cli/live_sink.h"
#include "sources/cuda_api.h"
#include "sources/cuda_events.h"
#include "sources/source.h"
#include "sources/cuda_locate.h"
#include "sources/elf_symbols.h"
#include "sources/proc_maps.h"
#include "sources/session.h"
#include "sources/stack_store.h"
#include "trace/records_core.h"
#include "trace/trace_names.h"
#include "test_util.h"
#include "cuda.skel.h"

static char fake_libcuda[PATH_MAX];

/* ---- what a decoder emits, kept for inspection ---- */

#define MAX_KEPT 64

struct kept {
	uint16_t type;
	struct grt_record_header hdr;
	unsigned char payload[512];
};

struct capture {
	struct grt_live_sink sink;
	struct kept recs[MAX_KEPT];
	int n;
};

static void keep(void *ctx, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct capture *c = ctx;

	if (c->n == MAX_KEPT || rec->hdr.payload_len > sizeof(c->recs[0].payload))
		return;
	c->recs[c->n].type = rec->hdr.type;
	c->recs[c->n].hdr = rec->hdr;
	memcpy(c->recs[c->n].payload, rec->payload, rec->hdr.payload_len);
	c->n++;
}

/* The last record of a type, or NULL. */
static const void *last_of(const struct capture *c, uint16_t type)
{
	for (int i = c->n - 1; i >= 0; i--)
		if (c->recs[i].type == type)
			return c->recs[i].payload;
	return NULL;
}

static int count_of(const struct capture *c, uint16_t type)
{
	int n = 0;

	for (int i = 0; i < c->n; i++)
		n += c->recs[i].type == type;
	return n;
}

static const char *string_of(const struct capture *c, uint32_t id)
{
	return grt_strings_get(c->sink.strings, id);
}

struct harness {
	struct capture cap;
	struct grt_session *session;
	struct cuda_decoder *decoder;
};

static uint64_t stack_ips[CUDA_STACK_DEPTH];

static int fake_stack_lookup(void *ctx, uint32_t id, uint64_t *ips)
{
	if (id != 7)
		return -ENOENT;
	memcpy(ips, stack_ips, sizeof(stack_ips));
	return 0;
}

static void harness_open(struct harness *h, bool stacks)
{
	struct grt_session_config cfg = {0};

	memset(h, 0, sizeof(*h));
	grt_live_sink_init(&h->cap.sink, keep, &h->cap);
	h->session = grt_session_new(&cfg, &h->cap.sink.sink);
	h->decoder = cuda_decoder_new(h->session, stacks ? fake_stack_lookup : NULL, NULL);
}

static void harness_close(struct harness *h)
{
	cuda_decoder_free(h->decoder);
	grt_session_free(h->session);
	grt_live_sink_destroy(&h->cap.sink);
}

static struct cuda_event event_of(uint16_t api)
{
	struct cuda_event ev = {
	    .entry_ns = 1000,
	    .return_ns = 1500,
	    .pid = 4242,
	    .tid = 4243,
	    .ppid = 1,
	    .cpu = 1,
	    .api = api,
	    .stack_id = -1,
	};

	memcpy(ev.comm, "app", 4);
	return ev;
}

static int decode(struct harness *h, const struct cuda_event *ev)
{
	return cuda_decoder_event(h->decoder, ev, sizeof(*ev));
}

static int decode_text(struct harness *h, struct cuda_event ev, const char *text)
{
	struct cuda_text_event t = {.event = ev};

	t.event.text_len = (uint32_t)strlen(text) + 1;
	memcpy(t.text, text, t.event.text_len);
	return cuda_decoder_event(h->decoder, &t.event, sizeof(t));
}

/* ---- tables ---- */

static void test_every_api_has_a_class_with_programs(void)
{
	struct cuda_bpf *skel = cuda_bpf__open();
	bool class_used[CUDA_CLASS_COUNT] = {false};
	char name[64];

	CHECK(skel != NULL);
	if (!skel)
		return;
	for (uint32_t api = 1; api < GRT_CUDA_API_COUNT; api++) {
		enum cuda_probe_class cls = cuda_api_class(api);

		CHECK(cls < CUDA_CLASS_COUNT);
		CHECK_STR(cuda_api_symbol(api), grt_cuda_api_name(api));
		if (cls < CUDA_CLASS_COUNT)
			class_used[cls] = true;
	}
	for (int cls = 0; cls < CUDA_CLASS_COUNT; cls++) {
		bool launch = cls == CUDA_CLASS_LAUNCH || cls == CUDA_CLASS_LAUNCH_EX ||
			      cls == CUDA_CLASS_GRAPH_LAUNCH;

		CHECK(class_used[cls]);
		CHECK(!cuda_class_program_name(cls, CUDA_PROGRAM_ENTER, name, sizeof(name)));
		CHECK(bpf_object__find_program_by_name(skel->obj, name) != NULL);
		CHECK(!cuda_class_program_name(cls, CUDA_PROGRAM_EXIT, name, sizeof(name)));
		CHECK(bpf_object__find_program_by_name(skel->obj, name) != NULL);
		/* only the launch classes sample their returns, through a session program */
		CHECK(cuda_class_is_launch(cls) == launch);
		CHECK(!cuda_class_program_name(cls, CUDA_PROGRAM_SESSION, name, sizeof(name)) ==
		      launch);
		if (launch)
			CHECK(bpf_object__find_program_by_name(skel->obj, name) != NULL);
	}
	CHECK(!cuda_class_program_name(CUDA_CLASS_MEMCPY_HTOD_ASYNC, CUDA_PROGRAM_EXIT, name,
				       sizeof(name)));
	CHECK_STR(name, "exit_memcpy_htod_async");
	CHECK(!cuda_class_program_name(CUDA_CLASS_LAUNCH_EX, CUDA_PROGRAM_SESSION, name,
				       sizeof(name)));
	CHECK_STR(name, "session_launch_ex");
	CHECK(cuda_api_class(0) == CUDA_CLASS_COUNT);
	CHECK(cuda_api_class(GRT_CUDA_API_COUNT) == CUDA_CLASS_COUNT);
	CHECK(cuda_api_is_legacy32(GRT_CUDA_MEM_ALLOC));
	CHECK(!cuda_api_is_legacy32(GRT_CUDA_MEM_ALLOC_V2));
	cuda_bpf__destroy(skel);
}

static void test_elf_finds_every_fake_entry_point(void)
{
	const char *names[GRT_CUDA_API_COUNT + 1];
	uint64_t offsets[GRT_CUDA_API_COUNT + 1];
	int found;

	for (uint32_t api = 1; api < GRT_CUDA_API_COUNT; api++)
		names[api - 1] = cuda_api_symbol(api);
	names[GRT_CUDA_API_COUNT - 1] = "cuNoSuchEntryPoint";
	found = elf_find_functions(fake_libcuda, names, GRT_CUDA_API_COUNT, offsets);
	CHECK_EQ_U64(found, GRT_CUDA_API_COUNT - 1);
	CHECK_EQ_U64(offsets[GRT_CUDA_API_COUNT - 1], 0);
	for (uint32_t i = 0; i + 1 < GRT_CUDA_API_COUNT; i++)
		for (uint32_t j = i + 1; j + 1 < GRT_CUDA_API_COUNT; j++)
			CHECK(offsets[i] != offsets[j]);
	CHECK_EQ_U64(elf_find_functions("/nonexistent", names, 1, offsets), (uint64_t)-ENOENT);
	CHECK_EQ_U64(elf_find_functions("/etc/hostname", names, 1, offsets), (uint64_t)-ENOEXEC);
}

static void test_maps_lines(void)
{
	struct proc_mapping m;

	CHECK(proc_maps_parse_line("7f0000001000-7f0000002000 r-xp 00003000 fd:01 1234   "
				   "/opt/my lib/libcuda.so.1\n",
				   &m));
	CHECK_EQ_U64(m.start, 0x7f0000001000);
	CHECK_EQ_U64(m.end, 0x7f0000002000);
	CHECK_EQ_U64(m.file_offset, 0x3000);
	CHECK_EQ_U64(m.inode, 1234);
	CHECK(m.executable && !m.deleted);
	CHECK_STR(m.path, "/opt/my lib/libcuda.so.1");
	CHECK(proc_maps_parse_line("1000-2000 rw-p 00000000 00:00 0\n", &m));
	CHECK(!m.executable && !m.inode && !m.path[0]);
	CHECK(proc_maps_parse_line(
	    "1000-2000 r-xp 00000000 08:02 77 /usr/lib/libcuda.so.1 (deleted)\n", &m));
	CHECK(m.deleted);
	CHECK_STR(m.path, "/usr/lib/libcuda.so.1");
	CHECK(proc_maps_parse_line(
	    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n", &m));
	CHECK_STR(m.path, "[vsyscall]");
	CHECK(!proc_maps_parse_line("garbage\n", &m));
	CHECK(!proc_maps_parse_line("", &m));
}

static void test_libcuda_names(void)
{
	CHECK(cuda_is_libcuda_path("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	CHECK(cuda_is_libcuda_path("/usr/lib/libcuda.so.580.159.04"));
	CHECK(cuda_is_libcuda_path("libcuda.so"));
	CHECK(!cuda_is_libcuda_path("/usr/lib/libcudart.so.13"));
	CHECK(!cuda_is_libcuda_path("/usr/lib/libcuda_fake.so"));
	CHECK(!cuda_is_libcuda_path("/opt/libcuda.so1"));
}

/* ---- decoding ---- */

static void test_legacy_entry_points_are_32_bit(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_MEM_ALLOC);
	const struct grt_cuda_alloc_rec *a;
	const struct grt_cuda_memcpy_rec *c;
	const struct grt_cuda_memset_rec *s;

	harness_open(&h, false);
	ev.flags = CUDA_EVENT_LEGACY32;
	ev.args.alloc.addr = 0xffffffff10000000ull; /* the canary beside a 32-bit CUdeviceptr */
	ev.args.alloc.bytes = 0xdead000000001388ull;
	CHECK(!decode(&h, &ev));
	a = last_of(&h.cap, GRT_REC_CUDA_ALLOC);
	CHECK(a && a->addr == 0x10000000 && a->bytes == 5000 && a->kind == GRT_ALLOC_DEVICE);

	ev = event_of(GRT_CUDA_MEM_ALLOC_HOST); /* v1 cuMemAllocHost: only the size is 32-bit */
	ev.flags = CUDA_EVENT_LEGACY32;
	ev.args.alloc.addr = 0x7f0012345000ull;
	ev.args.alloc.bytes = 0x100000000ull + 4096;
	CHECK(!decode(&h, &ev));
	a = last_of(&h.cap, GRT_REC_CUDA_ALLOC);
	CHECK(a && a->addr == 0x7f0012345000ull && a->bytes == 4096 && a->kind == GRT_ALLOC_HOST);

	ev = event_of(GRT_CUDA_MEMCPY_HTOD); /* host source stays 64-bit */
	ev.flags = CUDA_EVENT_LEGACY32;
	ev.args.copy = (struct cuda_copy_args){.dst = 0xabcd00001000ull,
					       .src = 0x7f0000002000ull,
					       .bytes = 0x1000000000ull + 777,
					       .dims = 1};
	CHECK(!decode(&h, &ev));
	c = last_of(&h.cap, GRT_REC_CUDA_MEMCPY);
	CHECK(c && c->dst == 0x1000 && c->src == 0x7f0000002000ull && c->bytes == 777 &&
	      c->kind == GRT_COPY_HTOD && !c->is_async);

	ev = event_of(GRT_CUDA_MEMSET_D16);
	ev.flags = CUDA_EVENT_LEGACY32;
	ev.args.memset = (struct cuda_memset_args){
	    .dst = 0x1100002000ull, .value = 0x12345, .count = 0x100000000ull + 10};
	CHECK(!decode(&h, &ev));
	s = last_of(&h.cap, GRT_REC_CUDA_MEMSET);
	CHECK(s && s->dst == 0x2000 && s->bytes == 20 && s->value == 0x2345 && s->elem_size == 2);
	harness_close(&h);
}

static void test_allocation_results(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_MEM_ALLOC_PITCH_V2);
	const struct grt_cuda_alloc_rec *a;

	harness_open(&h, false);
	ev.args.alloc = (struct cuda_alloc_args){
	    .out = 1, .pitch_out = 2, .addr = 0x7000, .pitch = 1024, .bytes = 10};
	CHECK(!decode(&h, &ev));
	a = last_of(&h.cap, GRT_REC_CUDA_ALLOC);
	CHECK(a && a->bytes == 10240 && a->addr == 0x7000 && a->kind == GRT_ALLOC_PITCH);

	ev = event_of(GRT_CUDA_MEM_ALLOC_V2); /* failed: whatever *dptr held is no address */
	ev.ret = 2;
	ev.args.alloc = (struct cuda_alloc_args){.out = 1, .addr = 0x5555, .bytes = 1 << 30};
	CHECK(!decode(&h, &ev));
	a = last_of(&h.cap, GRT_REC_CUDA_ALLOC);
	CHECK(a && a->addr == 0 && a->bytes == 1 << 30 && a->call.ret == 2);
	harness_close(&h);
}

static void test_unreturned_call(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_STREAM_SYNCHRONIZE);
	const struct grt_cuda_sync_rec *s;

	harness_open(&h, false);
	ev.flags = CUDA_EVENT_NO_RETURN;
	ev.return_ns = 0;
	ev.ret = 77; /* garbage in the pending table must not show */
	ev.args.sync.stream = 0xdead0;
	CHECK(!decode(&h, &ev));
	s = last_of(&h.cap, GRT_REC_CUDA_SYNC);
	CHECK(s && s->call.flags == GRT_CUDA_F_NO_RETURN && s->call.return_ns == 0 &&
	      s->call.ret == 0);
	CHECK(s && s->stream == 0xdead0 && s->kind == GRT_SYNC_STREAM);
	harness_close(&h);
}

/* A launch sent at its entry: flagged, and whatever sits in the return fields does not show. */
static void test_unsampled_launch_return(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_LAUNCH_KERNEL);
	const struct grt_cuda_launch_rec *l;

	harness_open(&h, false);
	ev.flags = CUDA_EVENT_RETURN_UNSAMPLED;
	ev.return_ns = 1500;
	ev.ret = 400;
	ev.args.launch = (struct cuda_launch_args){
	    .function = 0xf000, .stream = 0x5000, .grid = {4, 1, 1}, .block = {256, 1, 1}};
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK(l && l->call.flags == GRT_CUDA_F_RETURN_UNSAMPLED && l->call.return_ns == 0 &&
	      l->call.ret == 0 && !grt_cuda_call_returned(&l->call));
	CHECK(l && l->function == 0xf000 && l->stream == 0x5000 && l->grid[0] == 4 &&
	      l->block[0] == 256);
	CHECK(h.cap.n == 1 && h.cap.recs[0].hdr.ts_ns == 1000);
	/* the same launch with its return: both fields kept */
	ev.flags = 0;
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK(l && l->call.flags == 0 && l->call.return_ns == 1500 && l->call.ret == 400 &&
	      grt_cuda_call_returned(&l->call));
	harness_close(&h);
}

static void test_names_follow_handles_per_process(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_LIBRARY_GET_KERNEL);
	const struct grt_cuda_launch_rec *l;
	const struct grt_cuda_func_name_rec *f;

	harness_open(&h, false);
	ev.args.name = (struct cuda_name_args){.out = 1, .handle = 0xe000, .module = 0x4e000};
	CHECK(!decode_text(&h, ev, "reduce"));
	ev = event_of(GRT_CUDA_KERNEL_GET_FUNCTION);
	ev.args.name = (struct cuda_name_args){.out = 1, .handle = 0xd000, .module = 0xe000};
	CHECK(!decode(&h, &ev));
	f = last_of(&h.cap, GRT_REC_CUDA_FUNC_NAME);
	CHECK(f && f->handle == 0xd000 && f->module == 0xe000);
	CHECK_STR(string_of(&h.cap, f ? f->name_str : 0), "reduce");

	/* the CUfunction, the CUkernel used in its place, and another process's same handle */
	ev = event_of(GRT_CUDA_LAUNCH_KERNEL);
	ev.args.launch.function = 0xd000;
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK_STR(string_of(&h.cap, l ? l->kernel_str : 0), "reduce");
	ev.args.launch.function = 0xe000;
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK_STR(string_of(&h.cap, l ? l->kernel_str : 0), "reduce");
	ev.pid = 5000;
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK(l && l->kernel_str == 0 && l->function == 0xe000);

	/* a failed lookup teaches nothing, even with a name */
	ev = event_of(GRT_CUDA_MODULE_GET_FUNCTION);
	ev.ret = 500;
	ev.args.name = (struct cuda_name_args){.out = 1, .handle = 0xf000, .module = 0x4d000};
	CHECK(!decode_text(&h, ev, "ghost"));
	f = last_of(&h.cap, GRT_REC_CUDA_FUNC_NAME);
	CHECK(f && f->handle == 0 && f->name_str == 0);
	ev = event_of(GRT_CUDA_LAUNCH_KERNEL);
	ev.args.launch.function = 0xf000;
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK(l && l->kernel_str == 0);
	harness_close(&h);
}

static void test_copy_directions_from_memory_types(void)
{
	static const struct {
		uint8_t dst, src;
		uint32_t kind;
	} cases[] = {
	    {2, 1, GRT_COPY_HTOD},    {1, 2, GRT_COPY_DTOH}, {2, 2, GRT_COPY_DTOD},
	    {1, 1, GRT_COPY_HTOH},    {3, 1, GRT_COPY_HTOD}, {4, 2, GRT_COPY_DEFAULT},
	    {0, 0, GRT_COPY_UNKNOWN},
	};
	struct harness h;

	harness_open(&h, false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cuda_event ev = event_of(GRT_CUDA_MEMCPY_3D_ASYNC_V2);
		const struct grt_cuda_memcpy_rec *c;

		ev.args.copy = (struct cuda_copy_args){.dst_type = cases[i].dst,
						       .src_type = cases[i].src,
						       .bytes = 512,
						       .dims = 3,
						       .stream = 0x5000};
		CHECK(!decode(&h, &ev));
		c = last_of(&h.cap, GRT_REC_CUDA_MEMCPY);
		CHECK(c && c->kind == cases[i].kind && c->dims == 3 && c->is_async &&
		      c->stream == 0x5000);
	}
	harness_close(&h);
}

static void test_malformed_events_are_counted(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_API_COUNT);
	struct cuda_text_event t = {.event = event_of(GRT_CUDA_MODULE_LOAD)};
	const struct grt_cuda_module_rec *m;

	harness_open(&h, false);
	CHECK(!decode(&h, &ev));
	ev = event_of(GRT_CUDA_LAUNCH_KERNEL);
	CHECK(!cuda_decoder_event(h.decoder, &ev, sizeof(ev) - 1));
	CHECK_EQ_U64(cuda_decoder_malformed(h.decoder), 2);
	CHECK_EQ_U64(h.cap.n, 0);
	/* a text length beyond what arrived is ignored, the record stays */
	t.event.text_len = CUDA_TEXT_LEN;
	t.event.args.module.out = 1;
	CHECK(!cuda_decoder_event(h.decoder, &t.event, sizeof(t.event) + 8));
	m = last_of(&h.cap, GRT_REC_CUDA_MODULE_LOAD);
	CHECK(m && m->path_str == 0 && m->kind == GRT_MODULE_LOAD_FILE);
	harness_close(&h);
}

static void test_full_length_comm(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_CTX_SYNCHRONIZE);
	const struct grt_cuda_sync_rec *s;

	harness_open(&h, false);
	memcpy(ev.comm, "sixteen_chars_ok", 16); /* no NUL in the kernel's comm */
	CHECK(!decode(&h, &ev));
	s = last_of(&h.cap, GRT_REC_CUDA_SYNC);
	CHECK_STR(string_of(&h.cap, s ? s->call.comm_str : 0), "sixteen_chars_ok");
	CHECK(s && s->call.ppid == 1 && s->call.return_ns == 1500 &&
	      s->call.api == GRT_CUDA_CTX_SYNCHRONIZE);
	CHECK(h.cap.n == 1 && h.cap.recs[0].hdr.ts_ns == 1000 && h.cap.recs[0].hdr.pid == 4242 &&
	      h.cap.recs[0].hdr.tid == 4243 && h.cap.recs[0].hdr.cpu == 1);
	harness_close(&h);
}

/* Calls from grtrace's own threads inside the target stay in the trace, flagged own, and counted. */
static void test_own_threads_flagged(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_MEMCPY_DTOH_V2);
	const struct grt_cuda_memcpy_rec *m;

	harness_open(&h, false);
	memcpy(ev.comm, GRT_OWN_THREAD_PREFIX "probes", sizeof(GRT_OWN_THREAD_PREFIX "probes"));
	CHECK(!decode(&h, &ev));
	CHECK_EQ_U64(h.cap.n, 1);
	m = last_of(&h.cap, GRT_REC_CUDA_MEMCPY);
	CHECK(m && (m->call.flags & GRT_CUDA_F_OWN));
	CHECK_STR(string_of(&h.cap, m ? m->call.comm_str : 0), GRT_OWN_THREAD_PREFIX "probes");
	CHECK_EQ_U64(cuda_decoder_own_calls(h.decoder), 1);
	memcpy(ev.comm, "grtrace", 8); /* an application named grtrace is the application's */
	CHECK(!decode(&h, &ev));
	m = last_of(&h.cap, GRT_REC_CUDA_MEMCPY);
	CHECK(m && !(m->call.flags & GRT_CUDA_F_OWN));
	CHECK_EQ_U64(cuda_decoder_own_calls(h.decoder), 1);
	harness_close(&h);
}

/* A stack in this very process: one stack record, mappings covering its frames. */
static void test_stacks_and_mappings(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_LAUNCH_KERNEL);
	const struct grt_stack_rec *st;
	bool covered = false;

	stack_ips[0] = (uint64_t)(uintptr_t)&test_stacks_and_mappings;
	stack_ips[1] = (uint64_t)(uintptr_t)&memcpy;
	harness_open(&h, true);
	ev.pid = (uint32_t)getpid();
	ev.stack_id = 7;
	CHECK(!decode(&h, &ev));
	CHECK(!decode(&h, &ev));
	CHECK_EQ_U64(count_of(&h.cap, GRT_REC_STACK), 1);
	CHECK_EQ_U64(count_of(&h.cap, GRT_REC_CUDA_LAUNCH), 2);
	st = last_of(&h.cap, GRT_REC_STACK);
	CHECK(st && st->stack_id == 7 && st->depth == 2);
	CHECK(count_of(&h.cap, GRT_REC_MAPPING) >= 2);
	for (int i = 0; i < h.cap.n; i++) {
		const struct grt_mapping_rec *m = (const void *)h.cap.recs[i].payload;

		if (h.cap.recs[i].type == GRT_REC_MAPPING && stack_ips[0] >= m->start &&
		    stack_ips[0] < m->end)
			covered =
			    strstr(string_of(&h.cap, m->path_str), "test_cuda_source") != NULL;
	}
	CHECK(covered);
	harness_close(&h);
}

/* A launch whose stack walk failed says so (-2); one that asked for none says -1. */
static void test_lost_stack_is_told_apart(void)
{
	struct harness h;
	struct cuda_event ev = event_of(GRT_CUDA_LAUNCH_KERNEL);
	const struct grt_cuda_launch_rec *l;

	harness_open(&h, true);
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK(l && l->user_stack_id == GRT_STACK_NONE);
	ev.flags |= CUDA_EVENT_STACK_LOST;
	CHECK(!decode(&h, &ev));
	l = last_of(&h.cap, GRT_REC_CUDA_LAUNCH);
	CHECK(l && l->user_stack_id == GRT_STACK_LOST);
	CHECK_EQ_U64(count_of(&h.cap, GRT_REC_STACK), 0);
	harness_close(&h);
}

/* Stacks named by their frames: equal frames one id, any difference another, none refused. */
static void test_stack_store_names_by_frames(void)
{
	struct stack_store st;
	uint64_t a[3] = {0x1000, 0x2000, 0x3000}, b[3] = {0x1000, 0x2000, 0x3001};
	uint64_t deep[GRT_MAX_STACK_DEPTH], got[GRT_MAX_STACK_DEPTH];
	int32_t ids[2048];
	bool distinct = true;

	stack_store_init(&st, 100);
	CHECK_EQ_U64(stack_store_id(&st, a, 3), 100);
	CHECK_EQ_U64(stack_store_id(&st, b, 3), 101);
	CHECK_EQ_U64(stack_store_id(&st, a, 3), 100);
	CHECK_EQ_U64(stack_store_id(&st, a, 2), 102); /* a prefix is another stack */
	CHECK(stack_store_id(&st, a, 0) == -1 && stack_store_id(&st, a, 33) == -1);
	CHECK(!stack_store_get(&st, 101, got) && got[2] == 0x3001 && got[3] == 0);
	CHECK(stack_store_get(&st, 99, got) == -ENOENT && stack_store_get(&st, 103, got) == -ENOENT);
	/* 2048 stacks differing in one deep frame: 2048 ids, each giving its frames back */
	for (int i = 0; i < GRT_MAX_STACK_DEPTH; i++)
		deep[i] = 0x400000 + i;
	for (int i = 0; i < 2048; i++) {
		deep[GRT_MAX_STACK_DEPTH - 1] = 0x900000 + i;
		ids[i] = stack_store_id(&st, deep, GRT_MAX_STACK_DEPTH);
	}
	for (int i = 0; i < 2048; i++) {
		distinct &= ids[i] == 103 + i && !stack_store_get(&st, (uint32_t)ids[i], got) &&
			    got[GRT_MAX_STACK_DEPTH - 1] == 0x900000u + i;
	}
	CHECK(distinct);
	stack_store_destroy(&st);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];

	snprintf(self, sizeof(self), "%s", argv[0]);
	/* the build directory's fixtures: BUILD/tests/this -> BUILD/fixtures/fake/libcuda.so.1 */
	snprintf(fake_libcuda, sizeof(fake_libcuda), "%s/../fixtures/fake/libcuda.so.1",
		 dirname(self));
	RUN_TEST(test_every_api_has_a_class_with_programs);
	RUN_TEST(test_elf_finds_every_fake_entry_point);
	RUN_TEST(test_maps_lines);
	RUN_TEST(test_libcuda_names);
	RUN_TEST(test_legacy_entry_points_are_32_bit);
	RUN_TEST(test_allocation_results);
	RUN_TEST(test_unreturned_call);
	RUN_TEST(test_unsampled_launch_return);
	RUN_TEST(test_names_follow_handles_per_process);
	RUN_TEST(test_copy_directions_from_memory_types);
	RUN_TEST(test_malformed_events_are_counted);
	RUN_TEST(test_full_length_comm);
	RUN_TEST(test_own_threads_flagged);
	RUN_TEST(test_stacks_and_mappings);
	RUN_TEST(test_lost_stack_is_told_apart);
	RUN_TEST(test_stack_store_names_by_frames);
	return TEST_EXIT_STATUS();
}
