/* .grt writer: buffered appends, string interning, per-CPU sequences, safe close on write errors. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/buffer_worker.h"
#include "common/crc32c.h"
#include "common/u64_map.h"
#include "trace/grt_writer.h"
#include "trace/launch_repeat.h"
#include "trace/records_core.h"

#define WRITE_BUFFER_BYTES (256 * 1024)
/* CPUs whose record sequence lives in an array; higher numbers (odd origins) in a map */
#define SEQ_ARRAY_CPUS 1024

struct interned {
	char *text;
	uint32_t id;
	struct interned *next;
};

struct grt_writer {
	int fd;
	struct grt_file_header header;
	char *buf;			/* the buffer being filled: one of bufs */
	size_t buf_used;
	/*
	 * A full buffer goes to a thread that write(2)s it while the next one
	 * fills: at millions of records a second, the kernel's side of the
	 * writes (page cache, the filesystem's allocation) costs the recorder
	 * as much as making the records. Without the thread (none could be
	 * started), buffers are written here, the same bytes.
	 */
	char *bufs[2];
	struct buffer_worker *worker;
	uint64_t committed_bytes;	/* bytes known to be on disk as whole records (the writing thread's) */
	int error;			/* first negative errno, sticky */
	uint64_t records;
	uint64_t drops;
	uint32_t seq_of_cpu[SEQ_ARRAY_CPUS]; /* next sequence per CPU: a lookup per record */
	struct u64_map seq_by_cpu;	    /* the same for CPU numbers beyond the array */
	struct u64_map strings_by_hash; /* fnv1a -> struct interned * (chained) */
	uint32_t next_string_id;
	/* the current checksum block: records since the last checksum record */
	uint64_t next_offset;		/* file offset of the next record */
	uint64_t block_start;
	uint32_t block_crc;
	uint32_t block_records;
	/*
	 * The buffer's covered records are checksummed late, in one pass per
	 * flush or block (crc_catch_up): buf[crc_from, buf_used) is not in
	 * block_crc yet. One call over many records costs less than one each.
	 */
	size_t crc_from;
	bool no_checksums;		/* format 1.1 layout (grt_writer_set_checksums) */
	struct launch_repeat_base launch_base; /* the last launch written (format 2.0) */
};

