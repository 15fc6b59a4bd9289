/* The `gpu` source: preloads libgrtrace-inject.so into the command and records its ring. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/clock.h"
#include "common/kernel_regex.h"
#include "common/log.h"
#include "common/shm_room.h"
#include "common/u64_map.h"
#include "gpubpf/gpubpf.h"
#include "inject/inject_proto.h"
#include "inject/shm_ring.h"
#include "sources/gpu.h"
#include "sources/gpu_bpf.h"
#include "sources/inject_preload.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_core.h"
#include "trace/records_gpu.h"

#define DEFAULT_RING_MB 64
#define INJECT_LIB_NAME "libgrtrace-inject.so"

/*
 * No BPF here: the device side is seen from inside the traced process. The
 * source creates the ring, asks the session to start the command with
 * LD_PRELOAD (and CUDA_INJECTION64_PATH, the driver's own hook) naming the
 * library, and converts what the library reports: kernel names once per
 * process by hash id, then records that refer to them.
 */
struct gpu_source {
	struct grt_session *session;
	char shm_path[PATH_MAX];
	struct shm_ring *ring;
	uint64_t map_len;
	uint64_t ring_drops_seen;
	struct u64_map names; /* name id -> string id */
	uint64_t messages;
	uint64_t bad_messages;
	bool library_seen;
	struct gpu_bpf *bpf; /* --bpf programs, NULL when none */
};

static int gpu_probe(char *why, size_t why_len)
{
	char lib[PATH_MAX];

	if (gpu_find_inject_lib(lib, sizeof(lib))) {
		snprintf(why, why_len,
			 INJECT_LIB_NAME " not found beside grtrace (build it, or set "
					 "GRTRACE_INJECT_LIB)");
		return -ENOENT;
	}
	return 0;
}

/* GRTRACE_GPU_RING_MB rounded up to a power of two, or 0 when it is not set (or not 1..4096). */
static uint64_t ring_bytes_asked(void)
{
	const char *env = getenv("GRTRACE_GPU_RING_MB");
	long mb = env ? strtol(env, NULL, 10) : 0;
	uint64_t bytes = 1ULL << 20;

	if (mb < 1 || mb > 4096)
		return 0;
	while (bytes < (uint64_t)mb << 20)
		bytes <<= 1;
	return bytes;
}

/*
 * The ring's data bytes: what the user asked for, else the default, halved
 * (to 1 MiB at the least) until the whole file takes at most half the room
 * left in /dev/shm. Every page of the ring is written sooner or later, so its
 * memory is taken when it is made (inject_shm_create); a container's
 * /dev/shm is often 64 MiB, and the traced program may need its own share.
 */
static uint64_t ring_bytes(uint64_t asked, size_t config_len, uint64_t room)
{
	uint64_t bytes = asked ? asked : (uint64_t)DEFAULT_RING_MB << 20;

	while (!asked && bytes > 1ULL << 20 && room != UINT64_MAX &&
	       shm_ring_map_size(bytes) + config_len > room / 2)
		bytes >>= 1;
	return bytes;
}

/* The ring file; config (config_len bytes, may be NULL) goes after the data area for the library. */
static int create_ring(struct gpu_source *g, const void *config, size_t config_len)
{
	uint64_t room = shm_room("/dev/shm"), asked = ring_bytes_asked();
	uint64_t data = ring_bytes(asked, config_len, room);
	void *map;
	int err;

	g->map_len = shm_ring_map_size(data) + config_len;
	err = inject_shm_create("gpu", g->map_len, g->map_len, g->shm_path, sizeof(g->shm_path),
				&map);
	if (err == -ENOSPC)
		return grt_session_fail(
		    g->session, err,
		    "source gpu: /dev/shm has no room for its %" PRIu64 " MiB ring (%.1f MiB "
		    "free): set GRTRACE_GPU_RING_MB lower, or give /dev/shm more room",
		    data >> 20, room == UINT64_MAX ? 0.0 : (double)room / (1 << 20));
	if (err)
		return grt_session_fail(g->session, err,
					"source gpu: cannot create its ring in /dev/shm: %s",
					strerror(-err));
	g->ring = map;
	err = shm_ring_init(g->ring, data);
	if (!err && config_len) {
		memcpy((uint8_t *)map + shm_ring_map_size(data), config, config_len);
		g->ring->config_len = config_len;
	}
	if (!err && !asked && data < (uint64_t)DEFAULT_RING_MB << 20) {
		char line[160];

		snprintf(line, sizeof(line),
			 "gpu: a %" PRIu64 " MiB ring, not %d: /dev/shm had %.1f MiB free "
			 "(GRTRACE_GPU_RING_MB sets it)",
			 data >> 20, DEFAULT_RING_MB, (double)room / (1 << 20));
		grt_notice("%s", line);
		grt_session_status(g->session, GRT_SRC_GPU, (uint32_t)getpid(), 0, line);
	}
	return err;
}

