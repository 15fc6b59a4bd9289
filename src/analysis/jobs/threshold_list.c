/* The --threshold list parser: keys, typed values, one clear error per mistake. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/jobs/threshold_list.h"

enum value_type {
	V_SHARE = 1,
	V_DURATION = 2,
	V_FACTOR = 4,
	V_COUNT = 8,
};

struct value {
	enum value_type type;
	uint64_t n;		/* ppm, ns, milli, or count */
};

struct threshold_key {
	const char *name;
	unsigned accepts;	/* enum value_type bits */
	size_t share, duration, factor, count; /* offsets into struct job_thresholds, or NONE */
};

#define NONE SIZE_MAX
#define OFF(field) offsetof(struct job_thresholds, field)

static const struct threshold_key keys[] = {
	{ "host-submit-slow", V_SHARE | V_DURATION, OFF(submit_share_ppm), OFF(submit_min_ns), NONE, NONE },
	{ "queue-wait", V_SHARE | V_DURATION, OFF(queue_share_ppm), OFF(queue_min_ns), NONE, NONE },
	{ "exec-long-tail", V_FACTOR | V_COUNT, NONE, NONE, OFF(tail_factor_milli), OFF(tail_min_jobs) },
	{ "dependency-wait", V_SHARE | V_DURATION, OFF(dep_share_ppm), OFF(dep_min_ns), NONE, NONE },
	{ "vm-fault", V_COUNT, NONE, NONE, NONE, OFF(fault_min_count) },
	{ "preempted", V_DURATION, NONE, OFF(offcpu_min_ns), NONE, NONE },
	{ "collective-wait", V_DURATION, NONE, OFF(coll_wait_min_ns), NONE, NONE },
	{ "idle", V_SHARE, OFF(idle_share_ppm), NONE, NONE, NONE },
	{ "late-window", V_DURATION, NONE, OFF(late_window_ns), NONE, NONE },
	{ "batch-gap", V_DURATION, NONE, OFF(batch_gap_ns), NONE, NONE },
	{ "max-open-jobs", V_COUNT, NONE, NONE, NONE, OFF(max_open_jobs) },
};

const char *threshold_list_help(void)
{
	return "host-submit-slow=30%,200us queue-wait=50%,500us exec-long-tail=1.5x,10 "
	       "dependency-wait=40%,0us vm-fault=1 preempted=0us collective-wait=1ms idle=50% late-window=5ms (100ms with uvm) "
	       "batch-gap=20us max-open-jobs=1048576";
}

/* Stands for a key another section owns: skipped, but it takes no extra values. */
static const struct threshold_key foreign_key = { "", 0, NONE, NONE, NONE, NONE };

static int is_plain_number(const char *s)
{
	char *end;

	if (!s[0] || !((s[0] >= '0' && s[0] <= '9') || s[0] == '.'))
		return 0;
	strtod(s, &end);
	return *end == 0;
}

static const struct { const char *suffix; uint64_t ns; } units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
};

/* Parses a non-negative decimal; returns the rest of the string in *rest. */
static int parse_number(const char *s, double *v, const char **rest)
{
	char *end;

	if (!s[0] || !(s[0] == '.' || (s[0] >= '0' && s[0] <= '9')))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || !isfinite(*v) || *v < 0)
		return -EINVAL;
	*rest = end;
	return 0;
}

static int parse_value(const char *tok, struct value *out)
{
	const char *rest;
	double v;

	if (parse_number(tok, &v, &rest))
		return -EINVAL;
	if (!strcmp(rest, "%")) {
		if (v > 100)
			return -EINVAL;
		*out = (struct value){ V_SHARE, (uint64_t)llround(v * 10000.0) };
		return 0;
	}
	if (!strcmp(rest, "x")) {
		*out = (struct value){ V_FACTOR, (uint64_t)llround(v * 1000.0) };
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(rest, units[i].suffix)) {
			if (v * (double)units[i].ns > 1e18)
				return -EINVAL;
			*out = (struct value){ V_DURATION, (uint64_t)llround(v * (double)units[i].ns) };
			return 0;
		}
	if (!rest[0] && v == floor(v) && v <= 4294967295.0) {
		*out = (struct value){ V_COUNT, (uint64_t)v };
		return 0;
	}
	return -EINVAL;
}

