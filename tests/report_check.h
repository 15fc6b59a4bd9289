/* Running the report into a string and looking for lines in it, for the report tests. */
#ifndef GRT_REPORT_CHECK_H
#define GRT_REPORT_CHECK_H

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/report.h"
#include "analysis/report_section.h"
#include "test_util.h"

/*
 * Runs the report over path with the sections named in a comma list (NULL:
 * the default ones) and the options of base (format, --top, --threshold,
 * --own), and returns its output (caller frees); *rc gets the exit code.
 */
static inline char *report_capture_with(const char *path, const char *sections,
					struct report_options base, int *rc)
{
	const struct report_section *chosen[32];
	struct report_options opt = base;
	char *text = NULL, names[256];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	opt.sections = chosen;
	opt.nsections = 0;
	if (sections) {
		snprintf(names, sizeof(names), "%s", sections);
		for (char *save, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save))
			if ((chosen[opt.nsections] = report_section_find(n)))
				opt.nsections++;
	} else {
		for (const struct report_section *s = report_section_next(NULL); s;
		     s = report_section_next(s))
			if (s->default_on)
				chosen[opt.nsections++] = s;
	}
	*rc = report_run(path, &opt, out);
	fclose(out);
	return text;
}

static inline char *report_capture(const char *path, const char *sections, unsigned top,
				   const char *thresholds, bool json, int *rc)
{
	return report_capture_with(path, sections,
				   (struct report_options){ .top_n = top, .thresholds = thresholds,
							    .json = json },
				   rc);
}

/* Whether text has a line equal to line once trailing blanks are ignored. */
static inline bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *at = text; at && *at; at = strchr(at, '\n'), at = at ? at + 1 : NULL) {
		const char *end = strchr(at, '\n');
		size_t len = end ? (size_t)(end - at) : strlen(at);

		while (len && at[len - 1] == ' ')
			len--;
		if (len == n && !strncmp(at, line, n))
			return true;
	}
	return false;
}

/* CHECK that a line is present, printing the whole report when it is not. */
#define CHECK_LINE(text, line)                                                                     \
	do {                                                                                       \
		if (!has_line((text), (line))) {                                                   \
			printf("  missing line: \"%s\"\n--- report ---\n%s--- end ---\n", (line),   \
			       (text));                                                            \
			CHECK(!"line present");                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_HAS(text, needle)                                                                    \
	do {                                                                                       \
		if (!strstr((text), (needle))) {                                                   \
			printf("  missing \"%s\"\n--- report ---\n%s--- end ---\n", (needle), (text)); \
			CHECK(!"text present");                                                    \
		}                                                                                  \
	} while (0)

/* A fresh directory for one test program's traces. */
static inline const char *report_test_dir(void)
{
	static char dir[64];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/grt-report-test-XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			exit(1);
		}
	}
	return dir;
}

static inline void report_test_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", report_test_dir());
	if (system(cmd))
		printf("  could not remove %s\n", report_test_dir());
}

static inline const char *report_test_path(const char *name)
{
	static char path[8][256];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s.grt", report_test_dir(), name);
	return p;
}

#endif
