/* Per-job rows: the spill file and the JSON shape of one job (CSV is made from the JSON). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/rows.h"
#include "analysis/nccl_calls.h"

#define SPILL_BUFFER (1u << 20)
#define ROWS_BUFFER (1u << 20)
#define ROW_MAX 512	/* a packed row: 41 fields of at most 10 bytes, a mask, its length */

int job_rows_open(struct job_rows *r)
{
	memset(r, 0, sizeof(*r));
	r->spill = tmpfile();
	if (!r->spill)
		return -errno;
	/* rows are small: without a buffer of its own stdio writes and reads 4 KiB at a time */
	r->spill_buf = malloc(SPILL_BUFFER);
	if (r->spill_buf)
		setvbuf(r->spill, r->spill_buf, _IOFBF, SPILL_BUFFER);
	return 0;
}

void job_rows_close(struct job_rows *r)
{
	if (r->spill)
		fclose(r->spill);
	free(r->spill_buf);
	memset(r, 0, sizeof(*r));
}

/*
 * The spill holds each job as LEB128 varints, values that sit near another
 * one (ids, times, the name pointer) as zigzag differences: about 60 bytes
 * instead of the struct's 240, for millions of rows. Every field goes
 * through, so a replayed job equals the one added. The differences wrap
 * modulo 2^64, which keeps "0 = never seen" and any order exact.
 */
static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* v - base as a small unsigned number whatever its sign */
static uint8_t *put_diff(uint8_t *p, uint64_t v, uint64_t base)
{
	uint64_t d = v - base;

	return put_varint(p, (d << 1) ^ (uint64_t)-(int64_t)(d >> 63));
}

static const uint8_t *get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
		x |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80)) {
			*v = x;
			return p;
		}
	}
	return NULL;
}

static const uint8_t *get_diff(const uint8_t *p, const uint8_t *end, uint64_t base, uint64_t *v)
{
	uint64_t z = 0;

	p = p ? get_varint(p, end, &z) : NULL;
	*v = base + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
	return p;
}

/* The row's bytes at p (room for ROW_MAX); returns their end. */
static uint8_t *pack_job(struct job_row_codec *c, uint8_t *p, const struct job *j)
{
	p = put_diff(p, j->id, c->id);
	p = put_varint(p, j->group_id);
	p = put_diff(p, j->batch_id, j->id);
	p = put_varint(p, j->pid);
	p = put_varint(p, j->tid);
	p = put_varint(p, (uint32_t)(j->device + 1)); /* JOB_NO_DEVICE is 0 */
	p = put_varint(p, j->kind);
	p = put_varint(p, j->api);
	p = put_diff(p, j->stream, c->stream);
	p = put_varint(p, j->stream_index);
	p = put_varint(p, j->copy_kind);
	p = put_varint(p, j->bytes);
	p = put_varint(p, j->kernel_key);
	p = put_diff(p, (uintptr_t)j->name, c->name);
	p = put_varint(p, (uintptr_t)j->collective);
	p = put_diff(p, j->api_enter, c->api_enter);
	/* events never seen are 0, far from api_enter: a bit each says which follow */
	*p++ = (uint8_t)((j->submit != 0) | (j->start != 0) << 1 | (j->end != 0) << 2 |
			 (j->complete != 0) << 3 | (j->dep_ready != 0) << 4);
	if (j->submit)
		p = put_diff(p, j->submit, j->api_enter);
	if (j->start)
		p = put_diff(p, j->start, j->api_enter);
	if (j->end)
		p = put_diff(p, j->end, j->api_enter);
	if (j->complete)
		p = put_diff(p, j->complete, j->api_enter);
	if (j->dep_ready)
		p = put_diff(p, j->dep_ready, j->api_enter);
	p = put_varint(p, j->t_submit_host);
	p = put_varint(p, j->t_queue);
	p = put_varint(p, j->t_exec);
	p = put_varint(p, j->t_complete);
	p = put_varint(p, j->t_gpu_wait);
	p = put_varint(p, j->t_vm_fault);
	p = put_varint(p, j->t_total);
	p = put_varint(p, j->t_offcpu);
	p = put_varint(p, j->tail_limit);
	p = put_varint(p, j->vm_faults);
	p = put_varint(p, j->offcpu_count);
	p = put_varint(p, j->known);
	p = put_varint(p, j->missing);
	p = put_varint(p, j->flags);
	p = put_varint(p, j->tags);
	p = put_varint(p, j->graph_nodes);
	p = put_diff(p, (uint64_t)(int64_t)j->ret, 0);
	c->id = j->id;
	c->api_enter = j->api_enter;
	c->stream = j->stream;
	c->name = (uintptr_t)j->name;
	return p;
}

