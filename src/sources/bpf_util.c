/* User-space helpers shared by the BPF sources. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "sources/bpf_util.h"
#include "sources/session.h"

static char last_message[512];

int grt_bpf_probe(char *why, size_t why_len)
{
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "grt_probe", 4, 4, 1, NULL);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EPERM || errno == EACCES) {
		snprintf(why, why_len, "loading BPF needs root or CAP_BPF+CAP_PERFMON (run with sudo)");
		return -EPERM;
	}
	snprintf(why, why_len, "this kernel has no usable BPF (bpf(2): %s)", strerror(errno));
	return -ENOSYS;
}

static int keep_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(last_message, sizeof(last_message), fmt, ap);
	last_message[strcspn(last_message, "\n")] = 0;
	return 0;
}

void grt_bpf_capture_messages(void)
{
	libbpf_set_print(keep_message);
}

const char *grt_bpf_last_message(void)
{
	return last_message;
}

int grt_bpf_use_pid_filter(struct grt_session *s, struct bpf_object *obj, volatile bool *filter_flag)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "traced_tgids");
	int fd = grt_session_pid_map_fd(s);

	*filter_flag = grt_session_config(s)->target_pid != 0;
	if (!map || fd < 0)
		return map ? fd : -ENOENT;
	return bpf_map__reuse_fd(map, fd);
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd for a thread, not only a process */
#endif

struct task_walk {
	int map_fd;
	void *value;
	void (*on_value)(pid_t tid, void *value, void *ctx);
	void *ctx;
};

static void walk_thread(const struct task_walk *w, pid_t tid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	if (pidfd < 0 && errno == EINVAL)
		pidfd = (int)syscall(SYS_pidfd_open, tid, 0); /* older kernel: main threads only */
	if (pidfd < 0)
		return;
	if (!bpf_map_lookup_elem(w->map_fd, &pidfd, w->value))
		w->on_value(tid, w->value, w->ctx);
	close(pidfd);
}

static void walk_process(const struct task_walk *w, pid_t tgid)
{
	char path[64];
	struct dirent *d;
	DIR *tasks;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	if (!(tasks = opendir(path)))
		return;
	while ((d = readdir(tasks)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			walk_thread(w, (pid_t)atoi(d->d_name));
	closedir(tasks);
}

void grt_bpf_foreach_task_value(struct grt_session *s, int map_fd, void *value,
				void (*on_value)(pid_t tid, void *value, void *ctx), void *ctx)
{
	const struct task_walk w = {map_fd, value, on_value, ctx};
	int pids = grt_session_pid_map_fd(s);
	__u32 key, next, *prev = NULL;
	struct dirent *d;
	DIR *proc;

	if (grt_session_config(s)->target_pid) {
		while (pids >= 0 && !bpf_map_get_next_key(pids, prev, &next)) {
			key = next;
			prev = &key;
			walk_process(&w, (pid_t)key);
		}
		return;
	}
	if (!(proc = opendir("/proc")))
		return;
	while ((d = readdir(proc)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9' && atoi(d->d_name) != getpid())
			walk_process(&w, (pid_t)atoi(d->d_name));
	closedir(proc);
}

static int drain_ringbuf(void *ctx)
{
	int n = ring_buffer__consume(ctx);

	return n < 0 ? n : 0;
}

struct ring_buffer *grt_bpf_watch_ringbuf(struct grt_session *s, int map_fd, ring_buffer_sample_fn on_event,
					  void *ctx)
{
	struct ring_buffer *rb = ring_buffer__new(map_fd, on_event, ctx, NULL);

	if (!rb)
		return NULL;
	if (grt_session_watch_fd(s, ring_buffer__epoll_fd(rb), drain_ringbuf, rb)) {
		ring_buffer__free(rb);
		return NULL;
	}
	return rb;
}

unsigned long long grt_bpf_new_drops(int map_fd, unsigned long long *last_total)
{
	int ncpus = libbpf_num_possible_cpus();
	unsigned long long total = 0, fresh;
	__u32 zero = 0;

	if (ncpus <= 0)
		return 0;
	{
		__u64 values[ncpus];

		if (bpf_map_lookup_elem(map_fd, &zero, values))
			return 0;
		for (int i = 0; i < ncpus; i++)
			total += values[i];
	}
	fresh = total - *last_total;
	*last_total = total;
	return fresh;
}

int grt_ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0)
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		return 0;
	return -errno;
}

bool grt_tracepoint_exists(const char *category, const char *name)
{
	char path[256];

	if (grt_ensure_tracefs())
		return false;
	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s", category, name);
	return access(path, F_OK) == 0;
}
