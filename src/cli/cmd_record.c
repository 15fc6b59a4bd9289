/* `grtrace record`: attach the chosen sources to a command or pid and write a .grt trace. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/clock.h"
#include "cli/commands.h"
#include "cli/option_error.h"
#include "cli/output_check.h"
#include "cli/record_header.h"
#include "cli/target.h"
#include "common/num_parse.h"
#include "common/regular_file.h"
#include "common/log.h"
#include "sources/bpf_util.h"
#include "sources/libcuda_locate.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/writer_sink.h"
#include "trace/records_core.h"
#include "trace/trace_names.h"

#define POLL_INTERVAL_MS 100
#define MAX_SOURCE_OPTIONS 32	/* source options given on one command line */
#define MAX_OPTIONS 64		/* record's own options and every source's */
#define SOURCE_OPTION_BASE 1000	/* getopt values of the sources' options: this + their index */
/*
 * The recorder's nice value unless --nice says otherwise: below the recorded
 * threads' 0, so that on a machine they keep busy the recorder still drains
 * their calls in time (a 2-CPU machine paced at 5 M calls/s lost calls in 4 of
 * 10 rounds at 0, in none of 10 at -10: bench/RESULTS.md). Its work is the
 * recording's own: it takes CPU only for calls the threads made.
 */
#define DEFAULT_RECORDER_NICE -10

struct record_options {
	const char *output;
	const char *sources;
	pid_t pid;
	double duration_s;
	double idle_timeout_s;
	const char *libcuda;
	/* the sources' own options (source.h), as given */
	struct grt_source_option_value source_options[MAX_SOURCE_OPTIONS];
	unsigned nsource_options;
	int nice;		/* --nice: the recorder's nice value, when nice_given */
	bool nice_given;
	bool all;		/* -a: every process (system-wide), until stopped */
	bool force;		/* -f: overwrite an existing output */
	char *const *command;	/* after --, NULL when attaching */
};

/* Set from the signal handler; the only state shared with it. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void record_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace record [-o FILE] [-f] [-s SOURCES] [-a | -p PID | -- CMD ARGS]\n"
		"                      [-d S] [--idle-timeout S] [--libcuda PATH]\n"
		"                      [SOURCE OPTIONS]\n"
		"  -o FILE            output trace (default grtrace.grt); an existing file needs -f\n"
		"  -f, --force        overwrite an existing output file\n"
		"  -s SOURCES         comma-separated sources (default cuda):");
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s))
		if (!s->implicit)
			fprintf(out, " %s", s->name);
	fprintf(out,
		"\n                     (each once; -s none: process starts and exits only)\n"
		"  -a                 every process, system-wide (every libcuda file mapped now or\n"
		"                     later is probed); stops on Ctrl-C, --duration or --idle-timeout\n"
		"  -p PID             attach to a running process (and its future children)\n"
		"  -- CMD ARGS        launch CMD, held until every probe is attached\n"
		"  -d, --duration S   stop after S seconds\n"
		"  --idle-timeout S   stop after S seconds without events\n"
		"  --libcuda PATH     the libcuda.so.1 to probe (default: the one the target uses)\n"
		"  --nice N           the recorder's nice value, -20..19 (default -10, or the caller's\n"
		"                     if lower): ahead of the recorded threads on a busy machine; the\n"
		"                     command keeps the caller's\n");
	/* each source's own options, from its own file */
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s))
		for (const struct grt_source_option *o = s->options; o && o->name; o++) {
			char flag[64];

			snprintf(flag, sizeof(flag), "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
			fprintf(out, "  %-18s %s\n", flag, o->help);
		}
}

static int parse_pid(const char *text, pid_t *out)
{
	uint64_t v;
	int err = num_parse_u64(text, 1, INT_MAX, &v);

	if (!err)
		*out = (pid_t)v;
	return err;
}

/* The allowed range of each numeric option, for the error line. */
static const char *range_of(int letter)
{
	switch (letter) {
	case 'p': return "a process id from 1 to 2147483647";
	case 'n': return "a nice value from -20 to 19";
	default: return "seconds, more than 0 and at most 31536000 (a year)";
	}
}

