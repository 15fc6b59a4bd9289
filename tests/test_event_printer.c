/* The event printer's text, CSV and JSON Lines output, exactly, for the known trace and odd
 * strings. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "known_trace.h"
#include "listed_sources.h"
#include "trace_files.h"
#include "export/event_printer.h"
#include "trace/grt_reader.h"
#include "trace/record_desc.h"
#include "trace/trace_names.h"

/* tests/known_trace.h's events (bookkeeping records skipped), as each format must print them. */
static const char *const known_json[KNOWN_EVENTS] = {
    "{\"type\":\"process\",\"ts_ns\":1000000000100,\"cpu\":0,\"pid\":4242,\"tid\":4242,\"seq\":6,"
    "\"event\":\"seen\",\"ppid\":1,\"comm\":\"vecadd\",\"exe\":\"/usr/bin/vecadd\"}",
    "{\"type\":\"alloc\",\"ts_ns\":1000000001000,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":2,"
    "\"addr\":139637976727552,\"bytes\":1048576,\"kind\":\"device\",\"stream\":0,"
    "\"stack_id\":-1,\"api\":\"cuMemAlloc_v2\",\"ppid\":1,\"comm\":\"vecadd\",\"ret\":0,"
    "\"api_ns\":500}",
    "{\"type\":\"memcpy\",\"ts_ns\":1000000002000,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":3,"
    "\"dst\":139637976727552,\"src\":1431674880,\"bytes\":1048576,\"kind\":\"HtoD\","
    "\"async\":0,\"dims\":1,\"stream\":0,\"gbytes_per_s\":524.288,\"api\":\"cuMemcpyHtoD_v2\","
    "\"ppid\":1,\"comm\":\"vecadd\",\"ret\":0,\"api_ns\":2000}",
    "{\"type\":\"launch\",\"ts_ns\":1000000005000,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":4,"
    "\"kernel\":\"vecAdd\",\"function\":3735879681,\"grid\":[4,2,1],\"block\":[256,1,1],"
    "\"shared_mem\":1024,\"stream\":16,\"args\":[139637976727552,1048576],\"stack_id\":7,"
    "\"api\":\"cuLaunchKernel\",\"ppid\":1,\"comm\":\"vecadd\",\"ret\":0,\"api_ns\":300}",
    "{\"type\":\"launch\",\"ts_ns\":1000000005100,\"cpu\":2,\"pid\":4242,\"tid\":4244,\"seq\":0,"
    "\"kernel\":\"k<\\\"quoted\\\", comma>\",\"function\":0,\"grid\":[1,1,1],\"block\":[32,1,1],"
    "\"shared_mem\":0,\"stream\":0,\"args\":[],\"stack_id\":-1,\"api\":\"cuLaunchKernel\","
    "\"ppid\":1,\"comm\":\"vecadd\",\"ret\":0,\"api_ns\":null}",
    "{\"type\":\"sync\",\"ts_ns\":1000000006000,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":5,"
    "\"kind\":\"stream\",\"stream\":16,\"event\":0,\"api\":\"cuStreamSynchronize\",\"ppid\":1,"
    "\"comm\":\"vecadd\",\"ret\":0,\"api_ns\":3000}",
    "{\"type\":\"memcpy\",\"ts_ns\":1000000009500,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":6,"
    "\"dst\":1431678976,\"src\":139637976727552,\"bytes\":4096,\"kind\":\"DtoH\",\"async\":1,"
    "\"dims\":1,\"stream\":16,\"api\":\"cuMemcpyDtoHAsync_v2\",\"ppid\":1,\"comm\":\"vecadd\","
    "\"ret\":0,\"api_ns\":100}",
    "{\"type\":\"memcpy\",\"ts_ns\":1000000009700,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":7,"
    "\"dst\":139637977776128,\"src\":139637976727552,\"bytes\":65536,\"kind\":\"DtoD\","
    "\"async\":0,\"dims\":1,\"stream\":0,\"gbytes_per_s\":327.68,\"api\":\"cuMemcpyDtoD_v2\","
    "\"ppid\":1,\"comm\":\"vecadd\",\"ret\":0,\"api_ns\":200}",
    "{\"type\":\"free\",\"ts_ns\":1000000010000,\"cpu\":1,\"pid\":4242,\"tid\":4243,\"seq\":8,"
    "\"addr\":139637976727552,\"kind\":\"device\",\"stream\":0,\"api\":\"cuMemFree_v2\","
    "\"ppid\":1,\"comm\":\"vecadd\",\"ret\":0,\"api_ns\":100}",
    "{\"type\":\"launch\",\"ts_ns\":1000000011000,\"cpu\":0,\"pid\":5555,\"tid\":5555,\"seq\":7,"
    "\"kernel\":\"other\",\"function\":0,\"grid\":[1,1,1],\"block\":[1,1,1],\"shared_mem\":0,"
    "\"stream\":0,\"args\":[],\"stack_id\":-1,\"api\":\"cuLaunchKernel\",\"ppid\":1,"
    "\"comm\":\"worker\",\"ret\":719,\"api_ns\":200}",
    "{\"type\":\"drop\",\"ts_ns\":1000000012000,\"cpu\":0,\"pid\":0,\"tid\":0,\"seq\":8,"
    "\"source\":\"cuda\",\"count\":3}",
    "{\"type\":\"trailer\",\"ts_ns\":1000000020000,\"cpu\":0,\"pid\":0,\"tid\":0,\"seq\":9,"
    "\"reason\":\"target-exit\",\"records\":19,\"drops\":3}",
};

