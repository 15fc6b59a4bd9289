/* `grtrace top`: a live view of the GPU processes, one row each, refreshed every second. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curses.h>
#include "cli/commands.h"
#include "cli/option_error.h"
#include "common/clock.h"
#include "common/log.h"
#include "serve/agent.h"
#include "serve/agent_options.h"
#include "serve/top_rows.h"
#include "sources/bpf_util.h"

#define TOP_POLL_MS 50

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

struct top {
	struct serve_agent *agent;
	struct serve_snapshot prev, cur;
	bool have_prev;
	enum top_sort sort;
	double interval_s;
	FILE *log; /* leak reports: kept off the screen */
};

static void top_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace top [-p PID ...] [--libcuda PATH ...] [--batch N] [--interval S]\n"
		"  -p PID            only this process and its children (repeatable)\n"
		"  --libcuda PATH    probe this libcuda file too (repeatable)\n"
		"  --batch N         print N plain snapshots and exit (as top -b)\n"
		"  --interval S      seconds between refreshes (default 1)\n"
		"  --kernel-labels N kernel names per process (default 50)\n"
		"  -s LIST           cuda (always), uvm: UVM faults per process (as serve -s)\n"
		"Keys: l launches/s, p API p99, m device memory, c copy GB/s, s sync wait,\n"
		"      u UVM faults/s, n pid (sort); q quits.\n");
}

/* A new snapshot; the previous one becomes the base of the rates. */
static int take_snapshot(struct top *t)
{
	struct serve_snapshot next;
	int err = serve_agent_snapshot(t->agent, &next);

	if (err)
		return err;
	if (t->have_prev)
		serve_snapshot_free(&t->prev);
	t->prev = t->cur;
	t->have_prev = t->cur.taken_ns != 0;
	t->cur = next;
	return 0;
}

static long rows_now(struct top *t, struct top_row **rows)
{
	long n = top_rows_compute(t->have_prev ? &t->prev : NULL, &t->cur, rows);

	if (n > 0)
		top_rows_sort(*rows, (size_t)n, t->sort);
	return n;
}

