/* Traces with known answers for the report tests, written through grt_writer (shared by tests and the generator). */
#ifndef GRT_REPORT_SCENARIOS_H
#define GRT_REPORT_SCENARIOS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "trace/grt_format.h"
#include "trace/grt_writer.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"

#define SCN_START_NS 1000000000ull	/* the trace's start, CLOCK_MONOTONIC */
#define SCN_US 1000ull
#define SCN_MS 1000000ull
#define SCN_MIB (1024ull * 1024ull)

/* The functions below are static inline so a test that uses some of them compiles warning-free. */

static inline struct grt_writer *scn_open(const char *path, const char *command)
{
	struct grt_file_header h = {
		.start_monotonic_ns = SCN_START_NS,
		.start_realtime_ns = 1795000000ull * 1000000000ull,
		.clock_id = GRT_CLOCK_MONOTONIC,
		.sources_mask = 1u << GRT_SRC_CUDA,
		.target_pid = 100,
	};

	snprintf(h.hostname, sizeof(h.hostname), "testhost");
	snprintf(h.kernel_release, sizeof(h.kernel_release), "6.18.0-test");
	snprintf(h.driver_version, sizeof(h.driver_version), "580.159.04");
	snprintf(h.cuda_version, sizeof(h.cuda_version), "13.0");
	snprintf(h.command_line, sizeof(h.command_line), "%s", command);
	return grt_writer_open(path, &h);
}

static inline struct grt_cuda_call scn_call(struct grt_writer *w, uint16_t api, uint64_t ts,
					    uint64_t api_ns, int32_t ret, const char *comm)
{
	struct grt_cuda_call c = {
		.return_ns = ts + api_ns, .ret = ret, .api = api, .comm_str = grt_writer_intern(w, comm),
	};

	if (api_ns == UINT64_MAX) {	/* the call never returned */
		c.return_ns = 0;
		c.flags = GRT_CUDA_F_NO_RETURN;
	}
	return c;
}

static inline void scn_append(struct grt_writer *w, uint16_t type, uint32_t pid, uint32_t cpu,
			      uint64_t ts, const void *payload, uint32_t len)
{
	struct grt_event_origin o = { .ts_ns = ts, .cpu = cpu, .pid = pid, .tid = pid };

	if (grt_writer_append(w, type, &o, payload, len)) {
		fprintf(stderr, "scenario: append failed\n");
		exit(1);
	}
}

static inline void scn_launch(struct grt_writer *w, uint32_t pid, uint64_t ts, uint64_t api_ns,
			      const char *kernel, uint64_t function, uint32_t gx, uint32_t bx, int32_t ret)
{
	struct grt_cuda_launch_rec l = {
		.call = scn_call(w, GRT_CUDA_LAUNCH_KERNEL, ts, api_ns, ret, "vecadd"),
		.function = function,
		.kernel_str = kernel ? grt_writer_intern(w, kernel) : 0,
		.grid = { gx, 1, 1 },
		.block = { bx, 1, 1 },
		.user_stack_id = -1,
	};

	scn_append(w, GRT_REC_CUDA_LAUNCH, pid, 1, ts, &l, sizeof(l));
}

static inline void scn_func_name(struct grt_writer *w, uint32_t pid, uint64_t ts, uint64_t handle,
				 const char *name)
{
	struct grt_cuda_func_name_rec f = {
		.call = scn_call(w, GRT_CUDA_MODULE_GET_FUNCTION, ts, 2 * SCN_US, 0, "vecadd"),
		.handle = handle,
		.name_str = grt_writer_intern(w, name),
	};

	scn_append(w, GRT_REC_CUDA_FUNC_NAME, pid, 1, ts, &f, sizeof(f));
}

static inline void scn_alloc(struct grt_writer *w, uint32_t pid, uint64_t ts, uint64_t addr,
			     uint64_t bytes, uint32_t kind, int32_t stack_id, int32_t ret)
{
	uint16_t api = kind == GRT_ALLOC_MANAGED ? GRT_CUDA_MEM_ALLOC_MANAGED
		       : kind == GRT_ALLOC_HOST  ? GRT_CUDA_MEM_ALLOC_HOST_V2
						 : GRT_CUDA_MEM_ALLOC_V2;
	struct grt_cuda_alloc_rec a = {
		.call = scn_call(w, api, ts, 5 * SCN_US, ret, "leaky"),
		.addr = ret ? 0 : addr,
		.bytes = bytes,
		.kind = kind,
		.user_stack_id = stack_id,
	};

	scn_append(w, GRT_REC_CUDA_ALLOC, pid, 0, ts, &a, sizeof(a));
}