/* The fields part (after the fixed columns) of each event in text and CSV. */
static const char *const known_fields[KNOWN_EVENTS] = {
    "event=seen ppid=1 comm=vecadd exe=/usr/bin/vecadd",
    "addr=0x7f0000000000 bytes=1048576 kind=device stream=0x0 stack_id=-1 api=cuMemAlloc_v2 "
    "ppid=1 comm=vecadd ret=0 api_ns=500",
    "dst=0x7f0000000000 src=0x5555a000 bytes=1048576 kind=HtoD async=0 dims=1 stream=0x0 "
    "gbytes_per_s=524.288 api=cuMemcpyHtoD_v2 ppid=1 comm=vecadd ret=0 api_ns=2000",
    "kernel=vecAdd function=0xdead0001 grid=(4,2,1) block=(256,1,1) shared_mem=1024 "
    "stream=0x10 args=[0x7f0000000000,0x100000] stack_id=7 api=cuLaunchKernel ppid=1 "
    "comm=vecadd ret=0 api_ns=300",
    "kernel=\"k<\\\"quoted\\\", comma>\" function=0x0 grid=(1,1,1) block=(32,1,1) "
    "shared_mem=0 stream=0x0 args=[] stack_id=-1 api=cuLaunchKernel ppid=1 comm=vecadd ret=0 "
    "api_ns=-",
    "kind=stream stream=0x10 event=0x0 api=cuStreamSynchronize ppid=1 comm=vecadd ret=0 "
    "api_ns=3000",
    "dst=0x5555b000 src=0x7f0000000000 bytes=4096 kind=DtoH async=1 dims=1 stream=0x10 "
    "api=cuMemcpyDtoHAsync_v2 ppid=1 comm=vecadd ret=0 api_ns=100",
    "dst=0x7f0000100000 src=0x7f0000000000 bytes=65536 kind=DtoD async=0 dims=1 stream=0x0 "
    "gbytes_per_s=327.680 api=cuMemcpyDtoD_v2 ppid=1 comm=vecadd ret=0 api_ns=200",
    "addr=0x7f0000000000 kind=device stream=0x0 api=cuMemFree_v2 ppid=1 comm=vecadd ret=0 "
    "api_ns=100",
    "kernel=other function=0x0 grid=(1,1,1) block=(1,1,1) shared_mem=0 stream=0x0 args=[] "
    "stack_id=-1 api=cuLaunchKernel ppid=1 comm=worker ret=719 api_ns=200",
    "source=cuda count=3",
    "reason=target-exit records=19 drops=3",
};