/* The long name of an option's short letter (every option here has one). */
static const char *long_name(const struct option *options, int letter)
{
	for (; options->name; options++)
		if (options->val == letter)
			return options->name;
	return "?";
}

/*
 * The getopt table: record's own options, then every source's (value SOURCE_OPTION_BASE + k,
 * k their index in found). Returns the count of source options.
 */
static unsigned option_table(struct option table[MAX_OPTIONS + 1],
			     const struct grt_source_option *found[MAX_OPTIONS])
{
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "sources", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "idle-timeout", required_argument, NULL, 'i' },
		{ "libcuda", required_argument, NULL, 'l' },
		{ "nice", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
	};
	unsigned n = sizeof(own) / sizeof(own[0]), k = 0;

	memcpy(table, own, sizeof(own));
	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s))
		for (const struct grt_source_option *o = s->options; o && o->name && n < MAX_OPTIONS; o++) {
			found[k] = o;
			table[n++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
						      SOURCE_OPTION_BASE + (int)k++ };
		}
	table[n] = (struct option){ 0 };
	return k;
}

/* A source's option, kept for the session; check_source_options() checks its value. */
static int take_source_option(struct record_options *o, const struct grt_source_option *opt,
			      const char *value)
{
	if (o->nsource_options == MAX_SOURCE_OPTIONS) {
		grt_error("record: more than %d source options; give each once", MAX_SOURCE_OPTIONS);
		return GRT_EXIT_USAGE;
	}
	o->source_options[o->nsource_options++] =
		(struct grt_source_option_value){ .name = opt->name, .value = value };
	return 0;
}