/* Reads a field of a narrower type (the casts keep the packed value as it was). */
#define GET(field, type)                                  \
	do {                                              \
		p = p ? get_varint(p, end, &v) : NULL;    \
		j->field = (type)v;                       \
	} while (0)
#define GET_DIFF(field, base)                             \
	do {                                              \
		p = get_diff(p, end, (base), &v);         \
		j->field = v;                             \
	} while (0)

/* Inverse of pack_job; false when the bytes do not hold a whole row. */
static bool unpack_job(struct job_row_codec *c, const uint8_t *p, const uint8_t *end, struct job *j)
{
	uint64_t v = 0;
	uint8_t seen;

	memset(j, 0, sizeof(*j));
	GET_DIFF(id, c->id);
	GET(group_id, uint64_t);
	GET_DIFF(batch_id, j->id);
	GET(pid, uint32_t);
	GET(tid, uint32_t);
	GET(device, uint32_t);
	j->device -= 1;
	GET(kind, uint16_t);
	GET(api, uint16_t);
	GET_DIFF(stream, c->stream);
	GET(stream_index, uint32_t);
	GET(copy_kind, uint32_t);
	GET(bytes, uint64_t);
	GET(kernel_key, uint64_t);
	p = get_diff(p, end, c->name, &v);
	j->name = (const char *)(uintptr_t)v;
	p = p ? get_varint(p, end, &v) : NULL;
	j->collective = (const struct nccl_call *)(uintptr_t)v;
	GET_DIFF(api_enter, c->api_enter);
	if (!p || p == end)
		return false;
	seen = *p++;
	if (seen & 1)
		GET_DIFF(submit, j->api_enter);
	if (seen & 2)
		GET_DIFF(start, j->api_enter);
	if (seen & 4)
		GET_DIFF(end, j->api_enter);
	if (seen & 8)
		GET_DIFF(complete, j->api_enter);
	if (seen & 16)
		GET_DIFF(dep_ready, j->api_enter);
	GET(t_submit_host, uint64_t);
	GET(t_queue, uint64_t);
	GET(t_exec, uint64_t);
	GET(t_complete, uint64_t);
	GET(t_gpu_wait, uint64_t);
	GET(t_vm_fault, uint64_t);
	GET(t_total, uint64_t);
	GET(t_offcpu, uint64_t);
	GET(tail_limit, uint64_t);
	GET(vm_faults, uint32_t);
	GET(offcpu_count, uint32_t);
	GET(known, uint32_t);
	GET(missing, uint32_t);
	GET(flags, uint32_t);
	GET(tags, uint32_t);
	GET(graph_nodes, uint32_t);
	GET_DIFF(ret, 0);
	if (!p || p != end)
		return false;
	c->id = j->id;
	c->api_enter = j->api_enter;
	c->stream = j->stream;
	c->name = (uintptr_t)j->name;
	return true;
}

void job_rows_add(struct job_rows *r, const struct job *j)
{
	uint8_t row[ROW_MAX], *end;
	size_t len;

	if (!r->spill || r->error)
		return;
	end = pack_job(&r->codec, row + 2, j);
	len = (size_t)(end - row - 2);
	row[0] = (uint8_t)len;
	row[1] = (uint8_t)(len >> 8);
	if (fwrite_unlocked(row, 1, len + 2, r->spill) != len + 2)
		r->error = -(errno ? errno : EIO);
	else
		r->count++;
}

static inline void json_opt(struct json_writer *w, const char *key, int known, uint64_t v)
{
	if (known) {
		jw_field_u64(w, key, v);
	} else {
		jw_key(w, key);
		jw_null(w);
	}
}

/* The names of the set bits as an array, straight from the bits. */
static void json_names(struct json_writer *w, const char *key, uint32_t bits,
		       const char *(*name)(uint32_t bit), uint32_t n_names)
{
	jw_key(w, key);
	jw_begin_array(w);
	for (uint32_t i = 0; bits && i < n_names; i++)
		if (bits & (1u << i))
			jw_string(w, name(i));
	jw_end_array(w);
}

/* What an NCCL kernel job runs, and the wait of its rank (null when it was last in). */
static void json_collective(struct json_writer *w, const struct nccl_call *c)
{
	jw_key(w, "collective");
	jw_begin_object(w);
	jw_field_string(w, "op", grt_nccl_op_name(c->op));
	jw_field_u64(w, "index", c->seq + 1);
	jw_field_u64(w, "comm_id", c->comm_id);
	jw_field_u64(w, "rank", c->rank);
	jw_field_u64(w, "nranks", c->nranks);
	jw_field_u64(w, "bytes", c->bytes);
	if (c->peer >= 0)
		jw_field_u64(w, "peer", (uint64_t)c->peer);
	jw_field_u64(w, "entered_ns", c->enter);
	jw_key(w, "wait");
	if (c->waited_for == NCCL_NONE) {
		jw_null(w);
	} else {
		jw_begin_object(w);
		jw_field_u64(w, "ns", c->wait_ns);
		jw_field_u64(w, "waited_for", c->for_rank);
		json_opt(w, "waited_for_device", c->for_device >= 0, (uint64_t)c->for_device);
		jw_field_string(w, "basis", nccl_basis_name(c->basis));
		jw_end_object(w);
	}
	jw_end_object(w);
}