/* Writes len bytes; on failure *written says how many made it. */
static int write_counted(int fd, const void *data, size_t len, size_t *written)
{
	const char *p = data;

	*written = 0;
	while (*written < len) {
		ssize_t n = write(fd, p + *written, len - *written);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		*written += (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
	size_t written;

	return write_counted(fd, data, len, &written);
}

/* Bytes of buf that form whole records within its first `written` bytes. */
static size_t whole_records(const char *buf, size_t written)
{
	size_t at = 0;

	while (at + sizeof(struct grt_record_header) <= written) {
		struct grt_record_header hdr;
		size_t next;

		/* records are packed back to back, so a header may sit at any alignment */
		memcpy(&hdr, buf + at, sizeof(hdr));
		next = at + sizeof(hdr) + hdr.payload_len;

		if (next > written)
			break;
		at = next;
	}
	return at;
}

/* Writes one full buffer (on the writing thread, if any): its whole records count as committed. */
static int write_buffer(void *ctx, const void *buf, size_t len)
{
	struct grt_writer *w = ctx;
	size_t written;
	int err = write_counted(w->fd, buf, len, &written);

	w->committed_bytes += err ? whole_records(buf, written) : len;
	return err;
}

/* Waits until every buffer handed to the writing thread is written: 0 or the first error. */
static int settle_writes(struct grt_writer *w)
{
	int err = w->worker ? buffer_worker_wait(w->worker) : 0;

	if (err && !w->error)
		w->error = err;
	return w->error;
}

/* Folds the buffer's records not checksummed yet into the current block's CRC. */
static void crc_catch_up(struct grt_writer *w)
{
	if (w->buf_used > w->crc_from && !w->no_checksums)
		w->block_crc = crc32c_update(w->block_crc, w->buf + w->crc_from,
					     w->buf_used - w->crc_from);
	w->crc_from = w->buf_used;
}

/*
 * The buffer goes out, and the other one is filled next. A write error shows
 * here one buffer late (the thread reports the buffer before this one): the
 * records appended meanwhile are lost with the rest, and close keeps only
 * the whole records that reached the file.
 */
static int flush_buffer(struct grt_writer *w)
{
	int err;

	if (w->error)
		return w->error;
	crc_catch_up(w);
	if (!w->buf_used)
		return 0;
	if (w->worker) {
		buffer_worker_hand(w->worker, w->buf, w->buf_used);
		err = buffer_worker_error(w->worker);
		w->buf = w->buf == w->bufs[0] ? w->bufs[1] : w->bufs[0];
	} else {
		err = write_buffer(w, w->buf, w->buf_used);
	}
	w->buf_used = 0;
	w->crc_from = 0;
	if (err)
		w->error = err;
	return err;
}

struct grt_writer *grt_writer_open(const char *path, const struct grt_file_header *header)
{
	struct grt_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	w->bufs[0] = malloc(WRITE_BUFFER_BYTES);
	w->bufs[1] = malloc(WRITE_BUFFER_BYTES);
	w->buf = w->bufs[0];
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!w->bufs[0] || !w->bufs[1] || w->fd < 0) {
		err = w->fd < 0 ? errno : ENOMEM;
		if (w->fd >= 0)
			close(w->fd);
		free(w->bufs[0]);
		free(w->bufs[1]);
		free(w);
		errno = err;
		return NULL;
	}
	w->header = *header;
	memcpy(w->header.magic, GRT_FILE_MAGIC, sizeof(w->header.magic));
	w->header.version_major = GRT_VERSION_MAJOR;
	w->header.version_minor = GRT_VERSION_MINOR;
	w->header.header_len = sizeof(w->header);
	w->header.flags = 0;
	w->next_string_id = 1;
	u64_map_init(&w->seq_by_cpu);
	u64_map_init(&w->strings_by_hash);
	/* The header goes to disk at once so an early crash still leaves a readable file. */
	err = write_all(w->fd, &w->header, sizeof(w->header));
	if (err) {
		close(w->fd);
		free(w->bufs[0]);
		free(w->bufs[1]);
		free(w);
		errno = -err;
		return NULL;
	}
	w->committed_bytes = sizeof(w->header);
	w->worker = buffer_worker_start(write_buffer, w);
	w->next_offset = w->block_start = sizeof(w->header);
	return w;
}

static int write_checksum(struct grt_writer *w);

/* A record's header, its sequence number left 0. */
static inline struct grt_record_header record_header(uint16_t type,
						     const struct grt_event_origin *origin,
						     uint32_t payload_len)
{
	return (struct grt_record_header){
		.magic = GRT_RECORD_MAGIC,
		.version = GRT_RECORD_VERSION,
		.type = type,
		.payload_len = payload_len,
		.cpu = origin->cpu,
		.pid = origin->pid,
		.tid = origin->tid,
		.ts_ns = origin->ts_ns,
	};
}

/*
 * Appends one record; covered records go into the current checksum block
 * (all but the checksum records themselves). The trailer gets its own CRC
 * here, once its header (and sequence number) is known.
 */
static int append_record(struct grt_writer *w, uint16_t type, const struct grt_event_origin *origin,
			 const void *payload, uint32_t payload_len, bool covered)
{
	struct grt_trailer_rec trailer;
	struct grt_record_header hdr = record_header(type, origin, payload_len);
	size_t need = sizeof(hdr) + payload_len;
	uint64_t seq = 0;

	if (w->error)
		return w->error;
	if (payload_len > GRT_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (!covered) {
		/* outside the per-CPU sequences: a checksum is no event of any CPU */
	} else if (origin->cpu < SEQ_ARRAY_CPUS) {
		hdr.seq = w->seq_of_cpu[origin->cpu]++;
	} else {
		u64_map_get(&w->seq_by_cpu, origin->cpu, &seq);
		hdr.seq = (uint32_t)seq;
		if (u64_map_put(&w->seq_by_cpu, origin->cpu, seq + 1))
			return -ENOMEM;
	}
	if (type == GRT_REC_TRAILER && payload_len == sizeof(trailer) && w->no_checksums) {
		hdr.payload_len = payload_len = offsetof(struct grt_trailer_rec, crc);
		need = sizeof(hdr) + payload_len;
	} else if (type == GRT_REC_TRAILER && payload_len == sizeof(trailer)) {
		memcpy(&trailer, payload, sizeof(trailer));
		trailer.crc = crc32c_update(crc32c_update(0, &hdr, sizeof(hdr)), &trailer,
					    offsetof(struct grt_trailer_rec, crc));
		trailer.has_crc = 1;
		payload = &trailer;
	}
	covered &= !w->no_checksums;
	if (w->buf_used + need > WRITE_BUFFER_BYTES && flush_buffer(w))
		return w->error;
	if (need > WRITE_BUFFER_BYTES) {
		/* larger than the buffer: written through after what came before, as one whole record */
		int err = settle_writes(w) ? w->error : write_all(w->fd, &hdr, sizeof(hdr));

		if (covered)
			w->block_crc = crc32c_update(crc32c_update(w->block_crc, &hdr, sizeof(hdr)),
						     payload, payload_len);

		if (!err)
			err = write_all(w->fd, payload, payload_len);
		if (err)
			return w->error = err;
		w->committed_bytes += need;
	} else {
		/* a record outside the block: the block's bytes before it are summed now */
		if (!covered)
			crc_catch_up(w);
		memcpy(w->buf + w->buf_used, &hdr, sizeof(hdr));
		if (payload_len) /* an empty payload may come as NULL */
			memcpy(w->buf + w->buf_used + sizeof(hdr), payload, payload_len);
		w->buf_used += need;
		if (!covered)
			w->crc_from = w->buf_used;
	}
	w->block_records += covered;
	w->next_offset += need;
	if (type != GRT_REC_CHECKSUM) /* about the records, not counted among them */
		w->records++;
	if (covered && type != GRT_REC_TRAILER &&
	    (w->next_offset - w->block_start >= GRT_CHECKSUM_BLOCK_BYTES ||
	     w->block_records >= GRT_CHECKSUM_BLOCK_RECORDS))
		return write_checksum(w);
	return 0;
}

void grt_writer_set_checksums(struct grt_writer *w, bool on)
{
	w->no_checksums = !on;
	/* the header is rewritten at close: it then names the layout written */
	w->header.version_major = on ? GRT_VERSION_MAJOR : GRT_VERSION_MAJOR_NO_CHECKSUMS;
	w->header.version_minor = on ? GRT_VERSION_MINOR : GRT_VERSION_MINOR_NO_CHECKSUMS;
}

/*
 * Most records take this short way: a record of a CPU with an array
 * sequence that fits the buffer's room (so no larger than the format's
 * limit), neither trailer nor checksum. It writes what append_record()
 * would, with fewer branches: a launch storm appends millions a second.
 */
static int append_short(struct grt_writer *w, uint16_t type, const struct grt_event_origin *origin,
			const void *payload, uint32_t payload_len)
{
	size_t need = sizeof(struct grt_record_header) + payload_len;
	struct grt_record_header hdr;
	char *at;

	_Static_assert(WRITE_BUFFER_BYTES <= GRT_MAX_PAYLOAD, "what fits the buffer fits a record");
	if (w->error || type == GRT_REC_TRAILER || type == GRT_REC_CHECKSUM ||
	    origin->cpu >= SEQ_ARRAY_CPUS || w->buf_used + need > WRITE_BUFFER_BYTES)
		return append_record(w, type, origin, payload, payload_len, true);
	hdr = record_header(type, origin, payload_len);
	hdr.seq = w->seq_of_cpu[origin->cpu]++;
	at = w->buf + w->buf_used;
	memcpy(at, &hdr, sizeof(hdr));
	if (payload_len) /* an empty payload may come as NULL */
		memcpy(at + sizeof(hdr), payload, payload_len);
	w->buf_used += need;
	w->next_offset += need;
	w->records++;
	if (w->no_checksums)
		return 0;
	w->block_records++;
	if (w->next_offset - w->block_start >= GRT_CHECKSUM_BLOCK_BYTES ||
	    w->block_records >= GRT_CHECKSUM_BLOCK_RECORDS)
		return write_checksum(w);
	return 0;
}

/*
 * A launch like the launch record before it goes as a repeat record (format
 * 2.0; not in the 1.1 layout). Every launch record that reaches the file,
 * whole or repeat, becomes the base the next one is compared with, as the
 * reader takes them.
 */
static int append_launch(struct grt_writer *w, const struct grt_event_origin *origin,
			 const void *payload, uint32_t payload_len)
{
	uint64_t repeat[LAUNCH_REPEAT_MAX_BYTES / sizeof(uint64_t)], at = w->next_offset;
	const struct grt_cuda_launch_rec *launch = payload;
	struct grt_cuda_launch_rec copy;
	uint32_t len = 0;
	int err;

	if (payload_len == sizeof(struct grt_cuda_launch_rec)) {
		if ((uintptr_t)payload % _Alignof(struct grt_cuda_launch_rec)) {
			memcpy(&copy, payload, sizeof(copy));
			launch = &copy;
		}
		len = launch_repeat_encode(&w->launch_base, launch, origin->ts_ns, repeat);
	}
	err = len ? append_short(w, GRT_REC_CUDA_LAUNCH_REPEAT, origin, repeat, len)
		  : append_short(w, GRT_REC_CUDA_LAUNCH, origin, payload, payload_len);
	/* in the buffer (an error after it, in a checksum record, still leaves it there) */
	if (w->next_offset <= at)
		return err;
	if (len)
		launch_repeat_advance(&w->launch_base, launch, at);
	else
		launch_repeat_note(&w->launch_base, payload, payload_len, at);
	return err;
}

int grt_writer_append(struct grt_writer *w, uint16_t type, const struct grt_event_origin *origin,
		      const void *payload, uint32_t payload_len)
{
	if (type == GRT_REC_CUDA_LAUNCH && !w->no_checksums)
		return append_launch(w, origin, payload, payload_len);
	return append_short(w, type, origin, payload, payload_len);
}

/* Closes the current checksum block with a checksum record (none for an empty block). */
static int write_checksum(struct grt_writer *w)
{
	struct grt_event_origin origin = { 0 };
	struct grt_checksum_rec rec = {
		.algo = GRT_CHECKSUM_CRC32C,
		.records = w->block_records,
		.start = w->block_start,
		.length = w->next_offset - w->block_start,
	};
	int err;

	if (!w->block_records || w->no_checksums)
		return 0;
	crc_catch_up(w);
	rec.crc = w->block_crc;
	err = append_record(w, GRT_REC_CHECKSUM, &origin, &rec, sizeof(rec), false);
	w->block_start = w->next_offset;
	w->block_crc = 0;
	w->block_records = 0;
	return err;
}

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* Finds the first len bytes of text (the part that fits a record) among the interned strings. */
static struct interned *lookup_string(struct grt_writer *w, const char *text, size_t len,
				      uint64_t hash)
{
	uint64_t head;

	if (!u64_map_get(&w->strings_by_hash, hash, &head))
		return NULL;
	for (struct interned *e = (struct interned *)(uintptr_t)head; e; e = e->next)
		if (!strncmp(e->text, text, len) && !e->text[len])
			return e;
	return NULL;
}

static int write_string_record(struct grt_writer *w, uint32_t id, const char *text, size_t len)
{
	struct grt_event_origin origin = { 0 };
	struct grt_string_rec *rec = malloc(sizeof(*rec) + len + 1);
	int err;

	if (!rec)
		return -ENOMEM;
	rec->id = id;
	rec->len = (uint32_t)len + 1;
	memcpy(rec->text, text, len + 1);
	err = grt_writer_append(w, GRT_REC_STRING, &origin, rec, sizeof(*rec) + rec->len);
	free(rec);
	return err;
}

uint32_t grt_writer_intern(struct grt_writer *w, const char *text)
{
	uint64_t hash, head = 0;
	struct interned *e;
	size_t len;

	if (!text || !*text || w->error)
		return 0;
	/* longer texts are cut to what one record holds, and looked up as cut */
	len = strnlen(text, GRT_MAX_PAYLOAD - sizeof(struct grt_string_rec) - 1);
	hash = fnv1a(text, len);
	e = lookup_string(w, text, len, hash);
	if (e)
		return e->id;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->text = strndup(text, len))) {
		free(e);
		return 0;
	}
	u64_map_get(&w->strings_by_hash, hash, &head);
	e->id = w->next_string_id;
	e->next = (struct interned *)(uintptr_t)head;
	if (u64_map_put(&w->strings_by_hash, hash, (uintptr_t)e) ||
	    write_string_record(w, e->id, e->text, len)) {
		if (u64_map_get(&w->strings_by_hash, hash, &head) && head == (uintptr_t)e)
			u64_map_put(&w->strings_by_hash, hash, (uintptr_t)e->next);
		free(e->text);
		free(e);
		return 0;
	}
	w->next_string_id++;
	return e->id;
}

