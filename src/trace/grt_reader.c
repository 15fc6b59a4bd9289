/* .grt reader: validates the header and every record before handing it out. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/crc32c.h"
#include "common/regular_file.h"
#include "trace/grt_reader.h"
#include "trace/launch_repeat.h"
#include "trace/record_desc.h"
#include "trace/records_core.h"

/* Room for 1 MiB of records read at once and the largest record whatever its offset. */
#define READ_BUFFER_BYTES ((1u << 20) + GRT_MAX_PAYLOAD + 2 * sizeof(struct grt_record_header))

struct grt_reader {
	int fd;			/* -1 when reading from memory */
	const uint8_t *mem;
	uint8_t *buf;		/* file mode: a window of the file, records read in place */
	uint64_t buf_start;	/* file offset of buf[0], a multiple of 8 */
	size_t buf_len;
	uint64_t size;		/* total bytes of the input */
	uint64_t offset;	/* of the next record */
	struct grt_file_header header;
	uint8_t *payload;	/* file mode: buffer for the current payload */
	size_t payload_cap;
	struct grt_strings *strings;
	struct grt_trailer_rec trailer;
	int have_trailer;
	char error[256];
	/* integrity (format 1.2): the checksum block being read */
	uint64_t records_read;		/* records before the current one */
	uint64_t block_start;
	uint32_t block_crc;
	uint32_t block_records;
	uint64_t blocks_verified;
	uint64_t blocks_bad;
	char damage[256];		/* the first problem found, "" while none */
	/* the last launch read; a repeat record is expanded into it (format 2.0) */
	struct launch_repeat_base launch_base;
};

