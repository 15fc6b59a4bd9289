/* `grtrace snoop VIEW`: attach one source family and print its events as they happen. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/live_sink.h"
#include "cli/snoop.h"
#include "cli/target.h"
#include "gpubpf/gpubpf.h"
#include "common/log.h"
#include "common/num_parse.h"
#include "export/event_printer.h"
#include "sources/libcuda_locate.h"
#include "sources/session.h"
#include "sources/source.h"

/*
 * Sources wake the reader only in batches (cheaper at syscall rates); every
 * tick drains them, so a line shows within one tick of its event.
 */
#define SNOOP_TICK_MS 40

extern const struct snoop_view *const __start_grt_snoop_views[];
extern const struct snoop_view *const __stop_grt_snoop_views[];

/* Set by SIGINT/SIGTERM; the loop polls it between ticks. */
static volatile sig_atomic_t stop_requested;

struct snoop {
	const struct snoop_view *view;
	struct grt_event_printer
	    *json; /* --json: every record as JSON Lines; else the view's lines */
	uint64_t t0_ns;
	void *view_state;	/* from view->open, when the view has one */
};

static const struct snoop_view *find_view(const char *name)
{
	for (const struct snoop_view *const *v = __start_grt_snoop_views;
	     v < __stop_grt_snoop_views; v++)
		if (!strcmp((*v)->name, name))
			return *v;
	return NULL;
}

static void snoop_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace snoop SOURCE [-p PID | -- CMD ARGS] [-d S] [--libcuda PATH]\n"
		"                     [--format text|json|csv] [-o FILE]\n"
		"       grtrace snoop gpu --bpf PROG.bpf.o [--bpf ...] [--format json] -- CMD ARGS\n"
		"  SOURCE        one of:\n");
	for (const struct snoop_view *const *v = __start_grt_snoop_views;
	     v < __stop_grt_snoop_views; v++)
		fprintf(out, "                  %-8s %s\n", (*v)->name, (*v)->summary);
	fprintf(
	    out,
	    "  -p PID        only this process and its children (default: every process)\n"
	    "  -- CMD ARGS   launch CMD (held until the probes are attached) and snoop it and\n"
	    "                its children; stops when it exits, with its exit status\n"
	    "  -d, --duration S  stop after S seconds (default: Ctrl-C, or when PID exits)\n"
	    "  --libcuda P   the libcuda.so.1 to probe (default: the one PID maps, or the "
	    "loader's)\n"
	    "  --format F    text (default: the view's lines), json (every record as a JSON\n"
	    "                object per line, as parse --format json), csv (uvm: chunk_trace-\n"
	    "                style CSV, time_ms relative to the first event); --json and\n"
	    "                --csv are the same as --format json and --format csv\n"
	    "  -o FILE       write to FILE instead of standard output (- is standard output)\n"
	    "  --launch-stacks  cuda: user stacks of launches too (allocations always have them)\n"
	    "  --bpf PROG.bpf.o gpu: run the object's eBPF programs inside the command's CUDA\n"
	    "                kernels (docs/gpu-bpf.md); up to %d, each with its own --bpf\n",
	    GPUBPF_MAX_OBJECTS);
}

void snoop_line_start(FILE *out, const struct grt_record *rec, uint64_t t0_ns)
{
	uint64_t rel = rec->hdr.ts_ns > t0_ns ? rec->hdr.ts_ns - t0_ns : 0;

	fprintf(out, "%-11.6f %7u %7u ", (double)rel / 1e9, rec->hdr.pid, rec->hdr.tid);
}

static void on_record(void *ctx, const struct grt_record *rec, const struct grt_strings *strings)
{
	struct snoop *sn = ctx;

	if (sn->json)
		grt_event_printer_print(sn->json, rec, strings);
	else if (sn->view_state)
		sn->view->print_state(sn->view_state, rec, strings, sn->t0_ns);
	else if (sn->view->print)
		sn->view->print(stdout, rec, strings, sn->t0_ns);
}

static void on_stop_signal(int sig)
{
	stop_requested = 1;
}

