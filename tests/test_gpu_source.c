/* Tests of the `gpu` source's recorder side: its ring and environment, messages to records. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include "inject/inject_proto.h"
#include "inject/shm_ring.h"
#include "sources/gpu.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"
#include "test_util.h"

#define MAX_CAPTURED 256

/* A sink that keeps what the source emits. */
struct capture_sink {
	struct grt_sink sink;
	struct {
		uint16_t type;
		struct grt_event_origin origin;
		uint8_t payload[128];
		uint32_t len;
	} recs[MAX_CAPTURED];
	unsigned n;
	char *strings[64];
	unsigned nstrings;
	uint64_t drops[GRT_SRC_MAX];
};

static int capture_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *o,
			  const void *payload, uint32_t len)
{
	struct capture_sink *c = (struct capture_sink *)sink;

	if (c->n == MAX_CAPTURED)
		return -ENOSPC;
	c->recs[c->n].type = type;
	c->recs[c->n].origin = *o;
	c->recs[c->n].len = len;
	memcpy(c->recs[c->n].payload, payload, len < 128 ? len : 128);
	c->n++;
	return 0;
}

static uint32_t capture_intern(struct grt_sink *sink, const char *text)
{
	struct capture_sink *c = (struct capture_sink *)sink;

	for (unsigned i = 0; i < c->nstrings; i++)
		if (!strcmp(c->strings[i], text))
			return i + 1;
	c->strings[c->nstrings] = strdup(text);
	return ++c->nstrings;
}

static int capture_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts)
{
	((struct capture_sink *)sink)->drops[source] += count;
	return 0;
}

static const char *string_of(struct capture_sink *c, uint32_t id)
{
	return id && id <= c->nstrings ? c->strings[id - 1] : NULL;
}

static void capture_free(struct capture_sink *c)
{
	for (unsigned i = 0; i < c->nstrings; i++)
		free(c->strings[i]);
}

static const struct grt_source *gpu(void)
{
	return grt_source_find("gpu");
}

