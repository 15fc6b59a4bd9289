/* Kernel records without BPF: names, --syscalls parsing, ioctl decoding, describe(), snoop lines, formats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "test_util.h"
#include "export/event_printer.h"
#include "export/snoop_kernel.h"
#include "sources/nv_ioctl_decode.h"
#include "common/pci_addr.h"
#include "sources/syscall_filter.h"
#include "sources/tp_format.h"
#include "trace/kernel_names.h"
#include "trace/record_desc.h"
#include "trace/records_kernel.h"

static void test_syscall_names(void)
{
	CHECK_STR(grt_syscall_name(0), "read");
	CHECK_STR(grt_syscall_name(16), "ioctl");
	CHECK_STR(grt_syscall_name(110), "getppid");
	CHECK_STR(grt_syscall_name(231), "exit_group");
	CHECK_STR(grt_syscall_name(435), "clone3");
	CHECK_STR(grt_syscall_name(462), "mseal");
	CHECK(grt_syscall_name(9999) == NULL);
	CHECK_EQ_U64(grt_syscall_nr("mmap"), 9);
	CHECK_EQ_U64(grt_syscall_nr("openat"), 257);
	CHECK_EQ_U64(grt_syscall_nr("nosuchcall"), (uint64_t)-1);
}

static void test_syscall_filter_parse(void)
{
	static const struct {
		const char *list;
		int rc;
		const char *err_part;
	} cases[] = {
		{ "ioctl", 0, NULL },
		{ "ioctl,mmap,openat", 0, NULL },
		{ "16,9", 0, NULL },
		{ "ioctl,nosuchcall", -EINVAL, "unknown syscall 'nosuchcall'" },
		{ "", -EINVAL, "empty list" },
		{ "ioctl,", -EINVAL, "trailing comma" },
		{ "ioctl,,mmap", -EINVAL, "empty or overlong" },
		{ "600", -EINVAL, "unknown syscall '600'" },
	};
	uint64_t set[GRT_SYSCALL_SET_WORDS];
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		CHECK_EQ_U64(grt_syscall_filter_parse(cases[i].list, set, err, sizeof(err)), (uint64_t)cases[i].rc);
		if (cases[i].err_part)
			CHECK(strstr(err, cases[i].err_part) != NULL);
	}
	CHECK_EQ_U64(grt_syscall_filter_parse("ioctl,mmap", set, err, sizeof(err)), 0);
	CHECK_EQ_U64(set[0], (1ULL << 16) | (1ULL << 9));
	for (int w = 1; w < GRT_SYSCALL_SET_WORDS; w++)
		CHECK_EQ_U64(set[w], 0);
}

static void test_nv_device_classify(void)
{
	CHECK_EQ_U64(nv_device_classify("nvidiactl", 1, 3), GRT_NV_DEV_CTL);
	CHECK_EQ_U64(nv_device_classify("nvidia0", 1, 3), GRT_NV_DEV_GPU);
	CHECK_EQ_U64(nv_device_classify("nvidia15", 195, 15), GRT_NV_DEV_GPU);
	CHECK_EQ_U64(nv_device_classify("nvidia-uvm", 510, 0), GRT_NV_DEV_UVM);
	CHECK_EQ_U64(nv_device_classify("nvidia-uvm-tools", 510, 1), GRT_NV_DEV_UVM_TOOLS);
	CHECK_EQ_U64(nv_device_classify("nvidia-modeset", 195, 254), GRT_NV_DEV_MODESET);
	CHECK_EQ_U64(nv_device_classify("renamed", 195, 255), GRT_NV_DEV_CTL);
	CHECK_EQ_U64(nv_device_classify("renamed", 195, 2), GRT_NV_DEV_GPU);
	CHECK_EQ_U64(nv_device_classify("nvidia-caps", 237, 1), GRT_NV_DEV_OTHER);
}

/* Decoding table cases: request, captured bytes, expected op/fields. */
static void test_nv_ioctl_decode(void)
{
	uint8_t nvos21[32] = { 0 }, nvos64[48] = { 0 }, nvos54[32] = { 0 }, nvos00[16] = { 0 };
	uint32_t v;
	struct grt_nv_ioctl_rec out;
	struct nv_ioctl_capture cap = { .dev_name = "nvidiactl", .dev_major = 195, .dev_minor = 255 };

#define PUT(buf, off, val) (v = (val), memcpy((buf) + (off), &v, 4))
	PUT(nvos21, 8, 0x5c000001), PUT(nvos21, 12, 0xc86f), PUT(nvos21, 28, 0x1f);
	cap.request = 0xc020462b, cap.arg = nvos21, cap.arg_len = 32, cap.arg_size = 32;
	nv_ioctl_decode(&cap, &out);
	CHECK_EQ_U64(out.device, GRT_NV_DEV_CTL);
	CHECK_STR(grt_nv_op_name(out.device, out.op), "NV_ESC_RM_ALLOC");
	CHECK_EQ_U64(out.object_class, 0xc86f);
	CHECK_EQ_U64(out.handle, 0x5c000001);
	CHECK_EQ_U64(out.rm_status, 0x1f);
	CHECK_EQ_U64(out.flags, GRT_NV_F_CLASS | GRT_NV_F_HANDLE | GRT_NV_F_STATUS);

	/* NVOS64 (48 bytes) keeps its status 12 bytes further */
	PUT(nvos64, 12, 0x2080), PUT(nvos64, 40, 0x22);
	cap.request = 0xc030462b, cap.arg = nvos64, cap.arg_len = 48, cap.arg_size = 48;
	nv_ioctl_decode(&cap, &out);
	CHECK_EQ_U64(out.object_class, 0x2080);
	CHECK_EQ_U64(out.rm_status, 0x22);

	/* RM_CONTROL through the XFER escape, on a GPU node */
	PUT(nvos54, 4, 0xbeef), PUT(nvos54, 8, 0x2080012b);
	cap.dev_name = "nvidia3", cap.dev_minor = 3;
	cap.request = 0xc01046d3, cap.inner_cmd = 0x2a, cap.arg = nvos54, cap.arg_len = 32, cap.arg_size = 32;
	nv_ioctl_decode(&cap, &out);
	CHECK_EQ_U64(out.device, GRT_NV_DEV_GPU);
	CHECK_STR(grt_nv_op_name(out.device, out.op), "NV_ESC_RM_CONTROL");
	CHECK_EQ_U64(out.control_cmd, 0x2080012b);
	CHECK_EQ_U64(out.handle, 0xbeef);
	CHECK(out.flags & GRT_NV_F_XFER);

	/* RM_FREE; a short capture does not invent fields beyond it */
	PUT(nvos00, 8, 0x77), PUT(nvos00, 12, 0x57);
	cap.dev_name = "nvidiactl", cap.inner_cmd = 0;
	cap.request = 0xc0104629, cap.arg = nvos00, cap.arg_len = 12, cap.arg_size = 16;
	nv_ioctl_decode(&cap, &out);
	CHECK_STR(grt_nv_op_name(out.device, out.op), "NV_ESC_RM_FREE");
	CHECK_EQ_U64(out.flags, GRT_NV_F_HANDLE);
	CHECK_EQ_U64(out.handle, 0x77);

	/* unreadable argument: the operation is still known */
	cap.request = 0xc020462a, cap.arg_len = 0, cap.arg_err = -14;
	nv_ioctl_decode(&cap, &out);
	CHECK_STR(grt_nv_op_name(out.device, out.op), "NV_ESC_RM_CONTROL");
	CHECK_EQ_U64(out.flags, GRT_NV_F_ARG_UNREADABLE);

	/* nvidia-uvm: plain numbers */
	cap = (struct nv_ioctl_capture){ .dev_name = "nvidia-uvm", .dev_major = 508, .request = 0x30000001 };
	nv_ioctl_decode(&cap, &out);
	CHECK_STR(grt_nv_op_name(out.device, out.op), "UVM_INITIALIZE");
	cap.request = 75;
	nv_ioctl_decode(&cap, &out);
	CHECK_STR(grt_nv_op_name(out.device, out.op), "UVM_MM_INITIALIZE");
	cap.request = 52;
	nv_ioctl_decode(&cap, &out);
	CHECK(grt_nv_op_name(out.device, out.op) == NULL);
#undef PUT
}

