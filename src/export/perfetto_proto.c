/* The timeline as Perfetto's native protobuf: track descriptors, then interned, delta-timed track events. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_util.h"
#include "common/pb_writer.h"
#include "common/u64_map.h"
#include "export/perfetto.h"
#include "export/perfetto_model.h"
#include "export/perfetto_proto_fields.h"
#include "trace/records_cuda.h"

/*
 * Tracks: a process track per traced process (ProcessDescriptor) with its
 * threads (ThreadDescriptor: API calls as slices), an off-CPU track per
 * thread (a child of the thread's track, so the UI shows it beside the
 * thread), counter tracks for device memory and UVM bytes and a track for
 * UVM events under the process; a root track per GPU with a child track per
 * stream lane and the PCIe / NVLink counters; a root track for Xid errors.
 * uuids count from 1.
 *
 * Size and speed come from sequences: every track that has events writes
 * them on a packet sequence of its own, whose first packet sets the track as
 * the default track_uuid and an incremental clock (a ClockSnapshot pairing
 * sequence clock 64 with CLOCK_MONOTONIC) as the default clock. An event is
 * then its type, a name iid and a timestamp delta of two or three bytes: a
 * thread's calls, a lane's kernels and a counter's samples come in time
 * order on their track. The rare event earlier than its sequence's last one
 * (a nested call recorded when the outer one returns) carries its absolute
 * CLOCK_MONOTONIC time instead. Strings are interned per sequence, each
 * defined in the first packet that uses it; iids are trace-wide string ids.
 */
#define OUT_BUFFER (1u << 20)
#define MAX_ANNOTATIONS 8
#define STRING_CACHE 256
/* The largest TrackEvent: type, name, category, counter, flows and every annotation at its widest. */
#define EVENT_MAX (5 * 11 + 2 * 10 + 26 + MAX_ANNOTATIONS * 26)

enum track_kind {
	TK_PROCESS = 1,
	TK_THREAD,
	TK_OFFCPU,
	TK_MEMORY,
	TK_UVM_MIGRATED,
	TK_UVM_EVENTS,
	TK_GPU,
	TK_LINK,	/* id: device << 2 | link << 1 | rx */
	TK_XID,
	TK_LANE,	/* id: the lane's id */
};

struct track {
	uint64_t uuid;
	uint32_t seq;		/* its packet sequence, 0 until its first event */
	bool named;		/* process and thread tracks: declared with their name */
	uint64_t last_ts;	/* of the sequence's incremental clock */
	uint64_t *defined;	/* bit string id * 4 + interned table: defined on the sequence */
	size_t defined_words;
};

/* InternedData tables: a string is defined on a sequence per table (track.defined). */
enum interned_table {
	IT_EVENT_NAMES,
	IT_CATEGORIES,
	IT_ANNOTATION_NAMES,
	IT_ANNOTATION_STRINGS,
};

struct annotation {
	uint64_t name;		/* string id */
	uint32_t field;		/* ANNOTATION_UINT, _INT, _POINTER or _STRING_IID (then value is a string id) */
	uint64_t value;
};

struct event {
	uint32_t type;
	uint64_t name;		/* string id, 0: none */
	uint64_t category;	/* string id, 0: none */
	uint64_t flow;		/* flow_ids: an arrow starts here */
	uint64_t end_flow;	/* terminating_flow_ids: an arrow ends here */
	uint64_t fan_in_flow;	/* a graph launch's arrow to one of its nodes ends here */
	bool has_counter;
	int64_t counter;
	struct annotation ann[MAX_ANNOTATIONS];
	unsigned n_ann;
};

/* An event of type named name: everything else unset (the annotations' array left as it is). */
static inline void event_init(struct event *ev, uint32_t type, uint64_t name)
{
	ev->type = type;
	ev->name = name;
	ev->category = 0;
	ev->flow = 0;
	ev->end_flow = 0;
	ev->fan_in_flow = 0;
	ev->has_counter = false;
	ev->n_ann = 0;
}