/* Returns 0, or GRT_EXIT_USAGE after printing why. */
static int parse_record_options(int argc, char **argv, struct record_options *o)
{
	const struct grt_source_option *source_opts[MAX_OPTIONS];
	struct option options[MAX_OPTIONS + 1];
	unsigned nsource = option_table(options, source_opts);
	int64_t nice = 0;
	int opt;

	*o = (struct record_options){ .output = "grtrace.grt", .sources = "cuda" };
	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: record: ..." */
	/* "+": stop at the command, whose own flags are not ours; ":": tell a missing value apart */
	while ((opt = getopt_long(argc, argv, "+:o:s:p:d:hfa", options, NULL)) != -1) {
		int bad = 0;

		/* "-o -- CMD": getopt hands "--" to -o as its value; it is the end of the options */
		if (optarg && !strcmp(optarg, "--") && opt != ':' && opt != '?') {
			const char *name = opt >= SOURCE_OPTION_BASE && opt < SOURCE_OPTION_BASE + (int)nsource
						   ? source_opts[opt - SOURCE_OPTION_BASE]->name
						   : long_name(options, opt);

			grt_error("record: --%s needs a value before --; give it as --%s VALUE -- CMD",
				  name, name);
			return GRT_EXIT_USAGE;
		}
		if (opt >= SOURCE_OPTION_BASE && opt < SOURCE_OPTION_BASE + (int)nsource) {
			const struct grt_source_option *so = source_opts[opt - SOURCE_OPTION_BASE];

			if ((bad = take_source_option(o, so, so->arg ? optarg : "")))
				return bad;
			continue;
		}
		switch (opt) {
		case 'o': o->output = optarg; break;
		case 's': o->sources = optarg; break;
		case 'p': bad = parse_pid(optarg, &o->pid); break;
		case 'd': bad = num_parse_seconds(optarg, &o->duration_s); break;
		case 'i': bad = num_parse_seconds(optarg, &o->idle_timeout_s); break;
		case 'l': o->libcuda = optarg; break;
		case 'n':
			bad = num_parse_i64(optarg, -20, 19, &nice);
			o->nice = (int)nice;
			o->nice_given = true;
			break;
		case 'a': o->all = true; break;
		case 'f': o->force = true; break;
		case 'h': record_usage(stdout); return -1;
		default: /* ':' and '?' */
			return option_error("record", opt, argv);
		}
		if (bad) {
			grt_error("record: bad value '%s' for --%s: %sgive %s", optarg,
				  long_name(options, opt), bad == -ERANGE ? "out of range; " : "",
				  range_of(opt));
			return GRT_EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (!strcmp(o->output, "-")) {
		grt_error("record: -o - is not possible: a trace is finished by writing its header "
			  "again at the end; give a file, then read it with grtrace report FILE");
		return GRT_EXIT_USAGE;
	}
	if (o->all && (o->command || o->pid)) {
		grt_error("record: -a traces every process; give it without -p PID or a command");
		return GRT_EXIT_USAGE;
	}
	if (!o->all && !o->command == !o->pid) {
		grt_error("record: give either -p PID or -- CMD ARGS; see grtrace record --help");
		return GRT_EXIT_USAGE;
	}
	return 0;
}

/*
 * Checks -s before anything starts, so typos fail fast with exit 2, and
 * writes the list each source once into out: a name given twice would attach
 * the source twice and record every event twice. "none" alone records
 * process starts and exits only.
 */
static int check_sources(const char *list, uint32_t *mask, char *out, size_t out_len)
{
	char *copy = strdup(list), *name, *save = NULL;
	size_t used = 0;
	int err = copy ? 0 : -ENOMEM;

	*mask = 0;
	out[0] = 0;
	if (!err && !strcmp(list, "none")) {
		free(copy);
		return 0;
	}
	for (name = copy ? strtok_r(copy, ",", &save) : NULL; name && !err;
	     name = strtok_r(NULL, ",", &save)) {
		const struct grt_source *src = grt_source_find(name);

		if (!src) {
			grt_error("record: unknown source '%s'; see grtrace record --help", name);
			err = -EINVAL;
		} else if (!(*mask & 1u << src->id)) {
			*mask |= 1u << src->id;
			used += (size_t)snprintf(out + used, out_len - used, "%s%s", used ? "," : "", name);
			if (used >= out_len)
				err = -ENAMETOOLONG;
		}
	}
	if (!err && !*mask) {
		grt_error("record: -s '%s' names no source; give a comma-separated list (see grtrace "
			  "record --help) or -s none", list);
		err = -EINVAL;
	}
	free(copy);
	return err;
}

/* The libcuda.so.1 to probe: --libcuda, the one mapped in the pid, or the loader's choice. */
static int resolve_libcuda(const struct record_options *o, char *out, size_t len)
{
	int err;

	if (o->libcuda) {
		/* a FIFO would block the ELF reader forever; a device is no library */
		int fd = regular_file_open(o->libcuda, NULL);

		if (fd < 0) {
			grt_error("record: cannot read --libcuda %s: %s", o->libcuda,
				  regular_file_error(fd));
			return fd;
		}
		close(fd);
		snprintf(out, len, "%s", o->libcuda);
		return 0;
	}
	if (o->pid) {
		err = libcuda_find_in_process(o->pid, out, len);
		if (err == -ENOENT)
			grt_error("record: no libcuda.so.1 mapped in pid %d (attach after it initialises "
				  "CUDA, or pass --libcuda PATH)", (int)o->pid);
		else if (err)
			grt_error("record: cannot read the mappings of pid %d: %s", (int)o->pid, strerror(-err));
		return err;
	}
	err = libcuda_find_for_launch(NULL, out, len);
	if (err)
		grt_error("record: libcuda.so.1 not found for %s (searched %s): pass --libcuda PATH",
			  o->command[0], libcuda_search_description());
	return err;
}

/* Field 4 of /proc/PID/stat, after the parenthesised comm (which may hold spaces). */
static uint32_t read_ppid(pid_t pid)
{
	char path[64], line[512], *close_paren;
	unsigned ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(line, sizeof(line), f) && (close_paren = strrchr(line, ')')))
		sscanf(close_paren + 1, " %*c %u", &ppid);
	fclose(f);
	return ppid;
}

/* The target's own process record: forks are seen by proc tracking, the target is not. */
static void write_target_process(struct grt_writer *w, const struct target *t, uint64_t now)
{
	struct grt_event_origin origin = { .ts_ns = now, .pid = (uint32_t)t->pid, .tid = (uint32_t)t->pid };
	struct grt_process_rec rec = { .event = t->launched ? GRT_PROC_START : GRT_PROC_SEEN };
	char path[64], text[PATH_MAX];
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	n = readlink(path, text, sizeof(text) - 1);
	if (n > 0) {
		text[n] = 0;
		rec.exe_str = grt_writer_intern(w, text);
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)t->pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(text, sizeof(text), f)) {
			text[strcspn(text, "\n")] = 0;
			rec.comm_str = grt_writer_intern(w, text);
		}
		fclose(f);
	}
	rec.ppid = t->launched ? (uint32_t)getpid() : read_ppid(t->pid);
	grt_writer_append(w, GRT_REC_PROCESS, &origin, &rec, sizeof(rec));
}

