/* A thread that asks NVML for PCIe and NVLink throughput (and device gauges) and queues the samples. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "common/trusted_file.h"
#include "sources/libcuda_locate.h"
#include "sources/nvml_sampler.h"
#include "common/pci_addr.h"

/*
 * The few NVML declarations used, re-declared from NVIDIA's public nvml.h
 * (the ABI, not the header: the tool builds without it).
 */
typedef void *nvml_device;
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_MAX_LINKS 18		/* NVML_NVLINK_MAX_LINKS */
#define NVML_SCOPE_ALL_LINKS 0xffffffffu
#define NVML_MAX_GPUS 64
#define NVML_P2P_CAPS_INDEX_READ 0
#define NVML_P2P_CAPS_INDEX_WRITE 1
#define NVML_P2P_CAPS_INDEX_NVLINK 2
#define NVML_FEATURE_ENABLED 1
#define NVML_NVLINK_DEVICE_TYPE_GPU 0
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2

struct nvml_pci_info {		/* nvmlPciInfo_t (v3) */
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

struct nvml_field_value {	/* nvmlFieldValue_t */
	unsigned field_id;
	unsigned scope_id;
	long long timestamp;
	long long latency_usec;
	unsigned value_type;
	int nvml_return;
	union {
		double d;
		unsigned ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
	} value;
};

struct nvml_utilization {	/* nvmlUtilization_t: percent of the last sample period */
	unsigned gpu, memory;
};

struct nvml_memory {		/* nvmlMemory_t (v1): bytes */
	unsigned long long total, free, used;
};

_Static_assert(sizeof(struct nvml_field_value) == 40, "nvmlFieldValue_t layout");
_Static_assert(sizeof(struct nvml_memory) == 24, "nvmlMemory_t layout");
_Static_assert(sizeof(struct nvml_pci_info) == 68, "nvmlPciInfo_t layout");

struct nvml_api {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*device_count)(unsigned *);
	int (*device_by_index)(unsigned, nvml_device *);
	int (*pci_info)(nvml_device, struct nvml_pci_info *);
	int (*pcie_throughput)(nvml_device, int, unsigned *);
	int (*field_values)(nvml_device, int, struct nvml_field_value *);
	/* the device gauges: each optional */
	int (*utilization)(nvml_device, struct nvml_utilization *);
	int (*memory)(nvml_device, struct nvml_memory *);
	int (*power)(nvml_device, unsigned *);
	/* the GPU-to-GPU topology: each optional (older drivers lack some) */
	int (*p2p_status)(nvml_device, nvml_device, int, int *);
	int (*common_ancestor)(nvml_device, nvml_device, int *);
	int (*link_state)(nvml_device, unsigned, int *);
	int (*link_remote_pci)(nvml_device, unsigned, struct nvml_pci_info *);
	int (*link_remote_type)(nvml_device, unsigned, int *);
};

struct gpu_state {
	nvml_device handle;
	uint32_t pci;
	bool nvlink_seen;	/* a previous cumulative NVLink reading exists */
	uint64_t nvlink_tx_kib, nvlink_rx_kib;
	uint64_t last_ns;
	unsigned links;		/* NVLink links of this GPU, 0 without NVLink */
	bool links_known;	/* NVML answered the link count */
	bool links_seen;	/* previous per-link readings exist */
	uint64_t link_tx_kib[NVML_MAX_LINKS], link_rx_kib[NVML_MAX_LINKS];
	uint64_t links_ns;	/* when they were read */
};

#define QUEUE_LEN 1024

struct nvml_sampler {
	struct nvml_api api;
	unsigned interval_ms;
	bool gauges;
	unsigned ngpus;
	struct gpu_state gpus[NVML_MAX_GPUS];
	struct grt_gpu_link_rec *links;	/* the topology, read once at start */
	size_t n_links;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;		/* under lock */
	struct nvml_sample queue[QUEUE_LEN];	/* ring, under lock */
	size_t head, count;
	uint64_t lost;
};

