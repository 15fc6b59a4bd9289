/* The report's header block: host, command, duration, sources, completeness. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "analysis/report_header.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "trace/trace_names.h"

void report_header_init(struct report_header *h, const char *path, const struct grt_file_header *file)
{
	memset(h, 0, sizeof(*h));
	h->path = path;
	h->file = file;
}

void report_header_destroy(struct report_header *h)
{
	for (int i = 0; i < GRT_SRC_MAX; i++)
		free(h->status_message[i]);
}

void report_header_on_record(struct report_header *h, const struct grt_record *rec,
			     const struct grt_strings *strings)
{
	if (rec->hdr.type == GRT_REC_CHECKSUM) /* about the records, not one of them */
		return;
	h->records++;
	if (rec->hdr.ts_ns > h->last_ts_ns)
		h->last_ts_ns = rec->hdr.ts_ns;
	if (rec->hdr.type == GRT_REC_TRAILER) {
		memcpy(&h->trailer, rec->payload, sizeof(h->trailer));
		h->have_trailer = true;
	} else if (rec->hdr.type == GRT_REC_SOURCE_STATUS) {
		const struct grt_source_status_rec *s = rec->payload;
		const char *message = grt_strings_get(strings, s->message_str);

		/*
		 * Whether a source ran is the recorder's to say (its status records
		 * have no thread); the injected library's status records, from a
		 * thread of the target, are about its parts (CUPTI, probes) only.
		 */
		if (s->source >= GRT_SRC_MAX || rec->hdr.tid)
			return;
		h->status_seen[s->source] = true;
		h->status[s->source] = s->status;
		free(h->status_message[s->source]);
		h->status_message[s->source] = message ? strdup(message) : NULL;
	} else if (rec->hdr.type == GRT_REC_CUDA_CONFIG) {
		const struct grt_cuda_config_rec *c = rec->payload;

		h->have_cuda_config = true;
		h->launch_return_every = c->launch_return_every;
	}
}

bool report_header_complete(const struct report_header *h)
{
	return h->have_trailer && !h->read_error;
}

static uint64_t end_ns(const struct report_header *h)
{
	return h->have_trailer && h->trailer.end_ns ? h->trailer.end_ns : h->last_ts_ns;
}

static uint64_t duration_ns(const struct report_header *h)
{
	uint64_t end = end_ns(h);

	return end > h->file->start_monotonic_ns ? end - h->file->start_monotonic_ns : 0;
}

static bool source_listed(const struct report_header *h, int source)
{
	return (h->file->sources_mask & (1u << source)) || h->status_seen[source];
}

static void print_sources(const struct report_header *h, FILE *out)
{
	const char *sep = "";

	fprintf(out, "  sources:  ");
	for (int i = 0; i < GRT_SRC_MAX; i++) {
		if (!source_listed(h, i))
			continue;
		fprintf(out, "%s%s", sep, grt_source_name(i));
		if (h->status_seen[i] && h->status[i] == 0)
			fprintf(out, " (attached)");
		else if (h->status_seen[i])
			fprintf(out, " (failed: %s, error %d)",
				h->status_message[i] ? h->status_message[i] : "no message", h->status[i]);
		sep = ", ";
	}
	fprintf(out, "%s\n", *sep ? "" : "none");
}

static void print_warnings(const struct report_header *h, FILE *out)
{
	if (h->read_error)
		fprintf(out, "WARNING: reading stopped early (%s); this report covers the %" PRIu64
			" records before that point\n", h->read_error, h->records);
	else if (!h->have_trailer && (h->file->flags & GRT_HDR_WRITE_ERROR))
		fprintf(out, "WARNING: the recording stopped at a write error (disk full?); this report "
			"covers the %" PRIu64 " records written before it\n", h->records);
	else if (!h->have_trailer)
		fprintf(out, "WARNING: the trace has no trailer: the recording was cut short; this report "
			"covers the %" PRIu64 " records before the cut\n", h->records);
	if (h->have_trailer && h->trailer.records + 1 != h->records)
		fprintf(out, "WARNING: the trailer says %" PRIu64 " records were written before it, %" PRIu64
			" were read\n", h->trailer.records, h->records - 1);
	if (h->damage)
		fprintf(out, "WARNING: the trace is damaged: %s\n", h->damage);
}