static void catch_stop_signals(void)
{
	/* no SA_RESTART: the signal must cut the session's epoll_wait short */
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

struct snoop_args {
	const struct snoop_view *view;
	pid_t pid;
	double duration;
	const char *libcuda;
	bool json;
	bool csv;
	bool launch_stacks;
	const char *bpf[GPUBPF_MAX_OBJECTS]; /* --bpf objects, for snoop gpu */
	unsigned nbpf;
	const char *output;	/* -o FILE, NULL for stdout */
	char **command;		/* after --: launched and snooped */
};

/* 0, -1 for --help (printed), or GRT_EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct snoop_args *a)
{
	static const struct option options[] = {
	    {"pid", required_argument, NULL, 'p'},     {"duration", required_argument, NULL, 'd'},
	    {"libcuda", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
	    {"csv", no_argument, NULL, 'c'},	       {"launch-stacks", no_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},	       {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'}, {"bpf", required_argument, NULL, 'B'},
	    {0},
	};
	int dashdash;
	uint64_t pid;
	int opt, err;

	/* "-- CMD ARGS" is the command's, whatever its flags look like: cut it off first */
	for (dashdash = 1; dashdash < argc && strcmp(argv[dashdash], "--"); dashdash++)
		;
	if (dashdash < argc) {
		if (dashdash + 1 == argc) {
			grt_error("snoop: -- needs a command after it; give -- CMD ARGS");
			return GRT_EXIT_USAGE;
		}
		a->command = argv + dashdash + 1;
		argc = dashdash;
	}
	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: snoop: ..." */
	while ((opt = getopt_long(argc, argv, ":p:d:ho:", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			err = num_parse_u64(optarg, 1, INT_MAX, &pid);
			if (err) {
				grt_error("snoop: bad value '%s' for -p: %sgive a process id from 1 to "
					  "2147483647", optarg, err == -ERANGE ? "out of range; " : "");
				return GRT_EXIT_USAGE;
			}
			a->pid = (pid_t)pid;
			break;
		case 'd':
			err = num_parse_seconds(optarg, &a->duration);
			if (err) {
				grt_error("snoop: bad value '%s' for --duration: %sgive seconds, more "
					  "than 0 and at most 31536000 (a year)",
					  optarg, err == -ERANGE ? "out of range; " : "");
				return GRT_EXIT_USAGE;
			}
			break;
		case 'l':
			a->libcuda = optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case 'c':
			a->csv = true;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "csv")) {
				grt_error("snoop: unknown format '%s'; use text, json or csv", optarg);
				return GRT_EXIT_USAGE;
			}
			a->json = !strcmp(optarg, "json");
			a->csv = !strcmp(optarg, "csv");
			break;
		case 'o':
			a->output = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'L':
			a->launch_stacks = true;
			break;
		case 'B':
			if (a->nbpf == GPUBPF_MAX_OBJECTS) {
				grt_error("snoop: more than %d --bpf objects; combine programs into "
					  "fewer objects", GPUBPF_MAX_OBJECTS);
				return GRT_EXIT_USAGE;
			}
			a->bpf[a->nbpf++] = optarg;
			break;
		case 'h':
			snoop_usage(stdout);
			return -1;
		default: /* ':' and '?' */
			return option_error("snoop", opt, argv);
		}
	}
	if (optind != argc - 1) {
		grt_error(optind == argc ? "snoop: which source? (e.g. grtrace snoop cuda; see "
					   "grtrace snoop --help)"
					 : "snoop: one source at a time");
		return GRT_EXIT_USAGE;
	}
	a->view = find_view(argv[optind]);
	if (!a->view) {
		grt_error("snoop: unknown source '%s'; see grtrace snoop --help", argv[optind]);
		return GRT_EXIT_USAGE;
	}
	if (a->view->launches && (!a->command || a->pid)) {
		grt_error("snoop %s: give the command to run after --, without -p (e.g. grtrace "
			  "snoop %s --bpf PROG.bpf.o -- ./app)",
			  a->view->name, a->view->name);
		return GRT_EXIT_USAGE;
	}
	if (!a->view->launches && a->nbpf) {
		grt_error("snoop %s: --bpf is for snoop gpu", a->view->name);
		return GRT_EXIT_USAGE;
	}
	if (a->csv && a->json) {
		grt_error("snoop: one format at a time; give --format text, json or csv once");
		return GRT_EXIT_USAGE;
	}
	if (a->csv && !a->view->has_csv) {
		grt_error("snoop: %s has no CSV view (snoop uvm has one); use --format json for "
			  "every field of every record", a->view->name);
		return GRT_EXIT_USAGE;
	}
	if (a->command && a->pid) {
		grt_error("snoop: give either -p PID or -- CMD ARGS, not both");
		return GRT_EXIT_USAGE;
	}
	return 0;
}

static bool target_gone(pid_t pid)
{
	return pid && kill(pid, 0) && errno == ESRCH;
}

/* Each source of the view usable here? Says why not, in one line, before anything is set up. */
static int probe_sources(const struct snoop_view *view)
{
	char list[128], why[256], *name, *save = NULL;

	snprintf(list, sizeof(list), "%s", view->sources);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const struct grt_source *src = grt_source_find(name);

		why[0] = 0;
		if (src && src->probe(why, sizeof(why))) {
			grt_error("snoop %s: %s", view->name, why);
			return GRT_EXIT_FAILURE;
		}
	}
	return GRT_EXIT_OK;
}

/* -- CMD: launched held, so the probes are in place before its first call. */
static int launch_command(const struct snoop_args *a, struct target *t, char *libcuda, size_t len)
{
	char err[512];

	if (!a->libcuda && strstr(a->view->sources, "cuda") &&
	    libcuda_find_for_launch(NULL, libcuda, len)) {
		grt_error("snoop: libcuda.so.1 not found for %s (searched %s): pass --libcuda PATH",
			  a->command[0], libcuda_search_description());
		return GRT_EXIT_FAILURE;
	}
	if (target_launch_held(t, a->command, err, sizeof(err))) {
		grt_error("snoop: %s", err);
		return GRT_EXIT_FAILURE;
	}
	return GRT_EXIT_OK;
}

