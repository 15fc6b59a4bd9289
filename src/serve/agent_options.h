/* Command-line options serve and top share: which processes, which libcuda, labels, idle timeout. */
#ifndef GRT_SERVE_AGENT_OPTIONS_H
#define GRT_SERVE_AGENT_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>
#include "serve/agent.h"

#define AGENT_MAX_PIDS 64
#define AGENT_MAX_LIBCUDA 16

struct agent_options {
	pid_t pids[AGENT_MAX_PIDS];
	unsigned npids;
	const char *libcuda[AGENT_MAX_LIBCUDA];
	unsigned nlibcuda;
	unsigned kernel_labels;
	double idle_timeout_s;
	double duration_s; /* 0: until a signal */
	const char *sources;
	bool nvml; /* -s pcie */
	bool xid;  /* -s xid */
	bool uvm;  /* -s uvm */
};

/* Defaults: every process, 50 kernel labels, 60 s idle timeout, -s cuda. */
void agent_options_init(struct agent_options *o);

/*
 * Takes one option shared by the agent's commands (-p, --libcuda,
 * --kernel-labels, --idle-timeout, --duration, -s) by its getopt letter.
 * Returns 1 when taken, 0 when the letter is not one of them, or -EINVAL
 * after printing "grtrace: CMD: ..." for a bad value.
 */
int agent_options_take(struct agent_options *o, const char *cmd, int letter, const char *arg);

/* Checks the -s list (setting nvml), files and pids; prints why not and returns a negative errno. */
int agent_options_check(struct agent_options *o, const char *cmd);

/* The agent configuration these options give; log gets leak reports and notes. */
void agent_options_config(const struct agent_options *o, FILE *log, struct serve_agent_config *cfg);

/* getopt_long entries for the shared options (letters p, l, K, i, d, s), terminated. */
#define AGENT_LONG_OPTIONS                                                                         \
	{"pid", required_argument, NULL, 'p'}, {"libcuda", required_argument, NULL, 'l'},          \
	    {"kernel-labels", required_argument, NULL, 'K'},                                       \
	    {"idle-timeout", required_argument, NULL, 'i'},                                        \
	    {"duration", required_argument, NULL, 'd'}, {"sources", required_argument, NULL, 's'}

#endif
