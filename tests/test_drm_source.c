/*
 * The drm source's decoding, against the format files of real kernels (tests/data/drm): the
 * layouts it resolves, and its BPF handler run (BPF_PROG_TEST_RUN) on entries built from each
 * layout, as the tracepoint would write them. No DRM driver is needed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test_util.h"
#include "kernel_test_session.h"
#include "sources/drm.h"
#include "sources/drm_events.h"
#include "trace/record_desc.h"
#include "trace/records_drm.h"
#include "drm.skel.h"

#define DATA "tests/data/drm"
#define ENTRY_BYTES 96	/* the most a raw_tp test run takes as context */

static const char *const releases[] = { "6.1.0-56-amd64", "6.12.117+deb12-amd64" };

/* Reads RELEASE/GROUP/EVENT/format; returns the field count or a negative errno. */
static int load_format(const char *release, unsigned tp, struct tp_field *fields)
{
	char path[512];

	snprintf(path, sizeof(path), DATA "/%s/%s/%s/format", release, drm_tracepoint_group(tp),
		 drm_tracepoint_name(tp));
	return tp_format_read(path, fields, TP_MAX_FIELDS);
}

static void test_every_captured_format_resolves(void)
{
	int present[2] = { 0, 0 };

	for (int r = 0; r < 2; r++)
		for (unsigned tp = 0; tp < DRM_TP_COUNT; tp++) {
			struct tp_field fields[TP_MAX_FIELDS];
			struct drm_layout layout;
			char why[200] = "";
			int n = load_format(releases[r], tp, fields);

			if (n == -ENOENT)
				continue;
			CHECK(n > 0);
			present[r]++;
			CHECK_EQ_U64(drm_layout_resolve(drm_tracepoint_def(tp), fields, n, &layout, why,
							sizeof(why)), 0);
			if (why[0])
				printf("  %s %s: %s\n", releases[r], drm_tracepoint_name(tp), why);
		}
	/* 6.1: gpu_scheduler 4, amdgpu 2, i915 5, virtio_gpu 2; 6.12 adds xe's 4 */
	CHECK_EQ_U64(present[0], 13);
	CHECK_EQ_U64(present[1], 17);
}

static struct drm_layout resolved(const char *release, unsigned tp)
{
	struct tp_field fields[TP_MAX_FIELDS];
	struct drm_layout layout = { 0 };
	char why[200];
	int n = load_format(release, tp, fields);

	if (n > 0)
		drm_layout_resolve(drm_tracepoint_def(tp), fields, n, &layout, why, sizeof(why));
	return layout;
}

#define CHECK_FIELD(f, off, sz, k)                                                                 \
	do {                                                                                       \
		CHECK_EQ_U64((f).offset, off);                                                     \
		CHECK_EQ_U64((f).size, sz);                                                        \
		CHECK_EQ_U64((f).kind, k);                                                         \
	} while (0)

/* What the kernels differ in: virtio-gpu's virtqueue seqno and name, the scheduler's fields. */
static void test_layouts_follow_each_kernel(void)
{
	struct drm_layout v61 = resolved(releases[0], DRM_TP_VIRTIO_CMD_QUEUE);
	struct drm_layout v612 = resolved(releases[1], DRM_TP_VIRTIO_CMD_QUEUE);
	struct drm_layout run = resolved(releases[1], DRM_TP_SCHED_RUN_JOB);
	struct drm_layout done = resolved(releases[1], DRM_TP_SCHED_PROCESS_JOB);
	struct drm_layout i915 = resolved(releases[1], DRM_TP_I915_ADD);

	CHECK_FIELD(v61.job, 0, 0, DRM_FIELD_NONE);		/* no seqno before 6.3 */
	CHECK_FIELD(v61.ring, 16, 8, DRM_FIELD_PTR_STRING);	/* const char *name */
	CHECK_FIELD(v61.seqno, 32, 8, DRM_FIELD_INT);		/* fence_id */
	CHECK_FIELD(v612.job, 48, 4, DRM_FIELD_INT);
	CHECK_FIELD(v612.ring, 16, 4, DRM_FIELD_LOC_STRING);
	CHECK_FIELD(v612.arg0, 20, 4, DRM_FIELD_INT);		/* command type */
	CHECK_FIELD(run.job, 32, 8, DRM_FIELD_INT);		/* sched job id */
	CHECK_FIELD(run.fence, 16, 8, DRM_FIELD_INT);
	CHECK_FIELD(run.ring, 24, 4, DRM_FIELD_LOC_STRING);
	CHECK_FIELD(run.arg1, 44, 4, DRM_FIELD_INT);		/* hw_job_count */
	CHECK_FIELD(done.fence, 8, 8, DRM_FIELD_INT);
	CHECK_FIELD(done.job, 0, 0, DRM_FIELD_NONE);
	CHECK_FIELD(i915.context, 16, 8, DRM_FIELD_INT);
	CHECK_FIELD(i915.arg0, 24, 2, DRM_FIELD_INT);		/* engine class */
}