int grt_writer_drop(struct grt_writer *w, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	struct grt_event_origin origin = { .ts_ns = ts_ns };
	struct grt_drop_rec rec = { .source = source, .count = count };
	int err;

	if (!count)
		return 0;
	err = grt_writer_append(w, GRT_REC_DROP, &origin, &rec, sizeof(rec));
	if (!err)
		w->drops += count;
	return err;
}

uint64_t grt_writer_records(const struct grt_writer *w)
{
	return w->records;
}

uint64_t grt_writer_drops(const struct grt_writer *w)
{
	return w->drops;
}

int grt_writer_error(const struct grt_writer *w)
{
	return w->error;
}

static void free_strings(struct grt_writer *w)
{
	uint64_t head;

	for (size_t i = 0; u64_map_iter(&w->strings_by_hash, &i, NULL, &head);) {
		struct interned *e = (struct interned *)(uintptr_t)head;

		while (e) {
			struct interned *next = e->next;

			free(e->text);
			free(e);
			e = next;
		}
	}
	u64_map_destroy(&w->strings_by_hash);
}

/* Rewrites the header flags in place: no new blocks, so this works on a full disk. */
static int mark_header(struct grt_writer *w, uint32_t flags)
{
	ssize_t n;

	w->header.flags = flags;
	n = pwrite(w->fd, &w->header, sizeof(w->header), 0);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(w->header) ? 0 : -EIO;
}

