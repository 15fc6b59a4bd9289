/* The recording session: attached sources, their fds in one epoll loop, drops, errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "common/clock.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_core.h"

#define MAX_SOURCES 16
#define MAX_WATCHES 64
#define MAX_TARGET_ENV 16

struct fd_watch {
	int fd;
	int (*on_ready)(void *ctx);
	void *ctx;
	/*
	 * Process tracking's: read after every other source's in each tick, so
	 * a process's exit record follows the calls it made just before exiting
	 * (they reach other rings first, but are read in the same tick).
	 */
	bool read_last;
};

struct attached_source {
	const struct grt_source *source;
	void *ctx;
};

struct grt_session {
	struct grt_session_config cfg;
	struct grt_sink *sink;
	int epoll_fd;
	int pid_map_fd;
	struct fd_watch watches[MAX_WATCHES];
	unsigned nwatches;
	struct attached_source sources[MAX_SOURCES];
	unsigned nsources;
	unsigned skipped;	/* requested sources this machine cannot run */
	char skip_notes[MAX_SOURCES][512];
	const struct grt_source *skipped_sources[MAX_SOURCES];
	uint64_t pending_drops[GRT_SRC_MAX];
	uint64_t events;
	bool attaching_implicit;	/* watches added now are read last */
	char *target_env[MAX_TARGET_ENV + 1];
	unsigned ntarget_env;
	char error[512];
	char attached_how[256];	/* what the source attaching now said it used */
};

struct grt_session *grt_session_new(const struct grt_session_config *cfg, struct grt_sink *sink)
{
	struct grt_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->sink = sink;
	s->pid_map_fd = -1;
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0) {
		free(s);
		return NULL;
	}
	return s;
}

void grt_session_free(struct grt_session *s)
{
	if (!s)
		return;
	grt_session_detach_all(s);
	if (s->pid_map_fd >= 0)
		close(s->pid_map_fd);
	for (unsigned i = 0; i < s->ntarget_env; i++)
		free(s->target_env[i]);
	close(s->epoll_fd);
	free(s);
}

const struct grt_session_config *grt_session_config(const struct grt_session *s)
{
	return &s->cfg;
}

const char *grt_session_option(const struct grt_session *s, const char *name)
{
	const char *value = NULL;

	/* the last one given wins, as for any repeated option */
	for (unsigned i = 0; i < s->cfg.noptions; i++)
		if (!strcmp(s->cfg.options[i].name, name))
			value = s->cfg.options[i].value;
	return value;
}

unsigned grt_session_option_values(const struct grt_session *s, const char *name,
				   const char **values, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->cfg.noptions; i++)
		if (!strcmp(s->cfg.options[i].name, name)) {
			if (n < max)
				values[n] = s->cfg.options[i].value;
			n++;
		}
	return n;
}

int grt_session_emit(struct grt_session *s, uint16_t type, const struct grt_event_origin *origin,
		     const void *payload, uint32_t len)
{
	s->events++;
	return s->sink->append(s->sink, type, origin, payload, len);
}

uint32_t grt_session_intern(struct grt_session *s, const char *text)
{
	return s->sink->intern(s->sink, text);
}

void grt_session_status(struct grt_session *s, enum grt_source_id source, uint32_t pid, int status,
			const char *message)
{
	struct grt_source_status_rec rec = {.source = source, .status = status};
	struct grt_event_origin origin = {.ts_ns = grt_monotonic_ns(), .pid = pid};

	rec.message_str = grt_session_intern(s, message);
	grt_session_emit(s, GRT_REC_SOURCE_STATUS, &origin, &rec, sizeof(rec));
}

void grt_session_count_drop(struct grt_session *s, enum grt_source_id source, uint64_t count)
{
	if (source < GRT_SRC_MAX)
		s->pending_drops[source] += count;
}

uint64_t grt_session_events(const struct grt_session *s)
{
	return s->events;
}

int grt_session_watch_fd(struct grt_session *s, int fd, int (*on_ready)(void *ctx), void *ctx)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (s->nwatches == MAX_WATCHES)
		return -ENOSPC;
	ev.data.u32 = s->nwatches;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	s->watches[s->nwatches++] = (struct fd_watch){
		.fd = fd, .on_ready = on_ready, .ctx = ctx, .read_last = s->attaching_implicit
	};
	return 0;
}

static int create_pid_map(struct grt_session *s)
{
	__u32 tgid = (__u32)s->cfg.target_pid;
	__u8 one = 1;

	s->pid_map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "traced_tgids", sizeof(__u32), sizeof(__u8),
				       8192, NULL);
	if (s->pid_map_fd < 0)
		return -errno;
	if (tgid && bpf_map_update_elem(s->pid_map_fd, &tgid, &one, BPF_ANY))
		return -errno;
	return 0;
}

int grt_session_pid_map_fd(const struct grt_session *s)
{
	return s->pid_map_fd;
}

int grt_session_add_target_env(struct grt_session *s, const char *key_value)
{
	if (s->ntarget_env == MAX_TARGET_ENV)
		return -ENOSPC;
	s->target_env[s->ntarget_env] = strdup(key_value);
	if (!s->target_env[s->ntarget_env])
		return -ENOMEM;
	s->ntarget_env++;
	return 0;
}

const char *const *grt_session_target_env(const struct grt_session *s)
{
	return (const char *const *)s->target_env;
}