static const struct threshold_key *find_key(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
			return &keys[i];
	return NULL;
}

static void store(struct job_thresholds *t, size_t off, uint64_t v, int wide)
{
	char *base = (char *)t;

	if (wide)
		memcpy(base + off, &v, sizeof(uint64_t));
	else {
		uint32_t narrow = (uint32_t)v;

		memcpy(base + off, &narrow, sizeof(uint32_t));
	}
}

static int apply_value(struct job_thresholds *t, const struct threshold_key *k, const struct value *v)
{
	switch (v->type) {
	case V_SHARE:
		store(t, k->share, v->n, 0);
		return 0;
	case V_DURATION:
		store(t, k->duration, v->n, 1);
		return 0;
	case V_FACTOR:
		if (v->n == 0 || v->n > 4294967295u)
			return -EINVAL;
		store(t, k->factor, v->n, 0);
		return 0;
	case V_COUNT:
		store(t, k->count, v->n, 0);
		return 0;
	}
	return -EINVAL;
}

static const char *expects(unsigned accepts, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", accepts & V_SHARE ? " SHARE%" : "",
		 accepts & V_DURATION ? " DURATION(ns|us|ms|s)" : "", accepts & V_FACTOR ? " FACTORx" : "",
		 accepts & V_COUNT ? " COUNT" : "");
	return buf;
}

/* One token: "key=value" starts a key, "value" continues the current one. */
static int parse_token(struct job_thresholds *t, char *tok, const struct threshold_key **key,
		       unsigned *seen, char *err, size_t err_len)
{
	char *eq = strchr(tok, '=');
	char buf[96];
	struct value v;

	if (eq) {
		*key = find_key(tok, (size_t)(eq - tok));
		if (!*key && is_plain_number(eq + 1)) {
			/* KEY=NUMBER of another report section (leak_min_bytes=...) */
			*key = &foreign_key;
			return 0;
		}
		if (!*key) {
			snprintf(err, err_len, "unknown threshold '%.*s' (known: %s)", (int)(eq - tok), tok,
				 threshold_list_help());
			return -EINVAL;
		}
		*seen = 0;
		tok = eq + 1;
	}
	if (*key == &foreign_key) {
		snprintf(err, err_len, "threshold value '%s' follows a key the jobs section does not know",
			 tok);
		return -EINVAL;
	}
	if (!*key) {
		snprintf(err, err_len, "threshold value '%s' before any KEY= (e.g. queue-wait=50%%,500us)",
			 tok);
		return -EINVAL;
	}
	if (parse_value(tok, &v) || !((*key)->accepts & v.type) || apply_value(t, *key, &v)) {
		snprintf(err, err_len, "bad value '%s' for %s (expects%s)", tok, (*key)->name,
			 expects((*key)->accepts, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (*seen & v.type) {
		snprintf(err, err_len, "%s given two values of one kind ('%s')", (*key)->name, tok);
		return -EINVAL;
	}
	*seen |= v.type;
	return 0;
}

int threshold_list_parse(struct job_thresholds *t, const char *list, char *err, size_t err_len)
{
	const struct threshold_key *key = NULL;
	struct job_thresholds parsed = *t;
	unsigned seen = 0;
	char *copy, *save = NULL, *tok;
	int rc = 0;

	if (!list)
		return 0;
	copy = strdup(list);
	if (!copy) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
		rc = parse_token(&parsed, tok, &key, &seen, err, err_len);
	if (!rc && !key && !seen) {
		snprintf(err, err_len, "empty threshold list");
		rc = -EINVAL;
	}
	free(copy);
	if (!rc)
		*t = parsed;
	return rc;
}