struct recording {
	struct record_options opts;
	struct target target;
	struct grt_writer *writer;
	struct writer_sink sink;
	struct grt_session *session;
	char libcuda[PATH_MAX];
	char sources[256];	/* -s with each source once */
	uint32_t sources_mask;
};

/* Runs the poll loop until a stop condition; returns the grt_end_reason. */
static uint32_t run_loop(struct recording *rec)
{
	uint64_t start = grt_monotonic_ns(), last_activity = start, last_events = 0;
	uint64_t duration_ns = (uint64_t)(rec->opts.duration_s * 1e9);
	uint64_t idle_ns = (uint64_t)(rec->opts.idle_timeout_s * 1e9);

	for (;;) {
		uint64_t now, events;

		grt_session_poll(rec->session, POLL_INTERVAL_MS);
		now = grt_monotonic_ns();
		events = grt_session_events(rec->session);
		if (events != last_events) {
			last_events = events;
			last_activity = now;
		}
		if (grt_writer_error(rec->writer))
			return GRT_END_WRITE_ERROR;
		if (stop_signal)
			return GRT_END_SIGNAL;
		if (!rec->opts.all && !target_alive(&rec->target))
			return GRT_END_TARGET_EXIT;
		if (duration_ns && now - start >= duration_ns)
			return GRT_END_DURATION;
		if (idle_ns && now - last_activity >= idle_ns)
			return GRT_END_IDLE;
	}
}

static int start_target(struct recording *rec)
{
	char err[512];
	int rc;

	if (rec->opts.command)
		rc = target_launch_held(&rec->target, rec->opts.command, err, sizeof(err));
	else
		rc = target_attach(&rec->target, rec->opts.pid, err, sizeof(err));
	if (rc)
		grt_error("record: %s", err);
	return rc;
}

/*
 * The recorder's nice value (--nice), set once the command is forked (it
 * keeps the caller's) and before the trace writer's thread starts (a thread
 * starts with its creator's: Linux keeps a nice value per thread).
 */
static void set_recorder_nice(const struct record_options *o)
{
	int caller, want;

	errno = 0;
	caller = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (caller == -1 && errno)
		return;
	want = o->nice_given ? o->nice : caller < DEFAULT_RECORDER_NICE ? caller
									: DEFAULT_RECORDER_NICE;
	/* without CAP_SYS_NICE the default stays the caller's; an explicit one says so */
	if (want != caller && setpriority(PRIO_PROCESS, (id_t)gettid(), want) && o->nice_given)
		grt_notice("record: cannot run at nice %d (%s); recording at the caller's %d", want,
			   strerror(errno), caller);
}

static int open_session(struct recording *rec)
{
	struct grt_session_config cfg = {
		.target_pid = rec->target.pid,
		/*
		 * For -p without --libcuda the cuda source finds the copies the
		 * process maps itself, through their map_files links: the very
		 * inodes mapped, whatever their paths name now.
		 */
		.libcuda_path = rec->libcuda[0] && (rec->opts.libcuda || rec->opts.command)
					? rec->libcuda
					: NULL,
		.options = rec->opts.source_options,
		.noptions = rec->opts.nsource_options,
		.launched = rec->target.launched,
		.system_wide = rec->opts.all,
	};
	struct grt_file_header header;

	record_header_fill(&header, rec->libcuda[0] ? rec->libcuda : NULL, rec->target.pid,
			   rec->opts.command, rec->sources_mask);
	rec->writer = grt_writer_open(rec->opts.output, &header);
	if (!rec->writer) {
		grt_error("record: cannot create %s: %s", rec->opts.output, strerror(errno));
		return -errno;
	}
	writer_sink_init(&rec->sink, rec->writer);
	rec->session = grt_session_new(&cfg, &rec->sink.sink);
	if (!rec->session) {
		grt_error("record: out of memory");
		return -ENOMEM;
	}
	grt_bpf_capture_messages();
	if (grt_session_attach(rec->session, rec->sources[0] ? rec->sources : "")) {
		grt_error("record: %s", grt_session_error(rec->session));
		return -EINVAL;
	}
	if (!rec->target.launched && !rec->opts.all)
		write_target_process(rec->writer, &rec->target, grt_monotonic_ns());
	if (rec->opts.all)
		grt_notice("recording every process to %s; Ctrl-C to stop", rec->opts.output);
	return 0;
}