static inline void scn_free(struct grt_writer *w, uint32_t pid, uint64_t ts, uint64_t addr)
{
	struct grt_cuda_free_rec f = {
		.call = scn_call(w, GRT_CUDA_MEM_FREE_V2, ts, 3 * SCN_US, 0, "leaky"),
		.addr = addr,
		.kind = GRT_ALLOC_DEVICE,
	};

	scn_append(w, GRT_REC_CUDA_FREE, pid, 0, ts, &f, sizeof(f));
}

static inline void scn_memcpy(struct grt_writer *w, uint32_t pid, uint64_t ts, uint64_t api_ns,
			      uint32_t kind, uint64_t bytes, int is_async, int32_t ret)
{
	struct grt_cuda_memcpy_rec m = {
		.call = scn_call(w, is_async ? GRT_CUDA_MEMCPY_HTOD_ASYNC_V2 : GRT_CUDA_MEMCPY_HTOD_V2, ts,
				 api_ns, ret, "copier"),
		.bytes = bytes,
		.kind = kind,
		.is_async = (uint8_t)is_async,
		.dims = 1,
	};

	scn_append(w, GRT_REC_CUDA_MEMCPY, pid, 2, ts, &m, sizeof(m));
}

static inline void scn_memset(struct grt_writer *w, uint32_t pid, uint64_t ts, uint64_t api_ns,
			      uint64_t bytes, int is_async)
{
	struct grt_cuda_memset_rec m = {
		.call = scn_call(w, is_async ? GRT_CUDA_MEMSET_D8_ASYNC : GRT_CUDA_MEMSET_D8_V2, ts,
				 api_ns, 0, "copier"),
		.bytes = bytes,
		.elem_size = 1,
		.is_async = (uint8_t)is_async,
	};

	scn_append(w, GRT_REC_CUDA_MEMSET, pid, 2, ts, &m, sizeof(m));
}

static inline void scn_process(struct grt_writer *w, uint32_t pid, uint64_t ts, uint32_t event,
			       const char *comm, int32_t exit_code)
{
	struct grt_process_rec p = {
		.event = event, .comm_str = grt_writer_intern(w, comm), .exit_code = exit_code,
	};

	scn_append(w, GRT_REC_PROCESS, pid, 0, ts, &p, sizeof(p));
}

static inline void scn_mapping(struct grt_writer *w, uint32_t pid, uint64_t start, uint64_t end,
			       uint64_t offset, const char *path)
{
	struct grt_mapping_rec m = {
		.start = start, .end = end, .file_offset = offset, .path_str = grt_writer_intern(w, path),
	};

	scn_append(w, GRT_REC_MAPPING, pid, 0, SCN_START_NS, &m, sizeof(m));
}

static inline void scn_stack(struct grt_writer *w, uint32_t pid, uint32_t stack_id,
			     const uint64_t *ips, uint32_t depth)
{
	struct {
		struct grt_stack_rec s;
		uint64_t ips[GRT_MAX_STACK_DEPTH];
	} rec = { .s = { .stack_id = stack_id, .depth = depth } };

	memcpy(rec.ips, ips, depth * sizeof(ips[0]));
	scn_append(w, GRT_REC_STACK, pid, 0, SCN_START_NS, &rec,
		   (uint32_t)(sizeof(rec.s) + depth * sizeof(ips[0])));
}

static inline int scn_close(struct grt_writer *w, uint64_t end_ns)
{
	return grt_writer_close(w, GRT_END_TARGET_EXIT, end_ns);
}

/*
 * kernels: vecAdd launched 8 times: 7 returned with API times 10..70 us (in
 * shuffled order; 5 as 4x256, 2 as 8x128), 1 never returned. saxpy (handle
 * 0xbeef0) launched twice without a name before cuModuleGetFunction named it,
 * once after, the last one failing (700). Handle 0xdead0 is never named.
 */
