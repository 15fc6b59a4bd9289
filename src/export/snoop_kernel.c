/* Compact live lines for syscall (strace-like), NVIDIA ioctl, dma_fence and Xid records. */
#include <inttypes.h>
#include <string.h>
#include "export/snoop_duration.h"
#include "export/snoop_kernel.h"
#include "trace/kernel_names.h"
#include "trace/records_kernel.h"

#define SYSCALL_ERRNO_MAX 4096

void snoop_kernel_header(FILE *out, const char *source)
{
	if (!strcmp(source, "syscall"))
		fprintf(out, "%-14s %-15s %s\n", "time_s", "pid/tid", "call = return  duration");
	else if (!strcmp(source, "fence"))
		fprintf(out, "%-14s %-15s %-14s %-28s %s\n", "time_s", "pid/tid", "event", "driver/timeline",
			"context:seqno  wait");
	else if (!strcmp(source, "xid"))
		fprintf(out, "%-14s %-14s %5s  %s\n", "time_s", "device", "xid", "message");
}

static double rel_s(uint64_t ts, uint64_t base_ns)
{
	return ts >= base_ns ? (ts - base_ns) / 1e9 : 0;
}

static void print_ret(FILE *out, int64_t ret)
{
	if (ret < 0 && ret > -SYSCALL_ERRNO_MAX)
		fprintf(out, "-%s", strerrorname_np((int)-ret) ? strerrorname_np((int)-ret) : "E?");
	else if (ret > 0xffff || ret < 0)
		fprintf(out, "0x%" PRIx64, (uint64_t)ret);
	else
		fprintf(out, "%" PRId64, ret);
}

static void print_syscall(FILE *out, const struct grt_record *rec, uint64_t base_ns)
{
	const struct grt_syscall_rec *s = rec->payload;
	const char *name = grt_syscall_name(s->nr);

	fprintf(out, "%-14.6f %7u/%-7u ", rel_s(rec->hdr.ts_ns, base_ns), rec->hdr.pid, rec->hdr.tid);
	if (name)
		fprintf(out, "%s", name);
	else
		fprintf(out, "syscall_%u", s->nr);
	fprintf(out, "(0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64 ", ...)", s->args[0], s->args[1], s->args[2]);
	if (s->flags & GRT_SYSCALL_F_NO_RETURN) {
		fprintf(out, " = ?\n");
		return;
	}
	if (s->flags & GRT_SYSCALL_F_UNFINISHED) {
		fprintf(out, " <unfinished at stop>\n");
		return;
	}
	fprintf(out, " = ");
	print_ret(out, s->ret);
	snoop_print_duration(out, "  ", s->exit_ns - rec->hdr.ts_ns);
	fputc('\n', out);
}

static void print_nv_ioctl(FILE *out, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_nv_ioctl_rec *n = rec->payload;
	const char *op = grt_nv_op_name(n->device, n->op), *path = grt_strings_get(strings, n->path_str);

	fprintf(out, "%-30s `- %s", "", path ? path : grt_nv_device_name(n->device));
	if (op)
		fprintf(out, " %s", op);
	else
		fprintf(out, " op=0x%x", n->op);
	if (n->flags & GRT_NV_F_XFER)
		fprintf(out, " (xfer)");
	if (n->flags & GRT_NV_F_CLASS)
		fprintf(out, " class=0x%x", n->object_class);
	if (n->flags & GRT_NV_F_CMD)
		fprintf(out, " cmd=0x%x", n->control_cmd);
	if (n->flags & GRT_NV_F_HANDLE)
		fprintf(out, " handle=0x%x", n->handle);
	if (n->flags & GRT_NV_F_STATUS)
		fprintf(out, " status=0x%x", n->rm_status);
	fputc('\n', out);
}

static void print_fence(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
			uint64_t base_ns)
{
	const struct grt_fence_rec *f = rec->payload;
	const char *driver = grt_strings_get(strings, f->driver_str), *timeline = grt_strings_get(strings, f->timeline_str);
	char where[64];

	snprintf(where, sizeof(where), "%s/%s", driver ? driver : "?", timeline ? timeline : "?");
	fprintf(out, "%-14.6f %7u/%-7u %-14s %-28s %" PRIu64 ":%" PRIu64, rel_s(rec->hdr.ts_ns, base_ns),
		rec->hdr.pid, rec->hdr.tid, grt_fence_event_name(f->event), where, f->context, f->seqno);
	if (f->event == GRT_FENCE_WAIT_END && (f->flags & GRT_FENCE_F_WAIT_MATCHED))
		snoop_print_duration(out, "  ", f->wait_ns);
	fputc('\n', out);
}

static void print_xid(FILE *out, const struct grt_record *rec, const struct grt_strings *strings, uint64_t base_ns)
{
	const struct grt_xid_rec *x = rec->payload;
	const char *dev = grt_strings_get(strings, x->dev_str), *msg = grt_strings_get(strings, x->msg_str);

	fprintf(out, "%-14.6f %-14s %5u  %s\n", rel_s(rec->hdr.ts_ns, base_ns), dev ? dev : "?", x->code,
		msg ? msg : "");
}

bool snoop_kernel_print(FILE *out, const struct grt_record *rec, const struct grt_strings *strings,
			uint64_t base_ns)
{
	switch (rec->hdr.type) {
	case GRT_REC_SYSCALL:
		if (rec->hdr.payload_len >= sizeof(struct grt_syscall_rec))
			print_syscall(out, rec, base_ns);
		return true;
	case GRT_REC_NV_IOCTL:
		if (rec->hdr.payload_len >= sizeof(struct grt_nv_ioctl_rec))
			print_nv_ioctl(out, rec, strings);
		return true;
	case GRT_REC_FENCE:
		if (rec->hdr.payload_len >= sizeof(struct grt_fence_rec))
			print_fence(out, rec, strings, base_ns);
		return true;
	case GRT_REC_XID:
		if (rec->hdr.payload_len >= sizeof(struct grt_xid_rec))
			print_xid(out, rec, strings, base_ns);
		return true;
	default:
		return false;
	}
}