int nvml_library_path(char *path, size_t len, char *why, size_t why_len)
{
	const char *named = getenv("GRTRACE_NVML_LIBRARY");
	char detail[256];
	int err;

	if (named && *named)
		snprintf(path, len, "%s", named);
	else if (library_find_for_launch("libnvidia-ml.so.1", NULL, path, len)) {
		snprintf(why, why_len, "libnvidia-ml.so.1 not found in %s",
			 libcuda_search_description());
		return -ENOENT;
	}
	err = trusted_file_check(path, why, why_len);
	if (err == -EPERM || err == -EINVAL) {
		snprintf(detail, sizeof(detail), "%s", why);
		snprintf(why, why_len, "refusing to load NVML: %.200s", detail);
	}
	return err;
}

static int load_api(struct nvml_api *api, const char *path, char *why, size_t why_len)
{
	api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!api->lib) {
		snprintf(why, why_len, "NVML not loadable (%s)", dlerror());
		return -ENOENT;
	}
	*(void **)&api->init = dlsym(api->lib, "nvmlInit_v2");
	*(void **)&api->shutdown = dlsym(api->lib, "nvmlShutdown");
	*(void **)&api->error_string = dlsym(api->lib, "nvmlErrorString");
	*(void **)&api->device_count = dlsym(api->lib, "nvmlDeviceGetCount_v2");
	*(void **)&api->device_by_index = dlsym(api->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&api->pci_info = dlsym(api->lib, "nvmlDeviceGetPciInfo_v3");
	*(void **)&api->pcie_throughput = dlsym(api->lib, "nvmlDeviceGetPcieThroughput");
	*(void **)&api->field_values = dlsym(api->lib, "nvmlDeviceGetFieldValues");
	*(void **)&api->utilization = dlsym(api->lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&api->memory = dlsym(api->lib, "nvmlDeviceGetMemoryInfo");
	*(void **)&api->power = dlsym(api->lib, "nvmlDeviceGetPowerUsage");
	*(void **)&api->p2p_status = dlsym(api->lib, "nvmlDeviceGetP2PStatus");
	*(void **)&api->common_ancestor = dlsym(api->lib, "nvmlDeviceGetTopologyCommonAncestor");
	*(void **)&api->link_state = dlsym(api->lib, "nvmlDeviceGetNvLinkState");
	*(void **)&api->link_remote_pci = dlsym(api->lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	*(void **)&api->link_remote_type = dlsym(api->lib, "nvmlDeviceGetNvLinkRemoteDeviceType");
	if (!api->init || !api->shutdown || !api->device_count || !api->device_by_index ||
	    !api->pcie_throughput) {
		snprintf(why, why_len, "%s lacks the NVML functions grtrace needs (too old?)", path);
		return -ENOTSUP;
	}
	return 0;
}

static const char *nvml_error(const struct nvml_api *api, int rc)
{
	return api->error_string ? api->error_string(rc) : "NVML error";
}

/*
 * The GPU's NVLink links (field NVML_FI_DEV_NVLINK_LINK_COUNT); 0 when it has
 * none (NVML: not supported on this GPU) or NVML cannot tell (then !*known).
 */
static unsigned link_count(struct nvml_sampler *s, nvml_device gpu, bool *known)
{
	struct nvml_field_value v = { .field_id = NVML_FI_DEV_NVLINK_LINK_COUNT };

	*known = false;
	if (!s->api.field_values || s->api.field_values(gpu, 1, &v) != NVML_SUCCESS)
		return 0;
	*known = v.nvml_return == NVML_SUCCESS || v.nvml_return == NVML_ERROR_NOT_SUPPORTED;
	if (v.nvml_return != NVML_SUCCESS)
		return 0;
	return v.value.ui < NVML_MAX_LINKS ? v.value.ui : NVML_MAX_LINKS;
}

static int open_gpus(struct nvml_sampler *s, char *why, size_t why_len)
{
	unsigned count = 0;
	int rc = s->api.init();

	if (rc != NVML_SUCCESS) {
		snprintf(why, why_len, "nvmlInit failed: %s", nvml_error(&s->api, rc));
		return -EIO;
	}
	rc = s->api.device_count(&count);
	if (rc != NVML_SUCCESS || count == 0) {
		snprintf(why, why_len, "NVML sees no GPU%s%s", rc ? ": " : "", rc ? nvml_error(&s->api, rc) : "");
		s->api.shutdown();
		return -ENODEV;
	}
	s->ngpus = count < NVML_MAX_GPUS ? count : NVML_MAX_GPUS;
	for (unsigned i = 0; i < s->ngpus; i++) {
		struct nvml_pci_info pci;

		if (s->api.device_by_index(i, &s->gpus[i].handle) != NVML_SUCCESS)
			s->gpus[i].handle = NULL;
		if (s->gpus[i].handle && s->api.pci_info && s->api.pci_info(s->gpus[i].handle, &pci) == NVML_SUCCESS) {
			pci.bus_id[sizeof(pci.bus_id) - 1] = 0;
			s->gpus[i].pci = grt_pci_parse(pci.bus_id);
		}
		if (s->gpus[i].handle)
			s->gpus[i].links = link_count(s, s->gpus[i].handle, &s->gpus[i].links_known);
	}
	return 0;
}

/* The far ends of one GPU's active NVLink links, read once for every pair it is in. */
struct link_remotes {
	bool known;			/* every link was read */
	uint32_t to_switch;		/* a bit per link ending at an NVSwitch */
	uint32_t to_gpu;		/* a bit per link ending at a GPU ... */
	uint32_t gpu_pci[NVML_MAX_LINKS]; /* ... whose address is this */
};

/*
 * A link NVML says it has no state for (not supported, or an index past the
 * links this GPU has) is not in use; any other failure leaves every far end
 * of the GPU unknown.
 */
static void read_link_remotes(const struct nvml_api *api, const struct gpu_state *gpu,
			      struct link_remotes *out)
{
	*out = (struct link_remotes){ 0 };
	if (!gpu->links_known ||
	    (gpu->links && (!api->link_state || !api->link_remote_type || !api->link_remote_pci)))
		return;
	for (unsigned l = 0; l < gpu->links; l++) {
		struct nvml_pci_info pci;
		int active = 0, type = -1, rc = api->link_state(gpu->handle, l, &active);

		if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
			continue;
		if (rc != NVML_SUCCESS)
			return;
		if (active != NVML_FEATURE_ENABLED)
			continue;
		if (api->link_remote_type(gpu->handle, l, &type) != NVML_SUCCESS)
			return;
		if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
			out->to_switch |= 1u << l;
		} else if (type == NVML_NVLINK_DEVICE_TYPE_GPU) {
			if (api->link_remote_pci(gpu->handle, l, &pci) != NVML_SUCCESS)
				return;
			pci.bus_id[sizeof(pci.bus_id) - 1] = 0;
			out->to_gpu |= 1u << l;
			out->gpu_pci[l] = grt_pci_parse(pci.bus_id);
		}
	}
	out->known = true;
}

/* What NVML says of one ordered pair; a question it cannot answer leaves its flag clear. */
static void read_pair(const struct nvml_sampler *s, unsigned a, unsigned b,
		      const struct link_remotes *remotes, struct grt_gpu_link_rec *out)
{
	const struct nvml_api *api = &s->api;
	const struct gpu_state *ga = &s->gpus[a], *gb = &s->gpus[b];
	int nvlink = -1, rd = -1, wr = -1, level = -1;

	*out = (struct grt_gpu_link_rec){ .device = a, .pci = ga->pci, .peer_device = b, .peer_pci = gb->pci };
	if (api->p2p_status &&
	    api->p2p_status(ga->handle, gb->handle, NVML_P2P_CAPS_INDEX_NVLINK, &nvlink) == NVML_SUCCESS &&
	    nvlink >= 0 && nvlink <= GRT_P2P_UNKNOWN) {
		out->nvlink_p2p = (uint8_t)nvlink;
		out->flags |= GRT_GPU_LINK_F_NVLINK_P2P;
	}
	if (api->p2p_status &&
	    api->p2p_status(ga->handle, gb->handle, NVML_P2P_CAPS_INDEX_READ, &rd) == NVML_SUCCESS &&
	    api->p2p_status(ga->handle, gb->handle, NVML_P2P_CAPS_INDEX_WRITE, &wr) == NVML_SUCCESS &&
	    rd >= 0 && rd <= GRT_P2P_UNKNOWN && wr >= 0 && wr <= GRT_P2P_UNKNOWN) {
		out->pcie_read_p2p = (uint8_t)rd;
		out->pcie_write_p2p = (uint8_t)wr;
		out->flags |= GRT_GPU_LINK_F_PCIE_P2P;
	}
	if (api->common_ancestor && api->common_ancestor(ga->handle, gb->handle, &level) == NVML_SUCCESS &&
	    grt_gpu_topology_name((uint32_t)level)) {
		out->topology = (uint32_t)level;
		out->flags |= GRT_GPU_LINK_F_TOPOLOGY;
	}
	if (remotes->known) {
		out->flags |= GRT_GPU_LINK_F_REMOTES;
		out->nvswitch_links = remotes->to_switch;
		for (unsigned l = 0; l < NVML_MAX_LINKS; l++)
			if ((remotes->to_gpu & (1u << l)) && gb->pci && remotes->gpu_pci[l] == gb->pci)
				out->nvlink_links |= 1u << l;
	}
}

/* Every ordered pair of GPUs with a handle, once: the topology does not change while recording. */
static void read_topology(struct nvml_sampler *s)
{
	struct link_remotes remotes;

	s->links = calloc((size_t)s->ngpus * s->ngpus, sizeof(*s->links));
	if (!s->links)
		return;
	for (unsigned a = 0; a < s->ngpus; a++) {
		if (!s->gpus[a].handle)
			continue;
		read_link_remotes(&s->api, &s->gpus[a], &remotes);
		for (unsigned b = 0; b < s->ngpus; b++)
			if (a != b && s->gpus[b].handle)
				read_pair(s, a, b, &remotes, &s->links[s->n_links++]);
	}
}

size_t nvml_sampler_topology(const struct nvml_sampler *s, const struct grt_gpu_link_rec **links)
{
	*links = s->links;
	return s->n_links;
}

bool nvml_sampler_topology_known(const struct nvml_sampler *s)
{
	return s->api.p2p_status && s->api.common_ancestor;
}

/* NVLink data counters are cumulative KiB over all links; the rate is the difference per second. */
static void sample_nvlink(struct nvml_sampler *s, struct gpu_state *g, uint64_t now, struct grt_pcie_sample_rec *rec)
{
	struct nvml_field_value v[2] = {
		{ .field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, .scope_id = NVML_SCOPE_ALL_LINKS },
		{ .field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, .scope_id = NVML_SCOPE_ALL_LINKS },
	};
	uint64_t dt = now - g->last_ns;

	if (!s->api.field_values || s->api.field_values(g->handle, 2, v) != NVML_SUCCESS ||
	    v[0].nvml_return != NVML_SUCCESS || v[1].nvml_return != NVML_SUCCESS)
		return;
	if (g->nvlink_seen && dt && v[0].value.ull >= g->nvlink_tx_kib && v[1].value.ull >= g->nvlink_rx_kib) {
		rec->nvlink_tx_bps = (v[0].value.ull - g->nvlink_tx_kib) * 1024 * 1000000000ULL / dt;
		rec->nvlink_rx_bps = (v[1].value.ull - g->nvlink_rx_kib) * 1024 * 1000000000ULL / dt;
		rec->flags |= GRT_PCIE_F_NVLINK;
	}
	g->nvlink_seen = true;
	g->nvlink_tx_kib = v[0].value.ull;
	g->nvlink_rx_kib = v[1].value.ull;
}

static void push(struct nvml_sampler *s, const struct nvml_sample *sample);

/*
 * Per link: the same cumulative KiB counters with the link as scope, one
 * sample per link and interval (the first reading only sets the base).
 */
static void sample_links(struct nvml_sampler *s, unsigned index, uint64_t now)
{
	struct gpu_state *g = &s->gpus[index];
	struct nvml_field_value v[2 * NVML_MAX_LINKS];
	uint64_t dt = now - g->links_ns;
	bool all_read = true;

	if (!g->links || !s->api.field_values)
		return;
	for (unsigned l = 0; l < g->links; l++) {
		v[2 * l] = (struct nvml_field_value){ .field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
						      .scope_id = l };
		v[2 * l + 1] = (struct nvml_field_value){
			.field_id = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, .scope_id = l };
	}
	if (s->api.field_values(g->handle, (int)(2 * g->links), v) != NVML_SUCCESS)
		return;
	for (unsigned l = 0; l < g->links; l++) {
		uint64_t tx = v[2 * l].value.ull, rx = v[2 * l + 1].value.ull;
		struct nvml_sample out = {
			.ts_ns = now, .type = GRT_REC_NVLINK_SAMPLE,
			.link = { .device = index, .pci = g->pci, .link = l,
				  .interval_ms = (uint32_t)(dt / 1000000) },
		};

		if (v[2 * l].nvml_return != NVML_SUCCESS || v[2 * l + 1].nvml_return != NVML_SUCCESS) {
			all_read = false;
			continue;
		}
		if (g->links_seen && dt && tx >= g->link_tx_kib[l] && rx >= g->link_rx_kib[l]) {
			out.link.tx_bytes = (tx - g->link_tx_kib[l]) * 1024;
			out.link.rx_bytes = (rx - g->link_rx_kib[l]) * 1024;
			out.link.tx_bps = out.link.tx_bytes * 1000000000ULL / dt;
			out.link.rx_bps = out.link.rx_bytes * 1000000000ULL / dt;
			push(s, &out);
		}
		g->link_tx_kib[l] = tx;
		g->link_rx_kib[l] = rx;
	}
	g->links_seen = all_read;
	g->links_ns = now;
}

unsigned nvml_sampler_nvlinks(const struct nvml_sampler *s)
{
	unsigned links = 0;

	for (unsigned i = 0; i < s->ngpus; i++)
		links += s->gpus[i].links;
	return links;
}

static void push(struct nvml_sampler *s, const struct nvml_sample *sample)
{
	pthread_mutex_lock(&s->lock);
	if (s->count == QUEUE_LEN)
		s->lost++;
	else
		s->queue[(s->head + s->count++) % QUEUE_LEN] = *sample;
	pthread_mutex_unlock(&s->lock);
}

/* Utilization, memory and power as NVML reports them now; a reading NVML refuses is left out. */
static void sample_gauges(const struct nvml_api *api, nvml_device handle, struct nvml_gauges *g)
{
	struct nvml_utilization util;
	struct nvml_memory mem;
	unsigned mw;

	if (api->utilization && api->utilization(handle, &util) == NVML_SUCCESS) {
		g->gpu_util_pct = util.gpu;
		g->mem_util_pct = util.memory;
		g->flags |= NVML_G_UTILIZATION;
	}
	if (api->memory && api->memory(handle, &mem) == NVML_SUCCESS) {
		g->mem_used_bytes = mem.used;
		g->mem_total_bytes = mem.total;
		g->flags |= NVML_G_MEMORY;
	}
	if (api->power && api->power(handle, &mw) == NVML_SUCCESS) {
		g->power_mw = mw;
		g->flags |= NVML_G_POWER;
	}
}

static void sample_gpu(struct nvml_sampler *s, unsigned index)
{
	struct gpu_state *g = &s->gpus[index];
	struct nvml_sample out = { .type = GRT_REC_PCIE_SAMPLE,
				   .rec = { .device = index, .pci = g->pci, .interval_ms = s->interval_ms } };
	unsigned tx = 0, rx = 0;
	uint64_t now;

	if (!g->handle)
		return;
	/* NVML measures each counter over its own 20 ms window: the value is a rate in KB/s */
	if (s->api.pcie_throughput(g->handle, NVML_PCIE_UTIL_TX_BYTES, &tx) == NVML_SUCCESS &&
	    s->api.pcie_throughput(g->handle, NVML_PCIE_UTIL_RX_BYTES, &rx) == NVML_SUCCESS) {
		out.rec.pcie_tx_bps = (uint64_t)tx * 1024;
		out.rec.pcie_rx_bps = (uint64_t)rx * 1024;
		out.rec.flags |= GRT_PCIE_F_PCIE;
	}
	if (s->gauges)
		sample_gauges(&s->api, g->handle, &out.gauges);
	now = grt_monotonic_ns();
	sample_nvlink(s, g, now, &out.rec);
	sample_links(s, index, now);
	if (g->last_ns)
		out.rec.interval_ms = (uint32_t)((now - g->last_ns) / 1000000);
	g->last_ns = now;
	out.ts_ns = now;
	if (out.rec.flags || out.gauges.flags)
		push(s, &out);
}

static void *sampler_main(void *arg)
{
	struct nvml_sampler *s = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		pthread_mutex_unlock(&s->lock);
		for (unsigned i = 0; i < s->ngpus; i++)
			sample_gpu(s, i);
		next.tv_nsec += (long)s->interval_ms * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&s->lock);
		while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int start_thread(struct nvml_sampler *s)
{
	pthread_condattr_t attr;
	int rc;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &attr);
	pthread_condattr_destroy(&attr);
	rc = pthread_create(&s->thread, NULL, sampler_main, s);
	s->thread_started = rc == 0;
	return -rc;
}