static void test_pci_parse(void)
{
	CHECK_EQ_U64(grt_pci_parse("0000:3b:00.0"), grt_pci_pack(0, 0x3b, 0, 0));
	CHECK_EQ_U64(grt_pci_parse("00000000:86:1f.7"), grt_pci_pack(0, 0x86, 0x1f, 7));
	/* NVML's form and the CUDA driver's name one GPU */
	CHECK_EQ_U64(grt_pci_parse("00000000:3A:00.0"), grt_pci_parse("0000:3a:00.0"));
	CHECK(grt_pci_parse("0000:3a:00.0") != 0);
	CHECK_EQ_U64(grt_pci_parse("0001:00:02.1"), 0x10011);
	CHECK_EQ_U64(grt_pci_parse("not-a-bus"), 0);
	CHECK_EQ_U64(grt_pci_parse("0000:3b:00.0x"), 0);
	CHECK_EQ_U64(grt_pci_parse("0000:3b:20.0"), 0);
}

static void test_tp_format_parse(void)
{
	static const char fmt[] =
		"name: sched_switch\nID: 372\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n\n"
		"print fmt: \"...\"\n";
	struct tp_field f[TP_MAX_FIELDS];
	int n = tp_format_parse(fmt, f, TP_MAX_FIELDS);
	const struct tp_field *comm = tp_field_find(f, n, "prev_comm"), *name = tp_field_find(f, n, "name");

	CHECK_EQ_U64(n, 4);
	CHECK(comm && comm->offset == 8 && comm->size == 16 && !comm->data_loc);
	CHECK(name && name->offset == 28 && name->data_loc);
	CHECK(tp_field_find(f, n, "char") == NULL);
	CHECK_EQ_U64(tp_format_parse("garbage", f, TP_MAX_FIELDS), (uint64_t)-EINVAL);
	CHECK_EQ_U64(tp_format_parse("\tfield:int;\toffset:x;\n", f, TP_MAX_FIELDS), (uint64_t)-EINVAL);
}