static inline int scn_write_kernels(const char *path)
{
	static const uint64_t us[7] = { 40, 10, 70, 30, 20, 60, 50 };
	struct grt_writer *w = scn_open(path, "./vecadd 1024");
	uint64_t t = SCN_START_NS + SCN_MS;

	if (!w)
		return -1;
	scn_process(w, 100, SCN_START_NS, GRT_PROC_START, "vecadd", 0);
	for (int i = 0; i < 7; i++, t += SCN_MS)
		scn_launch(w, 100, t, us[i] * SCN_US, "vecAdd", 0xa0a0, i < 5 ? 4 : 8, i < 5 ? 256 : 128, 0);
	scn_launch(w, 100, t, UINT64_MAX, "vecAdd", 0xa0a0, 4, 256, 0);
	t += SCN_MS;
	scn_launch(w, 100, t, 5 * SCN_US, NULL, 0xbeef0, 1, 32, 0);
	scn_launch(w, 100, t + SCN_US * 100, 7 * SCN_US, NULL, 0xbeef0, 1, 32, 0);
	scn_func_name(w, 100, t + SCN_US * 200, 0xbeef0, "saxpy");
	scn_launch(w, 100, t + SCN_US * 300, 9 * SCN_US, NULL, 0xbeef0, 1, 32, 700);
	scn_launch(w, 100, t + SCN_US * 400, 1 * SCN_US, NULL, 0xdead0, 2, 64, 0);
	/* a second process calling the allocator, for the per-process API view */
	scn_alloc(w, 200, t + SCN_US * 500, 0x7000000, 4096, GRT_ALLOC_DEVICE, -1, 0);
	scn_free(w, 200, t + SCN_US * 600, 0x7000000);
	scn_process(w, 100, t + SCN_MS, GRT_PROC_EXIT, "vecadd", 0);
	return scn_close(w, SCN_START_NS + 2 * 1000 * SCN_MS);
}

/*
 * record --launch-returns EVERY on one thread: 8 launches of vecAdd (4x1x1 /
 * 256x1x1), the returns of the 1st, EVERY+1st... recorded (30 us each, the
 * last of them failing with 700); the others flagged not sampled.
 */
static inline int scn_write_sampled_returns(const char *path, uint32_t every)
{
	struct grt_cuda_config_rec config = {
		.launch_return_every = every,
		.launch_probes = GRT_CUDA_PROBES_SESSION,
	};
	struct grt_writer *w = scn_open(path, "./vecadd 8");
	uint64_t t = SCN_START_NS + SCN_MS;
	int last_sampled = every ? (7 / (int)every) * (int)every : -1;

	if (!w)
		return -1;
	scn_append(w, GRT_REC_CUDA_CONFIG, 0, 0, SCN_START_NS, &config, sizeof(config));
	scn_process(w, 100, SCN_START_NS, GRT_PROC_START, "vecadd", 0);
	for (int i = 0; i < 8; i++, t += SCN_MS) {
		bool sampled = every && i % (int)every == 0;
		struct grt_cuda_launch_rec l = {
			.call = scn_call(w, GRT_CUDA_LAUNCH_KERNEL, t, 30 * SCN_US,
					 i == last_sampled ? 700 : 0, "vecadd"),
			.function = 0xa0a0,
			.kernel_str = grt_writer_intern(w, "vecAdd"),
			.grid = { 4, 1, 1 },
			.block = { 256, 1, 1 },
			.user_stack_id = -1,
		};

		if (!sampled)
			l.call = (struct grt_cuda_call){ .api = GRT_CUDA_LAUNCH_KERNEL,
							 .flags = GRT_CUDA_F_RETURN_UNSAMPLED,
							 .comm_str = l.call.comm_str };
		scn_append(w, GRT_REC_CUDA_LAUNCH, 100, 1, t, &l, sizeof(l));
	}
	return scn_close(w, t + SCN_MS);
}

/*
 * copies: 3 x 1 MiB HtoD synchronous, 1 ms each (1.048576 GB/s); 2 x 4 KiB
 * DtoH async; 1 DtoD synchronous that failed; memsets: 1 MiB synchronous
 * (500 us) and 2 KiB async.
 */
static inline int scn_write_copies(const char *path)
{
	struct grt_writer *w = scn_open(path, "./copier");
	uint64_t t = SCN_START_NS + SCN_MS;

	if (!w)
		return -1;
	for (int i = 0; i < 3; i++, t += 2 * SCN_MS)
		scn_memcpy(w, 400, t, SCN_MS, GRT_COPY_HTOD, SCN_MIB, 0, 0);
	for (int i = 0; i < 2; i++, t += SCN_MS)
		scn_memcpy(w, 400, t, 10 * SCN_US, GRT_COPY_DTOH, 4096, 1, 0);
	scn_memcpy(w, 400, t, 10 * SCN_US, GRT_COPY_DTOD, 100, 0, 1);
	scn_memset(w, 400, t + SCN_MS, 500 * SCN_US, SCN_MIB, 0);
	scn_memset(w, 400, t + 2 * SCN_MS, 5 * SCN_US, 2048, 1);
	return scn_close(w, t + 3 * SCN_MS);
}

