/* `grtrace info`: which sources work on this machine, and why not, from each source's own probe. */
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/tool_version.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "sources/bpf_util.h"
#include "sources/libcuda_locate.h"
#include "sources/source.h"

static void info_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace info [--format text|json]\n"
		"  what this machine can record: BPF, every source (usable, or why not), the\n"
		"  libcuda.so.1 a launched command would load; exit 0 even when some are missing\n"
		"  --format   text (default) or json (one object)\n");
}

struct machine_facts {
	struct utsname uts;
	int bpf_err;
	char bpf_why[256];
	int libcuda_err;
	char libcuda[PATH_MAX];
};

static void gather(struct machine_facts *m)
{
	if (uname(&m->uts))
		memset(&m->uts, 0, sizeof(m->uts));
	m->bpf_why[0] = 0;
	m->bpf_err = grt_bpf_probe(m->bpf_why, sizeof(m->bpf_why));
	m->libcuda_err = libcuda_find_for_launch(NULL, m->libcuda, sizeof(m->libcuda));
}

static void print_text(const struct machine_facts *m)
{
	char why[256];

	printf("grtrace %s (commit %s, trace format %d.%d)\n", GRT_TOOL_VERSION, GRT_GIT_COMMIT,
	       GRT_VERSION_MAJOR, GRT_VERSION_MINOR);
	printf("kernel:  %s %s\n", m->uts.release, m->uts.machine);
	printf("bpf:     %s%s\n", m->bpf_err ? "unusable: " : "usable", m->bpf_err ? m->bpf_why : "");
	if (m->libcuda_err)
		printf("libcuda: not found (searched %s); record --libcuda PATH names one\n",
		       libcuda_search_description());
	else
		printf("libcuda: %s\n", m->libcuda);
	printf("sources:\n");
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s)) {
		if (s->implicit)
			continue;
		why[0] = 0;
		if (s->probe(why, sizeof(why)))
			printf("  %-8s no: %s\n", s->name, why[0] ? why : "unusable here");
		else
			printf("  %-8s yes\n", s->name);
	}
}

static void print_json(const struct machine_facts *m)
{
	struct json_writer w;
	char why[256];

	jw_init(&w, stdout);
	jw_begin_object(&w);
	jw_field_string(&w, "version", GRT_TOOL_VERSION);
	jw_field_string(&w, "commit", GRT_GIT_COMMIT);
	jw_key(&w, "format_version");
	jw_begin_array(&w);
	jw_u64(&w, GRT_VERSION_MAJOR);
	jw_u64(&w, GRT_VERSION_MINOR);
	jw_end_array(&w);
	jw_field_string(&w, "kernel", m->uts.release);
	jw_field_string(&w, "machine", m->uts.machine);
	jw_key(&w, "bpf");
	jw_bool(&w, !m->bpf_err);
	jw_field_string(&w, "bpf_why", m->bpf_err ? m->bpf_why : NULL);
	jw_field_string(&w, "libcuda", m->libcuda_err ? NULL : m->libcuda);
	jw_key(&w, "sources");
	jw_begin_array(&w);
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s)) {
		int err;

		if (s->implicit)
			continue;
		why[0] = 0;
		err = s->probe(why, sizeof(why));
		jw_begin_object(&w);
		jw_field_string(&w, "name", s->name);
		jw_key(&w, "usable");
		jw_bool(&w, !err);
		jw_field_string(&w, "why", err ? why : NULL);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_newline(&w);
}

/* 0 with *json set, -1 after --help, or GRT_EXIT_USAGE after printing why. */
static int parse_info_args(int argc, char **argv, bool *json)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	*json = false;
	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				grt_error("info: unknown format '%s'; use text or json", optarg);
				return GRT_EXIT_USAGE;
			}
			*json = !strcmp(optarg, "json");
			break;
		case 'h':
			info_usage(stdout);
			return -1;
		default: /* ':' and '?' */
			return option_error("info", opt, argv);
		}
	}
	if (optind != argc) {
		grt_error("info: no arguments besides --format; see grtrace info --help");
		return GRT_EXIT_USAGE;
	}
	return 0;
}

int cmd_info(int argc, char **argv)
{
	struct machine_facts m;
	bool json;
	int rc = parse_info_args(argc, argv, &json);

	if (rc)
		return rc < 0 ? GRT_EXIT_OK : rc;
	gather(&m);
	if (json)
		print_json(&m);
	else
		print_text(&m);
	return GRT_EXIT_OK;
}
