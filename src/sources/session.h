/* A recording session: the target, where events go, the poll loop sources plug into. */
#ifndef GRT_SESSION_H
#define GRT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "trace/grt_format.h"
#include "trace/grt_writer.h"

/*
 * Where a session's records go: the .grt writer for `record`, a live printer
 * for `snoop`/`top`. Sources only see this interface.
 */
struct grt_sink {
	int (*append)(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *origin,
		      const void *payload, uint32_t len);
	uint32_t (*intern)(struct grt_sink *sink, const char *text);
	int (*drop)(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts_ns);
};

/* A source option as given on the command line: --name value ("" for a flag). */
struct grt_source_option_value {
	const char *name;
	const char *value;
};

struct grt_session_config {
	pid_t target_pid;	 /* process to trace (with its descendants); 0 = every process */
	/*
	 * --libcuda, or NULL to find it the way the loader does: the target's driver, which
	 * the cuda and gpu sources and the trace header all need.
	 */
	const char *libcuda_path;
	const char *const *target_env; /* environment of a launched target (LD_LIBRARY_PATH) or NULL */
	bool launched;		 /* target is a command we started and hold at a barrier */
	/*
	 * record -a: every process, and the cuda source probes every libcuda
	 * file a process maps, at start and whenever one appears.
	 */
	bool system_wide;
	/* the sources' own options (struct grt_source_option), as given; read with grt_session_option() */
	const struct grt_source_option_value *options;
	unsigned noptions;
};

struct grt_session;

struct grt_session *grt_session_new(const struct grt_session_config *cfg, struct grt_sink *sink);
void grt_session_free(struct grt_session *s);

const struct grt_session_config *grt_session_config(const struct grt_session *s);
/* The value of source option --name ("" for a flag given), or NULL when it was not given. */
const char *grt_session_option(const struct grt_session *s, const char *name);
/*
 * Every value of a source option that may be given more than once (--bpf A --bpf B), in
 * command-line order: up to max of them into values; returns how many were given.
 */
unsigned grt_session_option_values(const struct grt_session *s, const char *name,
				   const char **values, unsigned max);

/* Event output for sources. */
int grt_session_emit(struct grt_session *s, uint16_t type, const struct grt_event_origin *origin,
		     const void *payload, uint32_t len);
uint32_t grt_session_intern(struct grt_session *s, const char *text);
/* A source_status record of source, now, about process pid (0: none): what it did or could not. */
void grt_session_status(struct grt_session *s, enum grt_source_id source, uint32_t pid, int status,
			const char *message);
/* Counts lost events of a source; written as a drop record at the next tick. */
void grt_session_count_drop(struct grt_session *s, enum grt_source_id source, uint64_t count);
/* Any event at all resets the idle timer; sources call this through emit already. */
uint64_t grt_session_events(const struct grt_session *s);

/*
 * Calls on_ready(ctx) from the session loop whenever fd is readable (a BPF
 * ring buffer's epoll fd, a device file). Returns 0 or a negative errno.
 */
int grt_session_watch_fd(struct grt_session *s, int fd, int (*on_ready)(void *ctx), void *ctx);

/*
 * The map of traced process ids (tgid -> 1) that every BPF source filters on;
 * its fd is created once per session. A source passes it to
 * bpf_map__reuse_fd() on its own `traced_tgids` map before loading.
 */
int grt_session_pid_map_fd(const struct grt_session *s);

/*
 * Environment a source needs in a launched target (LD_PRELOAD=..., K=V).
 * Only meaningful before the target is released; copied. 0 or -ENOMEM/-ENOSPC.
 */
int grt_session_add_target_env(struct grt_session *s, const char *key_value);
/* The NULL-terminated list added so far (never NULL). */
const char *const *grt_session_target_env(const struct grt_session *s);

/*
 * Says which of its mechanisms a source attaching now used ("fexit:pci_..."): the source's
 * status record reads "attached: HOW". Call from attach.
 */
void grt_session_attached_how(struct grt_session *s, const char *how);

/* Records why a source failed: one line, shown by the command. Returns -err. */
int grt_session_fail(struct grt_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *grt_session_error(const struct grt_session *s);

/* Attaches the named sources (comma-separated); fails on the first that cannot attach. */
int grt_session_attach(struct grt_session *s, const char *source_list);
/* Runs one loop iteration: waits up to timeout_ms for fds, drains sources. */
int grt_session_poll(struct grt_session *s, int timeout_ms);
/* Drains every source one last time and detaches them. */
void grt_session_detach_all(struct grt_session *s);

#endif