/* Where the symbolization fixture's functions and text mapping lie in its process. */
struct scn_fixture_layout {
	uint64_t inner, outer;
	uint64_t map_start, map_end, map_offset;
	char path[4096];
};

/* Runs the fixture program and reads its layout. Returns 0 or -1. */
static inline int scn_read_fixture(const char *fixture, struct scn_fixture_layout *out)
{
	char cmd[4200], line[4400];
	FILE *p;
	int have = 0;

	memset(out, 0, sizeof(*out));
	snprintf(cmd, sizeof(cmd), "'%s'", fixture);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, b, c;
		char name[128], path[4096];

		if (sscanf(line, "func %127s %llx", name, &a) == 2) {
			if (!strcmp(name, "grt_fixture_inner"))
				out->inner = a, have |= 1;
			else if (!strcmp(name, "grt_fixture_outer"))
				out->outer = a, have |= 2;
		} else if (sscanf(line, "map %llx %llx %llx %4095s", &a, &b, &c, path) == 4 &&
			   out->inner >= a && out->inner < b) {
			out->map_start = a;
			out->map_end = b;
			out->map_offset = c;
			snprintf(out->path, sizeof(out->path), "%s", path);
			have |= 4;
		}
	}
	pclose(p);
	return have == 7 ? 0 : -1;
}

/*
 * leaks: pid 300 ("leaky") allocates A, B (1 MiB each, stack 1), C (512 KiB,
 * stack 2), D (4 KiB, stack 2, freed), managed E (8 KiB, stack 1) and host F
 * (16 KiB, stack 2); frees 0xbad twice (unknown) and NULL once (ignored); one
 * allocation fails; then exits with 3. Pid 301 allocates 100 bytes without a
 * stack and 200 bytes from stack 9 (never recorded) and is still running at
 * the end. Stack 1 is inner+4 <- outer+8 in
 * the fixture; stack 2 is outer+8 <- 0x1234 (unmapped) <- an address in
 * /nonexistent/libfoo.so at file offset 0x2345.
 */
static inline int scn_write_leaks(const char *path, const struct scn_fixture_layout *fx)
{
	struct grt_writer *w = scn_open(path, "./leaky");
	const uint64_t stack1[] = { fx->inner + 4, fx->outer + 8 };
	const uint64_t stack2[] = { fx->outer + 8, 0x1234, 0x7f0000002345ull };
	uint64_t t = SCN_START_NS + SCN_MS;

	if (!w)
		return -1;
	scn_process(w, 300, SCN_START_NS, GRT_PROC_START, "leaky", 0);
	scn_mapping(w, 300, fx->map_start, fx->map_end, fx->map_offset, fx->path);
	scn_mapping(w, 300, 0x7f0000000000ull, 0x7f0000100000ull, 0, "/nonexistent/libfoo.so");
	scn_stack(w, 300, 1, stack1, 2);
	scn_stack(w, 300, 2, stack2, 3);
	scn_alloc(w, 300, t++, 0x10000, SCN_MIB, GRT_ALLOC_DEVICE, 1, 0);
	scn_alloc(w, 300, t++, 0x20000, SCN_MIB, GRT_ALLOC_DEVICE, 1, 0);
	scn_alloc(w, 300, t++, 0x30000, 512 * 1024, GRT_ALLOC_DEVICE, 2, 0);
	scn_alloc(w, 300, t++, 0x40000, 4096, GRT_ALLOC_DEVICE, 2, 0);
	scn_alloc(w, 300, t++, 0x50000, 8192, GRT_ALLOC_MANAGED, 1, 0);
	scn_alloc(w, 300, t++, 0x60000, 16384, GRT_ALLOC_HOST, 2, 0);
	scn_alloc(w, 300, t++, 0, 1ull << 40, GRT_ALLOC_DEVICE, 1, 2);
	scn_free(w, 300, t++, 0x40000);
	scn_free(w, 300, t++, 0xbad);
	scn_free(w, 300, t++, 0xbad);
	scn_free(w, 300, t++, 0);
	scn_process(w, 300, t++, GRT_PROC_EXIT, "leaky", 3);
	scn_alloc(w, 301, t++, 0x10000, 100, GRT_ALLOC_DEVICE, -1, 0);
	scn_alloc(w, 301, t++, 0x20000, 200, GRT_ALLOC_DEVICE, 9, 0);
	return scn_close(w, t + SCN_MS);
}

