/* Parsing and checking the options of the agent's commands (serve, top). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "serve/agent_options.h"

void agent_options_init(struct agent_options *o)
{
	memset(o, 0, sizeof(*o));
	o->kernel_labels = 50;
	o->idle_timeout_s = 60;
	o->sources = "cuda";
}

static bool number_in(const char *text, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	return !errno && end != text && !*end && *out >= lo && *out <= hi;
}

int agent_options_take(struct agent_options *o, const char *cmd, int letter, const char *arg)
{
	double v;

	switch (letter) {
	case 'p':
		if (!number_in(arg, 1, INT_MAX, &v) || v != (pid_t)v) {
			grt_error("%s: -p needs a process id, not '%s'", cmd, arg);
			return -EINVAL;
		}
		if (o->npids == AGENT_MAX_PIDS) {
			grt_error("%s: at most %d -p options", cmd, AGENT_MAX_PIDS);
			return -EINVAL;
		}
		o->pids[o->npids++] = (pid_t)v;
		return 1;
	case 'l':
		if (o->nlibcuda == AGENT_MAX_LIBCUDA) {
			grt_error("%s: at most %d --libcuda options", cmd, AGENT_MAX_LIBCUDA);
			return -EINVAL;
		}
		o->libcuda[o->nlibcuda++] = arg;
		return 1;
	case 'K':
		if (!number_in(arg, 0, 100000, &v) || v != (unsigned)v) {
			grt_error("%s: --kernel-labels needs a count from 0 to 100000, not '%s'", cmd,
				  arg);
			return -EINVAL;
		}
		o->kernel_labels = (unsigned)v;
		return 1;
	case 'i':
		if (!number_in(arg, 0, 86400 * 365, &v)) {
			grt_error("%s: --idle-timeout needs seconds (0 or more), not '%s'", cmd, arg);
			return -EINVAL;
		}
		o->idle_timeout_s = v;
		return 1;
	case 'd':
		if (!number_in(arg, 0.001, 86400 * 365, &v)) {
			grt_error("%s: --duration needs a positive number of seconds, not '%s'", cmd,
				  arg);
			return -EINVAL;
		}
		o->duration_s = v;
		return 1;
	case 's':
		o->sources = arg;
		return 1;
	}
	return 0;
}

int agent_options_check(struct agent_options *o, const char *cmd)
{
	char list[256], *name, *save = NULL;

	snprintf(list, sizeof(list), "%s", o->sources);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (!strcmp(name, "pcie")) {
			o->nvml = true;
		} else if (!strcmp(name, "xid")) {
			o->xid = true;
		} else if (!strcmp(name, "uvm")) {
			o->uvm = true;
		} else if (strcmp(name, "cuda")) {
			grt_error("%s: source '%s' is not served (give -s with cuda, pcie, uvm, xid)", cmd,
				  name);
			return -EINVAL;
		}
	}
	for (unsigned i = 0; i < o->nlibcuda; i++)
		if (access(o->libcuda[i], R_OK)) {
			grt_error("%s: cannot read --libcuda %s: %s", cmd, o->libcuda[i],
				  strerror(errno));
			return -ENOENT;
		}
	for (unsigned i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			grt_error("%s: no process %d", cmd, (int)o->pids[i]);
			return -ESRCH;
		}
	return 0;
}

void agent_options_config(const struct agent_options *o, FILE *log, struct serve_agent_config *cfg)
{
	*cfg = (struct serve_agent_config){
	    .pids = o->pids,
	    .npids = o->npids,
	    .libcuda_paths = o->libcuda,
	    .nlibcuda = o->nlibcuda,
	    .kernel_labels = o->kernel_labels,
	    .idle_timeout_s = o->idle_timeout_s,
	    .log = log,
	    .nvml = o->nvml,
	    .xid = o->xid,
	    .uvm = o->uvm,
	    /* a test double where no NVIDIA driver is: a capture's events for every process */
	    .uvm_replay = getenv("GRTRACE_UVM_REPLAY"),
	};
	if (getenv("GRT_SERVE_RESCAN_S"))
		cfg->rescan_s = atof(getenv("GRT_SERVE_RESCAN_S"));
}
