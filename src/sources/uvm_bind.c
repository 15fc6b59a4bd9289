/* Process descriptor discovery (/proc/PID/fd, pidfd_getfd) and the tools tracker ioctls. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sources/uvm_bind.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int uvm_find_fds(pid_t pid, const char *device_path, int *fds, int max)
{
	char dir_path[64], link_path[352], target[4096];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)pid);
	dir = opendir(dir_path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir)) && n < max) {
		ssize_t len;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(link_path, sizeof(link_path), "%s/%s", dir_path, d->d_name);
		len = readlink(link_path, target, sizeof(target) - 1);
		if (len <= 0)
			continue; /* closed while we looked */
		target[len] = 0;
		/* exact match: /dev/nvidia-uvm-tools must not count */
		if (!strcmp(target, device_path))
			fds[n++] = atoi(d->d_name);
	}
	closedir(dir);
	qsort(fds, n, sizeof(*fds), cmp_int);
	return n;
}

int uvm_pidfd_open(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

int uvm_pidfd_getfd(int pidfd, int target_fd)
{
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, target_fd, 0);

	return fd < 0 ? -errno : fd;
}

int uvm_pidfd_exited(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

int uvm_check_available(const char *tools_path, const char *module_dir, char *why, size_t why_len)
{
	struct stat st;

	if (stat(tools_path, &st)) {
		int err = errno;

		if (err != ENOENT)
			snprintf(why, why_len, "cannot use %s: %s", tools_path, strerror(err));
		else if (!stat(module_dir, &st))
			snprintf(why, why_len,
				 "no %s although nvidia_uvm is loaded: create it (nvidia-modprobe "
				 "-u -c=0)",
				 tools_path);
		else
			snprintf(why, why_len,
				 "no %s: NVIDIA UVM driver not loaded (modprobe nvidia-uvm)",
				 tools_path);
		return -err;
	}
	if (geteuid() != 0) {
		snprintf(why, why_len,
			 "needs root: taking another process's %s descriptor (pidfd_getfd) "
			 "requires CAP_SYS_PTRACE",
			 UVM_DEVICE_PATH);
		return -EPERM;
	}
	return 0;
}

int uvm_check_target(pid_t pid, char *why, size_t why_len)
{
	int pidfd = uvm_pidfd_open(pid);
	int fd;

	if (pidfd == -ESRCH) {
		snprintf(why, why_len, "no process %d", (int)pid);
		return -ESRCH;
	}
	if (pidfd < 0) {
		snprintf(why, why_len, "pidfd_open(%d): %s", (int)pid, strerror(-pidfd));
		return pidfd;
	}
	/* any of its descriptors tells whether we may take them */
	fd = uvm_pidfd_getfd(pidfd, 0);
	close(pidfd);
	if (fd == -EPERM) {
		snprintf(why, why_len,
			 "not allowed to take pid %d's descriptors (pidfd_getfd needs root or "
			 "CAP_SYS_PTRACE over it)",
			 (int)pid);
		return -EPERM;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

void uvm_tracker_init(struct uvm_tracker *t)
{
	memset(t, 0, sizeof(*t));
	t->tools_fd = -1;
}

static void *map_shared_buffer(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The driver's answer as an errno: the kinds of refusal the caller acts on differently. */
static int status_errno(uint32_t status)
{
	switch (status) {
	case UVM_NV_OK:
		return 0;
	case UVM_NV_ERR_ILLEGAL_ACTION:
		return -EBADFD;
	case UVM_NV_ERR_INSUFFICIENT_PERMISSIONS:
		return -ENOTTY;
	case UVM_NV_ERR_NO_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* 570+: ioctl 76 makes a version-2 tracker. -EINVAL (errno) means the driver predates it. */
static int init_v2_570(struct uvm_tracker *t, int uvm_fd, uint32_t entries, uint32_t *nv_status)
{
	struct uvm_init_tracker_params p = {
	    .queue_buffer = (uintptr_t)t->entries,
	    .queue_entries = entries,
	    .control_buffer = (uintptr_t)t->ctrl,
	    .all_processors = entries == 0, /* counters: summed over every processor */
	    .uvm_fd = (uint32_t)uvm_fd,
	};

	if (ioctl(t->tools_fd, UVM_IOCTL_TOOLS_INIT_EVENT_TRACKER_V2, &p))
		return -errno;
	*nv_status = p.rm_status;
	return status_errno(p.rm_status);
}

/*
 * ioctl 56 with the 560 params. A 560 driver reads `version` and answers in
 * the last word; a driver without the version word (older than 550, or 570+)
 * makes a version-1 tracker and answers in the `version` slot, leaving the
 * last word as we set it. The sentinel there tells the two apart.
 */
static int init_ioctl56(struct uvm_tracker *t, int uvm_fd, uint32_t entries,
			enum uvm_queue_version want, uint32_t *nv_status,
			enum uvm_queue_version *got)
{
	const uint32_t sentinel = 0xfffffffeu;
	struct uvm_init_tracker_params_560 p = {
	    .queue_buffer = (uintptr_t)t->entries,
	    .queue_entries = entries,
	    .control_buffer = (uintptr_t)t->ctrl,
	    .all_processors = entries == 0,
	    .uvm_fd = (uint32_t)uvm_fd,
	    .version = want,
	    .rm_status = sentinel,
	};

	if (ioctl(t->tools_fd, UVM_IOCTL_TOOLS_INIT_EVENT_TRACKER, &p))
		return -errno;
	if (p.rm_status == sentinel) {
		*nv_status = p.version;
		*got = UVM_QUEUE_V1;
	} else {
		*nv_status = p.rm_status;
		*got = want;
	}
	return status_errno(*nv_status);
}

/*
 * A queue tracker of `entries` slots, or with entries 0 a counters tracker:
 * no queue, the control page holds the driver's 64-bit counters. Both are
 * made by the same init ioctls.
 */
static int tracker_create(struct uvm_tracker *t, const char *tools_path, int uvm_fd,
			  uint32_t entries, enum uvm_queue_version want, uint32_t *nv_status)
{
	enum uvm_queue_version got = entries ? UVM_QUEUE_V2 : UVM_QUEUE_V1;
	int err;

	uvm_tracker_init(t);
	*nv_status = UVM_NV_OK;
	t->tools_fd = open(tools_path, O_RDWR | O_CLOEXEC);
	if (t->tools_fd < 0)
		return -errno;
	/* sized for the larger entry: which version we get is known only afterwards */
	t->entries_len = (size_t)entries * UVM_ENTRY_V2_SIZE;
	t->entries = entries ? map_shared_buffer(t->entries_len) : NULL;
	t->ctrl = map_shared_buffer((size_t)sysconf(_SC_PAGESIZE));
	if ((entries && !t->entries) || !t->ctrl) {
		err = -ENOMEM;
		goto fail;
	}
	/* counters have no entry layout: any driver version makes them */
	err = want == UVM_QUEUE_V2 || !entries ? init_v2_570(t, uvm_fd, entries, nv_status)
					       : -EINVAL;
	if (err == -EINVAL) /* not a 570+ driver, or version 1 wanted */
		err = init_ioctl56(t, uvm_fd, entries, entries ? want : UVM_QUEUE_V1, nv_status,
				   &got);
	if (err)
		goto fail;
	t->version = got;
	if (!entries) {
		t->counters = (const volatile uint64_t *)t->ctrl;
		return 0;
	}
	t->queue = (struct uvm_queue){.ctrl = t->ctrl,
				      .entries = t->entries,
				      .count = entries,
				      .entry_size = (uint32_t)uvm_entry_size(got)};
	return 0;
fail:
	uvm_tracker_close(t);
	return err;
}

int uvm_tracker_open(struct uvm_tracker *t, const char *tools_path, int uvm_fd, uint32_t entries,
		     enum uvm_queue_version want, uint32_t *nv_status)
{
	if (entries < 2 || (entries & (entries - 1))) {
		uvm_tracker_init(t);
		*nv_status = UVM_NV_OK;
		return -EINVAL;
	}
	return tracker_create(t, tools_path, uvm_fd, entries, want, nv_status);
}

static int tools_ioctl(int fd, unsigned long cmd, void *params, uint32_t *rm_status)
{
	if (ioctl(fd, cmd, params))
		return -errno;
	return *rm_status == UVM_NV_OK ? 0 : -EIO;
}

uint64_t uvm_counters_read(const struct uvm_tracker *t, enum uvm_counter_name name)
{
	return t->counters && name < UVM_COUNTERS_TOTAL ? t->counters[name] : 0;
}

int uvm_tracker_enable(struct uvm_tracker *t, uint64_t mask, uint64_t *enabled)
{
	struct uvm_set_threshold_params th = {.threshold = 1};
	int err;

	/* wake the poller for every entry: the drain decides how much to batch */
	err = tools_ioctl(t->tools_fd, UVM_IOCTL_TOOLS_SET_NOTIFICATION_THRESHOLD, &th,
			  &th.rm_status);
	if (err)
		return err;
	/* an older driver refuses the whole mask for one type it lacks: drop the newest and retry
	 */
	for (int top = 63; mask && top > 0; top--) {
		struct uvm_enable_events_params ev = {.event_mask = mask};

		if (!(mask & (1ULL << top)))
			continue;
		err = tools_ioctl(t->tools_fd, UVM_IOCTL_TOOLS_EVENT_QUEUE_ENABLE_EVENTS, &ev,
				  &ev.rm_status);
		if (!err) {
			*enabled = mask;
			return 0;
		}
		mask &= ~(1ULL << top);
	}
	return err ? err : -EIO;
}

void uvm_tracker_close(struct uvm_tracker *t)
{
	/* closing the tools fd destroys the tracker and unpins our pages */
	if (t->tools_fd >= 0)
		close(t->tools_fd);
	if (t->entries)
		munmap(t->entries, t->entries_len);
	if (t->ctrl)
		munmap(t->ctrl, (size_t)sysconf(_SC_PAGESIZE));
	uvm_tracker_init(t);
}

/* Subscribes a fresh tracker: event types for a queue, counters for a counters tracker. */
static int tracker_subscribe(struct uvm_tracker *t, uint64_t mask)
{
	struct uvm_enable_counters_params en = {.counter_mask = mask};
	uint64_t enabled;

	if (!t->counters)
		return uvm_tracker_enable(t, mask, &enabled);
	return tools_ioctl(t->tools_fd, UVM_IOCTL_TOOLS_ENABLE_COUNTERS, &en, &en.rm_status);
}

/* The first of the process's UVM descriptors that takes a tracker of `entries` (0: counters). */
static int bind_first(struct uvm_tracker *t, const char *tools_path, int pidfd, const int *fds,
		      int nfds, uint32_t entries, uint64_t mask)
{
	int err = -ENOENT;

	for (int i = 0; i < nfds; i++) {
		int local = uvm_pidfd_getfd(pidfd, fds[i]);
		uint32_t status;

		if (local < 0) {
			err = local;
			continue;
		}
		/* uvm_tracker_open() refuses a queue of 0 slots: counters are made here alone */
		err = entries ? uvm_tracker_open(t, tools_path, local, entries, UVM_QUEUE_V2, &status)
			      : tracker_create(t, tools_path, local, 0, UVM_QUEUE_V1, &status);
		if (!err)
			err = tracker_subscribe(t, mask);
		if (!err)
			return local;
		uvm_tracker_close(t);
		close(local);
	}
	return err;
}

int uvm_tracker_bind(struct uvm_tracker *t, const char *tools_path, int pidfd, const int *fds,
		     int nfds, uint32_t entries, uint64_t mask)
{
	return bind_first(t, tools_path, pidfd, fds, nfds, entries, mask);
}

int uvm_counters_bind(struct uvm_tracker *t, const char *tools_path, int pidfd, const int *fds,
		      int nfds, uint64_t mask)
{
	return bind_first(t, tools_path, pidfd, fds, nfds, 0, mask);
}

int uvm_flush_events(int uvm_fd)
{
	struct uvm_flush_events_params p = {0};

	return tools_ioctl(uvm_fd, UVM_IOCTL_TOOLS_FLUSH_EVENTS, &p, &p.rm_status);
}
