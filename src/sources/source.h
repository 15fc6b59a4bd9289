/* The interface every grtrace source implements, and how sources register themselves. */
#ifndef GRT_SOURCE_H
#define GRT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include "trace/grt_format.h"

struct grt_session;

/*
 * Threads grtrace itself runs inside a traced process (the gpu source's
 * library) name themselves with this prefix, so other sources leave their
 * calls out of the application's activity.
 */
#define GRT_OWN_THREAD_PREFIX "grtrace-"

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
};

/*
 * Registers a source by placing a pointer to it in a linker section: adding a
 * source is adding files, nothing else.
 */
#define GRT_SOURCE_REGISTER(var)                                                                    \
	static const struct grt_source *const var##_entry                                          \
		__attribute__((used, section("grt_sources"), aligned(sizeof(void *)))) = &var

/* The registered source called name, or NULL. */
const struct grt_source *grt_source_find(const char *name);
/* Iterates registered sources: pass NULL first, then the previous result. */
const struct grt_source *grt_source_next(const struct grt_source *prev);

#endif
