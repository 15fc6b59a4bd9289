/* Names of job kinds, tags and flags, shared by every output format. */
#include <stdio.h>
#include <string.h>
#include "analysis/jobs/job.h"
#include "trace/trace_names.h"

static const char *const kind_names[] = {
	[JOB_KERNEL] = "kernel",
	[JOB_GRAPH] = "graph",
	[JOB_MEMCPY] = "memcpy",
	[JOB_MEMSET] = "memset",
	[JOB_DRM] = "drm",
};

static const char *const tag_names[] = {
	[JOB_TAG_HOST_SUBMIT_SLOW] = "host-submit-slow",
	[JOB_TAG_QUEUE_WAIT] = "queue-wait",
	[JOB_TAG_EXEC_LONG_TAIL] = "exec-long-tail",
	[JOB_TAG_DEPENDENCY_WAIT] = "dependency-wait",
	[JOB_TAG_VM_FAULT] = "vm-fault",
	[JOB_TAG_PREEMPTED] = "preempted",
	[JOB_TAG_COLLECTIVE_WAIT] = "collective-wait",
};

static const char *const missing_names[JOB_MISSING_NAMES] = {
	"no-host-launch", "no-submit", "no-device-timing", "no-complete", "unknown-dependency",
};

static const char *const missing_labels[JOB_MISSING_NAMES] = {
	"no host launch", "no submit", "no device timing", "no completion", "unknown dependency",
};

/* submit, device timing, completion, dependency: the order a job goes through them */
const uint32_t job_missing_steps[JOB_MISSING_STEPS] = { 1, 2, 3, 4 };

uint32_t job_first_missing(const struct job *j)
{
	for (unsigned i = 0; i < JOB_MISSING_STEPS; i++)
		if (j->missing & (1u << job_missing_steps[i]))
			return job_missing_steps[i];
	for (uint32_t bit = 0; bit < JOB_MISSING_NAMES; bit++)
		if (j->missing & (1u << bit))
			return bit;
	return JOB_MISSING_NAMES;
}

const char *job_missing_label(uint32_t bit)
{
	return GRT_NAME_OF(missing_labels, bit);
}

static const char *const flag_names[JOB_FLAG_NAMES] = {
	"sync-call", "clamped", "matched-by-order", "block-probe", "forced", "failed", "tail-unchecked",
	"matched-by-time", "return-unsampled", "own", "start-by-ring-order",
};

const char *job_kind_name(uint32_t kind)
{
	return GRT_NAME_OF(kind_names, kind);
}

const char *job_tag_name(uint32_t tag)
{
	return GRT_NAME_OF(tag_names, tag);
}

const char *job_missing_name(uint32_t bit)
{
	return GRT_NAME_OF(missing_names, bit);
}

const char *job_flag_name(uint32_t bit)
{
	return GRT_NAME_OF(flag_names, bit);
}

/* Names that do not fit whole are left out, as snprintf would cut them. */
static const char *bits_text(uint32_t bits, const char *const *names, unsigned n, char *buf,
			     unsigned len)
{
	unsigned used = 0;

	buf[0] = 0;
	for (unsigned i = 0; bits && i < n; i++) {
		size_t name_len;

		if (!(bits & (1u << i)))
			continue;
		name_len = strlen(names[i]);
		if (used + (used ? 1 : 0) + name_len >= len)
			break;
		if (used)
			buf[used++] = ',';
		memcpy(buf + used, names[i], name_len);
		used += (unsigned)name_len;
		buf[used] = 0;
	}
	return buf;
}

const char *job_tags_text(const struct job *j, char *buf, unsigned len)
{
	return bits_text(j->tags, tag_names, JOB_TAG_COUNT, buf, len);
}

const char *job_missing_text(const struct job *j, char *buf, unsigned len)
{
	return bits_text(j->missing, missing_names, sizeof(missing_names) / sizeof(missing_names[0]),
			 buf, len);
}

const char *job_flags_text(const struct job *j, char *buf, unsigned len)
{
	return bits_text(j->flags, flag_names, sizeof(flag_names) / sizeof(flag_names[0]), buf, len);
}
