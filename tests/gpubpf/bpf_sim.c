/* A simulated launch of GPU eBPF objects, written as the trace a GPU run of it must match. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "bpf_sim.h"
#include "gpubpf/bpf_trace.h"
#include "trace/grt_writer.h"
#include "trace/records_core.h"

size_t sim_thread_accesses(void *arg, uint64_t block_linear, uint32_t thread_linear,
			      struct grt_bpf_mem_ctx *out, size_t max)
{
	const struct sim_config *c = arg;
	const struct interp_launch *l = &c->launch;
	uint64_t index = block_linear * l->block[0] * l->block[1] * l->block[2] + thread_linear;
	size_t n = 0;

	if (c->guard_param >= 0 && index >= l->params[c->guard_param])
		return 0;
	for (unsigned i = 0; i < c->nr_access && n < max; i++)
		out[n++] = (struct grt_bpf_mem_ctx){
		    .addr = l->params[c->access[i].param] + index * c->access[i].size,
		    .size = c->access[i].size,
		    .flags = c->access[i].store ? GRT_BPF_MEM_STORE : 0,
		    .site = i};
	return n;
}

int sim_run(struct sim *s, const char *const *objects, size_t nr_objects,
	    const struct sim_config *cfg, char *err, size_t err_len)
{
	uint32_t slots = 0;
	uint16_t ids = 0;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->cfg.launch.accesses = cfg->nr_access ? sim_thread_accesses : NULL;
	s->cfg.launch.arg = &s->cfg;
	if (nr_objects > SIM_MAX_OBJECTS) {
		snprintf(err, err_len, "at most %d objects", SIM_MAX_OBJECTS);
		return -E2BIG;
	}
	for (size_t i = 0; i < nr_objects; i++) {
		struct gpubpf_bundle_opts o = {.map_slot_base = slots, .first_prog_id = ids};
		struct gpubpf_bundle *b = &s->bundles[i];
		int rc = gpubpf_bundle_load(objects[i], &o, b, err, err_len);

		s->nr_bundles++;
		if (rc)
			return rc;
		slots += (uint32_t)b->obj.nr_maps;
		ids += (uint16_t)b->nr_progs;
		if (interp_session_init(&s->sessions[i], b, cfg->thread_capacity,
					cfg->ring_bytes)) {
			snprintf(err, err_len, "out of memory");
			return -ENOMEM;
		}
	}
	for (unsigned n = 0; n < (cfg->launches ? cfg->launches : 1); n++)
		for (size_t i = 0; i < s->nr_bundles; i++) {
			int rc = interp_run(&s->sessions[i], &s->bundles[i], &s->cfg.launch, err,
					    err_len);

			if (rc)
				return rc;
		}
	return 0;
}

int sim_write_trace(const struct sim *s, const char *path, char *err, size_t err_len)
{
	struct grt_file_header h = {.clock_id = GRT_CLOCK_MONOTONIC,
				    .sources_mask = 1u << GRT_SRC_GPU,
				    .start_monotonic_ns = 1000000000ull};
	struct grt_event_origin at = {.ts_ns = 1000000000ull, .pid = 4242, .tid = 4243};
	struct grt_writer *w;
	int rc = 0;

	snprintf(h.command_line, sizeof(h.command_line), "gpubpf_sim %s",
		 s->cfg.launch.kernel ? s->cfg.launch.kernel : "");
	w = grt_writer_open(path, &h);
	if (!w) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -errno;
	}
	for (size_t i = 0; !rc && i < s->nr_bundles; i++) {
		const struct gpubpf_bundle *b = &s->bundles[i];
		const struct interp_session *ss = &s->sessions[i];
		struct gpubpf_clock clk = {ss->env.clock_gpu_ref, ss->env.clock_mono_ref,
					   ss->env.clock_mult};
		struct gpubpf_out out = gpubpf_out_writer(w);

		rc = gpubpf_trace_bundle(&out, b, (uint32_t)i, &at);
		for (size_t m = 0; !rc && m < b->obj.nr_maps; m++) {
			uint32_t slot = b->map_slot_base + (uint32_t)m;

			if (b->obj.maps[m].rodata)
				continue;
			if (gpubpf_map_is_ring(b->obj.maps[m].type))
				rc = gpubpf_trace_ring(&out, b, m, ss->map_mem[slot],
						       ss->map_len[slot], &clk, &at);
			else
				rc = gpubpf_trace_map(&out, b, m, ss->map_mem[slot], ss->map_len[slot],
						      ss->env.thread_capacity, 1, true, &at);
		}
		if (!rc)
			rc = gpubpf_trace_printk(&out, ss->printk_ring, ss->printk_len, &clk, &at);
	}
	at.ts_ns += 1000;
	if (grt_writer_close(w, GRT_END_TARGET_EXIT, at.ts_ns) && !rc)
		rc = -EIO;
	if (rc)
		snprintf(err, err_len, "%s: writing failed: %s", path, strerror(-rc));
	return rc;
}

void sim_free(struct sim *s)
{
	for (size_t i = 0; i < s->nr_bundles; i++) {
		interp_session_free(&s->sessions[i]);
		gpubpf_bundle_free(&s->bundles[i]);
	}
	s->nr_bundles = 0;
}