void job_json_row(struct json_writer *w, const struct job *j)
{
	char name[96];

	jw_begin_object(w);
	jw_field_u64(w, "job", j->id);
	jw_field_u64(w, "group", j->group_id);
	jw_field_u64(w, "batch", j->batch_id);
	jw_field_u64(w, "pid", j->pid);
	jw_field_u64(w, "tid", j->tid);
	json_opt(w, "device", j->device != JOB_NO_DEVICE, j->device);
	jw_field_string(w, "kind", job_kind_name(j->kind));
	if (j->collective) {
		jw_field_string(w, "name", nccl_call_name(j->collective, name, sizeof(name)));
		jw_field_string(w, "kernel", j->name);
	} else {
		jw_field_string(w, "name", j->name);
	}
	jw_field_u64(w, "stream", j->stream);
	json_opt(w, "api_enter_ns", j->api_enter != 0, j->api_enter);
	json_opt(w, "submit_ns", j->submit != 0, j->submit);
	json_opt(w, "start_ns", j->start != 0, j->start);
	json_opt(w, "end_ns", j->end != 0, j->end);
	json_opt(w, "complete_ns", j->complete != 0, j->complete);
	json_opt(w, "t_submit_host_ns", j->known & JOB_K_SUBMIT_HOST, j->t_submit_host);
	json_opt(w, "t_queue_ns", j->known & JOB_K_QUEUE, j->t_queue);
	json_opt(w, "t_exec_ns", j->known & JOB_K_EXEC, j->t_exec);
	json_opt(w, "t_complete_ns", j->known & JOB_K_COMPLETE, j->t_complete);
	json_opt(w, "t_gpu_wait_ns", j->known & JOB_K_GPU_WAIT, j->t_gpu_wait);
	json_opt(w, "t_vm_fault_ns", 1, j->t_vm_fault);
	json_opt(w, "t_total_ns", j->known & JOB_K_TOTAL, j->t_total);
	json_opt(w, "t_offcpu_ns", 1, j->t_offcpu);
	jw_field_u64(w, "vm_faults", j->vm_faults);
	if (j->bytes) {
		jw_field_u64(w, "bytes", j->bytes);
	}
	json_names(w, "tags", j->tags, job_tag_name, JOB_TAG_COUNT);
	jw_key(w, "incomplete");
	jw_bool(w, job_incomplete(j));
	json_names(w, "missing", j->missing, job_missing_name, JOB_MISSING_NAMES);
	json_names(w, "flags", j->flags, job_flag_name, JOB_FLAG_NAMES);
	if (j->collective)
		json_collective(w, j->collective);
	jw_end_object(w);
}

int job_rows_each(struct job_rows *r, void (*row)(void *ctx, const struct job *j), void *ctx)
{
	struct job_row_codec codec = { 0 };
	uint8_t bytes[ROW_MAX];
	struct job j;
	size_t len;

	if (r->error)
		return r->error;
	if (!r->spill)
		return 0;
	if (fflush(r->spill) || fseek(r->spill, 0, SEEK_SET))
		return -errno;
	for (uint64_t i = 0; i < r->count; i++) {
		if (fread_unlocked(bytes, 1, 2, r->spill) != 2)
			return -EIO;
		len = bytes[0] | (size_t)bytes[1] << 8;
		if (len > sizeof(bytes) || fread_unlocked(bytes, 1, len, r->spill) != len ||
		    !unpack_job(&codec, bytes, bytes + len, &j))
			return -EIO;
		row(ctx, &j);
	}
	/* more rows may follow: stdio wants a seek between reading and writing */
	return fseek(r->spill, 0, SEEK_END) ? -errno : 0;
}

static void json_row_cb(void *ctx, const struct job *j)
{
	job_json_row(ctx, j);
}

int job_rows_print_json(struct job_rows *r, struct json_writer *w)
{
	/* millions of rows: written by a thread while the next buffer fills */
	bool async = !w->buf && !jw_begin_async(w, ROWS_BUFFER);
	int err, write_err = 0;

	jw_begin_array(w);
	err = job_rows_each(r, json_row_cb, w);
	jw_end_array(w);
	if (async)
		write_err = jw_end_async(w);
	return err ? err : write_err;
}
