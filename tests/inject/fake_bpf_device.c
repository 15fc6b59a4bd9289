/* The fake driver's device for GPU eBPF: the reference interpreter runs where a kernel "runs". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/gpubpf.h"
#include "../gpubpf/bpf_interp.h"
#include "../gpubpf/bpf_sim.h"

/*
 * The fake libcuda (fake_cuda.c) cannot run PTX. When a kernel that the
 * injected library instrumented with GPU eBPF programs is launched, it calls
 * fake_gpu_bpf_launch() here with the environment address the launch
 * carries (its last parameter): the reference interpreter then runs the
 * programs of FAKE_CUDA_BPF_OBJECTS (the objects the recorder was given,
 * loaded the same way, so map slots and program ids agree) over the launch's
 * grid, reading and writing the maps and rings the injected library
 * allocated, through that environment, exactly where a GPU would. Kernels
 * named like vec_add make vector add's accesses (load a[i], load b[i],
 * store c[i], i < n) for memory programs. What it cannot check: the PTX the
 * library pasted, which only a GPU runs (bench/gpu_bpf.sh).
 */

static struct gpubpf_bundle bundles[GPUBPF_MAX_OBJECTS];
static size_t nr_bundles;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load_objects(void)
{
	const char *list = getenv("FAKE_CUDA_BPF_OBJECTS");
	char *copy = list ? strdup(list) : NULL, *save = NULL, err[512];
	const char *paths[GPUBPF_MAX_OBJECTS];
	size_t n = 0;

	for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p && n < GPUBPF_MAX_OBJECTS;
	     p = strtok_r(NULL, ":", &save))
		paths[n++] = p;
	if (n && gpubpf_bundles_load(paths, n, bundles, err, sizeof(err)))
		fprintf(stderr, "fake device: %s\n", err);
	else
		nr_bundles = n;
	free(copy);
}

static unsigned type_bytes(const char *t)
{
	if (!strncmp(t, ".u64", 4) || !strncmp(t, ".s64", 4) || !strncmp(t, ".b64", 4) ||
	    !strncmp(t, ".f64", 4))
		return 8;
	if (!strncmp(t, ".u16", 4) || !strncmp(t, ".s16", 4) || !strncmp(t, ".b16", 4))
		return 2;
	if (!strncmp(t, ".u8", 3) || !strncmp(t, ".s8", 3) || !strncmp(t, ".b8", 3))
		return 1;
	return 4;
}

/*
 * The kernel's number among the module's entries (the attacher counts them
 * from 0 in text order) and its own parameters' sizes (not the ones added,
 * named grt_...). Returns how many it has, or -1 when the module lacks it.
 */
static int kernel_shape(const char *text, const char *name, uint32_t *kernel_id, unsigned *sizes,
			unsigned max)
{
	char needle[300];
	const char *at = text, *close;
	unsigned n = 0;

	*kernel_id = 0;
	snprintf(needle, sizeof(needle), ".entry %s(", name);
	for (const char *e = strstr(text, ".entry "); e; e = strstr(e + 7, ".entry ")) {
		if (!strncmp(e, needle, strlen(needle))) {
			at = e;
			break;
		}
		(*kernel_id)++;
	}
	if (strncmp(at, needle, strlen(needle)))
		return -1;
	close = strchr(at, ')');
	for (at = strstr(at, ".param "); at && at < close && n < max; at = strstr(at + 7, ".param ")) {
		const char *type = at + 7, *pname = strchr(type, ' ');

		while (pname && *pname == ' ')
			pname++;
		if (pname && !strncmp(pname, "grt_", 4))
			continue;
		sizes[n++] = type_bytes(type);
	}
	return (int)n;
}

__attribute__((visibility("default"))) int
fake_gpu_bpf_launch(const char *text, const char *name, uint64_t env_addr, const unsigned grid[3],
		    const unsigned block[3], void **params, uint64_t t0_ns)
{
	struct interp_session s;
	struct sim_config c = {.guard_param = -1};
	unsigned sizes[GRT_BPF_CTX_PARAMS];
	char err[256];
	int n;

	pthread_once(&once, load_objects);
	n = kernel_shape(text, name, &c.launch.kernel_id, sizes, GRT_BPF_CTX_PARAMS);
	if (n < 0 || !env_addr)
		return -1;
	memset(&s, 0, sizeof(s));
	memcpy(&s.env, (const void *)(uintptr_t)env_addr, sizeof(s.env));
	c.launch.kernel = name;
	for (int i = 0; i < 3; i++) {
		c.launch.grid[i] = grid[i];
		c.launch.block[i] = block[i];
	}
	for (int i = 0; i < n; i++)
		memcpy(&c.launch.params[i], params[i], sizes[i]);
	c.launch.nr_sms = 4;
	c.launch.t0_ns = t0_ns;
	c.launch.block_ns = 1000;
	c.launch.thread_ns = 10; /* as gpubpf_sim: the same histograms */
	c.launch.body_ns = 5000;
	if (strstr(name, "vec_add") && n >= 4) {
		c.access[0] = (struct sim_access){false, 0, 4};
		c.access[1] = (struct sim_access){false, 1, 4};
		c.access[2] = (struct sim_access){true, 2, 4};
		c.nr_access = 3;
		c.guard_param = 3;
		c.launch.accesses = sim_thread_accesses;
		c.launch.arg = &c;
	}
	for (size_t i = 0; i < nr_bundles; i++)
		if (interp_run(&s, &bundles[i], &c.launch, err, sizeof(err))) {
			fprintf(stderr, "fake device: %s\n", err);
			return -1;
		}
	return 0;
}
