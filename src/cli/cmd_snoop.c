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
#include "cli/gpu_bpf_args.h"
#include "cli/option_error.h"
#include "cli/live_sink.h"
#include "cli/snoop.h"
#include "common/log.h"
#include "common/num_parse.h"
#include "cli/target.h"
#include "export/event_printer.h"
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
		"usage: grtrace snoop SOURCE [-p PID] [--duration S] [--libcuda PATH] [--json|--csv]\n"
		"       grtrace snoop gpu [--bpf PROG.bpf.o ...] [--json] -- CMD ARGS\n"
		"  SOURCE        one of:\n");
	for (const struct snoop_view *const *v = __start_grt_snoop_views;
	     v < __stop_grt_snoop_views; v++)
		fprintf(out, "                  %-8s %s\n", (*v)->name, (*v)->summary);
	fprintf(
	    out,
	    "  -p PID        only this process and its children (default: every process)\n"
	    "  --duration S  stop after S seconds (default: Ctrl-C, or when PID exits)\n"
	    "  --libcuda P   the libcuda.so.1 to probe (default: the one PID maps, or the "
	    "loader's)\n"
	    "  --json        every record as a JSON object per line, as `parse --format json`\n"
	    "  --csv         uvm: chunk_trace-style CSV (time_ms relative to the first event)\n"
	    "  --launch-stacks  cuda: user stacks of launches too (allocations always have them)\n"
	    "  --bpf PROG.bpf.o gpu: run the object's eBPF programs inside the command's CUDA\n"
	    "                kernels (docs/gpu-bpf.md); up to %d, each with its own --bpf\n"
	    "  -- CMD ARGS   gpu: the command to launch (the source needs one)\n",
	    GPUBPF_MAX_OBJECTS);
}

void snoop_line_start(FILE *out, const struct grt_record *rec, uint64_t t0_ns)
{
	uint64_t rel = rec->hdr.ts_ns > t0_ns ? rec->hdr.ts_ns - t0_ns : 0;

	fprintf(out, "%-11.6f %-7u %-7u ", (double)rel / 1e9, rec->hdr.pid, rec->hdr.tid);
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
	struct gpu_bpf_args bpf; /* --bpf */
	char *const *command;	 /* after --, NULL when none */
};

/* 0, -1 for --help (printed), or GRT_EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct snoop_args *a)
{
	static const struct option options[] = {
	    {"pid", required_argument, NULL, 'p'},     {"duration", required_argument, NULL, 'd'},
	    {"libcuda", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
	    {"csv", no_argument, NULL, 'c'},	       {"launch-stacks", no_argument, NULL, 'L'},
	    {"bpf", required_argument, NULL, 'B'},     {"help", no_argument, NULL, 'h'},
	    {0},
	};
	uint64_t pid;
	int opt, err, dashes = argc;

	/* a launched command's own flags are not ours: options end at "--" */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dashes = i;
			break;
		}
	if (dashes + 1 < argc)
		a->command = argv + dashes + 1;
	argc = dashes;

	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: snoop: ..." */
	while ((opt = getopt_long(argc, argv, ":p:d:h", options, NULL)) != -1) {
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
		case 'L':
			a->launch_stacks = true;
			break;
		case 'B':
			if (gpu_bpf_args_add(&a->bpf, "snoop", optarg))
				return GRT_EXIT_USAGE;
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
	if (!a->view->launches && (a->command || a->bpf.n)) {
		grt_error("snoop %s: %s is for snoop gpu", a->view->name,
			  a->bpf.n ? "--bpf" : "a command to launch");
		return GRT_EXIT_USAGE;
	}
	if (a->csv && (!a->view->has_csv || a->json)) {
		grt_error("snoop: --csv is for %s", a->json ? "views without --json" : "snoop uvm");
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

/* Whether to keep going: the target (launched, or -p) is still there. */
static bool target_running(const struct snoop_args *a, struct target *t)
{
	return t->launched ? target_alive(t) : !target_gone(a->pid);
}

static int run_session(const struct snoop_args *a, struct grt_live_sink *ls, struct snoop *sn,
		       struct target *t)
{
	struct grt_session_config cfg = {.target_pid = t->launched ? t->pid : a->pid,
					 .libcuda_path = a->libcuda,
					 .launch_stacks = a->launch_stacks,
					 .launched = t->launched};
	struct grt_session *s;
	uint64_t deadline;
	char err[512];
	int rc = GRT_EXIT_OK;

	gpu_bpf_args_config(&a->bpf, &cfg);
	s = grt_session_new(&cfg, &ls->sink);
	if (!s) {
		grt_error("snoop: cannot create a session: %s", strerror(errno));
		return GRT_EXIT_FAILURE;
	}
	/* before attach: the session's first records (source status) already reach the view */
	if (!sn->json && a->view->open)
		sn->view_state = a->view->open(stdout, a->csv);
	if (grt_session_attach(s, a->view->sources)) {
		grt_error("snoop: %s", grt_session_error(s));
		grt_session_free(s);
		if (sn->view_state)
			a->view->close(sn->view_state);
		return GRT_EXIT_FAILURE;
	}
	if (t->launched && target_release(t, grt_session_target_env(s), err, sizeof(err))) {
		grt_error("snoop: %s", err);
		grt_session_free(s);
		if (sn->view_state)
			a->view->close(sn->view_state);
		return GRT_EXIT_FAILURE;
	}
	if (t->launched)
		grt_notice("snooping %s in %s (pid %d); Ctrl-C to stop", a->view->name,
			   a->command[0], (int)t->pid);
	else if (a->pid)
		grt_notice("snooping %s in pid %d; Ctrl-C to stop", a->view->name, (int)a->pid);
	else
		grt_notice("snooping %s in every process; Ctrl-C to stop", a->view->name);
	if (!sn->json && !a->view->open)
		printf("%-11s %-7s %-7s %s\n", "TIME(s)", "PID", "TID",
		       a->view->header ? a->view->header : "");
	deadline = a->duration > 0 ? grt_monotonic_ns() + (uint64_t)(a->duration * 1e9) : UINT64_MAX;
	while (!stop_requested && grt_monotonic_ns() < deadline && target_running(a, t)) {
		int err = grt_session_poll(s, SNOOP_TICK_MS);

		if (err) {
			grt_error("snoop: %s", strerror(-err));
			rc = GRT_EXIT_FAILURE;
			break;
		}
	}
	/* the final drain prints what arrived last, calls cut off included */
	grt_session_free(s);
	if (sn->view_state)
		a->view->close(sn->view_state);
	return rc;
}

/*
 * The programs verified, then the command forked and held before exec until
 * the session attached: a refused program means the command never runs.
 */
static int launch_held(struct snoop_args *a, struct target *t)
{
	char err[512];

	if (gpu_bpf_args_load(&a->bpf, "snoop"))
		return GRT_EXIT_FAILURE;
	if (a->command && target_launch_held(t, a->command, err, sizeof(err))) {
		grt_error("snoop: %s", err);
		return GRT_EXIT_FAILURE;
	}
	return GRT_EXIT_OK;
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
	struct target t = {.barrier_fd = -1, .exec_fd = -1};
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
	rc = launch_held(&a, &t);
	if (!rc)
		rc = run_session(&a, &ls, &sn, &t);
	target_abort(&t);
	target_close(&t);
	gpu_bpf_args_free(&a.bpf);
	fflush(stdout);
	grt_live_sink_destroy(&ls);
	grt_event_printer_free(sn.json);
	return rc;
}