struct proto_sink {
	struct pb_writer w;
	struct perfetto_stats stats;
	struct u64_map tracks;		/* kind << 56 | id -> struct track * */
	uint64_t next_uuid;
	uint32_t next_seq;
	struct name_table strings;	/* string id = index + 1 */
	struct u64_map ids_by_ptr;	/* strings that live as long as the export -> string id */
	struct {
		const char *text;
		uint64_t id;
	} recent[STRING_CACHE];		/* in front of ids_by_ptr, by address */
	int error;
};

/* ---- strings ---- */

static uint64_t text_id(struct proto_sink *e, const char *s)
{
	long i = name_table_intern(&e->strings, s ? s : "?");

	if (i < 0) {
		e->error = -ENOMEM;
		return 0;
	}
	return (uint64_t)i + 1;
}

/*
 * Static names, the trace's strings and the job builder's names, which all
 * live as long as the export (the trace's string table keeps every text it
 * handed out): one lookup by address.
 */
static uint64_t stable_id(struct proto_sink *e, const char *s)
{
	size_t slot = ((uintptr_t)s >> 3) % STRING_CACHE;
	uint64_t id;

	if (e->recent[slot].text == s)
		return e->recent[slot].id;
	if (!u64_map_get(&e->ids_by_ptr, (uintptr_t)s, &id)) {
		id = text_id(e, s);
		if (id && u64_map_put(&e->ids_by_ptr, (uintptr_t)s, id))
			e->error = -ENOMEM;
	}
	e->recent[slot].text = s;
	e->recent[slot].id = id;
	return id;
}

static const char *string_of(const struct proto_sink *e, uint64_t id)
{
	return e->strings.names[id - 1];
}

/* ---- tracks ---- */

static uint64_t track_key(enum track_kind kind, uint64_t id)
{
	return (uint64_t)kind << 56 | id;
}

static struct track *track_find(struct proto_sink *e, enum track_kind kind, uint64_t id)
{
	uint64_t v;

	return u64_map_get(&e->tracks, track_key(kind, id), &v) ? (struct track *)(uintptr_t)v : NULL;
}

static struct track *track_new(struct proto_sink *e, enum track_kind kind, uint64_t id)
{
	struct track *t = calloc(1, sizeof(*t));

	if (!t || u64_map_put(&e->tracks, track_key(kind, id), (uintptr_t)t)) {
		free(t);
		e->error = -ENOMEM;
		return NULL;
	}
	t->uuid = ++e->next_uuid;
	return t;
}

static void descriptor_begin(struct proto_sink *e, const struct track *t, const struct track *parent,
			     const char *name)
{
	pb_begin(&e->w, TRACE_PACKET);
	pb_begin(&e->w, PACKET_TRACK_DESCRIPTOR);
	pb_varint(&e->w, TRACK_UUID, t->uuid);
	if (parent)
		pb_varint(&e->w, TRACK_PARENT_UUID, parent->uuid);
	if (name)
		pb_string(&e->w, TRACK_NAME, name);
}

static void descriptor_end(struct proto_sink *e)
{
	pb_end(&e->w);
	pb_end(&e->w);
	e->stats.packets++;
}

static void process_descriptor(struct proto_sink *e, struct track *t, uint32_t pid, const char *comm)
{
	descriptor_begin(e, t, NULL, NULL);
	pb_begin(&e->w, TRACK_PROCESS);
	pb_varint(&e->w, PROCESS_PID, pid);
	if (comm)
		pb_string(&e->w, PROCESS_NAME, comm);
	pb_end(&e->w);
	descriptor_end(e);
	t->named = comm != NULL;
}

/* A process's track; declared again when its name becomes known (same uuid: the name is added). */
static struct track *process_track(struct proto_sink *e, uint32_t pid, const char *comm)
{
	struct track *t = track_find(e, TK_PROCESS, pid);