static void test_missing_or_misshapen_field_says_which(void)
{
	static const char no_fence[] =
		"name: drm_sched_process_job\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:struct dma_fence * other;\toffset:8;\tsize:8;\tsigned:0;\n";
	static const char string_seqno[] =
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int dev;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n"
		"\tfield:u32 type;\toffset:16;\tsize:4;\tsigned:0;\n"
		"\tfield:u32 flags;\toffset:20;\tsize:4;\tsigned:0;\n"
		"\tfield:__data_loc char[] fence_id;\toffset:24;\tsize:4;\tsigned:0;\n"
		"\tfield:u32 ctx_id;\toffset:28;\tsize:4;\tsigned:0;\n";
	struct tp_field fields[TP_MAX_FIELDS];
	struct drm_layout layout;
	char why[200];
	int n;

	n = tp_format_parse(no_fence, fields, TP_MAX_FIELDS);
	CHECK_EQ_U64(drm_layout_resolve(drm_tracepoint_def(DRM_TP_SCHED_PROCESS_JOB), fields, n, &layout,
					why, sizeof(why)), (uint64_t)-EINVAL);
	CHECK_STR(why, "its format has no 'fence' field");
	n = tp_format_parse(string_seqno, fields, TP_MAX_FIELDS);
	CHECK_EQ_U64(drm_layout_resolve(drm_tracepoint_def(DRM_TP_VIRTIO_CMD_QUEUE), fields, n, &layout,
					why, sizeof(why)), (uint64_t)-EINVAL);
	CHECK_STR(why, "'fence_id' is not an integer (4 bytes, a string)");
}

/* ---- the BPF decoder on entries laid out as each captured format says ---- */

struct collected {
	struct drm_event events[4];
	int count;
};

static int collect(void *ctx, void *data, size_t len)
{
	struct collected *c = ctx;

	if (c->count < 4 && len == sizeof(struct drm_event))
		memcpy(&c->events[c->count++], data, len);
	return 0;
}

/* The value written into an integer field of size bytes: distinct per value slot. */
static uint64_t value_for(int slot, unsigned size)
{
	uint64_t v = 0x1122334455667788ull + slot * 0x0101010101010101ull;

	return size == 8 ? v : v & ((1ull << (size * 8)) - 1);
}

static void put_int(uint8_t *entry, struct drm_field f, int slot)
{
	uint64_t v = value_for(slot, f.size);

	if (f.kind == DRM_FIELD_INT)
		memcpy(entry + f.offset, &v, f.size);	/* little-endian: the low bytes */
}

static void check_decoded(const struct drm_event *e, const struct drm_layout *l, unsigned tp)
{
	const struct drm_field *slots[] = { &l->job, &l->fence, &l->context, &l->seqno, &l->arg0, &l->arg1 };
	const uint64_t got[] = { e->job, e->fence, e->context, e->seqno, e->arg0, e->arg1 };

	CHECK_EQ_U64(e->tracepoint, tp);
	CHECK_EQ_U64(e->pid, getpid());
	for (int i = 0; i < 6; i++) {
		uint64_t want = slots[i]->kind == DRM_FIELD_INT ? value_for(i, slots[i]->size) : 0;

		if (i >= 4)
			want &= 0xffffffff;	/* arg0/arg1 are u32 */
		if (got[i] != want)
			printf("  %s slot %d: got %#llx, want %#llx\n", drm_tracepoint_name(tp), i,
			       (unsigned long long)got[i], (unsigned long long)want);
		CHECK_EQ_U64(got[i], want);
	}
	/* a char * cannot point at a test's buffer: the kernel refuses to read it, the name is empty */
	CHECK_STR(e->ring, l->ring.kind == DRM_FIELD_LOC_STRING ? "gfx_0.0.0" : "");
}

