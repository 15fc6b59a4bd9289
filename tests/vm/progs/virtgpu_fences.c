/*
 * K fenced virtio-gpu commands, each waited for: behind T large unfenced 2-D transfers (so the
 * fence is usually still pending when the wait starts: the host copies 16 MiB per transfer), a
 * small resource is created with a fence and DRM_IOCTL_VIRTGPU_WAIT waits for it. Prints one line per wait with the CLOCK_MONOTONIC
 * times around the ioctl, then waits once more so every earlier command has completed (and its
 * fence been released) before the program exits.
 *
 * usage: virtgpu_fences K [T [DEVICE]]     (default T 4, /dev/dri/card0)
 * output: "wait I BO_HANDLE START_NS END_NS" per command, then "barrier START_NS END_NS"
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* The DRM and virtio-gpu uapi (drm.h, drm_mode.h, virtgpu_drm.h), declared here for the few calls made. */
#define DRM_IOCTL_BASE 'd'
#define DRM_COMMAND_BASE 0x40

struct gem_close {
	uint32_t handle;
	uint32_t pad;
};

struct mode_create_dumb {
	uint32_t height;
	uint32_t width;
	uint32_t bpp;
	uint32_t flags;
	uint32_t handle;
	uint32_t pitch;
	uint64_t size;
};

struct virtgpu_resource_create {
	uint32_t target;
	uint32_t format;
	uint32_t bind;
	uint32_t width;
	uint32_t height;
	uint32_t depth;
	uint32_t array_size;
	uint32_t last_level;
	uint32_t nr_samples;
	uint32_t flags;
	uint32_t bo_handle;
	uint32_t res_handle;
	uint32_t size;
	uint32_t stride;
};

struct virtgpu_box {
	uint32_t x, y, z, w, h, d;
};

struct virtgpu_transfer_to_host {
	uint32_t bo_handle;
	struct virtgpu_box box;
	uint32_t level;
	uint32_t offset;
	uint32_t stride;
	uint32_t layer_stride;
};

struct virtgpu_wait {
	uint32_t handle;
	uint32_t flags;
};

#define IOCTL_GEM_CLOSE _IOW(DRM_IOCTL_BASE, 0x09, struct gem_close)
#define IOCTL_MODE_CREATE_DUMB _IOWR(DRM_IOCTL_BASE, 0xB2, struct mode_create_dumb)
#define IOCTL_VIRTGPU_RESOURCE_CREATE \
	_IOWR(DRM_IOCTL_BASE, DRM_COMMAND_BASE + 0x04, struct virtgpu_resource_create)
#define IOCTL_VIRTGPU_TRANSFER_TO_HOST \
	_IOWR(DRM_IOCTL_BASE, DRM_COMMAND_BASE + 0x07, struct virtgpu_transfer_to_host)
#define IOCTL_VIRTGPU_WAIT _IOWR(DRM_IOCTL_BASE, DRM_COMMAND_BASE + 0x08, struct virtgpu_wait)

#define PIPE_TEXTURE_2D 2
#define VIRGL_FORMAT_B8G8R8X8_UNORM 2
#define BIG 2048		/* pixels a side of the transfer that keeps the host busy */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int xioctl(int fd, unsigned long request, void *arg, const char *what)
{
	int rc;

	do
		rc = ioctl(fd, request, arg);
	while (rc && (errno == EINTR || errno == EAGAIN));
	if (rc)
		fprintf(stderr, "virtgpu_fences: %s: %s\n", what, strerror(errno));
	return rc;
}

/* A 64x64 resource: created with a fence (the create command carries it). */
static int create_fenced(int fd, uint32_t *handle)
{
	struct virtgpu_resource_create rc = {
		.target = PIPE_TEXTURE_2D, .format = VIRGL_FORMAT_B8G8R8X8_UNORM, .width = 64,
		.height = 64, .depth = 1, .array_size = 1, .size = 64 * 64 * 4, .stride = 64 * 4,
	};

	if (xioctl(fd, IOCTL_VIRTGPU_RESOURCE_CREATE, &rc, "RESOURCE_CREATE"))
		return -1;
	*handle = rc.bo_handle;
	return 0;
}

static int wait_for(int fd, uint32_t handle, uint64_t *start, uint64_t *end)
{
	struct virtgpu_wait w = { .handle = handle };
	int rc;

	*start = now_ns();
	rc = xioctl(fd, IOCTL_VIRTGPU_WAIT, &w, "WAIT");
	*end = now_ns();
	return rc;
}

int main(int argc, char **argv)
{
	int k = argc >= 2 ? atoi(argv[1]) : 0, transfers = argc >= 3 ? atoi(argv[2]) : 4, fd;
	struct mode_create_dumb big = { .height = BIG, .width = BIG, .bpp = 32 };
	struct gem_close close_arg = { 0 };
	uint64_t start, end;
	uint32_t handle;

	if (k <= 0 || transfers < 0) {
		fprintf(stderr, "usage: virtgpu_fences K [T [DEVICE]]\n");
		return 2;
	}
	fd = open(argc >= 4 ? argv[3] : "/dev/dri/card0", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	/* a dumb buffer is created without a fence: only the K resources below have one */
	if (xioctl(fd, IOCTL_MODE_CREATE_DUMB, &big, "MODE_CREATE_DUMB"))
		return 1;
	for (int i = 0; i < k; i++) {
		struct virtgpu_transfer_to_host t = {
			.bo_handle = big.handle, .box = { .w = BIG, .h = BIG, .d = 1 }, .stride = big.pitch,
		};

		for (int n = 0; n < transfers; n++)
			if (xioctl(fd, IOCTL_VIRTGPU_TRANSFER_TO_HOST, &t, "TRANSFER_TO_HOST"))
				return 1;
		if (create_fenced(fd, &handle) || wait_for(fd, handle, &start, &end))
			return 1;
		printf("wait %d %u %llu %llu\n", i, handle, (unsigned long long)start, (unsigned long long)end);
		close_arg.handle = handle;
		if (xioctl(fd, IOCTL_GEM_CLOSE, &close_arg, "GEM_CLOSE"))
			return 1;
	}
	/* commands complete in order: once this one has, every release above has been handled */
	if (create_fenced(fd, &handle) || wait_for(fd, handle, &start, &end))
		return 1;
	printf("barrier %u %llu %llu\n", handle, (unsigned long long)start, (unsigned long long)end);
	close(fd);
	return 0;
}
