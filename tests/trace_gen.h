/* Seeded .grt content generators shared by the trace tests, gen_trace and the fuzz seed corpus. */
#ifndef GRT_TRACE_GEN_H
#define GRT_TRACE_GEN_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/grt_format.h"
#include "trace/grt_writer.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

/*
 * Everything here is static inline so that each test program, which is built
 * from a single .c file, takes what it uses without unused-function warnings.
 * The generator writes through grt_writer and logs what every record must
 * read back as (header with its expected sequence number, payload bytes), so
 * the tests compare the reader's output against an independent expectation.
 */

#define GEN_MAX_CPUS 256
#define GEN_WRITER_BUFFER (256 * 1024) /* grt_writer.c's buffer; bigger records write through */

struct gen_rng {
	uint64_t state;
};

/* splitmix64: tiny, seedable, and good enough to cover every byte value. */
static inline uint64_t gen_next(struct gen_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t gen_below(struct gen_rng *r, uint32_t n)
{
	return n ? (uint32_t)(gen_next(r) % n) : 0;
}

static inline void gen_fill(struct gen_rng *r, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)gen_next(r);
}

struct gen_record {
	struct grt_record_header hdr; /* as the reader must return it, seq included */
	uint8_t *payload;
};

struct gen_log {
	struct gen_record *recs;
	size_t n, cap;
	uint32_t next_seq[GEN_MAX_CPUS];
	char **strings; /* string id i + 1 is strings[i] */
	size_t nstrings;
	uint64_t drops;
	unsigned mismatches;  /* writer results that differed from the expectation */
	unsigned big_records; /* records larger than the writer's buffer */
};

static inline void gen_log_free(struct gen_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free(log->recs[i].payload);
	for (size_t i = 0; i < log->nstrings; i++)
		free(log->strings[i]);
	free(log->recs);
	free(log->strings);
	memset(log, 0, sizeof(*log));
}

/* Offset in the file of record i (records follow the header back to back). */
static inline uint64_t gen_log_offset(const struct gen_log *log, size_t i)
{
	uint64_t at = sizeof(struct grt_file_header);

	for (size_t k = 0; k < i; k++)
		at += sizeof(struct grt_record_header) + log->recs[k].hdr.payload_len;
	return at;
}

static inline void gen_log_add(struct gen_log *log, uint16_t type,
			       const struct grt_event_origin *origin, const void *payload,
			       uint32_t len)
{
	struct gen_record *rec;

	if (!log)
		return;
	if (log->n == log->cap) {
		log->cap = log->cap ? log->cap * 2 : 256;
		log->recs = realloc(log->recs, log->cap * sizeof(*log->recs));
		if (!log->recs)
			abort();
	}
	rec = &log->recs[log->n++];
	memset(rec, 0, sizeof(*rec));
	rec->hdr.magic = GRT_RECORD_MAGIC;
	rec->hdr.version = GRT_RECORD_VERSION;
	rec->hdr.type = type;
	rec->hdr.payload_len = len;
	rec->hdr.cpu = origin->cpu;
	rec->hdr.pid = origin->pid;
	rec->hdr.tid = origin->tid;
	rec->hdr.seq = origin->cpu < GEN_MAX_CPUS ? log->next_seq[origin->cpu]++ : 0;
	rec->hdr.ts_ns = origin->ts_ns;
	rec->payload = malloc(len ? len : 1);
	if (!rec->payload)
		abort();
	if (len)
		memcpy(rec->payload, payload, len);
	if (len + sizeof(struct grt_record_header) > GEN_WRITER_BUFFER)
		log->big_records++;
}

/* Appends through the writer and logs the record when the writer took it. */
static inline int gen_append(struct grt_writer *w, struct gen_log *log, uint16_t type,
			     const struct grt_event_origin *origin, const void *payload,
			     uint32_t len)
{
	int err = grt_writer_append(w, type, origin, payload, len);

	if (!err)
		gen_log_add(log, type, origin, payload, len);
	return err;
}