/* The value of KEY in the session's added environment, or NULL. */
static const char *added_env(struct grt_session *s, const char *key)
{
	size_t n = strlen(key);

	for (const char *const *e = grt_session_target_env(s); *e; e++)
		if (!strncmp(*e, key, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* A library file where the source looks for it (GRTRACE_INJECT_LIB). */
static void fake_inject_lib(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/grt-inject-lib-XXXXXX");
	fd = mkstemp(path);
	close(fd);
	setenv("GRTRACE_INJECT_LIB", path, 1);
}

static void test_probe_without_library(void)
{
	char why[256] = "";

	setenv("GRTRACE_INJECT_LIB", "/nonexistent/libgrtrace-inject.so", 1);
	CHECK(gpu() != NULL);
	CHECK(gpu()->probe(why, sizeof(why)) == -ENOENT);
	CHECK(strstr(why, "libgrtrace-inject.so not found") != NULL);
}

static void test_needs_launched_command(void)
{
	struct capture_sink c = {.sink = {capture_append, capture_intern, capture_drop}};
	struct grt_session_config cfg = {.target_pid = getpid(), .launched = false};
	struct grt_session *s = grt_session_new(&cfg, &c.sink);
	char lib[64];
	void *ctx = NULL;

	fake_inject_lib(lib, sizeof(lib));
	CHECK(gpu()->attach(s, &ctx) == -EINVAL);
	CHECK(strstr(grt_session_error(s), "needs a command to launch") != NULL);
	CHECK(ctx == NULL);
	grt_session_free(s);
	unlink(lib);
}

/* Opens the ring the source created, as the injected library does. */
static struct shm_ring *open_ring(const char *path, size_t *len)
{
	struct stat sb;
	void *map;
	int fd = open(path, O_RDWR);

	if (fd < 0 || fstat(fd, &sb))
		return NULL;
	*len = (size_t)sb.st_size;
	map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return map == MAP_FAILED || shm_ring_check(map, *len) ? NULL : map;
}

static void head(struct inj_head *h, uint64_t ts)
{
	*h = (struct inj_head){.pid = 4242, .tid = 4243, .cpu = 3, .ts_ns = ts};
}

static void send_name(struct shm_ring *r, uint64_t id, const char *text)
{
	size_t len = strlen(text) + 1;
	struct inj_name *m = shm_ring_reserve(r, INJ_MSG_NAME, (uint32_t)(sizeof(*m) + len));

	head(&m->head, 10);
	m->name_id = id;
	memcpy(m->text, text, len);
	shm_ring_commit(r, m);
}

static void send_status(struct shm_ring *r, uint32_t part, int status, const char *text)
{
	size_t len = strlen(text) + 1;
	struct inj_status *m = shm_ring_reserve(r, INJ_MSG_STATUS, (uint32_t)(sizeof(*m) + len));

	head(&m->head, 11);
	m->part = part;
	m->status = status;
	memcpy(m->text, text, len);
	shm_ring_commit(r, m);
}

static void send_instrument(struct shm_ring *r, uint64_t id, int status, const char *reason)
{
	size_t len = strlen(reason) + 1;
	struct inj_instrument *m =
	    shm_ring_reserve(r, INJ_MSG_INSTRUMENT, (uint32_t)(sizeof(*m) + len));

	head(&m->head, 12);
	m->name_id = id;
	memset(&m->rec, 0, sizeof(m->rec));
	m->rec.status = status;
	memcpy(m->reason, reason, len);
	shm_ring_commit(r, m);
}

/* Everything the library sends becomes the right record, with names resolved; junk is refused. */
static void test_messages_to_records(void)
{
	struct capture_sink c = {.sink = {capture_append, capture_intern, capture_drop}};
	struct grt_source_option_value kernels = {.name = "gpu-kernels", .value = "^vec"};
	struct grt_session_config cfg = {.target_pid = 1, .launched = true, .options = &kernels,
					 .noptions = 1};
	struct grt_session *s = grt_session_new(&cfg, &c.sink);
	/* the call's identity travels with every device record (records_gpu.h) */
	struct inj_kernel k = {.name_id = 0xabc,
			       .rec = {.start_ns = 100,
				       .end_ns = 180,
				       .correlation_id = 9,
				       .api_enter_ns = 90,
				       .api_return_ns = 95,
				       .host_tid = 4244,
				       .flags = GRT_GPU_F_OWN}};
	struct inj_launch l = {
	    .name_id = 0xabc,
	    .rec = {
		.launch_id = 5, .blocks = 2, .start_ns = 110, .api_enter_ns = 91, .api_return_ns = 96,
		.host_tid = 4245}};
	struct inj_copy cp = {.rec = {.start_ns = 200, .bytes = 64, .api_enter_ns = 92,
				      .api_return_ns = 97, .host_tid = 4246, .kind = GRT_COPY_HTOD}};
	struct inj_calib cal = {
	    .rec = {.clock_id = GRT_CLOCK_GPU_GLOBALTIMER, .gpu_ns = 5000, .host_ns = 1000}};
	struct inj_drops d = {.kind = INJ_DROP_CUPTI, .count = 3};
	struct inj_blocks *b;
	struct shm_ring *ring;
	char lib[64], shm[PATH_MAX];
	size_t map_len = 0;
	void *ctx = NULL;
	const char *preload, *path;

	fake_inject_lib(lib, sizeof(lib));
	unsetenv("CUDA_INJECTION64_PATH");
	setenv("LD_PRELOAD", "/usr/lib/other.so", 1);
	CHECK(gpu()->attach(s, &ctx) == 0);
	unsetenv("LD_PRELOAD");
	/* the command starts with the library first in LD_PRELOAD, the ring named, the driver hook
	 * set */
	preload = added_env(s, "LD_PRELOAD");
	CHECK(preload && !strncmp(preload, lib, strlen(lib)) &&
	      strstr(preload, ":/usr/lib/other.so"));
	CHECK_STR(added_env(s, "CUDA_INJECTION64_PATH"), lib);
	CHECK_STR(added_env(s, GRT_INJECT_ENV_KERNELS), "^vec");
	path = added_env(s, GRT_INJECT_ENV_SHM);
	CHECK_STR(path, gpu_ring_path(ctx));
	snprintf(shm, sizeof(shm), "%s", path ? path : "");
	ring = open_ring(shm, &map_len);
	CHECK(ring != NULL);
	if (!ring)
		goto out;

	send_name(ring, 0xabc, "vector_add");
	send_status(ring, INJ_PART_LIBRARY, 0, "attached");
	send_status(ring, INJ_PART_CUPTI, -ENOENT, "CUPTI kernel timing unavailable: no libcupti");
	head(&k.head, 100);
	shm_ring_write(ring, INJ_MSG_KERNEL, &k, sizeof(k));
	head(&l.head, 110);
	shm_ring_write(ring, INJ_MSG_LAUNCH, &l, sizeof(l));
	head(&cp.head, 200);
	shm_ring_write(ring, INJ_MSG_COPY, &cp, sizeof(cp));
	b = shm_ring_reserve(ring, INJ_MSG_BLOCKS, sizeof(*b) + 2 * sizeof(b->recs[0]));
	head(&b->head, 110);
	b->count = 2;
	b->recs[0] =
	    (struct grt_gpu_block_rec){.launch_id = 5, .start_ns = 110, .end_ns = 150, .smid = 1};
	b->recs[1] =
	    (struct grt_gpu_block_rec){.launch_id = 5, .start_ns = 120, .end_ns = 170, .smid = 2};
	shm_ring_commit(ring, b);
	send_instrument(ring, 0xabc, -ENOENT, "no PTX (machine code only: cubin)");
	head(&cal.head, 1000);
	shm_ring_write(ring, INJ_MSG_CALIB, &cal, sizeof(cal));
	head(&d.head, 13);
	shm_ring_write(ring, INJ_MSG_DROPS, &d, sizeof(d));
	/* malformed: a blocks message claiming more records than it holds, an unknown type */
	b = shm_ring_reserve(ring, INJ_MSG_BLOCKS, sizeof(*b));
	head(&b->head, 14);
	b->count = 1000;
	shm_ring_commit(ring, b);
	shm_ring_write(ring, 99, "?", 1);
	CHECK(gpu()->drain(ctx) == 0);
	grt_session_poll(s, 0); /* flushes the drop counts into drop records */

	CHECK_EQ_U64(c.n, 9); /* 2 status, kernel, launch, copy, 2 blocks, instrument, calib */
	if (c.n == 9) {
		const struct grt_source_status_rec *st = (const void *)c.recs[1].payload;
		const struct grt_gpu_kernel_rec *kr = (const void *)c.recs[2].payload;
		const struct grt_gpu_launch_rec *lr = (const void *)c.recs[3].payload;
		const struct grt_gpu_copy_rec *cr = (const void *)c.recs[4].payload;
		const struct grt_gpu_block_rec *br = (const void *)c.recs[6].payload;
		const struct grt_gpu_instrument_rec *ir = (const void *)c.recs[7].payload;

		CHECK_EQ_U64(c.recs[0].type, GRT_REC_SOURCE_STATUS);
		CHECK_EQ_U64(st->source, GRT_SRC_GPU);
		CHECK(st->status == -ENOENT);
		CHECK_STR(string_of(&c, st->message_str),
			  "CUPTI kernel timing unavailable: no libcupti");
		CHECK_EQ_U64(c.recs[2].type, GRT_REC_GPU_KERNEL);
		CHECK_STR(string_of(&c, kr->kernel_str), "vector_add");
		CHECK_EQ_U64(kr->correlation_id, 9);
		CHECK_EQ_U64(c.recs[2].origin.pid, 4242);
		CHECK_EQ_U64(c.recs[2].origin.tid, 4243);
		CHECK_EQ_U64(c.recs[2].origin.cpu, 3);
		CHECK_EQ_U64(c.recs[2].origin.ts_ns, 100);
		CHECK_EQ_U64(c.recs[2].len, sizeof(*kr));
		CHECK_EQ_U64(kr->api_enter_ns, 90);
		CHECK_EQ_U64(kr->api_return_ns, 95);
		CHECK_EQ_U64(kr->host_tid, 4244);
		CHECK_EQ_U64(kr->flags, GRT_GPU_F_OWN);
		CHECK_EQ_U64(c.recs[3].type, GRT_REC_GPU_LAUNCH);
		CHECK_STR(string_of(&c, lr->kernel_str), "vector_add");
		CHECK_EQ_U64(c.recs[3].len, sizeof(*lr));
		CHECK_EQ_U64(lr->api_enter_ns, 91);
		CHECK_EQ_U64(lr->api_return_ns, 96);
		CHECK_EQ_U64(lr->host_tid, 4245);
		CHECK_EQ_U64(c.recs[4].type, GRT_REC_GPU_COPY);
		CHECK_EQ_U64(c.recs[4].len, sizeof(*cr));
		CHECK_EQ_U64(cr->api_enter_ns, 92);
		CHECK_EQ_U64(cr->api_return_ns, 97);
		CHECK_EQ_U64(cr->host_tid, 4246);
		CHECK_EQ_U64(cr->kind, GRT_COPY_HTOD);
		CHECK_EQ_U64(c.recs[5].type, GRT_REC_GPU_BLOCK);
		CHECK_EQ_U64(c.recs[6].origin.ts_ns, 120); /* each block at its own start */
		CHECK_EQ_U64(br->smid, 2);
		CHECK_EQ_U64(c.recs[7].type, GRT_REC_GPU_INSTRUMENT);
		CHECK_STR(string_of(&c, ir->kernel_str), "vector_add");
		CHECK_STR(string_of(&c, ir->reason_str), "no PTX (machine code only: cubin)");
		CHECK_EQ_U64(c.recs[8].type, GRT_REC_CLOCK_CALIB);
	}
	CHECK_EQ_U64(c.drops[GRT_SRC_GPU], 3);
	/* what did not fit in the ring is counted too */
	atomic_fetch_add(&ring->dropped, 5);
	CHECK(gpu()->drain(ctx) == 0);
	grt_session_poll(s, 0);
	CHECK_EQ_U64(c.drops[GRT_SRC_GPU], 8);
	munmap(ring, map_len);
out:
	gpu()->detach(ctx);
	CHECK(access(shm, F_OK) != 0); /* the ring file is gone */
	grt_session_free(s);
	capture_free(&c);
	unlink(lib);
}

/* A command that never used CUDA leaves a status record saying so. */
static void test_library_never_reported(void)
{
	struct capture_sink c = {.sink = {capture_append, capture_intern, capture_drop}};
	struct grt_session_config cfg = {.target_pid = 1, .launched = true};
	struct grt_session *s = grt_session_new(&cfg, &c.sink);
	char lib[64];
	void *ctx = NULL;

	fake_inject_lib(lib, sizeof(lib));
	setenv("CUDA_INJECTION64_PATH", "/opt/profiler.so", 1);
	CHECK(gpu()->attach(s, &ctx) == 0);
	unsetenv("CUDA_INJECTION64_PATH");
	/* another tool owns the driver hook: it is left alone */
	CHECK(added_env(s, "CUDA_INJECTION64_PATH") == NULL);
	gpu()->detach(ctx);
	CHECK_EQ_U64(c.n, 1);
	if (c.n == 1) {
		const struct grt_source_status_rec *st = (const void *)c.recs[0].payload;

		CHECK_EQ_U64(c.recs[0].type, GRT_REC_SOURCE_STATUS);
		CHECK(st->status == -ENODATA);
		CHECK(strstr(string_of(&c, st->message_str), "never reported") != NULL);
	}
	grt_session_free(s);
	capture_free(&c);
	unlink(lib);
}

int main(void)
{
	RUN_TEST(test_probe_without_library);
	RUN_TEST(test_needs_launched_command);
	RUN_TEST(test_messages_to_records);
	RUN_TEST(test_library_never_reported);
	return TEST_EXIT_STATUS();
}
