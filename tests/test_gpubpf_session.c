/* GPU eBPF handover: the packed programs, the ring file's config, the messages back to records. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_session.h"
#include "gpubpf/gpubpf.h"
#include "gpubpf/gpubpf_test.h"
#include "inject/inject_proto.h"
#include "inject/shm_ring.h"
#include "sources/gpu.h"
#include "sources/session.h"
#include "sources/source.h"
#include "test_util.h"
#include "trace/records_bpf.h"
#include "trace/records_core.h"

/* The samples the tests hand over: memory counting (a map) and SM placement (a map and a ring). */
static int load_samples(struct gpubpf_bundle *b)
{
	const char *paths[2] = {gpubpf_test_object("samples", "mem_counts"),
				gpubpf_test_object("samples", "sm_placement")};
	char err[512] = "";
	int rc = gpubpf_bundles_load(paths, 2, b, err, sizeof(err));

	if (rc)
		fprintf(stderr, "%s\n", err);
	return rc;
}

/* What the recorder packs is what the library unpacks: maps, programs, text, limits. */
static void test_pack_round_trip(void)
{
	struct gpubpf_bundle b[2];
	struct gpubpf_session s;
	size_t len = 0, nmaps;
	char err[256];
	void *blob;

	if (load_samples(b)) {
		CHECK(0);
		return;
	}
	nmaps = b[0].obj.nr_maps + b[1].obj.nr_maps;
	blob = gpubpf_session_pack(b, 2, 4096, 1 << 16, &len);
	CHECK(blob != NULL);
	CHECK(gpubpf_session_unpack(blob, len, &s, err, sizeof(err)) == 0);
	CHECK_EQ_U64(s.thread_capacity, 4096);
	CHECK_EQ_U64(s.ring_bytes, 1 << 16);
	CHECK_EQ_U64(s.nr_maps, nmaps);
	CHECK_EQ_U64(s.nr_progs, b[0].nr_progs + b[1].nr_progs);
	for (size_t i = 0; i < s.nr_maps && i < nmaps; i++) {
		const struct gpubpf_bundle *o = i < b[0].obj.nr_maps ? &b[0] : &b[1];
		const struct gpubpf_map *m = &o->obj.maps[i - (o == &b[1] ? b[0].obj.nr_maps : 0)];

		CHECK_EQ_U64(s.maps[i].slot, i);
		CHECK_EQ_U64(s.maps[i].shape.type, m->type);
		CHECK_EQ_U64(s.maps[i].shape.value_size, m->value_size);
		CHECK_EQ_U64(s.maps[i].shape.max_entries, m->max_entries);
		CHECK(s.maps[i].rodata == m->rodata);
	}
	/* mem_counts' memory program, then sm_placement's entry program on vec_add */
	CHECK_EQ_U64(s.prog_ids[1], 1);
	CHECK(s.progs[0].kernel == NULL && s.progs[0].attach == GRT_BPF_ATTACH_MEMCAPTURE);
	CHECK_STR(s.progs[1].kernel, "vec_add");
	CHECK_STR(s.ptx[1].body, b[1].progs[0].ptx.body);
	CHECK_STR(s.ptx[1].name, b[1].progs[0].ptx.name);
	CHECK_EQ_U64(s.ptx[1].nr_args, b[1].progs[0].ptx.nr_args);
	gpubpf_session_free(&s);
	/* every shorter blob and a flipped byte anywhere: refused or read within bounds */
	for (size_t cut = 0; cut < len; cut++) {
		CHECK(gpubpf_session_unpack(blob, cut, &s, err, sizeof(err)) == -EINVAL);
		gpubpf_session_free(&s);
	}
	for (size_t at = 0; at < len; at++) {
		uint8_t *bad = malloc(len);

		memcpy(bad, blob, len);
		bad[at] ^= 0x5a;
		if (!gpubpf_session_unpack(bad, len, &s, err, sizeof(err)))
			for (size_t p = 0; p < s.nr_progs; p++)
				CHECK(strlen(s.ptx[p].body) < len);
		gpubpf_session_free(&s);
		free(bad);
	}
	CHECK(gpubpf_session_unpack(blob, len - 1, &s, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "GPU eBPF programs from the recorder: bad header");
	gpubpf_session_free(&s);
	free(blob);
	gpubpf_bundles_free(b, 2);
}

/* A refused object frees the ones loaded before it and says which it was. */
static void test_bundles_refusal(void)
{
	const char *paths[2] = {gpubpf_test_object("samples", "mem_counts"),
				gpubpf_test_object("progs", "refuse_loop")};
	struct gpubpf_bundle b[2];
	char err[512] = "";

	CHECK(gpubpf_bundles_load(paths, 2, b, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "refuse_loop.bpf.o: kprobe/loop_kernel insn 17: jumps back to insn 13") !=
	      NULL);
}

/* Ring data cut into messages of whole committed records. */
static void test_ring_committed(void)
{
	uint8_t ring[256] = {0};
	struct grt_bpf_ring_rec r = {.len = 12, .prog = 1};

	memcpy(ring, &r, sizeof(r)); /* 16 + 16 (12 padded) */
	r.len = 8 | GRT_BPF_RING_DISCARDED;
	memcpy(ring + 32, &r, sizeof(r)); /* 16 + 8 */
	r.len = 0;			  /* the next one is still being written */
	memcpy(ring + 56, &r, sizeof(r));
	CHECK_EQ_U64(gpubpf_ring_committed(ring, sizeof(ring), 1 << 20), 56);
	CHECK_EQ_U64(gpubpf_ring_committed(ring, sizeof(ring), 55), 32);
	CHECK_EQ_U64(gpubpf_ring_committed(ring, sizeof(ring), 31), 0);
	CHECK_EQ_U64(gpubpf_ring_committed(ring, 40, 1 << 20), 32); /* the second runs past */
	r.len = 0x7ffffff0;
	memcpy(ring, &r, sizeof(r));
	CHECK_EQ_U64(gpubpf_ring_committed(ring, sizeof(ring), 1 << 20), 0);
}

/* The ring file's config area: found only when it lies inside the mapping. */
static void test_shm_config(void)
{
	size_t data = 4096, map = shm_ring_map_size(data) + 64;
	struct shm_ring *r = calloc(1, map);
	uint64_t len = 0;

	CHECK(shm_ring_init(r, data) == 0);
	CHECK(shm_ring_config(r, map, &len) == NULL);
	r->config_len = 64;
	CHECK(shm_ring_config(r, map, &len) == (uint8_t *)r + shm_ring_map_size(data));
	CHECK_EQ_U64(len, 64);
	r->config_len = 65;
	CHECK(shm_ring_config(r, map, &len) == NULL);
	r->config_len = UINT64_MAX;
	CHECK(shm_ring_config(r, map, &len) == NULL);
	free(r);
}

/* ---- the recorder's side: the gpu source with --bpf ---- */

struct count_sink {
	struct grt_sink sink;
	unsigned by_type[256];
	uint64_t dump_entries, event_bytes, lost;
	uint64_t drops;
};

static int count_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *o,
			const void *payload, uint32_t len)
{
	struct count_sink *c = (struct count_sink *)sink;

	(void)o;
	c->by_type[type & 0xff]++;
	if (type == GRT_REC_BPF_MAP_DUMP)
		c->dump_entries += ((const struct grt_bpf_map_dump_rec *)payload)->nr_entries;
	if (type == GRT_REC_BPF_EVENT)
		c->event_bytes += ((const struct grt_bpf_event_rec *)payload)->data_len;
	if (type == GRT_REC_BPF_LOST)
		c->lost += ((const struct grt_bpf_lost_rec *)payload)->count;
	(void)len;
	return 0;
}

