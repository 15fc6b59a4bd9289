/* `grtrace serve`: the node agent, CUDA metrics of every process for Prometheus on /metrics. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/option_error.h"
#include "common/clock.h"
#include "common/log.h"
#include "serve/agent.h"
#include "serve/agent_options.h"
#include "serve/http.h"
#include "sources/bpf_util.h"

#define SERVE_TICK_MS 200

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

static void serve_usage(FILE *out)
{
	fprintf(out,
		"usage: grtrace serve [--listen ADDR] [-s SOURCES] [-p PID ...] [--libcuda PATH ...]\n"
		"                     [--kernel-labels N] [--idle-timeout S] [--duration S]\n"
		"  --listen ADDR       HOST:PORT, [IPV6]:PORT or :PORT (every address);\n"
		"                      default 127.0.0.1:9464\n"
		"  -s SOURCES          what to count: cuda (always), pcie (NVML device gauges),\n"
		"                      xid (Xid errors); default cuda\n"
		"  -p PID              only this process and its children (repeatable);\n"
		"                      default: every process that maps a libcuda\n"
		"  --libcuda PATH      probe this libcuda file too (repeatable)\n"
		"  --kernel-labels N   kernel names per process with their own series (default 50);\n"
		"                      launches of the rest are kernel=\"other\"\n"
		"  --idle-timeout S    keep an exited process's series S seconds (default 60)\n"
		"  --duration S        stop after S seconds (default: SIGINT/SIGTERM)\n"
		"Serves /metrics (Prometheus text 0.0.4, or OpenMetrics 1.0.0 when Accept asks)\n"
		"and /healthz. Leaks of exiting processes are logged on stderr.\n");
}

static int parse_args(int argc, char **argv, struct agent_options *o, const char **listen)
{
	static const struct option options[] = {
	    AGENT_LONG_OPTIONS,
	    {"listen", required_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int opt, taken;

	agent_options_init(o);
	*listen = "127.0.0.1:9464";
	optind = 0; /* glibc: 0 resets getopt fully, state of an earlier parse included */
	opterr = 0; /* getopt's own message would not be the one-line "grtrace: serve: ..." */
	while ((opt = getopt_long(argc, argv, ":p:s:h", options, NULL)) != -1) {
		taken = agent_options_take(o, "serve", opt, optarg);
		if (taken < 0)
			return GRT_EXIT_USAGE;
		if (taken)
			continue;
		if (opt == 'L') {
			*listen = optarg;
		} else if (opt == 'h') {
			serve_usage(stdout);
			return -1;
		} else { /* ':' and '?' */
			return option_error("serve", opt, argv);
		}
	}
	if (optind < argc) {
		grt_error("serve: unexpected argument '%s' (see grtrace serve --help)", argv[optind]);
		return GRT_EXIT_USAGE;
	}
	return 0;
}

static void catch_stop_signals(void)
{
	/* no SA_RESTART: the signal must cut the loop's epoll_wait short */
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_serve(int argc, char **argv)
{
	struct agent_options o;
	struct serve_agent_config cfg;
	struct serve_agent *agent = NULL;
	struct serve_http *http = NULL;
	_Atomic uint64_t heartbeat = grt_monotonic_ns();
	const char *listen;
	char why[512], host[256];
	uint64_t deadline;
	unsigned port;
	int rc, err;

	rc = parse_args(argc, argv, &o, &listen);
	if (rc)
		return rc < 0 ? GRT_EXIT_OK : rc;
	if (serve_parse_listen(listen, host, sizeof(host), &port)) {
		grt_error("serve: bad --listen '%s': give HOST:PORT, [IPV6]:PORT or :PORT", listen);
		return GRT_EXIT_USAGE;
	}
	err = agent_options_check(&o, "serve");
	if (err)
		return err == -EINVAL ? GRT_EXIT_USAGE : GRT_EXIT_FAILURE;
	if (grt_bpf_probe(why, sizeof(why))) {
		grt_error("serve: %s", why);
		return GRT_EXIT_FAILURE;
	}
	agent_options_config(&o, stderr, &cfg);
	{
		struct serve_http_config hc = {.listen = listen, .heartbeat_ns = &heartbeat};

		err = serve_http_start(&http, &hc, why, sizeof(why));
	}
	if (!err)
		err = serve_agent_start(&agent, &cfg, why, sizeof(why));
	if (err) {
		grt_error("serve: %s", why);
		serve_http_stop(http);
		return GRT_EXIT_FAILURE;
	}
	serve_http_set_agent(http, agent);
	catch_stop_signals();
	grt_notice("serving metrics on http://%s%s%s:%u/metrics (%s)", strchr(host, ':') ? "[" : "",
		   host[0] ? host : "0.0.0.0", strchr(host, ':') ? "]" : "", serve_http_port(http),
		   o.npids ? "the given processes and their children" : "every process");
	deadline = o.duration_s > 0 ? grt_monotonic_ns() + (uint64_t)(o.duration_s * 1e9) : UINT64_MAX;
	while (!stop_requested && grt_monotonic_ns() < deadline) {
		serve_agent_poll(agent, SERVE_TICK_MS);
		atomic_store(&heartbeat, grt_monotonic_ns());
	}
	serve_http_stop(http);
	serve_agent_stop(agent);
	return GRT_EXIT_OK;
}