static int run_session(const struct snoop_args *a, struct grt_live_sink *ls, struct snoop *sn)
{
	/* the sources' options snoop takes: --launch-stacks and every --bpf */
	struct grt_source_option_value options[1 + GPUBPF_MAX_OBJECTS];
	struct target t = { .barrier_fd = -1, .exec_fd = -1 };
	char libcuda[PATH_MAX] = "", err[512];
	struct grt_session_config cfg = {
	    .target_pid = a->pid, .libcuda_path = a->libcuda, .options = options};
	struct grt_session *s;
	uint64_t deadline;
	int rc = GRT_EXIT_OK;

	if (a->launch_stacks)
		options[cfg.noptions++] = (struct grt_source_option_value){"launch-stacks", ""};
	for (unsigned i = 0; i < a->nbpf; i++)
		options[cfg.noptions++] = (struct grt_source_option_value){"bpf", a->bpf[i]};
	if (a->command) {
		rc = launch_command(a, &t, libcuda, sizeof(libcuda));
		if (rc)
			return rc;
		cfg.target_pid = t.pid;
		cfg.launched = true;
		if (libcuda[0])
			cfg.libcuda_path = libcuda;
	}
	s = grt_session_new(&cfg, &ls->sink);
	if (!s) {
		grt_error("snoop: cannot create a session: %s", strerror(errno));
		target_abort(&t);
		return GRT_EXIT_FAILURE;
	}
	/* before attach: the session's first records (source status) already reach the view */
	if (!sn->json && a->view->open)
		sn->view_state = a->view->open(stdout, a->csv);
	if (grt_session_attach(s, a->view->sources) ||
	    (a->command && target_release(&t, grt_session_target_env(s), err, sizeof(err)))) {
		grt_error("snoop: %s", a->command && !grt_session_error(s)[0] ? err
									  : grt_session_error(s));
		grt_session_free(s);
		if (sn->view_state)
			a->view->close(sn->view_state);
		target_abort(&t);
		return GRT_EXIT_FAILURE;
	}
	if (a->command)
		grt_notice("snooping %s in %s (pid %d); Ctrl-C to stop", a->view->name, a->command[0],
			   (int)t.pid);
	else if (a->pid)
		grt_notice("snooping %s in pid %d; Ctrl-C to stop", a->view->name, (int)a->pid);
	else
		grt_notice("snooping %s in every process; Ctrl-C to stop", a->view->name);
	if (!sn->json && !a->view->open)
		printf("%-11s %7s %7s %s\n", "time_s", "pid", "tid",
		       a->view->header ? a->view->header : "");
	deadline = a->duration > 0 ? grt_monotonic_ns() + (uint64_t)(a->duration * 1e9) : UINT64_MAX;
	while (!stop_requested && grt_monotonic_ns() < deadline && !target_gone(a->pid) &&
	       (!a->command || target_alive(&t))) {
		int perr = grt_session_poll(s, SNOOP_TICK_MS);

		if (perr) {
			grt_error("snoop: %s", strerror(-perr));
			rc = GRT_EXIT_FAILURE;
			break;
		}
	}
	/* the final drain prints what arrived last, calls cut off included */
	grt_session_free(s);
	if (sn->view_state)
		a->view->close(sn->view_state);
	if (a->command) {
		target_alive(&t);
		if (rc == GRT_EXIT_OK)
			rc = target_exit_code(&t);
		target_close(&t);
	}
	return rc;
}

int snoop_parse_args(int argc, char **argv)
{
	struct snoop_args a = {0};
	int rc = parse_args(argc, argv, &a);

	return rc < 0 ? GRT_EXIT_OK : rc;
}

int cmd_snoop(int argc, char **argv)
{
	struct snoop_args a = {0};
	struct grt_live_sink ls;
	struct snoop sn = {0};
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? GRT_EXIT_OK : rc;
	rc = probe_sources(a.view);
	if (rc)
		return rc;
	if (a.pid && target_gone(a.pid)) {
		grt_error("snoop: no process %d", (int)a.pid);
		return GRT_EXIT_FAILURE;
	}
	if (a.output && !freopen(a.output, "we", stdout)) {
		grt_error("snoop: cannot create %s: %s; give -o a writable path", a.output,
			  strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	sn.view = a.view;
	sn.t0_ns = grt_monotonic_ns();
	if (a.json) {
		sn.json = grt_event_printer_new(stdout, GRT_FORMAT_JSON, sn.t0_ns);
		if (!sn.json) {
			grt_error("out of memory");
			return GRT_EXIT_FAILURE;
		}
	}
	if (grt_live_sink_init(&ls, on_record, &sn)) {
		grt_event_printer_free(sn.json);
		grt_error("out of memory");
		return GRT_EXIT_FAILURE;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_stop_signals();
	rc = run_session(&a, &ls, &sn);
	fflush(stdout);
	grt_live_sink_destroy(&ls);
	grt_event_printer_free(sn.json);
	return rc;
}