struct nvml_sampler *nvml_sampler_start(const char *library, unsigned interval_ms, bool gauges,
					char *why, size_t why_len)
{
	struct nvml_sampler *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->interval_ms = interval_ms ? interval_ms : 1;
	s->gauges = gauges;
	if (load_api(&s->api, library, why, why_len) || open_gpus(s, why, why_len)) {
		if (s->api.lib)
			dlclose(s->api.lib);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	read_topology(s);
	if (start_thread(s)) {
		snprintf(why, why_len, "cannot start the NVML sampling thread");
		s->api.shutdown();
		nvml_sampler_stop(s);
		return NULL;
	}
	return s;
}

size_t nvml_sampler_take(struct nvml_sampler *s, struct nvml_sample *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	while (n < max && s->count) {
		out[n++] = s->queue[s->head];
		s->head = (s->head + 1) % QUEUE_LEN;
		s->count--;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

uint64_t nvml_sampler_lost(struct nvml_sampler *s)
{
	uint64_t lost;

	pthread_mutex_lock(&s->lock);
	lost = s->lost;
	s->lost = 0;
	pthread_mutex_unlock(&s->lock);
	return lost;
}

void nvml_sampler_stop(struct nvml_sampler *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
		s->api.shutdown();
		pthread_cond_destroy(&s->wake);
	}
	if (s->api.lib)
		dlclose(s->api.lib);
	pthread_mutex_destroy(&s->lock);
	free(s->links);
	free(s);
}
