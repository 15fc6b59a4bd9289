/*
 * The fence and xid BPF programs run on synthetic tracepoint entries through
 * BPF_PROG_TEST_RUN (no event here can fire them): the same handler the
 * tracepoint programs use, behind a raw_tp twin whose context is the entry.
 */
#include <stdio.h>
#include <time.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test_util.h"
#include "kernel_test_session.h"
#include "sources/fence.h"
#include "common/pci_addr.h"
#include "sources/tp_format.h"
#include "sources/xid.h"
#include "trace/records_kernel.h"
#include "fence.skel.h"
#include "xid.skel.h"

#define ENTRY_BYTES 96	/* the most a raw_tp test run takes as context */

struct collected {
	uint8_t events[32][sizeof(struct xid_event)];
	size_t sizes[32];
	int count;
};

static int collect(void *ctx, void *data, size_t len)
{
	struct collected *c = ctx;

	if (c->count < 32 && len <= sizeof(c->events[0])) {
		memcpy(c->events[c->count], data, len);
		c->sizes[c->count++] = len;
	}
	return 0;
}

/* Appends a __data_loc string at *tail and points the u32 at loc_off to it. */
static void put_string(uint8_t *entry, int loc_off, int *tail, const char *s)
{
	uint32_t len = strlen(s) + 1, loc = len << 16 | *tail;

	memcpy(entry + loc_off, &loc, 4);
	memcpy(entry + *tail, s, len);
	*tail += len;
}

static int run_prog(int prog_fd, const uint8_t *entry)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = entry, .ctx_size_in = ENTRY_BYTES);

	return bpf_prog_test_run_opts(prog_fd, &opts) ? -errno : (int)opts.retval;
}

/* ---- fence ---- */

struct fence_fixture {
	struct fence_bpf *skel;
	struct ring_buffer *ring;
	struct collected got;
	struct fence_layout layout;
};

static int fence_setup(struct fence_fixture *fx)
{
	struct tp_field fields[TP_MAX_FIELDS];
	int n = tp_format_load("dma_fence", "dma_fence_init", fields, TP_MAX_FIELDS);
	const struct tp_field *driver, *timeline, *context, *seqno;

	memset(fx, 0, sizeof(*fx));
	if (n < 0)
		return n;
	driver = tp_field_find(fields, n, "driver");
	timeline = tp_field_find(fields, n, "timeline");
	context = tp_field_find(fields, n, "context");
	seqno = tp_field_find(fields, n, "seqno");
	if (!driver || !timeline || !context || !seqno)
		return -EINVAL;
	fx->layout = (struct fence_layout){ driver->offset, timeline->offset, context->offset,
					    seqno->offset, context->size, seqno->size };
	fx->skel = fence_bpf__open();
	if (!fx->skel)
		return -errno;
	fx->skel->rodata->layout = fx->layout;
	fx->skel->rodata->filter_by_tgid = true;
	if (fence_bpf__load(fx->skel))
		return -EINVAL;
	fx->ring = ring_buffer__new(bpf_map__fd(fx->skel->maps.fence_events), collect, &fx->got, NULL);
	return fx->ring ? 0 : -ENOMEM;
}

static void fence_teardown(struct fence_fixture *fx)
{
	ring_buffer__free(fx->ring);
	fence_bpf__destroy(fx->skel);
}

static void trace_self(struct fence_fixture *fx, bool on)
{
	__u32 pid = getpid();
	__u8 one = 1;
	int fd = bpf_map__fd(fx->skel->maps.traced_tgids);

	if (on)
		bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
	else
		bpf_map_delete_elem(fd, &pid);
}

/* Fires one dma_fence event of kind for (context, seqno) as the tracepoint would. */
static int fire_fence(struct fence_fixture *fx, uint32_t kind, uint32_t context, uint32_t seqno)
{
	uint8_t entry[ENTRY_BYTES] = { 0 };
	int tail = (fx->layout.seqno > fx->layout.context ? fx->layout.seqno : fx->layout.context) + 8;

	put_string(entry, fx->layout.driver, &tail, "nvidia-drm");
	put_string(entry, fx->layout.timeline, &tail, "nv-timeline-3");
	memcpy(entry + fx->layout.context, &context, 4);
	memcpy(entry + fx->layout.seqno, &seqno, 4);
	fx->skel->bss->test_fence_kind = kind;
	return run_prog(bpf_program__fd(fx->skel->progs.fence_test_event), entry);
}

static const struct fence_event *fence_at(struct fence_fixture *fx, int i)
{
	return (const struct fence_event *)fx->got.events[i];
}

