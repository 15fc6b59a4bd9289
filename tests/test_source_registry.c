/*
 * The source registry: every registered source has its id and name from GRT_SOURCE_IDS, and its
 * options (record's flags) are its own, found by name and read back through the session.
 */
#include <errno.h>
#include <string.h>
#include "test_util.h"
#include "listed_sources.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/trace_names.h"

/*
 * Each registered source is one line of the list, and each line but the recorder is a source;
 * the implicit ones (process tracking) write as the recorder.
 */
static void test_sources_are_the_listed_ids(void)
{
	uint32_t seen = 0;

	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s)) {
		if (s->implicit) {
			CHECK_EQ_U64(s->id, GRT_SRC_RECORDER);
			continue;
		}
		CHECK(s->id < GRT_SRC_MAX);
		CHECK_STR(grt_source_name(s->id), s->name);
		CHECK(!(seen & 1u << s->id));
		seen |= 1u << s->id;
		CHECK(grt_source_find(s->name) == s);
	}
	for (size_t i = 0; i < LISTED_SOURCES; i++) {
		if (listed_sources[i].id == GRT_SRC_RECORDER)
			CHECK(!(seen & 1u << listed_sources[i].id));
		else
			CHECK(seen & 1u << listed_sources[i].id);
	}
	CHECK(grt_source_find("drm") != NULL);
}

/* Options are found by name, belong to one source, and never share a name. */
static void test_options_belong_to_their_source(void)
{
	const struct grt_source *owner = NULL;
	unsigned n = 0;

	for (const struct grt_source *s = grt_source_next(NULL); s; s = grt_source_next(s))
		for (const struct grt_source_option *o = s->options; o && o->name; o++) {
			const struct grt_source *found = NULL;

			n++;
			CHECK(o->help && *o->help);
			CHECK(grt_source_option_find(o->name, &found) == o);
			CHECK(found == s);
		}
	CHECK(n >= 4);
	CHECK(grt_source_option_find("syscalls", &owner) != NULL);
	CHECK_STR(owner ? owner->name : "", "syscall");
	CHECK(grt_source_option_find("launch-returns", &owner) != NULL);
	CHECK_STR(owner ? owner->name : "", "cuda");
	CHECK(grt_source_option_find("gpu-kernels", &owner) != NULL);
	CHECK_STR(owner ? owner->name : "", "gpu");
	CHECK(grt_source_option_find("no-such-option", NULL) == NULL);
}

/* A source checks its own values: one line that names the option and the fix. */
static void test_option_checks(void)
{
	const struct grt_source_option *o;
	char why[256];

	o = grt_source_option_find("launch-returns", NULL);
	CHECK(o && o->check);
	if (o && o->check) {
		CHECK_EQ_U64(o->check("0", why, sizeof(why)), 0);
		CHECK_EQ_U64(o->check("1000000000", why, sizeof(why)), 0);
		CHECK_EQ_U64(o->check("1000000001", why, sizeof(why)), (uint64_t)-ERANGE);
		CHECK_STR(why, "bad value '1000000001' for --launch-returns: out of range; give a whole "
			       "number from 0 to 1000000000");
		CHECK_EQ_U64(o->check("x", why, sizeof(why)), (uint64_t)-EINVAL);
		CHECK_STR(why, "bad value 'x' for --launch-returns: give a whole number from 0 to 1000000000");
	}
	o = grt_source_option_find("gpu-kernels", NULL);
	CHECK(o && o->check);
	if (o && o->check) {
		CHECK_EQ_U64(o->check("^vec", why, sizeof(why)), 0);
		CHECK(o->check("(unclosed", why, sizeof(why)) < 0);
		CHECK(strstr(why, "bad --gpu-kernels regular expression '(unclosed': ") == why);
	}
	o = grt_source_option_find("syscalls", NULL);
	CHECK(o && o->check);
	if (o && o->check) {
		CHECK_EQ_U64(o->check("ioctl,mmap", why, sizeof(why)), 0);
		CHECK(o->check("nosuchcall", why, sizeof(why)) < 0);
		CHECK(strstr(why, "nosuchcall") != NULL);
	}
}

static int no_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *origin,
		     const void *payload, uint32_t len)
{
	(void)sink, (void)type, (void)origin, (void)payload, (void)len;
	return 0;
}

static uint32_t no_intern(struct grt_sink *sink, const char *text)
{
	(void)sink, (void)text;
	return 1;
}

static int no_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	(void)sink, (void)source, (void)count, (void)ts_ns;
	return 0;
}

/* The session hands each source the values given: the last of a repeated option, "" for a flag. */
static void test_session_option_values(void)
{
	static const struct grt_source_option_value given[] = {
		{ .name = "launch-returns", .value = "4" },
		{ .name = "launch-stacks", .value = "" },
		{ .name = "launch-returns", .value = "8" },
	};
	struct grt_sink sink = { .append = no_append, .intern = no_intern, .drop = no_drop };
	struct grt_session_config cfg = { .target_pid = 1, .options = given, .noptions = 3 };
	struct grt_session *s = grt_session_new(&cfg, &sink);

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_STR(grt_session_option(s, "launch-returns"), "8");
	CHECK_STR(grt_session_option(s, "launch-stacks"), "");
	CHECK(grt_session_option(s, "syscalls") == NULL);
	grt_session_free(s);
}

int main(void)
{
	RUN_TEST(test_sources_are_the_listed_ids);
	RUN_TEST(test_options_belong_to_their_source);
	RUN_TEST(test_option_checks);
	RUN_TEST(test_session_option_values);
	return TEST_EXIT_STATUS();
}
