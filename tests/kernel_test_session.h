/* Test helpers for the kernel sources: an in-memory sink and a workload held at a start barrier. */
#ifndef GRT_KERNEL_TEST_SESSION_H
#define GRT_KERNEL_TEST_SESSION_H

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sources/bpf_util.h"
#include "sources/session.h"

struct mem_record {
	uint16_t type;
	struct grt_event_origin origin;
	uint32_t len;
	uint8_t payload[256] __attribute__((aligned(8)));
};

/* Collects records and strings in memory (ids are indexes + 1). */
struct mem_sink {
	struct grt_sink sink;	/* first: the callbacks get &mem_sink->sink */
	struct mem_record *recs;
	size_t count, cap;
	char *strings[4096];
	uint32_t nstrings;
	uint64_t drops;
};

static inline int mem_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *origin,
		      const void *payload, uint32_t len)
{
	struct mem_sink *m = (struct mem_sink *)sink;

	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct mem_record *grown = realloc(m->recs, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->recs = grown;
		m->cap = cap;
	}
	struct mem_record *r = &m->recs[m->count++];
	r->type = type;
	r->origin = *origin;
	r->len = len < sizeof(r->payload) ? len : sizeof(r->payload);
	memcpy(r->payload, payload, r->len);
	return 0;
}

static inline uint32_t mem_intern(struct grt_sink *sink, const char *text)
{
	struct mem_sink *m = (struct mem_sink *)sink;

	if (!text || !*text)
		return 0;
	for (uint32_t i = 0; i < m->nstrings; i++)
		if (!strcmp(m->strings[i], text))
			return i + 1;
	if (m->nstrings == sizeof(m->strings) / sizeof(m->strings[0]))
		return 0;
	m->strings[m->nstrings++] = strdup(text);
	return m->nstrings;
}

static inline int mem_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	((struct mem_sink *)sink)->drops += count;
	return 0;
}

static inline void mem_sink_init(struct mem_sink *m)
{
	memset(m, 0, sizeof(*m));
	m->sink.append = mem_append;
	m->sink.intern = mem_intern;
	m->sink.drop = mem_drop;
}

static inline void mem_sink_free(struct mem_sink *m)
{
	for (uint32_t i = 0; i < m->nstrings; i++)
		free(m->strings[i]);
	free(m->recs);
}

/* A fresh sink and a session on it that traces this test process; NULL when that fails. */
static inline struct grt_session *mem_session_new(struct mem_sink *m)
{
	struct grt_session_config cfg = { .target_pid = getpid() };

	mem_sink_init(m);
	return grt_session_new(&cfg, &m->sink);
}

static inline const char *mem_string(const struct mem_sink *m, uint32_t id)
{
	return id && id <= m->nstrings ? m->strings[id - 1] : NULL;
}

/* Path of a fixture program beside the test binary: BUILD/tests/x -> BUILD/fixtures/name. */
static inline void fixture_path(const char *argv0, const char *name, char *out, size_t len)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", argv0);
	snprintf(out, len, "%s/../fixtures/%s", dirname(copy), name);
}

struct held_child {
	pid_t pid;
	int go_fd;	/* write one byte to start it */
};

/* Starts argv (its first argument must be --wait-stdin) and leaves it waiting for the go byte. */
static inline int start_held(char *const argv[], struct held_child *child)
{
	int p[2];

	if (pipe(p))
		return -errno;
	child->pid = fork();
	if (child->pid < 0)
		return -errno;
	if (child->pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	child->go_fd = p[1];
	return 0;
}

/*
 * Records the held child with the given sources into sink: attach, release,
 * wait for its exit, drain. Returns the child's exit status or a negative errno.
 */
static inline int record_held(struct held_child *child, const char *sources, const char *syscalls,
		       struct mem_sink *sink, char *err, size_t err_len)
{
	struct grt_source_option_value filter = { .name = "syscalls", .value = syscalls };
	struct grt_session_config cfg = { .target_pid = child->pid, .options = &filter,
					  .noptions = syscalls ? 1 : 0 };
	struct grt_session *s = grt_session_new(&cfg, &sink->sink);
	int status = 0, rc;

	if (!s)
		return -ENOMEM;
	rc = grt_session_attach(s, sources);
	if (rc) {
		snprintf(err, err_len, "%s", grt_session_error(s));
		kill(child->pid, SIGKILL);
		waitpid(child->pid, NULL, 0);
		grt_session_free(s);
		return rc;
	}
	if (write(child->go_fd, "g", 1) != 1)
		rc = -errno;
	close(child->go_fd);
	while (waitpid(child->pid, &status, WNOHANG) == 0)
		grt_session_poll(s, 20);
	grt_session_poll(s, 0);
	grt_session_detach_all(s);
	grt_session_free(s);
	return rc ? rc : (WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}

#endif
