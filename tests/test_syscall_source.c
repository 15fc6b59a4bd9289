/* The syscall source on a real workload: exact syscall counts, NVIDIA ioctls decoded, --syscalls. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "test_util.h"
#include "kernel_test_session.h"
#include "trace/kernel_names.h"
#include "trace/records_kernel.h"

static char workload[PATH_MAX];
static char node_dir[] = "/tmp/grt-nvnodes-XXXXXX";

/*
 * Device nodes named like NVIDIA's, made as character devices with
 * /dev/null's numbers so they open without the driver: the decoder keys on
 * "character device named nvidia*" (or major 195), which these are. nvidia1
 * is a regular file and null a character device with another name: neither
 * may be decoded.
 */
static int make_nodes(void)
{
	static const char *const nodes[] = { "nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-uvm-tools", "null" };
	char path[PATH_MAX];

	if (!mkdtemp(node_dir))
		return -1;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", node_dir, nodes[i]);
		if (mknod(path, S_IFCHR | 0666, makedev(1, 3)))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/nvidia1", node_dir);
	return close(open(path, O_CREAT | O_RDWR, 0644));
}

static void remove_nodes(void)
{
	static const char *const nodes[] = { "nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-uvm-tools", "null", "nvidia1" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", node_dir, nodes[i]);
		unlink(path);
	}
	rmdir(node_dir);
}

static int run_workload(const char *syscalls, struct mem_sink *sink, char *err, size_t err_len)
{
	char nv_step[PATH_MAX + 16];
	char *argv[] = { workload, "--wait-stdin", "getppid:100", nv_step, NULL };
	struct held_child child = { .pid = -1, .go_fd = -1 };

	snprintf(nv_step, sizeof(nv_step), "nvioctl:%s", node_dir);
	if (start_held(argv, &child))
		return -1;
	return record_held(&child, "syscall", syscalls, sink, err, err_len);
}

static size_t count_syscalls(const struct mem_sink *m, uint32_t nr)
{
	size_t n = 0;

	for (size_t i = 0; i < m->count; i++) {
		const struct grt_syscall_rec *s = (const void *)m->recs[i].payload;

		n += m->recs[i].type == GRT_REC_SYSCALL && s->nr == nr;
	}
	return n;
}

struct nv_expect {
	uint32_t device;
	const char *op;
	uint32_t flags_set;	/* these flags must be set */
	uint32_t object_class;
	uint32_t control_cmd;
	uint32_t handle;
	uint32_t rm_status;
	size_t count;
};

static const struct nv_expect nv_expected[] = {
	{ GRT_NV_DEV_CTL, "NV_ESC_RM_ALLOC", GRT_NV_F_CLASS | GRT_NV_F_HANDLE | GRT_NV_F_STATUS, 0xc86f, 0, 0x5c000001, 0, 5 },
	{ GRT_NV_DEV_CTL, "NV_ESC_RM_ALLOC", GRT_NV_F_CLASS | GRT_NV_F_HANDLE | GRT_NV_F_STATUS, 0x2080, 0, 0x5c000002, 0, 3 },
	{ GRT_NV_DEV_CTL, "NV_ESC_RM_CONTROL", GRT_NV_F_CMD | GRT_NV_F_HANDLE | GRT_NV_F_STATUS, 0, 0x20800a2b, 0x5c000002, 0, 12 },
	{ GRT_NV_DEV_GPU, "NV_ESC_RM_CONTROL", GRT_NV_F_XFER | GRT_NV_F_CMD | GRT_NV_F_STATUS, 0, 0x2080012b, 0x5c000002, 0, 4 },
	{ GRT_NV_DEV_CTL, "NV_ESC_RM_FREE", GRT_NV_F_HANDLE | GRT_NV_F_STATUS, 0, 0, 0x5c000001, 0x57, 2 },
	{ GRT_NV_DEV_UVM, "UVM_INITIALIZE", 0, 0, 0, 0, 0, 1 },
	{ GRT_NV_DEV_UVM, "UVM_REGISTER_GPU", 0, 0, 0, 0, 0, 6 },
	{ GRT_NV_DEV_UVM_TOOLS, "UVM_TOOLS_INIT_EVENT_TRACKER", 0, 0, 0, 0, 0, 1 },
};

static bool nv_matches(const struct grt_nv_ioctl_rec *n, const struct nv_expect *e)
{
	const char *op = grt_nv_op_name(n->device, n->op);

	return n->device == e->device && op && !strcmp(op, e->op) &&
	       (n->flags & e->flags_set) == e->flags_set && n->object_class == e->object_class &&
	       n->control_cmd == e->control_cmd && n->handle == e->handle && n->rm_status == e->rm_status;
}