static void set_error(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/*
 * Refills the window so that it holds [offset, offset + len), keeping what it
 * has from there on. The window starts at a multiple of 8, so a payload lies
 * 8-aligned in it exactly when its file offset is.
 */
static int refill(struct grt_reader *r, uint64_t offset, size_t len)
{
	uint64_t from = offset & ~(uint64_t)7, end = r->buf_start + r->buf_len;
	size_t need = (size_t)(offset - from) + len;

	if (need > READ_BUFFER_BYTES)
		return -1;
	if (from >= r->buf_start && from < end) {
		r->buf_len = (size_t)(end - from);
		memmove(r->buf, r->buf + (from - r->buf_start), r->buf_len);
	} else {
		r->buf_len = 0;
	}
	r->buf_start = from;
	while (r->buf_len < need) {
		ssize_t n = pread(r->fd, r->buf + r->buf_len, READ_BUFFER_BYTES - r->buf_len,
				  (off_t)(r->buf_start + r->buf_len));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		r->buf_len += (size_t)n;
	}
	return 0;
}

/* Where len bytes at offset are, in memory or the file's window; NULL when the input is shorter. */
static const uint8_t *bytes_at(struct grt_reader *r, uint64_t offset, size_t len)
{
	if (offset > r->size || len > r->size - offset)
		return NULL;
	if (r->mem)
		return r->mem + offset;
	if ((offset < r->buf_start || offset + len > r->buf_start + r->buf_len) &&
	    refill(r, offset, len))
		return NULL;
	return r->buf + (offset - r->buf_start);
}

/* Copies len bytes at offset into dst; 0 or -1 when the input is shorter. */
static int read_at(struct grt_reader *r, uint64_t offset, void *dst, size_t len)
{
	const uint8_t *p = bytes_at(r, offset, len);

	if (!p)
		return -1;
	memcpy(dst, p, len);
	return 0;
}

static int check_header(struct grt_reader *r, char *err, size_t err_len)
{
	const struct grt_file_header *h = &r->header;
	size_t have = r->size < sizeof(*h) ? (size_t)r->size : sizeof(*h);
	size_t magic_have = have < sizeof(h->magic) ? have : sizeof(h->magic);

	/* what is there is checked first, so a short foreign file is called foreign, not short */
	if (read_at(r, 0, &r->header, have)) {
		set_error(err, err_len, "read error at offset 0");
		return -1;
	}
	if (memcmp(h->magic, GRT_FILE_MAGIC, magic_have)) {
		set_error(err, err_len, "bad magic at offset 0: not a grtrace .grt file");
		return -1;
	}
	if (have >= offsetof(struct grt_file_header, version_minor) &&
	    (h->version_major < 1 || h->version_major > GRT_VERSION_MAJOR)) {
		set_error(err, err_len,
			  "unsupported format version %u.%u at offset %zu (this grtrace reads 1.x to "
			  "%u.x)",
			  h->version_major, h->version_minor,
			  offsetof(struct grt_file_header, version_major), GRT_VERSION_MAJOR);
		return -1;
	}
	if (have < sizeof(*h)) {
		set_error(err, err_len,
			  "truncated header at offset %zu: the file ends there, a header is %zu bytes",
			  have, sizeof(*h));
		return -1;
	}
	if (h->header_len < sizeof(*h) || h->header_len > r->size) {
		set_error(err, err_len, "bad header length %u at offset %zu", h->header_len,
			  offsetof(struct grt_file_header, header_len));
		return -1;
	}
	/* strings in the header must be terminated so callers can print them */
	r->header.hostname[sizeof(h->hostname) - 1] = 0;
	r->header.kernel_release[sizeof(h->kernel_release) - 1] = 0;
	r->header.driver_version[sizeof(h->driver_version) - 1] = 0;
	r->header.cuda_version[sizeof(h->cuda_version) - 1] = 0;
	r->header.command_line[sizeof(h->command_line) - 1] = 0;
	r->offset = r->block_start = h->header_len;
	return 0;
}

static struct grt_reader *finish_open(struct grt_reader *r, char *err, size_t err_len)
{
	r->strings = grt_strings_new();
	if (!r->strings) {
		set_error(err, err_len, "out of memory");
		grt_reader_close(r);
		return NULL;
	}
	if (check_header(r, err, err_len)) {
		grt_reader_close(r);
		return NULL;
	}
	return r;
}

struct grt_reader *grt_reader_open(const char *path, char *err, size_t err_len)
{
	struct grt_reader *r = calloc(1, sizeof(*r));
	struct stat st;

	if (!r) {
		set_error(err, err_len, "out of memory");
		return NULL;
	}
	/* a FIFO with no writer would block a plain open forever */
	r->fd = regular_file_open(path, &st);
	if (r->fd < 0) {
		/* callers name the path: "grtrace: PATH: cannot open: ..." */
		set_error(err, err_len, "cannot open: %s%s", regular_file_error(r->fd),
			  r->fd == REGULAR_FILE_NOT_REGULAR ? " (a trace is a .grt file)" : "");
		grt_reader_close(r);
		return NULL;
	}
	r->size = (uint64_t)st.st_size;
	/* records are small and read in order: one large read brings thousands, read in place */
	r->buf = malloc(READ_BUFFER_BYTES);
	if (!r->buf) {
		set_error(err, err_len, "out of memory");
		grt_reader_close(r);
		return NULL;
	}
	return finish_open(r, err, err_len);
}

struct grt_reader *grt_reader_open_memory(const void *buf, size_t len, char *err, size_t err_len)
{
	struct grt_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		set_error(err, err_len, "out of memory");
		return NULL;
	}
	r->fd = -1;
	r->mem = buf;
	r->size = len;
	return finish_open(r, err, err_len);
}

void grt_reader_close(struct grt_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->payload);
	grt_strings_free(r->strings);
	free(r);
}

const struct grt_file_header *grt_reader_header(const struct grt_reader *r)
{
	return &r->header;
}