/* ts relative to the trace start, cpu, pid/tid, type: the text line's fixed columns. */
static const char *const known_text_prefix[KNOWN_EVENTS] = {
    "    0.000000100   0    4242/4242    process     ",
    "    0.000001000   1    4242/4243    alloc       ",
    "    0.000002000   1    4242/4243    memcpy      ",
    "    0.000005000   1    4242/4243    launch      ",
    "    0.000005100   2    4242/4244    launch      ",
    "    0.000006000   1    4242/4243    sync        ",
    "    0.000009500   1    4242/4243    memcpy      ",
    "    0.000009700   1    4242/4243    memcpy      ",
    "    0.000010000   1    4242/4243    free        ",
    "    0.000011000   0    5555/5555    launch      ",
    "    0.000012000   0       0/0       drop        ",
    "    0.000020000   0       0/0       trailer     ",
};

static bool is_bookkeeping(uint16_t type)
{
	return type == GRT_REC_STRING || type == GRT_REC_STACK || type == GRT_REC_MAPPING;
}

/* Prints the known trace's events in one format; returns the malloc'd output. */
static char *print_known(enum grt_event_format format)
{
	struct test_dir dir;
	char path[256], err[256], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct grt_event_printer *p = grt_event_printer_new(out, format, KNOWN_T0);
	struct grt_reader *r;
	struct grt_record rec;
	size_t n = 0;

	test_dir_make(&dir);
	test_dir_file(&dir, "known.grt", path, sizeof(path));
	CHECK(known_trace_write(path) == 0);
	r = grt_reader_open(path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		if (rec.hdr.type == GRT_REC_CHECKSUM) /* the writer's, not the known trace's */
			continue;
		n++;
		if (!is_bookkeeping(rec.hdr.type))
			grt_event_printer_print(p, &rec, grt_reader_strings(r));
	}
	CHECK_EQ_U64(n, KNOWN_RECORDS);
	grt_reader_close(r);
	grt_event_printer_free(p);
	fclose(out);
	test_dir_remove(&dir);
	return text;
}

/* Compares output line by line with expected (prefix + fields or whole lines). */
static void check_lines(const char *output, const char *const *prefix, const char *const *fields,
			const char *first_line)
{
	const char *line = output;
	char want[1024];

	if (first_line) {
		size_t n = strlen(first_line);

		CHECK(output && !strncmp(output, first_line, n) && output[n] == '\n');
		line = output ? output + n + 1 : NULL;
	}
	for (size_t i = 0; i < KNOWN_EVENTS && line; i++) {
		const char *end = strchr(line, '\n');
		char got[1024];

		if (prefix) {
			snprintf(want, sizeof(want), "%s %s", prefix[i], fields[i]);
		} else {
			snprintf(want, sizeof(want), "%s", fields[i]);
		}
		CHECK(end != NULL);
		if (!end)
			return;
		snprintf(got, sizeof(got), "%.*s", (int)(end - line), line);
		CHECK_STR(got, want);
		line = end + 1;
	}
	CHECK(line && *line == 0); /* nothing after the last event */
}

static void test_known_json(void)
{
	char *out = print_known(GRT_FORMAT_JSON);

	check_lines(out, NULL, known_json, NULL);
	free(out);
}

static void test_known_text(void)
{
	char *out = print_known(GRT_FORMAT_TEXT);

	check_lines(out, known_text_prefix, known_fields, NULL);
	free(out);
}

/* Prints one record (payload given) in a format; returns the malloc'd output. */
static char *print_one(enum grt_event_format format, uint16_t type, const void *payload,
		       uint32_t len, uint64_t ts, const struct grt_strings *strings)
{
	struct grt_record rec = {.hdr = {.magic = GRT_RECORD_MAGIC,
					 .version = 1,
					 .type = type,
					 .payload_len = len,
					 .cpu = 3,
					 .pid = 9,
					 .tid = 10,
					 .seq = 11,
					 .ts_ns = ts},
				 .payload = payload};
	char *text = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&text, &n);
	struct grt_event_printer *p = grt_event_printer_new(out, format, 0);

	grt_event_printer_print(p, &rec, strings);
	grt_event_printer_free(p);
	fclose(out);
	return text;
}