static void test_fence_life_cycle_and_wait(void)
{
	static const uint32_t kinds[] = { GRT_FENCE_INIT, GRT_FENCE_EMIT, GRT_FENCE_ENABLE_SIGNAL,
					  GRT_FENCE_WAIT_START, GRT_FENCE_WAIT_END, GRT_FENCE_SIGNALED,
					  GRT_FENCE_DESTROY };
	struct fence_fixture fx;
	struct timespec pause = { 0, 20 * 1000000L };

	CHECK_EQ_U64(fence_setup(&fx), 0);
	if (!fx.ring)
		goto out;
	trace_self(&fx, true);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (kinds[i] == GRT_FENCE_WAIT_END)
			nanosleep(&pause, NULL);
		CHECK_EQ_U64(fire_fence(&fx, kinds[i], 7, 42), 0);
	}
	ring_buffer__consume(fx.ring);
	CHECK_EQ_U64(fx.got.count, 7);
	for (int i = 0; i < fx.got.count && i < 7; i++) {
		const struct fence_event *e = fence_at(&fx, i);

		CHECK_EQ_U64(e->kind, kinds[i]);
		CHECK_EQ_U64(e->context, 7);
		CHECK_EQ_U64(e->seqno, 42);
		CHECK_EQ_U64(e->pid, getpid());
		CHECK_STR(e->driver, "nvidia-drm");
		CHECK_STR(e->timeline, "nv-timeline-3");
		if (e->kind == GRT_FENCE_WAIT_END) {
			CHECK_EQ_U64(e->flags, GRT_FENCE_F_WAIT_MATCHED);
			CHECK(e->wait_ns >= 20 * 1000000ULL && e->wait_ns < 500 * 1000000ULL);
		} else {
			CHECK_EQ_U64(e->flags, 0);
			CHECK_EQ_U64(e->wait_ns, 0);
		}
	}
	/* a wait_end with no wait_start of this thread has no duration */
	fx.got.count = 0;
	CHECK_EQ_U64(fire_fence(&fx, GRT_FENCE_WAIT_END, 7, 43), 0);
	ring_buffer__consume(fx.ring);
	CHECK_EQ_U64(fx.got.count, 1);
	if (fx.got.count == 1)
		CHECK_EQ_U64(fence_at(&fx, 0)->flags, 0);
out:
	fence_teardown(&fx);
}

static void test_fence_filter_follows_fences_of_traced_processes(void)
{
	struct fence_fixture fx;

	CHECK_EQ_U64(fence_setup(&fx), 0);
	if (!fx.ring)
		goto out;
	trace_self(&fx, true);
	fire_fence(&fx, GRT_FENCE_INIT, 8, 1);		/* traced: followed from now on */
	trace_self(&fx, false);
	fire_fence(&fx, GRT_FENCE_SIGNALED, 8, 1);	/* untraced context (an IRQ): still reported */
	fire_fence(&fx, GRT_FENCE_INIT, 9, 1);		/* another process's fence: not reported */
	fire_fence(&fx, GRT_FENCE_SIGNALED, 9, 1);
	fire_fence(&fx, GRT_FENCE_DESTROY, 8, 1);	/* reported, and forgotten */
	fire_fence(&fx, GRT_FENCE_SIGNALED, 8, 1);
	ring_buffer__consume(fx.ring);
	CHECK_EQ_U64(fx.got.count, 3);
	if (fx.got.count == 3) {
		CHECK_EQ_U64(fence_at(&fx, 0)->kind, GRT_FENCE_INIT);
		CHECK_EQ_U64(fence_at(&fx, 1)->kind, GRT_FENCE_SIGNALED);
		CHECK_EQ_U64(fence_at(&fx, 1)->context, 8);
		CHECK_EQ_U64(fence_at(&fx, 2)->kind, GRT_FENCE_DESTROY);
	}
out:
	fence_teardown(&fx);
}

/*
 * Drivers that number a fence only when they emit it (virtio-gpu) init every fence with seqno
 * 0: a traced process's init must not make every other process's seqno-0 init followed.
 */
static void test_fence_unnumbered_init_follows_nothing(void)
{
	struct fence_fixture fx;

	CHECK_EQ_U64(fence_setup(&fx), 0);
	if (!fx.ring)
		goto out;
	trace_self(&fx, true);
	fire_fence(&fx, GRT_FENCE_INIT, 1, 0);		/* traced: reported */
	fire_fence(&fx, GRT_FENCE_EMIT, 1, 5);		/* numbered now, and followed */
	trace_self(&fx, false);
	fire_fence(&fx, GRT_FENCE_INIT, 1, 0);		/* another process's new fence: not reported */
	fire_fence(&fx, GRT_FENCE_SIGNALED, 1, 5);	/* the traced one's signal: reported */
	ring_buffer__consume(fx.ring);
	CHECK_EQ_U64(fx.got.count, 3);
	if (fx.got.count == 3) {
		CHECK_EQ_U64(fence_at(&fx, 0)->kind, GRT_FENCE_INIT);
		CHECK_EQ_U64(fence_at(&fx, 1)->kind, GRT_FENCE_EMIT);
		CHECK_EQ_U64(fence_at(&fx, 2)->kind, GRT_FENCE_SIGNALED);
	}
out:
	fence_teardown(&fx);
}