	if (!t) {
		t = track_new(e, TK_PROCESS, pid);
		if (t)
			process_descriptor(e, t, pid, comm);
	} else if (!t->named && comm) {
		process_descriptor(e, t, pid, comm);
	}
	return t;
}

static void thread_descriptor(struct proto_sink *e, struct track *t, uint32_t pid, uint32_t tid,
			      const char *comm)
{
	descriptor_begin(e, t, NULL, NULL);
	pb_begin(&e->w, TRACK_THREAD);
	pb_varint(&e->w, THREAD_PID, pid);
	pb_varint(&e->w, THREAD_TID, tid);
	if (comm)
		pb_string(&e->w, THREAD_NAME, comm);
	pb_end(&e->w);
	descriptor_end(e);
	t->named = comm != NULL;
}

static struct track *thread_track(struct proto_sink *e, uint32_t pid, uint32_t tid, const char *comm)
{
	struct track *t = track_find(e, TK_THREAD, tid);

	if (t && (t->named || !comm))
		return t;
	process_track(e, pid, tid == pid ? comm : NULL);
	if (!t && !(t = track_new(e, TK_THREAD, tid)))
		return NULL;
	thread_descriptor(e, t, pid, tid, comm);
	return t;
}

/* A named track under parent (NULL: a root track), a counter track when unit is set. */
static struct track *child_track(struct proto_sink *e, enum track_kind kind, uint64_t id,
				 const struct track *parent, const char *name, uint32_t unit,
				 const char *unit_name)
{
	struct track *t = track_find(e, kind, id);

	if (t || !(t = track_new(e, kind, id)))
		return t;
	descriptor_begin(e, t, parent, name);
	if (unit || unit_name) {
		pb_begin(&e->w, TRACK_COUNTER);
		if (unit)
			pb_varint(&e->w, COUNTER_UNIT, unit);
		if (unit_name)
			pb_string(&e->w, COUNTER_UNIT_NAME, unit_name);
		pb_end(&e->w);
	}
	if (kind == TK_GPU) /* lanes of one stream side by side */
		pb_varint(&e->w, TRACK_CHILD_ORDERING, CHILD_ORDERING_LEXICOGRAPHIC);
	descriptor_end(e);
	return t;
}

static struct track *gpu_track(struct proto_sink *e, uint32_t device)
{
	char name[32];

	return child_track(e, TK_GPU, device, NULL, pf_gpu_name(device, name, sizeof(name)), 0, NULL);
}

/* ---- packets ---- */

/*
 * A sequence's first packet: it clears the sequence's state and sets the
 * defaults every later packet of it relies on.
 */