static void title(struct top *t, long n, char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char clock[16];

	localtime_r(&now, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	snprintf(buf, len, "grtrace top - %s  %ld GPU processes  libcuda files probed: %llu  sort: %s",
		 clock, n, (unsigned long long)t->cur.health.libraries_probed,
		 top_sort_name(t->sort));
}

static int print_batch(struct top *t)
{
	struct top_row *rows;
	char line[512];
	long n = rows_now(t, &rows);

	if (n < 0)
		return (int)n;
	title(t, n, line, sizeof(line));
	printf("%s\n", line);
	top_format_header(line, sizeof(line));
	printf("%s\n", line);
	for (long i = 0; i < n; i++) {
		top_format_row(&rows[i], line, sizeof(line));
		printf("%s\n", line);
	}
	printf("\n");
	fflush(stdout);
	free(rows);
	return 0;
}

static void draw(struct top *t)
{
	struct top_row *rows;
	char line[512];
	long n = rows_now(t, &rows);

	erase();
	if (n < 0) {
		mvaddstr(0, 0, "out of memory");
		refresh();
		return;
	}
	title(t, n, line, sizeof(line));
	mvaddnstr(0, 0, line, COLS);
	top_format_header(line, sizeof(line));
	attron(A_REVERSE);
	mvaddnstr(2, 0, line, COLS);
	for (int x = (int)strlen(line); x < COLS; x++)
		addch(' ');
	attroff(A_REVERSE);
	for (long i = 0; i < n && i + 3 < LINES; i++) {
		top_format_row(&rows[i], line, sizeof(line));
		mvaddnstr((int)i + 3, 0, line, COLS);
	}
	if (!n)
		mvaddnstr(3, 0, "no process has called CUDA yet", COLS);
	refresh();
	free(rows);
}

/* Polls the agent until the next refresh is due; false when it is time to stop. */
static bool wait_interval(struct top *t, bool keys)
{
	uint64_t due = grt_monotonic_ns() + (uint64_t)(t->interval_s * 1e9);

	while (!stop_requested && grt_monotonic_ns() < due) {
		int key, sort;

		serve_agent_poll(t->agent, TOP_POLL_MS);
		while (keys && (key = getch()) != ERR) {
			if (key == 'q' || key == 'Q')
				return false;
			sort = top_sort_for_key(key);
			if (sort >= 0) {
				t->sort = (enum top_sort)sort;
				draw(t); /* the new order at once, on the same numbers */
			}
		}
	}
	return !stop_requested;
}

static int run_batch(struct top *t, long snapshots)
{
	int err = 0;

	for (long i = 0; i < snapshots && !err; i++) {
		if (!wait_interval(t, false))
			break;
		err = take_snapshot(t);
		if (!err)
			err = print_batch(t);
	}
	return err;
}

static int run_screen(struct top *t)
{
	int err = 0;

	if (!initscr())
		return -ENOTTY;
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	draw(t);
	while (!err && wait_interval(t, true)) {
		err = take_snapshot(t);
		if (!err)
			draw(t);
	}
	endwin();
	return err;
}

static int parse_args(int argc, char **argv, struct agent_options *o, long *batch,
		      double *interval)
{
	static const struct option options[] = {
	    AGENT_LONG_OPTIONS,
	    {"batch", required_argument, NULL, 'b'},
	    {"interval", required_argument, NULL, 'I'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt, taken;
	char *end;

	agent_options_init(o);
	*batch = 0;
	*interval = 1;
	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: top: ..." */
	while ((opt = getopt_long(argc, argv, ":p:s:b:h", options, NULL)) != -1) {
		taken = agent_options_take(o, "top", opt, optarg);
		if (taken < 0)
			return GRT_EXIT_USAGE;
		if (taken)
			continue;
		switch (opt) {
		case 'b':
			errno = 0;
			*batch = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || *batch <= 0) {
				grt_error("top: --batch needs a number of snapshots, not '%s'", optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'I':
			*interval = strtod(optarg, &end);
			if (*end || end == optarg || !(*interval >= 0.05 && *interval <= 3600)) {
				grt_error("top: --interval needs seconds from 0.05 to 3600, not '%s'",
					  optarg);
				return GRT_EXIT_USAGE;
			}
			break;
		case 'h':
			top_usage(stdout);
			return -1;
		default: /* ':' and '?' */
			return option_error("top", opt, argv);
		}
	}
	if (optind < argc) {
		grt_error("top: unexpected argument '%s' (see grtrace top --help)", argv[optind]);
		return GRT_EXIT_USAGE;
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top t = {.sort = TOP_SORT_LAUNCHES};
	struct serve_agent_config cfg;
	struct agent_options o;
	struct sigaction sa = {.sa_handler = on_stop_signal};
	char why[512];
	long batch;
	int rc, err;

	rc = parse_args(argc, argv, &o, &batch, &t.interval_s);
	if (rc)
		return rc < 0 ? GRT_EXIT_OK : rc;
	err = agent_options_check(&o, "top");
	if (err)
		return err == -EINVAL ? GRT_EXIT_USAGE : GRT_EXIT_FAILURE;
	if (!batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		grt_error("top: not a terminal; use --batch N for plain snapshots");
		return GRT_EXIT_USAGE;
	}
	if (grt_bpf_probe(why, sizeof(why))) {
		grt_error("top: %s", why);
		return GRT_EXIT_FAILURE;
	}
	/* notes and leak reports would scribble over the screen: only batch mode shows them */
	agent_options_config(&o, batch ? stderr : NULL, &cfg);
	err = serve_agent_start(&t.agent, &cfg, why, sizeof(why));
	if (err) {
		grt_error("top: %s", why);
		return GRT_EXIT_FAILURE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = take_snapshot(&t);
	if (!err)
		err = batch ? run_batch(&t, batch) : run_screen(&t);
	serve_snapshot_free(&t.cur);
	if (t.have_prev)
		serve_snapshot_free(&t.prev);
	serve_agent_stop(t.agent);
	if (err) {
		grt_error("top: %s", strerror(-err));
		return GRT_EXIT_FAILURE;
	}
	return GRT_EXIT_OK;
}