/* Interns text, checking the writer hands out ids 1, 2, ... and reuses them. */
static inline uint32_t gen_intern(struct grt_writer *w, struct gen_log *log, const char *text)
{
	uint32_t id = grt_writer_intern(w, text);
	struct grt_event_origin origin = {0};
	struct grt_string_rec *rec;
	size_t len = strlen(text);

	if (!log)
		return id;
	for (size_t i = 0; i < log->nstrings; i++) {
		if (!strcmp(log->strings[i], text)) {
			if (id != i + 1)
				log->mismatches++;
			return id;
		}
	}
	if (!id)
		return 0; /* the writer failed (write error): no record expected */
	if (id != log->nstrings + 1)
		log->mismatches++;
	log->strings = realloc(log->strings, (log->nstrings + 1) * sizeof(char *));
	if (!log->strings || !(log->strings[log->nstrings] = strdup(text)))
		abort();
	log->nstrings++;
	rec = malloc(sizeof(*rec) + len + 1);
	if (!rec)
		abort();
	rec->id = id;
	rec->len = (uint32_t)len + 1;
	memcpy(rec->text, text, len + 1);
	gen_log_add(log, GRT_REC_STRING, &origin, rec, (uint32_t)(sizeof(*rec) + len + 1));
	free(rec);
	return id;
}

static inline int gen_drop(struct grt_writer *w, struct gen_log *log, uint32_t source,
			   uint64_t count, uint64_t ts_ns)
{
	struct grt_event_origin origin = {.ts_ns = ts_ns};
	struct grt_drop_rec rec = {.source = source, .count = count};
	int err = grt_writer_drop(w, source, count, ts_ns);

	if (!err && count && log) {
		gen_log_add(log, GRT_REC_DROP, &origin, &rec, sizeof(rec));
		log->drops += count;
	}
	return err;
}

/* A header with every text field filled, the way the recorder fills it. */
static inline void gen_header(struct gen_rng *r, struct grt_file_header *h)
{
	memset(h, 0, sizeof(*h));
	h->start_monotonic_ns = gen_next(r) >> 4;
	h->start_realtime_ns = gen_next(r) >> 2;
	h->clock_id = GRT_CLOCK_MONOTONIC;
	h->sources_mask = (uint32_t)gen_next(r);
	h->target_pid = (uint32_t)gen_next(r);
	snprintf(h->hostname, sizeof(h->hostname), "host-%016llx", (unsigned long long)gen_next(r));
	snprintf(h->kernel_release, sizeof(h->kernel_release), "6.18.%u-test", gen_below(r, 100));
	snprintf(h->driver_version, sizeof(h->driver_version), "580.%u", gen_below(r, 1000));
	snprintf(h->cuda_version, sizeof(h->cuda_version), "13.%u", gen_below(r, 10));
	snprintf(h->command_line, sizeof(h->command_line), "./workload --seed %llu \"a b\",c",
		 (unsigned long long)gen_next(r));
}

/*
 * A string from a small pool (so interning repeats) or a fresh one with
 * awkward bytes: quotes, commas, backslashes, control and non-ASCII bytes.
 */
static inline void gen_string(struct gen_rng *r, char *out, size_t cap)
{
	static const char *const pool[] = {
	    "vecAdd",
	    "_Z6vecAddPfS_S_i",
	    "python3",
	    "/usr/lib/libcuda.so.1",
	    "k<\"quoted\", comma>",
	    "tab\there",
	    "back\\slash",
	    "caf\xc3\xa9",
	    "\xff\xfe bad utf8",
	    "line\nbreak",
	    "a,b,c",
	    "x",
	};
	static const char awkward[] =
	    "abcXYZ019 _,\"\\\t\n\r=<>{}[]:;'\x01\x1f\x7f\xc3\xa9\xe2\x82\xac";
	size_t len;

	if (gen_below(r, 2)) {
		snprintf(out, cap, "%s", pool[gen_below(r, sizeof(pool) / sizeof(pool[0]))]);
		return;
	}
	len = 1 + gen_below(r, (uint32_t)(cap < 48 ? cap - 1 : 47));
	for (size_t i = 0; i < len; i++)
		out[i] = awkward[gen_below(r, sizeof(awkward) - 1)];
	out[len] = 0;
}