static uint32_t count_intern(struct grt_sink *sink, const char *text)
{
	(void)sink;
	return text ? 1 : 0;
}

static int count_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts)
{
	(void)source, (void)ts;
	((struct count_sink *)sink)->drops += count;
	return 0;
}

static int send(void *ctx, struct inj_bpf_data *m, const void *data, uint32_t len)
{
	struct inj_bpf_data *copy = malloc(sizeof(*m) + len);
	int rc;

	m->len = len;
	memcpy(copy, m, sizeof(*m));
	if (len)
		memcpy(copy->data, data, len);
	rc = gpu_handle_message(ctx, INJ_MSG_BPF_DATA, copy, (uint32_t)sizeof(*m) + len);
	free(copy);
	return rc;
}

static void test_source_hands_over_and_decodes(void)
{
	struct count_sink c = {.sink = {count_append, count_intern, count_drop}};
	struct gpubpf_bundle b[2];
	char mem_counts[700], sm_placement[700];
	struct grt_source_option_value options[2] = {{"bpf", mem_counts}, {"bpf", sm_placement}};
	struct grt_session_config cfg = {.target_pid = 1, .launched = true};
	struct grt_session *s;
	struct gpubpf_session unpacked;
	struct stat st;
	char lib[64] = "/tmp/grt-inject-lib-XXXXXX", err[256];
	/* mem_counts' totals, one 32-byte value that programs only add to: a copy per SM */
	static uint8_t image[GRT_BPF_SM_SLOTS * 128];
	uint8_t records[64] = {0};
	struct grt_bpf_ring_rec rr = {.len = 16, .prog = 1, .smid = 3, .gpu_ns = 500};
	struct inj_bpf_data m = {.kind = INJ_BPF_MAP, .slot = 0, .snapshot = 1, .total = sizeof(image),
				 .clock_mult = 1ull << 32, .thread_capacity = 4096};
	const void *config;
	uint64_t config_len = 0;
	void *ctx = NULL, *map;
	int fd;

	if (load_samples(b)) {
		CHECK(0);
		return;
	}
	close(mkstemp(lib));
	setenv("GRTRACE_INJECT_LIB", lib, 1);
	/* the same two objects as --bpf options: the source loads them itself */
	snprintf(mem_counts, sizeof(mem_counts), "%s", gpubpf_test_object("samples", "mem_counts"));
	snprintf(sm_placement, sizeof(sm_placement), "%s",
		 gpubpf_test_object("samples", "sm_placement"));
	cfg.options = options;
	cfg.noptions = 2;
	s = grt_session_new(&cfg, &c.sink);
	CHECK(grt_source_find("gpu")->attach(s, &ctx) == 0);
	/* described once: two objects, their programs and maps */
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_OBJECT & 0xff], 2);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_PROG & 0xff], b[0].nr_progs + b[1].nr_progs);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_MAP & 0xff], b[0].obj.nr_maps + b[1].obj.nr_maps);
	/* the ring file carries them for the library */
	fd = open(gpu_ring_path(ctx), O_RDONLY);
	CHECK(fd >= 0 && !fstat(fd, &st));
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	config = shm_ring_config(map, (uint64_t)st.st_size, &config_len);
	CHECK(config && gpubpf_session_unpack(config, config_len, &unpacked, err, sizeof(err)) == 0);
	CHECK_EQ_U64(unpacked.nr_progs, b[0].nr_progs + b[1].nr_progs);
	gpubpf_session_free(&unpacked);
	munmap(map, (size_t)st.st_size);

	/* mem_counts' totals (slot 0, kept per SM) in two chunks: one dump of one entry */
	image[0] = 7;
	image[5 * 128] = 3;
	m.offset = 0;
	CHECK(send(ctx, &m, image, 16) == 0);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_MAP_DUMP & 0xff], 0);
	m.offset = 16;
	m.flags = INJ_BPF_FINAL;
	CHECK(send(ctx, &m, image + 16, sizeof(image) - 16) == 0);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_MAP_DUMP & 0xff], 1);
	CHECK_EQ_U64(c.dump_entries, 1);
	/* a chunk lost in between: that snapshot is left out and counted */
	m.snapshot = 2;
	m.offset = 0;
	CHECK(send(ctx, &m, image, 16) == 0);
	m.offset = 24;
	CHECK(send(ctx, &m, image + 24, 8) == 0);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_MAP_DUMP & 0xff], 1);
	/* sm_placement's ring (slot 2): one event and 5 lost, which are the source's drops too */
	memcpy(records, &rr, sizeof(rr));
	m = (struct inj_bpf_data){.kind = INJ_BPF_RING, .slot = 2, .dropped = 5,
				  .clock_mult = 1ull << 32};
	CHECK(send(ctx, &m, records, 32) == 0);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_EVENT & 0xff], 1);
	CHECK_EQ_U64(c.event_bytes, 16);
	CHECK_EQ_U64(c.lost, 5);
	/* junk: a map's data sent as a ring, a slot no map has, a length that lies, a bad kind */
	m.slot = 0;
	CHECK(send(ctx, &m, records, 32) == -EINVAL);
	m.slot = 40;
	CHECK(send(ctx, &m, records, 32) == -EINVAL);
	m = (struct inj_bpf_data){.kind = INJ_BPF_MAP, .slot = 0, .total = 32, .offset = 24};
	CHECK(send(ctx, &m, image, 16) == -EINVAL);
	m.kind = 9;
	CHECK(send(ctx, &m, image, 0) == -EINVAL);
	CHECK(gpu_handle_message(ctx, INJ_MSG_BPF_DATA, &m, sizeof(m) - 1) == -EINVAL);
	grt_source_find("gpu")->detach(ctx);
	grt_session_free(s);
	/* the source's drops, written when the session ends: the incomplete snapshot, 5 events */
	CHECK_EQ_U64(c.drops, 6);
	gpubpf_bundles_free(b, 2);
	unlink(lib);
}