/* The real tracepoint programs load and attach here through the source. */
static void test_fence_source_attaches(void)
{
	struct mem_sink m;
	struct grt_session *s = mem_session_new(&m);

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_EQ_U64(grt_session_attach(s, "fence"), 0);
	if (grt_session_error(s)[0])
		printf("  %s\n", grt_session_error(s));
	grt_session_detach_all(s);
	grt_session_free(s);
	mem_sink_free(&m);
}

/* ---- xid ---- */

/* What the kernel generates for NVIDIA's TRACE_EVENT(nvidia_dev_xid, __string(dev) __field(u32) __string(msg)). */
static const char xid_format[] =
	"name: nvidia_dev_xid\nID: 1921\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__data_loc char[] dev;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 error_code;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] msg;\toffset:16;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"Xid (PCI:%s): %u, %s\", __get_str(dev), REC->error_code, __get_str(msg)\n";

static void test_xid_event_from_entry(void)
{
	struct tp_field fields[TP_MAX_FIELDS];
	int n = tp_format_parse(xid_format, fields, TP_MAX_FIELDS);
	const struct tp_field *dev = tp_field_find(fields, n, "dev"), *code = tp_field_find(fields, n, "error_code");
	const struct tp_field *msg = tp_field_find(fields, n, "msg");
	struct collected got = { .count = 0 };
	uint8_t entry[ENTRY_BYTES] = { 0 };
	uint32_t xid = 79;
	int tail = 20;
	struct xid_bpf *skel;
	struct ring_buffer *ring = NULL;

	CHECK_EQ_U64(n, 7);
	CHECK(dev && code && msg);
	if (!dev || !code || !msg)
		return;
	CHECK(dev->data_loc && msg->data_loc && !code->data_loc);
	skel = xid_bpf__open();
	CHECK(skel != NULL);
	if (!skel)
		return;
	skel->rodata->layout = (struct xid_layout){ dev->offset, code->offset, msg->offset };
	bpf_program__set_autoload(skel->progs.xid_tracepoint, false);	/* no such tracepoint here */
	CHECK_EQ_U64(xid_bpf__load(skel), 0);
	ring = ring_buffer__new(bpf_map__fd(skel->maps.xid_events), collect, &got, NULL);
	put_string(entry, dev->offset, &tail, "0000:3b:00.0");
	put_string(entry, msg->offset, &tail, "GPU has fallen off the bus.");
	memcpy(entry + code->offset, &xid, 4);
	CHECK_EQ_U64(run_prog(bpf_program__fd(skel->progs.xid_test_event), entry), 0);
	if (ring)
		ring_buffer__consume(ring);
	CHECK_EQ_U64(got.count, 1);
	if (got.count == 1) {
		const struct xid_event *e = (const void *)got.events[0];

		CHECK_EQ_U64(e->code, 79);
		CHECK_STR(e->dev, "0000:3b:00.0");
		CHECK_STR(e->msg, "GPU has fallen off the bus.");
		CHECK_EQ_U64(grt_pci_parse(e->dev), grt_pci_pack(0, 0x3b, 0, 0));
	}
	ring_buffer__free(ring);
	xid_bpf__destroy(skel);
}

/* Without the NVIDIA driver the source says so in one line instead of attaching. */
static void test_xid_source_skips_without_tracepoint(void)
{
	struct mem_sink m;
	struct grt_session *s = mem_session_new(&m);

	CHECK(s != NULL);
	if (!s)
		return;
	/* the only source requested cannot run: the session refuses, naming why */
	CHECK_EQ_U64(grt_session_attach(s, "xid"), (uint64_t)-EOPNOTSUPP);
	CHECK(strstr(grt_session_error(s), "no nvidia:nvidia_dev_xid tracepoint here") != NULL);
	CHECK(strchr(grt_session_error(s), '\n') == NULL);
	grt_session_free(s);
	mem_sink_free(&m);
}

int main(void)
{
	grt_bpf_capture_messages();
	RUN_TEST(test_fence_life_cycle_and_wait);
	RUN_TEST(test_fence_filter_follows_fences_of_traced_processes);
	RUN_TEST(test_fence_unnumbered_init_follows_nothing);
	RUN_TEST(test_fence_source_attaches);
	RUN_TEST(test_xid_event_from_entry);
	RUN_TEST(test_xid_source_skips_without_tracepoint);
	return TEST_EXIT_STATUS();
}