static inline uint32_t gen_random_string_id(struct grt_writer *w, struct gen_log *log,
					    struct gen_rng *r)
{
	char text[64];

	if (!gen_below(r, 8))
		return 0; /* "no string" */
	gen_string(r, text, sizeof(text));
	return gen_intern(w, log, text);
}

/* Fills a cuda call prefix with random values but string ids that resolve. */
static inline void gen_cuda_call(struct grt_writer *w, struct gen_log *log, struct gen_rng *r,
				 struct grt_cuda_call *call)
{
	gen_fill(r, call, sizeof(*call));
	call->api = (uint16_t)gen_below(r, GRT_CUDA_API_COUNT + 2);
	call->comm_str = gen_random_string_id(w, log, r);
}

/* The core and cuda record types the generator covers, each at least once. */
static const uint16_t gen_types[] = {
    GRT_REC_STRING,	    GRT_REC_DROP,
    GRT_REC_PROCESS,	    GRT_REC_MAPPING,
    GRT_REC_STACK,	    GRT_REC_CLOCK_CALIB,
    GRT_REC_SOURCE_STATUS,  GRT_REC_CUDA_LAUNCH,
    GRT_REC_CUDA_ALLOC,	    GRT_REC_CUDA_FREE,
    GRT_REC_CUDA_MEMCPY,    GRT_REC_CUDA_MEMSET,
    GRT_REC_CUDA_SYNC,	    GRT_REC_CUDA_MODULE_LOAD,
    GRT_REC_CUDA_FUNC_NAME, GRT_REC_CUDA_GRAPH_LAUNCH,
};
#define GEN_NTYPES (sizeof(gen_types) / sizeof(gen_types[0]))

/* A type number no build will ever describe: readers must skip it. */
#define GEN_UNKNOWN_TYPE 0x7e57

/*
 * Writes one random record of the given type (strings it references first).
 * Payloads are random bytes except where validity needs a structure (string
 * ids, stack depth); some carry trailing bytes, as newer minor versions may.
 */