static void sequence_start(struct proto_sink *e, struct track *t, uint64_t ts)
{
	t->seq = ++e->next_seq;
	t->last_ts = ts;
	pb_begin(&e->w, TRACE_PACKET);
	pb_varint(&e->w, PACKET_SEQUENCE_ID, t->seq);
	pb_varint(&e->w, PACKET_SEQUENCE_FLAGS,
		  SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
	pb_begin(&e->w, PACKET_CLOCK_SNAPSHOT);
	pb_begin(&e->w, SNAPSHOT_CLOCKS);
	pb_varint(&e->w, CLOCK_ID, SEQUENCE_CLOCK_INCREMENTAL);
	pb_varint(&e->w, CLOCK_TIMESTAMP, ts);
	pb_bool(&e->w, CLOCK_IS_INCREMENTAL, true);
	pb_end(&e->w);
	pb_begin(&e->w, SNAPSHOT_CLOCKS);
	pb_varint(&e->w, CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	pb_varint(&e->w, CLOCK_TIMESTAMP, ts);
	pb_end(&e->w);
	pb_end(&e->w);
	pb_begin(&e->w, PACKET_DEFAULTS);
	pb_varint(&e->w, DEFAULTS_TIMESTAMP_CLOCK_ID, SEQUENCE_CLOCK_INCREMENTAL);
	pb_begin(&e->w, DEFAULTS_TRACK_EVENT);
	pb_varint(&e->w, EVENT_DEFAULTS_TRACK_UUID, t->uuid);
	pb_end(&e->w);
	pb_end(&e->w);
	pb_end(&e->w);
	e->stats.packets++;
}

struct fresh_string {
	uint32_t table;		/* enum interned_table */
	uint64_t id;
};

/* Notes id as used in table on t's sequence; true when the sequence did not have it yet. */
static bool first_use(struct proto_sink *e, struct track *t, uint32_t table, uint64_t id,
		      struct fresh_string *fresh, unsigned *n_fresh)
{
	uint64_t bit = id * 4 + table;
	size_t word = bit / 64, words;
	uint64_t *more;

	if (!id)
		return false;
	if (word >= t->defined_words) {
		words = word + 1 > 2 * t->defined_words ? word + 1 : 2 * t->defined_words;
		more = realloc(t->defined, words * sizeof(*more));
		if (!more) {
			e->error = -ENOMEM;
			return false;
		}
		memset(more + t->defined_words, 0, (words - t->defined_words) * sizeof(*more));
		t->defined = more;
		t->defined_words = words;
	}
	if (t->defined[word] & (1ull << bit % 64))
		return false;
	t->defined[word] |= 1ull << bit % 64;
	fresh[*n_fresh] = (struct fresh_string){ table, id };
	(*n_fresh)++;
	return true;
}

static void write_interned(struct proto_sink *e, const struct fresh_string *fresh, unsigned n)
{
	static const uint32_t fields[] = {
		[IT_EVENT_NAMES] = INTERNED_EVENT_NAMES,
		[IT_CATEGORIES] = INTERNED_CATEGORIES,
		[IT_ANNOTATION_NAMES] = INTERNED_ANNOTATION_NAMES,
		[IT_ANNOTATION_STRINGS] = INTERNED_ANNOTATION_STRINGS,
	};

	pb_begin(&e->w, PACKET_INTERNED_DATA);
	for (unsigned i = 0; i < n; i++) {
		pb_begin(&e->w, fields[fresh[i].table]);
		pb_varint(&e->w, INTERNED_IID, fresh[i].id);
		pb_string(&e->w, INTERNED_TEXT, string_of(e, fresh[i].id));
		pb_end(&e->w);
	}
	pb_end(&e->w);
}

/* The TrackEvent, encoded aside: EVENT_MAX bytes hold the largest one. */
static size_t track_event_bytes(uint8_t *d, const struct event *ev)
{
	size_t n = pb_put_field_varint(d, EVENT_TYPE, ev->type);

	if (ev->name)
		n += pb_put_field_varint(d + n, EVENT_NAME_IID, ev->name);
	if (ev->category)
		n += pb_put_field_varint(d + n, EVENT_CATEGORY_IIDS, ev->category);
	if (ev->has_counter)
		n += pb_put_field_varint(d + n, EVENT_COUNTER_VALUE, (uint64_t)ev->counter);
	if (ev->flow)
		n += pb_put_field_fixed64(d + n, EVENT_FLOW_IDS, ev->flow);
	if (ev->end_flow)
		n += pb_put_field_fixed64(d + n, EVENT_TERMINATING_FLOW_IDS, ev->end_flow);
	if (ev->fan_in_flow) {
		uint8_t legacy[24];
		size_t k = pb_put_field_varint(legacy, LEGACY_BIND_ID, ev->fan_in_flow);

		k += pb_put_field_varint(legacy + k, LEGACY_FLOW_DIRECTION, LEGACY_FLOW_IN);
		n += pb_put_field_len(d + n, EVENT_LEGACY_EVENT, k);
		memcpy(d + n, legacy, k);
		n += k;
	}
	for (unsigned i = 0; i < ev->n_ann; i++) {
		uint8_t one[24];
		size_t k = pb_put_field_varint(one, ANNOTATION_NAME_IID, ev->ann[i].name);

		k += pb_put_field_varint(one + k, ev->ann[i].field, ev->ann[i].value);
		n += pb_put_field_len(d + n, EVENT_DEBUG_ANNOTATIONS, k);
		memcpy(d + n, one, k);
		n += k;
	}
	return n;
}

/*
 * The fields every event packet starts with: its time (a delta on the
 * sequence's incremental clock, or absolute when earlier than the
 * sequence's last), its sequence, and that it needs the sequence's state.
 */
static size_t packet_head(uint8_t *d, struct track *t, uint64_t ts)
{
	size_t n;

	if (ts >= t->last_ts) {
		n = pb_put_field_varint(d, PACKET_TIMESTAMP, ts - t->last_ts);
		t->last_ts = ts;
	} else {
		n = pb_put_field_varint(d, PACKET_TIMESTAMP, ts);
		n += pb_put_field_varint(d + n, PACKET_TIMESTAMP_CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	}
	n += pb_put_field_varint(d + n, PACKET_SEQUENCE_ID, t->seq);
	n += pb_put_field_varint(d + n, PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	return n;
}

/*
 * One event in one packet. Most packets define no string: they are put
 * together aside and copied out in one piece; a packet that defines strings
 * on its sequence goes through the nested writer.
 */
static void emit(struct proto_sink *e, struct track *t, uint64_t ts, const struct event *ev)
{
	struct fresh_string fresh[2 + 2 * MAX_ANNOTATIONS];
	unsigned n_fresh = 0;
	uint8_t body[EVENT_MAX + 64], *d;
	size_t head, evlen, len;

	if (!t)
		return;
	if (!t->seq)
		sequence_start(e, t, ts);
	first_use(e, t, IT_EVENT_NAMES, ev->name, fresh, &n_fresh);
	first_use(e, t, IT_CATEGORIES, ev->category, fresh, &n_fresh);
	for (unsigned i = 0; i < ev->n_ann; i++) {
		first_use(e, t, IT_ANNOTATION_NAMES, ev->ann[i].name, fresh, &n_fresh);
		if (ev->ann[i].field == ANNOTATION_STRING_IID)
			first_use(e, t, IT_ANNOTATION_STRINGS, ev->ann[i].value, fresh, &n_fresh);
	}
	head = packet_head(body, t, ts);
	/* after the event's tag and a one-byte length: events are shorter than 128 bytes */
	evlen = track_event_bytes(body + head + 2, ev);
	e->stats.packets++;
	e->stats.events++;
	if (n_fresh) {
		pb_begin(&e->w, TRACE_PACKET);
		pb_raw(&e->w, body, head);
		write_interned(e, fresh, n_fresh);
		pb_bytes(&e->w, PACKET_TRACK_EVENT, body + head + 2, evlen);
		pb_end(&e->w);
		return;
	}
	if (evlen >= 0x80)
		memmove(body + head + 3, body + head + 2, evlen);
	len = head + pb_put_field_len(body + head, PACKET_TRACK_EVENT, evlen) + evlen;
	d = pb_room(&e->w, len + 11);
	if (!d)
		return;
	d += pb_put_field_len(d, TRACE_PACKET, len);
	memcpy(d, body, len);
	e->w.len = (size_t)(d + len - e->w.buf);
}

static void annotate(struct proto_sink *e, struct event *ev, const char *key, uint32_t field,
		     uint64_t value)
{
	if (ev->n_ann < MAX_ANNOTATIONS)
		ev->ann[ev->n_ann++] = (struct annotation){ stable_id(e, key), field, value };
}

static void slice(struct proto_sink *e, struct track *t, uint64_t start, uint64_t end,
		  struct event *begin)
{
	static const struct event finish = { .type = TYPE_SLICE_END };

	begin->type = TYPE_SLICE_BEGIN;
	emit(e, t, start, begin);
	emit(e, t, end, &finish);
}

/* ---- host side ---- */

static bool sync_names_stream(uint32_t kind)
{
	return kind == GRT_SYNC_STREAM || kind == GRT_SYNC_STREAM_WAIT_EVENT ||
	       kind == GRT_SYNC_EVENT_RECORD || kind == GRT_SYNC_STREAM_QUERY;
}

static bool sync_names_event(uint32_t kind)
{
	return kind == GRT_SYNC_EVENT || kind == GRT_SYNC_STREAM_WAIT_EVENT ||
	       kind == GRT_SYNC_EVENT_RECORD || kind == GRT_SYNC_EVENT_QUERY;
}

/* A call: a slice on its thread (an instant when it has no return), the arrow to its job. */
static void on_call(void *ctx, const struct pf_call *c)
{
	struct proto_sink *e = ctx;
	struct track *t = thread_track(e, c->pid, c->tid, c->comm);
	struct event ev;

	event_init(&ev, TYPE_SLICE_BEGIN, stable_id(e, c->api));
	ev.flow = c->flow;
	if (c->ret)
		annotate(e, &ev, "ret", ANNOTATION_INT, (uint64_t)(int64_t)c->ret);
	if (!c->returned)
		annotate(e, &ev, "note", ANNOTATION_STRING_IID,
			 stable_id(e, c->unsampled ? "return not sampled" : "never returned"));
	switch (c->detail) {
	case PF_DETAIL_KERNEL:
		if (c->kernel)
			annotate(e, &ev, "kernel", ANNOTATION_STRING_IID, stable_id(e, c->kernel));
		break;
	case PF_DETAIL_COPY:
		annotate(e, &ev, "bytes", ANNOTATION_UINT, c->bytes);
		annotate(e, &ev, "direction", ANNOTATION_STRING_IID, stable_id(e, c->kind));
		if (c->peer && c->src_device >= 0)
			annotate(e, &ev, "src_device", ANNOTATION_UINT, (uint64_t)c->src_device);
		if (c->peer && c->dst_device >= 0)
			annotate(e, &ev, "dst_device", ANNOTATION_UINT, (uint64_t)c->dst_device);
		if (c->link)
			annotate(e, &ev, "link", ANNOTATION_STRING_IID, stable_id(e, c->link));
		break;
	case PF_DETAIL_SYNC:
		if (sync_names_stream(c->sync))
			annotate(e, &ev, "stream", ANNOTATION_POINTER, c->stream);
		if (sync_names_event(c->sync))
			annotate(e, &ev, "event", ANNOTATION_POINTER, c->event);
		break;
	case PF_DETAIL_NONE:
		break;
	}
	if (c->returned) {
		slice(e, t, c->start, c->end, &ev);
	} else {
		ev.type = TYPE_INSTANT;
		emit(e, t, c->start, &ev);
	}
}

static void counter(struct proto_sink *e, struct track *t, uint64_t ts, uint64_t value)
{
	struct event ev;

	event_init(&ev, TYPE_COUNTER, 0);
	ev.has_counter = true;
	ev.counter = (int64_t)value;
	emit(e, t, ts, &ev);
}

/* A counter of bytes under the process's track. */
static void process_bytes(struct proto_sink *e, enum track_kind kind, uint32_t pid,
			  const char *name, uint64_t ts, uint64_t bytes)
{
	counter(e, child_track(e, kind, pid, process_track(e, pid, NULL), name,
			       COUNTER_UNIT_SIZE_BYTES, NULL),
		ts, bytes);
}

static void on_memory(void *ctx, uint32_t pid, uint64_t ts, uint64_t in_use)
{
	process_bytes(ctx, TK_MEMORY, pid, "device memory in use", ts, in_use);
}

static void on_offcpu(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end,
		      bool blocked)
{
	struct proto_sink *e = ctx;
	struct track *t = track_find(e, TK_OFFCPU, tid);
	struct event ev;
	char name[48];

	event_init(&ev, TYPE_SLICE_BEGIN,
		   stable_id(e, blocked ? "off-CPU (blocked)" : "off-CPU (preempted)"));
	if (!t) {
		snprintf(name, sizeof(name), "off-CPU %u", tid);
		t = child_track(e, TK_OFFCPU, tid, thread_track(e, pid, tid, NULL), name, 0, NULL);
	}
	slice(e, t, start, end, &ev);
}

static void on_uvm(void *ctx, uint32_t pid, uint64_t ts, const char *kind, uint64_t address,
		   uint64_t bytes)
{
	struct proto_sink *e = ctx;
	struct track *t = child_track(e, TK_UVM_EVENTS, pid, process_track(e, pid, NULL), "UVM events",
				      0, NULL);
	struct event ev;

	event_init(&ev, TYPE_INSTANT, stable_id(e, kind));
	annotate(e, &ev, "address", ANNOTATION_POINTER, address);
	annotate(e, &ev, "bytes", ANNOTATION_UINT, bytes);
	emit(e, t, ts, &ev);
}

static void on_uvm_migrated(void *ctx, uint32_t pid, uint64_t ts, uint64_t total)
{
	process_bytes(ctx, TK_UVM_MIGRATED, pid, "UVM migrated", ts, total);
}

static void on_xid(void *ctx, uint64_t ts, uint32_t code, uint32_t device, const char *message)
{
	struct proto_sink *e = ctx;
	struct track *t = child_track(e, TK_XID, 0, NULL, "Xid errors", 0, NULL);
	struct event ev;
	char name[32];

	snprintf(name, sizeof(name), "Xid %u", code);
	event_init(&ev, TYPE_INSTANT, text_id(e, name));
	annotate(e, &ev, "device", ANNOTATION_UINT, device);
	if (message)
		annotate(e, &ev, "message", ANNOTATION_STRING_IID, text_id(e, message));
	emit(e, t, ts, &ev);
}

/* Throughput samples: a tx and an rx counter per link under the GPU's track. */
static void on_throughput(void *ctx, uint32_t device, enum pf_link link, uint64_t ts, uint64_t tx,
			  uint64_t rx)
{
	static const char *const names[2][2] = {
		[PF_LINK_PCIE] = { "PCIe tx", "PCIe rx" },
		[PF_LINK_NVLINK] = { "NVLink tx", "NVLink rx" },
	};
	struct proto_sink *e = ctx;
	struct track *gpu = gpu_track(e, device);
	char name[40];

	for (int rx_side = 0; rx_side < 2; rx_side++) {
		if (link < PF_LINK_NVLINK_PORT)
			snprintf(name, sizeof(name), "%s", names[link][rx_side]);
		else /* one link of the GPU */
			snprintf(name, sizeof(name), "NVLink %u %s", link - PF_LINK_NVLINK_PORT,
				 rx_side ? "rx" : "tx");
		counter(e,
			child_track(e, TK_LINK, (uint64_t)device << 8 | (uint64_t)link << 1 | rx_side,
				    gpu, name, 0, "bytes/s"),
			ts, rx_side ? rx : tx);
	}
}

static void on_process(void *ctx, uint32_t pid, const char *comm)
{
	process_track(ctx, pid, comm);
}

/* ---- GPU side ---- */

static void on_stream(void *ctx, struct pf_stream *s)
{
	gpu_track(ctx, s->device);
}

static void on_lane(void *ctx, struct pf_stream *s, struct pf_lane *lane)
{
	struct proto_sink *e = ctx;
	char name[96];

	lane->sink = child_track(e, TK_LANE, lane->id, gpu_track(e, s->device),
				 pf_lane_name(s, lane, name, sizeof(name)), 0, NULL);
}

static void job_annotations(struct proto_sink *e, struct event *ev, const struct job *j)
{
	char buf[160];

	annotate(e, ev, "job", ANNOTATION_UINT, j->id);
	if (j->group_id)
		annotate(e, ev, "group", ANNOTATION_UINT, j->group_id);
	if (j->tags)
		annotate(e, ev, "tags", ANNOTATION_STRING_IID,
			 text_id(e, job_tags_text(j, buf, sizeof(buf))));
	if ((j->known & JOB_K_GPU_WAIT) && j->t_gpu_wait)
		annotate(e, ev, "t_gpu_wait_ns", ANNOTATION_UINT, j->t_gpu_wait);
	if (j->t_vm_fault || j->vm_faults)
		annotate(e, ev, "t_vm_fault_ns", ANNOTATION_UINT, j->t_vm_fault);
	if (j->missing)
		annotate(e, ev, "incomplete", ANNOTATION_STRING_IID,
			 text_id(e, job_missing_text(j, buf, sizeof(buf))));
}

/*
 * A kernel or copy from START to END. The arrow from its launch ends here:
 * terminating_flow_ids closes it; a graph node's arrow ends without closing
 * (legacy_event FLOW_IN), so the one launch reaches each of its nodes.
 */
static void on_job(void *ctx, struct pf_stream *s, struct pf_lane *lane, const struct job *j,
		   bool flow)
{
	struct proto_sink *e = ctx;
	struct event ev;

	event_init(&ev, TYPE_SLICE_BEGIN, stable_id(e, j->name ? j->name : "?"));
	ev.category = stable_id(e, j->kind == JOB_KERNEL ? "kernel" : "copy");
	if (flow && j->group_id)
		ev.fan_in_flow = j->group_id;
	else if (flow)
		ev.end_flow = j->id;
	job_annotations(e, &ev, j);
	slice(e, lane->sink, j->start, j->start + j->t_exec, &ev);
}

static void sink_destroy(struct proto_sink *e)
{
	uint64_t k, v;

	for (size_t i = 0; u64_map_iter(&e->tracks, &i, &k, &v);) {
		struct track *t = (struct track *)(uintptr_t)v;

		free(t->defined);
		free(t);
	}
	u64_map_destroy(&e->tracks);
	u64_map_destroy(&e->ids_by_ptr);
	name_table_destroy(&e->strings);
}

/* The trace's time axis is CLOCK_MONOTONIC, the clock of every .grt timestamp. */
static void trace_clock(struct proto_sink *e)
{
	pb_begin(&e->w, TRACE_PACKET);
	pb_begin(&e->w, PACKET_CLOCK_SNAPSHOT);
	pb_begin(&e->w, SNAPSHOT_CLOCKS);
	pb_varint(&e->w, CLOCK_ID, BUILTIN_CLOCK_MONOTONIC);
	pb_varint(&e->w, CLOCK_TIMESTAMP, 0);
	pb_end(&e->w);
	pb_varint(&e->w, SNAPSHOT_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_MONOTONIC);
	pb_end(&e->w);
	pb_end(&e->w);
	e->stats.packets++;
}

int perfetto_proto_export(const char *trace_path, FILE *out, const struct job_thresholds *t,
			  struct perfetto_stats *stats, char *err, size_t err_len)
{
	static const struct pf_sink_ops ops = {
		.process = on_process, .call = on_call, .memory = on_memory, .offcpu = on_offcpu,
		.uvm = on_uvm, .uvm_migrated = on_uvm_migrated, .xid = on_xid,
		.throughput = on_throughput, .stream = on_stream, .lane = on_lane, .job = on_job,
	};
	struct proto_sink e = { 0 };
	int rc, write_rc;

	if (pb_writer_init(&e.w, out, OUT_BUFFER)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	u64_map_init(&e.tracks);
	u64_map_init(&e.ids_by_ptr);
	name_table_init(&e.strings);
	trace_clock(&e);
	rc = perfetto_model_run(trace_path, t, &ops, &e, &e.stats, err, err_len);
	if (!rc && e.error) {
		snprintf(err, err_len, "out of memory");
		rc = e.error;
	}
	e.stats.bytes = e.w.written + e.w.len;
	write_rc = pb_writer_finish(&e.w);
	if (!rc && (write_rc || fflush(out) || ferror(out))) {
		snprintf(err, err_len, "writing the output failed: %s",
			 strerror(write_rc ? -write_rc : errno));
		rc = -EIO;
	}
	*stats = e.stats;
	sink_destroy(&e);
	return rc;
}