/* GRTRACE_GPU_INJECTION_HOOK=0: load the library by LD_PRELOAD alone. */
static bool hook_off(void)
{
	const char *v = getenv("GRTRACE_GPU_INJECTION_HOOK");

	return v && !strcmp(v, "0");
}

/* The launched command's environment: the library preloaded ahead of any the user set. */
static int set_target_env(struct gpu_source *g, const char *lib)
{
	const char *kernels = grt_session_option(g->session, "gpu-kernels");
	const char *injection = getenv("CUDA_INJECTION64_PATH");
	int err;

	err = inject_preload(g->session, lib);
	if (!err)
		err = inject_add_env(g->session, GRT_INJECT_ENV_SHM, g->shm_path);
	/* the driver's own hook, unless another tool (a profiler) already uses it or it is turned
	 * off */
	if (!err && !(injection && *injection) && !hook_off())
		err = inject_add_env(g->session, "CUDA_INJECTION64_PATH", lib);
	if (!err && kernels && *kernels)
		err = inject_add_env(g->session, GRT_INJECT_ENV_KERNELS, kernels);
	return err;
}

static void gpu_detach(void *ctx);

static int gpu_attach(struct grt_session *s, void **ctx)
{
	const struct grt_session_config *cfg = grt_session_config(s);
	struct gpu_source *g;
	char lib[PATH_MAX];
	/* --bpf objects (more than the most are counted, so the refusal can say so) */
	const char *bpf[GPUBPF_MAX_OBJECTS];
	unsigned nbpf;
	void *blob = NULL;
	size_t blob_len = 0;
	int err;

	if (!cfg->launched)
		return grt_session_fail(
		    s, -EINVAL,
		    "source gpu needs a command to launch (-- CMD): its "
		    "library is loaded when the command starts, not into a running pid");
	if (gpu_find_inject_lib(lib, sizeof(lib)))
		return grt_session_fail(s, -ENOENT, "source gpu: " INJECT_LIB_NAME " not found");
	g = calloc(1, sizeof(*g));
	if (!g)
		return grt_session_fail(s, -ENOMEM, "out of memory");
	g->session = s;
	u64_map_init(&g->names);
	if ((nbpf = grt_session_option_values(s, "bpf", bpf, GPUBPF_MAX_OBJECTS))) {
		err = gpu_bpf_new(s, bpf, nbpf, &g->bpf, &blob, &blob_len);
		if (err) {
			gpu_detach(g);
			return err;
		}
	}
	err = create_ring(g, blob, blob_len);
	free(blob);
	if (err) {
		gpu_detach(g);
		return err;
	}
	err = set_target_env(g, lib);
	if (err) {
		grt_session_fail(s, err, "source gpu: cannot set the command's environment: %s",
				 strerror(-err));
		gpu_detach(g);
		return err;
	}
	*ctx = g;
	return 0;
}

/* ---- messages ---- */

static struct grt_event_origin origin_of(const struct inj_head *h)
{
	return (struct grt_event_origin){
	    .ts_ns = h->ts_ns, .cpu = h->cpu, .pid = h->pid, .tid = h->tid};
}

static uint32_t name_str(struct gpu_source *g, uint64_t id)
{
	uint64_t str = 0;

	return u64_map_get(&g->names, id, &str) ? (uint32_t)str : 0;
}

/* A NUL inside [text, text + room), i.e. a string the message really holds. */
static bool has_string(const char *text, size_t room)
{
	return room && memchr(text, 0, room);
}

static int on_name(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_name *m = payload;

	if (len < sizeof(*m) + 1 || !has_string(m->text, len - sizeof(*m)))
		return -EINVAL;
	return u64_map_put(&g->names, m->name_id, grt_session_intern(g->session, m->text));
}

