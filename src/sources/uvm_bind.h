/* Finding a process's /dev/nvidia-uvm descriptor, copying it, binding a tools tracker. */
#ifndef GRT_UVM_BIND_H
#define GRT_UVM_BIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sources/uvm_abi.h"
#include "sources/uvm_decode.h"

#define UVM_DEVICE_PATH "/dev/nvidia-uvm"
#define UVM_TOOLS_DEVICE_PATH "/dev/nvidia-uvm-tools"
#define UVM_MODULE_DIR "/sys/module/nvidia_uvm"

/*
 * Whether the tools interface can be used here: 0, or a negative errno with
 * one line in why (device file absent, driver not loaded, not root).
 */
int uvm_check_available(const char *tools_path, const char *module_dir, char *why, size_t why_len);

/* Whether pid exists and we may take its descriptors: 0, or -ESRCH/-EPERM/... with why. */
int uvm_check_target(pid_t pid, char *why, size_t why_len);

/*
 * Lists pid's descriptors whose /proc/PID/fd link names device_path (the
 * UVM device, or a stand-in file in tests), lowest first. Returns how many
 * were found (at most max), -ESRCH when the process is gone, -EACCES when
 * its descriptor table cannot be read.
 */
int uvm_find_fds(pid_t pid, const char *device_path, int *fds, int max);

/* pidfd_open(2) and pidfd_getfd(2); both return the new fd or a negative errno. */
int uvm_pidfd_open(pid_t pid);
int uvm_pidfd_getfd(int pidfd, int target_fd);

/* Whether a pidfd's process has exited (its pidfd polls readable). */
int uvm_pidfd_exited(int pidfd);

/*
 * One event tracker: our fd on /dev/nvidia-uvm-tools, bound to one
 * process's UVM file, with the queue memory it shares with the driver.
 */
struct uvm_tracker {
	int tools_fd;
	enum uvm_queue_version version;
	void *entries; /* mmap'd, page aligned */
	size_t entries_len;
	struct uvm_queue_control *ctrl; /* one mmap'd page */
	struct uvm_queue queue;
};

/* Marks a tracker as holding nothing (so uvm_tracker_close() is safe on it). */
void uvm_tracker_init(struct uvm_tracker *t);

/*
 * Creates a tracker on uvm_fd (our copy of the target's descriptor) with
 * `entries` slots (a power of two). want is UVM_QUEUE_V2 for the newest
 * layout the driver has (falls back to V1 on drivers without V2) or
 * UVM_QUEUE_V1 to force version 1. On failure returns a negative errno and,
 * where the driver answered, its NV_STATUS in *nv_status:
 *   -ENOENT  tools device absent       -EACCES  tools device not openable
 *   -EBADFD  uvm_fd is not an initialized VA-space file (yet): the MM
 *            descriptor, or CUDA has opened but not initialized it
 *   -ENOTTY  uvm_fd is not a /dev/nvidia-uvm file
 *   -EIO     any other driver refusal
 */
int uvm_tracker_open(struct uvm_tracker *t, const char *tools_path, int uvm_fd, uint32_t entries,
		     enum uvm_queue_version want, uint32_t *nv_status);

/* Subscribes to the event types in mask (bits the driver does not know are dropped); 0 or -EIO. */
int uvm_tracker_enable(struct uvm_tracker *t, uint64_t mask, uint64_t *enabled);

void uvm_tracker_close(struct uvm_tracker *t);

/*
 * Binds t (entries slots, events in mask) to the first of a process's UVM
 * descriptors (fds, from uvm_find_fds; pidfd, its uvm_pidfd_open) that takes
 * one: CUDA keeps two, the VA space and the mm holder, and only the VA-space
 * one does, once CUDA has initialized it. Returns our copy of that
 * descriptor (kept for flushes), or a negative errno when none took it yet.
 */
int uvm_tracker_bind(struct uvm_tracker *t, const char *tools_path, int pidfd, const int *fds,
		     int nfds, uint32_t entries, uint64_t mask);

/* Asks the driver to deliver events still waiting on GPU work (UVM_TOOLS_FLUSH_EVENTS on a UVM fd).
 */
int uvm_flush_events(int uvm_fd);

#endif
