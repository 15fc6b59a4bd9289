/* Writing GPU eBPF output into a trace: descriptions, map dumps, ring events, printk lines. */
#ifndef GRT_GPUBPF_BPF_TRACE_H
#define GRT_GPUBPF_BPF_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "gpubpf/gpubpf.h"
#include "trace/grt_writer.h"

/* The GPU clock's mapping to CLOCK_MONOTONIC, as in grt_bpf_env. */
struct gpubpf_clock {
	uint64_t gpu_ref;
	uint64_t mono_ref;
	uint64_t mult; /* 1 << 32: equal rates */
};

uint64_t gpubpf_clock_mono(const struct gpubpf_clock *c, uint64_t gpu_ns);

/*
 * Describes a bundle as object object_id: its name and BTF, each program,
 * each map with the layouts of its key and value (or events). 0 or the
 * writer's negative errno.
 */
int gpubpf_trace_bundle(struct grt_writer *w, const struct gpubpf_bundle *b, uint32_t object_id,
			const struct grt_event_origin *at);

/* An object that could not be loaded: a program record with the refusal. */
int gpubpf_trace_refusal(struct grt_writer *w, const char *object, uint32_t object_id, int status,
			 const char *reason, const struct grt_event_origin *at);

/* Map `map` of the bundle from an image of its device memory: one snapshot of dump records. */
int gpubpf_trace_map(struct grt_writer *w, const struct gpubpf_bundle *b, size_t map,
		     const uint8_t *image, size_t len, uint32_t thread_capacity, uint32_t snapshot,
		     bool final, const struct grt_event_origin *at);

/* A ring map's records as events, and a lost record when some did not fit. */
int gpubpf_trace_ring(struct grt_writer *w, const struct gpubpf_bundle *b, size_t map,
		      const uint8_t *image, size_t len, const struct gpubpf_clock *clk,
		      const struct grt_event_origin *at);

/* The printk ring's lines, formatted, and a lost record when some did not fit. */
int gpubpf_trace_printk(struct grt_writer *w, const uint8_t *image, size_t len,
			const struct gpubpf_clock *clk, const struct grt_event_origin *at);

/* Formats a bpf_trace_printk line: %d %i %u %x %X %o %c %p %% with h/hh/l/ll/z, %s as "(str)". */
void gpubpf_format_printk(char *out, size_t len, const char *fmt, size_t fmt_len,
			  const uint64_t args[3]);

#endif
