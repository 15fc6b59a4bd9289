/* A simulated launch of GPU eBPF objects, written as the trace a GPU run of it must match. */
#ifndef GRT_TESTS_BPF_SIM_H
#define GRT_TESTS_BPF_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf_interp.h"

#define SIM_MAX_OBJECTS 8
#define SIM_MAX_ACCESSES 8

/*
 * The global memory accesses each thread of the kernel makes, in order: at
 * params[param] + index * size, index being the thread's linear id in the
 * grid, for threads whose index is below params[guard_param] (every thread
 * when guard_param is negative). Vector add: load a, load b, store c, guarded
 * by n.
 */
struct sim_access {
	bool store;
	unsigned param;
	uint32_t size;
};

struct sim_config {
	struct interp_launch launch;
	unsigned launches; /* the same launch this many times (1 when 0) */
	struct sim_access access[SIM_MAX_ACCESSES];
	unsigned nr_access;
	int guard_param;
	uint32_t thread_capacity;
	size_t ring_bytes;
};

struct sim {
	struct gpubpf_bundle bundles[SIM_MAX_OBJECTS];
	size_t nr_bundles;
	struct interp_session sessions[SIM_MAX_OBJECTS];
	struct sim_config cfg;
};

/*
 * The accesses of one thread as the config describes them (interp_launch's
 * accesses callback, arg the config): for a simulated device of its own.
 */
size_t sim_thread_accesses(void *arg, uint64_t block_linear, uint32_t thread_linear,
			   struct grt_bpf_mem_ctx *out, size_t max);

/* Loads the objects (each with its own map slots and program ids) and runs the launch(es). */
int sim_run(struct sim *s, const char *const *objects, size_t nr_objects,
	    const struct sim_config *cfg, char *err, size_t err_len);
/* Writes what the run left (descriptions, final map contents, ring events, printk lines). */
int sim_write_trace(const struct sim *s, const char *path, char *err, size_t err_len);
void sim_free(struct sim *s);

#endif