/* Kernel names with spaces, quotes, '=', line breaks, control bytes stay one token of one line. */
static void test_string_quoting(void)
{
	static const struct {
		const char *input, *text, *json;
	} cases[] = {
	    {"vecAdd", "kernel=vecAdd", "\"vecAdd\""},
	    {"", "kernel=\"\"", "\"\""},
	    {"-", "kernel=\"-\"", "\"-\""},
	    {"a b", "kernel=\"a b\"", "\"a b\""},
	    {"x=y", "kernel=\"x=y\"", "\"x=y\""},
	    {"a,b", "kernel=a,b", "\"a,b\""},
	    {"q\"q", "kernel=\"q\\\"q\"", "\"q\\\"q\""},
	    {"b\\s", "kernel=\"b\\\\s\"", "\"b\\\\s\""},
	    {"l\nn", "kernel=\"l\\nn\"", "\"l\\nn\""},
	    {"t\tr\r", "kernel=\"t\\tr\\r\"", "\"t\\tr\\r\""},
	    {"c\x01\x7f", "kernel=\"c\\x01\\x7f\"", "\"c\\u0001\\u007f\""},
	    {"caf\xc3\xa9", "kernel=caf\xc3\xa9", "\"caf\xc3\xa9\""},
	    /* what no terminal may see raw: invalid UTF-8, ESC sequences, the C1 CSI */
	    {"bad\xff", "kernel=\"bad\\xff\"", "\"bad\\ufffd\""},
	    {"\x1b[2J", "kernel=\"\\x1b[2J\"", "\"\\u001b[2J\""},
	    {"c1\xc2\x9b", "kernel=\"c1\\xc2\\x9b\"", "\"c1\xc2\x9b\""},
	};
	struct grt_strings *strings = grt_strings_new();
	struct grt_cuda_launch_rec l = {.kernel_str = 1, .call.return_ns = 50};
	char want[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text, *json;

		CHECK(grt_strings_set(strings, 1, cases[i].input) == 0);
		text = print_one(GRT_FORMAT_TEXT, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 40, strings);
		json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 40, strings);
		/* text: "... launch       kernel=... function=..." on one line */
		snprintf(want, sizeof(want), " %s function=", cases[i].text);
		CHECK(strstr(text, want) != NULL);
		CHECK(strchr(text, '\n') == text + strlen(text) - 1);
		snprintf(want, sizeof(want), "\"kernel\":%s,", cases[i].json);
		CHECK(strstr(json, want) != NULL);
		CHECK(strchr(json, '\n') == json + strlen(json) - 1);
		if (test_failures_in_case)
			printf("  case %zu:\n%s%s", i, text, json);
		free(text);
		free(json);
		if (test_failures_in_case)
			break;
	}
	grt_strings_free(strings);
}

/* A return stamped before the entry (clock trouble) has no duration, not a wrapped 2^64 - n. */
static void test_api_ns_return_before_entry(void)
{
	struct grt_cuda_alloc_rec a = {.call.return_ns = 900};
	char *json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_ALLOC, &a, sizeof(a), 1000, NULL);
	char *text = print_one(GRT_FORMAT_TEXT, GRT_REC_CUDA_ALLOC, &a, sizeof(a), 1000, NULL);

	CHECK(strstr(json, "\"api_ns\":null}") != NULL);
	CHECK(strstr(text, " api_ns=-\n") != NULL);
	free(json);
	free(text);
	a.call.return_ns = 1000; /* zero-length calls are fine */
	json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_ALLOC, &a, sizeof(a), 1000, NULL);
	CHECK(strstr(json, "\"api_ns\":0}") != NULL);
	free(json);
}