static int release_target(struct recording *rec)
{
	char err[512];

	if (!rec->target.launched)
		return 0;
	if (target_release(&rec->target, grt_session_target_env(rec->session), err, sizeof(err))) {
		grt_error("record: %s", err);
		return -1;
	}
	/* after exec, so comm and exe name the command rather than grtrace */
	write_target_process(rec->writer, &rec->target, grt_monotonic_ns());
	return 0;
}

/*
 * Installed before anything else: a Ctrl-C while probes attach (which takes
 * a while) must stop the recording in order, trailer written, not kill it.
 * SA_RESTART keeps the setup's own system calls from failing with EINTR; the
 * poll loop waits with a timeout and checks the flag each tick.
 */
static void install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* How a launched target ended, for the closing line: "" when it exited with 0. */
static void describe_target_end(const struct target *t, char *out, size_t len)
{
	char how[64];
	int st = t->exit_status;

	out[0] = 0;
	if (!t->launched || !t->exited || (WIFEXITED(st) && !WEXITSTATUS(st)))
		return;
	snprintf(out, len, ", target %s",
		 grt_describe_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 0,
				   WIFSIGNALED(st) ? (uint32_t)WTERMSIG(st) : 0,
				   WIFSIGNALED(st) && WCOREDUMP(st), how, sizeof(how)));
}

static int finish(struct recording *rec, uint32_t reason)
{
	uint64_t records, drops;
	char how[96];
	int err;

	/*
	 * The target is reaped before the last drain: its exit record was
	 * queued before its parent could see it exit, so the drain below finds
	 * it, however quickly the target ended.
	 */
	target_alive(&rec->target);
	grt_session_detach_all(rec->session);
	if (grt_writer_error(rec->writer))
		reason = GRT_END_WRITE_ERROR;
	records = grt_writer_records(rec->writer);
	drops = grt_writer_drops(rec->writer);
	err = grt_writer_close(rec->writer, reason, grt_monotonic_ns());
	rec->writer = NULL;
	if (err) {
		grt_error("record: writing %s failed: %s; the file is marked incomplete and the "
			  "records before the failure are readable", rec->opts.output, strerror(-err));
		return GRT_EXIT_FAILURE;
	}
	describe_target_end(&rec->target, how, sizeof(how));
	fprintf(stderr, "grtrace: recorded %llu records to %s (%llu events lost), stopped: %s%s\n",
		(unsigned long long)records, rec->opts.output, (unsigned long long)drops,
		grt_end_reason_name(reason), how);
	/* what to do with it: the step after recording, as perf record says perf report */
	fprintf(stderr, "grtrace: next: grtrace report %s\n", rec->opts.output);
	return target_exit_code(&rec->target);
}

static void cleanup(struct recording *rec)
{
	if (rec->session)
		grt_session_free(rec->session);
	if (rec->writer)
		grt_writer_close(rec->writer, GRT_END_SOURCE_ERROR, grt_monotonic_ns());
	target_abort(&rec->target);
	target_close(&rec->target);
}