/*
 * drops: the cuda source lost 5 events in two drop records, uvm 3. The six
 * launches have six grids, so none is written as a repeat of the one before:
 * the tests cut and move them, and a repeat whose launch is gone stops reading.
 */
static inline int scn_write_drops(const char *path)
{
	struct grt_writer *w = scn_open(path, "./dropper");
	uint64_t t = SCN_START_NS + SCN_MS;

	if (!w)
		return -1;
	for (int i = 0; i < 6; i++, t += SCN_MS)
		scn_launch(w, 100, t, 10 * SCN_US, "k", 0x1, 1 + (uint32_t)i, 1, 0);
	grt_writer_drop(w, GRT_SRC_CUDA, 2, t);
	grt_writer_drop(w, GRT_SRC_CUDA, 3, t + 1);
	grt_writer_drop(w, GRT_SRC_UVM, 3, t + 2);
	return scn_close(w, t + SCN_MS);
}

/* Whole file into memory; NULL on failure. */
static inline unsigned char *scn_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)size);
		if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)size;
	}
	fclose(f);
	return buf;
}

static inline int scn_spit(const char *path, const unsigned char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/*
 * Offset of the n-th record (0-based) of a type as the reader hands them out
 * (a launch written as a repeat record is a launch), or 0 when there is none.
 */
static inline size_t scn_find_record(const unsigned char *buf, size_t len, uint16_t type, int n)
{
	size_t at = sizeof(struct grt_file_header);

	while (at + sizeof(struct grt_record_header) <= len) {
		struct grt_record_header h;

		memcpy(&h, buf + at, sizeof(h));
		if (h.type == GRT_REC_CUDA_LAUNCH_REPEAT)
			h.type = GRT_REC_CUDA_LAUNCH;
		if (h.type == type && n-- == 0)
			return at;
		at += sizeof(h) + h.payload_len;
	}
	return 0;
}

/* The drops trace with the 3rd launch record cut out: a one-record gap on cpu 1. */
static inline int scn_write_seq_gap(const char *path)
{
	struct grt_record_header h;
	unsigned char *buf;
	size_t len = 0, at, rec_len;
	int err;

	if (scn_write_drops(path) || !(buf = scn_slurp(path, &len)))
		return -1;
	at = scn_find_record(buf, len, GRT_REC_CUDA_LAUNCH, 2);
	if (!at) {
		free(buf);
		return -1;
	}
	memcpy(&h, buf + at, sizeof(h));	/* records are not 8-byte aligned in the file */
	rec_len = sizeof(h) + h.payload_len;
	memmove(buf + at, buf + at + rec_len, len - at - rec_len);
	err = scn_spit(path, buf, len - rec_len);
	free(buf);
	return err;
}

/* The kernels trace as a crash leaves it: no trailer, header not marked finished. */
static inline int scn_write_no_trailer(const char *path)
{
	unsigned char *buf;
	size_t len = 0, at;
	int err;

	if (scn_write_kernels(path) || !(buf = scn_slurp(path, &len)))
		return -1;
	at = scn_find_record(buf, len, GRT_REC_TRAILER, 0);
	((struct grt_file_header *)buf)->flags = 0;
	err = at ? scn_spit(path, buf, at) : -1;
	free(buf);
	return err;
}

/*
 * The kernels trace cut in the middle of its 5th launch record: the report
 * sees the first 4 launches (API times 40, 10, 70, 30 us) and then a
 * truncated record.
 */
static inline int scn_write_truncated(const char *path)
{
	unsigned char *buf;
	size_t len = 0, at;
	int err;

	if (scn_write_kernels(path) || !(buf = scn_slurp(path, &len)))
		return -1;
	at = scn_find_record(buf, len, GRT_REC_CUDA_LAUNCH, 4);
	((struct grt_file_header *)buf)->flags = 0;
	err = at ? scn_spit(path, buf, at + sizeof(struct grt_record_header) + 10) : -1;
	free(buf);
	return err;
}

/* The kernels trace with a bad record magic on its 6th launch: 5 launches are read. */
static inline int scn_write_bad_magic(const char *path)
{
	unsigned char *buf;
	size_t len = 0, at;
	int err;

	if (scn_write_kernels(path) || !(buf = scn_slurp(path, &len)))
		return -1;
	at = scn_find_record(buf, len, GRT_REC_CUDA_LAUNCH, 5);
	if (at)
		buf[at] = 0x55;
	err = at ? scn_spit(path, buf, len) : -1;
	free(buf);
	return err;
}

#endif
