/* uprobe_multi attachment by hand: the link_create layout re-declared from the kernel's bpf.h. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sources/uprobe_multi.h"

#define BPF_CMD_LINK_CREATE 28
#define UPROBE_MULTI_RETURN 1u
#define CLOSE_THREADS 64

/* union bpf_attr as BPF_LINK_CREATE reads it for uprobe_multi (zero tail: unused fields) */
struct uprobe_multi_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t reserved;
};

_Static_assert(sizeof(struct uprobe_multi_attr) == 64, "link_create layout");

static int link_create(const struct uprobe_multi_attr *attr)
{
	int fd = (int)syscall(__NR_bpf, BPF_CMD_LINK_CREATE, attr, sizeof(*attr));

	return fd < 0 ? -errno : fd;
}

int grt_uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets,
			    const uint64_t *cookies, uint32_t cnt, enum grt_uprobe_mode mode)
{
	struct uprobe_multi_attr attr = {
	    .prog_fd = (uint32_t)prog_fd,
	    .attach_type = mode == GRT_UPROBE_SESSION ? GRT_BPF_TRACE_UPROBE_SESSION
						      : GRT_BPF_TRACE_UPROBE_MULTI,
	    .path = (uint64_t)(uintptr_t)path,
	    .offsets = (uint64_t)(uintptr_t)offsets,
	    .cookies = (uint64_t)(uintptr_t)cookies,
	    .cnt = cnt,
	    .multi_flags = mode == GRT_UPROBE_RETURN ? UPROBE_MULTI_RETURN : 0,
	};

	return link_create(&attr);
}

/*
 * A kernel that knows the attach type rejects the directory "/" as a binary
 * with EBADF; one that does not rejects the attach type with EINVAL.
 */
static bool attach_type_supported(uint32_t attach_type, enum grt_uprobe_mode mode)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type);
	uint64_t offset = 0;
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog < 0)
		return false;
	link = grt_uprobe_multi_attach(prog, "/", &offset, NULL, 1, mode);
	if (link >= 0)
		close(link);
	close(prog);
	return link == -EBADF;
}

bool grt_uprobe_multi_supported(void)
{
	return attach_type_supported(GRT_BPF_TRACE_UPROBE_MULTI, GRT_UPROBE_ENTRY);
}

bool grt_uprobe_session_supported(void)
{
	return attach_type_supported(GRT_BPF_TRACE_UPROBE_SESSION, GRT_UPROBE_SESSION);
}

/* Runs release(items, i) for every i < n from up to CLOSE_THREADS threads. */
struct release_slice {
	void *items;
	void (*release)(void *items, unsigned i);
	unsigned first, step, n;
};

static void *release_slice(void *arg)
{
	const struct release_slice *s = arg;

	for (unsigned i = s->first; i < s->n; i += s->step)
		s->release(s->items, i);
	return NULL;
}

static void release_parallel(void *items, unsigned n, void (*release)(void *items, unsigned i))
{
	unsigned nthreads = n < CLOSE_THREADS ? n : CLOSE_THREADS;
	struct release_slice slices[CLOSE_THREADS];
	pthread_t threads[CLOSE_THREADS];
	bool started[CLOSE_THREADS] = {false};
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (unsigned t = 0; t < nthreads; t++) {
		slices[t] = (struct release_slice){.items = items, .release = release, .first = t,
						   .step = nthreads, .n = n};
		started[t] = !pthread_create(&threads[t], &attr, release_slice, &slices[t]);
		if (!started[t])
			release_slice(&slices[t]); /* no thread: release this slice here, serially */
	}
	for (unsigned t = 0; t < nthreads; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
	pthread_attr_destroy(&attr);
}

static void close_fd(void *fds, unsigned i)
{
	close(((const int *)fds)[i]);
}

void grt_close_links_parallel(const int *fds, unsigned n)
{
	release_parallel((void *)fds, n, close_fd);
}

static void destroy_link(void *links, unsigned i)
{
	bpf_link__destroy(((struct bpf_link **)links)[i]);
}

void grt_destroy_links_parallel(struct bpf_link **links, unsigned n)
{
	release_parallel(links, n, destroy_link);
}

void grt_release_file_links(int *fds, unsigned nfds, struct bpf_link **links, unsigned nlinks)
{
	grt_close_links_parallel(fds, nfds);
	free(fds);
	grt_destroy_links_parallel(links, nlinks);
	free(links);
}