/* Every nv_ioctl record pairs with an ioctl syscall record of the same call id and return. */
static bool paired_with_syscall(const struct mem_sink *m, const struct grt_nv_ioctl_rec *n)
{
	for (size_t i = 0; i < m->count; i++) {
		const struct grt_syscall_rec *s = (const void *)m->recs[i].payload;

		if (m->recs[i].type == GRT_REC_SYSCALL && s->call_id == n->call_id)
			return s->nr == SYS_ioctl && s->ret == n->ret && s->exit_ns == n->exit_ns;
	}
	return false;
}

static void test_exact_counts_and_nv_decoding(void)
{
	struct mem_sink m;
	char err[512] = "";
	size_t found[sizeof(nv_expected) / sizeof(nv_expected[0])] = { 0 }, nv_total = 0, unpaired = 0;

	mem_sink_init(&m);
	CHECK_EQ_U64(run_workload(NULL, &m, err, sizeof(err)), 0);
	if (err[0])
		printf("  session: %s\n", err);
	CHECK_EQ_U64(count_syscalls(&m, SYS_getppid), 100);
	CHECK_EQ_U64(count_syscalls(&m, SYS_ioctl), 37);
	CHECK_EQ_U64(count_syscalls(&m, SYS_exit_group), 1);
	for (size_t i = 0; i < m.count; i++) {
		const struct grt_nv_ioctl_rec *n = (const void *)m.recs[i].payload;

		if (m.recs[i].type != GRT_REC_NV_IOCTL)
			continue;
		nv_total++;
		unpaired += !paired_with_syscall(&m, n);
		CHECK_EQ_U64(n->ret, (uint64_t)-ENOTTY);
		CHECK(n->exit_ns >= m.recs[i].origin.ts_ns);
		for (size_t e = 0; e < sizeof(nv_expected) / sizeof(nv_expected[0]); e++)
			if (nv_matches(n, &nv_expected[e])) {
				found[e]++;
				break;
			}
	}
	CHECK_EQ_U64(nv_total, 34);
	CHECK_EQ_U64(unpaired, 0);
	for (size_t e = 0; e < sizeof(nv_expected) / sizeof(nv_expected[0]); e++) {
		if (found[e] != nv_expected[e].count)
			printf("  %s on %s: %zu, expected %zu\n", nv_expected[e].op,
			       grt_nv_device_name(nv_expected[e].device), found[e], nv_expected[e].count);
		CHECK_EQ_U64(found[e], nv_expected[e].count);
	}
	for (size_t i = 0; i < m.count; i++) {
		const struct grt_syscall_rec *s = (const void *)m.recs[i].payload;

		if (m.recs[i].type == GRT_REC_SYSCALL && s->nr == SYS_exit_group)
			CHECK_EQ_U64(s->flags, GRT_SYSCALL_F_NO_RETURN);
		if (m.recs[i].type == GRT_REC_SYSCALL && s->nr == SYS_getppid)
			CHECK_EQ_U64(s->ret, getpid());	/* the workload's parent is this test */
	}
	CHECK_EQ_U64(m.drops, 0);
	mem_sink_free(&m);
}

static void test_syscall_filter_keeps_only_named(void)
{
	struct mem_sink m;
	char err[512] = "";
	size_t other = 0;

	mem_sink_init(&m);
	CHECK_EQ_U64(run_workload("getppid,ioctl", &m, err, sizeof(err)), 0);
	CHECK_EQ_U64(count_syscalls(&m, SYS_getppid), 100);
	CHECK_EQ_U64(count_syscalls(&m, SYS_ioctl), 37);
	for (size_t i = 0; i < m.count; i++) {
		const struct grt_syscall_rec *s = (const void *)m.recs[i].payload;

		other += m.recs[i].type == GRT_REC_SYSCALL && s->nr != SYS_getppid && s->nr != SYS_ioctl;
	}
	CHECK_EQ_U64(other, 0);
	mem_sink_free(&m);
}

static void test_unknown_syscall_name_fails_attach(void)
{
	struct mem_sink m;
	char err[512] = "";

	mem_sink_init(&m);
	CHECK_EQ_U64(run_workload("getppid,nosuchcall", &m, err, sizeof(err)), (uint64_t)-EINVAL);
	CHECK(strstr(err, "unknown syscall 'nosuchcall'") != NULL);
	CHECK_EQ_U64(count_syscalls(&m, SYS_getppid), 0);
	mem_sink_free(&m);
}

int main(int argc, char **argv)
{
	fixture_path(argv[0], "kernel_workload", workload, sizeof(workload));
	if (make_nodes()) {
		printf("FAIL - cannot make device nodes in %s (needs root)\n", node_dir);
		return 1;
	}
	RUN_TEST(test_exact_counts_and_nv_decoding);
	RUN_TEST(test_syscall_filter_keeps_only_named);
	RUN_TEST(test_unknown_syscall_name_fails_attach);
	remove_nodes();
	return TEST_EXIT_STATUS();
}
