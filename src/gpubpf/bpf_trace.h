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
 * Where the records go: a trace writer (gpubpf_out_writer), or the recording
 * session's sink, which turns them into live lines for snoop as well.
 */
struct gpubpf_out {
	void *ctx;
	int (*append)(void *ctx, uint16_t type, const struct grt_event_origin *at,
		      const void *payload, uint32_t len);
	uint32_t (*intern)(void *ctx, const char *text);
	int (*drop)(void *ctx, uint32_t source, uint64_t count, uint64_t ts_ns);
};

struct gpubpf_out gpubpf_out_writer(struct grt_writer *w);

/*
 * Describes a bundle as object object_id: its name and BTF, each program,
 * each map with the layouts of its key and value (or events). 0 or the
 * writer's negative errno.
 */
int gpubpf_trace_bundle(const struct gpubpf_out *w, const struct gpubpf_bundle *b, uint32_t object_id,
			const struct grt_event_origin *at);

/* An object that could not be loaded: a program record with the refusal. */
int gpubpf_trace_refusal(const struct gpubpf_out *w, const char *object, uint32_t object_id, int status,
			 const char *reason, const struct grt_event_origin *at);

/* Map `map` of the bundle from an image of its device memory: one snapshot of dump records. */
int gpubpf_trace_map(const struct gpubpf_out *w, const struct gpubpf_bundle *b, size_t map,
		     const uint8_t *image, size_t len, uint32_t thread_capacity, uint32_t snapshot,
		     bool final, const struct grt_event_origin *at);

/* A ring map's records as events, and a lost record when some did not fit. */
int gpubpf_trace_ring(const struct gpubpf_out *w, const struct gpubpf_bundle *b, size_t map,
		      const uint8_t *image, size_t len, const struct gpubpf_clock *clk,
		      const struct grt_event_origin *at);

/* The printk ring's lines, formatted, and a lost record when some did not fit. */
int gpubpf_trace_printk(const struct gpubpf_out *w, const uint8_t *image, size_t len,
			const struct gpubpf_clock *clk, const struct grt_event_origin *at);

/* Formats a bpf_trace_printk line: %d %i %u %x %X %o %c %p %% with h/hh/l/ll/z, %s as "(str)". */
void gpubpf_format_printk(char *out, size_t len, const char *fmt, size_t fmt_len,
			  const uint64_t args[3]);

#endif