static inline int gen_random_record(struct grt_writer *w, struct gen_log *log, struct gen_rng *r,
				    uint16_t type, const struct grt_event_origin *origin)
{
	union {
		struct grt_process_rec process;
		struct grt_mapping_rec mapping;
		struct grt_stack_rec stack;
		struct grt_clock_calib_rec clock;
		struct grt_source_status_rec status;
		struct grt_cuda_launch_rec launch;
		struct grt_cuda_graph_launch_rec graph;
		struct grt_cuda_alloc_rec alloc;
		struct grt_cuda_free_rec free;
		struct grt_cuda_memcpy_rec memcpy;
		struct grt_cuda_memset_rec memset;
		struct grt_cuda_sync_rec sync;
		struct grt_cuda_module_rec module;
		struct grt_cuda_func_name_rec func_name;
		uint8_t bytes[sizeof(struct grt_stack_rec) + GRT_MAX_STACK_DEPTH * 8 + 64];
	} p;
	uint32_t len = 0, extra = gen_below(r, 4) ? 0 : gen_below(r, 24);
	char text[64];

	gen_fill(r, &p, sizeof(p));
	switch (type) {
	case GRT_REC_STRING:
		gen_string(r, text, sizeof(text));
		return gen_intern(w, log, text) ? 0 : -EIO;
	case GRT_REC_DROP:
		return gen_drop(w, log, gen_below(r, GRT_SRC_MAX + 2), 1 + gen_below(r, 1000000),
				origin->ts_ns);
	case GRT_REC_PROCESS:
		p.process.comm_str = gen_random_string_id(w, log, r);
		p.process.exe_str = gen_random_string_id(w, log, r);
		p.process.event = 1 + gen_below(r, 4);
		len = sizeof(p.process);
		break;
	case GRT_REC_MAPPING:
		p.mapping.path_str = gen_random_string_id(w, log, r);
		len = sizeof(p.mapping);
		break;
	case GRT_REC_STACK:
		p.stack.depth = gen_below(r, GRT_MAX_STACK_DEPTH + 1);
		len = sizeof(p.stack) + p.stack.depth * 8;
		break;
	case GRT_REC_CLOCK_CALIB:
		len = sizeof(p.clock);
		break;
	case GRT_REC_SOURCE_STATUS:
		p.status.message_str = gen_random_string_id(w, log, r);
		len = sizeof(p.status);
		break;
	case GRT_REC_CUDA_LAUNCH:
		gen_cuda_call(w, log, r, &p.launch.call);
		p.launch.kernel_str = gen_random_string_id(w, log, r);
		len = sizeof(p.launch);
		break;
	case GRT_REC_CUDA_GRAPH_LAUNCH:
		gen_cuda_call(w, log, r, &p.graph.call);
		len = sizeof(p.graph);
		break;
	case GRT_REC_CUDA_ALLOC:
		gen_cuda_call(w, log, r, &p.alloc.call);
		p.alloc.kind = gen_below(r, 9);
		len = sizeof(p.alloc);
		break;
	case GRT_REC_CUDA_FREE:
		gen_cuda_call(w, log, r, &p.free.call);
		len = sizeof(p.free);
		break;
	case GRT_REC_CUDA_MEMCPY:
		gen_cuda_call(w, log, r, &p.memcpy.call);
		p.memcpy.kind = gen_below(r, 8);
		p.memcpy.is_async = (uint8_t)gen_below(r, 2);
		len = sizeof(p.memcpy);
		break;
	case GRT_REC_CUDA_MEMSET:
		gen_cuda_call(w, log, r, &p.memset.call);
		len = sizeof(p.memset);
		break;
	case GRT_REC_CUDA_SYNC:
		gen_cuda_call(w, log, r, &p.sync.call);
		p.sync.kind = gen_below(r, 9);
		len = sizeof(p.sync);
		break;
	case GRT_REC_CUDA_MODULE_LOAD:
		gen_cuda_call(w, log, r, &p.module.call);
		p.module.path_str = gen_random_string_id(w, log, r);
		len = sizeof(p.module);
		break;
	case GRT_REC_CUDA_FUNC_NAME:
		gen_cuda_call(w, log, r, &p.func_name.call);
		p.func_name.name_str = gen_random_string_id(w, log, r);
		len = sizeof(p.func_name);
		break;
	default:
		len = gen_below(r, 64);
		extra = 0;
		break;
	}
	return gen_append(w, log, type, origin, &p, len + extra);
}

/* Origins spread over ncpus CPUs with rising timestamps. */
static inline void gen_origin(struct gen_rng *r, struct grt_event_origin *o, uint64_t *clock,
			      uint32_t ncpus)
{
	*clock += gen_below(r, 100000);
	o->ts_ns = *clock;
	o->cpu = gen_below(r, ncpus);
	o->pid = 1000 + gen_below(r, 8);
	o->tid = o->pid + gen_below(r, 4);
}

/* Writes `records` random records (every covered type first). Returns 0 or a negative errno. */
static inline int gen_random_records(struct grt_writer *w, struct gen_log *log, struct gen_rng *r,
				     uint64_t start_ns, size_t records, uint32_t ncpus)
{
	struct grt_event_origin origin;
	uint64_t clock = start_ns;
	int err = 0;

	for (size_t i = 0; i < records && !err; i++) {
		uint16_t type = i < GEN_NTYPES ? gen_types[i] : gen_types[gen_below(r, GEN_NTYPES)];

		if (i >= GEN_NTYPES && !gen_below(r, 40))
			type = GEN_UNKNOWN_TYPE;
		gen_origin(r, &origin, &clock, ncpus);
		err = gen_random_record(w, log, r, type, &origin);
	}
	return err;
}

#endif