/* A launch whose return was not sampled: return code and time unknown, and said so. */
static void test_unsampled_return(void)
{
	struct grt_cuda_launch_rec l = {
	    .call = {.return_ns = 1500, .api = GRT_CUDA_LAUNCH_KERNEL,
		     .flags = GRT_CUDA_F_RETURN_UNSAMPLED},
	    .user_stack_id = -1};
	struct grt_cuda_config_rec c = {.launch_return_every = 4,
					.launch_probes = GRT_CUDA_PROBES_SESSION};
	char *json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 1000, NULL);
	char *text = print_one(GRT_FORMAT_TEXT, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 1000, NULL);

	CHECK(strstr(json, ",\"ret\":null,\"api_ns\":null,\"return\":\"not-sampled\"}\n") != NULL);
	CHECK(strstr(text, " ret=- api_ns=- return=not-sampled\n") != NULL);
	free(json);
	free(text);
	l.call.flags = 0; /* sampled: no "return" field */
	json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 1000, NULL);
	CHECK(strstr(json, ",\"ret\":0,\"api_ns\":500}\n") != NULL);
	free(json);
	json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_CONFIG, &c, sizeof(c), 1000, NULL);
	CHECK_STR(json, "{\"type\":\"cuda_config\",\"ts_ns\":1000,\"cpu\":3,\"pid\":9,\"tid\":10,"
			"\"seq\":11,\"launch_returns\":4,\"launch_probes\":\"uprobe-session\","
			"\"launch_stacks\":0}\n");
	free(json);
}

/*
 * A launch without a recorded name: parse spells it as report and snoop do,
 * func@0x<handle> (func@unknown without a handle), in text, JSON and CSV.
 */
static void test_unnamed_kernel(void)
{
	struct grt_cuda_launch_rec l = {.function = 0xf0000000, .call.return_ns = 50};
	char *json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 40, NULL);
	char *text = print_one(GRT_FORMAT_TEXT, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 40, NULL);

	CHECK(strstr(json, ",\"kernel\":\"func@0xf0000000\",\"function\":4026531840,") != NULL);
	CHECK(strstr(text, " kernel=func@0xf0000000 function=0xf0000000 ") != NULL);
	free(json);
	free(text);
	l.function = 0;
	json = print_one(GRT_FORMAT_JSON, GRT_REC_CUDA_LAUNCH, &l, sizeof(l), 40, NULL);
	CHECK(strstr(json, ",\"kernel\":\"func@unknown\",") != NULL);
	free(json);
}

/* Types this build does not describe print their number and the header fields only. */
static void test_unknown_type(void)
{
	char *json = print_one(GRT_FORMAT_JSON, 0x7e57, "abc", 3, 5, NULL);
	char *text = print_one(GRT_FORMAT_TEXT, 0x7e57, "abc", 3, 5, NULL);

	CHECK_STR(json, "{\"type\":\"type32343\",\"ts_ns\":5,\"cpu\":3,\"pid\":9,\"tid\":10,"
			"\"seq\":11}\n");
	CHECK_STR(text, "    0.000000005   3       9/10      type32343   \n");
	free(json);
	free(text);
}

/* A grt_fields that only collects keys, to check every description's key set. */
struct key_collector {
	struct grt_fields fields;
	char keys[64][32];
	unsigned n;
};

static void collect(struct grt_fields *f, const char *k)
{
	struct key_collector *c = (struct key_collector *)f;

	if (c->n < 64)
		snprintf(c->keys[c->n++], sizeof(c->keys[0]), "%s", k);
}

static void kc_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	collect(f, k);
}
static void kc_i64(struct grt_fields *f, const char *k, int64_t v)
{
	collect(f, k);
}
static void kc_f64(struct grt_fields *f, const char *k, double v)
{
	collect(f, k);
}
static void kc_str(struct grt_fields *f, const char *k, const char *s)
{
	collect(f, k);
}
static void kc_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	collect(f, k);
}
static void kc_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	collect(f, k);
}