/*
 * --bpf given more often than a session takes objects, and an object the loader refuses: the
 * gpu source's attach fails with one line and nothing is described.
 */
static void test_source_refuses_objects(void)
{
	struct count_sink c = {.sink = {count_append, count_intern, count_drop}};
	struct grt_source_option_value options[GPUBPF_MAX_OBJECTS + 1];
	struct grt_session_config cfg = {.target_pid = 1, .launched = true, .options = options};
	char lib[64] = "/tmp/grt-inject-lib-XXXXXX", path[700];
	struct grt_session *s;
	void *ctx = NULL;

	snprintf(path, sizeof(path), "%s", gpubpf_test_object("samples", "mem_counts"));
	for (unsigned i = 0; i <= GPUBPF_MAX_OBJECTS; i++)
		options[i] = (struct grt_source_option_value){"bpf", path};
	close(mkstemp(lib));
	setenv("GRTRACE_INJECT_LIB", lib, 1);
	cfg.noptions = GPUBPF_MAX_OBJECTS + 1;
	s = grt_session_new(&cfg, &c.sink);
	CHECK(grt_source_find("gpu")->attach(s, &ctx) == -E2BIG);
	CHECK_STR(grt_session_error(s),
		  "more than 8 --bpf objects; combine programs into fewer objects");
	grt_session_free(s);
	/* one object that is no file: the loader's line */
	options[0].value = "/nonexistent/prog.bpf.o";
	cfg.noptions = 1;
	s = grt_session_new(&cfg, &c.sink);
	CHECK(grt_source_find("gpu")->attach(s, &ctx) == -EINVAL);
	CHECK_STR(grt_session_error(s), "/nonexistent/prog.bpf.o: No such file or directory");
	grt_session_free(s);
	CHECK_EQ_U64(c.by_type[GRT_REC_BPF_OBJECT & 0xff], 0);
	unlink(lib);
}

int main(int argc, char **argv)
{
	gpubpf_test_init(argv[0]);
	(void)argc;
	RUN_TEST(test_pack_round_trip);
	RUN_TEST(test_bundles_refusal);
	RUN_TEST(test_ring_committed);
	RUN_TEST(test_shm_config);
	RUN_TEST(test_source_hands_over_and_decodes);
	RUN_TEST(test_source_refuses_objects);
	return TEST_EXIT_STATUS();
}