static void decode_release(const char *release)
{
	struct drm_layout layouts[DRM_TP_COUNT] = { 0 };
	bool present[DRM_TP_COUNT] = { false };
	struct collected got = { .count = 0 };
	struct ring_buffer *ring = NULL;
	struct drm_bpf *skel = drm_bpf__open();
	struct bpf_program *prog;

	CHECK(skel != NULL);
	if (!skel)
		return;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.drm_test_event);
	for (unsigned tp = 0; tp < DRM_TP_COUNT; tp++) {
		layouts[tp] = resolved(release, tp);
		present[tp] = layouts[tp].seqno.kind || layouts[tp].fence.kind || layouts[tp].context.kind;
		memcpy((void *)&skel->rodata->layouts[tp], &layouts[tp], sizeof(layouts[tp]));
	}
	CHECK_EQ_U64(drm_bpf__load(skel), 0);
	ring = ring_buffer__new(bpf_map__fd(skel->maps.drm_events), collect, &got, NULL);
	CHECK(ring != NULL);
	for (unsigned tp = 0; ring && tp < DRM_TP_COUNT; tp++) {
		const struct drm_layout *l = &layouts[tp];
		uint8_t entry[ENTRY_BYTES] = { 0 };
		int tail = 0;
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = entry, .ctx_size_in = ENTRY_BYTES);

		if (!present[tp])
			continue;
		put_int(entry, l->job, 0);
		put_int(entry, l->fence, 1);
		put_int(entry, l->context, 2);
		put_int(entry, l->seqno, 3);
		put_int(entry, l->arg0, 4);
		put_int(entry, l->arg1, 5);
		for (const struct drm_field *f = &l->job; f <= &l->ring; f++)
			if (f->offset + f->size > tail)
				tail = f->offset + f->size;
		if (l->ring.kind == DRM_FIELD_LOC_STRING) {
			uint32_t loc = 10u << 16 | tail;

			memcpy(entry + l->ring.offset, &loc, 4);
			memcpy(entry + tail, "gfx_0.0.0", 10);
		}
		skel->bss->test_tracepoint = tp;
		got.count = 0;
		CHECK_EQ_U64(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.drm_test_event), &opts), 0);
		ring_buffer__consume(ring);
		CHECK_EQ_U64(got.count, 1);
		if (got.count == 1)
			check_decoded(&got.events[0], l, tp);
	}
	ring_buffer__free(ring);
	drm_bpf__destroy(skel);
}

static void test_decoder_on_6_1_entries(void)
{
	decode_release(releases[0]);
}

static void test_decoder_on_6_12_entries(void)
{
	decode_release(releases[1]);
}

/* parse's fields of a drm record: the driver's names for its arguments, virtio-gpu commands named. */
static void test_record_names(void)
{
	const char *a0, *a1;

	CHECK_STR(grt_drm_event_name(GRT_DRM_SUBMIT), "submit");
	CHECK_STR(grt_drm_event_name(GRT_DRM_DEPENDENCY), "dependency");
	CHECK_STR(grt_drm_event_name(77), "unknown");
	CHECK_STR(grt_drm_driver_name(GRT_DRM_VIRTIO_GPU), "virtio_gpu");
	CHECK_STR(grt_virtio_gpu_cmd_name(0x0101), "RESOURCE_CREATE_2D");
	CHECK_STR(grt_virtio_gpu_cmd_name(0x1100), "OK_NODATA");
	CHECK(grt_virtio_gpu_cmd_name(0x4242) == NULL);
	grt_drm_arg_names(GRT_DRM_SCHED, &a0, &a1);
	CHECK_STR(a0, "queued");
	CHECK_STR(a1, "hw_queued");
	grt_drm_arg_names(GRT_DRM_AMDGPU, &a0, &a1);
	CHECK(a1 == NULL);
	CHECK(grt_record_desc_find(GRT_REC_DRM_JOB) != NULL);
	CHECK_STR(grt_record_desc_find(GRT_REC_DRM_JOB)->name, "drm");
}

/* Here (no DRM driver) the source is skipped with one line that says why. */
static void test_source_skips_without_drm(void)
{
	struct mem_sink m;
	struct grt_session *s = mem_session_new(&m);
	int rc;

	CHECK(s != NULL);
	if (!s)
		return;
	rc = grt_session_attach(s, "drm");
	if (access("/sys/kernel/tracing/events/gpu_scheduler", F_OK) == 0 ||
	    access("/sys/kernel/tracing/events/virtio_gpu", F_OK) == 0) {
		CHECK_EQ_U64(rc, 0);
	} else {
		CHECK_EQ_U64(rc, (uint64_t)-EOPNOTSUPP);
		CHECK(strstr(grt_session_error(s), "source drm unavailable: no DRM job tracepoints here") != NULL);
	}
	grt_session_free(s);
	mem_sink_free(&m);
}

int main(void)
{
	grt_bpf_capture_messages();
	RUN_TEST(test_every_captured_format_resolves);
	RUN_TEST(test_layouts_follow_each_kernel);
	RUN_TEST(test_missing_or_misshapen_field_says_which);
	RUN_TEST(test_decoder_on_6_1_entries);
	RUN_TEST(test_decoder_on_6_12_entries);
	RUN_TEST(test_record_names);
	RUN_TEST(test_source_skips_without_drm);
	return TEST_EXIT_STATUS();
}