static const struct grt_fields_ops collector_ops = {
    .u64 = kc_u64,
    .i64 = kc_i64,
    .hex = kc_u64,
    .f64 = kc_f64,
    .str = kc_str,
    .dim3 = kc_dim3,
    .hex_list = kc_list,
};

static bool valid_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!islower((unsigned char)*k) && !isdigit((unsigned char)*k) && *k != '_')
			return false;
	return true;
}

/*
 * Every registered record description (this branch's and any merged later):
 * keys are snake_case, unique within the record, and never one of the keys
 * the printer itself writes, so JSON objects never repeat a key.
 */
static void test_every_description_has_unique_keys(void)
{
	static const char *const header_keys[] = {"type", "ts_ns", "cpu", "pid", "tid", "seq"};
	uint64_t payload[(GRT_MAX_STACK_DEPTH + 64) * 2] = {0};
	unsigned described = 0;

	for (uint16_t type = 0; type < GRT_REC_TYPE_MAX; type++) {
		const struct grt_record_desc *d = grt_record_desc_find(type);
		struct key_collector c = {.fields.ops = &collector_ops};
		struct grt_record rec = {.hdr.type = type, .payload = payload};
		struct grt_string_rec *s = (struct grt_string_rec *)payload;
		uint32_t len;

		if (!d)
			continue;
		CHECK(d->name && valid_key(d->name));
		CHECK(grt_record_desc_by_name(d->name) == d);
		CHECK(d->min_len <= sizeof(payload));
		len = d->min_len;
		memset(payload, 0, sizeof(payload));
		if (type == GRT_REC_STRING) /* the one type whose zero payload is malformed */
			*s = (struct grt_string_rec){.id = 1, .len = len - sizeof(*s)};
		if (d->validate && d->validate(payload, len)) {
			printf("  %s: a zeroed minimum payload does not validate\n", d->name);
			CHECK(0);
			continue;
		}
		rec.hdr.payload_len = len;
		d->describe(&rec, NULL, &c.fields);
		described++;
		for (unsigned i = 0; i < c.n; i++) {
			CHECK(valid_key(c.keys[i]));
			for (unsigned j = 0; j < i; j++)
				if (!strcmp(c.keys[i], c.keys[j])) {
					printf("  %s: key %s twice\n", d->name, c.keys[i]);
					CHECK(0);
				}
			for (size_t h = 0; h < sizeof(header_keys) / sizeof(header_keys[0]); h++)
				CHECK(strcmp(c.keys[i], header_keys[h]) != 0);
		}
	}
	CHECK(described >= 16); /* core and cuda at least */
}

/* The launch/alloc/free/memcpy keys parse's JSON consumers rely on, by type. */
static void test_required_keys(void)
{
	static const struct {
		uint16_t type;
		const char *keys[8];
	} required[] = {
	    {GRT_REC_CUDA_LAUNCH,
	     {"kernel", "grid", "block", "shared_mem", "stream", "api_ns", "ret"}},
	    {GRT_REC_CUDA_ALLOC, {"addr", "bytes", "kind"}},
	    {GRT_REC_CUDA_FREE, {"addr"}},
	    {GRT_REC_CUDA_MEMCPY, {"bytes", "kind", "async", "api_ns"}},
	    {GRT_REC_CUDA_SYNC, {"kind", "api_ns", "ret"}},
	};
	uint64_t payload[32] = {0};

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		const struct grt_record_desc *d = grt_record_desc_find(required[i].type);
		struct key_collector c = {.fields.ops = &collector_ops};
		struct grt_record rec = {.hdr.type = required[i].type, .payload = payload};

		CHECK(d != NULL);
		if (!d)
			continue;
		rec.hdr.payload_len = d->min_len;
		d->describe(&rec, NULL, &c.fields);
		for (size_t k = 0; k < 8 && required[i].keys[k]; k++) {
			bool found = false;

			for (unsigned j = 0; j < c.n; j++)
				found |= !strcmp(c.keys[j], required[i].keys[k]);
			if (!found)
				printf("  %s lacks %s\n", d->name, required[i].keys[k]);
			CHECK(found);
		}
	}
}

