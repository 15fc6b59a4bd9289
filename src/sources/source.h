/* The interface every grtrace source implements, and how sources register themselves. */
#ifndef GRT_SOURCE_H
#define GRT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "trace/grt_format.h"

struct grt_session;

/*
 * Threads grtrace itself runs inside a traced process (the gpu source's
 * library) name themselves with this prefix, so other sources leave their
 * calls out of the application's activity.
 */
#define GRT_OWN_THREAD_PREFIX "grtrace-"

/* Whether a thread or process name (a NUL-terminated comm) is one of grtrace's own threads'. */
static inline bool grt_is_own_thread_name(const char *comm)
{
	return !strncmp(comm, GRT_OWN_THREAD_PREFIX, sizeof(GRT_OWN_THREAD_PREFIX) - 1);
}

/*
 * An option a source takes on the command line of record (--NAME or --NAME VALUE): the
 * command's option table and usage text are made from the registered sources' lists, and the
 * source reads the value back at attach with grt_session_option().
 */
struct grt_source_option {
	const char *name;	/* "syscalls" for --syscalls */
	const char *arg;	/* the value's name in the usage text ("LIST"); NULL: a flag */
	const char *help;	/* the rest of its usage line */
	/*
	 * Checked before anything starts, so a bad value is a usage error: 0, or a negative
	 * errno with one line in why (left empty: "bad value 'V' for --NAME"). NULL: any value.
	 */
	int (*check)(const char *value, char *why, size_t why_len);
	/* A value that only works when record launches the command (-- CMD); NULL: none. */
	const char *needs_command;
};

/*
 * A source is probed, attached to a session, drained while the session runs,
 * and detached. Sources never print: they report failure as a negative errno
 * plus one line in the session's error buffer (grt_session_fail), and the
 * command that runs them decides how to show it.
 */
struct grt_source {
	const char *name;	/* as given to -s: "cuda", "syscall", ... */
	enum grt_source_id id;
	const char *summary;	/* one line for --help */
	/* Attached first in every session and not selectable with -s (process tracking). */
	bool implicit;
	/* 0 when usable on this machine; else a negative errno and the reason in why. */
	int (*probe)(char *why, size_t why_len);
	/* Loads and attaches for the session's target; fills *ctx. Called before the target runs. */
	int (*attach)(struct grt_session *s, void **ctx);
	/* Called on every session tick and once more at stop: pull pending events, report drops. */
	int (*drain)(void *ctx);
	/* Releases everything attach took. ctx may be NULL. */
	void (*detach)(void *ctx);
	/* Its command-line options, ended by one without a name; NULL: none. */
	const struct grt_source_option *options;
};

/*
 * Registers a source by placing a pointer to it in a linker section: adding a
 * source is adding its files (NAME.c, NAME.bpf.c, its records_NAME.h/.c in
 * src/trace numbered from GRT_REC_SOURCE_FIRST(id), a snoop view), its options
 * in .options, and one line with its id in GRT_SOURCE_IDS (grt_format.h).
 */
#define GRT_SOURCE_REGISTER(var)                                                                    \
	static const struct grt_source *const var##_entry                                          \
		__attribute__((used, section("grt_sources"), aligned(sizeof(void *)))) = &var

/* The registered source called name, or NULL. */
const struct grt_source *grt_source_find(const char *name);
/* Iterates registered sources: pass NULL first, then the previous result. */
const struct grt_source *grt_source_next(const struct grt_source *prev);
/* The option --name of any registered source, or NULL; *owner (may be NULL) gets its source. */
const struct grt_source_option *grt_source_option_find(const char *name, const struct grt_source **owner);

#endif
