/* Parsing `--threshold queue-wait=50%,500us,exec-long-tail=2x,...` into job thresholds. */
#ifndef GRT_THRESHOLD_LIST_H
#define GRT_THRESHOLD_LIST_H

#include <stddef.h>
#include "analysis/jobs/tags.h"

/*
 * The list is comma-separated; a token with '=' starts a key, the tokens after
 * it (up to the next key) are more values of that key. Values are typed by
 * their suffix: 50% (share), 500us / 2ms / 100ns / 1.5s (duration), 1.5x
 * (factor), 10 (count). Keys not named keep their value in t.
 * Returns 0, or -EINVAL with one line in err naming the bad part.
 */
int threshold_list_parse(struct job_thresholds *t, const char *list, char *err, size_t err_len);

/* One line listing the keys and what each takes, for --help. */
const char *threshold_list_help(void);

#endif