int grt_writer_close(struct grt_writer *w, uint32_t end_reason, uint64_t end_ns)
{
	struct grt_trailer_rec trailer = { .reason = end_reason, .end_ns = end_ns };
	struct grt_event_origin origin = { .ts_ns = end_ns };
	int err;

	/* the last block closes before the trailer, which carries its own CRC */
	if (!w->error)
		write_checksum(w);
	trailer.records = w->records;
	trailer.drops = w->drops;
	if (!w->error)
		grt_writer_append(w, GRT_REC_TRAILER, &origin, &trailer, sizeof(trailer));
	flush_buffer(w);
	err = buffer_worker_finish(w->worker);
	w->worker = NULL;
	if (err && !w->error)
		w->error = err;
	if (!w->error && fsync(w->fd) && errno != EINVAL)
		w->error = -errno;
	err = w->error;
	if (err) {
		/* keep only whole records: a partial write must not look like corruption */
		if (ftruncate(w->fd, (off_t)w->committed_bytes) == 0)
			mark_header(w, GRT_HDR_WRITE_ERROR);
	} else {
		err = mark_header(w, GRT_HDR_FINISHED);
	}
	if (close(w->fd) && !err)
		err = -errno;
	free_strings(w);
	u64_map_destroy(&w->seq_by_cpu);
	free(w->bufs[0]);
	free(w->bufs[1]);
	free(w);
	return err;
}