void report_header_print_text(const struct report_header *h, FILE *out)
{
	const struct grt_file_header *f = h->file;
	time_t start = (time_t)(f->start_realtime_ns / 1000000000ull);
	char when[64] = "?";
	struct tm tm;

	if (gmtime_r(&start, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "grtrace report: %s\n", h->path);
	fprintf(out, "  host:     %s  kernel %s  driver %s  CUDA %s\n", *f->hostname ? f->hostname : "?",
		*f->kernel_release ? f->kernel_release : "?",
		*f->driver_version ? f->driver_version : "unknown",
		*f->cuda_version ? f->cuda_version : "unknown");
	fprintf(out, "  command:  %s\n", *f->command_line ? f->command_line : "(system-wide)");
	fprintf(out, "  started:  %s  duration %.6f s\n", when, (double)duration_ns(h) / 1e9);
	print_sources(h, out);
	if (h->have_trailer)
		fprintf(out, "  ended:    %s (trailer present), %" PRIu64 " records\n",
			grt_end_reason_name(h->trailer.reason), h->records);
	else
		fprintf(out, "  ended:    no trailer, %" PRIu64 " records\n", h->records);
	if (h->blocks_verified)
		fprintf(out, "  integrity: %" PRIu64 " checksum blocks verified%s\n", h->blocks_verified,
			h->damage ? ", damage found" : "");
	else if (grt_format_has_checksums(h->file->version_major, h->file->version_minor))
		fprintf(out, "  integrity: no checksum block verified (format %u.%u: the file ends "
			"before its first checksum record)\n",
			h->file->version_major, h->file->version_minor);
	else
		fprintf(out, "  integrity: no integrity data (format %u.%u has no checksums)\n",
			h->file->version_major, h->file->version_minor);
	if (h->own_records)
		fprintf(out, "  own work: %" PRIu64 " records of grtrace's own work in the target (calibration, "
			"probe collection) %s\n", h->own_records,
			h->own_shown ? "shown as the program's (--own)" : "left out; --own shows them");
	print_warnings(h, out);
}

static void json_sources(const struct report_header *h, struct json_writer *w)
{
	jw_begin_array(w);
	for (int i = 0; i < GRT_SRC_MAX; i++) {
		if (!source_listed(h, i))
			continue;
		jw_begin_object(w);
		jw_field_string(w, "name", grt_source_name(i));
		jw_key(w, "status");
		if (h->status_seen[i])
			jw_i64(w, h->status[i]);
		else
			jw_null(w);
		jw_field_string(w, "message", h->status_message[i]);
		jw_end_object(w);
	}
	jw_end_array(w);
}

void report_header_print_json(const struct report_header *h, struct json_writer *w)
{
	const struct grt_file_header *f = h->file;

	jw_begin_object(w);
	jw_field_string(w, "file", h->path);
	jw_field_string(w, "host", f->hostname);
	jw_field_string(w, "kernel", f->kernel_release);
	jw_field_string(w, "driver", f->driver_version);
	jw_field_string(w, "cuda", f->cuda_version);
	jw_field_string(w, "command", f->command_line);
	jw_field_u64(w, "target_pid", f->target_pid);
	jw_field_u64(w, "start_realtime_ns", f->start_realtime_ns);
	jw_field_u64(w, "duration_ns", duration_ns(h));
	jw_key(w, "sources");
	json_sources(h, w);
	/* one launch return in N was recorded; null: the trace does not say (every one) */
	jw_key(w, "launch_returns");
	if (h->have_cuda_config)
		jw_u64(w, h->launch_return_every);
	else
		jw_null(w);
	jw_field_u64(w, "records", h->records);
	jw_field_u64(w, "own_records", h->own_records);
	jw_key(w, "own_shown");
	jw_bool(w, h->own_shown);
	jw_key(w, "trailer_records");
	if (h->have_trailer)
		jw_u64(w, h->trailer.records);
	else
		jw_null(w);
	jw_key(w, "complete");
	jw_bool(w, report_header_complete(h));
	jw_field_string(w, "end_reason", h->have_trailer ? grt_end_reason_name(h->trailer.reason) : NULL);
	jw_key(w, "write_error");
	jw_bool(w, (f->flags & GRT_HDR_WRITE_ERROR) != 0);
	jw_field_string(w, "error", h->read_error);
	jw_field_u64(w, "checksum_blocks_verified", h->blocks_verified);
	jw_field_string(w, "damage", h->damage);
	jw_end_object(w);
}