static enum grt_read_status fail(struct grt_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static enum grt_read_status fail(struct grt_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return GRT_READ_ERROR;
}

/*
 * Payloads are packed back to back, so they sit at any alignment; the record
 * structs need 8. Aligned ones are handed out where they lie (in the image or
 * the file's window), the others copied into the reader's own buffer, which
 * malloc aligns.
 */
#define PAYLOAD_ALIGN 8

/*
 * Hands out len bytes at offset, aligned. A payload shorter than want (an
 * older writer's, before fields were appended) is copied and zero-extended to
 * want bytes, so readers of the appended fields stay in bounds.
 */
static int load_payload(struct grt_reader *r, uint64_t offset, uint32_t len, uint32_t want,
			const void **out, uint32_t *crc)
{
	static const uint64_t empty_payload; /* a valid address for zero-length payloads */
	uint32_t cap = len > want ? len : want;
	const uint8_t *p;

	if (!len && !want) {
		*out = &empty_payload;
		return 0;
	}
	p = len ? bytes_at(r, offset, len) : (const uint8_t *)&empty_payload;
	if (!p)
		return -1;
	/* the bytes as they are in the file, before any zero-extension */
	*crc = crc32c_update(*crc, p, len);
	if ((uintptr_t)p % PAYLOAD_ALIGN == 0 && len >= want) {
		*out = p;
		return 0;
	}
	if (cap > r->payload_cap) {
		uint8_t *bigger = realloc(r->payload, cap);

		if (!bigger)
			return -1;
		r->payload = bigger;
		r->payload_cap = cap;
	}
	memcpy(r->payload, p, len);
	memset(r->payload + len, 0, cap - len);
	*out = r->payload;
	return 0;
}

static void damaged(struct grt_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps the first integrity problem: one line, naming where. */
static void damaged(struct grt_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->damage[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->damage, sizeof(r->damage), fmt, ap);
	va_end(ap);
}

/* A checksum record closes the block before it: its bytes, records and CRC must match. */
static void verify_block(struct grt_reader *r, const struct grt_record *rec)
{
	const struct grt_checksum_rec *c = rec->payload;

	/* written with a zero origin and no sequence: anything else there is damage too */
	if (rec->hdr.ts_ns || rec->hdr.cpu || rec->hdr.pid || rec->hdr.tid || rec->hdr.seq ||
	    c->reserved || c->algo != GRT_CHECKSUM_CRC32C || c->start != r->block_start ||
	    c->length != rec->offset - r->block_start || c->records != r->block_records ||
	    c->crc != r->block_crc) {
		r->blocks_bad++;
		damaged(r, "checksum mismatch for bytes %" PRIu64 "..%" PRIu64 " (checksum record at "
			   "offset %" PRIu64 "): records there were changed, deleted or duplicated",
			r->block_start, rec->offset, rec->offset);
	} else {
		r->blocks_verified++;
	}
	r->block_start = r->offset;
	r->block_crc = 0;
	r->block_records = 0;
}

static void verify_trailer(struct grt_reader *r, const struct grt_record *rec, uint32_t header_crc)
{
	const struct grt_trailer_rec *t = rec->payload;

	if (rec->hdr.payload_len >= sizeof(*t) &&
	    (t->has_crc != 1 ||
	     crc32c_update(header_crc, t, offsetof(struct grt_trailer_rec, crc)) != t->crc)) {
		r->blocks_bad++;
		damaged(r, "checksum mismatch in the trailer at offset %" PRIu64, rec->offset);
	}
	if (t->records != r->records_read)
		damaged(r, "the trailer at offset %" PRIu64 " counts %" PRIu64 " records before it, "
			   "the file has %" PRIu64 ": records were deleted or duplicated",
			rec->offset, t->records, r->records_read);
	else if (r->block_records && (r->blocks_verified || r->blocks_bad))
		damaged(r, "bytes %" PRIu64 "..%" PRIu64 " before the trailer are covered by no checksum",
			r->block_start, rec->offset);
	else if (!r->blocks_verified && !r->blocks_bad &&
		 grt_format_has_checksums(r->header.version_major, r->header.version_minor) &&
		 r->records_read)
		damaged(r, "no checksum record before the trailer at offset %" PRIu64
			   " (format %u.%u writes them)", rec->offset, r->header.version_major,
			r->header.version_minor);
}

/* Side effects of core records the reader itself keeps track of. */
static enum grt_read_status absorb_core(struct grt_reader *r, const struct grt_record *rec)
{
	if (rec->hdr.type == GRT_REC_STRING) {
		const struct grt_string_rec *s = rec->payload;

		if (grt_strings_set(r->strings, s->id, s->text))
			return fail(r, "out of memory at offset %" PRIu64, rec->offset);
	} else if (rec->hdr.type == GRT_REC_TRAILER) {
		memcpy(&r->trailer, rec->payload, sizeof(r->trailer));
		r->have_trailer = 1;
	}
	return GRT_READ_OK;
}

enum grt_read_status grt_reader_next(struct grt_reader *r, struct grt_record *rec)
{
	const struct grt_record_desc *desc;
	struct grt_record_header *hdr = &rec->hdr;
	uint64_t at = r->offset;
	uint32_t header_crc, crc;
	bool covered;

	if (at == r->size) {
		/* the header is marked finished only after the trailer is on disk */
		if ((r->header.flags & GRT_HDR_FINISHED) && !r->have_trailer)
			damaged(r, "the header says the recording finished, but no trailer was found "
				   "(its record at the end was changed)");
		return GRT_READ_END;
	}
	if (r->size - at < sizeof(*hdr))
		return fail(r, "truncated record header at offset %" PRIu64 " (%" PRIu64 " bytes left)",
			    at, r->size - at);
	if (read_at(r, at, hdr, sizeof(*hdr)))
		return fail(r, "read error at offset %" PRIu64, at);
	if (hdr->magic != GRT_RECORD_MAGIC)
		return fail(r, "bad record magic 0x%02x at offset %" PRIu64, hdr->magic, at);
	if (hdr->version != GRT_RECORD_VERSION)
		return fail(r, "unknown record version %u at offset %" PRIu64, hdr->version, at);
	if (hdr->payload_len > GRT_MAX_PAYLOAD)
		return fail(r, "record length %u too large at offset %" PRIu64, hdr->payload_len, at);
	if (hdr->payload_len > r->size - at - sizeof(*hdr))
		return fail(r, "truncated record at offset %" PRIu64 ": length %u goes past end of file",
			    at, hdr->payload_len);
	desc = grt_record_desc_find(hdr->type);
	if (desc && hdr->payload_len < desc->min_len)
		return fail(r, "%s record at offset %" PRIu64 " is %u bytes, needs at least %u", desc->name,
			    at, hdr->payload_len, desc->min_len);
	/* checksum records and the trailer are outside the blocks; the trailer has its own CRC */
	covered = hdr->type != GRT_REC_CHECKSUM && hdr->type != GRT_REC_TRAILER;
	header_crc = crc32c_update(0, hdr, sizeof(*hdr));
	crc = covered ? crc32c_update(r->block_crc, hdr, sizeof(*hdr)) : header_crc;
	if (load_payload(r, at + sizeof(*hdr), hdr->payload_len, desc ? desc->full_len : 0,
			 &rec->payload, &crc))
		return fail(r, "read error at offset %" PRIu64, at);
	if (desc && desc->validate && desc->validate(rec->payload, hdr->payload_len))
		return fail(r, "malformed %s record at offset %" PRIu64, desc->name, at);
	rec->offset = at;
	r->offset = at + sizeof(*hdr) + hdr->payload_len;
	rec->stored_len = hdr->payload_len;
	if (hdr->type == GRT_REC_CUDA_LAUNCH) {
		launch_repeat_note(&r->launch_base, rec->payload, hdr->payload_len, at);
	} else if (hdr->type == GRT_REC_CUDA_LAUNCH_REPEAT) {
		/* handed out as the launch record the writer was given */
		int bad = launch_repeat_expand(&r->launch_base, rec->payload, hdr->payload_len,
					       hdr->ts_ns, at);

		if (bad)
			return fail(r, "launch repeat record at offset %" PRIu64 " %s", at,
				    bad == -1   ? "has no launch record before it"
				    : bad == -2 ? "repeats another launch record than the one before "
						  "it: a launch record was lost or moved"
						: "is malformed");
		hdr->type = GRT_REC_CUDA_LAUNCH;
		hdr->payload_len = sizeof(r->launch_base.rec);
		rec->payload = &r->launch_base.rec;
	}
	if (hdr->type == GRT_REC_CHECKSUM) {
		verify_block(r, rec);
	} else if (hdr->type == GRT_REC_TRAILER) {
		verify_trailer(r, rec, header_crc);
	} else {
		/* a block's CRC runs over the raw bytes, as the writer wrote them */
		r->block_crc = crc;
		r->block_records++;
	}
	if (covered)
		r->records_read++;
	return absorb_core(r, rec);
}

const char *grt_reader_damage(const struct grt_reader *r)
{
	return r->damage[0] ? r->damage : NULL;
}

uint64_t grt_reader_blocks_verified(const struct grt_reader *r)
{
	return r->blocks_verified;
}

const char *grt_reader_error(const struct grt_reader *r)
{
	return r->error;
}

const struct grt_strings *grt_reader_strings(const struct grt_reader *r)
{
	return r->strings;
}

const char *grt_reader_string(const struct grt_reader *r, uint32_t id)
{
	return grt_strings_get(r->strings, id);
}

int grt_reader_trailer(const struct grt_reader *r, struct grt_trailer_rec *out)
{
	if (r->have_trailer && out)
		*out = r->trailer;
	return r->have_trailer;
}