/*
 * One line from the traced process on the user's terminal: the process wrote
 * it, so anything but printable ASCII is shown as '?' (no terminal escapes).
 */
static void notice_from_target(uint32_t pid, const char *text)
{
	char line[512];
	size_t i;

	for (i = 0; text[i] && i + 1 < sizeof(line); i++)
		line[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
	line[i] = 0;
	grt_notice("gpu: pid %u: %s", pid, line);
}

static int on_status(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_status *m = payload;
	struct grt_source_status_rec rec = {.source = GRT_SRC_GPU};
	struct grt_event_origin o;

	if (len < sizeof(*m) + 1 || !has_string(m->text, len - sizeof(*m)))
		return -EINVAL;
	if (m->part == INJ_PART_LIBRARY)
		g->library_seen = true;
	/* device timing the user asked for is lost from here on: said where they look */
	if (m->part == INJ_PART_CUPTI_HANDOVER || (m->part == INJ_PART_BPF && m->status < 0))
		notice_from_target(m->head.pid, m->text);
	o = origin_of(&m->head);
	rec.status = m->status;
	rec.message_str = grt_session_intern(g->session, m->text);
	return grt_session_emit(g->session, GRT_REC_SOURCE_STATUS, &o, &rec, sizeof(rec));
}

/* Emits rec (a copy of a message's record) with *kernel_str set from the message's name id. */
static int emit_named(struct gpu_source *g, uint16_t type, const struct inj_head *h,
		      uint64_t name_id, const void *rec, size_t size, uint32_t *kernel_str)
{
	struct grt_event_origin o = origin_of(h);

	*kernel_str = name_str(g, name_id);
	return grt_session_emit(g->session, type, &o, rec, size);
}

static int on_kernel(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_kernel *m = payload;
	struct grt_gpu_kernel_rec rec;

	if (len < sizeof(*m))
		return -EINVAL;
	rec = m->rec;
	return emit_named(g, GRT_REC_GPU_KERNEL, &m->head, m->name_id, &rec, sizeof(rec),
			  &rec.kernel_str);
}

static int on_copy(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_copy *m = payload;
	struct grt_event_origin o;

	if (len < sizeof(*m))
		return -EINVAL;
	o = origin_of(&m->head);
	return grt_session_emit(g->session, GRT_REC_GPU_COPY, &o, &m->rec, sizeof(m->rec));
}

static int on_blocks(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_blocks *m = payload;
	struct grt_event_origin o;

	if (len < sizeof(*m) || m->count > (len - sizeof(*m)) / sizeof(m->recs[0]))
		return -EINVAL;
	o = origin_of(&m->head);
	for (uint32_t i = 0; i < m->count; i++) {
		o.ts_ns = m->recs[i].start_ns;
		grt_session_emit(g->session, GRT_REC_GPU_BLOCK, &o, &m->recs[i],
				 sizeof(m->recs[i]));
	}
	return 0;
}

static int on_launch(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_launch *m = payload;
	struct grt_gpu_launch_rec rec;

	if (len < sizeof(*m))
		return -EINVAL;
	rec = m->rec;
	return emit_named(g, GRT_REC_GPU_LAUNCH, &m->head, m->name_id, &rec, sizeof(rec),
			  &rec.kernel_str);
}

static int on_instrument(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_instrument *m = payload;
	struct grt_gpu_instrument_rec rec;

	if (len < sizeof(*m) + 1 || !has_string(m->reason, len - sizeof(*m)))
		return -EINVAL;
	rec = m->rec;
	rec.reason_str = grt_session_intern(g->session, m->reason);
	return emit_named(g, GRT_REC_GPU_INSTRUMENT, &m->head, m->name_id, &rec, sizeof(rec),
			  &rec.kernel_str);
}

static int on_calib(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_calib *m = payload;
	struct grt_event_origin o;

	if (len < sizeof(*m))
		return -EINVAL;
	o = origin_of(&m->head);
	return grt_session_emit(g->session, GRT_REC_CLOCK_CALIB, &o, &m->rec, sizeof(m->rec));
}

static int on_bpf_data(struct gpu_source *g, const void *payload, uint32_t len)
{
	return gpu_bpf_on_data(g->bpf, payload, len);
}

static int on_drops(struct gpu_source *g, const void *payload, uint32_t len)
{
	const struct inj_drops *m = payload;

	if (len < sizeof(*m))
		return -EINVAL;
	grt_session_count_drop(g->session, GRT_SRC_GPU, m->count);
	return 0;
}

int gpu_handle_message(struct gpu_source *g, uint32_t type, const void *payload, uint32_t len)
{
	static int (*const handlers[])(struct gpu_source *, const void *, uint32_t) = {
	    [INJ_MSG_NAME] = on_name,
	    [INJ_MSG_STATUS] = on_status,
	    [INJ_MSG_KERNEL] = on_kernel,
	    [INJ_MSG_COPY] = on_copy,
	    [INJ_MSG_BLOCKS] = on_blocks,
	    [INJ_MSG_LAUNCH] = on_launch,
	    [INJ_MSG_INSTRUMENT] = on_instrument,
	    [INJ_MSG_CALIB] = on_calib,
	    [INJ_MSG_DROPS] = on_drops,
	    [INJ_MSG_BPF_DATA] = on_bpf_data,
	};
	int err;

	g->messages++;
	if (type >= sizeof(handlers) / sizeof(handlers[0]) || !handlers[type]) {
		g->bad_messages++;
		return -EINVAL;
	}
	err = handlers[type](g, payload, len);
	if (err == -EINVAL)
		g->bad_messages++;
	return err;
}

static void drain_ring(struct gpu_source *g, bool producers_gone)
{
	struct shm_ring_record rec;
	uint64_t abandoned = 0, dropped;

	if (!g->ring)
		return;
	while (shm_ring_next(g->ring, &rec, producers_gone, &abandoned)) {
		gpu_handle_message(g, rec.type, rec.payload, rec.len);
		shm_ring_release(g->ring, &rec);
	}
	dropped = atomic_load(&g->ring->dropped);
	grt_session_count_drop(g->session, GRT_SRC_GPU, dropped - g->ring_drops_seen + abandoned);
	g->ring_drops_seen = dropped;
}

static int gpu_drain(void *ctx)
{
	drain_ring(ctx, false);
	return 0;
}

static void gpu_detach(void *ctx)
{
	struct gpu_source *g = ctx;

	if (!g)
		return;
	if (g->ring) {
		drain_ring(g, true);
		if (!g->library_seen)
			grt_session_status(g->session, GRT_SRC_GPU, (uint32_t)getpid(), -ENODATA,
					   "gpu: the inject library never reported: the command made no "
					   "CUDA driver call, or it is static, setuid, or cleared LD_PRELOAD");
		munmap(g->ring, g->map_len);
	}
	if (g->shm_path[0])
		unlink(g->shm_path);
	gpu_bpf_free(g->bpf);
	u64_map_destroy(&g->names);
	free(g);
}

const char *gpu_ring_path(const void *ctx)
{
	const struct gpu_source *g = ctx;

	return g ? g->shm_path : NULL;
}

/* --gpu-kernels: compiled here the way the injected library compiles it, so a bad one stops record early */
static int check_gpu_kernels(const char *regex, char *why, size_t why_len)
{
	char what[160];
	regex_t re;

	if (kernel_regex_compile(&re, regex, what, sizeof(what))) {
		snprintf(why, why_len, "bad --gpu-kernels regular expression '%.64s%s': %s", regex,
			 strlen(regex) > 64 ? "..." : "", what);
		return -EINVAL;
	}
	regfree(&re);
	return 0;
}

/* the usage line of --bpf says 8 */
_Static_assert(GPUBPF_MAX_OBJECTS == 8, "--bpf's usage line gives the most objects");

static const struct grt_source_option gpu_options[] = {
	{ "gpu-kernels", "RE", "gpu source: instrument kernels whose name matches RE", check_gpu_kernels },
	{ "bpf", "PROG.bpf.o",
	  "gpu source: run the object's eBPF programs inside the CUDA kernels they name\n"
	  "                     (docs/gpu-bpf.md), verified before the command starts; up to 8,\n"
	  "                     each with its own --bpf" },
	{ NULL },
};

static const struct grt_source gpu_source = {
    .name = "gpu",
    .id = GRT_SRC_GPU,
    .summary =
	"device timing: CUPTI for every kernel/copy, PTX block probes (launched command only)",
    .probe = gpu_probe,
    .attach = gpu_attach,
    .drain = gpu_drain,
    .detach = gpu_detach,
    .options = gpu_options,
};

GRT_SOURCE_REGISTER(gpu_source);