/* A record as the reader would hand it over. */
static struct grt_record make_record(uint16_t type, uint64_t ts, const void *payload, uint32_t len)
{
	struct grt_record rec = { .payload = payload };

	rec.hdr = (struct grt_record_header){ .magic = GRT_RECORD_MAGIC, .version = GRT_RECORD_VERSION,
					      .type = type, .payload_len = len, .pid = 42, .tid = 43, .ts_ns = ts };
	return rec;
}

static char *render_json(const struct grt_record *rec, const struct grt_strings *strings)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct grt_event_printer *p = grt_event_printer_new(out, GRT_FORMAT_JSON, 0);

	grt_event_printer_print(p, rec, strings);
	grt_event_printer_free(p);
	fclose(out);
	return buf;
}

static char *render_snoop(const struct grt_record *rec, const struct grt_strings *strings)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(snoop_kernel_print(out, rec, strings, 1000000000));
	fclose(out);
	return buf;
}

static void test_describe_and_snoop_lines(void)
{
	struct grt_strings *strings = grt_strings_new();
	struct grt_syscall_rec sc = { .call_id = 7, .exit_ns = 2000001500, .args = { 3, 0xc020462b, 0x1000 },
				      .ret = -25, .nr = 16 };
	struct grt_nv_ioctl_rec nv = { .call_id = 7, .exit_ns = 2000001500, .fd = 3, .request = 0xc020462b,
				       .device = GRT_NV_DEV_CTL, .op = 0x2b, .object_class = 0xc86f,
				       .handle = 0x5c000001, .rm_status = 0, .ret = -25,
				       .flags = GRT_NV_F_CLASS | GRT_NV_F_HANDLE | GRT_NV_F_STATUS, .path_str = 1 };
	struct grt_fence_rec fe = { .context = 3, .seqno = 9, .wait_ns = 2500000, .event = GRT_FENCE_WAIT_END,
				    .flags = GRT_FENCE_F_WAIT_MATCHED, .driver_str = 2, .timeline_str = 3 };
	struct grt_xid_rec xid = { .device = grt_pci_pack(0, 0x3b, 0, 0), .code = 79, .msg_str = 4, .dev_str = 5 };
	struct grt_record rec;
	char *s;

	grt_strings_set(strings, 1, "nvidiactl");
	grt_strings_set(strings, 2, "nvidia-drm");
	grt_strings_set(strings, 3, "tl-1");
	grt_strings_set(strings, 4, "GPU has fallen off the bus.");
	grt_strings_set(strings, 5, "0000:3b:00.0");

	rec = make_record(GRT_REC_SYSCALL, 2000000000, &sc, sizeof(sc));
	s = render_json(&rec, strings);
	CHECK(s && strstr(s, "\"type\":\"syscall\"") && strstr(s, "\"name\":\"ioctl\",\"nr\":16,\"call_id\":7") &&
	      strstr(s, "\"ret\":-25,\"duration_ns\":1500,\"state\":\"returned\""));
	free(s);
	s = render_snoop(&rec, strings);
	CHECK_STR(s, "1.000000            42/43      ioctl(0x3, 0xc020462b, 0x1000, ...) = -ENOTTY  1.5 us\n");
	free(s);

	rec = make_record(GRT_REC_NV_IOCTL, 2000000000, &nv, sizeof(nv));
	s = render_json(&rec, strings);
	CHECK(s && strstr(s, "\"device\":\"nvidiactl\",\"path\":\"nvidiactl\",\"fd\":3,\"request\":3223340587,"
			     "\"op\":\"NV_ESC_RM_ALLOC\",\"class\":51311,\"handle\":1543503873,\"rm_status\":0,\"xfer\":0"));
	free(s);
	s = render_snoop(&rec, strings);
	CHECK_STR(s, "                               `- nvidiactl NV_ESC_RM_ALLOC class=0xc86f handle=0x5c000001 status=0x0\n");
	free(s);

	rec = make_record(GRT_REC_FENCE, 1500000000, &fe, sizeof(fe));
	s = render_json(&rec, strings);
	CHECK(s && strstr(s, "\"event\":\"wait_end\",\"driver\":\"nvidia-drm\",\"timeline\":\"tl-1\",\"context\":3,"
			     "\"seqno\":9,\"wait_ns\":2500000"));
	free(s);
	s = render_snoop(&rec, strings);
	CHECK_STR(s, "0.500000            42/43      wait_end       nvidia-drm/tl-1              3:9  2500.0 us\n");
	free(s);

	rec = make_record(GRT_REC_XID, 3000000000, &xid, sizeof(xid));
	s = render_json(&rec, strings);
	CHECK(s && strstr(s, "\"xid\":79,\"dev\":\"0000:3b:00.0\",\"pci\":15104,\"msg\":\"GPU has fallen off the bus.\""));
	free(s);
	s = render_snoop(&rec, strings);
	CHECK_STR(s, "2.000000       0000:3b:00.0      79  GPU has fallen off the bus.\n");
	free(s);

	rec = make_record(GRT_REC_PROCESS, 0, &xid, sizeof(xid));
	CHECK(!snoop_kernel_print(stdout, &rec, strings, 0));
	grt_strings_free(strings);
}