int grt_session_fail(struct grt_session *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

const char *grt_session_error(const struct grt_session *s)
{
	return s->error;
}

/* Every requested source leaves a status record: the trace says what it could not see. */
static void emit_status(struct grt_session *s, const struct grt_source *src, int status,
			const char *message)
{
	struct grt_event_origin origin = { .ts_ns = grt_monotonic_ns() };
	struct grt_source_status_rec rec = { .source = src->id, .status = status };

	rec.message_str = grt_session_intern(s, message);
	s->sink->append(s->sink, GRT_REC_SOURCE_STATUS, &origin, &rec, sizeof(rec));
}

static void note_skipped(struct grt_session *s, const struct grt_source *src, int err, const char *why)
{
	snprintf(s->skip_notes[s->skipped], sizeof(s->skip_notes[0]), "%s", why);
	s->skipped_sources[s->skipped] = src;
	emit_status(s, src, err, why);
	s->skipped++;
}

/*
 * A source this machine cannot run (its probe says why, or its attach finds out and returns
 * -ENOTSUP) is skipped with a notice and a status record, so one missing feature does not cost
 * the others; a source that can run but fails to attach stops the session.
 */
static int attach_one(struct grt_session *s, const struct grt_source *src)
{
	char why[256] = "", status[sizeof(s->attached_how) + 16];
	void *ctx = NULL;
	int err;

	if (s->nsources == MAX_SOURCES)
		return grt_session_fail(s, -ENOSPC, "too many sources");
	err = src->probe(why, sizeof(why));
	if (err && src->implicit)
		return grt_session_fail(s, err, "%s", why);
	if (err) {
		note_skipped(s, src, err, why);
		return 0;
	}
	s->attached_how[0] = 0;
	s->attaching_implicit = src->implicit;
	err = src->attach(s, &ctx);
	s->attaching_implicit = false;
	if (err == -ENOTSUP && !src->implicit && s->error[0]) {
		note_skipped(s, src, err, s->error);
		s->error[0] = 0;
		return 0;
	}
	if (err) {
		if (!s->error[0])
			grt_session_fail(s, err, "source %s: attach failed: %s", src->name, strerror(-err));
		return err;
	}
	s->sources[s->nsources++] = (struct attached_source){ .source = src, .ctx = ctx };
	snprintf(status, sizeof(status), "attached%s%s", s->attached_how[0] ? ": " : "", s->attached_how);
	if (!src->implicit)
		emit_status(s, src, 0, status);
	return 0;
}

void grt_session_attached_how(struct grt_session *s, const char *how)
{
	snprintf(s->attached_how, sizeof(s->attached_how), "%s", how);
}

static int attach_implicit(struct grt_session *s)
{
	for (const struct grt_source *src = grt_source_next(NULL); src; src = grt_source_next(src)) {
		int err = src->implicit ? attach_one(s, src) : 0;

		if (err)
			return err;
	}
	return 0;
}

int grt_session_attach(struct grt_session *s, const char *source_list)
{
	char *list = strdup(source_list), *name, *save = NULL;
	unsigned requested = 0;
	int err;

	if (!list)
		return grt_session_fail(s, -ENOMEM, "out of memory");
	err = create_pid_map(s);
	if (err) {
		free(list);
		return grt_session_fail(s, err, "cannot create the traced-process map: %s", strerror(-err));
	}
	err = attach_implicit(s);
	for (name = strtok_r(list, ",", &save); name && !err; name = strtok_r(NULL, ",", &save)) {
		const struct grt_source *src = grt_source_find(name);

		err = src ? attach_one(s, src) : grt_session_fail(s, -EINVAL, "unknown source '%s'", name);
		requested++;
	}
	free(list);
	if (!err && requested == 1 && s->skipped == 1)
		return grt_session_fail(s, -EOPNOTSUPP, "source %s unavailable: %s",
					s->skipped_sources[0]->name, s->skip_notes[0]);
	if (!err && requested && requested == s->skipped)
		return grt_session_fail(s, -EOPNOTSUPP, "none of the requested sources can run here");
	for (unsigned i = 0; i < s->skipped && !err; i++)
		fprintf(stderr, "grtrace: note: source %s skipped: %s\n", s->skipped_sources[i]->name,
			s->skip_notes[i]);
	return err;
}

static void flush_drops(struct grt_session *s)
{
	uint64_t now = grt_monotonic_ns();

	for (unsigned i = 0; i < GRT_SRC_MAX; i++) {
		if (!s->pending_drops[i])
			continue;
		s->sink->drop(s->sink, i, s->pending_drops[i], now);
		s->pending_drops[i] = 0;
	}
}

static void drain_sources(struct grt_session *s)
{
	for (unsigned i = 0; i < s->nsources; i++)
		if (s->sources[i].source->drain)
			s->sources[i].source->drain(s->sources[i].ctx);
	flush_drops(s);
}

int grt_session_poll(struct grt_session *s, int timeout_ms)
{
	struct epoll_event ready[MAX_WATCHES];
	int n = epoll_wait(s->epoll_fd, ready, MAX_WATCHES, timeout_ms);

	if (n < 0 && errno != EINTR)
		return -errno;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			struct fd_watch *w = &s->watches[ready[i].data.u32];

			if (w->read_last == (pass == 1))
				w->on_ready(w->ctx);
		}
		/* the sources' own tick work (rings read without wakeups) before process exits */
		if (pass == 0)
			drain_sources(s);
	}
	return 0;
}

void grt_session_detach_all(struct grt_session *s)
{
	/*
	 * Last look at every fd: events that arrived just before the stop,
	 * the sources' own first and process exits after them.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < s->nwatches; i++)
			if (s->watches[i].read_last == (pass == 1))
				s->watches[i].on_ready(s->watches[i].ctx);
		if (pass == 0)
			drain_sources(s);
	}
	flush_drops(s);
	while (s->nsources) {
		struct attached_source *a = &s->sources[--s->nsources];

		a->source->detach(a->ctx);
	}
	s->nwatches = 0;
}
