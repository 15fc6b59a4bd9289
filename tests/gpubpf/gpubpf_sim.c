/* gpubpf_sim: GPU eBPF objects over a simulated launch, as the trace a GPU run must match. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf_sim.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: gpubpf_sim -o OUT.grt --kernel NAME --grid X[,Y,Z] --block X[,Y,Z]\n"
	    "                  [--params P0,P1,...] [--access ld|st,PARAM,SIZE]... [--guard "
	    "PARAM]\n"
	    "                  [--capacity THREADS] [--ring BYTES] [--sms N] [--launches N] "
	    "OBJ.bpf.o...\n"
	    "  Runs the objects' programs in the reference interpreter as a launch of kernel NAME\n"
	    "  would run them on the GPU, then writes descriptions, final map contents, ring "
	    "events\n"
	    "  and printk lines as `grtrace record --bpf` does: compare `grtrace report --bpf`.\n"
	    "  --access  a global access of every thread at PARAM + thread_index * SIZE, in order\n"
	    "  --guard   only threads whose index is below the value of parameter PARAM access\n");
}

static int parse_list(const char *s, uint64_t *v, unsigned max, unsigned *n)
{
	char *end;

	*n = 0;
	while (*s && *n < max) {
		errno = 0;
		v[(*n)++] = strtoull(s, &end, 0);
		if (errno || end == s || (*end && *end != ','))
			return -1;
		s = *end ? end + 1 : end;
	}
	return *s ? -1 : 0;
}

static int parse_dim3(const char *s, uint32_t d[3])
{
	uint64_t v[3] = {1, 1, 1};
	unsigned n;

	if (parse_list(s, v, 3, &n) || !n)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (!v[i] || v[i] > UINT32_MAX)
			return -1;
		d[i] = (uint32_t)v[i];
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"kernel", required_argument, NULL, 'k'},	{"grid", required_argument, NULL, 'g'},
	    {"block", required_argument, NULL, 'b'},	{"params", required_argument, NULL, 'p'},
	    {"access", required_argument, NULL, 'a'},	{"guard", required_argument, NULL, 'G'},
	    {"capacity", required_argument, NULL, 'c'}, {"ring", required_argument, NULL, 'r'},
	    {"sms", required_argument, NULL, 's'},	{"launches", required_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},		{0},
	};
	struct sim_config c = {.launch = {.grid = {1, 1, 1},
					  .block = {1, 1, 1},
					  .nr_sms = 132,
					  .t0_ns = 1000000,
					  .block_ns = 1000,
					  .thread_ns = 10,
					  .body_ns = 5000},
			       .guard_param = -1,
			       .thread_capacity = 1 << 20,
			       .ring_bytes = 16 << 20};
	const char *out = NULL;
	struct sim s;
	char err[512];
	int opt, rc;
	unsigned n;

	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'k':
			c.launch.kernel = optarg;
			break;
		case 'g':
		case 'b':
			if (parse_dim3(optarg, opt == 'g' ? c.launch.grid : c.launch.block)) {
				fprintf(stderr, "gpubpf_sim: bad --%s '%s'\n",
					opt == 'g' ? "grid" : "block", optarg);
				return 2;
			}
			break;
		case 'p':
			if (parse_list(optarg, c.launch.params, GRT_BPF_CTX_PARAMS, &n)) {
				fprintf(stderr, "gpubpf_sim: bad --params '%s'\n", optarg);
				return 2;
			}
			break;
		case 'a': {
			uint64_t v[2];
			bool store = !strncmp(optarg, "st,", 3);

			if ((!store && strncmp(optarg, "ld,", 3)) ||
			    parse_list(optarg + 3, v, 2, &n) || n != 2 ||
			    v[0] >= GRT_BPF_CTX_PARAMS || c.nr_access == SIM_MAX_ACCESSES) {
				fprintf(stderr,
					"gpubpf_sim: bad --access '%s' (ld|st,PARAM,SIZE)\n",
					optarg);
				return 2;
			}
			c.access[c.nr_access++] =
			    (struct sim_access){store, (unsigned)v[0], (uint32_t)v[1]};
			break;
		}
		case 'G':
			c.guard_param = atoi(optarg);
			break;
		case 'c':
			c.thread_capacity = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			c.ring_bytes = strtoull(optarg, NULL, 0);
			break;
		case 's':
			c.launch.nr_sms = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			c.launches = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!out || !c.launch.kernel || optind >= argc) {
		usage(stderr);
		return 2;
	}
	rc = sim_run(&s, (const char *const *)argv + optind, (size_t)(argc - optind), &c, err,
		     sizeof(err));
	if (!rc)
		rc = sim_write_trace(&s, out, err, sizeof(err));
	if (rc)
		fprintf(stderr, "gpubpf_sim: %s\n", err);
	else
		printf("gpubpf_sim: %llu eBPF instructions run, trace in %s\n",
		       (unsigned long long)s.sessions[0].insns_run, out);
	sim_free(&s);
	return rc ? 1 : 0;
}