/* Every kernel record type has a description, so parse prints each by name. */
static void test_every_kernel_type_described(void)
{
	static const struct { uint16_t type; const char *name; } types[] = {
		{ GRT_REC_SYSCALL, "syscall" }, { GRT_REC_NV_IOCTL, "nv_ioctl" },
		{ GRT_REC_SCHED_OFFCPU, "offcpu" }, { GRT_REC_SCHED_WAKEUP, "wakeup" },
		{ GRT_REC_FENCE, "fence" }, { GRT_REC_XID, "xid" }, { GRT_REC_PCIE_SAMPLE, "pcie_sample" },
		{ GRT_REC_UNSUPPORTED_PROBE, "unsupported_probe" }, { GRT_REC_PCI_CONFIG, "pci_config" },
		{ GRT_REC_NVLINK_SAMPLE, "nvlink_sample" }, { GRT_REC_GPU_LINK, "gpu_link" },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const struct grt_record_desc *d = grt_record_desc_find(types[i].type);

		CHECK(d != NULL);
		if (d)
			CHECK_STR(d->name, types[i].name);
	}
}

int main(void)
{
	RUN_TEST(test_syscall_names);
	RUN_TEST(test_syscall_filter_parse);
	RUN_TEST(test_nv_device_classify);
	RUN_TEST(test_nv_ioctl_decode);
	RUN_TEST(test_pci_parse);
	RUN_TEST(test_tp_format_parse);
	RUN_TEST(test_describe_and_snoop_lines);
	RUN_TEST(test_every_kernel_type_described);
	return TEST_EXIT_STATUS();
}