/* Each source checks the values of its options: a bad one is a usage error (exit 2). */
static int check_source_options(const struct record_options *o)
{
	for (unsigned i = 0; i < o->nsource_options; i++) {
		const struct grt_source_option *opt = grt_source_option_find(o->source_options[i].name, NULL);
		const char *value = o->source_options[i].value;
		char why[256] = "";
		int err = opt && opt->check ? opt->check(value, why, sizeof(why)) : 0;

		if (!err)
			continue;
		if (why[0])
			grt_error("record: %s", why);
		else
			grt_error("record: bad value '%s' for --%s", value, opt->name);
		return err;
	}
	for (unsigned i = 0; i < o->nsource_options; i++) {
		const struct grt_source_option *opt = grt_source_option_find(o->source_options[i].name, NULL);
		const char *value = o->source_options[i].value;

		if (opt && opt->needs_command && !strcmp(value, opt->needs_command) && !o->command) {
			grt_error("record: --%s %s needs a command to launch (-- CMD); drop it for -p or -a",
				  opt->name, value);
			return -EINVAL;
		}
	}
	return 0;
}

static bool source_option_given(const struct record_options *o, const char *name)
{
	for (unsigned i = 0; i < o->nsource_options; i++)
		if (!strcmp(o->source_options[i].name, name))
			return true;
	return false;
}

/* The checks that need nothing started: exit 2 for bad usage before any side effect. */
static int check_request(struct recording *rec)
{
	if (check_sources(rec->opts.sources, &rec->sources_mask, rec->sources, sizeof(rec->sources)))
		return GRT_EXIT_USAGE;
	if (check_source_options(&rec->opts))
		return GRT_EXIT_USAGE;
	/* without the gpu source the programs would silently never run */
	if (source_option_given(&rec->opts, "bpf") && !(rec->sources_mask & 1u << GRT_SRC_GPU)) {
		grt_error("record: --bpf runs programs through the gpu source: add gpu to -s (e.g. "
			  "-s cuda,gpu)");
		return GRT_EXIT_USAGE;
	}
	if (!rec->opts.force && !access(rec->opts.output, F_OK)) {
		grt_error("record: %s exists; give -f to overwrite it, or -o another file",
			  rec->opts.output);
		return GRT_EXIT_USAGE;
	}
	if (rec->opts.libcuda && output_is_input(rec->opts.output, rec->opts.libcuda)) {
		grt_error("record: -o %s is the --libcuda library itself: name another output file",
			  rec->opts.output);
		return GRT_EXIT_USAGE;
	}
	return GRT_EXIT_OK;
}

int record_parse_args(int argc, char **argv)
{
	struct recording rec = { 0 };
	int rc = parse_record_options(argc, argv, &rec.opts);

	if (rc)
		return rc < 0 ? GRT_EXIT_OK : rc;
	return check_request(&rec);
}

int cmd_record(int argc, char **argv)
{
	struct recording rec = { .target = { .barrier_fd = -1, .exec_fd = -1 } };
	char why[256];
	int rc;

	install_signal_handlers();
	rc = parse_record_options(argc, argv, &rec.opts);
	if (rc)
		return rc < 0 ? GRT_EXIT_OK : rc;
	rc = check_request(&rec);
	if (rc)
		return rc;
	if (grt_bpf_probe(why, sizeof(why))) {
		grt_error("record: %s", why);
		return GRT_EXIT_FAILURE;
	}
	if (rec.opts.pid && start_target(&rec))
		return GRT_EXIT_FAILURE;
	if ((!rec.opts.all || rec.opts.libcuda) && (rec.sources_mask & 1u << GRT_SRC_CUDA) &&
	    resolve_libcuda(&rec.opts, rec.libcuda, sizeof(rec.libcuda)))
		return GRT_EXIT_FAILURE;
	if (rec.opts.command && start_target(&rec)) {
		cleanup(&rec);
		return GRT_EXIT_FAILURE;
	}
	set_recorder_nice(&rec.opts);
	if (open_session(&rec)) {
		cleanup(&rec);
		return GRT_EXIT_FAILURE;
	}
	/* a stop asked for while probes attached: the held command never runs */
	if (stop_signal) {
		rc = finish(&rec, GRT_END_SIGNAL);
		cleanup(&rec);
		return rc;
	}
	if (release_target(&rec)) {
		cleanup(&rec);
		return GRT_EXIT_FAILURE;
	}
	rc = finish(&rec, run_loop(&rec));
	cleanup(&rec);
	return rc;
}