static void test_format_names(void)
{
	CHECK_EQ_U64(grt_event_format_parse("text"), GRT_FORMAT_TEXT);
	CHECK_EQ_U64(grt_event_format_parse("csv"), GRT_FORMAT_CSV);
	CHECK_EQ_U64(grt_event_format_parse("json"), GRT_FORMAT_JSON);
	CHECK(grt_event_format_parse("JSON") < 0);
	CHECK(grt_event_format_parse("") < 0);
}

/* Every enumeration value the format defines has its own name; anything else is "unknown". */
static void test_enum_names(void)
{
	static const char *(*const tables[])(uint32_t) = {
	    grt_end_reason_name, grt_alloc_kind_name, grt_copy_kind_name,
	    grt_sync_kind_name,  grt_module_kind_name,
	};
	static const uint32_t firsts[] = {1, 1, 0, 1, 1}, lasts[] = {6, 7, 6, 7, 7};
	/* source ids are not contiguous: the names are those of GRT_SOURCE_IDS, as listed */
	bool listed[GRT_SRC_MAX + 1] = {false};

	for (uint32_t api = 1; api < GRT_CUDA_API_COUNT; api++) {
		CHECK(strncmp(grt_cuda_api_name(api), "cu", 2) == 0);
		for (uint32_t other = 1; other < api; other++)
			CHECK(strcmp(grt_cuda_api_name(api), grt_cuda_api_name(other)) != 0);
	}
	CHECK_STR(grt_cuda_api_name(GRT_CUDA_LAUNCH_KERNEL), "cuLaunchKernel");
	CHECK_STR(grt_cuda_api_name(GRT_CUDA_MEM_ALLOC_V2), "cuMemAlloc_v2");
	CHECK_STR(grt_cuda_api_name(0), "unknown");
	CHECK_STR(grt_cuda_api_name(GRT_CUDA_API_COUNT), "unknown");
	CHECK_STR(grt_cuda_api_name(UINT32_MAX), "unknown");
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (uint32_t v = firsts[t]; v <= lasts[t]; v++) {
			CHECK(strcmp(tables[t](v), "unknown") != 0);
			for (uint32_t other = firsts[t]; other < v; other++)
				CHECK(strcmp(tables[t](v), tables[t](other)) != 0);
		}
		CHECK_STR(tables[t](lasts[t] + 1), "unknown");
		CHECK_STR(tables[t](UINT32_MAX), "unknown");
	}
	for (size_t i = 0; i < LISTED_SOURCES; i++) {
		CHECK_STR(grt_source_name(listed_sources[i].id), listed_sources[i].name);
		CHECK(!listed[listed_sources[i].id]);
		listed[listed_sources[i].id] = true;
	}
	for (uint32_t id = 0; id <= GRT_SRC_MAX; id++)
		if (!listed[id])
			CHECK_STR(grt_source_name(id), "unknown");
	CHECK_STR(grt_source_name(UINT32_MAX), "unknown");
	CHECK_STR(grt_source_name(GRT_SRC_RECORDER), "recorder");
	CHECK_STR(grt_source_name(GRT_SRC_CUDA), "cuda");
	CHECK_STR(grt_copy_kind_name(GRT_COPY_HTOD), "HtoD");
	CHECK_STR(grt_copy_kind_name(GRT_COPY_DTOH), "DtoH");
	CHECK_STR(grt_copy_kind_name(GRT_COPY_DTOD), "DtoD");
}

int main(void)
{
	RUN_TEST(test_known_json);
	RUN_TEST(test_known_text);
	RUN_TEST(test_string_quoting);
	RUN_TEST(test_api_ns_return_before_entry);
	RUN_TEST(test_unsampled_return);
	RUN_TEST(test_unnamed_kernel);
	RUN_TEST(test_unknown_type);
	RUN_TEST(test_every_description_has_unique_keys);
	RUN_TEST(test_required_keys);
	RUN_TEST(test_format_names);
	RUN_TEST(test_enum_names);
	return TEST_EXIT_STATUS();
}
