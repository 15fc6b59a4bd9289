/* User-space helpers every BPF source shares: availability probe, errors, pid filter, ring buffers. */
#ifndef GRT_BPF_UTIL_H
#define GRT_BPF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <bpf/libbpf.h>

struct grt_session;

/* 0 when this process may load BPF programs; else -EPERM/-ENOSYS with a fix in why. */
int grt_bpf_probe(char *why, size_t why_len);

/* Routes libbpf's messages into a buffer instead of stderr; the last warning is kept. */
void grt_bpf_capture_messages(void);
const char *grt_bpf_last_message(void);

/*
 * Points obj's `traced_tgids` map at the session's shared map and sets the
 * filter flag the program reads. Call between open and load.
 * filter_flag is the skeleton's rodata->filter_by_tgid.
 */
int grt_bpf_use_pid_filter(struct grt_session *s, struct bpf_object *obj, volatile bool *filter_flag);

/*
 * Creates a ring buffer reader on map_fd whose records go to on_event, and
 * registers it with the session loop. The returned ring_buffer is freed by
 * ring_buffer__free in the source's detach.
 */
struct ring_buffer *grt_bpf_watch_ringbuf(struct grt_session *s, int map_fd, ring_buffer_sample_fn on_event,
					  void *ctx);

/*
 * Sums the per-CPU `dropped_events` counter of map_fd and returns how many
 * were lost since *last_total (which it updates): the number for
 * grt_session_count_drop().
 */
unsigned long long grt_bpf_new_drops(int map_fd, unsigned long long *last_total);

/*
 * For every thread of the traced processes (of every process but this one
 * when recording system-wide) that has a value in the BPF task storage map
 * map_fd, copies it into value (the map's value size) and calls
 * on_value(tid, value, ctx). Task storage is looked up through a thread
 * pidfd (Linux 6.9+; before, only main threads are found). What a source
 * uses at detach to report the calls its threads are still inside.
 */
void grt_bpf_foreach_task_value(struct grt_session *s, int map_fd, void *value,
				void (*on_value)(pid_t tid, void *value, void *ctx), void *ctx);

/* Whether a tracepoint exists here (tracefs is mounted on demand). */
bool grt_tracepoint_exists(const char *category, const char *name);

/* Mounts tracefs at /sys/kernel/tracing when nothing is there; 0 or negative errno. */
int grt_ensure_tracefs(void);

#endif
